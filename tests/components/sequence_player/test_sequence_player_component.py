"""The SequencePlayer component (component.py) and its servant (service.py) on a stepped EC
(rtcf.testing.Harness), NAO model, dt = EC period = 10 ms. The servant object is called
directly (no ORB transport; the CORBA path is tests/integration/test_sequence_player_corba.py).
Blocking calls run in a helper thread while the test steps the EC."""

from __future__ import annotations

import math
import threading
import time

import numpy as np
import pytest
from omniORB import CORBA

from rtcf import TimedDoubleSeq
from rtcf.corba.idl import stub_module
from rtcf.datatypes import Time
from rtcf.testing import Harness

from rtcf_components.sequence_player.component import SequencePlayer

OpenHRP = stub_module("OpenHRP")
SPS = OpenHRP.SequencePlayerService
DT = 0.01
EPS = 1e-9
N = 26
LARM = ["LShoulderPitch", "LShoulderRoll", "LElbowYaw", "LElbowRoll", "LWristYaw"]


@pytest.fixture
def h():
    hh = Harness(SequencePlayer, params={"dt": DT}, rate=1 / DT)
    hh.activate()
    yield hh
    hh.close()


def qref(h) -> list[np.ndarray]:
    return [s.data.copy() for s in h.read_all("qRef")]


class Blocking:
    """Run a blocking servant call in a thread; ``done`` tells whether it returned. It
    returns once the call has registered its completion with the player (or has already
    returned), so that the ticks the test gives next count for it."""

    def __init__(self, fn, *args):
        self.result = self.error = None
        comp = fn.__self__.comp                   # the servant's component
        waiting = len(comp.waiters)
        self.t = threading.Thread(target=self._run, args=(fn, args), daemon=True)
        self.t.start()
        deadline = time.monotonic() + 60
        while len(comp.waiters) <= waiting and self.t.is_alive():
            assert time.monotonic() < deadline, "the call did not register its completion"
            time.sleep(0.001)

    def _run(self, fn, args):
        try:
            self.result = fn(*args)
        except Exception as e:
            self.error = e

    @property
    def done(self) -> bool:
        return not self.t.is_alive()

    def join(self, timeout: float = 60.0) -> "Blocking":
        self.t.join(timeout)
        assert self.done
        return self


def settle(b: Blocking) -> bool:
    """Give a blocking call that should have returned the time to return (a minute: a
    loaded machine is slow; one that returns does so at once)."""
    b.t.join(60.0)
    return b.done


def test_profile_ports_and_service(h):
    c = h.comp
    assert (c.type_name, c.version, c.category) == ("SequencePlayer", "315.12.1", "example")
    for name in ("qInit", "basePosInit", "baseRpyInit", "zmpRefInit", "qRef", "tqRef",
                 "zmpRef", "accRef", "basePos", "baseRpy", "optionalData",
                 "SequencePlayerService"):
        c.port(name)
    prov = c.port("SequencePlayerService").provided
    assert list(prov) == ["service0", "local"]
    assert prov["service0"].type_name == "SequencePlayerService" and not prov["service0"].local
    assert prov["local"].type_name == "SequencePlayerLocal" and prov["local"].local  # NAOqi
    assert c.core.dof == N and c.core.joint_names[2] == "LShoulderPitch"


def test_force_sensor_ports_from_the_model(tmp_path):
    (tmp_path / "m.yaml").write_text("joints: [{name: a}, {name: b}]\n"
                                     "force_sensors: [lfsensor, rfsensor]\n")
    with Harness(SequencePlayer, params={"dt": DT, "model": str(tmp_path / "m.yaml"),
                                         "seq_optional_data_dim": 2}, rate=100) as hh:
        hh.activate()
        s = hh.comp.service
        assert s.setWrenches(list(range(12)), 0.0)
        hh.step(2)
        assert list(hh.read_all("rfsensorRef")[-1].data) == [6, 7, 8, 9, 10, 11]
        assert len(hh.read_all("optionalData")[-1].data) == 2
        assert not s.setWrenches([0.0] * 6, 0.0)
        assert not s.setTargetPose("g", [0, 0, 0], [0, 0, 0], 1.0)   # no kinematics


