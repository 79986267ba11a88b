"""DSR_ROBOT2's state, math, user-frame and TCP calls over the BlendingPlanner.

Signatures, defaults and return values as doosan-robotics/doosan-robot2 at
443f0c587059c7c45aba6d523b0edad87de29fee, dsr_common2/imp/DSR_ROBOT2.py defines them:
get_current_posx(ref) returns (posx, sol); get_current_posj / get_desired_posj a posj;
get_current_velj / get_desired_velj / get_current_velx / get_desired_velx lists of 6; fkin a
posx; ikin a posj; trans a posx; set_user_cart_coord the new frame's id (101..200);
get_user_cart_coord (posx, ref). "current" reads the measured joints when the component's
``q`` port is connected (arm_sim: the simulated arm), else the reference. Where DSR over
ROS returns a default on a failed service (ikin with no solution returns its zeros), these
raise DR_Error with the reason: DR_ERROR_VALUE for an input the robot cannot do,
DR_ERROR_RUNTIME for a system that cannot answer. Runs in: the caller's thread.
"""

from __future__ import annotations

from typing import Any

from . import dsr_motion
from .dsr_common import (DR_BASE, DR_ERROR_TYPE, DR_ERROR_VALUE,
                         DR_SOL_MAX, DR_SOL_MIN, DR_TC_USER_MAX, DR_TC_USER_MIN, DR_TOOL,
                         DR_WORLD, DR_Error, get_normal_pos, get_posj, get_posx, is_int,
                         is_number, posj, posx)
from .dsr_motion import call_planner, planner_proxy
from .frames import from_points, from_vectors
from .geometry import posx_from_pose


def _default_ref() -> int:
    coord = dsr_motion.ref_coord()
    return coord if coord != DR_TOOL else DR_BASE


def service_values(op: str, fn: Any, *args: Any) -> list[float]:
    """The values of the planner operation ``fn(service)(*args)``; DR_Error with its
    reason when it refuses. Runs in: the user's program thread."""
    p = planner_proxy()
    res = call_planner(op, fn(p.service), *args)
    if res.errorType:
        raise DR_Error(res.errorType, f"{op}: {res.reason}", True)
    return list(res.values)


def _ref_of(ref: Any, default: int, allowed: str) -> int:
    rr = default if ref is None else ref
    if not is_int(rr):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : ref", True)
    ok = {"bw": rr in (DR_BASE, DR_WORLD),
          "bwu": rr in (DR_BASE, DR_WORLD) or DR_TC_USER_MIN <= rr <= DR_TC_USER_MAX,
          "btwu": rr in (DR_BASE, DR_TOOL, DR_WORLD) or DR_TC_USER_MIN <= rr <= DR_TC_USER_MAX}
    if not ok[allowed]:
        raise DR_Error(DR_ERROR_VALUE, f"Invalid value : ref({rr})", True)
    return int(rr)


# -- state ---------------------------------------------------------------------------------------
def get_current_posj() -> posj:
    """The joints now [deg] (measured when the component reads a measured arm)."""
    return posj(service_values("get_current_posj", lambda s: s.getJoints, 1))


def get_desired_posj() -> posj:
    """The joint reference now [deg]."""
    return posj(service_values("get_desired_posj", lambda s: s.getJoints, 0))


def get_current_velj() -> list[float]:
    """Joint velocity now [deg/s] (measured when connected)."""
    return service_values("get_current_velj", lambda s: s.getJointVelocity, 1)


def get_desired_velj() -> list[float]:
    """Velocity of the joint reference [deg/s]."""
    return service_values("get_desired_velj", lambda s: s.getJointVelocity, 0)


def get_current_posx(ref: Any = None) -> tuple[posx, int]:
    """(TCP pose now in ``ref`` (DR_BASE, DR_WORLD or a user frame; default the global
    set_ref_coord), solution space)."""
    rr = _ref_of(ref, _default_ref(),
                 "bwu")
    vals = service_values("get_current_posx", lambda s: s.getPose, 1, rr)
    return posx(vals[:6]), int(round(vals[6]))


def get_desired_posx(ref: Any = None) -> posx:
    """TCP pose of the reference in ``ref``."""
    rr = _ref_of(ref, _default_ref(),
                 "bwu")
    return posx(service_values("get_desired_posx", lambda s: s.getPose, 0, rr)[:6])


