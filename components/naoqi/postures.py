"""NAOqi's predefined postures of NAO (ALRobotPosture), as data.

Pure: imports neither rtcf nor omniORB. Joint angles [rad] in ALMotion's body order (the
DCM's 26 joints, model/nao_h25_v5.yaml); the hands are the open fraction 0..1.

The values are SoftBank Robotics' own (their qibullet simulator replays NAOqi's posture
library: softbankrobotics-research/qibullet, qibullet/robot_posture.py @
209ef327f737e00934c7c4193015479a74e5ad89, NaoPosture), rounded to 1e-6 rad. Of NAOqi's
eight postures the four standing ones are offered (Stand, StandInit, StandZero, Crouch):
they are reached from each other by moving the joints with the feet on the floor. Sit,
SitRelax, LyingBelly and LyingBack need a motion through the floor (sitting down, lying
down, getting up) that this system does not plan; asking for them is refused, naming the
postures there are.
"""

from __future__ import annotations

import math

import numpy as np

JOINTS = ("HeadYaw", "HeadPitch", "LShoulderPitch", "LShoulderRoll", "LElbowYaw",
          "LElbowRoll", "LWristYaw", "LHand", "LHipYawPitch", "LHipRoll", "LHipPitch",
          "LKneePitch", "LAnklePitch", "LAnkleRoll", "RHipYawPitch", "RHipRoll", "RHipPitch",
          "RKneePitch", "RAnklePitch", "RAnkleRoll", "RShoulderPitch", "RShoulderRoll",
          "RElbowYaw", "RElbowRoll", "RWristYaw", "RHand")

POSTURES: dict[str, tuple[float, ...]] = {
    "Stand": (0.0, -0.17, 1.442584, 0.224457, -1.202277, -0.417272, 0.1, 0.3,
              -0.17001, 0.119108, 0.127419, -0.092328, 0.087419, -0.110793,
              -0.17001, -0.119102, 0.127419, -0.092328, 0.087419, 0.110789,
              1.442585, -0.224457, 1.202277, 0.417271, 0.1, 0.3),
    "StandInit": (0.0, 0.0, 1.4, 0.3, -1.39, -1.01, 0.0, 0.25,
                  0.0, 0.0, -0.45, 0.7, -0.35, 0.0,
                  0.0, 0.0, -0.45, 0.7, -0.35, 0.0,
                  1.4, -0.3, 1.39, 1.01, 0.0, 0.25),
    "StandZero": (0.0, 0.0, 0.0, 0.008727, 0.0, -0.034907, 0.0, 0.0,
                  0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                  0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                  0.0, -0.008727, 0.0, 0.034907, 0.0, 0.0),
    "Crouch": (0.0, 0.1, 1.396859, 0.15961, -0.791683, -1.073686, 0.15, 0.0,
               -0.25, -0.08, -0.7, 2.11, -1.18, 0.077,
               -0.25, 0.08, -0.7, 2.11, -1.18, -0.077,
               1.396859, -0.15961, 0.791683, 1.073686, -0.15, 0.0),
}
FAMILIES = {"Stand": "Standing", "StandInit": "Standing", "StandZero": "Standing",
            "Crouch": "Crouching"}
NOT_OFFERED = ("Sit", "SitRelax", "LyingBelly", "LyingBack")
WALK_POSTURE = "StandInit"          # where moveInit brings the robot before walking
UNKNOWN = "Unknown"
RECOGNISE_TOL = 0.15                # [rad] largest joint difference for getPosture


class PostureError(ValueError):
    """An unknown or unavailable posture, or a bad speed."""


def posture(name) -> np.ndarray:
    """A posture's joint angles (a new array). PostureError for a name NAOqi has but this
    system does not offer, or an unknown one (names are case-sensitive, as NAOqi's)."""
    if not isinstance(name, str):
        raise PostureError(f"posture name: expected a string, got {name!r}")
    if name in POSTURES:
        return np.array(POSTURES[name])
    if name in NOT_OFFERED:
        raise PostureError(f"posture {name!r}: not offered here (it needs a motion through "
                           f"the floor); available: {', '.join(POSTURES)}")
    raise PostureError(f"unknown posture {name!r}; available: {', '.join(POSTURES)}")


def check_speed(speed) -> float:
    """NAOqi's maxSpeedFraction: in (0, 1]."""
    try:
        v = float(speed)
    except (TypeError, ValueError):
        raise PostureError(f"speed: expected a number in (0, 1], got {speed!r}") from None
    if not (math.isfinite(v) and 0.0 < v <= 1.0):
        raise PostureError(f"speed: expected a fraction of the maximum speed in (0, 1], got "
                           f"{speed!r}")
    return v


def duration(q_from: np.ndarray, q_to: np.ndarray, max_velocity: np.ndarray,
             speed: float, minimum: float = 0.5) -> float:
    """[s] to move every joint from q_from to q_to with the slowest one at ``speed`` times
    its maximum velocity (a minimum-jerk move peaks at 1.875 times its mean speed)."""
    t = float(np.max(np.abs(q_to - q_from) * 1.875 / (max_velocity * speed)))
    return max(minimum, t)


def recognise(q: np.ndarray, tol: float = RECOGNISE_TOL) -> str:
    """The posture ``q`` is in (every joint but the hands within ``tol``), else Unknown."""
    best, err = UNKNOWN, math.inf
    body = np.array([j not in ("LHand", "RHand") for j in JOINTS])
    for name, v in POSTURES.items():
        e = float(np.max(np.abs(np.asarray(q)[body] - np.array(v)[body])))
        if e < err:
            best, err = name, e
    return best if err <= tol else UNKNOWN
