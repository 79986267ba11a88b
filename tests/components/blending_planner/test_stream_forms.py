"""The stream's cheaper per-cycle forms against the numpy forms they stand for, bit for bit:
the joints of one motion on its samples made CHUNK samples at a time and copied a row per
step, the pose copied as the sample's bytes, and the float forms (unpack, Python arithmetic,
pack) of interpolated and superposed motions. The reference is the same Stream playing the
same trajectories held in strided views (every other column of a wider array), which take
the numpy forms."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rtcf_components.blending_planner.stream import CHUNK, Stream


class Traj:
    """What Stream plays: q (N, n), pos (N, 3), quat (N, 4), dt, t_acc, blend_k."""

    def __init__(self, q, pos, quat, dt, strided=False):
        self.q, self.pos, self.quat = (strided_copy(a) if strided else np.array(a)
                                       for a in (q, pos, quat))
        self.dt, self.t_acc, self.blend_k = dt, 0.05, len(pos) - 1


def strided_copy(a):
    wide = np.zeros((a.shape[0], 2 * a.shape[1]))
    wide[:, ::2] = a
    return wide[:, ::2]


def fk(q):
    """A stand-in TCP of the joints (the same function for both streams)."""
    c, s = math.cos(q[3]), math.sin(q[3])
    return np.array([q[0] * 100.0, q[1] * 100.0, q[2] * 100.0]), \
        np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def motion(rng, q_from, n, dt):
    steps = rng.normal(0.0, 1e-3, (n, len(q_from)))
    steps[0] = 0.0
    q = q_from + np.cumsum(steps, axis=0)
    pos = rng.normal(0.0, 300.0, (n, 3))
    quat = rng.normal(0.0, 1.0, (n, 4))
    quat /= np.linalg.norm(quat, axis=1)[:, None]
    return q, pos, quat


def bits(a) -> bytes:
    return np.ascontiguousarray(a, dtype=np.float64).tobytes()


def play(script, cycles, dt=0.001, seed=3):
    """Two streams (contiguous arrays: the cheaper forms; strided: the numpy forms) through
    ``script`` {cycle: action}; the outputs compared after every step."""
    rng = np.random.default_rng(seed)
    q0 = rng.normal(0.0, 1.0, 6)
    r0 = fk(q0)[1]
    fast = Stream(dt, q0, fk(q0)[0], r0, fk)
    ref = Stream(dt, q0, fk(q0)[0], r0, fk)
    kinds = set()
    for k in range(cycles):
        act = script.get(k)
        if act is not None:
            kind, arg = act
            if kind == "add":
                q, pos, quat = motion(rng, fast.final_joints(), arg, dt)
                a = fast.add(Traj(q, pos, quat, dt))
                b = ref.add(Traj(q, pos, quat, dt, strided=True))
                assert a.rows is not None and b.rows is None    # the two forms
            elif kind == "speed":
                fast.set_speed(arg, 0.05)
                ref.set_speed(arg, 0.05)
            elif kind == "stop":
                fast.stop(lambda ly: arg)
                ref.stop(lambda ly: arg)
        if len(fast.layers) == 1:
            kinds.add("chunk" if fast.layers[0].position()[1] == 0.0 else "lerp")
        elif len(fast.layers) > 1:
            kinds.add("superposed")
        fast.step()
        ref.step()
        for name in ("q", "p", "quat", "q_rest", "q_prev", "p_prev"):
            assert bits(getattr(fast, name)) == bits(getattr(ref, name)), (k, name)
        assert len(fast.layers) == len(ref.layers)
    return kinds


def test_one_motion_on_its_samples_across_chunks():
    # the chunk's rows, its end, a new chunk, and the motion's end (retired into q_rest)
    assert play({3: ("add", 3 * CHUNK + 7)}, 3 * CHUNK + 30) == {"chunk"}


def test_speed_override_interpolates_and_returns_to_samples():
    kinds = play({2: ("add", 900), 40: ("speed", 0.37), 300: ("speed", 1.0)}, 950)
    assert {"chunk", "lerp"} <= kinds


def test_a_stop_ends_between_samples():
    assert "lerp" in play({1: ("add", 600), 100: ("stop", 0.03)}, 200)


def test_overlapping_motions_and_q_rest_changing_under_a_running_one():
    # the second motion starts mid-chunk of the first (superposed: float forms); the first
    # retires while the second runs (q_rest changes: the chunk must be made again)
    kinds = play({0: ("add", 150), 100: ("add", 400), 520: ("add", 70)}, 640)
    assert {"chunk", "superposed"} <= kinds


def test_a_short_motion_retiring_inside_the_running_ones_chunk():
    # the long motion's chunk is made while it runs alone; a short one overlaps it and ends
    # (q_rest changes) while the long one's clock is still inside that chunk
    kinds = play({0: ("add", 300), 10: ("add", 20)}, 120)
    assert {"chunk", "superposed"} <= kinds


def test_reset_drops_the_chunk():
    rng = np.random.default_rng(5)
    q0 = rng.normal(0.0, 1.0, 6)
    s = Stream(0.001, q0, fk(q0)[0], fk(q0)[1], fk)
    q, pos, quat = motion(rng, q0, 300, 0.001)
    s.add(Traj(q, pos, quat, 0.001))
    for _ in range(10):
        s.step()
    moved = rng.normal(0.0, 1.0, 6)
    s.reset(moved, fk(moved)[0], fk(moved)[1])
    q2, pos2, quat2 = motion(rng, moved, 300, 0.001)
    s.add(Traj(q2, pos2, quat2, 0.001))
    s.step()
    s.step()
    assert bits(s.q) == bits((moved + q2[2]) - q2[0])     # from the new rest, not the old
    assert bits(s.p) == bits(pos2[2]) and bits(s.quat) == bits(quat2[2])


@pytest.mark.parametrize("n", [1, 5])
def test_short_motions(n):
    play({0: ("add", n), 3: ("add", n)}, 12)
