"""The OpenRTM data types (RTC::TimedDoubleSeq, RTC::TimedPose3D, ...) as plain Python values.

Each IDL struct of BasicDataType.idl and ExtendedDataTypes.idl (as shipped by rtctree-aist)
is declared here by its member list, in IDL order, and becomes a small class with __slots__.
Numeric sequences are numpy arrays of the IDL element type, so cycle code works in place.
No ORB is needed; the CORBA layer marshals these values by walking ``FIELDS`` (bare CDR).

Member kinds: the IDL primitive names used below (``ulong``, ``double``, ...), ``seq:<kind>``
for sequences, or the name of another struct declared here.
"""

from __future__ import annotations

import itertools

import math
from typing import Any

import numpy as np

# IDL primitive -> numpy dtype (the element type of a sequence of it, little endian on wire).
NUMPY_KINDS: dict[str, np.dtype] = {
    "short": np.dtype("<i2"), "ushort": np.dtype("<u2"),
    "long": np.dtype("<i4"), "ulong": np.dtype("<u4"),
    "longlong": np.dtype("<i8"), "ulonglong": np.dtype("<u8"),
    "float": np.dtype("<f4"), "double": np.dtype("<f8"),
    "octet": np.dtype("u1"), "boolean": np.dtype("?"),
}
SCALAR_DEFAULTS: dict[str, Any] = {
    **{k: 0 for k in ("short", "ushort", "long", "ulong", "longlong", "ulonglong", "octet")},
    "float": 0.0, "double": 0.0, "boolean": False, "char": "\0", "wchar": "\0",
    "string": "", "wstring": "",
}

_D3 = "double x, y, z"
# name -> "kind member, member; kind member" (IDL order). Timed types are added below.
_DECLS: dict[str, str] = {
    "Time": "ulong sec, nsec",
    "RGBColour": "double r, g, b",
    "Point2D": "double x, y",
    "Vector2D": "double x, y",
    "Pose2D": "Point2D position; double heading",
    "Velocity2D": "double vx, vy, va",
    "Acceleration2D": "double ax, ay",
    "PoseVel2D": "Pose2D pose; Velocity2D velocities",
    "Size2D": "double l, w",
    "Geometry2D": "Pose2D pose; Size2D size",
    "Covariance2D": "double xx, xy, xt, yy, yt, tt",
    "PointCovariance2D": "double xx, xy, yy",
    "Carlike": "double speed, steeringAngle",
    "SpeedHeading2D": "double speed, heading",
    "Point3D": _D3,
    "Vector3D": _D3,
    "Orientation3D": "double r, p, y",
    "Pose3D": "Point3D position; Orientation3D orientation",
    "Velocity3D": "double vx, vy, vz, vr, vp, va",
    "AngularVelocity3D": "double avx, avy, avz",
    "Acceleration3D": "double ax, ay, az",
    "AngularAcceleration3D": "double aax, aay, aaz",
    "PoseVel3D": "Pose3D pose; Velocity3D velocities",
    "Size3D": "double l, w, h",
    "Geometry3D": "Pose3D pose; Size3D size",
    "Covariance3D": ("double xx, xy, xz, xr, xp, xa, yy, yz, yr, yp, ya, zz, zr, zp, za, "
                     "rr, rp, ra, pp, pa, aa"),
    "SpeedHeading3D": "double speed; Orientation3D direction",
    "OAP": "Vector3D orientation, approach, position",
}

# BasicDataType.idl: Timed<Scalar> and Timed<Scalar>Seq.
_BASIC = {"State": "short", "Short": "short", "Long": "long", "UShort": "ushort",
          "ULong": "ulong", "Float": "float", "Double": "double", "Char": "char",
          "WChar": "wchar", "Boolean": "boolean", "Octet": "octet", "String": "string",
          "WString": "wstring"}
for _n, _k in _BASIC.items():
    _DECLS[f"Timed{_n}"] = f"Time tm; {_k} data"
    if _n != "State":
        _DECLS[f"Timed{_n}Seq"] = f"Time tm; seq:{_k} data"
