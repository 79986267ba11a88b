"""Tests of rtcf.composition: YAML structure checks, default naming and EC, params, rtc.conf."""

from __future__ import annotations

import textwrap

import pytest

from rtcf.composition import (
    ComponentDecl, ConnectionDecl, ECDecl, check_params, from_rtc_conf, load_composition,
    merge, parse_composition,
)
from rtcf.errors import CompositionError
from rtcf.rtcconf import parse_conf

DEMO = """\
name: demo
components:
  - type: SineGenerator
    module: examples
    name: gen
    params: {amplitude: 1.0, frequency: 0.5}
    config_set: default
  - {type: Recorder, module: examples, name: rec}
connections:
  - {from: gen.out, to: rec.in, subscription_type: flush}
  - {from: gen.out, to: rec.in2, properties: {subscription_type: new, push_policy: all}}
execution_contexts:
  - {name: main, kind: periodic, rate: 100, members: [gen, rec]}
activate: all
"""


def errors_of(data, filename="demo.yaml", **kw) -> list[str]:
    with pytest.raises(CompositionError) as info:
        parse_composition(data, filename, **kw)
    return info.value.errors


def one_error(data, filename="demo.yaml", **kw) -> str:
    errors = errors_of(data, filename, **kw)
    assert len(errors) == 1, errors
    return errors[0]


# --------------------------------------------------------------------------- happy path


def test_load_demo(tmp_path):
    path = tmp_path / "demo.yaml"
    path.write_text(DEMO)
    comp = load_composition(path)
    assert comp.name == "demo" and comp.source_file == str(path)
    assert comp.components[0] == ComponentDecl(
        "gen", "SineGenerator", "examples", {"amplitude": 1.0, "frequency": 0.5}, "default")
    assert comp.components[1].name == "rec"
    assert comp.connections == [
        ConnectionDecl("gen.out", "rec.in", {"subscription_type": "flush"}),
        ConnectionDecl("gen.out", "rec.in2", {"subscription_type": "new",
                                              "publisher.push_policy": "all"}),
    ]
    assert comp.execution_contexts == [ECDecl("main", "periodic", 100.0, ["gen", "rec"])]
    assert comp.activate == ["gen", "rec"]
    assert comp.component("rec").type == "Recorder"


def test_default_names_count_per_type_and_skip_taken():
    comp = parse_composition({"components": [
        {"type": "A"}, {"type": "B"}, {"type": "A"}, {"type": "A", "name": "A1"},
    ]}, "x.yaml")
    assert [c.name for c in comp.components] == ["A0", "B0", "A2", "A1"]


def test_default_ec_collects_unassigned_components_at_default_rate():
    comp = parse_composition({"components": [{"type": "A"}, {"type": "B"}, {"type": "C"}],
                              "execution_contexts": [{"name": "fast", "rate": 500,
                                                      "members": ["B0"]}]},
                             "x.yaml", default_rate=250.0)
    assert comp.execution_contexts == [ECDecl("fast", "periodic", 500.0, ["B0"]),
                                       ECDecl("default", "periodic", 250.0, ["A0", "C0"])]


def test_component_in_two_ecs_is_allowed_and_ec_shorthand():
    comp = parse_composition({"components": [{"type": "A", "ec": "slow"}, {"type": "B"}],
                              "execution_contexts": [
                                  {"name": "fast", "members": ["A0", "B0"]},
                                  {"name": "slow", "kind": "stepped", "rate": 10}]},
                             "x.yaml")
    assert comp.execution_contexts[1] == ECDecl("slow", "stepped", 10.0, ["A0"])
    assert comp.execution_contexts[0].rate == 1000.0


