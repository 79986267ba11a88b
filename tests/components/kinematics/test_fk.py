"""Forward kinematics of the kinematics core (components/kinematics/algorithms.py) on NAO's
modified-DH model: 14 reference vectors and the K6 matrix (both ElbowOffsetY settings), the
zero posture, cameras, spaces, joint frames, batched FK, the position6d convention and
Jacobians against finite differences.

Tolerances: the reference positions are given to 0.0001 mm and the angles to 0.0001 rad; we
check positions to that precision (1e-7 m, well inside 0.1 mm) and angles to 1e-4 rad.
"""

from __future__ import annotations

import copy
import importlib.util
import math
import os
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

from rtcf_components.kinematics import (FRAME_ROBOT, FRAME_TORSO, FRAME_WORLD, ModelError, body_transform,
                        chain_fk, chain_fk_batch, chain_frames, chain_jacobian, load_model,
                        position6d, transform, transform_from_6d)
from rtcf_components.kinematics.algorithms import (chain_fk_jacobian, robot_frame, rotation_log,
                                   space_transform)
from rtcf_components.kinematics import codegen
from rtcf_components.kinematics.codegen import BATCH_ROWS, compile_batch
from rtcf_components.kinematics.model import MODEL_DIR, model_from_data, read_model_data, rot

PI = math.pi
POS_TOL = 1e-7        # m: the reference positions have 4 decimals in mm
ANG_TOL = 1e-4        # rad
MM = 1e-3


@pytest.fixture(scope="module")
def nao():
    """The default model: NAO H25 V5, ElbowOffsetY = 15 mm (PD-K1)."""
    return load_model("nao_h25_v5")


@pytest.fixture(scope="module")
def seed_model():
    """ALMotion documentation's modified-DH table taken literally (it has no elbow offset):
    the H25 data with ElbowOffsetY = 0."""
    data = copy.deepcopy(read_model_data(MODEL_DIR / "nao_h25_v5.yaml"))
    data["constants"]["ElbowOffsetY"] = 0.0
    return model_from_data(data, "nao_h25_v5 (ElbowOffsetY=0)")


@pytest.fixture(scope="module")
def arm():
    return load_model("doosan_m1013")


def full_q(model, **angles) -> np.ndarray:
    q = np.zeros(len(model.joint_names))
    for name, v in angles.items():
        q[model.joint_index(name)] = v
    return q


# -- the 14 reference vectors ------------------------------------------------------------------
# (chain, q, position mm with ElbowOffsetY = 0, position mm default, angles rad or None)
# None for angles: K3, gimbal lock, compare matrices.
VECTORS = {
    "K1": ("Head", [0.5, 0.3], (0, 0, 126.5), None, (0, 0.3, 0.5)),
    "K2": ("LArm", [0, 0, 0, 0, 0], (218.70, 98.00, 87.69), (218.70, 113.00, 87.69), (0, 0, 0)),
    "K3": ("LArm", [PI / 2, 0, 0, 0, 0], (-12.31, 98.00, -118.70), (-12.31, 113.00, -118.70),
           None),
    "K4": ("LArm", [0, PI / 2, 0, 0, 0], (0.00, 316.70, 87.69), (-15.00, 316.70, 87.69),
           (0, 0, PI / 2)),
    "K5": ("LArm", [0, 0, 0, -PI / 2, 0], (105.00, -15.70, 87.69), (105.00, -0.70, 87.69),
           (0, 0, -PI / 2)),
    "K6": ("LArm", [0.5, 0.3, -0.7, -1.0, 0.4], (187.8672, 73.3825, 55.8182),
           (183.9770, 87.7125, 57.9434), (-0.2923, -0.1375, -0.4774)),
    "K7": ("RArm", [0, 0, 0, 0, 0], (218.70, -98.00, 87.69), (218.70, -113.00, 87.69),
           (0, 0, 0)),
    "K8": ("RArm", [1.4, -0.3, 1.2, 0.9, 0.2], (109.3199, -107.2496, -62.8119),
           (108.5665, -121.5796, -58.4436), (1.3628, 0.5749, 0.1044)),
    "K9": ("LLeg", [0] * 6, (0, 50.00, -333.09), None, (0, 0, 0)),
    "K10": ("LLeg", [0, 0, -0.5, 1.0, -0.5, 0], (-1.3903, 50.00, -308.2515), None, (0, 0, 0)),
    "K11": ("LLeg", [-0.5, 0, 0, 0, 0, 0], (84.1038, 65.1853, -317.9047), None,
            (-0.0651, -0.3459, 0.3686)),
    "K12": ("LLeg", [0, 0.3, 0, 0, 0, -0.3], (0, 109.9610, -324.0278), None, (0, 0, 0)),
    "K13": ("LLeg", [-0.3, 0.1, -0.4, 0.8, -0.4, -0.1], (43.3224, 73.1663, -311.6305), None,
            (-0.0228, -0.2105, 0.2153)),
    "K14": ("RLeg", [-0.3, -0.1, -0.4, 0.8, -0.4, 0.1], (43.3224, -73.1663, -311.6305), None,
            (0.0228, -0.2105, -0.2153)),
}

