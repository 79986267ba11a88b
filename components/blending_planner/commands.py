"""The DRL motion commands as data, and their checks (pure: no rtcf, no omniORB).

One dataclass per motion of DSR_ROBOT2 (doosan-robotics/doosan-robot2 at
443f0c587059c7c45aba6d523b0edad87de29fee, dsr_common2/imp/DSR_ROBOT2.py; the request
fields of dsr_msgs2/srv/motion/Move*.srv), in Doosan's units: joint angles deg, positions
mm, orientations deg (posx: x, y, z, A, B, C, Z-Y-Z Euler), speeds deg/s or mm/s (and
deg/s for the second value of a task speed), accelerations per second more, times s.

``check(cmd)`` raises MotionError with a DR_Error type and a message naming the field and
its value; it changes nothing. It repeats what DSR_ROBOT2 checks in the client (so that any
CORBA client gets the same answers) and adds what a Python front end cannot know is wrong:
NaN and infinities (DSR's is_number lets them through), lengths, the frames.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

# DR_error2.py
DR_ERROR_TYPE, DR_ERROR_VALUE, DR_ERROR_RUNTIME, DR_ERROR_STOP = 1000, 1001, 1002, 1003
DR_COND_NONE = -10000.0
ABS, REL = 0, 1                        # DR_MV_MOD_ABS / _REL
DUPLICATE, OVERRIDE = 0, 1             # DR_MV_RA_DUPLICATE / _OVERRIDE
BASE, TOOL, WORLD, USER_MIN, USER_MAX = 0, 1, 2, 101, 200
AXIS_X, AXIS_Y, AXIS_Z = 0, 1, 2       # DR_AXIS_*
VEL_NONE, VEL_CONST = 0, 1             # DR_MVS_VEL_*
HOME_MECHANIC, HOME_USER = 0, 1        # DR_HOME_TARGET_*
SOL_MIN, SOL_MAX = 0, 7                # DR_SOL_MIN / _MAX
MAX_POINTS = 100                       # movesj / movesx waypoints (MoveSpline*.srv: [100][6])


class MotionError(Exception):
    """A command refused before anything moves: ``type`` is the DR_Error type
    (DR_ERROR_VALUE for input this robot cannot do, DR_ERROR_RUNTIME for the state of the
    system), ``reason`` says what and why."""

    def __init__(self, reason: str, type: int = DR_ERROR_VALUE):
        super().__init__(reason)
        self.reason, self.type = reason, type


@dataclass(frozen=True)
class MoveJ:
    """movej / amovej (MoveJoint.srv): to joint angles ``pos``."""
    pos: Sequence[float]
    vel: Sequence[float]          # 6 [deg/s]
    acc: Sequence[float]          # 6 [deg/s^2]
    time: float = 0.0
    radius: float = 0.0
    mod: int = ABS
    ra: int = DUPLICATE
    name: str = "movej"


@dataclass(frozen=True)
class MoveL:
    """movel / amovel (MoveLine.srv): straight to the task pose ``pos``."""
    pos: Sequence[float]
    vel: Sequence[float]          # [mm/s, deg/s]
    acc: Sequence[float]          # [mm/s^2, deg/s^2]
    time: float = 0.0
    radius: float = 0.0
    ref: int = BASE
    mod: int = ABS
    ra: int = DUPLICATE
    name: str = "movel"


@dataclass(frozen=True)
class MoveJX:
    """movejx / amovejx (MoveJointx.srv): joint motion to the task pose ``pos`` in solution
    space ``sol``."""
    pos: Sequence[float]
    vel: Sequence[float]          # 6 [deg/s]
    acc: Sequence[float]
    time: float = 0.0
    radius: float = 0.0
    ref: int = BASE
    mod: int = ABS
    ra: int = DUPLICATE
    sol: int = 0
    name: str = "movejx"


@dataclass(frozen=True)
class MoveC:
    """movec / amovec (MoveCircle.srv): on the circle through the start, pos1 and pos2."""
    pos1: Sequence[float]
    pos2: Sequence[float]
    vel: Sequence[float]
    acc: Sequence[float]
    time: float = 0.0
    radius: float = 0.0
    ref: int = BASE
    mod: int = ABS
    angle1: float = 0.0
    angle2: float = 0.0
    ra: int = DUPLICATE
    name: str = "movec"


@dataclass(frozen=True)
class MoveSJ:
    """movesj / amovesj (MoveSplineJoint.srv): a joint spline through the waypoints."""
    points: Sequence[Sequence[float]]
    vel: Sequence[float]
    acc: Sequence[float]
    time: float = 0.0
    mod: int = ABS
    name: str = "movesj"


@dataclass(frozen=True)
class MoveSX:
    """movesx / amovesx (MoveSplineTask.srv): a task spline through the waypoints."""
    points: Sequence[Sequence[float]]
    vel: Sequence[float]
    acc: Sequence[float]
    time: float = 0.0
    ref: int = BASE
    mod: int = ABS
    vel_opt: int = VEL_NONE
    name: str = "movesx"


@dataclass(frozen=True)
class MoveSpiral:
    """move_spiral / amove_spiral (MoveSpiral.srv)."""
    rev: float
    rmax: float
    lmax: float
    vel: Sequence[float]
    acc: Sequence[float]
    time: float = 0.0
    axis: int = AXIS_Z
    ref: int = TOOL
    name: str = "move_spiral"


@dataclass(frozen=True)
class MovePeriodic:
    """move_periodic / amove_periodic (MovePeriodic.srv)."""
    amp: Sequence[float]          # mm, mm, mm, deg, deg, deg
    period: Sequence[float]       # s, per axis
    atime: float = 0.0
    repeat: int = 1
    ref: int = TOOL
    name: str = "move_periodic"


@dataclass(frozen=True)
class MoveHome:
    """move_home (MoveHome.srv)."""
    target: int = HOME_MECHANIC
    name: str = "move_home"


Command = MoveJ | MoveL | MoveJX | MoveC | MoveSJ | MoveSX | MoveSpiral | MovePeriodic | MoveHome


def finite(name: str, values: Sequence[float], n: int | None = None) -> list[float]:
    """``values`` as floats, all finite, of length n; MotionError naming the field else."""
    try:
        vals = [float(v) for v in values]
    except (TypeError, ValueError):
        raise MotionError(f"{name}: expected numbers, got {values!r}", DR_ERROR_TYPE) from None
    if n is not None and len(vals) != n:
        raise MotionError(f"{name}: expected {n} values, got {len(vals)}", DR_ERROR_TYPE)
    for i, v in enumerate(vals):
        if not math.isfinite(v):
            raise MotionError(f"{name}[{i}] is not finite: {v}")
    return vals


def _one(name: str, v: float) -> float:
    return finite(name, [v])[0]


def _choice(name: str, v: int, allowed: dict[int, str]) -> None:
    if v not in allowed:
        names = ", ".join(f"{k} ({n})" for k, n in allowed.items())
        raise MotionError(f"{name} must be one of {names}, got {v}")


def _ref(v: int, allow_tool: bool = True) -> None:
    ok = v in (BASE, WORLD) or (allow_tool and v == TOOL) or USER_MIN <= v <= USER_MAX
    if not ok:
        raise MotionError(f"ref must be 0 (DR_BASE), {'1 (DR_TOOL), ' if allow_tool else ''}"
                          f"2 (DR_WORLD) or a user frame {USER_MIN}..{USER_MAX}, got {v}")


def _timing(cmd: Command, joint: bool) -> None:
    """time >= 0; with time = 0 the speeds must allow a motion (DSR's
    _check_valid_vel_acc_joint / _task)."""
    t = _one("time", cmd.time)
    if t < 0:
        raise MotionError(f"time must be >= 0 s, got {t:g}")
    n = 6 if joint else 2
    vel, acc = finite("vel", cmd.vel, n), finite("acc", cmd.acc, n)
    unit = "deg/s" if joint else "mm/s"
    for name, vals in (("vel", vel), ("acc", acc)):
        for i, v in enumerate(vals):
            if v < 0 and not (not joint and i == 1 and v == DR_COND_NONE):
                raise MotionError(f"{name}[{i}] must be >= 0, got {v:g}")
    if t == 0.0:
        if joint:
            if all(v == 0 for v in vel):
                raise MotionError(f"vel must not be 0 on every joint when time = 0 [{unit}]")
            if all(v == 0 for v in acc):
                raise MotionError("acc must not be 0 on every joint when time = 0")
        else:
            for name, vals in (("vel", vel), ("acc", acc)):
                if vals[0] <= 0:
                    raise MotionError(f"{name}[0] (linear) must be > 0 when time = 0, got "
                                      f"{vals[0]:g}")
                if vals[1] != DR_COND_NONE and vals[1] <= 0:
                    raise MotionError(f"{name}[1] (angular) must be > 0 or DR_COND_NONE "
                                      f"(-10000) when time = 0, got {vals[1]:g}")


def _blend(cmd: Command) -> None:
    r = _one("radius", cmd.radius)
    if r < 0:
        raise MotionError(f"radius must be >= 0 mm, got {r:g}")
    _choice("mod", cmd.mod, {ABS: "DR_MV_MOD_ABS", REL: "DR_MV_MOD_REL"})
    _choice("ra", cmd.ra, {DUPLICATE: "DR_MV_RA_DUPLICATE", OVERRIDE: "DR_MV_RA_OVERRIDE"})


def _points(name: str, pts: Sequence[Sequence[float]]) -> None:
    if not 1 <= len(pts) <= MAX_POINTS:
        raise MotionError(f"{name}: 1..{MAX_POINTS} waypoints expected, got {len(pts)}")
    for k, p in enumerate(pts):
        finite(f"{name}[{k}]", p, 6)


def check(cmd: Command) -> None:
    """Every check of a command's fields that needs no robot model. Raises MotionError."""
    if isinstance(cmd, (MoveJ, MoveJX, MoveL)):
        finite("pos", cmd.pos, 6)
        _timing(cmd, joint=not isinstance(cmd, MoveL))
        _blend(cmd)
        if not isinstance(cmd, MoveJ):
            _ref(cmd.ref)
        if isinstance(cmd, MoveJX):
            _choice("sol", cmd.sol, {s: f"solution space {s}" for s in range(8)})
    elif isinstance(cmd, MoveC):
        finite("pos1", cmd.pos1, 6)
        finite("pos2", cmd.pos2, 6)
        _timing(cmd, joint=False)
        _blend(cmd)
        _ref(cmd.ref)
        a1, a2 = _one("angle1", cmd.angle1), _one("angle2", cmd.angle2)
        if a1 < 0 or a2 < 0:
            raise MotionError(f"angle1 and angle2 must be >= 0 deg, got {a1:g}, {a2:g}")
        if a2 > a1:
            raise MotionError(f"angle2 (the constant-speed part, {a2:g} deg) must not exceed "
                              f"angle1 (the whole arc, {a1:g} deg)")
    elif isinstance(cmd, MoveSJ):
        _points("pos_list", cmd.points)
        _timing(cmd, joint=True)
        _choice("mod", cmd.mod, {ABS: "DR_MV_MOD_ABS", REL: "DR_MV_MOD_REL"})
    elif isinstance(cmd, MoveSX):
        _points("pos_list", cmd.points)
        _timing(cmd, joint=False)
        _ref(cmd.ref)
        _choice("mod", cmd.mod, {ABS: "DR_MV_MOD_ABS", REL: "DR_MV_MOD_REL"})
        _choice("vel_opt", cmd.vel_opt, {VEL_NONE: "DR_MVS_VEL_NONE",
                                         VEL_CONST: "DR_MVS_VEL_CONST"})
    elif isinstance(cmd, MoveSpiral):
        rev, rmax = _one("rev", cmd.rev), _one("rmax", cmd.rmax)
        _one("lmax", cmd.lmax)
        if rev <= 0:
            raise MotionError(f"rev must be > 0, got {rev:g}")
        if rmax <= 0:
            raise MotionError(f"rmax must be > 0 mm, got {rmax:g}")
        _timing(cmd, joint=False)
        _choice("axis", cmd.axis, {AXIS_X: "DR_AXIS_X", AXIS_Y: "DR_AXIS_Y",
                                   AXIS_Z: "DR_AXIS_Z"})
        if cmd.ref == WORLD:
            raise MotionError("ref must be DR_BASE, DR_TOOL or a user frame for move_spiral, "
                              "got 2 (DR_WORLD)")
        _ref(cmd.ref)
    elif isinstance(cmd, MovePeriodic):
        amp = finite("amp", cmd.amp, 6)
        period = finite("period", cmd.period, 6)
        at = _one("atime", cmd.atime)
        if at < 0:
            raise MotionError(f"atime must be >= 0 s, got {at:g}")
        if not isinstance(cmd.repeat, int) or cmd.repeat < 1:
            raise MotionError(f"repeat must be an integer >= 1, got {cmd.repeat!r}")
        if all(a == 0 for a in amp):
            raise MotionError("amp is 0 on every axis: nothing to move")
        for i, (a, p) in enumerate(zip(amp, period)):
            if a != 0 and p <= 0:
                raise MotionError(f"period[{i}] must be > 0 s where amp[{i}] = {a:g}, got "
                                  f"{p:g}")
            if a < 0:
                raise MotionError(f"amp[{i}] must be >= 0, got {a:g}")
        _ref(cmd.ref)
    elif isinstance(cmd, MoveHome):
        _choice("target", cmd.target, {HOME_MECHANIC: "DR_HOME_TARGET_MECHANIC",
                                       HOME_USER: "DR_HOME_TARGET_USER"})
    else:
        raise MotionError(f"not a motion command: {cmd!r}", DR_ERROR_TYPE)