def test_nothing_written_while_idle_then_every_cycle(h):
    h.step(5)
    assert qref(h) == []
    h.write("qInit", TimedDoubleSeq(tm=Time(7, 5), data=np.full(N, 0.2)))
    h.step()
    assert h.comp.service.setJointAngles([0.5] * N, 0.1)
    h.step(20)
    out = h.read_all("qRef")
    assert len(out) == 11                        # the held sample + 10
    assert out[0].data[0] == 0.2 and out[-1].data[0] == 0.5
    assert (out[-1].tm.sec, out[-1].tm.nsec) == (7, 5)   # stamp copied from qInit
    assert len(h.read_all("basePos")) == 11 and len(h.read_all("zmpRef")) == 11
    assert h.comp.service.isEmpty()


def test_false_cases_through_the_servant_are_logged_and_change_nothing(h, caplog):
    s = h.comp.service
    assert not s.setJointAngles([0.0] * 3, 1.0)
    assert not s.setJointAngles([0.0] * N, -1.0)
    assert not s.setJointAngle("NoSuchJoint", 0.0, 1.0)
    assert not s.setJointAnglesWithMask([0.0] * N, [True] * 2, 1.0)
    assert not s.setJointAnglesSequence([], [])
    assert not s.setJointAnglesSequenceWithMask([[0.0] * N], [True], [1.0])
    assert not s.setJointAnglesSequenceOfGroup("nogroup", [[0.0]], [1.0])
    assert not s.setBasePos([0.0], 1.0) and not s.setBaseRpy([0.0], 1.0)
    assert not s.setZmp([0.0] * 4, 1.0)
    assert not s.clearOfGroup("nogroup", 0.0)
    assert not s.clearJointAnglesOfGroup("nogroup")
    assert not s.playPatternOfGroup("nogroup", [[0.0]], [1.0])
    assert not s.setTargetPose("nogroup", [0, 0, 0], [0, 0, 0], 1.0)
    assert not s.removeJointGroup("nogroup")
    assert not s.addJointGroup("g", ["NoSuchJoint"])
    s.playPattern([[0.0] * 3], [], [], [1.0])
    s.loadPattern("/nonexistent/pattern", 1.0)
    h.step(3)
    assert s.isEmpty() and qref(h) == []
    assert "unknown joint 'NoSuchJoint'" in caplog.text
    assert "jvs: expected 26 values, got 3" in caplog.text
    assert "no pattern file /nonexistent/pattern" in caplog.text


def test_interpolation_mode_enum_and_reference(h):
    s = h.comp.service
    assert s.setInterpolationMode(SPS.LINEAR)
    assert s.setBasePos([1.0, 0.0, 0.0], 1.0)      # online goal: no held sample
    h.step(50)
    q, p, r, z = s.getReference()
    assert p[0] == pytest.approx(0.5, abs=EPS) and len(q) == N and r == [0, 0, 0]
    assert s.setInterpolationMode(SPS.HOFFARBIB)
    assert not s.setInterpolationMode(5)


def test_wait_interpolation_returns_when_the_motion_ends_not_before(h):
    s = h.comp.service
    assert s.setJointAngles([1.0] * N, 0.5)         # held sample + 50
    b = Blocking(s.waitInterpolation)
    h.step(50)
    assert not settle_quick(b)
    assert not s.isEmpty()
    h.step(1)                                       # the last sample
    assert settle(b) and b.error is None
    assert qref(h)[-1][0] == 1.0 and s.isEmpty()


def settle_quick(b: Blocking) -> bool:
    b.t.join(0.3)
    return b.done


def test_blocking_calls_do_not_wait_when_not_executing(h):
    s = h.comp.service
    assert s.setJointAngles([1.0] * N, 0.5)
    h.step(5)
    b = Blocking(s.waitInterpolation)
    h.deactivate()                                   # releases the waiter
    assert settle(b) and isinstance(b.error, CORBA.BAD_INV_ORDER)
    with pytest.raises(CORBA.BAD_INV_ORDER):
        s.waitInterpolation()                        # still queued: an error at once
    assert s.waitInterpolationOfGroup("unknown")     # nothing to wait for
    assert s.addJointGroup("head", ["HeadYaw", "HeadPitch"])


