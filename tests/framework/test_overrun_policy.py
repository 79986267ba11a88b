"""The periodic EC's overrun policy: after a cycle that ends k periods late, ``skip`` (the
default) runs the next cycle at the next deadline still ahead and counts k overruns;
``catch_up`` runs the missed cycles at once (the old behaviour).

The PeriodicEC runs on a ManualClock here (virtual time: it sets the clock to each deadline
instead of sleeping), so the stall and every cycle's start time are exact; no assertion
depends on the machine's timing.
"""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

from rtcf.clock import ManualClock
from rtcf.errors import ConfigError
from rtcf.execution import OVERRUN_POLICIES, PeriodicEC, next_deadline

PERIOD = 0.01


def stalling_spy(make_spy, clock, stall_at: int, stall: float, keep: int = 40):
    """A spy that records each cycle's start time and, in cycle ``stall_at``, moves the
    clock on by ``stall`` seconds (a cycle that took that long)."""
    spy = make_spy("staller")
    spy.starts = []

    def execute(c, info):
        if len(c.starts) < keep:
            c.starts.append(info.now)
            if len(c.starts) == stall_at:
                clock.advance(stall)
    spy.actions["on_execute"] = execute
    return spy


def run_virtual(make_spy, periodic_ec, wait_for, policy, k, keep=40):
    clock = ManualClock(100.0)
    kw = {} if policy is None else {"overrun_policy": policy}
    ec = periodic_ec(1.0 / PERIOD, name=f"virt-{policy}", clock=clock, **kw)
    spy = stalling_spy(make_spy, clock, 5, k * PERIOD + 0.3 * PERIOD, keep)
    ec.add_component(spy)
    ec.start()
    ec.activate_component(spy)
    assert wait_for(lambda: len(spy.starts) >= keep, timeout=10.0)
    ec.stop()
    return ec, spy.starts


@pytest.mark.parametrize("k", [1, 3, 7])
def test_skip_is_the_default_no_cycle_closer_than_half_a_period(make_spy, periodic_ec,
                                                                 wait_for, k):
    ec, starts = run_virtual(make_spy, periodic_ec, wait_for, None, k)
    assert ec.overrun_policy == "skip"
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    assert min(gaps) >= PERIOD / 2
    assert ec.overruns == k and ec.skipped == k
    # the stalled cycle (index 4) is followed by one cycle on the grid, k periods skipped
    assert gaps[4] == pytest.approx((k + 1) * PERIOD)
    assert all(g == pytest.approx(PERIOD) for g in gaps[:4] + gaps[5:])


def test_catch_up_runs_the_missed_cycles_at_once(make_spy, periodic_ec, wait_for):
    k = 5
    ec, starts = run_virtual(make_spy, periodic_ec, wait_for, "catch_up", k)
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    burst = [g for g in gaps if g < PERIOD / 2]
    assert len(burst) == k - 1            # k missed deadlines run back to back
    # the stalled cycle and each burst cycle that still ends past its next deadline
    assert ec.overruns == k and ec.skipped == 0
    # the schedule is caught up: later cycles are on the original grid
    assert (starts[-1] - starts[0]) / PERIOD == pytest.approx(len(starts) - 1, abs=1e-6)


def test_a_real_stall_counts_every_missed_deadline(make_spy, periodic_ec, wait_for):
    k = 4
    ec = periodic_ec(100.0, name="real-stall")
    spy = make_spy("sleeper")
    spy.n = 0

    def execute(c, info):
        c.n += 1
        if c.n == 3:
            time.sleep(k * 0.01)
    spy.actions["on_execute"] = execute
    ec.add_component(spy)
    ec.start()
    ec.activate_component(spy)
    assert wait_for(lambda: spy.n >= 6, timeout=10.0)
    ec.stop()
    assert ec.overruns >= k and ec.skipped >= k


def test_next_deadline_pure():
    assert next_deadline(0.0, 0.5, 1.0) == (1.0, 0, 0)
    assert next_deadline(0.0, 1.2, 1.0) == (2.0, 1, 1)
    assert next_deadline(0.0, 3.5, 1.0) == (4.0, 3, 3)
    assert next_deadline(0.0, 3.0, 1.0)[0] > 3.0           # a grid point reached is past
    assert next_deadline(0.0, 0.35, 0.1, "catch_up") == (0.1, 1, 0)
    nxt, over, skipped = next_deadline(0.0, 2.5, 0.1, "catch_up")   # > 1 s behind: resync
    assert nxt == 2.5 and over >= 24 and skipped >= 24


