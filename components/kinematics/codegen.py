"""Straight-line forward kinematics generated from a chain's constants.

A chain is a product of constant transforms and joint rotations. Multiplying it out on
symbols, with the constants folded in and every product by 0 or 1 dropped, leaves a short
list of scalar formulas per chain. They are compiled once into a Python function that runs on
floats (math.sin / math.cos: a single configuration). This is how the constant-folded FK of
the design notes gets close to Pinocchio's C++ per call from Python.

N configurations at once (compile_batch) take another road. With numba installed (a
requirement of the package; imported on the first batch only), the same formulas are
compiled to machine code as a loop over the configurations (compile_batch_jit). Without it,
the constants are folded into small matrices applied by matrix products to blocks of
configurations, with the joint rotations in between as a few whole-block numpy calls (the
same formulas on numpy arrays would cost one or two numpy calls per entry).

Pure module: imports neither rtcf nor omniORB.
"""

from __future__ import annotations

import gc
import hashlib
import importlib.util
import math
import os
import sys
import threading
import warnings
from pathlib import Path
from typing import Callable, Union

import numpy as np

Expr = Union[float, str]          # a folded constant, or the source text of a formula
_SNAP = 1e-14                     # constants this close to 0 or +-1 are taken as exact


def _snap(x: float) -> float:
    for v in (0.0, 1.0, -1.0):
        if abs(x - v) < _SNAP:
            return v
    return float(x)


def _par(e: str) -> str:
    return f"({e})" if any(ch in e[1:] for ch in "+-") or e.startswith("-") else e


def _mul(a: Expr, b: Expr) -> Expr:
    if isinstance(a, float) and isinstance(b, float):
        return a * b
    if isinstance(a, str) and isinstance(b, float):
        a, b = b, a
    if isinstance(a, float):
        if a == 0.0:
            return 0.0
        if a == 1.0:
            return b
        if a == -1.0:
            return f"-{_par(b)}"
        return f"{a!r}*{_par(b)}"
    return f"{_par(a)}*{_par(b)}"


def _add(*terms: Expr) -> Expr:
    const = 0.0
    parts: list[str] = []
    for t in terms:
        if isinstance(t, float):
            const += t
        else:
            parts.append(t)
    if not parts:
        return const
    if const != 0.0:
        parts.append(repr(const))
    out = parts[0]
    for p in parts[1:]:
        out += f" - {p[1:]}" if p.startswith("-") and not p.startswith("-(") else f" + {p}"
    return out


