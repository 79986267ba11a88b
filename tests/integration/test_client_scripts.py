"""Users' scripts, unchanged but for their imports, against a running system: a
NAOqi-style ALMotion script and a Doosan DRL-style moveb script, each
run as its own process from a folder outside the checkout that also holds a folder named
``rtcf`` (as a checkout called rtcf next to the script would), with no PYTHONPATH: the
installed, namespaced import path (``rtcf_components.clients``) is all they use."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from test_kinematics_corba import COMPOSITION as NAO_SYSTEM     # DCM + Kinematics

pytestmark = pytest.mark.slow    # seconds per test: left out of scripts/test -m "not slow"

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = Path(__file__).resolve().parent / "clients"


def user_folder(tmp_path: Path, script: str) -> Path:
    """A user's folder: the script, and a folder named rtcf beside it (a checkout)."""
    shadow = tmp_path / "rtcf"
    shadow.mkdir()
    (shadow / "README.md").write_text("a checkout of rtcf called rtcf\n")
    shutil.copy(CLIENTS / script, tmp_path / script)
    return tmp_path / script


def run_script(path: Path, *args: str, env: dict | None = None, timeout: float = 60.0):
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    clean.update(env or {})
    return subprocess.run([sys.executable, path.name, *args], cwd=path.parent, env=clean,
                          capture_output=True, text=True, timeout=timeout)


def test_a_folder_named_rtcf_beside_the_script_does_not_shadow_rtcf(tmp_path):
    """Was: ImportError: cannot import name 'Component' from 'rtcf' (unknown location)."""
    (tmp_path / "rtcf").mkdir()
    (tmp_path / "client.py").write_text(
        "from rtcf import Component\n"
        "from rtcf_components.clients import MotionProxy, DCMProxy, BlendingPlannerProxy\n"
        "print('ok', Component.__module__, MotionProxy.__module__)\n")
    r = run_script(tmp_path / "client.py")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["ok", "rtcf.component", "rtcf_components.kinematics.proxy"]


def test_users_own_packages_named_like_the_components_neither_hide_nor_are_hidden(tmp_path):
    """Was: a user's own kinematics package beside the script made
    ``from rtcf.clients import MotionProxy`` fail with "No module named 'kinematics.proxy'",
    because the bundled components were bare top-level modules appended to sys.path."""
    (tmp_path / "kinematics").mkdir()
    (tmp_path / "kinematics" / "__init__.py").write_text("MINE = 'kinematics'\n")
    for name in ("dcm", "blending_planner", "sequence_player", "controller_manager",
                 "simulator", "clients"):
        (tmp_path / f"{name}.py").write_text(f"MINE = {name!r}\n")
    (tmp_path / "client.py").write_text(
        "import kinematics, dcm, blending_planner, sequence_player, simulator, clients\n"
        "from rtcf_components.clients import (MotionProxy, DCMProxy, BlendingPlannerProxy,\n"
        "                                     ControllerManagerProxy, wait_interpolation)\n"
        "from rtcf_components.clients.dsr import moveb\n"
        "from rtcf_components.clients.naoqi import ALProxy\n"
        "from rtcf_components.kinematics import load_model\n"
        "import kinematics as again\n"
        "print(kinematics.MINE, dcm.MINE, blending_planner.MINE, sequence_player.MINE,\n"
        "      simulator.MINE, clients.MINE, again.MINE)\n"
        "print(MotionProxy.__module__, DCMProxy.__module__, moveb.__module__,\n"
        "      len(load_model('nao_h25_v5').joint_names))\n")
    r = run_script(tmp_path / "client.py")
    assert r.returncode == 0, r.stderr
    mine, bundled = r.stdout.splitlines()
    assert mine.split() == ["kinematics", "dcm", "blending_planner", "sequence_player",
                            "simulator", "clients", "kinematics"]
    assert bundled.split() == ["rtcf_components.kinematics.proxy", "rtcf_components.dcm.proxy",
                               "rtcf_components.blending_planner.dsr_motion", "26"]


def test_naoqi_script_runs_against_the_system(module_launch, tmp_path):
    system = module_launch(NAO_SYSTEM, ["DCM0", "Kinematics0"])
    script = user_folder(tmp_path, "naoqi_model.py")
    r = run_script(script, "--ip", "localhost", "--port", str(system.ns_port))
    assert r.returncode == 0, r.stdout + r.stderr
    lines = {ln.split()[0]: ln.split()[1:] for ln in r.stdout.splitlines()}
    # LHand sits at the LArm effector (the URDF's LHand joint is at the hand offset)
    assert lines["LHand"] == lines["LArm"] and lines["RHand"] == lines["RArm"]
    assert [float(v) for v in lines["Torso"]] == [0.0] * 6
    assert lines["Sensors"] == ["CameraTop", "CameraBottom"]
    assert "CameraTop" in lines and "numpy" in lines
    assert "unknown body name 'Tail'" in r.stdout
    # ALProxy("DCM"): the DCM's refusal and the proxy's own are RuntimeErrors too
    dcm_errors = [ln for ln in r.stdout.splitlines() if ln.startswith("DCMRuntimeError")]
    assert len(dcm_errors) == 2, r.stdout
    assert "ChestBoard/Led/Purple/Actuator/Value" in dcm_errors[0]
    assert "set: expected [name, updateKind" in dcm_errors[1]


