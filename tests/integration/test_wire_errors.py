"""Bad input over the wire, driving a manager's CORBA objects directly with rtcf's stubs:
refused connections (wrong data type, bad connector properties), malformed CDR payloads,
unknown connector ids, and a peer process that dies."""

from __future__ import annotations

import struct
import time

import numpy as np
import pytest

from rtcf.corba.cdr import codec_for
from rtcf.datatypes import TimedDoubleSeq

pytestmark = pytest.mark.slow    # seconds per test: left out of scripts/test -m "not slow"

WIRE = """
name: wire
components:
  - {type: Gain, module: examples, name: wgain, params: {gain: 2.0}}
  - {type: LongSink, module: typed, name: wsink}
  - {type: DcmClient, module: dcmclient, name: wclient}
execution_contexts:
  - {name: main, kind: periodic, rate: 100, members: [wgain, wsink, wclient]}
"""

DOUBLES = "IDL:RTC/TimedDoubleSeq:1.0"


@pytest.fixture(scope="module")
def wire(module_launch, it):
    mp = module_launch(WIRE, ["wgain", "wsink"])
    it.wait_state(mp.ref("wgain"), "ACTIVE")
    return mp


@pytest.fixture(scope="module")
def RTC(it):
    return it.stubs("RTC")


@pytest.fixture(scope="module")
def OpenRTM(it):
    return it.stubs("OpenRTM")


def no_connectors(it, *ports) -> bool:
    return all(not it.connector_profiles(p) for p in ports)


# -- refused connections ------------------------------------------------------------------------

@pytest.mark.parametrize("data_type", ["IDL:RTC/TimedLong:1.0", "TimedLong",
                                       "IDL:RTC/NoSuchType:1.0"])
def test_connect_with_wrong_data_type_on_an_inport(wire, it, RTC, data_type):
    gin = wire.port("wgain", "in")
    code, _ = gin.connect(it.make_profile([gin], {"dataport.data_type": data_type}))
    assert code == RTC.BAD_PARAMETER
    assert no_connectors(it, gin)


def test_connect_with_wrong_data_type_on_an_outport(wire, it, RTC, probe):
    gout = wire.port("wgain", "out")
    p = probe()
    cp = it.make_profile([gout, p.ref], {"dataport.data_type": "IDL:RTC/TimedLong:1.0"})
    code, _ = gout.connect(cp)
    assert code == RTC.BAD_PARAMETER
    assert no_connectors(it, gout, p.ref)


def test_connect_ports_of_different_types(wire, it, RTC):
    """TimedDoubleSeq OutPort -> TimedLong InPort: whichever type the profile names, one
    side refuses and neither keeps a connector."""
    gout, sink = wire.port("wgain", "out"), wire.port("wsink", "in")
    for dt in (DOUBLES, "IDL:RTC/TimedLong:1.0"):
        code, _ = gout.connect(it.make_profile([gout, sink], {"dataport.data_type": dt}))
        assert code == RTC.BAD_PARAMETER, dt
        assert no_connectors(it, gout, sink), dt
        code, _ = sink.connect(it.make_profile([sink, gout], {"dataport.data_type": dt}))
        assert code == RTC.BAD_PARAMETER, dt
        assert no_connectors(it, gout, sink), dt


BAD_PROPS = [
    {"dataport.subscription_type": "bogus"},
    {"dataport.dataflow_type": "sideways"},
    {"dataport.interface_type": "shared_memory_bogus"},
    {"dataport.buffer.length": "-1"},
    {"dataport.buffer.length": "0"},
    {"dataport.buffer.length": "eight"},
    {"dataport.buffer.write.full_policy": "explode"},
    {"dataport.publisher.push_policy": "sometimes"},
    {"dataport.subscription_type": "periodic", "dataport.publisher.push_rate": "0"},
]
BAD_IDS = ["subscription", "dataflow", "interface", "buflen-neg", "buflen-zero",
           "buflen-text", "full-policy", "push-policy", "push-rate-zero"]


@pytest.mark.parametrize("props", BAD_PROPS, ids=BAD_IDS)
def test_invalid_connector_properties_on_an_inport(wire, it, RTC, props):
    gin = wire.port("wgain", "in")
    code, _ = gin.connect(it.make_profile([gin], props))
    assert code == RTC.BAD_PARAMETER
    assert no_connectors(it, gin)


