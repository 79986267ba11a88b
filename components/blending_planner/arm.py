"""The arm behind the TCP: forward and inverse kinematics of a 6-DOF chain (pure).

The seam between the planner (mm, deg, TCP poses) and the Kinematics core (metres, rad,
flange poses; components/kinematics, API in briefs/kinematics_api.md). ``load_arm`` returns
an ``Arm`` or, when the Kinematics core or the model is not available, the reason why (the
component then drives its pose port only and says so).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from .geometry import quats_from_rots, rot_from_quat, same_hemisphere
from .spline import CubicSpline

MM = 1e-3     # [m/mm]
# Every sample is solved to these, not to solve_ik's defaults (1e-4 m, 1e-3 rad): a solve
# warm-started from the previous sample stops just inside its tolerance, so at the default
# the joints lagged 0.09 mm behind the path and ended short of the target. Damped least
# squares converges quadratically near a solution: the tight tolerance costs one or two
# iterations per sample.
POS_TOL = 1e-9   # [m]
ROT_TOL = 1e-9   # [rad]
YIELD_EVERY = 16  # samples (~2 ms of IK) between two offers of the GIL to the EC thread
KNOT_DT = 0.01    # [s] IK knots of solve_knots at most this far apart
SUBSTEPS = 8      # poses of solve_path's continuation between two samples
AVOID_ITERATIONS = 8     # damped steps of one DR_AVOID sample
AVOID_DAMPING = 1e-4     # [m^2] of those steps
AVOID_LEVER = 100.0      # [mm/rad]: an orientation error counts as this lever's TCP distance
AVOID_MAX_MM = 50.0      # [mm] farther from the path than this, DR_AVOID refuses
SPLINE_POS_TOL = 1e-3   # [mm] largest TCP error of the spline between knots
SPLINE_ROT_TOL = 1e-6   # [rad]


@dataclass
class PathIK:
    ok: bool
    q: np.ndarray            # (N, n) [rad] joint positions of every sample
    index: int = -1          # first failing sample
    reason: str = ""
    deviation: float = 0.0   # [mm] largest TCP distance from the path (singularity avoided)
    deviated: np.ndarray | None = None   # (N,) bool: samples off the path


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
        self.lower = np.asarray(self.chain.lower, dtype=float)
        self.upper = np.asarray(self.chain.upper, dtype=float)
        self.avoid = True        # DR_AVOID: leave the path near a singularity (else refuse)

    def with_tool(self, tool: np.ndarray) -> "Arm":
        """The same chain with another TCP (set_tcp): a new Arm, this one unchanged."""
        arm = Arm(self.model, self.chain_name, self.alg, tool)
        arm.avoid = self.avoid
        return arm

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
                   dt: float, seeded: bool = False, last: bool = True) -> PathIK:
        """IK of every sample to POS_TOL / ROT_TOL, each warm-started from the previous
        solution (the closed-form solutions of the chain next). Fails at the
        first sample without a solution, or where a joint would have to move faster than its
        limit between two samples (a branch flip: the arm could not follow). ``seeded``:
        sample 0 is q_seed itself (a stretch continuing a solved path, which may be off the
        path there); ``last``: the path ends here, so it must end on it. Runs in: the
        caller's thread (an ORB thread), never the EC thread."""
        n = len(pos)
        out = np.empty((n, self.n))
        q = np.asarray(q_seed, dtype=float)
        step_max = self.max_velocity * dt * 1.05 + 1e-9
        deviated = np.zeros(n, dtype=bool)
        worst = 0.0
        if seeded and n:
            out[0] = q
        for k in range(1 if seeded else 0, n):
            if k % YIELD_EVERY == YIELD_EVERY - 1:
                time.sleep(0)       # let the EC thread of this process take the GIL
            target = self.flange_target(pos[k], rot_from_quat(quat[k]))
            res = self.alg.solve_ik(self.model, self.chain_name, target, q_seed=q, restarts=0,
                                    pos_tol=POS_TOL, rot_tol=ROT_TOL)
            if k > 0 and (not res.success or np.any(np.abs(res.q - q) > step_max)):
                # near a singularity the damped step can land on another branch: follow the
                # pose from the previous sample in small steps instead (continuation)
                res = self._continue(pos[k - 1], quat[k - 1], pos[k], quat[k], q) or res
            if not res.success:
                res = self.alg.solve_ik(self.model, self.chain_name, target, q_seed=q,
                                        pos_tol=POS_TOL, rot_tol=ROT_TOL)
            if k > 0 and self.avoid and res.success and np.any(np.abs(res.q - q) > step_max):
                # DR_AVOID: a step within the joints' speed limits towards the pose; the TCP
                # leaves the path for a while and the next samples bring it back
                q_avoid, err = self._limited_step(q, target, step_max)
                if err > AVOID_MAX_MM:
                    return PathIK(False, out[:k], k, f"near a singularity the TCP would leave "
                                  f"the path by {err:.3g} mm (DR_AVOID gives up past "
                                  f"{AVOID_MAX_MM:g} mm)")
                deviated[k] = err > POS_TOL / MM * 10
                worst = max(worst, err)
                out[k] = q = q_avoid
                continue
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
        if last and deviated[-1]:
            return PathIK(False, out, n - 1, f"the motion ends {worst:.3g} mm off its "
                          "target: the singularity is too close to it")
        return PathIK(True, out, deviation=worst, deviated=deviated)

    def _limited_step(self, q: np.ndarray, target: np.ndarray,
                      step_max: np.ndarray) -> tuple[np.ndarray, float]:
        """Damped least-squares steps from q towards the flange pose ``target`` whose sum
        stays within step_max on every joint: (q, TCP distance left [mm] incl. the
        orientation error at AVOID_LEVER)."""
        alg = self.alg
        start = q
        q = np.array(q, dtype=float)
        for _ in range(AVOID_ITERATIONS):
            t, j = alg.chain_fk_jacobian(self.model, self.chain_name, q)
            e = np.concatenate((target[:3, 3] - t[:3, 3],
                                alg.rotation_log(target[:3, :3] @ t[:3, :3].T)))
            dq = j.T @ np.linalg.solve(j @ j.T + AVOID_DAMPING * np.eye(6), e)
            room = step_max * (1.0 - 1e-9) - np.abs(q - start)   # within it after rounding
            scale = np.min(np.where(np.abs(dq) > 1e-15, np.maximum(room, 0.0) /
                                    np.maximum(np.abs(dq), 1e-15), np.inf))
            if scale <= 1e-12:
                break
            q = np.clip(q + dq * min(1.0, scale), self.lower, self.upper)
        t = alg.chain_fk(self.model, self.chain_name, q)
        ep = float(np.linalg.norm(target[:3, 3] - t[:3, 3])) / MM
        er = float(np.linalg.norm(alg.rotation_log(target[:3, :3] @ t[:3, :3].T)))
        return q, ep + er * AVOID_LEVER

    def _continue(self, p0: np.ndarray, q0: np.ndarray, p1: np.ndarray, q1: np.ndarray,
                  seed: np.ndarray) -> Any:
        """IK of pose (p1, quaternion q1) reached from the solution ``seed`` of (p0, q0)
        through SUBSTEPS intermediate poses, each warm-started from the last; the last
        result, or None when an intermediate pose has no solution."""
        q = seed
        qa, qb = np.asarray(q0, dtype=float), np.asarray(q1, dtype=float)
        if float(qa @ qb) < 0:
            qb = -qb
        res = None
        for j in range(1, SUBSTEPS + 1):
            f = j / SUBSTEPS
            quat = (1 - f) * qa + f * qb
            target = self.flange_target(p0 + f * (p1 - p0),
                                        rot_from_quat(quat / np.linalg.norm(quat)))
            res = self.alg.solve_ik(self.model, self.chain_name, target, q_seed=q, restarts=0,
                                    pos_tol=POS_TOL, rot_tol=ROT_TOL)
            if not res.success:
                return None
            q = res.q
        return res

    # -- the DRL motions' seam ----------------------------------------------------------------
    def fk_batch(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(N, n) joint samples [rad] -> TCP positions (N, 3) [mm] and quaternions (N, 4),
        neighbours in one hemisphere. Runs in: any thread but the EC's (vectorised)."""
        t = self.alg.chain_fk_batch(self.model, self.chain_name, np.asarray(q, dtype=float))
        t = t @ self.tool
        return t[:, :3, 3] / MM, same_hemisphere(quats_from_rots(t[:, :3, :3]))

    def solve_knots(self, pos: np.ndarray, quat: np.ndarray, q_seed: np.ndarray,
                    dt: float) -> PathIK:
        """IK of a path sampled at dt that starts and ends at rest: solved exactly at knots
        KNOT_DT apart (every sample when dt >= KNOT_DT, as solve_path), the samples between
        on the C2 cubic spline in time through the knots, starting and ending with zero joint
        velocity. Interpolation is checked where it strays most (half-way between knots): an
        interval whose TCP is off its planned pose by more than SPLINE_POS_TOL /
        SPLINE_ROT_TOL is solved sample by sample instead; then every sample's joint step is
        checked against the joints' speed limits. q[0] is q_seed. At 1 kHz this solves a
        tenth of the samples (IK costs 0.4 to 2 ms a pose here; FK 0.03 ms). Runs in: the
        planning thread, never the EC thread."""
        n = len(pos)
        every = max(1, int(round(KNOT_DT / dt)))
        if every == 1 or n <= 2:
            got = self.solve_path(pos, quat, q_seed, dt)
            if got.ok and n:
                got.q[0] = q_seed
            return got
        idx = np.arange(0, n, every)
        if idx[-1] != n - 1:
            idx = np.append(idx, n - 1)
        knots = self.solve_path(pos[idx], quat[idx], q_seed, dt * every)
        if not knots.ok:
            return PathIK(False, knots.q, int(idx[knots.index]), knots.reason)
        kq = knots.q
        kq[0] = q_seed
        spline = CubicSpline(idx * dt, kq, np.zeros(self.n), np.zeros(self.n))
        q = spline(np.arange(n) * dt)
        q[idx] = kq
        near_singular = np.zeros(len(idx) - 1, dtype=bool)
        if knots.deviated is not None:      # DR_AVOID knots: off the path on purpose
            near_singular = knots.deviated[:-1] | knots.deviated[1:]
        mids = ((idx[:-1] + idx[1:]) // 2)[(np.diff(idx) > 1) & ~near_singular]
        if mids.size:
            fp, fq = self.fk_batch(q[mids])
            ep = np.linalg.norm(fp - pos[mids], axis=1)
            er = 2.0 * np.arccos(np.clip(np.abs(np.sum(fq * quat[mids], axis=1)), 0.0, 1.0))
            for m in mids[(ep > SPLINE_POS_TOL) | (er > SPLINE_ROT_TOL)]:
                a = int(idx[np.searchsorted(idx, m) - 1])
                b = int(idx[np.searchsorted(idx, m)])
                exact = self.solve_path(pos[a:b + 1], quat[a:b + 1], q[a], dt)
                if not exact.ok:
                    return PathIK(False, q[:a + exact.index], a + exact.index, exact.reason)
                q[a:b + 1] = exact.q
        step_max = self.max_velocity * dt * 1.05 + 1e-9
        deviation = knots.deviation
        done_to = 0             # samples before this one were solved one by one
        while True:
            jump = np.abs(np.diff(q, axis=0))
            bad = np.argwhere(jump > step_max)
            if not bad.size:
                return PathIK(True, q, deviation=deviation)
            k, j = int(bad[0, 0]) + 1, int(bad[0, 1])
            i = int(np.searchsorted(idx, k - 1, side="right")) - 1    # knot at or before
            if not self.avoid or int(idx[i]) < done_to:
                return PathIK(False, q[:k], k, f"{self.joint_names[j]} would move "
                              f"{np.degrees(jump[k - 1, j]):.3g} deg in one cycle of "
                              f"{dt:g} s, over its limit of "
                              f"{np.degrees(self.max_velocity[j]):.4g} deg/s "
                              "(singularity or IK branch change)")
            # DR_AVOID knots a cycle's limits apart can still have a spline between them
            # that is too fast: solve that stretch sample by sample, knot to knot, until
            # it meets the knots again
            a = int(idx[i])
            for c in idx[i + 1:]:
                c = int(c)
                got = self.solve_path(pos[a:c + 1], quat[a:c + 1], q[a], dt, seeded=True,
                                      last=c == n - 1)
                if not got.ok:
                    return PathIK(False, q[:a + got.index], a + got.index, got.reason)
                deviation = max(deviation, got.deviation)
                met = c > k and np.all(np.abs(got.q[-1] - q[c]) <= step_max)
                q[a:c + 1] = got.q
                a = c
                if met:
                    break
            done_to = a

    def solution_space(self, q: np.ndarray) -> int:
        """Doosan's solution space 0..7 of a configuration (``sol`` of movejx / ikin, the
        second value of get_current_posx): 4 when the wrist centre is behind joint 1's axis
        (the shoulder reaches back), 2 when the elbow lies above the line from the shoulder
        to the wrist centre, 1 when joint 5 is negative (the wrist flipped). The M1013's
        home posture (0, 0, 90, 0, 90, 0) is 2. Runs in: any thread."""
        f = self.alg.chain_frames(self.model, self.chain_name, np.asarray(q, dtype=float))
        base_z, front = f[0][:3, 2], f[0][:3, 0]
        s, e, w = f[1][:3, 3], f[2][:3, 3], f[4][:3, 3]
        d = w - s
        sol = 4 if float(d @ front) < 0.0 else 0
        dn = d / max(float(np.linalg.norm(d)), 1e-12)
        up = base_z - dn * float(dn @ base_z)
        if float(np.linalg.norm(up)) < 1e-9:          # the arm points straight up or down
            up = front
        if float((e - s) @ up) > 0.0:
            sol |= 2
        if q[4] < 0.0:
            sol |= 1
        return sol

    def solve_in_space(self, p_mm: np.ndarray, r: np.ndarray, sol: int,
                       q_near: np.ndarray) -> tuple[np.ndarray | None, str]:
        """The configuration in solution space ``sol`` that puts the TCP at (p, R): the
        closed-form solutions of the chain (kinematics.analytic) within the joint limits,
        polished on the exact model, of that space, nearest to q_near. (q, "") or (None,
        why). Runs in: any thread but the EC's."""
        target = self.flange_target(np.asarray(p_mm, dtype=float), r)
        chain = self.chain
        s = chain.cache.get("pieper", 0)
        if s == 0:
            s = chain.cache["pieper"] = self.alg.pieper(chain.X, chain.axes)
        if s is None:
            return None, f"chain {self.chain_name!r} has no closed-form solutions"
        best, spaces = None, set()
        near = np.asarray(q_near, dtype=float)
        for x in self.alg.candidates(s, target, chain.tip):
            # the turn of each joint nearest to where it is (limits beyond 180 deg allow two)
            shifted = x + 2 * np.pi * np.round((near - x) / (2 * np.pi))
            ok = (shifted >= self.lower) & (shifted <= self.upper)
            x = self.alg.into_limits(np.where(ok, shifted, x), self.lower, self.upper)
            if not np.all(np.isfinite(x)):
                continue
            res = self.alg.solve_ik(self.model, self.chain_name, target,
                                    q_seed=np.clip(x, self.lower, self.upper), restarts=0,
                                    pos_tol=POS_TOL, rot_tol=ROT_TOL)
            if not res.success or np.abs(res.q - x).max() > 0.05:
                continue
            got = self.solution_space(res.q)
            spaces.add(got)
            if got == sol and (best is None or np.abs(res.q - q_near).max()
                               < np.abs(best - q_near).max()):
                best = res.q
        if best is not None:
            return best, ""
        if not spaces:
            return None, "no IK solution within the joint limits (out of reach or blocked)"
        return None, (f"no IK solution in solution space {sol} within the joint limits "
                      f"(reachable in {', '.join(str(v) for v in sorted(spaces))})")

    def tcp_jacobian(self, q: np.ndarray) -> np.ndarray:
        """(6, n) Jacobian of the TCP: rows vx vy vz [mm/rad], wx wy wz [1] in the base
        frame."""
        q = np.asarray(q, dtype=float)
        t, j = self.alg.chain_fk_jacobian(self.model, self.chain_name, q)
        r = t[:3, :3] @ self.tool[:3, 3]                 # flange origin -> TCP [m]
        jv = j[:3] - np.cross(r, j[3:].T).T
        return np.vstack((jv / MM, j[3:]))


def load_arm(model_spec: str, chain: str, tool: np.ndarray,
             limits: list[float] | None = None,
             speeds: list[float] | None = None) -> Arm | str:
    """An Arm on the Kinematics core, or the reason it is unavailable (a string). ``limits``
    [deg] (each joint of the chain in -limit..limit) and ``speeds`` [deg/s] replace the
    model's for this arm (a model file's URDF values can be tighter than the robot's)."""
    try:
        from rtcf_components.kinematics import algorithms
        from rtcf_components.kinematics.model import load_model
    except ImportError as e:
        return f"the Kinematics core (components/kinematics) is not available: {e}"
    try:
        model = load_model(model_spec)
        if limits or speeds:
            model = with_limits(model, chain, limits, speeds)
        return Arm(model, chain, algorithms, tool)
    except Exception as e:     # ModelError and friends: report, do not crash the component
        return f"arm model {model_spec!r} chain {chain!r} could not be loaded: {e}"


def with_limits(model: Any, chain: str, limits: list[float] | None,
                speeds: list[float] | None) -> Any:
    """The model with chain ``chain``'s joint limits [deg, symmetric] and speeds [deg/s]
    replaced (immutable models: a new one). Raises ValueError on a wrong count."""
    c = model.chain(chain)
    lower, upper = np.array(model.lower), np.array(model.upper)
    vel = np.array(model.max_velocity)
    idx = np.asarray(c.index)
    cl, cu = np.array(c.lower), np.array(c.upper)
    for name, vals in (("joint_limits", limits), ("joint_speeds", speeds)):
        if vals and (len(vals) != len(idx) or not all(float(v) > 0 for v in vals)):
            raise ValueError(f"{name}: expected {len(idx)} values > 0, got {vals}")
    if limits:
        lim = np.radians(np.asarray(limits, dtype=float))
        cl, cu = -lim, lim
        lower[idx], upper[idx] = cl, cu
    if speeds:
        vel[idx] = np.radians(np.asarray(speeds, dtype=float))
    new_chain = dataclasses.replace(c, lower=cl, upper=cu, cache={})
    chains = dict(model.chains)
    chains[chain] = new_chain
    return dataclasses.replace(model, lower=lower, upper=upper, max_velocity=vel,
                               chains=chains)
