"""Data on the lockstep step call (rtcf.corba.lockstep.StepMail): which pushes travel on a
step, what a receiving process does with a carried sample (its InPortCdr's own put: decoding,
listeners, a malformed payload refused), and what a disconnection drops."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import numpy as np

from rtcf.corba.cdr import codec_for
from rtcf.corba.dataport import InPortCdrServant
from rtcf.corba.idl import stub_module
from rtcf.corba.lockstep import FollowerServant, RemoteFollower, StepMail
from rtcf.datatypes import TimedDoubleSeq
from rtcf.ports import ConnectorProps, InPort, PortEvent, RingBuffer

OpenRTM = stub_module("OpenRTM")


def _tb() -> SimpleNamespace:
    return SimpleNamespace(stepping=None, carried=0)


def _post(mail: StepMail, process: str, connector: str, data: bytes) -> None:
    """``data`` posted for ``process`` as a writer's carrier posts it during an instant."""
    tb = mail.tb
    before, tb.stepping = tb.stepping, threading.get_ident()
    try:
        assert mail.carrier(process, connector, lambda s: s, None, "ok")(data) == "ok"
    finally:
        tb.stepping = before


def _reader(cid: str = "c1") -> tuple[InPort, InPortCdrServant, list[float]]:
    """An InPort with one CDR connector servant and an ON_RECEIVED listener."""
    port = InPort("in", TimedDoubleSeq)
    props = ConnectorProps({"buffer.length": "8"})
    heard: list[float] = []
    port.add_listener(PortEvent.ON_RECEIVED, lambda p, c, s: heard.append(float(s.data[0])))
    return port, InPortCdrServant(port, cid, RingBuffer(TimedDoubleSeq, props), props,
                                  True), heard


def _cdr(value: float) -> bytes:
    return codec_for(TimedDoubleSeq, True).encode(TimedDoubleSeq(data=np.array([value])))


def test_routes_leader_to_follower_and_back_never_follower_to_follower_or_other_runs():
    leader, two = StepMail("sys", "main"), StepMail("sys", "two")
    leader.followers = frozenset({"two", "three"})
    assert leader.route("sys/two") == "two" and two.route("sys/main") == "main"
    # a process the leader does not step would never take its box: a put
    assert leader.route("sys/four") is None
    assert two.route("sys/three") is None                   # follower to follower: a put
    assert leader.route("sys/main") is None and two.route("sys/two") is None
    assert leader.route("other/two") is None and leader.route(None) is None
    assert leader.route("two") is None
    assert StepMail("sys", "main", enabled=False).route("sys/two") is None


def test_only_the_thread_running_an_instant_posts():
    """No time base yet, between instants, and another thread during an instant: a put."""
    mail = StepMail("sys", "main")
    puts: list[str] = []
    deliver = mail.carrier("two", "c1", lambda s: b"cdr", lambda s: puts.append(s) or "put",
                           "ok")
    assert deliver("a") == "put"                            # no time base yet
    mail.tb = _tb()
    assert deliver("b") == "put"                            # between instants
    mail.tb.stepping = threading.get_ident()
    other: list[str] = []
    t = threading.Thread(target=lambda: other.append(deliver("c")))
    t.start()
    t.join()
    assert other == ["put"] and puts == ["a", "b", "c"]     # another thread: a put
    assert deliver("d") == "ok" and mail.take("two") == [b"c1", b"cdr"]


def test_a_writers_carrier_posts_while_its_thread_runs_an_instant_else_puts():
    from omniORB import cdrMarshal, cdrUnmarshal
    mail = StepMail("sys", "two")
    mail.tb = _tb()
    puts: list[float] = []
    encode = codec_for(TimedDoubleSeq, True).encode
    deliver = mail.carrier("main", "c9", encode,
                           lambda s: puts.append(float(s.data[0])) or "put", "ok")
    sample = TimedDoubleSeq(data=np.array([1.5]))
    assert deliver(sample) == "put" and puts == [1.5]        # between instants: a put
    mail.tb.stepping = threading.get_ident()
    assert deliver(sample) == "ok" and deliver(sample) == "ok" and puts == [1.5]
    out = mail.take("main")
    assert out == [b"c9", _cdr(1.5), b"c9", _cdr(1.5)] and mail.take("main") == []
    assert mail.tb.carried == 2                             # counted when posted
    # what the wire's marshaller takes and gives back (Lockstep.idl Mail)
    tc = omniORB_typecode("IDL:Lockstep/Mail:1.0")
    assert cdrUnmarshal(tc, cdrMarshal(tc, out)) == out


