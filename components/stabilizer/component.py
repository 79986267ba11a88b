"""The Stabilizer RT component: the shell around StabilizerCore (hrpsys's Stabilizer role)."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np

from rtcf import (Component, CycleWaiters, Param, ReadStatus, TimedBoolean, TimedDoubleSeq,
                  TimedLong,
                  TimedPoint3D)
from rtcf.datatypes import stamp, type_by_name
from rtcf.log import Throttled
from rtcf.services import ServicePort

from .core import IDLE, ST, Sole, StabilizerCore, StabilizerError, StabilizerParams

SIM_DIR = Path(__file__).resolve().parents[2] / "model" / "sim"
# DCM0.sensors (the DCM's getSensorKeys after the joints, body: mujoco; docs/simulator.md):
# InertialSensor Accelerometer XYZ, Gyroscope XYZ, Angle XYZ, the 8 FSRs [kg],
# LFoot TotalWeight [kg], CenterOfPressure X, Y [m], RFoot the same
N_SENSORS = 23
ANGLE_X, ANGLE_Y = 6, 7
FOOT = {"lleg": (17, 18, 19), "rleg": (20, 21, 22)}


def soles_from_mjcf(path: Path) -> dict:
    """Each sole's rectangle in its sole frame, from the MJCF's foot boxes (geoms "lfoot",
    "rfoot" on the bodies holding the sites "l_sole", "r_sole")."""
    root = ET.parse(path).getroot()
    out = {}
    for leg, geom, site in (("lleg", "lfoot", "l_sole"), ("rleg", "rfoot", "r_sole")):
        body = None
        for b in root.iter("body"):
            if any(s.get("name") == site for s in b.findall("site")):
                body = b
        if body is None:
            raise ValueError(f"{path}: no body with the site {site!r}")
        g = next((g for g in body.findall("geom") if g.get("name") == geom), None)
        s = next(s for s in body.findall("site") if s.get("name") == site)
        if g is None or g.get("type") != "box":
            raise ValueError(f"{path}: no box geom {geom!r} beside the site {site!r}")
        size = [float(v) for v in g.get("size").split()]
        gp = np.array([float(v) for v in g.get("pos", "0 0 0").split()])
        sp = np.array([float(v) for v in s.get("pos", "0 0 0").split()])
        c = gp - sp
        out[leg] = Sole((float(c[0] - size[0]), float(c[0] + size[0])),
                        (float(c[1] - size[1]), float(c[1] + size[1])))
    return out


class Stabilizer(Component):
    """Balance feedback between the AutoBalancer and the DCM (hrpsys's Stabilizer role):
    capture-point feedback on the ZMP, ankle damping control from the soles' centres of
    pressure, foot force difference control, torso attitude control (Kajita et al. 2010);
    service OpenHRP::StabilizerService. In MODE_IDLE ``q`` is ``qRef``.

    | port | type | unit | meaning |
    |---|---|---|---|
    | qRef (in) | TimedDoubleSeq | rad | reference joint angles (AutoBalancer0.q) |
    | qCurrent (in) | TimedDoubleSeq | rad | measured joint angles (DCM0.q) |
    | sensors (in) | TimedDoubleSeq | - | the DCM's IMU and FSR values (DCM0.sensors: the torso angles, each foot's total weight [kg] and centre of pressure [m]) |
    | zmpRef (in) | TimedPoint3D | m | reference ZMP, reference torso frame (AutoBalancer0.zmpOut); none: under the reference CoM |
    | contactStates (in) | TimedBooleanSeq | - | [rleg, lleg] in contact in the reference (AutoBalancer0.contactStates); none: both |
    | q | TimedDoubleSeq | rad | joint angles to send (DCM0.qRef): written whenever qRef is new or the feedback acts |
    | originRefZmp, originActZmp, originNewZmp | TimedPoint3D | m | reference, measured and commanded ZMP, foot-origin frame (the middle of the soles in contact, gravity aligned) |
    | originRefCog, originActCog | TimedPoint3D | m | reference and measured CoM, foot-origin frame |
    | refCapturePoint, actCapturePoint | TimedPoint3D | m | reference and measured capture points, foot-origin frame |
    | walkingStates (in) | TimedBoolean | - | the balancer walks (AutoBalancer0.walkingStates): the capture point check waits while it does (hrpsys) |
    | emergencySignal | TimedLong | - | 1 once the torso tilted beyond fall_tilt (fallen), and while the capture point check (emergency_check_mode CP) finds it outside the soles; else 0 |
    | StabilizerService | service | - | interface service0: OpenHRP::StabilizerService (idl/StabilizerService.idl) |
    """

    type_name = "Stabilizer"
    version = "315.15.0"
    category = "example"
    model = Param(str, "nao_h25_v5", read_only=True, doc="kinematic model (kinematics)")
    mass_model = Param(str, "nao_v5", read_only=True,
                       doc="link masses and soles: an MJCF model name (model/sim/) or file")
    cp_gain = Param(float, 6.0, unit="1/s", bounds=(0.0, 100.0),
                    doc="capture point error decay rate k_cp")
    damping = Param(list, [10.0, 10.0], length=2, unit="N m s/rad", bounds=(1e-3, 1e6),
                    doc="ankle damping D, roll and pitch")
    damping_time = Param(float, 0.5, unit="s", bounds=(0.01, 100.0),
                         doc="ankle correction spring-back time constant")
    body_gain = Param(list, [0.5, 0.5], length=2, unit="1/s", bounds=(0.0, 100.0),
                      doc="torso attitude control gain, roll and pitch (hrpsys's default)")
    transition_time = Param(float, 1.0, unit="s", bounds=(0.01, 10.0),
                            doc="fade in / out of the feedback")
    fall_tilt = Param(float, 0.6, unit="rad", bounds=(0.05, 1.5),
                      doc="torso tilt that counts as fallen (the feedback stops)")
    auto_start = Param(bool, False, read_only=True,
                       doc="start the feedback at activation (hrpsys: startStabilizer)")

    # -- lifecycle (EC thread) -------------------------------------------------------------
    def on_initialize(self) -> None:
        from rtcf_components.autobalancer.com import load_mass_model
        from rtcf_components.autobalancer.component import mass_model_path
        from rtcf_components.kinematics.model import load_model
        self.kin = load_model(self.model)
        path = mass_model_path(self.mass_model)
        self.mass = load_mass_model(self.kin, path)
        self.soles = soles_from_mjcf(path)
        self.n = len(self.kin.joint_names)
        self.st_params = self._params_from()
        self.core: StabilizerCore | None = None
        self.q_in = self.add_in_port("qRef", TimedDoubleSeq)
        self.q_act_in = self.add_in_port("qCurrent", TimedDoubleSeq)
        self.sensors_in = self.add_in_port("sensors", TimedDoubleSeq)
        self.zmp_in = self.add_in_port("zmpRef", TimedPoint3D)
        self.contact_in = self.add_in_port("contactStates", type_by_name("TimedBooleanSeq"))
        self.walking_in = self.add_in_port("walkingStates", TimedBoolean)
        self.walking = False
        self.q_out = self.add_out_port("q", TimedDoubleSeq)
        self.q_out.value.data = np.zeros(self.n)
        self.points = {name: self.add_out_port(name, TimedPoint3D) for name in (
            "originRefZmp", "originActZmp", "originNewZmp", "originRefCog", "originActCog",
            "refCapturePoint", "actCapturePoint")}
        self.emergency_out = self.add_out_port("emergencySignal", TimedLong)
        self.q_ref = np.zeros(self.n)
        self.q_act = np.zeros(self.n)
        self.have_ref = self.have_act = False
        self.sensors = np.zeros(N_SENSORS)
        self.have_sensors = False
        self.zmp_ref = np.zeros(3)
        self.have_zmp = False
        self.contact = {"lleg": True, "rleg": True}
        self.waiters = CycleWaiters(self)      # completions of the blocking calls
        self._warn = Throttled(self.log, 5.0)
        from .service import StabilizerServiceImpl     # the servant needs the compiled stubs
        self.service = StabilizerServiceImpl(self)
        port = self.add_service_port(ServicePort("StabilizerService"))
        port.provide("service0", "StabilizerService", self.service)
        port.provide("local", "StabilizerLocal", self, local=True)       # e.g. NAOqi

    def _params_from(self, base: StabilizerParams | None = None) -> StabilizerParams:
        b = base or StabilizerParams()
        p = StabilizerParams(**{**b.__dict__, "cp_gain": self.cp_gain,
                                "damping": tuple(self.damping),
                                "damping_time": self.damping_time,
                                "body_gain": tuple(self.body_gain),
                                "transition_time": self.transition_time,
                                "fall_tilt": self.fall_tilt})
        p.check()
        return p

    def on_activated(self, ec: Any) -> None:
        self.core = StabilizerCore(self.kin, self.mass, self.soles, self.st_params, ec.period)
        if self.auto_start:
            self.core.start()
        self.waiters.start()

    def on_deactivated(self, ec: Any) -> None:
        self.waiters.release()

    def on_aborting(self, ec: Any) -> None:
        self.waiters.release()

    def on_finalize(self) -> None:
        self.waiters.release()

    def on_params_changed(self, names: set[str]) -> None:
        """Runs in: EC thread."""
        try:
            p = self._params_from(self.st_params)
        except StabilizerError as e:
            self.log.error("stabilizer parameters refused: %s", e)
            return
        self.st_params = p
        if self.core is not None:
            self.core.set_params(p)

    def on_execute(self, ec: Any) -> None:
        """Runs in: EC thread. Inputs, one feedback period, outputs."""
        new = self._read_inputs()
        core = self.core
        if core is not None and self.have_ref:
            if core.mode == IDLE:
                if new:
                    np.copyto(self.q_out.value.data, self.q_ref)
                    stamp(self.q_out.value, ec.planned)
                    self.q_out.write()
            elif self.have_act and self.have_sensors:
                s = self.sensors
                g = core.params.gravity
                force = {leg: max(0.0, float(s[i])) * g for leg, (i, _, _) in FOOT.items()}
                cop = {leg: (float(s[j]), float(s[k])) for leg, (_, j, k) in FOOT.items()}
                q = core.step(self.q_ref, self.zmp_ref if self.have_zmp else None,
                              self.contact, self.q_act, (float(s[ANGLE_X]), float(s[ANGLE_Y])),
                              force, cop, self.walking)
                if core.emergency:
                    self._warn.warning("capture point too far: (%.3f, %.3f) m from the foot "
                                       "origin, outside the soles less cp_check_margin "
                                       "(emergencySignal 1)", core.act_cp[0], core.act_cp[1])
                np.copyto(self.q_out.value.data, q)
                stamp(self.q_out.value, ec.planned)
                self.q_out.write()
                self._write_points(ec.planned)
            else:                         # no measurement yet: pass the reference through
                np.copyto(self.q_out.value.data, self.q_ref)
                stamp(self.q_out.value, ec.planned)
                self.q_out.write()
        self.waiters.check()

    def _read_inputs(self) -> bool:
        new = False
        if self.q_in.read_newest() is ReadStatus.NEW:
            d = self.q_in.value.data
            if d.shape == (self.n,) and np.all(np.isfinite(d)):
                np.copyto(self.q_ref, d)
                self.have_ref = new = True
            else:
                self._warn.warning("qRef: expected %d finite angles, got shape %s: ignored",
                                   self.n, d.shape)
        if self.q_act_in.read_newest() is ReadStatus.NEW:
            d = self.q_act_in.value.data
            if d.shape == (self.n,) and np.all(np.isfinite(d)):
                np.copyto(self.q_act, d)
                self.have_act = True
        if self.sensors_in.read_newest() is ReadStatus.NEW:
            d = self.sensors_in.value.data
            if d.shape == (N_SENSORS,) and np.all(np.isfinite(d)):
                np.copyto(self.sensors, d)
                self.have_sensors = True
            else:
                self._warn.warning("sensors: expected the DCM's %d IMU and FSR values "
                                   "(DCM0.sensors, body: mujoco), got shape %s: ignored",
                                   N_SENSORS, d.shape)
        if self.zmp_in.read_newest() is ReadStatus.NEW:
            z = self.zmp_in.value.data
            v = (z.x, z.y, z.z)
            if all(math.isfinite(x) for x in v):
                self.zmp_ref[:] = v
                self.have_zmp = True
        if self.contact_in.read_newest() is ReadStatus.NEW:
            c = self.contact_in.value.data
            if len(c) >= 2:
                self.contact = {"rleg": bool(c[0]), "lleg": bool(c[1])}
        if self.walking_in.read_newest() is ReadStatus.NEW:
            self.walking = bool(self.walking_in.value.data)
        return new

    def _write_points(self, t: float) -> None:
        core = self.core
        for name, v in (("originRefZmp", core.ref_zmp), ("originActZmp", core.act_zmp),
                        ("originNewZmp", core.cmd_zmp), ("originRefCog", core.ref_com),
                        ("originActCog", core.act_com), ("refCapturePoint", core.ref_cp),
                        ("actCapturePoint", core.act_cp)):
            port = self.points[name]
            port.value.data.x, port.value.data.y = float(v[0]), float(v[1])
            stamp(port.value, t)
            port.write()
        self.emergency_out.value.data = 1 if core.fallen or core.emergency else 0
        stamp(self.emergency_out.value, t)
        self.emergency_out.write()

    def settled(self) -> bool:
        """No transition under way. Runs in: EC thread."""
        return self.core is None or self.core.mode in (IDLE, ST)


__all__ = ["Stabilizer", "soles_from_mjcf"]
