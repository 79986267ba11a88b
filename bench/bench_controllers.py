"""The ControllerManager's 1 kHz loop with 1 and 10 trivial controllers, next to cyclictest.

    python bench/bench_controllers.py [--seconds 10] [--rate 1000] [--no-fifo]

Rows, run one after another in this process:

(a) ControllerManager (hardware=loopback: an ideal robot, no DCM) on a PeriodicEC at the
    rate, sleep then spin the last 200 us, SCHED_FIFO when permitted, 1 trivial controller
    (reads one joint, commands it plus a small wave);
(b) the same with 10 trivial controllers;
(c) 10 controllers with hardware=dcm: the DCM (components/dcm) in the same process on its own
    100 Hz PeriodicEC (SCHED_FIFO 70 when permitted, as scripts/run gives every EC), state
    and commands through the DCM's pre/postProcess seqlocks: what the DCM thread costs the
    1 kHz loop (both hold the GIL while they run: the DCM's cycle, and its 200 us spin
    before each deadline, can delay the manager's tick); run with the DCM EC spinning
    200 us (scripts/run's default exec_cxt.periodic.spin_us) and with spin 0;
(d) C ``cyclictest`` at the same interval (SCHED_FIFO 80, mlockall) when it is on PATH: the
    machine's floor in the same run;
(e) 10 controllers, loopback, with the controllerState port published every tick (1 kHz,
    the worst case; the default is 10 Hz as in rows a-c);
(f) what a getStatistics client adds to row (b)'s loop: one manager runs throughout while
    short rounds alternate with and without a client thread calling getStatistics every
    ``--client-ms`` (the first call included), in the order with, without, without, with,
    ... (a slow drift of the machine's load then falls on both sides equally). Per round:
    EC overruns and lateness p99; the figure is the median over the rounds of each side and
    the median of the paired differences (target 0 added overruns), so that the integrator
    can run ``--rows f --rounds 10`` on a quiet machine. The figure to compare the overhead
    with is the manager overhead before the ros2_control-level features: 9-20 us per tick
    with 10 controllers.

(g) one controller that takes 2 ms per update at 1 kHz, 2 s, then fast again, under each
    overrun policy: ticks per second while slow, and periods shorter than half a period
    passed to update afterwards (the catch-up burst; target 0 with ``skip``).

``--rows be`` runs only some rows (letters as above).

Per row: achieved rate and mean-period error, lateness of the tick start behind its deadline
(p50 / p99 / max), ticks more than 0.5 ms late, EC overruns (a tick ending after the next
deadline), controller overruns (an update longer than the period), per-controller update cost
(mean and max over controllers of their mean / max), and the manager overhead per tick (the
core's tick minus the controllers' updates: hardware read/write, commands reset, statistics),
plus the whole component's execution per tick as the EC sees it. Figures only, no assertions;
the host is a shared VM (see design.md): figures taken while it is loaded are indicative.
"""

from __future__ import annotations

import argparse
import math
import sys
import threading
import time
import time as _time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

from bench_ec import LATE_MS, Result, cyclictest_result  # noqa: E402
from common import US, CpuMeter, machine_line, percentiles, table  # noqa: E402

from rtcf import PeriodicEC  # noqa: E402
from rtcf_components.controller_manager import Controller  # noqa: E402

from rtcf_components.controller_manager.component import ControllerManager  # noqa: E402


class Trivial(Controller):
    """Reads one joint's position and commands it plus a small wave, so the command changes
    every tick (with hardware=dcm an unchanged command would not be sent again)."""

    def init(self, robot, params):
        self.j = robot.joint(params["joint"])
        return True

    def update(self, time, period):
        self.j.command = self.j.position + 1e-3 * math.sin(time)


