"""The gait generator (autobalancer.gait) on its own, without physics: the cart-table ZMP
inside the support polygon all along a walk, the feet and CoM where the plan says, swing
feet within their height, the stop within two steps, velocity walking, determinism."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rtcf_components.autobalancer.footsteps import (Pose2, StrideLimits, first_leg_for,
                                                    plan_to)
from rtcf_components.autobalancer.gait import GaitGenerator, GaitParams
from rtcf_components.autobalancer.lipm import preview_gains

NAO = StrideLimits(0.04, 0.04, 0.349, 0.04, 0.012, 0.1, 0.05)
FEET = {"lleg": Pose2(0.0, 0.05, 0.0), "rleg": Pose2(0.0, -0.05, 0.0)}
# the simulated NAO's sole (model/sim/nao_v5.xml: a 160 x 80 mm box), sole frame, left foot
SOLE_X = (-0.055, 0.105)
SOLE_Y_LEFT = (-0.0366, 0.0434)
PARAMS = GaitParams(start_hold=0.5)


@pytest.fixture(scope="module")
def gains():
    return preview_gains(0.01, 0.27)


def corners(leg: str, p: Pose2) -> np.ndarray:
    ylo, yhi = SOLE_Y_LEFT if leg == "lleg" else (-SOLE_Y_LEFT[1], -SOLE_Y_LEFT[0])
    pts = []
    for x in SOLE_X:
        for y in (ylo, yhi):
            q = p.compose(Pose2(x, y, 0.0))
            pts.append((q.x, q.y))
    return np.array(pts)


def inside_hull(pt, pts) -> float:
    """Signed distance of pt to the convex hull of pts (< 0 inside) [m]."""
    p = sorted(map(tuple, pts))

    def cross(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])
    lower, upper = [], []
    for q in p:                                   # Andrew's monotone chain, counter-clockwise
        while len(lower) >= 2 and cross(lower[-2], lower[-1], q) <= 0:
            lower.pop()
        lower.append(q)
    for q in reversed(p):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], q) <= 0:
            upper.pop()
        upper.append(q)
    hull = lower[:-1] + upper[:-1]
    d = -math.inf
    for a, b in zip(hull, hull[1:] + hull[:1]):
        ex, ey = b[0] - a[0], b[1] - a[1]
        norm = math.hypot(ex, ey)
        d = max(d, (ey * (pt[0] - a[0]) - ex * (pt[1] - a[1])) / norm)   # outward normal
    return d


def walk(gains, goal: Pose2, params=PARAMS):
    gg = GaitGenerator(gains, params, NAO, FEET, (0.02, 0.0))
    gg.queue(plan_to(FEET, goal, first_leg_for(goal.y, goal.theta), NAO, params.step_time,
                     params.step_height))
    log = []
    while gg.walking and len(log) < 10000:
        gg.tick()
        log.append((gg.zmp.copy(), dict(gg.feet), dict(gg.foot_z), dict(gg.contact),
                    gg.com[0].copy(), gg.zmp_ref.copy()))
    return gg, log


@pytest.mark.parametrize("goal", [Pose2(1.0, 0, 0), Pose2(0, 0.3, 0), Pose2(0, 0, math.pi / 2),
                                  Pose2(0.3, -0.2, -1.0)],
                         ids=["forward", "sideways", "turn", "mixed"])
def test_cart_table_zmp_stays_in_the_support_polygon(gains, goal):
    gg, log = walk(gains, goal)
    worst = -math.inf
    for zmp, feet, fz, contact, _, _ in log:
        pts = np.vstack([corners(leg, feet[leg]) for leg in ("lleg", "rleg") if contact[leg]])
        worst = max(worst, inside_hull(zmp, pts))
    print(f"\n{goal}: {len(log) * 0.01:.2f} s, worst ZMP margin {-worst * 1e3:.1f} mm inside")
    assert worst < -0.005                     # at least 5 mm inside the support polygon
    # the feet end in the stance around the goal, the CoM over its middle
    for leg, y in (("lleg", 0.05), ("rleg", -0.05)):
        want = goal.compose(Pose2(0.0, y, 0.0))
        assert gg.feet[leg].distance(want) < 1e-9
    centre = goal.compose(Pose2(PARAMS.zmp_offset_x, 0.0, 0.0))
    assert math.hypot(log[-1][4][0] - centre.x, log[-1][4][1] - centre.y) < 0.01


def test_swing_feet_stay_within_the_step_height(gains):
    _, log = walk(gains, Pose2(0.4, 0, 0))
    heights = [fz[leg] for _, _, fz, contact, _, _ in log for leg in fz if not contact[leg]]
    assert max(heights) == pytest.approx(PARAMS.step_height)
    for _, _, fz, contact, _, _ in log:
        assert all(fz[leg] == 0.0 for leg in fz if contact[leg])
        assert contact["lleg"] or contact["rleg"]


def test_walks_are_repeatable(gains):
    _, a = walk(gains, Pose2(0.3, 0.1, 0.5))
    _, b = walk(gains, Pose2(0.3, 0.1, 0.5))
    assert len(a) == len(b)
    assert all(np.array_equal(x[0], y[0]) and np.array_equal(x[4], y[4]) for x, y in zip(a, b))


def test_stop_in_velocity_mode_lands_at_most_two_more_steps(gains):
    gg = GaitGenerator(gains, PARAMS, NAO, FEET, (0.02, 0.0))
    gg.set_velocity(0.1, 0.0, 0.0)
    for _ in range(300):                           # 3 s of walking
        gg.tick()
    assert gg.walking and gg.com[1, 0] > 0.05       # moving forward
    landed_before = gg.done_index
    gg.stop()
    for _ in range(1000):
        if not gg.walking:
            break
        gg.tick()
    assert not gg.walking
    assert gg.done_index - landed_before <= 2
    l, r = gg.feet["lleg"], gg.feet["rleg"]
    assert abs(l.x - r.x) < 1e-9 and abs(l.y - r.y - 0.1) < 1e-9      # feet side by side


def test_new_velocity_replaces_the_planned_steps(gains):
    gg = GaitGenerator(gains, PARAMS, NAO, FEET, (0.02, 0.0))
    gg.set_velocity(0.1, 0.0, 0.0)
    for _ in range(200):
        gg.tick()
    gg.set_velocity(0.0, 0.0, 0.3)                 # turn on the spot instead
    for _ in range(400):
        gg.tick()
    theta = gg.feet["lleg"].theta
    assert theta > 0.5


def test_the_polygon_check_itself():
    pts = corners("lleg", FEET["lleg"])
    assert inside_hull((0.02, 0.05), pts) == pytest.approx(-0.0366)   # 36.6 mm from the inner edge
    assert inside_hull((0.2, 0.05), pts) == pytest.approx(0.095)
