"""Per-cycle timing trace of a periodic execution context, and the tool that reads it.

Off by default (``exec_cxt.periodic.trace: YES`` turns it on). When on, the EC thread
records, for every cycle, into arrays allocated once:

* ``deadline``: the planned start of the cycle;
* ``expected``: when the EC thread asked to be woken (deadline - spin window); NaN when it did
  not sleep before this cycle (the previous cycle ended too late to sleep);
* ``woke``: when the thread was running Python again after its last sleep;
* ``start`` / ``end``: the cycle itself (``start - deadline`` is the lateness);
* ``runq``: how long the thread waited for a CPU while runnable during that sleep [s]
  (``/proc/thread-self/schedstat``: the kernel's run-queue delay: the wake-up delay that
  is the operating system's);
* ``oncpu``: the CPU time the thread used during that sleep window [s] (spurious wake-ups,
  GIL polling);
* ``slices``: how many times the thread was scheduled in during that window. A wake-up by
  its timer is one; waiting for the GIL after it adds at least one more (CPython waits on a
  condition variable that the holder signals, or that times out every switch interval);
* ``work``: every member's execution time in the cycle [s].

A late cycle then splits into: the previous cycle still running (``end`` of the previous
cycle after this deadline), the wake-up delay of the OS (``runq``), and the rest of
``woke - expected``, time the thread was not even runnable: with more than one slice, it
was waiting for the GIL (garbage-collector pauses recorded from ``gc.callbacks`` that
overlap that wait say who held it); with a single slice, its timer fired late (the host
did not run the virtual CPU, or a timer interrupt was held off: what cyclictest measures). ``python -m rtcf.trace FILE.npz`` prints that table.

Runs in: the EC thread (``record``), any thread (``save``). Costs about 5 us per cycle when
on (two pread calls of the schedstat file), nothing when off.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import threading
import time
from array import array
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

_FIELDS = ("deadline", "expected", "woke", "start", "end", "runq", "oncpu", "slices")


class _GcLog:
    """Start/stop times of every garbage collection in the process (a ring)."""

    def __init__(self, capacity: int = 4096):
        self.t = array("d", [0.0]) * (capacity * 2)
        self.gen = array("b", [0]) * capacity
        self.n = 0
        self.capacity = capacity
        self._start = 0.0
        self.users = 0

    def __call__(self, phase: str, info: dict) -> None:
        now = time.perf_counter()          # the EC's MonotonicClock
        if phase == "start":
            self._start = now
            return
        i = self.n % self.capacity
        self.t[2 * i] = self._start
        self.t[2 * i + 1] = now
        self.gen[i] = info.get("generation", -1)
        self.n += 1

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        k = min(self.n, self.capacity)
        order = (np.arange(self.n - k, self.n) % self.capacity) if k else np.zeros(0, int)
        t = np.frombuffer(self.t, dtype=float).reshape(-1, 2)[order]
        return t, np.frombuffer(self.gen, dtype=np.int8)[order].astype(int)


_gc_log = _GcLog()
_gc_lock = threading.Lock()


class CycleTrace:
    """A ring of ``capacity`` cycles for an EC with ``members`` member names."""

    def __init__(self, capacity: int = 65536, members: Sequence[str] = ()):
        if capacity < 16:
            raise ValueError(f"trace capacity: expected >= 16 cycles, got {capacity}")
        self.capacity = int(capacity)
        self.members = list(members)
        self.cols = {f: array("d", [0.0]) * self.capacity for f in _FIELDS}
        self.work = array("d", [0.0]) * (self.capacity * max(1, len(self.members)))
        self.n = 0
        self._fd: int | None = None
        self._before = (0, 0, 0)
        self._slept = False
        self._cpu = self._rq = 0.0
        self._slices = 0
        with _gc_lock:
            if _gc_log.users == 0:
                gc.callbacks.append(_gc_log)
            _gc_log.users += 1

    def close(self) -> None:
        with _gc_lock:
            _gc_log.users -= 1
            if _gc_log.users == 0 and _gc_log in gc.callbacks:
                gc.callbacks.remove(_gc_log)
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    # -- EC thread ---------------------------------------------------------------------------
    def open_thread(self) -> None:
        """Call in the EC thread once: the schedstat file of that thread."""
        try:
            self._fd = os.open("/proc/thread-self/schedstat", os.O_RDONLY)
        except OSError:
            self._fd = None

    def _sched(self) -> tuple[int, int, int]:
        if self._fd is None:
            return (0, 0, 0)
        f = os.pread(self._fd, 96, 0).split()
        return (int(f[0]), int(f[1]), int(f[2]))   # on-CPU ns, run-queue ns, slices

    def before_sleep(self) -> None:
        self._before = self._sched()

    def after_sleep(self, slept: bool) -> None:
        cpu0, rq0, n0 = self._before
        cpu1, rq1, n1 = self._sched()
        self._slept = slept
        self._cpu, self._rq, self._slices = (cpu1 - cpu0) * 1e-9, (rq1 - rq0) * 1e-9, n1 - n0

    def record(self, deadline: float, expected: float, woke: float, start: float,
               end: float, work: Sequence[float]) -> None:
        i = self.n % self.capacity
        c = self.cols
        c["deadline"][i] = deadline
        c["expected"][i] = expected if self._slept else float("nan")
        c["woke"][i] = woke
        c["start"][i] = start
        c["end"][i] = end
        c["runq"][i] = self._rq if self._slept else 0.0
        c["oncpu"][i] = self._cpu if self._slept else 0.0
        c["slices"][i] = self._slices if self._slept else 0
        k = len(self.members)
        for j in range(min(k, len(work))):
            self.work[i * k + j] = work[j]
        self.n += 1

    # -- any thread --------------------------------------------------------------------------
    def arrays(self) -> dict[str, Any]:
        k = min(self.n, self.capacity)
        order = np.arange(self.n - k, self.n) % self.capacity
        out: dict[str, Any] = {f: np.frombuffer(self.cols[f], dtype=float)[order].copy()
                               for f in _FIELDS}
        m = max(1, len(self.members))
        out["work"] = np.frombuffer(self.work, dtype=float).reshape(-1, m)[order].copy()
        out["members"] = np.array(self.members or ["?"])
        out["first_cycle"] = np.array(self.n - k)
        gct, gcg = _gc_log.arrays()
        out["gc"], out["gc_gen"] = gct, gcg
        return out

    def save(self, path: str | os.PathLike, period: float, name: str) -> Path:
        path = Path(path)
        np.savez_compressed(path, period=np.array(period), name=np.array(name),
                            **self.arrays())
        return path


# -- the reader ----------------------------------------------------------------------------

def analyse(data: Mapping[str, Any], late_threshold: float | None = None) -> dict[str, Any]:
    """Split the lateness of every late cycle into its causes (seconds, summed)."""
    period = float(data["period"])
    thr = period * 0.05 if late_threshold is None else late_threshold
    dl, ex, wk, st, en = (np.asarray(data[f]) for f in ("deadline", "expected", "woke",
                                                          "start", "end"))
    rq = np.asarray(data["runq"])
    # traces written before the slice count existed: every blocked wait counts as the GIL
    sl = np.asarray(data["slices"]) if "slices" in data else np.full(len(dl), 2.0)
    late = st - dl
    prev_end = np.concatenate(([-np.inf], en[:-1]))
    idx = np.nonzero(late > thr)[0]
    gct = np.asarray(data["gc"]).reshape(-1, 2) if len(data["gc"]) else np.zeros((0, 2))
    rows = []
    totals = dict(previous_cycle=0.0, os_wakeup=0.0, timer_late=0.0, gil_or_blocked=0.0,
                  gc_overlap=0.0, spin_shortfall=0.0)
    for i in idx:
        lat = late[i]
        by_prev = max(0.0, min(lat, prev_end[i] - dl[i]))
        rest = lat - by_prev
        if np.isnan(ex[i]) or rest <= 0:
            os_w = gil = gcw = 0.0
        else:
            wait = max(0.0, wk[i] - ex[i])
            os_w = min(rq[i], wait)
            # garbage collections that overlap the wait say who held the GIL
            lo, hi = ex[i], wk[i]
            gcw = float(np.clip(np.minimum(gct[:, 1], hi) - np.maximum(gct[:, 0], lo), 0,
                                None).sum()) if len(gct) else 0.0
            gcw = min(gcw, wait - os_w)
            blocked = wait - os_w - gcw
            # the spin window before the deadline was slack: it delays nothing
            slack = max(0.0, dl[i] - ex[i])
            for part in ("blocked", "os", "gc"):
                if slack <= 0:
                    break
                if part == "blocked":
                    take = min(slack, blocked); blocked -= take
                elif part == "os":
                    take = min(slack, os_w); os_w -= take
                else:
                    take = min(slack, gcw); gcw -= take
                slack -= take
            gil = blocked + gcw
        timer = 0.0
        if gil > 0 and not np.isnan(ex[i]) and sl[i] <= 1 and gcw == 0:
            timer, gil = gil, 0.0          # one slice: woken late, never blocked on the GIL
        shortfall = max(0.0, rest - os_w - gil - timer)
        totals["previous_cycle"] += by_prev
        totals["os_wakeup"] += os_w
        totals["timer_late"] += timer
        totals["gil_or_blocked"] += gil - gcw
        totals["gc_overlap"] += gcw
        totals["spin_shortfall"] += shortfall
        rows.append((int(i), lat, by_prev, os_w, timer, gil - gcw, gcw, shortfall,
                     float(en[i] - st[i])))
    overruns = int(np.sum(en[:-1] > dl[1:])) if len(en) > 1 else 0
    return {"period": period, "cycles": len(dl), "late": len(idx), "threshold": thr,
            "overruns": overruns, "lateness": late, "totals": totals, "rows": rows,
            "work": np.asarray(data["work"]), "members": list(np.asarray(data["members"]))}


def report(path: str | os.PathLike, late_threshold: float | None = None, top: int = 15) -> str:
    with np.load(path) as f:
        data = {k: f[k] for k in f.files}
    a = analyse(data, late_threshold)
    lat = a["lateness"] * 1e6
    lines = [f"{path}: EC {data['name']} at {1 / a['period']:g} Hz, {a['cycles']} cycles traced"]
    if len(lat):
        lines.append(f"lateness [us]: p50 {np.percentile(lat, 50):.1f}  p99 "
                     f"{np.percentile(lat, 99):.1f}  p99.9 {np.percentile(lat, 99.9):.1f}  "
                     f"max {lat.max():.1f}")
    lines.append(f"late cycles (> {a['threshold'] * 1e6:.0f} us): {a['late']}; cycles that "
                 f"ended after the next deadline: {a['overruns']}")
    tot = a["totals"]
    total = sum(tot.values()) or 1.0
    lines.append("where the late time went (sum over late cycles):")
    for k, label in (("previous_cycle", "previous cycle still running"),
                     ("os_wakeup", "OS wake-up delay (run queue)"),
                     ("timer_late", "woken late (timer/host stall, 1 slice)"),
                     ("gil_or_blocked", "blocked after the wake-up (GIL)"),
                     ("gc_overlap", "garbage collection holding the GIL"),
                     ("spin_shortfall", "other (spin, clock)")):
        lines.append(f"  {label:38s} {tot[k] * 1e3:9.2f} ms  {100 * tot[k] / total:5.1f} %")
    work = a["work"] * 1e6
    if work.size:
        lines.append("member work per cycle [us]: " + ", ".join(
            f"{n} p50 {np.percentile(work[:, j], 50):.0f} max {work[:, j].max():.0f}"
            for j, n in enumerate(a["members"])))
    if a["rows"]:
        lines.append(f"latest late cycles (of {len(a['rows'])}) [us]: cycle, late, previous, "
                     f"os, timer, gil, gc, other, work")
        for r in sorted(a["rows"], key=lambda r: -r[1])[:top]:
            lines.append("  " + "  ".join([f"{r[0]:7d}"] + [f"{v * 1e6:8.0f}" for v in r[1:]]))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rtcf.trace",
                                 description="Explain the late cycles of an EC trace file.")
    ap.add_argument("files", nargs="+", help="trace files (.npz) written by an EC")
    ap.add_argument("--late-us", type=float, default=None,
                    help="a cycle is late above this [us] (default: 5 %% of the period)")
    ap.add_argument("--top", type=int, default=15, help="late cycles listed (the worst)")
    args = ap.parse_args(argv)
    for f in args.files:
        try:
            print(report(f, None if args.late_us is None else args.late_us * 1e-6, args.top))
        except (OSError, KeyError, ValueError) as e:
            print(f"{f}: not an rtcf trace file: {e}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
