"""The walking NAO on physics (compositions/nao_walk.yaml in process, simulation time):
pushes survived against the ankle-strategy bound, a push while walking, long walks.

1. ``push``: standing in StandInit under the AutoBalancer, with and without the Stabilizer,
   the largest push on the torso (0.2 s, at the torso's centre of mass) survived forward,
   backward and sideways (bisection to ``--resolution`` N), next to the ankle-strategy bound
   of the capture point (scenarios.walking.ankle_push_bound: the linear inverted
   pendulum with the ZMP at the support edge from the push's start) and their ratio.
2. ``walkpush``: walking at 0.08 m/s (goVelocity), a 5 N sideways push for 0.2 s, with and
   without the Stabilizer; then the largest sideways push survived while walking, each way.
3. ``square``: a 1 m square (4 m: goPos forward 1 m and a 90 deg turn, four times), twice:
   the two runs' joint logs compared bit for bit, the end pose against the start (ground
   truth).
4. ``moveto``: NAOqi's moveTo through ALMotionProxy (the NAOqi component in process) from
   StandInit: (1, 0, 0), (0, 0, 90 deg), (0, 0.3, 0): the end pose against the goal (ground
   truth) and the average speed over the whole call; move(0.1, 0, 0) then stopMove: the steps
   landed after stopMove.
5. ``cost``: wall time per 10 ms cycle walking, next to nao_sim standing (the same DCM and
   physics without the walk stack).

A fall: the torso below 0.22 m or tilted beyond 0.6 rad. Prints figures; asserts nothing.
Simulated time runs as fast as the machine allows (a physics result does not depend on the
load; the wall time printed does).

    .venv/bin/python bench/bench_walk.py                      # all three
    .venv/bin/python bench/bench_walk.py --only push --resolution 0.25
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from common import machine_line, table  # noqa: E402
from rtcf_components.scenarios.walking import WalkRig, ankle_push_bound  # noqa: E402

DIRECTIONS = {"forward": (1.0, 0.0), "backward": (-1.0, 0.0), "sideways (left)": (0.0, 1.0)}
PUSH_TIME = 0.2


def survives_standing(force: float, direction: tuple, stabilizer: bool) -> bool:
    with WalkRig() as rig:
        rig.start(stabilizer)
        rig.advance(0.5)
        rig.push((force * direction[0], force * direction[1], 0.0), PUSH_TIME)
        rig.advance(3.0)
        return not rig.fell


def bisect(ok, lo: float, hi: float, resolution: float) -> float:
    """The largest value in [lo, hi] for which ok() holds (ok(lo) assumed)."""
    while hi - lo > resolution:
        mid = 0.5 * (lo + hi)
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return lo


def geometry(stabilizer: bool) -> dict:
    """Mass, CoM height, push height and the CoM's distance to each support edge, standing."""
    with WalkRig() as rig:
        rig.start(stabilizer)
        rig.advance(0.5)
        m, d = rig.sim.mj_model, rig.sim.mj_data
        com = rig.com()
        push_h = float(d.xipos[m.body("torso").id][2])
        corners = []
        for geom in ("lfoot", "rfoot"):
            i = m.geom(geom).id
            c, R, size = d.geom_xpos[i], d.geom_xmat[i].reshape(3, 3), m.geom_size[i]
            for sx in (-1, 1):
                for sy in (-1, 1):
                    corners.append(c + R @ np.array([sx * size[0], sy * size[1], 0.0]))
        corners = np.array(corners)
        edge = {"forward": corners[:, 0].max() - com[0], "backward": com[0] - corners[:, 0].min(),
                "sideways (left)": corners[:, 1].max() - com[1]}
        return {"m": float(np.sum(m.body_mass)), "zc": float(com[2]), "push_h": push_h,
                "edge": edge}