def get_current_velx(ref: Any = None) -> list[float]:
    """TCP velocity now: [vx, vy, vz] mm/s, [wx, wy, wz] deg/s in the axes of ``ref``."""
    rr = _ref_of(ref, DR_BASE, "bw")
    return service_values("get_current_velx", lambda s: s.getTaskVelocity, 1, rr)


def get_desired_velx(ref: Any = None) -> list[float]:
    rr = _ref_of(ref, DR_BASE, "bw")
    return service_values("get_desired_velx", lambda s: s.getTaskVelocity, 0, rr)


def get_current_solution_space() -> int:
    """The solution space (0..7) of the joints now."""
    return int(service_values("get_current_solution_space", lambda s: s.getPose, 1, DR_BASE)[6])


def get_solution_space(pos: Any) -> int:
    """The solution space (0..7) of the posj ``pos``."""
    q = get_posj(pos)
    return int(service_values("get_solution_space", lambda s: s.solutionSpace,
                       [float(v) for v in q])[0])


def get_current_rotm(ref: Any = None) -> list[list[float]]:
    """The TCP's rotation matrix now (3 rows) in ``ref``."""
    from .geometry import rot_zyz
    rr = _ref_of(ref, DR_BASE, "bw")
    x = service_values("get_current_rotm", lambda s: s.getPose, 1, rr)
    return rot_zyz(*x[3:6]).tolist()


# -- math ----------------------------------------------------------------------------------------
def fkin(pos: Any, ref: Any = None) -> posx:
    """The TCP pose (in DR_BASE or DR_WORLD) of the posj ``pos``."""
    q = get_posj(pos)
    rr = _ref_of(ref, DR_BASE, "bw")
    return posx(service_values("fkin", lambda s: s.forwardKinematics, [float(v) for v in q], rr))


def ikin(pos: Any, sol_space: int, ref: Any = None) -> posj:
    """The posj that puts the TCP at ``pos`` (DR_BASE or DR_WORLD) in solution space
    ``sol_space`` (0..7). DR_Error DR_ERROR_VALUE when there is none within the limits."""
    x = get_posx(pos)
    rr = _ref_of(ref, DR_BASE, "bw")
    if not is_int(sol_space):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : sol_space")
    if not DR_SOL_MIN <= sol_space <= DR_SOL_MAX:
        raise DR_Error(DR_ERROR_VALUE, f"Invalid value : sol_space({sol_space})")
    return posj(service_values("ikin", lambda s: s.inverseKinematics, [float(v) for v in x],
                        int(sol_space), rr))


def trans(pos: Any, delta: Any, ref: Any = None, ref_out: int = DR_BASE) -> posx:
    """``pos`` (given in ``ref``) moved by ``delta`` in the axes of ``ref`` (DR_TOOL: its own
    tool axes), expressed in ``ref_out``."""
    x, d = get_posx(pos), get_posx(delta)
    rr = _ref_of(ref, dsr_motion.ref_coord(), "btwu")
    if not is_int(ref_out):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : ref_out")
    if ref_out not in (DR_BASE, DR_WORLD) and not DR_TC_USER_MIN <= ref_out <= DR_TC_USER_MAX:
        raise DR_Error(DR_ERROR_VALUE, f"Invalid value : ref_out({ref_out})")
    return posx(service_values("trans", lambda s: s.transPose, [float(v) for v in x],
                        [float(v) for v in d], rr, int(ref_out)))


def coord_transform(pose_in: Any, ref_in: int = DR_BASE, ref_out: Any = None) -> posx:
    """The posx ``pose_in`` given in ``ref_in`` expressed in ``ref_out`` (DR_TOOL: the TCP
    now)."""
    x = get_normal_pos(pose_in, def_type=posx)
    if not is_int(ref_in):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : ref_in")
    if not is_int(ref_out):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : ref_out")
    return posx(service_values("coord_transform", lambda s: s.coordTransform,
                        [float(v) for v in x], int(ref_in), int(ref_out)))


