"""The SequencePlayer RT component: the shell around SequencePlayerCore."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import yaml

from rtcf import (CheckContext, Component, CycleWaiters, Param, ReadStatus, TimedAcceleration3D,
                  TimedDoubleSeq, TimedOrientation3D, TimedPoint3D)
from rtcf.datatypes import stamp
from rtcf.services import ServicePort

from .seqplay import SequencePlayerCore

MODEL_DIR = Path(__file__).resolve().parents[2] / "model"
_NEW = ReadStatus.NEW          # looked up once (an enum member through its class costs more)


def find_model(name: str) -> Path:
    """A model file: absolute, relative to the working folder, or in the project's model/;
    a bundled name without extension (``nao_h25_v5``) also works."""
    for cand in (Path(name), MODEL_DIR / name, MODEL_DIR / f"{name}.yaml"):
        if cand.is_file():
            return cand
    raise FileNotFoundError(f"model file {name!r} not found (looked in . and {MODEL_DIR})")


def read_robot(path: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Joint names (model order) and force-sensor names (``force_sensors:``, optional) of a
    model YAML file."""
    data = yaml.safe_load(path.read_text()) or {}
    joints = data.get("joints")
    if not isinstance(joints, list) or not joints:
        raise ValueError(f"{path.name}: joints: expected a non-empty list, got {joints!r}")
    names = tuple(str(j["name"]) if isinstance(j, dict) else str(j) for j in joints)
    fs = data.get("force_sensors") or []
    if not isinstance(fs, list):
        raise ValueError(f"{path.name}: force_sensors: expected a list of names, got {fs!r}")
    return names, tuple(str(f["name"]) if isinstance(f, dict) else str(f) for f in fs)


