"""Kinematics core next to Pinocchio (Python API) and ikpy, in one run.

    PYTHONPATH=.:components python bench/bench_kinematics.py [--targets 200] [--big 1000000]
        [--batches 30] [--profile]

Chains: NAO H25 V5 LArm (5 joints, mDH) and the Doosan M1013 arm (6 joints, URDF-style).
Every peer is built from the same Chain data (joint placements X, axes, tip) and checked to
agree with ours before it is timed:

* Pinocchio: a pin.Model holding just that chain (tests/components/kinematics/pin_chain.py,
  the builder test_crosscheck.py validates), RX/RY/RZ or unaligned revolute joints and an
  operational frame at the tip;
* ikpy: an ikpy Chain of URDFLinks (origin xyz/rpy and axis per joint, a fixed tip link).

Sections (medians over batches; the host is a shared 2-vCPU VM, see bench/README.md):

1. single FK call [us], interleaved rounds: ours ``chain_fk(model, chain, q)`` (a 4x4
   ndarray) vs Pinocchio ``forwardKinematics`` + ``updateFramePlacement`` (an SE3; and with
   ``.homogeneous``, a 4x4 like ours) vs ikpy ``forward_kinematics``;
2. batched FK throughput [configurations/s] at N = 1e4 and --big (1e6): ours
   ``chain_fk_batch`` (numba's kernel; and the same called by the caller on slices of 2048 /
   1e4 rows; the numpy block code, its fallback without numba; at 1e4 also the compiled batch
   function with blocks of --rows rows, the block size chain_fk_batch uses being
   codegen.BATCH_ROWS; --cpu: timed by CPU time) vs Pinocchio called in a loop (FK + frame
   update per configuration, the result not even stored: favours Pinocchio) vs ikpy in a
   loop (1e4 only); with --baseline CHECKOUT, that checkout's chain_fk_batch too (before /
   after in the same rounds); "per round": the median over the interleaved rounds of Pinocchio's time
   over ours in the same round (steadier than the ratio of the medians on a loaded host);
3. IK on the same --targets reachable targets per chain (FK of seeded uniform configurations
   within the limits), mask 63 (full pose): ours ``solve_ik`` vs a textbook damped least
   squares loop on Pinocchio (computeJointJacobians + getFrameJacobian, fixed damping, full
   step, clipped to the limits; damping 1e-4 for the NAO arm and 1e-2 for the M1013, the best
   of 1e-6 ... 3e-2 for each on 100 targets: fixed damping is scale-dependent) vs ikpy
   ``inverse_kinematics_frame`` (SciPy least squares within the bounds). All
   three use the same tolerances (1e-4 m, 1e-3 rad), at most 200 iterations per start and
   the same 9 start configurations (the middle of the limits, then seeded uniform draws),
   and every answer is judged by our own FK; time per solve includes the restarts.
4. IK completeness (``--complete N``, default 10,000, 0 skips it; ``--only-complete`` runs
   just this):
   ``solve_ik`` with its defaults on N reachable targets of the M1013 and of NAO's legs
   (mask 63) and arms (masks 63 and 7, as tests/components/kinematics/test_ik.py): the
   success rate, median, p99 and worst time per solve.

Then where one chain_fk call spends its time (dispatch, the generated formulas, building the
4x4 ndarray, an ndarray q over a list), and the targets (bench/README.md) next to the
measured ratios. Prints, never asserts.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import pstats
import sys
import time
import warnings
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "components" / "kinematics"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import US, machine_line, percentiles, table  # noqa: E402

from rtcf_components.kinematics import (chain_fk, chain_fk_batch, load_model, position6d,  # noqa: E402
                        solve_ik)
from rtcf_components.kinematics.algorithms import rotation_log  # noqa: E402
from rtcf_components.kinematics import codegen  # noqa: E402
from rtcf_components.kinematics.codegen import BATCH_ROWS, compile_batch  # noqa: E402

POS_TOL, ROT_TOL, MAX_ITER, RESTARTS = 1e-4, 1e-3, 200, 8    # solve_ik's defaults
DAMPING = {"NAO LArm": 1e-4, "M1013 arm": 1e-2}              # Pinocchio DLS, see above


# -- peers -----------------------------------------------------------------------------------

def have(module: str) -> bool:
    try:
        __import__(module)
        return True
    except ImportError:
        return False


def ikpy_chain(chain):
    """An ikpy Chain from our chain data: origin (xyz, rpy) and axis per joint, a fixed tip."""
    from ikpy.chain import Chain as IkChain
    from ikpy.link import OriginLink, URDFLink
    links = [OriginLink()]
    for name, X, axis, lo, hi in zip(chain.joints, chain.X, chain.axes, chain.lower,
                                     chain.upper):
        links.append(URDFLink(name, X[:3, 3], position6d(X)[3:], rotation=axis,
                              bounds=(lo, hi)))
    links.append(URDFLink("tip", chain.tip[:3, 3], position6d(chain.tip)[3:], rotation=None,
                          joint_type="fixed"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return IkChain(links, active_links_mask=[False] + [True] * chain.dof + [False])


class Case:
    """One chain and its peers."""

    def __init__(self, label: str, model, chain: str, baseline=None):
        self.label, self.model = label, model
        self.baseline = baseline          # (kinematics package, its model) or None
        self.chain = model.chain(chain)
        c = self.chain
        self.pin = None
        if have("pinocchio"):
            import pinocchio as pin
            from pin_chain import pin_chain_model
            self.pm, self.fid = pin_chain_model(c)
            self.pdata = self.pm.createData()
            self.pin = pin
        self.ik = ikpy_chain(c) if have("ikpy") else None
        self.check()

    def check(self) -> None:
        """The peers compute what we compute (else their timings mean nothing)."""
        c, worst = self.chain, {"pinocchio": 0.0, "ikpy": 0.0}
        rng = np.random.default_rng(1)
        for q in rng.uniform(c.lower, c.upper, size=(50, c.dof)):
            T = chain_fk(self.model, c, q)
            if self.pin:
                worst["pinocchio"] = max(worst["pinocchio"],
                                         float(np.abs(self.pin_fk_h(q) - T).max()))
            if self.ik:
                worst["ikpy"] = max(worst["ikpy"],
                                    float(np.abs(self.ik.forward_kinematics(self.full(q))
                                                 - T).max()))
        for peer, w in worst.items():
            if w > 1e-9:
                raise SystemExit(f"{self.label}: {peer} disagrees with ours by {w:.2e}")
        self.agreement = worst

    def full(self, q: np.ndarray) -> np.ndarray:
        return np.concatenate(([0.0], q, [0.0]))

    def pin_fk(self, q):
        self.pin.forwardKinematics(self.pm, self.pdata, q)
        return self.pin.updateFramePlacement(self.pm, self.pdata, self.fid)

    def pin_fk_h(self, q):
        return self.pin_fk(q).homogeneous


# -- 1. single FK ------------------------------------------------------------------------------

def bench_single(case: Case, batches: int, per_batch: int) -> list[list]:
    c, model = case.chain, case.model
    q = np.random.default_rng(2).uniform(c.lower, c.upper)
    qlist = q.tolist()
    rows = []

    def ours(n):
        for _ in range(n):
            chain_fk(model, c, q)

    def ours_name(n):
        name = c.name
        for _ in range(n):
            chain_fk(model, name, q)

    def ours_list(n):
        for _ in range(n):
            chain_fk(model, c, qlist)

    runs = [("ours chain_fk(model, Chain, ndarray)", ours),
            ("ours chain_fk(model, 'name', ndarray)", ours_name),
            ("ours chain_fk(model, Chain, list)", ours_list)]
    if case.pin:
        pin, pm, data, fid = case.pin, case.pm, case.pdata, case.fid
        fk, upd = pin.forwardKinematics, pin.updateFramePlacement

        def pin_se3(n):
            for _ in range(n):
                fk(pm, data, q)
                upd(pm, data, fid)

        def pin_h(n):
            for _ in range(n):
                fk(pm, data, q)
                upd(pm, data, fid).homogeneous

        runs += [("pinocchio FK + updateFramePlacement (SE3)", pin_se3),
                 ("pinocchio ... .homogeneous (4x4 ndarray)", pin_h)]
        if case.label.startswith("NAO"):       # context: the whole robot, not one chain
            whole = pin.buildModelFromUrdf(str(ROOT / "tests" / "data" / "naoV50.urdf"))
            wdata, wfid = whole.createData(), whole.getFrameId("l_gripper")
            qw = pin.neutral(whole)

            def pin_whole(n):
                for _ in range(n):
                    fk(whole, wdata, qw)
                    upd(whole, wdata, wfid)
            runs.append((f"pinocchio, whole NAO URDF (nq {whole.nq}) FK + frame", pin_whole))
    if case.ik:
        ik, qfull = case.ik, case.full(q)

        def ikpy_fk(n):
            for _ in range(n):
                ik.forward_kinematics(qfull)

        runs.append(("ikpy forward_kinematics", ikpy_fk))
    # interleaved rounds: every call is timed in every round, so a stall of the shared VM
    # hits all of them alike and the ratios stay meaningful
    per = {name: (200 if name.startswith("ikpy") else per_batch) for name, _ in runs}
    for name, fn in runs:
        fn(per[name])                                     # warm up (compile, caches)
    times = {name: np.empty(batches) for name, _ in runs}
    perf = time.perf_counter
    gc.collect()
    for b in range(batches):
        for name, fn in runs:
            t0 = perf()
            fn(per[name])
            times[name][b] = (perf() - t0) / per[name] * US
    med = {}
    for name, _ in runs:
        med[name], p90 = percentiles(times[name], [50, 90])
        rows.append([f"{case.label}: {name}", med[name], p90])
    base = med.get("pinocchio FK + updateFramePlacement (SE3)")
    for r in rows:
        r.append(r[1] / base if base else None)
    case.single = med
    return rows


# -- 2. batched FK -----------------------------------------------------------------------------

def bench_batch(case: Case, sizes: list[int], repeats: int,
                block_rows: tuple[int, ...] = (), clock=time.perf_counter) -> list[list]:
    """Throughput per size; the contenders run in interleaved rounds (median of the rounds).
    At sizes above 1e4: 3 rounds, Pinocchio once, ikpy not at all. ``clock``: wall time, or
    this thread's CPU time (--cpu). Before the rounds, one call of chain_fk_batch (numba's
    import and the kernel's compile or cache load: case.first_batch, in seconds of wall
    time) and one of the numpy block code."""
    c, model = case.chain, case.model
    rng = np.random.default_rng(3)
    rows = []
    case.batch = {}
    t0 = time.perf_counter()
    chain_fk_batch(model, c, np.zeros((1, c.dof)))
    case.first_batch = time.perf_counter() - t0
    numpy_batch = compile_batch(c.X, c.axes, c.tip, jit=False)
    for n in sizes:
        Q = rng.uniform(c.lower, c.upper, size=(n, c.dof))
        big = n > 10**4
        runs = {"ours chain_fk_batch": (lambda: chain_fk_batch(model, c, Q), 3 if big else repeats)}
        if case.baseline is not None:                # another checkout's, same rounds
            kin, bmodel = case.baseline
            bchain = bmodel.chain(c.name)
            runs["baseline chain_fk_batch"] = (
                lambda: kin.chain_fk_batch(bmodel, bchain, Q), 3 if big else repeats)
        runs["ours, numpy block code (the fallback without numba)"] = (
            lambda: numpy_batch(Q, np.empty((n, 4, 4))), 3 if big else repeats)
        # the same, called by the caller on cache-sized slices (a proposal for the core)
        for chunk in (2048, 10**4) if big else (2048,):
            def chunked(chunk=chunk):
                out = np.empty((n, 4, 4))
                for i in range(0, n, chunk):
                    out[i:i + chunk] = chain_fk_batch(model, c, Q[i:i + chunk])
            runs[f"ours chain_fk_batch in chunks of {chunk:,} (caller)"] = (
                chunked, 3 if big else repeats)
        if not big:
            for r in block_rows:
                f = compile_batch(c.X, c.axes, c.tip, rows=r)
                runs[f"ours, blocks of {r:,} rows"] = (
                    lambda f=f: f(Q, np.empty((n, 4, 4))), repeats)
        if case.pin:
            pin, pm, data, fid = case.pin, case.pm, case.pdata, case.fid
            fk, upd = pin.forwardKinematics, pin.updateFramePlacement

            def pin_loop():
                for q in Q:
                    fk(pm, data, q)
                    upd(pm, data, fid)
            runs["pinocchio in a loop"] = (pin_loop, 1 if big else repeats)
        if case.ik and not big:
            ik = case.ik
            F = np.zeros((n, c.dof + 2))
            F[:, 1:-1] = Q

            def ikpy_loop():
                for f in F:
                    ik.forward_kinematics(f)
            runs["ikpy in a loop"] = (ikpy_loop, 1)
        times: dict[str, list[float]] = {name: [] for name in runs}
        for r in range(max(reps for _, reps in runs.values())):
            for name, (fn, reps) in runs.items():
                if r < reps:
                    gc.collect()
                    t0 = clock()
                    fn()
                    times[name].append(clock() - t0)
        res = {name: n / float(np.median(ts)) for name, ts in times.items()}
        pin_rate = res.get("pinocchio in a loop")
        pin_ts = times.get("pinocchio in a loop", [])
        case.paired = getattr(case, "paired", {})
        for name, rate in res.items():
            # each round times every contender one after the other: the median of the
            # per-round ratios cancels most of the load that changes from round to round
            paired = (float(np.median(np.array(pin_ts) / np.array(times[name])))
                      if len(pin_ts) > 1 and len(times[name]) == len(pin_ts) else None)
            case.paired[name, n] = paired
            rows.append([f"{case.label}: {name}", f"{n:,}", rate,
                         rate / pin_rate if pin_rate else None, paired])
        case.batch[n] = res
    return rows


# -- 3. IK -------------------------------------------------------------------------------------

def targets(case: Case, n: int) -> list[np.ndarray]:
    c = case.chain
    rng = np.random.default_rng(zlib.crc32(f"bench-ik-{case.model.name}-{c.name}".encode()))
    return [chain_fk(case.model, c, q) for q in rng.uniform(c.lower, c.upper, size=(n, c.dof))]


def starts(c, seed: int = 0):
    """The starts solve_ik uses without a seed: the middle of the limits, then draws."""
    rng = np.random.default_rng(seed)
    yield 0.5 * (c.lower + c.upper)
    for _ in range(RESTARTS):
        yield rng.uniform(c.lower, c.upper)


def solved(case: Case, q: np.ndarray, target: np.ndarray) -> bool:
    T = chain_fk(case.model, case.chain, q)
    return (np.linalg.norm(T[:3, 3] - target[:3, 3]) <= POS_TOL
            and np.linalg.norm(rotation_log(target[:3, :3] @ T[:3, :3].T)) <= ROT_TOL)


def pin_dls(case: Case, target: np.ndarray, damping: float) -> np.ndarray:
    """Textbook DLS on Pinocchio: dq = J^T (J J^T + damping I)^-1 e, full step, clipped."""
    pin, pm, data, fid, c = case.pin, case.pm, case.pdata, case.fid, case.chain
    tp, tR = target[:3, 3], target[:3, :3]
    lo, hi = c.lower, c.upper
    eye = np.eye(6)
    e = np.empty(6)
    best = None
    for q in starts(c):
        for it in range(MAX_ITER + 1):
            pin.computeJointJacobians(pm, data, q)          # FK and every joint Jacobian
            M = pin.updateFramePlacement(pm, data, fid)
            e[:3] = tp - M.translation
            e[3:] = pin.log3(tR @ M.rotation.T)
            if np.linalg.norm(e[:3]) <= POS_TOL and np.linalg.norm(e[3:]) <= ROT_TOL:
                return q
            if it == MAX_ITER:
                break
            J = pin.getFrameJacobian(pm, data, fid, pin.LOCAL_WORLD_ALIGNED)
            q = np.clip(q + J.T @ np.linalg.solve(J @ J.T + damping * eye, e), lo, hi)
        best = q
    return best


def ikpy_ik(case: Case, target: np.ndarray) -> np.ndarray:
    """ikpy's optimiser from the same starts until one meets our tolerances."""
    c, ik = case.chain, case.ik
    q = None
    for q0 in starts(c):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            full = ik.inverse_kinematics_frame(target, initial_position=case.full(q0),
                                               orientation_mode="all")
        q = np.asarray(full[1:-1], dtype=float)
        if solved(case, q, target):
            return q
    return q


