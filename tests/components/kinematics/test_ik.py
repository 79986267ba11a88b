"""Inverse kinematics of the kinematics core (solve_ik): round trips FK(IK(FK(q))) on random
reachable poses within the limits, with the success rate printed; limits always respected;
unreachable targets refused with a reason; bad arguments raising ValueError."""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest

from rtcf_components.kinematics import chain_fk, load_model, solve_ik, transform_from_6d
from rtcf_components.kinematics.algorithms import rotation_log

N_TARGETS = 200
POS_TOL, ROT_TOL = 1e-4, 1e-3        # solve_ik's defaults [m], [rad]


@pytest.fixture(scope="module")
def models():
    return {"nao": load_model("nao_h25_v5"), "m1013": load_model("doosan_m1013")}


def targets(model, chain, n=N_TARGETS):
    """A fixed, seeded set of reachable targets: FK of configurations drawn uniformly within
    the joint limits (the random generator is seeded from the chain's name only)."""
    c = model.chain(chain)
    rng = np.random.default_rng(zlib.crc32(f"ik-{model.name}-{chain}".encode()))
    Q = rng.uniform(c.lower, c.upper, size=(n, c.dof))
    return c, Q, [chain_fk(model, c, q) for q in Q]


def errors(T, target):
    return (float(np.linalg.norm(T[:3, 3] - target[:3, 3])),
            float(np.linalg.norm(rotation_log(target[:3, :3] @ T[:3, :3].T))))


CASES = [("nao", "LArm", 63), ("nao", "LArm", 7), ("nao", "RArm", 63), ("nao", "RArm", 7),
         ("nao", "LLeg", 63), ("nao", "RLeg", 63), ("m1013", "arm", 63)]
IDS = ["LArm-63", "LArm-7", "RArm-63", "RArm-7", "LLeg-63", "RLeg-63", "m1013-63"]


@pytest.mark.slow
@pytest.mark.parametrize("which,chain,mask", CASES, ids=IDS)
def test_round_trip(models, which, chain, mask):
    model = models[which]
    c, Q, Ts = targets(model, chain)
    ok = 0
    failures = []
    for q_true, target in zip(Q, Ts):
        r = solve_ik(model, c, target, mask=mask)
        # the limits hold whatever the outcome
        assert r.q.shape == (c.dof,)
        assert np.all(r.q >= c.lower) and np.all(r.q <= c.upper), (q_true, r.q)
        ep, er = errors(chain_fk(model, c, r.q), target)
        # the reported residuals are the true ones (orientation only counts in mask 63)
        assert r.position_error == pytest.approx(ep, abs=1e-12)
        if mask == 63:
            assert r.orientation_error == pytest.approx(er, abs=1e-12)
        if r.success:
            ok += 1
            assert r.reason == ""
            assert ep <= POS_TOL
            if mask == 63:
                assert er <= ROT_TOL
        else:
            # never a silently wrong answer: a failure is outside the tolerances, with a reason
            assert ep > POS_TOL or (mask == 63 and er > ROT_TOL)
            assert r.reason.startswith("no solution within the joint limits"), r.reason
            failures.append((q_true, r.reason))
    rate = ok / len(Ts)
    print(f"\nIK {model.name} {chain} mask {mask}: {ok}/{len(Ts)} = {100 * rate:.1f} % "
          f"reachable targets solved")
    for q_true, reason in failures:
        print(f"  failed: q_true {np.round(q_true, 3).tolist()}: {reason}")
    assert rate >= 0.99


def test_seeded_start_converges_at_once(models):
    """Started from the configuration that produced the target, IK returns it unchanged."""
    model = models["nao"]
    c, Q, Ts = targets(model, "LArm", 5)
    for q, T in zip(Q, Ts):
        r = solve_ik(model, c, T, q_seed=q)
        assert r.success and r.iterations == 0
        np.testing.assert_array_equal(r.q, q)


def test_deterministic(models):
    model = models["m1013"]
    c, Q, Ts = targets(model, "arm", 3)
    for T in Ts:
        a, b = solve_ik(model, c, T), solve_ik(model, c, T)
        np.testing.assert_array_equal(a.q, b.q)
        assert a.iterations == b.iterations


