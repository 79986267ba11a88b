"""The AutoBalancer RT component: the shell around AutoBalancerCore (hrpsys's AutoBalancer)."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from rtcf import (Component, CycleWaiters, Param, ReadStatus, TimedBoolean, TimedDoubleSeq,
                  TimedOrientation3D, TimedPoint3D)
from rtcf.datatypes import stamp, type_by_name
from rtcf.log import Throttled
from rtcf.services import ServicePort

from .core import ABC, IDLE, AutoBalancerCore, BalancerConfig, BalancerError
from .footsteps import FootstepError, StrideLimits
from .gait import GaitError, GaitParams

SIM_DIR = Path(__file__).resolve().parents[2] / "model" / "sim"


def mass_model_path(name: str) -> Path:
    """A bundled MJCF name (model/sim/<name>.xml) or a file."""
    p = Path(name)
    for cand in (SIM_DIR / f"{name}.xml", p):
        if cand.is_file():
            return cand
    raise FileNotFoundError(f"mass model {name!r}: no model/sim/{name}.xml and no such file")


class AutoBalancer(Component):
    """hrpsys-base's AutoBalancer: walks the legs (gait generator, ZMP preview control of the
    CoM, whole-leg IK) while head and arms follow ``qRef``; service OpenHRP::AutoBalancerService.

    | port | type | unit | meaning |
    |---|---|---|---|
    | qRef (in) | TimedDoubleSeq | rad | joint reference, model order (the SequencePlayer's); the newest is held |
    | qInit (in) | TimedDoubleSeq | rad | the robot's command at start (DCM0.qCommand): its first sample is the reference until a qRef comes (rtcf addition) |
    | qRefHeld | TimedDoubleSeq | rad | the reference held (the newest qRef, or that first qInit) every cycle: the SequencePlayer's qInit, as hrpsys's StateHolder qOut (rtcf addition) |
    | q | TimedDoubleSeq | rad | output joint angles: qRef in MODE_IDLE (written when a new qRef came), the balancer's legs otherwise (every cycle) |
    | zmpOut | TimedPoint3D | m | reference ZMP, torso frame (hrpsys) |
    | basePosOut, baseRpyOut | TimedPoint3D, TimedOrientation3D | m, rad | planned torso pose, world (the balancer's odometry frame) |
    | cogOut | TimedPoint3D | m | reference CoM, world |
    | contactStates | TimedBooleanSeq | - | [rleg, lleg] in contact (hrpsys order) |
    | controlSwingSupportTime | TimedDoubleSeq | s | [rleg, lleg] time left before the swing foot lands |
    | walkingStates | TimedBoolean | - | steps queued or under way |
    | footPoses | TimedDoubleSeq | m, rad | [lleg x y z theta, rleg x y z theta], world (rtcf addition) |
    | AutoBalancerService | service | - | interface service0: OpenHRP::AutoBalancerService (idl/AutoBalancerService.idl) |
    """

    type_name = "AutoBalancer"
    version = "315.15.0"
    category = "example"
    model = Param(str, "nao_h25_v5", read_only=True, doc="kinematic model (kinematics)")
    mass_model = Param(str, "nao_v5", read_only=True,
                       doc="link masses: an MJCF model name (model/sim/) or file")
    transition_time = Param(float, 1.0, unit="s", bounds=(0.05, 10.0),
                            doc="blend between qRef and the balancer's legs")
    step_time = Param(float, 0.4, unit="s", bounds=(0.1, 5.0), doc="default step duration")
    step_height = Param(float, 0.02, unit="m", bounds=(0.0, 0.1), doc="default swing height")
    double_support_ratio = Param(float, 0.2, bounds=(0.05, 0.9),
                                 doc="double support share of each step")
    stride_parameter = Param(list, [0.04, 0.04, 20.0, 0.04, 0.012, 5.0], length=6,
                             unit="m, m, deg, m, m, deg",
                             doc="step limits as hrpsys: forward x, outside y, outside theta, "
                                 "backward x, inside y, inside theta")
    half_width = Param(float, 0.05, unit="m", bounds=(0.01, 0.5),
                       doc="stance: each sole this far from the middle (NAO: HipOffsetY)")
    zmp_offset = Param(list, [0.02, 0.0], length=2, unit="m",
                       doc="ZMP reference in each sole frame: ahead, inward (the FSR centre)")
    preview_horizon = Param(float, 1.6, unit="s", bounds=(0.1, 5.0), read_only=True,
                            doc="ZMP preview of the CoM controller")
    gravity = Param(float, 9.81, unit="m/s^2", bounds=(1.0, 100.0), doc="for the LIPM")

    # -- lifecycle (EC thread) -------------------------------------------------------------
    def on_initialize(self) -> None:
        from rtcf_components.kinematics.model import load_model
        from .com import load_mass_model
        self.kin = load_model(self.model)
        self.mass = load_mass_model(self.kin, mass_model_path(self.mass_model))
        self.n = len(self.kin.joint_names)
        self.limits = self._limits_from(self.stride_parameter, self.half_width)
        self.params_ = self._gait_from_params()
        self.core: AutoBalancerCore | None = None
        # set through setAutoBalancerParam: BalancerConfig fields and move_base_gain, kept
        # across deactivation (a parameter set in the configuration replaces its own)
        self.cfg_over: dict = {}
        self.move_base_gain = 0.8
        self.q_in = self.add_in_port("qRef", TimedDoubleSeq)
        self.q_init_in = self.add_in_port("qInit", TimedDoubleSeq)
        self.q_out = self.add_out_port("q", TimedDoubleSeq)
        self.held_out = self.add_out_port("qRefHeld", TimedDoubleSeq)
        self.held_out.value.data = np.zeros(self.n)
        self.zmp_out = self.add_out_port("zmpOut", TimedPoint3D)
        self.pos_out = self.add_out_port("basePosOut", TimedPoint3D)
        self.rpy_out = self.add_out_port("baseRpyOut", TimedOrientation3D)
        self.cog_out = self.add_out_port("cogOut", TimedPoint3D)
        self.contact_out = self.add_out_port("contactStates", type_by_name("TimedBooleanSeq"))
        self.swing_out = self.add_out_port("controlSwingSupportTime", TimedDoubleSeq)
        self.walk_out = self.add_out_port("walkingStates", TimedBoolean)
        self.feet_out = self.add_out_port("footPoses", TimedDoubleSeq)
        self.q_out.value.data = np.zeros(self.n)
        self.contact_out.value.data = np.ones(2, dtype=bool)
        self.swing_out.value.data = np.zeros(2)
        self.feet_out.value.data = np.zeros(8)
        self._outs = (self.zmp_out, self.pos_out, self.rpy_out, self.cog_out, self.contact_out,
                      self.swing_out, self.walk_out, self.feet_out)
        self.q_ref = np.zeros(self.n)
        self.have_ref = False                  # a qRef (or the first qInit) was taken
        self.waiters = CycleWaiters(self)      # completions of the blocking calls
        self._warn = Throttled(self.log, 5.0)
        self._tmp = np.zeros(4)
        from .service import AutoBalancerServiceImpl   # the servant needs the compiled stubs
        self.service = AutoBalancerServiceImpl(self)
        port = self.add_service_port(ServicePort("AutoBalancerService"))
        port.provide("service0", "AutoBalancerService", self.service)
        port.provide("local", "AutoBalancerLocal", self, local=True)     # e.g. NAOqi

    def _limits_from(self, sp: list, half_width: float) -> StrideLimits:
        return StrideLimits(sp[0], sp[1], math.radians(sp[2]), sp[3], sp[4],
                            math.radians(sp[5]), half_width)

    def _gait_from_params(self) -> GaitParams:
        p = GaitParams(step_time=self.step_time, step_height=self.step_height,
                       double_support_ratio=self.double_support_ratio, start_hold=0.5,
                       zmp_offset_x=self.zmp_offset[0], zmp_offset_y=self.zmp_offset[1])
        p.check()
        return p

    def on_activated(self, ec: Any) -> None:
        cfg = BalancerConfig(**{"dt": ec.period, "transition_time": self.transition_time,
                                "preview_horizon": self.preview_horizon,
                                "gravity": self.gravity, **self.cfg_over})
        self.core = AutoBalancerCore(self.kin, self.mass, self.limits, self.params_, cfg)
        self.waiters.start()

    def on_deactivated(self, ec: Any) -> None:
        self.waiters.release()

    def on_aborting(self, ec: Any) -> None:
        self.waiters.release()

    def on_finalize(self) -> None:
        self.waiters.release()

    def on_params_changed(self, names: set[str]) -> None:
        """Runs in: EC thread. Gait parameters apply to the steps planned from now on."""
        try:
            limits = self._limits_from(self.stride_parameter, self.half_width)
            params = self._gait_from_params()
        except (FootstepError, GaitError) as e:
            self.log.error("gait parameters refused: %s", e)
            return
        self.limits, self.params_ = limits, params
        for name in names & {"transition_time", "gravity"}:
            self.cfg_over.pop(name, None)
        if self.core is not None:
            self.core.set_params(params, limits)
            if names & {"transition_time", "gravity"}:
                self.core.cfg = replace(self.core.cfg, transition_time=self.transition_time,
                                        gravity=self.gravity)

    def on_execute(self, ec: Any) -> None:
        """Runs in: EC thread. Newest qRef, one balancer period, outputs."""
        new = self.read_inputs()
        core = self.core
        if core is None or not self.have_ref:
            self.waiters.check()
            return
        np.copyto(self.held_out.value.data, self.q_ref)
        stamp(self.held_out.value, ec.planned)
        self.held_out.write()
        if core.mode == IDLE:
            core.step(self.q_ref)
            if new:
                self._write(ec.planned)
        else:
            core.step(self.q_ref)
            self._write(ec.planned)
        self.waiters.check()

    def read_inputs(self) -> bool:
        """Take the newest qRef (or, before any reference, qInit's first sample). True when
        the reference changed.
        Runs in: EC thread."""
        new = False
        if self.q_in.read_newest() is ReadStatus.NEW:
            new = self._take(self.q_in.value.data, "qRef")
        if not self.have_ref and self.q_init_in.read_newest() is ReadStatus.NEW:
            new = self._take(self.q_init_in.value.data, "qInit") or new
        return new

    def _take(self, data: np.ndarray, port: str) -> bool:
        if data.shape != (self.n,) or not np.all(np.isfinite(data)):
            self._warn.warning("%s: expected %d finite joint angles (model order), got "
                               "shape %s: ignored", port, self.n, data.shape)
            return False
        np.copyto(self.q_ref, data)
        self.have_ref = True
        return True

    def _write(self, t: float) -> None:
        core = self.core
        np.copyto(self.q_out.value.data, core.q)
        stamp(self.q_out.value, t)
        self.q_out.write()
        if core.gait is None:
            return
        # the ZMP reference in the torso frame, as hrpsys's zmpOut
        T = core.torso_transform
        d = core.zmp_ref - T[:3, 3]
        z = self.zmp_out.value.data
        z.x, z.y, z.z = (float(T[0, k] * d[0] + T[1, k] * d[1] + T[2, k] * d[2])
                         for k in range(3))
        p = self.pos_out.value.data
        p.x, p.y, p.z = (float(v) for v in core.base_pos)
        r = self.rpy_out.value.data
        r.r, r.p, r.y = (float(v) for v in core.base_rpy)
        c = self.cog_out.value.data
        c.x, c.y, c.z = (float(v) for v in core.com_ref)
        gg = core.gait
        cs = self.contact_out.value.data
        cs[0], cs[1] = gg.contact["rleg"], gg.contact["lleg"]
        sw = self.swing_out.value.data
        sw[0] = gg.swing_left if not gg.contact["rleg"] else 0.0
        sw[1] = gg.swing_left if not gg.contact["lleg"] else 0.0
        self.walk_out.value.data = bool(core.walking)
        f = self.feet_out.value.data
        for k, leg in enumerate(("lleg", "rleg")):
            fp = gg.feet[leg]
            f[4 * k], f[4 * k + 1], f[4 * k + 2], f[4 * k + 3] = fp.x, fp.y, gg.foot_z[leg], \
                fp.theta
        for port in self._outs:
            stamp(port.value, t)
            port.write()

    def settled(self) -> bool:
        """No step left and no transition under way. Runs in: EC thread."""
        core = self.core
        return core is None or (not core.walking and core.mode in (IDLE, ABC))


__all__ = ["AutoBalancer", "BalancerError"]
