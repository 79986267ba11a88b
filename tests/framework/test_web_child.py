"""Tests of the web view's settings: rtc.conf keys (checked before anything starts), the
manager's web child command line, and rtcf-web's argument checks."""

from __future__ import annotations

import pytest

from rtcf import rtcconf
from rtcf.confcheck import check_conf
from rtcf.errors import ConfigError
from rtcf.command import child_args, parse_args as manager_args
from rtcf.web.child import naming_address, web_settings
from rtcf.web.server import check_address, parse_args


def conf_with(*overrides: str) -> rtcconf.Conf:
    return rtcconf.apply_overrides(rtcconf.defaults(), list(overrides))


def test_defaults_are_loopback_and_off():
    conf = conf_with()
    assert web_settings(conf) == ("127.0.0.1", 8780)
    assert rtcconf.get_bool(conf, "rtcf.web.enable") is False
    assert check_conf(conf) == []


@pytest.mark.parametrize("override, message", [
    ("rtcf.web.port:99999", "-o: rtcf.web.port: expected a TCP port 0-65535, got '99999'"),
    ("rtcf.web.port:http", "-o: rtcf.web.port: expected a TCP port 0-65535, got 'http'"),
    ("rtcf.web.enable:maybe", "-o: rtcf.web.enable: expected YES or NO, got 'maybe'"),
    ("rtcf.web.foxglove_port:-1",
     "-o: rtcf.web.foxglove_port: expected a TCP port 0-65535, got '-1'"),
    ("rtcf.web.push_rate:0",
     "-o: rtcf.web.push_rate: expected a rate between 1 and 1000 [Hz], got '0'"),
    ("rtcf.web.allowed_hosts:robot.local, bad host",
     "-o: rtcf.web.allowed_hosts: expected a host name or address, optionally with :port "
     "(robot.local, 10.0.0.7, robot.local:9000), got 'robot.local, bad host'"),
])
def test_bad_web_keys_are_refused_naming_the_key(override, message):
    with pytest.raises(ConfigError) as e:
        check_conf(conf_with(override))
    assert str(e.value) == message


def test_web_keys_are_known():
    conf = conf_with("rtcf.web.port:0", "rtcf.web.address:0.0.0.0", "rtcf.web.enable:YES")
    assert check_conf(conf) == []
    assert web_settings(conf) == ("0.0.0.0", 0)


def test_naming_address_is_the_first_nameserver():
    assert naming_address(conf_with("corba.nameservers:localhost:2815,other:2809")) == \
        "localhost:2815"
    assert naming_address(conf_with("corba.nameservers:myhost")) == "myhost:2809"


def test_web_flag_stays_with_the_launcher():
    assert manager_args(["x.yaml", "--web"]).web
    assert child_args(["x.yaml", "--web", "-o", "a:b"]) == ["x.yaml", "-o", "a:b"]


@pytest.mark.parametrize("argv, text", [
    (["--port", "70000"], "expected a TCP port 0-65535, got '70000'"),
    (["--push-rate", "0"], "expected a rate between 1 and 1000 [Hz], got '0'"),
    (["--foxglove-port", "x"], "expected a TCP port 0-65535, got 'x'"),
])
def test_rtcf_web_refuses_bad_arguments(argv, text, capsys):
    with pytest.raises(SystemExit) as e:
        parse_args(argv)
    assert e.value.code == 2
    assert text in capsys.readouterr().err


def test_check_address_names_the_problem():
    assert check_address("127.0.0.1", 0) is None
    assert check_address("no-such-host.invalid", 8780).startswith(
        "cannot resolve the address 'no-such-host.invalid'")
