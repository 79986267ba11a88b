"""The Kinematics RT component: the shell around the kinematics core."""

from __future__ import annotations

import math
import operator
from typing import Any, Callable, Sequence

import numpy as np

from rtcf import CheckContext, Component, Param, ReadStatus, TimedDoubleSeq, TimedPose3D
from rtcf.datatypes import stamp
from rtcf.log import Throttled
from rtcf.services import ServicePort

from .algorithms import (FRAME_ROBOT, FRAME_TORSO, FRAME_WORLD, IKResult, chain_fk,
                         chain_pose6d, invert, position6d, robot_frame, solve_ik,
                         space_transform, transform, transform_from_6d, warm_up)
from .model import Model, ModelError, load_model

_NEW = ReadStatus.NEW          # looked up once (an enum member through its class costs more)


def _getter(index: np.ndarray) -> Callable[[list], tuple]:
    """A chain's joint angles out of the body's list of angles, as a tuple."""
    if len(index) == 1:
        i = int(index[0])
        return lambda angles: (angles[i],)
    return operator.itemgetter(*(int(i) for i in index))


def pose_port_name(chain: str) -> str:
    """Wire name of a chain's pose port: Head -> headPose, LArm -> lArmPose, arm -> armPose."""
    return chain[:1].lower() + chain[1:] + "Pose"


