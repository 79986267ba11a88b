"""Doosan's DRL / DSR_ROBOT2 call forms for blended moves, over the BlendingPlanner.

A Doosan script runs with its import line changed (``from DSR_ROBOT2 import *`` or the DRL
globals become ``from rtcf_components.clients.dsr import *``)::

    set_velx(100)                        # global task velocity [mm/s] (and [deg/s])
    set_accx(200)
    seg = [posb(DR_LINE, posx(559, 234, 651, 0, 180, 0), radius=20),
           posb(DR_CIRCLE, posx(659, 334, 651, 0, 180, 0), posx(759, 234, 651, 0, 180, 0))]
    if moveb(seg, ref=DR_BASE) != 0:     # 0 done, -1 refused (as the controller's success)
        ...
    amoveb(seg, v=50, a=100, mod=DR_MV_MOD_REL, ref=DR_TOOL)
    mwait()

What it follows, read in doosan-robot2 (dsr_common2/imp/DSR_ROBOT2.py, DR_common2.py,
DR_error2.py): moveb / amoveb(seg_list, vel=None, acc=None, ref=None, time=None,
mod=DR_MV_MOD_ABS, v=None, a=None, t=None), the short keywords standing for the long ones;
vel / acc None take the global set_velx / set_accx values (0 until set, which a move without
a time then refuses); a number is sent as [value, DR_COND_NONE], a pair as given; ref None is
the global coordinate (set_ref_coord, DR_BASE at start); the return value is 0 or -1; the
arguments DSR_ROBOT2 checks itself raise ``DR_Error`` with its type (DR_ERROR_TYPE 1000,
DR_ERROR_VALUE 1001, DR_ERROR_RUNTIME 1002) and message. The component's own refusals
(geometry, reach, spec 4.4) are the controller's: -1, with the reason in
``get_last_error()`` (an addition). Unlike DR_error2, raising a DR_Error does not shut
anything down.

The component: ``BlendingPlanner0`` in the naming service at ``localhost:2809``, or the
environment's RTCF_DSR_PLANNER and RTCF_NAMESERVER, or ``connect(name, nameserver)``.
Runs in: the caller's thread (one script at a time; the globals are per process, as in DRL).
"""

from __future__ import annotations

import math
import numbers
import os
from typing import Any, Sequence

from .planner import CIRCLE as DR_CIRCLE
from .planner import DR_COND_NONE
from .planner import DR_STATE_BUSY, DR_STATE_IDLE
from .planner import LINE as DR_LINE

__all__ = ["DR_Error", "DR_ERROR_TYPE", "DR_ERROR_VALUE", "DR_ERROR_RUNTIME", "DR_ERROR_STOP",
           "DR_LINE", "DR_CIRCLE", "DR_BASE", "DR_TOOL", "DR_WORLD", "DR_TC_USER_MIN",
           "DR_TC_USER_MAX", "DR_MV_MOD_ABS", "DR_MV_MOD_REL", "DR_COND_NONE",
           "DR_STATE_IDLE", "DR_STATE_BUSY", "posx", "posb", "set_velx", "set_accx",
           "set_ref_coord", "moveb", "amoveb", "mwait", "check_motion", "connect",
           "get_last_error"]

# DR_error2.py
DR_ERROR_TYPE, DR_ERROR_VALUE, DR_ERROR_RUNTIME, DR_ERROR_STOP = 1000, 1001, 1002, 1003
# DSR_ROBOT2.py
DR_BASE, DR_TOOL, DR_WORLD = 0, 1, 2
DR_TC_USER_MIN, DR_TC_USER_MAX = 101, 200
DR_MV_MOD_ABS, DR_MV_MOD_REL = 0, 1
POINT_COUNT = 6


class DR_Error(Exception):
    """DSR's error: ``type`` (DR_ERROR_TYPE, DR_ERROR_VALUE, DR_ERROR_RUNTIME) and ``msg``."""

    def __init__(self, type: int, msg: str = "", back: bool = False):
        super().__init__(type, msg)
        self.type, self.msg = type, msg

    def __str__(self) -> str:
        return f"DR_Error {self.type}: {self.msg}"


def _is_number(x: Any) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def _numbers(seq: Any) -> bool:
    try:
        return all(_is_number(v) for v in seq)
    except TypeError:
        return False


class posx(list):
    """A task-space pose x, y, z [mm], A, B, C [deg] (DR_common2's posx)."""

    def __init__(self, x: Any = 0, y: float = 0, z: float = 0, w: float = 0, p: float = 0,
                 r: float = 0):
        vals = list(x) if isinstance(x, (list, tuple)) and len(x) == POINT_COUNT \
            else [x, y, z, w, p, r]
        if not _numbers(vals):
            raise DR_Error(DR_ERROR_TYPE, "Invalid type : x, y, z, w, p, r.")
        super().__init__(vals)


def _posx(pos: Any) -> posx:
    if isinstance(pos, posx) or (isinstance(pos, (list, tuple)) and len(pos) == POINT_COUNT):
        if not _numbers(pos):
            raise DR_Error(DR_ERROR_VALUE, "Invalid value : pos")
        return posx(list(pos))
    raise DR_Error(DR_ERROR_TYPE, "Invalid type : pos")


