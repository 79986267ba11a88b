"""Tests of rtcf.execution: SteppedEC determinism and ECInfo, member order, PeriodicEC timing
(loose bands only: this is a shared VM), synchronous transitions, set_rate, idling, stop, and
fault isolation in the EC thread."""

from __future__ import annotations

import threading
import time

import pytest

from rtcf.clock import ManualClock
from rtcf.component import ECInfo
from rtcf.errors import ConfigError
from rtcf.execution import PeriodicEC, SteppedEC, spin_until
from rtcf.lifecycle import LifeCycleState, ReturnCode

S = LifeCycleState


def ec_threads(name: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == f"rtcf-ec-{name}" and t.is_alive()]


# -- SteppedEC ----------------------------------------------------------------------------------

def record_cycle_info(spy):
    """Make the spy record (name, hook, ec id, cycle, planned, now) into its journal."""
    def probe(c, ec):
        c.journal.append(("info", c.instance_name, ec.id, ec.cycle, ec.planned, ec.now,
                          ec.period, ec.measured_period))
    for hook in ("on_activated", "on_execute", "on_state_update", "on_error"):
        spy.actions[hook] = probe


def run_scenario(make_spy) -> list:
    journal: list = []
    ec = SteppedEC(128.0, name="det", clock=ManualClock(10.0))
    a, b = make_spy("a", journal=journal), make_spy("b", journal=journal)
    record_cycle_info(a)
    record_cycle_info(b)
    ec.add_component(a)
    ec.add_component(b)
    ec.start()
    ec.activate_component(a)
    ec.step(3)
    ec.activate_component(b)
    ec.step(3)
    b.fail["on_execute"] = "raise"
    ec.step(3)
    ec.deactivate_component(a)
    ec.reset_component(b)
    ec.step(2)
    ec.stop()
    return journal


def test_stepped_ec_is_deterministic(make_spy):
    first, second = run_scenario(make_spy), run_scenario(make_spy)
    assert len(first) > 40
    assert first == second
    hooks_b = [e[1] for e in first if e[0] == "b"]
    assert hooks_b[-2:] == ["on_reset", "on_shutdown"]
    assert hooks_b.count("on_aborting") == 1
    infos = [e for e in first if e[0] == "info"]
    assert [e[3] for e in infos if e[1] == "a"][:4] == [0, 0, 0, 1]   # one tick: 3 hooks


def test_planned_time_advances_by_exactly_the_period(make_spy):
    clock = ManualClock(2.0)
    ec = SteppedEC(128.0, name="t", clock=clock)      # 1/128 s is exact in binary
    spy = make_spy("t")
    seen = []
    spy.actions["on_execute"] = lambda c, ec: seen.append((ec.cycle, ec.planned, ec.now))
    ec.add_component(spy)
    ec.start()
    ec.activate_component(spy)
    ec.step(10)
    assert [s[0] for s in seen] == list(range(10))
    assert [s[1] for s in seen] == [2.0 + k / 128 for k in range(10)]
    assert all(planned == now for _, planned, now in seen)
    assert clock.now() == 2.0 + 10 / 128
    assert ec.cycles == 10


def test_planned_time_at_a_decimal_rate(make_spy):
    ec = SteppedEC(100.0, name="d")
    spy = make_spy("d")
    seen = []
    spy.actions["on_execute"] = lambda c, ec: seen.append(ec.planned)
    ec.add_component(spy)
    ec.activate_component(spy)
    ec.step(50)
    diffs = [b - a for a, b in zip(seen, seen[1:])]
    assert len(diffs) == 49
    assert all(abs(d - 0.01) < 1e-12 for d in diffs)


def test_ecinfo_fields(make_spy):
    ec = SteppedEC(64.0, name="info")
    spy = make_spy("i")
    infos = []
    spy.actions["on_execute"] = lambda c, info: infos.append(
        (info, info.id, info.ec, info.period, info.measured_period, info.cycle))
    ec.add_component(spy)
    ec.activate_component(spy)
    ec.step(3)
    assert len(infos) == 3
    objs = {id(i[0]) for i in infos}
    assert len(objs) == 1                     # one ECInfo, updated in place
    info = infos[0][0]
    assert isinstance(info, ECInfo)
    for _, ec_id, owner, period, measured, _cycle in infos:
        assert ec_id == 0 and owner is ec
        assert period == 1 / 64 and measured == 1 / 64
    assert [i[5] for i in infos] == [0, 1, 2]
    assert "id=0" in repr(info)


