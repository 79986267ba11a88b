"""A batch of simulation trials (scripts/batch) next to the same trials run one after another.

    .venv/bin/python bench/bench_batch.py [--trials 8] [--duration 5] [--rounds 2]
        [--composition compositions/arm_sim.yaml]

Per round, alternating: ``scripts/batch ... -j 1`` (the trials one after another, each its
own process: what running them by hand in a loop costs) and ``scripts/batch ... -j JOBS``
(JOBS = the number of cores by default). Prints each run's wall time, the ratio batch /
one after another (median over the rounds), the machine's load before and after each run,
and checks that both gave the same logs (the summaries' digests).

The ratio's floor is 1 / cores (0.5 on 2 cores) when nothing else runs; another job on the
machine takes the cores the batch would use, so say the load beside the figure.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from common import machine_line, table  # noqa: E402


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3]) \
        if Path("/proc/loadavg").exists() else "-"


def batch(composition: Path, trials: int, duration: float, jobs: int, out: Path) -> dict:
    """One scripts/batch run: wall time, summary, load before and after."""
    before = load()
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "batch.py"),
                           str(composition), "--duration", str(duration), "--trials",
                           str(trials), "-j", str(jobs), "--out", str(out)],
                          capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"scripts/batch -j {jobs} failed ({done.returncode}): "
                           f"{done.stderr.strip()[-400:]}")
    summary = json.loads((out / "summary.json").read_text())
    digests = sorted({tuple(sorted((lg["logger"], lg["sha256"]) for lg in t["logs"]))
                      for t in summary["trials"]})
    return {"wall": wall, "load": f"{before} -> {load()}", "digests": digests,
            "trial_walls": [t["wall_s"] for t in summary["trials"]]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--composition", default=str(ROOT / "compositions" / "arm_sim.yaml"))
    ap.add_argument("--trials", type=int, default=8)
    ap.add_argument("--duration", type=float, default=5.0, help="simulated s per trial")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    print(machine_line())
    comp = Path(a.composition).resolve()
    rows, ratios = [], []
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmpd:
        for rnd in range(1, a.rounds + 1):
            seq = batch(comp, a.trials, a.duration, 1, Path(tmpd) / f"seq-{rnd}")
            par = batch(comp, a.trials, a.duration, a.jobs, Path(tmpd) / f"par-{rnd}")
            same = "yes" if seq["digests"] == par["digests"] else "NO"
            ratios.append(par["wall"] / seq["wall"])
            for how, r in ((f"one after another (-j 1)", seq), (f"scripts/batch -j {a.jobs}",
                                                                par)):
                rows.append([rnd, how, r["wall"], float(np.median(r["trial_walls"])),
                             r["load"], same])
    print(f"{a.trials} trials of {comp.name}, {a.duration:g} s simulated each "
          f"(wall time of the whole batch; load = /proc/loadavg before -> after):")
    print(table(["round", "how", "wall [s]", "median trial [s]", "load", "same logs"], rows,
                digits=2))
    print(f"\nbatch / one after another: median {np.median(ratios):.2f} "
          f"(rounds: {', '.join(f'{r:.2f}' for r in ratios)}; floor 1/{a.jobs} = "
          f"{1 / a.jobs:.2f} on an idle machine; target <= 0.6)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
