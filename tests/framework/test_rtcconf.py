"""Tests of rtcf.rtcconf: OpenRTM properties syntax, overrides, typed getters, manager keys."""

from __future__ import annotations

import pytest

from rtcf.errors import ConfigError
from rtcf.rtcconf import (
    apply_overrides, component_conf_files, defaults, get_bool, get_float, get_int, get_list,
    load_component_conf, load_conf, merge_conf, parse_component_conf, parse_conf,
    parse_preactivation, parse_precreate, parse_preconnect,
)


# --------------------------------------------------------------------------- syntax


def test_colon_and_equals_separators_first_one_splits():
    conf = parse_conf("corba.nameservers: localhost:2809\nlogger.log_level = DEBUG\n"
                      "a=b:c\n", "rtc.conf")
    assert conf == {"corba.nameservers": "localhost:2809", "logger.log_level": "DEBUG",
                    "a": "b:c"}


def test_comments_blank_lines_and_stripping():
    text = "# comment\n   ! also a comment\n\n  key.one :   value with spaces   \n"
    assert parse_conf(text) == {"key.one": "value with spaces"}


def test_hash_inside_value_is_kept():
    assert parse_conf("naming.formats: %h.host_cxt/%n.rtc # not a comment")[
        "naming.formats"] == "%h.host_cxt/%n.rtc # not a comment"


def test_backslash_continuation_joins_lines():
    text = ("manager.components.precreate: A, \\\n"
            "     B, \\\n"
            "     C\n"
            "next: 1\n")
    conf = parse_conf(text, "rtc.conf")
    assert conf["manager.components.precreate"] == "A,B,C"
    assert conf.origin["manager.components.precreate"] == ("rtc.conf", 1)
    assert conf.origin["next"] == ("rtc.conf", 4)


def test_escaped_separator_and_space_separator_and_bare_key():
    conf = parse_conf("a\\:b: 1\nspaced value here\nlonely\n")
    assert conf == {"a:b": "1", "spaced": "value here", "lonely": ""}


def test_later_key_wins():
    assert parse_conf("k: 1\nk: 2\n") == {"k": "2"}


def test_load_conf_reads_file_and_reports_missing(tmp_path):
    path = tmp_path / "rtc.conf"
    path.write_text("exec_cxt.periodic.rate: 500\n")
    conf = load_conf(path)
    assert conf["exec_cxt.periodic.rate"] == "500"
    assert conf.origin["exec_cxt.periodic.rate"] == (str(path), 1)
    with pytest.raises(ConfigError, match="nope.conf"):
        load_conf(tmp_path / "nope.conf")


# --------------------------------------------------------------------------- defaults, -o


def test_defaults_have_the_documented_keys():
    d = defaults()
    assert d["corba.nameservers"] == "localhost:2809"
    assert d["naming.formats"] == "%h.host_cxt/%n.rtc"
    assert d["exec_cxt.periodic.rate"] == "1000"
    assert d["exec_cxt.periodic.spin_us"] == "200"
    assert d["exec_cxt.periodic.sched_fifo"] == "NO"
    assert d["logger.file_name"] == ""
    assert d["manager.modules.load_path"] == ""
    assert get_bool(d, "naming.enable") is True
    assert get_float(d, "exec_cxt.transition_timeout") == 0.5
    d["x"] = "1"
    assert "x" not in defaults()  # a fresh copy each time


def test_overrides_split_at_first_colon_and_record_origin():
    conf = apply_overrides(parse_conf("a: 1", "rtc.conf"),
                           ["corba.nameservers:otherhost:2809", "a: 2", "empty:"])
    assert conf["corba.nameservers"] == "otherhost:2809"
    assert conf["a"] == "2" and conf["empty"] == ""
    assert conf.origin["a"] == ("-o", None)


def test_override_without_colon_is_an_error():
    with pytest.raises(ConfigError) as info:
        apply_overrides({}, ["exec_cxt.periodic.rate=100"])
    assert "-o" in str(info.value) and "'exec_cxt.periodic.rate=100'" in str(info.value)


def test_merge_conf_keeps_origins():
    merged = merge_conf(defaults(), parse_conf("exec_cxt.periodic.rate: 50", "rtc.conf"))
    assert merged["exec_cxt.periodic.rate"] == "50"
    assert merged.origin["exec_cxt.periodic.rate"] == ("rtc.conf", 1)
    assert merged.origin["naming.enable"] == ("<defaults>", None)


# --------------------------------------------------------------------------- typed getters


@pytest.mark.parametrize("text,expected", [("YES", True), ("no", False), ("True", True),
                                           ("FALSE", False), ("1", True), ("0", False)])
def test_get_bool_values(text, expected):
    assert get_bool({"k": text}, "k") is expected


def test_get_bool_error_names_file_line_key_value():
    conf = parse_conf("\nnaming.enable: maybe\n", "rtc.conf")
    with pytest.raises(ConfigError) as info:
        get_bool(conf, "naming.enable")
    assert str(info.value) == "rtc.conf:2: naming.enable: expected YES or NO, got 'maybe'"


def test_get_float_and_bounds():
    conf = parse_conf("rate: 100\nbad: fast\nneg: -1\n", "rtc.conf")
    assert get_float(conf, "rate", gt=0) == 100.0
    with pytest.raises(ConfigError, match=r"rtc.conf:2: bad: expected a number, got 'fast'"):
        get_float(conf, "bad")
    with pytest.raises(ConfigError, match=r"rtc.conf:3: neg: expected > 0, got '-1'"):
        get_float(conf, "neg", gt=0)


