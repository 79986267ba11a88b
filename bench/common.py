"""Shared helpers for the benchmarks: percentiles, timing batches, CPU use, tables.

Benchmarks print figures side by side with their peers; they never assert on time (the host
is a shared VM with millisecond stalls, see docs/architecture.md, "Measured on the
development machine").
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
import time
from typing import Any, Callable, Sequence

import numpy as np

US = 1e6  # seconds -> microseconds


def percentiles(values: np.ndarray, ps: Sequence[float]) -> list[float]:
    """Percentiles of ``values`` (empty -> NaN each)."""
    if len(values) == 0:
        return [float("nan")] * len(ps)
    return [float(v) for v in np.percentile(values, ps)]


def hist_percentiles(counts: np.ndarray, ps: Sequence[float],
                     overflow_value: float = float("inf")) -> list[float]:
    """Percentiles from a histogram with 1-unit buckets (bucket i holds value i);
    samples beyond the last bucket count as ``overflow_value``."""
    total = counts.sum()
    if total == 0:
        return [float("nan")] * len(ps)
    cum = np.cumsum(counts)
    out = []
    for p in ps:
        rank = p / 100.0 * total
        i = int(np.searchsorted(cum, rank, side="left"))
        out.append(float(i) if i < len(counts) else overflow_value)
    return out


class CpuMeter:
    """Process CPU time (all threads, plus waited-for children) over wall time."""

    def __enter__(self) -> "CpuMeter":
        self._t0 = os.times()
        self._w0 = time.perf_counter()
        return self

    def __exit__(self, *exc: Any) -> None:
        t1 = os.times()
        self.wall = time.perf_counter() - self._w0
        self.cpu = (t1.user - self._t0.user) + (t1.system - self._t0.system)
        self.children = ((t1.children_user - self._t0.children_user)
                         + (t1.children_system - self._t0.children_system))

    @property
    def percent(self) -> float:
        return 100.0 * self.cpu / self.wall if self.wall > 0 else float("nan")

    @property
    def children_percent(self) -> float:
        return 100.0 * self.children / self.wall if self.wall > 0 else float("nan")


def time_batches(fn: Callable[[int], None], per_batch: int, batches: int,
                 warmup: int = 3) -> np.ndarray:
    """timeit-style: ``fn(per_batch)`` runs the operation per_batch times; returns the time
    per operation [s] of each batch (the spread shows the VM's noise)."""
    for _ in range(warmup):
        fn(per_batch)
    out = np.empty(batches)
    perf = time.perf_counter
    for i in range(batches):
        t0 = perf()
        fn(per_batch)
        out[i] = (perf() - t0) / per_batch
    return out


def fmt(v: Any, digits: int = 1) -> str:
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    if isinstance(v, (int, np.integer)):
        return f"{int(v):,}"
    v = float(v)
    if v != v:
        return "-"
    if v == float("inf"):
        return "inf"
    return f"{v:,.{digits}f}"


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], digits: int = 1) -> str:
    """A plain text table: first column left-aligned, the others right-aligned."""
    cells = [[fmt(c, digits) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h)
              for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) if i == 0 else h.rjust(w)
                       for i, (h, w) in enumerate(zip(headers, widths)))]
    lines.append("  ".join("-" * w for w in widths))
    for r in cells:
        lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                               for i, (c, w) in enumerate(zip(r, widths))))
    return "\n".join(lines)


def machine_line() -> str:
    """One line describing where the figures come from."""
    try:
        load = "load %.2f %.2f %.2f" % os.getloadavg()
    except OSError:
        load = ""
    return (f"# {platform.node()} {platform.machine()} {os.cpu_count()} CPUs, "
            f"Linux {platform.release()}, Python {sys.version.split()[0]}, "
            f"numpy {np.__version__}, {load}")


class CyclictestRun:
    """One cyclictest run: a 1 us latency histogram (last bucket: overflows) and summary."""

    def __init__(self, counts: np.ndarray, summary: dict[str, int], cpu_percent: float,
                 wall: float, loops: int):
        self.counts, self.summary = counts, summary
        self.cpu_percent, self.wall, self.loops = cpu_percent, wall, loops

    @property
    def n(self) -> int:
        return int(self.counts.sum())

    def percentiles_us(self, ps: Sequence[float]) -> list[float]:
        return hist_percentiles(self.counts, ps, overflow_value=float(len(self.counts) - 1))

    @property
    def max_us(self) -> float:
        return float(self.summary.get("Max Latencies", float("nan")))

    def late_count(self, threshold_us: float) -> int:
        return int(self.counts[int(threshold_us) + 1:].sum())


def run_cyclictest(seconds: float, rate: float, fifo: bool = True,
                   hmax: int = 20000) -> CyclictestRun | str:
    """C cyclictest (rt-tests) at ``rate`` for ``seconds``, mlockall, SCHED_FIFO 80 or
    SCHED_OTHER: the machine's floor. A string says why it could not run."""
    exe = shutil.which("cyclictest")
    if exe is None:
        return "cyclictest: not installed (apt-get install rt-tests)"
    interval = int(round(1e6 / rate))
    loops = int(seconds * rate)
    cmd = [exe, "-m", "-i", str(interval), "-l", str(loops), "-q", "-h", str(hmax)]
    cmd += ["-p", "80"] if fifo else ["--policy=other", "-p", "0"]
    with CpuMeter() as cpu:
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True,
                                  timeout=seconds * 3 + 30)
        except (OSError, subprocess.TimeoutExpired) as e:
            return f"cyclictest: failed to run ({e})"
    if proc.returncode != 0:
        return (f"cyclictest: exited {proc.returncode}: "
                f"{(proc.stderr or proc.stdout).strip()[-300:]}")
    counts = np.zeros(hmax, dtype=np.int64)
    summary: dict[str, int] = {}
    for line in proc.stdout.splitlines():
        m = re.match(r"^(\d{6})\s+(\d+)", line)
        if m:
            b = int(m.group(1))
            if b < hmax:
                counts[b] = int(m.group(2))
            continue
        m = re.match(r"^# (Total|Min Latencies|Avg Latencies|Max Latencies|"
                     r"Histogram Overflows):\s+(\d+)", line)
        if m:
            summary[m.group(1)] = int(m.group(2))
    full = np.append(counts, summary.get("Histogram Overflows", 0))
    return CyclictestRun(full, summary, cpu.children_percent, cpu.wall, loops)
