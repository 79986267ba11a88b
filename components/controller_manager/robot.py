"""The robot state/command interface a controller reads and writes, and the hardware side.

PR2's ``pr2_mechanism_model::RobotState`` gives controllers joint states by name; here
:class:`RobotState` holds preallocated arrays in one fixed joint order (the model's body
order) and :class:`JointHandle` is a named view on one joint, so ``update()`` indexes arrays
and allocates nothing (a Python float read or written is the only object made).

Units: position [rad], velocity [rad/s], effort [N m]. One command array per command
interface type (ros2_control's position / velocity / effort): ``command`` [rad] (position,
PR2's name), ``velocity_command`` [rad/s], ``effort_command`` [N m]. A controller writes the
array of the type it claims; the hardware reads the arrays of the types it takes, and the
arrays of the other types are read-only (:meth:`RobotState.restrict`), so writing one fails
loudly instead of commanding nothing. A command of NaN means "no command this tick": the
manager resets every command to NaN at the start of each tick (PR2's zeroCommands), so a
joint that no running controller writes is left alone by the hardware.
"""

from __future__ import annotations

import math
from typing import Iterable, Protocol, Sequence

import numpy as np

from .controller import INTERFACE_TYPES, ControllerError

__all__ = ["RobotState", "JointHandle", "Hardware", "LoopbackHardware"]


def _write(robot: "RobotState", kind: str, index: int, value: float) -> None:
    try:
        robot.commands(kind)[index] = value
    except ValueError:
        if robot.takes(kind):
            raise
        raise ControllerError(f"{robot.joint_names[index]}: the hardware takes no {kind} "
                              f"commands (it takes {', '.join(robot.command_types)}): claim "
                              f"and write one of those") from None


class JointHandle:
    """One joint of a RobotState, by index. Properties read and write the shared arrays."""

    __slots__ = ("name", "index", "_robot")

    def __init__(self, robot: "RobotState", name: str, index: int):
        self.name = name
        self.index = index
        self._robot = robot

    @property
    def position(self) -> float:
        return float(self._robot.position[self.index])

    @property
    def velocity(self) -> float:
        return float(self._robot.velocity[self.index])

    @property
    def effort(self) -> float:
        return float(self._robot.effort[self.index])

    @property
    def command(self) -> float:
        return float(self._robot.command[self.index])

    @command.setter
    def command(self, value: float) -> None:
        _write(self._robot, "position", self.index, value)

    @property
    def velocity_command(self) -> float:
        return float(self._robot.velocity_command[self.index])

    @velocity_command.setter
    def velocity_command(self, value: float) -> None:
        _write(self._robot, "velocity", self.index, value)

    @property
    def effort_command(self) -> float:
        return float(self._robot.effort_command[self.index])

    @effort_command.setter
    def effort_command(self, value: float) -> None:
        _write(self._robot, "effort", self.index, value)

    @property
    def limits(self) -> tuple[float, float]:
        return float(self._robot.lower[self.index]), float(self._robot.upper[self.index])

    def __repr__(self) -> str:
        return f"<JointHandle {self.name} #{self.index}>"


