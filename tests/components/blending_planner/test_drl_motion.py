"""The DRL motions on the M1013 model at 100 Hz on a stepped EC (no ORB), on the reference
the component streams (FK of qRef):

* movej: every joint starts and ends together, arrives on its target, the leading joint
  peaks at the asked deg/s;
* movel: straight within 0.1 mm (FK of every cycle's qRef), cruising at the asked mm/s;
* movec: on its circle; movesj / movesx: through their waypoints;
* radius blending: a sync motion's ticket reaches BLENDING at its sphere, the next one
  superposes on it and the arm ends on the last target;
* stop: the path speed falls to 0 in quick_stop_time (DR_QSTOP) or at the motion's own
  deceleration (DR_SSTOP), on the path;
* bad input (joint limits, out of reach, NaN, wrong lengths, radius < 0, time < 0): FAILED
  with DSR's DR_Error type, nothing moves.
"""

import math

import numpy as np
import pytest

pytest.importorskip("rtcf_components.kinematics.algorithms")

from rtcf_components.blending_planner import BlendingPlanner                       # noqa: E402
from rtcf_components.blending_planner import commands as cm                        # noqa: E402
from rtcf_components.blending_planner.geometry import rot_zyz                      # noqa: E402
from rtcf_components.blending_planner.motion_service import (BLENDING, DONE, FAILED,  # noqa: E402
                                             QSTOP, SSTOP, STARTED, STOPPED,
                                             UNTIL_STARTED)
from rtcf.testing import Harness                                   # noqa: E402

RATE = 100.0
DT = 1.0 / RATE
HOME = [0.0, 0.0, 90.0, 0.0, 90.0, 0.0]
NONE = cm.DR_COND_NONE


@pytest.fixture
def h():
    harness = Harness(BlendingPlanner, rate=RATE)
    harness.activate()
    harness.read_all("qRef")
    yield harness
    harness.close()


def motions(h):
    return h.comp.service.motions


def submit(h, cmd, wait_start=True):
    tid = motions(h).submit(cmd)
    if wait_start:
        state, etype, reason = motions(h).wait(tid, UNTIL_STARTED, 60.0)
        assert state in (STARTED, BLENDING, DONE), reason
    return tid


def state(h, tid):
    return motions(h).status(tid)[0]


def run(h, tid, until=DONE, limit=20000):
    """Step until ticket ``tid`` reaches ``until`` (or ends); the qRef samples written."""
    n = 0
    while state(h, tid) not in (until, DONE, FAILED, STOPPED):
        h.step()
        n += 1
        assert n < limit
    return np.array([s.data for s in h.read_all("qRef")])


def tcp(h, q):
    """TCP positions [mm] of joint samples (N, 6) [rad]."""
    return h.comp.arm.fk_batch(np.atleast_2d(q))[0]


def test_movej_joints_start_and_end_together_at_the_leading_joints_speed(h):
    target = [30.0, -20.0, 110.0, 15.0, 60.0, -40.0]
    tid = submit(h, cm.MoveJ(target, [60.0] * 6, [120.0] * 6))
    q = np.degrees(run(h, tid))
    q = np.vstack((HOME, q))
    assert q[-1] == pytest.approx(target, abs=1e-9)          # on the target (<< 0.01 deg)
    d = np.array(target) - np.array(HOME)
    progress = (q - HOME) / d                                 # every joint's fraction done
    assert np.abs(progress - progress[:, [0]]).max() < 1e-9   # the same at every cycle
    speed = np.abs(np.diff(q, axis=0)) / DT
    lead = int(np.argmax(np.abs(d)))                          # joint 1: 40 deg
    assert speed[:, lead].max() == pytest.approx(60.0, rel=1e-6)
    assert np.all(speed <= 60.0 * (1 + 1e-6))
    # the trapezoid of the leading joint: 40 deg at 60 / 120 is T = 40/60 + 0.5 s
    assert len(q) - 1 == math.ceil((40 / 60 + 0.5) * RATE - 1e-9)


def test_movej_relative_and_time_override(h):
    tid = submit(h, cm.MoveJ([10.0, 0, 0, 0, 0, 0], [1.0] * 6, [1.0] * 6, time=2.0,
                             mod=cm.REL))
    q = np.degrees(run(h, tid))
    assert len(q) == round(2.0 * RATE)
    assert q[-1] == pytest.approx([10, 0, 90, 0, 90, 0], abs=1e-9)
    # time = 2 s: accelerating 0.5 s, peak 4/3 * 10 deg / 2 s
    assert np.abs(np.diff(q[:, 0])).max() / DT == pytest.approx(10 * 4 / 3 / 2, rel=1e-3)