class _Writer:
    """Collects assignments; a non-constant entry gets a temporary so formulas stay short."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.n = 0

    def let(self, e: Expr) -> Expr:
        if isinstance(e, float) or e.isidentifier():
            return e
        self.n += 1
        name = f"t{self.n}"
        self.lines.append(f"    {name} = {e}")
        return name


def _matmul_const(w: _Writer, M: list[list[Expr]], C: np.ndarray) -> list[list[Expr]]:
    """M (3x4 symbols, implicit last row 0 0 0 1) times a constant 4x4."""
    C = [[_snap(v) for v in row] for row in C]
    out = []
    for i in range(3):
        row = []
        for j in range(4):
            terms = [_mul(M[i][k], C[k][j]) for k in range(3)]
            terms.append(_mul(M[i][3], C[3][j]))
            row.append(w.let(_add(*terms)))
        out.append(row)
    return out


def _matmul_rot(w: _Writer, M: list[list[Expr]], axis: np.ndarray, k: int) -> list[list[Expr]]:
    """M times the rotation about the constant unit ``axis`` by q_k:
    R = a a^T + c (I - a a^T) + s [a]x."""
    a = [_snap(v) for v in axis]
    skew = [[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]]
    R = [[_add(_snap(a[i] * a[j]), _mul(_snap((i == j) - a[i] * a[j]), f"c{k}"),
               _mul(skew[i][j], f"s{k}")) for j in range(3)] for i in range(3)]
    out = []
    for i in range(3):
        row = [w.let(_add(*[_mul(M[i][m], R[m][j]) for m in range(3)])) for j in range(3)]
        row.append(M[i][3])
        out.append(row)
    return out


def chain_source(X: np.ndarray, axes: np.ndarray, tip: np.ndarray, *, frames: bool = False,
                 jacobian: bool = False) -> tuple[list[str], list[list[Expr]], list, list]:
    """Lines computing the effector pose; optionally every joint frame and the Jacobian."""
    w = _Writer()
    n = len(X)
    for k in range(n):
        w.lines.append(f"    c{k} = cos(q{k}); s{k} = sin(q{k})")
    M: list[list[Expr]] = [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]]
    joint_frames = []
    for k in range(n):
        M = _matmul_const(w, M, X[k])
        M = _matmul_rot(w, M, axes[k], k)
        joint_frames.append(M)
    E = _matmul_const(w, M, tip)
    jac: list = []
    if jacobian:
        pe = [E[i][3] for i in range(3)]
        for k in range(n):
            Mk, a = joint_frames[k], [_snap(v) for v in axes[k]]
            z = [w.let(_add(*[_mul(Mk[i][m], a[m]) for m in range(3)])) for i in range(3)]
            d = [w.let(_add(pe[i], _mul(-1.0, Mk[i][3]))) for i in range(3)]
            v = [w.let(_add(_mul(z[1], d[2]), _mul(-1.0, _mul(z[2], d[1])))),
                 w.let(_add(_mul(z[2], d[0]), _mul(-1.0, _mul(z[0], d[2])))),
                 w.let(_add(_mul(z[0], d[1]), _mul(-1.0, _mul(z[1], d[0]))))]
            jac.append(v + z)
    return w.lines, E, (joint_frames if frames else []), jac


def _fmt(e: Expr) -> str:
    return repr(e) if isinstance(e, float) else e


def compile_chain(X: np.ndarray, axes: np.ndarray, tip: np.ndarray, kind: str) -> Callable:
    """Compile one of:
    - "pose": f(q) -> 4x4 ndarray (floats, math functions);
    - "pose_jac": f(q) -> (4x4 pose, 6xn Jacobian [v; w] at the effector, root frame);
    - "pose6d": f(q) -> (x, y, z, wx, wy, wz) of the effector, R = Rz(wz) Ry(wy) Rx(wx),
      no array built (the cheapest per-cycle call);
    - "frames": f(q) -> (n+1, 4, 4): every joint frame, then the effector;
    - "batch": f(Q, out) fills out (N, 4, 4) for Q of shape (N, n) (compile_batch: these
      formulas compiled by numba, or numpy on blocks of configurations without it).
    """
    if kind == "batch":
        return compile_batch(X, axes, tip)
    n = len(X)
    lines, E, F, J = chain_source(X, axes, tip, frames=kind == "frames",
                                  jacobian=kind == "pose_jac")
    args = ", ".join(f"q{k}" for k in range(n)) + ("," if n == 1 else "")
    flat = ", ".join(_fmt(E[i][j]) for i in range(3) for j in range(4))
    pose = f"_np.array(({flat}, 0.0, 0.0, 0.0, 1.0)).reshape(4, 4)"   # flat: cheaper
    # numpy scalars make every float operation several times slower: unpack floats
    head = ["def f(q):", "    if type(q) is _nd:", "        q = q.tolist()", f"    {args} = q"]
    if kind == "pose":
        tail = [f"    return {pose}"]
    elif kind == "pose_jac":
        cols = [", ".join(_fmt(J[k][r]) for k in range(n)) for r in range(6)]
        jac = "_np.array((" + ", ".join(f"({c},)" for c in cols) + "))"
        tail = [f"    return {pose}, {jac}"]
    elif kind == "pose6d":         # [x, y, z, wx, wy, wz], R = Rz(wz) Ry(wy) Rx(wx)
        e = {(i, j): _fmt(E[i][j]) for i in range(3) for j in range(4)}
        tail = [f"    r00 = {e[0, 0]}; r10 = {e[1, 0]}; r20 = {e[2, 0]}",
                f"    r01 = {e[0, 1]}; r11 = {e[1, 1]}; r02 = {e[0, 2]}; r12 = {e[1, 2]}",
                "    wz = atan2(r10, r00); cz = cos(wz); sz = sin(wz)",
                "    return ({}, {}, {}, atan2(sz*r02 - cz*r12, cz*r11 - sz*r01), "
                "atan2(-r20, cz*r00 + sz*r10), wz)".format(e[0, 3], e[1, 3], e[2, 3])]
    elif kind == "frames":
        fr = []
        for M in F + [E]:
            r = [", ".join(_fmt(M[i][j]) for j in range(4)) for i in range(3)]
            fr.append(f"(({r[0]}), ({r[1]}), ({r[2]}), (0.0, 0.0, 0.0, 1.0))")
        tail = [f"    return _np.array(({', '.join(fr)},))"]
    else:
        raise ValueError(f"unknown kind {kind!r}")
    src = head + lines + tail
    env = {"_np": np, "_nd": np.ndarray, "sin": math.sin, "cos": math.cos,
           "atan2": math.atan2}
    code = "\n".join(src) + "\n"
    exec(compile(code, f"<fk {kind}, {n} joints>", "exec"), env)  # our own generated text
    fn = env["f"]
    fn.source = code
    return fn


# -- batched FK: N configurations per call ------------------------------------------------------

def _z_basis(axis: np.ndarray) -> np.ndarray:
    """A rotation P (4x4) whose z column is the unit ``axis``: Rot(axis, q) = P Rz(q) P^T.
    An axis along +-x, +-y or +-z gets a signed permutation (its constants stay exact)."""
    a = np.array([_snap(v) for v in axis])
    P = np.eye(4)
    for i in range(3):
        if abs(a[i]) == 1.0 and np.count_nonzero(a) == 1:
            u = np.zeros(3)
            u[(i + 1) % 3] = 1.0                     # x -> (y, z, x), y -> (z, x, y), z -> I
            P[:3, 0], P[:3, 1], P[:3, 2] = u, np.cross(a, u), a
            return P
    a = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    t = np.array([1.0, 0.0, 0.0]) if abs(a[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    u = np.cross(t, a)
    u /= np.linalg.norm(u)
    P[:3, 0], P[:3, 1], P[:3, 2] = u, np.cross(a, u), a
    return P


BATCH_ROWS = 1536                 # configurations per block of compile_batch (measured: bench)


def compile_batch(X: np.ndarray, axes: np.ndarray, tip: np.ndarray, rows: int = BATCH_ROWS,
                  jit: bool | None = None) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """f(Q, out): the effector poses of the N configurations Q (N, n) into out (N, 4, 4).
    ``jit``: True, the formulas compiled by numba (compile_batch_jit; ImportError without
    numba); False, the numpy block code (compile_batch_numpy); None (the default), numba
    when it can be imported and compiles, else numpy. Both agree with compile_chain's
    "pose" to ~1e-15."""
    global jit_error
    if rows < 1:
        raise ValueError(f"rows: expected >= 1, got {rows}")
    if jit is None:
        try:
            return compile_batch_jit(X, axes, tip, rows)
        except ImportError as e:      # numba not installed: the numpy code, the same results
            jit_error = f"numba: {e}"
        except Exception as e:        # numba there but failing: the same, and say why here
            jit_error = f"numba failed: {type(e).__name__}: {e}"
        return compile_batch_numpy(X, axes, tip, rows)
    return (compile_batch_jit if jit else compile_batch_numpy)(X, axes, tip, rows)


def compile_batch_numpy(X: np.ndarray, axes: np.ndarray, tip: np.ndarray,
                        rows: int = BATCH_ROWS) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """f(Q, out): the effector poses of the N configurations Q (N, n) into out (N, 4, 4),
    ``rows`` configurations at a time (their scratch then stays in the cache).

    Every joint axis is turned into z (Rot(a, q) = P Rz(q) P^T), so the chain is
    A0 Rz(q0) C1 Rz(q1) ... Rz(q_n-1) Cn with the constants Ck = P_k-1^T X_k P_k and
    Cn = P_n-1^T tip folded now. The 3x4 part of the running product M is kept as column
    blocks of shape (3, rows). Multiplying by a constant Ck is one matrix product (BLAS) of
    a (6, 4) matrix with the 4 blocks: it gives the blocks x, y, z, p of M Ck and also y and
    -x, so that the rotation by q_k that follows, (x, y) <- (x cos + y sin, y cos - x sin),
    is three contiguous numpy calls: (x, y) *= cos, (y, -x) *= sin, (x, y) += (y, -x).
    The first joint and C1 fold into one constant matrix applied to (cos q0, sin q0, 1); the
    last product (3, rows, 4) @ Cn is written straight into the output's strided rows.
    cos q and sin q come from t = tan(q / 2) over the whole (n, rows) block: numpy's float64
    tan is vectorised where its sin and cos are not, and cos q = 2 / (1 + t^2) - 1,
    sin q = t 2 / (1 + t^2) are exact to a few units in the last place (q / 2 is exact; at
    q = pi, t ~ 1.6e16 and sin q comes out ~1.2e-16 as it should).
    Pure numpy; the scratch is allocated per call (a call may run in any thread)."""
    n = len(X)
    if rows < 1:
        raise ValueError(f"rows: expected >= 1, got {rows}")
    P = [_z_basis(a) for a in axes]
    A0 = X[0] @ P[0] if n else np.eye(4)
    C = [P[k - 1].T @ X[k] @ P[k] for k in range(1, n)] + [(P[n - 1].T if n else np.eye(4)) @ tip]
    # blocks (x, y, z, p, y, -x) of M C from those of M: rows of C^T
    six = [np.vstack([c.T, c.T[1], -c.T[0]]) for c in C]
    # M1 = A0 Rz(q0) C1: its column j is (a0 C1[0,j] + a1 C1[1,j]) cos q0
    # + (a1 C1[0,j] - a0 C1[1,j]) sin q0 + (a2 C1[2,j] + a3 C1[3,j]), a_m the columns of A0
    a0, a1, a2, a3 = (A0[:3, m] for m in range(4))
    K = np.stack([np.column_stack([a0 * c1 + a1 * c2, a1 * c1 - a0 * c2, a2 * c3 + a3 * c4])
                  for c1, c2, c3, c4 in six[0]])                # (6 blocks, 3 rows, 3)
    # constants within 1e-14 of 0 or +-1 are taken as exact, as in the formulas above (NAO's
    # cos(pi / 2) ~ 6e-17 would otherwise multiply down to subnormals: very slow arithmetic)
    snap = np.vectorize(_snap, otypes=[float])
    K = snap(K.reshape(18, 3))
    G = [snap(g) for g in six[1:-1]]              # C2 ... C(n-1)
    Cn = snap(C[-1])
    dot, matmul, multiply = np.dot, np.matmul, np.multiply
    last_row = np.array([0.0, 0.0, 0.0, 1.0])

    def block(Qs, out, CS, H, M, B):
        m = Qs.shape[0]
        multiply(Qs.T, 0.5, out=H)
        np.tan(H, out=H)                            # t = tan(q / 2)
        c, s = CS[:, 0], CS[:, 1]
        multiply(H, H, out=c)
        c += 1.0
        np.divide(2.0, c, out=c)                    # 2 / (1 + t^2)
        multiply(H, c, out=s)                       # sin q
        c -= 1.0                                    # cos q
        dot(K, CS[0], out=M.reshape(18, m))         # A0 Rz(q0) C1, and (y, -x)
        for k in range(1, n):
            ck, sk = CS[k, 0], CS[k, 1]
            multiply(M[0:2], ck, out=M[0:2])
            multiply(M[4:6], sk, out=M[4:6])
            M[0:2] += M[4:6]                        # (x cos + y sin, y cos - x sin)
            if k < n - 1:
                dot(G[k - 1], M[:4].reshape(4, 3 * m), out=B.reshape(6, 3 * m))
                M, B = B, M
        if n == 1:
            np.copyto(out[:, :3, :], M[:4].transpose(2, 1, 0))
        else:
            matmul(M[:4].transpose(1, 2, 0), Cn, out=out[:, :3, :].transpose(1, 0, 2))
        out[:, 3] = last_row                        # here, while these rows are in the cache

    def scratch(m):
        CS = np.empty((n, 3, m))
        CS[0, 2] = 1.0
        return CS, np.empty((n, m)), np.empty((6, 3, m)), np.empty((6, 3, m))

    def f(Q: np.ndarray, out: np.ndarray) -> np.ndarray:
        N = Q.shape[0]
        if n == 0:
            out[:] = tip
            return out
        full = N - N % rows
        if full:
            bufs = scratch(rows)
            for k in range(0, full, rows):
                block(Q[k:k + rows], out[k:k + rows], *bufs)
        if N > full:
            block(Q[full:], out[full:], *scratch(N - full))
        return out

    return f


# -- the same formulas compiled by numba ------------------------------------------------------

jit_error: str | None = None      # why compile_batch last fell back to numpy (None: it did not)
jit_cache_error: str | None = None  # why the last kernel was compiled in memory, not cached
_JIT_LOCK = threading.Lock()      # one compile at a time, each kernel compiled once a process
_JIT_KERNELS: dict[str, Callable] = {}


def jit_cache_dir() -> Path:
    """Where the generated kernels are written, so that numba can cache their machine code
    next to them (in __pycache__; in NUMBA_CACHE_DIR when that is set):
    $XDG_CACHE_HOME/rtcf/fk, by default ~/.cache/rtcf/fk. Nothing is written into the
    installed package. Where this cannot be written, kernels are compiled in memory, in
    every process."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "rtcf" / "fk"


