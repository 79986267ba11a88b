"""Kinematics algorithms on a Model: FK (one configuration or N), frames, spaces, Jacobians,
inverse kinematics.

Pure module: imports neither rtcf nor omniORB. Metres and radians; transforms are 4x4 numpy
arrays. Functions take the immutable Model; compiled formulas are cached per chain here
(derived data, never state that changes what a call returns).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from .analytic import candidates, into_limits, pieper
from .codegen import compile_chain
from .model import Chain, Model, ModelError

FRAME_TORSO, FRAME_WORLD, FRAME_ROBOT = 0, 1, 2
SPACES = {FRAME_TORSO: "FRAME_TORSO", FRAME_WORLD: "FRAME_WORLD", FRAME_ROBOT: "FRAME_ROBOT"}
ROOT_NAMES = ("Torso",)
AXIS_MASK_POSITION, AXIS_MASK_ALL = 7, 63   # NAOqi: X=1 Y=2 Z=4 WX=8 WY=16 WZ=32

def _fn(chain: Chain, kind: str, tip: np.ndarray | None = None) -> Callable:
    """The compiled formula of one kind for a chain (and a custom tip, keyed by its bytes)."""
    key = kind if tip is None else (kind, np.asarray(tip, float).tobytes())
    fn = chain.cache.get(key)
    if fn is None:
        t = chain.tip if tip is None else np.asarray(tip, float)
        if t.shape != (4, 4):
            raise ValueError(f"tip: expected a 4x4 transform, got shape {t.shape}")
        fn = chain.cache[key] = compile_chain(chain.X, chain.axes, t, kind)
    return fn


def _chain(model: Model, chain: str | Chain) -> Chain:
    return chain if isinstance(chain, Chain) else model.chain(chain)


def _q(chain: Chain, q: Sequence[float]) -> np.ndarray | Sequence[float]:
    if len(q) != chain.dof:
        raise ValueError(f"{chain.name}: expected {chain.dof} joint angles "
                         f"({', '.join(chain.joints)}), got {len(q)}")
    return q


# -- forward kinematics ------------------------------------------------------------------------

def chain_fk(model: Model, chain: str | Chain, q: Sequence[float],
             tip: np.ndarray | None = None) -> np.ndarray:
    """4x4 pose of the chain's effector in the model root frame (NAO: the torso). ``q``: the
    chain's joint angles [rad]. ``tip=np.eye(4)`` gives the frame of the last joint."""
    c = chain if type(chain) is Chain else model.chain(chain)
    f = c.cache.get("pose") if tip is None else None
    if f is None:
        f = _fn(c, "pose", tip)
    if len(q) != c.dof:
        _q(c, q)
    return f(q)


def chain_pose6d(model: Model, chain: str | Chain, q: Sequence[float]) -> tuple:
    """(x, y, z, wx, wy, wz) of the effector in the root frame, as position6d(chain_fk(...))
    but straight from the formulas (no 4x4 built): the per-cycle call."""
    c = chain if type(chain) is Chain else model.chain(chain)
    f = c.cache.get("pose6d") or _fn(c, "pose6d")
    if len(q) != c.dof:
        _q(c, q)
    return f(q)


def warm_up(model: Model) -> None:
    """Compile every chain's formulas now (in the lifecycle, not in the first cycle)."""
    for c in model.chains.values():
        for kind in ("pose", "pose6d", "pose_jac", "frames"):
            _fn(c, kind)


def chain_fk_batch(model: Model, chain: str | Chain, Q: np.ndarray) -> np.ndarray:
    """(N, n) configurations -> (N, 4, 4) effector poses. chain_fk's formulas compiled by
    numba in a loop over the configurations (codegen.compile_batch_jit; without numba, numpy
    on blocks of codegen.BATCH_ROWS configurations). Equal to chain_fk row by row to rounding
    (~1e-15). The first call for a chain in a process imports numba and compiles its kernel
    (about a second) or loads it from numba's cache (codegen.jit_cache_dir): call it once
    outside a cycle. Runs in: any thread (the GIL is released while the kernel runs)."""
    c = _chain(model, chain)
    Q = np.asarray(Q, dtype=float)
    if Q.ndim != 2 or Q.shape[1] != c.dof:
        raise ValueError(f"{c.name}: expected an (N, {c.dof}) array, got shape {Q.shape}")
    out = np.empty((Q.shape[0], 4, 4))
    if Q.shape[0]:
        _fn(c, "batch")(Q, out)
    return out


