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


# -- checks before anything starts, user paths, faults named ----------------------------------

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
    """The CORBA runtime's connection note ends the status line."""
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


# -- a component type's own pre-start check (Component.check_config) ----------

class Picky(Src):
    """Needs an even count of channels and a rate that divides 1 kHz; records its contexts."""
    channels = Param(list, [1.0, 2.0], elem=float)
    SEEN: list = []

    @classmethod
    def check_config(cls, params, ctx):
        cls.SEEN.append((ctx.instance, [(e.name, e.rate) for e in ctx.ecs], dict(params)))
        out = []
        if len(params["channels"]) % 2:
            out.append((ctx.param("channels"), f"expected an even number of values, got "
                                               f"{len(params['channels'])}"))
        for e in ctx.ecs:
            if 1000.0 / e.rate != round(1000.0 / e.rate):
                out.append((e.rate_where, f"expected a rate dividing 1 kHz, got {e.rate:g}"))
        return out


class Broken(Src):
    @classmethod
    def check_config(cls, params, ctx):
        raise RuntimeError("the check itself fails")


def test_check_config_refuses_before_anything_is_created():
    m = manager(rtcf__p__conf__default__gain="3")
    m.register(Picky)
    Picky.SEEN.clear()
    JOURNAL.clear()
    comp = compose({"components": [{"type": "Picky", "name": "p",
                                    "params": {"channels": [1, 2, 3]}},
                                   {"type": "Sink", "name": "b"}],
                    "execution_contexts": [{"name": "e", "kind": "stepped", "rate": 300,
                                            "members": ["p", "b"]}]})
    with pytest.raises(CompositionError) as info:
        m.build(comp)
    text = str(info.value)
    assert "sys.yaml: components[0].params.channels: expected an even number of values, " \
           "got 3" in text
    assert "sys.yaml: execution_contexts[0].rate: expected a rate dividing 1 kHz, got 300" in text
    assert m.components == {} and m.ecs == {} and JOURNAL == []
    # the effective values (conf file keys included) and the contexts it will run in
    instance, ecs, params = Picky.SEEN[-1]
    assert (instance, ecs, params["gain"], params["channels"]) == ("p", [("e", 300.0)], 3.0,
                                                                    [1.0, 2.0, 3.0])


def test_check_config_passing_builds_and_a_failing_hook_is_named():
    m = manager()
    m.register(Picky)
    m.register(Broken)
    ok = {"components": [{"type": "Picky", "name": "p"}],
          "execution_contexts": [{"name": "e", "kind": "stepped", "rate": 100,
                                  "members": ["p"]}]}
    m.build(compose(ok))
    assert "p" in m.components
    m.shutdown()
    m = manager()
    m.register(Broken)
    with pytest.raises(CompositionError, match=r"sys.yaml: components\[0\]: Broken\."
                                               r"check_config failed: RuntimeError\('the "
                                               r"check itself fails'\)"):
        m.build(compose({"components": [{"type": "Broken", "name": "x"}]}))
