"""The DRL motions planned into sampled trajectories (pure: numpy and the arm seam).

    traj = plan_motion(cmd, start, settings, arm)      # MotionError when refused

A Trajectory holds every cycle of one motion from rest to rest: the joints (the arm's IK for
task motions) and the TCP poses (FK for joint motions). The stream (stream.py) plays it and
superposes the next one on it where the DRL asks for blending.

How each motion is timed (Doosan's units; the references are in the module docs of
commands.py and in docs/doosan.md):

* movej, movejx, move_home: every joint on one trapezoid, all starting and ending together.
  The leading joint (the one that needs longest at its own vel / acc) runs at its vel and
  acc; the others are scaled to its time (and the time stretched if a per-joint vel / acc
  would be exceeded). vel beyond a joint's speed limit (the model's) is cut to the limit.
* movel, movec: the TCP on the line / arc at constant speed (trapezoid on the path length),
  the orientation turned in proportion (slerp). A positive angular speed (vel[1]) also bounds
  the time by the rotation angle; a pure rotation (no distance) is timed by vel[1], or by
  vel[0] read as deg/s when vel[1] is DR_COND_NONE.
* movesj: a C2 cubic spline through the waypoints in joint space (chord-length parameter),
  timed so that no joint exceeds its vel / acc on the spline's steepest part.
* movesx: a C2 cubic spline of the TCP position through the waypoints, at constant speed
  along its length, the orientation slerped waypoint to waypoint in proportion.
* move_spiral: an Archimedean spiral out from the TCP in the plane normal to ``axis`` of
  ``ref``, ``lmax`` along the axis, constant speed along it, orientation held.
* move_periodic: a sine per axis of ``ref`` (amp, period), faded in and out over atime,
  repeated ``repeat`` times the longest period.
* ``time`` > 0 overrides vel and acc: T = time, accelerating and decelerating T/4 each (the
  project's choice: Doosan gives no profile for it; used for every motion).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .frames import FrameError, TOOL, frame_pose, relative, target
from .commands import (DR_COND_NONE, DR_ERROR_RUNTIME, HOME_MECHANIC, REL,
                       Command, MotionError, MoveC, MoveHome, MoveJ, MoveJX, MoveL,
                       MovePeriodic, MoveSJ, MoveSpiral, MoveSX)
from .geometry import EPS_LEN, Arc, quat_from_rot, quats_from_rots, rotation_angle, slerp
from .spline import CubicSpline, Trapezoid

EPS_DEG = 1e-9           # [deg] smaller joint or rotation changes are none


@dataclass
class Start:
    """Where a motion starts: the joints [rad] (None without an arm) and the TCP (p [mm],
    R) at the end of everything already planned."""
    q: np.ndarray | None
    p: np.ndarray
    r: np.ndarray


@dataclass
class Settings:
    dt: float                                  # [s] the cycle
    frames: dict = field(default_factory=dict)  # ref -> 4x4 [mm] in base
    home_user: tuple = (0.0, 0.0, 90.0, 0.0, 90.0, 0.0)   # [deg]
    home_vel: float = 30.0                     # [deg/s]
    home_acc: float = 60.0                     # [deg/s^2]
    max_samples: int = 200000


@dataclass
class Trajectory:
    """One planned motion, sampled every dt from its start (row 0: the start, at rest) to its
    end (the last row: the target, at rest)."""
    name: str
    dt: float
    q: np.ndarray | None        # (N, n) [rad]
    pos: np.ndarray             # (N, 3) [mm]
    quat: np.ndarray            # (N, 4) (w, x, y, z)
    duration: float             # [s]
    t_acc: float                # [s] its own acceleration (= deceleration) time
    blend_k: int                # first sample inside the blending sphere (N - 1: no radius)
    ra: int = 0                 # DR_MV_RA_DUPLICATE / _OVERRIDE
    length: float = 0.0         # [mm] TCP path length (task motions)
    peak: float = 0.0           # leading joint [deg/s] (joint motions) or TCP [mm/s]
    note: str = ""              # what was adapted (a vel cut to a joint's limit)

    def __len__(self) -> int:
        return len(self.pos)


# -- entry point ---------------------------------------------------------------------------------
def plan_motion(cmd: Command, start: Start, st: Settings, arm=None) -> Trajectory:
    """The trajectory of ``cmd`` from ``start``. Raises MotionError (nothing planned) when
    the robot cannot do it: a target outside the joint limits or the workspace, a path the
    joints cannot follow, a time too short for the joints' speed limits. Runs in: the
    planning thread (pure)."""
    joint_cmd = isinstance(cmd, (MoveJ, MoveJX, MoveSJ, MoveHome))
    if joint_cmd and (arm is None or start.q is None):
        raise MotionError(f"{cmd.name} needs the arm model (the component runs without one)",
                          DR_ERROR_RUNTIME)
    if isinstance(cmd, MoveJ):
        q1 = np.asarray(cmd.pos, dtype=float)
        if cmd.mod == REL:
            q1 = np.degrees(start.q) + q1
        traj = _joint(cmd.name, start, q1, cmd.vel, cmd.acc, cmd.time, st, arm)
    elif isinstance(cmd, MoveHome):
        q1 = np.zeros(6) if cmd.target == HOME_MECHANIC else np.asarray(st.home_user, float)
        traj = _joint(cmd.name, start, q1, [st.home_vel] * 6, [st.home_acc] * 6, 0.0, st, arm)
    elif isinstance(cmd, MoveJX):
        p, r = _target(cmd.pos, cmd.ref, cmd.mod, start, st)
        q1, why = arm.solve_in_space(p, r, cmd.sol, start.q)
        if q1 is None:
            raise MotionError(f"movejx: target {_fmt(cmd.pos)}: {why}")
        traj = _joint(cmd.name, start, np.degrees(q1), cmd.vel, cmd.acc, cmd.time, st, arm)
    elif isinstance(cmd, MoveL):
        traj = _line(cmd, start, st, arm)
    elif isinstance(cmd, MoveC):
        traj = _circle(cmd, start, st, arm)
    elif isinstance(cmd, MoveSJ):
        traj = _joint_spline(cmd, start, st, arm)
    elif isinstance(cmd, MoveSX):
        traj = _task_spline(cmd, start, st, arm)
    elif isinstance(cmd, MoveSpiral):
        traj = _spiral(cmd, start, st, arm)
    elif isinstance(cmd, MovePeriodic):
        traj = _periodic(cmd, start, st, arm)
    else:
        raise MotionError(f"not a motion command: {cmd!r}")
    traj.ra = getattr(cmd, "ra", 0)
    traj.blend_k = _blend_index(traj.pos, getattr(cmd, "radius", 0.0))
    return traj


def _fmt(x) -> str:
    return "[" + ", ".join(f"{float(v):.6g}" for v in x) + "]"


def _target(x, ref: int, mod: int, start: Start, st: Settings) -> tuple:
    try:
        return target(list(x), ref, mod, (start.p, start.r), st.frames)
    except FrameError as e:
        raise MotionError(str(e)) from None


def _frame(ref: int, start: Start, st: Settings) -> tuple:
    try:
        return frame_pose(ref, st.frames, (start.p, start.r))
    except FrameError as e:
        raise MotionError(str(e)) from None


def _blend_index(pos: np.ndarray, radius: float) -> int:
    n = len(pos)
    if radius <= 0 or n < 2:
        return n - 1
    inside = np.linalg.norm(pos - pos[-1], axis=1) <= radius
    return int(np.argmax(inside))          # the last sample is always inside


def _times(prof: Trapezoid, st: Settings, name: str) -> np.ndarray:
    t = prof.times(st.dt)
    if len(t) > st.max_samples:
        raise MotionError(f"{name}: the motion lasts {prof.T:.3f} s = {len(t)} cycles of "
                          f"{st.dt:g} s, over max_samples = {st.max_samples}")
    return t


# -- joint motions -------------------------------------------------------------------------------
def _limits_check(name: str, q_deg: np.ndarray, arm, what: str = "pos") -> None:
    lo, hi = np.degrees(arm.lower), np.degrees(arm.upper)
    bad = np.flatnonzero((q_deg < lo - 1e-9) | (q_deg > hi + 1e-9))
    if bad.size:
        j = int(bad[0])
        raise MotionError(f"{name}: {what}[{j}] = {q_deg[j]:.6g} deg is outside "
                          f"{arm.joint_names[j]}'s limits {lo[j]:.4g}..{hi[j]:.4g} deg")


def _joint_profile(name: str, d: np.ndarray, vel, acc, time: float, arm) -> tuple:
    """(Trapezoid of the progress 0..1, note) moving every joint d [deg] together."""
    vmax = np.degrees(arm.max_velocity)
    v = np.minimum(np.asarray(vel, dtype=float), vmax)
    a = np.asarray(acc, dtype=float)
    note = ""
    ad = np.abs(d)
    if time > 0:
        prof = Trapezoid.for_time(time)
        need = ad * prof.peak
        bad = np.flatnonzero(need > vmax * (1 + 1e-9))
        if bad.size:
            j = int(bad[np.argmax(need[bad] / vmax[bad])])
            raise MotionError(f"{name}: time = {time:g} s is too short: "
                              f"{arm.joint_names[j]} would need {need[j]:.4g} deg/s, over its "
                              f"limit of {vmax[j]:.4g} deg/s")
        return prof, note
    moving = ad > EPS_DEG
    if not moving.any():
        return Trapezoid(0.0, 0.0), note
    stuck = np.flatnonzero(moving & ((v <= 0) | (a <= 0)))
    if stuck.size:
        j = int(stuck[0])
        raise MotionError(f"{name}: {arm.joint_names[j]} must move {d[j]:.6g} deg but its vel "
                          f"or acc is 0")
    cut = np.flatnonzero(moving & (np.asarray(vel, dtype=float) > vmax))
    if cut.size:
        note = (f"vel cut to the speed limit of {', '.join(arm.joint_names[j] for j in cut)} "
                f"({', '.join(f'{vmax[j]:.4g}' for j in cut)} deg/s)")
    profs = [Trapezoid.for_distance(ad[j], v[j], a[j]) if moving[j] else Trapezoid(0, 0)
             for j in range(len(d))]
    lead = max(range(len(d)), key=lambda j: profs[j].T)
    prof = profs[lead]
    # every joint within its own vel / acc on the leader's profile (scaled by k if not)
    k = 1.0
    for j in np.flatnonzero(moving):
        k = max(k, ad[j] * prof.peak / v[j], math.sqrt(ad[j] * prof.peak / prof.ta / a[j])
                if prof.ta > 0 else 1.0)
    if k > 1.0 + 1e-12:
        prof = Trapezoid(prof.T * k, prof.ta * k)
    return prof, note


def _joint(name: str, start: Start, q1_deg: np.ndarray, vel, acc, time: float,
           st: Settings, arm) -> Trajectory:
    _limits_check(name, q1_deg, arm)
    q0 = np.degrees(start.q)
    d = q1_deg - q0
    prof, note = _joint_profile(name, d, vel, acc, time, arm)
    t = _times(prof, st, name)
    q = np.radians(q0 + np.multiply.outer(prof.u(t), d))
    q[0] = start.q
    pos, quat = arm.fk_batch(q)
    lead = float(np.abs(d).max() * prof.peak) if len(t) > 1 else 0.0
    return Trajectory(name, st.dt, q, pos, quat, prof.T, prof.ta, len(t) - 1, length=0.0,
                      peak=lead, note=note)


def _joint_spline(cmd: MoveSJ, start: Start, st: Settings, arm) -> Trajectory:
    q0 = np.degrees(start.q)
    pts = [q0]
    for k, p in enumerate(cmd.points):
        p = np.asarray(p, dtype=float)
        nxt = pts[-1] + p if cmd.mod == REL else p
        _limits_check(cmd.name, nxt, arm, f"pos_list[{k}]")
        if np.abs(nxt - pts[-1]).max() > EPS_DEG:
            pts.append(nxt)
    pts = np.array(pts)
    if len(pts) < 2:
        return _joint(cmd.name, start, q0, cmd.vel, cmd.acc, cmd.time, st, arm)
    x = np.concatenate(([0.0], np.cumsum(np.abs(np.diff(pts, axis=0)).max(axis=1))))
    spline = CubicSpline(x, pts)
    dense = np.linspace(0.0, x[-1], 40 * len(pts) + 1)
    qd = spline(dense)
    _limits_check(cmd.name, qd.min(axis=0), arm, "spline minimum")
    _limits_check(cmd.name, qd.max(axis=0), arm, "spline maximum")
    slope = np.abs(spline(dense, 1)).max(axis=0)              # [deg per unit x]
    vmax = np.degrees(arm.max_velocity)
    v = np.minimum(np.asarray(cmd.vel, dtype=float), vmax)
    a = np.asarray(cmd.acc, dtype=float)
    moving = slope > 1e-12
    if cmd.time > 0:
        prof = Trapezoid.for_time(cmd.time)
        prof = Trapezoid(prof.T, prof.ta)
        rate = x[-1] * prof.peak
        need = slope * rate
        bad = np.flatnonzero(need > vmax * (1 + 1e-9))
        if bad.size:
            j = int(bad[0])
            raise MotionError(f"movesj: time = {cmd.time:g} s is too short: "
                              f"{arm.joint_names[j]} would need {need[j]:.4g} deg/s, over its "
                              f"limit of {vmax[j]:.4g} deg/s")
    else:
        if np.any(moving & ((v <= 0) | (a <= 0))):
            raise MotionError("movesj: a joint that moves has vel or acc 0")
        xv = float(np.min(v[moving] / slope[moving]))
        xa = float(np.min(a[moving] / slope[moving]))
        prof = Trapezoid.for_distance(float(x[-1]), xv, xa)
    t = _times(prof, st, cmd.name)
    q = np.radians(spline(prof.u(t) * x[-1]))
    q[0] = start.q
    q[-1] = np.radians(pts[-1])
    pos, quat = arm.fk_batch(q)
    peak = float((slope * x[-1] * prof.peak).max()) if prof.T > 0 else 0.0
    return Trajectory(cmd.name, st.dt, q, pos, quat, prof.T, prof.ta, len(t) - 1, peak=peak)


# -- task motions --------------------------------------------------------------------------------
def _task_profile(name: str, length: float, rotation: float, vel, acc,
                  time: float) -> Trapezoid:
    """Progress profile of a task path of ``length`` [mm] turning ``rotation`` [deg]."""
    if time > 0:
        return Trapezoid.for_time(time)
    v, w = float(vel[0]), float(vel[1])
    a, al = float(acc[0]), float(acc[1])
    lin = Trapezoid.for_distance(length, v, a) if length > EPS_LEN else Trapezoid(0.0, 0.0)
    rot = Trapezoid(0.0, 0.0)
    if rotation > EPS_DEG:
        if w > 0:
            rot = Trapezoid.for_distance(rotation, w, al if al > 0 else w * a / v)
        elif length <= EPS_LEN:             # a pure rotation at a scalar speed: deg/s
            rot = Trapezoid.for_distance(rotation, v, a)
    if rot.T > lin.T:
        return lin.stretched(rot.T) if lin.T > 0 else rot
    return lin


def _task(name: str, start: Start, st: Settings, arm, pos: np.ndarray, quat: np.ndarray,
          prof: Trapezoid, length: float) -> Trajectory:
    """Solve the sampled TCP path through IK (when there is an arm) into a Trajectory."""
    q = None
    if arm is not None and start.q is not None:
        ik = arm.solve_knots(pos, quat, start.q, st.dt)
        if not ik.ok:
            k = ik.index
            p = [round(float(v), 3) for v in pos[k]]
            raise MotionError(f"{name}: the arm cannot follow the path at t = {k * st.dt:.3f} "
                              f"s (sample {k} of {len(pos)}, TCP at {p} mm): {ik.reason}")
        q = ik.q
        if ik.deviation > 0:            # DR_AVOID: the TCP pose is the joints'
            pos, quat = arm.fk_batch(q)
    peak = length * prof.peak
    traj = Trajectory(name, st.dt, q, pos, quat, prof.T, prof.ta, len(pos) - 1,
                      length=length, peak=peak)
    if q is not None and ik.deviation > 0:
        traj.note = (f"near a singularity the TCP left the path by up to "
                     f"{ik.deviation:.3g} mm (DR_AVOID)")
    return traj


def _slerp_u(q0: np.ndarray, q1: np.ndarray, u: np.ndarray) -> np.ndarray:
    out = np.empty((len(u), 4))
    slerp(q0, q1, u, out)
    return out


def _line(cmd: MoveL, start: Start, st: Settings, arm) -> Trajectory:
    p1, r1 = _target(cmd.pos, cmd.ref, cmd.mod, start, st)
    d = p1 - start.p
    length = float(np.linalg.norm(d))
    rotation = math.degrees(rotation_angle(start.r, r1))
    prof = _task_profile(cmd.name, length, rotation, cmd.vel, cmd.acc, cmd.time)
    t = _times(prof, st, cmd.name)
    u = prof.u(t)
    pos = start.p + np.multiply.outer(u, d)
    quat = _slerp_u(quat_from_rot(start.r), quat_from_rot(r1), u)
    pos[-1] = p1
    return _task(cmd.name, start, st, arm, pos, quat, prof, length)


def _circle(cmd: MoveC, start: Start, st: Settings, arm) -> Trajectory:
    via, _ = _target(cmd.pos1, cmd.ref, cmd.mod, start, st)
    if cmd.mod == REL:        # pos2 relative to pos1 (Doosan's movec, as moveb)
        via_pose = relative((start.p, start.r), list(cmd.pos1), cmd.ref, st.frames,
                            (start.p, start.r))
        end, r2 = relative(via_pose, list(cmd.pos2), cmd.ref, st.frames,
                           (start.p, start.r))
    else:
        end, r2 = _target(cmd.pos2, cmd.ref, cmd.mod, start, st)
    try:
        arc = Arc.through(start.p, via, end)
    except ValueError as e:
        raise MotionError(f"movec: the circle from {_fmt(start.p)} via {_fmt(via)} to "
                          f"{_fmt(end)} mm: {e}") from None
    if cmd.angle1 > 0:
        arc = Arc(arc.c, arc.rho, arc.e1, arc.e2, math.radians(cmd.angle1))
    length = arc.length
    rotation = math.degrees(rotation_angle(start.r, r2))
    if cmd.angle2 > 0:        # angle2: the arc run at constant speed, the rest to ramp
        cruise = arc.rho * math.radians(cmd.angle2)
        if cmd.time > 0:
            v = (2 * length - cruise) / cmd.time
            prof = Trapezoid(cmd.time, (length - cruise) / v)
        else:
            v = float(cmd.vel[0])
            ta = (length - cruise) / v
            prof = Trapezoid(length / v + ta, ta)
    else:
        prof = _task_profile(cmd.name, length, rotation, cmd.vel, cmd.acc, cmd.time)
    t = _times(prof, st, cmd.name)
    u = prof.u(t)
    pos = arc.points(u * length)
    quat = _slerp_u(quat_from_rot(start.r), quat_from_rot(r2), u)
    pos[0] = start.p
    if cmd.angle1 <= 0:
        pos[-1] = end
    return _task(cmd.name, start, st, arm, pos, quat, prof, length)


class _PathTable:
    """s <-> parameter x of a curve, tabulated (chord sums of a dense evaluation)."""

    def __init__(self, x: np.ndarray, points: np.ndarray):
        seg = np.linalg.norm(np.diff(points, axis=0), axis=1)
        self.x, self.s = x, np.concatenate(([0.0], np.cumsum(seg)))
        self.length = float(self.s[-1])

    def x_at(self, s: np.ndarray) -> np.ndarray:
        return np.interp(s, self.s, self.x)

    def s_at(self, x: np.ndarray) -> np.ndarray:
        return np.interp(x, self.x, self.s)


def _orientations(quats: np.ndarray, knots: np.ndarray, where: np.ndarray) -> np.ndarray:
    """Slerp between quats[i] and quats[i + 1] for ``where`` in [knots[i], knots[i + 1]]."""
    out = np.empty((len(where), 4))
    i = np.clip(np.searchsorted(knots, where, side="right") - 1, 0, len(knots) - 2)
    for k in np.unique(i):
        m = i == k
        span = knots[k + 1] - knots[k]
        f = np.clip((where[m] - knots[k]) / span, 0.0, 1.0) if span > 0 else np.ones(m.sum())
        blk = np.empty((int(m.sum()), 4))
        slerp(quats[k], quats[k + 1], f, blk)
        out[m] = blk
    return out


def _task_spline(cmd: MoveSX, start: Start, st: Settings, arm) -> Trajectory:
    poses = [(start.p, start.r)]
    for x in cmd.points:
        if cmd.mod == REL:
            try:
                poses.append(relative(poses[-1], list(x), cmd.ref, st.frames,
                                      (start.p, start.r)))
            except FrameError as e:
                raise MotionError(str(e)) from None
        else:
            poses.append(_target(x, cmd.ref, cmd.mod, start, st))
    keep = [poses[0]]
    for p, r in poses[1:]:
        if np.linalg.norm(p - keep[-1][0]) > EPS_LEN or \
                rotation_angle(r, keep[-1][1]) > math.radians(EPS_DEG):
            keep.append((p, r))
    pts = np.array([p for p, _ in keep])
    quats = np.array([quat_from_rot(r) for _, r in keep])
    for i in range(1, len(quats)):
        if quats[i - 1] @ quats[i] < 0:
            quats[i] = -quats[i]
    rots = np.array([0.0] + [math.degrees(rotation_angle(keep[i][1], keep[i + 1][1]))
                             for i in range(len(keep) - 1)])
    rotation = float(rots.sum())
    chords = np.linalg.norm(np.diff(pts, axis=0), axis=1) if len(pts) > 1 else np.zeros(0)
    if len(pts) < 2:
        prof = Trapezoid(0.0, 0.0)
        t = _times(prof, st, cmd.name)
        return _task(cmd.name, start, st, arm, pts[:1].copy(), quats[:1].copy(), prof, 0.0)
    if np.any(chords <= EPS_LEN):
        # waypoints that only turn: orientation in proportion to the rotation angle
        knots = np.cumsum(rots)
        prof = _task_profile(cmd.name, 0.0, rotation, cmd.vel, cmd.acc, cmd.time)
        if chords.sum() > EPS_LEN:
            raise MotionError("movesx: consecutive waypoints at the same position with others "
                              "apart: give the turn its own motion")
        t = _times(prof, st, cmd.name)
        where = prof.u(t) * knots[-1]
        pos = np.repeat(pts[:1], len(t), axis=0)
        return _task(cmd.name, start, st, arm, pos, _orientations(quats, knots, where), prof,
                     0.0)
    x = np.concatenate(([0.0], np.cumsum(chords)))
    spline = CubicSpline(x, pts)
    dense_x = np.linspace(0.0, x[-1], 64 * (len(pts) - 1) + 1)
    table = _PathTable(dense_x, spline(dense_x))
    length = table.length
    prof = _task_profile(cmd.name, length, rotation, cmd.vel, cmd.acc, cmd.time)
    t = _times(prof, st, cmd.name)
    s = prof.u(t) * length
    px = table.x_at(s)
    pos = spline(px)
    pos[0], pos[-1] = pts[0], pts[-1]
    quat = _orientations(quats, table.s_at(x), s)
    return _task(cmd.name, start, st, arm, pos, quat, prof, length)


def _spiral(cmd: MoveSpiral, start: Start, st: Settings, arm) -> Trajectory:
    fp, frot = _frame(cmd.ref, start, st)
    n = frot[:, cmd.axis]
    e1, e2 = frot[:, (cmd.axis + 1) % 3], frot[:, (cmd.axis + 2) % 3]
    th_max = 2.0 * math.pi * cmd.rev
    dense = np.linspace(0.0, th_max, int(256 * math.ceil(cmd.rev)) + 1)

    def points(th: np.ndarray) -> np.ndarray:
        f = th / th_max
        rho = cmd.rmax * f
        return (start.p + np.multiply.outer(rho * np.cos(th), e1)
                + np.multiply.outer(rho * np.sin(th), e2) + np.multiply.outer(cmd.lmax * f, n))

    table = _PathTable(dense, points(dense))
    vel = [cmd.vel[0], DR_COND_NONE]
    prof = _task_profile(cmd.name, table.length, 0.0, vel, cmd.acc, cmd.time)
    t = _times(prof, st, cmd.name)
    pos = points(table.x_at(prof.u(t) * table.length))
    pos[0] = start.p
    quat = np.repeat(quat_from_rot(start.r)[None], len(t), axis=0)
    return _task(cmd.name, start, st, arm, pos, quat, prof, table.length)


def _axis_rotations(angles: np.ndarray) -> np.ndarray:
    """(N, 3) angles [rad] about x, y, z -> (N, 3, 3) Rx Ry Rz."""
    n = len(angles)
    out = np.repeat(np.eye(3)[None], n, axis=0)
    for axis in range(3):
        c, s = np.cos(angles[:, axis]), np.sin(angles[:, axis])
        rot = np.zeros((n, 3, 3))
        i, j = (axis + 1) % 3, (axis + 2) % 3
        rot[:, axis, axis] = 1.0
        rot[:, i, i], rot[:, j, j], rot[:, i, j], rot[:, j, i] = c, c, -s, s
        out = out @ rot
    return out


def _fade(x: np.ndarray) -> np.ndarray:
    """0 -> 1 over x in [0, 1] with zero slope at both ends (half a cosine)."""
    return 0.5 * (1.0 - np.cos(math.pi * np.clip(x, 0.0, 1.0)))


def _periodic(cmd: MovePeriodic, start: Start, st: Settings, arm) -> Trajectory:
    fp, frot = _frame(cmd.ref, start, st)
    amp = np.asarray(cmd.amp, dtype=float)
    period = np.asarray(cmd.period, dtype=float)
    active = amp != 0
    duration = cmd.repeat * float(period[active].max())
    if 2 * cmd.atime > duration:
        raise MotionError(f"move_periodic: atime = {cmd.atime:g} s is longer than half the "
                          f"motion ({duration:g} s = repeat x the longest period)")
    prof = Trapezoid(duration, cmd.atime)
    t = _times(prof, st, cmd.name)
    env = np.ones_like(t)
    if cmd.atime > 0:
        env = np.minimum(_fade(t / cmd.atime), _fade((duration - t) / cmd.atime))
    d = np.zeros((len(t), 6))
    for i in np.flatnonzero(active):
        d[:, i] = amp[i] * env * np.sin(2.0 * math.pi * t / period[i])
    pos = start.p + d[:, :3] @ frot.T
    rd = _axis_rotations(np.radians(d[:, 3:]))
    if cmd.ref == TOOL:
        rots = start.r @ rd
    else:
        rots = frot @ rd @ frot.T @ start.r
    quat = quats_from_rots(rots)
    for i in range(1, len(quat)):
        if quat[i - 1] @ quat[i] < 0:
            quat[i] = -quat[i]
    pos[0], pos[-1] = start.p, start.p
    length = float(np.linalg.norm(np.diff(pos, axis=0), axis=1).sum())
    traj = _task(cmd.name, start, st, arm, pos, quat, prof, length)
    traj.peak = float(np.linalg.norm(np.diff(pos, axis=0), axis=1).max() / st.dt) \
        if len(pos) > 1 else 0.0
    return traj
