"""rtcf.pacer and rtcf.overrun, the one pacing and overrun implementation of the wall-clock
PeriodicEC and the paced simulation time base, on manual clocks: no assertion depends on
the machine's timing."""

from __future__ import annotations

import pytest

from rtcf.clock import ManualClock
from rtcf.overrun import OVERRUN_POLICIES, RESYNC_LAG, check_policy, next_deadline
from rtcf.pacer import Pacer, spin_until


class Waits:
    """A timed wait that moves a manual clock by the time waited (a perfect timer), or
    by ``late`` more (a timer that wakes late); ``wake_at`` readings report other work."""

    def __init__(self, clock, late: float = 0.0, wake_after: int | None = None):
        self.clock = clock
        self.late = late
        self.calls: list[float] = []
        self.wake_after = wake_after

    def __call__(self, seconds: float) -> bool:
        self.calls.append(seconds)
        if self.wake_after is not None and len(self.calls) > self.wake_after:
            return True
        c = self.clock
        if isinstance(c, ManualClock):
            c.advance(seconds + self.late)
        else:
            c.t += seconds + self.late
        return False


def test_release_waits_until_the_spin_window_then_spins_to_the_deadline(stepping_clock):
    clock = stepping_clock(1e-6)
    pacer = Pacer(clock, spin=200e-6)
    waits = Waits(clock)
    late = pacer.release(0.01, waits)
    assert late is not None and 0.0 <= late < 1.0001e-6
    assert len(waits.calls) == 1 and waits.calls[0] == pytest.approx(0.01 - 200e-6, abs=2e-6)
    assert pacer.slept and pacer.released >= 0.01
    # the spin read the clock about once per microsecond of the 200 us window
    assert 150 <= clock.reads <= 260


def test_a_late_timer_is_reported_as_lateness_not_hidden(stepping_clock):
    clock = stepping_clock(1e-6)
    pacer = Pacer(clock, spin=100e-6)
    late = pacer.release(0.01, Waits(clock, late=300e-6))   # woke 200 us past the deadline
    assert late == pytest.approx(200e-6, abs=3e-6)


def test_release_returns_none_when_woken_for_other_work():
    clock = ManualClock(0.0)
    pacer = Pacer(clock, spin=200e-6)
    waits = Waits(clock, wake_after=0)
    assert pacer.release(0.5, waits) is None
    assert clock.now() == 0.0                     # nothing waited: the caller decides


def test_no_spin_on_a_manual_clock_and_virtual_mode_sets_the_clock():
    clock = ManualClock(5.0)
    assert Pacer(clock, spin=1e-3).spin == 0.0
    virt = Pacer(clock, virtual=True)
    assert virt.release(5.25, Waits(clock)) == 0.0 and clock.now() == 5.25
    assert virt.release(5.0, Waits(clock)) == 0.25          # already past: late, no wait


def test_an_anchored_schedule_maps_schedule_time_without_drift():
    clock = ManualClock(100.0)
    pacer = Pacer(clock)
    pacer.anchor(0.0, speed=2.0)                 # factor 2
    assert pacer.due(0.0) == 100.0
    assert pacer.due(1e-3 * 1_000_000) == 100.0 + 500.0     # computed, not accumulated
    waits = Waits(clock)
    for k in range(1, 1001):
        assert pacer.release_at(k * 1e-3, waits) == 0.0
    assert clock.now() == pytest.approx(100.5, abs=1e-9)


def test_far_behind_an_anchored_schedule_restarts_at_the_release():
    clock = ManualClock(0.0)
    pacer = Pacer(clock)
    pacer.anchor(0.0)
    waits = Waits(clock)
    assert pacer.release_at(0.001, waits) == 0.0
    clock.advance(RESYNC_LAG + 4.0)              # suspended
    assert pacer.release_at(0.002, waits) == 0.0 and pacer.resyncs == 1
    assert pacer.due(0.002) == pytest.approx(clock.now())
    assert pacer.due(0.003) == pytest.approx(clock.now() + 0.001)
    # an unanchored pacer (the PeriodicEC's raw deadlines) reports the real lateness
    raw = Pacer(clock)
    assert raw.release(clock.now() - 3.0, waits) == pytest.approx(3.0) and raw.resyncs == 0


def test_unanchor_restarts_pacing_from_the_next_release():
    clock = ManualClock(10.0)
    pacer = Pacer(clock)
    pacer.release_at(0.0, Waits(clock))
    clock.advance(0.3)
    pacer.unanchor()
    assert pacer.release_at(0.001, Waits(clock)) == 0.0      # due now, not 0.3 s late
    assert pacer.due(0.002) == pytest.approx(10.301)


def test_spin_until_returns_the_first_reading_at_or_past_the_deadline(stepping_clock):
    clock = stepping_clock(1e-6)
    t = spin_until(clock.now, 1e-4)
    assert 1e-4 <= t < 1e-4 + 1.0001e-6


# -- the overrun policy --------------------------------------------------------------------

def test_policies_and_their_check():
    assert OVERRUN_POLICIES == ("skip", "catch_up")
    assert check_policy("skip") is None and check_policy("catch_up") is None
    assert "skip, catch_up" in check_policy("drop")


def test_next_deadline_on_time_late_and_far_behind():
    p = 0.01
    for policy in OVERRUN_POLICIES:                       # on time: the next grid point
        assert next_deadline(1.0, 1.005, p, policy, 1.0) == (1.0 + p, 0, 0)
    # 3.5 periods late: skip goes to the next grid point ahead, counting 3 overruns
    nd, missed, skipped = next_deadline(1.0, 1.035, p, "skip", 1.0)
    assert nd == pytest.approx(1.04) and missed == skipped == 3
    # catch_up runs the next one at once
    assert next_deadline(1.0, 1.035, p, "catch_up", 1.0) == (1.0 + p, 1, 0)
    # more than RESYNC_LAG behind: catch_up restarts at the end of the late cycle
    nd, missed, skipped = next_deadline(1.0, 1.0 + RESYNC_LAG + 0.5, p, "catch_up", 1.0)
    assert nd == 1.0 + RESYNC_LAG + 0.5 and skipped == missed


def test_skip_keeps_half_a_period_after_a_late_start():
    # started 0.8 period late, ended at once: the next grid point is only 0.2 period after
    # the start, so it is given up
    nd, missed, skipped = next_deadline(1.0, 1.0081, 0.01, "skip", start=1.008)
    assert nd == pytest.approx(1.02) and missed == skipped == 1
