"""BlendingPlanner core: worked examples of blended moves (each with its length and
duration), the refusals, the speed profile, continuity and constant speed along the blended
path."""

import math

import numpy as np
import pytest

from rtcf_components.blending_planner.geometry import (pose_from_posx, posx_from_pose, rot_from_quat, rot_zyz,
                                       zyz_from_rot)
from rtcf_components.blending_planner.planner import DR_COND_NONE, Request, plan

ORIGIN = (np.zeros(3), np.eye(3))
NONE2 = DR_COND_NONE


def line(x, y, z=0.0, r=0.0, abc=(0.0, 0.0, 0.0)):
    return [x, y, z, *abc] + [0.0] * 6 + [0, r]


def circle(via, end, r=0.0, abc=(0.0, 0.0, 0.0)):
    return [*via, *abc, *end, *abc, 1, r]


def req(segs, v=100.0, a=200.0, **kw):
    kw.setdefault("vel", [v, NONE2])
    kw.setdefault("acc", [a, NONE2])
    return Request(segs, kw.pop("pos_cnt", len(segs)), **kw)


def ok(r, start=ORIGIN, frames=None):
    res = plan(r, start, frames)
    assert res.ok, res.reason
    return res.plan


SQUARE = [line(100, 0, r=20), line(100, 100, r=20), line(0, 100, r=20), line(0, 0)]
TRIANGLE = [line(300, 0, r=30), line(150, 150 * math.sqrt(3), r=30), line(0, 0)]


# -- worked examples -------------------------------------------------------------------------
def test_example1_one_line():
    p = ok(req([line(300, 0)]))
    assert p.length == pytest.approx(300.0, abs=1e-9)
    assert p.duration == pytest.approx(3.5, abs=1e-12)
    assert p.t_acc == pytest.approx(0.5)
    assert p.s_at(0.5) == pytest.approx(25.0)           # 0.5 s accelerating over 25 mm
    assert p.s_at(3.0) == pytest.approx(275.0)          # 2.5 s cruising
    assert p.speed_at(1.7) == pytest.approx(100.0)


def test_example1_time_overrides_vel_acc():
    p = ok(req([line(300, 0)], vel=[0.0, 0.0], acc=[0.0, 0.0], time=5.0))
    assert p.duration == 5.0
    assert p.v_peak == pytest.approx(80.0) and p.a == pytest.approx(64.0)
    assert p.s_at(2.5) == pytest.approx(150.0)          # L/2 at T/2
    assert p.t_acc == pytest.approx(1.25)


def test_example1_short_line_is_triangular():
    p = ok(req([line(40, 0)]))
    assert p.duration == pytest.approx(2 * math.sqrt(40 / 200), abs=1e-12)
    assert round(p.duration, 4) == 0.8944
    assert p.v_peak == pytest.approx(math.sqrt(200 * 40))


def test_example2_right_angle():
    p = ok(req([line(200, 0, r=50), line(200, 200)]))
    arcs = [x for x in p.pieces if x.kind == "arc"]
    assert len(arcs) == 1 and arcs[0].rho == pytest.approx(50.0)
    assert arcs[0].length == pytest.approx(78.5398, abs=1e-4)
    assert p.length == pytest.approx(378.5398, abs=0.01)
    assert p.length == pytest.approx(400 - 100 + 25 * math.pi, abs=1e-9)
    assert p.duration == pytest.approx(4.2854, abs=1e-4)


def test_example3_square():
    p = ok(req(SQUARE, v=50, a=100))
    assert p.length == pytest.approx(400 - 3 * (40 - 10 * math.pi), abs=1e-9)
    assert p.length == pytest.approx(374.2478, abs=0.01)
    assert p.duration == pytest.approx(7.9850, abs=1e-4)


def test_example4_triangle():
    p = ok(req(TRIANGLE))
    arcs = [x for x in p.pieces if x.kind == "arc"]
    assert [a.rho for a in arcs] == pytest.approx([17.3205, 17.3205], abs=1e-4)
    assert [a.length for a in arcs] == pytest.approx([36.2760, 36.2760], abs=1e-4)
    assert p.length == pytest.approx(852.5520, abs=0.01)
    assert p.duration == pytest.approx(9.0255, abs=1e-4)


