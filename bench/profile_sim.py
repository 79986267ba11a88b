"""Where a simulated system's cycle spends its time: a sampling profile (py-spy) of the
manager running compositions/<system>.yaml flat out, summed per function over the cycles.

    .venv/bin/pip install py-spy                 # once: the sampling profiler (PyPI)
    .venv/bin/python bench/profile_sim.py [--system arm_sim] [--seconds 20] [--top 30]

The manager runs the composition as ``python -m rtcf.manager COMPOSITION --no-corba
--duration S`` in simulation time at factor 0 (its loggers write into a temporary folder);
py-spy samples it (``--rate`` per second, idle threads left out). Every sample whose stack
passes the time base's ``_instant`` (one simulated instant: every EC's cycle) counts as
cycle time; per function: its share of the cycle's samples with it anywhere on the stack
(inclusive) and as the leaf (self). The rest of the process (start-up, imports, the main
thread's waits) is left out and counted on the first line.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from common import machine_line, table  # noqa: E402

CYCLE_ROOT = re.compile(r"^(.*\.)?_instant \((.*/)?rtcf/simtime\.py\)$")
_FRAME = re.compile(r"^(?P<fn>.*) \((?P<file>[^()]*)\)$")


def short(frame: str) -> str:
    """'on_execute (/x/components/kinematics/component.py)' -> 'on_execute
    (kinematics/component.py)': the function and its file's last two parts."""
    m = _FRAME.match(frame)
    if not m:
        return frame
    parts = Path(m.group("file")).parts
    return f"{m.group('fn')} ({'/'.join(parts[-2:])})"


def summarise(raw: str) -> tuple[int, int, list[list]]:
    """py-spy's raw output (a collapsed stack and its count per line) -> (samples in all,
    samples in the cycle, rows [function, inclusive %, self %])."""
    total = in_cycle = 0
    inclusive: Counter = Counter()
    own: Counter = Counter()
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        total += n
        frames = stack.split(";")
        start = next((i for i, f in enumerate(frames) if CYCLE_ROOT.match(f)), None)
        if start is None:
            continue
        in_cycle += n
        below = [short(f) for f in frames[start + 1:]]
        for f in set(below):
            inclusive[f] += n
        if below:
            own[below[-1]] += n
    rows = [[f, 100.0 * c / in_cycle, 100.0 * own[f] / in_cycle]
            for f, c in inclusive.most_common()] if in_cycle else []
    return total, in_cycle, rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--system", default="arm_sim", help="a composition of compositions/")
    ap.add_argument("--seconds", type=float, default=20.0, help="simulated seconds")
    ap.add_argument("--rate", type=int, default=500, help="samples per second")
    ap.add_argument("--top", type=int, default=30, help="functions shown")
    a = ap.parse_args()
    spy = shutil.which("py-spy", path=f"{Path(sys.executable).parent}{os.pathsep}"
                       f"{os.environ.get('PATH', '')}")
    if spy is None:                        # as bench_ec's cyclictest row: say so, end
        print("py-spy: not installed (pip install py-spy into the venv: the sampling "
              "profiler this needs)")
        return 0
    path = ROOT / "compositions" / f"{a.system}.yaml"
    if not path.exists():
        print(f"profile_sim: no composition {path}", file=sys.stderr)
        return 2
    print(machine_line())
    with tempfile.TemporaryDirectory(prefix="profile-sim-") as tmpd:
        data = yaml.safe_load(path.read_text())
        for c in data.get("components") or []:
            if c.get("type") == "SampleLogger":
                c.setdefault("params", {})["path"] = str(Path(tmpd) / f"{c.get('name')}.npz")
        comp = Path(tmpd) / path.name
        comp.write_text(yaml.safe_dump(data, sort_keys=False))
        out = Path(tmpd) / "profile.txt"
        cmd = [spy, "record", "--format", "raw", "--nolineno", "--rate", str(a.rate),
               "--output", str(out), "--", sys.executable, "-m", "rtcf.manager", str(comp),
               "--no-corba", "--quiet", "--duration", str(a.seconds),
               "-o", "rtcf.simulation.enable:YES", "-o", "rtcf.simulation.real_time_factor:0"]
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if done.returncode != 0 or not out.exists():
            print(f"profile_sim: the profiled run failed ({done.returncode}): "
                  f"{(done.stderr or done.stdout).strip()[-600:]}", file=sys.stderr)
            return 1
        report = re.search(r"^simulation: .*$", done.stderr + done.stdout, re.M)
        total, in_cycle, rows = summarise(out.read_text())
    print(f"{a.system}, {a.seconds:g} s simulated flat out"
          + (f" ({report.group(0)})" if report else "") + f"; py-spy at {a.rate}/s: "
          f"{total} samples, {in_cycle} in the cycle ({100.0 * in_cycle / max(total, 1):.0f} "
          f"%; the rest: start-up, imports, the main thread)")
    print(table(["function (in the cycle)", "inclusive [% of cycle]", "self [% of cycle]"],
                rows[:a.top], digits=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
