"""Bare CDR codecs for rtcf.datatypes: the payload OpenRTM's corba_cdr data ports carry.

OpenRTM marshals a sample with omniORB ``cdrMarshal(tc, value, True)``: a bare CDR stream, no
encapsulation and no byte-order octet, alignment counted from offset 0. This module produces
and parses the same bytes from our plain data types without omniORB, so the data-port hot path
needs no ORB value conversion.

Each codec is generated once per (type, byte order) as straight-line Python: runs of scalars
become one precomputed ``struct.Struct`` (one per possible start offset modulo 8 when the
offset is not known in advance), a numeric sequence is one ``tobytes`` on the way out and, on
the way in, one byte copy into the reader's array when the stream's byte order is the
machine's (``numpy.frombuffer`` otherwise). ``Codec.encode`` and ``Codec.decode`` are the
generated functions themselves, with the checks and errors in them.

Wire facts mirrored from omniORB (checked by tests/framework/test_cdr.py):
* a sequence's length is a u32; its elements are aligned to their size only when the
  sequence is not empty (an empty ``sequence<double>`` adds no padding);
* strings are u32 length including the NUL, ISO-8859-1 bytes, NUL;
* char, octet and boolean are one byte; padding is written as zeros and ignored on input;
* wchar is an octet length (2) and a UTF-16BE code unit; wstring is a u32 octet length and
  UTF-16LE after a byte-order mark in either stream order (omniORB's defaults for a stream without a GIOP connection).
"""

from __future__ import annotations

import re
import struct
import threading
from typing import Any, Callable

import numpy as np

from rtcf import datatypes as dt

__all__ = ["Codec", "codec_for", "plain_decoder"]

# IDL primitive -> (struct code, size); size is also the CDR alignment.
_PRIM: dict[str, tuple[str, int]] = {
    "short": ("h", 2), "ushort": ("H", 2), "long": ("i", 4), "ulong": ("I", 4),
    "longlong": ("q", 8), "ulonglong": ("Q", 8), "float": ("f", 4), "double": ("d", 8),
    "octet": ("B", 1), "boolean": ("?", 1), "char": ("B", 1),
}
_ZEROS = bytes(8)


def _fail(where: str, msg: str) -> ValueError:
    return ValueError(f"CDR {where}: {msg}")


def _need(where: str, o: int, size: int, n: int) -> ValueError:
    return _fail(where, f"needs {size} bytes at offset {o}, only {max(n - o, 0)} left "
                        "(truncated or corrupt payload)")


def _char_code(c: Any) -> int:
    if not isinstance(c, str) or len(c) != 1 or ord(c) > 255:
        raise ValueError(f"IDL char must be one ISO-8859-1 character, got {c!r}")
    return ord(c)


def _latin1(s: Any, where: str) -> bytes:
    try:
        return s.encode("latin-1")
    except UnicodeEncodeError:
        raise ValueError(f"{where}: string not representable in ISO-8859-1: {s!r}") from None
    except AttributeError:
        raise TypeError(f"{where}: expected str, got {type(s).__name__}") from None