def test_get_int_and_missing_and_default():
    conf = parse_conf("n: 3\nx: 3.5\n", "my.conf")
    assert get_int(conf, "n") == 3
    with pytest.raises(ConfigError, match=r"my.conf:2: x: expected an integer, got '3.5'"):
        get_int(conf, "x")
    assert get_int(conf, "absent", 7) == 7
    with pytest.raises(ConfigError, match=r"my.conf: absent: required key is missing"):
        get_int(conf, "absent")


def test_get_float_plain_dict_uses_filename():
    with pytest.raises(ConfigError, match=r"^x.conf: k: expected a number, got 'z'$"):
        get_float({"k": "z"}, "k", filename="x.conf")


def test_get_list_strips_and_drops_empties():
    assert get_list({"k": " a, b ,,c , "}, "k") == ["a", "b", "c"]
    assert get_list({"k": ""}, "k") == []
    assert get_list({}, "k", ["d"]) == ["d"]


# --------------------------------------------------------------------------- component conf


COMP_CONF = """\
configuration.active_config: fast
conf.default.gain: 1.0
conf.default.mode: a
conf.fast.gain: 2.5
conf.__widget__.gain: slider.0.1
conf.__constraints__.gain: 0<=x<=10
conf.__type__.gain: double
exec_cxt.periodic.rate: 200
"""


def test_parse_component_conf():
    cc = parse_component_conf(COMP_CONF, "gen.conf")
    assert cc.source == "gen.conf"
    assert cc.sets == {"default": {"gain": "1.0", "mode": "a"}, "fast": {"gain": "2.5"}}
    assert cc.active_set == "fast"
    assert cc.widgets == {"gain": "slider.0.1"}
    assert cc.constraints == {"gain": "0<=x<=10"}
    assert cc.other == {"conf.__type__.gain": "double", "exec_cxt.periodic.rate": "200"}


def test_component_conf_files_type_then_instance_relative_to_conf(tmp_path):
    (tmp_path / "gen.conf").write_text(COMP_CONF)
    rtc = tmp_path / "rtc.conf"
    rtc.write_text("example.SineGenerator.config_file: gen.conf\n"
                   "example.gen0.config_file: /abs/gen0.conf\n")
    conf = load_conf(rtc)
    files = component_conf_files(conf, "example", "SineGenerator", "gen0")
    assert files == [tmp_path / "gen.conf", tmp_path.__class__("/abs/gen0.conf")]
    assert load_component_conf(files[0]).sets["fast"] == {"gain": "2.5"}
    assert component_conf_files(conf, "other", "SineGenerator", "gen0") == []


# --------------------------------------------------------------------------- manager keys


def test_precreate_forms():
    conf = parse_conf("manager.components.precreate: SineGenerator, "
                      "Recorder?instance_name=rec&conf.default.depth=10, "
                      "RTC:AIST:example:ConsoleIn:Python:1.0?instance_name=cin\n", "rtc.conf")
    a, b, c = parse_precreate(conf)
    assert (a.type_name, a.instance_name, a.params) == ("SineGenerator", None, {})
    assert (b.type_name, b.instance_name, b.params) == ("Recorder", "rec",
                                                        {"conf.default.depth": "10"})
    assert (c.type_name, c.instance_name, c.vendor, c.category, c.language, c.version) == (
        "ConsoleIn", "cin", "AIST", "example", "Python", "1.0")


def test_precreate_bad_item_names_key_and_value():
    conf = parse_conf("manager.components.precreate: Good, Bad?instance_name\n", "rtc.conf")
    with pytest.raises(ConfigError) as info:
        parse_precreate(conf)
    msg = str(info.value)
    assert msg.startswith("rtc.conf:1: manager.components.precreate[1]: expected key=value")
    assert "'instance_name'" in msg


def test_preconnect_openrtm_syntax_with_several_targets():
    conf = parse_conf(
        "manager.components.preconnect: "
        "gen0.out?port=rec0.in&port1=rec1.in&dataflow_type=push&subscription_type=flush"
        "&dataport.buffer.length=16, "
        "ConsoleIn0.out?port=rtcname://localhost:2809/*/ConsoleOut0.in\n", "rtc.conf")
    first, second = parse_preconnect(conf)
    assert first.source == "gen0.out"
    assert first.targets == ("rec0.in", "rec1.in")
    assert first.properties == {"dataflow_type": "push", "subscription_type": "flush",
                                "buffer.length": "16"}
    assert second.targets == ("rtcname://localhost:2809/*/ConsoleOut0.in",)


def test_preconnect_repeated_port_keys_and_no_target():
    conf = {"manager.components.preconnect": "a.o?port=b.i&port=c.i, a.o?interface_type=mqtt"}
    first, second = parse_preconnect(conf)
    assert first.targets == ("b.i", "c.i")
    assert second.targets == () and second.properties == {"interface_type": "mqtt"}


def test_preconnect_legacy_caret_form():
    conf = {"manager.components.preconnect": "a.out^b.in(dataflow_type=push&interface_type=direct)"}
    (spec,) = parse_preconnect(conf)
    assert (spec.source, spec.targets) == ("a.out", ("b.in",))
    assert spec.properties == {"dataflow_type": "push", "interface_type": "direct"}


def test_preconnect_bad_port_path():
    conf = parse_conf("manager.components.preconnect: gen?port=rec.in\n", "rtc.conf")
    with pytest.raises(ConfigError) as info:
        parse_preconnect(conf)
    assert str(info.value) == ('rtc.conf:1: manager.components.preconnect[0]: '
                               'expected "instance.port", got \'gen\'')


def test_preactivation():
    assert parse_preactivation({"manager.components.preactivation": "a, b,,c"}) == [
        "a", "b", "c"]
    assert parse_preactivation({}) == []
