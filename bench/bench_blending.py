"""BlendingPlanner costs: planning a 50-segment blended path, sampling it, the IK check of
the whole path, and the per-cycle cost of the component, next to its targets
(plan < 5 ms, a cycle < 100 us) and to the alternative of solving IK in every cycle.

    .venv/bin/python bench/bench_blending.py [--runs 30] [--cycles 2000] [--paths 100]
        [--only-accuracy]

First the accuracy of the joint path: FK of the final joint reference against the target
for the worked examples of scripts/blending_demo.py and --paths seeded random paths (max
error, by our FK and by Pinocchio's), and the worst sample against its planned TCP.

Rows (median and p99, one call at a time with perf_counter_ns):

* plan(): validation + geometry + profile of 50 segments: all LINE (49 blend arcs), and
  LINE / CIRCLE alternating (49 Hermite blends, 25 circles);
* Plan.sample(dt = 10 ms): the whole path as arrays (per plan, and per sample);
* Arm.solve_path: warm-started IK of every sample of a 4-segment path on the M1013
  (per sample; this runs in the caller's thread when a request arrives);
* BlendingPlanner.on_execute while moving, on a stepped Harness (next precomputed sample:
  TCP pose + joint reference written to connected ports), and the SteppedEC tick around it;
* the alternative design: sampling one pose + a warm-started solve_ik in the cycle.

Prints, never asserts: the host is a shared VM (see bench/README.md).
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import machine_line, percentiles, table  # noqa: E402

from rtcf_components.blending_planner.planner import DR_COND_NONE, Request, plan  # noqa: E402

START = (np.zeros(3), np.eye(3))


def line(x, y, r=20.0):
    return [x, y, 0.0, 0, 0, 0] + [0.0] * 6 + [0, r]


def circle(via, end, r=20.0):
    return [*via, 0, 0, 0, *end, 0, 0, 0, 1, r]


def zigzag_lines(n=50):
    return [line(100.0 * (k + 1), 50.0 * (k % 2)) for k in range(n)]


def lines_and_circles(n=50):
    return [circle((100.0 * k + 50, 50, 0), (100.0 * (k + 1), 0, 0)) if k % 2
            else line(100.0 * (k + 1), 0) for k in range(n)]


def timed(fn, runs: int) -> np.ndarray:
    out = np.empty(runs)
    gc.disable()
    try:
        for i in range(runs):
            t0 = time.perf_counter_ns()
            fn()
            out[i] = time.perf_counter_ns() - t0
    finally:
        gc.enable()
    return out / 1e3       # [us]


def row(name, us, target="", note=""):
    med, p99 = percentiles(us, [50, 99])
    return [name, med, p99, target, note]


def bench_plan(runs: int) -> list:
    rows = []
    for label, segs in (("50 LINE (49 arcs)", zigzag_lines()),
                        ("25 LINE + 25 CIRCLE (49 Hermite)", lines_and_circles())):
        req = Request(segs, 50, [100.0, DR_COND_NONE], [1000.0, DR_COND_NONE])
        res = plan(req, START)
        assert res.ok, res.reason
        rows.append(row(f"plan(): {label}", timed(lambda: plan(req, START), runs),
                        "< 5000 us", f"L = {res.plan.length:.0f} mm"))
        p = res.plan
        n = p.n_samples(0.01)
        us = timed(lambda: p.sample(0.01), max(5, runs // 3))
        rows.append(row(f"Plan.sample(10 ms): {label}", us, "",
                        f"{n} samples, {np.median(us) / n:.2f} us each"))
    return rows


def bench_ik(runs: int) -> list:
    from rtcf_components.blending_planner.arm import load_arm
    arm = load_arm("doosan_m1013", "arm", np.eye(4))
    if isinstance(arm, str):
        return [["IK rows skipped", float("nan"), float("nan"), "", arm]]
    q0 = np.radians([0, 0, 90, 0, 90, 0])
    p0, r0 = arm.tcp_pose(q0)
    sq = [[p0[0] + dx, p0[1] + dy, p0[2], 0, 180, 0] + [0.0] * 6 + [0, 20.0]
          for dx, dy in ((100, 0), (100, 100), (0, 100), (0, 0))]
    # keep the start orientation: ABSOLUTE in TOOL would do too; here BASE with the start R
    req = Request([[*s[:3], *_zyz(r0), *s[6:]] for s in sq], 4, [100.0, DR_COND_NONE],
                  [200.0, DR_COND_NONE])
    res = plan(req, (p0, r0))
    assert res.ok, res.reason
    sm = res.plan.sample(0.01)
    n = len(sm)
    t0 = time.perf_counter()
    ik = arm.solve_path(sm.pos, sm.quat, q0, 0.01)
    per = (time.perf_counter() - t0) / n * 1e6
    assert ik.ok, ik.reason
    rows = [["Arm.solve_path, per sample (4-segment square)", per, float("nan"), "",
             f"{n} samples: {per * n / 1e3:.0f} ms per request"]]
    # the alternative: one pose sampled and one warm-started IK inside the cycle
    from rtcf_components.kinematics import algorithms as alg
    from rtcf_components.blending_planner.geometry import rot_from_quat
    pos, quat = np.empty((1, 3)), np.empty((1, 4))
    state = {"k": 0, "q": ik.q[0]}

    def cycle():
        k = state["k"] = (state["k"] + 1) % n
        s = np.array([sm.s[k]])
        res.plan.positions(s, pos)
        res.plan.orientations(s, quat)
        target = arm.flange_target(pos[0], rot_from_quat(quat[0]))
        r = alg.solve_ik(arm.model, "arm", target, q_seed=state["q"], restarts=0)
        state["q"] = r.q
    rows.append(row("alternative: sample one pose + solve_ik in the cycle", timed(cycle, runs),
                    "< 100 us", "not what the component does"))
    return rows


def _zyz(r):
    from rtcf_components.blending_planner.geometry import zyz_from_rot
    return list(zyz_from_rot(r))


def bench_component(cycles: int) -> list:
    from rtcf_components.blending_planner import BlendingPlanner
    from rtcf.testing import Harness
    from rtcf_components.blending_planner.planner import DR_COND_NONE as NONE
    h = Harness(BlendingPlanner, rate=100.0)
    h.activate()
    core = h.comp.service.core
    comp = h.comp
    rows = []
    exec_us, tick_us = [], []

    class Info:
        planned = 0.0
        period = 0.01

    while len(exec_us) < cycles:
        ok = core.move_blending([[0, 0, 300, 0, 0, 0] + [0.0] * 6 + [0, 0]], 1, [100.0, NONE],
                                [200.0, NONE], 0.0, 1, 1, 1)
        assert ok, core.last_error()
        while comp.motion is not None and len(exec_us) < cycles:
            if len(exec_us) % 2:
                t0 = time.perf_counter_ns()
                h.step()
                tick_us.append((time.perf_counter_ns() - t0) / 1e3)
                exec_us.append(float("nan"))
            else:
                t0 = time.perf_counter_ns()
                comp.on_execute(Info)
                exec_us.append((time.perf_counter_ns() - t0) / 1e3)
            for port in ("tcpPose", "qRef"):
                h.probes[port].read_newest()
        while comp.motion is not None:
            h.step()
        core.move_blending([[0, 0, -300, 0, 0, 0] + [0.0] * 6 + [0, 0]], 1, [100.0, NONE],
                           [200.0, NONE], 0.0, 1, 1, 1)
        while comp.motion is not None:
            h.step()
    e = np.array([x for x in exec_us if x == x])
    rows.append(row("BlendingPlanner.on_execute while moving (pose + qRef)", e, "< 100 us",
                    "precomputed sample, 2 ports"))
    rows.append(row("SteppedEC tick around it", np.array(tick_us), "", "EC bookkeeping too"))
    h.close()
    return rows


# scripts/blending_demo.py's worked examples 1-4: TOOL frame (x, y, z, radius), v, a
SPEC_EXAMPLES = {
    "1": ([[300, 0, 0, 0]], 100, 200),
    "2": ([[200, 0, 0, 50], [200, 200, 0, 0]], 100, 200),
    "3": ([[100, 0, 0, 20], [100, 100, 0, 20], [0, 100, 0, 20], [0, 0, 0, 0]], 50, 100),
    "4": ([[300, 0, 0, 30], [150, 150 * 3 ** 0.5, 0, 30], [0, 0, 0, 0]], 100, 200),
}


def bench_accuracy(n_random: int) -> list:
    """FK of the final joint reference against the target (the plan's last sample), by our
    FK and by Pinocchio's (an independent model built from the same chain data), and the
    worst sample of each path against its planned TCP, on the M1013 from its initial
    joints: Doosan's worked examples (TOOL frame), then n_random seeded random blended paths."""
    from rtcf_components.blending_planner import BlendingPlanner
    from rtcf_components.blending_planner.geometry import rot_from_quat
    from rtcf_components.kinematics.algorithms import rotation_log
    from rtcf.testing import Harness
    pin = None
    try:
        import pinocchio as pin
        sys.path.insert(0, str(ROOT / "tests" / "components" / "kinematics"))
        from pin_chain import pin_chain_model
    except ImportError:
        pass

    def seg(x, y, z, r=0.0, abc=(0.0, 0.0, 0.0)):
        return [x, y, z, *abc] + [0.0] * 6 + [0, r]

    rng = np.random.default_rng(18)
    paths = [(f"spec example {k}", [seg(*p) for p in pts], v, a, 1)
             for k, (pts, v, a) in SPEC_EXAMPLES.items()]
    # random paths: absolute BASE poses within 100 mm and 10 deg (A, B, C) of a start away
    # from the shoulder singularity (the initial joints put the TCP 70 mm from joint1's axis)
    centre = [700.0, 100.0, 600.0, 0.0, 180.0, 0.0]

    def random_path():
        n = int(rng.integers(1, 5))
        segs = [[*(np.array(centre[:3]) + rng.uniform(-100, 100, 3)),
                 *(np.array(centre[3:]) + rng.uniform(-10, 10, 3))] + [0.0] * 6
                + [0, 10.0 if k < n - 1 else 0.0] for k in range(n)]
        return ("random", segs, float(rng.uniform(50, 250)), 400.0, 0)
    paths += [random_path() for _ in range(n_random)]
    worst = {"spec": [0.0, 0.0, 0.0, 0.0], "random": [0.0, 0.0, 0.0, 0.0]}
    refused, reasons = 0, []
    with Harness(BlendingPlanner, rate=100.0) as h:
        h.activate()
        arm = h.comp.arm
        if pin is not None:
            pm, fid = pin_chain_model(arm.chain, arm.chain.tip @ arm.tool)
            pd = pm.createData()
        core = h.comp.service.core
        while paths:
            name, segs, v, a, ref = paths.pop(0)
            if not core.move_blending(segs, len(segs), [v, DR_COND_NONE], [a, DR_COND_NONE],
                                      0.0, ref, 0, 1):
                # a random path the planner's rules refuse (a sharp turn, a singularity):
                # another one takes its place
                refused += 1
                reasons.append(core.last_error())
                if name != "random" or refused > 10 * n_random:
                    raise SystemExit(f"{name} refused: {core.last_error()}")
                paths.append(random_path())
                continue
            m = h.comp.motion
            sm = m.samples
            path_err = max(float(np.linalg.norm(arm.tcp_pose(m.q[k])[0] - sm.pos[k]))
                           for k in range(len(sm)))
            while h.comp.motion is not None:
                h.step()
            q = h.read_all("qRef")[-1].data
            p_t, r_t = sm.pos[-1], rot_from_quat(sm.quat[-1])
            p, r = arm.tcp_pose(q)
            w = worst["spec" if name.startswith("spec") else "random"]
            w[0] = max(w[0], float(np.linalg.norm(p - p_t)))
            w[1] = max(w[1], float(np.linalg.norm(rotation_log(r_t @ r.T))))
            w[3] = max(w[3], path_err)
            if pin is not None:
                pin.forwardKinematics(pm, pd, np.asarray(q, dtype=float))
                f = pin.updateFramePlacement(pm, pd, fid)
                w[2] = max(w[2], float(np.linalg.norm(f.translation * 1e3 - p_t)))
    for r in reasons[:3]:
        print(f"# refused: {r}")
    rows = []
    for k, label in (("spec", f"spec examples 1-4 ({len(SPEC_EXAMPLES)})"),
                     ("random", f"random paths ({n_random}; {refused} others refused)")):
        w = worst[k]
        rows.append([label, f"{w[0] * 1e6:.3g}", f"{w[1]:.3g}",
                     f"{w[2] * 1e6:.3g}" if pin is not None else "no Pinocchio",
                     f"{w[3] * 1e6:.3g}"])
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--cycles", type=int, default=2000)
    ap.add_argument("--paths", type=int, default=100, help="random paths of the accuracy rows")
    ap.add_argument("--only-accuracy", action="store_true", help="the accuracy rows only")
    args = ap.parse_args()
    print(machine_line())
    print("## final joint reference: FK against the target, max over paths (M1013; "
          "Pinocchio as the independent FK)")
    print(table(["paths", "end pos [nm]", "end rot [rad]", "end pos, Pinocchio [nm]",
                 "worst sample to path [nm]"], bench_accuracy(args.paths)))
    if args.only_accuracy:
        return 0
    rows = bench_plan(args.runs) + bench_ik(args.runs * 10) + bench_component(args.cycles)
    print(table(["what", "median [us]", "p99 [us]", "target", "note"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