K6_MATRIX_SEED = np.array([[0.879786, 0.475106, 0.015847, 187.867155 * MM],
                           [-0.455177, 0.832332, 0.316287, 73.382490 * MM],
                           [0.137080, -0.285478, 0.948531, 55.818207 * MM],
                           [0, 0, 0, 1]])


def _check_vector(model, key, default: bool):
    chain, q, seed_pos, default_pos, angles = VECTORS[key]
    want = np.array(default_pos if default and default_pos is not None else seed_pos) * MM
    T = chain_fk(model, chain, q)
    np.testing.assert_allclose(T[:3, 3], want, atol=POS_TOL, rtol=0, err_msg=key)
    np.testing.assert_allclose(T[3], [0, 0, 0, 1], atol=0)
    if angles is None:          # K3: gimbal lock, R = RotY(pi/2)
        np.testing.assert_allclose(T[:3, :3], rot((0, 1, 0), PI / 2)[:3, :3], atol=1e-12)
    else:
        np.testing.assert_allclose(position6d(T)[3:], angles, atol=ANG_TOL, rtol=0,
                                   err_msg=key)


@pytest.mark.parametrize("key", list(VECTORS))
def test_fk_vector_default_model(nao, key):
    """The vectors on the default model (its own position where one is given)."""
    _check_vector(nao, key, default=True)


@pytest.mark.parametrize("key", list(VECTORS))
def test_fk_vector_seed_table(seed_model, key):
    """The vectors with ElbowOffsetY = 0: ALMotion's table taken literally."""
    _check_vector(seed_model, key, default=False)


def test_k6_full_matrix(nao, seed_model):
    q = VECTORS["K6"][1]
    T0 = chain_fk(seed_model, "LArm", q)
    np.testing.assert_allclose(T0, K6_MATRIX_SEED, atol=1e-6, rtol=0)
    # the elbow offset moves the hand, it does not turn it
    T = chain_fk(nao, "LArm", q)
    np.testing.assert_allclose(T[:3, :3], K6_MATRIX_SEED[:3, :3], atol=1e-6, rtol=0)
    np.testing.assert_allclose(T[:3, 3], np.array([183.9770, 87.7125, 57.9434]) * MM,
                               atol=POS_TOL, rtol=0)


def test_elbow_offset_is_a_y_shift_after_shoulder_roll(nao, seed_model):
    """PD-K1: the two models differ by 15 mm along the ShoulderRoll frame's torso-Y axis (at
    zero), i.e. by R_shoulder_roll . (0, +-15, 0), for any arm configuration."""
    rng = np.random.default_rng(3)
    for chain, sign in (("LArm", 1.0), ("RArm", -1.0)):
        c = nao.chain(chain)
        for _ in range(20):
            q = rng.uniform(c.lower, c.upper)
            d = chain_fk(nao, chain, q)[:3, 3] - chain_fk(seed_model, chain, q)[:3, 3]
            R_roll = chain_frames(nao, chain, q)[1][:3, :3]
            np.testing.assert_allclose(d, R_roll @ [0, sign * 15 * MM, 0], atol=1e-12)


# -- the zero posture ------------------------------------------------------------------------

