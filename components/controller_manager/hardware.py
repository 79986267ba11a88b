"""The hardware side of the controller manager: the DCM in process, or DCM ports.

Both implement ``robot.Hardware`` (read state / write command once per tick, in the
manager's EC thread, without allocating):

* :class:`DcmHardware` binds to a DCM component of the same process (its local interface
  DCMLocal, bound by a connection in the composition). The DCM's postProcess
  callback publishes the measured joint positions (and a finite-difference velocity) and its
  preProcess callback takes the newest command and hands it to the DCM as Position commands
  dated *now* (DCM.command_positions: the same effect as NAOqi's setAlias of a fast-access
  alias in preProcess, through the DCM's per-cycle qRef path, without building command
  lists), so it acts in that very DCM cycle (a command dated now or earlier set in a
  preProcess callback is applied in the same cycle). ``halted`` is True while every
  joint's Hardness is 0. A command equal to the last one sent is not sent again (the DCM
  holds it). The manager
  and the DCM may run in different threads (the manager at 1 kHz, the DCM at 100 Hz): the
  two hand-overs are seqlocks, so neither side ever waits for the other.
* :class:`PortHardware` reads the state from an InPort connected to ``DCM0.q`` and writes the
  command to an OutPort connected to ``DCM0.qRef`` (NaN = leave that joint), for a manager in
  another process.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from rtcf import ReadStatus
from .robot import RobotState
from rtcf.datatypes import stamp



class SeqBuffer:
    """One writer, one reader, no lock: a sequence counter around each copy (seqlock).

    The writer bumps ``seq`` to odd, copies, bumps it to even; the reader copies and keeps the
    copy only if ``seq`` was even and unchanged. Both run under the GIL, so a torn copy is
    only possible if a thread switch falls inside a copy; the reader then retries a few times
    and otherwise keeps its previous values (never waits).
    """

    def __init__(self, rows: int, n: int, fill: float = 0.0):
        self.data = np.full((rows, n), fill)
        self.seq = 0

    def write(self, *rows: np.ndarray) -> None:
        """Runs in: the writer's thread."""
        self.seq += 1
        data = self.data
        for i, r in enumerate(rows):
            np.copyto(data[i], r)
        self.seq += 1

    def read(self, out: np.ndarray, last_seq: int = -1) -> int:
        """Copy into ``out`` (same shape) if newer than ``last_seq``; returns the sequence
        number read, or ``last_seq`` when nothing new or no consistent copy was possible.
        Runs in: the reader's thread."""
        for _ in range(4):
            s = self.seq
            if s == last_seq:
                return last_seq
            if s & 1:
                continue
            np.copyto(out, self.data)
            if self.seq == s:
                return s
        return last_seq