class _Gen:
    """Emits the source of one type's encoder and decoders.

    ``res`` is the stream offset modulo 8 when known at generation time, else None.
    Encoders append to a bytearray ``out`` (whose length is the offset); decoders read
    ``data`` at offset ``o`` with ``n = len(data)``.
    """

    def __init__(self, cls: type, little: bool, static: bool, env: dict[str, Any]):
        self.cls = cls
        self.bo = "<" if little else ">"
        self.little = little
        self.env = env
        self.res: int | None = 0 if static else None
        self.enc: list[Any] = []      # statements, or ("emit", bytes expression)
        self.dnew: list[str] = []
        self.dinto: list[str] = []
        self.group: list[tuple[str, str, str]] = []  # (kind, encode expr, decode local)
        self.pending: list[tuple[str, str, str]] = []  # member <- local, after the unpack
        self.k = 0

    # -- helpers ---------------------------------------------------------------------------
    def name(self, prefix: str) -> str:
        self.k += 1
        return f"{prefix}{self.k}"

    def const(self, prefix: str, value: Any) -> str:
        n = self.name(prefix)
        self.env[n] = value
        return n

    def both(self, line: str) -> None:
        self.dnew.append(line)
        self.dinto.append(line)

    def emit(self, expr: str) -> None:
        """Bytes the encoder appends: ``expr`` evaluates to them."""
        self.enc.append(("emit", expr))

    def _struct_at(self, kinds: list[str], start: int) -> struct.Struct:
        """The struct of a scalar run starting at an offset = start (mod 8); its leading
        and inner padding is part of the format."""
        fmt, pos = self.bo, start
        for kind in kinds:
            code, size = _PRIM[kind]
            pad = (-pos) % size
            fmt += "x" * pad + code
            pos += pad + size
        return struct.Struct(fmt)

    def flush(self) -> None:
        """Emit the pending run of scalars as one struct pack/unpack."""
        if not self.group:
            return
        kinds = [g[0] for g in self.group]
        def make(start: int) -> struct.Struct:
            return self._struct_at(kinds, start)
        where = self.cls.__name__
        if self.res is not None:
            st = make(self.res)
            sname = self.const("S", st)
            sref, size = sname, st.size
            self.res = (self.res + st.size) % 8
        else:
            sts = [make(r) for r in range(8)]
            sname = self.const("SS", sts)
            sref, size = "st", None
            self.enc.append(f"    st = {sname}[len(out) & 7]")
            self.both(f"    st = {sname}[o & 7]")
        enc_exprs = ", ".join(g[1] for g in self.group)
        self.emit(f"{sref}.pack({enc_exprs})")
        targets = ", ".join(g[2] for g in self.group)
        sz = str(size) if size is not None else "st.size"
        self.both(f"    if o + {sz} > n: raise _need({where!r}, o, {sz}, n)")
        self.both(f"    {targets}, = {sref}.unpack_from(data, o)")
        self.both(f"    o += {sz}")
        # decoded chars arrive as ints
        for kind, _, target in self.group:
            if kind == "char":
                self.both(f"    {target} = chr({target})")
        self.group = []

    def scalar(self, kind: str, src: str, dst: str) -> None:
        enc = f"_char_code({src})" if kind == "char" else src
        self.group.append((kind, enc, dst))

    def align_body(self, size: int, enc_count: str, count: str) -> None:
        """Align to ``size`` before a non-empty sequence body."""
        if size == 1:
            return
        m = size - 1
        if self.res is not None:
            pad = (-self.res) % size
            if pad:
                self.emit(f"({_ZEROS[:pad]!r} if {enc_count} else b'')")
                self.both(f"    if {count}: o += {pad}")
        else:
            self.enc.append(f"    if {enc_count}: out += _ZEROS[:(-len(out)) & {m}]")
            self.both(f"    if {count}: o += (-o) & {m}")

    # -- members ---------------------------------------------------------------------------
    def members(self, cls: type, src: str, dst_new: str, dst_into: str) -> None:
        for member, kind in cls.FIELDS:
            s = f"{src}.{member}"
            if kind in _PRIM:
                t = self.name("a")
                self.scalar(kind, s, t)
                # scalar targets are locals; assign them after the unpack
                self._post_assign(f"{dst_new}.{member}", f"{dst_into}.{member}", t)
            elif kind in dt.TYPES:
                sub = self.name("s")
                self.enc.append(f"    {sub} = {s}")
                subn, subi = self.name("n"), self.name("i")
                self.dnew.append(f"    {subn} = _new({self.const('C', dt.TYPES[kind])})")
                self.dnew.append(f"    {dst_new}.{member} = {subn}")
                self.dinto.append(f"    {subi} = {dst_into}.{member}")
                self.members(dt.TYPES[kind], sub, subn, subi)
            elif kind == "string":
                self.string(s, f"{dst_new}.{member}", f"{dst_into}.{member}")
            elif kind in ("wchar", "wstring"):
                self.wide(kind, s, f"{dst_new}.{member}", f"{dst_into}.{member}")
            elif kind.startswith("seq:"):
                self.sequence(kind[4:], s, f"{dst_new}.{member}", f"{dst_into}.{member}")
            else:
                raise TypeError(f"{cls.__name__}.{member}: unsupported member kind {kind!r}")

    def _post_assign(self, dnew: str, dinto: str, local: str) -> None:
        # Deferred until the group is flushed: remembered as pending assignments.
        self.pending.append((dnew, dinto, local))

    def flush_all(self) -> None:
        self.flush()
        for dnew, dinto, local in self.pending:
            self.dnew.append(f"    {dnew} = {local}")
            self.dinto.append(f"    {dinto} = {local}")
        self.pending = []

    def length(self, enc_expr: str) -> str:
        """A u32 length joining the pending scalar run; returns the decoded local name."""
        t = self.name("len")
        self.group.append(("ulong", enc_expr, t))
        self.flush_all()
        return t

    def string(self, src: str, dnew: str, dinto: str) -> None:
        b = self.name("b")
        self.enc.append(f"    {b} = _latin1({src}, {dnew!r})")
        ln = self.length(f"len({b}) + 1")
        self.emit(b)
        self.emit("b'\\0'")
        v = self.name("v")
        self.both(f"    {v}, o = _read_str(data, o, n, {ln}, {self.cls.__name__!r})")
        self.dnew.append(f"    {dnew} = {v}")
        self.dinto.append(f"    {dinto} = {v}")
        self.res = None

    def wide(self, kind: str, src: str, dnew: str, dinto: str) -> None:
        self.flush_all()
        v = self.name("v")
        fn = "wchar" if kind == "wchar" else "wstring"
        self.enc.append(f"    _enc_{fn}(out, {src}, {self.little})")
        self.both(f"    {v}, o = _dec_{fn}(data, o, n, {self.little})")
        self.dnew.append(f"    {dnew} = {v}")
        self.dinto.append(f"    {dinto} = {v}")
        self.res = None

    def sequence(self, elem: str, src: str, dnew: str, dinto: str) -> None:
        v = self.name("v")
        where = f"{self.cls.__name__}.{dnew.split('.')[-1]}"
        if elem in dt.NUMPY_KINDS:
            native = dt.NUMPY_KINDS[elem]
            wire = native.newbyteorder(self.bo) if native.itemsize > 1 else native
            wire = native if wire == native else wire
            dn, dw = self.const("DN", native), self.const("DW", wire)
            size = native.itemsize
            self.enc.append(f"    {v} = {src}")
            self.enc.append(f"    if type({v}) is not _ndarray or ({v}.dtype is not {dw} "
                            f"and {v}.dtype != {dw}) or {v}.ndim != 1:")
            self.enc.append(f"        {v} = _np.ascontiguousarray({v}, {dw}).reshape(-1)")
            m = self.name("m")
            self.enc.append(f"    {m} = len({v})")
            ln = self.length(m)
            after_len = self.res
            self.align_body(size, m, ln)
            self.emit(f"{v}.tobytes()")
            e = self.name("e")
            self.both(f"    {e} = o + {ln} * {size}")
            self.both(f"    if {e} > n: raise _need({where!r}, o, {ln} * {size}, n)")
            if elem == "boolean":
                read = f"(_np.frombuffer(data, _U1, {ln}, o) != 0)"
                self.dnew.append(f"    {dnew} = {read}")
            else:
                read = f"_np.frombuffer(data, {dw}, {ln}, o)"
                self.dnew.append(f"    {dnew} = {read}.astype({dn})")
            c = self.name("c")
            if elem != "boolean" and wire == native:
                # The payload's bytes are the array's: copied through the array's own
                # memoryview (``.data``: a fraction of frombuffer + copyto, and ~470
                # instructions under memoryview(array)). The view refuses a read-only or
                # non-contiguous array (TypeError) and a length that differs (ValueError):
                # those take the general way.
                self.dinto += [
                    f"    {c} = {dinto}",
                    f"    if type({c}) is _ndarray and {c}.ndim == 1 "
                    f"and ({c}.dtype is {dn} or {c}.dtype == {dn}):",
                    "        try:",
                    f"            {c}.data.cast('B')[:] = data[o:{e}]",
                    "        except (TypeError, ValueError):",
                    f"            {dinto} = _seq_into({c}, data, {dw}, {dn}, {ln}, o)",
                    "    else:",
                    f"        {dinto} = {read}.astype({dn})",
                ]
            else:
                self.dinto += [
                    f"    {c} = {dinto}",
                    f"    if type({c}) is _ndarray and {c}.ndim == 1 and len({c}) == {ln} "
                    f"and ({c}.dtype is {dn} or {c}.dtype == {dn}) and {c}.flags.writeable:",
                    f"        _np.copyto({c}, {read})",
                    "    else:",
                    f"        {dinto} = {read}.astype({dn})",
                ]
            self.both(f"    o = {e}")
            # A non-empty body of 8-byte elements ends 8-aligned; an empty one ends right
            # after the length: the residue is known only when both agree.
            self.res = 0 if size == 8 and after_len == 0 else None
        elif elem == "char":
            self.enc.append(f"    {v} = _latin1(''.join({src}), {where!r})")
            ln = self.length(f"len({v})")
            self.emit(v)
            self._bytes_body(ln, where, dnew, dinto, "list(data[o:o + {ln}].decode('latin-1'))")
        elif elem in ("string", "wstring", "wchar") or elem in dt.TYPES:
            self.enc.append(f"    {v} = list({src})")
            ln = self.length(f"len({v})")
            it = self.name("it")
            if elem == "string":
                self.enc += [f"    for {it} in {v}:",
                             "        out += _ZEROS[:(-len(out)) & 3]",
                             f"        {it} = _latin1({it}, {where!r})",
                             f"        out += _U32{self.bo == '<'}.pack(len({it}) + 1)",
                             f"        out += {it}; out += b'\\0'"]
                read = f"_read_strs(data, o, n, {ln}, {where!r}, _U32{self.bo == '<'})"
            elif elem in ("wstring", "wchar"):
                self.enc += [f"    for {it} in {v}:",
                             f"        _enc_{elem}(out, {it}, {self.little})"]
                read = f"_read_many(_dec_{elem}, data, o, n, {ln}, {where!r}, {self.little})"
            else:
                sub = _element_codec(dt.TYPES[elem], self.little)
                en, de = self.const("EE", sub[0]), self.const("ED", sub[1])
                self.enc += [f"    for {it} in {v}:", f"        {en}(out, {it})"]
                read = f"_read_many({de}, data, o, n, {ln}, {where!r}, None)"
            self.both(f"    {v}, o = {read}")
            self.dnew.append(f"    {dnew} = {v}")
            self.dinto.append(f"    {dinto} = {v}")
            self.res = None
        else:
            raise TypeError(f"{where}: unsupported sequence element {elem!r}")

    def _bytes_body(self, ln: str, where: str, dnew: str, dinto: str, expr: str) -> None:
        e, v = self.name("e"), self.name("v")
        self.both(f"    {e} = o + {ln}")
        self.both(f"    if {e} > n: raise _need({where!r}, o, {ln}, n)")
        self.both(f"    {v} = " + expr.format(ln=ln))
        self.dnew.append(f"    {dnew} = {v}")
        self.dinto.append(f"    {dinto} = {v}")
        self.both(f"    o = {e}")
        self.res = None


