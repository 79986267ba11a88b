"""A reader process stopped with SIGSTOP, then continued.

The writer is a real PeriodicEC at 200 Hz in the test process (registered with the probes'
CorbaRuntime), flush-connected to a Gain in another process, whose output comes back to a
probe. While the reader is stopped, the writer may lose one connector call timeout once,
never several in a row; afterwards both ends agree: either the connection resumed (short
stop) or it is gone on both ends and reported (a stop longer than
rtcf.connector.suspect_timeout).

No timing assertions: what is counted is the calls to the stopped peer that failed (each
one the connector's PeerGuard marks; a second would be a second timeout) and the writes the
cycle path skipped meanwhile (the EC went on). What a timeout costs the writer's EC in
time is bench/bench_call_timeout.py's figure.
"""

from __future__ import annotations

import os
import signal
import time

import numpy as np
import pytest

from rtcf import Component, TimedDoubleSeq
from rtcf.corba.dataport import CALL_TIMEOUT_MS
from rtcf.execution import PeriodicEC
from rtcf.ports import PortEvent

TIMEOUT = CALL_TIMEOUT_MS / 1000.0


@pytest.fixture
def failed_calls(monkeypatch):
    """(connector id, exception name) of every call to a remote peer that failed with a
    transport error (PeerGuard.mark: the cycle path calls it for each such failure; a
    suspect peer is skipped, not called)."""
    from rtcf.corba.liveness import PeerGuard
    seen: list[tuple[str, str]] = []
    mark = PeerGuard.mark

    def counting(self, err):
        seen.append((self.cid, type(err).__name__))
        mark(self, err)
    monkeypatch.setattr(PeerGuard, "mark", counting)
    return seen


class Writer(Component):
    """Writes a counter every cycle and records when each cycle ran (test process)."""

    category = "test"

    def on_initialize(self) -> None:
        self.out = self.add_out_port("out", TimedDoubleSeq)
        self.out.value.data = np.zeros(1)
        self.times: list[float] = []

    def on_execute(self, ec) -> None:
        """Runs in: EC thread."""
        self.times.append(time.monotonic())
        self.out.value.data[0] += 1.0
        self.out.write()


def _reader(tag: str) -> str:
    return f"""
name: hung_{tag}
components:
  - {{type: Gain, module: examples, name: hung_{tag}}}
execution_contexts:
  - {{name: main, kind: periodic, rate: 200, members: [hung_{tag}]}}
activate: [hung_{tag}]
"""


@pytest.fixture
def writer(it):
    rt = it.probe_runtime()
    comp = Writer(f"hwriter{os.getpid()}_{time.monotonic_ns() % 10**6}")
    comp.initialize()
    rt.register_component(comp)
    ec = PeriodicEC(200.0, name="hung_writer", spin=0.0)
    ec.add_component(comp)
    ec.start()
    ec.activate_component(comp)
    lv = getattr(rt, "liveness", None)
    saved = lv.suspect_timeout if lv is not None else None
    yield comp, rt
    if lv is not None:
        lv.suspect_timeout = saved
    ec.stop()
    rt.unregister_component(comp)


def _gaps_after(times: list[float], t0: float) -> tuple[float, float]:
    """(largest cycle gap, total of the gaps longer than 0.1 s) since t0 [s]."""
    ts = np.array([t for t in times if t >= t0 - 0.1])
    if len(ts) < 2:
        return 0.0, 0.0
    d = np.diff(ts)
    return float(np.max(d)), float(np.sum(d[d > 0.1]))


def _stopped_for(pid: int, seconds: float, failed: list, cid: str) -> list:
    """SIGSTOP process group ``pid`` for ``seconds``, continue it; the failed calls on
    connector ``cid`` while it was stopped."""
    n0 = len(failed)
    os.killpg(pid, signal.SIGSTOP)
    try:
        time.sleep(seconds)
        return [f for f in failed[n0:] if f[0] == cid]
    finally:
        os.killpg(pid, signal.SIGCONT)


