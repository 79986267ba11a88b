"""The BlendingPlanner shell on a stepped EC: durations in cycles, the pose port, SYNC and
ASYNC, refusals that move nothing, stop(), the servant's CORBA-typed answers."""

import math
import threading

import numpy as np
import pytest

from rtcf_components.blending_planner import BlendingPlanner
from rtcf_components.blending_planner.planner import DR_COND_NONE
from rtcf import ReadStatus
from rtcf.testing import Harness

RATE = 100.0
START = [400.0, 0.0, 300.0, 0.0, 180.0, 0.0]     # tool pointing down


def line(x, y, z, r=0.0, abc=(0.0, 180.0, 0.0)):
    return [x, y, z, *abc] + [0.0] * 6 + [0, r]


@pytest.fixture
def h():
    harness = Harness(BlendingPlanner, params={"use_arm": False, "initial_pose": START},
                      rate=RATE)
    harness.activate()
    harness.read_all("tcpPose")
    yield harness
    harness.close()


def svc(h):
    return h.comp.service.core


def move(h, segs, v=100.0, a=200.0, sync=1, **kw):
    return svc(h).move_blending(segs, len(segs), [v, DR_COND_NONE], [a, DR_COND_NONE],
                                kw.get("time", 0.0), kw.get("ref", 0), kw.get("mode", 0), sync)


def run_until_idle(h, limit=10000):
    n = 0
    while h.comp.motion is not None:
        h.step()
        n += 1
        assert n < limit
    return n


def test_async_line_lasts_whole_cycles_and_ends_on_target(h):
    # worked example 1 in RELATIVE mode from the start pose: 300 mm at 100 / 200: 3.5 s
    assert move(h, [line(300, 0, 0, abc=(0, 0, 0))], mode=1)
    assert svc(h).last_error() == ""
    cycles = run_until_idle(h)
    assert cycles == math.ceil(3.5 * RATE)
    poses = h.read_all("tcpPose")
    assert len(poses) == cycles
    last = poses[-1].data.position
    assert (last.x, last.y, last.z) == pytest.approx((0.7, 0.0, 0.3), abs=1e-12)
    assert svc(h).tcp_pose()[:3] == pytest.approx([700, 0, 300], abs=1e-9)
    # speed on the port: 100 mm/s in the middle (metres per cycle)
    xs = np.array([p.data.position.x for p in poses])
    assert np.diff(xs)[150:200] == pytest.approx(0.1 / RATE, rel=1e-9)
    # held at rest afterwards
    h.step(3)
    rest = h.read_all("tcpPose")
    assert len(rest) == 3 and all(p.data.position.x == pytest.approx(0.7) for p in rest)


def test_orientation_on_the_port_is_roll_pitch_yaw(h):
    h.step()
    st, p = h.read_latest("tcpPose")
    assert st is ReadStatus.NEW
    # Rz(0) Ry(180) Rz(0): roll = pi (or -pi), pitch 0, yaw 0 in R = Rz(y) Ry(p) Rx(r)
    o = p.data.orientation
    r = abs(o.r)
    assert (r, o.p % math.pi, abs(o.y) % math.pi) == pytest.approx((math.pi, 0, 0), abs=1e-9)


def test_square_duration_in_cycles(h):
    sq = [line(500, 0, 300, 20), line(500, 100, 300, 20), line(400, 100, 300, 20),
          line(400, 0, 300)]
    assert move(h, sq, v=50, a=100)
    assert run_until_idle(h) == math.ceil(7.9850 * RATE - 1e-6)
    plan, sm = h.comp.last_plan
    assert plan.length == pytest.approx(374.2478, abs=0.01)


def test_sync_returns_when_the_motion_ends(h):
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("r", move(h, [line(500, 0, 300)],
                                                                  sync=0)))
    t.start()
    while h.comp.motion is None and t.is_alive():
        t.join(0.01)
    assert t.is_alive()                     # still moving: SYNC has not returned
    h.step(50)
    assert t.is_alive()
    run_until_idle(h)
    t.join(60)
    assert out["r"] is True