def jit_source(X: np.ndarray, axes: np.ndarray, tip: np.ndarray) -> str:
    """A module defining fk(T, out): chain_source's formulas in a loop over the
    configurations; T (n, N) holds tan(q_k / 2), out (N, 4, 4) C-contiguous. cos and sin come
    from t = tan(q / 2) as in compile_batch_numpy (numpy's tan is vectorised, a call of the
    C library's sin and cos per joint and configuration costs about twice the whole kernel)."""
    n = len(X)
    lines, E, _, _ = chain_source(X, axes, tip)
    assert all(ln.startswith(f"    c{k} = cos(q{k})") for k, ln in enumerate(lines[:n]))
    body = [f"h = T[{k}, i]; d = 2.0 / (1.0 + h * h); c{k} = d - 1.0; s{k} = h * d"
            for k in range(n)]
    body += [ln.strip() for ln in lines[n:]]
    body += [f"out[i, {i}, {j}] = {_fmt(E[i][j])}" for i in range(3) for j in range(4)]
    body += ["out[i, 3, 0] = 0.0; out[i, 3, 1] = 0.0; out[i, 3, 2] = 0.0; out[i, 3, 3] = 1.0"]
    return ("# Generated by rtcf_components.kinematics.codegen.jit_source: the effector poses\n"
            f"# of a chain of {n} joints, one configuration per row. Safe to delete.\n"
            "from numba import njit\n\n\n"
            '@njit("void(float64[:, ::1], float64[:, :, ::1])", cache=True, nogil=True,\n'
            '      error_model="numpy")\n'
            "def fk(T, out):\n"
            "    for i in range(T.shape[1]):\n"
            + "".join(f"        {b}\n" for b in body))