def _ids(it, port) -> list[str]:
    return [cp.connector_id for cp in it.connector_profiles(port)]


@pytest.mark.parametrize("stop_for, outcome, sub", [(2.5, "resumed", "flush"),
                                                    (4.0, "removed", "flush"),
                                                    (4.0, "removed", "new")])
@pytest.mark.slow
def test_sigstop_reader_costs_one_timeout_and_both_ends_agree(launch, it, probe, writer,
                                                               failed_calls, stop_for,
                                                               outcome, sub):
    comp, rt = writer
    tag = f"{outcome[:3]}{time.monotonic_ns() % 10**6}"
    r = launch(_reader(tag), f"hung_{tag}")
    rin, rout = r.port(f"hung_{tag}", "in"), r.port(f"hung_{tag}", "out")
    back = probe()
    it.connect_ports(rout, back.ref, subscription_type="flush")
    wout = rt.port_servant(comp.out).ref
    cid = it.connect_ports(wout, rin, subscription_type=sub)
    guard = rt.port_servant(comp.out).guards[cid]
    back.wait_count(20, 5.0)
    lost: list = []
    event = getattr(PortEvent, "ON_CONNECTION_LOST", None)   # (absent in older rtcf)
    if event is not None:
        comp.out.add_listener(event, lambda port, c, reason: lost.append((c, reason)))
    if outcome == "removed" and hasattr(rt, "liveness"):
        rt.liveness.suspect_timeout = 1.5     # silent longer than this: removed

    t0 = time.monotonic()
    n0 = len(failed_calls)
    os.killpg(r.pid, signal.SIGSTOP)
    try:
        time.sleep(stop_for)
        note_while_stopped = rt.connection_note() if hasattr(rt, "liveness") else ""
        failed = [f for f in failed_calls[n0:] if f[0] == cid]
        skipped = guard.skipped
    finally:
        os.killpg(r.pid, signal.SIGCONT)
    gap, stalled = _gaps_after(comp.times, t0)
    print(f"writer's largest cycle gap {gap:.3f} s, stalls in total {stalled:.3f} s "
          f"({sub}, reader stopped {stop_for} s)")
    # the writer: one call to the stopped reader failed (one timeout), never a second; its
    # cycles went on meanwhile, the writes to the suspect peer skipped
    assert len(failed) == 1, failed
    assert skipped >= 1

    if outcome == "resumed":
        assert "not answering" in note_while_stopped, note_while_stopped
        # both ends keep the connection and data flows through the reader again
        it.wait_until(lambda: not rt.liveness.suspects(), 3.0, what="the writer to resume")
        n0 = back.count
        back.wait_count(n0 + 50, 5.0)
        assert _ids(it, wout) == [cid] and _ids(it, rin) == [cid]
        assert not lost
    else:
        # removed on both ends, reported to the listener and the status line
        it.wait_until(lambda: not _ids(it, rin), 5.0,
                      what="the reader to drop its half of the removed connection")
        assert _ids(it, wout) == []
        assert [c for c, _ in lost] == [cid], lost
        assert "did not answer" in lost[0][1]
        assert "lost" in rt.connection_note()
        time.sleep(0.5)                        # and stays consistent
        assert _ids(it, wout) == [] and _ids(it, rin) == []
    assert it.component_state(r.ref(f"hung_{tag}")) == "ACTIVE"


@pytest.mark.parametrize("props, want_ms", [
    ({"subscription_type": "flush"}, 100),              # the put runs in the writer's EC
    ({"dataflow_type": "pull"}, 100),                   # the get runs in the reader's EC
    ({"subscription_type": "new"}, 1000),               # a publisher thread waits
    ({"subscription_type": "periodic"}, 1000),
    ({"subscription_type": "flush", "call_timeout": "0.25"}, 250),
    ({"subscription_type": "new", "call_timeout": "0.02"}, 20)])
