"""The BlendingPlanner RT component: the shell around the planner cores (Doosan's blended
moves and the DRL motions of docs/doosan.md)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rtcf import CheckContext, Component, Param, ReadStatus, TimedDoubleSeq, TimedPose3D
from rtcf.errors import show_value
from rtcf.datatypes import stamp
from rtcf.services import ServicePort

from .arm import Arm, load_arm
from .geometry import pose_from_posx, posx_from_pose, rot_from_quat, rpy_from_rot
from .motion import Settings
from .planner import USER_MAX, USER_MIN, WORLD, Plan, Samples
from .stream import Layer, Stream
from .worker import InProcess, PlanWorker

MM = 1e-3

# looked up once: an enum member's lookup through its class costs about as much as a call
_NEW = ReadStatus.NEW


@dataclass
class Motion:
    """A started moveb: the sampled plan, the joint path, and how it ended. It listens to
    its layer of the stream (EC thread)."""
    plan: Plan
    samples: Samples
    q: np.ndarray | None          # (N, n) [rad] or None without an arm
    done: threading.Event = field(default_factory=threading.Event)
    outcome: str = ""             # "" completed, else why it ended early
    comp: Any = None
    layer: Any = None             # its layer in the stream, once started

    @property
    def k(self) -> int:
        """Index of the sample played last."""
        return 0 if self.layer is None else self.layer.position()[0]

    # the trajectory view the stream plays
    @property
    def pos(self) -> np.ndarray:
        return self.samples.pos

    @property
    def quat(self) -> np.ndarray:
        return self.samples.quat

    @property
    def dt(self) -> float:
        return self.samples.dt

    @property
    def t_acc(self) -> float:
        return self.plan.t_acc

    @property
    def blend_k(self) -> int:
        return len(self.samples) - 1

    # listener of its layer (EC thread)
    def started(self, layer: Layer) -> None:
        self.layer = layer

    def blending(self, layer: Layer) -> None:
        pass

    def finished(self, layer: Layer, completed: bool) -> None:
        if self.comp is not None and self.comp.motion is self:
            self.comp.motion = None
        if not completed and not self.outcome:
            self.outcome = "stopped by stop()"
        self.done.set()


def parse_poses(text: str, what: str, keys: Any = int) -> dict:
    """``"key: x,y,z,A,B,C; ..."`` -> {key: posx list}. Raises ValueError naming the bad
    entry."""
    out: dict = {}
    for entry in (e.strip() for e in text.split(";")):
        if not entry:
            continue
        key, sep, rest = entry.partition(":")
        try:
            k = keys(key.strip())
            vals = [float(v) for v in rest.split(",")]
        except ValueError:
            raise ValueError(f"{what} entry {entry!r}: expected 'key: x,y,z,A,B,C'") from None
        if not sep or len(vals) != 6 or not k:
            raise ValueError(f"{what} entry {entry!r}: expected 'key: x,y,z,A,B,C'")
        out[k] = vals
    return out


def parse_user_frames(text: str) -> dict[int, np.ndarray]:
    """``"101: x,y,z,A,B,C; 102: ..."`` -> {101: 4x4 [mm]}. Raises ValueError naming the bad
    entry."""
    frames: dict[int, np.ndarray] = {}
    for fid, vals in parse_poses(text, "user_frames").items():
        if not USER_MIN <= fid <= USER_MAX:
            raise ValueError(f"user_frames entry {fid}: expected 'id: x,y,z,A,B,C' with id "
                             f"{USER_MIN}..{USER_MAX}")
        frames[fid] = transform(vals)
    return frames


def transform(posx: list[float]) -> np.ndarray:
    p, r = pose_from_posx(posx)
    t = np.eye(4)
    t[:3, :3], t[:3, 3] = r, p
    return t


class BlendingPlanner(Component):
    """Doosan's motions on a 6-DOF arm (the Doosan M1013 model): MoveBlending (moveb /
    amoveb: blended line and circle paths at constant speed) and the DRL motion API (movej,
    movel, movec, movesj, movesx, movejx, move_spiral, move_periodic, move_home with their
    radius blending, stop, speed override), through inverse kinematics.

    | port | type | unit | meaning |
    |---|---|---|---|
    | tcpPose (out) | TimedPose3D | m, rad | TCP reference in the base frame, every cycle (held at rest) while connected; orientation as roll, pitch, yaw with R = Rz(yaw) Ry(pitch) Rx(roll) |
    | qRef (out) | TimedDoubleSeq | rad | joint reference of the arm chain (joint1..joint6), every cycle; not written when no arm model is available (logged once) |
    | q (in) | TimedDoubleSeq | rad | measured joints (optional): get_current_posj / posx read them; the reference when not connected |
    | dq (in) | TimedDoubleSeq | rad/s | measured joint velocity (optional): get_current_velj / velx |
    | BlendingPlannerService | service | - | Doosan::BlendingPlannerService (idl/BlendingPlannerService.idl), instance service0 |

    Every motion is planned and its whole path solved through IK outside the cycle, in a
    worker process of the component's own (worker.py; with plan_in_worker NO, moveb in the
    caller's thread and the DRL motions in the component's planning thread); a failure
    anywhere refuses it before anything moves. Each cycle then plays the next precomputed
    sample of every running motion (stream.py): the EC thread does no planning and no IK.
    """

    type_name = "BlendingPlanner"
    category = "doosan"
    model = Param(str, "doosan_m1013", read_only=True, doc="arm model for the Kinematics core")
    chain = Param(str, "arm", read_only=True, doc="kinematic chain of the model")
    joint_limits = Param(list, [], elem=float, unit="deg", read_only=True,
                         doc="each joint within -limit..limit (empty: the model's)")
    joint_speeds = Param(list, [], elem=float, unit="deg/s", read_only=True,
                         doc="joint speed limits (empty: the model's)")
    use_arm = Param(bool, True, read_only=True,
                    doc="solve IK and drive qRef (NO: TCP pose output only)")
    initial_joints = Param(list, [0.0, 0.0, 90.0, 0.0, 90.0, 0.0], unit="deg", read_only=True,
                           doc="arm joint angles at start; the start TCP pose is their FK")
    initial_pose = Param(list, [], unit="mm, deg", read_only=True,
                         doc="start TCP pose x,y,z,A,B,C when there is no arm (or to check: "
                             "empty = FK of initial_joints, else [600,0,600,0,180,0])")
    tcp_offset = Param(list, [0.0] * 6, unit="mm, deg", read_only=True,
                       doc="TCP in the flange frame, x,y,z,A,B,C")
    tcps = Param(str, "", read_only=True,
                 doc="TCPs set_tcp can choose (the teach pendant's list): 'name: x,y,z,A,B,C; "
                     "...' in the flange frame")
    world_frame = Param(list, [0.0] * 6, unit="mm, deg", read_only=True,
                        doc="pose of the WORLD frame (ref 2) in the base frame")
    user_frames = Param(str, "", read_only=True,
                        doc="user frames for ref 101..200: 'id: x,y,z,A,B,C; ...' in base")
    max_samples = Param(int, 200000, bounds=(10, 10_000_000), read_only=True,
                        doc="longest motion in cycles (memory bound of a plan)")
    quick_stop_time = Param(float, 0.2, unit="s", bounds=(0.001, 10.0),
                            doc="stop(DR_QSTOP / DR_QSTOP_STO / DR_HOLD): the path speed falls "
                                "to 0 in this time (stopping distance = speed x time / 2)")
    home_user = Param(list, [0.0, 0.0, 90.0, 0.0, 90.0, 0.0], unit="deg", read_only=True,
                      doc="the user home of move_home(DR_HOME_TARGET_USER)")
    home_velocity = Param(float, 30.0, unit="deg/s", bounds=(0.1, 1000.0),
                          doc="joint speed of move_home")
    home_acceleration = Param(float, 60.0, unit="deg/s^2", bounds=(0.1, 10000.0),
                              doc="joint acceleration of move_home")
    speed_ramp = Param(float, 0.5, unit="s", bounds=(0.0, 10.0),
                       doc="change_operation_speed reaches its new speed in this time")
    plan_in_worker = Param(bool, True, read_only=True,
                           doc="plan in a worker process of the component's own, so planning "
                               "never holds this process's GIL (NO: in the caller's thread)")
    plan_timeout = Param(float, 30.0, unit="s", bounds=(0.0, None),
                         doc="a planning call the worker process has not answered in this "
                             "time is refused and the worker killed (a new one plans the "
                             "next call); 0: no limit. Only with plan_in_worker YES")
    plan_nice = Param(int, 0, bounds=(0, 19), read_only=True,
                      doc="the worker process's nice increment: on a busy machine the "
                          "execution contexts' threads get the CPU before the planning. "
                          "Only with plan_in_worker YES")

    # -- lifecycle (EC thread unless stated) -------------------------------------------------
    @classmethod
    def check_config(cls, params: dict[str, Any], ctx: CheckContext) -> list[tuple[str, str]]:
        """Before anything starts: the 6-value lists have 6 values (initial_pose none or 6)
        and user_frames parses. Runs in: the manager's main thread."""
        out = []
        for name in ("initial_joints", "tcp_offset", "world_frame", "home_user", "initial_pose"):
            v = params[name]
            if name == "initial_pose" and not v:
                continue
            if len(v) != 6:
                what = "6 values or none" if name == "initial_pose" else "6 values"
                out.append((ctx.param(name), f"expected {what}, got {len(v)}: "
                                             f"{show_value(v)}"))
        try:
            parse_user_frames(params["user_frames"])
        except ValueError as e:
            out.append((ctx.param("user_frames"),
                        f"{e}, got {show_value(params['user_frames'])}"))
        return out

    def on_initialize(self) -> None:
        """Runs in: the manager's thread, before any EC."""
        for name in ("initial_joints", "tcp_offset", "world_frame", "home_user"):
            if len(getattr(self, name)) != 6:
                raise ValueError(f"{self.instance_name}: parameter {name} needs 6 values, got "
                                 f"{getattr(self, name)}")
        frames = parse_user_frames(self.user_frames)
        frames[WORLD] = transform(self.world_frame)
        self.frames = frames                      # replaced whole, never changed in place
        self.tcp_table = {k: v for k, v in parse_poses(self.tcps, "tcps", str).items()}
        self.tcp_name = ""
        self.arm: Arm | None = None
        self.arm_reason = "use_arm is NO"
        if self.use_arm:
            got = load_arm(self.model, self.chain, self.tool_matrix(self.tcp_offset),
                           self.joint_limits, self.joint_speeds)
            if isinstance(got, str):
                self.arm_reason = got
            else:
                self.arm = got
        if self.arm is not None:
            q = np.radians(np.asarray(self.initial_joints, dtype=float))
            p, r = self.arm.tcp_pose(q)
        else:
            q = None
            self.log.warning("%s: qRef is not written: %s", self.instance_name, self.arm_reason)
            p, r = pose_from_posx(self.initial_pose or [600.0, 0, 600.0, 0, 180.0, 0])
        if self.arm is not None and self.initial_pose:
            want_p, want_r = pose_from_posx(self.initial_pose)
            if np.linalg.norm(want_p - p) > 1e-3 or np.abs(want_r - r).max() > 1e-6:
                self.log.warning("%s: initial_pose %s differs from the FK of initial_joints %s;"
                                 " using the FK", self.instance_name, self.initial_pose,
                                 [round(v, 3) for v in posx_from_pose(p, r)])
        self._start = (q, p, r)
        self.stream: Stream | None = None
        self.motion: Motion | None = None
        self.last_plan: tuple[Plan, Samples] | None = None
        self.q_meas: np.ndarray | None = None     # last measured joints [rad]
        self.dq_meas: np.ndarray | None = None
        self.pose_out = self.add_out_port("tcpPose", TimedPose3D)
        self.q_out = self.add_out_port("qRef", TimedDoubleSeq)
        self.q_in = self.add_in_port("q", TimedDoubleSeq)
        self.dq_in = self.add_in_port("dq", TimedDoubleSeq)
        if self.arm is not None:
            self.q_out.value.data = np.array(q)
        self._make_stream(0.01)
        if self.plan_in_worker:
            spec = None
            if self.arm is not None:
                spec = (self.model, self.chain, list(self.joint_limits),
                        list(self.joint_speeds))
            self.planning: PlanWorker | InProcess = PlanWorker(
                self.instance_name, spec, timeout=lambda: self.plan_timeout,
                nice=self.plan_nice)
        else:
            self.planning = InProcess()
        self.planning.start()
        from .service import BlendingPlannerServiceImpl   # needs the compiled stubs
        self.service = BlendingPlannerServiceImpl(self)
        port = self.add_service_port(ServicePort("BlendingPlannerService"))
        port.provide("service0", "BlendingPlannerService", self.service)

    @staticmethod
    def tool_matrix(posx: list[float]) -> np.ndarray:
        tool = transform(posx)
        tool[:3, 3] *= MM
        return tool

    def _make_stream(self, dt: float) -> None:
        q, p, r = self._start
        if self.stream is not None:
            q, p = self.stream.q, self.stream.p
            r = rot_from_quat(self.stream.quat)
        fk = self.arm.tcp_pose if self.arm is not None else None
        self.stream = Stream(dt, q, p, r, fk)
        self._q_copy: tuple = (None,)

    def on_activated(self, ec: Any) -> None:
        """Runs in: EC thread. The stream plays at this EC's period."""
        if abs(self.stream.dt - ec.period) > 1e-12:
            self._make_stream(ec.period)

    def on_deactivated(self, ec: Any) -> None:
        self._drop("the component was deactivated")

    def on_aborting(self, ec: Any) -> None:
        self._drop("the component went to ERROR")

    def on_finalize(self) -> None:
        """Runs in: the manager's thread. Ends the planning thread and the worker process."""
        self.service.close()
        self.planning.close()

    def _drop(self, why: str) -> None:
        """Runs in: EC thread. Every motion ends where it is now."""
        if self.motion is not None:
            self.motion.outcome = why
        s = self.stream
        s.reset(s.q, s.p, rot_from_quat(s.quat))
        self.service.motions.dropped(why)

    def on_execute(self, ec: Any) -> None:
        """Runs in: EC thread. Measured joints in, the next sample of every motion out."""
        if self.q_in.read_newest() is _NEW:
            self.q_meas = self.q_in.value.data
        if self.dq_in.read_newest() is _NEW:
            self.dq_meas = self.dq_in.value.data
        self.stream.step()
        self._write(ec.planned)

    def _write(self, t: float) -> None:
        """The cycle's outputs: tcpPose only while something reads it (a connection or a
        listener; Kinematics' rule: a pose nobody reads is neither computed nor written),
        qRef always. Runs in: EC thread."""
        s = self.stream
        if self.pose_out.used:                  # in_use() without a call
            v = self.pose_out.value
            p = s.p
            v.data.position.x, v.data.position.y, v.data.position.z = \
                p[0] * MM, p[1] * MM, p[2] * MM
            o = v.data.orientation
            o.r, o.p, o.y = rpy_from_rot(rot_from_quat(s.quat))
            stamp(v, t)
            self.pose_out.write()
        if self.arm is not None:
            value = self.q_out.value
            if self._q_copy[0] is not s:
                # memoryviews of the stream's q and the port's value, made once per stream:
                # the same bytes as value.data[...] = s.q, a fraction of numpy's cost
                self._q_copy = (s, memoryview(value.data), memoryview(s.q))
            self._q_copy[1][:] = self._q_copy[2]
            stamp(value, t)
            self.q_out.write()

    @property
    def q(self) -> np.ndarray | None:
        """The joint reference [rad] written last (None without an arm)."""
        return self.stream.q

    @property
    def pose_p(self) -> np.ndarray:
        """The TCP reference position [mm] written last."""
        return self.stream.p

    def cycle_period(self) -> float | None:
        """[s] period of the EC that runs this component, None if there is none."""
        ec = self._primary_ec
        return None if ec is None else ec.period

    def clock_is_stepped(self) -> bool:
        ec = self._primary_ec
        return ec is not None and not ec.clock_is_real()

    def settings(self) -> Settings:
        """What the DRL planner needs of the parameters. Runs in: any thread."""
        return Settings(self.stream.dt, self.frames, tuple(self.home_user),
                        self.home_velocity, self.home_acceleration, self.max_samples)

    # -- commands run in the EC thread (posted by the servant) --------------------------------
    def snapshot(self) -> tuple[bool, np.ndarray, np.ndarray, np.ndarray | None]:
        """(busy, p [mm], R, q [rad] or None) of the current reference. Runs in: EC thread."""
        s = self.stream
        busy = s.busy or self.service.motions.pending()
        q = None if s.q is None else np.array(s.q)
        return busy, np.array(s.p), rot_from_quat(s.quat), q

    def start(self, motion: Motion, p0: np.ndarray) -> str:
        """Start the moveb ``motion`` if nothing moved since it was planned from p0; "" or
        the reason. Runs in: EC thread."""
        if self.stream.busy or self.service.motions.pending():
            return "a motion is already running (Doosan: wait for an amoveb to end)"
        if np.linalg.norm(self.stream.p - p0) > 1e-9:
            return "the TCP moved while the request was planned"
        motion.comp = self
        self.motion = motion
        self.last_plan = (motion.plan, motion.samples)
        self.stream.add(motion, motion)
        return ""

    def request_stop(self) -> bool:
        """moveb's stop(): every motion decelerates along its path at its own acceleration
        (as the plan's final ramp). Runs in: EC thread."""
        return self.stream.stop(lambda ly: ly.t_acc) > 0
