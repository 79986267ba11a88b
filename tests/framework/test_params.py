"""Tests of rtcf.params: Param coercion, bounds and choices, read-only, configuration sets
and the staging of run-time changes."""

from __future__ import annotations

import pytest

from rtcf.component import Component
from rtcf.errors import ParamError
from rtcf.params import Param, ParamStore


# -- coercion ---------------------------------------------------------------------------------

@pytest.mark.parametrize("typ, raw, expected", [
    (int, 3, 3), (int, "12", 12), (int, " 7 ", 7), (int, "0x10", 16), (int, "-0x10", -16),
    (int, 4.0, 4), (int, "0b101", 5),
    (float, 2, 2.0), (float, "1.5", 1.5), (float, "1e-3", 0.001), (float, " -2.25 ", -2.25),
    (str, "abc", "abc"), (str, 5, "5"), (str, 1.5, "1.5"),
    (bool, True, True), (bool, "YES", True), (bool, "yes", True), (bool, "No", False),
    (bool, "TRUE", True), (bool, "false", False), (bool, "1", True), (bool, "0", False),
    (bool, "on", True), (bool, " OFF ", False), (bool, 1, True), (bool, 0, False),
])
def test_scalar_coercion(typ, raw, expected):
    p = Param(typ, expected)
    out = p.coerce(raw)
    assert out == expected and type(out) is typ


@pytest.mark.parametrize("typ, raw", [
    (int, 3.5), (int, "abc"), (int, True), (int, "1.5"), (int, None),
    (float, "x"), (float, False), (float, None), (float, [1.0]),
    (str, True), (str, None), (str, [1]),
    (bool, "maybe"), (bool, 2), (bool, None), (bool, ""),
])
def test_scalar_coercion_errors_name_the_value(typ, raw):
    p = Param(typ, {int: 0, float: 0.0, str: "", bool: False}[typ])
    with pytest.raises(ValueError) as info:
        p.coerce(raw)
    assert repr(raw) in str(info.value)
    assert "expected" in str(info.value)


@pytest.mark.parametrize("elem, raw, expected", [
    (float, "1,2,3", [1.0, 2.0, 3.0]),
    (float, " 1.5 , 2 ,", [1.5, 2.0]),
    (int, "1, 2, 3", [1, 2, 3]),
    (int, "0x10,8", [16, 8]),
    (float, (1, 2), [1.0, 2.0]),
    (float, [], []),
    (float, "", []),
    (str, "a,b", ["a", "b"]),
    (bool, "YES,no", [True, False]),
    (float, range(3), [0.0, 1.0, 2.0]),
])
def test_list_coercion(elem, raw, expected):
    p = Param(list, [], elem=elem)
    out = p.coerce(raw)
    assert out == expected
    assert all(type(x) is elem for x in out)


def test_list_coercion_errors():
    p = Param(list, [], elem=int)
    with pytest.raises(ValueError, match="'x'"):
        p.coerce("1,x,3")
    with pytest.raises(ValueError, match="expected a list of int, got 5"):
        p.coerce(5)


def test_bounds_and_choices_name_the_value():
    p = Param(float, 1.0, bounds=(0, 10))
    assert p.coerce(0) == 0.0 and p.coerce("10") == 10.0     # inclusive
    with pytest.raises(ValueError, match=r"expected <= 10, got 10\.5"):
        p.coerce(10.5)
    with pytest.raises(ValueError, match=r"expected >= 0, got -1\.0"):
        p.coerce("-1")
    lo_only = Param(int, 5, bounds=(1, None))
    assert lo_only.coerce(10 ** 9) == 10 ** 9
    with pytest.raises(ValueError, match="got 0"):
        lo_only.coerce(0)
    c = Param(str, "a", choices=("a", "b"))
    assert c.coerce("b") == "b"
    with pytest.raises(ValueError, match=r"expected one of 'a', 'b', got 'z'"):
        c.coerce("z")
    lst = Param(list, [1.0], bounds=(0, 2))
    with pytest.raises(ValueError, match="got 3.0"):
        lst.coerce("1,3")


