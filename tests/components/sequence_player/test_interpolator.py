"""The signal interpolator (components/sequence_player/interpolator.py): worked numbers of the
Hoff-Arbib and linear modes, checked to 1e-9 against exact rational arithmetic
(fractions.Fraction) or figures worked by hand, plus the sampling rule, queue/online semantics
and bad input."""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pytest

from rtcf_components.sequence_player.interpolator import (HOFFARBIB, LINEAR, Interpolator, rule_v,
                                          sample_count, sample_times)

DT = 0.005
EPS = 1e-9


def run(ip: Interpolator, n: int | None = None) -> np.ndarray:
    """Take samples (all, or n) -> (k, 3, dim)."""
    out = []
    while (n is None or len(out) < n) and ip.step():
        out.append(np.vstack([ip.x, ip.v, ip.a]).copy())
    return np.array(out)


def at(samples: np.ndarray, tau: float) -> np.ndarray:
    """The sample at tau (sample k is at k*dt)."""
    return samples[round(tau / DT) - 1]


def minjerk(s: F) -> tuple[F, F, F]:
    """Exact x, v, a of 0 -> 1 over 1 s (s = tau)."""
    return (10 * s**3 - 15 * s**4 + 6 * s**5, 30 * s**2 - 60 * s**3 + 30 * s**4,
            60 * s - 180 * s**2 + 120 * s**3)


def test_sampling_rule():
    assert sample_count(1.0, DT) == 200
    assert sample_count(0.0125, DT) == 3
    assert np.allclose(sample_times(0.0125, DT), [0.005, 0.010, 0.0125], atol=1e-15)
    assert sample_count(DT, DT) == 1
    assert sample_count(1e-9, DT) == 1


def test_hoffarbib_rest_to_rest_table():
    ip = Interpolator(1, DT)
    assert ip.go([1.0], 1.0) == 200
    s = run(ip)
    assert s.shape == (200, 3, 1)
    for k in range(1, 201):
        x, v, a = minjerk(F(k, 200))
        assert s[k - 1, :, 0] == pytest.approx([float(x), float(v), float(a)], abs=EPS)
    # the same figures rounded to 4 digits
    assert at(s, 0.005)[:, 0] == pytest.approx([1.241e-06, 7.43e-4, 0.2955], rel=1e-3)
    assert at(s, 0.25)[:, 0] == pytest.approx([0.103515625, 1.0546875, 5.625], abs=EPS)
    assert at(s, 0.5)[:, 0] == pytest.approx([0.5, 1.875, 0.0], abs=EPS)
    assert at(s, 0.75)[:, 0] == pytest.approx([0.896484375, 1.0546875, -5.625], abs=EPS)
    assert list(s[-1, :, 0]) == [1.0, 0.0, 0.0]          # exactly the goal
    assert ip.is_empty() and not ip.step()


def test_linear_table():
    ip = Interpolator(1, DT, mode=LINEAR)
    ip.go([1.0], 1.0)
    s = run(ip)
    assert len(s) == 200
    assert at(s, 0.25)[0, 0] == pytest.approx(0.25, abs=EPS)
    assert at(s, 0.5)[0, 0] == pytest.approx(0.5, abs=EPS)
    assert np.allclose(s[:-1, 1, 0], 1.0, atol=EPS)
    assert np.all(s[:, 2, 0] == 0.0)
    assert list(s[-1, :, 0]) == [1.0, 0.0, 0.0]


def test_linear_online_matches_offline():
    a, b = Interpolator(2, DT, mode=LINEAR), Interpolator(2, DT, mode=LINEAR)
    a.go([1.0, -2.0], 0.0125 + 1.0)
    b.set_goal([1.0, -2.0], 0.0125 + 1.0)
    sa, sb = run(a), run(b)
    assert sa.shape == sb.shape == (203, 3, 2)
    assert np.allclose(sa, sb, atol=EPS)


def test_online_interruption_keeps_acceleration():
    """0 -> 1 over 1 s; at tau = 0.5 a new online goal 0 over 1 s."""
    ip = Interpolator(1, DT)
    ip.set_goal([1.0], 1.0)
    run(ip, 100)
    assert [ip.x[0], ip.v[0]] == pytest.approx([0.5, 1.875], abs=EPS)
    ip.set_goal([0.0], 1.0)
    s = run(ip)
    assert len(s) == 200

    def curve(t: F) -> F:
        return F(1, 2) + F(15, 8) * t - F(65, 4) * t**3 + F(45, 2) * t**4 - F(69, 8) * t**5

    for k in range(1, 201):
        assert s[k - 1, 0, 0] == pytest.approx(float(curve(F(k, 200))), abs=EPS)
    assert at(s, 0.25)[0, 0] == pytest.approx(0.7943115234, abs=1e-10)
    assert at(s, 0.5)[0, 0] == pytest.approx(0.54296875, abs=EPS)
    assert at(s, 0.75)[0, 0] == pytest.approx(0.1231689453, abs=1e-10)
    assert s[-1, 0, 0] == 0.0
    peak = int(np.argmax(s[:, 0, 0]))
    assert (peak + 1) * DT == pytest.approx(0.255)
    assert round(s[peak, 0, 0], 5) == 0.79451


