"""rtcf-controllers reads the manager's address with the tools' rtshell-form parser
(rtcf.tools.address), plus its two forms below ``--nameserver``."""

import pytest

from rtcf.errors import AddressError
from rtcf_components.controller_manager.cli import main, split_path


@pytest.mark.parametrize("text, nameserver, expected", [
    ("localhost:2809/h.host_cxt/CM0.rtc", None, ("localhost:2809", "h.host_cxt/CM0.rtc")),
    ("/localhost/h.host_cxt/CM0.rtc", "x:1", ("localhost:2809", "h.host_cxt/CM0.rtc")),
    ("/h2:5000/./a/../h.host_cxt/CM0.rtc", None, ("h2:5000", "h.host_cxt/CM0.rtc")),
    ("h.host_cxt/CM0.rtc", None, ("localhost:2809", "h.host_cxt/CM0.rtc")),
    ("h.host_cxt/CM0.rtc", "x:1", ("x:1", "h.host_cxt/CM0.rtc")),
    ("CM0.rtc", "x:1", ("x:1", "CM0")),
    ("CM0", None, ("localhost:2809", "CM0")),
])
def test_the_manager_address_in_rtshell_forms(text, nameserver, expected, monkeypatch):
    monkeypatch.delenv("RTCSH_CWD", raising=False)
    assert split_path(text, nameserver) == expected


def test_rtcwd_s_directory_is_honoured(monkeypatch):
    monkeypatch.setenv("RTCSH_CWD", "/h3:2810/h.host_cxt")
    assert split_path("CM0.rtc", None) == ("h3:2810", "h.host_cxt/CM0.rtc")


@pytest.mark.parametrize("text, says", [
    ("", "expected an rtshell path"),
    ("CM0.rtc:port", "names a port; a component was expected"),
    ("localhost:99999/h.host_cxt/CM0.rtc", "bad naming service port"),
])
def test_a_bad_address_is_named(text, says, monkeypatch):
    monkeypatch.delenv("RTCSH_CWD", raising=False)
    with pytest.raises(AddressError, match=says):
        split_path(text, None)


def test_a_bad_address_is_a_bad_command_line(capsys, monkeypatch):
    monkeypatch.delenv("RTCSH_CWD", raising=False)
    assert main(["list", "CM0.rtc:port"]) == 2
    assert "rtcf-controllers list: 'CM0.rtc:port' names a port" in capsys.readouterr().err