def test_tick_starts_a_stopped_stepped_ec(make_spy):
    ec = SteppedEC(100.0)
    spy = make_spy("auto")
    ec.add_component(spy)
    assert not ec.is_running()
    ec.tick()
    assert ec.is_running()
    assert spy.hooks() == ["on_initialize", "on_startup"]
    assert ec.stop() == ReturnCode.RTC_OK
    assert ec.stop() == ReturnCode.PRECONDITION_NOT_MET


def test_member_order_is_the_declared_order(make_spy):
    journal: list = []
    ec = SteppedEC(100.0, name="order")
    names = ["m2", "m0", "m1", "m3"]
    comps = [make_spy(n, journal=journal) for n in names]
    for c in comps:
        ec.add_component(c)
    assert [c.instance_name for c in ec.members()] == names
    ec.start()
    assert [n for n, h, _ in journal if h == "on_startup"] == names
    for c in comps:
        ec.activate_component(c)
    journal.clear()
    ec.step(3)
    execs = [n for n, h, _ in journal if h == "on_execute"]
    assert execs == names * 3
    # each member runs its execute and state update before the next member starts
    first_tick = [(n, h) for n, h, _ in journal][:3 * len(names)]
    assert first_tick[:3] == [("m2", "on_activated"), ("m2", "on_execute"),
                              ("m2", "on_state_update")]
    ec.stop()


@pytest.mark.parametrize("bad_rate", [0, -1.0, float("nan"), float("inf"), 1e-9, 1e12,
                                      "100", True, None])
def test_bad_rate_is_rejected(bad_rate):
    with pytest.raises(ConfigError, match="rate"):
        SteppedEC(bad_rate, name="bad")
    with pytest.raises(ConfigError, match="rate"):
        PeriodicEC(bad_rate, name="bad")
    with pytest.raises(ConfigError, match="spin"):
        PeriodicEC(100.0, name="bad", spin=-1e-3)


def test_set_rate_on_a_stepped_ec(make_spy):
    ec = SteppedEC(100.0, name="sr")
    spy = make_spy("sr")
    ec.add_component(spy)
    ec.activate_component(spy)
    ec.step()
    assert ec.set_rate(50.0) == ReturnCode.RTC_OK
    assert spy.calls[-1] == ("on_rate_changed", 0)
    t0 = ec.clock.now()
    ec.step()
    assert ec.clock.now() - t0 == pytest.approx(0.02)
    for bad in (0, -5, "fast", None):
        assert ec.set_rate(bad) == ReturnCode.BAD_PARAMETER
    assert ec.rate == 50.0 and ec.period == 0.02
    assert spy.count("on_rate_changed") == 1


# -- PeriodicEC --------------------------------------------------------------------------------

def test_spin_until_reads_the_clock_until_the_deadline(monkeypatch):
    """The shared busy-wait of PeriodicEC and the paced simulation time base: it returns the
    first reading at or past the deadline; with yield_gil it calls time.sleep(0) between
    readings (other threads may take the GIL), without it never."""
    for yield_gil in (False, True):
        readings = iter([1.0, 1.5, 1.9, 2.0, 2.5])
        sleeps = []
        monkeypatch.setattr(time, "sleep", lambda s: sleeps.append(s))
        assert spin_until(lambda: next(readings), 2.0, yield_gil) == 2.0
        assert next(readings) == 2.5                  # no reading after the deadline's
        assert sleeps == ([0, 0, 0] if yield_gil else [])
        assert spin_until(lambda: 3.0, 2.0, yield_gil) == 3.0    # already past: one reading