def test_example5_half_circle():
    p = ok(req([circle((100, 100, 0), (200, 0, 0))], v=50, a=100))
    arc = p.pieces[0]
    assert arc.c == pytest.approx([100, 0, 0]) and arc.rho == pytest.approx(100.0)
    assert arc.sweep == pytest.approx(math.pi)
    assert p.length == pytest.approx(314.1593, abs=1e-4)
    assert p.duration == pytest.approx(6.7832, abs=1e-4)
    mid = p.sample(p.duration / 2)                      # 3 samples: start, middle, end
    assert mid.pos[1] == pytest.approx([100, 100, 0], abs=1e-9)   # passes through the via
    assert mid.pos[2] == pytest.approx([200, 0, 0], abs=1e-9)


def test_example6_relative_equals_absolute():
    start = (np.array([400.0, 0, 300]), np.eye(3))
    rel = ok(req([line(100, 0, 0, r=10), line(0, 100, 0)], mode=1), start)
    ab = ok(req([line(500, 0, 300, r=10), line(500, 100, 300)]), start)
    assert rel.length == pytest.approx(ab.length, abs=1e-12)
    assert rel.targets[0][0] == pytest.approx([500, 0, 300])
    assert rel.targets[1][0] == pytest.approx([500, 100, 300])
    assert rel.sample(0.01).pos == pytest.approx(ab.sample(0.01).pos, abs=1e-9)


def test_relative_circle_pos2_is_relative_to_pos1():
    p = ok(req([circle((100, 100, 0), (100, -100, 0))], mode=1, v=50, a=100))
    assert p.targets[0][0] == pytest.approx([200, 0, 0])
    assert p.length == pytest.approx(100 * math.pi)


# -- 4.5 profile details ------------------------------------------------------------------------
def test_sampling_ends_exactly_at_the_target_in_whole_cycles():
    p = ok(req(SQUARE, v=50, a=100))
    sm = p.sample(0.01)
    assert len(sm) == math.ceil(7.9850 / 0.01 - 1e-9) + 1 == 800
    assert sm.t[-1] == pytest.approx(p.duration)
    assert sm.pos[-1] == pytest.approx([0, 0, 0], abs=1e-9)
    assert sm.pos[0] == pytest.approx([0, 0, 0], abs=1e-12)
    assert sm.speed[0] == 0 and sm.speed[-1] == pytest.approx(0, abs=1e-9)


@pytest.mark.parametrize("segs", [SQUARE, TRIANGLE, [
    line(100, 0, r=30), circle((200, 100, 0), (300, 0, 0), r=40), line(300, -200, r=20),
    circle((200, -300, 0), (100, -200, 0), r=10), line(0, 0)]],
    ids=["square", "triangle", "lines-and-circles"])
def test_speed_is_constant_across_junctions(segs):
    p = ok(req(segs, v=100, a=1000))
    dt = 0.0005
    sm = p.sample(dt)
    speed = np.linalg.norm(np.diff(sm.pos, axis=0), axis=1) / dt
    cruise = (sm.t[:-1] >= p.t_acc) & (sm.t[1:] <= p.duration - p.t_acc)
    assert cruise.sum() > 100
    assert np.all(np.abs(speed[cruise] / 100.0 - 1.0) < 1e-3)


@pytest.mark.parametrize("segs", [SQUARE, [
    line(100, 0, r=30), circle((200, 100, 0), (300, 0, 0), r=40), line(300, -200, r=20),
    circle((200, -300, 0), (100, -200, 50), r=10), line(0, 0, 20)]])
def test_position_and_tangent_continuous_at_blend_boundaries(segs):
    p = ok(req(segs))
    for a, b in zip(p.pieces, p.pieces[1:]):
        end = a.points(np.array([a.length]))[0]
        beg = b.points(np.array([0.0]))[0]
        assert np.linalg.norm(end - beg) < 1e-9
        assert np.linalg.norm(a.tangent(a.length) - b.tangent(0.0)) < 1e-9