@pytest.mark.parametrize("props", BAD_PROPS, ids=BAD_IDS)
def test_invalid_connector_properties_between_two_ports(wire, it, RTC, probe, props):
    gout = wire.port("wgain", "out")
    p = probe()
    code, _ = gout.connect(it.make_profile([gout, p.ref], props))
    assert code == RTC.BAD_PARAMETER
    assert no_connectors(it, gout, p.ref)


def test_connect_with_a_profile_not_naming_the_port(wire, it, RTC, probe):
    gin, gout = wire.port("wgain", "in"), wire.port("wgain", "out")
    p = probe()
    for cp in (it.make_profile([], {}), it.make_profile([p.ref], {}),
               it.make_profile([gout, p.ref], {})):
        code, _ = gin.connect(cp)
        assert code == RTC.BAD_PARAMETER
    assert no_connectors(it, gin, gout, p.ref)


def test_connect_with_a_duplicate_connector_id(wire, it, RTC):
    gin = wire.port("wgain", "in")
    code, cp = gin.connect(it.make_profile([gin], {}))
    assert code == RTC.RTC_OK
    try:
        dup = it.make_profile([gin], {})
        dup.connector_id = cp.connector_id
        code2, _ = gin.connect(dup)
        assert code2 == RTC.BAD_PARAMETER
        assert [c.connector_id for c in it.connector_profiles(gin)] == [cp.connector_id]
    finally:
        assert gin.disconnect(cp.connector_id) == RTC.RTC_OK
    assert no_connectors(it, gin)


# -- duplicate connections and raw profiles ------------------------------------------------------

def test_second_connection_of_the_same_two_ports_is_refused(wire, it, RTC, probe):
    """OpenRTM's allow_dup_connection is off by default: the second connect of the same two
    ports returns PRECONDITION_NOT_MET and leaves the first alone; either port first."""
    gout = wire.port("wgain", "out")
    p = probe()
    cid = it.connect_ports(gout, p.ref)
    try:
        for ports in ([gout, p.ref], [p.ref, gout]):
            code, _ = ports[0].connect(it.make_profile(ports, {}))
            assert code == RTC.PRECONDITION_NOT_MET
            assert [c.connector_id for c in it.connector_profiles(gout)] == [cid]
            assert [c.connector_id for c in it.connector_profiles(p.ref)] == [cid]
    finally:
        assert gout.disconnect(cid) == RTC.RTC_OK
    assert no_connectors(it, gout, p.ref)


def test_duplicate_connection_allowed_when_asked(wire, it, RTC, probe):
    """The same opt-in as OpenRTM: dataport.allow_dup_connection: YES in the profile."""
    gout = wire.port("wgain", "out")
    p = probe()
    a = it.connect_ports(gout, p.ref)
    b = it.connect_ports(gout, p.ref, allow_dup_connection="YES")
    try:
        assert a != b and len(it.connector_profiles(p.ref)) == 2
    finally:
        gout.disconnect(a)
        gout.disconnect(b)
    assert no_connectors(it, gout, p.ref)


def test_duplicate_connection_allowed_by_the_ports_rtc_conf_key(launch, it, RTC):
    """OpenRTM's per-port rtc.conf opt-in (each end checks its own): port.outport.<name>.
    allow_dup_connection and port.inport.dataport.allow_dup_connection."""
    yaml = WIRE.replace("wgain", "dgain").replace("wsink", "dsink").replace("wclient", "dcl")
    mp = launch(yaml, "dgain", "port.outport.out.allow_dup_connection:YES",
                "port.inport.dataport.allow_dup_connection:YES")
    gout, gin = mp.port("dgain", "out"), mp.port("dgain", "in")
    a = it.connect_ports(gout, gin)
    b = it.connect_ports(gout, gin)
    try:
        assert a != b and len(it.connector_profiles(gin)) == 2
    finally:
        gout.disconnect(a)
        gout.disconnect(b)
    assert "unknown key" not in mp.log()
    # without the keys the same second connect is refused
    mp2 = launch(yaml.replace("dgain", "egain").replace("dsink", "esink")
                 .replace("dcl", "ecl"), "egain")
    gout, gin = mp2.port("egain", "out"), mp2.port("egain", "in")
    a = it.connect_ports(gout, gin)
    code, _ = gout.connect(it.make_profile([gout, gin], {}))
    assert code == RTC.PRECONDITION_NOT_MET
    gout.disconnect(a)