def test_a_bad_default_is_rejected_at_declaration():
    with pytest.raises(ValueError, match="got 20"):
        Param(int, 20, bounds=(0, 10))
    with pytest.raises(ValueError):
        Param(bool, "perhaps")


def test_to_string_constraint_and_describe():
    class Holder:
        gains = Param(list, [1.0, 2.5], unit="N", doc="the gains")
        flag = Param(bool, True)
        n = Param(int, 3, bounds=(0, 150))
        mode = Param(str, "a", choices=("a", "b"))
    assert Holder.gains.name == "gains"
    assert Holder.gains.to_string([1.0, 2.5]) == "1.0,2.5"
    assert Holder.flag.to_string(True) == "YES" and Holder.flag.to_string(False) == "NO"
    assert Holder.n.constraint() == "0<=x<=150"
    assert Holder.mode.constraint() == "(a,b)"
    assert Holder.flag.constraint() == ""
    assert Holder.gains.describe() == "gains [N]: the gains (default 1.0,2.5)"
    # round trip through the string form
    assert Holder.gains.coerce(Holder.gains.to_string([0.5, 4.0])) == [0.5, 4.0]
    assert Holder.flag.coerce(Holder.flag.to_string(False)) is False


# -- on a component ------------------------------------------------------------------------------

class Tuned(Component):
    """A component with parameters."""
    gain = Param(float, 1.0, bounds=(0, 10), unit="1", doc="gain")
    name_ = Param(str, "x")
    dt = Param(float, 0.01, read_only=True)
    joints = Param(list, [0.0, 0.0], elem=float)


class MoreTuned(Tuned):
    extra = Param(int, 3)


def test_declared_params_and_attribute_access():
    assert list(Tuned.declared_params()) == ["gain", "name_", "dt", "joints"]
    assert set(MoreTuned.declared_params()) == {"gain", "name_", "dt", "joints", "extra"}
    c = MoreTuned("m")
    assert c.gain == 1.0 and c.extra == 3 and c.joints == [0.0, 0.0]
    assert isinstance(MoreTuned.gain, Param)
    with pytest.raises(AttributeError, match="set_param"):
        c.gain = 2.0


def test_read_only_is_rejected_at_run_time_after_initialise():
    c = Tuned("ro")
    c.set_param("dt", 0.02)                  # before initialise: allowed
    c.initialize()
    with pytest.raises(ParamError, match=r"ro\.dt: read-only"):
        c.set_param("dt", 0.005)
    with pytest.raises(ParamError, match="read-only"):
        c.params.update({"gain": 2.0, "dt": 0.005})
    assert c.params.sets["default"]["gain"] == 1.0       # all or nothing
    # conf files and the composition still may (load is not a run-time change)
    c.params.load({"dt": 0.004})
    assert c.dt == 0.004


def test_param_errors_name_component_parameter_and_value():
    c = Tuned("comp")
    c.initialize()
    with pytest.raises(ParamError, match=r"comp\.gain: expected <= 10, got 11"):
        c.set_param("gain", 11)
    with pytest.raises(ParamError, match=r"comp\.gain: expected float, got 'fast'"):
        c.set_param("gain", "fast")
    with pytest.raises(ParamError, match=r"comp\.nope: unknown parameter \(known: dt, gain"):
        c.set_param("nope", 1)
    assert not c.params.has_staged


def test_list_values_are_not_shared_between_instances():
    a, b = Tuned("a"), Tuned("b")
    assert a.joints is not b.joints
    assert a.params.values["joints"] is not Tuned.joints.default
    assert a.params.values["joints"] is not a.params.sets["default"]["joints"]


# -- staging -------------------------------------------------------------------------------------

def store() -> ParamStore:
    return ParamStore(Tuned.declared_params(), owner="t")


