"""A component whose only port carries another data type than the examples' TimedDoubleSeq
(``module: typed``): the far end of data-type mismatch tests."""

from __future__ import annotations

from rtcf import Component, ReadStatus, TimedLong


class LongSink(Component):
    """Reads a TimedLong input every cycle and counts what arrives."""

    category = "test"

    def on_initialize(self) -> None:
        self.inp = self.add_in_port("in", TimedLong)
        self.received = 0

    def on_execute(self, ec) -> None:
        """Runs in: EC thread."""
        while self.inp.read() is ReadStatus.NEW:
            self.received += 1
