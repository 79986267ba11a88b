"""One of our chains (kinematics.model.Chain) as a Pinocchio model: the independent peer of
the cross-check test (test_crosscheck.py) and of bench/bench_kinematics.py.

Pinocchio (PyPI ``pin``) is an optional test/bench dependency; import this module only after
``pytest.importorskip("pinocchio")`` or an equivalent check.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

_UNIT = {0: pin.JointModelRX, 1: pin.JointModelRY, 2: pin.JointModelRZ}


def joint_model(axis: np.ndarray):
    """RX / RY / RZ for a +x / +y / +z axis (Pinocchio's cheapest joints), otherwise a
    revolute joint about an unaligned unit axis."""
    for i, cls in _UNIT.items():
        if abs(axis[i] - 1.0) < 1e-15 and np.all(np.abs(np.delete(axis, i)) < 1e-15):
            return cls()
    return pin.JointModelRevoluteUnaligned(np.asarray(axis, dtype=float))


def se3(T: np.ndarray) -> pin.SE3:
    return pin.SE3(np.array(T[:3, :3]), np.array(T[:3, 3]))


def pin_chain_model(chain, tip: np.ndarray | None = None) -> tuple[pin.Model, int]:
    """(model, frame id of the effector): joint k placed at X_k in joint k-1's frame, turning
    about axes[k]; an operational frame at ``tip`` (default chain.tip) on the last joint.
    Pinocchio's q is the chain's q (one coordinate per revolute joint)."""
    model = pin.Model()
    model.name = chain.name
    parent = 0
    for name, X, axis in zip(chain.joints, chain.X, chain.axes):
        parent = model.addJoint(parent, joint_model(axis), se3(X), name)
    t = chain.tip if tip is None else tip
    fid = model.addFrame(pin.Frame("effector", parent, se3(t), pin.FrameType.OP_FRAME))
    model.lowerPositionLimit = np.array(chain.lower, dtype=float)
    model.upperPositionLimit = np.array(chain.upper, dtype=float)
    return model, fid
