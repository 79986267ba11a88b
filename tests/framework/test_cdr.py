"""rtcf.corba.cdr against omniORB's cdrMarshal/cdrUnmarshal, byte for byte.

omniORB leaves padding bytes uninitialised, so byte comparisons mask the pad positions that
an independent, simple layout walker below computes; ours must be zero there.
"""

import random
import struct

import numpy as np
import omniORB
import pytest

from rtcf import datatypes as dt
from rtcf.corba import cdr, idl, orb

SIZES = {"short": 2, "ushort": 2, "long": 4, "ulong": 4, "longlong": 8, "ulonglong": 8,
         "float": 4, "double": 8, "octet": 1, "boolean": 1, "char": 1}
RANGES = {"short": (-2**15, 2**15 - 1), "ushort": (0, 2**16 - 1), "long": (-2**31, 2**31 - 1),
          "ulong": (0, 2**32 - 1), "longlong": (-2**63, 2**63 - 1),
          "ulonglong": (0, 2**64 - 1), "octet": (0, 255)}


def _has_wide(cls):
    for _, kind in cls.FIELDS:
        k = kind[4:] if kind.startswith("seq:") else kind
        if k in ("wchar", "wstring") or (k in dt.TYPES and _has_wide(dt.TYPES[k])):
            return True
    return False


NARROW = sorted(n for n, c in dt.TYPES.items() if not _has_wide(c))
SEQ_LENGTHS = (0, 1, 3, 30)


@pytest.fixture(scope="module")
def rtc():
    orb.init_orb({})  # cdrMarshal needs an initialised ORB
    return idl.stub_module("RTC")


# -- random samples and their omniORB twins -----------------------------------------------

def _scalar(kind, rng):
    if kind in RANGES:
        return rng.randint(*RANGES[kind])
    if kind == "float":
        return float(np.float32(rng.uniform(-1e3, 1e3)))
    if kind == "double":
        return rng.uniform(-1e6, 1e6)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "char":
        return chr(rng.randint(1, 255))
    if kind == "string":
        return "".join(chr(rng.randint(32, 255)) for _ in range(rng.randint(0, 9)))
    raise AssertionError(kind)


def random_sample(cls, rng, n):
    values = {}
    for name, kind in cls.FIELDS:
        if kind.startswith("seq:"):
            elem = kind[4:]
            values[name] = [_scalar(elem, rng) for _ in range(n)]
        elif kind in dt.TYPES:
            values[name] = random_sample(dt.TYPES[kind], rng, n)
        else:
            values[name] = _scalar(kind, rng)
    return cls(**values)


def to_omni(sample, rtc):
    args = []
    for name, kind in type(sample).FIELDS:
        v = getattr(sample, name)
        if kind == "seq:octet":
            v = bytes(bytearray(v))
        elif kind == "seq:char":
            v = "".join(v)
        elif kind.startswith("seq:"):
            v = [x.item() if hasattr(x, "item") else x for x in v]
        elif kind in dt.TYPES:
            v = to_omni(v, rtc)
        args.append(v)
    return getattr(rtc, type(sample).__name__)(*args)


def from_omni(value, cls):
    values = {}
    for name, kind in cls.FIELDS:
        v = getattr(value, name)
        if kind == "seq:octet":
            v = list(v)
        elif kind == "seq:char":
            v = list(v)
        elif kind in dt.TYPES:
            v = from_omni(v, dt.TYPES[kind])
        values[name] = v
    return cls(**values)


def pad_offsets(sample):
    """Offsets of CDR padding bytes in the encoding of sample: a plain reference walker."""
    pads, pos = [], 0

    def align(size):
        nonlocal pos
        while pos % size:
            pads.append(pos)
            pos += 1

    def walk(value, cls):
        nonlocal pos
        for name, kind in cls.FIELDS:
            v = getattr(value, name)
            if kind in SIZES:
                align(SIZES[kind])
                pos += SIZES[kind]
            elif kind == "string":
                align(4)
                pos += 4 + len(v) + 1
            elif kind in dt.TYPES:
                walk(v, dt.TYPES[kind])
            elif kind == "seq:string":
                align(4)
                pos += 4
                for s in v:
                    align(4)
                    pos += 4 + len(s) + 1
            else:
                elem = SIZES[kind[4:]]
                align(4)
                pos += 4
                if len(v):
                    align(elem)
                    pos += elem * len(v)
    walk(sample, type(sample))
    return pads, pos