def bench_ik(case: Case, n: int, damping: float | None, ikpy_n: int) -> list[list]:
    Ts = targets(case, n)
    damping = DAMPING[case.label] if damping is None else damping
    case.damping = damping
    solvers = [("ours solve_ik (mask 63)", lambda T: solve_ik(case.model, case.chain, T).q, n)]
    if case.pin:
        solvers.append((f"pinocchio DLS (damping {damping:g})",
                        lambda T: pin_dls(case, T, damping), n))
    if case.ik:
        solvers.append(("ikpy inverse_kinematics_frame", lambda T: ikpy_ik(case, T), ikpy_n))
    rows = []
    case.ik_res = {}
    perf = time.perf_counter
    for name, fn, m in solvers:
        gc.collect()
        times, ok = [], 0
        for T in Ts[:m]:
            t0 = perf()
            q = fn(T)
            times.append(perf() - t0)
            ok += solved(case, q, T) and bool(np.all(q >= case.chain.lower)
                                              and np.all(q <= case.chain.upper))
        t = np.array(times) * 1e3
        med, p90 = percentiles(t, [50, 90])
        case.ik_res[name] = (ok / m, med)
        rows.append([f"{case.label}: {name}", m, 100.0 * ok / m, med, p90, float(t.mean()),
                     float(t.max())])
    return rows


