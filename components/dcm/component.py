"""The DCM RT component: the shell around DcmCore and the simulated body."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import numpy as np

from rtcf import CheckContext, Component, Param, ReadStatus, ReturnCode, TimedDoubleSeq
from rtcf.datatypes import time_parts
from rtcf.errors import show_value
from rtcf.log import Throttled
from rtcf.paths import user_path
from rtcf.services import ServicePort

from .body import SimulatedBody
from .devices import DeviceTable, ModelError, normalize_key
from .timeline import DcmCore, DcmError, show

_NEW = ReadStatus.NEW          # looked up once (an enum member through its class costs more)
PROFILE_PERIOD_MS = {"default": 10, "naoV4": 10, "naoV5": 12, "naoV6": 12}
MODEL_DIR = Path(__file__).resolve().parents[2] / "model"


def find_model(name: str) -> Path:
    """A model file: absolute, relative to the directory the command was typed in (RTCF_CWD,
    rtcf.paths.user_path), to the manager's working folder (the project), or in the
    project's model/. Runs in: any thread."""
    p = Path(name).expanduser()
    cands = [p] if p.is_absolute() else [user_path(p), p, MODEL_DIR / p]
    for cand in cands:
        if cand.is_file():
            return cand
    raise FileNotFoundError(f"model file {name!r} not found (looked in "
                            f"{', '.join(dict.fromkeys(str(c.parent) for c in cands))})")


def _run_of(index: np.ndarray) -> slice | np.ndarray:
    """``index`` as a slice when it is a contiguous increasing run (a[slice] is a view, the
    same values as a[index] without the gather), else ``index`` itself. Runs in: any thread."""
    if len(index) and np.array_equal(index, np.arange(index[0], index[0] + len(index))):
        return slice(int(index[0]), int(index[0]) + len(index))
    return index


class Connection:
    """Returned by at_pre_process / at_post_process; disconnect() removes the callback."""

    def __init__(self, hooks: list, cb: Callable[[], None]):
        self._hooks, self._cb = hooks, cb

    def disconnect(self) -> None:
        if self._cb in self._hooks:
            self._hooks.remove(self._cb)