def _read_str(data: Any, o: int, n: int, ln: int, where: str) -> tuple[str, int]:
    if ln == 0:
        raise _fail(where, f"string length 0 at offset {o - 4} (must include the NUL)")
    end = o + ln
    if end > n:
        raise _need(where, o, ln, n)
    if data[end - 1] != 0:
        raise _fail(where, f"string at offset {o} is not NUL-terminated")
    return bytes(data[o:end - 1]).decode("latin-1"), end


def _read_strs(data: Any, o: int, n: int, count: int, where: str,
               u32: struct.Struct) -> tuple[list[str], int]:
    if count * 5 > n - o:  # each string takes at least a length and a NUL
        raise _fail(where, f"{count} strings cannot fit in the {n - o} bytes left")
    out = []
    for _ in range(count):
        o += (-o) & 3
        if o + 4 > n:
            raise _need(where, o, 4, n)
        (ln,) = u32.unpack_from(data, o)
        s, o = _read_str(data, o + 4, n, ln, where)
        out.append(s)
    return out, o


def _read_many(dec: Callable, data: Any, o: int, n: int, count: int, where: str,
               arg: Any) -> tuple[list, int]:
    if count > n - o:  # every element takes at least one byte
        raise _fail(where, f"{count} elements cannot fit in the {n - o} bytes left")
    out = []
    for _ in range(count):
        if arg is None:
            v, o = dec(data, o, n)
        else:
            v, o = dec(data, o, n, arg)
        out.append(v)
    return out, o