@pytest.mark.parametrize("order", ["AA", "AAB", "ABA"])
def test_profile_naming_the_same_port_twice_is_refused(wire, it, RTC, probe, order):
    """It used to recurse until RecursionError (the caller saw CORBA.UNKNOWN)."""
    gout = wire.port("wgain", "out")
    p = probe()
    ports = [gout if c == "A" else p.ref for c in order]
    code, _ = gout.connect(it.make_profile(ports, {}))
    assert code == RTC.BAD_PARAMETER
    assert no_connectors(it, gout, p.ref)


def test_refused_connect_leaves_no_half_connection_on_the_peer(wire, it, RTC):
    """A data port to a service port: whichever end is asked, neither keeps a connector
    (OpenRTM's connect() disconnects the ports already notified)."""
    gout = wire.port("wgain", "out")
    svc = wire.port("wclient", "dcm")
    for ports in ([gout, svc], [svc, gout]):
        code, _ = ports[0].connect(it.make_profile(ports, {}))
        assert code != RTC.RTC_OK
        assert no_connectors(it, gout, svc), ports
    assert it.component_state(wire.ref("wgain")) == "ACTIVE"


def _ior_cases(it, wire) -> dict[str, str]:
    orb = it.orb()
    return {
        "garbage": "IOR:0123456789zz",
        "not-an-ior": "corbaloc:nonsense",
        "wrong-interface": orb.object_to_string(wire.ref("wgain")),   # an RTObject
    }


@pytest.mark.parametrize("case", ["garbage", "not-an-ior", "wrong-interface"])
def test_outport_given_a_bad_inport_ior(wire, it, RTC, case):
    """A peer that publishes a useless dataport.corba_cdr.inport_ior: the OutPort cannot
    subscribe, says so, and keeps no connector."""
    gout = wire.port("wgain", "out")
    cp = it.make_profile([gout], {"dataport.corba_cdr.inport_ior": _ior_cases(it, wire)[case]})
    code, _ = gout.connect(cp)
    assert code in (RTC.RTC_ERROR, RTC.BAD_PARAMETER), code
    assert no_connectors(it, gout)
    assert it.component_state(wire.ref("wgain")) == "ACTIVE"


def test_endianness_follows_the_negotiated_first_token(wire, it, RTC, OpenRTM, probe):
    """serializer.cdr.endian "big,little": payloads are big endian; a little-endian payload
    of the same sample does not decode as that sample."""
    gin, gout = wire.port("wgain", "in"), wire.port("wgain", "out")
    p = probe()
    it.connect_ports(gout, p.ref, **{"buffer.length": "100"})
    code, cp = gin.connect(it.make_profile([gin], {"dataport.serializer.cdr.endian":
                                                   "big,little"}))
    assert code == RTC.RTC_OK
    try:
        ior = it.props_of(cp)["dataport.corba_cdr.inport_ior"]
        cdr = it.orb().string_to_object(ior)._narrow(OpenRTM.InPortCdr)
        sample = TimedDoubleSeq(data=np.array([0.5, -1.5]))
        assert cdr.put(codec_for(TimedDoubleSeq, False).encode(sample)) == OpenRTM.PORT_OK
        p.wait_count(1, 3)
        np.testing.assert_array_equal(p.recent(1)[0], [1.0, -3.0])
        st = cdr.put(codec_for(TimedDoubleSeq, True).encode(sample))   # wrong order
        time.sleep(0.2)
        if st == OpenRTM.PORT_OK:
            assert p.count == 1 or not np.array_equal(p.recent(1)[0], [1.0, -3.0])
        else:
            assert st == OpenRTM.PORT_ERROR and p.count == 1
    finally:
        gin.disconnect(cp.connector_id)
    assert no_connectors(it, gin)


# -- malformed payloads ---------------------------------------------------------------------------

def _bad_payloads() -> dict[str, bytes]:
    good = codec_for(TimedDoubleSeq).encode(TimedDoubleSeq(data=np.array([1.0, 2.0, 3.0])))
    return {
        "empty": b"",
        "short-header": b"\x01\x02\x03",
        "truncated": good[:-5],
        "length-too-big": struct.pack("<IIII", 1, 2, 1000, 0) + bytes(16),
        "length-huge": struct.pack("<IIII", 1, 2, 0xFFFFFFFF, 0) + bytes(8),
        "header-only": struct.pack("<II", 1, 2),
    }