def test_set_is_staged_and_apply_returns_changed_names():
    s = store()
    s.initialised = True
    s.set("gain", "2.5")
    assert s.values["gain"] == 1.0                 # unchanged before apply
    assert s.has_staged
    assert s.sets["default"]["gain"] == 2.5        # the stored set already has it
    s.set("name_", "x")                            # same value: staged, not changed
    calls = []
    s.listeners.append(calls.append)
    assert s.apply_staged() == {"gain"}
    assert s.values["gain"] == 2.5 and not s.has_staged
    assert calls == [{"gain"}]
    assert s.apply_staged() == set()
    assert calls == [{"gain"}]


def test_update_is_all_or_nothing():
    s = store()
    with pytest.raises(ParamError, match="got 99"):
        s.update({"name_": "y", "joints": "1,2", "gain": 99})
    assert not s.has_staged
    assert s.sets["default"]["name_"] == "x" and s.sets["default"]["gain"] == 1.0
    s.update({"gain": 3.0, "joints": "1,2"})
    assert s.apply_staged() == {"gain", "joints"}
    assert s.values["joints"] == [1.0, 2.0]


def test_load_and_select_initial():
    s = store()
    s.load({"gain": "4"})
    assert s.values["gain"] == 4.0 and not s.has_staged       # not staged: before start
    s.load({"gain": 5}, "fast")
    assert s.values["gain"] == 4.0
    assert s.sets["fast"]["gain"] == 5.0 and s.sets["fast"]["dt"] == 0.01
    s.select_initial("fast")
    assert s.active == "fast" and s.values["gain"] == 5.0
    with pytest.raises(ParamError, match="unknown configuration set 'slow'"):
        s.select_initial("slow")
    with pytest.raises(ParamError, match="t.gain"):
        s.load({"gain": -1})


# -- configuration sets ----------------------------------------------------------------------------

def test_set_set_values_creates_and_updates_sets():
    s = store()
    s.initialised = True
    s.set_set_values("fast", {"gain": 8})
    assert s.sets["fast"] == {"gain": 8.0, "name_": "x", "dt": 0.01, "joints": [0.0, 0.0]}
    assert not s.has_staged                      # not the active set
    assert s.values["gain"] == 1.0
    s.set_set_values("default", {"gain": 2})     # the active set: staged
    assert s.has_staged and s.values["gain"] == 1.0
    assert s.apply_staged() == {"gain"}
    with pytest.raises(ParamError, match="fast.gain|t.gain"):
        s.set_set_values("fast", {"gain": 80})
    assert s.sets["fast"]["gain"] == 8.0


def test_activate_set_stages_its_values():
    s = store()
    s.initialised = True
    s.set_set_values("fast", {"gain": 8, "name_": "f"})
    s.activate_set("fast")
    assert s.active == "fast"
    assert s.values["gain"] == 1.0               # staged until the cycle boundary
    assert s.apply_staged() == {"gain", "name_"}
    assert s.values["gain"] == 8.0 and s.values["name_"] == "f"
    s.set("gain", 9)                              # now changes the active set
    assert s.sets["fast"]["gain"] == 9.0 and s.sets["default"]["gain"] == 1.0
    s.activate_set("default")
    assert s.apply_staged() == {"gain", "name_"}
    assert s.values["gain"] == 1.0


def test_unknown_set_and_remove_rules():
    s = store()
    with pytest.raises(ParamError, match="unknown configuration set 'nope'.*known: default"):
        s.activate_set("nope")
    assert s.active == "default"
    s.set_set_values("a", {"gain": 2})
    s.set_set_values("b", {"gain": 3})
    with pytest.raises(ParamError, match="'default'"):
        s.remove_set("default")
    s.activate_set("a")
    with pytest.raises(ParamError, match="'a'.*active"):
        s.remove_set("a")
    with pytest.raises(ParamError, match="unknown configuration set 'zzz'"):
        s.remove_set("zzz")
    s.remove_set("b")
    assert set(s.sets) == {"default", "a"}


def test_snapshot_is_a_copy():
    s = store()
    active, sets = s.snapshot()
    sets["default"]["gain"] = 123.0
    sets["new"] = {}
    assert active == "default"
    assert s.sets["default"]["gain"] == 1.0 and "new" not in s.sets


# -- non-finite values ('rtconf set amplitude inf' once reached the DCM) ---------------------

