"""rtcf.tools.values: plain values, user values checked against a type, schemas."""

import json
import math

import numpy as np
import pytest

from rtcf.datatypes import TimedBoolean, TimedDouble, TimedDoubleSeq, TimedPose3D, TimedString
from rtcf.tools.model import Snapshot
from rtcf.tools.values import (ValueShapeError, from_plain, json_schema, omgidl_schema,
                               parse_value, schema_name, to_json_value, to_plain)


def test_round_trip():
    s = TimedPose3D()
    s.tm.sec, s.tm.nsec = 3, 4
    s.data.position.x = 1.5
    plain = to_plain(s)
    assert plain["data"]["position"]["x"] == 1.5 and plain["tm"] == {"sec": 3, "nsec": 4}
    assert from_plain(TimedPose3D, plain) == s
    json.dumps(plain)


def test_short_forms():
    assert list(parse_value(TimedDoubleSeq, "[1, 2.5]").data) == [1.0, 2.5]
    assert parse_value(TimedDouble, "0.5").data == 0.5
    assert parse_value(TimedString, "hello").data == "hello"
    v = parse_value(TimedDoubleSeq, '{"tm": {"sec": 1, "nsec": 2}, "data": [3]}')
    assert (v.tm.sec, v.tm.nsec, list(v.data)) == (1, 2, [3.0])


@pytest.mark.parametrize("cls,text,msg", [
    (TimedDoubleSeq, "[1, 'a']", r"TimedDoubleSeq.data\[1\]: expected a number, got 'a'"),
    (TimedDoubleSeq, "{x: 1}", "unknown member 'x' \\(TimedDoubleSeq has tm, data\\)"),
    (TimedDoubleSeq, "hello", "TimedDoubleSeq.data: expected a list of double"),
    (TimedDoubleSeq, "[1", "is not YAML/JSON"),
    (TimedDouble, "[1, 2]", "TimedDouble.data: expected a number"),
    (TimedBoolean, "1", "expected true or false"),
    (TimedPose3D, "{position: {x: 1, w: 2}}", "unknown member 'w'"),
    (TimedDoubleSeq, "{tm: {sec: -1}, data: []}", r"tm.sec: expected an integer in 0\.\."),
])
def test_wrong_shapes(cls, text, msg):
    with pytest.raises(ValueShapeError, match=msg):
        parse_value(cls, text)


def test_nonfinite_json():
    """NaN -> null, +-inf -> +-1e999: strict JSON, the three kept apart, read back as they
    were by Python's json (and rtcf's decoder maps null back to NaN)."""
    from rtcf.tools.mcapio import decode_message
    from rtcf.tools.values import json_text
    s = TimedDoubleSeq(data=[1.0, math.nan, np.inf, -np.inf])
    text = json_text(to_json_value(s), compact=True)
    assert '"data":[1.0,null,1e999,-1e999]' in text
    json.loads(text, parse_constant=lambda c: pytest.fail(f"non-JSON token {c}"))
    assert json.loads(text)["data"] == [1.0, None, math.inf, -math.inf]
    back = decode_message("json", TimedDoubleSeq, text.encode())
    assert back.data[0] == 1.0 and math.isnan(back.data[1])
    assert list(back.data[2:]) == [math.inf, -math.inf]
    assert to_json_value(TimedDoubleSeq(data=[1.0]))["data"] == [1.0]
    # strings that look like the placeholders stay strings
    assert json.loads(json_text({"a": "+inf", "b": [math.inf]})) == {"a": "+inf",
                                                                    "b": [math.inf]}
    # the schema says what comes for a double
    item = json_schema(TimedDoubleSeq)["properties"]["data"]["items"]
    assert item["type"] == "number" and "1e999" in item["$comment"]


@pytest.mark.parametrize("text,want", [
    ("[1e9, 2E-3, -1.5e+2, .5e1]", [1e9, 2e-3, -150.0, 5.0]),
    ("[NaN, Infinity, -Infinity, +Infinity]", [math.nan, math.inf, -math.inf, math.inf]),
    ("[.nan, .inf, -.inf, 1_000]", [math.nan, math.inf, -math.inf, 1000.0]),
    ('{"tm": {"sec": 1, "nsec": 0}, "data": [1e9, NaN]}', [1e9, math.nan]),
])
def test_values_take_json_numbers(text, want):
    got = list(parse_value(TimedDoubleSeq, text).data)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert (math.isnan(g) and math.isnan(w)) or g == w, (text, got)
    assert parse_value(TimedDouble, "1e9").data == 1e9


