"""The ControllerManager's RTController::ControllerManagerService from another process.

* compositions/nao_controllers.yaml as shipped (DCM bound in process, 1 kHz loop) in its own
  manager process; the test process is the client: configured controllers running, load /
  switch / unload with their refusals over the wire, a trajectory command that moves the
  DCM's simulated head (read through NAO::DCMService), statistics.
* the manager in one process with hardware=ports and the DCM in another, wired q / qRef.

No timing assertions: waits poll with generous timeouts; positions are checked with the
tolerance of a settled first-order servo.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from rtcf_components.controller_manager import ControllerError

from rtcf_components.controller_manager.proxy import ControllerManagerProxy, RTController
from rtcf_components.dcm.proxy import DCMProxy

pytestmark = pytest.mark.slow    # seconds per test: left out of scripts/test -m "not slow"

ROOT = Path(__file__).resolve().parents[2]
YAW = "HeadYaw/Position/Sensor/Value"
PITCH = "HeadPitch/Position/Sensor/Value"

PORTS_SYSTEM = """
components:
  - {type: DCM, module: dcm}
  - {type: ControllerManager, module: controller_manager, process: ctl,
     params: {hardware: ports, qref_every: 10,
              controller_config: compositions/nao_controllers.controllers.yaml}}
connections:
  - {from: ControllerManager0.qRef, to: DCM0.qRef, subscription_type: flush}
  - {from: DCM0.q, to: ControllerManager0.q, subscription_type: flush}
execution_contexts:
  - {name: dcm, kind: periodic, rate: 100, members: [DCM0]}
  - {name: control, kind: periodic, rate: 1000, members: [ControllerManager0]}
"""


def wait_for(pred, timeout=10.0, what="condition"):
    deadline = time.monotonic() + max(timeout, 60.0)      # a loaded machine is slow
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what} (last {v!r})")
        time.sleep(0.05)


@pytest.fixture(scope="module")
def system(module_launch, naming):
    mp = module_launch(ROOT / "compositions" / "nao_controllers.yaml",
                       ["DCM0", "ControllerManager0"])
    ns = f"localhost:{naming.port}"
    cm = ControllerManagerProxy("ControllerManager0", nameserver=ns)
    dcm = DCMProxy("DCM0", nameserver=ns)
    wait_for(lambda: all(s == "running" for (_, _, s, _) in cm.list()), what="autostart")
    return mp, cm, dcm


def test_configured_controllers_run_in_schedule_order(system):
    mp, cm, dcm = system
    assert cm.list() == [("head_traj", "JointTrajectoryController", "running", 0),
                         ("head_pd", "JointPositionController", "running", 1)]
    assert {"JointPositionController", "JointTrajectoryController"} <= set(cm.types())


def test_a_trajectory_command_moves_the_simulated_head(system):
    mp, cm, dcm = system
    cm.command("head_traj", {"times": [0.3, 0.6], "positions": [[0.4, -0.2], [0.25, 0.1]]})
    wait_for(lambda: abs(dcm.getValue(YAW) - 0.25) < 2e-3 and
             abs(dcm.getValue(PITCH) - 0.1) < 2e-3, what="the head at (0.25, 0.1)")
    st = cm.state("head_traj")
    assert st["desired"] == pytest.approx([0.25, 0.1], abs=1e-9)
    assert st["trajectories"] >= 1


def test_load_switch_unload_and_their_refusals_over_the_wire(system):
    mp, cm, dcm = system
    svc = cm.service
    ok, msg = svc.loadController("x", "NoSuchType", [])
    assert not ok and "unknown controller type 'NoSuchType'" in msg
    with pytest.raises(ControllerError, match="unknown joint 'Elbow'"):
        cm.load("bad", "JointPositionController", {"joints": ["Elbow"]})
    assert "larm_pd" in cm.load("larm_pd")                  # from the controller config
    ok, msg = svc.switchController(["larm_pd", "ghost"], [], RTController.STRICT, 1.0)
    assert not ok and "'ghost'" in msg
    assert "stopped []" in cm.switch(start=["larm_pd"])   # blocks until performed
    assert ("larm_pd", "JointPositionController", "running", 2) in cm.list()
    with pytest.raises(ControllerError, match="'larm_pd' is running"):
        cm.unload("larm_pd")
    with pytest.raises(ControllerError, match="'head_traj' depends on it"):
        cm.unload("head_pd")
    ok, msg = svc.switchController([], ["head_pd"], RTController.STRICT, 1.0)
    assert not ok and "cannot stop 'head_pd': 'head_traj' depends on it" in msg
    cm.switch(stop=["larm_pd"])
    cm.unload("larm_pd")
    assert [c[0] for c in cm.list()] == ["head_traj", "head_pd"]


def test_statistics_over_the_wire(system):
    mp, cm, dcm = system
    st = cm.statistics()
    assert st.ticks > 100 and st.period_nominal == pytest.approx(1e-3)
    assert st.period_mean > 0 and st.lateness_max >= st.lateness_p99 >= 0
    names = {c.name: c for c in st.controllers}
    assert set(names) == {"head_traj", "head_pd"}
    assert names["head_pd"].updates > 100 and names["head_pd"].faults == 0
    assert mp.alive()


def test_ros2_control_level_details_over_the_wire(system):
    mp, cm, dcm = system
    rows = {d["name"]: d for d in cm.describe()}
    assert rows["head_pd"]["claimed_interfaces"] == ["HeadYaw/position", "HeadPitch/position"]
    assert rows["head_traj"]["claimed_interfaces"] == []         # chained: writes head_pd
    assert rows["head_traj"]["chain"] == ["head_pd"] and rows["head_pd"]["update_rate"] == 0
    assert rows["head_pd"]["period_last"] > 0
    owners = dict(cm.interfaces())
    assert owners["HeadYaw/position"] == "head_pd" and owners["LElbowRoll/position"] == ""
    with pytest.raises(ControllerError, match="2 controllers are loaded"):
        cm.reload_modules()


def test_manager_in_another_process_through_q_and_qref(launch, naming):
    mp = launch(PORTS_SYSTEM, ["DCM0", "ControllerManager0"])
    ns = f"localhost:{naming.port}"
    cm = ControllerManagerProxy("ControllerManager0", nameserver=ns)
    dcm = DCMProxy("DCM0", nameserver=ns)
    wait_for(lambda: all(s == "running" for (_, _, s, _) in cm.list()), what="autostart")
    # head_traj feeds head_pd's setpoint every tick (chained), so command the trajectory
    cm.command("head_traj", {"times": [0.4], "positions": [[-0.3, 0.15]]})
    wait_for(lambda: abs(dcm.getValue(YAW) + 0.3) < 2e-3 and
             abs(dcm.getValue(PITCH) - 0.15) < 2e-3, what="the head at (-0.3, 0.15)",
             timeout=15.0)
    assert cm.state("head_pd")["setpoint"] == pytest.approx([-0.3, 0.15], abs=1e-9)
    assert cm.state("head_pd")["max_abs_error"] < 2e-3