def run_push(resolution: float) -> None:
    g = geometry(True)
    print(f"\nstanding pushes, {PUSH_TIME} s on the torso's CoM: mass {g['m']:.3f} kg, CoM "
          f"height {g['zc']:.4f} m, push height {g['push_h']:.4f} m")
    rows = []
    for name, direction in DIRECTIONS.items():
        d = g["edge"][name]
        bound = ankle_push_bound(g["m"], g["zc"], g["push_h"], d, PUSH_TIME)
        got = {}
        for st in (False, True):
            t0 = time.perf_counter()
            got[st] = bisect(lambda f: survives_standing(f, direction, st), 2.0, 60.0,
                             resolution)
            print(f"  {name}, Stabilizer {'on' if st else 'off'}: {got[st]:.2f} N "
                  f"({time.perf_counter() - t0:.0f} s wall)", flush=True)
        rows.append([name, f"{d * 1e3:.1f}", f"{bound:.1f}", f"{got[False]:.1f}",
                     f"{got[False] / bound:.2f}", f"{got[True]:.1f}", f"{got[True] / bound:.2f}"])
    print(table(["direction", "CoM to edge [mm]", "ankle bound [N]", "without ST [N]", "ratio",
                 "with ST [N]", "ratio"], rows))


def walk_push(force: float, stabilizer: bool) -> tuple[bool, float]:
    with WalkRig() as rig:
        rig.start(stabilizer)
        abc = rig.abc
        abc.call(lambda: abc.core.go_velocity(0.08, 0.0, 0.0))
        rig.advance(3.0)
        x0 = rig.moved()[0]
        rig.push((0.0, force, 0.0), PUSH_TIME)
        rig.advance(2.0)
        speed = (rig.moved()[0] - x0) / 2.0
        abc.call(abc.core.go_stop)
        rig.advance(2.0)
        return not rig.fell, speed


def run_walkpush(resolution: float) -> None:
    print("\nwalking at 0.08 m/s (goVelocity), sideways push for 0.2 s on the torso")
    rows = []
    for st in (False, True):
        ok, speed = walk_push(5.0, st)
        best = bisect(lambda f: walk_push(f, st)[0], 0.0, 40.0, resolution)
        rows.append([f"Stabilizer {'on' if st else 'off'}", "survived" if ok else "fell",
                     f"{speed:.3f}", f"{best:.1f}"])
        print("  " + ", ".join(rows[-1]), flush=True)
    print(table(["", "5 N push", "speed after [m/s]", "largest survived [N]"], rows))


def square(stabilizer: bool) -> tuple[tuple, np.ndarray, float, bool]:
    with WalkRig() as rig:
        rig.start(stabilizer)
        tr = rig.record()
        t = 0.0
        for _ in range(4):
            t += rig.walk_to(1.0, 0.0, 0.0)
            t += rig.walk_to(0.0, 0.0, math.pi / 2)
        rig.advance(1.0)
        return rig.moved(), np.array(tr.q), t, rig.fell


def run_square() -> None:
    print("\n1 m square: goPos(1, 0, 0), goPos(0, 0, 90 deg), four times; twice, Stabilizer on")
    t0 = time.perf_counter()
    a = square(True)
    wall = time.perf_counter() - t0
    b = square(True)
    same = a[1].shape == b[1].shape and np.array_equal(a[1], b[1])
    dx, dy, dth = a[0]
    print(f"  walked {a[2]:.1f} s simulated ({wall:.0f} s wall), fell: {a[3]}; back at the "
          f"start within {math.hypot(dx, dy) * 1e3:.0f} mm, {math.degrees(dth):.1f} deg; "
          f"the two runs' measured joints ({a[1].shape[0]} samples) bit-identical: {same}")


def moveto_case(goal: tuple) -> tuple:
    """moveTo(goal) from StandInit through the NAOqi proxies; (error [m], error [deg], average
    speed [m/s], duration [s], fell)."""
    from rtcf_components.naoqi.proxy import ALMotionProxy
    with WalkRig() as rig:
        tb = rig.system.time_base
        motion = ALMotionProxy(service=rig.system["Kinematics0"].service,
                               naoqi_service=rig.system["NAOqi0"].service)
        tb.resume()
        t0 = rig.system.now
        motion.moveTo(*goal)
        t1 = rig.system.now
        tb.pause()
        rig.advance(0.5)
        dx, dy, dth = rig.moved()
        err = math.hypot(dx - goal[0], dy - goal[1])
        derr = math.degrees(math.atan2(math.sin(dth - goal[2]), math.cos(dth - goal[2])))
        return err, derr, math.hypot(dx, dy) / (t1 - t0), t1 - t0, rig.fell