def test_malformed_cdr_put_is_refused_and_the_component_keeps_running(
        wire, it, RTC, OpenRTM, probe):
    gin, gout = wire.port("wgain", "in"), wire.port("wgain", "out")
    ref = wire.ref("wgain")
    p = probe()
    it.connect_ports(gout, p.ref, **{"buffer.length": "100"})
    code, cp = gin.connect(it.make_profile([gin], {}))
    assert code == RTC.RTC_OK
    cid = cp.connector_id
    try:
        ior = it.props_of(cp)["dataport.corba_cdr.inport_ior"]
        assert ior.startswith("IOR:")
        cdr = it.orb().string_to_object(ior)._narrow(OpenRTM.InPortCdr)
        assert cdr is not None
        for name, payload in _bad_payloads().items():
            assert cdr.put(payload) == OpenRTM.PORT_ERROR, name
        time.sleep(0.1)
        assert it.component_state(ref) == "ACTIVE"
        assert p.count == 0                      # nothing bad got through
        # valid payloads are still accepted and flow through the component
        enc = codec_for(TimedDoubleSeq).encode
        for k in range(3):
            sample = TimedDoubleSeq(data=np.array([1.0, 2.0, 3.0]) * (k + 1))
            assert cdr.put(enc(sample)) == OpenRTM.PORT_OK
            p.wait_count(k + 1, 3)
            np.testing.assert_array_equal(p.recent(1)[0], [2.0 * (k + 1), 4.0 * (k + 1),
                                                           6.0 * (k + 1)])
        assert it.component_state(ref) == "ACTIVE"
    finally:
        assert gin.disconnect(cid) == RTC.RTC_OK
    assert no_connectors(it, gin)
    # the InPortCdr object of a removed connector is gone
    from omniORB import CORBA
    with pytest.raises(CORBA.OBJECT_NOT_EXIST):
        cdr.put(codec_for(TimedDoubleSeq).encode(TimedDoubleSeq(data=np.zeros(1))))


# -- unknown connector ids ------------------------------------------------------------------------

@pytest.mark.parametrize("port", ["in", "out"])
def test_disconnect_unknown_connector_id(wire, it, RTC, port):
    pref = wire.port("wgain", port)
    for cid in ("no-such-connector", ""):
        assert pref.disconnect(cid) == RTC.BAD_PARAMETER
        assert pref.notify_disconnect(cid) == RTC.BAD_PARAMETER
    assert it.component_state(wire.ref("wgain")) == "ACTIVE"


def test_disconnect_twice(wire, it, RTC, probe):
    gout = wire.port("wgain", "out")
    p = probe()
    cid = it.connect_ports(gout, p.ref)
    assert gout.disconnect(cid) == RTC.RTC_OK
    assert no_connectors(it, gout, p.ref)
    assert gout.disconnect(cid) == RTC.BAD_PARAMETER
    assert p.ref.disconnect(cid) == RTC.BAD_PARAMETER


# -- a peer that dies ------------------------------------------------------------------------------

def _writer_reader(tag: str) -> tuple[str, str]:
    writer = f"""
name: writer_{tag}
components:
  - {{type: SineGenerator, module: examples, name: wsrc_{tag}}}
execution_contexts:
  - {{name: main, kind: periodic, rate: 100, members: [wsrc_{tag}]}}
"""
    reader = f"""
name: reader_{tag}
components:
  - {{type: Recorder, module: examples, name: wdead_{tag}}}
execution_contexts:
  - {{name: main, kind: periodic, rate: 100, members: [wdead_{tag}]}}
"""
    return writer, reader