class SequencePlayer(Component):
    """Plays joint, base, ZMP, acceleration, torque, wrench and optional-data motions
    (hrpsys-base's SequencePlayer; service OpenHRP::SequencePlayerService).

    | port | type | unit | meaning |
    |---|---|---|---|
    | qInit (in) | TimedDoubleSeq | rad | held joint command (where a motion after idle starts); zeros until written |
    | basePosInit (in) | TimedPoint3D | m | base link position, world |
    | baseRpyInit (in) | TimedOrientation3D | rad | base link roll, pitch, yaw, world |
    | zmpRefInit (in) | TimedPoint3D | m | ZMP, base link frame |
    | qRef | TimedDoubleSeq | rad | joint reference, model order (timestamp copied from qInit once it came) |
    | tqRef | TimedDoubleSeq | Nm | joint torque reference |
    | zmpRef | TimedPoint3D | m | ZMP reference, base link frame |
    | accRef | TimedAcceleration3D | m/s^2 | acceleration reference, sensor frame |
    | basePos | TimedPoint3D | m | base link position, world |
    | baseRpy | TimedOrientation3D | rad | base link roll, pitch, yaw, world |
    | <sensor>Ref | TimedDoubleSeq | N, Nm | one per force sensor of the model: Fx Fy Fz Tx Ty Tz |
    | optionalData | TimedDoubleSeq | - | seq_optional_data_dim free values |
    | SequencePlayerService | service | - | interface service0: OpenHRP::SequencePlayerService (idl/SequencePlayerService.idl) |

    Outputs are written only on cycles where something plays (nothing while idle, as
    hrpsys); getReference() reads the current values at any time.
    """

    type_name = "SequencePlayer"
    version = "315.12.1"            # hrpsys's rtm.py needs >= 315.2.6 (zmpRefInit wiring)
    category = "example"
    dt = Param(float, 0.005, unit="s", bounds=(1e-5, 10.0), read_only=True,
               doc="sampling period of the motions (should equal the EC period)")
    model = Param(str, "nao_h25_v5.yaml", read_only=True,
                  doc="robot model file: joint names, force sensors, kinematic chains")
    seq_optional_data_dim = Param(int, 1, bounds=(0, 1000), read_only=True,
                                  doc="length of optionalData")
    debugLevel = Param(int, 0, bounds=(0, 10), doc="debug level (> 0: log every command)")
    fixedLink = Param(str, "", doc="accepted for hrpsys compatibility; unused")

    # -- lifecycle (EC thread) -------------------------------------------------------------
    @classmethod
    def check_config(cls, params: dict[str, Any], ctx: CheckContext) -> list[tuple[str, str]]:
        """Before anything starts: the model file is found and names its joints.
        Runs in: the manager's main thread."""
        try:
            read_robot(find_model(params["model"]))
        except (OSError, ValueError, KeyError, TypeError, yaml.YAMLError) as e:
            return [(ctx.param("model"), f"{e}, got {params['model']!r}")]
        return []

    def on_initialize(self) -> None:
        path = find_model(self.model)
        joints, sensors = read_robot(path)
        self.kin_model: Any = None
        self.kin_error = ""
        try:
            from rtcf_components.kinematics.model import load_model
            self.kin_model = load_model(path)
        except Exception as e:      # players without a kinematic model still play
            self.kin_error = f"no kinematic model from {path.name}: {e}"
        self.core = SequencePlayerCore(joints, self.dt, sensors, self.seq_optional_data_dim)
        n = self.core.dof
        self.q_init_in = self.add_in_port("qInit", TimedDoubleSeq)
        self.pos_init_in = self.add_in_port("basePosInit", TimedPoint3D)
        self.rpy_init_in = self.add_in_port("baseRpyInit", TimedOrientation3D)
        self.zmp_init_in = self.add_in_port("zmpRefInit", TimedPoint3D)
        self.q_out = self.add_out_port("qRef", TimedDoubleSeq)
        self.tq_out = self.add_out_port("tqRef", TimedDoubleSeq)
        self.zmp_out = self.add_out_port("zmpRef", TimedPoint3D)
        self.acc_out = self.add_out_port("accRef", TimedAcceleration3D)
        self.pos_out = self.add_out_port("basePos", TimedPoint3D)
        self.rpy_out = self.add_out_port("baseRpy", TimedOrientation3D)
        self.wrench_outs = [self.add_out_port(f"{s}Ref", TimedDoubleSeq) for s in sensors]
        self.opt_out = self.add_out_port("optionalData", TimedDoubleSeq)
        self.q_out.value.data = np.zeros(n)
        self.tq_out.value.data = np.zeros(n)
        for p in self.wrench_outs:
            p.value.data = np.zeros(6)
        self.opt_out.value.data = np.zeros(self.core.optional_dim)
        self._outs = [self.q_out, self.tq_out, self.zmp_out, self.acc_out, self.pos_out,
                      self.rpy_out, *self.wrench_outs, self.opt_out]
        self._have_q_init = False
        self.waiters = CycleWaiters(self)      # completions of the blocking calls
        from .service import SequencePlayerServiceImpl   # the servant needs the stubs
        self.service = SequencePlayerServiceImpl(self)
        port = self.add_service_port(ServicePort("SequencePlayerService"))
        port.provide("service0", "SequencePlayerService", self.service)
        port.provide("local", "SequencePlayerLocal", self, local=True)   # e.g. NAOqi

    def on_activated(self, ec: Any) -> None:
        if abs(ec.period - self.dt) > 1e-9:
            self.log.warning("the EC period is %.6f s but dt is %.6f s: motions play %.3fx "
                             "their real-time speed", ec.period, self.dt, self.dt / ec.period)
        self.waiters.start()

    def on_deactivated(self, ec: Any) -> None:
        self.waiters.release()

    def on_aborting(self, ec: Any) -> None:
        self.waiters.release()

    def on_finalize(self) -> None:
        self.waiters.release()

    def on_execute(self, ec: Any) -> None:
        """Runs in: EC thread. Inputs, one sample of everything that plays, outputs."""
        self.read_inputs()
        if self.core.step():
            self._write(ec.planned)
        self.waiters.check()

    def read_inputs(self) -> None:
        """Runs in: EC thread (each cycle, and before each service command). The base and
        ZMP inputs are read only when in use (a port nothing is connected to and no listener
        watches has nothing to read: most compositions leave them open)."""
        core = self.core
        if self.q_init_in.read_newest() is _NEW:
            data = self.q_init_in.value.data
            if data.size != core.dof:
                self.log.warning("qInit has %d values, expected %d: the player cannot "
                                 "initialise until a good one comes", data.size, core.dof)
            core.set_inputs(q_init=data)
            self._have_q_init = True
        port = self.pos_init_in
        if port.used and port.read_newest() is _NEW:
            d = port.value.data
            core.set_inputs(base_pos=np.array((d.x, d.y, d.z)))
        port = self.rpy_init_in
        if port.used and port.read_newest() is _NEW:
            d = port.value.data
            core.set_inputs(base_rpy=np.array((d.r, d.p, d.y)))
        port = self.zmp_init_in
        if port.used and port.read_newest() is _NEW:
            d = port.value.data
            core.set_inputs(zmp=np.array((d.x, d.y, d.z)))

    def _write(self, planned: float) -> None:
        core = self.core
        np.copyto(self.q_out.value.data, core.q_ref)
        np.copyto(self.tq_out.value.data, core.tq.x)
        z, a, p, r = (self.zmp_out.value.data, self.acc_out.value.data,
                      self.pos_out.value.data, self.rpy_out.value.data)
        z.x, z.y, z.z = core.zmp.x
        a.ax, a.ay, a.az = core.acc.x
        p.x, p.y, p.z = core.p.x
        r.r, r.p, r.y = core.rpy.x
        w = core.wrenches.x
        for i, port in enumerate(self.wrench_outs):
            np.copyto(port.value.data, w[6 * i:6 * i + 6])
        np.copyto(self.opt_out.value.data, core.optional.x)
        if self._have_q_init:
            tm = self.q_init_in.value.tm
            for port in self._outs:
                port.value.tm.sec, port.value.tm.nsec = tm.sec, tm.nsec
        else:
            for port in self._outs:
                stamp(port.value, planned)
        for port in self._outs:
            port.write()

    # -- setTargetPose (ORB thread; IK outside the EC thread) --------------------------------
    def set_target_pose(self, op: str, name: str, xyz: list, rpy: list, tm: float) -> bool:
        """setTargetPose: snapshot the start in the EC thread, solve IK here, play the
        keyframes on the group. False, with no motion, on any failure (the reason is logged).
        Runs in: ORB thread."""
        from .seqplay import PlayerError
        from .target_pose import plan_target_pose
        if self.kin_model is None:
            self.log.warning("%s refused: kinematics not available (%s)", op, self.kin_error)
            return False
        gname, _, frame = str(name).partition(":")
        core = self.core
        try:
            T = core.checked_tm(tm)
            joints, q_full, base_pos, base_rpy = self.call(
                lambda: core.target_pose_start(gname), timeout=5.0)
            pos_tol, rot_tol = core.max_ik_error
            keys = plan_target_pose(self.kin_model, joints, q_full, frame, xyz, rpy,
                                    base_pos, base_rpy, pos_tol, rot_tol,
                                    core.max_ik_iteration)
        except PlayerError as e:
            self.log.warning("%s refused: %s", op, e)
            return False
        except TimeoutError:
            self.log.error("%s: %s ran no cycle within 5 s", op, self.instance_name)
            return False
        step = (T if tm > 0.0 else core.dt * len(keys)) / len(keys)
        rows = keys.tolist()
        return self.service.apply(op, lambda: core.play_pattern_of_group(gname, rows, [step]))
