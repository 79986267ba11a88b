"""Service ports: a required interface bound to a provided one by the composition, in one
process without an ORB, in one process through CORBA, and across processes (launcher)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rtcf import rtcconf
from rtcf.composition import parse_composition
from rtcf.manager import Manager

pytestmark = pytest.mark.slow    # seconds per test: left out of scripts/test -m "not slow"

ROOT = Path(__file__).resolve().parents[2]
TESTCOMPS = Path(__file__).resolve().parent / "testcomps"

SYSTEM = {
    "components": [{"type": "DCM", "module": "dcm"},
                   {"type": "DcmClient", "module": "dcmclient", "name": "client"}],
    "connections": [{"from": "client.dcm", "to": "DCM0.DCMService"}],
    "execution_contexts": [{"name": "e", "kind": "stepped", "rate": 100,
                            "members": ["DCM0", "client"]}],
}


def _manager() -> Manager:
    if str(TESTCOMPS) not in sys.path:
        sys.path.insert(0, str(TESTCOMPS))
    conf = rtcconf.merge_conf(rtcconf.defaults(), {
        "manager.modules.load_path": f"{ROOT / 'components'},{TESTCOMPS}"})
    return Manager(conf, corba=False)


def test_required_interface_bound_without_orb():
    m = _manager()
    m.build(parse_composition(SYSTEM, "svc.yaml"))
    try:
        client = m.components["client"]
        assert client.dcm.connected
        ec = m.ecs["e"]
        ec.step(5)
        assert client.calls >= 3
        assert client.out.value.data[0] == m.components["DCM0"].now_ms
    finally:
        m.shutdown()


@pytest.mark.parametrize("where", ["other process", "same process"])
def test_service_port_pair_through_corba(launch, it, probe, where):
    """Same process: CorbaRuntime.connect_services; other process: the launcher's
    cross-process connect through the naming service."""
    process = ", process: other" if where == "other process" else ""
    yaml = f"""
components:
  - {{type: DCM, module: dcm}}
  - {{type: DcmClient, module: dcmclient, name: client{process}}}
connections:
  - {{from: client.dcm, to: DCM0.DCMService}}
execution_contexts:
  - {{name: e, kind: periodic, rate: 100, members: [DCM0, client]}}
"""
    mp = launch(yaml, ["DCM0", "client"])
    p = probe()
    it.connect_ports(mp.port("client", "time"), p.ref, subscription_type="flush")
    assert p.wait_count(20, timeout=10.0) >= 20, mp.log()
    times = [s[0] for s in p.recent(10)]
    assert times == sorted(times) and times[-1] > times[0]   # DCM time advancing
    # the connection shows on both service ports, with the provider's IOR published
    assert len(it.connector_profiles(mp.port("client", "dcm"))) == 1
    cps = it.connector_profiles(mp.port("DCM0", "DCMService"))
    assert len(cps) == 1
    assert "port.DCMService.service0" in it.props_of(cps[0])
