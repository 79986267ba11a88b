"""NAOqi's walk, postures and memory on the MuJoCo NAO (compositions/nao_walk.yaml in
process, simulation time at factor 0), called through the NAOqi proxies as a NAOqi program
calls them: moveTo's accuracy against the ground truth (the soles' sites), move then
stopMove, postures, ALMemory's sensor keys and data, bad input refused with a RuntimeError
while the robot keeps standing, and moveTo refused once the robot has fallen."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("mujoco")

pytestmark = pytest.mark.slow          # seconds of simulated walking

from rtcf_components.scenarios.walking import WalkRig  # noqa: E402
from rtcf_components.naoqi.proxy import (ALMemoryProxy, ALMotionProxy,  # noqa: E402
                                         ALRobotPostureProxy)


@pytest.fixture(scope="module")
def rig():
    with WalkRig() as r:
        s = r.system
        r.motion = ALMotionProxy(service=s["Kinematics0"].service,
                                 naoqi_service=s["NAOqi0"].service)
        r.posture = ALRobotPostureProxy(service=s["NAOqi0"].service)
        r.memory = ALMemoryProxy(service=s["NAOqi0"].service)
        s.time_base.resume()
        try:
            yield r
        finally:
            s.time_base.pause()


def standing(rig) -> bool:
    s = rig.sim.sensors
    return s.base_pos[2] > 0.3 and abs(s.base_rpy[0]) < 0.1 and abs(s.base_rpy[1]) < 0.25


def test_memory_reads_the_sensors_as_naoqi_keys(rig):
    mem = rig.memory
    left = mem.getData("Device/SubDeviceList/LFoot/FSR/TotalWeight/Sensor/Value")
    right = mem.getData("RFoot/FSR/TotalWeight/Sensor/Value")
    assert left + right == pytest.approx(5.305, rel=0.05)         # kg, as NAOqi's FSRs
    assert mem.getData("robotHasFallen") is False
    assert mem.getListData(["InertialSensor/AngleX/Sensor/Value", "robotHasFallen"])[1] is False
    mem.insertData("MyProgram/Counter", [1, 2.5, "three"])
    assert mem.getData("MyProgram/Counter") == [1, 2.5, "three"]
    assert "MyProgram/Counter" in mem.getDataList("MyProgram")
    assert any(k.endswith("LFoot/FSR/FrontLeft/Sensor/Value")
               for k in mem.getDataList("FSR/FrontLeft"))
    with pytest.raises(RuntimeError, match="no data for key 'NoSuchKey'"):
        mem.getData("NoSuchKey")
    with pytest.raises(RuntimeError, match="not a finite number"):
        mem.insertData("MyProgram/Bad", math.nan)
    with pytest.raises(RuntimeError, match="read only"):
        mem.insertData("robotHasFallen", True)


def test_posture_at_start_and_the_lists(rig):
    assert rig.posture.getPosture() == "StandInit"
    assert rig.posture.getPostureFamily() == "Standing"
    assert rig.posture.getPostureList() == ["Stand", "StandInit", "StandZero", "Crouch"]
    assert rig.motion.getMoveConfig("Default")[0] == ["MaxStepX", 0.04]
    assert rig.motion.getMoveConfig("Max")[1] == ["MaxStepY", 0.16]


def test_moveto_forward_within_5_cm(rig):
    x0, y0, t0 = rig.moved()
    assert rig.motion.moveTo(0.3, 0.0, 0.0) is True                 # blocks until standing
    x, y, t = rig.moved()
    err = math.hypot(x - x0 - 0.3, y - y0)
    print(f"\nmoveTo(0.3, 0, 0): error {err * 1e3:.1f} mm, {math.degrees(t - t0):.2f} deg; "
          f"getRobotPosition {rig.motion.getRobotPosition(False)}")
    assert err < 0.05 and abs(math.degrees(t - t0)) < 5.0
    assert not rig.motion.moveIsActive() and standing(rig)
    assert rig.motion.getRobotPosition(False)[0] == pytest.approx(0.3, abs=1e-9)


def test_moveto_turn_within_5_degrees(rig):
    _, _, t0 = rig.moved()
    rig.motion.moveTo(0.0, 0.0, math.pi / 2)
    _, _, t = rig.moved()
    err = math.degrees(math.atan2(math.sin(t - t0 - math.pi / 2), math.cos(t - t0 - math.pi / 2)))
    print(f"\nmoveTo(0, 0, pi/2): heading error {err:.2f} deg")
    assert abs(err) < 5.0 and standing(rig)


def test_move_then_stopmove_stops_within_two_steps(rig):
    rig.motion.move(0.1, 0.0, 0.0)
    gait = rig.abc.core.gait                                # the walk's gait generator
    tb = rig.system.time_base
    t = rig.system.now
    while rig.system.now < t + 2.0:
        pass                                                # walking at 0.1 m/s for 2 s
    assert rig.motion.moveIsActive()
    v = rig.motion.getRobotVelocity()
    rig.motion.stopMove()                                   # the system runs on meanwhile:
    rig.motion.waitUntilMoveIsFinished()                    # count from the stop's own cycle
    after = gait.done_index - gait.stopped_after
    print(f"\nmove(0.1, 0, 0): velocity {v}; {after} steps after stopMove")
    assert after <= 2
    assert v[0] > 0.05 and standing(rig)
    assert tb is rig.system.time_base


def test_postures_and_back_to_walking(rig):
    assert rig.posture.goToPosture("Crouch", 0.6) is True
    assert rig.posture.getPosture() == "Crouch"
    assert rig.posture.getPostureFamily() == "Crouching"
    rig.motion.moveTo(0.05, 0.0, 0.0)                        # moveInit: StandInit first
    assert standing(rig) and rig.posture.getPosture() in ("StandInit", "Unknown")


def test_bad_input_is_refused_and_the_robot_keeps_standing(rig):
    m, p = rig.motion, rig.posture
    for args, what in (((math.nan, 0.0, 0.0), "finite"), ((1e6, 0.0, 0.0), "too far"),
                       ((0.1, 0.0, 0.0, [["MaxStepX", 0.5]]), "outside"),
                       ((0.1, 0.0, 0.0, [["Speed", 1.0]]), "unknown name"),
                       (([[0.1, 0.0]],), "control point 0"), (("x", 0, 0), "number")):
        with pytest.raises(RuntimeError, match=what):
            m.moveTo(*args)
    with pytest.raises(RuntimeError, match="normalised"):
        m.moveToward(2.0, 0.0, 0.0)
    with pytest.raises(RuntimeError, match="unknown posture 'Dance'"):
        p.goToPosture("Dance", 0.5)
    with pytest.raises(RuntimeError, match="speed"):
        p.goToPosture("Stand", 0.0)
    with pytest.raises(RuntimeError, match="Max"):
        m.getMoveConfig("Fastest")
    assert not m.moveIsActive() and standing(rig)


def test_moveto_is_refused_once_fallen(rig):
    rig.push((80.0, 0.0, 0.0), 0.3)                          # far beyond any ankle
    t = rig.system.now
    while rig.system.now < t + 2.5:
        pass
    assert rig.memory.getData("robotHasFallen") is True
    with pytest.raises(RuntimeError, match="fallen"):
        rig.motion.moveTo(0.2, 0.0, 0.0)
    with pytest.raises(RuntimeError, match="fallen"):
        rig.posture.goToPosture("StandInit", 0.5)
    assert rig.posture.getPosture() == "Unknown"