class DcmHardware:
    """The DCM of this process as the manager's hardware (see the module doc).

    joint_names: the manager's joints (the model's body order); :meth:`bind` attaches it to
    a DCM (its local interface, bound by the composition) with the same joints. Unbound, it
    is ``halted`` and reads and writes nothing."""

    command_interfaces = ("position",)

    def __init__(self, joint_names: Sequence[str]):
        self.dcm: Any = None
        self.joint_names: tuple[str, ...] = tuple(joint_names)
        n = len(self.joint_names)
        self._state = SeqBuffer(2, n)          # DCM -> manager: q, dq
        self._cmd = SeqBuffer(1, n, math.nan)  # manager -> DCM: position command
        self._state_in = np.zeros((2, n))
        self._state_seq = -1
        self._cmd_in = np.full((1, n), math.nan)
        self._cmd_seq = 0
        self._sent = np.full(n, math.nan)               # the last command set on the DCM
        self._prev_q = np.zeros(n)
        self._dq = np.zeros(n)
        self._prev_ms: int | None = None
        self._connections: list[Any] = []
        self._hard_idx = np.zeros(0, dtype=np.intp)
        self._hard = np.zeros(n)
        self.halted = True         # every joint's Hardness is 0 (written by the DCM thread)
        self.commands_applied = 0

    # -- binding (non-real-time) ----------------------------------------------------------
    def bind(self, dcm: Any) -> None:
        """Attach to ``dcm`` and register its callbacks; ValueError when its joints are
        not the manager's. Runs in: any thread, before the ticks."""
        if self.dcm is dcm and self._connections:
            return
        names = tuple(dcm.devices.joint_names)
        if names != self.joint_names:
            raise ValueError(f"the DCM {getattr(dcm, 'instance_name', dcm)!r} has the joints "
                             f"{', '.join(names)}; the manager's model has "
                             f"{', '.join(self.joint_names)}")
        self.detach()
        self.dcm = dcm
        self._hard_idx = np.asarray(dcm.devices.hardness_actuators)
        self._connections = [dcm.at_post_process(self._publish_state),
                             dcm.at_pre_process(self._apply_command)]

    def detach(self) -> None:
        for c in self._connections:
            c.disconnect()
        self._connections = []

    # -- DCM thread ----------------------------------------------------------------------
    def _publish_state(self) -> None:
        """postProcess: publish q and dq. Runs in: the DCM's EC thread."""
        q = self.dcm.sensor_values
        now = self.dcm.now_ms
        if self._prev_ms is not None and now > self._prev_ms:
            np.subtract(q, self._prev_q, out=self._dq)
            self._dq *= 1000.0 / (now - self._prev_ms)
        np.copyto(self._prev_q, q)
        self._prev_ms = now
        self._state.write(q, self._dq)
        np.take(self.dcm.core.values, self._hard_idx, out=self._hard)
        self.halted = not self._hard.any()           # a bool: one atomic attribute write

    def _apply_command(self) -> None:
        """preProcess: the newest command, dated now (acts in this cycle). Runs in: the
        DCM's EC thread."""
        seq = self._cmd.read(self._cmd_in, self._cmd_seq)
        if seq == self._cmd_seq:
            return
        self._cmd_seq = seq
        cmd = self._cmd_in[0]
        if np.isnan(cmd).all() or np.array_equal(cmd, self._sent, equal_nan=True):
            return                                      # nothing, or what the DCM holds
        self.dcm.command_positions(cmd)                 # NaN joints are left alone
        np.copyto(self._sent, cmd)
        self.commands_applied += 1

    # -- manager thread (robot.Hardware) ---------------------------------------------------
    def read(self, robot: RobotState, time: float) -> None:
        self._state_seq = self._state.read(self._state_in, self._state_seq)
        np.copyto(robot.position, self._state_in[0])
        np.copyto(robot.velocity, self._state_in[1])
        robot.effort.fill(math.nan)                     # not measured by the DCM model

    def write(self, robot: RobotState, time: float) -> None:
        self._cmd.write(robot.command)


class PortHardware:
    """State from an InPort (TimedDoubleSeq, DCM0.q), command to an OutPort (DCM0.qRef).

    ``every``: write the command every that many ticks (a 100 Hz DCM needs no 1 kHz
    stream); ticks with no command at all (every value NaN) write nothing.
    """

    def __init__(self, joint_names: Sequence[str], q_in: Any, q_ref_out: Any,
                 every: int = 1):
        if every < 1:
            raise ValueError(f"every: expected >= 1 tick, got {every}")
        self.joint_names = tuple(joint_names)
        n = len(self.joint_names)
        self.q_in = q_in
        self.q_ref = q_ref_out
        self.q_ref.value.data = np.full(n, math.nan)
        self.every = int(every)
        self._tick = 0
        self._prev_q = np.zeros(n)
        self._prev_t: float | None = None
        self._have = False
        self._nan = np.zeros(n, dtype=bool)
        self.halted = False        # the ports carry no stiffness information
        self.bad_samples = 0
        self.writes = 0

    def read(self, robot: RobotState, time: float) -> None:
        if self.q_in.read_newest() is ReadStatus.NEW:
            q = self.q_in.value.data
            if q.shape != robot.position.shape:
                self.bad_samples += 1                   # counted; the old state stays
            else:
                if self._have and self._prev_t is not None and time > self._prev_t:
                    np.subtract(q, self._prev_q, out=robot.velocity)
                    robot.velocity *= 1.0 / (time - self._prev_t)
                np.copyto(robot.position, q)
                np.copyto(self._prev_q, q)
                self._prev_t = time
                self._have = True
        robot.effort.fill(math.nan)

    def write(self, robot: RobotState, time: float) -> None:
        self._tick += 1
        if self._tick < self.every:
            return
        self._tick = 0
        if np.isnan(robot.command, out=self._nan).all():
            return
        np.copyto(self.q_ref.value.data, robot.command)
        stamp(self.q_ref.value, time)
        self.q_ref.write()
        self.writes += 1