def _tc(rtc, cls):
    return getattr(rtc, f"_tc_{cls.__name__}")


@pytest.mark.parametrize("name", NARROW)
@pytest.mark.parametrize("little", [True, False])
def test_matches_omniorb(rtc, name, little):
    cls = dt.TYPES[name]
    codec = cdr.codec_for(cls, little)
    tc = _tc(rtc, cls)
    rng = random.Random(f"{name}{little}")
    has_seq = any(k.startswith("seq:") for _, k in cls.FIELDS)
    for n in SEQ_LENGTHS if has_seq else (0, 0, 0):
        sample = random_sample(cls, rng, n)
        omni_value = to_omni(sample, rtc)
        theirs = omniORB.cdrMarshal(tc, omni_value, little)
        ours = codec.encode(sample)
        pads, size = pad_offsets(sample)
        assert len(ours) == len(theirs) == size
        masked = bytearray(theirs)
        for p in pads:
            assert ours[p] == 0, f"pad byte at {p} not zero"
            masked[p] = 0
        assert ours == bytes(masked)
        # both decoders agree on both encodings
        assert codec.decode(theirs) == sample
        assert from_omni(omniORB.cdrUnmarshal(tc, ours, little), cls) == sample


def test_timed_double_seq_layout():
    s = dt.TimedDoubleSeq(dt.Time(7, 9), np.arange(30.0))
    b = cdr.codec_for(dt.TimedDoubleSeq).encode(s)
    assert len(b) == 256
    assert struct.unpack_from("<III", b) == (7, 9, 30)
    assert b[12:16] == bytes(4)
    assert np.array_equal(np.frombuffer(b, "<f8", 30, 16), np.arange(30.0))
    empty = cdr.codec_for(dt.TimedDoubleSeq).encode(dt.TimedDoubleSeq())
    assert empty == bytes(12)  # an empty sequence adds no padding


def test_decode_into_reuses_arrays():
    codec = cdr.codec_for(dt.TimedDoubleSeq)
    out = dt.TimedDoubleSeq(data=np.zeros(5))
    arr, tm = out.data, out.tm
    src = dt.TimedDoubleSeq(dt.Time(1, 2), [1, 2, 3, 4, 5])
    assert codec.decode(codec.encode(src), out) is out
    assert out.data is arr and out.tm is tm and out == src
    src.data = np.arange(6.0)  # other length: a new array
    codec.decode(codec.encode(src), out)
    assert out == src and out.data is not arr and out.data.flags.writeable
    with pytest.raises(TypeError):
        codec.decode(codec.encode(src), dt.TimedLongSeq())


@pytest.mark.parametrize("little", [True, False])
def test_decode_into_arrays_it_cannot_fill(little):
    """Arrays the in-place copy must not write into get a new array (or, a writeable
    strided view of the right length, the values in place); the value decodes the same."""
    codec = cdr.codec_for(dt.TimedDoubleSeq, little)
    src = dt.TimedDoubleSeq(dt.Time(1, 2), [1.5, -2.0, 3.25])
    data = codec.encode(src)
    frozen = np.zeros(3)
    frozen.flags.writeable = False
    strided = np.zeros(6)[::2]
    grid = np.zeros((3, 1))
    others = [frozen, np.zeros(3, np.int64), np.zeros(4), grid, np.zeros(0), strided]
    for arr in others:
        out = dt.TimedDoubleSeq(data=arr)
        out.data = arr
        codec.decode(data, out)
        assert out == src and out.data.dtype == np.float64 and out.data.ndim == 1
        assert out.data is strided or out.data is not arr
    assert not frozen.any() and not grid.any()
    assert strided.tolist() == [1.5, -2.0, 3.25]
    same = np.zeros(3)
    out = dt.TimedDoubleSeq(data=same)
    out.data = same
    codec.decode(data, out)
    assert out.data is same and same.tolist() == [1.5, -2.0, 3.25]
    empty = codec.encode(dt.TimedDoubleSeq())
    assert codec.decode(empty, out).data.shape == (0,)


