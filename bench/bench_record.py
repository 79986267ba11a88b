"""Recording cost: rtcf-record's throughput next to the bare ``mcap`` writer, and what
recording every port costs the default system's EC.

Part 1, throughput of TimedDoubleSeq(30) (ratios against the floor; the in-process rows
are the median of ``--repeat`` runs, each recorder run right after the floor run of its
encoding, its ratios the median of its ratios to that run):

* ``mcap floor``: the bare mcap Writer adding pre-encoded messages (no rtcf at all);
* ``recorder, no CORBA``: rtcf-record's writer (McapRecorder fed by its SampleQueue), json
  and cdr: the encoding and file work of one sample;
* ``rtcf-record end to end``: a CountingWriter in a manager process (1 kHz EC, ``--burst``
  samples per cycle) recorded by the real ``rtcf-record`` process over CORBA: samples written
  vs recorded vs dropped, messages/s, the recorder's CPU;
* ``rtlog``: rtshell's recorder, run the same way when it runs (it does not here: it imports
  OpenRTM_aist, which is not installed; the error is printed).

Part 2: the default composition at 100 Hz (bench_system's run, EC cycle trace) without and
with ``rtcf-record --all`` recording every out port: overruns, p99 lateness, CPU of the
system and of the recorder, alternating, ``--rounds`` each.

    .venv/bin/python bench/bench_record.py --seconds 10 --rounds 2
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from common import machine_line, table  # noqa: E402
import bench_system as bs  # noqa: E402

BIN = Path(sys.executable).parent
WIDTH = 30


def _payload() -> bytes:
    from rtcf.corba.cdr import codec_for
    from rtcf.datatypes import TimedDoubleSeq
    s = TimedDoubleSeq(data=np.linspace(0, 1, WIDTH))
    s.tm.sec, s.tm.nsec = 12, 34
    return codec_for(TimedDoubleSeq).encode(s)


def floor(n: int, tmp: Path, encodings: tuple = ("cdr", "json")) -> list:
    """The bare mcap writer: pre-encoded cdr and json messages, one channel."""
    from mcap.writer import CompressionType, Writer
    from rtcf.datatypes import TimedDoubleSeq
    from rtcf.tools.mcapio import channel_schema, encode_cdr, encode_json
    rows = []
    raw = _payload()
    for enc in encodings:
        msg = encode_cdr(raw) if enc == "cdr" else encode_json(TimedDoubleSeq, raw)
        path = tmp / f"floor-{enc}.mcap"
        with open(path, "wb") as f:
            w = Writer(f, compression=CompressionType.NONE)
            w.start()
            name, senc, sdata, menc = channel_schema(TimedDoubleSeq, enc)
            ch = w.register_channel("x", menc, w.register_schema(name, senc, sdata))
            t0, c0 = time.perf_counter(), time.process_time()
            for i in range(n):
                w.add_message(ch, log_time=i, data=msg, publish_time=i, sequence=i)
            w.finish()
            f.flush()
            os.fsync(f.fileno())        # as the recorder: the file is on disk when closed
            dt, cpu = time.perf_counter() - t0, time.process_time() - c0
        rows.append((f"mcap floor ({enc}, pre-encoded, {len(msg)} B)", n / dt,
                     path.stat().st_size / n, "", n / cpu))
    return rows


def recorder_no_corba(n: int, tmp: Path, encodings: tuple = ("cdr", "json")) -> list:
    """rtcf-record's writer thread: queue -> encode -> mcap, with the queue pre-filled."""
    from rtcf.datatypes import TimedDoubleSeq
    from rtcf.tools.mcapio import ChannelSpec
    from rtcf.tools.record import McapRecorder
    from rtcf.tools.tap import SampleQueue
    raw = _payload()
    rows = []
    for enc in encodings:
        q = SampleQueue(n + 1)
        for i in range(n):
            q.offer((0, i, raw))
        path = tmp / f"rec-{enc}.mcap"
        rec = McapRecorder(str(path), [ChannelSpec("x", TimedDoubleSeq)], enc, q)
        t0, c0 = time.perf_counter(), time.process_time()
        rec.start()
        rec.close()
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
        assert sum(rec.written) == n
        rows.append((f"recorder, no CORBA ({enc})", n / dt, path.stat().st_size / n, "",
                     n / cpu))
    return rows


WRITER = """
name: recbench
components:
  - {{type: CountingWriter, module: counting, name: cw,
     params: {{limit: {limit}, width: {width}, burst: {burst}}}}}
execution_contexts:
  - {{name: main, kind: periodic, rate: 1000, members: [cw]}}
activate: []
"""


