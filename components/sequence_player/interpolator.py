"""One signal interpolator of the SequencePlayer: pure, no rtcf / omniORB.

Behaviour restated from hrpsys-base rtc/SequencePlayer/interpolator.cpp (fkanehiro/hrpsys-base):
a Hoff-Arbib quintic (boundary position, velocity and acceleration) or a linear
mode, vectorised over the dimensions of the signal (joints, xyz, ...).

State and queue:

* ``x, v, a`` -- the last sample taken by ``step()`` (what the player output last), rows of
  one (3, n) array so a step is one copy or one small matrix product;
* a FIFO of precomputed samples (blocks of shape (m, 3, n)) filled by the *offline* goals
  (``go``, ``go_keyframes``, ``go_records``); they start from the *tail*, the state of the
  last computed sample, so appended motions chain smoothly;
* at most one *online* goal (``set_goal``): its quintic is planned from the current state
  (x, v, a) and evaluated one sample per ``step()``.

Sampling rule (both modes): before each sample r <- r - dt if r > dt + 1e-6, else r <- 0;
the sample is at tau = T - r. So N = ceil((T - 1e-6) / dt) samples, at k*dt except the last,
which is exactly at T and equals the goal (velocity = goal velocity).

Durations: T > 0 is used as given. T == 0 means "the average-speed rule" (hrpsys's: the
largest change divided by ``avg_speed``, never less than 1 s); commands that want "one
sample" (the project's tm = 0 decision) pass dt themselves. T < 0 raises ValueError.
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np

LINEAR = 0
HOFFARBIB = 1
MODES = (LINEAR, HOFFARBIB)
EPS = 1e-6                 # [s] hrpsys's margin in the sampling rule
# The quintic's coefficients divide the step by up to T^5 and evaluate t^5: a goal of 1e308
# (finite) overflowed to inf and the outputs became NaN. Within these bounds nothing can
# overflow (|step| / dt^5 < 1e130 for any rate below 1 MHz, t^5 < 1e30): larger values are
# refused like NaN.
VALUE_LIMIT = 1e100        # [rad, m, N, ...] any goal, velocity or pattern value
TM_LIMIT = 1e6             # [s] any duration (11.6 days)


def sample_count(T: float, dt: float) -> int:
    """Number of samples of a T-second segment at period dt (the sampling rule above)."""
    return max(1, math.ceil((T - EPS) / dt))


def sample_times(T: float, dt: float) -> np.ndarray:
    """tau of every sample: k*dt (k = 1..N-1), then exactly T."""
    n = sample_count(T, dt)
    tau = np.arange(1, n + 1, dtype=float) * dt
    tau[-1] = T
    return tau


def quintic(x0: np.ndarray, v0: np.ndarray, a0: np.ndarray, g: np.ndarray, gv: np.ndarray,
            T: float) -> np.ndarray:
    """Hoff-Arbib coefficients c0..c5, shape (6, n), from (x0, v0, a0) to (g, gv, ga = 0)
    in T seconds (hrpsys's interpolator.cpp: A, B, C from the boundary errors)."""
    A = (g - (x0 + v0 * T + a0 * (T * T / 2.0))) / T ** 3
    B = (gv - (v0 + a0 * T)) / T ** 2
    C = (0.0 - a0) / T
    c = np.empty((6,) + np.shape(x0))
    c[0] = x0
    c[1] = v0
    c[2] = a0 / 2.0
    c[3] = 10.0 * A - 4.0 * B + C / 2.0
    c[4] = (-15.0 * A + 7.0 * B - C) / T
    c[5] = (6.0 * A - 3.0 * B + C / 2.0) / T ** 2
    return c


def basis(tau: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Rows of powers for position, velocity and acceleration: shape (len(tau), 3, 6), so
    ``basis(tau) @ c`` gives (len(tau), 3, n) samples (x, v, a)."""
    t = np.asarray(tau, dtype=float).reshape(-1)
    m = out if out is not None else np.empty((t.size, 3, 6))
    t2 = t * t
    t3 = t2 * t
    m[:, 0, 0] = 1.0
    m[:, 0, 1] = t
    m[:, 0, 2] = t2
    m[:, 0, 3] = t3
    m[:, 0, 4] = t3 * t
    m[:, 0, 5] = t3 * t2
    m[:, 1, 0] = 0.0
    m[:, 1, 1] = 1.0
    m[:, 1, 2] = 2.0 * t
    m[:, 1, 3] = 3.0 * t2
    m[:, 1, 4] = 4.0 * t3
    m[:, 1, 5] = 5.0 * t3 * t
    m[:, 2, 0] = 0.0
    m[:, 2, 1] = 0.0
    m[:, 2, 2] = 2.0
    m[:, 2, 3] = 6.0 * t
    m[:, 2, 4] = 12.0 * t2
    m[:, 2, 5] = 20.0 * t3
    return m


def rule_v(start: np.ndarray, keys: np.ndarray, durations: np.ndarray) -> np.ndarray:
    """Keyframe velocities (hrpsys seqplay's rule): the mean of the neighbouring slopes
    when they have the same sign (or one is zero), else 0; the last keyframe has v = 0."""
    k = keys.shape[0]
    vel = np.zeros_like(keys)
    if k < 2:
        return vel
    prev = np.vstack([start[None, :], keys[:-1]])
    slope = (keys - prev) / durations[:, None]          # slope[i]: into keyframe i
    v0, v1 = slope[:-1], slope[1:]
    vel[:-1] = np.where(v0 * v1 >= 0.0, (v0 + v1) / 2.0, 0.0)
    return vel


class Interpolator:
    """A vectorised signal interpolator (hrpsys's ``interpolator``). Runs in: EC thread
    (the player owns it); every method is O(1) per cycle except the offline planners."""

    def __init__(self, dim: int, dt: float, mode: int = HOFFARBIB, avg_speed: float = 0.5,
                 min_auto_time: float = 1.0):
        if dim < 0:
            raise ValueError(f"interpolator dimension must be >= 0, got {dim}")
        if not dt > 0.0:
            raise ValueError(f"dt must be > 0 [s], got {dt}")
        self.dim = int(dim)
        self.dt = float(dt)
        self.mode = self._check_mode(mode)
        self.avg_speed = float(avg_speed)
        self.min_auto_time = float(min_auto_time)
        self._xva = np.zeros((3, self.dim))
        self.x, self.v, self.a = self._xva[0], self._xva[1], self._xva[2]
        self._tail = np.zeros((3, self.dim))        # state after the last queued sample
        self._queue: deque[list] = deque()          # [samples (m, 3, n), next index]
        self._queued = 0                            # samples in the queue
        # online goal: coefficients (hoff-arbib) or goal (linear), T, remaining r
        self._on = False
        self._on_mode = HOFFARBIB
        self._on_c = np.zeros((6, self.dim))
        self._on_g = np.zeros(self.dim)
        self._on_T = 0.0
        self._on_r = 0.0
        self._on_gv = np.zeros(self.dim)
        self._row = np.zeros((3, 6))                # basis of one sample (no allocation)
        self._row[0, 0] = self._row[1, 1] = 1.0
        self._row[2, 2] = 2.0

    # -- queries -----------------------------------------------------------------------------
    @staticmethod
    def _check_mode(mode: int) -> int:
        if mode not in MODES:
            raise ValueError(f"interpolation mode must be LINEAR (0) or HOFFARBIB (1), "
                             f"got {mode!r}")
        return int(mode)

    def is_empty(self) -> bool:
        """True when no sample is queued and no online goal runs."""
        return self._queued == 0 and not self._on

    @property
    def remaining(self) -> int:
        """Samples still to be taken (queued plus the online goal's)."""
        n = self._queued
        if self._on:
            n += sample_count(self._on_r, self.dt) if self._on_r > 0.0 else 0
        return n

    @property
    def tail(self) -> np.ndarray:
        """(x, v, a) after the last computed sample, a (3, n) copy."""
        if self._on:
            self._materialize_online()
        return (self._tail if self._queued else self._xva).copy()

    def set_mode(self, mode: int) -> None:
        """For goals set afterwards (a running goal keeps its mode)."""
        self.mode = self._check_mode(mode)

    def duration(self, T: float, goal: np.ndarray, start: np.ndarray) -> float:
        """T, or for T == 0 the average-speed rule (module doc)."""
        T = float(T)
        if not T >= 0.0 or math.isinf(T):
            raise ValueError(f"duration must be >= 0 and finite [s], got {T}")
        if T == 0.0:
            d = float(np.max(np.abs(goal - start))) if self.dim else 0.0
            T = max(d / self.avg_speed, self.min_auto_time)
        return T

    # -- immediate state changes -------------------------------------------------------------
    def reset(self, x: np.ndarray, v: np.ndarray | None = None) -> None:
        """Drop everything and set the state (hrpsys ``set``): v defaults to 0, a = 0.
        Nothing is output."""
        self.clear()
        self.x[:] = x
        self.v[:] = 0.0 if v is None else v
        self.a[:] = 0.0

    def clear(self) -> None:
        """Drop the queue and the online goal; the state stays at the last sample taken."""
        self._queue.clear()
        self._queued = 0
        self._on = False

    # -- per cycle ---------------------------------------------------------------------------
    def step(self) -> bool:
        """Take the next sample into (x, v, a). False (state unchanged) when empty."""
        q = self._queue
        if q:
            blk = q[0]
            i = blk[1]
            samples = blk[0]
            self._xva[:] = samples[i]
            i += 1
            if i == samples.shape[0]:
                q.popleft()
            else:
                blk[1] = i
            self._queued -= 1
            return True
        if self._on:
            self._online_next(self._xva)
            return True
        return False

    def _online_next(self, out: np.ndarray) -> None:
        """The online goal's next sample into ``out`` (3, n), which may be the state."""
        dt = self.dt
        r_old = self._on_r
        last = not r_old > dt + EPS
        r = 0.0 if last else r_old - dt
        self._on_r = r
        if last:
            out[0] = self._on_g
            out[1] = self._on_gv if self._on_mode == HOFFARBIB else 0.0
            out[2] = 0.0
            self._on = False
        elif self._on_mode == HOFFARBIB:
            t = self._on_T - r
            t2 = t * t
            t3 = t2 * t
            row = self._row
            row[0, 1] = t
            row[0, 2] = t2
            row[0, 3] = t3
            row[0, 4] = t3 * t
            row[0, 5] = t3 * t2
            row[1, 2] = 2.0 * t
            row[1, 3] = 3.0 * t2
            row[1, 4] = 4.0 * t3
            row[1, 5] = 5.0 * t3 * t
            row[2, 3] = 6.0 * t
            row[2, 4] = 12.0 * t2
            row[2, 5] = 20.0 * t3
            np.dot(row, self._on_c, out=out)
        else:   # linear: v = (g - x) / r from the last sample taken
            x = self._xva[0]
            v = (self._on_g - x) / r_old
            out[0] = x + v * dt
            out[1] = v
            out[2] = 0.0

    def _materialize_online(self) -> None:
        """Turn the rest of the online goal into queued samples (before an offline append)."""
        n = sample_count(self._on_r, self.dt) if self._on_r > 0.0 else 0
        blk = np.empty((n, 3, self.dim))
        saved = self._xva.copy()
        for k in range(n):
            self._online_next(self._xva)
            blk[k] = self._xva
        self._xva[:] = saved
        self._on = False
        if n:
            self._append(blk)

    # -- goals ---------------------------------------------------------------------------
    def set_goal(self, g: np.ndarray, T: float, gv: np.ndarray | None = None) -> None:
        """Online goal: replace whatever runs by a move from the current (x, v, a) to g
        (velocity gv, default 0) in T seconds, one sample per step."""
        g = self._vec(g, "goal")
        gv = np.zeros(self.dim) if gv is None else self._vec(gv, "goal velocity")
        T = self.duration(T, g, self.x)
        self.clear()
        self._on_mode = self.mode
        self._on_g = g.copy()
        self._on_gv = gv.copy()
        self._on_T = T
        self._on_r = T
        if self.mode == HOFFARBIB:
            self._on_c = quintic(self.x, self.v, self.a, g, gv, T)
        self._on = True

    def go(self, g: np.ndarray, T: float, gv: np.ndarray | None = None) -> int:
        """Offline goal: append the samples of a move from the tail to g in T seconds.
        Returns the number of samples appended."""
        g = self._vec(g, "goal")
        gv = np.zeros(self.dim) if gv is None else self._vec(gv, "goal velocity")
        tail = self.tail
        T = self.duration(T, g, tail[0])
        blk = self._segment(tail, g, gv, T)
        self._append(blk)
        return blk.shape[0]

    def _segment(self, start: np.ndarray, g: np.ndarray, gv: np.ndarray, T: float
                 ) -> np.ndarray:
        tau = sample_times(T, self.dt)
        if self.mode == HOFFARBIB:
            c = quintic(start[0], start[1], start[2], g, gv, T)
            blk = basis(tau) @ c
            blk[-1, 1] = gv
        else:
            blk = np.empty((tau.size, 3, self.dim))
            slope = (g - start[0]) / T
            blk[:, 0] = start[0] + np.outer(tau / T, g - start[0])
            blk[:, 1] = slope
            blk[-1, 1] = 0.0
            blk[:, 2] = 0.0
        blk[-1, 0] = g
        blk[-1, 2] = 0.0
        return blk

    def go_keyframes(self, keys: np.ndarray, durations: np.ndarray,
                     velocities: np.ndarray | None = None) -> int:
        """Append keyframes (hrpsys playPattern): segment i reaches keys[i] durations[i]
        seconds after keys[i-1] (or the tail). Velocities are given or follow rule V."""
        blk = self.plan_keyframes(self.tail, keys, durations, velocities)
        if blk is None:
            return 0
        self._append(blk)
        return blk.shape[0]

    def effective_durations(self, start_x: np.ndarray, keys: np.ndarray,
                            durations: np.ndarray) -> np.ndarray:
        """Durations with 0 replaced by the average-speed rule (module doc). Pure."""
        eff = np.asarray(durations, dtype=float).reshape(-1).copy()
        bad = ~(eff >= 0.0) | np.isinf(eff)
        if bad.any():
            raise ValueError(f"duration must be >= 0 and finite [s], got {eff[bad][0]}")
        zero = eff == 0.0
        if zero.any():
            prev = np.vstack([np.reshape(start_x, (1, self.dim)), keys[:-1]])
            d = np.max(np.abs(keys - prev), axis=1) if self.dim else np.zeros(len(eff))
            eff[zero] = np.maximum(d[zero] / self.avg_speed, self.min_auto_time)
        return eff

    def plan_keyframes(self, start: np.ndarray, keys: np.ndarray, durations: np.ndarray,
                       velocities: np.ndarray | None = None) -> np.ndarray | None:
        """The samples of keyframes from ``start`` (x, v, a), shape (m, 3, n), or None for
        no keyframe. Pure (reads only dt, mode, avg_speed): safe in any thread."""
        keys = np.asarray(keys, dtype=float).reshape(len(keys), self.dim)
        durations = np.asarray(durations, dtype=float).reshape(-1)
        if keys.shape[0] != durations.size:
            raise ValueError(f"{keys.shape[0]} keyframes but {durations.size} durations")
        if keys.shape[0] == 0:
            return None
        start = np.asarray(start, dtype=float).reshape(3, self.dim)
        eff = self.effective_durations(start[0], keys, durations)
        if velocities is None:
            velocities = rule_v(start[0], keys, eff)
        else:
            velocities = np.asarray(velocities, dtype=float).reshape(keys.shape)
        x0 = np.vstack([start[0][None, :], keys[:-1]])
        v0 = np.vstack([start[1][None, :], velocities[:-1]])
        a0 = np.zeros_like(x0)
        a0[0] = start[2]
        return self._segments(x0, v0, a0, keys, velocities, eff)

    def append_planned(self, start: np.ndarray, blk: np.ndarray | None) -> bool:
        """Append samples planned elsewhere from ``start``; False (nothing appended) when
        the tail is no longer ``start``, so the caller plans again."""
        if not np.array_equal(self.tail, start):
            return False
        if blk is not None and blk.shape[0]:
            self._append(blk)
        return True

    def _segments(self, x0: np.ndarray, v0: np.ndarray, a0: np.ndarray, g: np.ndarray,
                  gv: np.ndarray, T: np.ndarray) -> np.ndarray:
        """Samples of k consecutive segments at once, shape (m, 3, n): segment i from
        (x0[i], v0[i], a0[i]) to (g[i], gv[i], 0) in T[i] seconds (quintic's formulas)."""
        counts = np.maximum(1, np.ceil((T - EPS) / self.dt)).astype(np.int64)
        ends = np.cumsum(counts) - 1
        seg = np.repeat(np.arange(T.size), counts)
        tau = (np.arange(seg.size) - (ends - counts + 1)[seg] + 1) * self.dt
        tau[ends] = T
        t = tau[:, None]
        blk = np.empty((seg.size, 3, self.dim))
        if self.mode == HOFFARBIB:
            Tc = T[:, None]
            A = (g - (x0 + v0 * Tc + a0 * (Tc * Tc / 2.0))) / Tc ** 3
            B = (gv - (v0 + a0 * Tc)) / Tc ** 2
            C = -a0 / Tc
            c3 = (10.0 * A - 4.0 * B + C / 2.0)[seg]
            c4 = ((-15.0 * A + 7.0 * B - C) / Tc)[seg]
            c5 = ((6.0 * A - 3.0 * B + C / 2.0) / Tc ** 2)[seg]
            s0, s1, s2 = x0[seg], v0[seg], a0[seg]
            blk[:, 0] = s0 + t * (s1 + t * (s2 / 2.0 + t * (c3 + t * (c4 + t * c5))))
            blk[:, 1] = s1 + t * (s2 + t * (3.0 * c3 + t * (4.0 * c4 + t * 5.0 * c5)))
            blk[:, 2] = s2 + t * (6.0 * c3 + t * (12.0 * c4 + t * 20.0 * c5))
            blk[ends, 1] = gv
        else:
            slope = (g - x0) / T[:, None]
            blk[:, 0] = x0[seg] + slope[seg] * t
            blk[:, 1] = slope[seg]
            blk[ends, 1] = 0.0
            blk[:, 2] = 0.0
        blk[ends, 0] = g
        blk[ends, 2] = 0.0
        return blk

    def go_records(self, records: np.ndarray, first_time: float, gaps: np.ndarray) -> int:
        """Append a pattern (loadPattern): record 0 is reached from the tail in
        ``first_time``, record i (i >= 1) ``gaps[i-1]`` seconds after record i-1; every
        record ends at rest. A zero time uses the average-speed rule."""
        rest = self.records_block(records, gaps)
        return self.go_records_prepared(np.asarray(records, dtype=float).reshape(
            len(records), self.dim)[:1], first_time, rest)

    def go_records_prepared(self, first: np.ndarray, first_time: float,
                            rest: np.ndarray | None) -> int:
        """go_records with the state-independent part computed beforehand (records_block,
        e.g. in an ORB thread): only the first segment is planned here."""
        if first.shape[0] == 0:
            return 0
        n = self.go(first[0], first_time)
        if rest is not None and rest.shape[0]:
            self._append(rest)
            n += rest.shape[0]
        return n

    def records_block(self, records: np.ndarray, gaps: np.ndarray) -> np.ndarray | None:
        """The samples from record 0 to the last record, vectorised: every segment is a
        rest-to-rest minimum-jerk (or linear) move, so they do not depend on the state.
        Shape (m, 3, n); None for fewer than two records. Pure: safe in any thread."""
        rec = np.asarray(records, dtype=float).reshape(len(records), self.dim)
        gaps = np.asarray(gaps, dtype=float).reshape(-1)
        if rec.shape[0] < 2:
            return None
        if gaps.size != rec.shape[0] - 1:
            raise ValueError(f"{rec.shape[0]} records need {rec.shape[0] - 1} gaps, "
                             f"got {gaps.size}")
        bad = ~(gaps >= 0.0) | ~np.isfinite(gaps)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"pattern times must not decrease: record {i + 1} comes "
                             f"{gaps[i]} s after record {i}")
        start, goal = rec[:-1], rec[1:]
        T = gaps.copy()
        zero = T == 0.0
        if zero.any():
            d = np.max(np.abs(goal[zero] - start[zero]), axis=1) if self.dim else 0.0
            T[zero] = np.maximum(d / self.avg_speed, self.min_auto_time)
        counts = np.maximum(1, np.ceil((T - EPS) / self.dt)).astype(np.int64)
        ends = np.cumsum(counts) - 1
        if np.all(counts == 1):            # records spaced dt apart: the records themselves
            blk = np.zeros((T.size, 3, self.dim))
            blk[:, 0] = goal
            return blk
        seg = np.repeat(np.arange(T.size), counts)
        k = np.arange(seg.size) - (ends - counts + 1)[seg] + 1
        tau = k * self.dt
        tau[ends] = T
        Tseg = T[seg]
        s = tau / Tseg
        d = (goal - start)[seg]
        blk = np.empty((seg.size, 3, self.dim))
        if self.mode == HOFFARBIB:   # rest to rest: the minimum-jerk curve
            s2 = s * s
            s3 = s2 * s
            blk[:, 0] = start[seg] + d * (s3 * (10.0 - 15.0 * s + 6.0 * s2))[:, None]
            blk[:, 1] = d * (s2 * (30.0 - 60.0 * s + 30.0 * s2) / Tseg)[:, None]
            blk[:, 2] = d * (s * (60.0 - 180.0 * s + 120.0 * s2) / Tseg ** 2)[:, None]
        else:
            blk[:, 0] = start[seg] + d * s[:, None]
            blk[:, 1] = d / Tseg[:, None]
            blk[:, 2] = 0.0
        blk[ends, 0] = goal
        blk[ends, 1] = 0.0
        blk[ends, 2] = 0.0
        return blk

    def override_from_front(self) -> None:
        """The 'sequence' path of setJointAngles: keep the next sample (x, v, a)
        as the only queued one and make the tail (x, v, 0), so what is appended next starts
        there without a jump."""
        if self._queue:
            blk = self._queue[0]
            front = blk[0][blk[1]].copy()
        elif self._on:
            front = np.empty((3, self.dim))
            self._online_next(front)
            # _online_next read the state for linear mode only: it is still the last sample
        else:
            front = self._xva.copy()
        self.clear()
        self._append(front[None].copy())
        self._tail[2] = 0.0

    def hold(self) -> None:
        """Stop where it is (clearJointAngles): drop everything, then a one-sample goal at
        the current value from (x, v, 0)."""
        self.clear()
        start = self._xva.copy()
        start[2] = 0.0
        self._append(self._segment(start, start[0].copy(), np.zeros(self.dim), self.dt))

    # -- helpers -----------------------------------------------------------------------------
    def _append(self, blk: np.ndarray) -> None:
        self._queue.append([blk, 0])
        self._queued += blk.shape[0]
        self._tail[:] = blk[-1]

    def _vec(self, value: np.ndarray, what: str) -> np.ndarray:
        arr = np.asarray(value, dtype=float).reshape(-1)
        if arr.size != self.dim:
            raise ValueError(f"{what}: expected {self.dim} values, got {arr.size}")
        return arr
