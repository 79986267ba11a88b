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


class BurstWriter(Component):
    """Writes three samples every cycle, data [10 * cycle + i] for i = 0, 1, 2 in that order,
    stamped with ECInfo.now."""

    category = "test"

    def on_initialize(self) -> None:
        self.out = self.add_out_port("out", TimedDoubleSeq)
        self.out.value.data = np.zeros(1)

    def on_execute(self, ec) -> None:
        stamp(self.out.value, ec.now)
        for i in range(3):
            self.out.value.data[0] = 10.0 * ec.cycle + i
            self.out.write()


class ListenReader(Component):
    """Reads every new sample each cycle; an ON_RECEIVED listener counts the samples as they
    arrive, with the process id of the thread it runs in. Keeps per sample (ECInfo.now, the
    sample's value, the listener's count when read, its process id)."""

    category = "test"
    path = Param(str, "", read_only=True, doc=".npz written at finalize")

    def on_initialize(self) -> None:
        from rtcf import PortEvent
        self.inp = self.add_in_port("in", TimedDoubleSeq)
        self.heard = 0
        self.heard_pid = -1.0
        self.inp.add_listener(PortEvent.ON_RECEIVED, self._heard)
        self.rows: list[tuple[float, float, float, float]] = []

    def _heard(self, port, connector, sample) -> None:
        self.heard += 1
        self.heard_pid = float(os.getpid())

    def on_execute(self, ec) -> None:
        while self.inp.read() is ReadStatus.NEW:
            self.rows.append((ec.now, float(self.inp.value.data[0]), float(self.heard),
                              self.heard_pid))

    def on_finalize(self) -> None:
        if self.path:
            np.savez(self.path, rows=np.array(self.rows).reshape(-1, 4))
