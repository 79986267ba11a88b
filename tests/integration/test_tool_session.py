"""rtcf.tools.session and rtcf.tools.tap against a running system (compositions/demo.yaml)
and against the OpenRTM-style peer (openrtm_peer.py). OpenRTM-aist-Python itself does not
install here (pip: "No matching distribution found for OpenRTM-aist-Python" on this
machine's package index), so there is no test against it."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.slow    # seconds per test: left out of scripts/test -m "not slow"

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "compositions" / "demo.yaml"


@pytest.fixture(scope="module")
def demo(module_launch):
    return module_launch(DEMO, ["gen", "gain", "rec"])


@pytest.fixture(scope="module")
def session(demo):
    from rtcf.tools.session import Session
    s = Session([f"localhost:{demo.ns_port}"])
    yield s
    s.close()


def test_snapshot(session, demo):
    snap = session.snapshot()
    names = {c.name: c for c in snap.components}
    assert {"gen", "gain", "rec"} <= set(names)
    gen = names["gen"]
    assert gen.state == "ACTIVE" and gen.type_name == "SineGenerator"
    out = gen.port("out")
    assert (out.direction, out.data_type) == ("out", "IDL:RTC/TimedDoubleSeq:1.0")
    ends = {tuple(k.ports) for k in snap.connections()}
    assert ("gen.out", "gain.in") in ends and ("gain.out", "rec.in") in ends
    ec = snap.ec(gen.owned_ecs[0])
    assert ec.kind == "PERIODIC" and ec.rate == 100.0 and ec.running
    assert ec.members == ["gen", "gain", "rec"]
    assert names["gain"].participating_ecs == [ec.id]
    assert snap.component(gen.address) is gen
    from rtcf.tools.model import Snapshot
    assert Snapshot.from_dict(snap.to_dict()) == snap


def test_addresses_and_errors(session, demo, it):
    from rtcf.tools.session import ToolError
    full = f"localhost:{demo.ns_port}/{it.HOST}.host_cxt/gen.rtc:out"
    for addr in (full, "/" + full, "gen:out", "gen.rtc:out"):
        h = session.port(addr, "out")
        assert h.info.full_name == "gen.out" and h.data_cls.__name__ == "TimedDoubleSeq"
    with pytest.raises(ToolError, match="has no port 'nope' \\(ports: out\\)"):
        session.port("gen:nope")
    with pytest.raises(ToolError, match="no component ghost"):
        session.port("ghost:out")
    with pytest.raises(ToolError, match="is an in port; an out port is needed"):
        session.port("gain:in", "out")
    with pytest.raises(ToolError, match="no naming service answers at localhost:1"):
        from rtcf.tools.session import Session
        Session(["localhost:1"]).port("gen:out")


def test_tap_receives_and_disconnects(session, demo):
    from rtcf.tools.tap import SampleQueue, Tap
    q = SampleQueue(1000)
    tap = Tap(session, session.port("gain:out", "out"), q, key="k")
    try:
        deadline = time.monotonic() + 5
        got = []
        while len(got) < 20 and time.monotonic() < deadline:
            item = q.get(timeout=1.0)
            if item is not None:
                got.append(item)
        assert len(got) >= 20 and q.dropped == 0
        keys = {k for k, _, _ in got}
        assert keys == {"k"}
        times = [t for _, t, _ in got]
        assert times == sorted(times)
        s = tap.decode(got[-1][2])
        assert s.data.shape == (3,) and np.all(np.abs(s.data) <= 2.0 + 1e-9)   # gain 2 * sine
        conns = session.snapshot().component("gain").port("out").connectors
        assert len(conns) == 2
    finally:
        tap.close()
    conns = session.snapshot().component("gain").port("out").connectors
    assert [k.ports for k in conns] == [["gain.out", "rec.in"]]


def test_change_state(session, demo, it):
    from rtcf.tools.session import ToolError
    rec = demo.ref("rec")
    session.change_state("rec", "deactivate")
    it.wait_state(rec, "INACTIVE")
    assert session.snapshot().component("rec").state == "INACTIVE"
    with pytest.raises(ToolError, match="deactivate refused"):
        session.change_state("rec", "deactivate")
    with pytest.raises(ToolError, match="no execution context number 3"):
        session.change_state("rec", "activate", 3)
    with pytest.raises(ToolError, match="must be one of"):
        session.change_state("rec", "explode")
    session.change_state("rec", "activate")
    it.wait_state(rec, "ACTIVE")


def test_queue_drops_and_counts():
    from rtcf.tools.tap import SampleQueue
    q = SampleQueue(3)
    assert [q.offer(i) for i in range(5)] == [True, True, True, False, False]
    assert (q.received, q.dropped, len(q)) == (5, 2, 3)
    assert q.drain() == [0, 1, 2] and q.get(timeout=0.01) is None


# -- against the OpenRTM-style peer (openrtm_peer.py: rtctree's stubs, omniORB's marshalling,
#    OpenRTM's connection algorithm; no rtcf) ------------------------------------------------

@pytest.fixture(scope="module")
def peer(tmp_path_factory):
    from test_openrtm_peer import PeerProcess
    p = PeerProcess(tmp_path_factory.mktemp("tool_peer"))
    yield p
    p.close()


def test_tap_and_injector_with_openrtm_peer(peer, it):
    from rtcf.tools.session import Session
    from rtcf.tools.tap import Injector, SampleQueue, Tap
    s = Session(["localhost:1"])          # no naming needed: the ports are given by IOR
    orb = it.orb()
    RTC = it.stubs("RTC")
    out_ref = orb.string_to_object(peer.out_ior)._narrow(RTC.PortService)
    in_ref = orb.string_to_object(peer.in_ior)._narrow(RTC.PortService)
    q = SampleQueue(100)
    tap = Tap(s, s.port_from_ref(out_ref, "peer.out"), q)
    try:
        for n in range(1, 6):
            assert peer.write([n, n + 0.5], n, 7 * n) == ["PORT_OK"]
        got = [q.get(timeout=5.0) for _ in range(5)]
        samples = [tap.decode(d) for _, _, d in got]
        assert [(x.tm.sec, x.tm.nsec, list(x.data)) for x in samples] == \
            [(n, 7 * n, [n, n + 0.5]) for n in range(1, 6)]
    finally:
        tap.close()
    assert peer.cmd("profiles")["out"] == []          # disconnected on both ends
    peer.cmd("clear")
    inj = Injector(s, s.port_from_ref(in_ref, "peer.in"))
    try:
        from rtcf.datatypes import TimedDoubleSeq
        for n in range(3):
            assert inj.write(TimedDoubleSeq(data=[n, -n])) == "PORT_OK"
        it.wait_until(lambda: len(peer.received()) == 3, 5, what="3 samples at the peer")
        assert [v for _, _, v in peer.received()] == [[n, -n] for n in range(3)]
    finally:
        inj.close(linger=0)
    assert peer.cmd("profiles")["in"] == []