def test_movej_vel_beyond_the_joints_limit_is_cut_and_noted(h):
    tid = submit(h, cm.MoveJ([40.0, 0, 90, 0, 90, 0], [200.0] * 6, [400.0] * 6))
    q = np.degrees(run(h, tid))
    assert np.abs(np.diff(q[:, 0])).max() / DT == pytest.approx(90.0, rel=1e-3)   # 1.571 rad/s
    assert "vel cut to the speed limit of joint1" in motions(h).status(tid)[3]


def test_movel_is_straight_and_cruises_at_its_speed(h):
    start = np.array(h.comp.service.calls.pose(0, 0)[2][:3])
    goal = start + [-150.0, 200.0, -120.0]
    tid = submit(h, cm.MoveL(list(goal) + [0, 180, 0], [100.0, NONE], [400.0, NONE]))
    p = tcp(h, run(h, tid))
    u = (goal - start) / np.linalg.norm(goal - start)
    rel = p - start
    off_line = np.linalg.norm(rel - np.outer(rel @ u, u), axis=1)
    assert off_line.max() < 0.1                        # mm (it is about 1e-6 here)
    assert np.linalg.norm(p[-1] - goal) < 1e-6
    speed = np.linalg.norm(np.diff(p, axis=0), axis=1) / DT
    cruise = speed[int(0.3 * RATE):-int(0.3 * RATE)]     # away from the 0.25 s ramps
    assert cruise == pytest.approx(100.0, rel=0.02)


def test_movec_stays_on_its_circle(h):
    start = np.array(h.comp.service.calls.pose(0, 0)[2][:3])
    via = start + [50.0, 50.0, 0.0]
    end = start + [100.0, 0.0, 0.0]
    tid = submit(h, cm.MoveC(list(via) + [0, 180, 0], list(end) + [0, 180, 0],
                             [80.0, NONE], [300.0, NONE]))
    p = tcp(h, run(h, tid))
    centre = start + [50.0, 0.0, 0.0]                  # the circle through the three
    assert np.abs(np.linalg.norm(p - centre, axis=1) - 50.0).max() < 0.1
    assert np.abs(p[:, 2] - start[2]).max() < 0.1
    assert np.linalg.norm(p[-1] - end) < 1e-6
    assert p[:, 1].max() == pytest.approx(start[1] + 50.0, abs=0.05)   # through via


def test_movesj_and_movesx_pass_their_waypoints(h):
    wps = [[10.0, -5.0, 95.0, 0, 85, 0], [20.0, 5.0, 85.0, 5, 90, 10],
           [0.0, 0.0, 90.0, 0, 90, 0]]
    tid = submit(h, cm.MoveSJ(wps, [40.0] * 6, [80.0] * 6))
    q = np.degrees(run(h, tid))
    for w in wps[:-1]:      # within half a cycle's step (40 deg/s at 100 Hz: 0.2 deg)
        assert np.abs(q - w).max(axis=1).min() < 0.2
    assert q[-1] == pytest.approx(wps[-1], abs=1e-9)
    assert np.abs(np.diff(q, axis=0)).max() / DT <= 40.0 * 1.02
    start = np.array(h.comp.service.calls.pose(0, 0)[2][:3])
    pts = [start + d for d in ([60.0, 40.0, 0.0], [120.0, 0.0, -40.0], [60.0, -40.0, 0.0])]
    tid = submit(h, cm.MoveSX([list(p) + [0, 180, 0] for p in pts], [80.0, NONE],
                              [300.0, NONE]))
    p = tcp(h, run(h, tid))
    for w in pts[:-1]:
        assert np.linalg.norm(p - w, axis=1).min() < 0.5   # 80 mm/s: 0.8 mm a cycle
    assert np.linalg.norm(p[-1] - pts[-1]) < 1e-6
    speed = np.linalg.norm(np.diff(p, axis=0), axis=1) / DT
    assert speed.max() == pytest.approx(80.0, rel=0.02)


def test_sync_radius_blends_into_the_next_motion(h):
    start = np.array(h.comp.service.calls.pose(0, 0)[2][:3])
    a = start + [0.0, 150.0, 0.0]
    b = a + [-150.0, 0.0, 0.0]
    t1 = submit(h, cm.MoveL(list(a) + [0, 180, 0], [100.0, NONE], [400.0, NONE], radius=30))
    q1 = run(h, t1, until=BLENDING)
    assert state(h, t1) == BLENDING                       # a sync movel returns here
    assert np.linalg.norm(tcp(h, q1[-1])[0] - a) == pytest.approx(30.0, abs=1.0)
    t2 = submit(h, cm.MoveL(list(b) + [0, 180, 0], [100.0, NONE], [400.0, NONE]))
    q2 = run(h, t2)
    assert state(h, t1) == DONE and state(h, t2) == DONE
    p = tcp(h, np.vstack((q1, q2)))
    assert np.linalg.norm(p[-1] - b) < 1e-6               # on the last target
    closest = np.linalg.norm(p - a, axis=1).min()
    assert 1.0 < closest < 30.0                           # the corner is cut inside r
    speed = np.linalg.norm(np.diff(p, axis=0), axis=1) / DT
    assert speed[len(q1):len(q1) + 20].min() > 40.0       # no stop at the corner