def chain_frames(model: Model, chain: str | Chain, q: Sequence[float]) -> np.ndarray:
    """(n + 1, 4, 4): the frame of every joint after its rotation, then the effector."""
    c = _chain(model, chain)
    return _fn(c, "frames")(_q(c, q))


def chain_jacobian(model: Model, chain: str | Chain, q: Sequence[float],
                   tip: np.ndarray | None = None) -> np.ndarray:
    """(6, n) geometric Jacobian at the effector origin, root frame: rows vx vy vz wx wy wz."""
    c = _chain(model, chain)
    return _fn(c, "pose_jac", tip)(_q(c, q))[1]


def chain_fk_jacobian(model: Model, chain: str | Chain, q: Sequence[float],
                      tip: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    c = _chain(model, chain)
    return _fn(c, "pose_jac", tip)(_q(c, q))


def body_transform(model: Model, q: np.ndarray, name: str) -> np.ndarray:
    """Pose in the root frame of a chain effector, a joint (its frame after the rotation), a
    named frame (camera) or the root itself ("Torso"). ``q``: every joint, model order."""
    if name in model.chains:
        c = model.chains[name]
        return chain_fk(model, c, q[c.index])
    loc = model.joint_location(name)
    if loc is not None:
        c = model.chains[loc[0]]
        return chain_frames(model, c, q[c.index])[loc[1]]
    f = model.frames.get(name)
    if f is not None:
        c = model.chains[f.parent]
        return chain_fk(model, c, q[c.index]) @ f.offset
    if name in ROOT_NAMES:
        return np.eye(4)
    for c in model.chains.values():
        if name in c.members and name not in c.joints:
            # an actuator that ends a chain (NAO's LHand, RHand): ALMotion places it at the
            # chain's effector, as the NAO URDF does (joint LHand at the hand offset)
            return chain_fk(model, c, q[c.index])
    if name in model.joint_names:
        raise ModelError(f"{name!r} is a joint of no kinematic chain (it has no frame)")
    raise ModelError(f"unknown body name {name!r}: expected a chain ({', '.join(model.chains)}), "
                     f"a joint, a frame ({', '.join(model.frames) or 'none'}) or Torso")


# -- spaces (ALMotion: FRAME_TORSO, FRAME_WORLD, FRAME_ROBOT) ----------------------------------

def robot_frame(model: Model, q: np.ndarray) -> np.ndarray:
    """Pose of FRAME_ROBOT in the root frame. With two feet (LLeg, RLeg): z vertical (the
    mean of the sole normals, the soles taken as flat on the ground), origin the midpoint of
    the soles projected onto the ground plane through the lower sole, x the mean of the feet
    headings. A model without feet stands on its root: FRAME_ROBOT is the root frame."""
    if "LLeg" not in model.chains or "RLeg" not in model.chains:
        return np.eye(4)
    L = body_transform(model, q, "LLeg")
    R = body_transform(model, q, "RLeg")
    z = L[:3, 2] + R[:3, 2]
    z /= np.linalg.norm(z)
    x = L[:3, 0] + R[:3, 0]
    x -= z * (x @ z)
    nx = np.linalg.norm(x)
    if nx < 1e-9:                      # feet pointing opposite ways: keep the left heading
        x = L[:3, 0] - z * (L[:3, 0] @ z)
        nx = np.linalg.norm(x)
    x /= nx
    y = np.cross(z, x)
    mid = 0.5 * (L[:3, 3] + R[:3, 3])
    low = L[:3, 3] if L[:3, 3] @ z < R[:3, 3] @ z else R[:3, 3]
    origin = mid - z * ((mid - low) @ z)
    T = np.eye(4)
    T[:3, 0], T[:3, 1], T[:3, 2], T[:3, 3] = x, y, z, origin
    return T


def planar(x: float, y: float, theta: float) -> np.ndarray:
    """A planar pose (odometry) as a 4x4 transform."""
    c, s = math.cos(theta), math.sin(theta)
    T = np.eye(4)
    T[:2, :2] = [[c, -s], [s, c]]
    T[:2, 3] = x, y
    return T


def space_transform(model: Model, q: np.ndarray, space: int,
                    odometry: Sequence[float] = (0.0, 0.0, 0.0)) -> np.ndarray:
    """Pose of the root frame in ``space``: multiply a root-frame pose by it on the left."""
    if space == FRAME_TORSO:
        return np.eye(4)
    if space not in (FRAME_ROBOT, FRAME_WORLD):
        raise ModelError(f"unknown space {space!r}: expected 0 (FRAME_TORSO), 1 (FRAME_WORLD) "
                         f"or 2 (FRAME_ROBOT)")
    root_in_robot = invert(robot_frame(model, q))
    if space == FRAME_ROBOT:
        return root_in_robot
    return planar(*odometry) @ root_in_robot


def transform(model: Model, q: np.ndarray, name: str, space: int,
              odometry: Sequence[float] = (0.0, 0.0, 0.0)) -> np.ndarray:
    """getTransform: the pose of ``name`` in ``space`` [m]."""
    T = body_transform(model, q, name)
    return space_transform(model, q, space, odometry) @ T


def invert(T: np.ndarray) -> np.ndarray:
    out = np.eye(4)
    R = T[:3, :3].T
    out[:3, :3] = R
    out[:3, 3] = -R @ T[:3, 3]
    return out


def position6d(T: np.ndarray) -> list[float]:
    """[x, y, z, wx, wy, wz] with R = Rz(wz) Ry(wy) Rx(wx) (libalmath's convention)."""
    (r00, r01, r02, x), (r10, r11, r12, y), (r20, _, _, z) = T[:3].tolist()
    wz = math.atan2(r10, r00)
    cz, sz = math.cos(wz), math.sin(wz)
    wy = math.atan2(-r20, cz * r00 + sz * r10)
    wx = math.atan2(sz * r02 - cz * r12, cz * r11 - sz * r01)
    return [x, y, z, wx, wy, wz]


def transform_from_6d(p: Sequence[float]) -> np.ndarray:
    """Inverse of position6d: [x, y, z, wx, wy, wz] -> 4x4."""
    x, y, z, wx, wy, wz = (float(v) for v in p)
    cx, sx, cy, sy, cz, sz = (math.cos(wx), math.sin(wx), math.cos(wy), math.sin(wy),
                              math.cos(wz), math.sin(wz))
    T = np.eye(4)
    T[:3, :3] = [[cz * cy, cz * sy * sx - sz * cx, cz * sy * cx + sz * sx],
                 [sz * cy, sz * sy * sx + cz * cx, sz * sy * cx - cz * sx],
                 [-sy, cy * sx, cy * cx]]
    T[:3, 3] = x, y, z
    return T


def rotation_log(R: np.ndarray) -> np.ndarray:
    """The rotation vector (axis * angle) of a rotation matrix; exact near 0 and pi."""
    cos_a = max(-1.0, min(1.0, (R[0, 0] + R[1, 1] + R[2, 2] - 1.0) * 0.5))
    v = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    a = math.acos(cos_a)
    if a < 1e-6:
        return 0.5 * v
    if a > math.pi - 1e-4:             # near pi: the axis from the symmetric part
        # symmetric part = cos_a I + (1 - cos_a) n n^T: its column i, diagonal term minus
        # cos_a, is (1 - cos_a) n_i n (i: the largest |n_i|)
        d = np.diag(R)
        i = int(np.argmax(d))
        axis = (R[:, i] + R[i, :]) * 0.5
        axis[i] = d[i] - cos_a
        axis /= np.linalg.norm(axis)
        if axis @ v < 0:
            axis = -axis
        return axis * a
    return v * (a / (2.0 * math.sin(a)))


# -- inverse kinematics ------------------------------------------------------------------------

@dataclass(frozen=True)
class IKResult:
    """What solve_ik found. ``q`` is the best configuration tried (within the limits) even
    when ``success`` is false; ``reason`` says why it failed ("" on success)."""

    success: bool
    q: np.ndarray
    position_error: float       # [m], over the position axes of the mask
    orientation_error: float    # [rad], over the rotation axes of the mask
    iterations: int
    reason: str = ""


def _mask_rows(mask: int) -> np.ndarray:
    if not isinstance(mask, (int, np.integer)) or isinstance(mask, bool) or not 0 < mask < 64:
        raise ValueError(f"axis mask: expected an integer 1..63 (X=1 Y=2 Z=4 WX=8 WY=16 "
                         f"WZ=32; 7 position, 63 pose), got {mask!r}")
    return np.array([k for k in range(6) if mask >> k & 1], dtype=np.intp)


def reach(chain: Chain, tip: np.ndarray | None = None) -> float:
    """An upper bound of the distance from the first joint to the effector [m]."""
    t = chain.tip if tip is None else tip
    return float(sum(np.linalg.norm(x[:3, 3]) for x in chain.X[1:]) + np.linalg.norm(t[:3, 3]))


def solve_ik(model: Model, chain: str | Chain, target: np.ndarray,
             q_seed: Sequence[float] | None = None, mask: int = AXIS_MASK_ALL,
             tip: np.ndarray | None = None, *, pos_tol: float = 1e-4, rot_tol: float = 1e-3,
             max_iter: int = 200, restarts: int = 48, seed: int = 0) -> IKResult:
    """Damped least squares (Levenberg-Marquardt step control) on the masked pose error,
    joint limits enforced on every step, restarted from the middle of the limits and from
    seeded random configurations until one meets both tolerances. A full-pose target (mask
    63) on a 6-DOF chain of Pieper's kind (the M1013, NAO's legs; kinematics.analytic) first
    starts from its closed-form solutions, those within the limits and nearest ``q_seed``
    (without one: the middle of the limits) first; that is complete: every reachable pose
    is solved. ``restarts`` counts the starts beyond the first. Deterministic for a given
    ``seed``. Never returns success for a pose outside the tolerances."""
    c = _chain(model, chain)
    target = np.asarray(target, dtype=float)
    if target.shape != (4, 4) or not np.all(np.isfinite(target)):
        raise ValueError(f"target: expected a finite 4x4 transform, got shape {target.shape}")
    rows = _mask_rows(mask)
    for name, v in (("pos_tol", pos_tol), ("rot_tol", rot_tol)):
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
            raise ValueError(f"{name}: expected a finite number > 0, got {v!r}")
    if not (isinstance(max_iter, int) and max_iter >= 1 and isinstance(restarts, int)
            and restarts >= 0):
        raise ValueError(f"max_iter >= 1 and restarts >= 0 expected, got {max_iter}, {restarts}")
    lo, hi = c.lower, c.upper
    # the starts need a finite range: a continuous joint (a URDF's, limits +-inf) starts
    # within one turn
    slo = np.where(np.isfinite(lo), lo, np.where(np.isfinite(hi), hi - 2 * math.pi, -math.pi))
    shi = np.where(np.isfinite(hi), hi, slo + 2 * math.pi)
    if q_seed is None:
        first = 0.5 * (slo + shi)
    else:
        first = np.asarray(q_seed, dtype=float)
        if first.shape != (c.dof,) or not np.all(np.isfinite(first)):
            raise ValueError(f"{c.name}: q_seed: expected {c.dof} finite angles, got {q_seed!r}")
        first = np.clip(first, lo, hi)
    pos_rows = rows[rows < 3]
    rot_rows = rows[rows >= 3]
    if pos_rows.size:
        d = np.linalg.norm(target[:3, 3] - c.X[0][:3, 3]) if c.dof else 0.0
        r = reach(c, tip)
        if pos_rows.size == 3 and d > r + pos_tol:
            e = _err(_fn(c, "pose", tip)(first), target)
            er = float(np.linalg.norm(e[rot_rows])) if rot_rows.size else 0.0
            return IKResult(False, first.copy(), float(np.linalg.norm(e[:3])), er, 0,
                            f"unreachable: the target is {d:.4f} m from {c.joints[0]}, "
                            f"the {c.name} chain reaches at most {r:.4f} m")
    f = _fn(c, "pose_jac", tip)
    rng = np.random.default_rng(seed)
    # with a seed (a warm start, usually solved at once) the closed form is worked out only
    # when that start fails: it costs about 0.5 ms
    lazy = rows.size == 6 and q_seed is not None
    closed = _closed_form_starts(c, target, tip, first, lo, hi) \
        if rows.size == 6 and not lazy else []
    if closed:
        seeds = closed + [first]
    else:
        seeds = [first] + ([0.5 * (slo + shi)] if q_seed is not None else [])
    best: tuple[float, np.ndarray, float, float] | None = None
    total = 0
    attempt = -1
    while attempt + 1 < max(restarts + 1, len(seeds)):
        attempt += 1
        if attempt == 1 and lazy:
            seeds[1:1] = _closed_form_starts(c, target, tip, first, lo, hi)
        if attempt < len(seeds):
            q0 = seeds[attempt]
        elif attempt % 3 == 0 and best is not None:
            # every third start: near the best so far (solutions in a pocket by a limit are
            # found from nearby more often than from anywhere)
            q0 = np.clip(best[1] + rng.normal(0.0, 0.3, c.dof), slo, shi)
        else:
            q0 = rng.uniform(slo, shi)
        q, it, ep, er = _dls(f, target, q0, lo, hi, rows, pos_rows, rot_rows, pos_tol, rot_tol,
                             max_iter)
        total += it
        cost = ep / pos_tol + er / rot_tol
        if best is None or cost < best[0]:
            best = (cost, q, ep, er)
        if ep <= pos_tol and er <= rot_tol:
            return IKResult(True, q, ep, er, total)
    _, q, ep, er = best
    why = []
    if ep > pos_tol:
        why.append(f"position error {ep:.3g} m > {pos_tol:g} m")
    if er > rot_tol:
        why.append(f"orientation error {er:.3g} rad > {rot_tol:g} rad")
    return IKResult(False, q, ep, er, total,
                    f"no solution within the joint limits after {attempt + 1} starts and "
                    f"{total} iterations: best {' and '.join(why)} (target out of reach, "
                    f"blocked by the limits, or an orientation this chain cannot take)")


def _closed_form_starts(c: Chain, target: np.ndarray, tip: np.ndarray | None,
                        near: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> list[np.ndarray]:
    """The closed-form solutions of a Pieper chain (kinematics.analytic; [] for any other)
    as starts: those within the limits first, each group nearest to ``near`` first."""
    s = c.cache.get("pieper", 0)
    if s == 0:
        s = c.cache["pieper"] = pieper(c.X, c.axes)
    if s is None:
        return []
    got = [into_limits(x, lo, hi) for x in candidates(s, target, c.tip if tip is None
                                                       else np.asarray(tip, float))]
    got = [x for x in got if np.all(np.isfinite(x))]
    got.sort(key=lambda x: (not bool(np.all((x >= lo) & (x <= hi))),
                            float(np.abs(x - near).max())))
    return [np.clip(x, lo, hi) for x in got]


def _err(T: np.ndarray, target: np.ndarray) -> np.ndarray:
    e = np.empty(6)
    e[:3] = target[:3, 3] - T[:3, 3]
    e[3:] = rotation_log(target[:3, :3] @ T[:3, :3].T)
    return e


def _dls(f: Callable, target: np.ndarray, q: np.ndarray, lo: np.ndarray, hi: np.ndarray,
         rows: np.ndarray, pos_rows: np.ndarray, rot_rows: np.ndarray, pos_tol: float,
         rot_tol: float, max_iter: int) -> tuple[np.ndarray, int, float, float]:
    """One descent from ``q``: returns (q, iterations, position error, orientation error)."""
    q = np.clip(np.asarray(q, dtype=float), lo, hi)
    T, J = f(q)
    e = _err(T, target)
    lam = 1e-3
    it = 0

    def errors(e: np.ndarray) -> tuple[float, float]:
        return (float(np.linalg.norm(e[pos_rows])) if pos_rows.size else 0.0,
                float(np.linalg.norm(e[rot_rows])) if rot_rows.size else 0.0)

    ep, er = errors(e)
    cost = float(e[rows] @ e[rows])
    eye = np.eye(rows.size)
    stall_cost, stall_it = cost, 0
    while it < max_iter and (ep > pos_tol or er > rot_tol):
        it += 1
        Jm, em = J[rows], e[rows]
        dq = Jm.T @ np.linalg.solve(Jm @ Jm.T + lam * eye, em)
        # a joint at a limit that the step pushes further out is taken out of the step and
        # the others solve for the error without it (else the descent crawls along the limit)
        blocked = ((q <= lo) & (dq < 0)) | ((q >= hi) & (dq > 0))
        if blocked.any():
            Jf = Jm * ~blocked
            dq = Jf.T @ np.linalg.solve(Jf @ Jf.T + lam * eye, em)
        q_new = np.clip(q + dq, lo, hi)
        T_new, J_new = f(q_new)
        e_new = _err(T_new, target)
        c_new = float(e_new[rows] @ e_new[rows])
        if c_new < cost:
            q, T, J, e, cost = q_new, T_new, J_new, e_new, c_new
            ep, er = errors(e)
            lam = max(lam * 0.3, 1e-9)
        else:
            lam *= 8.0
            if lam > 1e4:                          # stuck (limit or local minimum)
                break
        if it - stall_it >= 25:                    # less than 1 % better in 25 iterations:
            if cost > 0.99 * stall_cost:           # a local minimum; let a restart try
                break
            stall_cost, stall_it = cost, it
    return q, it, ep, er
