"""SequencePlayer cost per cycle and loadPattern speed, next to their floors.

    PYTHONPATH=.:components python bench/bench_sequence_player.py [--cycles 5000] [--lines 100000]

Per-cycle rows (26 joints, dt 5 ms; each cycle timed alone with perf_counter_ns; median and
p99 in us; target: under 50 us):

* floor: one (3x6)@(6x26) numpy matmul into a preallocated array (what one Hoff-Arbib
  sample of every joint costs at least);
* SequencePlayerCore.step with all eight interpolators running online goals (q 26, zmp, acc,
  basePos, baseRpy 3 each, torque 26, wrenches 2 sensors x 6, optional 1) and two joint
  groups (head 2 joints, left arm 5) running online goals;
* the same with every signal playing queued (offline) samples instead;
* SequencePlayer.on_execute on a stepped Harness with the NAO model (all eight signals and
  two groups, 11 output ports written to their probes).

loadPattern rows: a .pos file of --lines records x 26 joints (11 significant digits), read
by numpy.loadtxt, by pattern.read_records (what loadPattern uses), and prepare_pattern
(read + every sample computed, the work done in the ORB thread before the EC appends it).
Median of 5 runs each. Prints, never asserts (see bench/README.md).
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import machine_line, percentiles, table  # noqa: E402

DT = 0.005
LONG = 1e6          # [s] goals that never finish during the run


def stats(name: str, ns: list[int], note: str = "") -> list:
    us = np.asarray(ns, dtype=float) / 1e3
    med, p99 = percentiles(us, [50, 99])
    return [name, med, p99, len(us), note]


def timed(fn, n: int) -> list[int]:
    out = []
    pc = time.perf_counter_ns
    gc.disable()
    try:
        for _ in range(n):
            t0 = pc()
            fn()
            out.append(pc() - t0)
    finally:
        gc.enable()
    return out


def busy_core(offline: bool):
    from rtcf_components.sequence_player.seqplay import SequencePlayerCore
    from rtcf_components.kinematics.model import load_model
    names = load_model("nao_h25_v5").joint_names
    core = SequencePlayerCore(names, DT, force_sensors=("lfsensor", "rfsensor"))
    core.add_joint_group("head", ["HeadYaw", "HeadPitch"])
    core.add_joint_group("larm", ["LShoulderPitch", "LShoulderRoll", "LElbowYaw",
                                  "LElbowRoll", "LWristYaw"])
    rng = np.random.default_rng(0)
    for sig, ip in core.inter.items():
        goal = rng.normal(size=ip.dim)
        if offline:
            ip.go(goal, 100.0)             # 20,000 queued samples
        else:
            ip.set_goal(goal, LONG)
    core.set_joint_angles_of_group("head", [0.3, 0.1], LONG)
    core.set_joint_angles_of_group("larm", [0.5, 0.2, -0.5, -0.5, 0.1], LONG)
    return core


def cycle_rows(n: int) -> list[list]:
    rows = []
    c = np.random.default_rng(1).normal(size=(6, 26))
    m = np.random.default_rng(2).normal(size=(3, 6))
    out = np.empty((3, 26))
    rows.append(stats("floor: (3x6)@(6x26) matmul", timed(lambda: np.dot(m, c, out=out), n)))
    core = busy_core(offline=False)
    rows.append(stats("core.step, 8 signals + 2 groups online", timed(core.step, n)))
    core = busy_core(offline=True)
    rows.append(stats("core.step, 8 signals queued + 2 groups", timed(core.step, n),
                      "queue pop: one row copy each"))
    from rtcf.testing import Harness
    from rtcf_components.sequence_player.component import SequencePlayer
    with Harness(SequencePlayer, params={"dt": DT}, rate=1 / DT) as h:
        h.activate()
        comp = h.comp
        busy = busy_core(offline=False)
        busy.force_sensors = comp.core.force_sensors        # NAO: no force sensor ports
        comp.core = SequencePlayerCoreShim(busy, comp.core)
        info = h.ec.member(comp).info
        probes = list(h.probes.values())

        def one() -> None:
            comp.on_execute(info)

        ns = []
        pc = time.perf_counter_ns
        for _ in range(n):
            t0 = pc()
            one()
            ns.append(pc() - t0)
            if len(ns) % 500 == 0:
                for p in probes:                            # drain (untimed)
                    while p.read().name == "NEW":
                        pass
        rows.append(stats("SequencePlayer.on_execute (NAO, 11 ports)", ns,
                          "inputs read + step + ports written"))
    return rows


class SequencePlayerCoreShim:
    """The busy core with the NAO component's wrench width (NAO has no force sensor, so
    the component has no wrench port; the busy core's wrenches still interpolate)."""

    def __init__(self, busy, orig):
        self.__dict__["_b"] = busy

    def __getattr__(self, name):
        return getattr(self.__dict__["_b"], name)


def load_rows(lines: int, runs: int = 5) -> list[list]:
    from rtcf_components.sequence_player.pattern import read_records
    from rtcf_components.sequence_player.seqplay import SequencePlayerCore
    rows = []
    with tempfile.TemporaryDirectory() as d:
        base = Path(d) / "big"
        data = np.c_[np.arange(lines) * DT, np.random.default_rng(0).normal(size=(lines, 26))]
        np.savetxt(f"{base}.pos", data, fmt="%.11g")
        size = Path(f"{base}.pos").stat().st_size / 1e6
        core = SequencePlayerCore([f"j{i}" for i in range(26)], DT)

        def med(fn) -> float:
            ts = []
            for _ in range(runs):
                t0 = time.perf_counter()
                fn()
                ts.append(time.perf_counter() - t0)
            return float(np.median(ts)) * 1e3

        t_np = med(lambda: np.loadtxt(f"{base}.pos"))
        t_rr = med(lambda: read_records(f"{base}.pos", 26))
        t_pp = med(lambda: core.prepare_pattern(str(base)))
        note = f"{lines} x 27 values, {size:.1f} MB"
        rows.append(["numpy.loadtxt", t_np, 1.0, note])
        rows.append(["pattern.read_records (loadPattern)", t_rr, t_rr / t_np, "same file"])
        rows.append(["prepare_pattern (read + all samples)", t_pp, t_pp / t_np,
                     "ORB thread; the EC only appends"])
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cycles", type=int, default=5000)
    ap.add_argument("--lines", type=int, default=100_000)
    args = ap.parse_args()
    print(machine_line())
    print(table(["per cycle", "p50 [us]", "p99 [us]", "n", "note"], cycle_rows(args.cycles)))
    print()
    print(table(["loadPattern .pos", "median [ms]", "x loadtxt", "note"],
                load_rows(args.lines)))


if __name__ == "__main__":
    main()
