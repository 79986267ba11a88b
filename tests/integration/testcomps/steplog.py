"""Test components of the lockstep tests (``module: steplog``): a writer and a reader that
record, every cycle, the simulated instant they run at and what they saw, into a .npz at the
end of the run, so a test can check the order of a shared instant across processes and the
simulated stamps.
"""

from __future__ import annotations

import os

import numpy as np

from rtcf import Component, Param, ReadStatus, TimedDoubleSeq
from rtcf.clock import wall_time
from rtcf.datatypes import stamp


class StepWriter(Component):
    """Writes [cycle, ECInfo.now] every cycle, stamped with ECInfo.now; keeps per cycle
    (ECInfo.now, the process's stamp clock rtcf.clock.wall_time(), os.getpid())."""

    category = "test"
    path = Param(str, "", read_only=True, doc=".npz written at finalize")

    def on_initialize(self) -> None:
        self.out = self.add_out_port("out", TimedDoubleSeq)
        self.out.value.data = np.zeros(2)
        self.rows: list[tuple[float, float, float]] = []

    def on_execute(self, ec) -> None:
        self.out.value.data[0] = ec.cycle
        self.out.value.data[1] = ec.now
        stamp(self.out.value, ec.now)
        self.out.write()
        self.rows.append((ec.now, wall_time(), float(os.getpid())))

    def on_finalize(self) -> None:
        if self.path:
            np.savez(self.path, rows=np.array(self.rows).reshape(-1, 3))


class StepReader(Component):
    """Reads its input every cycle and keeps (ECInfo.now, the newest sample's stamp [s] or
    -1 when no new sample came, os.getpid())."""

    category = "test"
    path = Param(str, "", read_only=True, doc=".npz written at finalize")

    def on_initialize(self) -> None:
        self.inp = self.add_in_port("in", TimedDoubleSeq)
        self.rows: list[tuple[float, float, float]] = []

    def on_execute(self, ec) -> None:
        got = -1.0
        while self.inp.read() is ReadStatus.NEW:
            v = self.inp.value
            got = v.tm.sec + v.tm.nsec * 1e-9
        self.rows.append((ec.now, got, float(os.getpid())))

    def on_finalize(self) -> None:
        if self.path:
            np.savez(self.path, rows=np.array(self.rows).reshape(-1, 3))
