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


# -- the default system's simulator, reachable through the DCM ----------------

def test_nao_sim_offers_the_simulator_service_on_the_dcm(dcm, naming, module_launch):
    """Push, ground truth, pause / step / resume (on the process's simulated time base: the
    whole system stops and steps) and reset, through Simulation::SimulatorService of DCM0,
    the same IDL and client as the Simulator's; DCM0 has basePos / baseRpy ports."""
    from rtcf.corba.client import get_service
    from rtcf.corba.idl import stub_module
    Simulation = stub_module("Simulation")
    svc = get_service("DCM0", "SimulatorService", stub=Simulation.SimulatorService,
                      nameserver=f"localhost:{naming.port}")
    mp = module_launch.procs[0]
    ports = {p.get_port_profile().name for p in mp.ref("DCM0").get_ports()}
    assert {"DCM0.basePos", "DCM0.baseRpy", "DCM0.SimulatorService"} <= ports
    assert "torso" in svc.getBodyNames()
    torso = svc.getBodyState("torso")
    assert torso.position.z > 0.3 and abs(torso.rpy.x) < 0.05
    # pause: simulated time (the DCM's and the service's) stops; step(n) runs n periods
    svc.pause()
    assert svc.isPaused()
    t0, d0 = svc.getTime(), dcm.getTime(0)
    time.sleep(0.3)
    assert svc.getTime() == t0 and dcm.getTime(0) == d0
    svc.step(10)
    assert svc.getTime() == pytest.approx(t0 + 0.1, abs=1e-9)
    assert dcm.getTime(0) == d0 + 100
    svc.resume()
    # push: the standing robot is shoved forward; a 1e5 N push is refused
    x0 = svc.getBodyState("torso").position.x
    svc.push("torso", Simulation.Vector3(40.0, 0.0, 0.0), 0.1)
    deadline = time.monotonic() + 30.0
    while svc.getBodyState("torso").position.x < x0 + 0.01:
        assert time.monotonic() < deadline, "the push did not move the torso"
        time.sleep(0.05)
    with pytest.raises(Simulation.SimulatorError) as info:
        svc.push("torso", Simulation.Vector3(1e5, 0.0, 0.0), 0.01)
    assert "beyond the limit of 1041 N" in info.value.reason
    # reset: back on its feet at the origin
    svc.reset()
    state = svc.getBodyState("torso")
    assert state.position.z > 0.3 and abs(state.position.x) < 0.05