def _enc_wchar(out: bytearray, c: Any, little: bool) -> None:
    if not isinstance(c, str) or len(c) != 1 or ord(c) > 0xFFFF:
        raise ValueError(f"IDL wchar must be one BMP character, got {c!r}")
    out += b"\x02" + c.encode("utf-16-be")


def _dec_wchar(data: Any, o: int, n: int, little: bool) -> tuple[str, int]:
    if o + 1 > n:
        raise _need("wchar", o, 1, n)
    ln = data[o]
    if ln != 2 or o + 3 > n:
        raise _fail("wchar", f"bad wchar length {ln} at offset {o}")
    raw = bytes(data[o + 1:o + 3])
    return raw.decode("utf-16-be"), o + 3


def _enc_wstring(out: bytearray, s: Any, little: bool) -> None:
    if not isinstance(s, str):
        raise TypeError(f"IDL wstring must be str, got {type(s).__name__}")
    # omniORB writes a little-endian byte-order mark and UTF-16LE whatever the stream's
    # byte order; readers honour the mark, so this is valid in both.
    body = b"\xff\xfe" + s.encode("utf-16-le") if s else b""
    out += _ZEROS[:(-len(out)) & 3]
    out += struct.pack("<I" if little else ">I", len(body)) + body


def _dec_wstring(data: Any, o: int, n: int, little: bool) -> tuple[str, int]:
    o += (-o) & 3
    if o + 4 > n:
        raise _need("wstring", o, 4, n)
    (ln,) = struct.unpack_from("<I" if little else ">I", data, o)
    o += 4
    if o + ln > n or ln % 2:
        raise _fail("wstring", f"bad wstring length {ln} at offset {o - 4}")
    raw = bytes(data[o:o + ln])
    if raw[:2] == b"\xff\xfe":
        s = raw[2:].decode("utf-16-le")
    elif raw[:2] == b"\xfe\xff":
        s = raw[2:].decode("utf-16-be")
    else:
        s = raw.decode("utf-16-be")  # GIOP 1.2: no byte-order mark means big endian
    return s, o + ln


