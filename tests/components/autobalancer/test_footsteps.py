"""The footstep planner (autobalancer.footsteps): every planned step within the stride
limits, the feet ending in the stance at the goal, limits enforced on given steps with a
reason, bad limits and goals refused."""

from __future__ import annotations

import math

import pytest

from rtcf_components.autobalancer.footsteps import (Footstep, FootstepError, Pose2,
                                                    StrideLimits, check_step, check_steps,
                                                    first_leg_for, mid_pose, nominal, plan_to,
                                                    step_delta, wrap)

NAO = StrideLimits(forward=0.04, outside=0.04, outside_theta=0.349, backward=0.04,
                   inside=0.012, inside_theta=0.1, half_width=0.05)
FEET = {"lleg": Pose2(0.0, 0.05, 0.0), "rleg": Pose2(0.0, -0.05, 0.0)}

GOALS = [Pose2(1.0, 0.0, 0.0), Pose2(-0.3, 0.0, 0.0), Pose2(0.0, 0.3, 0.0),
         Pose2(0.0, -0.25, 0.0), Pose2(0.0, 0.0, math.pi / 2), Pose2(0.0, 0.0, -3.0),
         Pose2(0.5, 0.3, 1.0), Pose2(-0.2, 0.4, -2.0), Pose2(0.01, 0.0, 0.0)]


@pytest.mark.parametrize("goal", GOALS, ids=lambda g: f"{g.x:g},{g.y:g},{g.theta:.2f}")
def test_plan_reaches_the_goal_within_the_limits(goal):
    steps = plan_to(FEET, goal, first_leg_for(goal.y, goal.theta), NAO, 0.4, 0.02)
    check_steps(FEET, steps, NAO)                      # raises if any step is beyond
    feet = dict(FEET)
    for i, s in enumerate(steps):
        assert s.leg == ("lleg", "rleg")[(i + (steps[0].leg == "rleg")) % 2]   # alternate
        feet[s.leg] = s.pose
    for leg in ("lleg", "rleg"):
        want = goal.compose(nominal(leg, NAO.half_width))
        assert feet[leg].distance(want) < 1e-6 and abs(wrap(feet[leg].theta - want.theta)) < 1e-6
    mid = mid_pose(feet["lleg"], feet["rleg"])
    assert mid.distance(goal) < 1e-6


def test_step_counts_follow_the_limits():
    # 1 m forward at 4 cm per step: 25 strides and the closing step
    assert len(plan_to(FEET, Pose2(1.0, 0, 0), "rleg", NAO, 0.4, 0.02)) == 26
    # sideways the follow step can only come 1.2 cm inside the stance: 5.2 cm per pair
    n = len(plan_to(FEET, Pose2(0, 0.3, 0), "lleg", NAO, 0.4, 0.02))
    assert 2 * math.ceil(0.3 / 0.052) <= n <= 2 * math.ceil(0.3 / 0.052) + 2


def test_steps_beyond_the_limits_are_named():
    s = FEET["rleg"]
    assert check_step("rleg", s, s.compose(Pose2(0.04, 0.10, 0.0)), NAO) == ""
    why = check_step("rleg", s, s.compose(Pose2(0.10, 0.10, 0.0)), NAO)
    assert "0.1000 m forward > 0.04" in why and why.startswith("lleg from rleg")
    assert "outward" in check_step("rleg", s, s.compose(Pose2(0.0, 0.2, 0.0)), NAO)
    assert "inward" in check_step("rleg", s, s.compose(Pose2(0.0, 0.05, 0.0)), NAO)
    assert "turned out" in check_step("rleg", s, s.compose(Pose2(0.0, 0.1, 0.6)), NAO)
    assert "turned in" in check_step("lleg", FEET["lleg"],
                                     FEET["lleg"].compose(Pose2(0.0, -0.1, 0.3)), NAO)
    with pytest.raises(FootstepError, match="step 1 beyond the stride limits: rleg from lleg"):
        check_steps(FEET, [Footstep("lleg", Pose2(0.04, 0.05, 0), 0.4, 0.02),
                           Footstep("rleg", Pose2(0.3, -0.05, 0), 0.4, 0.02)], NAO)
    with pytest.raises(FootstepError, match="not a finite number"):
        check_steps(FEET, [Footstep("lleg", Pose2(math.nan, 0.05, 0), 0.4, 0.02)], NAO)
    with pytest.raises(FootstepError, match="'arm'"):
        check_steps(FEET, [Footstep("arm", Pose2(0, 0.05, 0), 0.4, 0.02)], NAO)


def test_delta_is_signed_outward_for_either_leg():
    # the left foot 2 cm further out than nominal from the right, and the mirror case
    assert step_delta("rleg", FEET["rleg"], Pose2(0, 0.07, 0.1), 0.05) == pytest.approx(
        (0.0, 0.02, 0.1))
    assert step_delta("lleg", FEET["lleg"], Pose2(0, -0.07, -0.1), 0.05) == pytest.approx(
        (0.0, 0.02, 0.1))


def test_bad_limits_and_unreachable_goals():
    with pytest.raises(FootstepError, match="forward"):
        StrideLimits(-0.1, 0.04, 0.3, 0.04, 0.01, 0.1, 0.05)
    with pytest.raises(FootstepError, match="inside"):
        StrideLimits(0.04, 0.04, 0.3, 0.04, 0.2, 0.1, 0.05)
    with pytest.raises(FootstepError, match="more than"):
        plan_to(FEET, Pose2(200.0, 0, 0), "rleg", NAO, 0.4, 0.02)
    stuck = StrideLimits(0.04, 0.0, 0.3, 0.04, 0.0, 0.1, 0.05)       # no sideways step at all
    with pytest.raises(FootstepError, match="cannot be reached|more than"):
        plan_to(FEET, Pose2(0.0, 0.3, 0.0), "lleg", stuck, 0.4, 0.02)


def test_first_leg_follows_hrpsys():
    assert first_leg_for(0.1, 0.0) == "lleg" and first_leg_for(-0.1, 1.0) == "rleg"
    assert first_leg_for(0.0, 0.5) == "lleg" and first_leg_for(0.0, 0.0) == "rleg"


def test_pose_algebra():
    a, b = Pose2(1.0, 2.0, 0.5), Pose2(-0.3, 0.2, -1.2)
    r = a.relative(a.compose(b))
    assert (r.x, r.y, r.theta) == pytest.approx((b.x, b.y, b.theta))
    assert wrap(3 * math.pi) == pytest.approx(math.pi) and wrap(-math.pi) == pytest.approx(math.pi)
    assert NAO.as_hrpsys() == pytest.approx([0.04, 0.04, math.degrees(0.349), 0.04, 0.012,
                                             math.degrees(0.1)])