class DCM(Component):
    """NAO's Device Communication Manager: timed commands, aliases, a simulated body.

    | port | type | unit | meaning |
    |---|---|---|---|
    | qRef (in) | TimedDoubleSeq | rad | joint position reference, 26 joints in body order; each new sample becomes a command dated now for the Position actuators (NaN: leave that joint) |
    | q | TimedDoubleSeq | rad | measured joint positions (Position sensors), body order |
    | qCommand | TimedDoubleSeq | rad | Position actuator values sent this cycle, body order |
    | hardness | TimedDoubleSeq | 0..1 | Hardness actuator values, body order |
    | actuators | TimedDoubleSeq | - | every actuator value in table order (see getActuatorKeys) |
    | sensors (body=mujoco) | TimedDoubleSeq | see getSensorKeys | the IMU and FSR sensor values, in getSensorKeys order after the joint Position sensors |
    | basePos, baseRpy (body=mujoco) | TimedPoint3D, TimedOrientation3D | m, rad | ground-truth torso pose in the world (the Simulator's ports) |
    | DCMService | service | - | NAO::DCMService (idl/DCMService.idl); in process also the local interface DCMLocal (this component) |
    | SimulatorService (body=mujoco) | service | - | Simulation::SimulatorService (idl/SimulatorService.idl): push, pause, step, reset, getBodyState, ... on the body's physics, the Simulator's servant |

    DCM time [ms] counts from the first cycle of the component's EC. A component of the same
    process whose service port is connected to DCMService in the composition gets the local
    interface ``DCMLocal``, this component (as a NAOqi local module reaches the DCM of its
    process): it registers preProcess / postProcess callbacks with at_pre_process /
    at_post_process and reads ``devices``, ``sensor_values``, ``now_ms``, ``core.values``.
    """

    type_name = "DCM"
    category = "nao"
    model = Param(str, "nao_h25_v5.yaml", read_only=True, doc="robot model file")
    profile = Param(str, "default", choices=tuple(PROFILE_PERIOD_MS), read_only=True,
                    doc="robot profile: naoV5/naoV6 run the DCM at 12 ms, others at 10 ms")
    period_ms = Param(int, 0, unit="ms", bounds=(0, 1000), read_only=True,
                      doc="DCM cycle; 0 takes it from the profile (the EC rate should match)")
    servo_tau = Param(float, 0.05, unit="s", bounds=(1e-4, None),
                      doc="time constant of the simulated joint servos at hardness 1")
    initial_hardness = Param(float, 1.0, bounds=(0.0, 1.0),
                             doc="hardness of every joint at activation (simulated body)")
    max_commands = Param(int, 512, bounds=(1, 100000), read_only=True,
                         doc="timed commands buffered per actuator (NAOqi 2.x: 512)")
    body = Param(str, "simple", choices=("simple", "mujoco"), read_only=True,
                 doc="the robot under the DCM: simple (first-order servos) or mujoco "
                     "(physics, components/dcm/mujoco_body.py; IMU and FSR keys too)")
    initial_q = Param(list, [], unit="rad", read_only=True,
                      doc="body=mujoco: the posture the robot stands in at start (every joint, "
                          "body order; empty: the zero posture); the Position actuators start "
                          "there too")
    sim_model = Param(str, "nao_v5", read_only=True,
                      doc="body=mujoco: physics model name (model/sim/) or MJCF file (relative: "
                          "to the folder the command was typed in, or the project)")

    @classmethod
    def check_config(cls, params: dict[str, Any], ctx: CheckContext) -> list[tuple[str, str]]:
        """Before anything starts: the model file loads, initial_q has one angle per joint;
        with body mujoco the physics model fits the DCM's joints and FSRs, and every EC runs
        at the DCM cycle (the physics advances one DCM cycle per EC cycle).
        Runs in: the manager's main thread."""
        try:
            devices = DeviceTable.from_model(find_model(params["model"]))
        except (OSError, ModelError) as e:
            return [(ctx.param("model"), f"{e}, got {params['model']!r}")]
        out = []
        q0 = params["initial_q"]
        if q0 and len(q0) != devices.n_joints:
            out.append((ctx.param("initial_q"), f"expected {devices.n_joints} joint angles "
                        f"[rad] in body order ({', '.join(devices.joint_names[:3])}, ... "
                        f"{devices.joint_names[-1]}), got {len(q0)}: {show_value(q0)}"))
        if params["body"] != "mujoco":
            return out
        try:
            from .mujoco_body import body_model_problem
        except ImportError as e:
            return out + [(ctx.param("body"), f"body mujoco needs the mujoco package ({e}), "
                                              "got 'mujoco'")]
        from rtcf_components.simulator.component import load_sim_model
        from rtcf_components.simulator.core import SimError
        cycle = params["period_ms"] or PROFILE_PERIOD_MS[params["profile"]]
        try:
            sim_model = load_sim_model(params["sim_model"])
        except SimError as e:
            return out + [(ctx.param("sim_model"), f"{e}, got {params['sim_model']!r}")]
        problem = body_model_problem(devices, sim_model, cycle / 1000.0)
        if problem:
            out.append((ctx.param("sim_model"), f"{problem}, got {params['sim_model']!r}"))
        for ec in ctx.ecs:
            if abs(1000.0 / ec.rate - cycle) > 1e-6:
                out.append((ec.rate_where, f"expected {1000.0 / cycle:g} Hz: {ctx.instance}'s "
                            f"body is the MuJoCo physics, which advances one DCM cycle "
                            f"({cycle} ms: profile {params['profile']}, period_ms "
                            f"{params['period_ms']}) per EC cycle, got {ec.rate:g}"))
        return out

    # -- lifecycle (EC thread) -------------------------------------------------------------
    def on_initialize(self) -> None:
        self.devices = DeviceTable.from_model(find_model(self.model))
        self.core = DcmCore(self.devices, self.max_commands)
        self.cycle_ms = self.period_ms or PROFILE_PERIOD_MS[self.profile]
        self.sim_host = None                 # body=mujoco: the SimulatorService's host
        if self.body == "mujoco":
            from rtcf_components.simulator.component import load_sim_model, log_mujoco_warnings
            from .mujoco_body import MujocoBody   # needs the mujoco package
            log_mujoco_warnings()
            q0 = self._initial_q()
            self.robot_body = MujocoBody(self.devices, load_sim_model(self.sim_model),
                                         self.cycle_ms / 1000.0,
                                         initial_q=q0)
            if q0 is not None:
                self.core.values[np.asarray(self.devices.position_actuators)] = q0
        else:
            self.robot_body = SimulatedBody(self.devices, self.servo_tau)
        extra = getattr(self.robot_body, "extra_sensor_keys", ())
        self.sensor_keys = tuple(self.devices.sensor_keys) + tuple(extra)
        self._extra_index = {k: i for i, k in enumerate(extra)}
        d = self.devices
        self._pos = np.asarray(d.position_actuators)
        self._hard = np.asarray(d.hardness_actuators)
        # how the cycle picks them out of the actuator values: a slice (a view, no copy) when
        # the indices are a contiguous run, as in every model's table; else the indices
        self._pos_at, self._hard_at = _run_of(self._pos), _run_of(self._hard)
        n = d.n_joints
        self.q_in = self.add_in_port("qRef", TimedDoubleSeq)
        self.q_out = self.add_out_port("q", TimedDoubleSeq)
        self.cmd_out = self.add_out_port("qCommand", TimedDoubleSeq)
        self.hard_out = self.add_out_port("hardness", TimedDoubleSeq)
        self.act_out = self.add_out_port("actuators", TimedDoubleSeq)
        for port, size in ((self.q_out, n), (self.cmd_out, n), (self.hard_out, n),
                           (self.act_out, d.n_actuators)):
            port.value.data = np.zeros(size)
        self._staged = np.full(n, np.nan)      # positions from command_positions()
        self._has_staged = False
        self._pre: list[Callable[[], None]] = []
        self._post: list[Callable[[], None]] = []
        self._origin: float | None = None
        self.now_ms: int | None = None        # DCM time of the last cycle (read by getTime)
        self.sensor_values = self.robot_body.sensors
        self.sensors_out = None              # the non-joint sensors (body=mujoco)
        if extra:
            self.sensors_out = self.add_out_port("sensors", TimedDoubleSeq)
            self.sensors_out.value.data = np.zeros(len(extra))
        self.base_pos_out = self.base_rpy_out = None   # the ground truth of a physics body
        if getattr(self.robot_body, "base_pos", None) is not None:
            self.base_pos_out = self.add_out_port("basePos", "TimedPoint3D")
            self.base_rpy_out = self.add_out_port("baseRpy", "TimedOrientation3D")
        # what each cycle writes, looked up once: the ports in their order of writing, and
        # the Position and Hardness values as views of the core's values (DcmCore updates
        # them in place, never replaces them) when their indices are runs (None: gathered
        # each cycle)
        self._outs = tuple(p for p in (self.q_out, self.cmd_out, self.hard_out, self.act_out,
                                       self.base_pos_out, self.base_rpy_out, self.sensors_out)
                           if p is not None)
        values = self.core.values
        self._pos_view = values[self._pos_at] if isinstance(self._pos_at, slice) else None
        self._hard_view = values[self._hard_at] if isinstance(self._hard_at, slice) else None
        self._faults = hasattr(self.robot_body, "fault")
        self._warn = Throttled(self.log, 5.0)
        self._warn_speed = Throttled(self.log, 5.0)
        self._speed_counted = hasattr(self.robot_body, "velocity_exceeded")   # physics bodies
        self._velocity_seen = 0
        from .service import DCMServiceImpl   # the servant needs the compiled stubs
        self.service = DCMServiceImpl(self)
        port = self.add_service_port(ServicePort("DCMService"))
        port.provide("service0", "DCMService", self.service)
        port.provide("local", "DCMLocal", self, local=True)     # components of this process
        if self.body == "mujoco":
            # the simulator's own service, on the same servant code as the Simulator's
            from rtcf_components.simulator.service import BodyHost, SimulatorServiceImpl
            self.sim_host = BodyHost(self, self.robot_body, self.reset_robot)
            self.sim_service = SimulatorServiceImpl(self.sim_host)
            port = self.add_service_port(ServicePort("SimulatorService"))
            port.provide("service0", "SimulatorService", self.sim_service)

    def _initial_q(self) -> np.ndarray | None:
        """The initial_q parameter checked against the model (None when empty)."""
        if not self.initial_q:
            return None
        n = self.devices.n_joints
        if len(self.initial_q) != n:
            raise ValueError(f"{self.instance_name}: initial_q: expected {n} joint angles "
                             f"(body order), got {len(self.initial_q)}")
        return np.clip(np.array(self.initial_q, dtype=float), self.devices.joint_limits[:, 0],
                       self.devices.joint_limits[:, 1])

    def on_activated(self, ec: Any) -> None:
        if abs(ec.period * 1000.0 - self.cycle_ms) > 1e-6:
            self.log.warning("the EC period is %.3f ms but the DCM cycle is %d ms (profile "
                             "%s): DCM time follows the EC", ec.period * 1e3, self.cycle_ms,
                             self.profile)
        hard = self.core.values
        hard[self._hard] = self.initial_hardness

    def on_reset(self, ec: Any) -> None:
        """Runs in: EC thread. Leaving ERROR: a body that failed starts afresh."""
        if getattr(self.robot_body, "fault", None) is not None:
            self.robot_body.reset()

    def on_execute(self, ec: Any) -> Any:
        """Runs in: EC thread. The cycle of NAOqi's DCM: preProcess, computation, actuators,
        body, sensors, postProcess. A body fault (``Body.fault``: the physics blew up)
        is logged and sends the DCM to ERROR before anything of the cycle is written."""
        planned = ec.planned
        if self._origin is None:
            self._origin = planned
        now = int(round((planned - self._origin) * 1000.0))
        self.now_ms = now
        for cb in self._pre:
            self._run_callback(cb, "preProcess")
        core = self.core
        values = core.step(now)
        if self._has_staged:
            self._has_staged = False
            core.command_now(self._pos, self._staged)
        if self.q_in.read_newest() is _NEW:
            self._apply_qref()
        pos, hard = self._pos_view, self._hard_view
        if pos is None:
            pos = values[self._pos_at]
        if hard is None:
            hard = values[self._hard_at]
        body = self.robot_body
        sensors = body.update(pos, hard, ec.period)
        if self._faults and body.fault is not None:
            self.log.error("body %s: %s; %s goes to ERROR (the other components run on): "
                           "reset it (rtreset, or reset_component on its execution context) "
                           "and activate it to start the body afresh", self.body, body.fault,
                           self.instance_name)
            return ReturnCode.RTC_ERROR
        if self._speed_counted and body.velocity_exceeded != self._velocity_seen:
            seen, self._velocity_seen = self._velocity_seen, body.velocity_exceeded
            if self._velocity_seen > seen:          # (a body reset starts the count afresh)
                self._warn_speed.warning("body %s: joint samples above the velocity limit so "
                                         "far: %d (driven from outside: a push, a limp fall)",
                                         self.body, self._velocity_seen)
        self._write(planned, values, sensors, pos, hard)
        for cb in self._post:
            self._run_callback(cb, "postProcess")
        return None

    def _apply_qref(self) -> None:
        """qRef as commands dated now for the Position actuators (after step(now): the same
        as a Merge before it, without rebuilding the buffers)."""
        q = self.q_in.value.data
        if q.shape != self._pos.shape:
            self._warn.warning("qRef has %d values, expected %d (body order): ignored",
                               q.size, self._pos.size)
            return
        self.core.command_now(self._pos, q)

    def _write(self, t: float, values: np.ndarray, sensors: np.ndarray, pos: np.ndarray,
               hard: np.ndarray) -> None:
        """Every out port of the cycle, stamped ``t``: q, qCommand, hardness, actuators, then
        a physics body's basePos, baseRpy and sensors. Same-shape stores as ``[...] =``
        (the copy np.copyto makes, for less); the cycle's one time split once."""
        self.q_out.value.data[...] = sensors
        self.cmd_out.value.data[...] = pos
        self.hard_out.value.data[...] = hard
        self.act_out.value.data[...] = values
        body = self.robot_body
        if self.base_pos_out is not None:
            p = self.base_pos_out.value.data
            p.x, p.y, p.z = body.base_pos.tolist()       # floats, one call per vector
            r = self.base_rpy_out.value.data
            r.r, r.p, r.y = body.base_rpy.tolist()
        if self.sensors_out is not None:
            self.sensors_out.value.data[...] = body.extra_sensors
        sec, nsec = time_parts(t)
        for port in self._outs:
            tm = port.value.tm
            tm.sec = sec
            tm.nsec = nsec
            port.write()

    def reset_robot(self) -> None:
        """The body back to its initial posture at rest (``initial_q``, else the zero posture
        clipped to the joint limits; a physics body standing on the floor, its time at 0),
        every timed command dropped and the Position actuators holding that posture at the
        initial hardness (SimulatorService.reset). Upstream components keep commanding (a
        SequencePlayer's next qRef sample moves the robot again). Runs in: EC thread."""
        self.robot_body.reset()               # initial_q, else the zero posture
        values = np.array(self.core.values)
        limits = self.devices.joint_limits
        q0 = self._initial_q()
        values[self._pos] = np.clip(0.0, limits[:, 0], limits[:, 1]) if q0 is None else q0
        values[self._hard] = self.initial_hardness
        self.core.reset(values)
        self._has_staged = False

    def _run_callback(self, cb: Callable[[], None], what: str) -> None:
        try:
            cb()
        except Exception as e:  # a module's callback must not stop the DCM
            self._warn.error("%s callback %r failed: %r", what, cb, e)

    # -- in-process API (NAOqi's atPreProcess / atPostProcess) -------------------------------
    def at_pre_process(self, cb: Callable[[], None]) -> Connection:
        """Run ``cb()`` at the start of every cycle, before the commands are computed; a
        set() made there with time <= now takes effect in the same cycle."""
        self._pre.append(cb)
        return Connection(self._pre, cb)

    def command_positions(self, values: np.ndarray) -> None:
        """Position commands dated now for every joint (body order; NaN leaves a joint),
        applied in this very cycle right after the timed commands are computed, as a qRef
        sample is: the cheap path for a controller's stream (no alias, no buffer rebuild).
        Call from a preProcess callback. Runs in: EC thread."""
        if values.shape != self._staged.shape:
            raise DcmError(f"command_positions: expected {self._staged.size} values (body "
                           f"order), got {values.size}")
        np.copyto(self._staged, values)
        self._has_staged = True

    def at_post_process(self, cb: Callable[[], None]) -> Connection:
        """Run ``cb()`` after the sensor values of the cycle are written."""
        self._post.append(cb)
        return Connection(self._post, cb)

    # -- reads (any thread: values of the last completed cycle) ---------------------------
    def read_value(self, key: str) -> float:
        """An actuator value (sent last cycle) or a Position sensor value, by memory key."""
        d = self.devices
        try:
            return float(self.core.values[d.actuator_index(key)])
        except KeyError:
            pass
        try:
            return float(self.sensor_values[d.sensor_index(key)])
        except KeyError:
            pass
        i = self._extra_index.get(normalize_key(key)) if isinstance(key, str) else None
        if i is None:
            raise DcmError(f"unknown actuator or sensor key {show(key)}")
        return float(self.robot_body.extra_sensors[i])
