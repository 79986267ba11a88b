"""DSR_ROBOT2's motion calls over the BlendingPlanner: movej ... move_home, moveb, mwait,
check_motion, stop, change_operation_speed, the global speeds, wait.

Each call checks its arguments as DSR_ROBOT2.py does, in its order and with its messages
(doosan-robotics/doosan-robot2 at 443f0c587059c7c45aba6d523b0edad87de29fee,
dsr_common2/imp/DSR_ROBOT2.py: _movej, _movel, ... ; a wrong argument raises DR_Error
DR_ERROR_TYPE / DR_ERROR_VALUE before anything is sent), sends the command, and waits in
bounded calls (waitCommand, rtcf.corba.client.wait_in_chunks) for what the DRL call returns
on: movej, movel, ... when the motion has ended, or, given a radius, when the TCP enters its
blending sphere (the next motion then blends from there); amovej, amovel, ... once the
motion has started (DSR sends radius 0 for them). The answer is 0, or -1 when the motion was
stopped (stop(), an OVERRIDE). A command the robot cannot do (a target out of the joint
limits or out of reach, a path through a singularity, a time too short) raises DR_Error
DR_ERROR_VALUE, and a system that cannot move (no execution context, a moveb running)
DR_ERROR_RUNTIME, as the DRL manual's motion commands raise them; nothing moves then.

The globals are per process, as DSR_ROBOT2's: set_velj / set_accj / set_velx / set_accx
(0 until set: a motion without vel / acc then raises DR_Error, as in DSR), set_ref_coord
(DR_BASE at start). The component: ``BlendingPlanner0`` in the naming service at
``localhost:2809``, or the environment's RTCF_DSR_PLANNER and RTCF_NAMESERVER, or
``connect(name, nameserver)``. Runs in: the caller's thread.
"""

from __future__ import annotations

import math
import os
import time as _time
import warnings
from typing import Any, Sequence

from .dsr_common import (DR_AXIS_X, DR_AXIS_Y, DR_AXIS_Z, DR_BASE, DR_COND_NONE,
                         DR_ERROR_RUNTIME, DR_ERROR_STOP, DR_ERROR_TYPE, DR_ERROR_VALUE,
                         DR_HOLD, DR_MV_MOD_ABS, DR_MV_MOD_REL, DR_MV_RA_DUPLICATE,
                         DR_MV_RA_OVERRIDE, DR_MVS_VEL_CONST, DR_MVS_VEL_NONE, DR_OP_SPEED_MAX,
                         DR_OP_SPEED_MIN, DR_QSTOP_STO, DR_SOL_MAX, DR_SOL_MIN,
                         DR_TC_USER_MAX, DR_TC_USER_MIN, DR_TOOL, DR_WORLD, POINT_COUNT,
                         DR_Error, get_normal_pos, get_param, get_posj, get_posx, is_int,
                         is_number, posb, posj, posx)

UNTIL_STARTED, UNTIL_BLENDING, UNTIL_DONE = 2, 3, 4
STARTED, BLENDING, DONE, FAILED, STOPPED = 2, 3, 4, -1, -2

# -- the globals of a DRL program (DSR_ROBOT2.py) ------------------------------------------
_g_velj = [0.0] * 6
_g_accj = [0.0] * 6
_g_velx = [0.0, DR_COND_NONE]
_g_accx = [0.0, DR_COND_NONE]
_g_coord = DR_BASE
_g_blend_state = False
_g_blend_radius = 0.0
_proxy: Any = None
_notes: set[str] = set()


# -- the connection ---------------------------------------------------------------------------
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


def ref_coord() -> int:
    """The coordinate system set_ref_coord set (DR_BASE at first): the other DRL modules'
    default ``ref``. Runs in: the user's program thread."""
    return _g_coord


def connected() -> Any:
    """The proxy of the planner connect() reached, or None. Runs in: the user's program
    thread."""
    return _proxy


def planner_proxy() -> Any:
    from . import dsr_rclpy
    dsr_rclpy.check_alive()
    return _proxy if _proxy is not None else connect()


def call_planner(op: str, fn: Any, *args: Any) -> Any:
    """A call to the component; a broken connection is a DR_ERROR_RUNTIME."""
    from omniORB import CORBA
    try:
        return fn(*args)
    except CORBA.SystemException as e:
        raise DR_Error(DR_ERROR_RUNTIME, f"{op}: the BlendingPlanner did not answer "
                                         f"({type(e).__name__})") from None


