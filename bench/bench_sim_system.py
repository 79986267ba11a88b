"""The simulation systems (compositions/nao_sim.yaml, arm_sim.yaml): how fast and how punctual.

1. ``fast``: simulation time as fast as the machine allows. In process
   (rtcf.testing.SimSystem: the manager in simulation mode, no ORB, one advance) and
   through scripts/run with
   ``-o rtcf.simulation.real_time_factor:0 --duration S``: the real-time factor achieved =
   simulated seconds / wall seconds, and the wall time per cycle.
2. ``realtime``: real time, nao_sim at 100 Hz and arm_sim at 1 kHz, each round next to
   ``cyclictest`` at the same interval for as long, two ways:
   * simulation time paced at factor 1 (the compositions' own setting), in process, with
     the project's rtc.conf and the same -o overrides as the wall-clock run (spin window,
     SCHED_FIFO): over ``--seconds`` after ``--warmup``, the time base's wall lateness of
     each cycle (SimulationEC stats), cycles later than one period, the achieved factor, the
     process's CPU;
   * the same composition on wall-clock periodic ECs through scripts/run
     (``-o rtcf.simulation.enable:NO``: its own process, CORBA, the EC trace on;
     bench/bench_system.py's runner and table: overruns, lateness p50 / p99 / p99.9 / max,
     CPU).

Prints figures and medians; asserts nothing. Keep runs short on a shared machine and say
"loaded" beside any figure (the machine line prints the load average).

    .venv/bin/python bench/bench_sim_system.py --seconds 10 --rounds 2
    .venv/bin/python bench/bench_sim_system.py --only fast
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT))

import bench_system  # noqa: E402
from common import machine_line, run_cyclictest, table  # noqa: E402

SYSTEMS = {"nao_sim": ROOT / "compositions" / "nao_sim.yaml",
           "arm_sim": ROOT / "compositions" / "arm_sim.yaml"}


def rate_of(path: Path) -> float:
    data = yaml.safe_load(path.read_text())
    return max(float(ec["rate"]) for ec in data["execution_contexts"])


PHYSICS = {"nao_sim": ("nao_v5", 0.01), "arm_sim": ("m1013", 0.001)}   # model, EC period
SQUARE_VEL = 150.0                                   # mm/s: the arm's square (see --motion)


BLOCK = 0.2     # [s] simulated: the bare physics runs in blocks of this, each from the state
                # the system's physics is in (a held arm, a standing NAO: the same work)


def physics_of(system, name: str):
    """The Simulation inside a running system: the Simulator's, or the DCM's MuJoCo body's."""
    if name == "nao_sim":
        return system["DCM0"].robot_body.sim
    return system["Simulator0"].sim


