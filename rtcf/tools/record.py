"""``rtcf-record``: record out ports into an MCAP file (layout: rtcf.tools.mcapio).

Threads: omniORB's threads run the taps' ``put()`` (an append to a bounded queue, nothing
else); one writer thread (``rtcf-record-writer``) encodes and writes; the main thread
connects, prints the progress line once a second and, on Ctrl-C, SIGTERM or the end of
``--duration``, disconnects, lets the writer drain the queue and closes the file.
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import sys
import threading
import time
from typing import Any

from .cli import add_nameserver_arg, check_output, positive, run_tool, sigterm_as_interrupt
from .mcapio import (CDR_LE, ENCODINGS, ChannelSpec, channel_schema, has_tm,
                     json_message_encoder)

__all__ = ["McapRecorder", "main"]

_tm_of = struct.Struct("<II").unpack_from     # a Timed sample's tm: (sec, nsec), first


class _Sink:
    """The file under the MCAP writer: unbuffered writes, each written whole or raising
    (ENOSPC, EFBIG), and the size written so far. Runs in: the writer thread."""

    def __init__(self, path: str):
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        self.pos = 0

    def write(self, data: bytes) -> int:
        view = memoryview(data)
        while view:
            n = os.write(self.fd, view)
            self.pos += n
            view = view[n:]
        return len(data)

    def tell(self) -> int:
        return self.pos

    def flush(self) -> None:
        pass

    def fileno(self) -> int:
        return self.fd

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


class McapRecorder:
    """Writes ``(key, receive ns, CDR bytes)`` items of a SampleQueue to MCAP channels
    (``specs[key]``) in its own thread. The file is ``path + '.part'`` until ``close()``
    has written the summary and footer and renamed it; ``abort()`` removes it.

    When a write fails (a full disk, a file size limit), writing stops and ``close()``
    keeps what the file holds: it is cut back to the end of the last chunk written whole
    (messages are written in chunks of ``chunk_size`` bytes) and closed with the MCAP data
    end and footer records, a valid MCAP file without summary (every MCAP reader reads it
    from the start, rtcf-play too), renamed to ``path``; ``kept`` says how many messages
    it holds. Runs in: the caller's thread (open/close) and its writer thread."""

    def __init__(self, path: str, specs: list[ChannelSpec], encoding: str, queue: Any,
                 metadata: dict[str, str] | None = None, chunk_size: int = 1 << 20):
        from mcap.writer import CompressionType, Writer
        if encoding not in ENCODINGS:
            raise ValueError(f"encoding must be one of {', '.join(ENCODINGS)}, got "
                             f"{encoding!r}")
        self.path = path
        self.part = path + ".part"
        self.encoding = encoding
        self.queue = queue
        self.specs = specs
        self._stream = _Sink(self.part)
        try:
            self.writer = Writer(self._stream, chunk_size=chunk_size,
                                 compression=CompressionType.NONE)
            self.writer.start(profile="", library="rtcf-record (mcap-python)")
            schemas: dict[type, int] = {}
            self.channel_ids: list[int] = []
            for spec in specs:
                name, senc, sdata, menc = channel_schema(spec.cls, encoding)
                if spec.cls not in schemas:
                    schemas[spec.cls] = self.writer.register_schema(name, senc, sdata)
                self.channel_ids.append(self.writer.register_channel(
                    spec.topic, menc, schemas[spec.cls], dict(spec.metadata)))
            self.writer.add_metadata("rtcf", {"recorder": "rtcf-record", "encoding": encoding,
                                              **(metadata or {})})
        except BaseException:
            self._stream.close()
            os.unlink(self.part)
            raise
        self.written = [0] * len(specs)
        # per channel, made once: (channel id, has a tm, CDR payload -> JSON message or
        # None for cdr)
        self._out = [(cid, has_tm(spec.cls),
                      json_message_encoder(spec.cls) if encoding == "json" else None)
                     for cid, spec in zip(self.channel_ids, specs)]
        self._add = self.writer.add_message
        self._good = (self._stream.pos, 0)     # (file size, messages) at a record boundary
        self.kept: int | None = None
        self.bad = [0] * len(specs)
        self.bytes = 0
        self.error: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rtcf-record-writer",
                                        daemon=True)

    def start(self) -> "McapRecorder":
        self._thread.start()
        return self

    def _write(self, item: tuple) -> None:
        key, t_ns, data = item
        cid, timed, to_json = self._out[key]
        if timed and len(data) >= 8:       # publish_ns_of, written out
            sec, nsec = _tm_of(data)
            pub = sec * 1_000_000_000 + nsec
        else:
            pub = t_ns
        if to_json is None:
            msg = CDR_LE + data
        else:
            try:
                msg = to_json(data)
            except (ValueError, TypeError):
                self.bad[key] += 1         # a malformed payload: counted, not written
                return
        written, stream = self.written, self._stream
        n = written[key] = written[key] + 1
        before = stream.pos
        # mcap's Writer.add_message(channel_id, log_time, data, publish_time, sequence)
        self._add(cid, t_ns, msg, pub, n)
        self.bytes += len(msg)
        if stream.pos != before:         # a chunk went out whole, this message with it
            self._good = (stream.pos, sum(written))

    def _run(self) -> None:
        """Runs in: the writer thread."""
        try:
            while True:
                first = self.queue.get(timeout=0.1)
                if first is None:
                    if self._stop.is_set():
                        break
                    continue
                self._write(first)
                for item in self.queue.drain(1000):
                    self._write(item)
        except Exception as e:            # disk full, ...: stop writing, say why
            self.error = f"{type(e).__name__}: {e}"

    def close(self, stats: dict[str, Any] | None = None) -> None:
        """Drain the queue, write the summary and footer, rename to ``path``."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        if self.error:
            raise OSError(self._salvage())
        if stats:
            self.writer.add_metadata("rtcf.stats", {k: json.dumps(v) if not isinstance(v, str)
                                                    else v for k, v in stats.items()})
        self.writer.finish()
        os.fsync(self._stream.fileno())
        self._stream.close()
        os.replace(self.part, self.path)

    def _salvage(self) -> str:
        """After a failed write: cut the file back to the last whole chunk, end it with
        the data end and footer records, rename it; the one-line message to show."""
        from mcap.records import DataEnd, Footer
        from mcap.data_stream import RecordBuilder
        size, count = self._good
        try:
            os.ftruncate(self._stream.fd, size)
            os.lseek(self._stream.fd, size, os.SEEK_SET)
            self._stream.pos = size
            rb = RecordBuilder()
            DataEnd(0).write(rb)
            Footer(0, 0, 0).write(rb)
            self._stream.write(rb.end() + b"\x89MCAP0\r\n")
            os.fsync(self._stream.fd)
            self._stream.close()
            os.replace(self.part, self.path)
        except OSError as e:
            self._stream.close()
            return (f"{self.path}: writing failed ({self.error}), and so did closing the "
                    f"file ({e.strerror or e}): what was written is in {self.part}, "
                    f"without its closing records")
        self.kept = count
        return (f"{self.path}: writing failed ({self.error}): kept the {count} messages "
                f"written before it in {self.path} (no summary: readers read it from the "
                f"start)")

    def abort(self) -> None:
        """Stop and remove the partial file."""
        self._stop.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(5.0)
        try:
            self._stream.close()
        except OSError:
            pass
        try:
            os.unlink(self.part)
        except OSError:
            pass


def _size(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000.0
    return f"{n:.1f} GB"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="rtcf-record",
        description="Record out ports into an MCAP file (one channel per port) that "
                    "Foxglove, Lichtblick and PlotJuggler open. Ctrl-C stops and closes "
                    "the file.")
    p.add_argument("ports", nargs="*", metavar="PORT", help="out port addresses")
    p.add_argument("-o", "--output", required=True, metavar="FILE.mcap")
    p.add_argument("--all", action="store_true",
                   help="every out port of every component on the naming services")
    p.add_argument("--duration", type=positive(float, "--duration"), metavar="S",
                   help="stop after S seconds")
    add_nameserver_arg(p)
    p.add_argument("--encoding", choices=ENCODINGS, default="json",
                   help="json (JSON Schema; Foxglove, Lichtblick, PlotJuggler) or cdr (the "
                        "OpenRTM bytes with an omgidl schema; Foxglove, Lichtblick); "
                        "default json")
    p.add_argument("--subscription", choices=("new", "flush"), default="new",
                   help="subscription type of the connections (default new: the writer's "
                        "publisher thread sends, not its EC thread)")
    p.add_argument("--max-rate", type=positive(float, "--max-rate"), metavar="HZ",
                   help="record each port at most HZ times a second, decimated by the writer "
                        "(a periodic subscription sending its newest sample): what a "
                        "recording costs a fast system drops with it")
    p.add_argument("--queue", type=positive(int, "--queue"), default=100000, metavar="N",
                   help="samples held for the writer thread before new ones are dropped "
                        "(and counted); default 100000")
    p.add_argument("-f", "--force", action="store_true", help="replace an existing FILE")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    args = p.parse_args(argv)
    if bool(args.ports) == args.all:
        p.error("give PORT... or --all (not both)")
    return run_tool("rtcf-record", lambda: _record(args), argv)


def _record(args: argparse.Namespace) -> int:
    from .session import Session, ToolError
    from .tap import SampleQueue, Tap
    out = args.output
    check_output(out)
    if os.path.exists(out) and not args.force:
        raise ToolError(f"{out}: exists (use --force to replace it)")
    sigterm_as_interrupt()
    session = Session(args.nameserver)
    snap = session.snapshot()
    if args.all:
        if snap.errors and not snap.components:
            raise ToolError(snap.errors[0])
        for e in snap.errors:      # a component bound but dead, a context unreadable
            print(f"rtcf-record: skipping {e}", file=sys.stderr)
        handles = []
        for comp, port in snap.out_ports():
            try:
                handles.append(session.port(f"{comp.address}:{port.name}", "out"))
            except ToolError as e:
                print(f"rtcf-record: skipping: {e}", file=sys.stderr)
        if not handles:
            raise ToolError(f"no out ports found on {', '.join(session.nameservers)}")
    else:
        handles = [session.port(a, "out") for a in args.ports]
    names = [h.info.full_name for h in handles]
    specs = []
    for h in handles:
        topic = h.info.full_name if names.count(h.info.full_name) == 1 else h.address
        comp = snap.component(h.address.rsplit(":", 1)[0])
        feeds = []
        if comp is not None and comp.port(h.info.name) is not None:
            for k in comp.port(h.info.name).connectors:
                feeds += [a for a, n in zip(k.addresses, k.ports)
                          if n != h.info.full_name and a]
        specs.append(ChannelSpec(topic, h.data_cls, {
            "address": h.address, "data_type": h.info.data_type,
            "connected_to": ",".join(feeds)}))
    queue = SampleQueue(args.queue)
    try:
        rec = McapRecorder(out, specs, args.encoding, queue, {
            "nameservers": ",".join(session.nameservers),
            "start_time": f"{time.time():.6f}"})
    except OSError as e:
        raise ToolError(f"{out}: cannot write it ({e.strerror or e})") from None
    taps: list[Tap] = []
    t0 = time.monotonic()
    interrupted = False
    try:
        rec.start()
        for i, h in enumerate(handles):
            taps.append(Tap(session, h, queue, key=i, subscription_type=args.subscription,
                            max_rate=args.max_rate))
        end = t0 + args.duration if args.duration else None
        tty = sys.stderr.isatty()
        while end is None or time.monotonic() < end:
            time.sleep(min(1.0, max(0.0, end - time.monotonic())) if end else 1.0)
            if not args.quiet:
                line = (f"recording {len(handles)} port{'s' if len(handles) > 1 else ''} "
                        f"to {out}: {sum(rec.written)} samples, {_size(rec.bytes)}, "
                        f"{queue.dropped} dropped, {time.monotonic() - t0:.0f} s")
                print(("\r" + line + "   ") if tty else line, end="" if tty else "\n",
                      file=sys.stderr, flush=True)
            if rec.error:
                break
    except KeyboardInterrupt:
        interrupted = True
    except BaseException:
        for t in taps:
            t.close()
        rec.abort()
        raise
    finally:
        if not args.quiet and sys.stderr.isatty():
            print(file=sys.stderr)
    for t in taps:
        t.close()
    duration = round(time.monotonic() - t0, 3)
    try:
        rec.close(stats={"written": {s.topic: n for s, n in zip(specs, rec.written)},
                         "dropped_by_queue": queue.dropped,
                         "malformed": sum(rec.bad),
                         "duration_s": duration, "interrupted": interrupted})
    except OSError as e:
        raise ToolError(str(e)) from None
    print(f"rtcf-record: wrote {out}: {sum(rec.written)} messages on {len(specs)} "
          f"channel{'s' if len(specs) > 1 else ''}, {_size(os.path.getsize(out))}, "
          f"{queue.dropped} dropped", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