def test_position_only_ignores_orientation(models):
    """Mask 7: any orientation of the target is accepted, the position is met."""
    model = models["nao"]
    c, Q, Ts = targets(model, "RArm", 10)
    for T in Ts:
        turned = T.copy()
        turned[:3, :3] = transform_from_6d([0, 0, 0, 1.0, -0.5, 2.0])[:3, :3]
        r = solve_ik(model, c, turned, mask=7)
        assert r.success, r.reason
        assert np.linalg.norm(chain_fk(model, c, r.q)[:3, 3] - T[:3, 3]) <= POS_TOL
        assert r.orientation_error == 0.0


def test_custom_tip(models):
    """A tool offset on the M1013 flange: IK puts the tool point on the target."""
    model = models["m1013"]
    tool = transform_from_6d([0, 0, 0.15, 0, 0, 0])
    c = model.chain("arm")
    q = np.array([0.3, -0.4, 1.2, 0.2, 0.9, -0.5])
    target = chain_fk(model, c, q, tip=tool)
    r = solve_ik(model, c, target, tip=tool)
    assert r.success, r.reason
    ep, er = errors(chain_fk(model, c, r.q, tip=tool), target)
    assert ep <= POS_TOL and er <= ROT_TOL


# -- refusals ------------------------------------------------------------------------------

def test_unreachable_position(models):
    model = models["nao"]
    c = model.chain("LArm")
    target = transform_from_6d([0.6, 0.5, 0.1, 0, 0, 0])
    r = solve_ik(model, c, target)
    assert not r.success
    assert r.reason.startswith("unreachable: the target is ")
    assert "from LShoulderPitch, the LArm chain reaches at most " in r.reason
    assert r.iterations == 0 and r.position_error > 0.3
    assert np.all(r.q >= c.lower) and np.all(r.q <= c.upper)
    m = models["m1013"]
    r = solve_ik(m, "arm", transform_from_6d([2.0, 0, 0.5, 0, 0, 0]), mask=7)
    assert not r.success and r.reason.startswith("unreachable")


def test_unreachable_orientation(models):
    """The head (yaw, pitch) cannot roll: a full-pose target with a roll fails with the
    orientation error in the reason, and the best attempt still meets the position."""
    model = models["nao"]
    target = transform_from_6d([0, 0, 0.1265, 0.5, 0.1, 0.2])
    r = solve_ik(model, "Head", target, mask=63, restarts=2)
    assert not r.success
    assert "orientation error" in r.reason and "position error" not in r.reason
    assert r.orientation_error > ROT_TOL and r.position_error <= POS_TOL
    assert "after 3 starts" in r.reason


def test_blocked_by_limits(models):
    """Within reach but only with LElbowRoll > 0 (outside its range): refused."""
    model = models["nao"]
    c = model.chain("LArm")
    q = np.array([0.2, 0.3, -0.5, 0.8, 0.1])       # LElbowRoll limit is -1.5446 .. -0.0349
    target = chain_fk(model, c, q)
    r = solve_ik(model, c, target, restarts=3)
    if r.success:     # another configuration within the limits may reach it: then it is right
        ep, er = errors(chain_fk(model, c, r.q), target)
        assert ep <= POS_TOL and er <= ROT_TOL
    else:
        assert r.reason.startswith("no solution within the joint limits")
    assert np.all(r.q >= c.lower) and np.all(r.q <= c.upper)


BAD_ARGS = [
    (dict(mask=0), "axis mask: expected an integer 1..63"),
    (dict(mask=64), "axis mask: expected an integer 1..63"),
    (dict(mask=True), "axis mask: expected an integer 1..63"),
    (dict(mask=7.0), "axis mask: expected an integer 1..63"),
    (dict(target=np.full((4, 4), np.nan)), r"target: expected a finite 4x4 transform"),
    (dict(target=np.eye(3)), r"target: expected a finite 4x4 transform, got shape \(3, 3\)"),
    (dict(q_seed=[0.0] * 4), r"LArm: q_seed: expected 5 finite angles"),
    (dict(q_seed=[0.0, 0.0, 0.0, -0.5, math.inf]), r"LArm: q_seed: expected 5 finite angles"),
    (dict(pos_tol=0.0), "pos_tol: expected a finite number > 0, got 0.0"),
    (dict(rot_tol=math.nan), "rot_tol: expected a finite number > 0, got nan"),
    (dict(max_iter=0), "max_iter >= 1 and restarts >= 0 expected"),
    (dict(restarts=-1), "max_iter >= 1 and restarts >= 0 expected"),
]