def _run(op: str, submit: Any, until: int) -> int:
    """Send a motion command and wait (bounded calls) until it reaches ``until``: 0, -1 when
    stopped; DR_Error when refused."""
    from rtcf.corba.client import wait_in_chunks
    p = planner_proxy()
    tid = call_planner(op, submit, p.service)
    svc = p.service

    def waiting(st: Any) -> bool:
        return st.state not in (FAILED, STOPPED, DONE) and st.state < until

    st = call_planner(op, wait_in_chunks, lambda c: svc.waitCommand(tid, until, c), waiting,
               p.wait_chunk)
    if st.note and st.note not in _notes:
        _notes.add(st.note)
        warnings.warn(f"{op}: {st.note}", RuntimeWarning, stacklevel=3)
    if st.state == FAILED:
        raise DR_Error(st.errorType or DR_ERROR_RUNTIME, f"{op}: {st.reason}", True)
    if st.state == STOPPED:
        p.last_reason = st.reason
        return -1
    return 0


# -- argument forms (DSR_ROBOT2's checks, in its order) ---------------------------------------
def _num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _joint_speed(value: Any, short: Any, default: list[float], what: str) -> list[float]:
    temp = get_param(value, short)
    if temp is None:
        vals = list(default)
    elif _num(temp):
        vals = [temp] * 6
    elif isinstance(temp, list) and len(temp) == 6:
        vals = list(temp)
    else:
        raise DR_Error(DR_ERROR_TYPE, f"Invalid type : {what}", True)
    if not is_number(vals):
        raise DR_Error(DR_ERROR_VALUE, f"Invalid value : {what}", True)
    if any(v < 0 for v in vals):
        raise DR_Error(DR_ERROR_VALUE, f"Invalid value : {what}", True)
    return [float(v) for v in vals]


def _task_speed(value: Any, short: Any, default: list[float], what: str,
                pair_scalar: bool = False) -> list[float]:
    temp = get_param(value, short)
    if temp is None:
        vals = list(default)
    elif _num(temp):
        vals = [temp, temp] if pair_scalar else [temp, DR_COND_NONE]
    elif isinstance(temp, list) and len(temp) == 2:
        vals = list(temp)
    else:
        raise DR_Error(DR_ERROR_TYPE, f"Invalid type : {what}", True)
    if not is_number(vals):
        raise DR_Error(DR_ERROR_VALUE, f"Invalid value : {what}", True)
    if any(v < 0 and v != DR_COND_NONE for v in vals):
        raise DR_Error(DR_ERROR_VALUE, f"Invalid value : {what}", True)
    return [float(v) for v in vals]


def _time_arg(time: Any, t: Any) -> float:
    tt = get_param(time, t)
    if tt is None:
        tt = 0.0
    if not _num(tt):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : time, t", True)
    if not tt >= 0 or not math.isfinite(tt):
        raise DR_Error(DR_ERROR_VALUE, "Invalid value : time, t", True)
    return float(tt)


def _check_joint(vel: list[float], acc: list[float], time: float) -> None:
    if time == 0.0:
        if all(v == 0.0 for v in vel):
            raise DR_Error(DR_ERROR_VALUE, "Invalid value : vel, v (0.0, when time = 0.0)",
                           True)
        if all(a == 0.0 for a in acc):
            raise DR_Error(DR_ERROR_VALUE, "Invalid value : acc, a (0.0, when time = 0.0)",
                           True)


def _check_task(vel: list[float], acc: list[float], time: float) -> None:
    if time == 0.0:
        if vel[0] <= 0:
            raise DR_Error(DR_ERROR_VALUE, "Invalid value : vel1, v1 (0.0, when time = 0.0)",
                           True)
        if vel[1] != DR_COND_NONE and vel[1] <= 0:
            raise DR_Error(DR_ERROR_VALUE, "Invalid value : vel2, v2 (0.0, when time = 0.0)",
                           True)
        if acc[0] <= 0:
            raise DR_Error(DR_ERROR_VALUE, "Invalid value : acc1, a1 (0.0, when time = 0.0)",
                           True)
        if acc[1] != DR_COND_NONE and acc[1] <= 0:
            raise DR_Error(DR_ERROR_VALUE, "Invalid value : acc2, a2 (0.0, when time = 0.0)",
                           True)


def _radius_arg(radius: Any, r: Any) -> float:
    rr = get_param(radius, r)
    if rr is None:
        rr = _g_blend_radius if _g_blend_state else 0.0
    if not _num(rr):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : radius, r", True)
    if not rr >= 0 or not math.isfinite(rr):
        raise DR_Error(DR_ERROR_VALUE, "Invalid value : radius, r", True)
    return float(rr)


