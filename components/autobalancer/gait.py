"""The gait generator: footsteps -> ZMP reference, CoM (preview control), foot trajectories.

Pure core: imports neither rtcf nor omniORB, reads no clock: one ``tick()`` is one period,
every duration is a whole number of periods (rounded once, when a step is queued), so a walk
is the same sample for sample whatever the machine's speed.

A step of duration T is a double support phase (``double_support_ratio`` T: both feet down,
the ZMP reference moving in a straight line from where it was to the support foot's
centre), then a single support phase (the swing foot lifts, travels and lands; the ZMP
reference stays on the support foot). The first step of a walk starts with ``start_hold``
of standing still and a longer shift (``start_shift``), so the preview controller sees the
shift coming; after the last step the ZMP reference moves back to the middle of the feet in
``finish_shift``. Swing foot: height h (1 - cos 2 pi tau) / 2 over the single support
(tau: its fraction elapsed), the horizontal move a minimum-jerk (Hoff-Arbib) profile over
its middle part (the first and last ``swing_margin`` of the phase go straight up and down).

The CoM follows Kajita's ZMP preview control (lipm.py) of the reference ``horizon`` seconds
ahead. Feet are planar poses (Pose2) on the ground; the swing foot carries a height.
In velocity mode steps are generated as the preview window needs them; ``stop()`` keeps the
step under way, drops the rest and closes with the other foot beside it (two steps at most).
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import Iterable

import numpy as np

from .footsteps import (EPS, LEGS, Footstep, Pose2, StrideLimits, beside, scaled,
                        mid_pose, nominal, other, step_delta, wrap)
from .lipm import PreviewController, PreviewGains


class GaitError(ValueError):
    """A gait parameter or request the generator refuses; nothing changed."""


@dataclass(frozen=True)
class GaitParams:
    """Timing and shape of the gait (the hrpsys GaitGeneratorParam subset that applies)."""

    step_time: float = 0.4                 # [s] default step duration
    step_height: float = 0.02              # [m] default swing height
    double_support_ratio: float = 0.2      # of each step
    start_hold: float = 0.2                # [s] standing before the first shift
    start_shift: float = 0.4               # [s] first ZMP shift to the support foot
    finish_shift: float = 0.4              # [s] last ZMP shift back to the middle
    swing_margin: float = 0.1              # of the single support: straight up / down
    swing_rise: float = 0.3                # of the single support: lift-off / set-down
    zmp_offset_x: float = 0.02             # [m] ZMP reference ahead of the sole origin
    zmp_offset_y: float = 0.0              # [m] ... toward the inside of the foot

    def check(self) -> None:
        for k in ("step_time", "start_shift", "finish_shift"):
            v = getattr(self, k)
            if not (math.isfinite(v) and 0.05 <= v <= 10.0):
                raise GaitError(f"{k}: expected a duration in [0.05, 10] s, got {v!r}")
        if not (math.isfinite(self.start_hold) and 0.0 <= self.start_hold <= 10.0):
            raise GaitError(f"start_hold: expected [0, 10] s, got {self.start_hold!r}")
        if not (math.isfinite(self.step_height) and 0.0 <= self.step_height <= 0.2):
            raise GaitError(f"step_height: expected [0, 0.2] m, got {self.step_height!r}")
        if not (math.isfinite(self.double_support_ratio)
                and 0.05 <= self.double_support_ratio <= 0.9):
            raise GaitError(f"double_support_ratio: expected [0.05, 0.9], got "
                            f"{self.double_support_ratio!r}")
        if not (math.isfinite(self.swing_rise) and 0.05 <= self.swing_rise <= 0.5):
            raise GaitError(f"swing_rise: expected [0.05, 0.5], got {self.swing_rise!r}")
        if not (math.isfinite(self.swing_margin) and 0.0 <= self.swing_margin < 0.5):
            raise GaitError(f"swing_margin: expected [0, 0.5), got {self.swing_margin!r}")
        for k in ("zmp_offset_x", "zmp_offset_y"):
            v = getattr(self, k)
            if not (math.isfinite(v) and abs(v) <= 0.2):
                raise GaitError(f"{k}: expected |value| <= 0.2 m, got {v!r}")


@dataclass
class Phase:
    """A stretch of the timeline: ``n`` periods; the ZMP reference goes linearly from z0 to
    z1; ``step`` is the step it belongs to (its single support swings step.leg)."""

    kind: str                   # "ds" (double support) or "ss" (single support)
    n: int
    z0: np.ndarray
    z1: np.ndarray
    step: Footstep | None
    src: Pose2 | None = None    # ss: where the swing foot lifts off
    index: int = 0              # the step's footstep index (hrpsys numbering)


def minimum_jerk(s: float) -> float:
    """Hoff-Arbib's rest-to-rest profile on [0, 1]."""
    s = min(1.0, max(0.0, s))
    return s * s * s * (10.0 - 15.0 * s + 6.0 * s * s)


