"""Footsteps: planar foot poses, stride limits, and the planner behind goPos / moveTo.

Pure core: imports neither rtcf nor omniORB. Metres and radians; a foot pose is the sole
frame's (x, y, theta) on the ground, world frame. "lleg" and "rleg" are hrpsys's leg names.

A step is legal when the swing foot lands, seen from the support foot's sole frame, within the
stride limits around the nominal stance (the other foot at ``2 * half_width`` to its side,
parallel): ``forward`` / ``backward`` along x, ``outside`` / ``inside`` along y (outside:
away from the support foot), ``outside_theta`` / ``inside_theta`` (outside: the toes turning
away from the support foot). hrpsys-base's GaitGeneratorParam.stride_parameter carries the
same six numbers (forward x, outside y, outside theta, backward x, inside y, inside theta:
idl/AutoBalancerService.idl), NAOqi's move config the NAO values (MaxStepX, MaxStepY,
MaxStepTheta: naoqi_modules/walkconfig.py).

``plan_to`` walks the feet from their current poses to the nominal stance at a goal: each
step sends the swing foot toward its place at the goal, the move scaled down as a whole (a
straight path) until it is within the limits; the legs alternate until both feet are there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Iterable, Sequence

LEGS = ("lleg", "rleg")
MAX_STEPS = 2000          # a plan longer than this is refused (a goal too far away)
EPS = 1e-9


class FootstepError(ValueError):
    """A footstep list or goal that cannot be walked; the message says which and why."""


def wrap(a: float) -> float:
    """An angle in (-pi, pi]."""
    a = math.fmod(a + math.pi, 2.0 * math.pi)
    if a <= 0.0:
        a += 2.0 * math.pi
    return a - math.pi


@dataclass(frozen=True)
class Pose2:
    """A planar pose: x, y [m], theta [rad]."""

    x: float = 0.0
    y: float = 0.0
    theta: float = 0.0

    def compose(self, other: "Pose2") -> "Pose2":
        """self * other (other expressed in self's frame)."""
        c, s = math.cos(self.theta), math.sin(self.theta)
        return Pose2(self.x + c * other.x - s * other.y, self.y + s * other.x + c * other.y,
                     wrap(self.theta + other.theta))

    def inverse(self) -> "Pose2":
        c, s = math.cos(self.theta), math.sin(self.theta)
        return Pose2(-c * self.x - s * self.y, s * self.x - c * self.y, wrap(-self.theta))

    def relative(self, other: "Pose2") -> "Pose2":
        """``other`` seen from self's frame: self^-1 * other."""
        return self.inverse().compose(other)

    def distance(self, other: "Pose2") -> float:
        return math.hypot(self.x - other.x, self.y - other.y)


def mid_pose(a: Pose2, b: Pose2) -> Pose2:
    """The pose halfway between two feet (position average, heading bisector)."""
    return Pose2(0.5 * (a.x + b.x), 0.5 * (a.y + b.y),
                 wrap(a.theta + 0.5 * wrap(b.theta - a.theta)))


@dataclass(frozen=True)
class Footstep:
    """One step: ``leg`` lands at ``pose`` (world), taking ``time`` [s] with its sole
    ``height`` [m] above the ground at most (0: the foot is set down where it stands)."""

    leg: str
    pose: Pose2
    time: float
    height: float


@dataclass(frozen=True)
class StrideLimits:
    """The step limits around the nominal stance [m, m, rad, m, m, rad] and the stance's half
    width [m] (hip centre to sole centre, sideways)."""

    forward: float
    outside: float
    outside_theta: float
    backward: float
    inside: float
    inside_theta: float
    half_width: float

    def __post_init__(self):
        for k in ("forward", "outside", "outside_theta", "backward", "inside", "inside_theta",
                  "half_width"):
            v = getattr(self, k)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0.0):
                raise FootstepError(f"stride limit {k}: expected a finite number >= 0, got {v!r}")
        if self.half_width <= 0.0 or self.inside >= 2.0 * self.half_width:
            raise FootstepError(f"stride limits: inside {self.inside:g} m must be less than "
                                f"the stance width {2 * self.half_width:g} m")
        if self.forward + self.backward <= 0.0 and self.outside + self.inside <= 0.0 and \
                self.outside_theta + self.inside_theta <= 0.0:
            raise FootstepError("stride limits: every limit is 0, no step can move")

    def as_hrpsys(self) -> list[float]:
        """stride_parameter as hrpsys orders it: [forward x, outside y, outside theta [deg],
        backward x, inside y, inside theta [deg]]."""
        return [self.forward, self.outside, math.degrees(self.outside_theta), self.backward,
                self.inside, math.degrees(self.inside_theta)]


def nominal(leg: str, half_width: float) -> Pose2:
    """A foot's place in the stance, seen from the stance's middle."""
    return Pose2(0.0, half_width if leg == "lleg" else -half_width, 0.0)


def other(leg: str) -> str:
    return "rleg" if leg == "lleg" else "lleg"


def step_delta(support_leg: str, support: Pose2, landing: Pose2,
               half_width: float) -> tuple[float, float, float]:
    """The landing's offset from the nominal place next to the support foot, in the support
    foot's frame, signed so that y and theta are positive outward (away from the support)."""
    rel = support.relative(landing)
    side = 1.0 if support_leg == "rleg" else -1.0      # the swing foot's outward direction
    return rel.x, side * (rel.y - side * 2.0 * half_width), side * rel.theta