def fast_in_process(name: str, seconds: float, rounds: int = 1,
                    motion: bool = False, bare: str = "state") -> list:
    """Stepped ECs back to back in this process, next to the bare physics of the same
    system in the same process, ``rounds`` alternations of ``seconds / rounds`` simulated
    seconds each (the system first in even rounds, the bare physics first in odd ones, so a
    drift of the machine's speed weighs on both). The bare physics is ``mj_step`` on the
    system's own MuJoCo model and substeps, on a private MjData, in blocks of BLOCK
    simulated seconds each started from a copy of the state the system's physics is in
    (its last torques or targets held: the same work as the system's steps, where a
    separate arm or NAO left alone would fall and do other work), as many blocks as it takes
    to run as long as the system's part of the round (the copies not timed). Returns
    [name, mode, sim s, wall s, RTF, wall us/cycle, CPU us/cycle, bare CPU us/period,
    x physics (the median of the rounds' ratios), spread (their lowest-highest), x physics
    of the sums, the rounds' ratios]. CPU is the process's CPU time (the cycles run in the
    time base's thread, this one waits): on a loaded machine it counts the work, not the
    waits for a core. Before the first round the system runs 0.05 s (start-up cycles left
    out). With ``motion`` (arm_sim), the BlendingPlanner streams a blended square
    (moveBlending, scenarios.runs.SQUARE at SQUARE_VEL) through the whole run. With
    ``bare="free"`` the bare physics is the yardstick of the figures before 2026-11-27's
    armcycle pass: a Simulation of the same model from its initial posture, left alone and
    stepped on from round to round (the arm falls onto its joint limits, the NAO to the
    floor: more work per step than the held systems do)."""
    import mujoco

    from rtcf.testing import SimSystem
    logs = {"nao_sim": ("qLog", "sensorLog"), "arm_sim": ("qLog", "qRefLog")}[name]
    period = PHYSICS[name][1]
    step, copy = mujoco.mj_step, mujoco.mj_copyData
    clock = time.process_time
    wall = cpu = bare_cpu = 0.0
    cycles = 0
    ratios = []
    bare_periods = 0
    last_sys = 0.0
    with SimSystem(SYSTEMS[name], params={k: {"path": ""} for k in logs}) as s:
        s.advance(0.05)                                   # start-up cycles excluded
        mine = physics_of(s, name)        # its model, its substeps, its state: copied
        if bare == "free":
            from rtcf_components.simulator import SimModel, Simulation
            alone = Simulation(SimModel.load(PHYSICS[name][0]), period)
            m, d, substeps = alone.mj_model, alone.mj_data, alone.substeps
        else:
            m, substeps = mine.mj_model, mine.substeps
            d = mujoco.MjData(m)
            copy(d, m, mine.mj_data)
        for _ in range(int(round(0.05 / period))):     # the bare loop's first calls
            step(m, d, substeps)
        if motion:
            from rtcf_components.scenarios.runs import SQUARE
            core = s["BlendingPlanner0"].service.core
            if not core.move_blending(SQUARE, len(SQUARE), [SQUARE_VEL, -10000.0],
                                      [600.0, -10000.0], 0.0, 1, 0, 1):
                raise RuntimeError(f"moveBlending refused: {core.last_error()}")
        ecs = list(s.manager.ecs.values())
        chunk = seconds / rounds
        n_bare = max(1, min(int(round(chunk / period)), int(round(BLOCK / period))))
        for rnd in range(rounds):
            r_sys = r_bare = 0.0
            for part in ((0, 1) if rnd % 2 == 0 else (1, 0)):
                if part == 0:
                    c0, t0, p0 = sum(ec.cycles for ec in ecs), time.perf_counter(), clock()
                    s.advance(chunk)
                    r_sys = clock() - p0
                    wall += time.perf_counter() - t0
                    cycles += sum(ec.cycles for ec in ecs) - c0
                else:        # blocks of n_bare periods, each from the system's state
                    k = 0        # now, for as long as the system ran (the last round's when
                    while True:  # the bare physics comes first)
                        if bare != "free":
                            copy(d, m, mine.mj_data)
                        p0 = clock()
                        for _ in range(n_bare):
                            step(m, d, substeps)
                        r_bare += clock() - p0
                        k += 1
                        if r_bare >= (r_sys or last_sys):
                            break
            last_sys = r_sys
            cpu += r_sys
            bare_cpu += r_bare
            bare_periods += k * n_bare
            if r_bare > 0.0:
                ratios.append((r_sys / (chunk / period)) / (r_bare / (k * n_bare)))
        if motion and s["BlendingPlanner0"].motion is None:
            print(f"# note: the {name} motion ended before the run did")
    per_period = cpu / (seconds / period)
    bare_per_period = bare_cpu / bare_periods
    how = ("in process (SimSystem)" + (", moving" if motion else "")
           + (", bare free" if bare == "free" else ""))
    spread = f"{min(ratios):.2f}-{max(ratios):.2f}" if ratios else "-"
    return [name, how, seconds, wall, seconds / wall, wall / cycles * 1e6,
            cpu / cycles * 1e6, bare_per_period * 1e6,
            float(np.median(ratios)) if ratios else None, spread,
            per_period / bare_per_period, ratios]


def simulation_mode_available() -> bool:
    try:
        import rtcf.simtime  # noqa: F401
        return True
    except ImportError:
        return False


def fast_scripts_run(name: str, seconds: float) -> list:
    """scripts/run at real-time factor 0 for ``seconds`` of simulated time (wall clock of
    the whole command, start-up included, and without: the status line's figures)."""
    cmd = [str(ROOT / "scripts" / "run"), str(SYSTEMS[name]), "--duration", str(seconds),
           "-o", f"corba.nameservers:localhost:{bench_system.free_port()}",
           "-o", "rtcf.simulation.enable:YES", "-o", "rtcf.simulation.real_time_factor:0"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds * 60 + 120)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        return [name, f"scripts/run failed ({proc.returncode}): "
                f"{(proc.stderr or proc.stdout).strip()[-200:]}", seconds, wall, None, None,
                None, None, None, None, None]
    m = re.search(r"simulation: ([\d.]+) s of simulated time in ([\d.]+) s wall",
                  proc.stdout + proc.stderr)
    if m is None:
        return [name, "scripts/run, factor 0: no simulation report", seconds, wall, None,
                None, None, None, None, None, None]
    sim_s, wall_s = float(m.group(1)), float(m.group(2))
    return [name, f"scripts/run, factor 0 (whole command {wall:.2f} s)", sim_s, wall_s,
            sim_s / wall_s, None, None, None, None, None, None]