def omniORB_typecode(repo_id: str):
    import omniORB
    from rtcf.corba.orb import init_orb
    init_orb({})                        # the process's ORB (marshalling needs one)
    stub_module("Lockstep")
    return omniORB.findTypeCode(repo_id)


def test_carried_samples_reach_the_reader_in_write_order_through_its_put_and_listeners():
    port, servant, heard = _reader()
    mail = StepMail("sys", "two")
    mail.tb, mail.inports = _tb(), {"c1": servant}
    mail.deliver([x for v in (1.0, 2.0, 3.0) for x in (b"c1", _cdr(v))])
    assert heard == [1.0, 2.0, 3.0]
    got = []
    while (sample := servant.buffer.take(TimedDoubleSeq())) is not None:
        got.append(float(sample.data[0]))
    assert got == [1.0, 2.0, 3.0] and mail.tb.carried == 3


def test_a_malformed_carried_sample_is_refused_as_a_put_and_the_rest_arrive(caplog):
    port, servant, heard = _reader()
    mail = StepMail("sys", "main")
    mail.tb, mail.inports = _tb(), {"c1": servant}
    assert servant.put(b"\x01\x02") == OpenRTM.PORT_ERROR     # what a put answers
    mail.deliver([b"c1", b"\x01\x02", b"c1", _cdr(4.0)])
    assert mail.refused == 1 and heard == [4.0]
    assert "malformed" in caplog.text


def test_a_disconnected_connector_drops_what_was_queued_for_it_quietly():
    mail = StepMail("sys", "main")
    mail.tb = _tb()
    _post(mail, "two", "gone", _cdr(1.0))
    _post(mail, "two", "kept", _cdr(2.0))
    _post(mail, "three", "gone", _cdr(3.0))
    mail.drop("gone")
    assert mail.take("two") == [b"kept", _cdr(2.0)]
    assert mail.take("three") == [] and mail.take("two") == [] and mail.dropped == 2
    # carried to a process whose reader has gone meanwhile: dropped there as quietly
    port, servant, heard = _reader("here")
    mail.inports = {"here": servant}
    mail.deliver([b"gone", _cdr(5.0), b"here", _cdr(6.0)])
    assert heard == [6.0] and mail.dropped == 3 and mail.refused == 0


class _Ref:
    """A follower's Follower object as the leader's client calls it (its ``_obj.invoke``,
    what the generated stub's step() calls)."""

    def __init__(self, answer: list) -> None:
        self.calls: list[tuple] = []
        self.answer = answer
        self._obj = self

    def invoke(self, operation, descriptor, args):
        assert operation == "step"
        t, parts, inbox = args
        self.calls.append((t, list(parts), list(inbox)))
        return self.answer


def test_the_leader_sends_a_followers_queue_with_its_step_and_delivers_the_reply_at_once(
        monkeypatch):
    import omniORB
    monkeypatch.setattr(omniORB, "setClientCallTimeout", lambda *a: None)
    port, servant, heard = _reader("back")
    mail = StepMail("sys", "main")
    mail.tb, mail.inports = _tb(), {"back": servant}
    _post(mail, "two", "to", b"a")
    _post(mail, "two", "to", b"b")
    _post(mail, "three", "x", b"c")
    ref = _Ref([b"back", _cdr(7.0)])
    client = RemoteFollower("two", ref, 1.0, mail)
    client.step(0.01, [SimpleNamespace(index=0, name="e1")])
    assert ref.calls == [(0.01, [0], [b"to", b"a", b"to", b"b"])]
    assert heard == [7.0]                                   # delivered when step returned
    assert mail.take("three") == [b"x", b"c"]               # another process's: kept


