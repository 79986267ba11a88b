"""The BlendingPlanner core: Doosan MoveBlending requests to a timed, sampled TCP path.

Pure (numpy only). Behaviour: specs/components.md section 4; the request mirrors
dsr_msgs2/srv/motion/MoveBlending.srv (doosan-robotics/doosan-robot2). Units are Doosan's:
poses in mm and deg (posx, Z-Y-Z Euler), speeds in mm/s and deg/s, time in s.

    result = plan(request, start, frames)            # validate + build; never raises on input
    if result.ok: samples = result.plan.sample(dt)   # one vectorised pass, arrays preallocated

``plan`` returns a PlanResult (ok, reason, code); an expected refusal is a status, not an
exception (house style 5). ``code`` is the closest Doosan controller error code where one
exists (1204 circle input, 1205 blending radius) and 0 otherwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from .geometry import (EPS_LEN, Arc, Hermite, Line, deflection, pose_from_posx, quat_from_rot,
                       rotation_angle, rot_zyz, slerp, tangent_arc)

# constants of the Doosan front end and controller (doosan-robot2: common2/imp/DSR_ROBOT2.py,
# common2/include/DRFC.h)
MAX_MOVEB_POINT = 50
DR_COND_NONE = -10000.0            # "not given": vel[1] / acc[1] when the user gave a scalar
LINE, CIRCLE = 0, 1                # MOVEB_BLENDING_TYPE_LINE / _CIRCLE
BASE, TOOL, WORLD = 0, 1, 2        # MOVE_REFERENCE_*
USER_MIN, USER_MAX = 101, 200      # DR_TC_USER_MIN .. DR_TC_USER_MAX
ABSOLUTE, RELATIVE = 0, 1          # MOVE_MODE_*
SYNC, ASYNC = 0, 1
WAIT_DONE, WAIT_RUNNING, WAIT_FAILED = 0, 1, -1     # waitMotion's answers
DR_STATE_IDLE, DR_STATE_BUSY = 0, 2                 # DSR_ROBOT2's motion states (check_motion)
SEGMENT_LEN = 14                   # pos1[6] pos2[6] type radius
RC_ERROR_INPUT_CIRC_MTN_CMD = 1204
RC_ERROR_INPUT_BLENDING_RAD = 1205

DUPLICATE_LINE_PHI = 1e-3                  # [rad] two LINEs this collinear, same sense: refused
# [rad] a deflection this large is refused ("prevents sudden acceleration": Doosan gives no
# figure; at 160 deg the blend arc is 0.176 r, 5.7x the centripetal acceleration of a 90 deg
# corner of the same r; squares, triangles and pentagrams stay legal)
RAPID_CHANGE_PHI = math.radians(160.0)


@dataclass(frozen=True)
class Request:
    """One MoveBlending request, field by field (segment, pos_cnt, vel, acc, time, ref, mode,
    sync_type)."""
    segments: Sequence[Sequence[float]]
    pos_cnt: int
    vel: Sequence[float]
    acc: Sequence[float]
    time: float = 0.0
    ref: int = BASE
    mode: int = ABSOLUTE
    sync_type: int = SYNC


class Refused(Exception):
    """Internal: an input error, turned into PlanResult(ok=False) by plan()."""

    def __init__(self, reason: str, code: int = 0):
        super().__init__(reason)
        self.reason, self.code = reason, code


@dataclass
class Samples:
    """A plan sampled at dt: row k is time t[k] = min(k dt, T). Arrays are allocated once."""
    dt: float
    t: np.ndarray          # (N,) [s]
    s: np.ndarray          # (N,) path position [mm]
    speed: np.ndarray      # (N,) [mm/s]
    pos: np.ndarray        # (N, 3) [mm]
    quat: np.ndarray       # (N, 4) (w, x, y, z)

    def __len__(self) -> int:
        return self.t.size


@dataclass
class Plan:
    """A validated, blended path with its speed profile. Immutable once built."""
    pieces: list                 # Line | Arc | Hermite, in path order
    starts: np.ndarray           # (P+1,) path position where each piece starts; last = length
    seg_ranges: np.ndarray       # (K, 2) path range over which segment k's orientation moves
    seg_quats: np.ndarray        # (K + 1, 4) orientation at the start of segment k; last = end
    length: float                # [mm]
    duration: float              # [s]
    t_acc: float                 # [s] acceleration time (= deceleration time)
    v_peak: float                # [mm/s]
    a: float                     # [mm/s^2]
    rotation: float              # [deg] sum of per-segment rotation angles
    targets: list = field(default_factory=list)   # [(p, R)] the K segment end poses (base)
    start: tuple = ()            # (p, R) of P_start

    # -- profile ------------------------------------------------------------------------------
    def s_at(self, t: np.ndarray) -> np.ndarray:
        """Path position [mm] at times t [s] (vectorised trapezoid)."""
        t = np.clip(np.asarray(t, dtype=float), 0.0, self.duration)
        ta, T, a, v, L = self.t_acc, self.duration, self.a, self.v_peak, self.length
        s = np.where(t < ta, 0.5 * a * t * t, 0.5 * a * ta * ta + v * (t - ta))
        return np.where(t > T - ta, L - 0.5 * a * (T - t) ** 2, s)

    def speed_at(self, t: np.ndarray) -> np.ndarray:
        t = np.clip(np.asarray(t, dtype=float), 0.0, self.duration)
        return np.minimum(self.v_peak, self.a * np.minimum(t, self.duration - t))

    def segment_at(self, s: float) -> int:
        """Index of the segment whose orientation schedule covers path position s [mm]."""
        k = int(np.searchsorted(self.seg_ranges[:, 1], s, side="left"))
        return min(k, len(self.seg_ranges) - 1)

    # -- sampling -----------------------------------------------------------------------------
    def n_samples(self, dt: float) -> int:
        """Samples at 0, dt, ..., the last at T (the motion ends exactly at the target)."""
        return int(math.ceil(self.duration / dt - 1e-9)) + 1

    def sample(self, dt: float) -> Samples:
        """The whole path at period dt; one vectorised evaluation per piece and segment."""
        n = self.n_samples(dt)
        t = np.minimum(np.arange(n) * dt, self.duration)
        s = self.s_at(t)
        pos = np.empty((n, 3))
        self.positions(s, pos)
        quat = np.empty((n, 4))
        self.orientations(s, quat)
        return Samples(dt, t, s, self.speed_at(t), pos, quat)

    def positions(self, s: np.ndarray, out: np.ndarray) -> None:
        idx = np.searchsorted(self.starts, s, side="right") - 1
        np.clip(idx, 0, len(self.pieces) - 1, out=idx)
        for i in np.unique(idx):
            m = idx == i
            out[m] = self.pieces[i].points(np.minimum(s[m] - self.starts[i],
                                                      self.pieces[i].length))

    def orientations(self, s: np.ndarray, out: np.ndarray) -> None:
        lo, hi = self.seg_ranges[:, 0], self.seg_ranges[:, 1]
        k = np.clip(np.searchsorted(hi, s, side="left"), 0, len(lo) - 1)
        for i in np.unique(k):
            m = k == i
            span = hi[i] - lo[i]
            f = np.clip((s[m] - lo[i]) / span, 0.0, 1.0) if span > 0 else np.ones(int(m.sum()))
            blk = np.empty((f.size, 4))
            slerp(self.seg_quats[i], self.seg_quats[i + 1], f, blk)
            out[m] = blk


@dataclass
class PlanResult:
    ok: bool
    reason: str = ""
    code: int = 0
    plan: Plan | None = None


# -- validation of the request fields -----------------------------------------------------
def _finite(name: str, values: Sequence[float]) -> list[float]:
    out = []
    for i, v in enumerate(values):
        try:
            f = float(v)
        except (TypeError, ValueError):
            raise Refused(f"{name}[{i}] is not a number: {v!r}") from None
        if not math.isfinite(f):
            raise Refused(f"{name}[{i}] is not finite: {f}")
        out.append(f)
    return out


def check_fields(req: Request, frames: dict[int, np.ndarray]) -> list[list[float]]:
    """Every check of the request's fields (counts, lengths, types, speeds, time, ref, mode,
    sync, a running ASYNC move) that needs no geometry; returns the segments as
    floats. Raises Refused naming the field and its value."""
    for name in ("segments", "vel", "acc"):
        if not hasattr(getattr(req, name), "__len__"):
            raise Refused(f"{name} must be a sequence, got {getattr(req, name)!r}")
    n = len(req.segments)
    if not 1 <= req.pos_cnt <= MAX_MOVEB_POINT:
        raise Refused(f"posCnt must be 1..{MAX_MOVEB_POINT} (MAX_MOVEB_POINT), got "
                      f"{req.pos_cnt}")
    if req.pos_cnt != n:
        raise Refused(f"posCnt is {req.pos_cnt} but {n} segments were given")
    segs = []
    for k, seg in enumerate(req.segments):
        if not hasattr(seg, "__len__"):
            raise Refused(f"segment {k} must be a sequence of {SEGMENT_LEN} numbers, got "
                          f"{seg!r}")
        if len(seg) != SEGMENT_LEN:
            raise Refused(f"segment {k} has {len(seg)} numbers, expected {SEGMENT_LEN} "
                          "(pos1[6], pos2[6], type, radius)")
        segs.append(_finite(f"segment {k}", seg))
        typ = segs[-1][12]
        if typ not in (LINE, CIRCLE):
            raise Refused(f"segment {k}: type must be 0 (LINE) or 1 (CIRCLE), got {typ:g}")
        if segs[-1][13] < 0:
            raise Refused(f"segment {k}: blending radius must be >= 0, got {segs[-1][13]:g} mm",
                          RC_ERROR_INPUT_BLENDING_RAD)
    if len(req.vel) != 2 or len(req.acc) != 2:
        raise Refused(f"vel and acc must have 2 values each, got {len(req.vel)} and "
                      f"{len(req.acc)}")
    vel, acc = _finite("vel", req.vel), _finite("acc", req.acc)
    time = _finite("time", [req.time])[0]
    if time < 0:
        raise Refused(f"time must be >= 0 s, got {time:g}")
    if time == 0.0:
        for name, val, unit in (("vel", vel, "mm/s"), ("acc", acc, "mm/s^2")):
            if val[0] <= 0:
                raise Refused(f"{name}[0] (linear) must be > 0 when time = 0, got "
                              f"{val[0]:g} {unit}")
            if val[1] == 0:
                raise Refused(f"{name}[1] (angular) must not be 0 when time = 0 (give a "
                              f"positive value, or a negative one such as DR_COND_NONE = "
                              f"-10000 for 'proportional to the linear motion')")
    if req.ref not in (BASE, TOOL) and req.ref not in frames:
        if USER_MIN <= req.ref <= USER_MAX:
            raise Refused(f"ref {req.ref}: user frame {req.ref} is not configured (parameter "
                          "user_frames)")
        raise Refused(f"ref must be 0 (BASE), 1 (TOOL), 2 (WORLD) or a configured user frame "
                      f"{USER_MIN}..{USER_MAX}, got {req.ref}")
    if req.mode not in (ABSOLUTE, RELATIVE):
        raise Refused(f"mode must be 0 (ABSOLUTE) or 1 (RELATIVE), got {req.mode}")
    if req.sync_type not in (SYNC, ASYNC):
        raise Refused(f"syncType must be 0 (SYNC) or 1 (ASYNC), got {req.sync_type}")
    return segs


# -- targets in the base frame ---------------------------------------------------------------
def _targets(segs: list[list[float]], req: Request, start: tuple,
             frames: dict[int, np.ndarray]) -> list[tuple]:
    """Per segment: (type, via pose or None, end pose), poses (p [mm], R) in the base frame."""
    p_s, r_s = start
    if req.ref == TOOL:
        fp, fr = p_s, r_s                 # the tool frame fixed at P_start
    elif req.ref == BASE:
        fp, fr = np.zeros(3), np.eye(3)
    else:
        f = frames[req.ref]
        fp, fr = f[:3, 3], f[:3, :3]
    out = []
    prev = (p_s, r_s)

    def absolute(x: list[float]) -> tuple:
        p, r = pose_from_posx(x)
        return fp + fr @ p, fr @ r

    def relative(base: tuple, x: list[float]) -> tuple:
        d, rd = np.array(x[:3]), rot_zyz(*x[3:6])
        p = base[0] + fr @ d              # translations in the axes of the ref frame
        if req.ref == TOOL:
            r = base[1] @ rd              # PD: R_prev . R_delta for TOOL
        else:
            r = (fr @ rd @ fr.T) @ base[1]   # R_delta (in ref axes) . R_prev
        return p, r

    for seg in segs:
        typ = int(seg[12])
        if req.mode == ABSOLUTE:
            first = absolute(seg[0:6])
            second = absolute(seg[6:12]) if typ == CIRCLE else None
        else:
            first = relative(prev, seg[0:6])
            second = relative(first, seg[6:12]) if typ == CIRCLE else None
        if typ == CIRCLE:
            out.append((typ, first, second))
            prev = second
        else:
            out.append((typ, None, first))
            prev = first
    return out


# -- building the path ---------------------------------------------------------------------
def _raw_pieces(targets: list[tuple], start: tuple) -> list:
    pieces, p0 = [], start[0]
    for k, (typ, via, end) in enumerate(targets):
        if typ == LINE:
            if np.linalg.norm(end[0] - p0) < EPS_LEN:
                raise Refused(f"segment {k}: LINE target {_fmt(end[0])} coincides with the "
                              "segment start (no direction to move or blend)")
            pieces.append(Line(p0, end[0]))
        else:
            try:
                pieces.append(Arc.through(p0, via[0], end[0]))
            except ValueError as e:
                raise Refused(f"segment {k}: CIRCLE from {_fmt(p0)} via {_fmt(via[0])} to "
                              f"{_fmt(end[0])}: {e} (Doosan error 1204)",
                              RC_ERROR_INPUT_CIRC_MTN_CMD) from None
        p0 = end[0]
    return pieces


def _fmt(p: np.ndarray) -> str:
    return "(" + ", ".join(f"{v:.6g}" for v in p) + ") mm"


def _check_junctions(pieces: list, radii: list[float]) -> list[float]:
    """Radius 0, duplicated LINE, rapid direction change and the blend radius against the
    segment lengths; returns the deflection per junction."""
    k_last = len(pieces) - 1
    phis = []
    for k in range(k_last):
        r = radii[k]
        if r <= 0:
            raise Refused(f"segment {k}: blending radius {r:g} mm; it must be > 0 on every "
                          "segment but the last (Doosan: radius 0 is an input error)",
                          RC_ERROR_INPUT_BLENDING_RAD)
        a, b = pieces[k], pieces[k + 1]
        phi = deflection(a.tangent(a.length), b.tangent(0.0))
        phis.append(phi)
        if a.kind == "line" and b.kind == "line" and phi < DUPLICATE_LINE_PHI:
            raise Refused(f"segments {k} and {k + 1}: duplicated line (two consecutive LINE "
                          f"segments in the same direction, deflection {math.degrees(phi):.4g}"
                          " deg)")
        if phi >= RAPID_CHANGE_PHI:
            raise Refused(f"junction of segments {k} and {k + 1}: direction changes by "
                          f"{math.degrees(phi):.2f} deg >= 160 deg (rapid direction change)")
        for p, name in ((a, k), (b, k + 1)):
            if p.kind == "arc" and r > 2 * p.rho:
                raise Refused(f"segment {k}: blending radius {r:g} mm exceeds the diameter "
                              f"{2 * p.rho:.6g} mm of the circle of segment {name}",
                              RC_ERROR_INPUT_BLENDING_RAD)
    for k, p in enumerate(pieces):
        r_in = radii[k - 1] if k > 0 else 0.0
        r_out = radii[k] if k < k_last else 0.0
        cut = (p.cut_length(r_in, False) if r_in else 0.0) + \
              (p.cut_length(r_out, True) if r_out else 0.0)
        if r_in + r_out > p.length + 1e-9 or cut > p.length + 1e-9:
            raise Refused(f"segment {k}: blend zones overlap: radii {r_in:g} + {r_out:g} mm on "
                          f"a segment of length {p.length:.6g} mm", RC_ERROR_INPUT_BLENDING_RAD)
    return phis


def _blend(pieces: list, radii: list[float]) -> tuple[list, list[int]]:
    """Trim every piece at the blend spheres and join the cut points: the path pieces, in
    order trimmed_0, blend_0, trimmed_1, ..., and the index of the blend piece of each
    junction. A fully consumed piece stays as a zero-length piece (harmless)."""
    n = len(pieces)
    cuts = [[0.0, 0.0] for _ in range(n)]
    for k in range(n - 1):
        cuts[k][1] = pieces[k].cut_length(radii[k], True)
        cuts[k + 1][0] = pieces[k + 1].cut_length(radii[k], False)
    trimmed = [p.trimmed(c[0], c[1]) for p, c in zip(pieces, cuts)]
    out, blends = [], []
    for k in range(n):
        out.append(trimmed[k])
        if k == n - 1:
            break
        a, b = pieces[k], pieces[k + 1]
        if a.kind == "line" and b.kind == "line":
            out.append(tangent_arc(a.b, a.u, b.u, radii[k]))
        else:
            ta, tb = trimmed[k], trimmed[k + 1]
            pa = ta.points(np.array([ta.length]))[0]
            pb = tb.points(np.array([0.0]))[0]
            out.append(Hermite(pa, ta.tangent(ta.length), pb, tb.tangent(0.0)))
        blends.append(len(out) - 1)
    return out, blends


def plan(req: Request, start: tuple, frames: dict[int, np.ndarray] | None = None) -> PlanResult:
    """Validate ``req`` and build its plan from the TCP pose ``start`` = (p [mm], R) in the
    base frame. ``frames`` maps ref 2 (WORLD) and user frames 101..200 to their 4x4 pose in
    the base frame [mm]; WORLD defaults to the base. Runs in: any thread (pure)."""
    frames = dict(frames or {})
    frames.setdefault(WORLD, np.eye(4))
    try:
        return PlanResult(True, plan=_build(req, start, frames))
    except Refused as e:
        return PlanResult(False, e.reason, e.code)


def _build(req: Request, start: tuple, frames: dict[int, np.ndarray]) -> Plan:
    segs = check_fields(req, frames)
    targets = _targets(segs, req, start, frames)
    raw = _raw_pieces(targets, start)
    radii = [s[13] for s in segs]
    _check_junctions(raw, radii)
    pieces, blends = _blend(raw, radii)
    starts = np.concatenate(([0.0], np.cumsum([p.length for p in pieces])))
    total = float(starts[-1])
    # orientation schedule: segment k turns from the middle of its entry blend to the middle
    # of its exit blend (from the path start / to the path end for the first / last one)
    mids = [starts[b] + pieces[b].length / 2.0 for b in blends]
    bounds = [0.0, *mids, total]
    ranges = np.array([[bounds[k], bounds[k + 1]] for k in range(len(raw))])
    rots = [start[1]] + [t[2][1] for t in targets]
    quats = np.array([quat_from_rot(r) for r in rots])
    for i in range(1, len(quats)):                  # one hemisphere: shortest slerps
        if np.dot(quats[i - 1], quats[i]) < 0:
            quats[i] = -quats[i]
    rotation = sum(math.degrees(rotation_angle(rots[i], rots[i + 1])) for i in range(len(raw)))
    T, ta = _profile(total, rotation, req)
    v = total / (T - ta)
    return Plan(pieces, starts, ranges, quats, total, T, ta, v, v / ta, rotation,
                [t[2] for t in targets], start)


def _profile(length: float, rotation: float, req: Request) -> tuple[float, float]:
    """(duration T, acceleration time t_acc) of the symmetric trapezoid: T = L/v + v/a
    (2 sqrt(L/a) when the speed is never reached), or ``time`` with T/4 to accelerate."""
    if req.time > 0:
        return req.time, req.time / 4.0
    v, a = req.vel[0], req.acc[0]
    T_lin, ta = _trapezoid(length, v, a)
    if req.vel[1] > 0 and rotation > 0:
        w = req.vel[1]
        alpha = req.acc[1] if req.acc[1] > 0 else w * a / v   # proportional acceleration
        T_rot, _ = _trapezoid(rotation, w, alpha)
        if T_rot > T_lin:                    # stretch the linear profile to the common T
            return T_rot, ta * T_rot / T_lin
    return T_lin, ta


def _trapezoid(dist: float, v: float, a: float) -> tuple[float, float]:
    if dist >= v * v / a:
        return dist / v + v / a, v / a
    ta = math.sqrt(dist / a)
    return 2.0 * ta, ta