def paced_in_process(name: str, seconds: float, warmup: float, overrides: list[str]) -> list:
    """Simulation time at factor 1 in this process: a row of the realtime table (lateness of
    the paced cycles against the wall clock over ``seconds`` after ``warmup``). The
    configuration is the project's rtc.conf with the same ``-o`` overrides as the wall-clock
    run next to it (its spin window and SCHED_FIFO setting apply to both)."""
    from rtcf import rtcconf
    from rtcf.composition import load_composition
    from rtcf.manager import Manager
    conf = rtcconf.merge_conf(rtcconf.defaults(), rtcconf.load_conf(ROOT / "rtc.conf"))
    conf = rtcconf.apply_overrides(conf, list(overrides) + [
        f"manager.modules.load_path:{ROOT / 'components'}",
        "rtcf.simulation.enable:YES", "rtcf.simulation.real_time_factor:1"])
    m = Manager(conf, corba=False)
    comp = load_composition(SYSTEMS[name])
    for c in comp.components:
        if c.type == "SampleLogger":
            c.params["path"] = ""
    m.build(comp)
    try:
        ec = next(iter(m.ecs.values()))
        time.sleep(warmup)
        c0, cpu0, w0 = ec.cycles, time.process_time(), time.monotonic()
        time.sleep(seconds)
        c1 = ec.cycles
        cpu = 100.0 * (time.process_time() - cpu0) / (time.monotonic() - w0)
        tb = m.time_base
        st = tb.stats()
        n = min(c1 - c0, len(ec._lateness))
        late = np.sort(ec._lateness[np.arange(c1 - n, c1) % len(ec._lateness)]) * 1e6
    finally:
        m.shutdown()
    p = np.percentile(late, bench_system.PS)
    over = int(np.sum(late > ec.period * 1e6))
    fifo = " FIFO" if st.get("fifo") else ""
    return [f"{name} sim time x1{fifo} (in process), achieved x{st['achieved_factor']:.3f}", 1,
            n, over, p[0], p[1], p[2], float(late[-1]),
            int(np.sum(late > bench_system.LATE_US)), cpu]


def median_col(rows: list, k: int) -> float | None:
    """Median of column k over the rows that have a value there (None if none)."""
    vals = [r[k] for r in rows if r[k] is not None]
    return float(np.median(vals)) if vals else None