def test_schemas():
    idl = omgidl_schema(TimedPose3D)
    assert schema_name(TimedPose3D) == "RTC::TimedPose3D"
    # dependencies before use, the type last
    assert idl.index("struct Time ") < idl.index("struct Pose3D ") < \
        idl.index("struct TimedPose3D ")
    assert "sequence<double> data;" in omgidl_schema(TimedDoubleSeq)
    js = json_schema(TimedDoubleSeq)
    assert js["type"] == "object" and js["properties"]["data"]["items"]["type"] == "number"


def test_snapshot_json_round_trip():
    d = {"time": 1.0, "nameservers": ["h:1"], "errors": [],
         "components": [{"name": "a", "address": "h:1/a.rtc", "server": "h:1",
                         "path": "a.rtc", "ports": [
                             {"name": "out", "full_name": "a.out", "direction": "out",
                              "connectors": [{"id": "c", "name": "n", "ports": ["a.out"]}]}]}],
         "ecs": [{"id": "a:0", "owner": "a", "handle": 0, "kind": "PERIODIC", "rate": 100.0,
                  "running": True, "members": ["a"]}]}
    snap = Snapshot.from_dict(d)
    again = Snapshot.from_dict(json.loads(snap.to_json()))
    assert again == snap
    assert snap.connections()[0].id == "c" and snap.out_ports()[0][1].name == "out"


