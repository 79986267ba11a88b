"""Tests of rtcf.web.taps without an ORB peer: flattening samples to plotted numbers and the
per-port ring (decoding what the bounded queue holds, reading from a sequence number)."""

from __future__ import annotations

import numpy as np

from rtcf.corba.cdr import codec_for
from rtcf.datatypes import TimedDouble, TimedDoubleSeq, TimedPose3D, TimedString
from rtcf.tools.tap import SampleQueue
from rtcf.tools.values import to_plain
from rtcf.web.taps import MAX_VALUES, PortRing, flatten


def test_flatten_a_sequence_leaves_out_the_time():
    s = TimedDoubleSeq(data=[1.0, -2.5, 3.0])
    s.tm.sec = 7
    values, labels = flatten(to_plain(s))
    assert values == [1.0, -2.5, 3.0]
    assert labels == ["data[0]", "data[1]", "data[2]"]


def test_flatten_scalars_structs_and_strings():
    assert flatten(to_plain(TimedDouble(data=0.5))) == ([0.5], ["data"])
    pose = TimedPose3D()
    pose.data.position.x, pose.data.orientation.y = 1.5, -0.25
    values, labels = flatten(to_plain(pose))
    assert labels == ["data.position.x", "data.position.y", "data.position.z",
                      "data.orientation.r", "data.orientation.p", "data.orientation.y"]
    assert values == [1.5, 0.0, 0.0, 0.0, 0.0, -0.25]
    assert flatten(to_plain(TimedString(data="hello"))) == ([], [])


def test_flatten_cuts_long_sequences():
    values, labels = flatten(to_plain(TimedDoubleSeq(data=np.arange(500.0))))
    assert len(values) == len(labels) == MAX_VALUES
    assert values[-1] == MAX_VALUES - 1


class _FakeTap:
    """What PortRing needs of rtcf.tools.tap.Tap: the handle's data class and decode."""

    def __init__(self, cls):
        self.handle = type("H", (), {"data_cls": cls})
        self.codec = codec_for(cls, True)

    def decode(self, data, out=None):
        return self.codec.decode(data, out)


def _cdr(cls, **kw):
    return codec_for(cls, True).encode(cls(**kw))


def test_ring_decodes_the_queue_and_reads_since_a_sequence_number():
    q = SampleQueue(3)
    ring = PortRing("k", _FakeTap(TimedDoubleSeq), q)
    for i in range(5):                     # a full queue refuses and counts
        s = TimedDoubleSeq(data=[float(i)])
        s.tm.sec = 100 + i
        q.offer(("k", 1_000_000_000 * i, codec_for(TimedDoubleSeq, True).encode(s)))
    assert ring.dropped == 2
    assert ring.poll() == 3
    got = ring.since(0)
    assert [g[0] for g in got] == [1, 2, 3]
    assert [g[1] for g in got] == [100.0, 101.0, 102.0]        # the samples' own tm
    assert [g[2] for g in got] == [[0.0], [1.0], [2.0]]
    assert ring.labels == ["data[0]"]
    assert ring.since(2) == got[2:] and ring.since(3) == []
    q.offer(("k", 5_000_000_000, b"\x01"))                      # malformed: skipped
    q.offer(("k", 6_000_000_000, _cdr(TimedDoubleSeq, data=[9.0])))
    ring.poll()
    last = ring.since(3)
    assert len(last) == 1 and last[0][2] == [9.0]
    assert last[0][1] == 6.0               # tm 0: the receive time instead
