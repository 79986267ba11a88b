"""Tests of rtcf.datatypes: construction, defaults, equality, copy/assign without aliasing,
type_by_name spellings, stamp/time_of."""

from __future__ import annotations

import numpy as np
import pytest

from rtcf import datatypes as dt
from rtcf.datatypes import (DataType, TYPES, Time, TimedBoolean, TimedDouble, TimedDoubleSeq,
                            TimedLong, TimedLongSeq, TimedPoint3D, TimedPose3D, TimedString,
                            default_of, stamp, time_of, time_parts, type_by_name)


# -- construction and defaults ----------------------------------------------------------------

def test_defaults():
    s = TimedDoubleSeq()
    assert (s.tm.sec, s.tm.nsec) == (0, 0)
    assert isinstance(s.data, np.ndarray) and s.data.dtype == np.float64 and s.data.size == 0
    assert TimedDouble().data == 0.0
    assert TimedLong().data == 0 and TimedBoolean().data is False
    assert TimedString().data == ""
    p = TimedPose3D()
    assert isinstance(p.data, dt.Pose3D)
    assert (p.data.position.x, p.data.orientation.y) == (0.0, 0.0)
    assert TimedLongSeq().data.dtype == np.dtype("<i4")
    assert dt.TimedOctetSeq().data.dtype == np.uint8
    assert dt.TimedStringSeq().data == []
    # each default is a fresh object
    a, b = TimedPose3D(), TimedPose3D()
    assert a.data is not b.data and a.tm is not b.tm


def test_construction_keyword_and_positional():
    s = TimedDoubleSeq(Time(1, 2), [1, 2, 3])
    assert (s.tm.sec, s.tm.nsec) == (1, 2)
    assert s.data.dtype == np.float64 and s.data.tolist() == [1.0, 2.0, 3.0]
    k = TimedDoubleSeq(data=np.arange(6).reshape(2, 3))
    assert k.data.shape == (6,)                        # sequences are flat
    ints = TimedLongSeq(data=[1.9, -2])
    assert ints.data.dtype == np.dtype("<i4") and ints.data.tolist() == [1, -2]
    pt = TimedPoint3D(data=dt.Point3D(1.0, 2.0, 3.0))
    assert (pt.data.x, pt.data.y, pt.data.z) == (1.0, 2.0, 3.0)


def test_construction_copies_the_input_array():
    src = np.array([1.0, 2.0])
    s = TimedDoubleSeq(data=src)
    src[0] = 99.0
    assert s.data[0] == 1.0
    assert not np.shares_memory(s.data, src)


def test_construction_errors():
    with pytest.raises(TypeError, match="at most 2 positional"):
        TimedDouble(Time(), 1.0, 2.0)
    with pytest.raises(TypeError, match="'value'"):
        TimedDouble(value=1.0)
    with pytest.raises(TypeError, match="'data'"):
        TimedDouble(Time(), 1.0, data=2.0)              # repeated
    with pytest.raises(TypeError, match="expected Pose3D"):
        TimedPose3D(data=dt.Point3D())


def test_fields_and_ids_follow_the_idl():
    assert TimedDoubleSeq.FIELDS == (("tm", "Time"), ("data", "seq:double"))
    assert TimedDoubleSeq.REPO_ID == "IDL:RTC/TimedDoubleSeq:1.0"
    assert TimedDoubleSeq.IDL_NAME == "RTC/TimedDoubleSeq"
    assert [f for f, _ in dt.Pose3D.FIELDS] == ["position", "orientation"]
    assert [f for f, _ in dt.Orientation3D.FIELDS] == ["r", "p", "y"]
    assert "TimedState" in TYPES and "TimedStateSeq" not in TYPES
    assert all(issubclass(t, DataType) for t in TYPES.values())


def test_default_of():
    assert default_of("double") == 0.0 and default_of("string") == ""
    assert default_of("seq:ushort").dtype == np.dtype("<u2")
    assert default_of("seq:string") == []
    assert default_of("Point3D") == dt.Point3D()


# -- equality --------------------------------------------------------------------------------------

def test_equality():
    a = TimedDoubleSeq(Time(1, 2), [1, 2])
    assert a == TimedDoubleSeq(Time(1, 2), [1.0, 2.0])
    assert a != TimedDoubleSeq(Time(1, 3), [1, 2])
    assert a != TimedDoubleSeq(Time(1, 2), [1, 2, 3])
    assert a != TimedDoubleSeq(Time(1, 2), [1, 5])
    assert TimedLong(data=1) != TimedDouble(data=1.0)      # different types never equal
    assert TimedPose3D() == TimedPose3D()
    p = TimedPose3D()
    p.data.orientation.y = 0.5
    assert p != TimedPose3D()
    with pytest.raises(TypeError):
        hash(a)                                            # mutable: unhashable


def test_repr_names_the_members():
    r = repr(TimedDouble(Time(1, 0), 2.5))
    assert r.startswith("TimedDouble(") and "data=2.5" in r and "sec=1" in r


# -- copy / assign -----------------------------------------------------------------------------------

def test_copy_is_deep():
    a = TimedPose3D()
    a.data.position.x = 1.0
    b = a.copy()
    assert b == a and b is not a
    assert b.data is not a.data and b.data.position is not a.data.position
    b.data.position.x = 2.0
    assert a.data.position.x == 1.0
    s = TimedDoubleSeq(data=[1, 2])
    c = s.copy()
    c.data[0] = 5.0
    assert s.data[0] == 1.0
    strs = dt.TimedStringSeq(data=["a"])
    cs = strs.copy()
    cs.data.append("b")
    assert strs.data == ["a"]