def _ref_arg(ref: Any) -> int:
    rr = _g_coord if ref is None else ref
    if not is_int(rr):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : ref", True)
    if rr < DR_BASE or rr > DR_TC_USER_MAX:
        raise DR_Error(DR_ERROR_VALUE, "Invalid value : ref", True)
    return int(rr)


def _mod_arg(mod: Any) -> int:
    if not is_int(mod):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : mod", True)
    if mod not in (DR_MV_MOD_ABS, DR_MV_MOD_REL):
        raise DR_Error(DR_ERROR_VALUE, "Invalid value : mod", True)
    return int(mod)


def _ra_arg(ra: Any) -> int:
    if not is_int(ra):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : ra", True)
    if ra not in (DR_MV_RA_DUPLICATE, DR_MV_RA_OVERRIDE):
        raise DR_Error(DR_ERROR_VALUE, "Invalid value : ra", True)
    return int(ra)


def _until(sync: bool, radius: float) -> int:
    if not sync:
        return UNTIL_STARTED
    return UNTIL_BLENDING if radius > 0 else UNTIL_DONE


# -- global speeds and frame (DSR_ROBOT2: set_velj, set_accj, set_velx, set_accx) -----------
def set_velj(vel: Any) -> int:
    """The global joint speed [deg/s]: one value for every joint or a list of 6."""
    global _g_velj
    if _num(vel):
        if vel <= 0:
            raise DR_Error(DR_ERROR_TYPE, "Invalid type : vel")
        vals = [vel] * 6
    elif isinstance(vel, list) and len(vel) == POINT_COUNT:
        if not is_number(vel):
            raise DR_Error(DR_ERROR_TYPE, "Invalid type : vel")
        if any(v <= 0 for v in vel):
            raise DR_Error(DR_ERROR_VALUE, "Invalid value : vel")
        vals = list(vel)
    else:
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : vel")
    if not is_number(vals):
        raise DR_Error(DR_ERROR_VALUE, "Invalid value : vel")
    _g_velj = [float(v) for v in vals]
    return 0


def set_accj(acc: Any) -> int:
    """The global joint acceleration [deg/s^2]: one value or a list of 6."""
    global _g_accj
    if _num(acc):
        vals = [acc] * 6
        if not acc > 0:
            raise DR_Error(DR_ERROR_VALUE, "Invalid value : acc")
    elif isinstance(acc, list) and len(acc) == POINT_COUNT:
        if not all(_num(v) for v in acc):
            raise DR_Error(DR_ERROR_TYPE, "Invalid type : acc")
        if any(not v > 0 for v in acc):
            raise DR_Error(DR_ERROR_VALUE, "Invalid value : acc")
        vals = list(acc)
    else:
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : acc")
    if not is_number(vals):
        raise DR_Error(DR_ERROR_VALUE, "Invalid value : acc")
    _g_accj = [float(v) for v in vals]
    return 0


def _set_pair(v1: Any, v2: Any, what: str) -> list[float]:
    if not _num(v1):
        raise DR_Error(DR_ERROR_TYPE, f"Invalid type : {what}1")
    if not v1 > 0 or not math.isfinite(v1):
        raise DR_Error(DR_ERROR_VALUE, f"Invalid value : {what}1")
    if not _num(v2):
        raise DR_Error(DR_ERROR_TYPE, f"Invalid type : {what}2")
    if v2 != DR_COND_NONE and (not v2 > 0 or not math.isfinite(v2)):
        raise DR_Error(DR_ERROR_VALUE, f"Invalid value : {what}2")
    return [float(v1), float(v2)]


def set_velx(vel1: float, vel2: float = DR_COND_NONE) -> int:
    """The global task speed: vel1 [mm/s], vel2 [deg/s] (DR_COND_NONE: in proportion)."""
    global _g_velx
    _g_velx = _set_pair(vel1, vel2, "vel")
    return 0


def set_accx(acc1: float, acc2: float = DR_COND_NONE) -> int:
    """The global task acceleration: acc1 [mm/s^2], acc2 [deg/s^2]."""
    global _g_accx
    _g_accx = _set_pair(acc1, acc2, "acc")
    return 0


def set_ref_coord(coord: int) -> int:
    """The global reference frame of motions without ``ref``: DR_BASE, DR_TOOL, DR_WORLD or
    a user frame 101..200."""
    global _g_coord
    if not is_int(coord):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : coord")
    if coord not in (DR_BASE, DR_TOOL, DR_WORLD) and \
            not DR_TC_USER_MIN <= coord <= DR_TC_USER_MAX:
        raise DR_Error(DR_ERROR_VALUE, f"Invalid value : coord({coord})")
    _g_coord = int(coord)
    return 0