def test_call_timeout_per_connector(it, props, want_ms):
    """The timeout a connector's calls to a remote peer get."""
    from rtcf.corba.dataport import DataPortServant
    full = {(k if k.startswith("dataport.") else "dataport." + k): v for k, v in props.items()}
    cp = it.make_profile([], full)
    servant = DataPortServant.__new__(DataPortServant)
    servant.rt = it.probe_runtime()
    assert servant.call_timeout_ms(cp) == want_ms


@pytest.mark.parametrize("value", ["0", "-1", "abc", "nan", "100"])
def test_bad_call_timeout_is_refused(it, probe, value):
    RTC = it.stubs("RTC")
    p = probe()
    code, _ = p.ref.connect(it.make_profile([p.ref], {"dataport.call_timeout": value}))
    assert code == RTC.BAD_PARAMETER
    assert not it.connector_profiles(p.ref)


@pytest.mark.slow
def test_flush_writer_to_a_hung_reader_waits_the_ec_call_timeout_once(launch, it, probe,
                                                                       writer, failed_calls,
                                                                       monkeypatch):
    """A flush connector's put runs in the writer's EC; a hung reader used
    to stall it for the 1 s call timeout (200 overruns at 200 Hz). The peer's reference now
    gets the EC-path timeout, 100 ms, and only one call times out."""
    import omniORB
    from rtcf.corba.dataport import EC_CALL_TIMEOUT_MS
    comp, rt = writer
    tag = f"f{time.monotonic_ns() % 10**6}"
    r = launch(_reader(tag), f"hung_{tag}")
    rin = r.port(f"hung_{tag}", "in")
    given: list[int] = []
    set_timeout = omniORB.setClientCallTimeout

    def recording(*args):
        given.append(args[-1])
        return set_timeout(*args)
    monkeypatch.setattr(omniORB, "setClientCallTimeout", recording)
    cid = it.connect_ports(rt.port_servant(comp.out).ref, rin, subscription_type="flush")
    monkeypatch.setattr(omniORB, "setClientCallTimeout", set_timeout)
    assert EC_CALL_TIMEOUT_MS in given and 1000 * TIMEOUT not in given, given
    guard = rt.port_servant(comp.out).guards[cid]
    assert len(_stopped_for(r.pid, 1.5, failed_calls, cid)) == 1
    assert guard.skipped >= 1


@pytest.mark.slow
def test_writer_with_a_stopped_reader_shuts_down_cleanly(launch, it):
    """SIGTERM to a writer whose reader is stopped: the writer's shutdown tells the reader
    (with a short timeout: test_disconnect_from_a_stopped_peer_uses_a_short_timeout) and
    exits 0; the reader, continued, drops its half."""
    tag = f"s{time.monotonic_ns() % 10**6}"
    w = launch(f"""
name: w_{tag}
components:
  - {{type: SineGenerator, module: examples, name: wg_{tag}}}
execution_contexts:
  - {{name: main, kind: periodic, rate: 100, members: [wg_{tag}]}}
activate: [wg_{tag}]
""", f"wg_{tag}")
    r = launch(_reader(tag), f"hung_{tag}")
    rin = r.port(f"hung_{tag}", "in")
    it.connect_ports(w.port(f"wg_{tag}", "out"), rin, subscription_type="new")
    os.killpg(r.pid, signal.SIGSTOP)
    try:
        time.sleep(0.3)
        os.killpg(w.pid, signal.SIGTERM)
        assert w.proc.wait(120) == 0, w.log()
    finally:
        os.killpg(r.pid, signal.SIGCONT)
    it.wait_until(lambda: not _ids(it, rin), 5.0, what="the reader to drop its half")