# -- report ------------------------------------------------------------------------------------

# -- 4. IK completeness ------------------------------------------------------------------------

COMPLETE_CASES = [("doosan_m1013", "arm", 63), ("nao_h25_v5", "LLeg", 63),
                  ("nao_h25_v5", "RLeg", 63), ("nao_h25_v5", "LArm", 63),
                  ("nao_h25_v5", "LArm", 7), ("nao_h25_v5", "RArm", 63),
                  ("nao_h25_v5", "RArm", 7)]      # the chains and masks of test_ik.py


def bench_complete(n: int) -> list[list]:
    """solve_ik with its defaults (no seed, 48 restarts) on n reachable targets per chain
    and mask (FK of seeded uniform configurations): success rate, median, p99, max [ms]."""
    rows = []
    for model_name, chain, mask in COMPLETE_CASES:
        model = load_model(model_name)
        c = model.chain(chain)
        rng = np.random.default_rng(zlib.crc32(f"complete-{model_name}-{chain}".encode()))
        ts, ok = [], 0
        for q in rng.uniform(c.lower, c.upper, size=(n, c.dof)):
            target = chain_fk(model, c, q)
            t0 = time.perf_counter()
            r = solve_ik(model, c, target, mask=mask)
            ts.append(time.perf_counter() - t0)
            ok += r.success
        p50, p99 = percentiles(np.array(ts) * 1e3, [50, 99])
        rows.append([f"{model_name} {chain} mask {mask}", n, 100.0 * ok / n, p50, p99,
                     max(ts) * 1e3])
    return rows