def _write_source(src: str, key: str) -> Path | None:
    """The kernel's file in jit_cache_dir(), written unless it is there already with this
    text (its time stamp is what numba's cache checks); None when it cannot be written."""
    d = jit_cache_dir()
    path = d / f"fk_{key}.py"
    try:
        if path.is_file() and path.read_text() == src:
            return path
        d.mkdir(parents=True, exist_ok=True)
        tmp = d / f".fk_{key}.{os.getpid()}.{threading.get_ident()}.tmp"
        tmp.write_text(src)
        os.replace(tmp, path)              # whole, even with several processes at once
        return path
    except OSError:
        return None


def _jit_kernel(src: str) -> Callable:
    """The compiled fk of a jit_source text: this process's, numba's disk cache, or compiled
    now (seconds). numba's warnings (e.g. about its cache) are not shown. Importing numba
    adds ~90k long-lived objects to the heap (a full collection then took 50 ms of CPU
    instead of 6 at load 13): where the process has frozen its heap (gc.freeze, as
    rtcf.realtime does before the ECs start), they are frozen with it (no collection)."""
    global jit_cache_error
    key = hashlib.sha256(src.encode()).hexdigest()[:24]
    with _JIT_LOCK:
        fn = _JIT_KERNELS.get(key)
        if fn is not None:
            return fn
        import numba  # noqa: F401  (ImportError without it: compile_batch falls back)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            path = _write_source(src, key)
            if path is not None:
                name = f"rtcf_fk_{key}"
                try:
                    spec = importlib.util.spec_from_file_location(name, path)
                    mod = importlib.util.module_from_spec(spec)
                    # numba's cached code refers to its module by name (imports it)
                    sys.modules[name] = mod
                    spec.loader.exec_module(mod)
                    fn = mod.fk
                except Exception as e:    # e.g. no place numba may cache in: in memory
                    sys.modules.pop(name, None)
                    jit_cache_error = f"{path}: {type(e).__name__}: {e}"
                    fn = None
            else:
                jit_cache_error = f"{jit_cache_dir()}: cannot be written"
            if fn is None:
                env: dict = {}
                code = src.replace("cache=True", "cache=False")
                exec(compile(code, f"<fk batch jit {key}>", "exec"), env)  # our own text
                fn = env["fk"]
        _JIT_KERNELS[key] = fn
        if gc.get_freeze_count():         # a process that froze its start-up heap (a real-
            gc.freeze()                   # time manager): numba's ~90k objects join it
        return fn


