"""The arm behind the TCP: forward and inverse kinematics of a 6-DOF chain (pure).

The seam between the planner (mm, deg, TCP poses) and the Kinematics core (metres, rad,
flange poses; components/kinematics, API in briefs/kinematics_api.md). ``load_arm`` returns
an ``Arm`` or, when the Kinematics core or the model is not available, the reason why (the
component then drives its pose port only and says so).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from .geometry import rot_from_quat

MM = 1e-3     # [m/mm]
# Every sample is solved to these, not to solve_ik's defaults (1e-4 m, 1e-3 rad): a solve
# warm-started from the previous sample stops just inside its tolerance, so at the default
# the joints lagged 0.09 mm behind the path and ended short of the target. Damped least
# squares converges quadratically near a solution: the tight tolerance costs one or two
# iterations per sample.
POS_TOL = 1e-9   # [m]
ROT_TOL = 1e-9   # [rad]
YIELD_EVERY = 16  # samples (~2 ms of IK) between two offers of the GIL to the EC thread


@dataclass
class PathIK:
    ok: bool
    q: np.ndarray            # (N, n) [rad] joint positions of every sample
    index: int = -1          # first failing sample
    reason: str = ""


class Arm:
    """A kinematic chain with a fixed tool offset (flange -> TCP)."""

    def __init__(self, model: Any, chain: str, algorithms: Any, tool: np.ndarray):
        self.model, self.chain_name, self.alg = model, chain, algorithms
        self.chain = model.chain(chain)
        self.n = len(self.chain.joints)
        self.joint_names = tuple(self.chain.joints)
        self.tool = tool                          # 4x4 [m], flange -> TCP
        self.tool_inv = np.linalg.inv(tool)
        idx = np.asarray(self.chain.index)
        self.max_velocity = np.asarray(model.max_velocity, dtype=float)[idx]

    def tcp_pose(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(p [mm], R) of the TCP in the base frame for joint angles q [rad]."""
        t = self.alg.chain_fk(self.model, self.chain_name, np.asarray(q, dtype=float))
        t = t @ self.tool
        return t[:3, 3] / MM, t[:3, :3].copy()

    def flange_target(self, p_mm: np.ndarray, r: np.ndarray) -> np.ndarray:
        t = np.eye(4)
        t[:3, :3], t[:3, 3] = r, p_mm * MM
        return t @ self.tool_inv

    def solve_path(self, pos: np.ndarray, quat: np.ndarray, q_seed: np.ndarray,
                   dt: float) -> PathIK:
        """IK of every sample to POS_TOL / ROT_TOL, each warm-started from the previous
        solution (the closed-form solutions of the chain next). Fails at the
        first sample without a solution, or where a joint would have to move faster than its
        limit between two samples (a branch flip: the arm could not follow). Runs in: the
        caller's thread (an ORB thread), never the EC thread."""
        n = len(pos)
        out = np.empty((n, self.n))
        q = np.asarray(q_seed, dtype=float)
        step_max = self.max_velocity * dt * 1.05 + 1e-9
        for k in range(n):
            if k % YIELD_EVERY == YIELD_EVERY - 1:
                time.sleep(0)       # let the EC thread of this process take the GIL
            target = self.flange_target(pos[k], rot_from_quat(quat[k]))
            res = self.alg.solve_ik(self.model, self.chain_name, target, q_seed=q, restarts=0,
                                    pos_tol=POS_TOL, rot_tol=ROT_TOL)
            if not res.success:
                res = self.alg.solve_ik(self.model, self.chain_name, target, q_seed=q,
                                        pos_tol=POS_TOL, rot_tol=ROT_TOL)
            if not res.success:
                return PathIK(False, out[:k], k, f"no IK solution ({res.reason}; position "
                              f"error {res.position_error / MM:.3g} mm, orientation error "
                              f"{np.degrees(res.orientation_error):.3g} deg)")
            jump = np.abs(res.q - q)
            bad = np.flatnonzero(jump > step_max)
            if k > 0 and bad.size:
                j = int(bad[0])
                return PathIK(False, out[:k], k, f"{self.joint_names[j]} would move "
                              f"{np.degrees(jump[j]):.3g} deg in one cycle of {dt:g} s, over its"
                              f" limit of {np.degrees(self.max_velocity[j]):.4g} deg/s "
                              "(singularity or IK branch change)")
            out[k] = q = res.q
        return PathIK(True, out)


def load_arm(model_spec: str, chain: str, tool: np.ndarray) -> Arm | str:
    """An Arm on the Kinematics core, or the reason it is unavailable (a string)."""
    try:
        from rtcf_components.kinematics import algorithms
        from rtcf_components.kinematics.model import load_model
    except ImportError as e:
        return f"the Kinematics core (components/kinematics) is not available: {e}"
    try:
        model = load_model(model_spec)
        return Arm(model, chain, algorithms, tool)
    except Exception as e:     # ModelError and friends: report, do not crash the component
        return f"arm model {model_spec!r} chain {chain!r} could not be loaded: {e}"
