"""Tests of rtcf.ports: in-process connectors, buffers and their policies, publishers
(flush / new / periodic with every push policy), timestamps, listeners, connection checks
and the absence of aliasing between writer and reader.

Threaded publishers are checked with bounded polling; to make push policies deterministic a
listener holds the publisher thread inside the delivery of the first sample while the test
queues more."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from rtcf.datatypes import TimedDouble, TimedDoubleSeq, TimedLong, time_of
from rtcf.errors import ConfigError, PortError
from rtcf.ports import (InPort, OutPort, PortEvent, PortStatus, ReadStatus, connect,
                        disconnect)


@pytest.fixture
def link():
    """link(props, dt=TimedDouble, **in_defaults) -> (outport, inport, connector);
    every connector is disconnected at teardown (publisher threads joined)."""
    made = []

    def factory(props=None, dt=TimedDouble, out=None, inp=None, **in_defaults):
        out = out or OutPort("out", dt)
        inp = inp or InPort("in", dt, **in_defaults)
        c = connect(out, inp, props)
        made.append((c, out))
        return out, inp, c
    yield factory
    for c, out in made:
        disconnect(c.id, out)
        c.close()


def values_of(inp):
    """Read everything unread; return the data values."""
    out = []
    while inp.read() is ReadStatus.NEW:
        out.append(inp.value.data)
    return out


def pub_threads(name):
    return [t for t in threading.enumerate() if t.name == f"rtcf-pub-{name}" and t.is_alive()]


# -- basic flow -------------------------------------------------------------------------------

def test_read_status_new_old_no_data(link):
    lonely = InPort("lonely", TimedDouble)
    assert lonely.read() is ReadStatus.NO_DATA
    out, inp, _ = link()
    assert inp.read() is ReadStatus.NO_DATA
    assert not inp.is_new()
    assert out.write(TimedDouble(data=1.5)) is True
    assert inp.is_new() and inp.unread() == 1
    assert inp.read() is ReadStatus.NEW
    assert inp.value.data == 1.5
    assert inp.read() is ReadStatus.OLD
    assert inp.value.data == 1.5
    out.value.data = 2.5          # write() without argument sends out.value
    out.write()
    assert inp.read() is ReadStatus.NEW and inp.value.data == 2.5
    assert out.writes == 2


def test_fifo_order(link):
    out, inp, _ = link()
    for k in range(1, 6):
        out.write(TimedDouble(data=float(k)))
    assert inp.unread() == 5
    assert values_of(inp) == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert inp.read() is ReadStatus.OLD


def test_read_newest_drops_the_older_ones(link):
    out, inp, _ = link()
    assert inp.read_newest() is ReadStatus.NO_DATA
    for k in range(4):
        out.write(TimedDouble(data=float(k)))
    assert inp.read_newest() is ReadStatus.NEW
    assert inp.value.data == 3.0
    assert inp.read_newest() is ReadStatus.OLD


def test_read_newest_one_sample_several_connectors_and_a_listener(link):
    """read_newest ends as soon as nothing is left to take, with the same answers as a
    read() more: a single sample, samples on two connectors into one port, and a listener
    still told that the buffer ran empty after the newest was taken."""
    out, inp, _ = link()
    out.write(TimedDouble(data=1.0))
    assert inp.read_newest() is ReadStatus.NEW and inp.value.data == 1.0
    assert inp.unread() == 0 and inp.read_newest() is ReadStatus.OLD
    other = OutPort("other", TimedDouble)
    link(out=other, inp=inp)
    out.write(TimedDouble(data=2.0))
    other.write(TimedDouble(data=3.0))
    assert inp.unread() == 2
    assert inp.read_newest() is ReadStatus.NEW and inp.value.data == 3.0
    assert inp.unread() == 0
    events = []
    inp.add_listener(PortEvent.ON_BUFFER_EMPTY, lambda p, cid, s: events.append("empty"))
    out.write(TimedDouble(data=4.0))
    assert inp.read_newest() is ReadStatus.NEW and inp.value.data == 4.0
    assert events == ["empty"]      # the read after the newest found the buffer empty


def test_fan_out_gives_each_reader_its_own_copy(link):
    out = OutPort("out", TimedDoubleSeq)
    _, a, _ = link(dt=TimedDoubleSeq, out=out, inp=InPort("a", TimedDoubleSeq))
    _, b, _ = link(dt=TimedDoubleSeq, out=out, inp=InPort("b", TimedDoubleSeq))
    assert out.write(TimedDoubleSeq(data=[1, 2])) is True
    assert a.read() is ReadStatus.NEW and b.read() is ReadStatus.NEW
    assert a.value == b.value and a.value is not b.value
    assert not np.shares_memory(a.value.data, b.value.data)


# -- buffer policies ----------------------------------------------------------------------------

def test_overwrite_drops_the_oldest(link):
    out, inp, c = link({"buffer.length": 3, "buffer.write.full_policy": "overwrite"})
    results = [out.write(TimedDouble(data=float(k))) for k in range(1, 6)]
    assert results == [True] * 5
    assert inp.unread() == 3 == c.buffer.length
    assert c.buffer.overwritten == 2
    assert values_of(inp) == [3.0, 4.0, 5.0]


def test_overwrite_is_the_default_with_length_8(link):
    out, inp, c = link()
    assert c.buffer.length == 8 and c.buffer.full_policy == "overwrite"
    for k in range(10):
        out.write(TimedDouble(data=float(k)))
    assert values_of(inp) == [float(k) for k in range(2, 10)]


def test_do_nothing_refuses_the_newest(link):
    out, inp, c = link({"buffer.length": "3", "buffer.write.full_policy": "do_nothing"})
    results = [out.write(TimedDouble(data=float(k))) for k in range(1, 6)]
    assert results == [True, True, True, False, False]
    assert c.buffer.dropped == 2
    assert c.publisher.last_status == PortStatus.BUFFER_FULL
    assert values_of(inp) == [1.0, 2.0, 3.0]
    assert out.write(TimedDouble(data=6.0)) is True      # room again
    assert values_of(inp) == [6.0]


def test_block_times_out_when_nobody_reads(link):
    out, inp, c = link({"buffer.length": 1, "buffer.write.full_policy": "block",
                        "buffer.write.timeout": 0.05})
    assert out.write(TimedDouble(data=1.0)) is True
    t0 = time.monotonic()
    assert out.write(TimedDouble(data=2.0)) is False
    assert time.monotonic() - t0 >= 0.05      # it waited its timeout (deadline-based)
    assert c.publisher.last_status == PortStatus.BUFFER_TIMEOUT
    assert values_of(inp) == [1.0]


def test_block_waits_for_the_reader(link):
    out, inp, _ = link({"buffer.length": 1, "buffer.write.full_policy": "block",
                        "buffer.write.timeout": 60.0})
    out.write(TimedDouble(data=1.0))
    got = []

    def reader():
        time.sleep(0.05)
        inp.read()
        got.append(inp.value.data)
    t = threading.Thread(target=reader)
    t.start()
    assert out.write(TimedDouble(data=2.0)) is True    # room made by the reader, no timeout
    t.join(60.0)
    assert got == [1.0]
    assert values_of(inp) == [2.0]


def test_read_empty_policy_readback(link):
    out, inp, c = link({"buffer.read.empty_policy": "readback"})
    assert c.buffer.empty_policy == "readback"
    out.write(TimedDouble(data=7.0))
    assert inp.read() is ReadStatus.NEW
    for _ in range(3):
        assert inp.read() is ReadStatus.OLD
        assert inp.value.data == 7.0


def test_read_empty_policy_block_waits_for_a_writer(link):
    out, inp, _ = link({"buffer.read.empty_policy": "block", "buffer.read.timeout": 0.05})
    t0 = time.monotonic()
    assert inp.read() is ReadStatus.NO_DATA
    assert time.monotonic() - t0 >= 0.05      # it waited its timeout (deadline-based)
    inp2 = InPort("in2", TimedDouble)
    out2, _, _ = link({"buffer.read.empty_policy": "block", "buffer.read.timeout": 60.0},
                      inp=inp2)
    timer = threading.Timer(0.05, lambda: out2.write(TimedDouble(data=3.0)))
    timer.start()
    assert inp2.read() is ReadStatus.NEW
    assert inp2.value.data == 3.0
    timer.join()


def test_inport_default_properties_apply_and_can_be_overridden(link):
    _, inp, c = link(buffer__length=2)
    assert inp.default_props == {"buffer.length": 2}
    assert c.buffer.length == 2
    _, _, c2 = link({"buffer.length": 5}, inp=InPort("x", TimedDouble, buffer__length=2))
    assert c2.buffer.length == 5


def test_dataport_prefix_is_accepted(link):
    _, _, c = link({"dataport.buffer.length": "4", "dataport.subscription_type": "Flush"})
    assert c.buffer.length == 4 and c.props.subscription_type == "flush"


# -- subscriptions --------------------------------------------------------------------------------

def test_flush_delivers_in_write_in_the_writers_thread(link):
    out, inp, c = link({"subscription_type": "flush"})
    assert c.publisher.kind == "flush"
    threads = []
    inp.add_listener(PortEvent.ON_RECEIVED, lambda *a: threads.append(threading.get_ident()))
    out.write(TimedDouble(data=1.0))
    assert threads == [threading.get_ident()]
    assert inp.unread() == 1


def test_reader_listener_added_and_removed_while_connected(link):
    """A flush writer puts straight into the buffer of a reader no listener watches; a
    listener added later on the reader is told of every sample from then on, on each of
    its connectors, and once removed no more (the samples still arrive)."""
    out, inp, _ = link({"subscription_type": "flush"})
    other = OutPort("other", TimedDouble)
    link({"subscription_type": "flush"}, out=other, inp=inp)
    out.write(TimedDouble(data=1.0))
    seen = []
    remove = inp.add_listener(PortEvent.ON_RECEIVED, lambda p, cid, s: seen.append(s.data))
    out.write(TimedDouble(data=2.0))
    other.write(TimedDouble(data=3.0))
    assert seen == [2.0, 3.0]
    remove()
    out.write(TimedDouble(data=4.0))
    other.write(TimedDouble(data=5.0))
    assert seen == [2.0, 3.0]
    assert sorted(values_of(inp)) == [1.0, 2.0, 3.0, 4.0, 5.0]   # one buffer each
    inp.add_listener(PortEvent.ON_BUFFER_FULL, lambda p, cid, s: seen.append("full"))
    for k in range(inp.connectors[next(iter(inp.connectors))].buffer.length + 1):
        out.write(TimedDouble(data=float(k)))
    assert seen[-1] == "full"


def gated(inp):
    """A listener that blocks the delivering thread in its first delivery until released."""
    entered, release = threading.Event(), threading.Event()
    received, threads = [], []

    def on_received(port, cid, sample):
        received.append(sample.data)
        threads.append(threading.get_ident())
        if len(received) == 1:
            entered.set()
            release.wait(5.0)
    inp.add_listener(PortEvent.ON_RECEIVED, on_received)
    return entered, release, received, threads


@pytest.mark.parametrize("subscription", ["new", "periodic"])
@pytest.mark.parametrize("policy, skip, expected", [
    ("all", 0, [0, 1, 2, 3, 4, 5]),
    ("fifo", 0, [0, 1, 2, 3, 4, 5]),
    ("new", 0, [0, 5]),
    ("skip", 1, [0, 2, 4]),
    ("skip", 2, [0, 3]),
])
def test_push_policies(link, wait_for, subscription, policy, skip, expected):
    props = {"subscription_type": subscription, "publisher.push_policy": policy,
             "publisher.skip_count": skip, "publisher.push_rate": 200}
    out, inp, c = link(props)
    assert c.publisher.kind == subscription
    entered, release, received, threads = gated(inp)
    assert out.write(TimedDouble(data=0.0)) is True
    assert entered.wait(3.0), "the publisher never delivered the first sample"
    for k in range(1, 6):          # queued while the publisher is held in delivery
        out.write(TimedDouble(data=float(k)))
    release.set()
    assert wait_for(lambda: received and received[-1] == float(expected[-1]))
    assert wait_for(lambda: not c.publisher._queue)
    assert received == [float(v) for v in expected]
    assert set(threads) != {threading.get_ident()}     # delivered by the publisher thread
    assert values_of(inp) == [float(v) for v in expected]


def test_push_policy_alias_names(link):
    _, _, c = link({"subscription_type": "new", "push_policy": "fifo", "skip_count": "3"})
    assert c.props.push_policy == "fifo" and c.props.skip_count == 3


def test_periodic_delivers_at_its_push_rate_not_in_write(link, wait_for):
    out, inp, c = link({"subscription_type": "periodic", "publisher.push_rate": 0.5})
    out.write(TimedDouble(data=1.0))
    assert inp.unread() == 0          # the first push is 2 s away
    disconnect(c.id, out)
    out2, inp2, _ = link({"subscription_type": "periodic", "publisher.push_rate": 50})
    out2.write(TimedDouble(data=2.0))
    assert wait_for(lambda: inp2.unread() == 1, timeout=3.0)
    assert values_of(inp2) == [2.0]


def test_new_subscription_delivers_every_sample_eventually(link, wait_for):
    out, inp, _ = link({"subscription_type": "new", "publisher.push_policy": "all",
                        "buffer.length": 100})
    for k in range(50):
        out.write(TimedDouble(data=float(k)))
    assert wait_for(lambda: inp.unread() == 50)
    assert values_of(inp) == [float(k) for k in range(50)]


# -- timestamps ------------------------------------------------------------------------------------

def test_no_timestamp_policy_leaves_tm_alone(link):
    out, inp, _ = link()
    s = TimedDouble(data=1.0)
    s.tm.sec, s.tm.nsec = 12, 34
    out.write(s)
    inp.read()
    assert (inp.value.tm.sec, inp.value.tm.nsec) == (12, 34)


def test_timestamp_on_write(link):
    out, inp, _ = link({"timestamp_policy": "on_write"})
    s = TimedDouble(data=1.0)
    t0 = time.time()
    out.write(s)
    t1 = time.time()
    inp.read()
    assert t0 - 1e-6 <= time_of(inp.value) <= t1 + 1e-6
    assert time_of(s) == time_of(inp.value)          # the writer's sample is stamped


def test_timestamp_on_received(link):
    out, inp, _ = link({"timestamp_policy": "on_received"})
    t0 = time.time()
    out.write(TimedDouble(data=1.0))
    t1 = time.time()
    time.sleep(0.01)
    inp.read()
    assert t0 - 1e-6 <= time_of(inp.value) <= t1 + 1e-6


def test_timestamp_on_received_does_not_touch_the_writers_sample(link):
    out, inp, _ = link({"timestamp_policy": "on_received"})
    s = TimedDouble(data=1.0)
    out.write(s)
    inp.read()
    assert time_of(inp.value) > 0
    assert (s.tm.sec, s.tm.nsec) == (0, 0)


def test_timestamp_on_read(link):
    out, inp, _ = link({"timestamp_policy": "on_read"})
    out.write(TimedDouble(data=1.0))
    t_written = time.time()
    time.sleep(0.02)
    t0 = time.time()
    inp.read()
    t1 = time.time()
    assert t0 - 1e-6 <= time_of(inp.value) <= t1 + 1e-6
    assert time_of(inp.value) > t_written + 0.01


def test_on_write_stamping_ends_with_its_connector(link):
    out, inp, c = link({"timestamp_policy": "on_write"})
    disconnect(c.id, out)
    _, inp2, _ = link(out=out, inp=InPort("plain", TimedDouble))
    out.write(TimedDouble(data=1.0))
    inp2.read()
    assert (inp2.value.tm.sec, inp2.value.tm.nsec) == (0, 0)


# -- listeners --------------------------------------------------------------------------------------

def test_listeners(link):
    events = []

    def recorder(name):
        return lambda port, cid, sample: events.append(
            (name, port.name, cid, None if sample is None else sample.data))
    out = OutPort("out", TimedDouble)
    inp = InPort("in", TimedDouble)
    for port in (out, inp):
        port.add_listener(PortEvent.ON_CONNECT, recorder("connect"))
        port.add_listener(PortEvent.ON_DISCONNECT, recorder("disconnect"))
    out.add_listener(PortEvent.ON_WRITE, recorder("write"))
    inp.add_listener(PortEvent.ON_RECEIVED, recorder("received"))
    inp.add_listener(PortEvent.ON_BUFFER_FULL, recorder("full"))
    c = connect(out, inp, {"buffer.length": 1})
    assert events == [("connect", "out", c.id, None), ("connect", "in", c.id, None)]
    events.clear()
    out.write(TimedDouble(data=1.0))
    assert events == [("write", "out", "", 1.0), ("received", "in", c.id, 1.0)]
    events.clear()
    out.write(TimedDouble(data=2.0))          # overwrites the unread 1.0
    assert events == [("write", "out", "", 2.0), ("full", "in", c.id, 2.0),
                      ("received", "in", c.id, 2.0)]
    events.clear()
    assert disconnect(c.id, inp) is True
    assert sorted(events) == [("disconnect", "in", c.id, None),
                              ("disconnect", "out", c.id, None)]


def test_buffer_full_with_do_nothing_is_reported_without_received(link):
    events = []
    _, inp, _ = link({"buffer.length": 1, "buffer.write.full_policy": "do_nothing"})
    out = next(iter(inp.connectors.values())).outport
    inp.add_listener(PortEvent.ON_BUFFER_FULL, lambda p, cid, s: events.append(("full", s.data)))
    inp.add_listener(PortEvent.ON_RECEIVED, lambda p, cid, s: events.append(("recv", s.data)))
    out.write(TimedDouble(data=1.0))
    out.write(TimedDouble(data=2.0))
    assert events == [("recv", 1.0), ("full", 2.0)]


def test_listener_remover_and_failing_listener(link):
    out, inp, _ = link()
    seen = []
    remove = inp.add_listener(PortEvent.ON_RECEIVED, lambda p, c, s: seen.append(s.data))

    def broken(p, c, s):
        raise RuntimeError("listener fails on purpose")
    out.add_listener(PortEvent.ON_WRITE, broken)
    assert out.write(TimedDouble(data=1.0)) is True      # a broken listener is logged only
    remove()
    out.write(TimedDouble(data=2.0))
    assert seen == [1.0]
    assert values_of(inp) == [1.0, 2.0]


# -- connections --------------------------------------------------------------------------------

def test_disconnect_at_run_time_stops_delivery(link):
    out, inp, c = link()
    out.write(TimedDouble(data=1.0))
    assert inp.read() is ReadStatus.NEW
    assert disconnect(c.id, out) is True
    assert out.connectors == {} and inp.connectors == {}
    assert out.write(TimedDouble(data=2.0)) is True          # nobody to refuse it
    assert inp.read() is ReadStatus.OLD
    assert inp.value.data == 1.0
    assert disconnect(c.id, out) is False


def test_disconnect_stops_the_publisher_thread(link, wait_for):
    out, inp, c = link({"subscription_type": "new"})
    out.write(TimedDouble(data=1.0))
    assert wait_for(lambda: inp.unread() == 1)
    assert values_of(inp) == [1.0]
    assert len(pub_threads(c.name)) == 1
    disconnect(c.id, inp)
    assert pub_threads(c.name) == []
    out.write(TimedDouble(data=2.0))
    time.sleep(0.02)
    assert inp.read() is ReadStatus.OLD and inp.value.data == 1.0


def test_data_type_mismatch_is_rejected():
    out, inp = OutPort("o", TimedDouble), InPort("i", TimedLong)
    with pytest.raises(PortError, match="TimedDouble.*TimedLong"):
        connect(out, inp)
    assert out.connectors == {} and inp.connectors == {}
    with pytest.raises(PortError, match="expected \\(OutPort, InPort\\)"):
        connect(InPort("a", TimedDouble), OutPort("b", TimedDouble))   # type: ignore
    with pytest.raises(PortError, match="TimedDouble"):
        out.write(TimedLong(data=1))
    with pytest.raises(PortError, match="data type"):
        OutPort("o", int)
    assert OutPort("o", "IDL:RTC/TimedDoubleSeq:1.0").data_type is TimedDoubleSeq


@pytest.mark.parametrize("props, key, value", [
    ({"subscription_type": "bogus"}, "subscription_type", "bogus"),
    ({"dataport.subscription_type": "sometimes"}, "subscription_type", "sometimes"),
    ({"dataflow_type": "sideways"}, "dataflow_type", "sideways"),
    ({"buffer.length": "0"}, "buffer.length", "0"),
    ({"buffer.length": "many"}, "buffer.length", "many"),
    ({"buffer.write.full_policy": "explode"}, "buffer.write.full_policy", "explode"),
    ({"buffer.read.empty_policy": "wait"}, "buffer.read.empty_policy", "wait"),
    ({"buffer.write.timeout": "soon"}, "buffer.write.timeout", "soon"),
    ({"subscription_type": "new", "publisher.push_policy": "most"},
     "publisher.push_policy", "most"),
    ({"publisher.skip_count": "-1"}, "publisher.skip_count", "-1"),
    ({"subscription_type": "periodic", "publisher.push_rate": "0"},
     "publisher.push_rate", "0"),
    ({"publisher.push_rate": "fast"}, "publisher.push_rate", "fast"),
    ({"timestamp_policy": "sometimes"}, "timestamp_policy", "sometimes"),
])
def test_invalid_connector_properties(props, key, value):
    out, inp = OutPort("o", TimedDouble), InPort("i", TimedDouble)
    with pytest.raises(ConfigError) as info:
        connect(out, inp, props)
    msg = str(info.value)
    assert f"dataport.{key}" in msg and value in msg, msg
    assert out.connectors == {} and inp.connectors == {}


def test_pull_is_not_an_in_process_connection():
    with pytest.raises(PortError, match="pull"):
        connect(OutPort("o", TimedDouble), InPort("i", TimedDouble), {"dataflow_type": "pull"})


def test_duplicate_connection_is_rejected_unless_allowed(link):
    out, inp, c = link()
    with pytest.raises(PortError, match="already connected"):
        connect(out, inp)
    assert list(out.connectors) == [c.id]
    _, _, c2 = link({"allow_dup_connection": "YES"}, out=out, inp=inp)
    assert c2.id != c.id and len(inp.connectors) == 2
    out.write(TimedDouble(data=4.0))
    assert values_of(inp) == [4.0, 4.0]


def test_connector_id_and_name(link):
    out = OutPort("o", TimedDouble)
    _, _, c = link(out=out, inp=InPort("i", TimedDouble))
    assert len(c.id) == 36                        # a UUID when none is given
    c2 = connect(OutPort("p", TimedDouble), InPort("q", TimedDouble), connector_id="fixed",
                 name="mine")
    assert c2.id == "fixed" and c2.name == "mine"
    disconnect("fixed", c2.outport)


# -- no aliasing ------------------------------------------------------------------------------------

@pytest.mark.parametrize("subscription", ["flush", "new"])
def test_writer_changes_after_write_do_not_reach_the_reader(link, wait_for, subscription):
    out, inp, _ = link({"subscription_type": subscription}, dt=TimedDoubleSeq)
    s = TimedDoubleSeq(data=[1.0, 2.0, 3.0])
    out.write(s)
    s.data[:] = 9.0                   # in place, right after write
    s.tm.sec = 99
    assert wait_for(lambda: inp.unread() == 1)
    inp.read()
    assert inp.value.data.tolist() == [1.0, 2.0, 3.0]
    assert inp.value.tm.sec == 0
    assert inp.value is not s and not np.shares_memory(inp.value.data, s.data)
    # and the reader's changes do not reach the writer or the next sample
    inp.value.data[:] = -1.0
    assert s.data.tolist() == [9.0, 9.0, 9.0]
    out.write(s)
    assert wait_for(lambda: inp.unread() == 1)
    inp.read()
    assert inp.value.data.tolist() == [9.0, 9.0, 9.0]


def test_outport_value_reuse_does_not_alias(link):
    out, inp, _ = link(dt=TimedDoubleSeq)
    out.value.data = np.zeros(3)
    got = []
    for k in range(3):
        out.value.data[:] = k         # the usual in-place fill of the preallocated sample
        out.write()
    while inp.read() is ReadStatus.NEW:
        got.append(inp.value.data.copy())
    assert [g.tolist() for g in got] == [[0.0] * 3, [1.0] * 3, [2.0] * 3]