class RecordingManager(ControllerManager):
    """Records, per tick, start time, lateness and the core's overhead / update time into
    preallocated arrays (no allocation in the loop)."""

    type_name = "RecordingManager"

    def setup_recording(self, capacity: int) -> None:
        self.cap = capacity
        self.starts = np.zeros(capacity)
        self.late = np.zeros(capacity)
        self.over = np.zeros(capacity)
        self.upd = np.zeros(capacity)
        self.n = 0

    def on_execute(self, ec):
        super().on_execute(ec)
        i = self.n
        if i < self.cap:
            core = self.core
            self.starts[i] = ec.now
            self.late[i] = ec.now - ec.planned
            self.over[i] = core.overhead_last
            self.upd[i] = core.updates_last
            self.n = i + 1


def stats_client(cm, stop, box, interval: float = 0.005) -> None:
    """Calls the servant's getStatistics every ``interval`` [s] (as an ORB thread would; 0:
    back to back) until ``stop`` is set; box: [calls, worst call duration]. Runs in: its own
    thread."""
    calls, worst = 0, 0.0
    while not stop.is_set():
        t0 = time.perf_counter()
        cm.service.getStatistics()
        worst = max(worst, time.perf_counter() - t0)
        calls += 1
        if interval > 0:
            stop.wait(interval)
    box[:] = [calls, worst]


def round_order(rounds: int) -> list[bool]:
    """True (client) / False (none), ``rounds`` of each: with, without, without, with, ..."""
    out: list[bool] = []
    for i in range(rounds):
        out += [True, False] if i % 2 == 0 else [False, True]
    return out


def run_client_rounds(rounds: int, round_s: float, rate: float, fifo: bool,
                      interval: float, n_ctrl: int = 10, warmup: float = 1.0) -> list[dict]:
    """Row (f): one manager with ``n_ctrl`` trivial controllers on a PeriodicEC; rounds of
    ``round_s`` [s] with and without a getStatistics client (round_order). Per round:
    {client, overruns, p99 [s], max [s], n_late (ticks later than LATE_MS), ticks, calls,
    worst call [s]}."""
    cm = RecordingManager("benchrounds")
    cm.params.load({"hardware": "loopback"})
    cm.initialize()
    cm.setup_recording(int((warmup + 2 * rounds * round_s) * rate * 1.3) + 1000)
    joints = cm.robot.joint_names
    names = [f"c{i:02d}" for i in range(n_ctrl)]
    for i, name in enumerate(names):
        cm.core.load(name, Trivial, {"joint": joints[i % len(joints)]})
    ec = PeriodicEC(rate, name="benchrounds", spin=200e-6, sched_fifo=fifo, priority=80)
    ec.add_component(cm, owned=True)
    ec.start()
    ec.activate_component(cm)
    ok, msg = cm.service.switchController(names, [], 2, 2.0)
    if not ok:
        raise SystemExit(f"switch failed: {msg}")
    time.sleep(warmup)
    out = []
    for client in round_order(rounds):
        box: list = [0, 0.0]
        stop = threading.Event()
        th = threading.Thread(target=stats_client, args=(cm, stop, box, interval),
                              daemon=True) if client else None
        i0, over0 = cm.n, ec.overruns
        if th is not None:
            th.start()
        time.sleep(round_s)
        stop.set()
        if th is not None:
            th.join(5.0)
        i1, over1 = cm.n, ec.overruns
        late = cm.late[i0:i1]
        out.append({"client": client, "overruns": over1 - over0, "ticks": i1 - i0,
                    "p99": percentiles(late, (99,))[0],
                    "max": float(late.max()) if len(late) else float("nan"),
                    "n_late": int(np.count_nonzero(late > LATE_MS)),
                    "calls": box[0], "worst": box[1]})
    ec.deactivate_component(cm)
    ec.stop()
    cm.finalize()
    return out


