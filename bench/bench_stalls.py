"""The machine's own stalls: what no scheduling inside it explains.

One process per CPU, pinned to it, under SCHED_FIFO (priority 50, as rtcf's paced threads;
a normal process where it is not permitted), sleeps to absolute deadlines every period and
notes each wake-up later than --threshold. Nothing else of rtcf runs: a late wake-up here is
the kernel's or the hypervisor's, and the same instant late on every CPU is a virtual
machine that was not run. Read rtcf's overruns (bench_lockstep's planner part) against
these. Asserts nothing.

    .venv/bin/python bench/bench_stalls.py --seconds 120
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from multiprocessing import get_context
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import machine_line, table  # noqa: E402


def probe(cpu: int, seconds: float, period: float, threshold: float, out) -> None:
    """Runs in: a child process of its own, pinned to ``cpu``."""
    os.sched_setaffinity(0, {cpu})
    policy = "OTHER"
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(50))
        policy = "FIFO 50"
    except (AttributeError, OSError):
        pass
    late = []
    now = time.monotonic
    start = now()
    due = start
    cycles = 0
    while True:
        due += period
        left = due - now()
        if due - start > seconds:
            break
        if left > 0:
            time.sleep(left)
        lateness = now() - due
        cycles += 1
        if lateness > threshold:
            late.append((time.time(), lateness))
            due = now()                    # a new schedule after a stall: no catch-up burst
    out.put((cpu, policy, cycles, late))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--period-ms", type=float, default=1.0)
    ap.add_argument("--threshold-ms", type=float, default=2.0)
    args = ap.parse_args()
    print(machine_line())
    ctx = get_context("spawn")
    out = ctx.Queue()
    cpus = sorted(os.sched_getaffinity(0))
    procs = [ctx.Process(target=probe, args=(c, args.seconds, args.period_ms * 1e-3,
                                             args.threshold_ms * 1e-3, out)) for c in cpus]
    for p in procs:
        p.start()
    results = sorted(out.get() for _ in procs)
    for p in procs:
        p.join()
    events = sorted((t, cpu, lateness) for cpu, _, _, late in results for t, lateness in late)
    rows = [[cpu, policy, cycles, len(late),
             " ".join(f"{x * 1e3:.1f}" for _, x in late) or "-"]
            for cpu, policy, cycles, late in results]
    print(f"\nA bare loop per CPU sleeping to absolute {args.period_ms:g} ms deadlines for "
          f"{args.seconds:g} s; wake-ups later than {args.threshold_ms:g} ms:")
    print(table(["CPU", "policy", "cycles", "late", "lateness [ms]"], rows, 0))
    together = 0
    for i, (t, cpu, _) in enumerate(events):
        if any(c != cpu and abs(u - t) <= 0.01 for u, c, _ in events[i + 1:]):
            together += 1
    print(f"late on two CPUs within 10 ms of each other: {together} time(s)")
    print(machine_line())


if __name__ == "__main__":
    main()
