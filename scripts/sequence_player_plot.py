"""Play a motion pattern on the SequencePlayer and plot the qRef it writes (a PNG).

    scripts/sequence_player_plot [--pattern model/patterns/nao_wave] [--tm 1.0]
        [--joints RShoulderPitch,RElbowRoll,HeadYaw] [--mode hoffarbib|linear]
        [--dt 0.01] [--out sequence_player.png]

The component runs on a stepped execution context (no ORB, no wall clock): the pattern is
loaded through the service's loadPattern, exactly as a client would, the EC is stepped until
isEmpty(), and every qRef sample is recorded. The dots are the pattern's records (at the
time each one is reached: tm + time_i - time_0). Needs matplotlib (.venv/bin/pip install -e
'.[demo]' in the repository).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def record(pattern: str, tm: float, dt: float, mode: str) -> tuple[list[str], np.ndarray]:
    """Joint names and every qRef sample written while the pattern plays: (k, 1 + dof),
    column 0 the time since the call [s]."""
    from rtcf.corba.idl import stub_module
    from rtcf.testing import Harness
    from rtcf_components.sequence_player.component import SequencePlayer

    sps = stub_module("OpenHRP").SequencePlayerService
    with Harness(SequencePlayer, params={"dt": dt}, rate=1.0 / dt) as h:
        h.activate()
        s = h.comp.service
        s.setInterpolationMode(sps.LINEAR if mode == "linear" else sps.HOFFARBIB)
        s.loadPattern(pattern, tm)
        if s.isEmpty():
            raise SystemExit(f"nothing to play: see the log above for {pattern!r}")
        rows = []
        k = 0
        while not s.isEmpty():
            h.step()
            k += 1
            for sample in h.read_all("qRef"):
                rows.append(np.r_[k * dt, sample.data])
        return list(h.comp.core.joint_names), np.array(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="scripts/sequence_player_plot", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pattern", default=str(ROOT / "model" / "patterns" / "nao_wave"),
                    help="pattern basename (files basename.pos, .zmp, ...)")
    ap.add_argument("--tm", type=float, default=1.0, help="time to the first record [s]")
    ap.add_argument("--joints", default="RShoulderPitch,RShoulderRoll,RElbowRoll,HeadYaw",
                    help="the joints to plot, comma separated (default RShoulderPitch, "
                         "RShoulderRoll, RElbowRoll, HeadYaw)")
    ap.add_argument("--mode", choices=("hoffarbib", "linear"), default="hoffarbib",
                    help="the player's interpolation (default hoffarbib)")
    ap.add_argument("--dt", type=float, default=0.01, help="sampling period [s]")
    ap.add_argument("--out", default="sequence_player.png",
                    help="the PNG to write (default sequence_player.png)")
    args = ap.parse_args(argv)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is needed: .venv/bin/pip install -e '.[demo]' in the repository",
              file=sys.stderr)
        return 2
    names, data = record(args.pattern, args.tm, args.dt, args.mode)
    wanted = [j.strip() for j in args.joints.split(",") if j.strip()]
    unknown = [j for j in wanted if j not in names]
    if unknown:
        print(f"unknown joints {unknown}; the model has {names}", file=sys.stderr)
        return 2
    rec = np.loadtxt(args.pattern + ".pos", ndmin=2)
    t_rec = args.tm + rec[:, 0] - rec[0, 0]
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for j in wanted:
        i = names.index(j)
        line, = ax.plot(data[:, 0], data[:, 1 + i], label=j)
        ax.plot(t_rec, rec[:, 1 + i], "o", color=line.get_color(), markersize=4)
    ax.set_xlabel("time since loadPattern [s]")
    ax.set_ylabel("qRef [rad]")
    ax.set_title(f"{Path(args.pattern).name}.pos, {args.mode}, tm = {args.tm} s, "
                 f"dt = {args.dt} s ({len(data)} samples)")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"{args.out}: {len(data)} qRef samples over {data[-1, 0]:.2f} s, joints {wanted}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
