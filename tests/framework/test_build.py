"""rtcf.build: ECSettings read from rtc.conf once, the EC factory, the connection check."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from rtcf import rtcconf
from rtcf.build import ECSettings, check_connections, make_ec
from rtcf.composition import parse_composition
from rtcf.errors import CompositionError, ConfigError
from rtcf.execution import PeriodicEC, SteppedEC
from rtcf.simtime import SimTimeBase, SimulationEC


def settings(*overrides: str) -> ECSettings:
    return ECSettings.from_conf(rtcconf.apply_overrides(rtcconf.defaults(), list(overrides)))


def test_settings_read_the_keys_once_with_rtcfs_defaults():
    s = settings()
    assert (s.spin, s.sched_fifo, s.overrun_policy, s.trace, s.simulation) == \
        (pytest.approx(200e-6), False, "skip", False, None)
    s = settings("exec_cxt.periodic.spin_us:50", "exec_cxt.periodic.overrun_policy:catch_up",
                 "exec_cxt.transition_timeout:2", "rtcf.simulation.enable:NO")
    assert (s.spin, s.overrun_policy, s.transition_timeout, s.simulation) == \
        (pytest.approx(50e-6), "catch_up", 2.0, False)
    with pytest.raises(ConfigError, match="-o: exec_cxt.periodic.spin_us"):
        settings("exec_cxt.periodic.spin_us:fast")


def test_simulation_factor_rtc_conf_wins_over_the_composition():
    sim = parse_composition({"components": [{"type": "X"}],
                             "simulation": {"real_time_factor": 20}}, "a.yaml")
    plain = parse_composition({"components": [{"type": "X"}]}, "b.yaml")
    assert settings().simulation_factor(sim) == 20.0
    assert settings().simulation_factor(plain) is None
    assert settings("rtcf.simulation.enable:NO").simulation_factor(sim) is None
    assert settings("rtcf.simulation.enable:YES").simulation_factor(plain) == 1.0
    assert settings("rtcf.simulation.real_time_factor:0").simulation_factor(sim) == 0.0
    assert settings().simulation_factor(SimpleNamespace()) is None     # a stand-in


def test_the_factory_makes_each_kind():
    s = settings("exec_cxt.periodic.overrun_policy:catch_up")
    periodic = make_ec(SimpleNamespace(name="p", kind="periodic", rate=100.0), s)
    stepped = make_ec(SimpleNamespace(name="s", kind="stepped", rate=50.0), s)
    assert type(periodic) is PeriodicEC and periodic.overrun_policy == "catch_up"
    assert type(stepped) is SteppedEC and stepped.rate == 50.0
    tb = s.make_time_base(0.0)
    sim = make_ec(SimpleNamespace(name="q", kind="stepped", rate=10.0), s, tb)
    assert isinstance(sim, SimulationEC) and isinstance(tb, SimTimeBase)


def test_connections_are_checked_against_the_real_ports():
    from rtcf import Component, TimedDouble, TimedLong

    class A(Component):
        def on_initialize(self):
            self.add_out_port("out", TimedDouble)
            self.add_in_port("n", TimedLong)

    a, b = A("a"), A("b")
    a.initialize()
    b.initialize()
    comp = parse_composition({"components": [{"type": "A", "name": "a"},
                                             {"type": "A", "name": "b"}],
                              "connections": [{"from": "a.out", "to": "b.n"},
                                              {"from": "a.nope", "to": "b.n"}]}, "c.yaml")
    with pytest.raises(CompositionError) as info:
        check_connections(comp, {"a": a, "b": b})
    assert info.value.errors == [
        "c.yaml: connections[0]: data types differ: a.out is TimedDouble, b.n is TimedLong",
        "c.yaml: connections[1].from: unknown port (ports of a: out, n), got 'a.nope'"]
