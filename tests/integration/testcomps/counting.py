"""A writer of known values for the recording tests (``module: counting``)."""

from __future__ import annotations

import numpy as np

from rtcf import Component, Param, TimedDoubleSeq


class CountingWriter(Component):
    """Writes ``limit`` samples, ``burst`` per cycle once active, then stops writing: sample n
    (1..limit) is ``data[i] = n + i / 100`` (``width`` values), ``tm = (n, 1000 * n)``. So a
    recorder can be checked exactly: the count, every value and every stamp are known."""

    category = "test"
    limit = Param(int, 200, bounds=(1, 10_000_000), doc="samples to write in all")
    width = Param(int, 30, bounds=(1, 10_000), read_only=True, doc="values per sample")
    burst = Param(int, 1, bounds=(1, 1000), doc="samples written per cycle")

    def on_initialize(self) -> None:
        self.out = self.add_out_port("out", TimedDoubleSeq)
        self._ramp = np.arange(self.width) / 100.0
        self.out.value.data = np.zeros(self.width)
        self.written = 0

    def on_execute(self, ec) -> None:
        """Runs in: EC thread."""
        for _ in range(self.burst):
            if self.written >= self.limit:
                return
            n = self.written + 1
            np.add(self._ramp, float(n), out=self.out.value.data)
            self.out.value.tm.sec, self.out.value.tm.nsec = n, 1000 * n
            self.out.write()
            self.written = n
