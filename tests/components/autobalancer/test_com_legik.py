"""The whole-body CoM (autobalancer.com) against MuJoCo's own, and both legs' inverse
kinematics with the shared hip yaw-pitch (autobalancer.legik)."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest

from rtcf_components.autobalancer.com import ComCalculator, MassModelError, load_mass_model
from rtcf_components.autobalancer.legik import LegIK, pose_matrix
from rtcf_components.kinematics import chain_fk, load_model
from rtcf_components.simulator.core import SIM_DIR


@pytest.fixture(scope="module")
def kin():
    return load_model("nao_h25_v5")


def test_com_matches_mujoco(kin):
    mass = load_mass_model(kin)
    calc = ComCalculator(kin, mass)
    m = mujoco.MjModel.from_xml_path(str(SIM_DIR / "nao_v5.xml"))
    d = mujoco.MjData(m)
    assert mass.total == pytest.approx(float(np.sum(m.body_mass)), abs=1e-12)
    rng = np.random.default_rng(7)
    for _ in range(20):
        q = rng.uniform(kin.lower, kin.upper)
        for i, j in enumerate(kin.joint_names):
            d.qpos[m.jnt_qposadr[m.joint(j).id]] = q[i]
        d.qpos[:7] = [0, 0, 0, 1, 0, 0, 0]
        mujoco.mj_kinematics(m, d)
        mujoco.mj_comPos(m, d)
        assert np.abs(calc.com(q) - d.subtree_com[1]).max() < 1e-12


def test_mass_model_errors(kin, tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text("<mujoco><worldbody/></mujoco>")
    with pytest.raises(MassModelError, match="no body"):
        load_mass_model(kin, bad)
    with pytest.raises(MassModelError, match="cannot read"):
        load_mass_model(kin, tmp_path / "missing.xml")


def legs(kin, q):
    L, R = kin.chain("LLeg"), kin.chain("RLeg")
    return chain_fk(kin, L, q[:6]), chain_fk(kin, R, q[6:])


def test_both_legs_solved_with_one_hip_yaw_pitch(kin):
    ik = LegIK(kin)
    L, R = kin.chain("LLeg"), kin.chain("RLeg")
    rng = np.random.default_rng(3)
    lo = np.concatenate((L.lower, R.lower))
    hi = np.concatenate((L.upper, R.upper))
    mid = 0.5 * (lo + hi)
    solved = 0
    for _ in range(50):
        # reachable targets: FK of a configuration with one hip yaw-pitch, within 0.3 rad
        # of the middle of the limits (walking postures, not the far corners)
        q = np.clip(mid + rng.uniform(-0.3, 0.3, 12), lo, hi)
        q[6] = q[0]
        TL, TR = legs(kin, q)
        start = np.clip(q + rng.uniform(-0.05, 0.05, 12), lo, hi)
        ep, er = ik.solve(TL, TR, start)
        assert start[0] == start[6]
        assert np.all(start >= lo - 1e-12) and np.all(start <= hi + 1e-12)
        AL, AR = legs(kin, start)
        if max(np.abs(AL - TL).max(), np.abs(AR - TR).max()) < 1e-5:
            solved += 1
    assert solved >= 48


def test_a_turn_the_hip_cannot_make_shares_the_yaw_error(kin):
    """Both feet yawed the same way relative to the torso (only a real yaw joint per leg
    could do that): positions and roll / pitch are met, the yaw gives."""
    ik = LegIK(kin)
    si = np.array([0.0, 0.0, -0.43, 0.69, -0.34, 0.0] * 2)
    TL, TR = legs(kin, si)
    Rz = pose_matrix(0, 0, 0, 0, 0, 0.2)
    TL2, TR2 = TL.copy(), TR.copy()
    TL2[:3, :3] = TL[:3, :3] @ Rz[:3, :3]           # about each sole's own normal
    TR2[:3, :3] = TR[:3, :3] @ Rz[:3, :3]
    q = si.copy()
    ik.solve(TL2, TR2, q)
    AL, AR = legs(kin, q)
    for A, T in ((AL, TL2), (AR, TR2)):
        assert np.abs(A[:3, 3] - T[:3, 3]).max() < 0.002          # positions met
        assert math.acos(min(1.0, float(A[:3, 2] @ T[:3, 2]))) < 0.01  # soles flat
        rel = T[:3, :3].T @ A[:3, :3]
        assert abs(math.atan2(rel[1, 0], rel[0, 0])) > 0.1          # the yaw gave