def test_policy_is_checked():
    assert OVERRUN_POLICIES == ("skip", "catch_up")
    with pytest.raises(ConfigError, match="overrun_policy: expected one of skip, catch_up, "
                                          "got 'burst'"):
        PeriodicEC(100.0, name="bad", overrun_policy="burst")


def test_rtc_conf_key_is_checked_and_reaches_the_ec_factory():
    from rtcf import rtcconf
    from rtcf.build import ECSettings, make_ec
    from rtcf.confcheck import check_conf

    base = rtcconf.defaults()
    with pytest.raises(ConfigError, match="-o: exec_cxt.periodic.overrun_policy: expected "
                                          "skip or catch_up, got 'later'"):
        check_conf(rtcconf.apply_overrides(base, ["exec_cxt.periodic.overrun_policy:later"]))
    conf = rtcconf.apply_overrides(base, ["exec_cxt.periodic.overrun_policy:catch_up"])
    assert check_conf(conf) == []
    decl = SimpleNamespace(name="a", kind="periodic", rate=100.0, members=[])
    assert make_ec(decl, ECSettings.from_conf(conf)).overrun_policy == "catch_up"
    assert make_ec(decl, ECSettings.from_conf(base)).overrun_policy == "skip"


class _FakeEC:
    def __init__(self):
        self.name, self.overruns, self.overrun_policy = "ctl", 0, "skip"


def test_overruns_are_logged_rate_limited_outside_the_ec(caplog):
    from rtcf.manager import Manager
    m = Manager({}, corba=False)
    ec = _FakeEC()
    m.ecs["ctl"] = ec
    with caplog.at_level("WARNING"):
        m.log_overruns(0.0)
        ec.overruns = 3
        m.log_overruns(1.0)
        ec.overruns = 10
        m.log_overruns(2.0)                    # within the interval: not logged
        m.log_overruns(6.5)
    msgs = [r.getMessage() for r in caplog.records if "overrun" in r.getMessage()]
    assert msgs == ["execution context 'ctl': 3 overrun(s) since start (3 total; missed "
                    "deadlines skipped)",
                    "execution context 'ctl': 7 overrun(s) in the last 6 s (10 total; "
                    "missed deadlines skipped)"]


def test_a_late_start_is_not_followed_by_a_cycle_within_half_a_period():
    # due at 0, woke 0.9 late, ended at 0.95: the deadline at 1.0 is only 0.1 after the
    # start, so it is given up (counted) and the next cycle runs at 2.0
    assert next_deadline(0.0, 0.95, 1.0, "skip", start=0.9) == (2.0, 1, 1)
    assert next_deadline(0.0, 0.95, 1.0, "skip", start=0.4) == (1.0, 0, 0)
    assert next_deadline(0.0, 0.95, 1.0, "catch_up", start=0.9) == (1.0, 0, 0)


class LateWakeClock(ManualClock):
    """Virtual time in which every third wake-up of the EC (its set() to a deadline) comes
    0.8 period late, as an overloaded OS wakes a thread late."""

    def __init__(self, period):
        super().__init__(0.0)
        self.period, self.wakes = period, 0

    def set(self, t):
        self.wakes += 1
        super().set(t + (0.8 * self.period if self.wakes % 3 == 0 else 0.0))


@pytest.mark.parametrize("policy", ["skip", "catch_up"])
def test_late_wakeups_are_not_followed_by_a_tiny_period(make_spy, periodic_ec, wait_for,
                                                        policy):
    clock = LateWakeClock(PERIOD)
    ec = periodic_ec(1.0 / PERIOD, name=f"late-wake-{policy}", clock=clock,
                     overrun_policy=policy)
    spy = make_spy("late")
    spy.starts = []

    def execute(c, info):
        if len(c.starts) < 30:
            c.starts.append(info.now)
    spy.actions["on_execute"] = execute
    ec.add_component(spy)
    ec.start()
    ec.activate_component(spy)
    assert wait_for(lambda: len(spy.starts) >= 30, timeout=10.0)
    ec.stop()
    gaps = [b - a for a, b in zip(spy.starts, spy.starts[1:])]
    if policy == "skip":
        assert min(gaps) >= PERIOD / 2
        assert ec.skipped >= 5
    else:                                    # the old behaviour: 0.2-period gaps
        assert min(gaps) == pytest.approx(0.2 * PERIOD)
