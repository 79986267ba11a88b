"""``rtcf-play``: replay an MCAP recording into in ports at the recorded timing (the job of
rtshell's ``rtlog -p``).

Each channel goes to the in ports given with ``--map CHANNEL=PORT`` (repeatable), else to
those its out port fed while it was recorded (channel metadata ``connected_to``). Messages
are sent in log-time order, spaced as they were received (``--rate 2`` twice as fast),
through one connection per target port (push, flush); ``--loop`` starts again at the end.
Runs in: the main thread only.
"""

from __future__ import annotations

import argparse
import sys
import time

from .cli import add_nameserver_arg, positive, run_tool, sigterm_as_interrupt
from .mcapio import open_recording, payload_le

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="rtcf-play",
        description="Replay an MCAP recording (rtcf-record's, or any with rtcf's layout) "
                    "into in ports at the recorded timing.")
    p.add_argument("file", metavar="FILE.mcap")
    p.add_argument("--rate", type=positive(float, "--rate"), default=1.0, metavar="X",
                   help="speed factor (2: twice as fast); default 1")
    p.add_argument("--loop", action="store_true", help="start again at the end")
    p.add_argument("--map", action="append", default=[], metavar="CHANNEL=PORT",
                   help="send channel CHANNEL to in port PORT (repeatable; a channel may "
                        "go to several ports)")
    p.add_argument("--only", action="append", metavar="CHANNEL",
                   help="replay these channels (repeatable), each into the in ports of "
                        "--map or, without one, those it fed while recording")
    p.add_argument("--all", action="store_true",
                   help="replay every channel into the in ports it fed while recording "
                        "(needed when neither --only nor --map is given: a recording of "
                        "a whole system would write into every in port of it)")
    add_nameserver_arg(p)
    p.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    args = p.parse_args(argv)
    return run_tool("rtcf-play", lambda: _play(args), argv)


def _play(args: argparse.Namespace) -> int:
    from .session import Session, ToolError
    from .tap import Injector
    rec = open_recording(args.file)
    try:
        if not (args.map or args.only or args.all):
            fed = {c: [a.rsplit("/", 1)[-1] for a in ch.metadata.get("connected_to", "")
                       .split(",") if a] for c, ch in rec.channels.items()}
            plan = "; ".join(f"{c} -> {', '.join(t)}" for c, t in fed.items() if t)
            raise ToolError(f"{args.file}: say what to replay: --only CHANNEL (into the in "
                            f"ports it fed while recording), --map CHANNEL=PORT, or --all "
                            f"(every channel into the ports it fed: {plan or 'none'})")
        targets: dict[str, list[str]] = {}
        for m in args.map:
            chan, sep, port = m.partition("=")
            if not sep or not chan or not port:
                raise ToolError(f"--map {m!r}: expected CHANNEL=PORT")
            if chan not in rec.channels:
                raise ToolError(f"--map {m!r}: {args.file} has no channel {chan!r} "
                                f"(channels: {', '.join(rec.channels)})")
            targets.setdefault(chan, []).append(port)
        # --map alone replays the channels it maps; --all every channel
        only = args.only or (list(targets) if args.map and not args.all
                             else list(rec.channels))
        for chan in only:
            if chan not in rec.channels:
                raise ToolError(f"--only {chan!r}: {args.file} has no such channel "
                                f"(channels: {', '.join(rec.channels)})")
        for chan in only:
            if chan not in targets:
                feeds = [a for a in rec.channels[chan].metadata.get("connected_to", "")
                         .split(",") if a]
                if feeds:
                    targets[chan] = feeds
        targets = {c: t for c, t in targets.items() if c in only}
        if not targets:
            raise ToolError(f"{args.file}: no channel has a target port: give --map "
                            f"CHANNEL=PORT (channels: {', '.join(rec.channels)})")
        sigterm_as_interrupt()
        session = Session(args.nameserver)
        handles = {}
        for chan, ports in targets.items():
            cls = rec.channels[chan].cls
            for port in ports:
                h = session.port(port, "in")
                if h.data_cls is not cls:
                    raise ToolError(f"channel {chan} carries {cls.__name__}, {h.address} "
                                    f"takes {h.data_cls.__name__}")
                handles[(chan, port)] = h
        injectors = {}
        from .tap import writers_note
        for h in {h.address: h for h in handles.values()}.values():
            note = writers_note("rtcf-play", h)
            if note:
                print(note, file=sys.stderr)
        try:
            for key, h in handles.items():
                injectors[key] = Injector(session, h)
            by_chan: dict[str, list] = {}
            for (chan, _), inj in injectors.items():
                by_chan.setdefault(chan, []).append(inj)
            sent = _run(rec, by_chan, args)
        finally:
            for inj in injectors.values():
                inj.close()
    finally:
        rec.close()
    if not args.quiet:
        print(f"rtcf-play: sent {sent} messages", file=sys.stderr)
    return 0


def _run(rec, by_chan: dict, args: argparse.Namespace) -> int:
    sent = 0
    topics = list(by_chan)
    last_note = time.monotonic()
    while True:
        start = None
        t_wall = time.monotonic()
        for ch, log_time, _pub, data in rec.messages(topics):
            if start is None:
                start = log_time
            due = t_wall + (log_time - start) * 1e-9 / args.rate
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            payload = payload_le(ch.message_encoding, ch.cls, data)
            for inj in by_chan[ch.topic]:
                inj.write_bytes(payload)
            sent += 1
            now = time.monotonic()
            if not args.quiet and now - last_note >= 1.0:
                last_note = now
                print(f"playing {args.file}: {sent} messages, "
                      f"{(log_time - start) * 1e-9:.1f} s of the recording", file=sys.stderr)
        if not args.loop or start is None:
            return sent


if __name__ == "__main__":
    sys.exit(main())