def compile_batch_jit(X: np.ndarray, axes: np.ndarray, tip: np.ndarray,
                      rows: int = BATCH_ROWS) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """f(Q, out) as compile_batch_numpy's, by chain_source's formulas compiled by numba
    (jit_source) in a loop over the configurations: no temporary arrays, the GIL released.
    ``rows`` configurations at a time get their tan(q / 2) from numpy first. The first call
    for a chain in a process imports numba and compiles (seconds) or loads its kernel from
    numba's cache (jit_cache_dir); ImportError without numba."""
    n = len(X)
    if rows < 1:
        raise ValueError(f"rows: expected >= 1, got {rows}")
    if n == 0:
        return compile_batch_numpy(X, axes, tip, rows)
    kernel = _jit_kernel(jit_source(X, axes, tip))
    multiply, tan = np.multiply, np.tan

    def f(Q: np.ndarray, out: np.ndarray) -> np.ndarray:
        N = Q.shape[0]
        dst = out if out.flags.c_contiguous and out.dtype == np.float64 else np.empty((N, 4, 4))
        T = np.empty((n, min(rows, N)))
        for k in range(0, N, rows):
            m = min(rows, N - k)
            h = T if m == T.shape[1] else np.empty((n, m))
            multiply(Q[k:k + m].T, 0.5, out=h)
            tan(h, out=h)
            kernel(h, dst[k:k + m])
        if dst is not out:
            out[...] = dst
        return out

    f.kernel = kernel
    return f