def check_step(support_leg: str, support: Pose2, landing: Pose2, lim: StrideLimits,
               tol: float = 1e-6) -> str:
    """"" when the step from ``support`` to ``landing`` (the other leg) is within the
    limits, else the reason."""
    dx, dy, dth = step_delta(support_leg, support, landing, lim.half_width)
    swing = other(support_leg)
    why = []
    if dx > lim.forward + tol:
        why.append(f"{dx:.4f} m forward > {lim.forward:g}")
    if -dx > lim.backward + tol:
        why.append(f"{-dx:.4f} m backward > {lim.backward:g}")
    if dy > lim.outside + tol:
        why.append(f"{dy:.4f} m outward > {lim.outside:g}")
    if -dy > lim.inside + tol:
        why.append(f"{-dy:.4f} m inward > {lim.inside:g}")
    if dth > lim.outside_theta + tol:
        why.append(f"{math.degrees(dth):.2f} deg turned out > "
                   f"{math.degrees(lim.outside_theta):.2f}")
    if -dth > lim.inside_theta + tol:
        why.append(f"{math.degrees(-dth):.2f} deg turned in > "
                   f"{math.degrees(lim.inside_theta):.2f}")
    return f"{swing} from {support_leg}: {', '.join(why)}" if why else ""


def check_steps(feet: dict, steps: Sequence[Footstep], lim: StrideLimits) -> None:
    """Raise FootstepError naming the first step outside the limits (or not alternating
    with the foot it leaves). ``feet``: {"lleg": Pose2, "rleg": Pose2} before the first
    step. Runs in: any thread (pure)."""
    cur = dict(feet)
    for i, s in enumerate(steps):
        if s.leg not in LEGS:
            raise FootstepError(f"step {i}: leg {s.leg!r}: expected 'lleg' or 'rleg'")
        for k, v in (("x", s.pose.x), ("y", s.pose.y), ("theta", s.pose.theta),
                     ("time", s.time), ("height", s.height)):
            if not math.isfinite(v):
                raise FootstepError(f"step {i} ({s.leg}): {k} is not a finite number: {v!r}")
        sup = other(s.leg)
        why = check_step(sup, cur[sup], s.pose, lim)
        if why:
            raise FootstepError(f"step {i} beyond the stride limits: {why}")
        cur[s.leg] = s.pose


def scaled(d: tuple[float, float, float], lim: StrideLimits) -> float:
    """The largest factor in (0, 1] that puts the move ``d`` (dx, dy, dtheta outward-signed)
    within the limits."""
    f = 1.0
    for v, hi, lo in ((d[0], lim.forward, lim.backward), (d[1], lim.outside, lim.inside),
                      (d[2], lim.outside_theta, lim.inside_theta)):
        bound = hi if v > 0 else lo
        if abs(v) > bound + EPS:
            f = min(f, bound / abs(v)) if abs(v) > EPS else f
    return f


def plan_to(feet: dict, goal: Pose2, first_leg: str, lim: StrideLimits, step_time: float,
            step_height: float) -> list[Footstep]:
    """Footsteps that take the feet from ``feet`` ({"lleg", "rleg": Pose2}, world) to the
    nominal stance around ``goal`` (world), starting with ``first_leg``. Every step is within
    ``lim`` (check_steps passes on the result). Raises FootstepError when the goal needs more
    than MAX_STEPS steps. Runs in: any thread (pure)."""
    if first_leg not in LEGS:
        raise FootstepError(f"first leg {first_leg!r}: expected 'lleg' or 'rleg'")
    target = {leg: goal.compose(nominal(leg, lim.half_width)) for leg in LEGS}
    cur = dict(feet)
    steps: list[Footstep] = []
    leg = first_leg
    done = {l: _at(cur[l], target[l]) for l in LEGS}
    stuck = 0
    while not (done["lleg"] and done["rleg"]):
        if len(steps) >= MAX_STEPS:
            raise FootstepError(f"the goal is more than {MAX_STEPS} steps away")
        sup = other(leg)
        want = target[leg]
        # the nominal place beside the support foot, and the move from there toward the goal
        base = cur[sup].compose(beside(sup, lim.half_width))
        d = step_delta(sup, cur[sup], want, lim.half_width)
        f = scaled(d, lim)
        side = 1.0 if sup == "rleg" else -1.0
        rel = Pose2(f * d[0], side * f * d[1], side * f * d[2])
        landing = base.compose(rel)
        if f < 1.0 and _at(landing, cur[leg]):
            stuck += 1
            if stuck > 4:
                raise FootstepError("the goal cannot be reached within the stride limits "
                                    f"(the feet stop moving at {cur['lleg']}, {cur['rleg']})")
        else:
            stuck = 0
        if f >= 1.0:
            landing = want
        steps.append(Footstep(leg, landing, step_time, step_height))
        cur[leg] = landing
        done[leg] = _at(landing, want)
        done[sup] = _at(cur[sup], target[sup])
        leg = sup
    return steps


def beside(support_leg: str, half_width: float) -> Pose2:
    """The nominal place of the other foot, in the support foot's frame."""
    return Pose2(0.0, 2.0 * half_width if support_leg == "rleg" else -2.0 * half_width, 0.0)


def _at(a: Pose2, b: Pose2, tol: float = 1e-6) -> bool:
    return a.distance(b) <= tol and abs(wrap(a.theta - b.theta)) <= tol


def first_leg_for(dy: float, dtheta: float) -> str:
    """Which leg steps first toward a goal (dy, dtheta) in the stance frame: the one on the
    side the robot moves to (hrpsys goPos: the left leg swings first for y > 0), else the one
    on the side it turns to, else the right leg (hrpsys)."""
    if abs(dy) > EPS:
        return "lleg" if dy > 0 else "rleg"
    if abs(dtheta) > EPS:
        return "lleg" if dtheta > 0 else "rleg"
    return "rleg"


def with_params(steps: Iterable[Footstep], time: float, height: float) -> list[Footstep]:
    return [replace(s, time=time, height=height) for s in steps]