def test_online_interruption_with_nonzero_acceleration():
    ip = Interpolator(1, DT)
    ip.go([1.0], 1.0)
    run(ip, 50)
    assert list(np.r_[ip.x, ip.v, ip.a]) == pytest.approx([0.103515625, 1.0546875, 5.625],
                                                           abs=EPS)
    ip.set_goal([1.0], 0.5)            # online: replaces the queued rest, keeps a
    s = run(ip)
    assert len(s) == 100
    assert at(s, 0.125)[0, 0] == pytest.approx(0.3121871948, abs=1e-10)
    assert at(s, 0.25)[0, 0] == pytest.approx(0.6561279297, abs=1e-10)
    assert list(s[-1, :, 0]) == [1.0, 0.0, 0.0]


def test_sequence_path_resets_acceleration_and_holds_the_front_sample():
    """setJointAngles' path: the next sample is kept, then a quintic from
    (x, v, 0) -- different numbers from the online case above."""
    ip = Interpolator(1, DT)
    ip.go([1.0], 1.0)
    run(ip, 50)
    ip.override_from_front()
    ip.go([1.0], 0.5)
    s = run(ip)
    assert len(s) == 101
    front = minjerk(F(51, 200))
    assert s[0, :, 0] == pytest.approx([float(c) for c in front], abs=EPS)
    x0, v0, T = front[0], front[1], F(1, 2)
    A = (1 - (x0 + v0 * T)) / T**3
    B = (0 - v0) / T**2
    c3, c4, c5 = 10 * A - 4 * B, (-15 * A + 7 * B) / T, (6 * A - 3 * B) / T**2
    for k in range(1, 101):
        t = F(k, 200)
        x = x0 + v0 * t + c3 * t**3 + c4 * t**4 + c5 * t**5
        assert s[k, 0, 0] == pytest.approx(float(x), abs=EPS)
    assert abs(s[25, 0, 0] - 0.3121871948) > 1e-4     # not the online figure


def test_keyframes_rule_v():
    ip = Interpolator(1, DT)
    ip.go_keyframes([[1.0], [3.0]], [1.0, 1.0])
    s = run(ip)
    assert len(s) == 400
    assert at(s, 0.5)[0, 0] == pytest.approx(0.265625, abs=EPS)
    assert at(s, 1.0)[:2, 0] == pytest.approx([1.0, 1.5], abs=EPS)
    assert at(s, 1.5)[0, 0] == pytest.approx(2.234375, abs=EPS)
    assert list(at(s, 2.0)[:, 0]) == [3.0, 0.0, 0.0]
    # no jump in velocity at the keyframe
    assert abs(s[200, 1, 0] - s[199, 1, 0]) < 0.01


def test_rule_v_signs():
    keys = np.array([[1.0, 1.0, 1.0], [3.0, 0.0, 1.0], [4.0, 1.0, 1.0]])
    v = rule_v(np.zeros(3), keys, np.array([1.0, 2.0, 1.0]))
    # slopes into the keys: joint 0: 1, 1, 1; joint 1: 1, -0.5, 1; joint 2: 1, 0, 0
    assert list(v[0]) == [1.0, 0.0, 0.5]     # a zero slope counts as the same sign
    assert list(v[1]) == [1.0, 0.0, 0.0]
    assert list(v[2]) == [0.0, 0.0, 0.0]


def test_records_load_pattern_timing():
    """loadPattern's timing: .pos rows 0/0, 1/1, 1.5/0.5 with tm = 2 from 0.2."""
    ip = Interpolator(1, DT)
    ip.reset([0.2])
    rows = np.array([[0.0, 0.0], [1.0, 1.0], [1.5, 0.5]])
    n = ip.go_records(rows[:, 1:], 2.0, np.diff(rows[:, 0]))
    s = run(ip)
    assert n == len(s) == 700
    for tau, x in ((1.0, 0.1), (2.0, 0.0), (2.5, 0.5), (3.0, 1.0), (3.25, 0.75), (3.5, 0.5)):
        assert at(s, tau)[0, 0] == pytest.approx(x, abs=EPS), tau
    assert list(s[-1, :, 0]) == [0.5, 0.0, 0.0]