def client_summary(rounds: list[dict]) -> dict:
    """Medians per side and of the paired differences (round 2k with round 2k+1)."""
    w = [r for r in rounds if r["client"]]
    wo = [r for r in rounds if not r["client"]]
    pairs = list(zip(rounds[0::2], rounds[1::2]))
    diff_over = [(a if a["client"] else b)["overruns"] - (b if a["client"] else a)["overruns"]
                 for a, b in pairs]
    diff_p99 = [(a if a["client"] else b)["p99"] - (b if a["client"] else a)["p99"]
                for a, b in pairs]
    med = lambda xs: float(np.median(xs)) if xs else float("nan")   # noqa: E731
    return {"over_with": med([r["overruns"] for r in w]),
            "over_without": med([r["overruns"] for r in wo]),
            "over_added": med(diff_over), "p99_with": med([r["p99"] for r in w]),
            "p99_without": med([r["p99"] for r in wo]), "p99_added": med(diff_p99),
            "late_with": med([r["n_late"] for r in w]),
            "late_without": med([r["n_late"] for r in wo]),
            "max_with": max((r["max"] for r in w), default=float("nan")),
            "max_without": max((r["max"] for r in wo), default=float("nan")),
            "calls": sum(r["calls"] for r in w),
            "worst_call": max((r["worst"] for r in w), default=0.0)}


class Slow(Controller):
    """Busy for 2 ms per update until ``slow`` is cleared; records the periods it gets."""

    def init(self, robot, params):
        self.periods = np.zeros(100_000)
        self.n = 0
        self.slow = True
        return True

    def update(self, time, period):
        if self.n < self.periods.size:
            self.periods[self.n] = period
            self.n += 1
        if self.slow:
            end = _time.perf_counter() + 0.002
            while _time.perf_counter() < end:
                pass


def run_slow(policy: str, rate: float, fifo: bool, slow_s: float = 2.0) -> list:
    """Row (g): [policy, ticks/s while slow, short periods after, EC overruns]."""
    cm = ControllerManager(f"slow_{policy}")
    cm.params.load({"hardware": "loopback"})
    cm.initialize()
    c = cm.core.load("slow", Slow, {})
    ec = PeriodicEC(rate, name=f"slow-{policy}", spin=200e-6, sched_fifo=fifo, priority=80,
                    overrun_policy=policy)
    ec.add_component(cm, owned=True)
    ec.start()
    ec.activate_component(cm)
    ok, msg = cm.service.switchController(["slow"], [], 2, 2.0)
    if not ok:
        raise SystemExit(f"switch failed: {msg}")
    t0, n0 = _time.monotonic(), cm.core.ticks
    _time.sleep(slow_s)
    ticks = (cm.core.ticks - n0) / (_time.monotonic() - t0)
    k = c.n
    c.slow = False
    _time.sleep(1.0)
    ec.deactivate_component(cm)
    ec.stop()
    cm.finalize()
    after = c.periods[k + 1:c.n]
    return [policy, ticks, int((after < 0.5 / rate).sum()), float(after.min()) * US,
            ec.overruns]


