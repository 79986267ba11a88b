"""Why a paced simulated instant was late (rtcf.simtime.OVERRUN_CAUSES), on a manual wall
clock: a member that takes longer than a period, a late release (waiting for a CPU, for the
GIL, or neither: the thread's schedstat, replaced here), a step call to another process; the late
instants that follow under catch_up count under the first one's cause. Also the lockstep
threads' CPU (rtcf.simulation.cpu), the EC profile's stats.overruns.<cause>, connector
checks left to a lockstep run, and np.percentile's numbers without np.percentile. Every
wait is a bounded condition; the counts are exact (the manual clock decides lateness)."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

from rtcf import build
from rtcf.clock import ManualClock
from rtcf.component import Component
from rtcf.confcheck import check_conf
from rtcf.errors import ConfigError
from rtcf.execution import percentiles
from rtcf.lifecycle import ReturnCode
from rtcf.rtcconf import apply_overrides, defaults
from rtcf.simtime import OVERRUN_CAUSES, RemotePart, SimTimeBase, SimulationEC, causes_text

LINUX_SCHEDSTAT = os.path.exists("/proc/thread-self/schedstat")


class Slow(Component):
    """on_execute advances the manual wall clock by ``cost[cycle]`` [s] (a long cycle)."""

    category = "test"

    def __init__(self, name: str, wall: ManualClock):
        super().__init__(name)
        self.wall = wall
        self.cost: dict[int, float] = {}

    def on_execute(self, ec):
        dt = self.cost.get(ec.cycle)
        if dt:
            self.wall.advance(dt)


class FakeRemote:
    """A follower whose step at simulated time ``slow_at`` takes ``cost`` of wall time."""

    def __init__(self, wall: ManualClock, slow_at: float, cost: float):
        self.wall, self.slow_at, self.cost = wall, slow_at, cost
        self.steps = 0

    def step(self, t, parts):
        self.steps += 1
        if abs(t - self.slow_at) < 1e-9:
            self.wall.advance(self.cost)


@pytest.fixture
def paced():
    made = []

    def make(remote: FakeRemote | None = None):
        wall = ManualClock(0.0) if remote is None else remote.wall
        tb = SimTimeBase(1.0, wall_clock=wall)
        ec = SimulationEC(1000.0, "e", tb)
        comp = Slow("slow", wall)
        comp.initialize()
        ec.add_component(comp)
        if remote is not None:
            tb.add_remote(RemotePart("r", 1000.0, 0.5, "other", 0, remote=remote))
        with tb.held():
            ec.start()
            assert ec.activate_component(comp) == ReturnCode.RTC_OK
        assert tb.wait_idle()            # instant 0 ran at once (the anchor)
        made.append(ec)
        return wall, tb, ec, comp
    yield make
    for ec in made:
        ec.stop()


def walk(tb: SimTimeBase, wall: ManualClock, until: float) -> None:
    """Move the wall clock to the wall time of each next instant in turn (just past it)
    until the instant at simulated time ``until`` has run: none is released late."""
    while tb.now <= until + 1e-9:
        wall.set(max(wall.now(), tb._pacer.due(tb.now) + 1e-7))
        assert tb.wait_idle()


def counts(**kw: int) -> dict[str, int]:
    return {c: kw.get(c, 0) for c in OVERRUN_CAUSES}


def test_a_long_member_cycle_counts_under_members_with_its_catch_up(paced):
    wall, tb, ec, comp = paced()
    comp.cost[3] = 0.0025            # cycle 3 (due at wall 3 ms) ends at 5.5 ms
    walk(tb, wall, 0.003)
    # instant 3 ends past instant 4's time, instant 4 (at once) past instant 5's: 2 overruns,
    # both the long cycle's; instant 5 ends before instant 6's time
    assert tb.overruns == 2 and ec.overruns == 2
    assert tb.overrun_causes == counts(members=2) == ec.overrun_causes
    assert tb.stats()["overrun_causes"] == counts(members=2)
    assert "overruns 2 (own cycles 2)" in tb.report()


def test_a_late_release_without_waiting_counts_as_a_late_timer(paced, monkeypatch):
    monkeypatch.setattr("rtcf.simtime._sched", lambda fd: (0.0, 0))
    wall, tb, ec, _ = paced()
    walk(tb, wall, 0.006)
    assert tb.overruns == 0
    wall.advance(0.0025)             # instant 7 is released 1.5 ms late
    assert tb.wait_idle()
    # instant 7 ends past 8's time, 8 (at once) before 9's
    assert tb.overrun_causes == counts(timer=1) and tb.overruns == 1
    assert "overruns 1 (late timer 1)" in tb.report()


@pytest.mark.skipif(not LINUX_SCHEDSTAT, reason="needs /proc/thread-self/schedstat")
def test_a_late_release_put_to_sleep_again_counts_as_the_gil(paced, monkeypatch):
    wall, tb, ec, _ = paced()
    # switched in many more times than it waited: it slept again after its wait (the GIL)
    monkeypatch.setattr("rtcf.simtime._sched", lambda fd: (0.0, int(wall.now() * 1e6)))
    walk(tb, wall, 0.006)
    wall.advance(0.0025)
    assert tb.wait_idle()
    assert tb.overrun_causes == counts(gil=1) == ec.overrun_causes


@pytest.mark.skipif(not LINUX_SCHEDSTAT, reason="needs /proc/thread-self/schedstat")
def test_a_late_release_spent_waiting_for_a_cpu_counts_as_cpu(paced, monkeypatch):
    wall, tb, ec, _ = paced()
    # the thread's run delay grows with the wall clock: it waited for a CPU all along
    monkeypatch.setattr("rtcf.simtime._sched", lambda fd: (wall.now(), 0))
    walk(tb, wall, 0.006)
    wall.advance(0.0035)             # instant 7 is released 2.5 ms late
    assert tb.wait_idle()
    assert tb.overrun_causes == counts(cpu=2) == ec.overrun_causes
    assert causes_text(tb.overrun_causes) == "wake-up waiting for a CPU 2"


def test_a_slow_step_of_another_process_counts_as_remote(paced):
    remote = FakeRemote(ManualClock(0.0), slow_at=0.003, cost=0.0025)
    wall, tb, ec, _ = paced(remote)
    walk(tb, wall, 0.003)
    assert remote.steps >= 6
    assert tb.overrun_causes == counts(remote=2) == ec.overrun_causes
    assert causes_text(counts()) == "none"


def test_the_ec_profile_reports_the_causes(paced):
    from rtcf.corba.ecservice import live_properties
    wall, tb, ec, comp = paced()
    comp.cost[2] = 0.0015
    walk(tb, wall, 0.002)
    props = live_properties(ec)
    assert props["stats.overruns"] == "1" and props["stats.overruns.members"] == "1"
    assert props["stats.overruns.remote"] == "0"


# -- the lockstep threads' CPU ------------------------------------------------------------------

def conf(*overrides: str):
    return apply_overrides(defaults(), list(overrides))


def test_rtcf_simulation_cpu_is_read_and_checked():
    assert build.lockstep_cpu(conf("rtcf.simulation.cpu:NO")) is None
    assert build.lockstep_cpu(conf("rtcf.simulation.cpu:1")) == 1
    cpus = sorted(os.sched_getaffinity(0))
    assert build.lockstep_cpu(conf()) == (cpus[-1] if len(cpus) > 1 else None)   # auto
    with pytest.raises(ConfigError, match=r"-o: rtcf.simulation.cpu: expected auto, NO or "
                                          r"a CPU number \(0, 1, ...\), got 'first'"):
        build.lockstep_cpu(conf("rtcf.simulation.cpu:first"))
    with pytest.raises(ConfigError, match="rtcf.simulation.cpu"):
        check_conf(conf("rtcf.simulation.cpu:-1"))
    assert check_conf(conf("rtcf.simulation.cpu:0")) == []
    beyond = max(os.sched_getaffinity(0)) + 1            # a CPU this process may not use
    with pytest.raises(ConfigError, match=r"-o: rtcf.simulation.cpu: expected auto, NO or a "
                       r"CPU this process may run on \(0.*\), got '%d'" % beyond):
        check_conf(conf(f"rtcf.simulation.cpu:{beyond}"))
    tb = build.ECSettings.from_conf(conf("rtcf.simulation.cpu:0")).make_time_base(1.0)
    assert tb.cpu == 0


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="Linux only")
def test_pin_puts_the_calling_thread_on_the_cpu_and_back(caplog):
    cpus = os.sched_getaffinity(0)
    cpu = max(cpus)
    seen = []

    def run(tb):
        tb._pin(True)
        seen.append(os.sched_getaffinity(0))
        tb._pin(False)
        seen.append(os.sched_getaffinity(0))
    t = threading.Thread(target=run, args=(SimTimeBase(1.0, cpu=cpu),))
    t.start()
    t.join(10)
    assert seen == [{cpu}, cpus]
    assert os.sched_getaffinity(0) == cpus              # this thread untouched
    # a CPU the process may not use: one warning, the thread stays where it was
    seen.clear()
    t = threading.Thread(target=run, args=(SimTimeBase(1.0, cpu=100000),))
    t.start()
    t.join(10)
    assert seen == [cpus, cpus]
    assert "rtcf.simulation.cpu: the lockstep threads stay on every CPU" in caplog.text


# -- connector checks left to the lockstep run -------------------------------------------------

def test_connections_within_a_lockstep_run_are_not_checked():
    from rtcf.corba.liveness import _within_run
    from rtcf.corba.lockstep import PROCESS_PROPERTY
    from rtcf.corba.nv import to_nvlist

    class Profile:
        def __init__(self, props):
            self.properties = to_nvlist(props)
    assert _within_run(Profile({PROCESS_PROPERTY: "arm_sim_split/planner"}), "arm_sim_split")
    assert _within_run(Profile({PROCESS_PROPERTY: "arm_sim_split/main"}), "arm_sim_split")
    assert not _within_run(Profile({PROCESS_PROPERTY: "other/planner"}), "arm_sim_split")
    assert not _within_run(Profile({"dataport.interface_type": "corba_cdr"}), "arm_sim_split")


# -- percentiles ------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 3, 10, 999, 8192])
def test_percentiles_are_numpys(n):
    rng = np.random.default_rng(n)
    values = rng.random(n)
    qs = (0.0, 50.0, 99.0, 99.9, 100.0)
    want = [float(np.percentile(values, q)) for q in qs]
    assert percentiles(values, qs) == pytest.approx(want, abs=1e-15)
    assert percentiles(np.sort(values), qs, presorted=True) == pytest.approx(want, abs=1e-15)
    assert percentiles(np.empty(0), (50.0,)) == [0.0]
