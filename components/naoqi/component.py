"""The NAOqi component: NAOqi's locomotion (ALMotion's move calls), ALRobotPosture and
ALMemory over the walking NAO of this process."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np

from rtcf import Component, CycleWaiters, Param
from rtcf.log import Throttled
from rtcf.services import ServicePort

from .memory import Memory
from .tasks import FAILED, RUNNING, Robot, Task

FALL_CLEAR = 0.3            # [rad] tilt below which a fallen robot counts as up again
IMU_KEYS = tuple(f"InertialSensor/Angle{a}/Sensor/Value" for a in "XYZ")
KEEP_TASKS = 64             # finished tasks remembered for waitTask


class NAOqi(Component):
    """NAOqi's walk, postures and memory (service NAO::NAOqiService, idl/NAOqiService.idl),
    driving the SequencePlayer, AutoBalancer and Stabilizer of the same process and reading
    the DCM's sensors: each is bound by a connection of this component's ``robot`` service
    port to the other's service port in the composition (their local interfaces; a missing
    one stops the build before anything starts). Put it last in the execution context: it
    acts on the others between their cycles. No data ports.

    ALMemory's ``robotHasFallen`` is set when the IMU's torso tilt exceeds ``fall_tilt`` and
    cleared when it is back under 0.3 rad.
    """

    type_name = "NAOqi"
    category = "nao"
    stabilizer = Param(bool, True, read_only=True,
                       doc="start a Stabilizer with the walk (its port connected to robot)")
    fall_tilt = Param(float, 0.7, unit="rad", bounds=(0.1, 1.5),
                      doc="torso tilt that sets robotHasFallen")

    # -- lifecycle -------------------------------------------------------------------------
    def on_initialize(self) -> None:
        self.memory = Memory()
        self.tasks: OrderedDict[int, Task] = OrderedDict()
        self._next_id = 1
        self.move_task = 0
        self.fallen = False
        self.robot: Robot | None = None
        self._has_imu = False
        self._stance_log: list = []
        self.velocity = [0.0, 0.0, 0.0]
        self._yaw0: float | None = None
        self.waiters = CycleWaiters(self)      # completions of the blocking calls
        self._warn = Throttled(self.log, 5.0)
        from .service import NAOqiServiceImpl        # the servant needs the compiled stubs
        self.service = NAOqiServiceImpl(self)
        port = self.add_service_port(ServicePort("NAOqiService"))
        port.provide("service0", "NAOqiService", self.service)
        # the components it drives, bound by connections of this port in the composition
        robot = self.add_service_port(ServicePort("robot"))
        me = self.instance_name
        self._links = {
            what: robot.require(what, kind, local=True,
                                hint=f"connect it, e.g. {{from: {me}.robot, to: {peer}}}")
            for what, kind, peer in (
                ("player", "SequencePlayerLocal", "SequencePlayer0.SequencePlayerService"),
                ("autobalancer", "AutoBalancerLocal", "AutoBalancer0.AutoBalancerService"),
                ("stabilizer", "StabilizerLocal", "Stabilizer0.StabilizerService"),
                ("dcm", "DCMLocal", "DCM0.DCMService"))
            if what != "stabilizer" or self.stabilizer}

    def on_activated(self, ec: Any) -> None:
        self.seq = self._links["player"].ref
        self.abc = self._links["autobalancer"].ref
        self.st = self._links["stabilizer"].ref if self.stabilizer else None
        self.dcm_comp = self._links["dcm"].ref
        kin = self.abc.kin
        legs = np.concatenate([kin.chain("LLeg").index, kin.chain("RLeg").index])
        self.robot = Robot(
            q_ref=lambda: self.abc.q_ref.copy(),
            max_velocity=np.asarray(kin.max_velocity, dtype=float),
            play=self._play, playing=lambda: not self.seq.core.is_empty(),
            balancer=self.abc.core, stabilizer=self.st.core if self.st else None,
            fallen=lambda: self.fallen, leg_index=legs)
        self._has_imu = IMU_KEYS[0] in self.dcm_comp.sensor_keys
        if not self._has_imu:
            self.log.warning("%s has no IMU keys (body: simple?): robotHasFallen stays false",
                             self.dcm_comp.instance_name)
        self.waiters.start()

    def _play(self, q: np.ndarray, seconds: float) -> None:
        """A SequencePlayer move of every joint (in this EC thread, as its servant does)."""
        self.seq.read_inputs()
        self.seq.core.set_joint_angles(q.tolist(), float(seconds))

    def on_deactivated(self, ec: Any) -> None:
        for t in self.tasks.values():
            t.cancel()
        self.waiters.release()

    def on_aborting(self, ec: Any) -> None:
        self.on_deactivated(ec)

    def on_finalize(self) -> None:
        self.waiters.release()

    def on_execute(self, ec: Any) -> None:
        """Runs in: EC thread. The fall state, the velocity estimate, the tasks' next step."""
        self._update_fall()
        self._update_velocity(ec.period)
        for t in list(self.tasks.values()):
            if t.status == RUNNING:
                t.step()
        self.waiters.check()

    # -- state -------------------------------------------------------------------------------
    def tilt(self) -> tuple[float, float, float]:
        """The IMU's torso roll, pitch, yaw [rad] (the DCM's last cycle)."""
        if not self._has_imu:
            return 0.0, 0.0, 0.0
        read = self.dcm_comp.read_value
        return read(IMU_KEYS[0]), read(IMU_KEYS[1]), read(IMU_KEYS[2])

    def _update_fall(self) -> None:
        r, p, _ = self.tilt()
        t = max(abs(r), abs(p))
        if not self.fallen and t > self.fall_tilt:
            self.fallen = True
            self.log.warning("robotHasFallen: the torso tilts %.2f rad", t)
            core = self.abc.core
            if core is not None and core.gait is not None:
                core.gait.velocity = None
                core.gait.truncate()
        elif self.fallen and t < FALL_CLEAR:
            self.fallen = False

    def _update_velocity(self, dt: float) -> None:
        """FRAME_ROBOT's velocity over the last 0.4 s (a step), from the reference feet."""
        core = self.abc.core
        if core is None or core.gait is None:
            return
        f = core.gait.feet
        from rtcf_components.autobalancer.footsteps import mid_pose
        m = mid_pose(f["lleg"], f["rleg"])
        log = self._stance_log
        log.append(m)
        n = max(1, int(round(0.4 / dt)))
        if len(log) > n + 1:
            del log[0]
        if len(log) > 1:
            rel = log[-1].inverse().compose(log[0])          # the old pose from the new one
            span = (len(log) - 1) * dt
            self.velocity = [-rel.x / span, -rel.y / span, -rel.theta / span]

    def robot_position(self, use_sensors: bool) -> list[float]:
        core = self.abc.core
        if core is None or core.gait is None:
            return [0.0, 0.0, 0.0]
        from rtcf_components.autobalancer.footsteps import mid_pose, wrap
        f = core.gait.feet
        m = mid_pose(f["lleg"], f["rleg"])
        theta = m.theta
        if use_sensors:
            _, _, yaw = self.tilt()
            if self._yaw0 is None:
                self._yaw0 = yaw - m.theta
            theta = wrap(yaw - self._yaw0)
        return [m.x, m.y, theta]

    # -- tasks -------------------------------------------------------------------------------
    def submit(self, task: Task, move: bool = False) -> int:
        """Start ``task`` (interrupting the one of the same kind under way). Runs in: EC
        thread."""
        if self.robot is not None and self._yaw0 is None and self.abc.core.gait is None:
            _, _, yaw = self.tilt()
            self._yaw0 = yaw                   # FRAME_WORLD's heading: the first start's
        for t in self.tasks.values():
            if t.status == RUNNING:
                t.cancel()
        tid = self._next_id
        self._next_id += 1
        self.tasks[tid] = task
        while len(self.tasks) > KEEP_TASKS:
            self.tasks.popitem(last=False)
        if move:
            self.move_task = tid
        task.step()
        return tid

    def task_state(self, tid: int) -> tuple[str, str]:
        t = self.tasks.get(tid)
        if t is None:
            return FAILED, f"no task {tid} (finished long ago, or never started)"
        return t.status, t.error


__all__ = ["NAOqi"]
