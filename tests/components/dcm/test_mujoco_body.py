"""The DCM on MuJoCo physics (DCM body: mujoco, components/dcm/mujoco_body.py): the NAOqi
sensor keys filled from the simulation and readable through the DCM service as NAOqi
programs read them, Hardness driving the simulated servos, the coupled hip motor, and the
refusals. One DCM on a stepped EC (rtcf.testing.Harness): physics tolerances, no timing."""

from __future__ import annotations

import logging
import math
import re

import numpy as np
import pytest

pytest.importorskip("mujoco")

from rtcf import LifeCycleState  # noqa: E402
from rtcf.testing import Harness  # noqa: E402

from rtcf_components.dcm.component import DCM  # noqa: E402
from rtcf_components.dcm.mujoco_body import FSR_KEYS, IMU_KEYS, SENSOR_KEYS, MujocoBody  # noqa: E402

PREFIX = "Device/SubDeviceList/"


@pytest.fixture
def nao():
    h = Harness(DCM, params={"body": "mujoco", "sim_model": "nao_v5"}, rate=100, name="DCM0")
    h.activate()
    yield h
    h.close()


@pytest.mark.slow
def test_sensor_keys_follow_naoqi_and_come_after_the_joints(nao):
    dcm = nao.comp
    keys = list(dcm.service.getSensorKeys())
    n = dcm.devices.n_joints
    assert keys[:n] == [f"{j}/Position/Sensor/Value" for j in dcm.devices.joint_names]
    assert keys[n:] == list(SENSOR_KEYS)
    for k in ("InertialSensor/AccelerometerZ/Sensor/Value", "InertialSensor/GyroscopeX/Sensor/Value",
              "InertialSensor/AngleY/Sensor/Value", "LFoot/FSR/FrontLeft/Sensor/Value",
              "RFoot/FSR/RearRight/Sensor/Value", "LFoot/FSR/TotalWeight/Sensor/Value",
              "RFoot/FSR/CenterOfPressure/X/Sensor/Value"):
        assert k in keys
    assert len(FSR_KEYS) == 8 and len(IMU_KEYS) == 9
    assert "sensors" in dcm.ports                     # the out port carrying them


@pytest.mark.slow
def test_standing_values_through_the_dcm_service(nao):
    dcm = nao.comp
    nao.step(100)                                     # 1 s of simulated time: settled
    svc = dcm.service
    acc = [svc.getValue(f"{PREFIX}InertialSensor/Accelerometer{a}/Sensor/Value") for a in "XYZ"]
    assert acc[2] == pytest.approx(9.81, abs=0.3)    # specific force, standing still
    assert math.hypot(acc[0], acc[1]) < 1.0
    gyro = svc.getValues([f"InertialSensor/Gyroscope{a}/Sensor/Value" for a in "XYZ"])
    assert max(abs(g) for g in gyro) < 0.05
    angles = svc.getValues([f"InertialSensor/Angle{a}/Sensor/Value" for a in "XY"])
    assert max(abs(a) for a in angles) < 0.05        # upright
    cells = svc.getValues([PREFIX + k for k in FSR_KEYS])
    assert min(cells) >= 0.0
    total = svc.getValue(PREFIX + "LFoot/FSR/TotalWeight/Sensor/Value") + \
        svc.getValue(PREFIX + "RFoot/FSR/TotalWeight/Sensor/Value")
    mass = dcm.robot_body.model.mass
    assert total == pytest.approx(mass, rel=0.02)     # kg, as NAOqi reports FSRs
    assert sum(cells) == pytest.approx(total, rel=1e-9)
    for foot in ("LFoot", "RFoot"):
        cop = svc.getValues([f"{foot}/FSR/CenterOfPressure/{a}/Sensor/Value" for a in "XY"])
        assert max(abs(c) for c in cop) < 0.1        # under the sole [m]
    q = svc.getValue(PREFIX + "HeadYaw/Position/Sensor/Value")
    assert q == pytest.approx(dcm.q_out.value.data[0])
    # the same numbers on the sensors port, in getSensorKeys order
    n = dcm.devices.n_joints
    keys = svc.getSensorKeys()
    row = dcm.sensors_out.value.data
    assert row[keys.index("InertialSensor/AccelerometerZ/Sensor/Value") - n] == \
        pytest.approx(acc[2])


