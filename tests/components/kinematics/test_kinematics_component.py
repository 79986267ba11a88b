"""The Kinematics RT component on a stepped EC (no ORB): ports, sources, spaces, the model API
and the servant's error mapping."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rtcf import ReadStatus, TimedDoubleSeq
from rtcf.errors import ParamError
from rtcf.testing import Harness

from rtcf_components.kinematics import chain_fk, load_model, position6d
from rtcf_components.kinematics.component import Kinematics, pose_port_name

NAO = load_model("nao_h25_v5")
K6 = [0.5, 0.3, -0.7, -1.0, 0.4]


def body(**chains) -> np.ndarray:
    q = np.zeros(26)
    for name, angles in chains.items():
        q[NAO.chain(name).index] = angles
    return q


@pytest.fixture
def h():
    with Harness(Kinematics) as h:
        h.activate()
        yield h


def pose_of(sample) -> list[float]:
    d = sample.data
    return [d.position.x, d.position.y, d.position.z,
            d.orientation.r, d.orientation.p, d.orientation.y]


def test_port_names():
    assert [pose_port_name(c) for c in ("Head", "LArm", "RArm", "LLeg", "RLeg", "arm")] == [
        "headPose", "lArmPose", "rArmPose", "lLegPose", "rLegPose", "armPose"]


@pytest.mark.slow
def test_nothing_written_before_angles_arrive(h):
    h.step(3)
    assert h.read("lArmPose")[0] is ReadStatus.NO_DATA


@pytest.mark.slow
def test_every_chain_pose_each_cycle(h):
    q = body(LArm=K6, Head=[0.5, 0.3])
    h.write("q", TimedDoubleSeq(data=q))
    h.step()
    for chain in NAO.chains.values():
        status, s = h.read(pose_port_name(chain.name))
        assert status is ReadStatus.NEW
        np.testing.assert_allclose(pose_of(s), position6d(chain_fk(NAO, chain, q[chain.index])),
                                   atol=1e-12)
    st, s = h.read("lArmPose")     # reference vector K6 (test_fk.py), default model, metres
    np.testing.assert_allclose(pose_of(s)[:3], [0.1839770, 0.0877125, 0.0579434], atol=1e-7)
    h.step()
    assert h.read("lArmPose")[0] is ReadStatus.NEW          # written every cycle


@pytest.mark.slow
def test_pose_source_commands_are_clamped_to_the_limits(h):
    h.set_param("pose_source", "commands")
    h.step()                                   # staged: applied at the cycle boundary
    h.write("q", TimedDoubleSeq(data=body()))
    h.write("qCommand", TimedDoubleSeq(data=body(LArm=[0, 5.0, 0, 0, 0])))   # roll > 1.3265
    h.step()
    _, s = h.read("lArmPose")
    arm = NAO.chain("LArm")                  # roll to 1.3265, elbow roll 0 up to -0.0349
    want = chain_fk(NAO, arm, np.clip([0, 5.0, 0, 0, 0], arm.lower, arm.upper))
    np.testing.assert_allclose(pose_of(s)[:3], want[:3, 3], atol=1e-12)
    c = h.comp
    np.testing.assert_allclose(c.get_transform("LArm", 0, False), want, atol=1e-12)
    raw = chain_fk(NAO, "LArm", [0, 0, 0, 0, 0])        # sensors unclamped, and at zero here
    np.testing.assert_allclose(c.get_transform("LArm", 0, True), raw, atol=1e-12)


@pytest.mark.slow
def test_pose_space_robot(h):
    h.set_param("pose_space", 2)
    h.step()
    h.write("q", TimedDoubleSeq(data=body()))
    h.step()
    _, s = h.read("headPose")
    np.testing.assert_allclose(pose_of(s), [0, 0, 0.33309 + 0.1265, 0, 0, 0], atol=1e-12)
    _, s = h.read("lLegPose")
    np.testing.assert_allclose(pose_of(s)[:3], [0, 0.05, 0], atol=1e-12)


@pytest.mark.slow
def test_world_space_follows_the_odometry(h):
    h.write("q", TimedDoubleSeq(data=body()))
    h.set_param("odometry", [1.0, 2.0, math.pi / 2])
    h.step()
    c = h.comp
    assert c.get_robot_position(True) == [1.0, 2.0, math.pi / 2]
    p = c.get_position("LLeg", 1, True)
    np.testing.assert_allclose(p, [1.0 - 0.05, 2.0, 0, 0, 0, math.pi / 2], atol=1e-12)
    np.testing.assert_allclose(c.get_position("LLeg", 2, True)[:3], [0, 0.05, 0], atol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("bad", [[1.0, 2.0], [0, 0, 0, 0], "1,2"])
def test_odometry_must_be_three_values(h, bad):
    with pytest.raises(ParamError):
        h.set_param("odometry", bad)
    assert h.comp.odometry == [0.0, 0.0, 0.0]


def test_wrong_sized_or_nonfinite_angles_are_ignored(h, caplog):
    h.write("q", TimedDoubleSeq(data=body(Head=[0.5, 0.0])))
    h.step()
    before = h.comp.get_transform("Head", 0, True)
    h.write("q", TimedDoubleSeq(data=np.zeros(25)))
    h.step()
    h.write("q", TimedDoubleSeq(data=np.full(26, np.nan)))
    h.step()
    np.testing.assert_array_equal(h.comp.get_transform("Head", 0, True), before)
    assert "got 25 joint angles, expected 26" in caplog.text


def test_api_answers_from_a_copy(h):
    h.write("q", TimedDoubleSeq(data=body(Head=[0.5, 0.3])))
    h.step()
    q = h.comp.angles(True)
    q[:] = 9.0
    np.testing.assert_allclose(h.comp.angles(True)[:2], [0.5, 0.3])


def test_solve_in_robot_space_round_trip(h):
    h.write("q", TimedDoubleSeq(data=body()))
    h.write("qCommand", TimedDoubleSeq(data=body()))
    h.step()
    c = h.comp
    bent = [0.3, -0.3, 0.5, 1.0, 0.2]
    target = position6d(c.get_transform("Torso", 2, False) @ chain_fk(NAO, "RArm", bent))
    r = c.solve("RArm", 2, target, 7)
    assert r.success, r.reason
    got = position6d(c.get_transform("Torso", 2, False) @ chain_fk(NAO, "RArm", r.q))
    np.testing.assert_allclose(got[:3], target[:3], atol=1e-4)
    assert np.all((r.q >= NAO.chain("RArm").lower) & (r.q <= NAO.chain("RArm").upper))
    full = c.solve("RArm", 2, target, 63)
    assert full.success and full.orientation_error <= 1e-3, full.reason


@pytest.mark.slow
def test_servant_maps_errors_to_the_idl_exception(h):
    from rtcf.corba.idl import stub_module
    NAOIDL = stub_module("NAO")
    svc = h.comp.service
    with pytest.raises(NAOIDL.KinematicsError, match="unknown chain 'Tail'"):
        svc.solveIK("Tail", 0, [0] * 6, 63)
    with pytest.raises(NAOIDL.KinematicsError, match="axis mask"):
        svc.solveIK("LArm", 0, [0.1, 0.1, 0.1, 0, 0, 0], 0)
    with pytest.raises(NAOIDL.KinematicsError, match="target6D"):
        svc.solveIK("LArm", 0, [0.1, math.inf, 0.1, 0, 0, 0], 63)
    with pytest.raises(NAOIDL.KinematicsError, match="space 7"):
        svc.getTransform("LArm", 7, True)
    res = svc.solveIK("LArm", 0, [0.1, 0.1, 0.1, 0, 0, 0], 7)
    assert isinstance(res.success, bool) and len(res.angles) == 5


def test_unknown_model_fails_initialisation():
    from rtcf.lifecycle import LifeCycleState
    with pytest.raises(Exception, match="nao_h99"):
        with Harness(Kinematics, params={"model": "nao_h99"}) as h:
            assert h.state is not LifeCycleState.ACTIVE


def test_arm_model_has_one_pose_port():
    with Harness(Kinematics, params={"model": "doosan_m1013"}) as h:
        h.activate()
        h.write("q", TimedDoubleSeq(data=np.zeros(6)))
        h.step()
        st, s = h.read("armPose")
        assert st is ReadStatus.NEW
        assert pose_of(s)[2] == pytest.approx(1.4525)
        assert h.comp.get_position("Torso", 2, True) == [0.0, 0.0, 0.0, 0.0, -0.0, 0.0]


def test_a_pose_port_without_reader_is_neither_computed_nor_written(h):
    from rtcf.ports import InPort, connect, disconnect
    port = h.comp.ports["lArmPose"]
    disconnect(next(iter(port.connectors)), port)          # the harness's probe goes
    assert not port.in_use()
    q = body(LArm=K6)
    h.write("q", TimedDoubleSeq(data=q))
    h.step(3)
    assert port.writes == 0 and pose_of(port.value) == [0.0] * 6     # nothing computed
    assert h.read("rArmPose")[0] is ReadStatus.NEW                  # the others as before
    late = InPort("late", port.data_type)                             # a reader comes
    connect(port, late, {"subscription_type": "flush"})
    h.step()                                                          # no new angles
    assert late.read() is ReadStatus.NEW
    np.testing.assert_allclose(pose_of(late.value),
                               position6d(chain_fk(NAO, "LArm", K6)), atol=1e-12)
    assert late.value.tm.nsec == 4_000_000                            # this cycle's stamp


def test_unchanged_angles_send_the_same_pose_stamped_each_cycle(h):
    h.write("q", TimedDoubleSeq(data=body(Head=[0.5, 0.3])))
    h.step(3)
    samples = h.read_all("headPose")
    assert len(samples) == 3
    assert [s.tm.nsec for s in samples] == [1_000_000, 2_000_000, 3_000_000]
    assert pose_of(samples[0]) == pose_of(samples[1]) == pose_of(samples[2])


def test_a_new_pose_space_is_applied_without_new_angles(h):
    h.write("q", TimedDoubleSeq(data=body()))
    h.step()
    _, torso = h.read("lLegPose")
    h.set_param("pose_space", 2)
    h.step(2)                                    # live at the end of the first cycle
    _, robot = h.read_latest("lLegPose")
    np.testing.assert_allclose(pose_of(robot)[:3], [0, 0.05, 0], atol=1e-12)
    assert pose_of(torso)[:3] != pose_of(robot)[:3]


def test_huge_finite_angles_are_taken(h):
    q = body(Head=[1e200, 0.0])                  # its square overflows: still finite
    h.write("q", TimedDoubleSeq(data=q))
    h.step()
    assert h.comp.angles(True)[0] == 1e200
    h.write("q", TimedDoubleSeq(data=body(Head=[np.inf, 0.0])))
    h.step()
    assert h.comp.angles(True)[0] == 1e200



def test_a_change_of_one_ulp_is_published(h):
    q = body(Head=[0.5, 0.3])
    h.write("q", TimedDoubleSeq(data=q))
    h.step()
    h.write("q", TimedDoubleSeq(data=q.copy()))                 # the same bits again
    h.step()
    assert h.comp.angles(True).tobytes() == q.tobytes()
    nudged = q.copy()
    nudged[NAO.chain("Head").index[0]] = np.nextafter(0.5, 1.0)  # one ulp
    h.write("q", TimedDoubleSeq(data=nudged))
    h.step()
    got = h.comp.angles(True)
    assert got.tobytes() == nudged.tobytes()                     # the new bits, bit for bit
    _, pose = h.read_latest("headPose")
    assert pose_of(pose) == position6d(chain_fk(NAO, "Head", [np.nextafter(0.5, 1.0), 0.3]))
    assert pose_of(pose) != position6d(chain_fk(NAO, "Head", [0.5, 0.3]))
    got[0] = 99.0                                                # a copy: the next stays
    assert h.comp.angles(True).tobytes() == nudged.tobytes()


def test_angles_of_another_float_type_are_taken_as_float64(h):
    v = TimedDoubleSeq(data=body(Head=[0.5, 0.3]))
    v.data = v.data.astype(np.float32)                           # assigned in process
    h.write("q", v)
    h.step()
    got = h.comp.angles(True)
    assert got.dtype == np.float64
    assert got[NAO.chain("Head").index[0]] == np.float32(0.5)
