"""The time audit in simulation time: the DCM's time and getTime, the controller manager's
periods and the SequencePlayer's motions follow the EC's simulated clock, whatever the wall
clock does. One process (rtcf.manager.Manager without CORBA transport): a 1 kHz controller
manager bound to a 100 Hz DCM, and a 100 Hz SequencePlayer, at real-time factor 0, driven
with advance()."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from rtcf.composition import parse_composition
from rtcf.manager import Manager

pytestmark = pytest.mark.slow    # seconds per test: left out of scripts/test -m "not slow"

ROOT = Path(__file__).resolve().parents[2]

SYSTEM = {
    "name": "simtime_components",
    "components": [
        {"type": "DCM", "module": "dcm", "params": {"profile": "default"}},
        {"type": "ControllerManager", "module": "controller_manager",
         "params": {"hardware": "dcm",
                    "controller_config": "compositions/nao_controllers.controllers.yaml"}},
        {"type": "SequencePlayer", "module": "sequence_player", "params": {"dt": 0.01}},
    ],
    "connections": [{"from": "ControllerManager0.hardware", "to": "DCM0.DCMService"}],
    "execution_contexts": [
        {"name": "control", "rate": 1000, "members": ["ControllerManager0"]},
        {"name": "dcm", "rate": 100, "members": ["DCM0"]},
        {"name": "seq", "rate": 100, "members": ["SequencePlayer0"]},
    ],
    "simulation": {"real_time_factor": 0},
}


@pytest.fixture
def system():
    mgr = Manager({"manager.modules.load_path": str(ROOT / "components")}, corba=False)
    mgr.sim_stop_at = 0.0          # built and activated at t = 0, then held there
    mgr.build(parse_composition(SYSTEM, "simtime_components.yaml"))
    tb = mgr.time_base
    assert tb is not None and tb.stop_reached.wait(10) and tb.now == 0.0
    tb.pause()
    tb.set_stop_time(None)
    yield mgr
    mgr.shutdown()


def test_dcm_time_and_get_time_are_simulated(system):
    tb = system.time_base
    dcm = system.components["DCM0"]
    tb.advance(1.0)
    assert dcm.now_ms == 990                  # its last cycle ran at 0.99 s
    assert dcm.service.getTime(0) == 990
    assert dcm.service.getTime(500) == 1490
    tb.advance(2.5)
    assert dcm.service.getTime(0) == 3490


def test_controller_manager_periods_are_simulated(system):
    tb = system.time_base
    cm = system.components["ControllerManager0"]
    tb.advance(0.5)
    st = cm.core.statistics()
    assert st["ticks"] == 500
    assert st["period_last"] == pytest.approx(0.001, abs=1e-12)
    assert st["period_min"] == pytest.approx(0.001, abs=1e-12)
    assert st["period_max"] == pytest.approx(0.001, abs=1e-12)
    assert system.ecs["control"].cycles == 500 and system.ecs["dcm"].cycles == 50


def test_sequence_player_plays_in_simulated_time(system):
    tb = system.time_base
    sp = system.components["SequencePlayer0"]
    n = sp.core.dof
    target = np.zeros(n)
    target[0] = 0.4
    # a service call while paused is applied at once (by the time base thread)
    assert sp.service.setJointAngles(list(target), 2.0)
    waiter_done = threading.Event()
    waiter = threading.Thread(target=lambda: (sp.service.waitInterpolation(),
                                              waiter_done.set()))
    waiter.start()
    tb.advance(1.0)
    mid = float(sp.core.q_ref[0])
    assert 0.05 < mid < 0.35                  # on its way after 1 s of simulated time
    assert not waiter_done.wait(0.2)          # the motion is not over
    tb.advance(1.05)
    assert float(sp.core.q_ref[0]) == pytest.approx(0.4, abs=1e-9)
    assert waiter_done.wait(10)
    waiter.join(5)


def test_status_line_and_report_show_simulated_time(system):
    tb = system.time_base
    tb.advance(1.25)
    line = system.status_line()
    assert line.startswith("[sim t=1.250 s ") and "(as fast as possible) paused]" in line
    assert "[control 1000 Hz 1250 cycles] ControllerManager0:ACT" in line
    assert "[dcm 100 Hz 125 cycles] DCM0:ACT" in line
    report = system.final_report()
    assert report.startswith("simulation: 1.250 s of simulated time in ")
    assert "control: 1250 cycles at 1000 Hz of simulated time" in report
