"""The per-connection fast paths of rtcf.ports do what the general methods do.

RingBuffer builds put / take for the policies that never wait; OutPort.write and
InPort.read / read_newest are built for one connector while nothing is stamped and no
listener watches. Each is driven side by side with the general method on a twin over
random operation sequences: same results, same buffer state, same sample objects in the
same places, same data."""

from __future__ import annotations

import random

import numpy as np
import pytest

from rtcf.datatypes import TimedDoubleSeq
from rtcf.errors import PortError
from rtcf.ports import (ConnectorProps, InPort, OutPort, PortEvent, ReadStatus,
                        RingBuffer, connect, disconnect)


def _sample(k: int) -> TimedDoubleSeq:
    s = TimedDoubleSeq()
    s.tm.sec, s.tm.nsec = k, 7 * k
    s.data = np.arange(3, dtype=float) + k
    return s


def _state(buf: RingBuffer) -> tuple:
    return (buf._head, buf.count, buf.overwritten, buf.dropped,
            [(s.tm.sec, s.tm.nsec, s.data.tolist()) for s in buf._slots])


@pytest.mark.parametrize("length", [1, 2, 5])
@pytest.mark.parametrize("full", ["overwrite", "do_nothing"])
def test_ring_buffer_fast_put_take_match_the_methods(length, full):
    props = ConnectorProps({"buffer.length": length, "buffer.write.full_policy": full})
    fast, slow = RingBuffer(TimedDoubleSeq, props), RingBuffer(TimedDoubleSeq, props)
    assert "take" in fast.__dict__
    assert ("put" in fast.__dict__) == (full == "overwrite")
    rng = random.Random(length)
    spare_f, spare_s = TimedDoubleSeq(), TimedDoubleSeq()
    for k in range(400):
        if rng.random() < 0.6:
            s = _sample(k)
            assert fast.put(s) is RingBuffer.put(slow, s)
        else:
            got_f, got_s = fast.take(spare_f), RingBuffer.take(slow, spare_s)
            assert (got_f is None) == (got_s is None)
            if got_f is not None:
                assert (got_f.tm.sec, got_f.data.tolist()) == (got_s.tm.sec,
                                                               got_s.data.tolist())
                spare_f, spare_s = got_f, got_s
        assert _state(fast) == _state(slow)
        assert len(fast) == len(slow)


@pytest.mark.parametrize("fill", [0, 2, 3])
def test_ring_buffer_fast_put_failing_copy_leaves_the_state_the_method_leaves(fill):
    props = ConnectorProps({"buffer.length": 3})
    fast, slow = RingBuffer(TimedDoubleSeq, props), RingBuffer(TimedDoubleSeq, props)
    for k in range(fill):
        fast.put(_sample(k))
        RingBuffer.put(slow, _sample(k))
    bad = _sample(9)
    bad.data = object()             # np.array(object(), dtype=float) raises
    with pytest.raises(TypeError):
        fast.put(bad)
    with pytest.raises(TypeError):
        RingBuffer.put(slow, bad)
    assert _state(fast) == _state(slow)


def _twin_ports(props):
    pairs = []
    for _ in range(2):
        out, inp = OutPort("out", TimedDoubleSeq), InPort("in", TimedDoubleSeq)
        pairs.append((out, inp, connect(out, inp, dict(props))))
    return pairs


@pytest.mark.parametrize("length", [1, 4])
def test_port_fast_write_read_match_the_methods(length):
    (fo, fi, fc), (so, si, sc) = _twin_ports({"buffer.length": length})
    assert "write" in fo.__dict__ and "read" in fi.__dict__ and "read_newest" in fi.__dict__
    rng = random.Random(length)
    for k in range(500):
        r = rng.random()
        if r < 0.5:
            if k == 0 or rng.random() < 0.1:        # a new value object now and then
                fo.value, so.value = _sample(k), _sample(k)
            fo.value.data[0] = so.value.data[0] = k
            assert fo.write() is OutPort.write(so) is True
        elif r < 0.6:
            s = _sample(k)
            assert fo.write(s) is OutPort.write(so, s) is True
        elif r < 0.85:
            assert fi.read() is InPort.read(si)
        else:
            assert fi.read_newest() is InPort.read_newest(si)
        assert fi.value.data.tolist() == si.value.data.tolist()
        assert fi.value.tm.sec == si.value.tm.sec
        assert fo.writes == so.writes
        assert _state(fc.buffer) == _state(sc.buffer)
    for out, c in ((fo, fc), (so, sc)):
        disconnect(c.id, out)


def test_fast_paths_step_aside_for_listeners_and_come_back():
    out, inp = OutPort("out", TimedDoubleSeq), InPort("in", TimedDoubleSeq)
    c = connect(out, inp, {})
    seen = []
    remove_w = out.add_listener(PortEvent.ON_WRITE, lambda p, cid, s: seen.append("write"))
    remove_r = inp.add_listener(PortEvent.ON_READ, lambda p, cid, s: seen.append("read"))
    assert "write" not in out.__dict__ and "read" not in inp.__dict__
    out.write()
    assert inp.read() is ReadStatus.NEW
    assert seen == ["write", "read"]
    remove_w()
    remove_r()
    assert "write" in out.__dict__ and "read" in inp.__dict__
    out.write()
    assert inp.read() is ReadStatus.NEW and seen == ["write", "read"]
    disconnect(c.id, out)
    assert "read" not in inp.__dict__          # no buffer left: the method
    assert inp.read() is ReadStatus.OLD
    assert out.write() is True and out.writes == 3