def test_records_spaced_dt_are_reproduced_exactly():
    ip = Interpolator(1, DT)
    ip.go_records([[0.1], [0.2], [0.15]], DT, [DT, DT])
    s = run(ip)
    assert list(s[:, 0, 0]) == [0.1, 0.2, 0.15]


def test_records_match_keyframes_at_rest():
    """The vectorised pattern path equals segment-by-segment planning."""
    rng = np.random.default_rng(1)
    rec = rng.normal(size=(6, 4))
    gaps = np.array([0.1, 0.013, 0.005, 0.3, 0.02])
    a, b = Interpolator(4, DT), Interpolator(4, DT)
    a.go_records(rec, 0.05, gaps)
    b.go_keyframes(rec, np.r_[0.05, gaps], np.zeros_like(rec))
    assert np.allclose(run(a), run(b), rtol=1e-9, atol=1e-9)
    a, b = Interpolator(4, DT, LINEAR), Interpolator(4, DT, LINEAR)
    a.go_records(rec, 0.05, gaps)
    b.go_keyframes(rec, np.r_[0.05, gaps])
    assert np.allclose(run(a), run(b), atol=1e-12)


def test_average_speed_rule_for_zero_time():
    ip = Interpolator(2, DT)
    assert ip.go([1.0, 0.5], 0.0) == 400          # max |dx| 1 rad at 0.5 rad/s: 2 s
    ip.clear()
    assert ip.go([0.1, 0.0], 0.0) == 200          # never under 1 s
    w = Interpolator(6, DT, avg_speed=100.0)
    assert w.go([300.0] + [0.0] * 5, 0.0) == 600  # wrenches: 100 per second


def test_vectorised_over_joints_equals_scalar():
    goals = [0.3, -1.2, 2.0]
    ip = Interpolator(3, DT)
    ip.reset([0.1, 0.0, -0.5])
    ip.go(goals, 0.7)
    s = run(ip)
    for j, (x0, g) in enumerate(zip([0.1, 0.0, -0.5], goals)):
        one = Interpolator(1, DT)
        one.reset([x0])
        one.go([g], 0.7)
        assert np.allclose(run(one)[:, :, 0], s[:, :, j], rtol=1e-13, atol=1e-13)


def test_offline_goals_chain_from_the_tail():
    ip = Interpolator(1, DT)
    ip.go([1.0], 1.0)
    ip.go([0.0], 1.0)
    s = run(ip)
    assert len(s) == 400
    assert list(s[199, :, 0]) == [1.0, 0.0, 0.0]
    assert s[-1, 0, 0] == 0.0


def test_offline_after_online_starts_at_its_end():
    ip = Interpolator(1, DT)
    ip.set_goal([1.0], 0.5)
    run(ip, 10)
    ip.go([2.0], 0.5)
    s = run(ip)
    assert len(s) == 90 + 100
    assert s[89, 0, 0] == 1.0 and s[-1, 0, 0] == 2.0


def test_hold_stops_where_it_is():
    ip = Interpolator(1, DT)
    ip.go([1.0], 1.0)
    run(ip, 100)
    ip.hold()
    s = run(ip)
    assert len(s) == 1
    assert list(s[0, :, 0]) == [pytest.approx(0.5), 0.0, 0.0]


def test_reset_and_mode_and_bad_input():
    ip = Interpolator(2, DT)
    ip.reset([1.0, 2.0])
    assert ip.is_empty() and list(ip.x) == [1.0, 2.0]
    with pytest.raises(ValueError, match="expected 2 values, got 3"):
        ip.go([1.0, 2.0, 3.0], 1.0)
    with pytest.raises(ValueError, match="duration must be >= 0.*-1"):
        ip.set_goal([0.0, 0.0], -1.0)
    with pytest.raises(ValueError, match="LINEAR .* HOFFARBIB .* got 7"):
        ip.set_mode(7)
    assert ip.is_empty()                    # a rejected goal changed nothing
    ip.set_mode(LINEAR)
    assert ip.mode == LINEAR
    with pytest.raises(ValueError, match="dt must be > 0"):
        Interpolator(1, 0.0)
    assert HOFFARBIB == 1 and LINEAR == 0


@pytest.mark.parametrize("mode", [LINEAR, HOFFARBIB])
def test_an_online_goal_turned_into_queued_samples_plays_the_same(mode):
    """An offline goal behind a running online goal first queues the online goal's
    remaining samples: they equal what stepping it would have given."""
    a, b = Interpolator(2, DT, mode), Interpolator(2, DT, mode)
    for ip in (a, b):
        ip.set_goal([1.0, -0.5], 0.3)
        run(ip, 7)
    a.go([0.0, 0.0], 0.1)
    sa, sb = run(a), run(b)
    assert np.allclose(sa[:len(sb)], sb, atol=1e-12) and len(sa) == len(sb) + 20
