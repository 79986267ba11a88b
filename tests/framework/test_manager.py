"""Manager: building a composition, validation against real ports, parameter sources,
shutdown order, the multi-process split. No ORB (corba=False). The module loader's tests
are in test_loader.py, the command line's in test_command.py."""

from __future__ import annotations

import pytest

from rtcf import Component, Param, TimedDoubleSeq, TimedLong, rtcconf
from rtcf.composition import parse_composition
from rtcf.errors import CompositionError
from rtcf.launcher import cross_connections, processes, split
from rtcf.lifecycle import LifeCycleState
from rtcf.manager import Manager

JOURNAL: list[tuple[str, str]] = []


class Src(Component):
    gain = Param(float, 1.0, bounds=(0, None))

    def on_initialize(self):
        self.add_out_port("out", TimedDoubleSeq)
        self.add_out_port("count", TimedLong)

    def on_deactivated(self, ec):
        JOURNAL.append((self.instance_name, "on_deactivated"))

    def on_shutdown(self, ec):
        JOURNAL.append((self.instance_name, "on_shutdown"))

    def on_finalize(self):
        JOURNAL.append((self.instance_name, "on_finalize"))


class Sink(Src):
    def on_initialize(self):
        self.add_in_port("in", TimedDoubleSeq)


def manager(**conf) -> Manager:
    c = rtcconf.merge_conf(rtcconf.defaults(), {k.replace("__", "."): v
                                                for k, v in conf.items()})
    m = Manager(c, corba=False)
    m.register(Src)
    m.register(Sink)
    return m


def compose(text: dict, name: str = "sys.yaml"):
    return parse_composition(text, name)


BASE = {
    "components": [{"type": "Src", "name": "a"}, {"type": "Sink", "name": "b"}],
    "connections": [{"from": "a.out", "to": "b.in"}],
    "execution_contexts": [{"name": "e", "kind": "stepped", "rate": 100,
                            "members": ["a", "b"]}],
}


def test_build_connects_and_activates():
    m = manager()
    m.build(compose(BASE))
    ec = m.ecs["e"]
    ec.step(2)
    assert ec.get_component_state(m.components["a"]) is LifeCycleState.ACTIVE
    assert len(m.components["a"].ports["out"].connectors) == 1
    m.shutdown()


def test_connection_given_in_reverse_is_oriented_by_port_direction():
    comp = dict(BASE, connections=[{"from": "b.in", "to": "a.out"}])
    m = manager()
    m.build(compose(comp))
    assert len(m.components["b"].ports["in"].connectors) == 1
    m.shutdown()


@pytest.mark.parametrize("conn, message", [
    ({"from": "a.nope", "to": "b.in"}, "connections[0].from: unknown port (ports of a: out, "
                                       "count), got 'a.nope'"),
    ({"from": "a.count", "to": "b.in"}, "data types differ: a.count is TimedLong, b.in is "
                                        "TimedDoubleSeq"),
    ({"from": "a.out", "to": "a.count"}, "expected an OutPort and an InPort"),
])
def test_bad_connections_are_reported_and_nothing_stays_created(conn, message):
    m = manager()
    JOURNAL.clear()
    with pytest.raises(CompositionError) as e:
        m.build(compose(dict(BASE, connections=[conn])))
    assert "sys.yaml: " in str(e.value) and message in str(e.value)
    assert m.components == {}
    assert ("a", "on_finalize") in JOURNAL     # created, then finalised again


def test_bad_param_value_is_reported_before_anything_is_created():
    comp = dict(BASE, components=[{"type": "Src", "name": "a", "params": {"gain": -1}},
                                  {"type": "Sink", "name": "b"}])
    m = manager()
    JOURNAL.clear()
    with pytest.raises(CompositionError, match=r"sys.yaml: components\[0\].params.gain: "
                       r"expected >= 0"):
        m.build(compose(comp))
    assert JOURNAL == []


def test_shutdown_order_deactivates_all_then_shuts_down_then_finalizes():
    m = manager()
    m.build(compose(BASE))
    m.ecs["e"].step(2)
    JOURNAL.clear()
    m.shutdown()
    kinds = [k for _, k in JOURNAL]
    assert kinds == ["on_deactivated"] * 2 + ["on_shutdown"] * 2 + ["on_finalize"] * 2


def test_params_from_rtc_conf_keys_and_composition_in_order():
    m = manager(**{"rtcf__Src__conf__default__gain": "2.5",
                   "rtcf__a__conf__other__gain": "7",
                   "rtcf__a__configuration__active_config": "other"})
    a = m.create_component("Src", name="a")
    assert (a.params.active, a.gain) == ("other", 7.0)
    b = m.create_component("Src")
    assert (b.instance_name, b.gain) == ("Src0", 2.5)
    c = m.create_component("Src", params={"gain": 9})
    assert (c.instance_name, c.gain) == ("Src1", 9.0)


def test_split_by_process():
    comp = compose({
        "components": [{"type": "Src", "name": "a", "process": "p1"},
                       {"type": "Sink", "name": "b"},
                       {"type": "Sink", "name": "c", "process": "p1"}],
        "connections": [{"from": "a.out", "to": "b.in"}, {"from": "a.out", "to": "c.in"}],
        "execution_contexts": [{"name": "e", "rate": 10, "members": ["a", "b", "c"]}],
    })
    assert processes(comp) == ["main", "p1"]
    main, p1 = split(comp, "main"), split(comp, "p1")
    assert [d.name for d in main.components] == ["b"]
    assert [d.name for d in p1.components] == ["a", "c"]
    assert [(c.source, c.target) for c in p1.connections] == [("a.out", "c.in")]
    assert main.connections == []
    assert [(c.source, c.target) for c in cross_connections(comp)] == [("a.out", "b.in")]
    assert p1.execution_contexts[0].members == ["a", "c"]


# -- issue 11: checks before anything starts, user paths, faults named -------------------------

def test_check_refuses_conf_parameters_and_config_sets_before_creating_anything():
    m = manager(rtcf__a__conf__default__gain="inf")     # Src's category is "rtcf"
    comp = compose({**BASE, "components": [{"type": "Src", "name": "a"},
                                           {"type": "Sink", "name": "b",
                                            "config_set": "nosuch"}]})
    with pytest.raises(CompositionError) as info:
        m.build(comp)
    text = str(info.value)
    assert "rtcf.a.conf.default.gain: a.gain: expected a finite number, got 'inf'" in text
    assert "sys.yaml: components[1]: b: unknown configuration set 'nosuch'" in text
    assert m.components == {} and m.ecs == {}


def test_status_line_shows_lost_and_suspect_connections():
    """The CORBA runtime's connection note (issue 11, defect 11) ends the status line."""
    from types import SimpleNamespace
    m = manager()
    m.build(compose(BASE))
    assert "|" not in m.status_line()
    m.corba = SimpleNamespace(connection_note=lambda: "1 connection(s) lost, last: a.out: "
                              "connection x lost (peer did not answer for 5 s)")
    try:
        assert m.status_line().endswith("| 1 connection(s) lost, last: a.out: connection x "
                                        "lost (peer did not answer for 5 s)")
    finally:
        m.corba = None
        m.shutdown()
