"""compositions/nao_sim.yaml in its own process (scripts/run's manager, CORBA): a NAOqi-style
client reads the simulated NAO's sensors through the DCM service (DCMProxy: getValue /
getValues with the full "Device/SubDeviceList/..." keys, getSensorKeys) while the robot
stands on the MuJoCo floor, and a Position command through DCM.set moves the simulated
joint. Physics tolerances only; waits are bounded polls of DCM time."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow    # seconds per test: left out of scripts/test -m "not slow"

pytest.importorskip("mujoco")

from rtcf_components.dcm.proxy import DCMProxy  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
P = "Device/SubDeviceList/"
NAO_MASS = 5.305   # [kg] total mass of model/sim/nao_v5.xml (its header states it)


@pytest.fixture(scope="module")
def dcm(module_launch, naming):
    module_launch(ROOT / "compositions" / "nao_sim.yaml", ["DCM0", "SequencePlayer0"],
                  "exec_cxt.periodic.sched_fifo:NO")
    proxy = DCMProxy("DCM0", nameserver=f"localhost:{naming.port}")
    t0 = proxy.getTime(0)
    deadline = time.monotonic() + 30.0
    while proxy.getTime(0) < t0 + 1000:              # 1 s of DCM time: standing settled
        assert time.monotonic() < deadline, "the DCM did not advance 1 s of its time"
        time.sleep(0.05)
    return proxy


def test_sensor_keys_are_listed_with_naoqi_names(dcm):
    keys = list(dcm.service.getSensorKeys())              # the IDL operation itself
    for k in ("HeadYaw/Position/Sensor/Value", "InertialSensor/AccelerometerX/Sensor/Value",
              "InertialSensor/GyroscopeZ/Sensor/Value", "InertialSensor/AngleX/Sensor/Value",
              "LFoot/FSR/FrontLeft/Sensor/Value", "RFoot/FSR/RearRight/Sensor/Value",
              "LFoot/FSR/TotalWeight/Sensor/Value", "RFoot/FSR/CenterOfPressure/Y/Sensor/Value"):
        assert k in keys


def test_standing_nao_read_as_naoqi_programs_read_it(dcm):
    fsr = dcm.getValues([f"{P}{f}/FSR/{c}/Sensor/Value" for f in ("LFoot", "RFoot")
                         for c in ("FrontLeft", "FrontRight", "RearLeft", "RearRight")])
    total = dcm.getValue(f"{P}LFoot/FSR/TotalWeight/Sensor/Value") + \
        dcm.getValue(f"{P}RFoot/FSR/TotalWeight/Sensor/Value")
    assert min(fsr) > 0.0                                   # every cell loaded [kg]
    assert total == pytest.approx(NAO_MASS, rel=0.02)
    acc_z = dcm.getValue(f"{P}InertialSensor/AccelerometerZ/Sensor/Value")
    assert acc_z == pytest.approx(9.81, abs=0.3)
    angles = dcm.getValues([f"{P}InertialSensor/Angle{a}/Sensor/Value" for a in "XY"])
    assert max(abs(a) for a in angles) < 0.05


def test_a_position_command_moves_the_simulated_joint(dcm):
    t = dcm.getTime(0)
    dcm.set(["HeadYaw/Position/Actuator/Value", "ClearAll", [[0.5, t + 300]]])
    deadline = time.monotonic() + 30.0
    while dcm.getTime(0) < t + 900:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert dcm.getValue(f"{P}HeadYaw/Position/Sensor/Value") == pytest.approx(0.5, abs=0.02)