def test_activate_variants_and_empty_document():
    base = {"components": [{"type": "A"}, {"type": "B"}]}
    assert parse_composition({**base, "activate": ["B0"]}, "x.yaml").activate == ["B0"]
    assert parse_composition({**base, "activate": "none"}, "x.yaml").activate == []
    assert parse_composition(base, "x.yaml").activate == ["A0", "B0"]
    empty = parse_composition(None, "dir/empty.yaml", allow_empty=True)
    assert empty.name == "empty" and empty.components == [] and empty.execution_contexts == []
    with pytest.raises(CompositionError, match=r"dir/empty.yaml: components: no components"):
        parse_composition(None, "dir/empty.yaml")      # nothing to run is refused


def test_property_values_become_strings_and_prefix_is_stripped():
    comp = parse_composition({
        "components": [{"type": "A", "name": "a"}, {"type": "B", "name": "b"}],
        "connections": [{"from": "a.o", "to": "b.i", "dataport.buffer.length": 16,
                         "push_rate": 50, "dataport.publisher.skip_count": 2,
                         "dataport.dataflow_type": "PUSH", "allow_dup_connection": True}]},
        "x.yaml")
    assert comp.connections[0].properties == {
        "buffer.length": "16", "publisher.push_rate": "50", "publisher.skip_count": "2",
        "dataflow_type": "push", "allow_dup_connection": "YES"}


def test_processes_are_collected():
    comp = parse_composition({"components": [{"type": "A", "process": "p1"}]}, "x.yaml")
    assert comp.processes == {"p1": {}}
    comp = parse_composition({"components": [{"type": "A", "process": "p1"}],
                              "processes": {"p1": {"corba.endpoints": "127.0.0.1"}}}, "x.yaml")
    assert comp.processes == {"p1": {"corba.endpoints": "127.0.0.1"}}


# --------------------------------------------------------------------------- one error class each


def test_error_top_level_not_a_mapping():
    assert one_error([1, 2]) == (
        "demo.yaml: document: expected a mapping at the top level, got [1, 2]")


def test_error_unknown_top_level_key():
    msg = one_error({"compnents": []})
    assert msg.startswith("demo.yaml: compnents: unknown key (known: ")


def test_error_unknown_component_key():
    msg = one_error({"components": [{"type": "A", "parms": {}}]})
    assert msg.startswith("demo.yaml: components[0].parms: unknown key")


def test_error_wrong_types():
    errors = errors_of({"components": {"type": "A"}, "connections": "x",
                        "execution_contexts": {}, "activate": 3})
    assert errors == [
        "demo.yaml: components: expected a list, got {'type': 'A'}",
        "demo.yaml: connections: expected a list, got 'x'",
        "demo.yaml: execution_contexts: expected a list, got {}",
        'demo.yaml: activate: expected "all", "none" or a list of instance names, got 3',
    ]


def test_error_missing_type_and_bad_params_type():
    errors = errors_of({"components": [{"name": "x"}, {"type": "A", "params": [1]}]})
    assert errors == ["demo.yaml: components[0].type: expected a component type name, got None",
                      "demo.yaml: components[1].params: expected a mapping, got [1]"]


def test_error_bad_instance_name():
    assert one_error({"components": [{"type": "A", "name": "a.b"}]}) == (
        "demo.yaml: components[0].name: expected an instance name without '.', '/', ':', "
        "blanks, control characters or characters outside Latin-1, got 'a.b'")


@pytest.mark.parametrize("name", ["g\nx", "g\x07", "g\x9b", "g\u540d", "\u2028"])
def test_error_instance_name_a_naming_service_cannot_carry(name):
    """A newline in a name would split the status line; CORBA strings are Latin-1."""
    assert one_error({"components": [{"type": "A", "name": name}]}).endswith(
        f"characters outside Latin-1, got {name!r}")


def test_latin1_instance_name_is_accepted():
    comp = parse_composition({"components": [{"type": "A", "name": "g\u00e9"}]}, "demo.yaml")
    assert comp.components[0].name == "g\u00e9"


