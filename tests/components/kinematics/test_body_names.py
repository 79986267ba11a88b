"""Body names ALMotion accepts beyond chains and kinematic joints: the
hands (LHand, RHand: the actuator ending each arm chain; they used to be refused as joints
without a frame) and the model's sensors."""

import numpy as np
import pytest

from rtcf_components.kinematics import load_model
from rtcf_components.kinematics.algorithms import body_transform, chain_frames
from rtcf_components.kinematics.model import trans


@pytest.fixture(scope="module")
def nao():
    return load_model("nao_h25_v5")


@pytest.mark.parametrize("hand,chain,y", [("LHand", "LArm", 1), ("RHand", "RArm", -1)])
def test_hand_is_at_the_arm_effector_as_in_the_urdf(nao, hand, chain, y):
    rng = np.random.default_rng(3)
    c = nao.chain(chain)
    for _ in range(20):
        q = np.zeros(len(nao.joint_names))
        q[c.index] = rng.uniform(c.lower, c.upper)
        T = body_transform(nao, q, hand)
        assert np.allclose(T, body_transform(nao, q, chain), atol=1e-12)
        # naoV50.urdf: joint LHand / RHand at xyz 0.05775 0 -0.01231 from the wrist frame
        wrist = chain_frames(nao, c, q[c.index])[c.joints.index(f"{hand[0]}WristYaw")]
        assert np.allclose(T, wrist @ trans(0.05775, 0, -0.01231), atol=1e-6)


def test_sensor_names_are_frames(nao):
    assert list(nao.frames) == ["CameraTop", "CameraBottom"]
