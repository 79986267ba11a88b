"""Straight-line forward kinematics generated from a chain's constants.

A chain is a product of constant transforms and joint rotations. Multiplying it out on
symbols, with the constants folded in and every product by 0 or 1 dropped, leaves a short
list of scalar formulas per chain. They are compiled once into a Python function that runs on
floats (math.sin / math.cos: a single configuration). This is how the constant-folded FK of
the design notes gets close to Pinocchio's C++ per call from Python.

N configurations at once (compile_batch) take another road: the same formulas on numpy
arrays cost one or two numpy calls per entry, so there the constants are folded into small
matrices applied by matrix products to blocks of configurations, with the joint rotations
in between as a few whole-block numpy calls.

Pure module: imports neither rtcf nor omniORB.
"""

from __future__ import annotations

import math
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
    - "batch": f(Q, out) fills out (N, 4, 4) for Q of shape (N, n) (compile_batch: numpy
      on blocks of configurations, not these formulas).
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


def compile_batch(X: np.ndarray, axes: np.ndarray, tip: np.ndarray,
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
