"""Tests of the simulated body (components/dcm/body.py)."""

import math
from pathlib import Path

import numpy as np
import pytest

from rtcf_components.dcm.body import Body, SimulatedBody
from rtcf_components.dcm.devices import DeviceTable

MODEL = Path(__file__).resolve().parents[3] / "model" / "nao_h25_v5.yaml"
DT = 0.01


@pytest.fixture(scope="module")
def table():
    return DeviceTable.from_model(MODEL)


def test_is_a_body(table):
    b: Body = SimulatedBody(table)
    assert hasattr(b, "update")


def test_first_order_response(table):
    tau = 0.05
    b = SimulatedBody(table, tau_s=tau)
    j = table.joint_index("HeadYaw")
    cmd = np.zeros(table.n_joints)
    cmd[j] = 1.0
    hard = np.ones(table.n_joints)
    for _ in range(5):
        s = b.update(cmd, hard, DT)
    assert s[j] == pytest.approx(1.0 - math.exp(-5 * DT / tau), abs=1e-12)
    assert s is b.sensors                                   # updated in place


def test_speed_scales_with_hardness(table):
    j = table.joint_index("HeadYaw")
    cmd = np.zeros(table.n_joints)
    cmd[j] = 1.0
    moved = []
    for h in (0.0, 0.25, 0.5, 1.0):
        b = SimulatedBody(table)
        s = b.update(cmd, np.full(table.n_joints, h), DT)
        moved.append(s[j])
    assert moved[0] == 0.0                                   # limp: does not move
    assert moved[1] < moved[2] < moved[3]
    assert moved[2] == pytest.approx(1.0 - math.exp(-0.5 * DT / 0.05), abs=1e-12)


def test_limp_joint_holds_its_position(table):
    b = SimulatedBody(table, initial=np.full(table.n_joints, 0.3))
    before = b.sensors.copy()
    for _ in range(100):
        b.update(np.full(table.n_joints, -0.5), np.zeros(table.n_joints), DT)
    np.testing.assert_array_equal(b.sensors, before)


def test_command_clamped_to_joint_limits(table):
    b = SimulatedBody(table, tau_s=0.001)
    cmd = np.full(table.n_joints, 10.0)
    for _ in range(200):
        s = b.update(cmd, np.ones(table.n_joints), DT)
    np.testing.assert_allclose(s, table.joint_limits[:, 1], atol=1e-9)
    for _ in range(200):
        s = b.update(-cmd, np.ones(table.n_joints), DT)
    np.testing.assert_allclose(s, table.joint_limits[:, 0], atol=1e-9)
    # hardness outside 0..1 is clamped, NaN hardness is limp
    h = np.full(table.n_joints, 5.0)
    h[0] = np.nan
    before0 = s[0]
    s = b.update(np.zeros(table.n_joints), h, DT)
    assert s[0] == before0 and np.isfinite(s).all()


def test_hip_yaw_pitch_coupling(table):
    lj, rj = table.joint_index("LHipYawPitch"), table.joint_index("RHipYawPitch")
    b = SimulatedBody(table)
    cmd = np.zeros(table.n_joints)
    cmd[lj], cmd[rj] = -0.4, 0.6                             # the R command is ignored
    hard = np.ones(table.n_joints)
    hard[rj] = 0.0                                           # and so is its hardness
    for _ in range(300):
        s = b.update(cmd, hard, DT)
    assert s[lj] == pytest.approx(-0.4, abs=1e-9)
    assert s[rj] == s[lj]


def test_reset_and_no_coupling_without_legs():
    t = DeviceTable([("A", "X", -1.0, 1.0), ("B", "X", 0.0, 2.0)])
    b = SimulatedBody(t, initial=np.array([5.0, -5.0]))
    np.testing.assert_array_equal(b.sensors, [1.0, 0.0])     # clamped to the limits
    b.reset()
    np.testing.assert_array_equal(b.sensors, [0.0, 0.0])
    with pytest.raises(ValueError, match="tau_s"):
        SimulatedBody(t, tau_s=0.0)