def realtime_rounds(name: str, seconds: float, rounds: int, warmup: float,
                    overrides: list[str]) -> tuple[list, list]:
    """Per round: paced simulation time in process, the wall-clock periodic EC through
    scripts/run with the EC trace, and cyclictest at the same rate."""
    path, rate = SYSTEMS[name], rate_of(SYSTEMS[name])
    # bench_system's runner launches bench_system.composition(name): point it at ours
    bench_system.composition = lambda n, tmp: (path, rate)
    extra = list(overrides) + ["rtcf.simulation.enable:NO"]
    rows, summary = [], []
    with tempfile.TemporaryDirectory(prefix="bench-sim-") as tmpd:
        per_ec: dict[str, list] = {}
        cyc = []
        paced = []
        for rnd in range(1, rounds + 1):
            row = paced_in_process(name, seconds, warmup, overrides)
            row[1] = rnd
            rows.append(row)
            paced.append(row)
            try:
                r = bench_system.run_rtcf(name, seconds, Path(tmpd), extra, warmup)
            except RuntimeError as e:
                rows.append([f"{name}: {str(e).splitlines()[0]}", rnd] + [None] * 8)
                continue
            for ec, e in sorted(r["ecs"].items()):
                row = bench_system.rtcf_row(name, rnd, ec, e, r["cpu"])
                rows.append(row)
                per_ec.setdefault(ec, []).append(row)
            c = run_cyclictest(seconds, rate, fifo=True)
            if isinstance(c, str):
                rows.append([f"{name} {c}", rnd] + [None] * 8)
            else:
                p = c.percentiles_us(bench_system.PS)
                row = [f"{name} cyclictest {rate:g} Hz", rnd, c.n, None, p[0], p[1], p[2],
                       c.max_us, c.late_count(bench_system.LATE_US), c.cpu_percent]
                rows.append(row)
                cyc.append(row)
        cyc_p50, cyc_p99, cyc_cpu = (median_col(cyc, k) for k in (4, 5, 9))
        for ec, rs in per_ec.items():
            over = [int(str(x[3]).split()[0]) for x in rs if x[3] is not None]
            summary.append([f"{name} EC {ec} ({rate:g} Hz), wall-clock EC",
                            f"{int(np.median(over)) if over else '-'}", median_col(rs, 4),
                            median_col(rs, 5), cyc_p50, cyc_p99, median_col(rs, 9), cyc_cpu])
        if paced:
            summary.append([f"{name} ({rate:g} Hz), simulation time x1",
                            f"{int(median_col(paced, 3))} late > 1 period",
                            median_col(paced, 4), median_col(paced, 5), cyc_p50, cyc_p99,
                            median_col(paced, 9), cyc_cpu])
    return rows, summary


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=None,
                    help="per run (default: 20 simulated seconds for fast, 10 for realtime)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--fast-rounds", type=int, default=10,
                    help="fast: alternations of the system and its bare physics")
    ap.add_argument("--bare", choices=("state", "free"), default="state",
                    help="fast: the bare physics from the system's own state (default) or a "
                         "model left alone (the yardstick before 2026-11-27's armcycle pass)")
    ap.add_argument("--warmup", type=float, default=6.0)
    ap.add_argument("--only", choices=("fast", "realtime"), action="append")
    ap.add_argument("--system", choices=tuple(SYSTEMS), action="append")
    ap.add_argument("-o", dest="overrides", action="append", default=[])
    args = ap.parse_args()
    for what, v in (("--seconds", args.seconds), ("--rounds", args.rounds),
                    ("--fast-rounds", args.fast_rounds)):
        if v is not None and not v > 0:
            ap.error(f"{what}: expected a positive number, got {v:g}")
    parts = args.only or ["fast", "realtime"]
    names = args.system or list(SYSTEMS)
    print(machine_line())
    if "fast" in parts:
        fast_s = args.seconds if args.seconds is not None else 20.0
        rows = [fast_in_process(n, fast_s, args.fast_rounds, bare=args.bare) for n in names]
        if "arm_sim" in names:
            rows.append(fast_in_process("arm_sim", fast_s, args.fast_rounds, True, args.bare))
        if simulation_mode_available():
            rows += [fast_scripts_run(n, fast_s) for n in names]
        print(f"simulation time as fast as possible, {fast_s:g} simulated s in "
              f"{args.fast_rounds} rounds (real-time factor achieved = simulated s / wall s; "
              f"CPU: the process's CPU time; bare: mj_step of the system's model and period "
              f"from its state ({args.bare}; see fast_in_process), alternated with the "
              f"system round by round in the same process; x physics = "
              f"CPU per simulated second / bare CPU per simulated second, the median of the "
              f"rounds' ratios, their lowest-highest beside it, and the ratio of the sums):")
        print(table(["system", "how", "sim [s]", "wall [s]", "RTF", "wall/cycle [us]",
                     "CPU/cycle [us]", "bare CPU/period [us]", "x physics (median)",
                     "rounds' spread", "x physics (sums)"], [r[:11] for r in rows],
                    digits=2))
        for r in rows:
            if len(r) > 11 and r[11]:
                print(f"{r[0]} {r[1]}, x physics per round: "
                      + " ".join(f"{x:.2f}" for x in r[11]))
        targets = {"arm_sim": 8.0, "nao_sim": 1.2}          # the targets, x physics
        for n in names:
            inproc = next(r for r in rows if r[0] == n and r[1].startswith("in process")
                          and "moving" not in r[1])
            run = next((r for r in rows if r[0] == n and str(r[1]).startswith("scripts/run")
                        and r[4]), None)
            line = (f"{n}: in process {inproc[8]:.2f}x the physics, median of "
                    f"{args.fast_rounds} rounds ({inproc[9]}; target <= {targets[n]:g})")
            if run is not None:
                line += (f"; scripts/run's wall per simulated s {inproc[4] / run[4]:.2f}x "
                         f"in process's (target <= 1.2)")
            print(line)
        print()
    if "realtime" in parts:
        rt_s = args.seconds if args.seconds is not None else 10.0
        all_rows, all_summary = [], []
        for n in names:
            rows, summary = realtime_rounds(n, rt_s, args.rounds, args.warmup,
                                            args.overrides)
            all_rows += rows
            all_summary += summary
        lu = bench_system.LATE_US
        print(f"real time (factor 1), {rt_s:g} s per run, {args.rounds} rounds:")
        print(table(["run", "round", "cycles", "overruns (total)", "p50 [us]", "p99 [us]",
                     "p99.9 [us]", "max [us]", f">{lu:.0f}us", "CPU [%]"], all_rows))
        print()
        print("medians over the rounds:")
        print(table(["EC", "overruns", "p50 rtcf", "p99 rtcf", "p50 cyclictest",
                     "p99 cyclictest", "CPU rtcf [%]", "CPU cyclictest [%]"], all_summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
