"""Wire compatibility against an independent OpenRTM-style peer (openrtm_peer.py).

OpenRTM-aist-Python cannot be installed here, so openrtm_peer.py re-implements, from
specs/openrtm_interop.md §1 only and with rtctree-aist's stubs (never rtcf), an OpenRTM
OutPort and InPort (TimedDoubleSeq, push, corba_cdr): the chained notify_connect
negotiation, ``dataport.serializer.cdr.endian``, ``inport_ior``/``inport_ref``, and payloads
made with ``omniORB.cdrMarshal(to_any(value).typecode(), value, little)`` (bare CDR). It runs
in its own process (two stub sets for the same repository ids cannot share one), talks JSON
lines on stdin/stdout, and rtcf runs ``examples.Gain`` in a third process.

Data path in every test: peer.out -> opgain.in, opgain.out -> peer.in; the Gain multiplies
by GAIN and copies ``tm``, so the peer must get back GAIN * values with the same sec/nsec.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import struct
import subprocess
import sys
import threading
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow    # seconds per test: left out of scripts/test -m "not slow"

HERE = Path(__file__).resolve().parent
PEER_SCRIPT = HERE / "openrtm_peer.py"
GAIN = 3.0
INST = "opgain"
DT = "IDL:RTC/TimedDoubleSeq:1.0"
ENDIAN = "dataport.serializer.cdr.endian"
IOR_IN = "dataport.corba_cdr.inport_ior"
REF_IN = "dataport.corba_cdr.inport_ref"

COMPOSITION = f"""
name: openrtm_peer
components:
  - {{type: Gain, module: examples, name: {INST}, params: {{gain: {GAIN}}}}}
execution_contexts:
  - {{name: main, kind: periodic, rate: 200, members: [{INST}]}}