def _seq_into(c: np.ndarray, data: Any, wire: np.dtype, native: np.dtype, count: int,
              o: int) -> np.ndarray:
    """A numeric sequence's body decoded into ``c`` when it can hold it (a writeable 1-D
    array of ``count`` elements of ``native``), else into a new array; returns the array."""
    read = np.frombuffer(data, wire, count, o)
    if c.shape[0] == count and c.flags.writeable:
        np.copyto(c, read)
        return c
    return read.astype(native)


def _base_env() -> dict[str, Any]:
    return {"_np": np, "_ndarray": np.ndarray, "_U1": np.dtype("u1"), "_ZEROS": _ZEROS,
            "_new": object.__new__, "_need": _need, "_fail": _fail, "_latin1": _latin1,
            "_char_code": _char_code, "_read_str": _read_str, "_read_strs": _read_strs,
            "_read_many": _read_many, "_enc_wchar": _enc_wchar, "_dec_wchar": _dec_wchar,
            "_enc_wstring": _enc_wstring, "_dec_wstring": _dec_wstring,
            "_U32True": struct.Struct("<I"), "_U32False": struct.Struct(">I"),
            "_struct_error": struct.error, "_seq_into": _seq_into}


def _generate(cls: type, little: bool, static: bool) -> tuple[Callable, ...]:
    """Source-generate the codec functions of ``cls``: ``enc(out, s)`` appends to a
    bytearray, ``dec_new(data, o, n) -> (value, o)``, and, for a whole payload,
    ``encode(s) -> bytes`` and ``decode(data, x=None) -> value`` (into ``x`` in place when
    given) with the checks and the error wording of ``Codec``."""
    env = _base_env()
    g = _Gen(cls, little, static, env)
    env["_CLS"] = cls
    g.dnew.append("    x = _new(_CLS)")
    g.members(cls, "s", "x", "x")
    g.flush_all()
    name = cls.__name__
    appended = [f"    out += {item[1]}" if isinstance(item, tuple) else item for item in g.enc]
    # An encoder whose every offset is known here builds its bytes in one expression; one
    # that asks the stream's length (or appends in a loop) fills a bytearray.
    if any("out" in item for item in g.enc if isinstance(item, str)):
        body = ["out = bytearray()", *(line[4:] for line in appended), "return bytes(out)"]
    else:
        pieces = [item[1] for item in g.enc if isinstance(item, tuple)]
        body = [item[4:] for item in g.enc if isinstance(item, str)]
        body.append("return " + (" + ".join(pieces) if pieces else "b''"))
    src = "\n".join([
        "def enc(out, s):", *appended, "    return out",
        "def dec_new(data, o, n):", *g.dnew, "    return x, o",
        "def encode(s):",
        "    try:",
        *("        " + line for line in body),
        "    except _struct_error as exc:",
        f"        raise ValueError(f'cannot encode {name}: {{exc}}') from None",
        "def decode(data, x=None):",
        "    n = len(data)",
        "    try:",
        "        if x is None:",
        "            x, o = dec_new(data, 0, n)",
        "        else:",
        "            if type(x) is not _CLS:",
        "                raise TypeError(f'decode into {type(x).__name__}, expected "
        f"{name}')",
        "            o = 0",
        *("        " + line for line in g.dinto),
        "    except _struct_error as exc:",
        f"        raise ValueError(f'CDR {name}: {{exc}}') from None",
        "    except UnicodeDecodeError as exc:",
        f"        raise ValueError(f'CDR {name}: bad text: {{exc}}') from None",
        "    if o != n:",
        f"        raise ValueError(f'CDR {name}: {{n - o}} trailing bytes after the value "
        "(decoded {o} of {n})')",
        "    return x",
    ])
    exec(compile(src, f"<cdr codec {name}>", "exec"), env)  # noqa: S102
    env["__source__"] = src
    return env["enc"], env["dec_new"], env["encode"], env["decode"]