# ExtendedDataTypes.idl: Timed<Struct> for these structs.
for _n in ("RGBColour", "Point2D", "Vector2D", "Pose2D", "Velocity2D", "Acceleration2D",
           "PoseVel2D", "Size2D", "Geometry2D", "Covariance2D", "PointCovariance2D",
           "Carlike", "SpeedHeading2D", "Point3D", "Vector3D", "Orientation3D", "Pose3D",
           "Velocity3D", "AngularVelocity3D", "Acceleration3D", "AngularAcceleration3D",
           "PoseVel3D", "Size3D", "Geometry3D", "Covariance3D", "SpeedHeading3D", "OAP"):
    _DECLS[f"Timed{_n}"] = f"Time tm; {_n} data"


def _parse(decl: str) -> tuple[tuple[str, str], ...]:
    fields = []
    for group in decl.split(";"):
        kind, names = group.strip().split(" ", 1)
        fields.extend((n.strip(), kind) for n in names.split(","))
    return tuple(fields)


class DataType:
    """Base of every generated data type. ``FIELDS``: ((member, kind), ...) in IDL order."""

    __slots__ = ()
    FIELDS: tuple[tuple[str, str], ...] = ()
    IDL_NAME = ""      # e.g. "RTC/TimedDoubleSeq"
    REPO_ID = ""       # e.g. "IDL:RTC/TimedDoubleSeq:1.0"

    def __init__(self, *args: Any, **kwargs: Any):
        if len(args) > len(self.FIELDS):
            raise TypeError(f"{type(self).__name__}: at most {len(self.FIELDS)} positional "
                            f"arguments, got {len(args)}")
        values = dict(zip((f for f, _ in self.FIELDS), args))
        for k, v in kwargs.items():
            if k in values or k not in self._names():
                raise TypeError(f"{type(self).__name__}: unexpected or repeated member {k!r}")
            values[k] = v
        for name, kind in self.FIELDS:
            setattr(self, name, _coerce(kind, values[name]) if name in values
                    else default_of(kind))

    @classmethod
    def _names(cls) -> tuple[str, ...]:
        return tuple(f for f, _ in cls.FIELDS)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        for name, kind in self.FIELDS:
            a, b = getattr(self, name), getattr(other, name)
            if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
                if not np.array_equal(np.asarray(a), np.asarray(b)):
                    return False
            elif a != b:
                return False
        return True

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n, _ in self.FIELDS)
        return f"{type(self).__name__}({inner})"

    def copy(self) -> "DataType":
        """A deep copy (arrays copied). Runs in: any thread."""
        new = object.__new__(type(self))
        for name, kind in self.FIELDS:
            setattr(new, name, _copy_member(kind, getattr(self, name)))
        return new

    def assign(self, other: "DataType") -> None:
        """Copy ``other`` into this sample in place (arrays reused when the shape matches).
        Runs in: any thread."""
        _ASSIGNERS[type(self)](self, other)


def default_of(kind: str) -> Any:
    if kind in SCALAR_DEFAULTS:
        return SCALAR_DEFAULTS[kind]
    if kind.startswith("seq:"):
        elem = kind[4:]
        if elem in NUMPY_KINDS:
            return np.zeros(0, NUMPY_KINDS[elem])
        return []
    return TYPES[kind]()


def _coerce(kind: str, value: Any) -> Any:
    if kind.startswith("seq:"):
        elem = kind[4:]
        if elem in NUMPY_KINDS:
            return np.array(value, dtype=NUMPY_KINDS[elem], copy=True).reshape(-1)
        return list(value)
    if kind in TYPES and not isinstance(value, TYPES[kind]):
        raise TypeError(f"expected {kind}, got {type(value).__name__}")
    return value


def _copy_member(kind: str, value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, DataType):
        return value.copy()
    if isinstance(value, list):
        return list(value)
    return value