class Kinematics(Component):
    """ALMotion's robot model: forward kinematics of every chain, frames, spaces and IK.

    | port | type | unit | meaning |
    |---|---|---|---|
    | q (in) | TimedDoubleSeq | rad | measured joint angles, model order (NAO: body order, 26) |
    | qCommand (in) | TimedDoubleSeq | rad | commanded joint angles, model order |
    | headPose, lArmPose, rArmPose, lLegPose, rLegPose | TimedPose3D | m, rad | each chain's effector pose every cycle (one port per chain: `<chain>Pose`), in `pose_space`, from `pose_source` angles; orientation r, p, y with R = Rz(y) Ry(p) Rx(r) |
    | KinematicsService | service | - | NAO::KinematicsService (idl/KinematicsService.idl) |

    The service answers on ORB threads from the angles of the last completed cycle, without
    waiting for the execution context.
    """

    type_name = "Kinematics"
    category = "nao"
    model = Param(str, "nao_h25_v5", read_only=True,
                  doc="robot model: nao_h25_v5, nao_v32, doosan_m1013, or a .yaml/.urdf file")
    pose_space = Param(int, FRAME_TORSO, choices=(FRAME_TORSO, FRAME_WORLD, FRAME_ROBOT),
                       doc="space of the pose ports: 0 torso, 1 world, 2 robot")
    pose_source = Param(str, "sensors", choices=("sensors", "commands"),
                        doc="angles the pose ports use: measured (q) or commanded (qCommand)")
    odometry = Param(list, [0.0, 0.0, 0.0], unit="m, m, rad", length=3,
                     doc="pose [x, y, theta] of FRAME_ROBOT in FRAME_WORLD")
    ik_position_tolerance = Param(float, 1e-4, unit="m", bounds=(1e-9, 1.0),
                                  doc="solveIK: largest position error accepted")
    ik_orientation_tolerance = Param(float, 1e-3, unit="rad", bounds=(1e-9, 1.0),
                                     doc="solveIK: largest orientation error accepted")
    ik_max_iterations = Param(int, 200, bounds=(1, 100000), doc="solveIK: iterations per start")
    ik_restarts = Param(int, 48, bounds=(0, 1000), doc="solveIK: extra starts before giving up")

    # -- lifecycle (EC thread) -------------------------------------------------------------
    @classmethod
    def check_config(cls, params: dict[str, Any], ctx: CheckContext) -> list[tuple[str, str]]:
        """Before anything starts: the model loads. Runs in: the manager's main thread."""
        try:
            load_model(params["model"])
        except ModelError as e:
            return [(ctx.param("model"), f"{e}, got {params['model']!r}")]
        return []

    def on_initialize(self) -> None:
        try:
            self.robot: Model = load_model(self.model)
        except ModelError as e:
            raise ModelError(f"{self.instance_name}: model: {e}") from None
        n = len(self.robot.joint_names)
        self.n_joints = n
        self.q_in = self.add_in_port("q", TimedDoubleSeq)
        self.cmd_in = self.add_in_port("qCommand", TimedDoubleSeq)
        self._inputs = ((self.q_in, "sensors"), (self.cmd_in, "commands"))
        # per chain: its out port and a getter of its joint angles from the body's list
        self.pose_ports = [(c, self.add_out_port(pose_port_name(c.name), TimedPose3D),
                            _getter(c.index)) for c in self.robot.chains.values()]
        self._clipped = np.zeros(n)                   # commanded angles within the limits
        self._shape = (n,)
        # the pose ports' values are recomputed only when the angles (or the pose
        # parameters) changed since they were last filled (_gen against _filled), and only
        # for ports someone reads
        self._gen = 0
        self._filled = [-1] * len(self.pose_ports)
        warm_up(self.robot)                           # compile the formulas now
        # two buffers per source: the EC thread fills one and publishes it by swapping a
        # reference; ORB threads copy the published one (no lock shared with the EC)
        self._bufs = {"sensors": [np.zeros(n), np.zeros(n)],
                      "commands": [np.zeros(n), np.zeros(n)]}
        self._latest: dict[str, np.ndarray | None] = {"sensors": None, "commands": None}
        # the bits of the angles each source published last: the same bits again (a held
        # command, a robot at rest) change nothing and are not published again
        self._keys: dict[str, bytes | None] = {"sensors": None, "commands": None}
        self._warn = Throttled(self.log, 5.0)
        from .service import KinematicsServiceImpl   # the servant needs the compiled stubs
        self.service = KinematicsServiceImpl(self)
        port = self.add_service_port(ServicePort("KinematicsService"))
        port.provide("service0", "KinematicsService", self.service)

    def on_execute(self, ec: Any) -> None:
        """Runs in: EC thread. Take the newest angles, then write the pose of every chain
        whose port has a reader (a connection or a listener): computed again only when the
        angles or the pose parameters changed, else the previous pose stamped anew."""
        for port, source in self._inputs:
            if port.used and port.read_newest() is _NEW:
                self._publish(source, port.value.data)
        q = None
        gen, filled, S, ql = self._gen, self._filled, None, None
        for i, (chain, port, angles) in enumerate(self.pose_ports):
            if not port.used:
                continue                              # no reader: nothing to compute or send
            v = port.value
            if filled[i] != gen:
                if ql is None:
                    q = self._pose_angles()
                    if q is None:
                        return                        # no angles yet: nothing to report
                    space = self.pose_space
                    if space != FRAME_TORSO:
                        S = space_transform(self.robot, q, space, self.odometry)
                    ql = q.tolist()                   # floats: what the formulas run fastest on
                if S is None:
                    x, y, z, r, p, w = chain_pose6d(self.robot, chain, angles(ql))
                else:
                    x, y, z, r, p, w = position6d(S @ chain_fk(self.robot, chain, angles(ql)))
                d = v.data
                d.position.x, d.position.y, d.position.z = x, y, z
                d.orientation.r, d.orientation.p, d.orientation.y = r, p, w
                filled[i] = gen
            stamp(v, ec.planned)
            port.write()

    def on_params_changed(self, names: set[str]) -> None:
        """Runs in: EC thread. A new pose space, source or odometry changes every pose."""
        if names & {"pose_space", "pose_source", "odometry"}:
            self._gen += 1

    def _pose_angles(self) -> np.ndarray | None:
        """The angles the pose ports use (commands clamped to the limits), None before any.
        Runs in: EC thread."""
        q = self._latest[self.pose_source]
        if q is None:
            return self._latest["sensors"]
        if self.pose_source == "commands":
            return np.clip(q, self.robot.lower, self.robot.upper, out=self._clipped)
        return q

    def _publish(self, source: str, data: np.ndarray) -> None:
        if data.shape != self._shape:
            self._warn.warning("%s: got %d joint angles, expected %d (model order of %s): "
                               "ignored", "q" if source == "sensors" else "qCommand",
                               data.size, self.n_joints, self.robot.name)
            return
        key = data.tobytes()
        if key == self._keys[source]:
            return                        # the angles published already: nothing changes
        # one sum for the finite check: a NaN or an infinity makes it non-finite; only
        # then (or when huge finite values overflow it) look closer
        if not math.isfinite(sum(data.tolist())) and not np.all(np.isfinite(data)):
            self._warn.warning("%s: non-finite joint angles ignored",
                               "q" if source == "sensors" else "qCommand")
            return
        a, b = self._bufs[source]
        a[...] = data                     # the copy np.copyto makes, for less
        self._latest[source] = a
        self._bufs[source] = (b, a)
        self._keys[source] = key
        self._gen += 1

    # -- the model API (any thread: answers from the last completed cycle) ------------------
    def angles(self, use_sensors: bool) -> np.ndarray:
        """A copy of the measured or the commanded angles (commands clamped to the limits;
        before any command, the measured angles; before anything, zeros)."""
        src = self._latest["sensors" if use_sensors else "commands"]
        if src is None:
            src = self._latest["sensors"]
            use_sensors = True
        q = np.zeros(self.n_joints) if src is None else src.copy()
        if not use_sensors:
            np.clip(q, self.robot.lower, self.robot.upper, out=q)
        return q

    @staticmethod
    def _space(space: Any) -> int:
        if isinstance(space, bool) or space not in (FRAME_TORSO, FRAME_WORLD, FRAME_ROBOT):
            raise ModelError(f"unknown space {space!r}: expected 0 (FRAME_TORSO), "
                             f"1 (FRAME_WORLD) or 2 (FRAME_ROBOT)")
        return int(space)

    def get_transform(self, name: str, space: int, use_sensors: bool) -> np.ndarray:
        return transform(self.robot, self.angles(use_sensors), name, self._space(space),
                         self.odometry)

    def get_position(self, name: str, space: int, use_sensors: bool) -> list[float]:
        return position6d(self.get_transform(name, space, use_sensors))

    def get_robot_position(self, use_sensors: bool) -> list[float]:
        """FRAME_ROBOT in FRAME_WORLD [x, y, theta]: the odometry (no locomotion here)."""
        return [float(v) for v in self.odometry]

    def get_limits(self, name: str) -> list[list[float]]:
        r = self.robot
        out = []
        for j in r.names_of(name):
            i = r.joint_index(j)
            out.append([float(r.lower[i]), float(r.upper[i]), float(r.max_velocity[i]),
                        float(r.max_torque[i])])
        return out

    def solve(self, chain: str, space: int, target6d: Sequence[float], mask: int) -> IKResult:
        """IK for ``chain`` to a target in ``space``, seeded from the commanded angles."""
        c = self.robot.chain(chain)
        if len(target6d) != 6 or not all(math.isfinite(v) for v in target6d):
            raise ModelError(f"target6D: expected 6 finite numbers [x, y, z, wx, wy, wz], "
                             f"got {list(target6d)!r}")
        q = self.angles(False)
        S = space_transform(self.robot, q, self._space(space), self.odometry)
        target = invert(S) @ transform_from_6d(target6d)
        try:
            return solve_ik(self.robot, c, target, q[c.index], int(mask),
                            pos_tol=self.ik_position_tolerance,
                            rot_tol=self.ik_orientation_tolerance,
                            max_iter=self.ik_max_iterations, restarts=self.ik_restarts)
        except ValueError as e:
            raise ModelError(str(e)) from None


__all__ = ["Kinematics", "pose_port_name", "robot_frame"]