def test_request_while_moving_is_refused_and_changes_nothing(h):
    assert move(h, [line(700, 0, 300)])
    h.step(10)
    before = h.comp.motion
    assert not move(h, [line(400, 200, 300)])
    assert "already running" in svc(h).last_error()
    assert h.comp.motion is before
    run_until_idle(h)
    assert svc(h).tcp_pose()[:3] == pytest.approx([700, 0, 300])


@pytest.mark.parametrize("segs,words", [
    ([line(500, 0, 300), line(500, 100, 300)], "radius 0"),
    ([line(500, 0, 300, 10), line(600, 0, 300)], "duplicated line"),
    ([line(500, 0, 300, 10), line(400, 0, 300)], "rapid direction change"),
])
def test_invalid_request_refused_nothing_moves(h, segs, words):
    assert not move(h, segs)
    assert words in svc(h).last_error()
    h.step(5)
    poses = h.read_all("tcpPose")
    assert all(p.data.position.x == pytest.approx(0.4) for p in poses)
    assert h.comp.last_plan is None


def test_stop_decelerates_and_holds(h):
    assert move(h, [line(1000, 0, 300)], v=100, a=200)
    h.step(200)                                  # cruising at 100 mm/s
    assert svc(h).stop()
    n = run_until_idle(h)
    assert n == math.ceil(0.5 * RATE)            # v / a
    xs = [p.data.position.x for p in h.read_all("tcpPose")]
    travelled = (xs[-1] - xs[-1 - n]) * 1000
    assert travelled == pytest.approx(25.0, abs=1.0)     # v^2 / 2a
    assert not svc(h).stop()                    # nothing moving


def test_sync_stopped_returns_false_with_reason(h):
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("r", move(h, [line(900, 0, 300)],
                                                                  sync=0)))
    t.start()
    while h.comp.motion is None:
        t.join(0.01)
    h.step(20)
    svc(h).stop()
    run_until_idle(h)
    t.join(60)
    assert out["r"] is False and "stopped" in svc(h).last_error()


def test_servant_plan_info(h):
    impl = h.comp.service
    info = impl.getLastPlan()
    assert info.valid is False
    assert move(h, [line(500, 0, 300)], v=100, a=200)
    info = impl.getLastPlan()
    assert info.valid and info.length == pytest.approx(100.0)
    assert info.duration == pytest.approx(100 / 100 + 0.5)
    assert len(info.samples) == math.ceil(1.5 * RATE) + 1
    assert info.samples[-1].pose[:3] == pytest.approx([500, 0, 300])
    assert info.samples[0].speed == 0.0
    assert impl.getTcpPose()[:3] == pytest.approx(START[:3])


def test_user_frame_not_configured_refused(h):
    assert not move(h, [line(10, 0, 0)], ref=150)
    assert "user frame 150 is not configured" in svc(h).last_error()


def test_user_frames_parameter():
    with Harness(BlendingPlanner, params={"use_arm": False, "initial_pose": START,
                                          "user_frames": "101: 400,0,300,0,0,0"},
                 rate=RATE) as hh:
        hh.activate()
        assert move(hh, [line(100, 0, 0, abc=(0, 180, 0))], ref=101)
        run_until_idle(hh)
        assert svc(hh).tcp_pose()[:3] == pytest.approx([500, 0, 300])


def test_bad_user_frames_parameter_fails_initialize():
    with pytest.raises(Exception, match="user_frames entry"):
        Harness(BlendingPlanner, params={"use_arm": False, "user_frames": "7: 1,2,3"})