def test_hermite_blend_length_is_numeric_within_2_percent():
    # circle then line: the blend is a Hermite curve; its tabulated length agrees with a dense
    # polyline, and lies between the chord of the cut points and (within 2 %) the two legs
    # through the junction
    p = ok(req([circle((100, 100, 0), (200, 0, 0), r=30), line(200, -200)]))
    herm = [x for x in p.pieces if x.kind == "hermite"][0]
    pts = herm.points(np.linspace(0, herm.length, 20001))
    polyline = np.linalg.norm(np.diff(pts, axis=0), axis=1).sum()
    assert herm.length == pytest.approx(polyline, rel=1e-4)
    chord = np.linalg.norm(pts[-1] - pts[0])
    assert chord < herm.length < 1.02 * 60.0


def test_angular_proportional_orientation_slerps_per_segment():
    abc = (0.0, 90.0, 0.0)
    p = ok(req([line(200, 0, r=20), line(200, 200, abc=abc)]))
    sm = p.sample(0.01)
    assert rot_from_quat(sm.quat[0]) == pytest.approx(np.eye(3), abs=1e-12)
    assert rot_from_quat(sm.quat[-1]) == pytest.approx(rot_zyz(*abc), abs=1e-9)
    # the first segment keeps the start orientation: nothing turns before its blend
    first = sm.s < 180.0
    assert np.all(np.abs(sm.quat[first] - [1, 0, 0, 0]) < 1e-12)
    angles = 2 * np.degrees(np.arccos(np.clip(sm.quat[:, 0], -1, 1)))
    assert np.all(np.diff(angles) >= -1e-9)              # monotone turn
    assert p.rotation == pytest.approx(90.0)


def test_positive_angular_speed_can_set_the_duration():
    # 90 deg at 10 deg/s takes longer than 200 mm at 100 mm/s: T = T_rot
    p = ok(req([line(200, 0, abc=(0, 90, 0))], vel=[100, 10], acc=[200, 20]))
    assert p.duration == pytest.approx(90 / 10 + 10 / 20)
    assert p.s_at(p.duration) == pytest.approx(200.0)
    q = ok(req([line(200, 0, abc=(0, 90, 0))], vel=[100, NONE2], acc=[200, NONE2]))
    assert q.duration == pytest.approx(2.5)


def test_front_end_sentinels_are_accepted():
    r = plan(req(SQUARE, vel=[50, -10000.0], acc=[100, -10000.0]), ORIGIN)
    assert r.ok and r.plan.duration == pytest.approx(7.9850, abs=1e-4)


# -- frames -------------------------------------------------------------------------------------
def test_tool_frame_is_fixed_at_the_start_pose():
    start = (np.array([400.0, 0, 300]), rot_zyz(90, 0, 0))     # tool x = base y
    p = ok(req([line(100, 0, 0)], ref=1), start)
    assert p.targets[0][0] == pytest.approx([400, 100, 300])
    assert p.targets[0][1] == pytest.approx(rot_zyz(90, 0, 0))
    q = ok(req([line(100, 0, 0, r=10), line(0, 100, 0)], ref=1, mode=1), start)
    assert q.targets[0][0] == pytest.approx([400, 100, 300])
    assert q.targets[1][0] == pytest.approx([300, 100, 300])     # tool y = base -x


def test_world_and_user_frames():
    shift = np.eye(4)
    shift[:3, 3] = [1000, 0, 0]
    p = ok(req([line(100, 0, 0)], ref=2), ORIGIN, {2: shift})
    assert p.targets[0][0] == pytest.approx([1100, 0, 0])
    user = np.eye(4)
    user[:3, :3] = rot_zyz(90, 0, 0)
    user[:3, 3] = [0, 0, 100]
    q = ok(req([line(100, 0, 0)], ref=101), ORIGIN, {101: user})
    assert q.targets[0][0] == pytest.approx([0, 100, 100])


def test_zyz_round_trip():
    for abc in [(10, 20, 30), (-170, 45, 100), (0, 0, 0), (30, 180, 0)]:
        p, r = pose_from_posx([1, 2, 3, *abc])
        assert rot_zyz(*zyz_from_rot(r)) == pytest.approx(r, abs=1e-12)
        assert posx_from_pose(p, r)[:3] == [1, 2, 3]


