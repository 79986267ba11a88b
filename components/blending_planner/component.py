"""The BlendingPlanner RT component: the shell around the planner core (spec section 4)."""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rtcf import Component, Param, TimedDoubleSeq, TimedPose3D
from rtcf.datatypes import stamp
from rtcf.services import ServicePort

from .arm import Arm, load_arm
from .geometry import pose_from_posx, posx_from_pose, quat_from_rot, rot_from_quat, rpy_from_rot
from .planner import USER_MAX, USER_MIN, WORLD, Plan, Samples

MM = 1e-3


@dataclass
class Motion:
    """A started motion: the sampled plan, the joint path, and where the EC is in it."""
    plan: Plan
    samples: Samples
    q: np.ndarray | None          # (N, n) [rad] or None without an arm
    k: int = 0                    # index of the sample written last
    done: threading.Event = field(default_factory=threading.Event)
    outcome: str = ""             # "" completed, else why it ended early
    stopping: bool = False


def parse_user_frames(text: str) -> dict[int, np.ndarray]:
    """``"101: x,y,z,A,B,C; 102: ..."`` -> {101: 4x4 [mm]}. Raises ValueError naming the
    bad entry."""
    frames: dict[int, np.ndarray] = {}
    for entry in (e.strip() for e in text.split(";")):
        if not entry:
            continue
        num, sep, rest = entry.partition(":")
        try:
            fid = int(num)
            vals = [float(v) for v in rest.split(",")]
        except ValueError:
            raise ValueError(f"user_frames entry {entry!r}: expected 'id: x,y,z,A,B,C'") from None
        if not sep or len(vals) != 6 or not USER_MIN <= fid <= USER_MAX:
            raise ValueError(f"user_frames entry {entry!r}: expected 'id: x,y,z,A,B,C' with "
                             f"id {USER_MIN}..{USER_MAX}")
        frames[fid] = transform(vals)
    return frames