# -- the motions ------------------------------------------------------------------------------
def movej(pos: Any, vel: Any = None, acc: Any = None, time: Any = None, radius: Any = None,
          mod: int = DR_MV_MOD_ABS, ra: int = DR_MV_RA_DUPLICATE, v: Any = None, a: Any = None,
          t: Any = None, r: Any = None) -> int:
    """Joint motion to posj ``pos`` [deg], every joint arriving together; returns when it
    ended (or, with a radius, when the TCP enters the blending sphere)."""
    return _movej(pos, vel, acc, time, radius, mod, ra, v, a, t, r, True)


def amovej(pos: Any, vel: Any = None, acc: Any = None, time: Any = None, radius: Any = None,
           mod: int = DR_MV_MOD_ABS, ra: int = DR_MV_RA_DUPLICATE, v: Any = None,
           a: Any = None, t: Any = None, r: Any = None) -> int:
    """movej that returns once the motion has started."""
    return _movej(pos, vel, acc, time, radius, mod, ra, v, a, t, r, False)


def _movej(pos, vel, acc, time, radius, mod, ra, v, a, t, r, sync) -> int:
    q = get_posj(pos)
    vv = _joint_speed(vel, v, _g_velj, "vel, v")
    aa = _joint_speed(acc, a, _g_accj, "acc, a")
    tt = _time_arg(time, t)
    _check_joint(vv, aa, tt)
    rr = _radius_arg(radius, r)
    mm, ra = _mod_arg(mod), _ra_arg(ra)
    if not sync:
        rr = 0.0
    return _run("movej" if sync else "amovej",
                lambda s: s.moveJoint([float(x) for x in q], vv, aa, tt, rr, mm, ra),
                _until(sync, rr))


def movejx(pos: Any, vel: Any = None, acc: Any = None, time: Any = None, radius: Any = None,
           ref: Any = None, mod: int = DR_MV_MOD_ABS, ra: int = DR_MV_RA_DUPLICATE,
           sol: int = 0, v: Any = None, a: Any = None, t: Any = None, r: Any = None) -> int:
    """Joint motion to the task pose ``pos`` in solution space ``sol`` (0..7)."""
    return _movejx(pos, vel, acc, time, radius, ref, mod, ra, sol, v, a, t, r, True)


def amovejx(pos: Any, vel: Any = None, acc: Any = None, time: Any = None, radius: Any = None,
            ref: Any = None, mod: int = DR_MV_MOD_ABS, ra: int = DR_MV_RA_DUPLICATE,
            sol: int = 0, v: Any = None, a: Any = None, t: Any = None, r: Any = None) -> int:
    return _movejx(pos, vel, acc, time, radius, ref, mod, ra, sol, v, a, t, r, False)


def _movejx(pos, vel, acc, time, radius, ref, mod, ra, sol, v, a, t, r, sync) -> int:
    x = get_posx(pos)
    vv = _joint_speed(vel, v, _g_velj, "vel, v")
    aa = _joint_speed(acc, a, _g_accj, "acc, a")
    tt = _time_arg(time, t)
    _check_joint(vv, aa, tt)
    rr = _radius_arg(radius, r)
    rf, mm, ra = _ref_arg(ref), _mod_arg(mod), _ra_arg(ra)
    if not is_int(sol):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : sol")
    if not DR_SOL_MIN <= sol <= DR_SOL_MAX:
        raise DR_Error(DR_ERROR_VALUE, "Invalid value : sol")
    if not sync:
        rr = 0.0
    return _run("movejx" if sync else "amovejx",
                lambda s: s.moveJointx([float(c) for c in x], vv, aa, tt, rr, rf, mm, ra,
                                       int(sol)), _until(sync, rr))


def movel(pos: Any, vel: Any = None, acc: Any = None, time: Any = None, radius: Any = None,
          ref: Any = None, mod: int = DR_MV_MOD_ABS, ra: int = DR_MV_RA_DUPLICATE,
          v: Any = None, a: Any = None, t: Any = None, r: Any = None) -> int:
    """Straight line to the task pose ``pos`` at constant speed; returns when it ended (or
    at the blending sphere)."""
    return _movel(pos, vel, acc, time, radius, ref, mod, ra, v, a, t, r, True)