def test_connection_listed_twice_names_both_entries():
    errs = errors_of({"components": [{"type": "A", "name": "a"}, {"type": "B", "name": "b"}],
                      "connections": [{"from": "a.out", "to": "b.in"},
                                      {"from": "a.x", "to": "b.in"},
                                      {"from": "b.in", "to": "a.out"}]})
    assert len(errs) == 1 and errs[0].startswith(
        "demo.yaml: connections[2]: the same connection as connections[0]"), errs


def test_connection_listed_twice_with_allow_dup_connection():
    comp = parse_composition({"components": [{"type": "A", "name": "a"},
                                             {"type": "B", "name": "b"}],
                              "connections": [{"from": "a.out", "to": "b.in"},
                                              {"from": "a.out", "to": "b.in",
                                               "allow_dup_connection": "YES"}]}, "demo.yaml")
    assert len(comp.connections) == 2


def test_error_duplicate_instance_name():
    msg = one_error({"components": [{"type": "A", "name": "gen"}, {"type": "B", "name": "gen"}]})
    assert msg.startswith("demo.yaml: components[1].name: duplicate instance name")
    assert msg.endswith("got 'gen'")


def test_error_duplicate_after_default_naming_is_avoided_not_reported():
    comp = parse_composition({"components": [{"type": "A"}, {"type": "X", "name": "A0"}]},
                             "x.yaml")
    assert [c.name for c in comp.components] == ["A1", "A0"]


def test_error_connection_endpoint_format():
    assert one_error({"components": [{"type": "A", "name": "gen"}],
                      "connections": [{"from": "gen", "to": "gen.in"}]}) == (
        "demo.yaml: connections[0].from: expected \"instance.port\", got 'gen'")


def test_error_connection_unknown_instance():
    assert one_error({"components": [{"type": "A", "name": "gen"}],
                      "connections": [{"from": "gen.out", "to": "rec.in"}]}) == (
        "demo.yaml: connections[0].to: unknown instance 'rec' (known: gen), got 'rec.in'")


def test_error_ec_member_unknown_and_duplicate():
    errors = errors_of({"components": [{"type": "A", "name": "gen"}],
                        "execution_contexts": [{"name": "main",
                                                "members": ["gen", "gen", "ghost"]}]})
    assert errors == [
        "demo.yaml: execution_contexts[0].members[1]: listed twice in this execution "
        "context, got 'gen'",
        "demo.yaml: execution_contexts[0].members[1]: unknown instance (known: gen), "
        "got 'ghost'",
    ]


def test_error_ec_rate_and_kind_and_duplicate_name():
    errors = errors_of({"execution_contexts": [{"name": "m", "rate": -5, "kind": "fast"},
                                               {"name": "m", "rate": True}]})
    assert errors == [
        "demo.yaml: execution_contexts[0].kind: expected one of periodic, stepped, got 'fast'",
        "demo.yaml: execution_contexts[0].rate: expected a rate between 1 and 10000 [Hz], "
            "got -5",
        "demo.yaml: execution_contexts[1].name: duplicate execution context name, got 'm'",
        "demo.yaml: execution_contexts[1].rate: expected a number [Hz], got True",
    ]


def test_error_ec_shorthand_unknown():
    assert one_error({"components": [{"type": "A", "ec": "nope"}]}) == (
        "demo.yaml: components[0].ec: unknown execution context (declared: none), got 'nope'")


@pytest.mark.parametrize("key,value,message", [
    ("subscription_type", "sometimes", "expected one of flush, new, periodic"),
    ("dataflow_type", "shove", "expected one of push, pull"),
    ("push_policy", "most", "expected one of all, fifo, skip, new"),
    ("buffer.length", 0, "expected a positive integer"),
    ("buffer.length", "8.5", "expected a positive integer"),
    ("push_rate", -1, "expected > 0 [Hz]"),
])
def test_error_connector_property_domains(key, value, message):
    msg = one_error({"components": [{"type": "A", "name": "a"}],
                     "connections": [{"from": "a.o", "to": "a.i", key: value}]})
    assert msg == f"demo.yaml: connections[0].{key}: {message}, got {value!r}"


