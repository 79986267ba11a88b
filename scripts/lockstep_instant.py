"""Draw one simulated instant of compositions/arm_sim_split.yaml across its two processes
(docs/img/lockstep_instant.png): the launcher's time base releases the instant at its
wall-clock time, steps the planner's process once (one round trip) with the samples the
launcher wrote for it since its previous step (q and dq), the planner's cycle writes its
qRef into the step's reply, the launcher hands it to its readers' buffers, then the
launcher's own part of the EC runs (controller manager, physics, kinematics, loggers; the
new q and dq are queued for the next step), and the time base waits for the next instant.

The durations are parameters (``--rtt``, ``--planner``, ``--local`` in microseconds;
defaults: medians of bench/bench_lockstep.py on the development VM), so the picture is a
schedule drawn to scale, not a trace.

    scripts/lockstep_instant [--out FILE] [--rtt US] [--planner US] [--local US]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def draw(out: Path, rtt: float, planner: float, local: float, period: float = 1000.0) -> Path:
    lanes = ["planner: ORB thread\n(serves step)", "main: time base thread\n(rtcf-sim)"]
    y = {name: 1.6 * i for i, name in enumerate(lanes)}
    TB, PL = lanes[1], lanes[0]
    h = 0.5
    fig, (ax, strip) = plt.subplots(2, 1, figsize=(12, 5.4), dpi=110,
                                    gridspec_kw={"height_ratios": [4, 1]})

    def bar(lane: str, t0: float, t1: float, text: str, color: str, above: bool = False,
            below: bool = False) -> None:
        ax.broken_barh([(t0, t1 - t0)], (y[lane] - h / 2, h), facecolors=color,
                       edgecolors="black", linewidth=0.6)
        if below:
            ax.text((t0 + t1) / 2, y[lane] - h / 2 - 0.08, text, ha="center", va="top",
                    fontsize=8.5)
        elif above:
            ax.text((t0 + t1) / 2, y[lane] + h / 2 + 0.08, text, ha="center", va="bottom",
                    fontsize=8.5)
        else:
            ax.text((t0 + t1) / 2, y[lane], text, ha="center", va="center", fontsize=8.5)

    def arrow(t0: float, lane0: str, t1: float, lane1: str, text: str, dx: float = 6
              ) -> None:
        y0 = y[lane0] + (-h / 2 if y[lane1] < y[lane0] else h / 2)
        y1 = y[lane1] + (h / 2 if y[lane1] < y[lane0] else -h / 2)
        ax.add_patch(FancyArrowPatch((t0, y0), (t1, y1), arrowstyle="-|>",
                                     mutation_scale=12, color="0.2", linewidth=1.1))
        ax.text((t0 + t1) / 2 + dx, (y0 + y1) / 2, text, fontsize=8.5, color="0.15",
                va="center")

    half = rtt / 2
    t_arrive = half
    t_inbox = t_arrive + 10
    t_planned = t_inbox + planner
    t_back = t_planned + half
    t_given = t_back + 10
    end = t_given + local
    bar(TB, -70, 0, "spin", "#dddddd")
    bar(TB, 0, t_back, "waits for the step", "#f2f2f2")
    arrow(0, TB, t_arrive, PL, "step(t, [arm], inbox: q, dq)\none call per process\n"
          "and instant, data included", 8)
    bar(PL, t_arrive, t_inbox, "", "#fdae6b")
    bar(PL, t_inbox, t_planned, "inbox put into its buffers, then BlendingPlanner0 "
        "on_execute(t):\nits qRef write goes into the reply", "#9ecae1", below=True)
    arrow(t_planned, PL, t_back, TB, "step returns [qRef]", 8)
    bar(TB, t_back, t_given, "", "#fdae6b")
    bar(TB, t_given, end, "ControllerManager0, Simulator0 (physics),\nKinematics0, qLog, "
        "qRefLog at t; q, dq queued", "#a1d99b")
    ax.text(t_back, y[TB] + h / 2 + 0.08, "qRef put into ControllerManager0.qRef and "
            "qRefLog.in buffers", ha="left", va="bottom", fontsize=8.5)
    bar(TB, end, end + 80, "idle...", "#fafafa")
    ax.axvline(0, color="tab:red", linewidth=1)
    ax.text(0, y[TB] + 0.75, " instant t released at its wall time", color="tab:red",
            fontsize=8.5, ha="left")
    ax.set_yticks([y[n] for n in lanes])
    ax.set_yticklabels(lanes)
    ax.set_ylim(-0.9, y[TB] + 1.1)
    ax.set_xlim(-90, end + 90)
    ax.set_xlabel("wall time from the instant's release [us]")
    ax.set_title("One 1 ms instant of arm_sim_split across its two processes (paced at real "
                 "time)", fontsize=10.5)
    ax.grid(axis="x", alpha=0.3)
    # the whole period: the busy part and the wait for the next instant
    strip.broken_barh([(0, end)], (0, 1), facecolors="#a1d99b", edgecolors="black",
                      linewidth=0.6)
    strip.broken_barh([(end, period - 70 - end)], (0, 1), facecolors="#fafafa",
                      edgecolors="black", linewidth=0.6)
    strip.broken_barh([(period - 70, 70)], (0, 1), facecolors="#dddddd", edgecolors="black",
                      linewidth=0.6)
    strip.text(end / 2, 0.5, "instant t", ha="center", va="center", fontsize=8.5)
    strip.text((end + period - 70) / 2, 0.5, "the pacer waits (timed wait) for instant "
               "t + 1 ms", ha="center", va="center", fontsize=8.5)
    strip.text(period - 35, 0.5, "spin", ha="center", va="center", fontsize=8)
    strip.set_xlim(-20, period + 20)
    strip.set_yticks([])
    strip.set_xlabel("the whole period [us]: time base thread")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    plt.close(fig)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(prog="scripts/lockstep_instant",
                                 description=__doc__.split("\n\n    scripts/")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "lockstep_instant.png",
                    help="the PNG to write (default: docs/img/lockstep_instant.png)")
    ap.add_argument("--rtt", type=float, default=120.0,
                    help="the step's round trip without the cycle [us]")
    ap.add_argument("--planner", type=float, default=40.0,
                    help="the planner's cycle while it streams [us]")
    ap.add_argument("--local", type=float, default=160.0,
                    help="the launcher's part of the instant [us]")
    args = ap.parse_args()
    print(draw(args.out, args.rtt, args.planner, args.local))


if __name__ == "__main__":
    main()
