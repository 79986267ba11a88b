"""AutoBalancerCore: hrpsys's AutoBalancer without the middleware.

Pure core: imports neither rtcf nor omniORB, reads no clock (one ``step`` is one period).
Metres, radians, seconds; joint vectors in the kinematics model's order (NAO: the DCM's 26
joints).

Modes, as hrpsys's AutoBalancer (rtc/AutoBalancer, ControllerMode):

* IDLE: the output is the input joint reference ``q_ref`` untouched.
* SYNC_TO_ABC (``start``): the balancer takes the feet and the torso where ``q_ref`` puts
  them, then blends its own leg angles in over ``transition_time`` (minimum jerk).
* ABC: the legs are the balancer's: each period the gait generator (gait.py) gives the CoM
  (ZMP preview control) and the feet; the torso is placed so the whole-body CoM (com.py, all
  26 joints) is over the planned CoM, its yaw the mean of the feet's, its roll, pitch and
  height those it had at the start; both legs are solved together (legik.py: the two hip
  yaw-pitch joints are one motor). Head and arms follow ``q_ref``.
* SYNC_TO_IDLE (``stop``, only while standing): the output blends back to ``q_ref``.

World frame: where the stance (the middle of the soles, on the ground, x the mean heading)
was at the first ``start``; it persists across stop / start (odometry: the feet are assumed
not to slip while the balancer is idle).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .footsteps import (LEGS, Footstep, FootstepError, Pose2, StrideLimits, check_steps,
                        first_leg_for, mid_pose, other, plan_to, wrap)
from .gait import GaitGenerator, GaitParams, minimum_jerk
from .legik import LegIK, invert, pose_matrix
from .lipm import preview_gains

IDLE, ABC, SYNC_TO_IDLE, SYNC_TO_ABC = "MODE_IDLE", "MODE_ABC", "MODE_SYNC_TO_IDLE", \
    "MODE_SYNC_TO_ABC"


class BalancerError(ValueError):
    """A request the balancer refuses (bad argument, wrong mode); nothing changed."""


@dataclass(frozen=True)
class BalancerConfig:
    """Everything fixed at construction (parameters that change take effect later)."""

    dt: float = 0.01                    # [s]
    transition_time: float = 1.0        # [s] IDLE <-> ABC blend
    preview_horizon: float = 1.6        # [s]
    preview_r: float = 1e-6             # jerk weight (the ZMP error weighs 1)
    ik_pos_tol: float = 1e-3            # [m] a leg IK worse than this counts as failed
    ik_rot_tol: float = 1e-2            # [rad] ... or than this (the sole yaw at its weight)
    com_tol: float = 2e-3               # [m] a second CoM pass when the first is off by more
    gravity: float = 9.81               # [m/s^2] of the LIPM


def _rpy_of(R: np.ndarray) -> tuple[float, float, float]:
    """Roll, pitch, yaw with R = Rz(yaw) Ry(pitch) Rx(roll)."""
    yaw = math.atan2(R[1, 0], R[0, 0])
    pitch = math.atan2(-R[2, 0], math.hypot(R[0, 0], R[1, 0]))
    roll = math.atan2(R[2, 1], R[2, 2])
    return roll, pitch, yaw


def stance_of(TL: np.ndarray, TR: np.ndarray) -> np.ndarray:
    """The stance frame in the torso frame: origin the middle of the soles, z the soles'
    mean normal, x the mean heading."""
    z = TL[:3, 2] + TR[:3, 2]
    z /= np.linalg.norm(z)
    x = TL[:3, 0] + TR[:3, 0]
    x -= z * (x @ z)
    x /= np.linalg.norm(x)
    S = np.eye(4)
    S[:3, 0], S[:3, 1], S[:3, 2] = x, np.cross(z, x), z
    S[:3, 3] = 0.5 * (TL[:3, 3] + TR[:3, 3])
    return S


class AutoBalancerCore:
    """See the module doc. Runs in: owner thread (the component's EC thread).

    After ``step``: ``q`` (n,) the output joint angles; ``com_ref`` (3,) world; ``zmp_ref``
    (3,) world (on the ground); ``base_pos`` (3,), ``base_rpy`` (3,) the torso's planned
    pose in the world; ``contact`` {"lleg", "rleg": bool}; ``walking``; ``mode``;
    ``ik_failures`` (periods whose leg IK missed by more than ik_pos_tol or ik_rot_tol).
    """

    def __init__(self, kin_model, mass_model, limits: StrideLimits,
                 params: GaitParams = GaitParams(), config: BalancerConfig = BalancerConfig()):
        from .com import ComCalculator
        params.check()
        self.kin = kin_model
        self.cfg = config
        self.limits = limits
        self.params = params
        self.n = len(kin_model.joint_names)
        self.com_calc = ComCalculator(kin_model, mass_model)
        self.ik = LegIK(kin_model)
        self.li = np.asarray(kin_model.chain("LLeg").index)
        self.ri = np.asarray(kin_model.chain("RLeg").index)
        self.legs_idx = np.concatenate((self.li, self.ri))
        self.q = np.zeros(self.n)
        self.q_abc = np.zeros(self.n)
        self.q_legs = np.zeros(12)
        self.com_ref = np.zeros(3)
        self.zmp_ref = np.zeros(3)
        self.base_pos = np.zeros(3)
        self.base_rpy = np.zeros(3)
        self.contact = {"lleg": True, "rleg": True}
        self.mode = IDLE
        self.ik_failures = 0
        self._blend = 0.0                      # 0: q_ref, 1: the balancer's legs
        self._blend_from = 0.0
        self._blend_k = 0
        self._blend_n = 1
        self._zc = 0.0
        self._torso_z = 0.0
        self._torso_roll = self._torso_pitch = 0.0
        self._com_off = np.zeros(3)            # CoM - torso origin, torso frame
        self._world_stance: Pose2 | None = None
        self.gait: GaitGenerator | None = None
        self._gains_for: tuple | None = None
        self._gains = None
        self._T_torso = np.eye(4)
        self._T_inv = np.eye(4)
        self._TL = np.eye(4)
        self._TR = np.eye(4)
        self._tmp = np.eye(4)
        self._torso_view = self._T_torso.view()
        self._torso_view.flags.writeable = False

    # -- state -------------------------------------------------------------------------------
    @property
    def torso_transform(self) -> np.ndarray:
        """The torso's pose (4x4) in the frame of the feet and ZMP references, from the last
        ``update`` (a read-only view, kept up to date in place)."""
        return self._torso_view

    @property
    def walking(self) -> bool:
        return self.gait is not None and self.mode in (ABC, SYNC_TO_ABC) and self.gait.walking

    @property
    def active(self) -> bool:
        """The balancer controls the legs (ABC or either transition)."""
        return self.mode != IDLE

    def feet(self) -> dict:
        """Each foot's planar pose in the world (the balancer's reference)."""
        if self.gait is None:
            raise BalancerError("the AutoBalancer has not been started")
        return dict(self.gait.feet)

    # -- mode changes ------------------------------------------------------------------------
    def start(self, q_ref: np.ndarray) -> None:
        """startAutoBalancer: take the feet and torso of ``q_ref``, blend in. Raises
        BalancerError when already started or the legs of q_ref are not standing."""
        if self.mode in (ABC, SYNC_TO_ABC):
            raise BalancerError("the AutoBalancer is already started")
        q_ref = self._check_q(q_ref)
        from rtcf_components.kinematics.algorithms import chain_fk
        TL = chain_fk(self.kin, "LLeg", q_ref[self.li])
        TR = chain_fk(self.kin, "RLeg", q_ref[self.ri])
        S = stance_of(TL, TR)
        if abs(float(np.dot(TL[:3, 2], TR[:3, 2]))) < 0.99 or \
                abs(float((TL[:3, 3] - TR[:3, 3]) @ S[:3, 2])) > 0.005:
            raise BalancerError("the feet of the joint reference are not both flat on one "
                                "plane (stand the robot up first, e.g. StandInit)")
        Sinv = invert(S)
        torso_in_stance = Sinv                       # the torso frame in the stance frame
        roll, pitch, _ = _rpy_of(torso_in_stance[:3, :3])
        self._torso_roll, self._torso_pitch = roll, pitch
        self._torso_z = float(torso_in_stance[2, 3])
        if self._world_stance is None:
            self._world_stance = Pose2(0.0, 0.0, 0.0)
        ws = self._world_stance
        feet = {}
        for leg, T in (("lleg", TL), ("rleg", TR)):
            F = Sinv @ T                              # the sole in the stance frame
            feet[leg] = ws.compose(Pose2(float(F[0, 3]), float(F[1, 3]),
                                         math.atan2(F[1, 0], F[0, 0])))
        # torso in the world: the stance's world pose times the torso in the stance
        Ws = pose_matrix(ws.x, ws.y, 0.0, 0.0, 0.0, ws.theta)
        T_torso = Ws @ torso_in_stance
        com_t = self.com_calc.com(q_ref).copy()
        self._com_off[:] = com_t
        com_w = T_torso[:3, :3] @ com_t + T_torso[:3, 3]
        self._zc = float(com_w[2])
        gains = self._preview_gains(self._zc)
        self.gait = GaitGenerator(gains, self.params, self.limits, feet, com_w[:2])
        self.q_legs[:6] = q_ref[self.li]
        self.q_legs[6:] = q_ref[self.ri]
        self.q_legs[6] = self.q_legs[0]
        np.copyto(self.q_abc, q_ref)
        self.com_ref[:] = com_w
        self._begin_blend(1.0)
        self.mode = SYNC_TO_ABC

    def stop(self) -> None:
        """stopAutoBalancer: blend back to q_ref. Refused while walking."""
        if self.mode not in (ABC, SYNC_TO_ABC):
            raise BalancerError("the AutoBalancer is not started")
        if self.walking:
            raise BalancerError("the robot is walking: stop it first (goStop)")
        self._world_stance = mid_pose(self.gait.feet["lleg"], self.gait.feet["rleg"])
        self._begin_blend(0.0)
        self.mode = SYNC_TO_IDLE

    def _begin_blend(self, to: float) -> None:
        self._blend_from = self._blend
        self._blend_to = to
        self._blend_k = 0
        self._blend_n = max(1, int(round(self.cfg.transition_time / self.cfg.dt)))

    def _preview_gains(self, zc: float):
        key = (round(zc, 4), self.cfg.gravity, self.cfg.dt)
        if self._gains is None or self._gains_for != key:
            self._gains = preview_gains(self.cfg.dt, zc, self.cfg.preview_horizon,
                                        r=self.cfg.preview_r, g=self.cfg.gravity)
            self._gains_for = key
        return self._gains

    def _check_q(self, q) -> np.ndarray:
        q = np.asarray(q, dtype=float)
        if q.shape != (self.n,) or not np.all(np.isfinite(q)):
            raise BalancerError(f"joint reference: expected {self.n} finite angles, got "
                                f"shape {q.shape}")
        return q

    # -- walking requests (validated completely before anything changes) ---------------------
    def _need_started(self, op: str) -> GaitGenerator:
        if self.mode not in (ABC, SYNC_TO_ABC) or self.gait is None:
            raise BalancerError(f"{op}: the AutoBalancer is not started "
                                f"(startAutoBalancer first)")
        return self.gait

    def plan_go_pos(self, x: float, y: float, theta: float,
                    limits: StrideLimits | None = None, step_time: float | None = None,
                    step_height: float | None = None) -> list[Footstep]:
        """The footsteps of goPos(x, y, theta) [m, m, rad] from the planned stance (the
        feet after every queued step). Raises BalancerError; changes nothing."""
        gg = self._need_started("goPos")
        self._check_goal("goPos", x, y, theta)
        lim = limits or self.limits
        feet = gg.planned_feet
        start = mid_pose(feet["lleg"], feet["rleg"])
        goal = start.compose(Pose2(float(x), float(y), float(theta)))
        try:
            return plan_to(feet, goal, first_leg_for(y, theta), lim,
                           step_time or self.params.step_time,
                           self.params.step_height if step_height is None else step_height)
        except FootstepError as e:
            raise BalancerError(f"goPos: {e}") from None

    def go_pos(self, x: float, y: float, theta: float, **kw) -> int:
        """Walk to (x, y, theta) relative to the planned stance; returns the step count."""
        steps = self.plan_go_pos(x, y, theta, **kw)
        gg = self.gait
        gg.velocity = None
        if steps:
            gg.queue(steps)
        return len(steps)

    def walk_to(self, x: float, y: float, theta: float, limits: StrideLimits | None = None,
                step_time: float | None = None, step_height: float | None = None) -> int:
        """NAOqi's moveTo: to (x, y, theta) [m, m, rad] from where the robot is now (the
        middle of the reference feet this period), replacing every step after the one under
        way. Returns the step count. Raises BalancerError; changes nothing then."""
        gg = self._need_started("moveTo")
        self._check_goal("moveTo", x, y, theta)
        lim = limits or self.limits
        now = mid_pose(gg.feet["lleg"], gg.feet["rleg"])
        goal = now.compose(Pose2(float(x), float(y), float(theta)))
        plan, feet = gg.truncation()
        last = plan[2] if plan is not None else None
        rel = mid_pose(feet["lleg"], feet["rleg"]).relative(goal)
        first = other(last) if last is not None else first_leg_for(rel.y, rel.theta)
        try:
            steps = plan_to(feet, goal, first, lim, step_time or self.params.step_time,
                            self.params.step_height if step_height is None else step_height)
        except FootstepError as e:
            raise BalancerError(f"moveTo: {e}") from None
        gg.velocity = None
        gg.truncate()
        if steps:
            gg.queue(steps)
        return len(steps)

    @staticmethod
    def _check_goal(op: str, x, y, theta) -> None:
        for k, v in (("x", x), ("y", y), ("theta", theta)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise BalancerError(f"{op}: {k}: expected a finite number, got {v!r}")
        if math.hypot(x, y) > 100.0 or abs(theta) > 100.0 * math.pi:
            raise BalancerError(f"{op}: goal ({x:g} m, {y:g} m, {math.degrees(theta):g} "
                                f"deg) is too far for one walk (at most 100 m, 50 turns)")

    def set_footsteps(self, steps: list[Footstep]) -> None:
        """hrpsys setFootSteps: ``steps[0]`` is the current support foot (it fixes the
        frame: every step is moved by the transform that takes steps[0] onto that foot's
        pose), the others are landings. Refused while walking, or when a step is beyond the
        stride limits (the whole list; nothing is queued)."""
        gg = self._need_started("setFootSteps")
        if gg.walking:
            raise BalancerError("setFootSteps: the robot is walking (wait for the steps, or "
                                "goStop)")
        if len(steps) < 2:
            raise BalancerError(f"setFootSteps: expected the initial support foot and at "
                                f"least one step, got {len(steps)} footstep(s)")
        first = steps[0]
        if first.leg not in LEGS:
            raise BalancerError(f"setFootSteps: step 0: leg {first.leg!r}: expected 'lleg' "
                                f"or 'rleg'")
        actual = gg.feet[first.leg]
        fix = actual.compose(first.pose.inverse())
        moved = [replace(s, pose=fix.compose(s.pose)) for s in steps[1:]]
        try:
            check_steps(gg.feet, moved, self.limits)
        except FootstepError as e:
            raise BalancerError(f"setFootSteps: {e}") from None
        if moved[0].leg == first.leg:
            raise BalancerError(f"setFootSteps: step 1 moves {first.leg}, the support foot "
                                f"of step 0: the legs must alternate")
        gg.queue(moved)

    def go_velocity(self, vx: float, vy: float, vtheta: float) -> None:
        gg = self._need_started("goVelocity")
        for k, v in (("vx", vx), ("vy", vy), ("vth", vtheta)):
            if not isinstance(v, (int, float)) or not math.isfinite(v):
                raise BalancerError(f"goVelocity: {k}: expected a finite number, got {v!r}")
        gg.set_velocity(vx, vy, vtheta)

    def go_stop(self) -> None:
        self._need_started("goStop").stop()

    def set_params(self, params: GaitParams, limits: StrideLimits) -> None:
        """New gait timing and stride limits, for steps planned from now on."""
        params.check()
        self.params = params
        self.limits = limits
        if self.gait is not None:
            self.gait.set_params(params)
            self.gait.limits = limits

    # -- the cycle ---------------------------------------------------------------------------
    def step(self, q_ref: np.ndarray) -> np.ndarray:
        """One period: returns ``q`` (the output joint angles). ``q_ref`` must be finite
        (checked by the caller). Runs in: owner thread."""
        if self.mode == IDLE:
            np.copyto(self.q, q_ref)
            return self.q
        gg = self.gait
        gg.tick()
        self._solve(q_ref)
        if self.mode in (SYNC_TO_ABC, SYNC_TO_IDLE):
            self._blend_k += 1
            s = minimum_jerk(self._blend_k / self._blend_n)
            self._blend = self._blend_from + s * (self._blend_to - self._blend_from)
            if self._blend_k >= self._blend_n:
                self._blend = self._blend_to
                self.mode = ABC if self._blend_to >= 1.0 else IDLE
        np.copyto(self.q, q_ref)
        b = self._blend
        idx = self.legs_idx
        self.q[idx] = (1.0 - b) * q_ref[idx] + b * self.q_abc[idx]
        if self.mode == IDLE:
            self.gait.velocity = None
        return self.q

    def _solve(self, q_ref: np.ndarray) -> None:
        """Torso pose and leg angles for this period's CoM and feet."""
        gg = self.gait
        fl, fr = gg.feet["lleg"], gg.feet["rleg"]
        yaw = wrap(fl.theta + 0.5 * wrap(fr.theta - fl.theta))
        self.com_ref[0], self.com_ref[1] = gg.com[0, 0], gg.com[0, 1]
        self.com_ref[2] = self._zc
        self.zmp_ref[0], self.zmp_ref[1], self.zmp_ref[2] = gg.zmp_ref[0], gg.zmp_ref[1], 0.0
        pose_matrix(fl.x, fl.y, gg.foot_z["lleg"], 0.0, 0.0, fl.theta, self._TL)
        pose_matrix(fr.x, fr.y, gg.foot_z["rleg"], 0.0, 0.0, fr.theta, self._TR)
        q = self.q_abc
        np.copyto(q, q_ref)
        T = self._T_torso
        for _ in range(2):
            pose_matrix(0.0, 0.0, self._torso_z, self._torso_roll, self._torso_pitch, yaw, T)
            off = T[:3, :3] @ self._com_off
            T[0, 3] = self.com_ref[0] - off[0]
            T[1, 3] = self.com_ref[1] - off[1]
            invert(T, self._T_inv)
            ep, er = self.ik.solve(self._T_inv @ self._TL, self._T_inv @ self._TR, self.q_legs)
            q[self.li] = self.q_legs[:6]
            q[self.ri] = self.q_legs[6:]
            new_off = self.com_calc.com(q)
            moved = float(np.abs(new_off[:2] - self._com_off[:2]).max())
            np.copyto(self._com_off, new_off)
            if moved < self.cfg.com_tol:
                break
        if ep > self.cfg.ik_pos_tol or er > self.cfg.ik_rot_tol:
            self.ik_failures += 1
        self.base_pos[:] = T[:3, 3]
        self.base_rpy[:] = (self._torso_roll, self._torso_pitch, yaw)
        self.contact = dict(gg.contact)
