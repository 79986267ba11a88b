"""Samples as plain values, values typed by a user checked against a data type, and the
schemas (JSON Schema, OMG IDL) that describe a type to MCAP readers. No ORB here.

``to_plain(sample)`` gives dicts, lists, numbers and strings (numeric sequences as lists);
``from_plain(cls, value)`` builds a sample from such a value (YAML/JSON typed by a user)
and raises ValueError naming the member and the bad value; ``json_schema(cls)`` and
``omgidl_schema(cls)`` describe the type for Foxglove, Lichtblick and PlotJuggler.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import numpy as np

from rtcf import datatypes as dt
from rtcf.errors import ValueShapeError, show_value

__all__ = ["to_plain", "to_json_value", "json_text", "json_encoder", "json_tree",
           "json_bytes_encoder", "from_plain", "parse_value",
           "json_schema", "omgidl_schema", "schema_name", "ValueShapeError"]


_INT_RANGE = {"short": (-2**15, 2**15 - 1), "ushort": (0, 2**16 - 1),
              "long": (-2**31, 2**31 - 1), "ulong": (0, 2**32 - 1),
              "longlong": (-2**63, 2**63 - 1), "ulonglong": (0, 2**64 - 1),
              "octet": (0, 255)}
_FLOATS = ("float", "double")


def to_plain(sample: Any) -> Any:
    """A sample (or a member of it) as JSON-able Python values."""
    if isinstance(sample, dt.DataType):
        return {name: to_plain(getattr(sample, name)) for name, _ in sample.FIELDS}
    if isinstance(sample, np.ndarray):
        return sample.tolist()
    if isinstance(sample, list):
        return [to_plain(v) for v in sample]
    if isinstance(sample, np.generic):
        return sample.item()
    return sample


# JSON has no NaN and no infinity. rtcf writes +inf and -inf as the numbers 1e999 and -1e999
# (beyond the double range: every JSON reader, Python's json, the browser's JSON.parse,
# nlohmann::json, reads them back as +-inf, and they are numbers to a JSON Schema) and NaN,
# for which no JSON number exists, as null.
_POS_INF = "\x00+inf\x00"          # placeholders (IDL strings hold no NUL character)
_NEG_INF = "\x00-inf\x00"
_PLACEHOLDERS = {json.dumps(_POS_INF): "1e999", json.dumps(_NEG_INF): "-1e999"}
_PLACEHOLDER_RE = re.compile("|".join(re.escape(k) for k in _PLACEHOLDERS))


def _json_safe(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None if math.isnan(v) else (_POS_INF if v > 0 else _NEG_INF)
    if isinstance(v, list):
        return [_json_safe(x) for x in v]
    if isinstance(v, tuple):
        return [_json_safe(x) for x in v]
    if isinstance(v, dict):
        return {k: _json_safe(x) for k, x in v.items()}
    return v


def to_json_value(sample: Any) -> Any:
    """to_plain, with NaN as None (JSON null); infinities stay floats (``json_text`` writes
    them as +-1e999)."""
    plain = to_plain(sample)
    return _nan_none(plain) if _has_nonfinite(sample) else plain


def _nan_none(v: Any) -> Any:
    if isinstance(v, float) and math.isnan(v):
        return None
    if isinstance(v, list):
        return [_nan_none(x) for x in v]
    if isinstance(v, dict):
        return {k: _nan_none(x) for k, x in v.items()}
    return v


def json_text(value: Any, compact: bool = False) -> str:
    """``value`` (plain data, numbers of any kind) as strict JSON text: NaN as null, +-inf
    as +-1e999 (see above), never the ``NaN`` / ``Infinity`` tokens Python writes by
    default and no JSON parser reads."""
    text = json.dumps(_json_safe(value), allow_nan=False,
                      separators=(",", ":") if compact else None)
    if "\\u0000" in text:
        text = _PLACEHOLDER_RE.sub(lambda m: _PLACEHOLDERS[m.group(0)], text)
    return text


# -- JSON text of a decoded sample, generated per type ---------------------------------------
# The recorder turns every sample into JSON; walking it as dicts and lists, then through
# json.dumps, cost ten times the MCAP writing. ``json_encoder(cls)`` compiles, once per type,
# a function writing the same text as ``json_text(to_json_value(sample), compact=True)``
# straight from the members: floats as Python writes them (json.dumps does the same), NaN as
# null, +-inf as +-1e999, strings escaped as json.dumps escapes them. It takes samples as
# the CDR codec decodes them (Python int / float / bool / str scalars, numpy sequences).

from json.encoder import encode_basestring_ascii as _json_str  # noqa: E402

_float_repr = float.__repr__
_int_repr = int.__repr__


def _json_float(x: float) -> str:
    if x == x and x not in (math.inf, -math.inf):
        return _float_repr(x)
    return "null" if x != x else ("1e999" if x > 0 else "-1e999")


def _json_floats(values: list) -> str:
    """A list of floats, comma-separated (one sum decides whether any is not finite)."""
    if math.isfinite(sum(values)):
        return ",".join(map(_float_repr, values))
    return ",".join(map(_json_float, values))


def _json_bool(v: Any) -> str:
    return "true" if v else "false"


_JSON_HELPERS = {"_f": _json_float, "_fs": _json_floats, "_b": _json_bool, "_s": _json_str,
                 "_i": _int_repr, "_ir": lambda v: ",".join(map(_int_repr, v)),
                 "_bs": lambda v: ",".join(map(_json_bool, v)),
                 "_ss": lambda v: ",".join(map(_json_str, v))}
_JSON_ENCODERS: dict[type, Any] = {}


def json_encoder(cls: type) -> Any:
    """The compiled ``sample -> JSON text`` of a data type (see above). Runs in: any thread."""
    fn = _JSON_ENCODERS.get(cls)
    if fn is not None:
        return fn
    parts: list[str] = []          # expressions of the text, in order

    def text(t: str) -> None:
        if parts and parts[-1].startswith("'"):
            parts[-1] = repr(eval(parts[-1]) + t)       # noqa: S307 - our own literal
        else:
            parts.append(repr(t))

    def struct(fields: tuple, path: str) -> None:
        text("{")
        for i, (name, kind) in enumerate(fields):
            text(("," if i else "") + _json_str(name) + ":")
            member(kind, f"{path}.{name}")
        text("}")

    def member(kind: str, ref: str) -> None:
        if kind in _FLOATS:
            parts.append(f"_f({ref})")
        elif kind in _INT_RANGE:
            parts.append(f"_i({ref})")
        elif kind == "boolean":
            parts.append(f"_b({ref})")
        elif kind in ("char", "wchar", "string", "wstring"):
            parts.append(f"_s({ref})")
        elif kind.startswith("seq:"):
            elem = kind[4:]
            fn = ("_fs" if elem in _FLOATS else "_ir" if elem in _INT_RANGE else
                  "_bs" if elem == "boolean" else
                  "_ss" if elem in ("char", "wchar", "string", "wstring") else None)
            if fn is None:
                raise LookupError(elem)
            text("[")
            conv = f"{ref}.tolist()" if elem in dt.NUMPY_KINDS else ref
            parts.append(f"{fn}({conv})")
            text("]")
        elif kind in dt.TYPES:
            struct(dt.TYPES[kind].FIELDS, ref)
        else:
            raise LookupError(kind)

    try:
        struct(cls.FIELDS, "s")
    except LookupError:            # a member kind not compiled: the general path
        fn = lambda s: json_text(to_json_value(s), compact=True)  # noqa: E731
    else:
        src = f"def enc(s):\n    return {' + '.join(parts)}\n"
        env = dict(_JSON_HELPERS)
        exec(compile(src, f"<json {cls.__name__}>", "exec"), env)  # noqa: S102 - from FIELDS
        fn = env["enc"]
    _JSON_ENCODERS[cls] = fn
    return fn


# -- the recorder's JSON bytes: orjson on the common case ------------------------------------
# Python writes a double with dtoa's shortest round-trip digits, about 1 us per double on a
# slow core: a 30-double sample spent 30-40 us there, 4-5x the MCAP writing. orjson (Rust)
# writes the same shortest round-trip digits (its exponents differ: 1e-7 for 1e-07, 0.00001
# for 1e-05; every JSON reader reads the same double) and takes numpy arrays whole. It writes
# NaN and +-inf as null, where rtcf writes null and +-1e999: an output holding ``null``
# (a NaN or infinity, or a string holding the word) goes through ``json_encoder`` instead,
# so does a value orjson refuses. ``json_tree(cls)`` compiles, once per type, the function
# giving orjson a decoded sample as dicts (members in order), numpy arrays and lists.

try:
    import orjson as _orjson
except ImportError:          # not installed: json_bytes_encoder is json_encoder's text
    _orjson = None

_F8 = np.dtype("<f8")
_TREES: dict[type, Any] = {}


def json_tree(cls: type) -> Any:
    """The compiled ``sample -> dicts, lists and numpy arrays`` of a data type, what orjson
    writes as the JSON of ``json_encoder`` (float sequences as float64 arrays: a float32
    array would be written with float32's shorter digits, not the double's)."""
    fn = _TREES.get(cls)
    if fn is not None:
        return fn
    env: dict[str, Any] = {"_F8": _F8}

    def member(kind: str, ref: str) -> str:
        if kind.startswith("seq:"):
            elem = kind[4:]
            if elem == "float":
                return f"{ref}.astype(_F8)"
            if elem in dt.TYPES:
                sub = f"_t{len(env)}"
                env[sub] = json_tree(dt.TYPES[elem])
                return f"[{sub}(e) for e in {ref}]"
            return ref
        if kind in dt.TYPES:
            return struct(dt.TYPES[kind].FIELDS, ref)
        return ref

    def struct(fields: tuple, ref: str) -> str:
        return "{" + ", ".join(f"{name!r}: {member(kind, f'{ref}.{name}')}"
                               for name, kind in fields) + "}"

    src = f"def tree(s):\n    return {struct(cls.FIELDS, 's')}\n"
    exec(compile(src, f"<json tree {cls.__name__}>", "exec"), env)  # noqa: S102 - from FIELDS
    fn = _TREES[cls] = env["tree"]
    return fn


def json_bytes_encoder(cls: type) -> Any:
    """``sample -> UTF-8 JSON`` of a data type, decoding (``json.loads``) to the value of
    ``json_encoder(cls)``'s text (see above). Runs in: any thread."""
    text = json_encoder(cls)
    if _orjson is None:
        return lambda s: text(s).encode()
    tree, dumps, opt = json_tree(cls), _orjson.dumps, _orjson.OPT_SERIALIZE_NUMPY
    refused = (TypeError, ValueError)

    def encode(s: Any) -> bytes:
        try:
            out = dumps(tree(s), option=opt)
        except refused:                  # orjson's JSONEncodeError is a TypeError
            return text(s).encode()
        if b"null" in out:
            return text(s).encode()
        return out
    return encode