def test_orb_free_modules_do_not_import_omniorb():
    """address, model, values, mcapio and graph are usable without an ORB (the house keeps
    omniORB on the CORBA side: rtcf.corba, rtcf.tools.session, rtcf.tools.tap)."""
    import subprocess
    import sys
    code = ("import sys, rtcf.tools.address, rtcf.tools.model, rtcf.tools.values, "
            "rtcf.tools.mcapio, rtcf.tools.graph; print('omniORB' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr


def _random_plain(kind, rng):
    """A plain value of an IDL member kind: finite, huge, NaN and infinite floats, extreme
    integers, text that needs escaping."""
    from rtcf import datatypes as dt
    floats = [0.0, -0.0, 1.5, -2.25e-300, 1e308, 5e-324, math.nan, math.inf, -math.inf,
              0.1, 1 / 3, 123456789.0]
    texts = ["", "a", 'qu"ote\\', "tab\tnl\n", "é中\U0001f600", "\x01"]
    if kind in ("float", "double"):
        v = float(rng.choice(floats))
        return float(np.float32(v)) if kind == "float" and math.isfinite(v) and abs(v) < 1e38 \
            else (v if kind == "double" or not math.isfinite(v) else 0.5)
    ranges = {"short": (-2**15, 2**15 - 1), "ushort": (0, 2**16 - 1), "long": (-2**31, 2**31 - 1),
              "ulong": (0, 2**32 - 1), "longlong": (-2**63, 2**63 - 1),
              "ulonglong": (0, 2**64 - 1), "octet": (0, 255)}
    if kind in ranges:
        lo, hi = ranges[kind]
        return int(rng.choice([lo, hi, 0, (lo + hi) // 2]))
    if kind == "boolean":
        return bool(rng.integers(2))
    if kind in ("char", "wchar"):
        return str(rng.choice(["a", "\"", "\\", "\n"] if kind == "char" else ["a", "é", "中"]))
    if kind in ("string", "wstring"):
        return str(rng.choice(texts if kind == "wstring" else texts[:4] + ["\x01"]))
    if kind.startswith("seq:"):
        return [_random_plain(kind[4:], rng) for _ in range(int(rng.integers(0, 6)))]
    cls = dt.TYPES[kind]
    return {name: _random_plain(k, rng) for name, k in cls.FIELDS}


def test_the_compiled_json_encoder_writes_what_json_text_writes():
    """json_encoder(cls) (the recorder's per-type encoder) gives the same text as the
    general path, NaN / +-inf included, for every data type, on samples as CDR decodes them."""
    from rtcf import datatypes as dt
    from rtcf.corba.cdr import codec_for
    from rtcf.tools.values import json_encoder, json_text
    rng = np.random.default_rng(5)
    for name, cls in sorted(dt.TYPES.items()):
        codec = codec_for(cls, True)
        for _ in range(30):
            plain = _random_plain(name, rng)
            sample = codec.decode(codec.encode(from_plain(cls, plain)))
            assert json_encoder(cls)(sample) == json_text(to_json_value(sample),
                                                          compact=True), (name, plain)
    s = TimedDoubleSeq(data=[1e308, 1e308, -1e308])       # the sum overflows: all finite
    assert json_encoder(TimedDoubleSeq)(s).endswith('"data":[1e+308,1e+308,-1e+308]}')


def _same_json(a, b):
    """json.loads results equal, -0.0 told from 0.0 (== does not) and types kept."""
    if isinstance(a, float) or isinstance(b, float):
        return (type(a) is type(b) and a == b
                and math.copysign(1.0, a) == math.copysign(1.0, b))
    if isinstance(a, dict):
        return (type(b) is dict and list(a) == list(b)
                and all(_same_json(a[k], b[k]) for k in a))
    if isinstance(a, list):
        return type(b) is list and len(a) == len(b) and all(map(_same_json, a, b))
    return type(a) is type(b) and a == b


def test_the_recorders_json_bytes_read_back_as_the_compiled_encoders_text():
    """json_bytes_encoder(cls) (orjson on the common case, the compiled text otherwise)
    writes JSON that json.loads reads as the same value as json_encoder's text, members in
    the same order: every data type, NaN / +-inf / -0.0 / huge / tiny numbers, extreme
    integers, text with quotes, control characters, non-ASCII, the word null, empty and
    nested sequences; and random doubles of every magnitude, double and float sequences."""
    from rtcf import datatypes as dt
    from rtcf.corba.cdr import codec_for
    from rtcf.tools import values
    from rtcf.tools.values import json_bytes_encoder, json_encoder
    assert values._orjson is not None            # a dependency: the fast path is tested
    rng = np.random.default_rng(11)
    for name, cls in sorted(dt.TYPES.items()):
        codec = codec_for(cls, True)
        fast, text = json_bytes_encoder(cls), json_encoder(cls)
        for _ in range(30):
            plain = _random_plain(name, rng)
            sample = codec.decode(codec.encode(from_plain(cls, plain)))
            got = fast(sample)
            assert isinstance(got, bytes)
            assert _same_json(json.loads(got), json.loads(text(sample))), (name, plain)
    bits = rng.integers(0, 2**64, 5000, dtype=np.uint64).view(np.float64)
    bits32 = rng.integers(0, 2**32, 5000, dtype=np.uint32).view(np.float32)
    edge = [-0.0, 0.0, 5e-324, 1.7976931348623157e308, 1e-7, 1e16, 1e-5, 0.1]
    for cls, arrays in ((dt.TimedDoubleSeq, [bits[np.isfinite(bits)], np.array(edge)]),
                        (dt.TimedFloatSeq, [bits32[np.isfinite(bits32)],
                                            np.float32([0.1, -0.0, 1e-40, 3e38])])):
        codec = codec_for(cls, True)
        for a in arrays:
            sample = codec.decode(codec.encode(cls(data=a)))
            got = json.loads(json_bytes_encoder(cls)(sample))
            assert _same_json(got, json.loads(json_encoder(cls)(sample)))
            assert got["data"] == [float(x) for x in a]
    s = dt.TimedString(data='null "x"\u00e9\x01')      # orjson's text: the exact path
    assert json_bytes_encoder(dt.TimedString)(s) == json_encoder(dt.TimedString)(s).encode()
    s = TimedDoubleSeq(data=[1.0, math.nan, -math.inf])
    assert json_bytes_encoder(TimedDoubleSeq)(s).endswith(b'"data":[1.0,null,-1e999]}')


def test_the_recorders_json_messages_from_the_payload():
    """mcapio.json_message_encoder (the payload decoded straight to dicts and arrays, then
    orjson) reads back as the compiled text encoder's JSON of the decoded sample for every
    data type; a NaN or infinity, a float sequence, text orjson writes otherwise: the same
    value; a malformed payload (truncated, trailing bytes, a bad string length) raises the
    codec's ValueError."""
    from rtcf import datatypes as dt
    from rtcf.corba.cdr import codec_for, plain_decoder
    from rtcf.tools.mcapio import json_message_encoder
    from rtcf.tools.values import json_encoder
    rng = np.random.default_rng(12)
    for name, cls in sorted(dt.TYPES.items()):
        codec = codec_for(cls, True)
        assert plain_decoder(cls) is not None, name      # no shipped type falls back
        enc, text = json_message_encoder(cls), json_encoder(cls)
        for _ in range(30):
            payload = codec.encode(from_plain(cls, _random_plain(name, rng)))
            got = enc(payload)
            assert isinstance(got, bytes)
            assert _same_json(json.loads(got), json.loads(text(codec.decode(payload)))), name
            for bad in (payload[:-1], payload + b"\0" * 8):
                with pytest.raises(ValueError) as want:
                    codec.decode(bad)
                with pytest.raises(ValueError) as raised:
                    enc(bad)
                assert str(raised.value) == str(want.value), name
    codec = codec_for(dt.TimedFloatSeq, True)
    a = np.float32([0.1, -0.0, 1e-40, 3e38])
    assert json.loads(json_message_encoder(dt.TimedFloatSeq)(codec.encode(
        dt.TimedFloatSeq(data=a))))["data"] == [float(x) for x in a]
    codec = codec_for(TimedString, True)
    bad = bytearray(codec.encode(TimedString(data="abc")))
    bad[8:12] = (1000).to_bytes(4, "little")          # the string's length past the end
    with pytest.raises(ValueError):
        json_message_encoder(TimedString)(bytes(bad))