def test_assign_in_place_when_shapes_match():
    dst = TimedDoubleSeq(data=[0, 0, 0])
    buf = dst.data
    src = TimedDoubleSeq(Time(3, 4), [1, 2, 3])
    dst.assign(src)
    assert dst == src
    assert dst.data is buf                               # reused, no allocation
    assert not np.shares_memory(dst.data, src.data)
    src.data[:] = 7.0
    src.tm.sec = 9
    assert dst.data.tolist() == [1.0, 2.0, 3.0] and dst.tm.sec == 3


def test_assign_reallocates_when_the_shape_differs():
    dst = TimedDoubleSeq(data=[0, 0])
    old = dst.data
    src = TimedDoubleSeq(data=[1, 2, 3])
    dst.assign(src)
    assert dst.data.tolist() == [1.0, 2.0, 3.0]
    assert dst.data is not old and not np.shares_memory(dst.data, src.data)
    src.data[0] = -1.0
    assert dst.data[0] == 1.0


def test_assign_of_nested_structs_is_in_place():
    dst = TimedPose3D()
    inner, tm = dst.data, dst.tm
    src = TimedPose3D()
    src.data.position.z = 1.25
    src.tm.nsec = 10
    dst.assign(src)
    assert dst == src
    assert dst.data is inner and dst.tm is tm
    assert dst.data is not src.data
    src.data.position.z = 0.0
    assert dst.data.position.z == 1.25


def test_assign_of_a_list_sequence_copies():
    dst, src = dt.TimedStringSeq(), dt.TimedStringSeq(data=["a", "b"])
    dst.assign(src)
    assert dst.data == ["a", "b"] and dst.data is not src.data


def test_assign_converts_the_dtype_when_reallocating():
    dst = TimedLongSeq(data=[0])
    src = TimedLongSeq()
    src.data = np.array([1.0, 2.0])                      # a float array slipped in
    dst.assign(src)
    assert dst.data.dtype == np.dtype("<i4") and dst.data.tolist() == [1, 2]


def test_assign_converts_the_dtype_in_place():
    dst = TimedLongSeq(data=[0, 0])
    src = TimedLongSeq()
    src.data = np.array([1.0, 2.0])
    dst.assign(src)
    assert dst.data.dtype == np.dtype("<i4") and dst.data.tolist() == [1, 2]


# -- type_by_name -------------------------------------------------------------------------------------

@pytest.mark.parametrize("spelling", [
    "TimedDoubleSeq", "RTC/TimedDoubleSeq", "RTC::TimedDoubleSeq",
    "IDL:RTC/TimedDoubleSeq:1.0",
])
def test_type_by_name_spellings(spelling):
    assert type_by_name(spelling) is TimedDoubleSeq


def test_type_by_name_for_every_type():
    for name, cls in TYPES.items():
        assert type_by_name(name) is cls
        assert type_by_name(cls.REPO_ID) is cls
        assert type_by_name(f"RTC::{name}") is cls


@pytest.mark.parametrize("bad", ["TimedFoo", "", "IDL:RTC/Nope:1.0", "timeddoubleseq"])
def test_type_by_name_unknown(bad):
    with pytest.raises(LookupError, match=repr(bad).replace("(", r"\(")):
        type_by_name(bad)


# -- stamp / time_of ------------------------------------------------------------------------------------

def test_stamp_and_time_of():
    s = TimedDouble()
    stamp(s, 1234.5)
    assert (s.tm.sec, s.tm.nsec) == (1234, 500_000_000)
    assert time_of(s) == 1234.5
    stamp(s, 7.0)
    assert (s.tm.sec, s.tm.nsec) == (7, 0)
    t = 1_700_000_000.123456
    stamp(s, t)
    assert s.tm.sec == 1_700_000_000
    assert 0 <= s.tm.nsec < 1_000_000_000
    assert time_of(s) == pytest.approx(t, abs=1e-6)
    stamp(s, 5.999999999999)          # the nearest nanosecond is the next second
    assert (s.tm.sec, s.tm.nsec) == (6, 0)
    assert time_of(TimedDouble(Time(2, 250_000_000))) == 2.25


def test_stamps_round_to_the_nearest_nanosecond():
    """Truncating the seconds made 19.99 s 19.989999999 and 39 % of 1 kHz instants
    1 ns short. Every instant k / 1000 of 20 s stamps exactly."""
    s = TimedDouble()
    stamp(s, 19.99)
    assert (s.tm.sec, s.tm.nsec) == (19, 990_000_000)
    short = 0
    for k in range(20_000):
        stamp(s, k / 1000)
        short += (s.tm.sec, s.tm.nsec) != (k // 1000, (k % 1000) * 1_000_000)
    assert short == 0
    stamp(s, 5.9999999999)            # rounds up into the next second, never nsec = 1e9
    assert (s.tm.sec, s.tm.nsec) == (6, 0)
    assert time_parts(0.0000000004) == (0, 0) and time_parts(2.0000000006) == (2, 1)


def test_time_parts_of_repeated_and_alternating_times_are_each_times_own():
    # the last answer is kept for the next call with the same time: never another time's
    ts = [0.0, 0.001, 0.001, 19.99, 0.001, 19.99, 19.99, 2.0000000006, 3, 3.0, 0.0]
    got = [time_parts(t) for t in ts]
    assert got == [(0, 0), (0, 1_000_000), (0, 1_000_000), (19, 990_000_000), (0, 1_000_000),
                   (19, 990_000_000), (19, 990_000_000), (2, 1), (3, 0), (3, 0), (0, 0)]
