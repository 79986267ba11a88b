"""Simulation time as fast as possible: what the time base costs, next to its peers, in one run.

    python bench/bench_simtime.py [--seconds 20] [--members 1] [--repeat 5]

The system: a 1 kHz and a 100 Hz execution context, ``--members`` empty Active components in
each, on one rtcf.simtime.SimTimeBase at real-time factor 0, run for ``--seconds`` of
simulated time (the stop time), ``--repeat`` times. Rows:

(a) SimTimeBase + SimulationEC (the lockstep thread, every hook of an Active member:
    on_execute and on_state_update, ECInfo filled, per-member timing);
(b) two SteppedECs ticked by hand in the same order (the EC cycle without the time base);
(c) a bare Python loop calling the same hooks of the same components in the same order
    (the floor: what the components cost with no framework at all).

Columns: simulated seconds per wall second (the achieved real-time factor of an empty
system), cost per 1 kHz instant and per component cycle [us], and the ratio to (c). Medians
over the repeats. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import US, machine_line, table  # noqa: E402

from rtcf import Component, ManualClock, SteppedEC  # noqa: E402
from rtcf.component import ECInfo  # noqa: E402
from rtcf.simtime import SimTimeBase, SimulationEC  # noqa: E402

FAST, SLOW = 1000.0, 100.0


class Empty(Component):
    """Does nothing (the hooks a cycle calls for an Active member)."""

    def on_execute(self, ec) -> None:
        pass

    def on_state_update(self, ec) -> None:
        pass


def members(prefix: str, n: int) -> list[Empty]:
    out = []
    for i in range(n):
        c = Empty(f"{prefix}{i}")
        c.initialize()
        out.append(c)
    return out


def run_simtime(seconds: float, n: int) -> float:
    """(a): wall seconds for ``seconds`` of simulated time."""
    tb = SimTimeBase(0.0)
    fast, slow = SimulationEC(FAST, "fast", tb), SimulationEC(SLOW, "slow", tb)
    for ec, comps in ((fast, members("f", n)), (slow, members("s", n))):
        for c in comps:
            ec.add_component(c)
    with tb.held():
        fast.start()
        slow.start()
        for ec in (fast, slow):
            for c in ec.members():
                ec.activate_component(c)
        tb.set_stop_time(seconds)
        t0 = time.perf_counter()
    tb.stop_reached.wait()
    wall = (tb.wall_reached or time.perf_counter()) - t0
    assert fast.cycles == round(seconds * FAST) and slow.cycles == round(seconds * SLOW)
    fast.stop()
    slow.stop()
    return wall


def run_stepped(seconds: float, n: int) -> float:
    """(b): the same cycles on two SteppedECs ticked in lockstep by hand."""
    fast = SteppedEC(FAST, "fast", clock=ManualClock())
    slow = SteppedEC(SLOW, "slow", clock=ManualClock())
    for ec, comps in ((fast, members("f", n)), (slow, members("s", n))):
        for c in comps:
            ec.add_component(c)
        ec.start()
        for c in comps:
            ec.activate_component(c)
        ec.tick()                         # activation happens in a tick: not timed
    ratio = int(FAST // SLOW)
    steps = round(seconds * FAST)
    ftick, stick = fast.tick, slow.tick
    t0 = time.perf_counter()
    for k in range(steps):
        ftick()
        if k % ratio == 0:
            stick()
    wall = time.perf_counter() - t0
    fast.stop()
    slow.stop()
    return wall


def run_bare(seconds: float, n: int) -> float:
    """(c): the hooks alone, in the same order, with an ECInfo updated as the EC does."""
    dummy = SteppedEC(FAST, "dummy")
    fast, slow = members("f", n), members("s", n)
    finfo, sinfo = ECInfo(0, dummy), ECInfo(0, dummy)
    fhooks = [(c.on_execute, c.on_state_update) for c in fast]
    shooks = [(c.on_execute, c.on_state_update) for c in slow]
    ratio = int(FAST // SLOW)
    steps = round(seconds * FAST)
    t0 = time.perf_counter()
    for k in range(steps):
        t = k / FAST
        finfo.now = finfo.planned = t
        for ex, up in fhooks:
            ex(finfo)
            up(finfo)
        if k % ratio == 0:
            sinfo.now = sinfo.planned = t
            for ex, up in shooks:
                ex(sinfo)
                up(sinfo)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=20.0, help="simulated seconds per run")
    ap.add_argument("--members", type=int, default=1, help="empty components per EC")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    s, n = args.seconds, args.members
    instants = round(s * FAST)
    cycles = n * round(s * (FAST + SLOW))
    rows = []
    results = {}
    for name, fn in (("(a) SimTimeBase + SimulationEC", run_simtime),
                     ("(b) two SteppedECs ticked by hand", run_stepped),
                     ("(c) bare loop over the same hooks", run_bare)):
        walls = [fn(s, n) for _ in range(args.repeat)]
        results[name] = statistics.median(walls)
    bare = results["(c) bare loop over the same hooks"]
    for name, wall in results.items():
        rows.append([name, s / wall, wall / instants * US, wall / cycles * US, wall / bare])
    print(machine_line())
    print(f"# {s:g} s simulated, 1 kHz + 100 Hz ECs, {n} empty Active component(s) each, "
          f"real-time factor 0, median of {args.repeat}")
    print(table(["system", "sim s / wall s", "us / 1 kHz instant", "us / component cycle",
                 "x bare"], rows, digits=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