def verdicts(cases: list[Case]) -> list[list]:
    rows = []
    for case in cases:
        s = case.single
        pin_s = s.get("pinocchio FK + updateFramePlacement (SE3)")
        ours = s["ours chain_fk(model, Chain, ndarray)"]
        if pin_s:
            r = ours / pin_s
            rows.append([case.label, "single FK <= 1.5x Pinocchio", f"{r:.2f}x",
                         "met" if r <= 1.5 else f"missed by {r / 1.5:.2f}x"])
        b = case.batch.get(10**4, {})
        if "pinocchio in a loop" in b:
            r = b["ours chain_fk_batch"] / b["pinocchio in a loop"]
            p = case.paired.get(("ours chain_fk_batch", 10**4))
            rows.append([case.label, "batch FK at 1e4 >= 5x Pinocchio loop",
                         f"{r:.1f}x" + (f" ({p:.1f}x per round)" if p else ""),
                         "met" if r >= 5 else f"missed by {5 / r:.2f}x"])
        ours_ok, ours_med = case.ik_res["ours solve_ik (mask 63)"]
        rows.append([case.label, "IK success > 99 %", f"{100 * ours_ok:.1f} %",
                     "met" if ours_ok > 0.99 else "missed"])
        key = f"pinocchio DLS (damping {case.damping:g})"
        if key in case.ik_res:
            r = ours_med / case.ik_res[key][1]
            rows.append([case.label, "IK median <= 2x Pinocchio DLS", f"{r:.2f}x",
                         "met" if r <= 2 else f"missed by {r / 2:.2f}x"])
    return rows


