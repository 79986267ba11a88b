"""Whole-leg inverse kinematics of a NAO-like biped: both feet at once, hip yaw shared.

Pure core: imports neither rtcf nor omniORB; the forward kinematics and Jacobians are the
kinematics core's compiled formulas (kinematics.algorithms.chain_fk_jacobian). Metres and
radians, every pose in the torso frame.

NAO's LHipYawPitch and RHipYawPitch are one motor: the two legs cannot take independent
yaws. The two legs are therefore solved together, as one least-squares problem in 11
unknowns (the shared hip yaw-pitch, then each leg's other five joints) for the 12 numbers of
the two sole poses, by damped Gauss-Newton steps from the previous solution (a warm start:
one or two steps per cycle while walking). The sole yaw is weighted less than the other
axes (``yaw_weight``; the orientation error is taken in the target sole's axes, so this is
the turn about the sole's normal): when the two feet's yaws relative to the torso are not
opposite (a turning step), the yaw is what gives. A straight or sideways step is solved exactly.
Joint limits are enforced on every step.
"""

from __future__ import annotations

import math

import numpy as np


class LegIKError(ValueError):
    """The model has no two six-joint legs sharing the first joint's motor."""


class LegIK:
    """Solver for ``LLeg`` and ``RLeg`` of a kinematics Model. Runs in: owner thread.

    ``solve(TL, TR, q_legs)``: TL, TR (4, 4) sole targets in the torso frame, q_legs (12,)
    [LLeg joints, RLeg joints] the start (updated in place with the solution, both hip
    yaw-pitches equal). Returns (position error [m], orientation error [rad]) of the worse
    foot (yaw counted at its weight)."""

    def __init__(self, kin_model, yaw_weight: float = 1e-4, max_iter: int = 8,
                 pos_tol: float = 1e-6, rot_tol: float = 1e-5):
        from rtcf_components.kinematics.algorithms import chain_fk_jacobian, rotation_log
        self._fkj = chain_fk_jacobian
        self._log = rotation_log
        self.kin = kin_model
        try:
            self.left = kin_model.chain("LLeg")
            self.right = kin_model.chain("RLeg")
        except Exception as e:
            raise LegIKError(f"leg IK needs chains LLeg and RLeg: {e}") from None
        if self.left.dof != 6 or self.right.dof != 6:
            raise LegIKError(f"leg IK needs six-joint legs, got {self.left.dof} and "
                             f"{self.right.dof}")
        self.lo = np.concatenate((self.left.lower, self.right.lower))
        self.hi = np.concatenate((self.left.upper, self.right.upper))
        # the shared hip joint's range: the intersection of both
        self.lo[0] = self.lo[6] = max(self.left.lower[0], self.right.lower[0])
        self.hi[0] = self.hi[6] = min(self.left.upper[0], self.right.upper[0])
        self.w = np.ones(12)
        self.w[5] = self.w[11] = float(yaw_weight)
        self.max_iter, self.pos_tol, self.rot_tol = int(max_iter), float(pos_tol), float(rot_tol)
        self._J = np.zeros((12, 11))
        self._e = np.zeros(12)
        self.iterations = 0

    def _residual(self, TL, TR, q) -> tuple[float, float]:
        """Fill the stacked Jacobian and weighted error; (position, orientation) error."""
        J, e = self._J, self._e
        J[:] = 0.0
        worst_p = worst_r = 0.0
        for k, (chain, T_goal) in enumerate(((self.left, TL), (self.right, TR))):
            qq = q[6 * k: 6 * k + 6]
            T, Jc = self._fkj(self.kin, chain, qq)
            r = slice(6 * k, 6 * k + 6)
            e[6 * k: 6 * k + 3] = T_goal[:3, 3] - T[:3, 3]
            # the orientation error and its rows in the target sole's axes: z is the sole
            # normal, so the yaw weight acts on the turn about the ground's vertical
            Rg = T_goal[:3, :3]
            e[6 * k + 3: 6 * k + 6] = Rg.T @ self._log(Rg @ T[:3, :3].T)
            Jr = np.empty((6, 6))
            Jr[:3] = Jc[:3]
            Jr[3:] = Rg.T @ Jc[3:]
            J[r, 0] = Jr[:, 0]                        # the shared hip yaw-pitch
            J[r, 1 + 5 * k: 6 + 5 * k] = Jr[:, 1:]
            worst_p = max(worst_p, float(np.linalg.norm(e[6 * k: 6 * k + 3])))
            rot = e[6 * k + 3: 6 * k + 6] * self.w[6 * k + 3: 6 * k + 6]
            worst_r = max(worst_r, float(np.linalg.norm(rot)))
        return worst_p, worst_r

    def solve(self, TL: np.ndarray, TR: np.ndarray, q: np.ndarray) -> tuple[float, float]:
        q[6] = q[0]
        x = np.concatenate(([q[0]], q[1:6], q[7:12]))
        lo = np.concatenate(([self.lo[0]], self.lo[1:6], self.lo[7:12]))
        hi = np.concatenate(([self.hi[0]], self.hi[1:6], self.hi[7:12]))
        ep, er = self._residual(TL, TR, q)
        lam = 1e-6
        it = 0
        w = self.w
        while it < self.max_iter and (ep > self.pos_tol or er > self.rot_tol):
            it += 1
            Jw = self._J * w[:, None]
            H = self._J.T @ Jw
            H[np.diag_indices_from(H)] += lam
            dx = np.linalg.solve(H, Jw.T @ self._e)
            x_new = np.clip(x + dx, lo, hi)
            q_new = np.concatenate(([x_new[0]], x_new[1:6], [x_new[0]], x_new[6:11]))
            cost = float(self._e @ (w * self._e))
            saved = (self._J.copy(), self._e.copy(), ep, er)
            ep_n, er_n = self._residual(TL, TR, q_new)
            if float(self._e @ (w * self._e)) <= cost:
                x, ep, er = x_new, ep_n, er_n
                q[:] = q_new
                lam = max(lam * 0.1, 1e-9)
            else:                                     # rejected: back to the last point
                self._J[:], self._e[:], ep, er = saved
                lam *= 100.0
                if lam > 1e3:
                    break
        self.iterations = it
        return ep, er


def pose_matrix(x: float, y: float, z: float, roll: float, pitch: float, yaw: float,
                out: np.ndarray | None = None) -> np.ndarray:
    """4x4 of a position and R = Rz(yaw) Ry(pitch) Rx(roll)."""
    T = np.eye(4) if out is None else out
    cr, sr, cp, sp, cy, sy = (math.cos(roll), math.sin(roll), math.cos(pitch),
                              math.sin(pitch), math.cos(yaw), math.sin(yaw))
    T[0, 0], T[0, 1], T[0, 2] = cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr
    T[1, 0], T[1, 1], T[1, 2] = sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr
    T[2, 0], T[2, 1], T[2, 2] = -sp, cp * sr, cp * cr
    T[0, 3], T[1, 3], T[2, 3] = x, y, z
    T[3, :3] = 0.0
    T[3, 3] = 1.0
    return T


def invert(T: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    o = np.eye(4) if out is None else out
    R = T[:3, :3]
    o[:3, :3] = R.T
    o[:3, 3] = -R.T @ T[:3, 3]
    o[3, :3] = 0.0
    o[3, 3] = 1.0
    return o
