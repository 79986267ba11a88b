"""Independent cross-checks of the kinematics core.

1. Every chain of the three bundled models rebuilt in Pinocchio from our Chain data (X, axes,
   tip): effector, joint frames and Jacobians agree to 1e-9 on random configurations. This
   checks the generated formulas (codegen) against a maintained rigid-body library.
2. The public NAO V5 URDF (tests/data/naoV50.urdf), loaded by our URDF loader and by
   Pinocchio's own URDF parser, against our mDH model (model/nao_h25_v5.yaml): every frame the
   two share (effectors, cameras, every kinematic joint) is the same, except by exactly the
   constant differences between it and Aldebaran's link table: FootHeight 45.11 (URDF) vs 45.19 mm, and the
   URDF's RHand offset z = -0.01213 m vs HandOffsetZ 12.31 mm (a digit transposition in the
   right arm only). This checks the mDH tables, the mDH -> joint-axis conversion and the
   constants against Aldebaran's own joint-axis model.

Skipped without Pinocchio (PyPI ``pin``: the ``test`` extra in setup.cfg).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")
sys.path.insert(0, str(Path(__file__).resolve().parent))  # pin_chain, in any import mode

from rtcf_components.kinematics import (body_transform, chain_fk, chain_frames, chain_jacobian,  # noqa: E402
                        load_model)
from rtcf_components.kinematics.model import trans  # noqa: E402
from rtcf_components.kinematics.urdf import model_from_urdf  # noqa: E402
from pin_chain import pin_chain_model  # noqa: E402

NAO_URDF = Path(__file__).resolve().parents[2] / "data" / "naoV50.urdf"
N_CONFIGS = 100


@pytest.fixture(scope="module")
def nao():
    return load_model("nao_h25_v5")


# -- 1. our chains in Pinocchio ------------------------------------------------------------------

@pytest.mark.parametrize("name", ["nao_h25_v5", "nao_v32", "doosan_m1013"])
def test_chains_agree_with_pinocchio(name):
    model = load_model(name)
    rng = np.random.default_rng(23)
    for c in model.chains.values():
        pm, fid = pin_chain_model(c)
        data = pm.createData()
        assert pm.nq == c.dof
        worst = 0.0
        for _ in range(N_CONFIGS):
            q = rng.uniform(c.lower, c.upper)
            pin.forwardKinematics(pm, data, q)
            M = pin.updateFramePlacement(pm, data, fid)
            T = chain_fk(model, c, q)
            np.testing.assert_allclose(T[:3, 3], M.translation, atol=1e-9, rtol=0)
            np.testing.assert_allclose(T[:3, :3], M.rotation, atol=1e-9, rtol=0)
            worst = max(worst, float(np.abs(T[:3, 3] - M.translation).max()))
            F = chain_frames(model, c, q)
            for k in range(c.dof):
                np.testing.assert_allclose(F[k], data.oMi[k + 1].homogeneous, atol=1e-9,
                                           rtol=0, err_msg=f"{c.name} joint {c.joints[k]}")
            Jp = pin.computeFrameJacobian(pm, data, q, fid, pin.LOCAL_WORLD_ALIGNED)
            np.testing.assert_allclose(chain_jacobian(model, c, q), Jp, atol=1e-9, rtol=0)
        print(f"\n{model.name} {c.name}: max |p_ours - p_pinocchio| = {worst:.2e} m "
              f"over {N_CONFIGS} configurations")


def test_pinocchio_chain_with_a_tool_tip():
    model = load_model("doosan_m1013")
    c = model.chain("arm")
    tool = trans(0.02, -0.01, 0.2)
    pm, fid = pin_chain_model(c, tip=tool)
    data = pm.createData()
    q = np.array([0.4, -1.1, 0.7, 2.0, -0.3, 1.2])
    pin.forwardKinematics(pm, data, q)
    np.testing.assert_allclose(chain_fk(model, c, q, tip=tool),
                               pin.updateFramePlacement(pm, data, fid).homogeneous, atol=1e-12)


# -- 2. the NAO URDF -----------------------------------------------------------------------------

# our name -> URDF link; and what our frame is in the URDF frame (the constant differences)
SHARED = {
    "Head": ("Head", np.eye(4)),
    "LArm": ("l_gripper", np.eye(4)),
    "RArm": ("r_gripper", trans(0, 0, -(0.01231 - 0.01213))),     # 0.18 mm
    "LLeg": ("l_sole", trans(0, 0, -(0.04519 - 0.04511))),        # 0.08 mm
    "RLeg": ("r_sole", trans(0, 0, -(0.04519 - 0.04511))),
    "CameraTop": ("CameraTop_frame", np.eye(4)),
    "CameraBottom": ("CameraBottom_frame", np.eye(4)),
}
HANDS = ("LHand", "RHand")      # URDF: a joint turning the gripper frame; ours: no frame


def random_postures(nao, n):
    """Whole-body configurations within our limits; the hands closed (0): the URDF's gripper
    frame turns with LHand / RHand, ALMotion's arm effector does not."""
    rng = np.random.default_rng(29)
    Q = rng.uniform(nao.lower, nao.upper, size=(n, len(nao.joint_names)))
    for h in HANDS:
        Q[:, nao.joint_index(h)] = 0.0
    Q[0] = 0.0
    return Q