def test_a_follower_delivers_its_inbox_before_its_parts_and_returns_what_they_wrote():
    port, servant, heard = _reader("in")
    mail = StepMail("sys", "two")
    order: list[str] = []

    class _Base:
        stepping = None
        carried = 0

        def run_step(self, t, ecs):
            order.append(f"run after {heard}")
            _post(mail, "main", "out", b"z")                  # a part's flush write

    mail.tb, mail.inports = _Base(), {"in": servant}
    follower = FollowerServant(mail.tb, ["e1"], lambda reason: None, mail)
    back = follower.step(0.02, [0], [b"in", _cdr(8.0)])
    assert order == ["run after [8.0]"]
    assert back == [b"out", b"z"]
    assert mail.take("main") == []


def _quiet_reader(cid: str, length: str = "1") -> tuple[InPort, InPortCdrServant]:
    """An InPort with one CDR connector servant on an overwrite buffer, no listener."""
    port = InPort("in", TimedDoubleSeq)
    props = ConnectorProps({"buffer.length": length, "buffer.write.full_policy": "overwrite"})
    return port, InPortCdrServant(port, cid, RingBuffer(TimedDoubleSeq, props), props, True)


def _taken(servant: InPortCdrServant) -> list[float]:
    got = []
    while (sample := servant.buffer.take(TimedDoubleSeq())) is not None:
        got.append(float(sample.data[0]))
    return got


def test_a_registered_receiver_decodes_into_the_buffer_and_tells_listeners_once_there_are():
    port, servant = _quiet_reader("c1", "2")
    mail = StepMail("sys", "two")
    mail.tb = _tb()
    mail.receive("c1", servant.receiver())
    mail.deliver([b"c1", _cdr(1.0), b"c1", _cdr(2.0), b"c1", _cdr(3.0)])
    assert _taken(servant) == [2.0, 3.0] and servant.buffer.overwritten == 1
    assert mail.tb.carried == 3 and mail.refused == 0
    heard: list[float] = []                 # a listener added later: put()'s way again
    remove = port.add_listener(PortEvent.ON_RECEIVED,
                               lambda p, c, s: heard.append(float(s.data[0])))
    mail.deliver([b"c1", _cdr(4.0)])
    assert heard == [4.0] and _taken(servant) == [4.0]
    remove()
    mail.deliver([b"c1", _cdr(5.0)])
    assert heard == [4.0] and _taken(servant) == [5.0]


def test_a_malformed_payload_through_a_receiver_is_refused_and_warned_and_the_rest_arrive(
        caplog):
    port, servant = _quiet_reader("c1", "2")
    mail = StepMail("sys", "two")
    mail.tb = _tb()
    mail.receive("c1", servant.receiver())
    mail.deliver([b"c1", _cdr(1.0), b"c1", b"\x01\x02", b"c1", _cdr(2.0)])
    assert mail.refused == 1 and "malformed" in caplog.text
    assert _taken(servant) == [1.0, 2.0]
    # in a full buffer a malformed sample loses the oldest, as a put does
    mail.deliver([b"c1", _cdr(3.0), b"c1", _cdr(4.0), b"c1", b"\x01"])
    assert mail.refused == 2 and _taken(servant) == [4.0]


def test_a_receiver_of_a_buffer_that_is_not_overwrite_is_the_servants_put():
    port = InPort("in", TimedDoubleSeq)
    props = ConnectorProps({"buffer.length": "1", "buffer.write.full_policy": "do_nothing"})
    servant = InPortCdrServant(port, "c1", RingBuffer(TimedDoubleSeq, props), props, True)
    mail = StepMail("sys", "two")
    mail.tb = _tb()
    mail.receive("c1", servant.receiver())
    mail.deliver([b"c1", _cdr(1.0), b"c1", _cdr(2.0)])
    assert mail.refused == 1 and _taken(servant) == [1.0]      # BUFFER_FULL: refused


def test_a_dropped_connector_forgets_its_receiver():
    port, servant = _quiet_reader("c1")
    mail = StepMail("sys", "two")
    mail.tb = _tb()
    mail.receive("c1", servant.receiver())
    mail.drop("c1")
    mail.deliver([b"c1", _cdr(1.0)])
    assert mail.dropped == 1 and _taken(servant) == []