class posb:
    """One moveb segment (DR_common2's posb): a DR_LINE to posx1, or a DR_CIRCLE through
    posx1 to posx2, with a blending radius [mm] into the next segment."""

    def __init__(self, seg_type: int, posx1: Any, posx2: Any = None, radius: float = 0):
        if not isinstance(seg_type, numbers.Integral) or isinstance(seg_type, bool):
            raise DR_Error(DR_ERROR_TYPE, "Invalid type : seg_type")
        if seg_type not in (DR_LINE, DR_CIRCLE):
            raise DR_Error(DR_ERROR_VALUE, "Invalid value : seg_type")
        self._seg_type = int(seg_type)
        self._posx1 = _posx(posx1)
        self._posx2 = None
        if seg_type == DR_LINE and posx2 is not None:
            raise DR_Error(DR_ERROR_VALUE, "Invalid value : pos2")
        if seg_type == DR_CIRCLE:
            if posx2 is None:
                raise DR_Error(DR_ERROR_VALUE, "Invalid value : pos2")
            self._posx2 = _posx(posx2)
        if not _is_number(radius):
            raise DR_Error(DR_ERROR_TYPE, "Invalid type : radius")
        if radius < 0:
            raise DR_Error(DR_ERROR_VALUE, "Invalid value : radius")
        self._radius = radius

    def to_list(self) -> list:
        return [self._seg_type, self._posx1, self._posx2, self._radius]

    def segment(self) -> list[float]:
        """The 14 numbers of MoveBlending.srv: pos1, pos2 (zeros for a line), type, radius."""
        p2 = self._posx2 if self._posx2 is not None else [0.0] * POINT_COUNT
        return [float(v) for v in self._posx1] + [float(v) for v in p2] + \
            [float(self._seg_type), float(self._radius)]


# -- the globals of a DRL program ----------------------------------------------------------
_g_velx = [0.0, DR_COND_NONE]
_g_accx = [0.0, DR_COND_NONE]
_g_coord = DR_BASE
_proxy: Any = None


def connect(name: str | None = None, nameserver: str | None = None) -> Any:
    """Use the BlendingPlanner ``name`` of the naming service ``nameserver`` (defaults:
    RTCF_DSR_PLANNER or BlendingPlanner0, RTCF_NAMESERVER or localhost:2809)."""
    global _proxy
    from rtcf.corba.client import NoNamingService

    from .proxy import BlendingPlannerProxy
    name = name or os.environ.get("RTCF_DSR_PLANNER", "BlendingPlanner0")
    nameserver = nameserver or os.environ.get("RTCF_NAMESERVER", "localhost:2809")
    try:
        _proxy = BlendingPlannerProxy(name, nameserver=nameserver)
    except NoNamingService as e:
        raise DR_Error(DR_ERROR_RUNTIME, str(e)) from None
    except Exception as e:      # not bound, not a BlendingPlanner
        raise DR_Error(DR_ERROR_RUNTIME, f"cannot reach {name} through the naming service "
                                         f"at {nameserver}: {e}") from None
    return _proxy


def _planner() -> Any:
    return _proxy if _proxy is not None else connect()


def _call(op: str, fn: Any, *args: Any) -> Any:
    """A call to the component; a broken connection is a DR_ERROR_RUNTIME."""
    from omniORB import CORBA
    try:
        return fn(*args)
    except CORBA.SystemException as e:
        raise DR_Error(DR_ERROR_RUNTIME, f"{op}: the BlendingPlanner did not answer "
                                         f"({type(e).__name__})") from None


def _pair(x: Any, name: str) -> list[float]:
    if x is None:
        return None
    if _is_number(x):
        return [float(x), DR_COND_NONE]
    if isinstance(x, (list, tuple)) and len(x) == 2:
        if not _numbers(x):
            raise DR_Error(DR_ERROR_VALUE, f"Invalid value : {name}")
        return [float(v) for v in x]
    raise DR_Error(DR_ERROR_TYPE, f"Invalid type : {name}")


def _set_pair(v1: Any, v2: Any, what: str) -> list[float]:
    if not _is_number(v1):
        raise DR_Error(DR_ERROR_TYPE, f"Invalid type : {what}1")
    if not v1 > 0 or not math.isfinite(v1):
        raise DR_Error(DR_ERROR_VALUE, f"Invalid value : {what}1")
    if not _is_number(v2):
        raise DR_Error(DR_ERROR_TYPE, f"Invalid type : {what}2")
    if v2 != DR_COND_NONE and (not v2 > 0 or not math.isfinite(v2)):
        raise DR_Error(DR_ERROR_VALUE, f"Invalid value : {what}2")
    return [float(v1), float(v2)]


def set_velx(vel1: float, vel2: float = DR_COND_NONE) -> int:
    """The global task velocity: vel1 [mm/s], vel2 [deg/s] (DR_COND_NONE: proportional)."""
    global _g_velx
    _g_velx = _set_pair(vel1, vel2, "vel")
    return 0