def test_drl_moveb_script_runs_against_the_system(module_launch, tmp_path):
    system = module_launch(ROOT / "compositions" / "arm_blending.yaml", "BlendingPlanner0",
                           "exec_cxt.periodic.sched_fifo:NO")
    script = user_folder(tmp_path, "drl_moveb.py")
    r = run_script(script, env={"RTCF_NAMESERVER": f"localhost:{system.ns_port}"},
                   timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == [
        "square 0", "arc 0", "amoveb 0 busy", "mwait 0 idle", "refused 1001",
        "DR_Error 1000 Invalid type : vel, v", "DR_Error 1001 Invalid value : pos2"]
    # getTcpPose is where the joints sent to the arm put it: Kinematics0 computes the
    # flange pose from the same joint reference (TCP = flange in this composition)
    from rtcf_components.clients import BlendingPlannerProxy, MotionProxy
    ns = f"localhost:{system.ns_port}"
    bp = BlendingPlannerProxy("BlendingPlanner0", nameserver=ns)
    assert "IK fails" in bp.last_error(), bp.last_error()
    flange = MotionProxy("Kinematics0", nameserver=ns).getPosition("arm", 0, False)
    assert np.allclose(np.array(bp.tcp_pose()[:3]) * 1e-3, flange[:3], atol=1e-9)


def test_naoqi_walk_script_walks_the_simulated_nao(module_launch, tmp_path):
    """Walking the NAOqi way: goToPosture, moveInit, moveTo (blocking and through post),
    ALMemory's FSR keys, RuntimeErrors, against compositions/nao_walk.yaml run flat out."""
    system = module_launch(ROOT / "compositions" / "nao_walk.yaml", "NAOqi0",
                           "exec_cxt.periodic.sched_fifo:NO",
                           "rtcf.simulation.real_time_factor:0")
    script = user_folder(tmp_path, "naoqi_walk.py")
    r = run_script(script, "--ip", "localhost", "--port", str(system.ns_port), timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = {ln.split()[0]: ln.split()[1:] for ln in r.stdout.splitlines()}
    assert lines["Posture"] == ["StandInit"]
    left, right = (float(v) for v in lines["FSR"])
    assert abs(left + right - 5.305) < 0.3                 # kg, both feet carry the robot
    dx, dy, dth = (float(v) for v in lines["Moved"])
    assert abs(dx - 0.2) < 1e-6 and abs(dy) < 1e-6 and abs(dth - 0.785398) < 1e-5
    assert lines["Fallen"] == ["False"]
    errors = [ln for ln in r.stdout.splitlines() if ln.startswith("RuntimeError")]
    assert len(errors) == 3 and "unknown posture 'Cartwheel'" in errors[0]


def test_drl_motion_script_runs_against_the_system(module_launch, tmp_path):
    """The DRL motion API through CORBA on arm_blending: a doosan-robot2 style
    program with only its import lines changed."""
    system = module_launch(ROOT / "compositions" / "arm_blending.yaml", "BlendingPlanner0",
                           "exec_cxt.periodic.sched_fifo:NO")
    script = user_folder(tmp_path, "drl_motion.py")
    r = run_script(script, env={"RTCF_NAMESERVER": f"localhost:{system.ns_port}"},
                   timeout=240)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == [
        "home 0", "approach 0", "down 0", "up 0", "over 0", "arc 0", "place 0",
        "at [500.0, -300.0, 400.0] 2", "spline 0", "joints 0",
        "home again [0.0, 0.0, 90.0, 0.0, 90.0, 0.0]", "moveb 0", "amovel 0", "busy True",
        "mwait -1 True", "stopped between True", "DR_Error 1000 Invalid type : pos",
        "DR_Error 1001 movej"]


def test_a_ros2_style_dsr_script_runs_unchanged_and_stops_on_ctrl_c(module_launch, tmp_path):
    """dsr_run: a script with a ROS 2 user's imports (rclpy, dsr_msgs2, DR_init,
    DSR_ROBOT2) loops until Ctrl-C; its handler publishes RobotStop on 'stop' and shuts rclpy
    down: the arm stops and the program ends (exit status 0)."""
    import signal
    import time
    system = module_launch(ROOT / "compositions" / "arm_blending.yaml", "BlendingPlanner0",
                           "exec_cxt.periodic.sched_fifo:NO")
    script = user_folder(tmp_path, "dsr_ros2_style.py")
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.Popen(
        [sys.executable, "-u", "-m", "rtcf_components.blending_planner.dsr_run",
         "--nameserver", f"localhost:{system.ns_port}", script.name],
        cwd=tmp_path, env=clean, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        first = proc.stdout.readline()
        assert first.startswith("pass 1 [559.0, 34.5, 651.4] 2"), first + proc.stdout.read()
        time.sleep(1.0)                               # inside the next pass's motions
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, out
    lines = out.splitlines()
    assert "signal_handler" in lines, out
    assert lines[-1] in ("good-bye", "dsr_run: stopped (rclpy.shutdown() was called: the "
                         "program is stopped)"), out