def test_fast_write_refuses_a_sample_of_another_type_as_the_method_does():
    out, inp = OutPort("out", TimedDoubleSeq), InPort("in", TimedDoubleSeq)
    c = connect(out, inp, {})
    with pytest.raises(PortError, match="write expects TimedDoubleSeq, got str"):
        out.write("x")
    with pytest.raises(PortError, match="write expects TimedDoubleSeq, got str"):
        OutPort.write(out, "x")
    assert out.writes == 0
    disconnect(c.id, out)


def test_several_connectors_a_refusing_reader_and_stamps():
    out, a, b, c = (OutPort("out", TimedDoubleSeq), InPort("a", TimedDoubleSeq),
                    InPort("b", TimedDoubleSeq), InPort("c", TimedDoubleSeq))
    ca = connect(out, a, {})
    cb = connect(out, b, {"buffer.length": 1, "buffer.write.full_policy": "do_nothing"})
    cc = connect(out, c, {})
    assert "write" in out.__dict__
    out.value.data = np.ones(2)
    assert out.write() is True
    assert OutPort.write(out) is False                   # b is full and refuses
    assert out.write() is False
    assert out.writes == 3
    assert a.read() is b.read() is c.read() is ReadStatus.NEW
    assert b.value.data.tolist() == c.value.data.tolist() == [1.0, 1.0]
    assert out.write() is True
    for conn in (ca, cb, cc):
        disconnect(conn.id, out)
    o2, i2 = OutPort("o2", TimedDoubleSeq), InPort("i2", TimedDoubleSeq)
    c2 = connect(o2, i2, {"timestamp_policy": "on_read"})
    assert "write" in o2.__dict__ and "read" not in i2.__dict__
    disconnect(c2.id, o2)
    c3 = connect(o2, i2, {"timestamp_policy": "on_write"})
    assert "write" not in o2.__dict__ and "read" in i2.__dict__
    disconnect(c3.id, o2)


@pytest.mark.parametrize("full", ["do_nothing", "block"])
def test_fast_read_over_a_buffer_that_refuses_or_waits_matches_the_methods(full):
    # overwrite buffers have their put folded into write and their take into read; the
    # other full policies keep the buffer's own put / take (block: take wakes a writer)
    (fo, fi, fc), (so, si, sc) = _twin_ports({"buffer.length": 3,
                                              "buffer.write.full_policy": full,
                                              "buffer.write.timeout": 0.0})
    assert "read" in fi.__dict__ and "read_newest" in fi.__dict__
    rng = random.Random(7)
    for k in range(300):
        r = rng.random()
        if r < 0.55:
            fo.value.data[...] = so.value.data[...] = k
            assert fo.write() is OutPort.write(so)
        elif r < 0.8:
            assert fi.read() is InPort.read(si)
        else:
            assert fi.read_newest() is InPort.read_newest(si)
        assert fi.value.data.tolist() == si.value.data.tolist()
        assert _state(fc.buffer) == _state(sc.buffer)
    for out, c in ((fo, fc), (so, sc)):
        disconnect(c.id, out)


@pytest.mark.parametrize("fill", [0, 2, 3])
def test_fast_write_failing_copy_leaves_the_state_the_method_leaves(fill):
    (fo, fi, fc), (so, si, sc) = _twin_ports({"buffer.length": 3})
    for k in range(fill):
        assert fo.write(_sample(k)) is OutPort.write(so, _sample(k)) is True
    bad = _sample(9)
    bad.data = object()             # np.array(object(), dtype=float) raises
    with pytest.raises(TypeError):
        fo.write(bad)
    with pytest.raises(TypeError):
        OutPort.write(so, bad)
    assert fo.writes == so.writes == fill + 1
    assert _state(fc.buffer) == _state(sc.buffer)
    assert fi.read_newest() is InPort.read_newest(si)
    assert fi.value.data.tolist() == si.value.data.tolist()
    for out, c in ((fo, fc), (so, sc)):
        disconnect(c.id, out)


def test_used_follows_in_use_through_connect_listeners_and_disconnect():
    out, inp = OutPort("out", TimedDoubleSeq), InPort("in", TimedDoubleSeq)
    assert out.used is out.in_use() is False and inp.used is inp.in_use() is False
    c = connect(out, inp, {})
    assert out.used and inp.used
    disconnect(c.id, out)
    assert not out.used and not inp.used
    remove = inp.add_listener(PortEvent.ON_READ, lambda p, cid, s: None)
    assert inp.used is inp.in_use() is True
    remove()
    assert inp.used is inp.in_use() is False


def test_sole_buffer_is_the_fast_paths_buffer_and_its_count_what_read_newest_would_find():
    out, inp = OutPort("out", TimedDoubleSeq), InPort("in", TimedDoubleSeq)
    assert inp.sole_buffer is None                  # no connector: the method
    c = connect(out, inp, {"buffer.length": 3})
    buf = inp.sole_buffer
    assert buf is c.buffer and buf.count == 0
    value = inp.value
    assert inp.read_newest() is ReadStatus.NO_DATA and inp.value is value
    out.value.data = np.arange(2.0)
    out.write()
    out.write()
    assert buf.count == 2 == len(buf)
    assert inp.read_newest() is ReadStatus.NEW and buf.count == 0
    value = inp.value
    assert inp.read_newest() is ReadStatus.OLD and inp.value is value
    remove = inp.add_listener(PortEvent.ON_BUFFER_EMPTY, lambda p, cid, s: None)
    assert inp.sole_buffer is None                  # a listener to tell: the method
    remove()
    assert inp.sole_buffer is buf
    out2 = OutPort("out2", TimedDoubleSeq)
    c2 = connect(out2, inp, {})
    assert inp.sole_buffer is None                  # two buffers: the method
    disconnect(c2.id, out2)
    assert inp.sole_buffer is buf
    disconnect(c.id, out)
    assert inp.sole_buffer is None
