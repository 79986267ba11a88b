"""Run eight worked blending examples on a BlendingPlanner (a line, a timed line, a short
line, a blended corner, square and triangle, a half circle, a relative move: each with the
path length and duration worked out by hand) and plot the planned paths and speed profiles
into a PNG.

    scripts/run compositions/arm_blending.yaml &      # then:
    scripts/blending_demo --nameserver localhost:2809 --png blending_demo.png
    scripts/blending_demo --local                     # no system: an in-process planner
                                                      # on a stepped EC (deterministic)

The examples start "at (0, 0, 0)" with a constant orientation: here they run in the TOOL
frame fixed at the arm's current TCP pose (ref = 1, ABSOLUTE), which is exactly that, on
the M1013 at its home posture; example 6 runs RELATIVE. After each example the arm returns
to the start with one LINE. Each row of the printed table gives the worked-out length and
duration next to the planner's. The PNG needs matplotlib (``.venv/bin/pip install -e
'.[demo]'`` in the repository); without it only the table is printed.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

from rtcf_components.blending_planner.proxy import DR_CIRCLE, DR_LINE, BlendingPlannerProxy, posb  # noqa: E402

H = 150 * math.sqrt(3)
EXAMPLES = [
    # name, segments, vel, acc, time, mode, worked length [mm], worked duration [s]
    ("1 line", [posb(DR_LINE, [300, 0, 0, 0, 0, 0])], 100, 200, 0.0, 0, 300.0, 3.5),
    ("1 line, time 5 s", [posb(DR_LINE, [300, 0, 0, 0, 0, 0])], 100, 200, 5.0, 0, 300.0, 5.0),
    ("1 short line", [posb(DR_LINE, [40, 0, 0, 0, 0, 0])], 100, 200, 0.0, 0, 40.0, 0.8944),
    ("2 corner r 50", [posb(DR_LINE, [200, 0, 0, 0, 0, 0], radius=50),
                       posb(DR_LINE, [200, 200, 0, 0, 0, 0])], 100, 200, 0.0, 0,
     378.5398, 4.2854),
    ("3 square r 20", [posb(DR_LINE, [100, 0, 0, 0, 0, 0], radius=20),
                       posb(DR_LINE, [100, 100, 0, 0, 0, 0], radius=20),
                       posb(DR_LINE, [0, 100, 0, 0, 0, 0], radius=20),
                       posb(DR_LINE, [0, 0, 0, 0, 0, 0])], 50, 100, 0.0, 0, 374.2478, 7.9850),
    ("4 triangle r 30", [posb(DR_LINE, [300, 0, 0, 0, 0, 0], radius=30),
                         posb(DR_LINE, [150, H, 0, 0, 0, 0], radius=30),
                         posb(DR_LINE, [0, 0, 0, 0, 0, 0])], 100, 200, 0.0, 0,
     852.5520, 9.0255),
    ("5 half circle", [posb(DR_CIRCLE, [100, 100, 0, 0, 0, 0], [200, 0, 0, 0, 0, 0])],
     50, 100, 0.0, 0, 314.1593, 6.7832),
    ("6 relative", [posb(DR_LINE, [100, 0, 0, 0, 0, 0], radius=10),
                    posb(DR_LINE, [0, 100, 0, 0, 0, 0])], 100, 200, 0.0, 1,
     200 - 20 + 5 * math.pi, None),
]


class LocalPlanner:
    """The same calls as BlendingPlannerProxy on an in-process component (stepped EC)."""

    def __init__(self, rate: float):
        from rtcf_components.blending_planner import BlendingPlanner
        from rtcf.testing import Harness
        self.h = Harness(BlendingPlanner, rate=rate)
        self.h.activate()
        self.servant = self.h.comp.service

    def move_blending(self, segs: list, vel: list, acc: list, time: float = 0.0,
                      ref: int = 0, mode: int = 0, sync_type: int = 0) -> bool:
        ok = self.servant.core.move_blending(segs, len(segs), vel, acc, time, ref, mode, 1)
        while ok and self.h.comp.motion is not None:
            self.h.step()
        return ok

    def last_error(self) -> str:
        return self.servant.getLastError()

    def last_plan(self) -> Any:
        return self.servant.getLastPlan()

    def tcp_pose(self) -> list[float]:
        return list(self.servant.getTcpPose())


def run(bp: Any) -> list[tuple]:
    home = bp.tcp_pose()
    results = []
    for name, segs, v, a, t, mode, want_len, want_T in EXAMPLES:
        ok = bp.move_blending(segs, [v, -10000.0], [a, -10000.0], t, 1, mode, 0)
        if not ok:
            print(f"{name}: refused: {bp.last_error()}")
            continue
        plan = bp.last_plan()
        results.append((name, plan, want_len, want_T))
        here = bp.tcp_pose()
        if math.dist(here[:3], home[:3]) > 1e-3:
            back = [posb(DR_LINE, list(home))]
            if not bp.move_blending(back, [200.0, -10000.0], [400.0, -10000.0], 0.0, 0, 0, 0):
                print(f"return to start refused: {bp.last_error()}")
                break
    return results


def report(results: list[tuple]) -> None:
    print(f"{'example':18} {'L spec [mm]':>12} {'L [mm]':>11} {'T spec [s]':>11} {'T [s]':>8} "
          f"{'cycles':>7} {'v [mm/s]':>9}")
    for name, plan, want_len, want_T in results:
        spec_T = f"{want_T:.4f}" if want_T is not None else "-"
        print(f"{name:18} {want_len:12.4f} {plan.length:11.4f} {spec_T:>11} "
              f"{plan.duration:8.4f} {len(plan.samples) - 1:7d} {plan.vPeak:9.3f}")


def plot(results: list[tuple], path: Path) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (.venv/bin/pip install -e '.[demo]' in the "
              "repository): no PNG written")
        return False
    fig, (ax_p, ax_v) = plt.subplots(1, 2, figsize=(13, 5.5))
    for name, plan, _, _ in results:
        xs = [p.pose[0] for p in plan.samples]
        ys = [p.pose[1] for p in plan.samples]
        ax_p.plot(xs, ys, label=name)
        ax_v.plot([p.t for p in plan.samples], [p.speed for p in plan.samples], label=name)
    ax_p.set(title="TCP paths, top view (base frame)", xlabel="x [mm]", ylabel="y [mm]")
    ax_p.set_aspect("equal", adjustable="datalim")
    ax_p.legend(fontsize=7)
    ax_v.set(title="planned TCP speed", xlabel="t [s]", ylabel="speed [mm/s]")
    ax_v.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")
    return True


def main() -> int:
    ap = argparse.ArgumentParser(prog="scripts/blending_demo", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nameserver", default="localhost:2809", metavar="HOST:PORT",
                    help="naming service of the running system (default localhost:2809)")
    ap.add_argument("--name", default="BlendingPlanner0",
                    help="instance name of the BlendingPlanner (default BlendingPlanner0)")
    ap.add_argument("--local", action="store_true",
                    help="plan on an in-process component instead of a running system")
    ap.add_argument("--rate", type=float, default=100.0, help="EC rate of --local [Hz]")
    ap.add_argument("--png", type=Path, default=Path("blending_demo.png"),
                    help="the PNG to write (default blending_demo.png)")
    args = ap.parse_args()
    bp = LocalPlanner(args.rate) if args.local else BlendingPlannerProxy(
        args.name, nameserver=args.nameserver)
    results = run(bp)
    report(results)
    plot(results, args.png)
    return 0 if len(results) == len(EXAMPLES) else 1


if __name__ == "__main__":
    sys.exit(main())
