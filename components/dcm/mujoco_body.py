"""The DCM's body on MuJoCo physics (``DCM`` parameter ``body: mujoco``).

Implements the DCM's ``Body`` protocol (components/dcm/body.py): each DCM cycle the Position
and Hardness actuator values drive the simulated NAO's position servos
(``Simulation.set_position_targets``: Hardness scales the servo torque limit, 0 = limp) and
the physics advances by exactly one period. The joint Position sensors are the simulated
joint angles; the other NAO sensors are filled from the simulation under NAOqi's memory keys
(short form, without ``Device/SubDeviceList/``):

=====================================================  =====  ==================================
key                                                    unit   value
=====================================================  =====  ==================================
InertialSensor/AccelerometerX|Y|Z/Sensor/Value          m/s2   torso accelerometer (specific
                                                               force: +9.81 on Z standing still)
InertialSensor/GyroscopeX|Y|Z/Sensor/Value              rad/s  torso gyrometer
InertialSensor/AngleX|Y|Z/Sensor/Value                  rad    torso roll, pitch, yaw
LFoot|RFoot/FSR/FrontLeft|FrontRight|RearLeft|RearRight kg     foot FSRs (force / g, as NAOqi)
LFoot|RFoot/FSR/TotalWeight/Sensor/Value                kg     sum of that foot's four FSRs
LFoot|RFoot/FSR/CenterOfPressure/X|Y/Sensor/Value       m      centre of pressure, sole frame
=====================================================  =====  ==================================

The key names are those of the NAOqi 2.x DCM for NAO V5 (Aldebaran's "Actuator & Sensor
list"; the same strings are read by ros-naoqi's naoqi_dcm_driver and NAO teams' code). The
DCM keeps the joint Position sensors first (its own table) and appends these keys after them
(``extra_sensor_keys`` / ``extra_sensors``).

Pure: no rtcf / omniORB import. The physics is the Simulator's core
(components/simulator/core.py), which knows nothing of the DCM: the DCM package depends on
the simulator package, never the reverse. Arrays are allocated in the constructor;
``update`` copies in place. Runs in: the DCM's EC thread.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from rtcf_components.simulator.core import (SimDiverged, SimError, SimModel, Simulation,
                                            period_problem)

__all__ = ["MujocoBody", "SENSOR_KEYS", "body_model_problem"]

_add_reduce = np.add.reduce   # ndarray.sum() of a float64 vector is this reduction
_pack_into = struct.pack_into
_F64 = np.dtype(np.float64)

_AXES = ("X", "Y", "Z")
IMU_KEYS = tuple(f"InertialSensor/{q}{a}/Sensor/Value"
                 for q in ("Accelerometer", "Gyroscope", "Angle") for a in _AXES)
FSR_CELLS = ("FrontLeft", "FrontRight", "RearLeft", "RearRight")
FSR_KEYS = tuple(f"{foot}/FSR/{cell}/Sensor/Value" for foot in ("LFoot", "RFoot")
                 for cell in FSR_CELLS)
FOOT_KEYS = tuple(f"{foot}/FSR/{q}/Sensor/Value" for foot in ("LFoot", "RFoot")
                  for q in ("TotalWeight", "CenterOfPressure/X", "CenterOfPressure/Y"))
SENSOR_KEYS = IMU_KEYS + FSR_KEYS + FOOT_KEYS
"""The non-joint sensor keys, in the order of ``MujocoBody.extra_sensors``."""
_EXTRA_FORMAT = f"{len(SENSOR_KEYS)}d"


def body_model_problem(devices: Any, model: Any, period: float | None = None) -> str | None:
    """Why the physics model ``model`` (a name, a path or a SimModel) cannot be the body of a
    DCM with these devices and cycle ``period`` [s] (it does not load, has joints the DCM
    does not know or other FSRs, or its timestep does not divide the cycle), or None.
    Runs in: any thread (the DCM's pre-start check and its constructor)."""
    try:
        sim_model = model if isinstance(model, SimModel) else SimModel.load(model)
    except SimError as e:
        return str(e)
    names = tuple(devices.joint_names)
    missing = [j for j in sim_model.joint_names if j not in names]
    if missing:
        return (f"body mujoco: the physics model {sim_model.name!r} has joints the DCM "
                f"model does not know: {missing}")
    want = tuple(k[: -len("/Sensor/Value")] for k in FSR_KEYS)
    if sorted(sim_model.fsr_names) != sorted(want):
        return (f"body mujoco: the physics model {sim_model.name!r} has FSRs "
                f"{list(sim_model.fsr_names)}, expected {list(want)}")
    if period is not None:
        problem = period_problem(sim_model, period)
        if problem:
            return f"body mujoco: the DCM cycle of {problem}"
    return None


def _adjacent(a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """One view of the two float64 vectors ``a`` and ``b`` when ``b`` follows ``a`` in the
    same buffer (``a`` then ``b``), else None. Runs in: any thread."""
    base = a.base
    if (base is None or b.base is not base or base.ndim != 1 or base.dtype != np.float64
            or a.strides != (8,) or b.strides != (8,) or base.strides != (8,)):
        return None
    start = (a.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // 8
    if b.__array_interface__["data"][0] != a.__array_interface__["data"][0] + 8 * a.size:
        return None
    return base[start: start + a.size + b.size]


class MujocoBody:
    """NAO on MuJoCo behind the DCM (see the module doc).

    devices: the DCM's DeviceTable (joint names, limits, body order); model: a SimModel, or
    its name or MJCF path ("nao_v5"); period: [s] one DCM cycle, the physics step per ``update``;
    initial_q: the posture it stands in after every reset (DCM body order; default: the
    zero posture).
    DCM joints that a physics model does not have (none for nao_v5, which has all 26) read
    back their clamped command, as an ideal servo.
    """

    def __init__(self, devices: Any, model: Any = "nao_v5", period: float = 0.01,
                 initial_q: Any = None) -> None:
        self.model = model if isinstance(model, SimModel) else SimModel.load(model)
        problem = body_model_problem(devices, self.model)
        if problem:
            raise ValueError(problem)
        sim_q = None
        if initial_q is not None:                       # DCM body order -> the model's order
            names = tuple(devices.joint_names)
            q = np.asarray(initial_q, dtype=float)
            if q.shape != (len(names),):
                raise ValueError(f"body mujoco: initial_q: expected {len(names)} angles (DCM "
                                 f"body order), got {q.size}")
            sim_q = np.array([q[names.index(j)] if j in names else 0.0
                              for j in self.model.joint_names])
        self.sim = Simulation(self.model, period, initial_q=sim_q)
        self.period = float(period)
        names = tuple(devices.joint_names)
        sim_names = tuple(self.model.joint_names)
        n = len(names)
        self._lower = np.array(devices.joint_limits[:, 0])
        self._upper = np.array(devices.joint_limits[:, 1])
        # DCM joint -> simulation joint (or -1), simulation joint -> DCM joint
        self._sim_of = np.array([sim_names.index(j) if j in sim_names else -1 for j in names],
                                dtype=np.intp)
        self._mapped = np.flatnonzero(self._sim_of >= 0)
        self._unmapped = np.flatnonzero(self._sim_of < 0)
        self._mapped_sim = self._sim_of[self._mapped]
        self._identity = (len(sim_names) == n and
                          bool(np.array_equal(self._sim_of, np.arange(n))))
        self._dcm_of = np.array([names.index(j) for j in sim_names], dtype=np.intp)
        self._hip = None
        if "LHipYawPitch" in names and "RHipYawPitch" in names:   # one motor (body.py)
            self._hip = (names.index("LHipYawPitch"), names.index("RHipYawPitch"))
        self._cmd = np.zeros(n)
        self._hard = np.zeros(n)
        self._cmd_key: bytes | None = None      # the bits of the positions / hardness that
        self._hard_key: bytes | None = None     # cmd / hard hold clamped (None: nothing)
        self._q_ref = np.zeros(len(sim_names))
        self._stiff = np.zeros(len(sim_names))
        self.sensors = np.zeros(n)
        self.extra_sensor_keys: tuple[str, ...] = SENSOR_KEYS
        self.extra_sensors = np.zeros(len(SENSOR_KEYS))
        fsr_names = tuple(self.model.fsr_names)
        want = tuple(k[: -len("/Sensor/Value")] for k in FSR_KEYS)
        self._fsr_order = np.array([fsr_names.index(k) for k in want], dtype=np.intp)
        g = float(np.linalg.norm(self.sim.mj_model.opt.gravity))
        self._inv_g = 1.0 / g if g > 0.0 else 0.0
        x = self.extra_sensors
        self._fsr_views = (x[9:17], x[9:13], x[13:17])     # every FSR, the left, the right
        self._fsr_same = bool(np.array_equal(self._fsr_order, np.arange(len(FSR_KEYS))))
        # the copies of each cycle: (into extra_sensors, from the core's sensors), on views
        # made once; the accelerometer and the gyrometer as one block when MuJoCo keeps them
        # side by side (nao_v5)
        ss = self.sim.sensors
        imu = _adjacent(ss.acc, ss.gyro)
        self._copies = ((((x[0:6], imu),) if imu is not None else
                         ((x[0:3], ss.acc), (x[3:6], ss.gyro))) +
                        ((x[6:9], ss.torso_rpy), (x[18:20], ss.lcop), (x[21:23], ss.rcop)))
        # nao_v5: the IMU side by side and the FSRs in NAOqi's order: every extra sensor
        # from Python floats (the core's feet values, two tolist calls) into the buffer at
        # once; the same IEEE operations as the numpy path (x g^-1 per FSR, each foot's
        # total summed left to right as add.reduce does for four values)
        self._imu = imu if (imu is not None and self._fsr_same
                            and self.sim.feet_values is not None) else None
        self.cycles = 0
        self.fault: str | None = None    # set when the physics blew up (see update)
        self._read()

    # -- the Body protocol (EC thread) ----------------------------------------------------
    @property
    def velocity_exceeded(self) -> int:
        """Joint samples above the model's velocity limit so far (the core's count; the
        motors' back-EMF keeps a powered joint under it, a push or a limp fall may not).
        Runs in: EC thread."""
        return self.sim.velocity_exceeded

    def update(self, positions: np.ndarray, hardness: np.ndarray, dt_s: float) -> np.ndarray:
        """Servo targets and stiffness from the actuators, one physics period, sensors.

        dt_s is not used: the physics always advances one ``period`` (the DCM warns at
        activation when its EC period differs). When the physics blows up (the core's
        SimDiverged) ``fault`` says so and the sensors keep the last good values; the body
        stays still until ``reset``. Runs in: EC thread."""
        if self.fault is not None:
            return self.sensors
        cmd, hard = self._cmd, self._hard
        # the actuator values mostly repeat (a held posture, a constant hardness): the same
        # bits as last time give the same clamped values, already in cmd / hard
        key = positions.tobytes() if positions.dtype is _F64 else None
        if key is None or key != self._cmd_key:
            np.maximum(positions, self._lower, out=cmd)    # clamp to the joint limits
            np.minimum(cmd, self._upper, out=cmd)
            if self._hip is not None:
                lh, rh = self._hip
                cmd[rh] = cmd[lh]
            self._cmd_key = key
        key = hardness.tobytes() if hardness.dtype is _F64 else None
        if key is None or key != self._hard_key:
            np.fmax(hardness, 0.0, out=hard)               # NaN -> 0 (limp), then [0, 1]
            np.minimum(hard, 1.0, out=hard)
            if self._hip is not None:
                lh, rh = self._hip
                hard[rh] = hard[lh]
            self._hard_key = key
        if self._identity:                                 # nao_v5: the same joint order
            self.sim.set_position_targets(cmd, hard)
        else:
            cmd.take(self._dcm_of, out=self._q_ref)
            hard.take(self._dcm_of, out=self._stiff)
            self.sim.set_position_targets(self._q_ref, self._stiff)
        try:
            self.sim.step()
        except SimDiverged as e:
            self.fault = str(e)
            return self.sensors
        self.cycles += 1
        self._read()
        return self.sensors

    # -- sensors -----------------------------------------------------------------------------
    def _read(self) -> None:
        sim = self.sim
        s = sim.sensors
        out = self.sensors
        if self._identity:                              # nao_v5: the DCM's own joint order
            out[...] = s.q
        else:
            out[self._mapped] = s.q[self._mapped_sim]
            out[self._unmapped] = self._cmd[self._unmapped]
        x = self.extra_sensors
        if self._imu is not None:
            v = sim.feet_values                            # FEET_LAYOUT: lcop 12, rcop 14,
            g = self._inv_g                                # fsr 16..23
            f0, f1, f2, f3 = v[16] * g, v[17] * g, v[18] * g, v[19] * g
            f4, f5, f6, f7 = v[20] * g, v[21] * g, v[22] * g, v[23] * g
            _pack_into(_EXTRA_FORMAT, x, 0, *self._imu.tolist(), *s.torso_rpy.tolist(),
                       f0, f1, f2, f3, f4, f5, f6, f7, f0 + f1 + f2 + f3, v[12], v[13],
                       f4 + f5 + f6 + f7, v[14], v[15])
            return
        for into, src in self._copies:                     # IMU, torso angles, CoPs
            into[...] = src
        fsr, left, right = self._fsr_views
        if self._fsr_same:                                 # N -> kg (NAOqi's FSR unit)
            np.multiply(s.fsr, self._inv_g, out=fsr)
        else:
            s.fsr.take(self._fsr_order, out=fsr)
            fsr *= self._inv_g
        x[17] = _add_reduce(left)                          # what ndarray.sum calls
        x[20] = _add_reduce(right)

    def reset(self, positions: np.ndarray | None = None) -> None:
        """Back to standing on the floor (the model's reset posture, or ``positions`` in DCM
        body order); clears ``fault``. Runs in: EC thread or before the EC starts."""
        if positions is None:
            self.sim.reset()
        else:
            q = np.asarray(positions, float)[self._dcm_of]
            self.sim.reset(q)
        self._cmd[:] = 0.0 if positions is None else np.clip(positions, self._lower,
                                                              self._upper)
        self._cmd_key = None
        self.fault = None
        self._read()

    @property
    def base_pos(self):
        """[m] (3,) the torso's ground-truth position in the world (a read-only view)."""
        return self.sim.sensors.base_pos

    @property
    def base_rpy(self):
        """[rad] (3,) the torso's ground-truth roll, pitch, yaw (a read-only view)."""
        return self.sim.sensors.base_rpy

    @property
    def total_weight_kg(self) -> float:
        """Both feet's FSR total [kg] of the last cycle."""
        return float(self.extra_sensors[17] + self.extra_sensors[20])

    def __repr__(self) -> str:
        return (f"MujocoBody({self.model.name!r}, period {self.period * 1e3:g} ms, "
                f"{self.cycles} cycles, t = {self.sim.time:.3f} s)")
