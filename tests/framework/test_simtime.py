"""Tests of rtcf.simtime: lockstep of two rates on one simulated time base (exact cycle counts,
exact ECInfo times, order), pause / resume / advance, pacing against a manual wall clock,
factor 0 running ahead of a frozen wall clock, lifecycle requests and commands while
running, paused and held (synchronous transitions must not hang), set_rate, the process's
simulation mode (synchronous in-process new/periodic connectors, simulated stamps), and the
composition / rtc.conf keys with their bad values. No assertion on timing: every wait is a
bounded condition, every count exact."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest

from rtcf.clock import ManualClock, wall_time
from rtcf.component import Component
from rtcf.composition import CompositionError, merge, parse_composition
from rtcf.confcheck import check_conf
from rtcf.datatypes import TimedDoubleSeq, time_of
from rtcf.errors import ConfigError
from rtcf.lifecycle import LifeCycleState, ReturnCode
from rtcf.manager import Manager
from rtcf.ports import ReadStatus, connect
from rtcf.rtcconf import apply_overrides, defaults
from rtcf.simtime import (SimTimeBase, SimulationEC, disable_process_simulation,
                          enable_process_simulation, process_time_base)

S = LifeCycleState


class Tick(Component):
    """Appends (name, hook, cycle, now, planned, measured_period, period) to ``journal``."""

    category = "test"

    def __init__(self, name: str, journal: list):
        super().__init__(name)
        self.journal = journal
        self.on_exec = None          # optional fn(self, ec) run in on_execute

    def _rec(self, hook: str, ec) -> None:
        self.journal.append((self.instance_name, hook, ec.cycle, ec.now, ec.planned,
                             ec.measured_period, ec.period))

    def on_activated(self, ec):
        self._rec("on_activated", ec)

    def on_deactivated(self, ec):
        self._rec("on_deactivated", ec)

    def on_execute(self, ec):
        self._rec("on_execute", ec)
        if self.on_exec is not None:
            self.on_exec(self, ec)


class Rig:
    """A time base with one SimulationEC per rate, one Tick in each, all stopped at the end.
    Started (and activated) with time held at 0; then paused unless ``paused=False``, with
    ``stop_at`` as the stop time."""

    def __init__(self, factor=0.0, rates=(1000.0, 100.0), wall=None, activate=True,
                 paused=True, stop_at=None, **tb_kw):
        self.journal: list = []
        self.tb = SimTimeBase(factor, wall_clock=wall, **tb_kw)
        self.ecs = [SimulationEC(r, f"ec{r:g}", self.tb) for r in rates]
        self.comps = []
        for ec in self.ecs:
            c = Tick(f"t{ec.rate:g}", self.journal)
            c.initialize()
            ec.add_component(c)
            self.comps.append(c)
        with self.tb.held():
            for ec in self.ecs:
                ec.start()
            if activate:
                for ec, c in zip(self.ecs, self.comps):
                    assert ec.activate_component(c) == ReturnCode.RTC_OK
            if paused:
                self.tb.pause()
            self.tb.set_stop_time(stop_at)

    def execs(self, name: str) -> list:
        return [j for j in self.journal if j[0] == name and j[1] == "on_execute"]

    def close(self) -> None:
        for ec in self.ecs:
            if ec.is_running():
                ec.stop()


@pytest.fixture
def rigs():
    made: list[Rig] = []

    def make(*a, **kw) -> Rig:
        r = Rig(*a, **kw)
        made.append(r)
        return r
    yield make
    for r in made:
        r.close()
        assert not r.tb.thread_alive()


# -- lockstep -----------------------------------------------------------------------------------

def test_two_rates_in_lockstep_exact_counts_and_times(rigs):
    r = rigs(0.0)
    r.tb.pause()
    assert r.tb.now == 0.0 and not r.journal[2:]        # only the two activations
    assert r.tb.advance(1.0) == 1.0
    fast, slow = r.execs("t1000"), r.execs("t100")
    assert len(fast) == 1000 and len(slow) == 100
    for k, (_, _, cycle, now, planned, measured, period) in enumerate(fast):
        assert cycle == k and now == k / 1000.0 and planned == now and period == 0.001
        assert measured == pytest.approx(0.001, abs=1e-12)
    for k, (_, _, cycle, now, planned, measured, period) in enumerate(slow):
        assert cycle == k and now == k / 100.0 and planned == now and period == 0.01
    # the next second: exactly as many again, on the same grid
    assert r.tb.advance(1.0) == 2.0
    assert len(r.execs("t1000")) == 2000 and len(r.execs("t100")) == 200
    assert r.execs("t100")[-1][3] == 1.99 and r.execs("t1000")[-1][3] == 1.999


def test_order_at_a_shared_instant_is_creation_order(rigs):
    for rates in ((1000.0, 100.0), (100.0, 1000.0)):
        r = rigs(0.0, rates=rates)
        r.tb.pause()
        r.tb.advance(0.0205)
        runs = [(j[3], j[0]) for j in r.journal if j[1] == "on_execute"]
        first = f"t{rates[0]:g}"
        for t in (0.0, 0.01, 0.02):
            at = [name for (now, name) in runs if now == t]
            assert at[0] == first and len(at) == 2, (rates, t, at)
        r.close()


def test_activation_at_start_runs_at_zero_and_first_cycle_at_zero(rigs):
    r = rigs(0.0)
    r.tb.pause()
    acts = [j for j in r.journal if j[1] == "on_activated"]
    assert [(j[0], j[3], j[4]) for j in acts] == [("t1000", 0.0, 0.0), ("t100", 0.0, 0.0)]
    r.tb.advance(0.001)
    assert [j[3] for j in r.journal if j[1] == "on_execute"] == [0.0, 0.0]


def test_clock_and_time_base_of_components(rigs):
    r = rigs(0.0)
    r.tb.pause()
    r.tb.advance(0.25)
    for ec, c in zip(r.ecs, r.comps):
        assert ec.clock.now() == 0.25 == r.tb.now
        assert c.time_base is r.tb
        assert ec.kind == "PERIODIC" and ec.rate in (1000.0, 100.0)
    lone = Tick("lone", [])
    lone.initialize()
    assert lone.time_base is None
    lone.time_base = r.tb                   # assignable (a test's stand-in)
    assert lone.time_base is r.tb
    lone.time_base = None
    assert lone.time_base is None


# -- pause, resume, advance ------------------------------------------------------------------------

def test_pause_stops_time_and_resume_continues(rigs):
    r = rigs(0.0, paused=False, stop_at=0.5)    # bounded: factor 0 runs flat out
    assert r.tb.stop_reached.wait(20)
    assert r.tb.now == 0.5
    assert len(r.execs("t1000")) == 500 and len(r.execs("t100")) == 50
    r.tb.set_stop_time(1.0)
    assert r.tb.stop_reached.wait(20)
    assert len(r.execs("t1000")) == 1000
    r.tb.pause()
    r.tb.set_stop_time(None)
    n = len(r.journal)
    assert r.tb.wait_idle()
    assert len(r.journal) == n and r.tb.now == 1.0 and r.tb.paused
    r.tb.set_stop_time(1.5)
    r.tb.resume()
    assert r.tb.stop_reached.wait(20)
    assert len(r.execs("t1000")) == 1500 and len(r.execs("t100")) == 150


def test_advance_runs_half_open_windows_exactly(rigs):
    r = rigs(0.0)
    r.tb.pause()
    assert r.tb.advance(0.0005) == 0.0005
    assert len(r.execs("t1000")) == 1 and len(r.execs("t100")) == 1
    assert r.tb.advance(0.0005) == 0.001                # instant 0.001 is not before 0.001
    assert len(r.execs("t1000")) == 1
    assert r.tb.advance(0.0) == 0.001
    assert len(r.execs("t1000")) == 1
    # a thousand steps of one period: float error must not gain or lose a cycle
    for _ in range(1000):
        r.tb.advance(0.001)
    assert len(r.execs("t1000")) == 1001 and len(r.execs("t100")) == 101
    assert r.tb.now == 1.001
    times = [j[3] for j in r.execs("t1000")]
    assert times == [k / 1000.0 for k in range(1001)]
    for _ in range(10):
        r.tb.advance(0.1)
    assert len(r.execs("t1000")) == 2001 and r.tb.now == pytest.approx(2.001, abs=1e-12)


@pytest.mark.parametrize("bad", [-0.001, math.nan, math.inf, -math.inf, "1", None, True])
def test_advance_refuses_bad_values_and_changes_nothing(rigs, bad):
    r = rigs(0.0)
    r.tb.pause()
    r.tb.advance(0.01)
    n = len(r.journal)
    with pytest.raises(ValueError, match="advance: expected a finite number of seconds"):
        r.tb.advance(bad)
    assert r.tb.now == 0.01 and len(r.journal) == n and r.tb.paused


def test_advance_while_running_pauses_first_and_stays_paused(rigs):
    r = rigs(0.0, paused=False, stop_at=0.2)
    assert r.tb.stop_reached.wait(20)
    r.tb.set_stop_time(None)
    t = r.tb.now
    assert not r.tb.paused
    r.tb.resume()
    now = r.tb.advance(0.05)            # the time base was running flat out
    assert r.tb.paused and now >= t + 0.05 - 1e-9
    assert r.tb.wait_idle() and r.tb.now == now
    n = len(r.journal)
    assert r.tb.wait_idle() and len(r.journal) == n


def test_advance_from_a_hook_sets_a_target_and_returns(rigs):
    r = rigs(0.0)
    got = []

    def at_cycle(comp, ec):
        if ec.cycle == 9:
            got.append(comp.time_base.advance(0.005))   # in the time base thread
    r.comps[0].on_exec = at_cycle
    r.tb.resume()
    assert r.tb.wait_idle(20)
    # cycle 9 ran at 0.009; the target 0.014 is reached, then it stays paused
    assert got == [pytest.approx(0.014)]
    assert r.tb.paused and r.tb.now == pytest.approx(0.014)
    assert len(r.execs("t1000")) == 14 and len(r.execs("t100")) == 2


def test_pause_from_a_hook_finishes_the_instant(rigs):
    r = rigs(0.0)
    r.comps[0].on_exec = lambda comp, ec: ec.cycle == 20 and comp.time_base.pause()
    r.tb.resume()
    assert r.tb.wait_idle(20)
    # the instant 0.02 ran for both ECs (the 100 Hz one after the 1 kHz one), then it stopped
    assert len(r.execs("t1000")) == 21 and len(r.execs("t100")) == 3
    assert r.tb.now == 0.021 and r.tb.paused


def test_no_ec_advance_just_moves_time():
    tb = SimTimeBase(0.0)
    assert tb.advance(1.5) == 1.5 and tb.paused
    assert not tb.thread_alive()


@pytest.mark.parametrize("bad", [-1, math.nan, math.inf, "2", None, False])
def test_real_time_factor_refuses_bad_values(bad):
    tb = SimTimeBase(3.0)
    with pytest.raises(ValueError, match="set_real_time_factor: expected a number >= 0"):
        tb.set_real_time_factor(bad)
    assert tb.real_time_factor == 3.0
    with pytest.raises(ConfigError, match="real_time_factor: expected a number >= 0"):
        SimTimeBase(bad)


def test_simulation_ec_needs_a_time_base():
    with pytest.raises(ConfigError, match="needs a SimTimeBase"):
        SimulationEC(100.0, "x")
    with pytest.raises(ConfigError, match="rate"):
        SimulationEC(0.0, "x", SimTimeBase())


# -- pacing against a manual wall clock -------------------------------------------------------------

def test_pacing_follows_the_wall_clock_at_the_factor(rigs):
    wall = ManualClock(100.0)
    r = rigs(2.0, wall=wall, paused=False)      # 2x: 1 ms simulated per 0.5 ms wall
    assert r.tb.wait_idle()
    # instant 0 runs at once (the pacing anchor), the next one waits for the wall clock
    assert len(r.execs("t1000")) == 1 and len(r.execs("t100")) == 1
    assert r.tb.now == 0.001
    wall.set(100.00225)                          # 2.25 ms wall = 4.5 ms simulated
    assert r.tb.wait_idle()
    assert len(r.execs("t1000")) == 5 and r.tb.now == 0.005
    wall.set(100.5 + 1e-7)                       # 1 s simulated in all
    assert r.tb.wait_idle()
    assert len(r.execs("t1000")) == 1001 and len(r.execs("t100")) == 101
    # a new factor re-anchors at the next instant: 10x from here
    r.tb.set_real_time_factor(10.0)
    assert r.tb.wait_idle()
    n = len(r.execs("t1000"))
    wall.advance(0.01 + 1e-7)                    # 0.1 s simulated more
    assert r.tb.wait_idle()
    assert len(r.execs("t1000")) == n + 100
    assert r.tb.lateness_max < 1.0


def test_pacing_far_behind_resyncs_instead_of_bursting(rigs):
    wall = ManualClock(0.0)
    r = rigs(1.0, wall=wall, paused=False)
    assert r.tb.wait_idle()
    n = len(r.execs("t1000"))
    wall.advance(5.0)                            # e.g. the process was suspended
    assert r.tb.wait_idle()
    assert len(r.execs("t1000")) == n + 1 and r.tb.resyncs == 1
    wall.advance(0.0101)
    assert r.tb.wait_idle()
    assert len(r.execs("t1000")) == n + 11


def test_paced_stop_time_is_reached_on_the_wall_clock(rigs):
    wall = ManualClock(0.0)
    r = rigs(1.0, wall=wall, paused=False, stop_at=0.0105)
    assert r.tb.wait_idle()
    wall.set(0.0102)
    assert r.tb.wait_idle()
    assert len(r.execs("t1000")) == 11 and not r.tb.stop_reached.is_set()
    assert r.tb.now == 0.0105               # reached in simulated time, not yet on the wall
    wall.set(0.0106)
    assert r.tb.wait_idle() and r.tb.stop_reached.is_set()
    assert r.tb.now == 0.0105 and len(r.execs("t1000")) == 11
    assert r.tb.stats()["wall_elapsed"] == pytest.approx(0.0106)


def test_factor_zero_runs_ahead_of_a_frozen_wall_clock(rigs):
    wall = ManualClock(7.0)                      # never moves
    r = rigs(0.0, wall=wall, paused=False, stop_at=3.0)
    assert r.tb.stop_reached.wait(30)
    assert r.tb.now == 3.0 and wall.now() == 7.0
    assert len(r.execs("t1000")) == 3000 and len(r.execs("t100")) == 300


def test_paced_instants_are_released_by_spinning_to_their_wall_time(rigs, stepping_clock):
    """The PeriodicEC's release: with every instant inside the spin window (spin 1 s), the
    thread never waits on a timer; it reads the wall clock until the instant's wall time,
    so each cycle starts at it, never before, and less than one clock step after it."""
    wall = stepping_clock(1e-6)
    r = rigs(1.0, wall=wall, paused=False, stop_at=0.02, spin=1.0)
    assert r.tb.stop_reached.wait(30)
    fast, slow = r.ecs
    assert fast.cycles == 20 and slow.cycles == 2
    for ec in (fast, slow):
        late = ec._lateness[:ec.cycles]
        assert np.all(late >= 0.0) and np.all(late < 1.0001e-6), late
    assert r.tb.lateness_max < 1.0001e-6
    assert wall.t == pytest.approx(0.02, abs=1e-4)    # about one reading per microsecond
    assert r.tb.stats()["fifo"] is False                # not asked for


def test_spin_is_checked_and_off_on_a_manual_clock():
    for bad in (-1e-6, math.nan, math.inf, "x", True):
        with pytest.raises(ConfigError, match="simulation time: spin: expected a number of "
                                              "seconds >= 0"):
            SimTimeBase(1.0, spin=bad)
    assert SimTimeBase(1.0, spin=5e-4).spin == 5e-4
    assert SimTimeBase(1.0, wall_clock=ManualClock(0.0), spin=5e-4).spin == 0.0


def test_sched_fifo_only_while_paced(rigs, monkeypatch):
    """SCHED_FIFO is asked for when the thread starts pacing and given back while it runs
    unpaced (advance, factor 0): a real-time thread running flat out would starve the
    others. The switch itself is rtcf.execution.set_thread_fifo (replaced here)."""
    calls = []

    def fake_fifo(enable, priority=50):
        calls.append((enable, priority))
        return enable
    monkeypatch.setattr("rtcf.simtime.set_thread_fifo", fake_fifo)
    wall = ManualClock(0.0)
    r = rigs(1.0, wall=wall, paused=False, sched_fifo=True, priority=40)
    assert r.tb.wait_idle()
    assert calls == [(True, 40)] and r.tb.stats()["fifo"] is True
    r.tb.advance(0.005)                                # unpaced, then paused
    assert calls == [(True, 40), (False, 40)] and r.tb.fifo is False
    r.tb.resume()
    assert r.tb.wait_idle()
    assert calls[-1] == (True, 40) and len(calls) == 3
    r.tb.set_real_time_factor(0.0)
    r.tb.set_stop_time(r.tb.now + 0.01)
    assert r.tb.stop_reached.wait(30)
    assert calls[-1] == (False, 40) and len(calls) == 4


def test_the_manager_gives_the_time_base_the_ec_spin_settings():
    comp = parse_composition(dict(BASE), "a.yaml")
    m = Manager(conf("rtcf.simulation.enable:YES", "exec_cxt.periodic.spin_us:50",
                     "exec_cxt.periodic.spin_yield:YES"), corba=False)
    tb = m.ec_settings.make_time_base(m.simulation_factor(comp))
    assert tb.spin == pytest.approx(50e-6) and tb.spin_yield is True
    assert tb.sched_fifo is False                     # rtcf's default (rtc.conf: YES)


def test_held_time_does_not_advance(rigs):
    r = rigs(0.0, paused=False, stop_at=1e6)   # flat out until held
    with r.tb.held():
        n = len(r.journal)
        t = r.tb.now
        assert r.tb.wait_idle()
        assert len(r.journal) == n and r.tb.now == t
    r.tb.set_stop_time(t + 0.1)
    assert r.tb.stop_reached.wait(20)


# -- lifecycle and commands from other threads ------------------------------------------------------

def test_sync_activation_while_paused_is_applied_at_once(rigs):
    r = rigs(0.0, activate=False)
    r.tb.pause()
    r.tb.advance(0.0123)
    ec, comp = r.ecs[1], r.comps[1]
    assert ec.get_component_state(comp) is S.INACTIVE
    done = []
    t = threading.Thread(target=lambda: done.append(ec.activate_component(comp)))
    t.start()
    t.join(5.0)
    assert done == [ReturnCode.RTC_OK]
    assert ec.get_component_state(comp) is S.ACTIVE
    act = [j for j in r.journal if j[1] == "on_activated"]
    # at the current simulated time; planned: that EC's next instant
    assert [(j[0], j[3], j[4]) for j in act] == [("t100", 0.0123, 0.02)]
    assert not r.execs("t100")
    r.tb.advance(0.01)
    assert [j[3] for j in r.execs("t100")] == [0.02]
    assert ec.deactivate_component(comp) == ReturnCode.RTC_OK
    assert ec.get_component_state(comp) is S.INACTIVE


def test_sync_activation_while_running_and_paced(rigs):
    wall = ManualClock(0.0)
    r = rigs(1.0, wall=wall, activate=False, paused=False)  # waits for the wall clock
    assert r.tb.wait_idle()
    ec, comp = r.ecs[0], r.comps[0]
    assert ec.activate_component(comp) == ReturnCode.RTC_OK
    assert ec.get_component_state(comp) is S.ACTIVE
    assert ec.deactivate_component(comp) == ReturnCode.RTC_OK
    assert ec.reset_component(comp) == ReturnCode.PRECONDITION_NOT_MET


def test_sync_activation_while_running_flat_out(rigs):
    r = rigs(0.0, activate=False, paused=False, stop_at=1e6)   # bounded, but far
    ec, comp = r.ecs[0], r.comps[0]
    assert ec.activate_component(comp) == ReturnCode.RTC_OK
    assert ec.get_component_state(comp) is S.ACTIVE
    r.tb.pause()
    n = len(r.execs("t1000"))
    assert n > 0
    # activation came at the start of a cycle: on_activated and the first cycle agree
    act = [j for j in r.journal if j[1] == "on_activated"][0]
    first = r.execs("t1000")[0]
    assert act[4] == first[4]


def test_component_call_and_params_while_paused(rigs, spy_class):
    from rtcf.params import Param
    r = rigs(0.0)
    r.tb.pause()
    ec = r.ecs[0]
    spy = spy_class(gain=Param(float, 1.0))("spy")
    spy.initialize()
    ec.add_component(spy)                       # on_startup in the time base thread
    assert spy.count("on_startup") == 1
    assert spy.threads["on_startup"] != threading.get_ident()
    assert ec.activate_component(spy) == ReturnCode.RTC_OK
    idents = []
    result = spy.call(lambda: idents.append(threading.get_ident()) or 42, timeout=5.0)
    assert result == 42 and idents[0] != threading.get_ident()
    spy.set_param("gain", 3.0)
    assert r.tb.wait_idle()
    assert spy.gain == 3.0                       # applied while paused
    assert spy.count("on_execute") == 0
    ec.remove_component(spy)
    assert spy.hooks()[-2:] == ["on_deactivated", "on_shutdown"]


def test_set_rate_moves_the_grid(rigs):
    r = rigs(0.0)
    r.tb.pause()
    r.tb.advance(0.1)
    ec = r.ecs[1]
    assert ec.set_rate(50.0) == ReturnCode.RTC_OK
    r.tb.advance(0.1)
    times = [j[3] for j in r.execs("t100")]
    assert times[10:] == [0.1, 0.12, 0.14, 0.16, 0.18]
    assert r.execs("t100")[-1][6] == 0.02                 # ECInfo.period follows
    assert ec.set_rate(-1) == ReturnCode.BAD_PARAMETER


def test_stop_and_restart_an_ec(rigs):
    r = rigs(0.0)
    r.tb.pause()
    r.tb.advance(0.05)
    slow = r.ecs[1]
    assert slow.stop() == ReturnCode.RTC_OK
    assert [j[1] for j in r.journal if j[0] == "t100"][-1] == "on_deactivated"
    r.tb.advance(0.05)
    assert len(r.execs("t100")) == 5 and len(r.execs("t1000")) == 100
    assert slow.start() == ReturnCode.RTC_OK
    assert slow.activate_component(r.comps[1]) == ReturnCode.RTC_OK
    r.tb.advance(0.0201)
    assert [j[3] for j in r.execs("t100")][5:] == [0.1, 0.11, 0.12]


def test_a_failing_hook_goes_to_error_and_others_run(rigs):
    r = rigs(0.0)

    def boom(comp, ec):
        if ec.cycle == 3:
            raise RuntimeError("on purpose")
    r.comps[1].on_exec = boom
    r.tb.pause()
    r.tb.advance(0.1)
    assert r.ecs[1].get_component_state(r.comps[1]) is S.ERROR
    assert len(r.execs("t1000")) == 100


# -- the process's simulation mode -----------------------------------------------------------------

class Src(Component):
    category = "test"

    def on_initialize(self):
        self.out = self.add_out_port("out", TimedDoubleSeq)
        self.out.value.data = np.zeros(1)

    def on_execute(self, ec):
        self.out.value.data[0] = ec.now
        self.out.write()


class Sink(Component):
    category = "test"

    def on_initialize(self):
        self.inp = self.add_in_port("in", TimedDoubleSeq, buffer__length=64)
        self.got: list = []

    def on_execute(self, ec):
        while self.inp.read() is ReadStatus.NEW:
            self.got.append((ec.now, float(self.inp.value.data[0]),
                             time_of(self.inp.value)))


@pytest.fixture
def sim_mode():
    made = []

    def on(tb):
        enable_process_simulation(tb)
        made.append(tb)
    yield on
    disable_process_simulation()
    assert process_time_base() is None


@pytest.mark.parametrize("sub", [{"subscription_type": "new"},
                                 {"subscription_type": "new", "push_policy": "new"},
                                 {"subscription_type": "periodic", "push_rate": "250"}])
def test_in_process_connectors_deliver_at_write_in_simulation_mode(sim_mode, sub):
    tb = SimTimeBase(0.0)
    sim_mode(tb)
    fast, slow = SimulationEC(1000.0, "f", tb), SimulationEC(100.0, "s", tb)
    src, sink = Src("src"), Sink("sink")
    src.initialize()
    sink.initialize()
    fast.add_component(src)
    slow.add_component(sink)
    conn = connect(src.out, sink.inp, {**sub, "timestamp_policy": "on_write"})
    try:
        assert conn.publisher._thread is None            # no publisher thread
        with tb.held():
            fast.start()
            slow.start()
            fast.activate_component(src)
            slow.activate_component(sink)
        tb.pause()
        tb.advance(0.1)
    finally:
        fast.stop()
        slow.stop()
        conn.close()
    got = sink.got
    # the sink's last cycle is at 0.09, after the source's (created first)
    if sub["subscription_type"] == "periodic":
        # push policy new: the newest sample at each 4 ms push instant, at that write
        want = [k / 250.0 for k in range(23)]
    else:
        want = [k / 1000.0 for k in range(91)]        # each write handed over at once
    assert [g[1] for g in got] == want
    # each sample read in the sink's cycle at or after it was written
    assert all(now >= value for (now, value, _) in got)
    # the on_write stamp is simulated time: the writer's instant
    assert all(abs(stamp - value) < 1e-6 for (_, value, stamp) in got)


def test_wall_clock_mode_keeps_threads_and_epoch_stamps():
    disable_process_simulation()
    assert process_time_base() is None
    src, sink = Src("src2"), Sink("sink2")
    src.initialize()
    sink.initialize()
    conn = connect(src.out, sink.inp, {"subscription_type": "new"})
    try:
        assert conn.publisher._thread is not None
    finally:
        conn.close()
    assert wall_time() > 1e9


# -- configuration ---------------------------------------------------------------------------------

BASE = {"components": [{"type": "X"}]}


def test_composition_simulation_key():
    c = parse_composition({**BASE, "simulation": {"real_time_factor": 20}}, "a.yaml")
    assert c.simulation.real_time_factor == 20.0
    assert parse_composition({**BASE, "simulation": None}, "a.yaml").simulation \
        .real_time_factor == 1.0
    assert parse_composition(BASE, "a.yaml").simulation is None
    other = parse_composition({"components": [{"type": "Y"}]}, "b.yaml")
    assert merge(c, other).simulation == c.simulation
    assert merge(other, c).simulation == c.simulation


@pytest.mark.parametrize("value, message", [
    ({"real_time_factor": -1}, "a.yaml: simulation.real_time_factor: expected a number >= 0"
                               " (0 = as fast as possible, 1 = real time), got -1"),
    ({"real_time_factor": "fast"}, "a.yaml: simulation.real_time_factor: expected a number "
                                   ">= 0 (0 = as fast as possible, 1 = real time), got 'fast'"),
    ({"real_time_factor": math.inf}, "simulation.real_time_factor: expected a number >= 0"),
    ({"real_time_factor": True}, "simulation.real_time_factor: expected a number >= 0"),
    ({"rtf": 2}, "a.yaml: simulation.rtf: unknown key (known: real_time_factor)"),
    (3, "a.yaml: simulation: expected a mapping, e.g. {real_time_factor: 1.0}, got 3"),
])
def test_composition_simulation_bad_values(value, message):
    with pytest.raises(CompositionError) as e:
        parse_composition({**BASE, "simulation": value}, "a.yaml")
    assert message in str(e.value)


def conf(*overrides: str):
    return apply_overrides(defaults(), list(overrides))


def test_conf_keys_are_known_and_checked():
    assert check_conf(conf("rtcf.simulation.enable:YES",
                           "rtcf.simulation.real_time_factor:0")) == []
    with pytest.raises(ConfigError) as e:
        check_conf(conf("rtcf.simulation.real_time_factor:-2"))
    assert str(e.value) == ("-o: rtcf.simulation.real_time_factor: expected a number >= 0 "
                            "(0 = as fast as possible, 1 = real time), got '-2'")
    with pytest.raises(ConfigError) as e:
        check_conf(conf("rtcf.simulation.real_time_factor:nan"))
    assert "rtcf.simulation.real_time_factor" in str(e.value)
    with pytest.raises(ConfigError) as e:
        check_conf(conf("rtcf.simulation.enable:maybe"))
    assert str(e.value) == "-o: rtcf.simulation.enable: expected YES or NO, got 'maybe'"


@pytest.mark.parametrize("overrides, key, want", [
    ((), None, None),
    ((), {"real_time_factor": 5}, 5.0),
    (("rtcf.simulation.enable:NO",), {"real_time_factor": 5}, None),
    (("rtcf.simulation.enable:YES",), None, 1.0),
    (("rtcf.simulation.enable:YES", "rtcf.simulation.real_time_factor:0"), None, 0.0),
    (("rtcf.simulation.real_time_factor:0",), {"real_time_factor": 5}, 0.0),
    (("rtcf.simulation.real_time_factor:0",), None, None),      # factor alone: off (warned)
])
def test_conf_overrides_the_composition(overrides, key, want):
    data = dict(BASE)
    if key is not None:
        data["simulation"] = key
    comp = parse_composition(data, "a.yaml")
    assert Manager(conf(*overrides), corba=False).simulation_factor(comp) == want


def test_a_followers_step_thread_runs_under_sched_fifo_and_warns_once_where_refused(
        rigs, monkeypatch, caplog):
    """A lockstep follower's instants run in the thread of the leader's step call: with
    sched_fifo that thread is put under SCHED_FIFO at the time base's priority at its first
    step (once per thread), as the leader's pacing thread that waits for it; refused (not
    permitted), one warning and the steps run in a normal thread."""
    calls, granted = [], [True]

    def fake_fifo(enable, priority=50):
        calls.append((threading.get_ident(), enable, priority))
        return enable and granted[0]
    monkeypatch.setattr("rtcf.simtime.set_thread_fifo", fake_fifo)
    r = rigs(1.0, rates=(1000.0,), paused=False, driven=True, sched_fifo=True, priority=40)
    tb = r.tb

    def steps(first: int, n: int) -> int:
        for k in range(first, first + n):
            tb.run_step(k / 1000.0, r.ecs)
        return threading.get_ident()

    me = steps(0, 3)
    assert calls == [(me, True, 40)] and tb.fifo is True
    box = []
    th = threading.Thread(target=lambda: box.append(steps(3, 2)))   # another ORB thread
    th.start()
    th.join(30)
    assert calls[1:] == [(box[0], True, 40)]
    assert len(r.execs("t1000")) == 5
    granted[0] = False
    with caplog.at_level("WARNING"):
        steps(5, 2)                                    # this thread again: not asked again
        th = threading.Thread(target=lambda: steps(7, 1))
        th.start()
        th.join(30)
        th = threading.Thread(target=lambda: steps(8, 1))
        th.start()
        th.join(30)
    assert len(calls) == 4 and tb.fifo is False         # the two new threads asked
    warned = [m for m in caplog.messages if "SCHED_FIFO is not permitted" in m]
    assert len(warned) == 1, caplog.messages
    # without sched_fifo nothing is asked
    r2 = rigs(1.0, rates=(1000.0,), paused=False, driven=True, priority=40)
    r2.tb.run_step(0.0, r2.ecs)
    assert len(calls) == 4