@pytest.mark.parametrize("sub", ["flush", "new"])
def test_reader_killed_writer_keeps_running_and_drops_the_connector(launch, it, probe, sub):
    tag = f"{sub}{int(time.monotonic() * 1000) % 100000}"
    wy, ry = _writer_reader(tag)
    w = launch(wy, f"wsrc_{tag}")
    r = launch(ry, f"wdead_{tag}")
    wref = w.ref(f"wsrc_{tag}")
    it.wait_state(wref, "ACTIVE")
    wout = w.port(f"wsrc_{tag}", "out")
    rin = r.port(f"wdead_{tag}", "in")
    p = probe()
    it.connect_ports(wout, p.ref, subscription_type="flush", **{"buffer.length": "200"})
    dead_cid = it.connect_ports(wout, rin, subscription_type=sub)
    assert len(it.connector_profiles(wout)) == 2
    p.wait_count(10, 3)

    r.kill()                                        # kill -9: no notify_disconnect
    it.wait_until(lambda: [c.connector_id for c in it.connector_profiles(wout)]
                  != [] and dead_cid not in [c.connector_id for c in
                                             it.connector_profiles(wout)],
                  timeout=6, what="the dead reader's connector to disappear")
    assert len(it.connector_profiles(wout)) == 1    # the probe's connection stays
    # the writer runs on: Active, and its cycles still deliver to the probe
    assert it.component_state(wref) == "ACTIVE"
    p.wait_count(p.count + 50)
    assert w.alive(), w.log()


@pytest.mark.parametrize("sub", ["flush", "new"])
def test_reader_hung_writer_recovers(launch, it, probe, sub):
    """A reader that stops answering (SIGSTOP): its puts time out, the connector is dropped
    after a few failures and the writer's cycles go on."""
    import os
    import signal
    tag = f"h{sub}{int(time.monotonic() * 1000) % 100000}"
    wy, ry = _writer_reader(tag)
    w = launch(wy, f"wsrc_{tag}")
    r = launch(ry, f"wdead_{tag}")
    wref = w.ref(f"wsrc_{tag}")
    wout = w.port(f"wsrc_{tag}", "out")
    p = probe()
    it.connect_ports(wout, p.ref, subscription_type="flush", **{"buffer.length": "200"})
    hung_cid = it.connect_ports(wout, r.port(f"wdead_{tag}", "in"), subscription_type=sub)
    p.wait_count(10, 3)
    os.killpg(r.pid, signal.SIGSTOP)
    try:
        t0 = time.monotonic()
        it.wait_until(lambda: hung_cid not in [c.connector_id for c in
                                               it.connector_profiles(wout)],
                      timeout=12, what="the hung reader's connector to disappear")
        print(f"dropped after {time.monotonic() - t0:.2f} s")
        assert it.component_state(wref) == "ACTIVE"
        p.wait_count(p.count + 50)                  # the writer's cycles go on
    finally:
        os.killpg(r.pid, signal.SIGCONT)


def test_absurd_buffer_length_is_refused(wire, it, RTC):
    """Buffers are preallocated in the ORB thread serving connect(): an absurd
    dataport.buffer.length (over rtcf.ports.MAX_BUFFER_LENGTH) is refused before anything is
    allocated, so the call cannot take seconds and gigabytes."""
    from rtcf.ports import MAX_BUFFER_LENGTH
    gin = wire.port("wgain", "in")
    code, cp = gin.connect(it.make_profile([gin], {"dataport.buffer.length":
                                                   str(16 * MAX_BUFFER_LENGTH)}))
    if code == RTC.RTC_OK:
        gin.disconnect(cp.connector_id)
    assert code == RTC.BAD_PARAMETER
    assert no_connectors(it, gin)
    assert it.component_state(wire.ref("wgain")) == "ACTIVE"


def test_reader_stopped_with_sigterm_disconnects_cleanly(launch, it, probe):
    """The orderly counterpart of kill -9: SIGTERM shuts the reader down (exit 0), its binding
    goes, and the writer's connector is removed by notify_disconnect, not by failures."""
    import signal
    tag = f"t{int(time.monotonic() * 1000) % 100000}"
    wy, ry = _writer_reader(tag)
    w = launch(wy, f"wsrc_{tag}")
    r = launch(ry, f"wdead_{tag}")
    wout = w.port(f"wsrc_{tag}", "out")
    cid = it.connect_ports(wout, r.port(f"wdead_{tag}", "in"))
    assert [c.connector_id for c in it.connector_profiles(wout)] == [cid]
    import os
    os.killpg(r.pid, signal.SIGTERM)
    assert r.proc.wait(8) == 0, r.log()
    assert it.connector_profiles(wout) == []        # already gone when the reader exited
    with pytest.raises(LookupError):
        it.resolve_rtc(r.ns_port, f"wdead_{tag}")
    assert "is gone" not in w.log()                 # no failure-based drop was needed
    assert it.component_state(w.ref(f"wsrc_{tag}")) == "ACTIVE"