# -- 4.4 refusals -------------------------------------------------------------------------------
BAD = {
    "radius 0 on a middle segment": (req([line(100, 0), line(100, 100)]), "radius 0"),
    "duplicated line": (req([line(100, 0, r=10), line(200, 0)]), "duplicated line"),
    "reversal": (req([line(100, 0, r=10), line(0, 0)]), "rapid direction change"),
    "170 deg line-line": (req([line(100, 0, r=10), line(0, 100 * math.tan(math.radians(10)))]),
                          "rapid direction change"),
    "169 deg into a circle": (req([line(100, 0, r=10),
                                   circle((50, 5, 0), (0, 0, 0))]), "rapid direction change"),
    "posCnt 0": (req([], pos_cnt=0), "posCnt must be 1..50"),
    "posCnt 51": (req([line(10 * (k % 2), 10 * k, r=1) for k in range(51)]),
                  "posCnt must be 1..50"),
    "posCnt mismatch": (req([line(100, 0)], pos_cnt=2), "posCnt is 2 but 1 segments"),
    "13 numbers": (req([line(100, 0)[:13]]), "segment 0 has 13 numbers"),
    "type 2": (req([line(100, 0)[:12] + [2, 0]]), "type must be 0 (LINE) or 1 (CIRCLE), got 2"),
    "vel 0": (req([line(100, 0)], v=0), "vel[0] (linear) must be > 0"),
    "acc negative": (req([line(100, 0)], a=-1), "acc[0] (linear) must be > 0"),
    "angular vel 0": (req([line(100, 0)], vel=[100, 0]), "vel[1] (angular) must not be 0"),
    "angular acc 0": (req([line(100, 0)], acc=[200, 0]), "acc[1] (angular) must not be 0"),
    "time < 0": (req([line(100, 0)], time=-1.0), "time must be >= 0"),
    "ref 3": (req([line(100, 0)], ref=3), "ref must be 0 (BASE)"),
    "ref 250": (req([line(100, 0)], ref=250), "got 250"),
    "unconfigured user frame": (req([line(100, 0)], ref=150), "user frame 150 is not configured"),
    "mode 2": (req([line(100, 0)], mode=2), "mode must be 0 (ABSOLUTE) or 1 (RELATIVE), got 2"),
    "syncType 2": (req([line(100, 0)], sync_type=2), "syncType must be 0 (SYNC) or 1 (ASYNC)"),
    "NaN": (req([line(math.nan, 0)]), "segment 0[0] is not finite"),
    "text in a segment": (req([line(1, 0)[:5] + ["x"] + line(1, 0)[6:]]),
                          "segment 0[5] is not a number"),
    "segment not a list": (Request([5.0], 1, [100, -1], [100, -1]), "segment 0 must be a"),
    "vel not a list": (Request([line(1, 0)], 1, 100.0, [100, -1]), "vel must be a sequence"),
    "collinear circle": (req([circle((100, 0, 0), (200, 0, 0))]), "collinear"),
    "coincident circle": (req([circle((100, 0, 0), (100, 0, 0))]), "coincide"),
    "zero-length line": (req([line(0, 0)]), "coincides with the segment start"),
    "overlapping blend zones": (req([line(100, 0, r=60), line(100, 100, r=60), line(0, 100)]),
                                "blend zones overlap"),
    "negative radius": (req([line(100, 0, r=-5), line(100, 100)]), "radius must be >= 0"),
}


@pytest.mark.parametrize("name", list(BAD))
def test_invalid_requests_are_refused_with_a_reason(name):
    r, words = BAD[name]
    res = plan(r, ORIGIN)
    assert not res.ok and res.plan is None
    assert words in res.reason, res.reason


def test_circle_and_radius_errors_carry_the_doosan_codes():
    assert plan(BAD["collinear circle"][0], ORIGIN).code == 1204
    assert plan(BAD["radius 0 on a middle segment"][0], ORIGIN).code == 1205
    assert plan(BAD["overlapping blend zones"][0], ORIGIN).code == 1205


def test_last_radius_is_ignored_and_angles_legal_below_160():
    p = ok(req([line(100, 0, r=10), line(100, 100, r=500)]))     # last radius ignored
    assert p.targets[-1][0] == pytest.approx([100, 100, 0])
    # a pentagram corner (144 deg) is legal
    ang = math.radians(144)
    ok(req([line(100, 0, r=5), line(100 - 100 * math.cos(ang) * -1, 100 * math.sin(ang))]))


def test_time_given_ignores_zero_vel_and_acc():
    assert plan(req([line(100, 0)], vel=[0, 0], acc=[0, 0], time=2.0), ORIGIN).ok