def amovel(pos: Any, vel: Any = None, acc: Any = None, time: Any = None, radius: Any = None,
           ref: Any = None, mod: int = DR_MV_MOD_ABS, ra: int = DR_MV_RA_DUPLICATE,
           v: Any = None, a: Any = None, t: Any = None, r: Any = None) -> int:
    """movel that returns once the motion has started."""
    return _movel(pos, vel, acc, time, radius, ref, mod, ra, v, a, t, r, False)


def _movel(pos, vel, acc, time, radius, ref, mod, ra, v, a, t, r, sync) -> int:
    x = get_normal_pos(pos, def_type=posx)
    if isinstance(x, posj):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : pos (a posj: movel takes a posx)")
    vv = _task_speed(vel, v, _g_velx, "vel, v")
    aa = _task_speed(acc, a, _g_accx, "acc, a")
    tt = _time_arg(time, t)
    _check_task(vv, aa, tt)
    rr = _radius_arg(radius, r)
    rf, mm, ra = _ref_arg(ref), _mod_arg(mod), _ra_arg(ra)
    if not sync:
        rr = 0.0
    return _run("movel" if sync else "amovel",
                lambda s: s.moveLine([float(c) for c in x], vv, aa, tt, rr, rf, mm, ra),
                _until(sync, rr))


def movec(pos1: Any, pos2: Any, vel: Any = None, acc: Any = None, time: Any = None,
          radius: Any = None, ref: Any = None, mod: int = DR_MV_MOD_ABS, angle: Any = None,
          ra: int = DR_MV_RA_DUPLICATE, v: Any = None, a: Any = None, t: Any = None,
          r: Any = None, an: Any = None) -> int:
    """Arc from where the TCP is through pos1 to pos2 at constant speed."""
    return _movec(pos1, pos2, vel, acc, time, radius, ref, mod, angle, ra, v, a, t, r, an,
                  True)


def amovec(pos1: Any, pos2: Any, vel: Any = None, acc: Any = None, time: Any = None,
           radius: Any = None, ref: Any = None, mod: int = DR_MV_MOD_ABS, angle: Any = None,
           ra: int = DR_MV_RA_DUPLICATE, v: Any = None, a: Any = None, t: Any = None,
           r: Any = None, an: Any = None) -> int:
    return _movec(pos1, pos2, vel, acc, time, radius, ref, mod, angle, ra, v, a, t, r, an,
                  False)


def _movec(pos1, pos2, vel, acc, time, radius, ref, mod, angle, ra, v, a, t, r, an,
           sync) -> int:
    x1 = get_normal_pos(pos1, def_type=posx)
    x2 = get_normal_pos(pos2, def_type=posx)
    if type(x1) is not type(x2):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : pos1, ps2")
    if isinstance(x1, posj):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : pos1, pos2 (posj: movec takes posx)")
    vv = _task_speed(vel, v, _g_velx, "vel, v")
    aa = _task_speed(acc, a, _g_accx, "acc, a")
    tt = _time_arg(time, t)
    _check_task(vv, aa, tt)
    rr = _radius_arg(radius, r)
    rf, mm = _ref_arg(ref), _mod_arg(mod)
    temp = get_param(angle, an)
    if temp is None:
        ang = [0.0, 0.0]
    elif _num(temp):
        ang = [temp, 0.0]
    elif isinstance(temp, list) and len(temp) == 2:
        ang = list(temp)
    else:
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : angle, an")
    if not is_number(ang):
        raise DR_Error(DR_ERROR_VALUE, "Invalid value : angle, an")
    if any(v_ < 0 for v_ in ang):
        raise DR_Error(DR_ERROR_VALUE, "Invalid value : angle, an")
    ra = _ra_arg(ra)
    if not sync:
        rr = 0.0
    return _run("movec" if sync else "amovec",
                lambda s: s.moveCircle([float(c) for c in x1], [float(c) for c in x2], vv, aa,
                                       tt, rr, rf, mm, float(ang[0]), float(ang[1]), ra),
                _until(sync, rr))


def movesj(pos_list: Any, vel: Any = None, acc: Any = None, time: Any = None,
           mod: int = DR_MV_MOD_ABS, v: Any = None, a: Any = None, t: Any = None) -> int:
    """Joint spline through the posj waypoints of ``pos_list``."""
    return _movesj(pos_list, vel, acc, time, mod, v, a, t, True)


def amovesj(pos_list: Any, vel: Any = None, acc: Any = None, time: Any = None,
            mod: int = DR_MV_MOD_ABS, v: Any = None, a: Any = None, t: Any = None) -> int:
    return _movesj(pos_list, vel, acc, time, mod, v, a, t, False)


