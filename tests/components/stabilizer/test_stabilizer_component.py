"""The Stabilizer component in compositions/nao_walk.yaml (in process, simulation time at
factor 0): started and stopped through OpenHRP::StabilizerService as hrpsys_config.py's
st_svc calls it, its parameters read and written (members it cannot honour refused), and a
short walk with a sideways push on the torso that the robot survives with it."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("mujoco")

pytestmark = pytest.mark.slow          # seconds of simulated walking

from rtcf.testing import SimSystem  # noqa: E402
from rtcf_components.scenarios.walking import COMPOSITION  # noqa: E402


@pytest.fixture(scope="module")
def system():
    with SimSystem(COMPOSITION) as s:
        s.advance(0.2)
        s.time_base.resume()
        try:
            yield s
        finally:
            s.time_base.pause()


def test_start_stop_and_parameters(system):
    st = system["Stabilizer0"]
    svc = st.service
    p = svc.getParameter()
    assert str(p.controller_mode) == "MODE_IDLE" and str(p.st_algorithm) == "EEFM"
    svc.startStabilizer()                                 # blocks for the fade-in
    assert st.core.mode == "MODE_ST"
    p = svc.getParameter()
    assert str(p.controller_mode) == "MODE_ST"
    p.eefm_rot_damping_gain = [[12.0, 13.0, 1e5], [12.0, 13.0, 1e5]]
    svc.setParameter(p)
    assert st.core.params.damping == (12.0, 13.0)
    p.k_tpcc_p = [1.0, 1.0]                                # TPCC is not this controller's
    svc.setParameter(p)
    assert st.core.params.damping == (12.0, 13.0)
    p = svc.getParameter()
    p.eefm_rot_damping_gain = [[math.nan, 1.0, 1e5]] * 2
    svc.setParameter(p)
    p = svc.getParameter()
    p.eefm_rot_damping_gain = [[10.0, 10.0, 1e5]] * 2
    svc.setParameter(p)
    assert st.core.params.damping == (10.0, 10.0)
    svc.stopStabilizer()
    assert st.core.mode == "MODE_IDLE"
    assert svc.dummy() is True


def test_walk_with_a_sideways_push(system):
    abc, st = system["AutoBalancer0"].service, system["Stabilizer0"].service
    sim = system["DCM0"].robot_body.sim
    assert abc.startAutoBalancer(["rleg", "lleg"])
    st.startStabilizer()
    assert abc.goPos(0.3, 0.0, 0.0)
    sim.push("torso", [0.0, 8.0, 0.0], 0.2)              # at the next physics step
    abc.waitFootSteps()
    tilt = max(abs(sim.sensors.base_rpy[0]), abs(abs(sim.sensors.base_rpy[1]) - 0.08))
    print(f"\n8 N sideways for 0.2 s while walking: torso z {sim.sensors.base_pos[2]:.4f} m, "
          f"tilt {tilt:.3f} rad, emergencySignal "
          f"{system['Stabilizer0'].emergency_out.value.data}")
    assert sim.sensors.base_pos[2] > 0.3 and tilt < 0.1
    assert not system["Stabilizer0"].core.fallen


def test_capture_point_check_signals_before_the_fall(system):
    """hrpsys robot set-ups turn the capture point check on through setParameter
    (emergency_check_mode CP, cp_check_margin): standing it stays quiet; a push far beyond
    what the ankles can take sets emergencySignal while the robot is still on its feet.
    Last in the module: the robot falls."""
    from rtcf.corba.idl import stub_module
    SS = stub_module("OpenHRP").StabilizerService
    stc = system["Stabilizer0"]
    svc = stc.service
    sim = system["DCM0"].robot_body.sim
    if stc.core.mode != "MODE_ST":
        svc.startStabilizer()
    p = svc.getParameter()
    p.emergency_check_mode = SS.CP
    p.cp_check_margin = [0.01, 0.01, 0.0, 0.0]
    svc.setParameter(p)
    assert stc.core.params.emergency_check == "CP"
    assert list(svc.getParameter().cp_check_margin) == [0.01, 0.01, 0.0, 0.0]
    p.emergency_check_mode = SS.COP                     # not offered: refused, nothing changes
    svc.setParameter(p)
    assert stc.core.params.emergency_check == "CP"
    system.time_base.pause()
    try:
        quiet = []
        for _ in range(50):
            system.advance(0.01)
            quiet.append(stc.emergency_out.value.data)
        assert quiet == [0] * 50
        sim.push("torso", [40.0, 0.0, 0.0], 0.2)
        first = None
        for k in range(150):
            system.advance(0.01)
            if stc.emergency_out.value.data == 1 and first is None:
                first = (k, stc.core.fallen, float(sim.sensors.base_pos[2]))
        print(f"\n40 N forward for 0.2 s: emergencySignal after {first[0] + 1} periods, "
              f"fallen then: {first[1]}, torso z {first[2]:.3f} m; fallen at the end: "
              f"{stc.core.fallen}")
        assert first is not None and first[1] is False and first[2] > 0.3
    finally:
        system.time_base.resume()