def test_zero_posture(nao, seed_model):
    zero = np.zeros(len(nao.joint_names))
    want = {"Head": (0, 0, 126.5), "LLeg": (0, 50, -333.09), "RLeg": (0, -50, -333.09),
            "LArm": (218.70, 113.00, 87.69), "RArm": (218.70, -113.00, 87.69)}
    for name, p in want.items():
        T = body_transform(nao, zero, name)
        np.testing.assert_allclose(T[:3, 3], np.array(p) * MM, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(T[:3, :3], np.eye(3), atol=1e-12, err_msg=name)
    # ALMotion's literal table: (UpperArm + LowerArm + HandOffsetX, ShoulderOffsetY,
    # ShoulderOffsetZ - HandOffsetZ)
    for name, y in (("LArm", 98.0), ("RArm", -98.0)):
        T = body_transform(seed_model, zero, name)
        np.testing.assert_allclose(T[:3, 3], np.array([105 + 55.95 + 57.75, y, 100 - 12.31]) * MM,
                                   atol=1e-12)
        np.testing.assert_allclose(T[:3, :3], np.eye(3), atol=1e-12)
    # foot height: HipOffsetZ + ThighLength + TibiaLength + FootHeight
    foot_z = -(85 + 100 + 102.9 + 45.19) * MM
    assert body_transform(nao, zero, "LLeg")[2, 3] == pytest.approx(foot_z, abs=1e-15)
    np.testing.assert_array_equal(body_transform(nao, zero, "Torso"), np.eye(4))


# -- joint frames --------------------------------------------------------------------------------

R2 = 1 / math.sqrt(2)
AXES = {  # the joint axes in the torso frame at zero
    "HeadYaw": (0, 0, 1), "HeadPitch": (0, 1, 0),
    "LShoulderPitch": (0, 1, 0), "LShoulderRoll": (0, 0, 1), "LElbowYaw": (1, 0, 0),
    "LElbowRoll": (0, 0, 1), "LWristYaw": (1, 0, 0),
    "RShoulderPitch": (0, 1, 0), "RShoulderRoll": (0, 0, 1), "RElbowYaw": (1, 0, 0),
    "RElbowRoll": (0, 0, 1), "RWristYaw": (1, 0, 0),
    "LHipYawPitch": (0, R2, -R2), "LHipRoll": (1, 0, 0), "LHipPitch": (0, 1, 0),
    "LKneePitch": (0, 1, 0), "LAnklePitch": (0, 1, 0), "LAnkleRoll": (1, 0, 0),
    "RHipYawPitch": (0, R2, R2), "RHipRoll": (1, 0, 0), "RHipPitch": (0, 1, 0),
    "RKneePitch": (0, 1, 0), "RAnklePitch": (0, 1, 0), "RAnkleRoll": (1, 0, 0),
}
JOINT_ORIGINS_MM = {  # at zero: Aldebaran's link table with the 15 mm elbow offset
    "HeadYaw": (0, 0, 126.5), "HeadPitch": (0, 0, 126.5),
    "LShoulderPitch": (0, 98, 100), "LShoulderRoll": (0, 98, 100),
    "LElbowYaw": (105, 113, 100), "LElbowRoll": (105, 113, 100),
    "LWristYaw": (160.95, 113, 100),
    "RShoulderPitch": (0, -98, 100), "RShoulderRoll": (0, -98, 100),
    "RElbowYaw": (105, -113, 100), "RElbowRoll": (105, -113, 100),
    "RWristYaw": (160.95, -113, 100),
    "LHipYawPitch": (0, 50, -85), "LHipRoll": (0, 50, -85), "LHipPitch": (0, 50, -85),
    "LKneePitch": (0, 50, -185), "LAnklePitch": (0, 50, -287.9), "LAnkleRoll": (0, 50, -287.9),
    "RHipYawPitch": (0, -50, -85), "RHipRoll": (0, -50, -85), "RHipPitch": (0, -50, -85),
    "RKneePitch": (0, -50, -185), "RAnklePitch": (0, -50, -287.9),
    "RAnkleRoll": (0, -50, -287.9),
}


@pytest.mark.parametrize("joint", list(AXES))
def test_joint_frame_origin_and_axis(nao, joint):
    """A joint's frame (after its rotation) is torso-parallel at zero, sits on the link table's
    point, and turning only that joint by a turns its frame by Rot(axis, a) in place."""
    zero = np.zeros(len(nao.joint_names))
    T0 = body_transform(nao, zero, joint)
    np.testing.assert_allclose(T0[:3, :3], np.eye(3), atol=1e-12)
    np.testing.assert_allclose(T0[:3, 3], np.array(JOINT_ORIGINS_MM[joint]) * MM, atol=1e-12)
    i = nao.joint_index(joint)
    a = 0.5 * (nao.lower[i] + nao.upper[i]) + 0.1
    T = body_transform(nao, full_q(nao, **{joint: a}), joint)
    np.testing.assert_allclose(T[:3, 3], T0[:3, 3], atol=1e-12)
    np.testing.assert_allclose(T[:3, :3], rot(AXES[joint], a)[:3, :3], atol=1e-12)


def test_joint_frames_chain_frames_consistent(nao):
    """chain_frames: every joint frame, then the effector; the effector row is chain_fk, and a
    joint's row does not depend on the joints after it."""
    rng = np.random.default_rng(5)
    for c in nao.chains.values():
        q = rng.uniform(c.lower, c.upper)
        F = chain_frames(nao, c, q)
        assert F.shape == (c.dof + 1, 4, 4)
        np.testing.assert_allclose(F[-1], chain_fk(nao, c, q), atol=1e-14)
        np.testing.assert_allclose(chain_fk(nao, c, q, tip=np.eye(4)), F[-2], atol=1e-14)
        q2 = q.copy()
        q2[-1] += 0.3
        F2 = chain_frames(nao, c, q2)
        np.testing.assert_allclose(F2[:-2], F[:-2], atol=1e-14)
        full = np.zeros(len(nao.joint_names))
        full[c.index] = q
        for k, j in enumerate(c.joints):
            np.testing.assert_allclose(body_transform(nao, full, j), F[k], atol=1e-14)


# -- cameras -----------------------------------------------------------------------------------

def test_camera_top_at_zero(nao):
    p = position6d(transform(nao, np.zeros(26), "CameraTop", FRAME_TORSO))
    np.testing.assert_allclose(p[:3], np.array([58.71, 0, 190.14]) * MM, atol=1e-12)
    np.testing.assert_allclose(p[3:], [0, 0.0209435, 0], atol=1e-12)
    assert p[4] == pytest.approx(0.02094, abs=1e-5)   # wy = 0.02094 to 5 places


def test_camera_top_turned(nao):
    q = full_q(nao, HeadYaw=0.5, HeadPitch=0.3)
    p = position6d(transform(nao, q, "CameraTop", FRAME_TORSO))
    np.testing.assert_allclose(p[:3], np.array([65.7263, 35.9064, 169.9476]) * MM,
                               atol=POS_TOL)
    np.testing.assert_allclose(p[3:], [0, 0.32094, 0.5], atol=ANG_TOL)


def test_camera_bottom(nao):
    """V4/V5 offsets relative to HeadPitch (Aldebaran's link table): (50.71, 0, 17.74) mm,
    pitch 0.6929."""
    q = full_q(nao, HeadYaw=-0.4, HeadPitch=0.2)
    head = body_transform(nao, q, "HeadPitch")
    cam = body_transform(nao, q, "CameraBottom")
    rel = np.linalg.inv(head) @ cam
    np.testing.assert_allclose(rel[:3, 3], np.array([50.71, 0, 17.74]) * MM, atol=1e-12)
    np.testing.assert_allclose(position6d(rel)[3:], [0, 0.692896, 0], atol=1e-12)


def test_v32_cameras():
    m = load_model("nao_v32")
    p = position6d(transform(m, np.zeros(26), "CameraTop", FRAME_TORSO))
    np.testing.assert_allclose(p, [53.9 * MM, 0, (126.5 + 67.9) * MM, 0, 0, 0], atol=1e-12)
    p = position6d(transform(m, np.zeros(26), "CameraBottom", FRAME_TORSO))
    np.testing.assert_allclose(p, [48.8 * MM, 0, (126.5 + 23.81) * MM, 0, 0.6981, 0],
                               atol=1e-12)


# -- spaces (ALMotion's FRAME_TORSO, FRAME_WORLD, FRAME_ROBOT) -------------------------------

def test_frame_robot_at_zero(nao):
    zero = np.zeros(26)
    T = transform(nao, zero, "Torso", FRAME_ROBOT)
    np.testing.assert_allclose(T, [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0.33309],
                                   [0, 0, 0, 1]], atol=1e-12)
    for foot, y in (("LLeg", 0.05), ("RLeg", -0.05)):
        np.testing.assert_allclose(transform(nao, zero, foot, FRAME_ROBOT)[:3, 3], [0, y, 0],
                                   atol=1e-12)
    # without odometry, WORLD = ROBOT (no locomotion moves FRAME_WORLD here)
    for name in ("Torso", "Head", "LArm", "CameraTop", "RKneePitch"):
        np.testing.assert_allclose(transform(nao, zero, name, FRAME_WORLD),
                                   transform(nao, zero, name, FRAME_ROBOT), atol=0)
    # FRAME_TORSO is the model root: transform == body_transform
    np.testing.assert_array_equal(transform(nao, zero, "LArm", FRAME_TORSO),
                                  body_transform(nao, zero, "LArm"))