def test_error_nested_property_path():
    msg = one_error({"components": [{"type": "A", "name": "a"}],
                     "connections": [{"from": "a.o", "to": "a.i",
                                      "properties": {"subscription_type": "x"}}]})
    assert msg.startswith("demo.yaml: connections[0].properties.subscription_type: ")


def test_error_activate_unknown():
    assert one_error({"components": [{"type": "A"}], "activate": ["A0", "B0"]}) == (
        "demo.yaml: activate[1]: unknown instance (known: A0), got 'B0'")


def test_error_unknown_process_when_processes_declared():
    msg = one_error({"components": [{"type": "A", "process": "p2"}], "processes": {"p1": {}}})
    assert msg == "demo.yaml: components[0].process: unknown process (declared: p1), got 'p2'"


def test_all_errors_are_reported_together():
    errors = errors_of({"bogus": 1, "components": [{"type": "A", "name": "a"}],
                        "connections": [{"from": "a", "to": "b.i"}],
                        "execution_contexts": [{"name": "e", "rate": 0}]})
    # the malformed connection is dropped, so its other end is not checked
    assert [e.split(":")[1].strip() for e in errors] == [
        "bogus", "connections[0].from", "execution_contexts[0].rate"]


def test_invalid_yaml_names_file_and_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("components:\n  - {type: A\n")
    with pytest.raises(CompositionError) as info:
        load_composition(path)
    assert str(info.value).startswith(f"{path}: line ")
    assert "invalid YAML" in str(info.value)


def test_composition_error_is_a_value_error():
    assert issubclass(CompositionError, ValueError)


# --------------------------------------------------------------------------- check_params


class FakeParam:
    """The Param protocol: coerce(value) returns the typed value or raises ValueError."""

    def __init__(self, typ, gt=None):
        self.typ, self.gt = typ, gt

    def coerce(self, value):
        try:
            out = self.typ(value)
        except (TypeError, ValueError):
            raise ValueError(f"expected {self.typ.__name__}") from None
        if self.gt is not None and not out > self.gt:
            raise ValueError(f"expected > {self.gt}")
        return out


class FakeSine:
    @classmethod
    def declared_params(cls):
        return {"amplitude": FakeParam(float), "frequency": FakeParam(float, gt=0),
                "dt": FakeParam(float, gt=0)}


def resolve(type_name, module):
    if type_name == "SineGenerator":
        return FakeSine
    raise LookupError(f"no {type_name} in {module or 'load path'}")


def test_check_params_ok():
    comp = parse_composition({"components": [
        {"type": "SineGenerator", "params": {"amplitude": "2", "dt": 0.01}}]}, "nao.yaml")
    check_params(comp, resolve)


def test_check_params_reports_bad_value_unknown_param_and_unknown_type():
    comp = parse_composition({"components": [
        {"type": "SineGenerator", "params": {"foo": 1, "frequency": 0.5}},
        {"type": "SineGenerator", "params": {"dt": -0.01}},
        {"type": "Nope", "module": "examples"},
    ]}, "nao.yaml")
    with pytest.raises(CompositionError) as info:
        check_params(comp, resolve)
    assert info.value.errors == [
        "nao.yaml: components[0].params.foo: unknown parameter of SineGenerator "
        "(known: amplitude, dt, frequency)",
        "nao.yaml: components[1].params.dt: expected > 0, got -0.01",
        "nao.yaml: components[2].type: unknown component type (no Nope in examples), "
        "got 'Nope'",
    ]