_F8 = np.dtype("<f8")


def plain_decoder(cls: type) -> Callable | None:
    """``data -> (value, end offset)`` of a little-endian payload of ``cls`` as plain data,
    what the recorder gives orjson: the decoder of ``Codec`` with each struct a dict (its
    members in order) and each numeric sequence a numpy array (float as float64, so that it
    is written with the double's digits; the others as read from the payload, no copy).
    Malformed input raises as ``Codec``'s decoder does (ValueError, struct.error,
    UnicodeDecodeError). None for a type with a sequence of structs (their decoder builds
    samples). Runs in: any thread."""
    env = _base_env()
    g = _Gen(cls, True, True, env)
    env["_CLS"] = cls
    g.dnew.append("    x = _new(_CLS)")
    g.members(cls, "s", "x", "x")
    g.flush_all()
    if any(k.startswith("ED") for k in env):
        return None

    def new(m: re.Match) -> str:
        return "{" + ", ".join(f"{f!r}: None" for f, _ in env[m.group(1)].FIELDS) + "}"

    lines = []
    for line in g.dnew:
        line = re.sub(r"^(\s+)(\w+)\.(\w+) = ",
                      lambda m: f"{m.group(1)}{m.group(2)}[{m.group(3)!r}] = ", line)
        line = re.sub(r"_new\((\w+)\)", new, line)
        m = re.search(r"_np\.frombuffer\(data, (DW\d+), .*\)\.astype\((DN\d+)\)$", line)
        if m:
            wire, native = env[m.group(1)], env[m.group(2)]
            if native == np.dtype("<f4"):
                line = line[:line.rindex(".astype(")] + ".astype(_F8)"
            elif wire.isnative:
                line = line[:line.rindex(".astype(")]
        lines.append(line)
    env["_F8"] = _F8
    src = "\n".join(["def dec_plain(data, o, n):", *lines, "    return x, o"])
    exec(compile(src, f"<cdr plain {cls.__name__}>", "exec"), env)  # noqa: S102
    return env["dec_plain"]


_element_cache: dict[tuple[type, bool], tuple[Callable, Callable]] = {}


def _element_codec(cls: type, little: bool) -> tuple[Callable, Callable]:
    key = (cls, little)
    if key not in _element_cache:
        enc, dec_new = _generate(cls, little, static=False)[:2]
        _element_cache[key] = (enc, dec_new)
    return _element_cache[key]


class Codec:
    """Encoder/decoder of one data type in one byte order (bare CDR, offset 0 aligned).

    ``encode(sample) -> bytes``; ``decode(data, out=None) -> sample`` decodes into ``out``
    in place when given (numpy arrays of the right length are reused). Malformed input
    raises ValueError. Thread-safe: codecs hold no mutable state. Runs in: any thread (the
    writer's EC or publisher thread, ORB threads for put()).
    """

    __slots__ = ("cls", "little", "encode", "decode")

    def __init__(self, cls: type, little: bool = True):
        self.cls = cls
        self.little = little
        # Generated functions kept as attributes: a call is one frame, no bound method.
        _, _, self.encode, self.decode = _generate(cls, little, static=True)

    def __repr__(self) -> str:
        return f"Codec({self.cls.__name__}, {'little' if self.little else 'big'})"


_cache: dict[tuple[type, bool], Codec] = {}
_cache_lock = threading.Lock()


def codec_for(cls: type | str, little: bool = True) -> Codec:
    """The cached codec of a data type (class, name or repository id)."""
    if isinstance(cls, str):
        cls = dt.type_by_name(cls)
    key = (cls, little)
    codec = _cache.get(key)
    if codec is None:
        with _cache_lock:
            codec = _cache.get(key)
            if codec is None:
                codec = _cache[key] = Codec(cls, little)
    return codec
