"""setTargetPose on the Kinematics core: pure, no rtcf / omniORB. Runs in: the
caller's thread (the servant runs it in an ORB thread: IK never runs in the EC thread).

Project decision (steps): hrpsys requires every intermediate step to meet the IK tolerances.
A chain with fewer than 6 joints (NAO's arms have 5) can reach only a 5-dimensional set of
poses, and the straight line / geodesic between two reachable poses leaves that set (by
about 0.5 mm over 10 cm on NAO's arm), so that rule refuses nearly every move. Here the
intermediate steps are way-points: each must be solved within 10 % of a step (2 mm,
2.5 mrad) or the setMaxIKError tolerances if larger; the last step must meet setMaxIKError.
For chains of 6 or more joints this changes nothing in practice (their steps converge).

The group must be exactly one kinematic chain of the model (Model.chain_for_joints); the
target link is its last joint (tip = identity), the base link the chain's root (NAO: the
torso). "World" is the frame in which the player's basePos / baseRpy place that root; with
the default base pose (0, identity) it is the root frame itself.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from .seqplay import PlayerError

STEP_POS = 0.02        # [m] largest position step between IK solutions (hrpsys)
STEP_ROT = 0.025       # [rad] largest rotation step
PATH_TOL = 0.1         # intermediate steps: within this fraction of a step (see below)


def rpy_matrix(r: float, p: float, y: float) -> np.ndarray:
    """R = Rz(y) . Ry(p) . Rx(r) (hrpsys / OpenHRP roll-pitch-yaw)."""
    cr, sr, cp, sp, cy, sy = (math.cos(r), math.sin(r), math.cos(p), math.sin(p),
                              math.cos(y), math.sin(y))
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def axis_angle_matrix(w: np.ndarray) -> np.ndarray:
    """exp([w]x): the rotation by |w| about w (Rodrigues)."""
    a = float(np.linalg.norm(w))
    if a < 1e-12:
        return np.eye(3)
    k = w / a
    K = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + math.sin(a) * K + (1.0 - math.cos(a)) * (K @ K)


def plan_target_pose(model: Any, joints: Sequence[str], q_full: np.ndarray, frame: str,
                     xyz: Sequence[float], rpy: Sequence[float],
                     base_pos: np.ndarray, base_rpy: np.ndarray,
                     pos_tol: float, rot_tol: float, max_iter: int) -> np.ndarray:
    """Joint keyframes (N, len(joints)) that move the group's last joint frame to the target
    in N = max(1, floor(max(|dp| / 2 cm, |w| / 0.025 rad))) steps. ``q_full``: every joint
    of the model, model order (the current qRef). Raises PlayerError, naming the step and
    the IK's reason, when any step fails."""
    from rtcf_components.kinematics.algorithms import body_transform, chain_fk, rotation_log, solve_ik
    from rtcf_components.kinematics.model import ModelError

    xyz = np.asarray(xyz, dtype=float).reshape(-1)
    rpy = np.asarray(rpy, dtype=float).reshape(-1)
    if xyz.size != 3 or rpy.size != 3:
        raise PlayerError(f"setTargetPose: xyz and rpy need 3 values each, got {xyz.size} "
                          f"and {rpy.size}")
    if not (np.all(np.isfinite(xyz)) and np.all(np.isfinite(rpy))):
        raise PlayerError(f"setTargetPose: values must be finite, got {xyz.tolist()}, "
                          f"{rpy.tolist()}")
    chain = model.chain_for_joints(list(joints))
    if chain is None:
        raise PlayerError(f"setTargetPose: the group's joints {list(joints)} are not the "
                          f"joints of one kinematic chain of {model.name} (chains: "
                          + ", ".join(f"{c.name}={list(c.joints)}" for c in
                                      model.chains.values()) + ")")
    q0 = np.asarray(q_full, dtype=float)[chain.index]
    eye = np.eye(4)
    T0 = chain_fk(model, chain, q0, tip=eye)
    target = np.eye(4)
    target[:3, :3] = rpy_matrix(*rpy)
    target[:3, 3] = xyz
    if frame:
        try:
            Tf = body_transform(model, np.asarray(q_full, dtype=float), frame)
        except ModelError as e:
            raise PlayerError(f"setTargetPose: unknown frame link {frame!r}: {e}") from None
        target = Tf @ target
    else:   # world -> root: the root is at (basePos, baseRpy) in the world
        Tb = np.eye(4)
        Tb[:3, :3] = rpy_matrix(*base_rpy)
        Tb[:3, 3] = base_pos
        target = np.linalg.solve(Tb, target)
    p0, R0 = T0[:3, 3], T0[:3, :3]
    p1, R1 = target[:3, 3], target[:3, :3]
    w = rotation_log(R0.T @ R1)
    n = max(1, int(math.floor(max(np.linalg.norm(p1 - p0) / STEP_POS,
                                  np.linalg.norm(w) / STEP_ROT))))
    keys = np.empty((n, chain.dof))
    q = q0.copy()
    for k in range(1, n + 1):
        f = k / n
        T = np.eye(4)
        T[:3, :3] = R0 @ axis_angle_matrix(w * f)
        T[:3, 3] = p0 + (p1 - p0) * f
        last = k == n
        res = solve_ik(model, chain, T, q_seed=q, mask=63, tip=eye,
                       pos_tol=pos_tol if last else max(pos_tol, PATH_TOL * STEP_POS),
                       rot_tol=rot_tol if last else max(rot_tol, PATH_TOL * STEP_ROT),
                       max_iter=max_iter)
        if not res.success:
            raise PlayerError(f"setTargetPose: IK failed at step {k} of {n} "
                              f"(target {np.round(T[:3, 3], 4).tolist()} m in the "
                              f"{chain.name} root frame): {res.reason}")
        q = res.q
        keys[k - 1] = q
    return keys