def test_disconnect_from_a_stopped_peer_uses_a_short_timeout(launch, it, monkeypatch):
    """The writer's side of the test above, in this process: unregistering a component
    whose reader is stopped calls notify_disconnect on a reference with
    DISCONNECT_TIMEOUT_MS (not the ORB's 10 s), and returns once that call failed."""
    from rtcf.corba import liveness
    from rtcf.corba.portbase import DISCONNECT_TIMEOUT_MS
    from rtcf.corba.orb import call_timeout
    assert DISCONNECT_TIMEOUT_MS < 1000 * call_timeout()
    rt = it.probe_runtime()
    comp = Writer(f"hdisc{os.getpid()}_{time.monotonic_ns() % 10**6}")
    comp.initialize()
    rt.register_component(comp)
    tag = f"d{time.monotonic_ns() % 10**6}"
    r = launch(_reader(tag), f"hung_{tag}")
    rin = r.port(f"hung_{tag}", "in")
    it.connect_ports(rt.port_servant(comp.out).ref, rin, subscription_type="new")
    given: list[int] = []
    with_timeout = liveness.with_timeout

    def recording(orb, ref, ms):
        given.append(ms)
        return with_timeout(orb, ref, ms)
    monkeypatch.setattr(liveness, "with_timeout", recording)
    os.killpg(r.pid, signal.SIGSTOP)
    try:
        rt.unregister_component(comp)          # notify_disconnect to the stopped reader
    finally:
        os.killpg(r.pid, signal.SIGCONT)
    assert DISCONNECT_TIMEOUT_MS in given, given
    it.wait_until(lambda: not _ids(it, rin), 5.0, what="the reader to drop its half")


class Puller(Component):
    """Reads its input (a pull connection) every cycle; records cycle times and samples."""

    category = "test"

    def on_initialize(self) -> None:
        from rtcf import ReadStatus
        self.inp = self.add_in_port("in", TimedDoubleSeq)
        self.new = ReadStatus.NEW
        self.times: list[float] = []
        self.received = 0

    def on_execute(self, ec) -> None:
        """Runs in: EC thread."""
        self.times.append(time.monotonic())
        if self.inp.read() is self.new:
            self.received += 1


@pytest.mark.slow
def test_pull_from_a_stopped_writer_costs_the_reader_one_timeout(launch, it, failed_calls):
    """The reader's EC pulls (get) from a writer that is stopped: one call timeout at most,
    then the connector is skipped until the writer answers; it resumes after SIGCONT."""
    rt = it.probe_runtime()
    comp = Puller(f"hpull{os.getpid()}_{time.monotonic_ns() % 10**6}")
    comp.initialize()
    rt.register_component(comp)
    ec = PeriodicEC(200.0, name="hung_reader", spin=0.0)
    ec.add_component(comp)
    ec.start()
    ec.activate_component(comp)
    tag = f"p{time.monotonic_ns() % 10**6}"
    w = launch(f"""
name: pw_{tag}
components:
  - {{type: SineGenerator, module: examples, name: pw_{tag}}}
execution_contexts:
  - {{name: main, kind: periodic, rate: 200, members: [pw_{tag}]}}
activate: [pw_{tag}]
""", f"pw_{tag}")
    try:
        wout = w.port(f"pw_{tag}", "out")
        rin = rt.port_servant(comp.inp).ref
        cid = it.connect_ports(wout, rin, dataflow_type="pull", **{"buffer.length": "4"})
        it.wait_until(lambda: comp.received > 50, 5.0, what="pulled samples")
        guard = rt.port_servant(comp.inp).guards[cid]
        assert len(_stopped_for(w.pid, 2.5, failed_calls, cid)) == 1    # one timeout
        assert guard.skipped >= 1          # then the reader's cycles skipped the writer
        it.wait_until(lambda: not rt.liveness.suspects(), 3.0, what="the reader to resume")
        n0 = comp.received
        it.wait_until(lambda: comp.received > n0 + 50, 5.0, what="pulling again")
        assert _ids(it, rin) == [cid] and _ids(it, wout) == [cid]
    finally:
        ec.stop()
        rt.unregister_component(comp)