def breakdown(case: Case, number: int = 20000) -> list[list]:
    """Where one chain_fk call goes: dispatch (chain lookup, compiled-function cache, length
    check), the generated formulas alone (returning a tuple), the 4x4 ndarray built from the
    flat tuple, and what an ndarray q costs over a list (numpy float64 scalars in the
    formulas, or the q.tolist() that avoids them)."""
    import math
    import timeit
    from rtcf_components.kinematics.algorithms import _fn
    c, model = case.chain, case.model
    q = np.random.default_rng(2).uniform(c.lower, c.upper)
    ql = q.tolist()
    f = _fn(c, "pose")
    src = f.source
    if "return _np.array(" not in src:
        return []
    env = {"_np": np, "_nd": np.ndarray, "sin": math.sin, "cos": math.cos,
           "atan2": math.atan2}
    # the same formulas returning the flat tuple instead of the ndarray
    exec(src.replace("return _np.array(", "return (").replace(").reshape(4, 4)", ")"), env)
    g = env["f"]
    flat = g(ql)

    def t(fn):
        return min(timeit.repeat(fn, number=number, repeat=7)) / number * US
    whole = t(lambda: chain_fk(model, c, q))
    whole_list = t(lambda: chain_fk(model, c, ql))
    formulas = t(lambda: g(ql))
    build = t(lambda: np.array(flat).reshape(4, 4))
    gen_nd, gen_list = t(lambda: f(q)), t(lambda: f(ql))
    return [[case.label, "chain_fk(model, Chain, ndarray q), whole call", whole],
            [case.label, "  dispatch: _chain + compiled-function cache + length check",
             whole - gen_nd],
            [case.label, "  q an ndarray instead of a list (numpy scalars or tolist)",
             gen_nd - gen_list],
            [case.label, "  generated formulas on Python floats (tuple out)", formulas],
            [case.label, "  np.array(flat tuple of 16).reshape(4, 4)", build],
            [case.label, "chain_fk(model, Chain, list q), whole call", whole_list]]


