"""Clients with no naming service or a stale entry: get_service,
DCMProxy and scripts/dcm_chest_leds say that no naming service answers at the address and how
to point at one, instead of a bare CORBA.TRANSIENT; and ``scripts/dcm_chest_leds --help`` is
complete."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow    # seconds per test: left out of scripts/test -m "not slow"

ROOT = Path(__file__).resolve().parents[2]
HOST = socket.gethostname()


@pytest.fixture
def dead_address():
    from rtcf.corba.naming import free_port
    return f"localhost:{free_port()}"


def test_get_service_without_naming_service(dead_address):
    from rtcf.corba.client import NoNamingService, get_service
    with pytest.raises(NoNamingService) as info:
        get_service("DCM0", "DCMService", nameserver=dead_address)
    text = str(info.value)
    assert text.startswith(f"no naming service answers at {dead_address}")
    assert "scripts/run" in text and "--nameserver" in text and "nameserver=" in text
    assert isinstance(info.value, ConnectionError)


def test_dcm_proxy_without_naming_service(dead_address):
    sys.path.insert(0, str(ROOT / "components"))
    from rtcf_components.dcm.proxy import DCMProxy
    from rtcf.corba.client import NoNamingService
    with pytest.raises(NoNamingService, match=f"no naming service answers at {dead_address}"):
        DCMProxy("DCM0", dead_address)


def test_stale_entry_and_unbound_name_are_named(naming, dead_address):
    from rtcf.corba.client import resolve_component
    from rtcf.corba.naming import NamingClient
    from rtcf.corba.orb import init_orb
    orb = init_orb({})
    client = NamingClient(orb, f"127.0.0.1:{naming.port}")
    ghost = orb.string_to_object(f"corbaloc::127.0.0.1:{dead_address.split(':')[1]}/ghost")
    path = f"{HOST}.host_cxt/ghost_cl.rtc"
    client.bind(path, ghost)
    try:
        with pytest.raises(LookupError, match="bound in the naming service .* but does not "
                                              "answer"):
            resolve_component("ghost_cl", f"localhost:{naming.port}")
    finally:
        client.unbind(path)
    with pytest.raises(LookupError, match=r"nobody_cl\.rtc is not bound in the naming "
                                          r"service at localhost:\d+: is the system running"):
        resolve_component("nobody_cl", f"localhost:{naming.port}")


def _script(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, RTCF_VENV=str(Path(sys.executable).parent.parent))
    return subprocess.run([str(ROOT / "scripts" / "dcm_chest_leds"), *args],
                          capture_output=True, text=True, timeout=60, env=env,
                          stdin=subprocess.DEVNULL)


def test_dcm_chest_leds_without_naming_service(dead_address):
    cp = _script("--nameserver", dead_address)
    assert cp.returncode == 1
    assert f"no naming service answers at {dead_address}" in cp.stderr, cp.stderr
    assert "--nameserver host:port" in cp.stderr
    assert "Traceback" not in cp.stderr and "lost the DCM" not in cp.stderr


def test_dcm_chest_leds_help_is_complete():
    cp = _script("--help")
    assert cp.returncode == 0
    out = cp.stdout
    for option in ("--nameserver HOST:PORT", "--dcm NAME", "--example"):
        assert option in out
    description = out.split("\n\n")[1]         # after the usage block
    assert description.rstrip().endswith("."), description
    flat = " ".join(out.split())
    assert "(default: localhost:2809" in flat and "(default: DCM0)" in flat
    assert "Exit status" in flat and "scripts/run" in flat
