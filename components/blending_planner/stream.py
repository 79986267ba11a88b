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
FK of the TCP while two or more motions overlap. One motion whose clock is on a sample (at
the planned period, the usual case) costs a row copy per step: its joints are made CHUNK
samples at a time in numpy, its pose is the sample's bytes. Otherwise the joints and a
single motion's pose are computed on Python floats read from the trajectories' rows
(struct.unpack_from) and stored with struct.pack_into. Every form does the same IEEE
operations in the same order as the elementwise float64 arithmetic it stands for (subtract,
multiply, add, divide: the same bits; the quaternion's norm is still numpy's dot product);
tests/components/blending_planner/test_stream_forms.py compares them bit for bit.
"""

from __future__ import annotations

import math
import struct
from itertools import repeat
from operator import add as _add, mul as _mul, sub as _sub, truediv as _truediv
from typing import Any, Callable

import numpy as np

from .geometry import quat_from_rot, rot_from_quat

FRACTION_SNAP = 1e-9     # a clock this close to a sample is on it
CHUNK = 64               # samples of a motion's joints made at once (see Stream._joints)


class Layer:
    """One trajectory being played. ``listener`` (optional) gets ``started(layer)``,
    ``blending(layer)`` once the TCP is inside its blending sphere, and ``finished(layer,
    completed)`` once (completed False: stopped or overridden before the end)."""

    __slots__ = ("q", "pos", "quat", "n", "dt", "t_acc", "end_t", "blend_t", "lt", "rate",
                 "slope", "stop_lt", "listener", "blend_fired", "exact", "traj", "rows",
                 "q0")

    def __init__(self, traj: Any, listener: Any = None):
        self.traj = traj
        self.q, self.pos, self.quat = traj.q, traj.pos, traj.quat
        # the rows read as floats when the trajectory's arrays are C-contiguous float64 (as
        # planned): per array (unpack_from, a byte view of it, a row's size in bytes), for
        # q, pos and quat; else None (the numpy forms)
        self.rows = _row_readers(self.q, self.pos, self.quat)
        # q's first row as floats (the displacement's origin), with the readers
        self.q0 = None
        if self.rows is not None and self.q is not None:
            read, view, _ = self.rows[0]
            self.q0 = read(view, 0)
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
        # step()'s float forms: q_rest read and q, p, quat stored (pack_into: the same bits
        # as [...] = values) through memoryviews (a fraction of an ndarray's buffer export;
        # q, q_rest and p are fixed for the stream's life, quat is replaced by reset and
        # _retire: its view is made again then)
        fmt = None if q0 is None else struct.Struct(f"{len(self.q)}d")
        self._q_io = None if fmt is None else (fmt.unpack_from, memoryview(self.q_rest),
                                               fmt.pack_into, memoryview(self.q))
        self._p_view = memoryview(self.p)
        self._quat_view = _quat_views(self.quat)
        self._float_joints = False        # every layer has float rows (see _layers_changed)
        # one motion on its samples (the clock on a sample, as at the planned period): the
        # joints of the next CHUNK samples made at once, (q_rest + q[i:i + CHUNK]) - q[0] in
        # numpy (the same roundings as per sample), then one row copied per step; _chunk is
        # (layer, first sample, end), dropped whenever the layers or q_rest change
        self._chunk: tuple = (None, 0, 0)
        self._chunk_buf = None if q0 is None else np.empty((CHUNK, len(self.q)))
        self._chunk_bytes = (None if q0 is None
                             else memoryview(self._chunk_buf).cast("B"))
        self._q_bytes = None if q0 is None else memoryview(self.q).cast("B")
        self._p_bytes = memoryview(self.p).cast("B")

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
        if ly.q0 is not None and (self.q is None or len(ly.q0) != len(self.q)):
            ly.q0 = None                  # another width: the numpy forms (and their error)
        ly.exact = not self.layers
        self.layers.append(ly)
        self._layers_changed()
        self.version += 1
        if listener is not None:
            listener.started(ly)
        if ly.n <= 1:
            self._finish(ly, True)
            self.layers.remove(ly)
            self._layers_changed()
            self._flush()
        return ly

    def _layers_changed(self) -> None:
        """After the layers changed: whether step() computes the joints on floats."""
        self._float_joints = (self._q_io is not None
                              and all(ly.q0 is not None for ly in self.layers))
        self._chunk = (None, 0, 0)

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
        self._layers_changed()
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
        # the single motion's place on its samples, found once for the joints and the pose
        at = self.layers[0].position() if len(self.layers) == 1 else None
        if self.q is not None:
            self._joints(at)
        self._pose(at)
        if done:
            self._retire()
        self._flush()

    def _joints(self, at: tuple[int, float] | None = None) -> None:
        """q = q_rest + sum over layers of (joints at the clock - first joints), left to
        right: a row of the chunk (one motion on a sample, ``at`` its position), else on
        floats when every layer has row readers, else in numpy."""
        if self._float_joints:
            if at is not None and at[1] == 0.0:
                i = at[0]
                ly, first, end = self._chunk
                if ly is not self.layers[0] or not first <= i < end:
                    ly, first = self.layers[0], i
                    end = min(i + CHUNK, ly.n)
                    rows = self._chunk_buf[:end - i]
                    np.add(self.q_rest, ly.q[i:end], out=rows)
                    np.subtract(rows, ly.q[0], out=rows)
                    self._chunk = (ly, first, end)
                size = ly.rows[0][2]
                k = (i - first) * size
                self._q_bytes[:] = self._chunk_bytes[k:k + size]
                return
            read_rest, rest, store, out = self._q_io
            q = read_rest(rest)
            for ly in self.layers:
                read, view, size = ly.rows[0]
                i, f = ly.position()
                a = read(view, i * size)                 # joints_into's q[i] ...
                if f != 0.0:                             # ... or (q[i+1] - q[i]) * f + q[i]
                    a = _lerp(a, read(view, (i + 1) * size), f)
                # q += joints; q -= q[0] (two roundings, in that order, as numpy's)
                q = tuple(map(_sub, map(_add, q, a), ly.q0))
            store(out, 0, *q)
            return
        q, tmp = self._sum, self._scratch
        np.copyto(q, self.q_rest)
        for ly in self.layers:
            ly.joints_into(tmp)
            q += tmp
            q -= ly.q[0]
        np.copyto(self.q, q)

    def _pose(self, at: tuple[int, float] | None = None) -> None:
        if len(self.layers) == 1 and self.layers[0].exact:
            ly = self.layers[0]
            i, f = ly.position() if at is None else at
            rows = ly.rows
            quat = self.quat
            views = self._quat_view
            if views[0] is not quat:
                views = self._quat_view = _quat_views(quat)
            if rows is not None and views[1] is not None:
                # p and quat from floats: pos[i], or pos[i] + (pos[i + 1] - pos[i]) * f;
                # the same for quat, then quat / sqrt(quat . quat) (numpy's dot, as before)
                _, (read_p, pos, size_p), (read_quat, quats, size_quat) = rows
                _, quat_view, quat_bytes = views
                if f == 0.0:                     # the sample's bytes
                    k = i * size_p
                    self._p_bytes[:] = pos[k:k + size_p]
                    k = i * size_quat
                    quat_bytes[:] = quats[k:k + size_quat]
                    return
                a = read_p(pos, i * size_p)
                e = read_quat(quats, i * size_quat)
                _PACK3(self._p_view, 0, *_lerp(a, read_p(pos, (i + 1) * size_p), f))
                w = tuple(_lerp(e, read_quat(quats, (i + 1) * size_quat), f))
                _PACK4(quat_view, 0, *w)
                norm = math.sqrt(float(quat @ quat))
                _PACK4(quat_view, 0, *map(_truediv, w, repeat(norm, 4)))
                return
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
        self._layers_changed()
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


_PACK3 = struct.Struct("3d").pack_into
_PACK4 = struct.Struct("4d").pack_into


def _quat_views(quat: np.ndarray) -> tuple:
    """(quat, a float view, a byte view) of a C-contiguous float64 (4,) array, else (quat,
    None, None): what _pose stores the quaternion through."""
    if (isinstance(quat, np.ndarray) and quat.dtype == np.float64 and quat.shape == (4,)
            and quat.flags.c_contiguous and quat.flags.writeable):
        return quat, memoryview(quat), memoryview(quat).cast("B")
    return quat, None, None


def _lerp(a: Any, b: Any, f: float) -> Any:
    """(b - a) * f + a per value, an iterator of floats (the numpy forms' subtract,
    multiply, add: the same roundings in the same order)."""
    return map(_add, map(_mul, map(_sub, b, a), repeat(f)), a)


def _row_readers(q: np.ndarray | None, pos: np.ndarray, quat: np.ndarray) -> tuple | None:
    """((unpack_from, a byte view, a row's size in bytes) of q, pos, quat) when each is a
    C-contiguous 2-D float64 array with rows (q may be None: its entry is then None) and
    pos / quat rows have 3 / 4 values; else None."""
    out = []
    for a, width in ((q, None), (pos, 3), (quat, 4)):
        if a is None and width is None:
            out.append(None)
            continue
        if (not isinstance(a, np.ndarray) or a.dtype != np.float64 or a.ndim != 2
                or not a.flags.c_contiguous or a.shape[0] == 0 or a.shape[1] == 0
                or (width is not None and a.shape[1] != width)):
            return None
        out.append((struct.Struct(f"{a.shape[1]}d").unpack_from, memoryview(a).cast("B"),
                    8 * a.shape[1]))
    return tuple(out)