# -- user frames ---------------------------------------------------------------------------------
def set_user_cart_coord(*args: Any, **kargs: Any) -> int:
    """A new user frame; its id (101..200). The forms of DSR_ROBOT2: (pos, ref),
    (x1, x2, x3, pos[, ref]): x along x1 -> x2, x3 in the x-y plane, origin at pos;
    (u1, v1, pos[, ref]): x along u1, y in the plane of u1 and v1. ref: DR_BASE (default) or
    DR_WORLD."""
    allowed = {"x1", "x2", "x3", "pos", "u1", "v1", "ref"}
    bad = set(kargs) - allowed
    if bad:
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : x1, x2, x3, pos, u1, v1, ref")
    g = dict(kargs)
    names3 = ("x1", "x2", "x3", "pos", "ref")
    if args and isinstance(args[0], (list, tuple)) and len(args[0]) == 3:
        names = ("u1", "v1", "pos", "ref")
    elif len(args) + len(g) in (1, 2) and not {"x1", "u1"} & set(g):
        names = ("pos", "ref")
    elif "u1" in g:
        names = ("u1", "v1", "pos", "ref")
    else:
        names = names3
    if len(args) > len(names):
        raise DR_Error(DR_ERROR_TYPE, "Invalid argument list")
    for n, v in zip(names, args):
        if n in g:
            raise DR_Error(DR_ERROR_TYPE, "Invalid argument list")
        g[n] = v
    ref = g.get("ref", DR_BASE)
    if ref is None:
        ref = DR_BASE
    if not is_int(ref) or ref not in (DR_BASE, DR_WORLD):
        raise DR_Error(DR_ERROR_VALUE, f"Invalid value : ref({ref})")
    if "pos" not in g:
        raise DR_Error(DR_ERROR_TYPE, "Invalid argument list")
    pos = get_posx(g["pos"])
    try:
        if names is names3 and "x1" in g:
            x1, x2, x3 = get_posx(g["x1"]), get_posx(g["x2"]), get_posx(g["x3"])
            pose = posx_from_pose(*from_points(x1, x2, x3, pos))
        elif "u1" in g:
            u1, v1 = g.get("u1"), g.get("v1")
            for n, vec in (("u1", u1), ("v1", v1)):
                if not isinstance(vec, list):
                    raise DR_Error(DR_ERROR_TYPE, f"Invalid type : {n}")
                if len(vec) != 3 or not is_number(vec):
                    raise DR_Error(DR_ERROR_VALUE, f"Invalid value : {n}({vec})")
            pose = posx_from_pose(*from_vectors(u1, v1, pos))
        else:
            pose = list(pos)
    except ValueError as e:        # frames.FrameError
        raise DR_Error(DR_ERROR_VALUE, f"set_user_cart_coord: {e}") from None
    return int(service_values("set_user_cart_coord", lambda s: s.setUserFrame, 0,
                       [float(v) for v in pose], int(ref))[0])


def overwrite_user_cart_coord(id: int, pos: Any, ref: Any = None, gol: Any = None) -> int:
    """Move user frame ``id`` to ``pos`` (in DR_BASE or DR_WORLD); its id."""
    x = get_posx(pos)
    rr = _ref_of(ref, DR_BASE, "bw")
    if not is_int(id):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : id")
    return int(service_values("overwrite_user_cart_coord", lambda s: s.setUserFrame, int(id),
                       [float(v) for v in x], rr)[0])


def get_user_cart_coord(id: int) -> tuple[posx, int]:
    """(pose of user frame ``id`` in the base frame, DR_BASE)."""
    if not is_int(id):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : id")
    vals = service_values("get_user_cart_coord", lambda s: s.getUserFrame, int(id))
    return posx(vals[:6]), int(vals[6])


# -- TCPs ----------------------------------------------------------------------------------------
def set_tcp(name: str) -> int:
    """Make the TCP named ``name`` (the component's tcps parameter or add_tcp) current."""
    if not isinstance(name, str):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : name")
    service_values("set_tcp", lambda s: s.setTcp, name)
    return 0


def get_tcp() -> str:
    """The current TCP's name ("" for the component's tcp_offset)."""
    p = planner_proxy()
    return str(call_planner("get_tcp", p.service.getTcp))


def add_tcp(name: str, pos: Any) -> int:
    """Register the TCP ``name``: ``pos`` (posx) in the flange frame."""
    if not isinstance(name, str):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : name")
    x = get_posx(pos)
    service_values("add_tcp", lambda s: s.addTcp, name, [float(v) for v in x])
    return 0


def del_tcp(name: str) -> int:
    if not isinstance(name, str):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : name")
    service_values("del_tcp", lambda s: s.delTcp, name)
    return 0


__all__ = ["get_current_posj", "get_desired_posj", "get_current_velj", "get_desired_velj",
           "get_current_posx", "get_desired_posx", "get_current_velx", "get_desired_velx",
           "get_current_solution_space", "get_solution_space", "get_current_rotm", "fkin",
           "ikin", "trans", "coord_transform", "set_user_cart_coord",
           "overwrite_user_cart_coord", "get_user_cart_coord", "set_tcp", "get_tcp", "add_tcp",
           "del_tcp"]
