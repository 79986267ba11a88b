"""The joint reference of the DRL motions, cycle by cycle (pure: numpy only).

A Stream plays planned trajectories (motion.Trajectory, or a moveb plan) one cycle at a time
and superposes those that overlap, as Doosan blends motions: a motion added while others
run starts at once and its displacement is added to theirs,

    q(t) = q_rest + sum over running motions m of (q_m(t - t_m) - q_m(0)),

so the arm leaves the first path where the second begins and ends exactly on the last
target (each motion starts where the ones before it end). A sync motion with a radius
returns when its TCP enters the blending sphere, so the next one begins there (DUPLICATE);
an OVERRIDE first brings the running motions to rest along their paths.

Time is warped, never the paths: every motion has its own clock (local time lt, advanced
by its rate times the global speed factor each cycle). A stop makes the rates fall to 0
along a straight line (decelerating along the path to rest, on the path); the operation
speed (change_operation_speed) scales every clock. Joints at a fractional time are
interpolated linearly between two samples.

Runs in: ``step``, ``add``, ``stop`` and the speed setter in the EC thread only (the
component calls them there); the planning thread reads ``final_*`` through the component's
EC call. ``step`` works in preallocated arrays: no array is created per cycle except the
FK of the TCP while two or more motions overlap.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from .geometry import quat_from_rot, rot_from_quat

FRACTION_SNAP = 1e-9     # a clock this close to a sample is on it


class Layer:
    """One trajectory being played. ``listener`` (optional) gets ``started(layer)``,
    ``blending(layer)`` once the TCP is inside its blending sphere, and ``finished(layer,
    completed)`` once (completed False: stopped or overridden before the end)."""

    __slots__ = ("q", "pos", "quat", "n", "dt", "t_acc", "end_t", "blend_t", "lt", "rate",
                 "slope", "stop_lt", "listener", "blend_fired", "exact", "traj")

    def __init__(self, traj: Any, listener: Any = None):
        self.traj = traj
        self.q, self.pos, self.quat = traj.q, traj.pos, traj.quat
        self.n = len(traj.pos)
        self.dt = traj.dt
        self.t_acc = traj.t_acc
        self.end_t = (self.n - 1) * self.dt
        self.blend_t = traj.blend_k * self.dt
        self.lt = 0.0
        self.rate = 1.0
        self.slope = 0.0              # [1/s] rate lost per second while stopping
        self.stop_lt = math.inf       # where a stop brings the clock to rest
        self.listener = listener
        self.blend_fired = False
        self.exact = False            # the stream's pose is this layer's own

    def position(self) -> tuple[int, float]:
        """(sample index, fraction towards the next) of the clock."""
        x = self.lt / self.dt
        i = int(x)
        f = x - i
        if f > 1.0 - FRACTION_SNAP:
            i, f = i + 1, 0.0
        elif f < FRACTION_SNAP:
            f = 0.0
        if i >= self.n - 1:
            return self.n - 1, 0.0
        return i, f

    def joints_into(self, out: np.ndarray) -> None:
        i, f = self.position()
        if f == 0.0:
            np.copyto(out, self.q[i])
        else:
            np.subtract(self.q[i + 1], self.q[i], out=out)
            out *= f
            out += self.q[i]

    def joints_at(self, lt: float) -> np.ndarray:
        keep = self.lt
        self.lt = min(lt, self.end_t)
        out = np.empty(self.q.shape[1])
        self.joints_into(out)
        self.lt = keep
        return out

    def pose_at(self, lt: float) -> tuple[np.ndarray, np.ndarray]:
        """(p, unit quaternion) at local time lt (clipped to the end)."""
        keep = self.lt
        self.lt = min(lt, self.end_t)
        i, f = self.position()
        self.lt = keep
        if f == 0.0:
            return self.pos[i].copy(), self.quat[i].copy()
        p = self.pos[i] + f * (self.pos[i + 1] - self.pos[i])
        q = self.quat[i] + f * (self.quat[i + 1] - self.quat[i])
        return p, q / np.linalg.norm(q)

    def end_lt(self) -> float:
        """Where the clock will come to rest: the end, or the stop point."""
        return min(self.end_t, self.stop_lt)


class Stream:
    """The superposed reference. ``q`` (n,) [rad] (None without an arm), ``p`` (3,) [mm] and
    ``quat`` (4,) hold the output of the last step. ``fk(q) -> (p, R)`` gives the TCP of a
    joint vector (needed with an arm)."""

    def __init__(self, dt: float, q0: np.ndarray | None, p0: np.ndarray, r0: np.ndarray,
                 fk: Callable | None = None):
        self.dt = dt
        self.fk = fk
        self.q = None if q0 is None else np.array(q0, dtype=float)
        self.q_rest = None if q0 is None else np.array(q0, dtype=float)
        self._scratch = None if q0 is None else np.empty_like(self.q)
        self._sum = None if q0 is None else np.empty_like(self.q)
        self.p = np.array(p0, dtype=float)
        self.quat = quat_from_rot(r0)
        self.p_rest, self.r_rest = self.p.copy(), np.array(r0, dtype=float)
        self.layers: list[Layer] = []
        self.version = 0              # changes whenever the end of the stream changes
        self.speed = 1.0              # the operation speed factor applied now
        self.speed_target = 1.0
        self.speed_slope = 2.0        # [1/s] how fast the factor moves to its target
        self.cycles = 0
        self.p_prev = self.p.copy()
        self.q_prev = None if q0 is None else self.q.copy()
        # step()'s copies of q and p into q_prev and p_prev as memoryview pairs (the same
        # bytes as [...] =, a fraction of numpy's cost; the four arrays are fixed for the
        # stream's life: everything else writes them in place)
        self._prev_copies = tuple((memoryview(a), memoryview(b)) for a, b in
                                  ((self.q_prev, self.q), (self.p_prev, self.p))
                                  if a is not None)
        self._events: list[tuple] = []

    # -- state ------------------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        return bool(self.layers)

    def final_joints(self) -> np.ndarray | None:
        """Joints [rad] where everything now in the stream ends (a copy)."""
        if self.q_rest is None:
            return None
        out = self.q_rest.copy()
        for ly in self.layers:
            out += ly.joints_at(ly.end_lt()) - ly.q[0]
        return out

    def final_pose(self) -> tuple[np.ndarray, np.ndarray]:
        """(p [mm], R) where everything now in the stream ends."""
        if self.q_rest is not None:
            if not self.layers:
                return self.fk(self.q_rest)
            return self.fk(self.final_joints())
        p, r = self.p_rest.copy(), self.r_rest.copy()
        for ly in self.layers:
            pe, qe = ly.pose_at(ly.end_lt())
            p += pe - ly.pos[0]
            r = rot_from_quat(qe) @ rot_from_quat(ly.quat[0]).T @ r
        return p, r

    # -- commands (EC thread) -----------------------------------------------------------------
    def add(self, traj: Any, listener: Any = None) -> Layer:
        """Start ``traj`` now, superposed on what runs. The caller made sure it was planned
        from final_joints() / final_pose() of this version."""
        ly = Layer(traj, listener)
        ly.exact = not self.layers
        self.layers.append(ly)
        self.version += 1
        if listener is not None:
            listener.started(ly)
        if ly.n <= 1:
            self._finish(ly, True)
            self.layers.remove(ly)
            self._flush()
        return ly

    def stop(self, decel_time: Callable[[Layer], float]) -> int:
        """Bring every running motion to rest along its path, its rate falling to 0 over
        decel_time(layer) [s] (at least a cycle): the path stops after half the distance it
        would cover in that time at its present speed. Returns how many were running."""
        for ly in self.layers:
            ts = max(decel_time(ly), self.dt)
            slope = ly.rate / ts
            if slope > ly.slope:
                ly.slope = slope
                ly.stop_lt = ly.lt + self.speed * ly.rate * ly.rate / (2.0 * slope)
        if self.layers:
            self.version += 1
        return len(self.layers)

    def set_speed(self, factor: float, ramp: float) -> None:
        """Scale every clock by ``factor`` (0 < factor <= 1), reached in ``ramp`` [s]."""
        self.speed_target = factor
        self.speed_slope = max(abs(factor - self.speed) / max(ramp, self.dt), 1e-9)

    def reset(self, q: np.ndarray | None, p: np.ndarray, r: np.ndarray) -> None:
        """Drop every motion (their listeners get finished(completed=False)) and hold (q,
        p, R)."""
        for ly in self.layers:
            self._finish(ly, False)
        self.layers.clear()
        self._flush()
        if q is not None:
            np.copyto(self.q, q)
            np.copyto(self.q_rest, q)
        self.p[:], self.p_rest[:] = p, p
        self.r_rest = np.array(r, dtype=float)
        self.quat = quat_from_rot(r)
        self.version += 1

    # -- the cycle (EC thread) ---------------------------------------------------------------
    def step(self) -> None:
        """Advance every clock by one cycle and compute q, p, quat."""
        self.cycles += 1
        for dst, src in self._prev_copies:       # q_prev[...] = q; p_prev[...] = p
            dst[:] = src
        if not self.layers:
            return
        dt = self.dt
        if self.speed != self.speed_target:
            step = self.speed_slope * dt
            if abs(self.speed_target - self.speed) <= step:
                self.speed = self.speed_target
            else:
                self.speed += step if self.speed_target > self.speed else -step
        s = self.speed
        done = 0
        for ly in self.layers:
            if ly.slope > 0.0:
                r0 = ly.rate
                r1 = r0 - ly.slope * dt
                if r1 <= 1e-9:
                    ly.rate = 0.0
                    ly.lt = ly.stop_lt
                else:
                    ly.lt += s * 0.5 * (r0 + r1) * dt
                    ly.rate = r1
            else:
                ly.lt += s * dt
            if ly.lt >= ly.end_t - 1e-9:
                ly.lt = ly.end_t
                done += 1
            elif ly.rate == 0.0:
                done += 1
            if not ly.blend_fired and ly.lt >= ly.blend_t - 1e-12:
                ly.blend_fired = True
                if ly.listener is not None:
                    self._events.append((ly, None))
        if self.q is not None:
            self._joints()
        self._pose()
        if done:
            self._retire()
        self._flush()

    def _joints(self) -> None:
        q, tmp = self._sum, self._scratch
        np.copyto(q, self.q_rest)
        for ly in self.layers:
            ly.joints_into(tmp)
            q += tmp
            q -= ly.q[0]
        np.copyto(self.q, q)

    def _pose(self) -> None:
        if len(self.layers) == 1 and self.layers[0].exact:
            ly = self.layers[0]
            i, f = ly.position()
            if f == 0.0:
                np.copyto(self.p, ly.pos[i])
                np.copyto(self.quat, ly.quat[i])
            else:
                np.subtract(ly.pos[i + 1], ly.pos[i], out=self.p)
                self.p *= f
                self.p += ly.pos[i]
                np.subtract(ly.quat[i + 1], ly.quat[i], out=self.quat)
                self.quat *= f
                self.quat += ly.quat[i]
                self.quat /= math.sqrt(float(self.quat @ self.quat))
            return
        if self.q is not None:
            p, r = self.fk(self.q)
        else:
            p, r = self.p_rest.copy(), self.r_rest.copy()
            for ly in self.layers:
                pe, qe = ly.pose_at(ly.lt)
                p += pe - ly.pos[0]
                r = rot_from_quat(qe) @ rot_from_quat(ly.quat[0]).T @ r
        np.copyto(self.p, p)
        np.copyto(self.quat, quat_from_rot(r))

    def _retire(self) -> None:
        """Fold the motions that ended into the rest state (their last value stays)."""
        keep = []
        for ly in self.layers:
            completed = ly.lt >= ly.end_t
            if completed or ly.rate == 0.0:
                if self.q_rest is not None:
                    ly.joints_into(self._scratch)
                    self.q_rest += self._scratch
                    self.q_rest -= ly.q[0]
                else:
                    pe, qe = ly.pose_at(ly.lt)
                    self.p_rest += pe - ly.pos[0]
                    self.r_rest = rot_from_quat(qe) @ rot_from_quat(ly.quat[0]).T @ self.r_rest
                self._finish(ly, completed)
            else:
                keep.append(ly)
        self.layers[:] = keep
        if len(keep) == 1 and self.q_rest is not None:
            ly = keep[0]
            ly.exact = ly.exact or bool(np.allclose(self.q_rest, ly.q[0], rtol=0.0,
                                                    atol=1e-12))
        if not keep:
            # at rest: the pose the joints give (exactly what the next motion plans from)
            if self.q_rest is not None:
                np.copyto(self.q, self.q_rest)
                p, r = self.fk(self.q_rest)
                self.p[:] = p
                self.quat = quat_from_rot(r)
            else:
                self.p[:] = self.p_rest
                self.quat = quat_from_rot(self.r_rest)

    def _finish(self, ly: Layer, completed: bool) -> None:
        if ly.listener is not None:
            self._events.append((ly, completed))

    def _flush(self) -> None:
        """Tell the listeners, after the cycle's outputs are computed."""
        if not self._events:
            return
        events, self._events = self._events, []
        for ly, completed in events:
            if completed is None:
                ly.listener.blending(ly)
            else:
                if not ly.blend_fired:
                    ly.blend_fired = True
                    ly.listener.blending(ly)
                ly.listener.finished(ly, completed)