def test_frame_robot_feet_on_the_ground(nao):
    """Crouched and leaning forward (both soles in one plane): both soles lie on z = 0 of
    FRAME_ROBOT, flat (z up), the origin is their midpoint, and the torso is pitched."""
    legs = {"LHipPitch": -0.9, "LKneePitch": 1.2, "LAnklePitch": -0.6,
            "RHipPitch": -0.9, "RKneePitch": 1.2, "RAnklePitch": -0.6,
            "HeadYaw": 0.7, "LShoulderPitch": 0.3}
    q = full_q(nao, **legs)
    L = transform(nao, q, "LLeg", FRAME_ROBOT)
    R = transform(nao, q, "RLeg", FRAME_ROBOT)
    for F in (L, R):
        assert F[2, 3] == pytest.approx(0.0, abs=1e-12)
        np.testing.assert_allclose(F[:3, :3], np.eye(3), atol=1e-12)
    np.testing.assert_allclose(0.5 * (L[:3, 3] + R[:3, 3]), 0, atol=1e-12)
    torso = transform(nao, q, "Torso", FRAME_ROBOT)
    assert 0.2 < torso[2, 3] < 0.33309                      # lower than standing straight
    assert position6d(torso)[4] == pytest.approx(0.3, abs=1e-12)   # hip+knee+ankle = 0.3 rad lean
    # getTransform in a space = space transform . torso-frame pose
    S = space_transform(nao, q, FRAME_ROBOT)
    np.testing.assert_allclose(S @ body_transform(nao, q, "CameraTop"),
                               transform(nao, q, "CameraTop", FRAME_ROBOT), atol=1e-15)
    np.testing.assert_allclose(np.linalg.inv(robot_frame(nao, q)), S, atol=1e-12)


