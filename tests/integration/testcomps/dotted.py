"""A component whose port names contain dots (``module: dotted``), as OpenRTM allows."""

from __future__ import annotations

import numpy as np

from rtcf import Component, ReadStatus, TimedDoubleSeq


class DottedPorts(Component):
    """Out port ``arm.q`` writes [n, n] each cycle n; in port ``arm.qRef`` is read and its
    last value written to out port ``arm.qRef.echo``."""

    category = "test"

    def on_initialize(self) -> None:
        self.q = self.add_out_port("arm.q", TimedDoubleSeq)
        self.ref = self.add_in_port("arm.qRef", TimedDoubleSeq)
        self.echo = self.add_out_port("arm.qRef.echo", TimedDoubleSeq)
        self.q.value.data = np.zeros(2)
        self.n = 0

    def on_execute(self, ec) -> None:
        """Runs in: EC thread."""
        self.n += 1
        self.q.value.data[:] = self.n
        self.q.value.tm.sec = self.n
        self.q.write()
        if self.ref.read() is ReadStatus.NEW:
            self.echo.value.data = np.array(self.ref.value.data)
            self.echo.value.tm.sec = self.n
            self.echo.write()