def test_override_starts_the_next_motion_from_where_the_first_comes_to_rest(h):
    start = np.array(h.comp.service.calls.pose(0, 0)[2][:3])
    t1 = submit(h, cm.MoveL(list(start + [0, 300.0, 0]) + [0, 180, 0], [100.0, NONE],
                            [400.0, NONE]))
    h.step(100)
    goal = start + [-100.0, 100.0, 0.0]
    t2 = submit(h, cm.MoveL(list(goal) + [0, 180, 0], [100.0, NONE], [400.0, NONE],
                            ra=cm.OVERRIDE))
    q = run(h, t2)
    assert state(h, t1) == STOPPED
    assert "overridden" in motions(h).status(t1)[2]
    p = tcp(h, q)
    assert np.linalg.norm(p[-1] - goal) < 1e-6
    # the first motion came to rest (its own deceleration, 0.25 s) before the turn
    speed = np.linalg.norm(np.diff(p, axis=0), axis=1) / DT
    assert speed.min() < 1.0


@pytest.mark.parametrize("mode,decel", [(QSTOP, 0.2), (SSTOP, 0.25)])
def test_stop_on_the_path_within_its_distance(h, mode, decel):
    start = np.array(h.comp.service.calls.pose(0, 0)[2][:3])
    goal = start + [0.0, 300.0, 0.0]
    tid = submit(h, cm.MoveL(list(goal) + [0, 180, 0], [100.0, NONE], [400.0, NONE]))
    h.step(100)                                            # cruising at 100 mm/s
    before = tcp(h, h.read_all("qRef")[-1].data)[0]
    assert motions(h).stop(mode)
    q = run(h, tid)
    assert state(h, tid) == STOPPED and "stop(" in motions(h).status(tid)[2]
    p = tcp(h, q)
    travelled = np.linalg.norm(p[-1] - before)
    assert travelled == pytest.approx(100.0 * decel / 2, abs=0.2)   # v t / 2
    assert len(q) == pytest.approx(decel * RATE, abs=1)
    assert np.abs(p[:, 0] - start[0]).max() < 0.1                   # on the line
    h.step(5)
    assert h.read_all("qRef")[-1].data == pytest.approx(q[-1])      # holds


@pytest.mark.parametrize("cmd,etype,words", [
    (cm.MoveJ([0, 0, 90, 0, 170, 0], [30] * 6, [60] * 6), 1001, "outside joint5's limits"),
    (cm.MoveJ([0, 0, 90, 0, 90], [30] * 6, [60] * 6), 1000, "pos: expected 6 values"),
    (cm.MoveJ([0, 0, math.nan, 0, 90, 0], [30] * 6, [60] * 6), 1001, "pos[2] is not finite"),
    (cm.MoveL([2000, 0, 500, 0, 180, 0], [100, NONE], [200, NONE]), 1001, "cannot follow"),
    (cm.MoveL([500, 0, 500, 0, 180], [100, NONE], [200, NONE]), 1000, "expected 6 values"),
    (cm.MoveL([500, 0, 500, 0, 180, 0], [100, NONE], [200, NONE], radius=-1), 1001,
     "radius must be >= 0"),
    (cm.MoveL([500, 0, 500, 0, 180, 0], [100, NONE], [200, NONE], time=-1), 1001,
     "time must be >= 0"),
    (cm.MoveJX([2000, 0, 500, 0, 180, 0], [30] * 6, [60] * 6, sol=2), 1001, "no IK solution"),
    (cm.MoveC([0, 50, 0, 0, 0, 0], [0, 50, 0, 0, 0, 0], [50, NONE], [100, NONE],
              mod=cm.REL), 1001, "collinear"),
    (cm.MoveL([500, 0, 500, 0, 180, 0], [100, NONE], [200, NONE], ref=150), 1001,
     "user frame 150 is not set"),
    (cm.MoveJ(HOME, [30] * 6, [60] * 6, time=0.01, mod=cm.REL), 1001, None),
])
def test_bad_input_fails_with_doosans_type_and_nothing_moves(h, cmd, etype, words):
    if words is None:          # 90 deg in 10 ms: over joint3's speed limit
        cmd = cm.MoveJ([0, 0, -45, 0, 0, 0], [30] * 6, [60] * 6, time=0.01, mod=cm.REL)
        words = "too short"
    tid = motions(h).submit(cmd)
    st, got_type, reason = motions(h).wait(tid, UNTIL_STARTED, 60.0)
    assert st == FAILED and got_type == etype and words in reason, reason
    h.step(3)
    q = np.degrees([s.data for s in h.read_all("qRef")])
    assert np.abs(q - HOME).max() < 1e-9


