"""The Kinematics component in another process, reached through CORBA.

A manager process runs the DCM (simulated body, zero posture, no qRef) and Kinematics0 fed by
DCM0.q and DCM0.qCommand on a 100 Hz EC. The test process is the client: MotionProxy (the
NAOqi-style calls), the raw KinematicsService stubs, a DCMProxy that moves a joint, and the
ALMotion documentation's example script run as its own process.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.slow    # seconds per test: left out of scripts/test -m "not slow"

ROOT = Path(__file__).resolve().parents[2]

COMPOSITION = """\
name: kin_corba
components:
  - {type: DCM, module: dcm, params: {profile: default, servo_tau: 0.02}}
  - {type: Kinematics, module: kinematics}
connections:
  - {from: DCM0.q, to: Kinematics0.q}
  - {from: DCM0.qCommand, to: Kinematics0.qCommand}
execution_contexts:
  - {name: main, kind: periodic, rate: 100, members: [DCM0, Kinematics0]}
activate: all
"""

ZERO_RARM = (0.2187, -0.113, 0.08769)              # right hand at zero (ElbowOffsetY 15 mm), m
TORSO_Z = 0.33309                                    # torso height in FRAME_ROBOT at zero


@pytest.fixture(scope="module")
def system(module_launch):
    return module_launch(COMPOSITION, ["DCM0", "Kinematics0"])


@pytest.fixture(scope="module")
def motion(system):
    from rtcf_components.kinematics.proxy import MotionProxy
    return MotionProxy("Kinematics0", nameserver=f"localhost:{system.ns_port}")


@pytest.fixture(scope="module")
def dcm(system):
    from rtcf_components.dcm.proxy import DCMProxy
    return DCMProxy("DCM0", nameserver=f"localhost:{system.ns_port}")


def rest_pose(chain: str) -> np.ndarray:
    """The DCM's simulated body rests at 0 clamped to the limits (RElbowRoll >= 0.0349)."""
    from rtcf_components.kinematics import chain_fk, load_model
    m = load_model("nao_h25_v5")
    c = m.chain(chain)
    return chain_fk(m, c, np.clip(np.zeros(c.dof), c.lower, c.upper))


def test_seed_examples_through_the_proxy(motion, it):
    assert motion.getRobotPosition(False) == [0.0, 0.0, 0.0]
    want = rest_pose("RArm")
    np.testing.assert_allclose(want[:3, 3], ZERO_RARM, atol=5e-3)     # near the zero posture's
    it.wait_until(lambda: np.allclose(motion.getTransform("RArm", 0, True),
                                      want.ravel(), atol=1e-9))
    T = np.array(motion.getTransform("RArm", 0, True)).reshape(4, 4)
    np.testing.assert_array_equal(T[3], [0, 0, 0, 1])
    p = motion.getPosition("CameraTop", 1, True)       # WORLD = ROBOT without odometry
    np.testing.assert_allclose(p, [0.05871, 0, TORSO_Z + 0.19014, 0, 0.0209435, 0], atol=1e-6)


def test_lists_and_limits(motion):
    assert len(motion.getJointNames("Body")) == 26
    assert motion.getJointNames("LArm")[-1] == "LHand"
    assert motion.getBodyNames("Chains") == ["Head", "LArm", "LLeg", "RLeg", "RArm"]
    lim = motion.getLimits("HeadYaw")
    assert lim == [[-2.0857, 2.0857, 8.26797, 1.547]]
    assert len(motion.getLimits("RLeg")) == 6


@pytest.mark.parametrize("call,args,words", [
    ("getTransform", ("NoSuchBody", 0, True), ["NoSuchBody", "unknown body"]),
    ("getPosition", ("LArm", 3, True), ["space 3"]),
    ("getLimits", ("Elbow",), ["'Elbow'"]),
    ("getJointNames", ("", ), ["''"]),
    ("getBodyNames", ("Arms",), ["'Arms'"]),
])
def test_errors_name_the_fault_and_the_service_keeps_answering(system, call, args, words):
    from rtcf.corba.client import get_service
    from rtcf.corba.idl import stub_module
    NAO = stub_module("NAO")
    svc = get_service("Kinematics0", "KinematicsService", stub=NAO.KinematicsService,
                      nameserver=f"localhost:{system.ns_port}")
    with pytest.raises(NAO.KinematicsError) as ei:
        getattr(svc, call)(*args)
    for w in words:
        assert w in ei.value.reason
    assert svc.getPosition("Head", 0, False)[2] == pytest.approx(0.1265)


def test_proxy_refuses_garbage_before_the_wire(motion):
    from rtcf.corba.idl import stub_module
    NAO = stub_module("NAO")
    for call, args in [("getTransform", (None, 0, True)), ("getPosition", ("LArm", "0", True)),
                       ("getPosition", ("LArm", True, True)),
                       ("solveIK", ("LArm", 0, [0.1, 0.1], 63)),
                       ("solveIK", ("LArm", 0, [math.nan] * 6, 63)),
                       ("solveIK", ("LArm", 0, [0.1] * 6, 64))]:
        with pytest.raises(NAO.KinematicsError):
            getattr(motion, call)(*args)


def test_solve_ik_over_corba(motion):
    target = [0.15, 0.12, 0.05]
    r = motion.solveIK("LArm", 0, target + [0, 0, 0], 7)
    assert r["success"], r["reason"]
    assert r["positionError"] <= 1e-4 and len(r["angles"]) == 5
    far = motion.solveIK("LArm", 0, [1.0, 0.0, 0.0, 0, 0, 0], 63)
    assert not far["success"] and "unreachable" in far["reason"]


def test_follows_the_measured_and_commanded_joints(motion, dcm, it):
    """A command to RShoulderPitch through the DCM shows in getPosition: at once with
    commanded angles, after the simulated servo with measured ones."""
    key = "RShoulderPitch/Position/Actuator/Value"
    dcm.set([key, "ClearAll", [[math.pi / 2, dcm.getTime(0)]]])
    try:
        def lowered(use_sensors):
            p = motion.getPosition("RArm", 0, use_sensors)
            return abs(p[2] - (0.1 - 0.2187)) < 5e-3 and abs(p[0] - (-0.01231)) < 5e-3
        it.wait_until(lambda: lowered(False), timeout=3)
        it.wait_until(lambda: lowered(True), timeout=5)
    finally:
        dcm.set([key, "ClearAll", [[0.0, dcm.getTime(0)]]])
        rest = rest_pose("RArm").ravel()
        it.wait_until(lambda: np.allclose(motion.getTransform("RArm", 0, True), rest,
                                          atol=1e-7), timeout=10)


def test_seed_example_script_in_its_own_process(system):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "components")]))
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "motion_examples.py"),
                          "--nameserver", f"localhost:{system.ns_port}"],
                         capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "Robot Position [0.0, 0.0, 0.0]"
    printed = np.array([[float(v) for v in line.split()] for line in lines[1:5]])
    np.testing.assert_allclose(printed, rest_pose("RArm"), atol=1e-6)
    assert lines[5].startswith("CameraTop position in FRAME_WORLD")


def test_example_script_without_a_naming_service_says_so(tmp_path):
    from rtcf.corba.naming import free_port
    port = free_port()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "components")]))
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "motion_examples.py"),
                          "--nameserver", f"localhost:{port}"],
                         capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 1             # it says so and ends (the timeout: it hung)
    assert f"localhost:{port}" in out.stderr and "Traceback" not in out.stderr