@pytest.mark.parametrize("kwargs,message", BAD_ARGS, ids=[str(k) for k, _ in BAD_ARGS])
def test_bad_arguments(models, kwargs, message):
    model = models["nao"]
    kw = {"target": chain_fk(model, "LArm", [0.1, 0.2, 0.3, -0.4, 0.5]), **kwargs}
    target = kw.pop("target")
    with pytest.raises(ValueError, match=message):
        solve_ik(model, "LArm", target, **kw)


# -- the rotation error IK descends on ------------------------------------------------------

@pytest.mark.parametrize("angle", [0.0, 1e-9, 1e-5, 0.3, 2.0, math.pi - 1e-3, math.pi - 1e-4,
                                   math.pi - 1e-5, math.pi - 1e-9, math.pi])
def test_rotation_log(angle):
    """log(Rot(n, a)) = a n for every angle up to pi (at pi, n or -n). Before the fix the
    branch near pi mixed two scalings of the axis: 0.6-0.8 rad wrong in direction."""
    from rtcf_components.kinematics.model import rot
    rng = np.random.default_rng(31)
    for _ in range(50):
        n = rng.normal(size=3)
        n /= np.linalg.norm(n)
        v = rotation_log(rot(n, angle)[:3, :3])
        if angle == math.pi:
            v = v if v @ n >= 0 else -v
        np.testing.assert_allclose(v, angle * n, atol=1e-7 if angle > 3 else 1e-12)


def test_continuous_joints_from_a_urdf(tmp_path):
    """A URDF chain with continuous joints (limits +-inf): IK starts within one turn of them
    and solves. Before the fix the middle of +-inf was nan and the random starts raised
    OverflowError."""
    from rtcf_components.kinematics.urdf import model_from_urdf
    urdf = tmp_path / "wrist.urdf"
    urdf.write_text("""<?xml version="1.0"?>
<robot name="wrist">
  <link name="base"/><link name="a"/><link name="b"/><link name="c"/><link name="tool"/>
  <joint name="yaw" type="continuous"><parent link="base"/><child link="a"/>
    <origin xyz="0 0 0.1"/><axis xyz="0 0 1"/></joint>
  <joint name="pitch" type="revolute"><parent link="a"/><child link="b"/>
    <origin xyz="0 0 0.1"/><axis xyz="0 1 0"/>
    <limit lower="-1.5" upper="1.5" effort="1" velocity="1"/></joint>
  <joint name="elbow" type="revolute"><parent link="b"/><child link="c"/>
    <origin xyz="0 0 0.3"/><axis xyz="0 1 0"/>
    <limit lower="-2.5" upper="2.5" effort="1" velocity="1"/></joint>
  <joint name="roll" type="continuous"><parent link="c"/><child link="tool"/>
    <origin xyz="0 0 0.25"/><axis xyz="0 0 1"/></joint>
</robot>
""")
    m = model_from_urdf(urdf)
    c = m.chain("tool")
    assert np.isinf(c.lower[0]) and np.isinf(c.upper[3])
    rng = np.random.default_rng(37)
    for _ in range(20):
        q = np.array([rng.uniform(-3, 3), rng.uniform(-1.5, 1.5), rng.uniform(0.2, 2.5), 0.0])
        target = chain_fk(m, c, q)
        for mask in (7, 63):
            r = solve_ik(m, c, target, mask=mask)
            assert r.success, r.reason
            assert np.all(np.isfinite(r.q))
            ep, er = errors(chain_fk(m, c, r.q), target)
            assert ep <= POS_TOL and (mask == 7 or er <= ROT_TOL)
