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
                 pos_tol: float = 1e-5, rot_tol: float = 1e-4):
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
        # the 11 unknowns x: the shared hip joint, then each leg's other five; q = x[XMAP]
        self._xmap = np.array([0, 1, 2, 3, 4, 5, 0, 6, 7, 8, 9, 10])
        self._xlo = np.concatenate(([self.lo[0]], self.lo[1:6], self.lo[7:12]))
        self._xhi = np.concatenate(([self.hi[0]], self.hi[1:6], self.hi[7:12]))
        self._J = np.zeros((12, 11))
        self._e = np.zeros(12)
        self._J2 = np.zeros((12, 11))                # the trial point's
        self._e2 = np.zeros(12)
        self._Jr = np.zeros((6, 6))
        self._x = np.zeros(11)
        self._diag = np.arange(11)
        self.iterations = 0

    def _residual(self, TL, TR, q, J, e) -> tuple[float, float]:
        """Fill the stacked Jacobian J and error e at q; (position, orientation) error of
        the worse foot (the yaw at its weight)."""
        worst_p = worst_r = 0.0
        Jr, w = self._Jr, self.w
        for k, (chain, T_goal) in enumerate(((self.left, TL), (self.right, TR))):
            T, Jc = self._fkj(self.kin, chain, q[6 * k: 6 * k + 6])
            o = 6 * k
            e[o: o + 3] = T_goal[:3, 3] - T[:3, 3]
            # the orientation error and its rows in the target sole's axes: z is the sole
            # normal, so the yaw weight acts on the turn about the ground's vertical
            Rg = T_goal[:3, :3]
            e[o + 3: o + 6] = Rg.T @ self._log(Rg @ T[:3, :3].T)
            Jr[:3] = Jc[:3]
            np.matmul(Rg.T, Jc[3:], out=Jr[3:])
            J[o: o + 6, 0] = Jr[:, 0]                 # the shared hip yaw-pitch
            J[o: o + 6, 1 + 5 * k: 6 + 5 * k] = Jr[:, 1:]
            ex, ey, ez = e[o], e[o + 1], e[o + 2]
            worst_p = max(worst_p, math.sqrt(ex * ex + ey * ey + ez * ez))
            rx, ry, rz = e[o + 3] * w[o + 3], e[o + 4] * w[o + 4], e[o + 5] * w[o + 5]
            worst_r = max(worst_r, math.sqrt(rx * rx + ry * ry + rz * rz))
        return worst_p, worst_r

    def solve(self, TL: np.ndarray, TR: np.ndarray, q: np.ndarray) -> tuple[float, float]:
        x = self._x
        x[0] = q[0]
        x[1:6] = q[1:6]
        x[6:11] = q[7:12]
        q[6] = q[0]
        J, e = self._J, self._e
        ep, er = self._residual(TL, TR, q, J, e)
        lam = 1e-6
        it = 0
        w = self.w
        while it < self.max_iter and (ep > self.pos_tol or er > self.rot_tol):
            it += 1
            Jw = J * w[:, None]
            H = J.T @ Jw
            H[self._diag, self._diag] += lam
            x_new = np.clip(x + np.linalg.solve(H, Jw.T @ e), self._xlo, self._xhi)
            q_new = x_new[self._xmap]
            cost = float(e @ (w * e))
            ep_n, er_n = self._residual(TL, TR, q_new, self._J2, self._e2)
            if float(self._e2 @ (w * self._e2)) <= cost:
                x[:] = x_new
                q[:] = q_new
                ep, er = ep_n, er_n
                J, self._J2 = self._J2, J                 # the trial point is the new one
                e, self._e2 = self._e2, e
                lam = max(lam * 0.1, 1e-9)
            else:                                     # rejected: stay, damp harder
                lam *= 100.0
                if lam > 1e3:
                    break
        self._J, self._e = J, e
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