def _movesj(pos_list, vel, acc, time, mod, v, a, t, sync) -> int:
    if not isinstance(pos_list, list):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : pos_list")
    for item in pos_list:
        if not isinstance(item, posj):
            raise DR_Error(DR_ERROR_TYPE, "Invalid type : pos_list [item]")
        if not is_number(list(item)):
            raise DR_Error(DR_ERROR_VALUE, "Invalid value : pos_list [item]")
    vv = _joint_speed(vel, v, _g_velj, "vel, v")
    aa = _joint_speed(acc, a, _g_accj, "acc, a")
    tt = _time_arg(time, t)
    _check_joint(vv, aa, tt)
    mm = _mod_arg(mod)
    pts = [[float(c) for c in p] for p in pos_list]
    return _run("movesj" if sync else "amovesj",
                lambda s: s.moveSplineJoint(pts, vv, aa, tt, mm), _until(sync, 0.0))


def movesx(pos_list: Any, vel: Any = None, acc: Any = None, time: Any = None, ref: Any = None,
           mod: int = DR_MV_MOD_ABS, vel_opt: int = DR_MVS_VEL_NONE, v: Any = None,
           a: Any = None, t: Any = None) -> int:
    """Task spline through the posx waypoints of ``pos_list`` at constant TCP speed."""
    return _movesx(pos_list, vel, acc, time, ref, mod, vel_opt, v, a, t, True)


def amovesx(pos_list: Any, vel: Any = None, acc: Any = None, time: Any = None,
            ref: Any = None, mod: int = DR_MV_MOD_ABS, vel_opt: int = DR_MVS_VEL_NONE,
            v: Any = None, a: Any = None, t: Any = None) -> int:
    return _movesx(pos_list, vel, acc, time, ref, mod, vel_opt, v, a, t, False)


def _movesx(pos_list, vel, acc, time, ref, mod, vel_opt, v, a, t, sync) -> int:
    if not isinstance(pos_list, list):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : pos_list")
    for item in pos_list:
        if not isinstance(item, posx):
            raise DR_Error(DR_ERROR_TYPE, "Invalid type : pos_list [item]")
        if not is_number(list(item)):
            raise DR_Error(DR_ERROR_VALUE, "Invalid value : pos_list [item]")
    vv = _task_speed(vel, v, _g_velx, "vel, v")
    aa = _task_speed(acc, a, _g_accx, "acc, a")
    tt = _time_arg(time, t)
    _check_task(vv, aa, tt)
    rf, mm = _ref_arg(ref), _mod_arg(mod)
    if not is_int(vel_opt):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : vel_opt")
    if vel_opt not in (DR_MVS_VEL_NONE, DR_MVS_VEL_CONST):
        raise DR_Error(DR_ERROR_VALUE, "Invalid value : vel_opt")
    pts = [[float(c) for c in p] for p in pos_list]
    return _run("movesx" if sync else "amovesx",
                lambda s: s.moveSplineTask(pts, vv, aa, tt, rf, mm, int(vel_opt)),
                _until(sync, 0.0))


def move_spiral(rev: float = 10, rmax: float = 10, lmax: float = 0, vel: Any = None,
                acc: Any = None, time: Any = None, axis: int = DR_AXIS_Z, ref: int = DR_TOOL,
                v: Any = None, a: Any = None, t: Any = None) -> int:
    """A spiral out from the TCP: ``rev`` turns to radius ``rmax`` [mm], ``lmax`` [mm] along
    ``axis`` of ``ref``."""
    return _move_spiral(rev, rmax, lmax, vel, acc, time, axis, ref, v, a, t, True)


def amove_spiral(rev: float = 10, rmax: float = 10, lmax: float = 0, vel: Any = None,
                 acc: Any = None, time: Any = None, axis: int = DR_AXIS_Z,
                 ref: int = DR_TOOL, v: Any = None, a: Any = None, t: Any = None) -> int:
    return _move_spiral(rev, rmax, lmax, vel, acc, time, axis, ref, v, a, t, False)