@pytest.mark.slow
def test_groups_through_the_servant(h):
    s = h.comp.service
    assert s.addJointGroup("Head", ["HeadYaw", "HeadPitch"])
    assert not s.addJointGroup("HEAD", ["HeadYaw"])              # exists
    assert s.setJointAnglesOfGroup("head", [0.5, -0.2], 0.5)
    assert s.setJointAngles([0.1] * N, 0.2)
    b = Blocking(s.waitInterpolationOfGroup, "HEAD")
    h.step(49)
    assert not settle_quick(b)
    h.step(1)
    assert settle(b) and b.result is True
    q = qref(h)[-1]
    assert list(q[:2]) == [0.5, -0.2] and q[2] == pytest.approx(0.1)
    # removal waits for the group to be idle, then blends back over 2.5 s; the player is
    # idle now, so the next command restarts Q from qInit: feed the held command back
    h.write("qInit", TimedDoubleSeq(data=np.full(N, 0.1)))
    assert s.setJointAnglesOfGroup("head", [0.0, 0.0], 0.2)
    b = Blocking(s.removeJointGroup, "head")
    h.step(19)
    assert not settle_quick(b)
    h.step(2)
    assert settle(b) and b.result is True
    # adding the same name blocks until the removed group is gone
    a = Blocking(s.addJointGroup, "head", ["HeadYaw"])
    h.step(200)
    assert not settle_quick(a)
    h.step(60)
    assert settle(a) and a.result is True
    assert qref(h)[-1][0] == pytest.approx(0.1, abs=EPS)      # back to Q's value


def test_load_pattern_through_the_servant(h, tmp_path):
    rows = "\n".join(f"{k * DT} " + " ".join(["%.3f" % (0.01 * k)] * N) for k in range(5))
    (tmp_path / "p.pos").write_text(rows)
    s = h.comp.service
    s.loadPattern(str(tmp_path / "p"), 0.0)             # record 0 in one sample
    h.step(10)
    assert [round(q[5], 6) for q in qref(h)] == [0.0, 0.01, 0.02, 0.03, 0.04]


def _rpy(R: np.ndarray) -> list[float]:
    return [math.atan2(R[2, 1], R[2, 2]), -math.asin(R[2, 0]), math.atan2(R[1, 0], R[0, 0])]


def test_set_target_pose_reaches_a_reachable_hand_pose(h):
    from rtcf_components.kinematics.algorithms import chain_fk
    s, model = h.comp.service, h.comp.kin_model
    chain = model.chain("LArm")
    q0 = np.array([1.0, 0.3, -1.0, -0.8, 0.0])
    start = np.zeros(N)
    start[chain.index] = q0
    h.write("qInit", TimedDoubleSeq(data=start))
    h.step()
    goal_q = q0 + np.array([0.3, 0.2, 0.2, -0.3, 0.2])
    T = chain_fk(model, chain, goal_q, tip=np.eye(4))
    assert s.addJointGroup("larm", LARM)
    assert s.setTargetPose("larm", T[:3, 3].tolist(), _rpy(T[:3, :3]), 1.0)
    h.step(108)
    assert s.isEmpty()
    q = qref(h)
    got = chain_fk(model, chain, q[-1][chain.index], tip=np.eye(4))
    assert np.linalg.norm(got[:3, 3] - T[:3, 3]) <= 1e-4
    from rtcf_components.kinematics.algorithms import rotation_log
    assert np.linalg.norm(rotation_log(got[:3, :3].T @ T[:3, :3])) <= 1e-3
    assert len(q) == 18 * 6        # 18 steps of 1/18 s, each ceil(5.6) = 6 samples of 10 ms
    assert np.all(np.abs(np.diff(np.array(q)[:, chain.index], axis=0)) < 0.05)
    # in a link's frame: 2 cm along the hand's own x axis from where it is
    assert s.setTargetPose("larm:LWristYaw", [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], 0.5)
    h.step(60)
    got2 = chain_fk(model, chain, qref(h)[-1][chain.index], tip=np.eye(4))
    assert np.allclose(got2[:3, 3], got[:3, 3], atol=2e-4)


def test_set_target_pose_refuses_unreachable_with_no_motion(h, caplog):
    s = h.comp.service
    assert s.addJointGroup("larm", LARM)
    before = s.getReference()
    assert not s.setTargetPose("larm", [0.5, 0.5, 0.5], [0.0, 0.0, 0.0], 1.0)
    assert "IK failed" in caplog.text or "unreachable" in caplog.text
    assert not s.setTargetPose("larm:NoLink", [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], 1.0)
    assert "unknown frame link 'NoLink'" in caplog.text
    assert s.addJointGroup("armhand", LARM + ["LHand"])
    assert not s.setTargetPose("armhand", [0.1, 0.1, 0.0], [0.0, 0.0, 0.0], 1.0)
    assert "not the joints of one kinematic chain" in caplog.text
    h.step(5)
    assert s.isEmpty() and qref(h) == [] and s.getReference() == before