activate: [{INST}]
"""


# -- the peer process ---------------------------------------------------------------------------

class PeerProcess:
    """openrtm_peer.py in its own process group; ``cmd(name, **args)`` -> the JSON reply."""

    def __init__(self, workdir: Path):
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # no rtcf on the path
        env["PYTHONUNBUFFERED"] = "1"
        self.stderr_path = workdir / "openrtm_peer.stderr"
        self._stderr = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen([sys.executable, str(PEER_SCRIPT)], cwd=workdir, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._stderr, text=True, bufsize=1,
                                     start_new_session=True)
        self._lines: queue.Queue = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        hello = self._next(20.0)
        self.out_ior, self.in_ior = hello["out"], hello["in"]
        assert hello["rtcf_loaded"] is False, "the peer must stay independent of rtcf"

    def _read(self) -> None:
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _next(self, timeout: float) -> dict:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"openrtm_peer did not answer within {timeout} s:\n"
                                 f"{self.stderr()}") from None
        if line is None:
            raise AssertionError(f"openrtm_peer exited ({self.proc.poll()}):\n{self.stderr()}")
        return json.loads(line)

    def stderr(self) -> str:
        try:
            return self.stderr_path.read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def cmd(self, name: str, timeout: float = 15.0, **args) -> dict:
        self.proc.stdin.write(json.dumps({"cmd": name, **args}) + "\n")
        self.proc.stdin.flush()
        reply = self._next(timeout)
        assert reply.get("ok"), f"peer {name}: {reply}"
        return reply

    def write(self, values, sec: int, nsec: int) -> list[str]:
        return self.cmd("write", values=list(values), sec=sec, nsec=nsec)["status"]

    def received(self) -> list:
        return self.cmd("received")["samples"]

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.cmd("quit", timeout=5.0)
                self.proc.wait(5.0)
            except Exception:
                pass
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(5.0)
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except Exception:
                pass
        self._stderr.close()


# -- fixtures -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def system(module_launch, it):
    mp = module_launch(COMPOSITION, INST)
    it.wait_state(mp.ref(INST), "ACTIVE")
    return mp


@pytest.fixture(scope="module")
def peer(tmp_path_factory):
    p = PeerProcess(tmp_path_factory.mktemp("openrtm_peer"))
    yield p
    p.close()
    assert p.proc.poll() is not None


class Ports:
    """The four PortServices, as references in the test process (rtcf's own stubs)."""

    def __init__(self, it, system, peer):
        RTC = it.stubs("RTC")
        orb = it.orb()
        self.it = it
        self.gain_in = system.port(INST, "in")
        self.gain_out = system.port(INST, "out")
        self.peer_out = orb.string_to_object(peer.out_ior)._narrow(RTC.PortService)
        self.peer_in = orb.string_to_object(peer.in_ior)._narrow(RTC.PortService)
        assert self.peer_out is not None and self.peer_in is not None

    def all(self):
        return [self.gain_in, self.gain_out, self.peer_out, self.peer_in]

    def connect(self, on, ports, **props) -> str:
        """connect() called on ``on`` with the profile's port list ``ports``."""
        RTC = self.it.stubs("RTC")
        full = {(k if k.startswith("dataport.") else "dataport." + k): v
                for k, v in props.items()}
        code, cp = on.connect(self.it.make_profile(list(ports), full, name="peer_test"))
        assert code == RTC.RTC_OK, f"connect returned {code}"
        assert cp.connector_id
        return cp.connector_id


@pytest.fixture
def ports(it, system, peer):
    """The ports, and afterwards every connection released on both sides."""
    ps = Ports(it, system, peer)
    peer.cmd("clear")
    yield ps
    for p in ps.all():
        for cp in it.connector_profiles(p):
            try:
                p.disconnect(cp.connector_id)
            except Exception:
                pass
    peer.cmd("clear")
    left = {name: len(it.connector_profiles(p)) for name, p in
            zip(("gain.in", "gain.out", "peer.out", "peer.in"), ps.all())}
    assert not any(left.values()), f"connections left after the test: {left}"


# -- helpers -------------------------------------------------------------------------------------

SAMPLES = [([0.5, -1.25, 3.0], 1000, 123456789),
           ([1e-3, 2.0, -7.5, 42.0], 1001, 5),
           ([0.0, 1.5, 2.25], 4000000000, 999999999)]     # sec near the u32 limit


def push_and_check(peer, it, samples=SAMPLES) -> list:
    """The peer writes each sample (waiting for each to come back through the Gain);
    it receives GAIN * values with the same tm."""
    for values, sec, nsec in samples:
        status = peer.write(values, sec, nsec)
        assert status == ["PORT_OK"], status
        want = [sec, nsec, [v * GAIN for v in values]]
        it.wait_until(lambda: want in peer.received(), 5.0,
                      what=f"GAIN * {values} @ {sec}.{nsec} back at the peer")
    got = peer.received()
    errors = peer.cmd("raw")["errors"]
    assert not errors, errors
    # nothing but the expected samples (the Gain forwards each input once)
    assert got == [[s, n, [v * GAIN for v in vals]] for vals, s, n in samples], got
    return got


def rtcf_props(it, cp) -> dict:
    return {k: v for k, v in it.props_of(cp).items() if isinstance(v, str)}


def peer_profile(peer, side: str, cid: str) -> dict:
    found = [cp for cp in peer.cmd("profiles")[side] if cp["connector_id"] == cid]
    assert len(found) == 1, f"peer.{side} has no connector {cid}"
    return found[0]


def rtcf_profile(it, port, cid: str):
    found = [cp for cp in it.connector_profiles(port) if cp.connector_id == cid]
    assert len(found) == 1, f"rtcf port has no connector {cid}"
    return found[0]


# -- 1. connect on the peer's OutPort, then on rtcf's OutPort -------------------------------------

def test_peer_connects_out_to_gain_and_gain_back_to_peer(peer, ports, it):
    c1 = ports.connect(ports.peer_out, [ports.peer_out, ports.gain_in],
                       subscription_type="flush")
    c2 = ports.connect(ports.gain_out, [ports.gain_out, ports.peer_in],
                       subscription_type="flush")
    assert c1 != c2
    push_and_check(peer, it)
    # every payload the peer got was bare little-endian CDR: tm.sec u32 first
    raw = [r for r in peer.cmd("raw")["raw"] if r[0] == c2]
    assert [bytes.fromhex(h)[:4] for _, _, h in raw] == \
        [struct.pack("<I", s) for _, s, _ in SAMPLES]
    assert all(little for _, little, _ in raw)


# -- 2. connect called on the other side of each pair, subscription new -------------------------

@pytest.mark.parametrize("order", ["on_first_port", "on_second_port"])
def test_connect_from_the_other_side_new(peer, ports, it, order):
    if order == "on_first_port":
        # rtcf's InPort first in the list, connect() on it; the peer's InPort likewise
        c1 = ports.connect(ports.gain_in, [ports.gain_in, ports.peer_out],
                           subscription_type="new")
        c2 = ports.connect(ports.peer_in, [ports.peer_in, ports.gain_out],
                           subscription_type="new")
    else:
        # connect() on the port that is NOT ports[0]: it must start the chain at ports[0]
        c1 = ports.connect(ports.gain_in, [ports.peer_out, ports.gain_in],
                           subscription_type="new")
        c2 = ports.connect(ports.peer_in, [ports.gain_out, ports.peer_in],
                           subscription_type="new")
    push_and_check(peer, it)
    for cid, rport, side in ((c1, ports.gain_in, "out"), (c2, ports.gain_out, "in")):
        rp = rtcf_props(it, rtcf_profile(it, rport, cid))
        pp = peer_profile(peer, side, cid)["properties"]
        assert rp["dataport.subscription_type"] == pp["dataport.subscription_type"] == "new"
        # endian: connect() on an InPort adds the default too (OpenRTM's InPortBase::connect)
        assert rp.get(ENDIAN) == pp.get(ENDIAN) == "little,big", (rp, pp)


# -- 3. the stored profiles --------------------------------------------------------------------

def test_stored_profiles_match_the_spec_and_each_other(peer, ports, it):
    c1 = ports.connect(ports.peer_out, [ports.peer_out, ports.gain_in],
                       subscription_type="flush")
    c2 = ports.connect(ports.gain_out, [ports.gain_out, ports.peer_in],
                       subscription_type="flush")
    for cid, rport, side in ((c1, ports.gain_in, "out"), (c2, ports.gain_out, "in")):
        rcp = rtcf_profile(it, rport, cid)
        rp = rtcf_props(it, rcp)
        pcp = peer_profile(peer, side, cid)
        pp = pcp["properties"]
        assert rcp.connector_id == pcp["connector_id"] == cid
        assert rcp.name == pcp["name"] == "peer_test"
        assert len(rcp.ports) == len(pcp["ports"]) == 2
        for props in (rp, pp):
            assert props[ENDIAN] == "little,big", props
            assert props["dataport.data_type"] == DT
            assert props["dataport.subscription_type"] == "flush"
            assert props["dataport.dataflow_type"] == "push"
            assert props["dataport.interface_type"] == "corba_cdr"
            assert props[IOR_IN].startswith("IOR:")
        assert REF_IN in pp and REF_IN in it.props_of(rcp)
        assert rp[IOR_IN] == pp[IOR_IN]
        # the object inside inport_ref is the InPortCdr named by inport_ior
        ref = it.props_of(rcp)[REF_IN]
        assert ref._is_equivalent(it.orb().string_to_object(rp[IOR_IN]))
        # identical on both ends (string properties; the peer's own additions included)
        assert rp == {k: v for k, v in pp.items() if k != REF_IN}, (rp, pp)


def test_stored_profile_has_per_side_data_types(peer, ports, it):
    c1 = ports.connect(ports.peer_out, [ports.peer_out, ports.gain_in])   # rtcf = InPort
    c2 = ports.connect(ports.gain_out, [ports.gain_out, ports.peer_in])   # rtcf = OutPort
    for cid, rport in ((c1, ports.gain_in), (c2, ports.gain_out)):
        rp = rtcf_props(it, rtcf_profile(it, rport, cid))
        assert rp.get("dataport.outport.data_type") == DT, rp
        assert rp.get("dataport.inport.data_type") == DT, rp


# -- 4. disconnect from either side ---------------------------------------------------------------

@pytest.mark.parametrize("owner_first", [True, False], ids=["owner_first", "other_first"])
def test_disconnect_from_either_side(peer, ports, it, owner_first):
    """Whoever is asked to disconnect, both ends forget the connector. ``owner_first``: the
    port asked is ports[0] of the profile; otherwise it must start at the other port."""
    def pair(asked, other):
        return [asked, other] if owner_first else [other, asked]

    c1 = ports.connect(ports.peer_out, pair(ports.peer_out, ports.gain_in))
    c2 = ports.connect(ports.gain_out, pair(ports.gain_out, ports.peer_in))
    push_and_check(peer, it, SAMPLES[:1])
    RTC = it.stubs("RTC")

    # from the peer's side: rtcf's InPort releases its connector
    assert ports.peer_out.disconnect(c1) == RTC.RTC_OK
    it.wait_until(lambda: not it.connector_profiles(ports.gain_in), 3.0,
                  what="gain.in to forget the connector disconnected by the peer")
    assert not peer.cmd("profiles")["out"]
    assert peer.write([1.0], 1, 1) == []          # the peer has nowhere to push any more

    # from rtcf's side: the peer's InPort releases its connector
    assert ports.gain_out.disconnect(c2) == RTC.RTC_OK
    it.wait_until(lambda: not peer.cmd("profiles")["in"], 3.0,
                  what="peer.in to forget the connector disconnected by rtcf")
    assert not it.connector_profiles(ports.gain_out)
    # a second disconnect of the same id is refused on both
    assert ports.peer_out.disconnect(c1) == RTC.BAD_PARAMETER
    assert ports.gain_out.disconnect(c2) == RTC.BAD_PARAMETER


# -- 5. big-endian negotiation -------------------------------------------------------------------

@pytest.mark.parametrize("big", ["gain_to_peer", "peer_to_gain", "both"])
def test_big_endian_negotiation(peer, ports, it, big):
    """``serializer.cdr.endian=big,little``: both sides take the first token, the peer
    marshals / unmarshals with little=False, and the values survive."""
    e1 = "big,little" if big in ("peer_to_gain", "both") else None
    e2 = "big,little" if big in ("gain_to_peer", "both") else None
    c1 = ports.connect(ports.peer_out, [ports.peer_out, ports.gain_in],
                       **{"serializer.cdr.endian": e1})
    c2 = ports.connect(ports.gain_out, [ports.gain_out, ports.peer_in],
                       **{"serializer.cdr.endian": e2})
    push_and_check(peer, it)
    raw = [r for r in peer.cmd("raw")["raw"] if r[0] == c2]
    fmt = ">I" if e2 else "<I"
    assert [bytes.fromhex(h)[:4] for _, _, h in raw] == [struct.pack(fmt, s)
                                                         for _, s, _ in SAMPLES]
    assert all(little is (e2 is None) for _, little, _ in raw)
    # bare CDR: no byte-order octet; 3 doubles: 8 (tm) + 4 (length) + 4 (pad) + 24
    assert len(bytes.fromhex(raw[0][2])) == 16 + 8 * len(SAMPLES[0][0])
    # the stored profiles keep the negotiated value on both ends
    for cid, rport, side, e in ((c1, ports.gain_in, "out", e1), (c2, ports.gain_out, "in", e2)):
        want = e or "little,big"
        assert rtcf_props(it, rtcf_profile(it, rport, cid))[ENDIAN] == want
        assert peer_profile(peer, side, cid)["properties"][ENDIAN] == want


# -- 6. payload edge cases and a connector id chosen by the tool ---------------------------------

EDGE = [([], 7, 1),                                   # empty sequence: 12 bytes, no padding
        ([2.5], 8, 2),                                # one value: padding before it
        ([float(i) / 7.0 for i in range(1000)], 9, 3),
        ([float("inf"), -0.0, 5e-324, 1.7976931348623157e308 / GAIN], 10, 4)]


@pytest.mark.parametrize("endian", ["little,big", "big,little"])
def test_payload_edge_cases(peer, ports, it, endian):
    ports.connect(ports.peer_out, [ports.peer_out, ports.gain_in],
                  **{"serializer.cdr.endian": endian})
    c2 = ports.connect(ports.gain_out, [ports.gain_out, ports.peer_in],
                       **{"serializer.cdr.endian": endian})
    push_and_check(peer, it, EDGE)
    sizes = [len(bytes.fromhex(h)) for cid, _, h in peer.cmd("raw")["raw"] if cid == c2]
    assert sizes == [12, 24, 16 + 8000, 48], sizes


def test_connector_id_chosen_by_the_tool_is_kept(peer, ports, it):
    """OpenRTM assigns a UUID only when connector_id is empty."""
    RTC = it.stubs("RTC")
    for on, pair, cid in ((ports.peer_out, [ports.peer_out, ports.gain_in], "tool-id-1"),
                          (ports.gain_out, [ports.gain_out, ports.peer_in], "tool-id-2")):
        prof = it.make_profile(pair, {}, name="peer_test")
        prof.connector_id = cid
        code, cp = on.connect(prof)
        assert code == RTC.RTC_OK and cp.connector_id == cid
    assert [cp.connector_id for cp in it.connector_profiles(ports.gain_in)] == ["tool-id-1"]
    assert [cp.connector_id for cp in it.connector_profiles(ports.gain_out)] == ["tool-id-2"]
    profiles = peer.cmd("profiles")
    assert [cp["connector_id"] for cp in profiles["out"]] == ["tool-id-1"]
    assert [cp["connector_id"] for cp in profiles["in"]] == ["tool-id-2"]
    push_and_check(peer, it, SAMPLES[:1])


# -- 7. pull from the peer, and a peer that dies ---------------------------------------------

def test_pull_from_an_empty_peer_outport_is_no_data_not_an_error(peer, ports, it, system):
    """The peer's get() raises CORBA.BAD_PARAM while its buffer is empty (as OpenRTM-aist's
    does): the Gain, pulling every cycle, stays Active and gets each sample once written."""
    RTC = it.stubs("RTC")
    c1 = ports.connect(ports.peer_out, [ports.peer_out, ports.gain_in], dataflow_type="pull")
    ports.connect(ports.gain_out, [ports.gain_out, ports.peer_in], subscription_type="flush")
    it.wait_until(lambda: peer.cmd("raw")["empty_gets"] >= 20, 5.0,
                  what="the Gain to pull from the empty peer buffer")
    assert it.component_state(system.ref(INST)) == "ACTIVE"
    for values, sec, nsec in SAMPLES:
        assert peer.write(values, sec, nsec) == []          # queued for pull, no push
        want = [sec, nsec, [v * GAIN for v in values]]
        it.wait_until(lambda: want in peer.received(), 5.0, what=f"{values} pulled back")
    raw = peer.cmd("raw")
    assert not raw["errors"], raw["errors"]
    assert peer.received() == [[s, n, [v * GAIN for v in vals]] for vals, s, n in SAMPLES]
    assert it.component_state(system.ref(INST)) == "ACTIVE"
    assert [cp.connector_id for cp in it.connector_profiles(ports.gain_in)] == [c1]
    assert ports.gain_in.disconnect(c1) == RTC.RTC_OK


@pytest.mark.parametrize("flow", ["push", "pull"])
def test_killed_writer_connector_leaves_our_inport_profile(system, it, tmp_path, flow):
    """kill -9 of the writer's process: the connector disappears from our InPort's profile
    within a few seconds (OpenRTM drops dead connectors likewise) and the Gain runs on."""
    import time
    doomed = PeerProcess(tmp_path)
    try:
        RTC = it.stubs("RTC")
        pout = it.orb().string_to_object(doomed.out_ior)._narrow(RTC.PortService)
        gain_in = system.port(INST, "in")
        code, cp = pout.connect(it.make_profile([pout, gain_in],
                                                {"dataport.dataflow_type": flow}))
        assert code == RTC.RTC_OK
        assert cp.connector_id in [c.connector_id for c in it.connector_profiles(gain_in)]
        time.sleep(0.3)
        os.killpg(doomed.proc.pid, signal.SIGKILL)
        doomed.proc.wait(5.0)
        t0 = time.monotonic()
        it.wait_until(lambda: not it.connector_profiles(gain_in), 5.0,
                      what="the dead writer's connector to leave gain.in's profile")
        print(f"{flow}: the dead writer's connector left after {time.monotonic() - t0:.2f} s")
        assert it.component_state(system.ref(INST)) == "ACTIVE"
    finally:
        doomed.close()


def test_connection_the_peer_forgot_leaves_our_profile(peer, ports, it, system):
    """The peer drops its half without notify_disconnect (lost state): our port finds out on
    its periodic check (the peer's get_connector_profile no longer knows the id) and drops
    its half too: no connection that only one side believes in."""
    c1 = ports.connect(ports.peer_out, [ports.peer_out, ports.gain_in])
    c2 = ports.connect(ports.gain_out, [ports.gain_out, ports.peer_in])
    push_and_check(peer, it, SAMPLES[:1])
    peer.cmd("forget")
    it.wait_until(lambda: not it.connector_profiles(ports.gain_in)
                  and not it.connector_profiles(ports.gain_out), 6.0,
                  what="our ports to drop the connections the peer forgot")
    assert c1 != c2
    assert it.component_state(system.ref(INST)) == "ACTIVE"