def _has_nonfinite(sample: Any) -> bool:
    for name, kind in sample.FIELDS:
        v = getattr(sample, name)
        if isinstance(v, np.ndarray):
            if v.dtype.kind == "f" and v.size and not np.isfinite(v).all():
                return True
        elif isinstance(v, float):
            if not math.isfinite(v):
                return True
        elif isinstance(v, dt.DataType):
            if _has_nonfinite(v):
                return True
        elif isinstance(v, list) and v and isinstance(v[0], dt.DataType):
            if any(_has_nonfinite(x) for x in v):
                return True
    return False


def _bad(where: str, want: str, got: Any) -> ValueShapeError:
    return ValueShapeError(f"{where}: expected {want}, got {show_value(got)}")


def _scalar(kind: str, v: Any, where: str) -> Any:
    if kind in _FLOATS:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise _bad(where, "a number", v)
        return float(v)
    if kind in _INT_RANGE:
        if isinstance(v, bool) or not isinstance(v, int):
            if isinstance(v, float) and v.is_integer():
                v = int(v)
            else:
                raise _bad(where, f"an integer ({kind})", v)
        lo, hi = _INT_RANGE[kind]
        if not lo <= v <= hi:
            raise _bad(where, f"an integer in {lo}..{hi} ({kind})", v)
        return v
    if kind == "boolean":
        if not isinstance(v, bool):
            raise _bad(where, "true or false", v)
        return v
    if kind in ("char", "wchar"):
        if not isinstance(v, str) or len(v) != 1:
            raise _bad(where, "one character", v)
        if kind == "char" and ord(v) > 255:
            raise _bad(where, "an ISO-8859-1 character", v)
        return v
    if kind in ("string", "wstring"):
        if not isinstance(v, str):
            raise _bad(where, "a string", v)
        if kind == "string":
            try:
                v.encode("latin-1")
            except UnicodeEncodeError:
                raise _bad(where, "ISO-8859-1 text", v) from None
        return v
    raise _bad(where, f"a value of unsupported kind {kind}", v)