S3 = 150 * math.sqrt(3)
EXAMPLES = {   # worked examples, TOOL frame at the start pose: (segments, v, a, time, T)
    "1": ([[300, 0, 0]], 100, 200, 0.0, 3.5),
    "1 time": ([[300, 0, 0]], 100, 200, 5.0, 5.0),
    "1 short": ([[40, 0, 0]], 100, 200, 0.0, 2 * math.sqrt(0.2)),
    "2": ([[200, 0, 0, 50], [200, 200, 0]], 100, 200, 0.0, 378.5398 / 100 + 0.5),
    "3": ([[100, 0, 0, 20], [100, 100, 0, 20], [0, 100, 0, 20], [0, 0, 0]], 50, 100, 0.0,
          7.9850),
    "4": ([[300, 0, 0, 30], [150, S3, 0, 30], [0, 0, 0]], 100, 200, 0.0,
          852.5520 / 100 + 0.5),
    "5": ("circle", 50, 100, 0.0, 6.7832),
}


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_worked_examples_last_their_duration_to_one_cycle(h, name):
    pts, v, a, time_, T = EXAMPLES[name]
    if pts == "circle":
        segs = [[100, 100, 0, 0, 0, 0, 200, 0, 0, 0, 0, 0, 1, 0]]
    else:
        segs = [[*p[:3], 0, 0, 0] + [0.0] * 6 + [0, p[3] if len(p) > 3 else 0] for p in pts]
    ok = svc(h).move_blending(segs, len(segs), [v, DR_COND_NONE], [a, DR_COND_NONE], time_,
                              1, 0, 1)
    assert ok, svc(h).last_error()
    cycles = run_until_idle(h)
    assert abs(cycles - T * RATE) <= 1.0
    plan, _ = h.comp.last_plan
    assert plan.duration == pytest.approx(T, abs=1e-4)


def test_world_frame_parameter():
    with Harness(BlendingPlanner, params={"use_arm": False, "initial_pose": START,
                                          "world_frame": [100, 200, 0, 90, 0, 0]},
                 rate=RATE) as hh:
        hh.activate()
        # WORLD (ref 2) x axis = base y axis, origin at (100, 200, 0)
        assert move(hh, [line(0, 300, 300, abc=(-90, 180, 0))], ref=2)
        run_until_idle(hh)
        assert svc(hh).tcp_pose()[:3] == pytest.approx([-200, 200, 300])


def test_stop_in_the_final_ramp_lets_the_motion_end_normally(h):
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("r", move(h, [line(500, 0, 300)],
                                                                  sync=0)))
    t.start()
    while h.comp.motion is None:
        t.join(0.01)
    h.step(int(1.3 * RATE))                     # T = 1.5 s: decelerating from 1.0 s
    assert svc(h).stop()
    run_until_idle(h)
    t.join(60)
    assert out["r"] is True and svc(h).tcp_pose()[:3] == pytest.approx([500, 0, 300])


def test_a_motion_being_planned_counts_as_running_for_wait_motion(h):
    """A client whose moveBlending call timed out while the server still plans, then waits
    (waitMotion, mwait): the planned motion is waited for, not reported done."""
    from rtcf_components.blending_planner.planner import WAIT_DONE, WAIT_RUNNING
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("r", move(h, [line(500, 0, 300)])))
    t.start()
    while svc(h)._not_planning.is_set() and t.is_alive():   # planning waits for a cycle
        t.join(0.001)
    assert svc(h).wait_motion(0.05) == WAIT_RUNNING
    mwait = threading.Thread(target=lambda: out.setdefault("mwait", svc(h).move_wait()))
    mwait.start()
    while t.is_alive():
        h.step()
        t.join(0.01)
    assert out["r"] is True and h.comp.motion is not None
    assert svc(h).wait_motion(0.0) == WAIT_RUNNING
    assert mwait.is_alive()
    run_until_idle(h)
    mwait.join(60)
    assert out["mwait"] is True
    assert svc(h).wait_motion(0.0) == WAIT_DONE


def test_tcp_pose_without_a_reader_is_neither_computed_nor_written(h):
    from rtcf.datatypes import time_parts
    from rtcf.ports import InPort, connect, disconnect
    port = h.comp.ports["tcpPose"]
    writes = port.writes
    disconnect(next(iter(port.connectors)), port)          # the harness's probe goes
    assert not port.in_use()
    assert move(h, [line(30, 0, 0, abc=(0, 0, 0))], mode=1)
    h.step(5)
    assert port.writes == writes                             # nothing written
    late = InPort("late", port.data_type)                    # a reader comes
    connect(port, late, {"subscription_type": "flush"})
    h.step()
    assert late.read() is ReadStatus.NEW and port.writes == writes + 1
    x = late.value.data.position.x                           # this cycle's pose, in metres
    assert x == pytest.approx(svc(h).tcp_pose()[0] / 1000.0, abs=1e-12) and x > 0.4
    assert (late.value.tm.sec, late.value.tm.nsec) == time_parts(h.now - 1 / RATE)  # its cycle
