"""The commanded joints reproduce the planned TCP: FK of every joint
sample lies within 0.01 mm of its planned pose, the last one on the target (1e-6 m,
1e-6 rad), and getTcpPose reports the pose the joints give, on the worked examples below
(TOOL frame, on the M1013 from its initial joints) and on seeded random paths."""

import math

import numpy as np
import pytest

pytest.importorskip("rtcf_components.kinematics.algorithms")

from rtcf_components.blending_planner import BlendingPlanner                      # noqa: E402
from rtcf_components.blending_planner.geometry import pose_from_posx, rot_from_quat  # noqa: E402
from rtcf_components.blending_planner.planner import DR_COND_NONE                 # noqa: E402
from rtcf_components.kinematics.algorithms import rotation_log                    # noqa: E402
from rtcf.testing import Harness                                  # noqa: E402

RATE = 100.0
S3 = 150 * math.sqrt(3)
LINE = 0
SPEC = {   # the worked examples of test_blending_planner: (x, y, z, radius) in TOOL, v, a
    "1": ([[300, 0, 0, 0]], 100, 200),
    "2": ([[200, 0, 0, 50], [200, 200, 0, 0]], 100, 200),
    "3": ([[100, 0, 0, 20], [100, 100, 0, 20], [0, 100, 0, 20], [0, 0, 0, 0]], 50, 100),
    "4": ([[300, 0, 0, 30], [150, S3, 0, 30], [0, 0, 0, 0]], 100, 200),
}


@pytest.fixture
def h():
    harness = Harness(BlendingPlanner, rate=RATE)
    harness.activate()
    yield harness
    harness.close()


def seg(x, y, z, r=0.0, abc=(0.0, 0.0, 0.0)):
    return [x, y, z, *abc] + [0.0] * 6 + [LINE, r]


def errors(arm, q, p, r):
    """(position [m], orientation [rad]) of FK(q) against the planned (p [mm], R)."""
    fp, fr = arm.tcp_pose(q)
    return (float(np.linalg.norm(fp - p)) * 1e-3,
            float(np.linalg.norm(rotation_log(r @ fr.T))))


def run_and_check(h, segs, v, a, ref, mode):
    core = h.comp.service.core
    ok = core.move_blending(segs, len(segs), [v, DR_COND_NONE], [a, DR_COND_NONE], 0.0, ref,
                            mode, 1)
    assert ok, core.last_error()
    m = h.comp.motion
    arm, sm = h.comp.arm, m.samples
    worst = max(errors(arm, m.q[k], sm.pos[k], rot_from_quat(sm.quat[k]))[0]
                for k in range(len(sm)))
    assert worst <= 0.01e-3, f"a joint sample is {worst * 1e3:.4f} mm off its planned TCP"
    while h.comp.motion is not None:
        h.step()
    q_end = h.read_all("qRef")[-1].data
    ep, er = errors(arm, q_end, sm.pos[-1], rot_from_quat(sm.quat[-1]))
    assert ep <= 1e-6 and er <= 1e-6, (ep, er)
    # getTcpPose: the pose of the joints, not the planned one
    fp, fr = arm.tcp_pose(q_end)
    gp, gr = pose_from_posx(core.tcp_pose())
    assert np.linalg.norm(gp - fp) < 1e-9 and np.abs(gr - fr).max() < 1e-9
    return ep


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SPEC))
def test_spec_examples_end_on_the_target(h, name):
    pts, v, a = SPEC[name]
    run_and_check(h, [seg(*p) for p in pts], v, a, ref=1, mode=0)


@pytest.mark.slow
def test_random_paths_end_on_the_target(h):
    rng = np.random.default_rng(18)
    for _ in range(5):
        n = int(rng.integers(1, 4))
        segs = [seg(*rng.uniform(-80, 80, 3), r=5.0 if k < n - 1 else 0.0,
                    abc=tuple(rng.uniform(-10, 10, 3))) for k in range(n)]
        run_and_check(h, segs, float(rng.uniform(50, 250)), 400.0, ref=1, mode=1)


def test_tcp_pose_after_a_stop_is_the_pose_of_the_joints(h):
    core = h.comp.service.core
    assert core.move_blending([seg(300, 0, 0)], 1, [100, DR_COND_NONE], [200, DR_COND_NONE],
                              0.0, 1, 1, 1)
    h.step(150)
    assert core.stop()
    m, arm = h.comp.motion, h.comp.arm
    # the decelerating samples: joints interpolated between solved samples, on the path
    worst = max(errors(arm, m.q[k], m.samples.pos[k], rot_from_quat(m.samples.quat[k]))[0]
                for k in range(len(m.samples)))
    assert worst <= 1e-5 * 1e-3, f"{worst * 1e3:.2e} mm"
    while h.comp.motion is not None:
        h.step()
    q_end = h.read_all("qRef")[-1].data
    fp, fr = h.comp.arm.tcp_pose(q_end)
    gp, gr = pose_from_posx(core.tcp_pose())
    assert np.linalg.norm(gp - fp) < 1e-9 and np.abs(gr - fr).max() < 1e-9