def _wait_bound(port: int, name: str, timeout: float = 30.0) -> None:
    from rtcf.tools.session import Session, ToolError
    deadline = time.monotonic() + timeout
    while True:
        try:
            Session([f"localhost:{port}"]).component(name)
            return
        except ToolError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def end_to_end(seconds: float, burst: int, enc: str, tmp: Path) -> list:
    """The real processes: manager with CountingWriter, rtcf-record over CORBA."""
    from mcap.reader import make_reader
    from rtcf.tools.session import Session
    limit = int(seconds * 1000 * burst)
    comp = tmp / "writer.yaml"
    comp.write_text(WRITER.format(limit=limit, width=WIDTH, burst=burst))
    port = bs.free_port()
    load = f"{ROOT / 'components'},{ROOT / 'tests' / 'integration' / 'testcomps'}"
    mgr = subprocess.Popen([str(ROOT / "scripts" / "run"), str(comp), "--quiet",
                            "-o", f"corba.nameservers:localhost:{port}",
                            "-o", f"manager.modules.load_path:{load}"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           stdin=subprocess.DEVNULL, start_new_session=True)
    out = tmp / f"e2e-{enc}-{burst}.mcap"
    try:
        _wait_bound(port, "cw")
        ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        rec = subprocess.Popen([str(BIN / "rtcf-record"), "-n", f"localhost:{port}", "-o",
                                str(out), "--encoding", enc, "-q", "-f", "cw:out"],
                               stderr=subprocess.PIPE, text=True)
        s = Session([f"localhost:{port}"])
        deadline = time.monotonic() + 20
        while not s.port("cw:out").ref.get_connector_profiles():
            if time.monotonic() > deadline:
                raise RuntimeError("rtcf-record did not connect")
            time.sleep(0.1)
        _, ref = s.component("cw")
        ec = (list(ref.get_owned_contexts()) or list(ref.get_participating_contexts()))[0]
        t0 = time.monotonic()
        ec.activate_component(ref)
        time.sleep(seconds + 2.0)
        rec.send_signal(2)
        _, err = rec.communicate(timeout=60)
        ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall = time.monotonic() - t0
        cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    finally:
        os.killpg(mgr.pid, 15)
        mgr.wait(30)
    with open(out, "rb") as f:
        summary = make_reader(f).get_summary()
        got = sum(summary.statistics.channel_message_counts.values())
    m = [x for x in err.splitlines() if "dropped" in x]
    dropped = m[-1].rsplit(",", 1)[-1].strip() if m else "?"
    return [(f"rtcf-record end to end ({enc}, {burst}/cycle at 1 kHz)", got / seconds,
             out.stat().st_size / max(got, 1), f"written {limit}, recorded {got}, "
                                                f"queue {dropped}; recorder CPU {cpu:.1f} s "
                                                f"in {wall:.1f} s")]


def rtlog_row(port_hint: str) -> tuple:
    exe = BIN / "rtlog"
    if not exe.exists():
        return ("rtlog", None, None, "not installed")
    cp = subprocess.run([str(exe), "-f", "/dev/null", port_hint], capture_output=True,
                        text=True, timeout=60)
    err = (cp.stderr.strip().splitlines() or ["?"])[-1]
    return ("rtshell rtlog", None, None, f"does not run here: {err}")


# -- part 2 -----------------------------------------------------------------------------------

def system_run(name: str, seconds: float, tmp: Path, record: list[str] | None,
               warmup: float) -> dict:
    port = bs.free_port()
    rec_info: dict = {}

    def recorder() -> None:
        _wait_bound(port, "DCM0", timeout=warmup + 30)
        time.sleep(max(0.0, warmup - 3.0))
        out = tmp / f"sys-{time.monotonic_ns()}.mcap"
        p = subprocess.Popen([str(BIN / "rtcf-record"), "-n", f"localhost:{port}", "--all",
                              "-o", str(out), "--duration", str(seconds + 2), "-q",
                              *record],
                             stderr=subprocess.PIPE, text=True)
        err = p.stderr.read()
        _, status, ru = os.wait4(p.pid, 0)
        rec_info.update(cpu=100.0 * (ru.ru_utime + ru.ru_stime) / (seconds + 2 + 1.0),
                        line=(err.strip().splitlines() or ["?"])[-1], status=status)

    th = None
    if record is not None:
        th = threading.Thread(target=recorder, daemon=True)
        th.start()
    res = bs.run_rtcf(name, seconds, tmp, [f"corba.nameservers:localhost:{port}"],
                      warmup)
    if th is not None:
        th.join(60)
    res["recorder"] = rec_info
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=10.0, help="per system run")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--messages", type=int, default=100000,
                    help="part 1, in-process runs (20,000 took 0.1-0.5 s a row: too "
                         "short on a loaded machine)")
    ap.add_argument("--repeat", type=int, default=3,
                    help="part 1, in-process rows: runs of floor and recorder one after the "
                         "other, each row the median")
    ap.add_argument("--burst", type=int, action="append",
                    help="samples per 1 kHz cycle in the end-to-end run (default 1, 5, 20)")
    ap.add_argument("--warmup", type=float, default=8.0)
    ap.add_argument("--skip-system", action="store_true", help="part 1 only")
    ap.add_argument("--system", action="append", choices=("default", "default-1k"),
                    help="part 2 scenarios (bench_system's; default: default)")
    ap.add_argument("--skip-throughput", action="store_true", help="part 2 only")
    ap.add_argument("--max-rate", type=float, action="append", default=[],
                    help="part 2: also record with rtcf-record --max-rate HZ (repeatable)")
    args = ap.parse_args()
    print(machine_line())
    with tempfile.TemporaryDirectory(prefix="bench-record-") as tmpd:
        tmp = Path(tmpd)
        if not args.skip_throughput:
            # each run: floor cdr, recorder cdr, floor json, recorder json, one after the
            # other; a recorder's ratios are the median of its ratios to the floor run just
            # before it (the load of the other jobs moves between runs)
            runs = [[row for enc in ("cdr", "json")
                     for row in floor(args.messages, tmp, (enc,))
                     + recorder_no_corba(args.messages, tmp, (enc,))]
                    for _ in range(args.repeat)]
            paired = {run[i][0]: [] for run in runs for i in (1, 3)}
            for run in runs:
                for i in (1, 3):
                    paired[run[i][0]].append((run[i][1] / run[i - 1][1],
                                              run[i][4] / run[i - 1][4]))
            paired = {k: tuple(float(np.median([x[j] for x in v])) for j in (0, 1))
                      for k, v in paired.items()}
            rows = [(r[0][0], *(float(np.median([x[i] for x in r])) for i in (1, 2)), "",
                     float(np.median([x[4] for x in r]))) for r in zip(*runs)]
            for burst in args.burst or [1, 5, 20]:
                for enc in ("json", "cdr"):
                    rows += end_to_end(min(args.seconds, 5.0), burst, enc, tmp)
            rows.append(rtlog_row("localhost:2809/x.host_cxt/cw.rtc:out"))
            fl = {r[0].split("(")[1].split(",")[0]: r for r in rows
                  if r[0].startswith("mcap")}
            out = []
            for r in rows:
                name, rate, size = r[0], r[1], r[2]
                enc = "json" if "json" in name else "cdr"
                ratio = rate / fl[enc][1] if rate and enc in fl else None
                cpu_rate = r[4] if len(r) > 4 else None
                cpu_ratio = cpu_rate / fl[enc][4] if cpu_rate and enc in fl else None
                if name in paired:
                    ratio, cpu_ratio = paired[name]
                out.append([name, rate, ratio, cpu_rate, cpu_ratio, size,
                            r[3] if len(r) > 3 else ""])
            print(f"Part 1: TimedDoubleSeq(30) throughput (in-process rows: median of "
                  f"{args.repeat} runs of {args.messages} messages, each recorder run right "
                  "after a floor run, its ratios the median of the ratios to that run; "
                  "ratio = / the bare mcap writer of the same encoding; per CPU s: messages "
                  "per second of the process's CPU time, what counts on a loaded machine)")
            print(table(["what", "messages/s", "ratio", "per CPU s", "ratio (CPU)",
                         "bytes/msg in file", "note"], out, digits=2))
        if args.skip_system:
            return 0
        print()
        print(f"Part 2: the default system (100 Hz; default-1k: its EC at 1 kHz), "
              f"{args.seconds:g} s windows, {args.rounds} rounds each, alternating")
        rows2 = []
        modes = [None, []] + [["--max-rate", f"{m:g}"] for m in args.max_rate]
        for rnd, name, record in [(r, n, m) for n in (args.system or ["default"])
                                  for r in range(1, args.rounds + 1) for m in modes]:
            r = system_run(name, args.seconds, tmp, record, args.warmup)
            for ec, e in sorted(r["ecs"].items()):
                late = e.get("late", np.zeros(0))
                p99 = float(np.percentile(late, 99)) if len(late) else float("nan")
                how = ("without rtcf-record" if record is None else
                       " ".join(["with rtcf-record --all", *record]))
                rows2.append([f"{name} {how}",
                              rnd, ec, e.get("cycles"), e.get("overruns_window"), p99,
                              float(late.max()) if len(late) else None, r["cpu"],
                              r["recorder"].get("cpu"),
                              r["recorder"].get("line", "")[:70]])
        print(table(["run", "round", "EC", "cycles", "overruns", "p99 late [us]",
                     "max late [us]", "CPU system [%]", "CPU recorder [%]", "recorder said"],
                    rows2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
