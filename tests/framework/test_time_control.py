"""Every EC kind is a time base: pause, resume, advance and the factor on
a wall-clock PeriodicEC (here on a ManualClock: virtual time, exact), a SteppedEC driven from
outside and a SimulationEC (its SimTimeBase); Component.time_base reaches it; each EC kind
reports its own status line part and final report line."""

from __future__ import annotations

import math

import pytest

from rtcf.clock import ManualClock
from rtcf.component import Component
from rtcf.lifecycle import LifeCycleState
from rtcf.simtime import SimTimeBase, SimulationEC


class Count(Component):
    def on_initialize(self) -> None:
        self.n = 0
        self.times: list[float] = []

    def on_execute(self, ec) -> None:
        self.n += 1
        self.times.append(ec.now)


def _comp(name: str = "c") -> Count:
    c = Count(name)
    c.initialize()
    return c


def test_a_paused_periodic_ec_runs_no_cycle_but_applies_requests(periodic_ec, wait_for):
    clock = ManualClock(0.0)
    ec = periodic_ec(100.0, name="p", clock=clock)
    c = _comp()
    ec.add_component(c)
    assert c.time_base is ec and not ec.simulated and ec.real_time_factor == 1.0
    ec.start()
    ec.pause()
    assert ec.paused
    n = c.n
    assert ec.activate_component(c).name == "RTC_OK"     # applied while paused
    assert wait_for(lambda: ec.get_component_state(c) is LifeCycleState.ACTIVE)
    assert c.n == n == 0
    # advance: exactly the cycles of the next 50 ms, paced on the EC's clock, then paused
    t0 = clock.now()
    ec.advance(0.05)
    assert c.n == 5 and ec.paused
    assert c.times == pytest.approx([t0 + k * 0.01 for k in range(5)])
    ec.resume()
    assert wait_for(lambda: c.n >= 20, timeout=10.0)
    ec.pause()
    n = c.n
    clock.advance(1.0)
    assert c.n == n                                     # paused: time passes, no cycle
    ec.stop()


def test_time_control_refusals(periodic_ec, stepped_ec):
    for ec in (periodic_ec(100.0, name="p2", clock=ManualClock(0.0)), stepped_ec(100.0)):
        with pytest.raises(ValueError, match="not in simulation time|runs on the wall clock"):
            ec.set_real_time_factor(2.0)
        for bad in (-1.0, math.nan, math.inf, "1"):
            with pytest.raises(ValueError, match="advance: expected a finite number"):
                ec.advance(bad)


def test_a_stepped_ec_is_a_time_base_driven_from_outside(stepped_ec):
    ec = stepped_ec(100.0, name="s", clock=ManualClock(2.0))
    c = _comp()
    ec.add_component(c)
    ec.start()
    assert c.time_base is ec and ec.now == 2.0
    ec.activate_component(c)
    ec.tick()
    assert c.n == 1
    ec.pause()
    ec.deactivate_component(c)
    ec.tick()                            # the driver's tick: refused, requests applied
    assert c.n == 1 and ec.now == pytest.approx(2.01)
    assert ec.get_component_state(c) is LifeCycleState.INACTIVE
    ec.activate_component(c)
    ec.tick()
    assert ec.get_component_state(c) is LifeCycleState.ACTIVE and c.n == 1
    ec.advance(0.03)                      # three cycles now, in this thread
    assert c.n == 4 and ec.now == pytest.approx(2.04) and ec.paused
    ec.tick()
    assert c.n == 4
    ec.resume()
    ec.tick()
    assert c.n == 5


def test_a_simulation_ec_controls_its_time_base():
    tb = SimTimeBase(0.0)
    tb.pause()
    ec = SimulationEC(100.0, "sim", time_base=tb)
    c = _comp()
    ec.add_component(c)
    assert c.time_base is tb and ec.time_base is tb and ec.simulated and tb.simulated
    ec.start()
    try:
        ec.activate_component(c)
        ec.advance(0.05)
        assert c.n == 5 and tb.now == pytest.approx(0.05) and ec.now == tb.now
        ec.set_real_time_factor(3.0)
        assert tb.real_time_factor == 3.0 == ec.real_time_factor
    finally:
        ec.stop()


def test_status_and_report_come_from_each_ec_kind(periodic_ec, stepped_ec, wait_for):
    clock = ManualClock(0.0)
    p = periodic_ec(100.0, name="wall", clock=clock)
    c = _comp("pc")
    p.add_component(c)
    p.start()
    p.pause()
    p.activate_component(c)
    assert wait_for(lambda: p.get_component_state(c) is LifeCycleState.ACTIVE)
    p.advance(0.05)
    line = p.status(now=10.0)
    assert line.startswith("[wall -/100 Hz late max") and line.endswith("pc:ACT")
    assert "overruns +0 (0 total)" in line
    assert p.status(now=11.0).startswith("[wall 0/100 Hz")        # nothing since the last
    assert p.report().startswith("wall: 5 cycles, ") and "(nominal 100)" in p.report()
    p.stop()
    s = stepped_ec(50.0, name="st")
    s.add_component(_comp("sc"))
    s.start()
    s.step(3)
    assert s.status() == "[st stepped 3 cycles] sc:INA"
    assert s.report() == "st: 3 cycles, ticked (no rate of its own)"
    tb = SimTimeBase(0.0)
    tb.pause()
    e = SimulationEC(100.0, "sim", time_base=tb)
    e.add_component(_comp("mc"))
    e.start()
    try:
        tb.advance(0.1)
        assert e.status() == "[sim 100 Hz 10 cycles] mc:INA"
        assert e.report().startswith("sim: 10 cycles at 100 Hz of simulated time, longest")
        assert "paced" not in e.report()
        assert tb.status(5.0) == "[sim t=0.100 s x- (as fast as possible) paused]"
        assert tb.report().startswith("simulation: 0.100 s of simulated time in ")
    finally:
        e.stop()
