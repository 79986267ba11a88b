"""Tests of rtcf.confcheck and the rtc.conf reader's warnings: bad values
of known keys refused naming their origin, unknown keys and lines without a separator warned
about, documented OpenRTM key families accepted."""

from __future__ import annotations

import pytest

from rtcf import rtcconf
from rtcf.confcheck import check_conf
from rtcf.errors import ConfigError


def conf(text: str = "", *overrides: str) -> rtcconf.Conf:
    c = rtcconf.merge_conf(rtcconf.defaults(), rtcconf.parse_conf(text, "my.conf"))
    return rtcconf.apply_overrides(c, overrides)


def test_defaults_and_the_repository_rtc_conf_are_clean():
    assert check_conf(rtcconf.defaults()) == []
    from pathlib import Path
    repo = Path(__file__).resolve().parents[2] / "rtc.conf"
    assert check_conf(rtcconf.merge_conf(rtcconf.defaults(), rtcconf.load_conf(repo))) == []


def test_unknown_keys_are_warned_with_origin_and_closest_key():
    warnings = check_conf(conf("# x\nexec_cxt.perodic.rate: 5\nfoo: 1\n",
                               "naming.formatz:%n.rtc"))
    assert warnings == [
        "my.conf:2: unknown key 'exec_cxt.perodic.rate' is ignored; did you mean "
        "exec_cxt.periodic.rate?",
        "my.conf:3: unknown key 'foo' is ignored",
        "-o: unknown key 'naming.formatz' is ignored; did you mean naming.formats?",
    ]


@pytest.mark.parametrize("key", [
    "logger.plugins", "logger.logstream.file.rotate", "manager.modules.Python.suffixes",
    "sdo.service.provider.enabled_services", "manager.local_service.modules",
    "example.Gain.config_file", "example.gain0.conf.default.gain",
    "example.gain0.configuration.active_config", "nao.DCM0.exec_cxt.periodic.rate",
    "corba.alternate_iiop_addresses", "timer.tick", "manager.termination_waittime",
])
def test_openrtm_keys_and_families_are_known(key):
    assert check_conf(conf(f"{key}: x\n")) == []


@pytest.mark.parametrize("key", ["exec_cxt.periodic.rat", "manager.components.precreat",
                                 "corba.nameserver", "example.gain0.cnf.default.gain",
                                 "rtcf.compositon", "a b"])
def test_near_misses_are_unknown(key):
    assert len(check_conf(conf(f"{key}: x\n"))) == 1


def test_a_line_without_separator_is_warned_with_file_and_line():
    c = conf("logger.log_level: INFO\nlogger.enable\nkey value\n")
    assert check_conf(c) == ["my.conf:2: no ':' or '=' in the line, read as key "
                             "'logger.enable' with an empty value",
                             "my.conf:3: unknown key 'key' is ignored"]


@pytest.mark.parametrize("override, message", [
    ("exec_cxt.periodic.rate:-5", "-o: exec_cxt.periodic.rate: expected a rate between 1 "
                                  "and 10000 [Hz], got '-5'"),
    ("exec_cxt.periodic.rate:0.5", "got '0.5'"),
    ("exec_cxt.periodic.rate:nan", "got 'nan'"),
    ("exec_cxt.periodic.rate:1e12", "got '1e12'"),
    ("exec_cxt.periodic.rate:1e-9", "got '1e-9'"),
    ("exec_cxt.periodic.rate:fast", "got 'fast'"),
    ("exec_cxt.periodic.spin_us:-1", "-o: exec_cxt.periodic.spin_us: expected a number >= 0"),
    ("exec_cxt.transition_timeout:inf", "exec_cxt.transition_timeout"),
    ("naming.update.interval:0", "naming.update.interval"),
    ("logger.enable:maybe", "-o: logger.enable: expected YES or NO, got 'maybe'"),
    ("corba.nameservers:localhost:http", "-o: corba.nameservers: expected host:port items"),
    ("corba.nameservers:localhost:70000", "got 'localhost:70000'"),
])
def test_bad_values_of_known_keys_are_refused_naming_origin(override, message):
    with pytest.raises(ConfigError) as info:
        check_conf(conf("", override))
    assert message in str(info.value)


def test_file_values_are_refused_with_file_and_line():
    with pytest.raises(ConfigError, match=r"^my\.conf:3: exec_cxt\.periodic\.rate: .*got '0'$"):
        check_conf(conf("\n\nexec_cxt.periodic.rate: 0\n"))


@pytest.mark.parametrize("value", ["1", "1000", "10000", "1e3"])
def test_sane_rates_pass(value):
    assert check_conf(conf(f"exec_cxt.periodic.rate: {value}\n")) == []


def test_binary_conf_file_names_file_and_byte(tmp_path):
    (tmp_path / "b.conf").write_bytes(b"a: 1\n\xff\xfe")
    with pytest.raises(ConfigError, match=r"b\.conf: not a UTF-8 text file: byte 0xff at line 2"):
        rtcconf.load_conf(tmp_path / "b.conf")