def test_unknown_key_is_a_dcm_error(nao):
    from rtcf_components.dcm.service import NAO
    with pytest.raises(NAO.DCMError, match="unknown actuator or sensor key"):
        nao.comp.service.getValue("InertialSensor/AccelerometerW/Sensor/Value")


def test_position_commands_move_the_simulated_joint(nao):
    dcm = nao.comp
    yaw = dcm.devices.joint_index("HeadYaw")
    t = dcm.service.getTime(0)
    from rtcf_components.dcm.service import NAO
    dcm.service.set("HeadYaw/Position/Actuator/Value", "ClearAll",
                    [NAO.TimedCommand(0.6, t + 500, 0)])
    nao.step(120)
    assert dcm.q_out.value.data[yaw] == pytest.approx(0.6, abs=0.02)
    body = dcm.robot_body
    assert body.sim.sensors.q[body.model.joint_names.index("HeadYaw")] == \
        pytest.approx(dcm.q_out.value.data[yaw])


def test_hip_yaw_pitch_is_one_motor(nao):
    dcm = nao.comp
    li = dcm.devices.joint_index("LHipYawPitch")
    ri = dcm.devices.joint_index("RHipYawPitch")
    t = dcm.service.getTime(0)
    from rtcf_components.dcm.service import NAO
    dcm.service.set("RHipYawPitch/Position/Actuator/Value", "ClearAll",
                    [NAO.TimedCommand(-0.3, t + 200, 0)])
    nao.step(60)
    q = dcm.q_out.value.data
    assert q[li] == pytest.approx(q[ri], abs=1e-3)   # both follow the left command (0)
    assert abs(q[li]) < 0.05


def test_hardness_zero_makes_the_arm_fall_limp(nao):
    dcm = nao.comp
    sp = dcm.devices.joint_index("LShoulderPitch")
    from rtcf_components.dcm.service import NAO
    t = dcm.service.getTime(0)
    # arm raised forward (pitch -1.2 rad: up), then the arm's Hardness to 0
    dcm.service.set("LShoulderPitch/Position/Actuator/Value", "ClearAll",
                    [NAO.TimedCommand(-1.2, t + 400, 0)])
    nao.step(80)
    held = dcm.q_out.value.data[sp]
    assert held == pytest.approx(-1.2, abs=0.05)
    t = dcm.service.getTime(0)
    dcm.service.set("LShoulderPitch/Hardness/Actuator/Value", "ClearAll",
                    [NAO.TimedCommand(0.0, t + 10, 0)])
    nao.step(100)
    assert dcm.q_out.value.data[sp] > held + 0.5      # it dropped under gravity


def test_body_refuses_a_model_that_does_not_match():
    from rtcf_components.dcm.devices import DeviceTable
    table = DeviceTable([("joint1", "arm", -1.0, 1.0)])
    with pytest.raises(ValueError, match="joints the DCM model does not know"):
        MujocoBody(table, "nao_v5", 0.01)


def test_bad_body_name_is_refused():
    with pytest.raises(Exception, match="body"):
        Harness(DCM, params={"body": "ode"}, rate=100)


def test_a_physics_model_that_does_not_load_is_named():
    with pytest.raises(Exception, match="no_such_model"):
        Harness(DCM, params={"body": "mujoco", "sim_model": "no_such_model"}, rate=100)


def test_a_physics_blow_up_sends_the_dcm_to_error_and_a_reset_starts_afresh(nao, caplog):
    """On the DCM's body: MuJoCo's state blown up (a velocity beyond MuJoCo's
    1e10 bound stands in for whatever made it blow up) is logged, the DCM goes to ERROR
    without writing the lost state, and rtreset + activate put the NAO back on its feet."""
    dcm = nao.comp
    nao.step(20)
    nao.read_all("q")
    dcm.robot_body.sim.mj_data.qvel[10] = 1e11
    with caplog.at_level(logging.ERROR):
        nao.step(3)
    assert nao.state is LifeCycleState.ERROR
    assert nao.read_all("q") == []                   # the lost state was never written
    assert np.isfinite(dcm.q_out.value.data).all()
    assert any(re.search(r"body mujoco: physics diverged in the period ending at t = 0\.220 s: "
                         r"MuJoCo found NaN, infinite or huge values of the positions \(QPOS, "
                         r"last at coordinate 0: joint base\); velocities \(QVEL, last at DOF 0: "
                         r"joint base\); accelerations \(QACC.*DCM0 goes to ERROR", r.getMessage())
               for r in caplog.records), caplog.text
    assert "Traceback" not in caplog.text
    nao.reset()
    nao.activate()
    nao.step(20)
    assert nao.state is LifeCycleState.ACTIVE and dcm.robot_body.fault is None
    assert dcm.robot_body.sim.sensors.base_pos[2] > 0.3          # standing again