def hermite_joints(s_new: np.ndarray, s: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Joint angles at path positions ``s_new`` [mm] from solved samples (s, q): cubic
    Hermite in s with central-difference slopes. Linear interpolation strayed from the path
    by its chord error (1.3 um at 250 mm/s, growing with the square of the sample spacing);
    this one by its fourth power. Runs in: any thread (vectorised, once per stop)."""
    n = len(s)
    if n < 2:
        return np.repeat(q[:1], len(s_new), axis=0)
    i = np.clip(np.searchsorted(s, s_new, side="right") - 1, 0, n - 2)
    ds = s[i + 1] - s[i]
    safe = np.where(ds > 0, ds, 1.0)
    t = np.where(ds > 0, (s_new - s[i]) / safe, 0.0)[:, None]
    lo, hi = np.maximum(np.arange(n) - 1, 0), np.minimum(np.arange(n) + 1, n - 1)
    span = s[hi] - s[lo]
    slope = (q[hi] - q[lo]) / np.where(span > 0, span, 1.0)[:, None]
    slope[span <= 0] = 0.0
    d = ds[:, None]
    t2, t3 = t * t, t * t * t
    return ((2 * t3 - 3 * t2 + 1) * q[i] + (t3 - 2 * t2 + t) * d * slope[i]
            + (-2 * t3 + 3 * t2) * q[i + 1] + (t3 - t2) * d * slope[i + 1])


def transform(posx: list[float]) -> np.ndarray:
    p, r = pose_from_posx(posx)
    t = np.eye(4)
    t[:3, :3], t[:3, 3] = r, p
    return t


class BlendingPlanner(Component):
    """Doosan MoveBlending (moveb / amoveb): blended line and circle paths at constant
    speed, driving a 6-DOF arm (the Doosan M1013 model) through inverse kinematics.

    | port | type | unit | meaning |
    |---|---|---|---|
    | tcpPose (out) | TimedPose3D | m, rad | TCP reference in the base frame, every cycle (held at rest); orientation as roll, pitch, yaw with R = Rz(yaw) Ry(pitch) Rx(roll) |
    | qRef (out) | TimedDoubleSeq | rad | joint reference of the arm chain (joint1..joint6) from IK, every cycle; not written when no arm model is available (logged once) |
    | BlendingPlannerService | service | - | Doosan::BlendingPlannerService (idl/BlendingPlannerService.idl), instance service0 |

    The whole sampled path is solved through IK when a request is made (in the caller's
    thread); a failure anywhere refuses the request before anything moves. Each cycle then
    writes the next precomputed sample: the EC thread does no planning and no IK.
    """

    type_name = "BlendingPlanner"
    category = "doosan"
    model = Param(str, "doosan_m1013", read_only=True, doc="arm model for the Kinematics core")
    chain = Param(str, "arm", read_only=True, doc="kinematic chain of the model")
    use_arm = Param(bool, True, read_only=True,
                    doc="solve IK and drive qRef (NO: TCP pose output only)")
    initial_joints = Param(list, [0.0, 0.0, 90.0, 0.0, 90.0, 0.0], unit="deg", read_only=True,
                           doc="arm joint angles at start; the start TCP pose is their FK")
    initial_pose = Param(list, [], unit="mm, deg", read_only=True,
                         doc="start TCP pose x,y,z,A,B,C when there is no arm (or to check: "
                             "empty = FK of initial_joints, else [600,0,600,0,180,0])")
    tcp_offset = Param(list, [0.0] * 6, unit="mm, deg", read_only=True,
                       doc="TCP in the flange frame, x,y,z,A,B,C")
    world_frame = Param(list, [0.0] * 6, unit="mm, deg", read_only=True,
                        doc="pose of the WORLD frame (ref 2) in the base frame")
    user_frames = Param(str, "", read_only=True,
                        doc="user frames for ref 101..200: 'id: x,y,z,A,B,C; ...' in base")
    max_samples = Param(int, 200000, bounds=(10, 10_000_000), read_only=True,
                        doc="longest motion in cycles (memory bound of a plan)")

    # -- lifecycle (EC thread unless stated) -------------------------------------------------
    def on_initialize(self) -> None:
        """Runs in: the manager's thread, before any EC."""
        for name in ("initial_joints", "tcp_offset", "world_frame"):
            if len(getattr(self, name)) != 6:
                raise ValueError(f"{self.instance_name}: parameter {name} needs 6 values, got "
                                 f"{getattr(self, name)}")
        self.frames = parse_user_frames(self.user_frames)
        self.frames[WORLD] = transform(self.world_frame)
        tool = transform(self.tcp_offset)
        tool[:3, 3] *= MM
        self.arm: Arm | None = None
        self.arm_reason = "use_arm is NO"
        if self.use_arm:
            got = load_arm(self.model, self.chain, tool)
            if isinstance(got, str):
                self.arm_reason = got
            else:
                self.arm = got
        if self.arm is not None:
            self.q = np.radians(np.asarray(self.initial_joints, dtype=float))
            p, r = self.arm.tcp_pose(self.q)
        else:
            self.q = None
            self.log.warning("%s: qRef is not written: %s", self.instance_name, self.arm_reason)
            p, r = pose_from_posx(self.initial_pose or [600.0, 0, 600.0, 0, 180.0, 0])
        if self.arm is not None and self.initial_pose:
            want_p, want_r = pose_from_posx(self.initial_pose)
            if np.linalg.norm(want_p - p) > 1e-3 or np.abs(want_r - r).max() > 1e-6:
                self.log.warning("%s: initial_pose %s differs from the FK of initial_joints %s;"
                                 " using the FK", self.instance_name, self.initial_pose,
                                 [round(v, 3) for v in posx_from_pose(p, r)])
        self.pose_p, self.pose_r = p, r
        self.pose_q = quat_from_rot(r)
        self.motion: Motion | None = None
        self.last_plan: tuple[Plan, Samples] | None = None
        self.pose_out = self.add_out_port("tcpPose", TimedPose3D)
        self.q_out = self.add_out_port("qRef", TimedDoubleSeq)
        if self.arm is not None:
            self.q_out.value.data = np.array(self.q)
        from .service import BlendingPlannerServiceImpl   # needs the compiled stubs
        self.service = BlendingPlannerServiceImpl(self)
        port = self.add_service_port(ServicePort("BlendingPlannerService"))
        port.provide("service0", "BlendingPlannerService", self.service)

    def on_deactivated(self, ec: Any) -> None:
        self._finish("the component was deactivated")

    def on_aborting(self, ec: Any) -> None:
        self._finish("the component went to ERROR")

    def on_execute(self, ec: Any) -> None:
        """Runs in: EC thread. The next sample of the running motion, or the pose at rest."""
        m = self.motion
        if m is not None:
            k = m.k = min(m.k + 1, len(m.samples) - 1)
            sm = m.samples
            self.pose_p = sm.pos[k]
            self.pose_q = sm.quat[k]
            if m.q is not None:
                self.q = m.q[k]
            if k == len(sm) - 1:
                self.pose_r = rot_from_quat(sm.quat[k])
                self._finish("stopped by stop()" if m.stopping else "")
        self._write(ec.planned)

    def _write(self, t: float) -> None:
        v = self.pose_out.value
        p = self.pose_p
        v.data.position.x, v.data.position.y, v.data.position.z = p[0] * MM, p[1] * MM, p[2] * MM
        o = v.data.orientation
        o.r, o.p, o.y = rpy_from_rot(rot_from_quat(self.pose_q))
        stamp(v, t)
        self.pose_out.write()
        if self.arm is not None:
            np.copyto(self.q_out.value.data, self.q)
            stamp(self.q_out.value, t)
            self.q_out.write()

    def _finish(self, outcome: str) -> None:
        """Runs in: EC thread, once per motion. At rest the pose is the one the joints give
        (FK of the last joint reference, within 1e-9 m of the plan after a normal end; after
        a stop the joints between two solved samples are interpolated): what the port
        holds, what getTcpPose reports and where the next motion is planned from."""
        m, self.motion = self.motion, None
        if m is not None:
            if self.arm is not None and self.q is not None:
                self.pose_p, self.pose_r = self.arm.tcp_pose(self.q)
                self.pose_q = quat_from_rot(self.pose_r)
            else:
                self.pose_r = rot_from_quat(self.pose_q)
            m.outcome = outcome
            m.done.set()

    def cycle_period(self) -> float | None:
        """[s] period of the EC that runs this component, None if there is none."""
        ec = self._primary_ec
        return None if ec is None else ec.period

    def clock_is_stepped(self) -> bool:
        ec = self._primary_ec
        return ec is not None and not ec.clock_is_real()

    # -- commands run in the EC thread (posted by the servant) --------------------------------
    def snapshot(self) -> tuple[bool, np.ndarray, np.ndarray, np.ndarray | None]:
        """(busy, p [mm], R, q [rad] or None) of the current reference. Runs in: EC thread."""
        busy = self.motion is not None
        q = None if self.q is None else np.array(self.q)
        return busy, np.array(self.pose_p), rot_from_quat(self.pose_q), q

    def start(self, motion: Motion, p0: np.ndarray) -> str:
        """Start ``motion`` if nothing moved since it was planned from p0; "" or the reason.
        Runs in: EC thread."""
        if self.motion is not None:
            return "a motion is already running (Doosan: wait for an amoveb to end)"
        if np.linalg.norm(self.pose_p - p0) > 1e-9:
            return "the TCP moved while the request was planned"
        self.motion = motion
        self.last_plan = (motion.plan, motion.samples)
        return ""

    def request_stop(self) -> bool:
        """Decelerate along the path at the plan's acceleration from the current sample.
        Runs in: EC thread (a few small vectorised operations, once)."""
        m = self.motion
        if m is None:
            return False
        if m.stopping:
            return True
        sm, k, plan = m.samples, m.k, m.plan
        s0, v0 = float(sm.s[k]), float(sm.speed[k])
        a, dt = plan.a, sm.dt
        t_stop = v0 / a
        n = max(1, int(math.ceil(t_stop / dt - 1e-9)))
        t = np.minimum(np.arange(1, n + 1) * dt, t_stop)
        s = np.minimum(s0 + v0 * t - 0.5 * a * t * t, plan.length)
        s = np.maximum.accumulate(np.maximum(s, s0))
        if s[-1] >= sm.s[-1] - 1e-9:          # already in the final ramp: it ends the motion
            return True
        pos, quat = np.empty((n + 1, 3)), np.empty((n + 1, 4))
        s_all = np.concatenate(([s0], s))
        plan.positions(s_all, pos)
        plan.orientations(s_all, quat)
        speed = np.concatenate(([v0], np.maximum(v0 - a * t, 0.0)))
        t_all = np.concatenate(([sm.t[k]], sm.t[k] + t))
        q = None
        if m.q is not None:                   # joints between the IK-checked samples
            q = hermite_joints(s_all, sm.s, m.q)
        m.samples = Samples(dt, t_all, s_all, speed, pos, quat)
        m.q, m.k, m.stopping = q, 0, True
        return True
