"""rtcf.tools.address: addresses read as rtshell reads them, and rtcf's short form."""

import pytest

from rtcf.tools.address import (AddressError, nameservers_from_env, normalise_server,
                                parse_address)


@pytest.mark.parametrize("text,server,path,port", [
    ("localhost:2809/host.host_cxt/DCM0.rtc:q", "localhost:2809",
     ("host.host_cxt", "DCM0.rtc"), "q"),
    ("/localhost/host.host_cxt/DCM0.rtc:q", "localhost:2809", ("host.host_cxt", "DCM0.rtc"),
     "q"),
    ("/127.0.0.1:2814/a.host_cxt/b.rtc", "127.0.0.1:2814", ("a.host_cxt", "b.rtc"), None),
    ("localhost/./x.host_cxt/../y.host_cxt/C.rtc:out", "localhost:2809",
     ("y.host_cxt", "C.rtc"), "out"),
    ("DCM0.rtc:q", None, ("DCM0.rtc",), "q"),
    ("DCM0:q", None, ("DCM0.rtc",), "q"),
])
def test_forms(text, server, path, port):
    a = parse_address(text, environ={})
    assert (a.server, a.path, a.port) == (server, path, port)
    assert a.component == "DCM0" or a.component in ("b", "C")


def test_rtcsh_cwd_is_prefixed_as_rtshell_does():
    env = {"RTCSH_CWD": "/localhost:2814/h.host_cxt"}
    a = parse_address("DCM0.rtc:q", environ=env)
    assert (a.server, a.path, a.port) == ("localhost:2814", ("h.host_cxt", "DCM0.rtc"), "q")


@pytest.mark.parametrize("text,msg", [
    ("", "empty"), ("a:b:c", "more than one"), ("/localhost", "expected host"),
    ("/localhost:99999/x.rtc", "bad naming service port"), (":q", "no component"),
])
def test_bad(text, msg):
    with pytest.raises(AddressError, match=msg):
        parse_address(text, environ={})


def test_want_port():
    with pytest.raises(AddressError, match="names no port"):
        parse_address("DCM0", want_port=True, environ={})
    with pytest.raises(AddressError, match="names a port"):
        parse_address("DCM0:q", want_port=False, environ={})


def test_nameservers_env():
    assert nameservers_from_env({"RTCTREE_NAMESERVERS": "localhost;h2:2900;"}) == \
        ["localhost:2809", "h2:2900"]
    assert normalise_server("x") == "x:2809"
    with pytest.raises(AddressError):
        normalise_server("x:port")