# -- the simulator behind the DCM, reachable -----------------------------------

def test_the_dcm_on_mujoco_offers_the_simulator_service_and_the_ground_truth_pose(nao):
    """Push, body states, the wall-clock pause and step, reset: the Simulator's servant code
    on the DCM's body; basePos / baseRpy ports as the Simulator's."""
    from rtcf_components.simulator.service import Simulation
    dcm = nao.comp
    assert {"basePos", "baseRpy"} <= set(dcm.ports)
    assert "SimulatorService" in dcm.service_ports
    svc = dcm.sim_service
    nao.step(50)
    q_standing = dcm.q_out.value.data.copy()
    torso = svc.getBodyState("torso")
    pos = latest(nao, "basePos")
    assert (pos.x, pos.y, pos.z) == pytest.approx((torso.position.x, torso.position.y,
                                                   torso.position.z), abs=0.01)
    assert pos.z > 0.3
    rpy = latest(nao, "baseRpy")
    assert abs(rpy.r) < 0.05 and abs(rpy.p) < 0.05
    # a push within the bound moves the standing robot
    svc.push("torso", Simulation.Vector3(40.0, 0.0, 0.0), 0.1)
    nao.step(30)
    assert svc.getBodyState("torso").position.x > torso.position.x + 0.01
    with pytest.raises(Simulation.SimulatorError, match=r"push force: \|f\| = 100000 N"):
        svc.push("torso", Simulation.Vector3(1e5, 0.0, 0.0), 0.01)
    # pause / step / resume on the wall clock: the DCM's cycle and the physics stop
    svc.pause()
    t0, dcm_t0 = svc.getTime(), dcm.now_ms
    nao.step(5)
    assert svc.getTime() == t0 and dcm.now_ms == dcm_t0
    svc.step(3)
    nao.step(10)
    assert svc.getTime() == pytest.approx(t0 + 0.03)
    svc.resume()
    nao.step(2)
    assert svc.getTime() == pytest.approx(t0 + 0.05)
    # reset: standing again at the initial posture, the DCM's commands holding it
    t = dcm.service.getTime(0)
    from rtcf_components.dcm.service import NAO
    dcm.service.set("LShoulderPitch/Position/Actuator/Value", "ClearAll",
                    [NAO.TimedCommand(-1.2, t + 2000, 0)])
    nao.step(20)
    svc.reset()
    assert svc.getTime() == 0.0
    nao.step(100)
    sp = dcm.devices.joint_index("LShoulderPitch")
    assert dcm.q_out.value.data[sp] == pytest.approx(q_standing[sp], abs=0.005)  # command gone
    assert latest(nao, "basePos").z > 0.3 and svc.getBodyNames()[0] == "torso"


def test_joint_speeds_above_the_limit_are_counted_and_warned(nao, caplog):
    """A hard sideways shove of the wrist swings the arm faster than its motors' no-load
    speed (back-EMF holds a commanded joint under it, not a push): the DCM on MuJoCo says so
    (a warning at most every 5 s) with the physics' count, as the Simulator does."""
    from rtcf_components.simulator.service import Simulation
    nao.step(20)
    assert nao.comp.robot_body.velocity_exceeded == 0          # standing: none
    with caplog.at_level(logging.WARNING):
        nao.comp.sim_service.push("l_wrist", Simulation.Vector3(0.0, 300.0, 0.0), 0.05)
        nao.step(50)
    n = nao.comp.robot_body.velocity_exceeded
    assert n > 0
    lines = [r.getMessage() for r in caplog.records if r.name.endswith("DCM0")]
    assert any(re.search(r"body mujoco: joint samples above the velocity limit so far: \d+",
                         m) for m in lines), lines


def latest(h, port):
    from rtcf import ReadStatus
    status, v = h.read_latest(port)
    assert status is ReadStatus.NEW, port
    return v.data