def test_periodic_ec_keeps_its_schedule_and_reports_it(make_spy, periodic_ec, wait_for):
    """On a ManualClock the periodic EC runs in virtual time (it sets the clock to each
    deadline instead of sleeping): every cycle starts on its deadline t0 + k * period, work
    in the cycle does not shift the next one (absolute deadlines), and stats() says so,
    exactly. How near a real machine gets to its deadlines is a figure: bench/bench_ec.py
    prints it next to cyclictest."""
    rate = 128.0                                        # 1/128 s is exact in binary
    clock = ManualClock(5.0)
    ec = periodic_ec(rate, name="p128", clock=clock)
    spy = make_spy("p")
    starts = []

    def execute(c, info):
        starts.append(info.now)
        clock.advance(1.0 / 1024)                       # an eighth of a period of work
    spy.actions["on_execute"] = execute
    ec.add_component(spy)
    assert ec.start() == ReturnCode.RTC_OK
    assert ec.activate_component(spy) == ReturnCode.RTC_OK
    assert wait_for(lambda: len(starts) >= 300)
    st = ec.stats()
    assert ec.stop() == ReturnCode.RTC_OK
    gaps = {b - a for a, b in zip(starts, starts[1:])}
    assert gaps == {1.0 / rate}                         # no drift, no early or late cycle
    for key in ("name", "rate", "cycles", "overruns", "achieved_rate", "mean_period",
                "lateness_p50", "lateness_p99", "lateness_max", "members"):
        assert key in st
    assert st["name"] == "p128" and st["rate"] == rate
    assert st["cycles"] >= 300 and st["overruns"] == ec.overruns == 0
    assert isinstance(st["overruns"], int)
    assert st["mean_period"] == pytest.approx(1.0 / rate)
    assert st["achieved_rate"] == pytest.approx(rate)
    assert st["lateness_p50"] == st["lateness_p99"] == st["lateness_max"] == 0.0
    m = st["members"]["p"]
    assert m["state"] == "ACTIVE"
    assert set(m) >= {"exec_last", "exec_max", "exec_mean"}
    assert 0 <= m["exec_mean"] <= m["exec_max"]
    assert spy.count("on_execute") == len(starts) >= st["cycles"]


def test_activate_blocks_until_active(make_spy, periodic_ec):
    ec = periodic_ec(100.0, name="sync")
    spy = make_spy("sync")
    spy.actions["on_activated"] = lambda c, info: time.sleep(0.05)
    spy.actions["on_deactivated"] = lambda c, info: time.sleep(0.05)
    ec.add_component(spy)
    ec.start()
    assert ec.activate_component(spy) == ReturnCode.RTC_OK
    assert ec.get_component_state(spy) is S.ACTIVE
    assert spy.count("on_activated") == 1
    assert spy.threads["on_activated"] != threading.get_ident()
    assert spy.threads["on_activated"] == ec_threads("sync")[0].ident
    assert ec.deactivate_component(spy) == ReturnCode.RTC_OK
    assert ec.get_component_state(spy) is S.INACTIVE
    assert spy.count("on_deactivated") == 1


def test_set_rate_calls_on_rate_changed_for_active_members(make_spy, periodic_ec, wait_for):
    ec = periodic_ec(200.0, name="rate")
    active, idle = make_spy("active"), make_spy("idle")
    periods = []
    active.actions["on_execute"] = lambda c, info: periods.append(info.period)
    ec.add_component(active)
    ec.add_component(idle)
    ec.start()
    ec.activate_component(active)
    assert ec.set_rate(100.0) == ReturnCode.RTC_OK
    assert active.count("on_rate_changed") == 1       # done by the time set_rate returns
    assert idle.count("on_rate_changed") == 0
    assert active.threads["on_rate_changed"] == ec_threads("rate")[0].ident
    assert ec.rate == 100.0 and ec.period == pytest.approx(0.01)
    n = len(periods)
    assert wait_for(lambda: len(periods) >= n + 3)
    assert periods[-1] == pytest.approx(0.01)
    assert ec.set_rate(-1) == ReturnCode.BAD_PARAMETER
    for bad in (float("inf"), float("nan"), 1e12, 1e-9):    # rtshell's set_rate too
        assert ec.set_rate(bad) == ReturnCode.BAD_PARAMETER
    assert ec.rate == 100.0


def test_all_inactive_periodic_ec_does_not_cycle(make_spy, periodic_ec, wait_for):
    ec = periodic_ec(500.0, name="idle")
    spy = make_spy("idle")
    ec.add_component(spy)
    ec.start()
    time.sleep(0.15)
    assert ec.cycles <= 1
    ec.activate_component(spy)
    assert wait_for(lambda: ec.cycles >= 10)
    ec.deactivate_component(spy)
    c0 = ec.cycles
    time.sleep(0.2)
    assert ec.cycles - c0 <= 2          # ~100 cycles would have run at 500 Hz
    assert ec.is_running() and len(ec_threads("idle")) == 1
    # a request wakes it up again
    ec.activate_component(spy)
    assert wait_for(lambda: ec.cycles >= c0 + 10)


def test_stop_joins_the_thread(make_spy, periodic_ec):
    ec = periodic_ec(200.0, name="joiner")
    spy = make_spy("j")
    ec.add_component(spy)
    ec.start()
    ec.activate_component(spy)
    assert len(ec_threads("joiner")) == 1
    assert ec.stop() == ReturnCode.RTC_OK
    assert ec_threads("joiner") == []
    assert not ec.is_running()
    assert spy.hooks()[-2:] == ["on_deactivated", "on_shutdown"]
    assert ec.stop() == ReturnCode.PRECONDITION_NOT_MET


