"""Straight-line forward kinematics generated from a chain's constants.

A chain is a product of constant transforms and joint rotations. Multiplying it out on
symbols, with the constants folded in and every product by 0 or 1 dropped, leaves a short
list of scalar formulas per chain. They are compiled once into a Python function that runs on
floats (math.sin / math.cos: a single configuration) or, unchanged, on numpy arrays (np.sin /
np.cos: N configurations at once, no Python loop per configuration). This is how the
constant-folded FK of the design notes gets close to Pinocchio's C++ per call from Python.

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
    - "batch": f(Q, out) fills out (N, 4, 4) for Q of shape (N, n), numpy functions.
    """
    n = len(X)
    lines, E, F, J = chain_source(X, axes, tip, frames=kind == "frames",
                                  jacobian=kind == "pose_jac")
    args = ", ".join(f"q{k}" for k in range(n)) + ("," if n == 1 else "")
    flat = ", ".join(_fmt(E[i][j]) for i in range(3) for j in range(4))
    pose = f"_np.array(({flat}, 0.0, 0.0, 0.0, 1.0)).reshape(4, 4)"   # flat: cheaper
    if kind == "batch":
        # out: (N, 4, 4) zeros with out[:, 3, 3] = 1 (only the non-zero entries are set)
        head = ["def f(Q, out):", f"    {args} = Q.T" if n > 1 else "    q0 = Q[:, 0]"]
        body = [f"    out[:, {i}, {j}] = {_fmt(E[i][j])}"
                for i in range(3) for j in range(4) if E[i][j] != 0.0]
        src = head + lines + body + ["    return out"]
        env = {"_np": np, "sin": np.sin, "cos": np.cos}
    else:
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