def test_frame_robot_heading_is_the_mean_of_the_feet(nao):
    """HipYawPitch turns the feet by opposite yaws (and tilts them): FRAME_ROBOT's x is their
    mean heading, its z the mean sole normal, its origin on the ground under their midpoint."""
    q = full_q(nao, LHipYawPitch=-0.4, RHipYawPitch=-0.4)
    Lt, Rt = body_transform(nao, q, "LLeg"), body_transform(nao, q, "RLeg")
    z = Lt[:3, 2] + Rt[:3, 2]
    z /= np.linalg.norm(z)
    F = robot_frame(nao, q)
    np.testing.assert_allclose(F[:3, 2], z, atol=1e-12)
    assert F[1, 0] == pytest.approx(0.0, abs=1e-12)          # symmetric: x in the torso's x-z
    L = transform(nao, q, "LLeg", FRAME_ROBOT)
    R = transform(nao, q, "RLeg", FRAME_ROBOT)
    yawL, yawR = math.atan2(L[1, 0], L[0, 0]), math.atan2(R[1, 0], R[0, 0])
    assert yawL == pytest.approx(-yawR, abs=1e-12) and abs(yawL) > 0.1
    np.testing.assert_allclose(0.5 * (L[:2, 3] + R[:2, 3]), 0, atol=1e-12)
    assert min(L[2, 3], R[2, 3]) == pytest.approx(0.0, abs=1e-12)


def test_frame_world_with_odometry(nao):
    q = full_q(nao, HeadYaw=0.2, LKneePitch=0.4, LHipPitch=-0.2, LAnklePitch=-0.2,
               RKneePitch=0.4, RHipPitch=-0.2, RAnklePitch=-0.2)
    odo = (0.30, -0.20, 0.6)
    c, s = math.cos(0.6), math.sin(0.6)
    W = np.array([[c, -s, 0, 0.30], [s, c, 0, -0.20], [0, 0, 1, 0], [0, 0, 0, 1]])
    for name in ("Torso", "Head", "RArm", "CameraBottom", "LAnkleRoll"):
        np.testing.assert_allclose(transform(nao, q, name, FRAME_WORLD, odo),
                                   W @ transform(nao, q, name, FRAME_ROBOT), atol=1e-14)
    # at zero the torso is 0.33309 m above FRAME_ROBOT's origin: in WORLD, above the odometry
    p = position6d(transform(nao, np.zeros(26), "Torso", FRAME_WORLD, odo))
    np.testing.assert_allclose(p, [0.30, -0.20, 0.33309, 0, 0, 0.6], atol=1e-12)


