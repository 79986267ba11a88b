"""rtcf-controllers (the installed console script) against a running manager process: every
verb, the exit status a script can rely on, and a refusal message naming what was wrong for
every refusal; spawn waiting for a manager that is not there yet."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from integration_support import HOST

pytestmark = pytest.mark.slow    # seconds per test: left out of scripts/test -m "not slow"

CLI = Path(sys.executable).parent / "rtcf-controllers"

FLAKY = '''
from rtcf_components.controller_manager import Controller

class Flaky(Controller):
    def init(self, robot, params):
        self.claim(params["joints"], "position")
        return True

    def starting(self, time):
        raise RuntimeError("no state yet")
'''

CONFIG = """
controllers:
  pd_head: {type: JointPositionController, joints: [HeadYaw, HeadPitch]}
  pd_head2: {type: JointPositionController, joints: [HeadYaw]}
  flaky: {type: flaky.Flaky, joints: [LShoulderPitch]}
load: []
start: []
"""

SYSTEM = """
components:
  - {{type: ControllerManager, module: controller_manager, name: {name},
     params: {{hardware: loopback, controller_config: {cfg}, controller_path: [{path}]}}}}
execution_contexts:
  - {{name: control, kind: periodic, rate: 200, members: [{name}]}}
"""


def run(*args, timeout=60.0):
    p = subprocess.run([str(CLI), *args], capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr.strip()


def write_files(folder: Path) -> tuple[Path, Path]:
    (folder / "mine").mkdir(exist_ok=True)
    (folder / "mine" / "flaky.py").write_text(FLAKY)
    cfg = folder / "ctl.yaml"
    cfg.write_text(CONFIG)
    return cfg, folder / "mine"


@pytest.fixture(scope="module")
def manager(module_launch, naming, tmp_path_factory):
    cfg, path = write_files(tmp_path_factory.mktemp("cli"))
    module_launch(SYSTEM.format(name="CM0", cfg=cfg, path=path), ["CM0"])
    return f"localhost:{naming.port}/{HOST}.host_cxt/CM0.rtc"


def test_the_console_script_is_installed():
    assert CLI.is_file(), f"{CLI} missing: setup.cfg console_scripts"
    code, out, err = run("--help")
    assert code == 0 and "list-joints" in out


def test_list_types_load_start_and_joints(manager):
    code, out, err = run("list-types", manager)
    assert code == 0 and "JointPositionController" in out.split()
    assert run("list", manager)[:2] == (0, "")
    code, out, err = run("load", manager, "pd_head")
    assert code == 0 and "loaded 'pd_head' (JointPositionController)" in out
    code, out, err = run("start", manager, "pd_head")
    assert code == 0 and "started ['pd_head']" in out, err
    code, out, err = run("list", manager, "-v")
    assert code == 0
    assert out.splitlines() == ["pd_head JointPositionController running position=0 "
                                "rate=every-tick claims=HeadYaw/position,HeadPitch/position "
                                "fallbacks=- chain=-"]
    code, out, err = run("list-joints", manager, "--claimed")
    assert out.splitlines() == ["HeadYaw/position claimed by pd_head",
                                "HeadPitch/position claimed by pd_head"]
    code, out, err = run("statistics", manager)
    assert code == 0 and out.startswith("ticks ") and "pd_head running updates" in out


def test_every_refusal_exits_1_and_names_what_was_wrong(manager):
    run("load", manager, "pd_head")                      # may exist from the test above
    run("start", manager, "pd_head")
    cases = [
        (("load", manager, "pd_head"), "a controller named 'pd_head' is already loaded"),
        (("load", manager, "x", "NoSuchType"), "unknown controller type 'NoSuchType'"),
        (("load", manager, "y", "JointPositionController", "-p", "joints=[Elbow]"),
         "unknown joint 'Elbow'"),
        (("start", manager, "ghost"), "(STRICT): no controller named 'ghost' is loaded"),
        (("unload", manager, "pd_head"), "'pd_head' is running; stop it first"),
        (("reload-modules", manager), "controllers are loaded (pd_head"),
    ]
    for args, words in cases:
        code, out, err = run(*args)
        assert code == 1, (args, out, err)
        assert err.startswith(f"rtcf-controllers {args[0]}: ") and words in err, (args, err)
    assert run("load", manager, "pd_head2")[0] == 0
    code, out, err = run("start", manager, "pd_head2")
    assert code == 1 and "'pd_head2' claims HeadYaw/position (owned by 'pd_head')" in err
    code, out, err = run("start", manager, "pd_head2", "--best-effort")
    assert code == 0 and "not started: 'pd_head2' claims HeadYaw/position" in out
    code, out, err = run("switch", manager, "--start", "pd_head2", "--stop", "pd_head")
    assert code == 0 and "started ['pd_head2'], stopped ['pd_head']" in out
    assert run("load", manager, "flaky")[0] == 0
    code, out, err = run("start", manager, "flaky")
    assert code == 1 and "failed: 'flaky' starting raised RuntimeError: no state yet" in err
    code, out, err = run("stop", manager, "pd_head2")
    assert code == 0
    # stopping a controller that is not running is refused (STRICT) or
    # left out (BEST_EFFORT), as ros2_control; it reported success and called stopping()
    code, out, err = run("stop", manager, "pd_head2")
    assert code == 1 and "(STRICT): cannot stop 'pd_head2': it is not running" in err
    code, out, err = run("stop", manager, "pd_head2", "--best-effort")
    assert code == 0 and "not stopped: 'pd_head2': it is not running" in out
    assert run("unload", manager, "pd_head2", "flaky")[0] == 0


def test_usage_errors_exit_2_and_a_missing_manager_exits_3(manager, naming):
    code, out, err = run("switch", manager)
    assert code == 2 and "switch: expected --start and/or --stop names" in err
    code, out, err = run("load", manager, "z", "JointPositionController", "-p", "kp")
    assert code == 2 and "-p: expected key=value, got 'kp'" in err
    assert run("frobnicate", manager)[0] == 2
    code, out, err = run("list", f"localhost:{naming.port}/{HOST}.host_cxt/Nobody0.rtc")
    assert code == 3 and "no controller manager at" in err and "Nobody0.rtc" in err
    # a negative timeout is a bad command line (it was sent and refused)
    for verb in (("switch", manager, "--start", "pd_head"), ("start", manager, "pd_head"),
                 ("spawn", manager, "pd_head")):
        code, out, err = run(*verb, "--timeout", "-1")
        assert code == 2 and "--timeout: expected seconds >= 0, got '-1'" in err, (verb, err)
    code, out, err = run("list", manager, "--wait", "nan")
    assert code == 2 and "--wait: expected seconds >= 0, got 'nan'" in err


def test_spawn_waits_for_the_manager_then_loads_and_starts(launch, naming, tmp_path):
    cfg, path = write_files(tmp_path)
    target = f"localhost:{naming.port}/{HOST}.host_cxt/CMspawn.rtc"
    spawner = subprocess.Popen([str(CLI), "spawn", target, "pd_head", "--timeout", "90"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        launch(SYSTEM.format(name="CMspawn", cfg=cfg, path=path), ["CMspawn"])
        out, err = spawner.communicate(timeout=120)
    finally:
        if spawner.poll() is None:
            spawner.kill()
            spawner.wait()
    assert spawner.returncode == 0, err
    assert "loaded 'pd_head'" in out and "started ['pd_head']" in out
    code, out, err = run("list", target)
    assert out.strip() == "pd_head JointPositionController running"
    # ros2_control's spawner: a controller already loaded is started, not loaded again
    code, out, err = run("spawn", target, "pd_head", "--timeout", "1")
    assert code == 0 and "'pd_head' is already running" in out, err
    assert run("stop", target, "pd_head")[0] == 0
    code, out, err = run("spawn", target, "pd_head", "--timeout", "5")
    assert code == 0, err
    assert "'pd_head' is already loaded (initialized): not loaded again" in out
    assert "started ['pd_head']" in out
    assert run("list", target)[1].strip() == "pd_head JointPositionController running"