def run_manager(n_ctrl: int, seconds: float, rate: float, fifo: bool,
                with_dcm: bool = False, dcm_spin: float = 200e-6, state_rate: float = 10.0
                ) -> tuple[Result, dict]:
    dcm = dcm_ec = None
    if with_dcm:
        from rtcf_components.dcm.component import DCM
        dcm = DCM("DCM0")
        dcm.initialize()
        dcm_ec = PeriodicEC(100.0, name="bench-dcm", sched_fifo=fifo, priority=70,
                            spin=dcm_spin)
        dcm_ec.add_component(dcm, owned=True)
        dcm_ec.start()
        dcm_ec.activate_component(dcm)
    cm = RecordingManager(f"bench{n_ctrl}{'dcm' if with_dcm else ''}{int(dcm_spin * US)}")
    cm.params.load({"hardware": "dcm" if with_dcm else "loopback",
                    "state_rate": state_rate})
    cm.initialize()
    if with_dcm:          # the declared binding a composition makes with a connection
        from rtcf.services import connect_services
        connect_services(cm.service_ports["hardware"], dcm.service_ports["DCMService"])
    cm.setup_recording(int(seconds * rate * 1.2) + 1000)
    joints = cm.robot.joint_names
    names = [f"c{i:02d}" for i in range(n_ctrl)]
    for i, name in enumerate(names):
        cm.core.load(name, Trivial, {"joint": joints[i % len(joints)]})
    ec = PeriodicEC(rate, name=f"bench{n_ctrl}", spin=200e-6, sched_fifo=fifo, priority=80)
    ec.add_component(cm, owned=True)
    ec.start()
    with CpuMeter() as cpu:
        ec.activate_component(cm)
        ok, msg = cm.service.switchController(names, [], 2, 2.0)
        if not ok:
            raise SystemExit(f"switch failed: {msg}")
        cm.n = 0                                     # measure from the first full tick
        over0 = ec.overruns
        time.sleep(seconds)
        run_overruns = ec.overruns - over0
        ec.deactivate_component(cm)
    ec_stats = ec.stats()
    realtime = ec.realtime
    ec.stop()
    cm.finalize()
    if dcm_ec is not None:
        dcm_ec.stop()
        dcm.finalize()
    n = cm.n
    label = ", state port 1 kHz" if state_rate >= rate else ""
    res = Result(f"ControllerManager, {n_ctrl} controller{'s' * (n_ctrl > 1)}"
                 f"{f', DCM spin {int(dcm_spin * US)}us' if with_dcm else ''}{label} "
                 f"{'FIFO' if realtime else 'OTHER'}", cm.starts[:n].copy(),
                 cm.late[:n].copy(), cpu.percent, 1.0 / rate,
                 note="SCHED_FIFO" if realtime else "SCHED_OTHER")
    st = cm.core.statistics()
    ctrl = list(st["controllers"].values())
    member = ec_stats["members"][cm.instance_name]
    extra = {
        "ec_overruns": ec_stats["overruns"],
        "ctrl_overruns": sum(c["overruns"] for c in ctrl),
        "upd_mean": float(np.mean([c["mean"] for c in ctrl])),
        "upd_max": float(np.max([c["max"] for c in ctrl])),
        "over": percentiles(cm.over[:n], (50, 99)) + [float(cm.over[:n].max())],
        "over_mean": float(cm.over[:n].mean()),
        "upd_tick": percentiles(cm.upd[:n], (50, 99)),
        "exec_mean": member["exec_mean"], "exec_max": member["exec_max"],
        "n_ctrl": n_ctrl, "run_overruns": run_overruns,
    }
    return res, extra


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=10.0, help="per row [s] (default 10)")
    ap.add_argument("--rate", type=float, default=1000.0, help="[Hz] (default 1000)")
    ap.add_argument("--no-fifo", action="store_true", help="never ask for SCHED_FIFO")
    ap.add_argument("--rows", default="abcdefg", help="which rows (letters, default all)")
    ap.add_argument("--rounds", type=int, default=5,
                    help="row (f): rounds with and as many without the client (default 5)")
    ap.add_argument("--round-seconds", type=float, default=2.0,
                    help="row (f): seconds per round (default 2)")
    ap.add_argument("--client-ms", type=float, default=5.0,
                    help="row (f): the client's pause between calls [ms] (0: back to back; "
                         "default 5)")
    args = ap.parse_args(argv)
    fifo = not args.no_fifo
    print(machine_line())
    print(f"# rate {args.rate:g} Hz, {args.seconds:g} s per row, late = more than "
          f"{LATE_MS * 1e3:g} ms after the deadline")
    rows, extras = [], []
    plan = {"a": (1, False, 0, 10.0), "b": (10, False, 0, 10.0),
            "c": (10, True, 200e-6, 10.0), "e": (10, False, 0, args.rate)}
    for letter in "abce":
        if letter not in args.rows:
            continue
        n, with_dcm, spin, state_rate = plan[letter]
        for sp in ((spin, 0.0) if letter == "c" else (spin,)):
            print(f"# ({letter}) running ControllerManager with {n} trivial controller(s)"
                  f"{' and the DCM' if with_dcm else ''} ...", flush=True)
            r, x = run_manager(n, args.seconds, args.rate, fifo, with_dcm, sp, state_rate)
            rows.append(r)
            extras.append(x)
    d: Any = "cyclictest not run (--rows)"
    if "d" in args.rows:
        print("# running cyclictest ...", flush=True)
        d = cyclictest_result(args.seconds, args.rate, fifo)
    client_rounds: list[dict] = []
    if "f" in args.rows:
        print(f"# (f) {args.rounds} rounds of {args.round_seconds:g} s with and as many "
              f"without a getStatistics client (every {args.client_ms:g} ms) ...", flush=True)
        client_rounds = run_client_rounds(args.rounds, args.round_seconds, args.rate, fifo,
                                          args.client_ms * 1e-3)
    slow_rows = [run_slow(p, args.rate, fifo) for p in ("skip", "catch_up")] \
        if "g" in args.rows else []
    results = rows + ([d] if isinstance(d, Result) else [])
    if results:
        print()
        print(table(["", "ticks", "rate [Hz]", "period err [%]", "late p50 [us]", "p99 [us]",
                     "p99.9 [us]", "max [us]", "> 0.5 ms", "CPU [%]"],
                    [r.row() for r in results], digits=1))
        if not isinstance(d, Result):
            print(f"  {d}")
        print()
        print(table(["", "EC overruns", "ctrl overruns", "update mean [us]", "update max [us]",
                     "overhead mean [us]", "p50", "p99", "max", "component exec mean [us]"],
                    [[r.name, x["ec_overruns"], x["ctrl_overruns"], x["upd_mean"] * US,
                      x["upd_max"] * US, x["over_mean"] * US, x["over"][0] * US,
                      x["over"][1] * US, x["over"][2] * US, x["exec_mean"] * US]
                     for r, x in zip(rows, extras)], digits=2))
        print()
        print("mean period [us] (target: within 0.01 % of nominal):")
        for r in results:
            if r.period_err is not None:
                print(f"  {r.name:<40} {1e6 / r.rate:12.4f}  ({r.period_err:+.5f} %)")
    if client_rounds:
        print()
        print(table(["(f) round", "client", "ticks", "EC overruns", "late p99 [us]",
                     "max [us]", "> 0.5 ms", "calls", "worst call [ms]"],
                    [[i + 1, "yes" if r["client"] else "no", r["ticks"], r["overruns"],
                      r["p99"] * US, r["max"] * US, r["n_late"],
                      r["calls"] if r["client"] else "-",
                      r["worst"] * 1e3 if r["client"] else "-"]
                     for i, r in enumerate(client_rounds)], digits=1))
        cs = client_summary(client_rounds)
        print(f"(f) medians over {args.rounds} rounds per side: EC overruns with the client "
              f"{cs['over_with']:g}, without {cs['over_without']:g}, added (median of paired "
              f"differences) {cs['over_added']:+g} (target 0); late p99 with "
              f"{cs['p99_with'] * US:.1f} us, without {cs['p99_without'] * US:.1f} us, added "
              f"{cs['p99_added'] * US:+.1f} us; ticks > {LATE_MS * 1e3:g} ms late with "
              f"{cs['late_with']:g}, without {cs['late_without']:g}; late max with "
              f"{cs['max_with'] * US:.0f} us, "
              f"without {cs['max_without'] * US:.0f} us; {cs['calls']} calls, worst "
              f"{cs['worst_call'] * 1e3:.2f} ms")
    if slow_rows:
        print()
        print(table(["(g) 2 ms controller, policy", "ticks/s while slow",
                     "periods < half after", "min period after [us]", "EC overruns"],
                    slow_rows, digits=1))
    print("targets: mean period within 0.01 %; manager overhead < 20 us per tick with 10 "
          "controllers (before the ros2_control-level features: 9-20 us); p99 lateness "
          "<= 2x cyclictest's p99 in the same run; 0 overruns added by a statistics client")
    if isinstance(d, Result) and d.pcts and d.pcts[1] > 0:
        for r in rows:
            print(f"  {r.name}: p99 {r.pcts[1]:.1f} us / cyclictest p99 {d.pcts[1]:.1f} us = "
                  f"{r.pcts[1] / d.pcts[1]:.2f}x")


if __name__ == "__main__":
    main()