def test_operation_speed_scales_the_clock_not_the_path(h):
    start = np.array(h.comp.service.calls.pose(0, 0)[2][:3])
    goal = start + [0.0, 200.0, 0.0]
    h.comp.stream.set_speed(0.5, 0.0)
    tid = submit(h, cm.MoveL(list(goal) + [0, 180, 0], [100.0, NONE], [400.0, NONE]))
    p = tcp(h, run(h, tid))
    speed = np.linalg.norm(np.diff(p, axis=0), axis=1) / DT
    assert speed.max() == pytest.approx(50.0, rel=0.01)
    assert np.linalg.norm(p[-1] - goal) < 1e-6
    assert np.abs(p[:, 0] - start[0]).max() < 0.1


def test_spiral_and_periodic(h):
    x0 = h.comp.service.calls.pose(0, 0)[2]
    start, z = np.array(x0[:3]), rot_zyz(*x0[3:6])[:, 2]      # the tool's z axis
    tid = submit(h, cm.MoveSpiral(2.0, 20.0, 10.0, [50.0, 50.0], [200.0, 200.0]))
    p = tcp(h, run(h, tid))
    d = p[-1] - start
    assert d @ z == pytest.approx(10.0, abs=1e-3)             # lmax along the axis
    assert np.linalg.norm(d - (d @ z) * z) == pytest.approx(20.0, abs=1e-3)   # rmax
    here = p[-1]
    tid = submit(h, cm.MovePeriodic([10.0, 0, 0, 0, 0, 0], [0.5] * 6, 0.25, 3))
    p = tcp(h, run(h, tid))
    assert len(p) == pytest.approx(1.5 * RATE, abs=1)
    assert np.linalg.norm(p[-1] - here) < 1e-6
    assert np.abs(p[:, 0] - here[0]).max() == pytest.approx(10.0, abs=0.05)


@pytest.mark.slow    # IK of a path through a singularity, damped steps: seconds
@pytest.mark.parametrize("mode, rate", [("avoid", 100.0), ("avoid", 1000.0),
                                        ("task_stop", 100.0)])
def test_a_path_from_a_wrist_singularity(mode, rate):
    """Joint 5 at 0 (the wrist's axes 4 and 6 in line) and a motion that tilts the tool at
    once: DR_AVOID leaves the path a little within the joints' speed limits and says by how
    much, at 100 Hz (IK every cycle) and 1 kHz (IK knots 10 ms apart, the spline between
    them too fast there: solved cycle by cycle); DR_TASK_STOP refuses the motion before it
    moves. (doosan-robot2's dsr_service_motion_simple.py does this: movesx after movesj.)"""
    # no limit on the planning time (plan_timeout, tested elsewhere): on a loaded machine
    # this path's damped IK took the worker longer than the default 30 s
    h = Harness(BlendingPlanner, rate=rate, params={"plan_timeout": 0.0})
    try:
        h.activate()
        h.read_all("qRef")
        singular = [20.0, 20.0, 40.0, 20.0, 0.0, 90.0]
        run(h, submit(h, cm.MoveJ(singular, [60.0] * 6, [120.0] * 6)), limit=200000)
        h.comp.arm.avoid = mode == "avoid"
        tid = motions(h).submit(cm.MoveSX([[600, 600, 600, 0, 175, 0]], [100.0, NONE],
                                          [100.0, NONE]))
        st, etype, reason = motions(h).wait(tid, UNTIL_STARTED, 120.0)
        if mode == "avoid":
            assert st == STARTED, reason
            note = motions(h).status(tid)[3]
            assert "left the path by up to" in note and "DR_AVOID" in note
            q = run(h, tid, limit=200000)
            assert state(h, tid) == DONE
            assert np.linalg.norm(tcp(h, q[-1])[0] - [600, 600, 600]) < 1e-6
            step = np.abs(np.diff(q, axis=0)) / (h.comp.arm.max_velocity / rate)
            assert step.max() <= 1.05 + 1e-6, np.unravel_index(np.argmax(step), step.shape)
        else:
            assert st == FAILED and etype == 1001 and "IK branch change" in reason, reason
    finally:
        h.close()