class RobotState:
    """Joint state and command arrays of a robot, allocated once.

    position, velocity, effort: measured, written by the hardware's read() each tick;
    command (the position interface), velocity_command, effort_command: written by
    controllers (one array per command interface type, ros2_control's position / velocity /
    effort), read by the hardware's write(); time: tick time [s].
    lower/upper: joint position limits [rad] (+-inf when unknown).
    command_types: the types the hardware takes (all until :meth:`restrict`).
    """

    def __init__(self, joint_names: Sequence[str], lower: Iterable[float] | None = None,
                 upper: Iterable[float] | None = None):
        names = [str(n) for n in joint_names]
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise ControllerError(f"RobotState: duplicate joint names {dup}")
        self.joint_names: tuple[str, ...] = tuple(names)
        n = len(names)
        self.position = np.zeros(n)
        self.velocity = np.zeros(n)
        self.effort = np.zeros(n)
        self.command = np.full(n, math.nan)
        self.velocity_command = np.full(n, math.nan)
        self.effort_command = np.full(n, math.nan)
        self.lower = np.full(n, -math.inf) if lower is None else np.array(lower, float)
        self.upper = np.full(n, math.inf) if upper is None else np.array(upper, float)
        if self.lower.shape != (n,) or self.upper.shape != (n,):
            raise ControllerError(f"RobotState: limits need {n} values each, got "
                                  f"{self.lower.shape} and {self.upper.shape}")
        self.time = 0.0
        self.command_types: tuple[str, ...] = INTERFACE_TYPES
        self._writable = (self.command, self.velocity_command, self.effort_command)
        self._index = {name: i for i, name in enumerate(names)}
        self._handles = {name: JointHandle(self, name, i) for i, name in enumerate(names)}

    @property
    def n_joints(self) -> int:
        return len(self.joint_names)

    def index(self, name: str) -> int:
        """The array index of joint ``name``; ControllerError naming the known joints."""
        try:
            return self._index[name]
        except KeyError:
            raise ControllerError(f"unknown joint {name!r} (joints: "
                                  f"{', '.join(self.joint_names)})") from None

    def joint(self, name: str) -> JointHandle:
        """PR2's ``robot->getJointState(name)``: a named handle (non-real-time lookup)."""
        self.index(name)
        return self._handles[name]

    def indices(self, names: Iterable[str]) -> np.ndarray:
        """Index array for several joints, for vectorised controllers (np.take / put)."""
        return np.array([self.index(n) for n in names], dtype=np.intp)

    def restrict(self, types: Iterable[str]) -> None:
        """Only the command arrays of ``types`` (the hardware's command interface types) stay
        writable; the others are NaN and read-only. Runs in: a non-real-time thread, before
        the ticks (when the hardware is bound)."""
        types = tuple(t for t in INTERFACE_TYPES if t in set(types))
        writable = []
        for kind in INTERFACE_TYPES:
            arr = self.commands(kind)
            arr.flags.writeable = True
            arr.fill(math.nan)
            if kind in types:
                writable.append(arr)
            else:
                arr.flags.writeable = False
        self.command_types = types
        self._writable = tuple(writable)

    def takes(self, kind: str) -> bool:
        """True when the hardware takes commands of interface type ``kind``."""
        return kind in self.command_types

    def zero_commands(self) -> None:
        """No command on any joint (NaN). Runs in: EC thread, at the start of each tick."""
        for arr in self._writable:
            arr.fill(math.nan)

    def commands(self, kind: str) -> np.ndarray:
        """The command array of interface type ``kind`` (position, velocity, effort)."""
        if kind == "position":
            return self.command
        if kind == "velocity":
            return self.velocity_command
        if kind == "effort":
            return self.effort_command
        raise ControllerError(f"command interface type: expected position, velocity or "
                              f"effort, got {kind!r}")


class Hardware(Protocol):
    """The hardware side of the manager: state in, commands out, once per tick.

    ``joint_names``: the joints it serves, in its own order (a RobotState is built from it).
    Both methods run in the EC thread and must not allocate or block.
    """

    joint_names: Sequence[str]
    command_interfaces: Sequence[str]
    """Optional: the command interface types it takes (INTERFACE_TYPES; absent means
    ("position",)); a controller claiming another type is refused at start."""
    halted: bool
    """True while the motors cannot act (e.g. no stiffness); when it turns False again the
    manager restarts every running controller."""

    def read(self, robot: RobotState, time: float) -> None:
        """Copy the latest measured state into ``robot`` (position, velocity, effort)."""
        ...

    def write(self, robot: RobotState, time: float) -> None:
        """Send the commands (``robot.command`` for position, and ``velocity_command`` /
        ``effort_command`` for hardware that takes those; NaN: leave that joint alone)."""
        ...


class LoopbackHardware:
    """Ideal position-controlled joints: a command is reached by the next read.

    Velocity is the finite difference over the tick. For tests, benchmarks and dry runs.
    """

    def __init__(self, joint_names: Sequence[str], initial: Iterable[float] | None = None,
                 lower: Iterable[float] | None = None, upper: Iterable[float] | None = None):
        self.joint_names = tuple(joint_names)
        n = len(self.joint_names)
        self.lower = None if lower is None else np.array(lower, float)
        self.upper = None if upper is None else np.array(upper, float)
        self.q = np.zeros(n) if initial is None else np.array(initial, float)
        self._prev = self.q.copy()
        self._last_time: float | None = None
        self._mask = np.zeros(n, dtype=bool)
        self.halted = False
        self.writes = 0

    def read(self, robot: RobotState, time: float) -> None:
        dt = time - self._last_time if self._last_time is not None else 0.0
        np.copyto(robot.position, self.q)
        if dt > 0.0:
            np.subtract(self.q, self._prev, out=robot.velocity)
            robot.velocity *= 1.0 / dt
        else:
            robot.velocity.fill(0.0)
        np.copyto(self._prev, self.q)
        self._last_time = time

    def write(self, robot: RobotState, time: float) -> None:
        mask = self._mask
        np.isnan(robot.command, out=mask)
        np.logical_not(mask, out=mask)
        np.copyto(self.q, robot.command, where=mask)
        if self.lower is not None:
            np.maximum(self.q, self.lower, out=self.q)
        if self.upper is not None:
            np.minimum(self.q, self.upper, out=self.q)
        self.writes += 1