def _make_assigner(cls: type) -> Any:
    """Build cls.assign as straight-line code (nested structs inlined): the per-cycle copy
    must be cheap."""
    lines = ["def assign(dst, src):"]
    env: dict[str, Any] = {"np": np, "copyto": np.copyto, "ndarray": np.ndarray}
    level = itertools.count(1)

    def emit(fields: tuple, d: str, s: str) -> None:
        # d, s: the local names of the destination and source (sub)struct
        for name, kind in fields:
            if kind.startswith("seq:") and kind[4:] in NUMPY_KINDS:
                dt = f"_dt_{d}_{name}"
                env[dt] = NUMPY_KINDS[kind[4:]]
                lines.extend([
                    f"    s = {s}.{name}; d = {d}.{name}",
                    "    if type(s) is ndarray and s.shape == d.shape:",
                    "        d[...] = s",        # as copyto(casting='unsafe'), a third of its cost
                    "    else:",
                    f"        {d}.{name} = np.array(s, dtype={dt}).reshape(-1)",
                ])
            elif kind.startswith("seq:"):
                lines.append(f"    {d}.{name} = list({s}.{name})")
            elif kind in _DECLS:
                # a nested struct: looked up once, then its members (same objects, same
                # stores as dst.a.b = src.a.b)
                n = next(level)
                lines.append(f"    d{n} = {d}.{name}; s{n} = {s}.{name}")
                emit(_parse(_DECLS[kind]), f"d{n}", f"s{n}")
            else:
                lines.append(f"    {d}.{name} = {s}.{name}")

    emit(cls.FIELDS, "dst", "src")
    exec("\n".join(lines), env)  # noqa: S102 - code built from the static table above
    return env["assign"]


TYPES: dict[str, type] = {}
_ASSIGNERS: dict[type, Any] = {}


def _build() -> None:
    for name, decl in _DECLS.items():
        fields = _parse(decl)
        cls = type(name, (DataType,), {
            "__slots__": tuple(f for f, _ in fields),
            "FIELDS": fields,
            "IDL_NAME": f"RTC/{name}",
            "REPO_ID": f"IDL:RTC/{name}:1.0",
            "__module__": __name__,
            "__doc__": f"RTC::{name} {{{decl}}}",
        })
        TYPES[name] = cls
    for cls in TYPES.values():
        _ASSIGNERS[cls] = cls.assign = _make_assigner(cls)   # no lookup per call


_build()
globals().update(TYPES)


def type_by_name(name: str) -> type:
    """Look a data type up by ``TimedDoubleSeq``, ``RTC/TimedDoubleSeq``, ``RTC::...`` or
    its repository id ``IDL:RTC/TimedDoubleSeq:1.0``."""
    key = name
    if key.startswith("IDL:"):
        key = key[4:].rsplit(":", 1)[0]
    key = key.replace("::", "/")
    if key.startswith("RTC/"):
        key = key[4:]
    try:
        return TYPES[key]
    except KeyError:
        raise LookupError(f"unknown data type {name!r}") from None


_last_parts: tuple[float, tuple[int, int]] = (-1.0, (0, 0))   # (t, time_parts(t)) of the last call


def time_parts(t: float, _modf=math.modf) -> tuple[int, int]:
    """(sec, nsec) of ``t`` [s] >= 0, rounded to the nearest nanosecond (truncating made 39 %
    of 1 kHz instants 1 ns short: 19.99 s is 19.989999999 in binary and gave nsec
    989999999). The components of a cycle stamp their ports with the cycle's one time: the
    last answer is kept (one tuple, replaced whole: safe across threads). Runs in: any
    thread."""
    global _last_parts
    last = _last_parts
    if t == last[0]:
        return last[1]
    frac, whole = _modf(t)
    nsec = round(frac * 1e9)
    parts = ((int(whole), nsec) if nsec < 1_000_000_000 else
             (int(whole) + 1, nsec - 1_000_000_000))
    _last_parts = (t, parts)
    return parts


def stamp(sample: DataType, t: float) -> None:
    """Set sample.tm from a time [s] (since the epoch, or simulated time), to the nearest
    nanosecond."""
    sample.tm.sec, sample.tm.nsec = time_parts(t)


def time_of(sample: DataType) -> float:
    """sample.tm as float seconds."""
    return sample.tm.sec + sample.tm.nsec * 1e-9


__all__ = ["DataType", "TYPES", "type_by_name", "stamp", "time_parts", "time_of", "default_of",
           "NUMPY_KINDS", *TYPES]