NON_FINITE = [float("nan"), float("inf"), float("-inf"), "nan", "inf", "-Infinity", "1e400",
              10 ** 400]


@pytest.mark.parametrize("raw", NON_FINITE, ids=lambda v: repr(v)[:12])
def test_non_finite_floats_are_refused_everywhere(raw):
    p = Param(float, 1.0, bounds=(0.0, 10.0))        # NaN passed bounds before: no compare
    with pytest.raises(ValueError, match="expected a finite number"):
        p.coerce(raw)
    with pytest.raises(ValueError, match="expected a finite number"):
        Param(list, [1.0]).coerce([1.0, raw])


class Amp(Component):
    """A parameter holder."""
    amplitude = Param(float, 1.0)


@pytest.mark.parametrize("raw", ["inf", "nan", float("inf")], ids=repr)
def test_non_finite_is_refused_by_every_store_path_and_changes_nothing(raw):
    comp = Amp("amp0")
    comp.initialize()
    store = comp.params
    for attempt in (lambda: comp.set_param("amplitude", raw),          # the Param API
                    lambda: store.update({"amplitude": raw}),
                    lambda: store.set_set_values("default", {"amplitude": raw}),   # rtconf
                    lambda: store.set_set_values("other", {"amplitude": raw}),
                    lambda: store.load({"amplitude": raw})):                 # composition
        with pytest.raises(ParamError, match=r"amp0\.amplitude: expected a finite number"):
            attempt()
    assert store.apply_staged() == set() and comp.amplitude == 1.0
    assert store.snapshot() == ("default", {"default": {"amplitude": 1.0}})


def test_long_bad_values_are_echoed_short():
    with pytest.raises(ValueError) as info:
        Param(float, 1.0).coerce("z" * 100_000)
    assert len(str(info.value)) < 200 and "(100000 chars)" in str(info.value)


# -- status parameters ------------------------------------------------------------------------

def status_store():
    store = ParamStore({"gain": Param(float, 1.0),
                        "running": Param(str, "", status=True)}, owner="cm")
    store.initialised = True
    return store


def test_a_published_status_value_is_in_every_set_without_staging():
    store = status_store()
    store.set_set_values("other", {"gain": 2.0})
    store.publish({"running": "a,b"})
    assert store.values["running"] == "a,b" and not store.has_staged
    assert {n: v["running"] for n, v in store.snapshot()[1].items()} == \
        {"default": "a,b", "other": "a,b"}
    store.set_set_values("third", {"gain": 3.0})       # a new set gets the current status
    assert store.snapshot()[1]["third"]["running"] == "a,b"
    store.activate_set("other")
    store.publish({"running": "c"})
    store.apply_staged()                               # activation stages no stale status
    assert store.values["running"] == "c" and store.values["gain"] == 2.0


def test_a_status_value_cannot_be_set_but_whole_sets_sent_back_pass():
    store = status_store()
    store.publish({"running": "a"})
    with pytest.raises(ParamError, match=r"^cm.running: a status value the component "
                                         r"publishes, not a setting; got 'x'$"):
        store.set("running", "x")
    with pytest.raises(ParamError, match="a status value"):
        store.update({"gain": 5.0, "running": "x"})
    assert store.values["gain"] == 1.0 and not store.has_staged      # nothing changed
    # a tool read {gain, running=a}, the component published 'b' meanwhile, the tool sends
    # the set back with a new gain: accepted, and the status stays what was published
    store.publish({"running": "b"})
    store.set_set_values("default", {"gain": 5.0, "running": "a"})
    store.apply_staged()
    assert store.values == {"gain": 5.0, "running": "b"}
    with pytest.raises(ParamError, match="not a status parameter"):
        store.publish({"gain": 2.0})


def test_a_status_value_cannot_come_from_a_file_or_composition():
    store = ParamStore({"running": Param(str, "", status=True)}, owner="cm")
    with pytest.raises(ParamError, match="cm.running: a status value"):
        store.load({"running": "a"})
    assert Param(str, "", status=True).read_only