def _member(kind: str, v: Any, where: str) -> Any:
    if kind.startswith("seq:"):
        elem = kind[4:]
        if isinstance(v, (str, bytes, dict)) or not hasattr(v, "__iter__"):
            raise _bad(where, f"a list of {elem}", v)
        items = [_member(elem, x, f"{where}[{i}]") for i, x in enumerate(v)]
        if elem in dt.NUMPY_KINDS:
            return np.array(items, dtype=dt.NUMPY_KINDS[elem]).reshape(-1)
        return items
    if kind in dt.TYPES:
        return _struct(dt.TYPES[kind], v, where)
    return _scalar(kind, v, where)


def _struct(cls: type, v: Any, where: str) -> Any:
    names = [n for n, _ in cls.FIELDS]
    if not isinstance(v, dict):
        raise _bad(where, f"a mapping with members {', '.join(names)}", v)
    unknown = [k for k in v if k not in names]
    if unknown:
        raise ValueShapeError(f"{where}: unknown member {unknown[0]!r} "
                              f"({cls.__name__} has {', '.join(names)})")
    out = cls()
    for name, kind in cls.FIELDS:
        if name in v:
            setattr(out, name, _member(kind, v[name], f"{where}.{name}"))
    return out


def from_plain(cls: type, value: Any, where: str | None = None) -> Any:
    """A sample of ``cls`` from a plain value. Besides the full mapping (``{tm: {sec,
    nsec}, data: ...}``, members left out keep their defaults) a Timed type takes its data
    alone: ``[1, 2, 3]`` for a TimedDoubleSeq, ``0.5`` for a TimedDouble, ``{position:
    ..., orientation: ...}`` for a TimedPose3D. ValueShapeError names what does not fit."""
    where = where or cls.__name__
    names = [n for n, _ in cls.FIELDS]
    if names == ["tm", "data"]:
        data_is_struct = dict(cls.FIELDS)["data"] in dt.TYPES
        if not isinstance(value, dict) or (data_is_struct and value and
                                           not set(value) <= {"tm", "data"}):
            value = {"data": value}
    return _struct(cls, value, where)