def check_shared(nao, ours_fn, urdf_fn, n=N_CONFIGS):
    """ours_fn(q, name) / urdf_fn(q, link): 4x4 in the torso frame."""
    seen: dict[str, float] = {}
    joints = [j for j in nao.joint_names if j not in HANDS]
    for q in random_postures(nao, n):
        for name, (link, expected) in SHARED.items():
            D = np.linalg.inv(urdf_fn(q, link)) @ ours_fn(q, name)
            # exactly the constant difference: same orientation, a fixed offset in the frame
            np.testing.assert_allclose(D, expected, atol=1e-12, rtol=0, err_msg=name)
            seen[name] = max(seen.get(name, 0.0),
                             float(np.linalg.norm(ours_fn(q, name)[:3, 3]
                                                  - urdf_fn(q, link)[:3, 3])))
        for j in joints:                  # a joint frame: the URDF link it moves
            np.testing.assert_allclose(ours_fn(q, j), urdf_fn(q, "joint:" + j), atol=1e-12,
                                       rtol=0, err_msg=j)
    return seen


@pytest.mark.slow
def test_urdf_through_our_loader_matches_mdh(nao):
    u = model_from_urdf(NAO_URDF, {name: ("torso", link) for name, (link, _) in SHARED.items()})
    # the URDF joint frames come from the joint-axis chains of the same loader
    def urdf_fn(q, link):
        qu = np.array([q[nao.joint_index(j)] for j in u.joint_names])
        if link.startswith("joint:"):
            return body_transform(u, qu, link[6:])
        name = next(k for k, (lk, _) in SHARED.items() if lk == link)
        return body_transform(u, qu, name)

    seen = check_shared(nao, lambda q, name: body_transform(nao, q, name), urdf_fn)
    # the effectors that differ do so by the whole constant difference, whatever the posture
    assert seen["RArm"] == pytest.approx(0.18e-3, abs=1e-12)
    assert seen["LLeg"] == pytest.approx(0.08e-3, abs=1e-12)
    assert seen["RLeg"] == pytest.approx(0.08e-3, abs=1e-12)
    assert seen["LArm"] < 1e-12 and seen["Head"] < 1e-12 and seen["CameraTop"] < 1e-12


@pytest.mark.slow
def test_urdf_through_pinocchio_matches_mdh(nao):
    pm = pin.buildModelFromUrdf(str(NAO_URDF))
    data = pm.createData()
    idx_q = {pm.names[j]: pm.joints[j].idx_q for j in range(1, pm.njoints)}
    cache: dict[bytes, None] = {}

    def update(q):
        key = q.tobytes()
        if key not in cache:
            cache.clear()
            qp = pin.neutral(pm)
            for j, name in enumerate(nao.joint_names):
                qp[idx_q[name]] = q[j]
            pin.forwardKinematics(pm, data, qp)
            pin.updateFramePlacements(pm, data)
            cache[key] = None

    def urdf_fn(q, link):
        update(q)
        if link.startswith("joint:"):
            return data.oMi[pm.getJointId(link[6:])].homogeneous
        # frames relative to the torso link (base_link -> torso is the identity here)
        torso = data.oMf[pm.getFrameId("torso")]
        return (torso.inverse() * data.oMf[pm.getFrameId(link)]).homogeneous

    seen = check_shared(nao, lambda q, name: body_transform(nao, q, name), urdf_fn)
    assert seen["RArm"] == pytest.approx(0.18e-3, abs=1e-12)
    assert seen["LLeg"] == pytest.approx(0.08e-3, abs=1e-12)


def test_urdf_limits_match_the_spec_table(nao):
    """The URDF's limits are Aldebaran's joint-limit table rounded differently (< 0.2 mrad),
    except that the ROS URDF gives RKneePitch the left knee's range."""
    u = model_from_urdf(NAO_URDF, {n: ("torso", lk) for n, (lk, _) in SHARED.items()
                                   if not n.startswith("Camera")})
    off = {}
    for j in nao.joint_names:
        if j in HANDS:
            continue
        a, b = nao.joint_index(j), u.joint_index(j)
        d = max(abs(nao.lower[a] - u.lower[b]), abs(nao.upper[a] - u.upper[b]))
        if d > 2e-4:
            off[j] = d
        assert nao.max_velocity[a] == u.max_velocity[b] and nao.max_torque[a] == u.max_torque[b]
    assert list(off) == ["RKneePitch"]
    k = u.joint_index("RKneePitch")
    lk = nao.joint_index("LKneePitch")
    assert abs(u.lower[k] - nao.lower[lk]) < 2e-4 and abs(u.upper[k] - nao.upper[lk]) < 2e-4
