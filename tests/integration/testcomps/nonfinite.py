"""A writer of values that are not finite, for the tests of the observing tools
(``module: nonfinite``)."""

from __future__ import annotations

import math

import numpy as np

from rtcf import Component, TimedDoubleSeq


class NonFiniteWriter(Component):
    """Each cycle n (from 1): ``bad`` = [NaN, +inf, -inf, n] and ``good`` = [sin(n / 10)],
    both stamped ``tm = (n, 0)``."""

    category = "test"

    def on_initialize(self) -> None:
        self.bad = self.add_out_port("bad", TimedDoubleSeq)
        self.good = self.add_out_port("good", TimedDoubleSeq)
        self.bad.value.data = np.array([math.nan, math.inf, -math.inf, 0.0])
        self.good.value.data = np.zeros(1)
        self.n = 0

    def on_execute(self, ec) -> None:
        """Runs in: EC thread."""
        self.n += 1
        self.bad.value.data[3] = self.n
        self.good.value.data[0] = math.sin(self.n / 10.0)
        for port in (self.bad, self.good):
            port.value.tm.sec, port.value.tm.nsec = self.n, 0
            port.write()