def _value_loader() -> type:
    """PyYAML's safe loader reading numbers as JSON and YAML 1.2 write them: ``1e9`` and
    ``2E-3`` (YAML 1.1 wants a dot: it read them as strings) and JSON's ``NaN``,
    ``Infinity``, ``-Infinity`` besides YAML's ``.nan`` and ``.inf``."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass
    number = re.compile(r"^(?:[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)"
                        r"[eE][-+]?[0-9]+|NaN|[-+]?Infinity)$")
    Loader.add_implicit_resolver("tag:yaml.org,2002:float", number,
                                 list("-+0123456789.NI"))
    return Loader


def parse_value(cls: type, text: str) -> Any:
    """A sample of ``cls`` from YAML/JSON text (JSON is YAML; numbers as JSON writes them,
    ``1e9``, ``NaN``, ``Infinity`` included). ValueShapeError for text that does not parse
    or a value that does not fit."""
    import yaml
    try:
        value = yaml.load(text, Loader=_value_loader())
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        at = f" at column {mark.column + 1}" if mark is not None else ""
        raise ValueShapeError(f"value {show_value(text)} is not YAML/JSON{at}: "
                              f"{getattr(e, 'problem', None) or e}") from None
    return from_plain(cls, value)


# -- schemas ----------------------------------------------------------------------------------

# a float member: a JSON number; NaN is written as null (no JSON number is NaN). The JSON
# Schema reader of Foxglove and Lichtblick (parseJsonSchema) takes one "type" string per
# member and refuses ["number", "null"], anyOf and string alternatives: the channel would
# not load at all. So the schema says "number" and this comment says what else comes.
_FLOAT_NOTE = ("IEEE double: +inf and -inf are written as the numbers 1e999 and -1e999, "
               "NaN as null")
_JSON_SCALAR = {"float": {"type": "number", "$comment": _FLOAT_NOTE},
                "double": {"type": "number", "$comment": _FLOAT_NOTE},
                "boolean": {"type": "boolean"},
                "char": {"type": "string", "maxLength": 1},
                "wchar": {"type": "string", "maxLength": 1},
                "string": {"type": "string"}, "wstring": {"type": "string"}}


def _json_kind(kind: str) -> dict[str, Any]:
    if kind.startswith("seq:"):
        return {"type": "array", "items": _json_kind(kind[4:])}
    if kind in dt.TYPES:
        return json_schema(dt.TYPES[kind], top=False)
    if kind in _INT_RANGE:
        lo, hi = _INT_RANGE[kind]
        return {"type": "integer", "minimum": lo, "maximum": hi}
    return dict(_JSON_SCALAR[kind])


def json_schema(cls: type, top: bool = True) -> dict[str, Any]:
    """A JSON Schema (draft 2020-12) of the plain form of ``cls``."""
    s: dict[str, Any] = {"type": "object", "title": f"RTC::{cls.__name__}",
                         "properties": {n: _json_kind(k) for n, k in cls.FIELDS},
                         "required": [n for n, _ in cls.FIELDS]}
    if top:
        s = {"$schema": "https://json-schema.org/draft/2020-12/schema", **s}
    return s


_IDL_SCALAR = {"short": "short", "ushort": "unsigned short", "long": "long",
               "ulong": "unsigned long", "longlong": "long long",
               "ulonglong": "unsigned long long", "float": "float", "double": "double",
               "octet": "octet", "boolean": "boolean", "char": "char", "wchar": "wchar",
               "string": "string", "wstring": "wstring"}


def _idl_kind(kind: str) -> str:
    if kind.startswith("seq:"):
        return f"sequence<{_idl_kind(kind[4:])}>"
    if kind in dt.TYPES:
        return kind
    return _IDL_SCALAR[kind]


def _deps(cls: type, order: list[type]) -> None:
    for _, kind in cls.FIELDS:
        k = kind[4:] if kind.startswith("seq:") else kind
        if k in dt.TYPES and dt.TYPES[k] not in order:
            _deps(dt.TYPES[k], order)
    if cls not in order:
        order.append(cls)


def schema_name(cls: type) -> str:
    """The IDL name as Foxglove's omgidl schemas want it: ``RTC::TimedDoubleSeq``."""
    return f"RTC::{cls.__name__}"


def omgidl_schema(cls: type) -> str:
    """OMG IDL text defining ``cls`` and every struct it uses, in module RTC (the same
    declarations as BasicDataType.idl / ExtendedDataTypes.idl)."""
    order: list[type] = []
    _deps(cls, order)
    lines = ["module RTC {"]
    for c in order:
        lines.append(f"  struct {c.__name__} {{")
        lines += [f"    {_idl_kind(k)} {n};" for n, k in c.FIELDS]
        lines.append("  };")
    lines.append("};")
    return "\n".join(lines) + "\n"
