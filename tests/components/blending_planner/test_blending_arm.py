"""The BlendingPlanner on the Doosan M1013 model: the whole path is solved through IK when a
request is made, qRef follows it each cycle, an unreachable sample refuses the request with
the segment and the sample named, and nothing moves."""

import numpy as np
import pytest

pytest.importorskip("rtcf_components.kinematics.algorithms")

from rtcf_components.blending_planner import BlendingPlanner                 # noqa: E402
from rtcf_components.blending_planner.arm import load_arm                    # noqa: E402
from rtcf_components.blending_planner.planner import DR_COND_NONE            # noqa: E402
from rtcf.testing import Harness                             # noqa: E402

RATE = 100.0


def line(x, y, z, r=0.0, abc=(0.0, 0.0, 0.0)):
    return [x, y, z, *abc] + [0.0] * 6 + [0, r]


@pytest.fixture
def h():
    harness = Harness(BlendingPlanner, rate=RATE)
    harness.activate()
    yield harness
    harness.close()


def move(h, segs, sync=1, mode=1, ref=1):
    core = h.comp.service.core
    return core.move_blending(segs, len(segs), [100.0, DR_COND_NONE], [200.0, DR_COND_NONE],
                              0.0, ref, mode, sync)


def test_start_pose_is_the_fk_of_the_initial_joints(h):
    arm = h.comp.arm
    assert arm is not None and arm.joint_names == tuple(f"joint{i}" for i in range(1, 7))
    p, _ = arm.tcp_pose(np.radians([0, 0, 90, 0, 90, 0]))
    assert h.comp.service.core.tcp_pose()[:3] == pytest.approx(p.tolist())
    h.step()
    q = h.read_all("qRef")[-1].data
    assert q == pytest.approx(np.radians([0, 0, 90, 0, 90, 0]))


def test_square_in_the_tool_frame_drives_the_joints(h):
    # RELATIVE, TOOL: a 100 mm square with 20 mm blends in the tool's x-y plane
    sq = [line(100, 0, 0, 20), line(0, 100, 0, 20), line(-100, 0, 0, 20), line(0, -100, 0)]
    start = np.array(h.comp.service.core.tcp_pose()[:3])
    assert move(h, sq), h.comp.service.core.last_error()
    n = 0
    while h.comp.motion is not None:
        h.step()
        n += 1
    qs = h.read_all("qRef")
    poses = h.read_all("tcpPose")
    assert len(qs) == len(poses) >= n
    arm = h.comp.arm
    # every cycle: FK of the joint reference is the TCP pose written in the same cycle
    for qs_k, ps_k in list(zip(qs, poses))[-n:]:
        p, _ = arm.tcp_pose(qs_k.data)
        pos = ps_k.data.position
        assert np.linalg.norm(p - 1000 * np.array([pos.x, pos.y, pos.z])) < 0.2    # 1e-4 m tol
    end, _ = arm.tcp_pose(qs[-1].data)
    assert np.linalg.norm(end - start) < 0.2
    # joints move continuously (no branch flips): at most their speed limit per cycle
    dq = np.abs(np.diff(np.array([q.data for q in qs]), axis=0))
    assert dq.max() <= 1.571 / RATE * 1.05


def test_unreachable_sample_refuses_naming_segment_and_sample(h):
    before = h.comp.service.core.tcp_pose()
    segs = [line(0, 0, 100, 20), line(2000, 0, 100)]        # the second leaves the workspace
    assert not move(h, segs, mode=1, ref=0)
    err = h.comp.service.core.last_error()
    # near the edge of the workspace the elbow straightens: either the IK finds no solution
    # or a joint would have to exceed its speed limit first; both name the place
    assert "IK fails on segment 1, sample" in err, err
    assert "no IK solution" in err or "over its limit" in err, err
    h.step(5)
    assert h.comp.service.core.tcp_pose() == pytest.approx(before)
    assert h.comp.last_plan is None


def test_arm_unavailable_reason_when_the_model_is_unknown():
    got = load_arm("no_such_robot", "arm", np.eye(4))
    assert isinstance(got, str) and "no_such_robot" in got
    with Harness(BlendingPlanner, params={"model": "no_such_robot"}, rate=RATE) as hh:
        hh.activate()
        assert hh.comp.arm is None and "no_such_robot" in hh.comp.arm_reason
        hh.step(2)
        assert hh.read_all("qRef") == []            # not written, reason logged
        assert len(hh.read_all("tcpPose")) == 3


def test_solve_path_reports_the_first_sample_without_solution():
    arm = load_arm("doosan_m1013", "arm", np.eye(4))
    q0 = np.radians([0, 0, 90, 0, 90, 0])
    p, r = arm.tcp_pose(q0)
    from rtcf_components.blending_planner.geometry import quat_from_rot
    pos = np.array([p, p + [0, 0, 1], p + [3000, 0, 0]])
    quat = np.array([quat_from_rot(r)] * 3)
    ik = arm.solve_path(pos, quat, q0, 0.01)
    assert not ik.ok and ik.index == 2 and "no IK solution" in ik.reason
    assert "unreachable" in ik.reason and ik.q.shape == (2, 6)
