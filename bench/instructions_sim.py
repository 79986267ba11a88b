"""Instructions per cycle of a simulated system, counted by valgrind's cachegrind: a count
that does not depend on what else the machine runs (timings do, on a shared VM).

    .venv/bin/python bench/instructions_sim.py [--system arm_sim] [--cycles 1000] [--moving]

The system (compositions/<system>.yaml, its loggers writing nothing) runs 0.5 simulated
seconds in ``rtcf.testing.SimSystem``, then ``--cycles`` periods more, under cachegrind; a
second run stops after the 0.5 s. The difference of the two counts over ``--cycles`` is the
figure (start-up, imports and the first 0.5 s cancel). With ``--moving`` (arm_sim) the
BlendingPlanner starts the blended square of bench/bench_sim_system.py's moving row at
0.5 s and both runs go on 0.2 s before the counted periods (the planning, in the planner's
worker process, is not counted; the square lasts about 5 s: up to 3000 periods are
counted while it moves). ``--cycles 0`` or running without valgrind installed says so and
ends with status 2.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from common import machine_line  # noqa: E402

LOGGERS = {"nao_sim": ("qLog", "sensorLog"), "arm_sim": ("qLog", "qRefLog")}
_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def _child(system: str, cycles: int, moving: bool = False) -> None:
    """The counted program: the system 0.5 s (with ``moving``: the square started, then
    0.2 s more), then ``cycles`` periods of its first EC."""
    sys.path.insert(0, str(ROOT))
    from rtcf.testing import SimSystem
    params = {name: {"path": ""} for name in LOGGERS[system]}
    with SimSystem(str(ROOT / "compositions" / f"{system}.yaml"), params=params) as s:
        s.advance(0.5)
        if moving:
            from bench_sim_system import SQUARE_VEL
            from rtcf_components.scenarios.runs import SQUARE
            core = s["BlendingPlanner0"].service.core
            if not core.move_blending(SQUARE, len(SQUARE), [SQUARE_VEL, -10000.0],
                                      [600.0, -10000.0], 0.0, 1, 0, 1):
                raise SystemExit(f"instructions_sim: moveBlending refused: "
                                 f"{core.last_error()}")
            s.advance(0.2)
        if cycles:
            ec = next(iter(s.manager.ecs.values()))
            s.advance(cycles * ec.period)


def count(system: str, cycles: int, moving: bool = False) -> int:
    env = dict(os.environ, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1")
    out = subprocess.run(
        ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
         sys.executable, __file__, "--child", system, str(cycles)]
        + (["--moving"] if moving else []),
        cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    m = _REFS.search(out.stderr)
    if out.returncode != 0 or m is None:
        raise SystemExit(f"instructions_sim: the counted run of {system} failed "
                         f"(exit {out.returncode}):\n{out.stderr[-2000:]}")
    return int(m.group(1).replace(",", ""))


def main() -> int:
    if sys.argv[1:2] == ["--child"]:
        _child(sys.argv[2], int(sys.argv[3]), sys.argv[4:5] == ["--moving"])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--system", choices=sorted(LOGGERS), default="arm_sim")
    ap.add_argument("--cycles", type=int, default=1000, help="periods counted (>= 1)")
    ap.add_argument("--moving", action="store_true",
                    help="arm_sim moving the blended square (up to 3000 periods)")
    a = ap.parse_args()
    if a.cycles < 1:
        ap.error(f"--cycles: expected >= 1, got {a.cycles}")
    if a.moving and a.system != "arm_sim":
        ap.error(f"--moving: only arm_sim moves the square, got --system {a.system}")
    if a.moving and a.cycles > 3000:
        ap.error(f"--moving: the square lasts about 5 s: expected --cycles <= 3000, "
                 f"got {a.cycles}")
    if shutil.which("valgrind") is None:
        print("instructions_sim: valgrind is not installed (apt-get install valgrind)",
              file=sys.stderr)
        return 2
    print(machine_line())
    base = count(a.system, 0, a.moving)
    more = count(a.system, a.cycles, a.moving)
    print(f"{a.system}{', moving' if a.moving else ''}: {(more - base) / a.cycles:,.0f} "
          f"instructions per cycle "
          f"({more:,} - {base:,} over {a.cycles} cycles; cachegrind, PYTHONHASHSEED=0)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