def _move_spiral(rev, rmax, lmax, vel, acc, time, axis, ref, v, a, t, sync) -> int:
    if not _num(rev):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : rev")
    if not rev > 0:
        raise DR_Error(DR_ERROR_VALUE, "Invalid value : rev (Ranges: rev > 0)")
    if not _num(rmax):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : rmax")
    if not rmax > 0:
        raise DR_Error(DR_ERROR_VALUE, "Invalid value: rmax (Ranges: rmax > 0)")
    if not _num(lmax):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : lmax")
    vv = _task_speed(vel, v, _g_velx, "vel, v", pair_scalar=True)
    aa = _task_speed(acc, a, _g_accx, "acc, a", pair_scalar=True)
    tt = _time_arg(time, t)
    _check_joint(vv, aa, tt)
    if not is_int(axis):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : axis")
    if axis not in (DR_AXIS_X, DR_AXIS_Y, DR_AXIS_Z):
        raise DR_Error(DR_ERROR_VALUE, "Invalid value : axis")
    if not is_int(ref):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : ref")
    if ref not in (DR_BASE, DR_TOOL) and not DR_TC_USER_MIN <= ref <= DR_TC_USER_MAX:
        raise DR_Error(DR_ERROR_VALUE, "Invalid value : ref")
    if tt == 0.0 and (vv[0] <= 0 or aa[0] <= 0):
        raise DR_Error(DR_ERROR_VALUE, "Invalid value : vel, acc (0.0, when time = 0.0)")
    return _run("move_spiral" if sync else "amove_spiral",
                lambda s: s.moveSpiral(float(rev), float(rmax), float(lmax), vv, aa, tt,
                                       int(axis), int(ref)), _until(sync, 0.0))


def move_periodic(amp: Any, period: Any, atime: Any = None, repeat: Any = None,
                  ref: int = DR_TOOL) -> int:
    """A sine on each axis of ``ref``: amp [mm, deg], period [s], faded over atime [s],
    ``repeat`` times the longest period."""
    return _move_periodic(amp, period, atime, repeat, ref, True)


def amove_periodic(amp: Any, period: Any, atime: Any = None, repeat: Any = None,
                   ref: int = DR_TOOL) -> int:
    return _move_periodic(amp, period, atime, repeat, ref, False)


def _move_periodic(amp, period, atime, repeat, ref, sync) -> int:
    if not isinstance(amp, list):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : amp")
    if len(amp) != POINT_COUNT or not is_number(amp):
        raise DR_Error(DR_ERROR_VALUE, "Invalid value : amp")
    if _num(period):
        per = [period] * POINT_COUNT
    elif isinstance(period, list):
        if len(period) != POINT_COUNT or not is_number(period):
            raise DR_Error(DR_ERROR_VALUE, "Invalid value : period")
        per = list(period)
    else:
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : period")
    at = 0.0 if atime is None else atime
    if not _num(at):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : atime")
    if not at >= 0:
        raise DR_Error(DR_ERROR_VALUE, "Invalid value : atime")
    rep = 1 if repeat is None else repeat
    if not _num(rep):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : repeat")
    if not rep >= 0:
        raise DR_Error(DR_ERROR_VALUE, "Invalid value : repeat")
    rf = DR_TOOL if ref is None else ref
    if not is_int(rf):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : ref")
    if rf < DR_BASE or rf > DR_TC_USER_MAX:
        raise DR_Error(DR_ERROR_VALUE, "Invalid value : ref")
    return _run("move_periodic" if sync else "amove_periodic",
                lambda s: s.movePeriodic([float(c) for c in amp], [float(c) for c in per],
                                         float(at), int(rep), int(rf)), _until(sync, 0.0))


def move_home(target: Any = None) -> int:
    """Joint motion home: DR_HOME_TARGET_MECHANIC (all joints 0, the default) or
    DR_HOME_TARGET_USER (the component's home_user)."""
    tg = 0 if target is None else target
    if not is_int(tg):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : target")
    return _run("move_home", lambda s: s.moveHome(int(tg)), UNTIL_DONE)


def moveb(seg_list: Sequence[posb], vel: Any = None, acc: Any = None, ref: Any = None,
          time: Any = None, mod: int = DR_MV_MOD_ABS, v: Any = None, a: Any = None,
          t: Any = None) -> int:
    """Blended move (Doosan's moveb), returning when it ends: 0, or -1 when stopped. A path the
    arm cannot follow raises DR_Error DR_ERROR_VALUE (nothing moves)."""
    return _moveb(seg_list, vel, acc, ref, time, mod, v, a, t, 0)


def amoveb(seg_list: Sequence[posb], vel: Any = None, acc: Any = None, ref: Any = None,
           time: Any = None, mod: int = DR_MV_MOD_ABS, v: Any = None, a: Any = None,
           t: Any = None) -> int:
    """Blended move, returning once it has started."""
    return _moveb(seg_list, vel, acc, ref, time, mod, v, a, t, 1)