def profile(case: Case) -> None:
    c, model = case.chain, case.model
    q = np.random.default_rng(2).uniform(c.lower, c.upper)
    Ts = targets(case, 50)
    for label, stmt in (("chain_fk x 20000", lambda: [chain_fk(model, c, q)
                                                       for _ in range(20000)]),
                        ("solve_ik x 50 targets", lambda: [solve_ik(model, c, T) for T in Ts])):
        pr = cProfile.Profile()
        pr.enable()
        stmt()
        pr.disable()
        s = io.StringIO()
        pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(10)
        print(f"\n## profile {case.label}: {label} (sorted by own time)")
        print("\n".join(s.getvalue().splitlines()[:24]))


def print_complete(n: int) -> None:
    print(f"\n## 4. IK completeness: solve_ik defaults (no seed, 48 restarts, 1e-4 m, "
          f"1e-3 rad), {n} reachable targets per chain [ms per solve]")
    print(table(["chain", "targets", "success %", "p50 ms", "p99 ms", "max ms"],
                bench_complete(n), digits=3))


def load_baseline(root: str):
    """The kinematics package of another checkout (``root``/components/kinematics, e.g. the
    main branch's), imported under its own name next to ours."""
    import importlib.util
    init = Path(root).resolve() / "components" / "kinematics" / "__init__.py"
    if not init.is_file():
        raise SystemExit(f"--baseline: no {init}")
    spec = importlib.util.spec_from_file_location(
        "baseline_kinematics", init, submodule_search_locations=[str(init.parent)])
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--targets", type=int, default=200, help="IK targets per chain")
    ap.add_argument("--ikpy-targets", type=int, default=None,
                    help="IK targets for ikpy (default: --targets)")
    ap.add_argument("--big", type=int, default=10**6, help="the large batch size")
    ap.add_argument("--batches", type=int, default=30, help="timing batches (single FK)")
    ap.add_argument("--per-batch", type=int, default=2000, help="calls per batch")
    ap.add_argument("--damping", type=float, default=None,
                    help="Pinocchio DLS damping (J J^T + damping I); default per chain")
    ap.add_argument("--rows", default="512,1024,2048,4096",
                    help="block sizes of the batched FK also timed at N = 1e4 ('' for none)")
    ap.add_argument("--repeats", type=int, default=15,
                    help="interleaved rounds of the batched FK at N = 1e4 (median)")
    ap.add_argument("--cpu", action="store_true",
                    help="time the batched FK by this thread's CPU time (time.thread_time), "
                         "not wall time: steadier on a shared host")
    ap.add_argument("--baseline", default=None, metavar="CHECKOUT",
                    help="also time that checkout's chain_fk_batch in the same rounds "
                         "(before / after: e.g. a worktree of main)")
    ap.add_argument("--profile", action="store_true", help="cProfile chain_fk and solve_ik")
    ap.add_argument("--complete", type=int, default=10_000,
                    help="targets per chain of section 4 (IK completeness); 0 skips it")
    ap.add_argument("--only-complete", action="store_true", help="run section 4 only")
    a = ap.parse_args()
    for opt in ("targets", "big", "batches", "per_batch", "repeats"):
        if getattr(a, opt) < 1:
            ap.error(f"--{opt.replace('_', '-')}: expected >= 1, got {getattr(a, opt)}")
    if a.ikpy_targets is not None and a.ikpy_targets < 1:
        ap.error(f"--ikpy-targets: expected >= 1, got {a.ikpy_targets}")
    if a.complete < (1 if a.only_complete else 0):
        ap.error(f"--complete: expected >= {1 if a.only_complete else 0}"
                 f"{' with --only-complete' if a.only_complete else ''}, got {a.complete}")
    try:
        block_rows = tuple(int(r) for r in a.rows.split(",") if r.strip())
    except ValueError:
        ap.error(f"--rows: expected block sizes separated by commas, got {a.rows!r}")
    if any(r < 1 for r in block_rows):
        ap.error(f"--rows: expected block sizes >= 1, got {a.rows!r}")
    print(machine_line())
    if a.only_complete:
        print_complete(a.complete)
        return
    peers = []
    if have("pinocchio"):
        import pinocchio
        peers.append(f"pinocchio {pinocchio.__version__}")
    else:
        peers.append("pinocchio: not installed (pip install pin, the test extra)")
    if have("ikpy"):
        from importlib.metadata import version
        peers.append(f"ikpy {version('ikpy')}")
    else:
        peers.append("ikpy: not installed")
    print("# peers: " + ", ".join(peers))
    base = load_baseline(a.baseline) if a.baseline else None
    cases = [Case("NAO LArm", load_model("nao_h25_v5"), "LArm",
                  base and (base, base.load_model("nao_h25_v5"))),
             Case("M1013 arm", load_model("doosan_m1013"), "arm",
                  base and (base, base.load_model("doosan_m1013")))]
    for case in cases:
        print(f"# {case.label}: {case.chain.dof} joints; peers agree with ours to "
              + ", ".join(f"{k} {v:.1e}" for k, v in case.agreement.items()) + " (max |dT|)")

    # as a real-time manager does: what exists now is not walked by the collections before
    # each timed run (numba's objects join on its import: codegen._jit_kernel)
    gc.collect()
    gc.freeze()
    print("\n## 1. single FK call [us] (median, p90; ratio to Pinocchio SE3)")
    rows = []
    for case in cases:
        rows += bench_single(case, a.batches, a.per_batch)
    print(table(["call", "p50 us", "p90 us", "x pinocchio"], rows, digits=2))

    print(f"\n## 2. batched FK throughput [configurations/s] (median of runs; ratio to the "
          f"Pinocchio loop; {'CPU' if a.cpu else 'wall'} time); chain_fk_batch: blocks of "
          f"{BATCH_ROWS:,} rows")
    rows = []
    for case in cases:
        rows += bench_batch(case, [10**4, a.big], repeats=a.repeats, block_rows=block_rows,
                            clock=time.thread_time if a.cpu else time.perf_counter)
    print(table(["how", "N", "configs/s", "x pinocchio", "per round"], rows, digits=1))
    print("# chain_fk_batch: " + ("numba kernels" if codegen.jit_error is None else
                                  f"numpy block code ({codegen.jit_error})")
          + "; its first call per chain in this process (wall time; numba's import, then "
          "the kernel compiled or loaded from " + str(codegen.jit_cache_dir()) + "): "
          + ", ".join(f"{case.label} {case.first_batch:.3f} s" for case in cases))

    print(f"\n## 3. IK, full pose (mask 63), {a.targets} reachable targets per chain "
          f"[ms per solve, restarts included]")
    rows = []
    for case in cases:
        rows += bench_ik(case, a.targets, a.damping, a.ikpy_targets or a.targets)
    print(table(["solver", "targets", "success %", "p50 ms", "p90 ms", "mean ms", "max ms"],
                rows, digits=3))

    if a.complete:
        print_complete(a.complete)

    print("\n## where one chain_fk call goes [us] (best of 7 x 20000 calls)")
    rows = []
    for case in cases:
        rows += breakdown(case)
    print(table(["chain", "part", "us"], rows, digits=2))

    print("\n## targets")
    print(table(["chain", "target", "measured", "verdict"], verdicts(cases)))
    if a.profile:
        for case in cases:
            profile(case)


if __name__ == "__main__":
    main()