def test_decode_into_refuses_bad_payloads_unchanged():
    codec = cdr.codec_for(dt.TimedLongSeq)
    data = codec.encode(dt.TimedLongSeq(data=[1, 2, 3]))
    out = dt.TimedLongSeq(data=np.zeros(3, np.int32))
    for bad in (data[:-1], data[:10], data + b"\0"):
        with pytest.raises(ValueError, match="CDR TimedLongSeq"):
            codec.decode(bad, out)
    too_long = struct.pack("<III", 0, 0, 1000) + data[12:]
    with pytest.raises(ValueError, match="needs 4000 bytes"):
        codec.decode(too_long, out)
    assert codec.decode(memoryview(data), out).data.tolist() == [1, 2, 3]


def test_decoded_arrays_are_owned_and_native():
    codec = cdr.codec_for(dt.TimedFloatSeq, little=False)
    data = codec.encode(dt.TimedFloatSeq(data=[1.5, -2.0]))
    v = codec.decode(data)
    assert v.data.dtype == np.dtype("<f4") and v.data.flags.writeable
    assert v.data.tolist() == [1.5, -2.0]


def test_accepts_lists_and_other_dtypes():
    codec = cdr.codec_for("IDL:RTC/TimedDoubleSeq:1.0")
    s = dt.TimedDoubleSeq()
    s.data = [1, 2, 3]
    assert codec.decode(codec.encode(s)).data.tolist() == [1.0, 2.0, 3.0]
    s.data = np.array([1, 2], dtype=np.int32)
    assert codec.decode(codec.encode(s)).data.tolist() == [1.0, 2.0]


def test_codec_cached():
    assert cdr.codec_for(dt.TimedLong) is cdr.codec_for("TimedLong")
    assert cdr.codec_for(dt.TimedLong) is not cdr.codec_for(dt.TimedLong, little=False)


@pytest.mark.parametrize("name", ["TimedDoubleSeq", "TimedString", "TimedStringSeq",
                                  "TimedPose3D", "TimedOctetSeq", "TimedCharSeq"])
def test_truncated_input_raises_value_error(name):
    cls = dt.TYPES[name]
    codec = cdr.codec_for(cls)
    data = codec.encode(random_sample(cls, random.Random(1), 5))
    for cut in range(len(data)):
        with pytest.raises(ValueError):
            codec.decode(data[:cut])
    with pytest.raises(ValueError, match="trailing"):
        codec.decode(data + b"\0")


def test_absurd_lengths_raise_without_allocating():
    huge = struct.pack("<III", 1, 2, 0xFFFFFFFF) + bytes(16)
    for name in ("TimedDoubleSeq", "TimedOctetSeq", "TimedStringSeq", "TimedString",
                 "TimedBooleanSeq", "TimedCharSeq"):
        with pytest.raises(ValueError):
            cdr.codec_for(name).decode(huge)


def test_bad_strings():
    codec = cdr.codec_for(dt.TimedString)
    with pytest.raises(ValueError, match="NUL"):
        codec.decode(struct.pack("<III", 0, 0, 2) + b"ab")
    with pytest.raises(ValueError, match="length 0"):
        codec.decode(struct.pack("<III", 0, 0, 0))
    with pytest.raises(ValueError, match="ISO-8859-1"):
        codec.encode(dt.TimedString(data="\u4e00"))


def test_out_of_range_value_raises_value_error():
    with pytest.raises(ValueError):
        cdr.codec_for(dt.TimedUShort).encode(dt.TimedUShort(data=70000))


@pytest.mark.parametrize("little", [True, False])
def test_wide_types_match_omniorb_decoding(rtc, little):
    for cls, value in ((dt.TimedWString, "h\u00e9\u4e00"), (dt.TimedWChar, "\u4e00"),
                       (dt.TimedWString, "")):
        sample = cls(dt.Time(3, 4), value)
        ours = cdr.codec_for(cls, little).encode(sample)
        tc = _tc(rtc, cls)
        theirs = omniORB.cdrMarshal(tc, to_omni(sample, rtc), little)
        assert ours == theirs  # no padding in these layouts
        assert cdr.codec_for(cls, little).decode(theirs) == sample
        if cls is dt.TimedWString:  # omniORB cannot unmarshal its own bare wchar
            assert omniORB.cdrUnmarshal(tc, ours, little).data == value