class GaitGenerator:
    """Walks the feet and the CoM through queued footsteps. Runs in: owner thread.

    After ``tick()``: ``com`` (3, 2) position / velocity / acceleration on x, y [m, m/s,
    m/s^2]; ``zmp_ref`` (2,) the reference of this period, ``zmp`` (2,) the cart-table ZMP of
    the CoM; ``feet`` {"lleg", "rleg": Pose2} each foot's planar pose, ``foot_z`` {leg:
    height [m]}; ``contact`` {leg: bool}; ``walking``; ``swing_left``, ``support_left``
    [s] (hrpsys controlSwingSupportTime: time to the swing foot's landing, and of support).
    """

    def __init__(self, gains: PreviewGains, params: GaitParams, limits: StrideLimits,
                 feet: dict, com_xy):
        params.check()
        self.gains, self.params, self.limits = gains, params, limits
        self.dt = gains.dt
        self.N = gains.horizon
        self.window = np.zeros((self.N, 2))
        self.pc = PreviewController(gains)
        self.feet = dict(feet)
        self.foot_z = {"lleg": 0.0, "rleg": 0.0}
        self.contact = {"lleg": True, "rleg": True}
        self.zmp_ref = np.zeros(2)
        self.phases: deque[Phase] = deque()
        self.elapsed = 0                 # periods into phases[0]
        self._version = 0                # bumped at every change of the schedule
        self._tl_version = -1            # the schedule the timeline was built for
        self._tl = np.zeros((1, 2))
        self._tl_pos = 0
        self.velocity: tuple[float, float, float] | None = None
        self.next_index = 1              # hrpsys numbering: 0 is the initial support
        self.done_index = 0
        self.stopped_after = 0
        self._planned_feet = dict(feet)
        self._planned_zmp = self.stance_zmp(feet)
        self._last_leg = None            # the leg of the last queued step
        self.reset(feet, com_xy)

    # -- set-up ------------------------------------------------------------------------------
    def reset(self, feet: dict, com_xy) -> None:
        """Standing on ``feet`` with the CoM at rest at ``com_xy``; the ZMP reference at the
        middle of the feet. Clears every queued step."""
        self.feet = dict(feet)
        self.foot_z = {"lleg": 0.0, "rleg": 0.0}
        self.contact = {"lleg": True, "rleg": True}
        self.phases.clear()
        self._version += 1
        self.elapsed = 0
        self.velocity = None
        self._planned_feet = dict(feet)
        self._planned_zmp = self.stance_zmp(feet)
        self._last_leg = None
        self.zmp_ref[:] = self._planned_zmp
        self.pc.reset(np.asarray(com_xy, float), self._planned_zmp)
        self.com = self.pc.state
        self.zmp = self.pc.zmp
        self.swing_left = self.support_left = 0.0

    def set_params(self, params: GaitParams) -> None:
        """New timing for steps queued from now on. Runs in: owner thread."""
        params.check()
        self.params = params

    def foot_zmp(self, leg: str, pose: Pose2) -> np.ndarray:
        """A foot's ZMP reference point (its centre, the offsets in the sole frame)."""
        p = self.params
        oy = -p.zmp_offset_y if leg == "lleg" else p.zmp_offset_y
        c = pose.compose(Pose2(p.zmp_offset_x, oy, 0.0))
        return np.array([c.x, c.y])

    def stance_zmp(self, feet: dict) -> np.ndarray:
        return 0.5 * (self.foot_zmp("lleg", feet["lleg"]) + self.foot_zmp("rleg", feet["rleg"]))

    @property
    def walking(self) -> bool:
        return bool(self.phases) or self.velocity is not None

    @property
    def planned_feet(self) -> dict:
        """The feet after every queued step."""
        return dict(self._planned_feet)

    def _periods(self, seconds: float) -> int:
        return max(1, int(round(seconds / self.dt)))

    # -- queueing ----------------------------------------------------------------------------
    def queue(self, steps: Iterable[Footstep]) -> None:
        """Append steps (already checked against the limits by the caller). A walk that was
        standing starts with the hold and the long first shift; the end shift is added by
        ``tick`` when the queue runs out. Runs in: owner thread."""
        p = self.params
        for s in steps:
            if s.leg not in LEGS:
                raise GaitError(f"leg {s.leg!r}: expected 'lleg' or 'rleg'")
            sup = other(s.leg)
            target = self.foot_zmp(sup, self._planned_feet[sup])
            starting = not self.phases or (len(self.phases) == 1
                                           and self.phases[0].kind == "end")
            self._drop_end()
            if starting:
                if not self.phases and p.start_hold > 0.0:
                    z = self._planned_zmp.copy()
                    self.phases.append(Phase("ds", self._periods(p.start_hold), z, z, None))
                ds = self._periods(max(p.start_shift, p.double_support_ratio * s.time))
            else:
                ds = self._periods(p.double_support_ratio * s.time)
            ss = self._periods((1.0 - p.double_support_ratio) * s.time)
            idx = self.next_index
            self.next_index += 1
            self.phases.append(Phase("ds", ds, self._planned_zmp.copy(), target, s, index=idx))
            self.phases.append(Phase("ss", ss, target, target, s,
                                     src=self._planned_feet[s.leg], index=idx))
            self._planned_feet[s.leg] = s.pose
            self._planned_zmp = target
            self._last_leg = s.leg
            self._version += 1
        self._add_end()

    def _add_end(self) -> None:
        """The final shift back to the middle of the feet (kind "end")."""
        if self.phases and self.phases[-1].kind != "end":
            mid = self.stance_zmp(self._planned_feet)
            self.phases.append(Phase("end", self._periods(self.params.finish_shift),
                                     self._planned_zmp.copy(), mid, None))
            self._version += 1

    def _drop_end(self) -> None:
        if self.phases and self.phases[-1].kind == "end":
            self._version += 1
            if len(self.phases) == 1:           # it is under way: restart from where it is
                ph = self.phases[0]
                z = self._zmp_at(ph, self.elapsed)
                self.phases.pop()
                self._planned_zmp = z
                self.elapsed = 0
            else:
                self.phases.pop()

    def replace_future(self, steps: list[Footstep]) -> None:
        """Keep the step under way (or nothing when standing or only shifting), drop every
        later step, then queue ``steps`` after it. Runs in: owner thread."""
        self.truncate()
        self.queue(steps)

    def kept_feet(self) -> dict:
        """The feet after the step under way (what ``truncate`` would leave planned),
        without changing anything. Runs in: owner thread."""
        return self.truncation()[1]

    def truncation(self):
        """((phases kept, planned ZMP, last leg, next index) or None when there is nothing
        to drop, planned feet) after dropping every step but the one under way, without
        changing anything. Runs in: owner thread."""
        if not self.phases:
            return None, dict(self._planned_feet)
        cur = self.phases[0]
        if cur.kind == "end":                         # already on the way to standing
            return None, dict(self._planned_feet)
        if cur.step is None:                          # the start hold: the walk never began
            return ([], self._zmp_at(cur, self.elapsed), None, self.done_index + 1), \
                dict(self.feet)
        keep = 2 if cur.kind == "ds" else 1           # a step's double support: keep its swing
        kept = [self.phases[i] for i in range(min(keep, len(self.phases)))]
        feet = dict(self.feet)
        last = None
        for ph in kept:
            if ph.kind == "ss":
                feet[ph.step.leg] = ph.step.pose
                last = ph.step.leg
        return (kept, self._zmp_at(kept[-1], kept[-1].n), last, kept[-1].index + 1), feet

    def truncate(self) -> None:
        """Keep the step under way, drop every later one (the planned feet rewound)."""
        plan, feet = self.truncation()
        if plan is None:
            return
        kept, zmp, last, nxt = plan
        self.phases = deque(kept)
        self._version += 1
        if not kept:
            self.elapsed = 0
        self._planned_feet = feet
        self._planned_zmp = zmp
        self._last_leg = last
        self.next_index = nxt
        self._add_end()

    def stop(self) -> None:
        """Stop within two steps: the step under way, then the other foot beside it."""
        self.velocity = None
        self.stopped_after = self.done_index            # steps done when the stop came
        self.truncate()
        if self._last_leg is None:
            return
        leg = other(self._last_leg)
        sup = self._last_leg
        landing = self._planned_feet[sup].compose(beside(sup, self.limits.half_width))
        if not _same(landing, self._planned_feet[leg]):
            self._drop_end()
            self.queue([Footstep(leg, landing, self.params.step_time, self.params.step_height)])

    def set_velocity(self, vx: float, vy: float, vtheta: float) -> None:
        """Walk on at (vx, vy, vtheta) [m/s, m/s, rad/s] in the feet's frame until
        ``stop()``; steps are made as the preview window needs them. A new velocity while
        walking replaces the steps after the one under way."""
        self.velocity = (float(vx), float(vy), float(vtheta))
        self.truncate()
        self._fill_velocity()

    def _queued_periods(self) -> int:
        return sum(ph.n for ph in self.phases if ph.kind != "end") - self.elapsed

    def _fill_velocity(self) -> None:
        """Queue velocity steps until the window is covered."""
        while self.velocity is not None and self._queued_periods() < self.N + \
                self._periods(self.params.step_time):
            self.queue([self._velocity_step()])

    def _velocity_step(self) -> Footstep:
        vx, vy, vth = self.velocity
        p = self.params
        T = p.step_time
        if self._last_leg is None:
            leg = "lleg" if (vy > EPS or (abs(vy) <= EPS and vth > EPS)) else "rleg"
        else:
            leg = other(self._last_leg)
        sup = other(leg)
        mid = mid_pose(self._planned_feet["lleg"], self._planned_feet["rleg"])
        goal = mid.compose(Pose2(vx * T, vy * T, vth * T))     # the middle after this step
        # the swing foot mirrors the support foot through that middle (one foot moving
        # moves the middle half as far), at the stance's width
        s = goal.relative(self._planned_feet[sup])
        want = goal.compose(Pose2(-s.x, nominal(leg, self.limits.half_width).y, -s.theta))
        d = step_delta(sup, self._planned_feet[sup], want, self.limits.half_width)
        f = scaled(d, self.limits)
        side = 1.0 if sup == "rleg" else -1.0
        landing = self._planned_feet[sup].compose(beside(sup, self.limits.half_width)).compose(
            Pose2(f * d[0], side * f * d[1], side * f * d[2]))
        return Footstep(leg, landing, T, p.step_height)

    # -- the cycle ---------------------------------------------------------------------------
    def _zmp_at(self, ph: Phase, k: int) -> np.ndarray:
        a = min(1.0, max(0.0, k / ph.n))
        return ph.z0 + a * (ph.z1 - ph.z0)

    def _fill_window(self) -> None:
        """ZMP reference for the next N periods (the current period + 1 ... + N): a slice of
        the whole schedule's reference, built again only when the schedule changed."""
        if self._tl_version != self._version:
            self._build_timeline()
        i = self._tl_pos
        np.copyto(self.window, self._tl[i: i + self.N])

    def _build_timeline(self) -> None:
        """The reference of every queued period from phases[0]'s first, then N of the last."""
        total = sum(ph.n for ph in self.phases)
        tl = np.empty((total + self.N + 1, 2))
        j = 0
        last = self._planned_zmp
        for ph in self.phases:
            a = (np.arange(1, ph.n + 1) / ph.n)[:, None]
            tl[j: j + ph.n] = ph.z0 + a * (ph.z1 - ph.z0)
            j += ph.n
            last = ph.z1
        tl[j:] = last
        self._tl = tl
        self._tl_pos = self.elapsed
        self._tl_version = self._version

    def tick(self) -> None:
        """Advance one period. Runs in: owner thread."""
        if self.velocity is not None:
            self._fill_velocity()
        self._fill_window()
        self.pc.step(self.window)
        self.zmp_ref[:] = self.window[0]
        self._advance()

    def _advance(self) -> None:
        self.swing_left = self.support_left = 0.0
        if not self.phases:
            return
        self._tl_pos += 1
        ph = self.phases[0]
        self.elapsed += 1
        if ph.kind == "ss":
            self._swing(ph, self.elapsed / ph.n)
            self.swing_left = (ph.n - self.elapsed) * self.dt
        if self.elapsed >= ph.n:
            self.phases.popleft()
            self.elapsed = 0
            if ph.kind == "ss":
                leg = ph.step.leg
                self.feet[leg] = ph.step.pose
                self.foot_z[leg] = 0.0
                self.contact[leg] = True
                self.done_index = ph.index
            if self.phases and self.phases[0].kind == "ss":
                self.contact[self.phases[0].step.leg] = False
            if not self.phases:
                self._planned_feet = dict(self.feet)
                self._planned_zmp = ph.z1.copy()
                self._last_leg = None
                self._version += 1

    def _swing(self, ph: Phase, tau: float) -> None:
        p = self.params
        leg = ph.step.leg
        self.contact[leg] = False
        m = p.swing_margin
        s = minimum_jerk((tau - m) / (1.0 - 2.0 * m)) if m > 0 else minimum_jerk(tau)
        a, b = ph.src, ph.step.pose
        self.feet[leg] = Pose2(a.x + s * (b.x - a.x), a.y + s * (b.y - a.y),
                               wrap(a.theta + s * wrap(b.theta - a.theta)))
        r = p.swing_rise
        up = minimum_jerk(tau / r) if tau < r else 1.0
        down = minimum_jerk((1.0 - tau) / r) if tau > 1.0 - r else 1.0
        self.foot_z[leg] = ph.step.height * min(up, down)

    # -- views -----------------------------------------------------------------------------
    def remaining(self) -> list[Footstep]:
        """The steps not yet landed, in order (the one in the air first)."""
        out = []
        seen = set()
        for ph in self.phases:
            if ph.step is not None and ph.index not in seen:
                seen.add(ph.index)
                out.append(ph.step)
        return out

    def current_step(self) -> tuple[Footstep, Pose2] | None:
        """The step under way (its double support or swing) and where its foot lifts off."""
        for ph in self.phases:
            if ph.step is not None:
                src = ph.src if ph.src is not None else self._src_of(ph)
                return ph.step, src
            if ph.kind == "end":
                return None
        return None

    def _src_of(self, ds: Phase) -> Pose2:
        for ph in self.phases:
            if ph.kind == "ss" and ph.index == ds.index:
                return ph.src
        return self.feet[ds.step.leg]

    def time_left(self) -> float:
        """[s] until the walk ends (the last shift back to the middle included)."""
        return (sum(ph.n for ph in self.phases) - self.elapsed) * self.dt

    def support_legs(self) -> tuple[str, ...]:
        return tuple(l for l in LEGS if self.contact[l])


def _same(a: Pose2, b: Pose2, tol: float = 1e-6) -> bool:
    return a.distance(b) <= tol and abs(wrap(a.theta - b.theta)) <= tol