def test_check_params_does_not_repeat_a_value_the_param_already_quoted():
    class Quoting:
        def coerce(self, value):
            raise ValueError(f"expected >= 0, got {value!r}")

    class C:
        @classmethod
        def declared_params(cls):
            return {"x": Quoting()}

    comp = parse_composition({"components": [{"type": "C", "params": {"x": -1}}]}, "a.yaml")
    with pytest.raises(CompositionError) as info:
        check_params(comp, lambda t, m: C)
    assert info.value.errors == ["a.yaml: components[0].params.x: expected >= 0, got -1"]


# --------------------------------------------------------------------------- rtc.conf


RTC_CONF = textwrap.dedent("""\
    exec_cxt.periodic.rate: 200
    manager.components.precreate: SineGenerator?module=examples&conf.default.amplitude=2, \\
        Recorder?instance_name=rec&language=Python
    manager.components.preconnect: SineGenerator0.out?port=rec.in&port1=rec.in2\\
        &subscription_type=new&push_policy=skip&skip_count=1
    manager.components.preactivation: SineGenerator0, rec
    """)


def test_from_rtc_conf():
    comp = from_rtc_conf(parse_conf(RTC_CONF, "rtc.conf"), "rtc.conf")
    gen, rec = comp.components
    assert gen == ComponentDecl("SineGenerator0", "SineGenerator", "examples",
                                {"amplitude": "2"})
    assert rec == ComponentDecl("rec", "Recorder", properties={"language": "Python"})
    props = {"subscription_type": "new", "publisher.push_policy": "skip",
             "publisher.skip_count": "1"}
    assert comp.connections == [ConnectionDecl("SineGenerator0.out", "rec.in", props),
                                ConnectionDecl("SineGenerator0.out", "rec.in2", props)]
    assert comp.execution_contexts == [ECDecl("default", "periodic", 200.0,
                                              ["SineGenerator0", "rec"])]
    assert comp.activate == ["SineGenerator0", "rec"]


def test_from_rtc_conf_stepped_ec_type_and_empty_conf():
    conf = {"exec_cxt.periodic.type": "OpenHRPExecutionContext",
            "manager.components.precreate": "A"}
    assert from_rtc_conf(conf).execution_contexts[0].kind == "stepped"
    empty = from_rtc_conf({}, "rtc.conf")
    assert empty.components == [] and empty.execution_contexts == [] and empty.activate == []


def test_from_rtc_conf_errors_name_file_line_key_and_value():
    conf = parse_conf(
        "exec_cxt.periodic.rate: -1\n"
        "exec_cxt.periodic.type: FancyEC\n"
        "manager.components.precreate: A\n"
        "manager.components.preconnect: A0.out?port=B0.in&subscription_type=bogus, "
        "A0.out?port=rtcname://localhost/X0.in\n"
        "manager.components.preactivation: A0, C0\n", "rtc.conf")
    with pytest.raises(CompositionError) as info:
        from_rtc_conf(conf, "rtc.conf")
    errors = info.value.errors
    assert "rtc.conf:1: exec_cxt.periodic.rate: expected > 0, got '-1'" in errors
    assert any(e.startswith("rtc.conf:2: exec_cxt.periodic.type: expected one of "
                            "PeriodicExecutionContext") and e.endswith("got 'FancyEC'")
               for e in errors)
    assert ("rtc.conf:4: manager.components.preconnect[0].subscription_type: expected one "
            "of flush, new, periodic, got 'bogus'") in errors
    assert ("rtc.conf:4: manager.components.preconnect[1]: remote endpoints are not "
            "supported, got 'rtcname://localhost/X0.in'") in errors
    assert ("rtc.conf:4: manager.components.preconnect[0].to: unknown instance 'B0' "
            "(known: A0), got 'B0.in'") in errors
    assert ("rtc.conf: manager.components.preactivation[1]: unknown instance (known: A0), "
            "got 'C0'") in errors


