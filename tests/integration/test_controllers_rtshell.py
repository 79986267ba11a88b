"""The controllers where rtshell users look, against a running manager process: the status
parameters in ``rtconf ... list`` / ``get``, the per-controller extra properties in
``rtcat -ll``, both following a switch made with rtcf-controllers; a status value cannot be
set; a switch that would break a chain is refused with both names."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from integration_support import HOST, rtsh, wait_until

pytestmark = pytest.mark.slow    # seconds per test: left out of scripts/test -m "not slow"

CLI = Path(sys.executable).parent / "rtcf-controllers"

CONFIG = """
controllers:
  pd: {type: JointPositionController, joints: [HeadYaw, HeadPitch]}
  traj: {type: JointTrajectoryController, joints: [HeadYaw], output: pd}
  arm: {type: JointPositionController, joints: [LShoulderPitch], update_rate: 50}
load: [pd, traj, arm]
start: [pd, traj]
"""

SYSTEM = """
components:
  - {{type: ControllerManager, module: controller_manager, name: CMV,
     params: {{hardware: loopback, controller_config: {cfg}}}}}
execution_contexts:
  - {{name: control, kind: periodic, rate: 200, members: [CMV]}}
"""


def cli(*args):
    p = subprocess.run([str(CLI), *args], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr.strip()


def conf(path, name):
    return rtsh("rtconf", path, "get", name, check=True).stdout.strip()


@pytest.fixture(scope="module")
def cm(module_launch, naming, tmp_path_factory):
    cfg = tmp_path_factory.mktemp("cmv") / "ctl.yaml"
    cfg.write_text(CONFIG)
    module_launch(SYSTEM.format(cfg=cfg), ["CMV"])
    path = f"localhost:{naming.port}/{HOST}.host_cxt/CMV.rtc"
    wait_until(lambda: conf(path, "running_controllers") == "traj,pd", timeout=10,
               what="the configured start")
    return path


def test_rtconf_lists_the_controllers(cm):
    out = rtsh("rtconf", cm, "-l", "list", check=True).stdout
    rows = dict((line.split(None, 1) + [""])[:2] for line in out.splitlines()[1:]
                if line.strip())
    assert rows["running_controllers"] == "traj,pd"
    assert rows["loaded_controllers"] == ("arm (JointPositionController, initialized),"
                                          "traj (JointTrajectoryController, running),"
                                          "pd (JointPositionController, running)")
    assert rows["claimed_interfaces"] == ("arm: LShoulderPitch/position,"
                                          "pd: HeadYaw/position HeadPitch/position")


def test_rtcat_ll_shows_one_line_per_controller(cm):
    out = rtsh("rtcat", "-ll", cm, check=True).stdout
    props = {}
    for line in out.splitlines():
        key, _, value = line.strip().partition(" ")
        if key.startswith("controller"):
            props[key] = value.strip()
    assert props["controllers.running"] == "traj, pd"
    assert props["controller.pd"] == ("running, JointPositionController, position 2, every "
                                      "tick, claims HeadYaw/position HeadPitch/position")
    assert props["controller.traj"] == ("running, JointTrajectoryController, position 1, "
                                        "every tick, depends on pd")
    assert props["controller.arm"] == ("initialized, JointPositionController, position 0, "
                                       "50 Hz, claims LShoulderPitch/position")


def test_a_switch_shows_at_the_next_read(cm):
    code, out, err = cli("switch", cm, "--start", "arm", "--stop", "traj")
    assert code == 0, err
    assert conf(cm, "running_controllers") == "arm,pd"
    out = rtsh("rtcat", "-ll", cm, check=True).stdout
    assert "controllers.running" in out and "arm, pd" in out
    assert "initialized, JointTrajectoryController" in out
    code, out, err = cli("switch", cm, "--start", "traj", "--stop", "arm")
    assert code == 0, err
    assert conf(cm, "running_controllers") == "traj,pd"


def test_a_status_value_cannot_be_set_and_the_set_stays_writable(cm):
    cp = rtsh("rtconf", cm, "set", "running_controllers", "arm")
    assert "a status value the component publishes, not a setting" in cp.stdout + cp.stderr
    assert conf(cm, "running_controllers") == "traj,pd"
    # rtconf sends the whole set back, status values included: an unchanged value passes
    cp = rtsh("rtconf", cm, "set", "state_rate", "10.0")
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert conf(cm, "running_controllers") == "traj,pd"


def test_stopping_the_inner_controller_of_the_running_chain_is_refused(cm):
    code, out, err = cli("stop", cm, "pd")
    assert code == 1
    assert "cannot stop 'pd': 'traj' depends on it (chained through get_controller)" in err
    assert conf(cm, "running_controllers") == "traj,pd"
    code, out, err = cli("switch", cm, "--stop", "pd", "--best-effort")
    assert code == 0 and "not stopped: 'pd': 'traj' depends on it" in out, out + err
    assert conf(cm, "running_controllers") == "traj,pd"