def _moveb(seg_list, vel, acc, ref, time, mod, v, a, t, sync_type) -> int:
    if not isinstance(seg_list, list):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : seg_list")
    if len(seg_list) == 0:
        raise DR_Error(DR_ERROR_VALUE, "Invalid value : seg_list")
    for seg in seg_list:
        if not isinstance(seg, posb):
            raise DR_Error(DR_ERROR_TYPE, "Invalid type : seg_list(item)")
    vv = _task_speed(vel, v, _g_velx, "vel, v")
    aa = _task_speed(acc, a, _g_accx, "acc, a")
    tt = get_param(time, t)
    tt = 0.0 if tt is None else tt
    if not _num(tt):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : time, t")
    if not tt >= 0:
        raise DR_Error(DR_ERROR_VALUE, "Invalid value : time, t")
    _check_task(vv, aa, float(tt))
    rf, mm = _ref_arg(ref), _mod_arg(mod)
    p = planner_proxy()
    segs = [s.segment() for s in seg_list]
    ok = call_planner("moveb", p.move_blending, segs, vv, aa, float(tt), rf, mm, sync_type)
    if ok:
        return 0
    why = call_planner("moveb", p.service.getLastError)
    if _refused_input(why):
        raise DR_Error(DR_ERROR_VALUE, f"moveb: {why}")
    return -1


def _refused_input(why: str) -> bool:
    """A moveBlending refusal caused by the request (its geometry, reach, fields), not by
    the system's state (running, stopped, no cycle)."""
    state_words = ("already running", "stopped", "ran no cycle", "no execution context",
                   "did not end within", "being planned", "moved while")
    return bool(why) and not any(w in why for w in state_words)


def mwait(time: float = 0) -> int:
    """Wait until no motion runs: 0, or -1 when the motion was stopped (``time`` is checked
    and, as in DSR_ROBOT2 over ROS 2, not used)."""
    if not _num(time):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : time")
    if not time >= 0:
        raise DR_Error(DR_ERROR_VALUE, "Invalid value : time")
    p = planner_proxy()
    return 0 if call_planner("mwait", p.move_wait) else -1


def check_motion() -> int:
    """DR_STATE_IDLE (0), DR_STATE_INIT (1: a motion is being planned) or DR_STATE_BUSY
    (2)."""
    p = planner_proxy()
    return int(call_planner("check_motion", p.service.checkMotion))


def stop(st_mode: int) -> int:
    """The DRL's stop(st_mode) (the controller's motion/move_stop service, MoveStop.srv):
    DR_QSTOP_STO, DR_QSTOP, DR_HOLD bring the path speed to 0 in the component's
    quick_stop_time; DR_SSTOP at each motion's own deceleration. Queued commands are
    dropped; a sync motion call waiting in another thread returns -1."""
    if not is_int(st_mode):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : st_mode")
    if not DR_QSTOP_STO <= st_mode <= DR_HOLD:
        raise DR_Error(DR_ERROR_VALUE, f"Invalid value : st_mode({st_mode})")
    p = planner_proxy()
    call_planner("stop", p.service.stopMotion, int(st_mode))
    return 0


def change_operation_speed(speed: int) -> int:
    """Every motion at ``speed`` % (1..100) of its programmed speed, from now (its clock
    scaled; paths unchanged)."""
    if not is_int(speed):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : speed")
    if not DR_OP_SPEED_MIN <= speed <= DR_OP_SPEED_MAX:
        raise DR_Error(DR_ERROR_VALUE, f"Invalid value : speed({speed})")
    p = planner_proxy()
    return 0 if call_planner("change_operation_speed", p.service.changeOperationSpeed,
                      int(speed)) else -1


def wait(second: float) -> int:
    """Sleep ``second`` [s] (DSR_ROBOT2's wait)."""
    if not _num(second):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : time")
    if not second >= 0 or not math.isfinite(second):
        raise DR_Error(DR_ERROR_VALUE, "Invalid value : time")
    _time.sleep(second)
    return 0


def get_last_error() -> str:
    """Why the last moveb / amoveb / mwait returned -1 (not in DSR: its controller logs it)."""
    p = planner_proxy()
    return str(call_planner("get_last_error", p.service.getLastError))


__all__ = ["connect", "set_velj", "set_accj", "set_velx", "set_accx", "set_ref_coord",
           "movej", "amovej", "movejx", "amovejx", "movel", "amovel", "movec", "amovec",
           "movesj", "amovesj", "movesx", "amovesx", "move_spiral", "amove_spiral",
           "move_periodic", "amove_periodic", "move_home", "moveb", "amoveb", "mwait",
           "check_motion", "stop", "change_operation_speed", "wait", "get_last_error",
           "DR_ERROR_STOP"]
