"""The MCAP layout of a recording, and reading one back (no ORB here).

One channel per recorded out port:

* topic: the port's full name (``gen.out``), or its whole address when two recorded ports
  share a name; channel metadata ``address`` (rtshell address), ``data_type`` (repository
  id), ``connected_to`` (the in ports it fed while recording, comma-separated addresses;
  rtcf-play's default targets);
* ``--encoding json`` (default): message encoding ``json``, schema encoding ``jsonschema``
  (``values.json_schema``), one JSON object per sample: ``{"tm": {"sec", "nsec"}, "data":
  ...}`` with NaN as null, +-inf as +-1e999 (``values.json_bytes_encoder``: doubles with
  their shortest round-trip digits, text as UTF-8). Foxglove, Lichtblick and PlotJuggler
  decode it.
* ``--encoding cdr``: message encoding ``cdr``, schema encoding ``omgidl``, schema name
  ``RTC::TimedDoubleSeq`` with the IDL of the type: the OpenRTM bytes unchanged behind the
  4-byte encapsulation header ``00 01 00 00`` (CDR, little endian). Foxglove decodes it;
  PlotJuggler (which looks for a parser by message then schema encoding: json, ros2msg,
  protobuf, ...) does not.
* ``log_time`` = when the sample reached the recorder [ns since the epoch];
  ``publish_time`` = the sample's own ``tm`` [ns]; ``sequence`` = the sample's number on
  its channel, from 1.
* file metadata ``rtcf`` (recorder, encoding, naming services, start time) and, at the end,
  ``rtcf.stats`` (per channel: received, written; samples dropped by the recorder's queue).

The file is written as ``FILE.part`` and renamed to ``FILE`` only once its summary and
footer are written, so a ``.mcap`` file is always complete.
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from rtcf import datatypes as dt
from rtcf.corba.cdr import codec_for, plain_decoder
from rtcf.errors import RecordingError
from .values import from_plain, json_bytes_encoder, json_encoder, json_schema, omgidl_schema, schema_name

__all__ = ["ENCODINGS", "CDR_LE", "ChannelSpec", "RecordingError", "channel_schema",
           "encode_cdr", "encode_json", "json_message_encoder", "publish_ns", "publish_ns_of",
           "open_recording", "Recording",
           "decode_message", "payload_le"]

ENCODINGS = ("json", "cdr")
CDR_LE = b"\x00\x01\x00\x00"      # encapsulation: CDR, little endian, options 0
CDR_BE = b"\x00\x00\x00\x00"
_TM = struct.Struct("<II")

try:
    import orjson as _orjson
except ImportError:           # not installed: the compiled text encoder writes every message
    _orjson = None


@dataclass
class ChannelSpec:
    """A channel to record: ``cls`` the data type, ``metadata`` as written."""

    topic: str
    cls: type
    metadata: dict[str, str] = field(default_factory=dict)


def channel_schema(cls: type, encoding: str) -> tuple[str, str, bytes, str]:
    """(schema name, schema encoding, schema data, message encoding) for a type."""
    if encoding == "json":
        return (schema_name(cls), "jsonschema",
                json.dumps(json_schema(cls)).encode(), "json")
    if encoding == "cdr":
        return schema_name(cls), "omgidl", omgidl_schema(cls).encode(), "cdr"
    raise ValueError(f"encoding must be one of {', '.join(ENCODINGS)}, got {encoding!r}")


def has_tm(cls: type) -> bool:
    return bool(cls.FIELDS) and cls.FIELDS[0] == ("tm", "Time")


def publish_ns(cls: type, payload: bytes, default: int) -> int:
    """The sample's ``tm`` in ns read from its bare little-endian CDR (tm comes first in
    every Timed type); ``default`` when the type has no tm or the payload is short."""
    return publish_ns_of(payload, default) if has_tm(cls) else default


def publish_ns_of(payload: bytes, default: int) -> int:
    """publish_ns of a payload of a Timed type."""
    if len(payload) >= 8:
        sec, nsec = _TM.unpack_from(payload, 0)
        return sec * 1_000_000_000 + nsec
    return default


def encode_cdr(payload: bytes) -> bytes:
    return CDR_LE + payload


def encode_json(cls: type, payload: bytes) -> bytes:
    """The JSON message of a bare little-endian CDR payload (ValueError if malformed)."""
    return json_message_encoder(cls)(payload)


def json_message_encoder(cls: type) -> Callable[[bytes], bytes]:
    """encode_json of one type, made once: the payload decoded straight to dicts and numpy
    arrays (``cdr.plain_decoder``) and written by orjson; the payload decoded as a sample
    and written by ``values.json_encoder`` when orjson's output holds ``null`` (a NaN or
    an infinity, written otherwise there, see ``values``), when either refuses it (a
    malformed payload then raises the codec's ValueError) or without orjson."""
    decode, to_json = codec_for(cls, True).decode, json_bytes_encoder(cls)
    plain = plain_decoder(cls) if _orjson is not None else None
    if plain is None:
        return lambda payload: to_json(decode(payload))
    text, dumps, opt = json_encoder(cls), _orjson.dumps, _orjson.OPT_SERIALIZE_NUMPY
    refused = (ValueError, TypeError, struct.error, UnicodeDecodeError)

    def encode(payload: bytes) -> bytes:
        n = len(payload)
        try:
            value, o = plain(payload, 0, n)
            out = dumps(value, option=opt)
        except refused:
            return text(decode(payload)).encode()
        if o != n or b"null" in out:
            return text(decode(payload)).encode()
        return out
    return encode


def _nan_for_none(v: Any) -> Any:
    if v is None:
        return float("nan")
    if isinstance(v, list):
        return [_nan_for_none(x) for x in v]
    if isinstance(v, dict):
        return {k: _nan_for_none(x) for k, x in v.items()}
    return v


def payload_le(message_encoding: str, cls: type, data: bytes) -> bytes:
    """The bare little-endian CDR of one recorded message (what an in port's put() takes)."""
    if message_encoding == "cdr":
        if len(data) < 4 or data[0] != 0 or data[1] not in (0, 1):
            raise ValueError("cdr message without a CDR encapsulation header")
        if data[1] == 1:
            return bytes(data[4:])
        return codec_for(cls, True).encode(codec_for(cls, False).decode(data[4:]))
    return codec_for(cls, True).encode(decode_message(message_encoding, cls, data))


def decode_message(message_encoding: str, cls: type, data: bytes) -> Any:
    """One recorded message as an rtcf sample."""
    if message_encoding == "cdr":
        if len(data) < 4 or data[0] != 0 or data[1] not in (0, 1):
            raise ValueError("cdr message without a CDR encapsulation header")
        return codec_for(cls, data[1] == 1).decode(data[4:])
    if message_encoding == "json":
        return from_plain(cls, _nan_for_none(json.loads(data)))
    raise ValueError(f"message encoding {message_encoding!r} is not one rtcf writes")


@dataclass
class RecChannel:
    id: int
    topic: str
    cls: type
    message_encoding: str
    metadata: dict[str, str]
    count: int


class Recording:
    """An MCAP file opened for reading, checked complete (summary and footer present).
    ``channels``: topic -> RecChannel; ``messages()`` yields (RecChannel, log_time,
    publish_time, data) in log-time order. Runs in: the reading tool's thread."""

    def __init__(self, path: str, stream: Any, reader: Any, summary: Any):
        self.path = path
        self._stream = stream
        self._reader = reader
        stats = summary.statistics
        counts = stats.channel_message_counts if stats else {}
        self.channels: dict[str, RecChannel] = {}
        self.by_id: dict[int, RecChannel] = {}
        for cid, ch in summary.channels.items():
            schema = summary.schemas.get(ch.schema_id)
            type_name = ch.metadata.get("data_type") or (schema.name if schema else "")
            try:
                cls = dt.type_by_name(type_name)
            except LookupError:
                raise RecordingError(f"{path}: channel {ch.topic}: data type "
                                     f"{type_name or '(none)'} is not an OpenRTM type rtcf "
                                     f"knows") from None
            rc = RecChannel(cid, ch.topic, cls, ch.message_encoding, dict(ch.metadata),
                            counts.get(cid, 0))
            self.channels[ch.topic] = rc
            self.by_id[cid] = rc
        self.metadata = {}
        try:
            for m in reader.iter_metadata():
                self.metadata[m.name] = dict(m.metadata)
        except Exception:
            pass

    def messages(self, topics: list[str] | None = None) -> Iterator[tuple]:
        try:
            for _schema, ch, msg in self._reader.iter_messages(topics=topics,
                                                                log_time_order=True):
                yield self.by_id[ch.id], msg.log_time, msg.publish_time, msg.data
        except Exception as e:   # the mcap library's errors for a damaged body
            raise RecordingError(f"{self.path}: cannot read messages: "
                                 f"{type(e).__name__}: {e}") from None

    def close(self) -> None:
        self._stream.close()

    def __enter__(self) -> "Recording":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _scan_summary(stream: Any) -> Any:
    """Schemas, channels and message counts of an MCAP file without a summary section
    (rtcf-record closes one so when the disk filled up), read from the start; None when
    the body is damaged."""
    from types import SimpleNamespace
    from mcap.records import Channel, Message, Schema
    from mcap.stream_reader import StreamReader
    schemas: dict[int, Any] = {}
    channels: dict[int, Any] = {}
    counts: dict[int, int] = {}
    stream.seek(0)
    try:
        for rec in StreamReader(stream, skip_magic=False).records:
            if isinstance(rec, Schema):
                schemas[rec.id] = rec
            elif isinstance(rec, Channel):
                channels[rec.id] = rec
            elif isinstance(rec, Message):
                counts[rec.channel_id] = counts.get(rec.channel_id, 0) + 1
    except Exception:
        return None
    return SimpleNamespace(schemas=schemas, channels=channels,
                           statistics=SimpleNamespace(channel_message_counts=counts))


def open_recording(path: str) -> Recording:
    """Open and check an MCAP recording; RecordingError with one line otherwise."""
    from mcap.reader import make_reader
    if not os.path.exists(path):
        raise RecordingError(f"{path}: no such file")
    if os.path.isdir(path):
        raise RecordingError(f"{path}: is a folder, not an MCAP file")
    stream = open(path, "rb")
    try:
        head = stream.read(8)
        stream.seek(0)
        if head != b"\x89MCAP0\r\n":
            raise RecordingError(f"{path}: not an MCAP file (it does not start with the "
                                 f"MCAP magic)")
        reader = make_reader(stream)
        try:
            summary = reader.get_summary()
        except Exception as e:
            summary = None
            why = f"no valid footer: {type(e).__name__}"
        else:
            why = "no summary section"
        if summary is None and why == "no summary section":
            summary = _scan_summary(stream)       # closed early: a full disk, ...
        if summary is None:
            raise RecordingError(f"{path}: incomplete MCAP file ({why}): truncated, or its "
                                 f"recorder was killed before closing it")
        stream.seek(0)
        return Recording(path, stream, reader, summary)
    except BaseException:
        stream.close()
        raise