def test_an_exception_in_a_hook_does_not_kill_the_ec_thread(make_spy, periodic_ec, wait_for):
    ec = periodic_ec(200.0, name="robust")
    good, bad = make_spy("good"), make_spy("bad")
    ec.add_component(bad)
    ec.add_component(good)
    ec.start()
    ec.activate_component(bad)
    ec.activate_component(good)
    bad.fail["on_execute"] = "raise"
    bad.fail["on_error"] = "raise"
    assert wait_for(lambda: ec.get_component_state(bad) is S.ERROR)
    n = good.count("on_execute")
    assert wait_for(lambda: good.count("on_execute") >= n + 10)
    assert wait_for(lambda: bad.count("on_error") >= 5)
    assert ec.get_component_state(good) is S.ACTIVE
    assert len(ec_threads("robust")) == 1 and ec.is_running()
    # and the broken one can be reset from outside, synchronously
    bad.fail.clear()
    assert ec.reset_component(bad) == ReturnCode.RTC_OK
    assert ec.get_component_state(bad) is S.INACTIVE


def test_commands_run_in_the_periodic_ec_thread(make_spy, periodic_ec):
    ec = periodic_ec(100.0, name="cmds")
    spy = make_spy("cmds")
    ec.add_component(spy)
    ec.start()
    # Inactive: a pending command is work enough to run a cycle
    ident, inside = spy.call(lambda: (threading.get_ident(), ec.in_ec_thread()), timeout=5.0)
    assert inside and ident == ec_threads("cmds")[0].ident
    with pytest.raises(KeyError):
        spy.call(lambda: {}["missing"], timeout=5.0)


def test_remove_component_at_run_time(make_spy, periodic_ec):
    ec = periodic_ec(100.0, name="rm")
    spy, other = make_spy("rm"), make_spy("other")
    ec.add_component(spy)
    ec.add_component(other)
    ec.start()
    ec.activate_component(spy)
    ec.remove_component(spy)
    assert spy.hooks()[-2:] == ["on_deactivated", "on_shutdown"]
    assert spy.threads["on_shutdown"] == ec_threads("rm")[0].ident
    assert ec.members() == [other]
    assert ec.get_component_state(spy) is S.CREATED
    assert spy.ecs == []


# -- live statistics (read by the EC profile and the web view) ----------------------------------

def test_recent_stats_cover_the_last_window_only(make_spy):
    clock = ManualClock(5.0)
    ec = SteppedEC(128.0, name="live", clock=clock)   # 1/128 s is exact in binary
    spy = make_spy("s")
    ec.add_component(spy)
    ec.start()
    ec.activate_component(spy)
    assert ec.recent_stats()["rate"] == 0.0           # not cycled yet
    ec.step(300)
    # a late cycle long ago (outside the last second) and one just now
    ec._lateness[10] = 0.5
    for k in range(1, 4):                             # the last three cycles late
        ec._lateness[(ec.cycles - k) % 8192] = 0.002
    s = ec.recent_stats(1.0)
    assert s["cycles"] == 300 and s["overruns"] == 0
    assert s["rate"] == pytest.approx(128.0)
    assert s["lateness_max"] == pytest.approx(0.002)
    assert 0.0 < s["lateness_p99"] <= 0.002
    clock.advance(3.0)                                # idle for longer than the window
    idle = ec.recent_stats(1.0)
    assert idle["rate"] == 0.0 and idle["lateness_max"] == 0.0 and idle["cycles"] == 300
    ec.stop()


def test_on_state_update_is_called_where_a_component_has_one(monkeypatch):
    from rtcf.component import Component

    calls: list[str] = []

    class Own(Component):                       # its class defines one
        def on_state_update(self, ec):
            calls.append(self.instance_name)

    plain, own, attr = Component("plain"), Own("own"), Component("attr")
    attr.on_state_update = lambda ec: calls.append("attr")   # its own, before it joins
    for c in (plain, own, attr):
        c.initialize()
    ec = SteppedEC(100.0, name="su", clock=ManualClock(0.0))
    for c in (plain, own, attr):
        ec.add_component(c)
    # the base's does nothing: a member without its own is not even called for it
    monkeypatch.setattr(Component, "on_state_update",
                        lambda self, ec: calls.append(f"base {self.instance_name}"))
    ec.start()
    for c in (plain, own, attr):
        ec.activate_component(c)
    ec.step(3)
    ec.stop()
    assert calls == ["own", "attr"] * 3