def test_merge_rtc_conf_and_yaml():
    conf = parse_conf("exec_cxt.periodic.rate: 100\n"
                      "manager.components.precreate: Logger?instance_name=log\n"
                      "manager.components.preconnect: gen.out?port=log.in\n"
                      "manager.components.preactivation: log\n", "rtc.conf")
    a = from_rtc_conf(conf, "rtc.conf", check_refs=False)
    b = parse_composition({"components": [{"type": "SineGenerator", "name": "gen"}],
                           "activate": ["gen"]}, "demo.yaml", default_rate=100.0)
    m = merge(a, b)
    assert [c.name for c in m.components] == ["log", "gen"]
    assert m.connections == [ConnectionDecl("gen.out", "log.in", {})]
    assert m.execution_contexts == [ECDecl("default", "periodic", 100.0, ["log", "gen"])]
    assert m.activate == ["log", "gen"]
    pattern = r"rtc.conf:3: manager.components.preconnect\[0\].from: unknown instance 'gen'"
    with pytest.raises(CompositionError, match=pattern):
        from_rtc_conf(conf, "rtc.conf")  # gen is unknown without the YAML part


def test_merge_duplicate_instance_is_an_error():
    a = parse_composition({"components": [{"type": "A", "name": "x"}]}, "a.yaml")
    b = parse_composition({"components": [{"type": "B", "name": "x"}]}, "b.yaml")
    with pytest.raises(CompositionError) as info:
        merge(a, b)
    assert info.value.errors == [
        "b.yaml: components[0].name: instance name already used at a.yaml: components[0], "
        "got 'x'"]


# -- external components (OpenRTM components ticked in lockstep, rtcf.lockstep) ---------------

EXTERNAL = {
    "simulation": {"real_time_factor": 0},
    "components": [{"type": "Recorder", "module": "examples", "name": "rec"},
                   {"name": "ctrl", "external": "h.host_cxt/ctrl.rtc", "ec": "control"},
                   {"name": "loose", "external": "IOR:0123"}],
    "connections": [{"from": "ctrl.out", "to": "rec.in"}],
    "execution_contexts": [{"name": "control", "rate": 100, "members": []}],
}


def test_an_external_member_is_named_in_ecs_and_connections_not_created():
    comp = parse_composition(EXTERNAL, "x.yaml")
    assert [d.name for d in comp.components] == ["rec"]
    assert [(e.name, e.rtc, e.ec) for e in comp.externals] == [
        ("ctrl", "h.host_cxt/ctrl.rtc", "control"), ("loose", "IOR:0123", None)]
    ecs = {ec.name: ec.members for ec in comp.execution_contexts}
    assert ecs == {"control": ["ctrl"], "default": ["rec", "loose"]}
    assert comp.external("ctrl").where == ("x.yaml", "components[1]")
    assert comp.external("rec") is None
    assert comp.activate == ["rec"]            # externals are activated on their own EC


def test_external_members_mistakes_are_named():
    data = dict(EXTERNAL, components=[
        {"type": "Recorder", "module": "examples", "name": "rec"},
        {"name": "ctrl", "external": "a/ctrl.rtc", "params": {"gain": 1}},
        {"external": "b/x.rtc"},
        {"name": "rec", "external": "c/rec.rtc"},
        {"name": "e", "external": ""}])
    errs = errors_of(data, "x.yaml")
    assert any(e.startswith("x.yaml: components[1].params: an external component is started "
                            "elsewhere: it takes only name, external, ec") for e in errs), errs
    assert "x.yaml: components[2].name: an external component needs its instance name" in errs
    assert any(e.startswith("x.yaml: components[3].name: duplicate instance name") for e in errs)
    assert "x.yaml: components[4].external: expected a non-empty string, got ''" in errs
    no_sim = {k: v for k, v in EXTERNAL.items() if k != "simulation"}
    err = errors_of(no_sim, "x.yaml")
    assert any(e.startswith("x.yaml: components[1].external: an external component is ticked "
                            "in lockstep with simulated time: the composition needs "
                            "simulation:") for e in err), err