def test_unknown_space_and_name(nao):
    with pytest.raises(ModelError, match=r"unknown space 3: expected 0 \(FRAME_TORSO\)"):
        transform(nao, np.zeros(26), "LArm", 3)
    with pytest.raises(ModelError, match="unknown body name 'LFoot'"):
        transform(nao, np.zeros(26), "LFoot", FRAME_TORSO)


def test_arm_without_feet_robot_frame_is_root(arm):
    q = np.array([0.3, -0.2, 0.5, 0.1, 0.4, -0.6])
    np.testing.assert_array_equal(space_transform(arm, q, FRAME_ROBOT), np.eye(4))
    np.testing.assert_allclose(transform(arm, q, "arm", FRAME_ROBOT), chain_fk(arm, "arm", q))


# -- batched FK ------------------------------------------------------------------------------

@pytest.mark.parametrize("which", ["nao", "arm"])
def test_batch_equals_single(which, nao, arm):
    model = nao if which == "nao" else arm
    rng = np.random.default_rng(11)
    for c in model.chains.values():
        Q = rng.uniform(c.lower, c.upper, size=(257, c.dof))
        B = chain_fk_batch(model, c, Q)
        assert B.shape == (257, 4, 4)
        S = np.array([chain_fk(model, c, q) for q in Q])
        np.testing.assert_allclose(B, S, atol=1e-15, rtol=0)
        assert chain_fk_batch(model, c.name, Q[:0]).shape == (0, 4, 4)
    with pytest.raises(ValueError, match=r"expected an \(N, 5\) array, got shape \(3, 4\)"):
        chain_fk_batch(nao, "LArm", np.zeros((3, 4)))
    with pytest.raises(ValueError, match="expected 5 joint angles"):
        chain_fk(nao, "LArm", [0.0] * 4)


@pytest.mark.parametrize("name", ["nao_h25_v5", "nao_v32", "doosan_m1013"])
def test_batch_equals_single_every_shipped_chain(name):
    """chain_fk_batch row by row against chain_fk on every chain of every shipped model:
    N = 0, 1, a size that is not a multiple of the block size (BATCH_ROWS), two full blocks,
    non-contiguous Q (every other row, Fortran order, columns of a wider array) and angles
    beyond the limits and at +-pi, 0 and 3 pi (where tan(q / 2) is huge or zero)."""
    model = load_model(name)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    for c in model.chains.values():
        n = c.dof
        wide = np.zeros((2 * BATCH_ROWS + 2, n + 3))
        wide[:, :n + 1] = rng.uniform(-1.0, 1.0, size=(len(wide), n + 1))
        wide[:, :n] += rng.uniform(c.lower, c.upper, size=(len(wide), n))
        wide[:, n + 1:] = rng.uniform(c.lower[0] - 1.0, c.upper[0] + 1.0, size=(len(wide), 2))
        special = np.array([[PI] * n, [-PI] * n, [0.0] * n, [3 * PI] * n, [PI / 2] * n])
        cases = [wide[:0, :n], wide[:1, :n], wide[:BATCH_ROWS + 7, :n],
                 wide[:2 * BATCH_ROWS, :n].copy(), wide[::2, 1:n + 1],
                 np.asfortranarray(wide[:37, :n]), special]
        for Q in cases:
            B = chain_fk_batch(model, c, Q)
            assert B.shape == (len(Q), 4, 4)
            S = np.array([chain_fk(model, c, q) for q in Q]).reshape(len(Q), 4, 4)
            np.testing.assert_allclose(B, S, atol=1e-14, rtol=0,
                                       err_msg=f"{name} {c.name}, Q {Q.shape} {Q.strides}")
            np.testing.assert_array_equal(B[:, 3], np.tile([0.0, 0.0, 0.0, 1.0], (len(Q), 1)))
        # a list of lists and integer angles are taken as floats
        Q = [[0] * n, [1] * n]
        np.testing.assert_allclose(chain_fk_batch(model, c, Q),
                                   [chain_fk(model, c, [0.0] * n), chain_fk(model, c, [1.0] * n)],
                                   atol=1e-14, rtol=0)