def set_accx(acc1: float, acc2: float = DR_COND_NONE) -> int:
    """The global task acceleration: acc1 [mm/s^2], acc2 [deg/s^2]."""
    global _g_accx
    _g_accx = _set_pair(acc1, acc2, "acc")
    return 0


def set_ref_coord(coord: int) -> int:
    """The global reference frame of moves without ``ref``: DR_BASE, DR_TOOL, DR_WORLD or a
    user frame 101..200."""
    global _g_coord
    if not isinstance(coord, numbers.Integral) or isinstance(coord, bool):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : coord")
    if not (DR_BASE <= coord <= DR_WORLD or DR_TC_USER_MIN <= coord <= DR_TC_USER_MAX):
        raise DR_Error(DR_ERROR_VALUE, "Invalid value : coord")
    _g_coord = int(coord)
    return 0


def _request(seg_list: Any, vel: Any, acc: Any, ref: Any, time: Any, mod: Any) -> tuple:
    """DSR_ROBOT2's checks of a moveb, in its order; the request's fields."""
    if not isinstance(seg_list, list):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : seg_list")
    if len(seg_list) == 0:
        raise DR_Error(DR_ERROR_VALUE, "Invalid value : seg_list")
    for seg in seg_list:
        if not isinstance(seg, posb):
            raise DR_Error(DR_ERROR_TYPE, "Invalid type : seg_list(item)")
    v = _pair(vel, "vel, v") or list(_g_velx)
    a = _pair(acc, "acc, a") or list(_g_accx)
    for what, pair in (("vel, v", v), ("acc, a", a)):
        if any(x < 0 and x != DR_COND_NONE for x in pair):
            raise DR_Error(DR_ERROR_VALUE, f"Invalid value : {what}")
    t = 0.0 if time is None else time
    if not _is_number(t):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : time, t")
    if t < 0:
        raise DR_Error(DR_ERROR_VALUE, "Invalid value : time, t")
    if float(t) == 0.0:
        for what, pair in (("vel1, v1", v), ("acc1, a1", a)):
            if pair[0] <= 0:
                raise DR_Error(DR_ERROR_VALUE, f"Invalid value : {what} (0.0, when time = 0.0)")
            if pair[1] != DR_COND_NONE and pair[1] <= 0:
                raise DR_Error(DR_ERROR_VALUE, f"Invalid value : {what.replace('1', '2')} "
                                               "(0.0, when time = 0.0)")
    r = _g_coord if ref is None else ref
    if not isinstance(r, numbers.Integral) or isinstance(r, bool):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : ref")
    if r < DR_BASE or r > DR_TC_USER_MAX:
        raise DR_Error(DR_ERROR_VALUE, "Invalid value : ref")
    if not isinstance(mod, numbers.Integral) or isinstance(mod, bool):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : mod")
    if mod not in (DR_MV_MOD_ABS, DR_MV_MOD_REL):
        raise DR_Error(DR_ERROR_VALUE, "Invalid value : mod")
    return [s.segment() for s in seg_list], v, a, float(t), int(r), int(mod)


def _moveb(seg_list: Any, vel: Any, acc: Any, ref: Any, time: Any, mod: Any, v: Any, a: Any,
           t: Any, sync_type: int) -> int:
    segs, vv, aa, tt, rr, mm = _request(seg_list, vel if vel is not None else v,
                                        acc if acc is not None else a, ref,
                                        time if time is not None else t, mod)
    p = _planner()
    ok = _call("moveb", p.move_blending, segs, vv, aa, tt, rr, mm, sync_type)
    return 0 if ok else -1


def moveb(seg_list: Sequence[posb], vel: Any = None, acc: Any = None, ref: Any = None,
          time: Any = None, mod: int = DR_MV_MOD_ABS, v: Any = None, a: Any = None,
          t: Any = None) -> int:
    """Blended move, returning when it ends: 0, or -1 when refused or stopped."""
    return _moveb(seg_list, vel, acc, ref, time, mod, v, a, t, 0)


def amoveb(seg_list: Sequence[posb], vel: Any = None, acc: Any = None, ref: Any = None,
           time: Any = None, mod: int = DR_MV_MOD_ABS, v: Any = None, a: Any = None,
           t: Any = None) -> int:
    """Blended move, returning once it has started: 0, or -1 when refused."""
    return _moveb(seg_list, vel, acc, ref, time, mod, v, a, t, 1)


def mwait(time: float = 0) -> int:
    """Wait until no motion runs: 0, or -1 when the motion was stopped (``time`` is checked
    and, as in DSR_ROBOT2 over ROS 2, not used)."""
    if not _is_number(time):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : time")
    if time < 0:
        raise DR_Error(DR_ERROR_VALUE, "Invalid value : time")
    p = _planner()
    return 0 if _call("mwait", p.move_wait) else -1


def check_motion() -> int:
    """DR_STATE_IDLE (0) or DR_STATE_BUSY (2)."""
    p = _planner()
    return int(_call("check_motion", p.service.checkMotion))


def get_last_error() -> str:
    """Why the last moveb / amoveb / mwait returned -1 (not in DSR: its controller logs it)."""
    p = _planner()
    return str(_call("get_last_error", p.service.getLastError))
