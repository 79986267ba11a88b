"""The Simulator RT component: MuJoCo physics as the robot, with hrpsys RobotHardware's ports.

hrpsys's RobotHardware (rtc/RobotHardware/RobotHardware.cpp) reads qRef / dqRef / tauRef and
writes q / dq / tau plus one port per sensor of the robot model, named after the sensor
(hrpsys sample models call them gsensor, gyrometer, lfsensor, rfsensor). The Simulator keeps
those names; dqRef is not taken (MuJoCo's servos here are position servos), `stiffness` is
an rtcf addition (hrpsys sets servo gains through RobotHardwareService instead).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from rtcf import CheckContext, Component, Param, ReadStatus, ReturnCode, TimedDoubleSeq
from rtcf.datatypes import time_parts
from rtcf.log import Throttled, get_logger
from rtcf.paths import user_path
from rtcf.services import ServicePort

from .core import (BUNDLED, SimDiverged, SimError, SimModel, Simulation, initial_q_problem,
                   period_problem, route_warnings)


ROOT = Path(__file__).resolve().parents[2]
# looked up once: an enum member's lookup through its class costs about as much as a call
_NEW = ReadStatus.NEW


def load_sim_model(spec: str) -> SimModel:
    """A bundled model by name (nao_v5, m1013) or an MJCF file: absolute, relative to the
    directory the command was typed in (RTCF_CWD, rtcf.paths.user_path: a model beside the
    user's composition), or a file of the project. SimError names the places looked in.
    Runs in: any thread (the manager's pre-start check, on_initialize)."""
    if spec in BUNDLED:
        return SimModel.load(spec)
    if Path(spec).expanduser().is_absolute():
        return SimModel.load(str(Path(spec).expanduser()))
    cands = [user_path(spec), ROOT / spec]
    found = next((c for c in cands if c.is_file()), None)
    if found is None:
        raise SimError(f"{spec}: no such model file in {cands[0].parent} or {ROOT} (bundled "
                       f"models: {', '.join(BUNDLED)})")
    return SimModel.load(str(found))


def log_mujoco_warnings() -> None:
    """MuJoCo's own warnings into the log (logger ``rtcf.mujoco``, at most one line per 5 s)
    rather than stdout and a MUJOCO_LOG.TXT in the working folder. Runs in: any thread."""
    global _MUJOCO_LOG
    if _MUJOCO_LOG is None:
        _MUJOCO_LOG = Throttled(get_logger("mujoco"), 5.0)
        route_warnings(lambda text: _MUJOCO_LOG.warning("MuJoCo: %s", text.strip()))


_MUJOCO_LOG: Throttled | None = None


class Simulator(Component):
    """MuJoCo physics as the robot: position servos and torques in, joint and body sensors out.

    | port | type | unit | meaning |
    |---|---|---|---|
    | qRef (in) | TimedDoubleSeq | rad | position servo targets, model joint order (NAO: the DCM's 26 joints) |
    | tauRef (in) | TimedDoubleSeq | N m | joint torques added to the servos', clamped at the effort limit (counted) |
    | stiffness (in) | TimedDoubleSeq | 0..1 | servo strength: one value for all joints or one per joint; 0 = limp |
    | q, dq, tau | TimedDoubleSeq | rad, rad/s, N m | measured joint position, velocity, applied torque |
    | gsensor | TimedAcceleration3D | m/s^2 | torso accelerometer (reads +g up at rest); floating models |
    | gyrometer | TimedAngularVelocity3D | rad/s | torso rate gyro; floating models |
    | lfsensor, rfsensor | TimedDoubleSeq | N, N m | foot force/torque Fx Fy Fz Tx Ty Tz, sole frame; models with feet |
    | zmp | TimedPoint3D | m | zero moment point on the floor, world frame; models with feet |
    | basePos, baseRpy | TimedPoint3D, TimedOrientation3D | m, rad | ground-truth base pose; floating models |
    | SimulatorService | service | - | Simulation::SimulatorService (idl/SimulatorService.idl); in process also the local interface SimulatorLocal (this component: ``sim``, ``sim_model``) |

    Activation puts the robot back to its initial posture at rest (a floating robot standing
    on the floor) with the servos at the `stiffness` parameter; the physics is created at
    the first activation, for the EC's period.
    Each cycle writes the sensors of the current state (stamped with the cycle's time; every
    out port's value is refreshed, the ports in use are written), then applies the newest
    commands and advances the physics by one EC period (the period
    must be a multiple of the model's 1 ms timestep). A command sample that is malformed
    (wrong length, NaN, stiffness outside [0, 1]) is refused whole with a throttled warning
    naming it; the previous command stays. A period in which the physics blows up (MuJoCo
    finds a NaN, infinite or huge state) is a fault: logged, ERROR, nothing of the lost state
    written; reset and activate start afresh. Pushes are bounded by 20 x the robot's weight.
    """

    type_name = "Simulator"
    category = "simulation"
    model = Param(str, "nao_v5", read_only=True,
                  doc="bundled model (nao_v5, m1013) or path to an MJCF file made like them "
                      "(relative: to the folder the command was typed in, or the project)")
    initial_q = Param(list, [], elem=float, unit="rad", read_only=True,
                      doc="joint angles at activation and reset, model order; empty: the "
                          "zero posture clipped to the limits")
    stiffness = Param(float, -1.0, bounds=(-1.0, 1.0),
                      doc="servo stiffness of every joint, 0..1, from activation, reset and "
                          "when set; negative: the model's default (NAO 1, M1013 0: torque "
                          "control)")

    @classmethod
    def check_config(cls, params: dict[str, Any], ctx: CheckContext) -> list[tuple[str, str]]:
        """Before anything starts: the model loads, initial_q has one angle per joint inside
        its range, and every EC's period is a whole multiple of the model's timestep.
        Runs in: the manager's main thread."""
        try:
            model = load_sim_model(params["model"])
        except SimError as e:
            return [(ctx.param("model"), f"{e}, got {params['model']!r}")]
        out = []
        if params["initial_q"]:
            problem = initial_q_problem(model, params["initial_q"])
            if problem:
                out.append((ctx.param("initial_q"), problem))
        for ec in ctx.ecs:
            problem = period_problem(model, 1.0 / ec.rate)
            if problem:
                top = 1.0 / model.timestep
                out.append((ec.rate_where, f"expected a rate whose period is a whole "
                            f"multiple of the timestep of {ctx.instance}'s model "
                            f"{model.name}, {model.timestep:g} s (it steps the physics one "
                            f"EC period per cycle: {top:g}, {top / 2:g}, {top / 4:g}, "
                            f"{top / 10:g} Hz, ...), got {ec.rate:g}"))
        return out

    # -- lifecycle (EC thread) -------------------------------------------------------------
    def on_initialize(self) -> None:
        log_mujoco_warnings()
        try:
            self.sim_model = load_sim_model(self.model)
        except SimError as e:
            raise SimError(f"{self.instance_name}: model: {e}") from None
        m = self.sim_model
        n = len(m.joint_names)
        self.sim: Simulation | None = None
        self.q_in = self.add_in_port("qRef", TimedDoubleSeq)
        self.tau_in = self.add_in_port("tauRef", TimedDoubleSeq)
        self.stiff_in = self.add_in_port("stiffness", TimedDoubleSeq)
        self.q_out = self._seq_out("q", n)
        self.dq_out = self._seq_out("dq", n)
        self.tau_out = self._seq_out("tau", n)
        self.outs = [self.q_out, self.dq_out, self.tau_out]
        self.acc_out = self.gyro_out = self.lf_out = self.rf_out = None
        self.zmp_out = self.pos_out = self.rpy_out = None
        if m.floating:
            self.acc_out = self.add_out_port("gsensor", "TimedAcceleration3D")
            self.gyro_out = self.add_out_port("gyrometer", "TimedAngularVelocity3D")
            self.pos_out = self.add_out_port("basePos", "TimedPoint3D")
            self.rpy_out = self.add_out_port("baseRpy", "TimedOrientation3D")
            self.outs += [self.acc_out, self.gyro_out, self.pos_out, self.rpy_out]
        if m.fsr_names:
            self.lf_out = self._seq_out("lfsensor", 6)
            self.rf_out = self._seq_out("rfsensor", 6)
            self.zmp_out = self.add_out_port("zmp", "TimedPoint3D")
            self.outs += [self.lf_out, self.rf_out, self.zmp_out]
        # each out port with its value's stamp (the port's own objects, kept for its life)
        self._stamps = tuple((port, port.value.tm) for port in self.outs)
        self._structs = self.acc_out is not None or self.lf_out is not None
        self._stiff = np.zeros(n)
        self.refused = 0             # command samples refused
        self._saturations_seen = 0
        self._velocity_seen = 0
        self._warn = Throttled(self.log, 5.0)
        self._warn_speed = Throttled(self.log, 5.0)
        from .service import SimulatorServiceImpl   # the servant needs the compiled stubs
        self.service = SimulatorServiceImpl(self)
        port = self.add_service_port(ServicePort("SimulatorService"))
        port.provide("service0", "SimulatorService", self.service)
        port.provide("local", "SimulatorLocal", self, local=True)   # e.g. a controller manager

    def _seq_out(self, name: str, size: int) -> Any:
        port = self.add_out_port(name, TimedDoubleSeq)
        port.value.data = np.zeros(size)
        return port

    def on_activated(self, ec: Any) -> None:
        if self.sim is None or abs(self.sim.period - ec.period) > 1e-12:
            self.sim = Simulation(self.sim_model, ec.period,   # SimError names the period
                                  self.initial_q or None)
            self._bind_copies()
        self.reset_robot()

    def _bind_copies(self) -> None:
        """`_outs`: each out port (the order of `outs`) with its value's stamp and, for the
        array sensors, their copy into the port's value as a pair of memoryviews
        (destination, source; None, None for the struct ports), made once per Simulation: a
        slice assignment between two memoryviews copies the same bytes as ``dst[...] = src``
        at a fraction of numpy's cost per call. The values, their arrays and stamps are the
        ports' own (on_initialize); the sources are the Simulation's fixed views.
        Runs in: EC thread."""
        s = self.sim.sensors
        sources = {id(self.q_out): s.q, id(self.dq_out): s.dq, id(self.tau_out): s.tau}
        if self.lf_out is not None:
            sources.update({id(self.lf_out): s.lfoot, id(self.rf_out): s.rfoot})
        outs = []
        for port, tm in self._stamps:
            src = sources.get(id(port))
            outs.append((port, tm) + ((memoryview(port.value.data), memoryview(src))
                                      if src is not None else (None, None)))
        self._outs = tuple(outs)

    def reset_robot(self) -> None:
        """Initial posture at rest, servos holding it at the `stiffness` parameter.
        Runs in: EC thread."""
        self._stiff.fill(self._stiffness_param())
        self.sim.reset(stiffness=self._stiff)
        self._saturations_seen = self._velocity_seen = 0

    def _stiffness_param(self) -> float:
        return self.stiffness if self.stiffness >= 0 else self.sim_model.default_stiffness

    def _apply_stiffness_param(self) -> None:
        self._stiff.fill(self._stiffness_param())
        self.sim.set_stiffness(self._stiff)

    def on_params_changed(self, names: set[str]) -> None:
        """Runs in: EC thread. A new `stiffness` acts at once on every joint."""
        if "stiffness" in names and self.sim is not None:
            self._apply_stiffness_param()

    def on_execute(self, ec: Any) -> Any:
        """Runs in: EC thread. Sensors of the current state out, commands in, one period.
        A period in which the physics blows up is a fault: logged, and the component goes
        to ERROR (RTC_ERROR) without writing the lost state.

        The cycle's steps are written out here (no call per step, about 0.5k instructions
        each): every out port's value refreshed and stamped with the cycle's time, written
        where in use; the newest sample of each command port in use; one period."""
        sim = self.sim
        # -- sensors out. The values and their stamps are the ports' own preallocated
        # objects, looked up once (`_outs`, _bind_copies); MuJoCo's numbers are copied
        # into them
        if self._structs:                        # floating robots, robots with feet
            self._write_structs()
        sec, nsec = time_parts(ec.now)           # rtcf.datatypes.stamp, once for all ports
        # port by port (in the order of `outs`): the array's copy (q, dq, tau, lfsensor,
        # rfsensor), the stamp, the write where in use (``used``: in_use() without a call)
        for port, tm, dst, src in self._outs:
            if dst is not None:
                dst[:] = src
            tm.sec = sec
            tm.nsec = nsec
            if port.used:
                port.write()
        # -- commands: the newest sample of each command port in use (an unconnected port
        # has none; ``used``: in_use() without a call). A port whose sole buffer holds
        # nothing unread is not asked (read_newest would answer OLD / NO_DATA and change
        # nothing: InPort.sole_buffer)
        port = self.stiff_in
        if (port.used and ((buf := port.sole_buffer) is None or buf.count)
                and port.read_newest() is _NEW):
            self._take_stiffness(port.value.data)
        port = self.q_in
        if port.used and port.read_newest() is _NEW:
            try:
                sim.set_position_targets(port.value.data)
            except SimError as e:
                self._refuse("qRef", e)
        port = self.tau_in
        if (port.used and ((buf := port.sole_buffer) is None or buf.count)
                and port.read_newest() is _NEW):
            try:
                sim.set_torques(port.value.data)
            except SimError as e:
                self._refuse("tauRef", e)
        # -- one period
        try:
            sim.step()
        except SimDiverged as e:
            self.log.error("%s; %s goes to ERROR (the other components run on): reset it "
                           "(rtreset, or reset_component on its execution context) and "
                           "activate it to start the physics afresh", e, self.instance_name)
            return ReturnCode.RTC_ERROR
        if sim.saturations != self._saturations_seen:
            self._warn.warning("tauRef: %d joint torques beyond the effort limit clamped so "
                               "far", sim.saturations)
            self._saturations_seen = sim.saturations
        if sim.velocity_exceeded != self._velocity_seen:
            self._warn_speed.warning("joint samples above the velocity limit so far: %d (driven "
                                     "from outside, or a model without motor back-EMF)",
                                     sim.velocity_exceeded)
            self._velocity_seen = sim.velocity_exceeded
        return None

    def _take_stiffness(self, data: np.ndarray) -> None:
        sim = self.sim
        n = self._stiff.size
        if data.size not in (1, n):
            self._refuse("stiffness", SimError(f"expected 1 or {n} values, got {data.size}"))
            return
        lo, hi = float(np.min(data)), float(np.max(data))
        if not (0.0 <= lo and hi <= 1.0) or math.isnan(lo + hi):
            self._refuse("stiffness", SimError(f"expected values in [0, 1], got "
                                               f"{np.asarray(data).tolist()[:8]}"))
            return
        self._stiff[:] = data
        sim.set_stiffness(self._stiff)          # the current targets stay

    def _refuse(self, port: str, e: Exception) -> None:
        self.refused += 1
        self._warn.warning("%s: sample refused (%s); the previous command stays", port, e)

    def _write_structs(self) -> None:
        """The struct sensors into their ports' values (a floating robot's IMU and base
        pose, the ZMP of a robot with feet): Python floats, as float(s.acc[i])."""
        s = self.sim.sensors
        if self.acc_out is not None:
            a = self.acc_out.value.data
            a.ax, a.ay, a.az = s.acc.tolist()
            g = self.gyro_out.value.data
            g.avx, g.avy, g.avz = s.gyro.tolist()
            p = self.pos_out.value.data
            p.x, p.y, p.z = s.base_pos.tolist()
            r = self.rpy_out.value.data
            r.r, r.p, r.y = s.base_rpy.tolist()
        if self.lf_out is not None:
            z = self.zmp_out.value.data
            z.x, z.y, z.z = s.zmp.tolist()
