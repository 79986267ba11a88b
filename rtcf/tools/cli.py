"""The command-line tools' shared parts, ``rtcf-print`` and ``rtcf-inject``.

Every tool takes ``--nameserver HOST:PORT`` (``-n`` too, except in rtcf-print where ``-n``
is rtprint's sample count; repeatable; default ``RTCTREE_NAMESERVERS``, else
localhost:2809) and addresses as rtshell does (rtcf.tools.address). A user error is one line
on stderr, ``rtcf-<tool>: <what>``, and exit status 1 (2 for bad arguments); Ctrl-C ends a
tool cleanly with status 0 after it disconnected.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import sys
import time
from typing import Any, Callable

from rtcf.errors import ToolError, ValueShapeError
from .values import json_text, parse_value, to_json_value, to_plain

__all__ = ["print_main", "inject_main", "add_nameserver_arg", "run_tool", "format_text"]


def add_nameserver_arg(p: argparse.ArgumentParser, short: bool = True) -> None:
    flags = ("-n", "--nameserver") if short else ("--nameserver",)
    p.add_argument(*flags, action="append", metavar="HOST:PORT",
                   help="naming service to use (repeatable; default: RTCTREE_NAMESERVERS, "
                        "else localhost:2809)")


def positive(kind: type, what: str) -> Callable[[str], Any]:
    def conv(text: str) -> Any:
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what}: expected a number, got {text!r}")
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
            raise argparse.ArgumentTypeError(f"{what}: expected > 0, got {text!r}")
        return v
    return conv


def sigterm_as_interrupt() -> None:
    """SIGTERM and SIGINT end a tool as Ctrl-C does (the finally blocks run, connections
    close). SIGINT's handler is installed even when the tool started with SIGINT ignored:
    a shell script's ``rtcf-record ... &`` starts so, and Python then leaves it ignored, so
    ``kill -INT`` would do nothing."""
    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt
    try:
        signal.signal(signal.SIGTERM, handler)
        signal.signal(signal.SIGINT, signal.default_int_handler)
    except ValueError:        # not the main thread (a test calling main())
        pass


def check_output(path: str) -> None:
    """ToolError unless ``path`` can be written as a file: its folder exists and it is not
    itself a folder. Checked before anything connects."""
    if os.path.isdir(path):
        raise ToolError(f"{path}: is a folder; give a file name")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ToolError(f"{path}: folder {folder} does not exist")


def run_tool(name: str, body: Callable[[], int], argv: list[str] | None = None) -> int:
    """Run a tool's body: user errors become one line and status 1. Run as a command
    (``argv`` None), the process then ends with ``os._exit`` once its output is flushed:
    omniORB's threads, still winding down after ORB.destroy(), aborted the interpreter's
    exit now and then ("terminate called without an active exception", about 1 exit in 8
    after recording 16 ports); every file is closed by then."""
    code = _run_tool(name, body)
    if argv is None:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)
    return code


def _run_tool(name: str, body: Callable[[], int]) -> int:
    from rtcf.corba.orb import orb_initialised, shutdown_orb
    own_orb = not orb_initialised()    # a tool run from a test shares the test's ORB
    try:
        return body()
    except ToolError as e:
        print(f"{name}: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    except BrokenPipeError:   # `rtcf-print ... | head`
        return 0
    finally:
        if own_orb:           # omniORB aborts at exit when its threads still run
            shutdown_orb()


# -- rtcf-print ------------------------------------------------------------------------------

def _fmt_number(v: Any) -> str:
    return f"{v:.6g}" if isinstance(v, float) else str(v)


def _fmt(v: Any) -> str:
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_fmt(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    return _fmt_number(v)


def format_text(topic: str, sample: Any) -> str:
    """``topic [sec.nsec] data`` (numbers to 6 significant digits)."""
    plain = to_plain(sample)
    tm = plain.pop("tm", None)
    stamp = f"[{tm['sec']}.{tm['nsec']:09d}] " if tm else ""
    body = plain["data"] if list(plain) == ["data"] else plain
    return f"{topic} {stamp}{_fmt(body)}"


def print_main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="rtcf-print", description="Print what out ports write, as rtshell's rtprint.")
    p.add_argument("ports", nargs="+", metavar="PORT",
                   help="out port address, e.g. localhost:2809/host.host_cxt/DCM0.rtc:q "
                        "or DCM0:q")
    add_nameserver_arg(p, short=False)     # -n is rtprint's --number
    p.add_argument("-n", "--number", dest="count", type=positive(int, "-n"),
                   metavar="N", help="stop after N samples in all (rtprint's -n)")
    p.add_argument("-r", "--rate", type=positive(float, "--rate"), metavar="HZ",
                   help="print at most HZ samples per second per port (the writer sends "
                        "its newest sample at that rate: a periodic subscription)")
    p.add_argument("-j", "--json", action="store_true",
                   help="one JSON object per line: port, recv_time, and the sample")
    p.add_argument("-t", "--timeout", type=positive(float, "--timeout"), metavar="S",
                   help="stop after S seconds")
    p.add_argument("--subscription", choices=("new", "flush"), default="new",
                   help="the connection's subscription type (default new: the writer's "
                        "publisher thread sends, not its EC)")
    args = p.parse_args(argv)
    return run_tool("rtcf-print", lambda: _print(args), argv)


def _print(args: argparse.Namespace) -> int:
    from .session import Session
    from .tap import SampleQueue, Tap
    sigterm_as_interrupt()
    session = Session(args.nameserver)
    handles = [session.port(a, "out") for a in args.ports]
    queue = SampleQueue(1000)
    taps: list[Tap] = []
    skipped = 0
    try:
        for i, h in enumerate(handles):
            taps.append(Tap(session, h, queue, key=i, subscription_type=args.subscription,
                            push_policy="new", buffer_length=8, max_rate=args.rate))
        names = [h.info.full_name if sum(x.info.full_name == h.info.full_name
                                         for x in handles) == 1 else h.address
                 for h in handles]
        min_gap = 0.5e9 / args.rate if args.rate else 0   # the writer already paces
        last = [0] * len(handles)
        printed = 0
        end = time.monotonic() + args.timeout if args.timeout else None
        out = sys.stdout
        while args.count is None or printed < args.count:
            if end is not None and time.monotonic() >= end:
                break
            item = queue.get(timeout=0.2)
            if item is None:
                continue
            key, t_ns, data = item
            if min_gap and t_ns - last[key] < min_gap:
                skipped += 1
                continue
            last[key] = t_ns
            sample = taps[key].decode(data)
            if args.json:
                out.write(json_text({"port": handles[key].address,
                                     "recv_time": t_ns * 1e-9,
                                     **to_json_value(sample)}) + "\n")
            else:
                out.write(format_text(names[key], sample) + "\n")
            out.flush()
            printed += 1
    finally:
        for t in taps:
            t.close()
    if queue.dropped:
        print(f"rtcf-print: {queue.dropped} samples dropped (printing too slow)",
              file=sys.stderr)
    return 0


# -- rtcf-inject -----------------------------------------------------------------------------

def inject_main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="rtcf-inject",
        description="Write a value into an in port, as rtshell's rtinject. The value is "
                    "YAML or JSON: the data alone ('[1, 2, 3]' for a TimedDoubleSeq, '0.5' "
                    "for a TimedDouble) or the whole sample ('{tm: {sec: 1, nsec: 0}, "
                    "data: [1, 2]}'); without tm, the current time is stamped.")
    p.add_argument("port", metavar="PORT", help="in port address")
    p.add_argument("value", metavar="VALUE", help="the value, YAML or JSON")
    add_nameserver_arg(p)
    p.add_argument("-r", "--rate", type=positive(float, "--rate"), metavar="HZ",
                   help="write repeatedly at HZ until Ctrl-C (or -c N)")
    p.add_argument("-c", "--count", type=positive(int, "--count"), metavar="N",
                   help="write N times (at --rate, default 1 Hz when N > 1)")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    args = p.parse_args(argv)
    return run_tool("rtcf-inject", lambda: _inject(args), argv)


def _inject(args: argparse.Namespace) -> int:
    from rtcf.datatypes import stamp
    from .session import Session
    from .tap import Injector
    sigterm_as_interrupt()
    session = Session(args.nameserver)
    handle = session.port(args.port, "in")
    try:
        sample = parse_value(handle.data_cls, args.value)
    except ValueShapeError as e:
        raise ValueShapeError(f"{handle.address} takes {handle.data_cls.__name__}: {e}") \
            from None
    import yaml
    raw = yaml.safe_load(args.value)
    own_tm = isinstance(raw, dict) and "tm" in raw
    count = args.count or (None if args.rate else 1)
    period = 1.0 / args.rate if args.rate else 1.0
    from .tap import writers_note
    note = writers_note("rtcf-inject", handle)
    if note:
        print(note, file=sys.stderr)
    inj = Injector(session, handle)
    written = 0
    try:
        t0 = time.monotonic()
        while count is None or written < count:
            if not own_tm and hasattr(sample, "tm"):
                stamp(sample, time.time())
            status = inj.write(sample)
            written += 1
            if status != "PORT_OK":
                print(f"rtcf-inject: {handle.address} answered {status}", file=sys.stderr)
            if count is not None and written >= count:
                break
            delay = t0 + written * period - time.monotonic()
            if delay > 0:
                time.sleep(delay)
    finally:
        inj.close()
    if not args.quiet:
        print(f"wrote {written} {handle.data_cls.__name__} to {handle.address}")
    return 0