HAVE_NUMBA = importlib.util.find_spec("numba") is not None
ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed (pip install numba)")
@pytest.mark.parametrize("name", ["nao_h25_v5", "nao_v32", "doosan_m1013"])
def test_batch_numba_and_numpy_paths_agree(name):
    """The numba kernel and the numpy block code (the fallback) on every shipped chain: the
    same poses to rounding, each within 1e-14 of chain_fk (one size over a block boundary,
    angles up to 3 pi), and the numba path is the one chain_fk_batch takes."""
    model = load_model(name)
    rng = np.random.default_rng(zlib.crc32(name.encode()) + 1)
    for c in model.chains.values():
        Q = rng.uniform(c.lower - 1.0, c.upper + 1.0, size=(BATCH_ROWS + 3, c.dof))
        Q[:3] = [[PI] * c.dof, [3 * PI] * c.dof, [-PI / 2] * c.dof]
        fj = compile_batch(c.X, c.axes, c.tip, jit=True)
        fn = compile_batch(c.X, c.axes, c.tip, jit=False)
        assert hasattr(fj, "kernel") and not hasattr(fn, "kernel")
        J = fj(Q, np.empty((len(Q), 4, 4)))
        N = fn(Q, np.empty((len(Q), 4, 4)))
        np.testing.assert_allclose(J, N, atol=1e-14, rtol=0, err_msg=f"{name} {c.name}")
        S = np.array([chain_fk(model, c, q) for q in Q[:200]])
        np.testing.assert_allclose(J[:200], S, atol=1e-14, rtol=0, err_msg=f"{name} {c.name}")
        # an output that is not C-contiguous is filled all the same
        out = np.zeros((len(Q), 4, 4), order="F")
        assert fj(Q, out) is out
        np.testing.assert_array_equal(out, J)
        assert hasattr(codegen.compile_chain(c.X, c.axes, c.tip, "batch"), "kernel")


def test_batch_without_numba_falls_back_to_numpy(monkeypatch):
    """With numba not importable, compile_batch gives the numpy block code (the same poses)
    and says why in codegen.jit_error; jit=True then raises ImportError."""
    monkeypatch.setitem(sys.modules, "numba", None)       # import numba: ImportError
    monkeypatch.setattr(codegen, "_JIT_KERNELS", {})
    monkeypatch.setattr(codegen, "jit_error", None)
    model = load_model("nao_h25_v5")
    c = model.chain("LArm")
    f = compile_batch(c.X, c.axes, c.tip)
    assert not hasattr(f, "kernel") and "numba" in codegen.jit_error
    Q = np.random.default_rng(5).uniform(c.lower, c.upper, size=(50, c.dof))
    np.testing.assert_allclose(f(Q, np.empty((50, 4, 4))),
                               [chain_fk(model, c, q) for q in Q], atol=1e-14, rtol=0)
    with pytest.raises(ImportError):
        compile_batch(c.X, c.axes, c.tip, jit=True)
    with pytest.raises(ValueError, match="rows: expected >= 1, got 0"):
        compile_batch(c.X, c.axes, c.tip, rows=0)


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed (pip install numba)")
def test_batch_numba_without_a_writable_cache_dir(monkeypatch, tmp_path, capfd):
    """A cache directory that cannot be made (here a file stands in its way: root may write
    anywhere): the kernel is compiled in memory, the results the same, nothing printed."""
    blocker = tmp_path / "cache"
    blocker.write_text("a file, not a directory")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    monkeypatch.setattr(codegen, "_JIT_KERNELS", {})
    monkeypatch.setattr(codegen, "jit_cache_error", None)
    model = load_model("nao_h25_v5")
    c = model.chain("Head")
    f = compile_batch(c.X, c.axes, c.tip, jit=True)
    assert str(blocker) in codegen.jit_cache_error
    Q = np.random.default_rng(6).uniform(c.lower, c.upper, size=(20, c.dof))
    np.testing.assert_allclose(f(Q, np.empty((20, 4, 4))),
                               [chain_fk(model, c, q) for q in Q], atol=1e-14, rtol=0)
    assert blocker.read_text() == "a file, not a directory"
    assert capfd.readouterr() == ("", "")


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed (pip install numba)")
def test_numba_is_imported_by_the_first_batch_only_and_prints_nothing(tmp_path):
    """Importing the kinematics package (and rtcf) does not import numba; the first
    chain_fk_batch does, compiles into an empty cache directory (its kernel file and numba's
    cache there), and nothing is printed. In a process with a frozen heap, numba's objects
    are frozen too."""
    code = ("import gc, sys, numpy as np\n"
            "import rtcf\n"
            "from rtcf_components.kinematics import load_model, chain_fk_batch\n"
            "m = load_model('nao_h25_v5')\n"
            "assert 'numba' not in sys.modules\n"
            "gc.freeze()\n"
            "chain_fk_batch(m, 'Head', np.zeros((4, 2)))\n"
            "assert 'numba' in sys.modules\n"
            # numba's objects frozen with the heap (as rtcf.realtime leaves it)
            "assert len(gc.get_objects()) < 1000, len(gc.get_objects())\n")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    env.pop("NUMBA_CACHE_DIR", None)
    for _ in range(2):                     # compiled, then loaded from the cache
        done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=300)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    kernels = list((tmp_path / "rtcf" / "fk").glob("fk_*.py"))
    assert len(kernels) == 1
    assert list((tmp_path / "rtcf" / "fk" / "__pycache__").glob("fk_*.nbi"))


