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