def stop_case() -> tuple:
    """move(0.1, 0, 0) for 3 s, then stopMove: the steps landed after it, standing?"""
    from rtcf_components.naoqi.proxy import ALMotionProxy
    with WalkRig() as rig:
        tb = rig.system.time_base
        motion = ALMotionProxy(service=rig.system["Kinematics0"].service,
                               naoqi_service=rig.system["NAOqi0"].service)
        tb.resume()
        motion.move(0.1, 0.0, 0.0)
        tb.pause()
        rig.advance(3.0)
        gait = rig.abc.core.gait
        tb.resume()
        motion.stopMove()
        motion.waitUntilMoveIsFinished()
        tb.pause()
        rig.advance(0.5)
        return gait.done_index - gait.stopped_after, rig.fell


def run_moveto() -> None:
    print("\nNAOqi moveTo from StandInit (ALMotionProxy, default move config), ground truth")
    rows = []
    for goal in ((1.0, 0.0, 0.0), (0.0, 0.0, math.pi / 2), (0.0, 0.3, 0.0)):
        t0 = time.perf_counter()
        err, derr, speed, dur, fell = moveto_case(goal)
        rows.append([f"moveTo({goal[0]:g}, {goal[1]:g}, {math.degrees(goal[2]):g} deg)",
                     f"{err * 1e3:.1f}", f"{derr:.2f}", f"{speed:.3f}", f"{dur:.2f}",
                     "yes" if fell else "no", f"{time.perf_counter() - t0:.0f}"])
        print("  " + ", ".join(rows[-1]), flush=True)
    print(table(["call", "position error [mm]", "heading error [deg]", "average speed [m/s]",
                 "call duration [s]", "fell", "wall [s]"], rows))
    steps, fell = stop_case()
    print(f"  move(0.1, 0, 0) then stopMove(): {steps} step(s) landed after stopMove, fell: "
          f"{fell}")


def run_cost(seconds: float) -> None:
    """Wall time per 10 ms cycle: nao_walk walking (AutoBalancer + Stabilizer + NAOqi) next
    to its floor, nao_sim standing (the same DCM and physics, no walk stack)."""
    from rtcf.testing import SimSystem
    rows = []
    with WalkRig() as rig:
        rig.start(True)
        rig.abc.call(lambda: rig.abc.core.go_velocity(0.08, 0.0, 0.0))
        rig.system.advance(1.0)
        t0 = time.perf_counter()
        rig.system.advance(seconds)
        walk = (time.perf_counter() - t0) / (seconds * 100)
    with SimSystem(ROOT / "compositions" / "nao_sim.yaml",
                   params={"qLog": {"path": ""}, "sensorLog": {"path": ""}}) as sysm:
        sysm.advance(1.0)
        t0 = time.perf_counter()
        sysm.advance(seconds)
        floor = (time.perf_counter() - t0) / (seconds * 100)
    rows.append(["nao_walk, walking (goVelocity 0.08)", f"{walk * 1e3:.2f}",
                 f"{0.01 / walk:.2f}"])
    rows.append(["nao_sim, standing (the floor)", f"{floor * 1e3:.2f}", f"{0.01 / floor:.2f}"])
    print(f"\ncost per 10 ms cycle over {seconds:g} s simulated, flat out (the load shows in "
          f"the machine line: a loaded machine is slower)")
    print(table(["system", "wall per cycle [ms]", "x real time"], rows))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=("push", "walkpush", "square", "moveto", "cost"))
    ap.add_argument("--seconds", type=float, default=5.0, help="cost: simulated seconds")
    ap.add_argument("--resolution", type=float, default=0.5, help="push bisection [N]")
    a = ap.parse_args(argv)
    print(machine_line())
    if a.only in (None, "push"):
        run_push(a.resolution)
    if a.only in (None, "walkpush"):
        run_walkpush(a.resolution)
    if a.only in (None, "square"):
        run_square()
    if a.only in (None, "moveto"):
        run_moveto()
    if a.only in (None, "cost"):
        run_cost(a.seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