def test_m1013_zero_pose(arm):
    """The M1013 flange at zero, from the joint origins of doosan-robot2's m1013.urdf: the arm
    stands straight up, z = 0.1525 + 0.62 + 0.559 + 0.121 (to the file's 1.571 rad rounding
    of pi/2, i.e. within a millimetre)."""
    T = chain_fk(arm, "arm", np.zeros(6))
    assert T[2, 3] == pytest.approx(0.1525 + 0.62 + 0.559 + 0.121, abs=1e-3)
    assert np.hypot(T[0, 3], T[1, 3]) < 0.04


# -- position6d ------------------------------------------------------------------------------

def test_position6d_round_trip_and_formulas():
    rng = np.random.default_rng(2)
    for _ in range(200):
        p = np.concatenate([rng.uniform(-1, 1, 3), rng.uniform(-PI, PI, 1),
                            rng.uniform(-PI / 2 + 1e-3, PI / 2 - 1e-3, 1),
                            rng.uniform(-PI, PI, 1)])
        T = transform_from_6d(p)
        # R = Rz(wz) Ry(wy) Rx(wx)
        R = (rot((0, 0, 1), p[5]) @ rot((0, 1, 0), p[4]) @ rot((1, 0, 0), p[3]))[:3, :3]
        np.testing.assert_allclose(T[:3, :3], R, atol=1e-14)
        q = position6d(T)
        np.testing.assert_allclose(q, p, atol=1e-9)
        # the Z-Y-X angles of a position6d (wz, wy, wx from the matrix), written out
        r = T[:3, :3]
        wz = math.atan2(r[1, 0], r[0, 0])
        wy = math.atan2(-r[2, 0], math.cos(wz) * r[0, 0] + math.sin(wz) * r[1, 0])
        wx = math.atan2(math.sin(wz) * r[0, 2] - math.cos(wz) * r[1, 2],
                        math.cos(wz) * r[1, 1] - math.sin(wz) * r[0, 1])
        np.testing.assert_allclose(q[3:], [wx, wy, wz], atol=1e-15)
    # gimbal lock: the angles are not unique, the matrix is
    T = transform_from_6d([0, 0, 0, 0.4, PI / 2, -0.3])
    np.testing.assert_allclose(transform_from_6d(position6d(T)), T, atol=1e-12)


# -- Jacobians -------------------------------------------------------------------------------

def _fd_jacobian(model, c, q, h=1e-6, tip=None):
    J = np.zeros((6, c.dof))
    for k in range(c.dof):
        dq = np.zeros(c.dof)
        dq[k] = h
        Tp, Tm = chain_fk(model, c, q + dq, tip), chain_fk(model, c, q - dq, tip)
        J[:3, k] = (Tp[:3, 3] - Tm[:3, 3]) / (2 * h)
        J[3:, k] = rotation_log(Tp[:3, :3] @ Tm[:3, :3].T) / (2 * h)
    return J


@pytest.mark.parametrize("which", ["nao", "arm", "v32"])
def test_jacobian_against_finite_differences(which, nao, arm):
    model = {"nao": nao, "arm": arm, "v32": load_model("nao_v32")}[which]
    rng = np.random.default_rng(17)
    tip = np.eye(4)
    tip[:3, 3] = 0.01, -0.02, 0.05
    for c in model.chains.values():
        for _ in range(10):
            q = rng.uniform(c.lower, c.upper)
            J = chain_jacobian(model, c, q)
            assert J.shape == (6, c.dof)
            np.testing.assert_allclose(J, _fd_jacobian(model, c, q), atol=1e-8, rtol=0,
                                       err_msg=c.name)
            Jt = chain_jacobian(model, c, q, tip=tip)
            np.testing.assert_allclose(Jt, _fd_jacobian(model, c, q, tip=tip), atol=1e-8,
                                       rtol=0)
            T, J2 = chain_fk_jacobian(model, c, q)
            np.testing.assert_allclose(T, chain_fk(model, c, q), atol=1e-15)
            np.testing.assert_array_equal(J2, J)
