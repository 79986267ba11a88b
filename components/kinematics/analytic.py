"""Closed-form start configurations for 6-DOF chains of Pieper's kind (IK).

Pure module: imports neither rtcf nor omniORB. Metres and radians.

A 6R chain whose axes 1 and 2 meet in a point and whose axes 4, 5 and 6 meet in another
(a spherical wrist: the Doosan M1013, Puma-like arms), or whose axes 1, 2, 3 meet and
axes 5, 6 meet (a hip and an ankle: NAO's legs), has at most eight inverse kinematics
solutions, and each one follows from Paden-Kahan subproblems on the chain's screw axes:
a rotation taking a point to a point (1), two rotations about meeting axes (2), a rotation
putting a point at a given distance from another (3).

Model files carry rounded constants (the M1013's URDF writes pi/2 as 1.571), so the axes of
a real model meet only nearly (25 um apart on the M1013). The solutions here are those of the
axes as if they met at their closest points: a few 1e-4 rad off the exact ones, which is
what a start configuration has to be. ``solve_ik`` polishes them on the exact model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

MEET_TOL = 2e-3      # [m] axes closer than this count as meeting (rounded model constants)
PARALLEL_TOL = 1e-3  # |sin| of the angle below which two axes count as parallel


@dataclass(frozen=True)
class Pieper:
    """The screw axes of a chain at q = 0 (root frame) and the structure found in them."""

    w: np.ndarray          # (6, 3) unit axis directions
    p: np.ndarray          # (6, 3) a point of each axis
    home: np.ndarray       # (4, 4) joint-6 frame at q = 0 (multiply by the tip on the right)
    kind: str              # "wrist": 1-2 and 4-5-6 meet; "hip": 1-2-3 and 5-6 meet
    c1: np.ndarray         # meeting point of the first group
    c2: np.ndarray         # meeting point of the second group


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """np.cross for two 3-vectors, without its generality (ten times faster here)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                     a[0] * b[1] - a[1] * b[0]])


def _rot(w: np.ndarray, a: float) -> np.ndarray:
    x, y, z = w
    c, s, v = math.cos(a), math.sin(a), 1.0 - math.cos(a)
    return np.array([[c + x * x * v, x * y * v - z * s, x * z * v + y * s],
                     [y * x * v + z * s, c + y * y * v, y * z * v - x * s],
                     [z * x * v - y * s, z * y * v + x * s, c + z * z * v]])


def _screw(w: np.ndarray, p: np.ndarray, a: float) -> np.ndarray:
    """4x4 rotation by ``a`` about the line through ``p`` along ``w``."""
    t = np.eye(4)
    r = _rot(w, a)
    t[:3, :3], t[:3, 3] = r, p - r @ p
    return t


def _meet(w: np.ndarray, p: np.ndarray, idx: tuple[int, ...]) -> np.ndarray | None:
    """The point nearest to the lines ``idx`` (least squares), or None when they do not
    meet within MEET_TOL or two neighbours are parallel (the first and the last of three
    may be: the M1013's wrist at q = 0)."""
    for i, j in zip(idx, idx[1:]):
        if np.linalg.norm(_cross(w[i], w[j])) < PARALLEL_TOL:
            return None
    a = np.zeros((3, 3))
    b = np.zeros(3)
    for i in idx:
        m = np.eye(3) - np.outer(w[i], w[i])
        a += m
        b += m @ p[i]
    x = np.linalg.solve(a, b)
    for i in idx:
        d = x - p[i]
        if np.linalg.norm(d - w[i] * (w[i] @ d)) > MEET_TOL:
            return None
    return x


def pieper(X: np.ndarray, axes: np.ndarray) -> Pieper | None:
    """The Pieper structure of a chain (its fixed transforms X and joint axes), or None."""
    if len(X) != 6:
        return None
    f = np.eye(4)
    w, p = np.empty((6, 3)), np.empty((6, 3))
    for i in range(6):
        f = f @ X[i]
        w[i] = f[:3, :3] @ axes[i]
        p[i] = f[:3, 3]
    c1, c2 = _meet(w, p, (0, 1)), _meet(w, p, (3, 4, 5))
    if c1 is not None and c2 is not None:
        return Pieper(w, p, f, "wrist", c1, c2)
    c1, c2 = _meet(w, p, (0, 1, 2)), _meet(w, p, (4, 5))
    if c1 is not None and c2 is not None:
        return Pieper(w, p, f, "hip", c1, c2)
    return None


# -- Paden-Kahan subproblems (axes through a point c, directions w) ---------------------------

def _sp1(w: np.ndarray, c: np.ndarray, x: np.ndarray, y: np.ndarray) -> float:
    """The angle of the rotation about (w, c) that takes x nearest to y."""
    u, v = x - c, y - c
    u = u - w * (w @ u)
    v = v - w * (w @ v)
    return math.atan2(float(w @ _cross(u, v)), float(u @ v))


def _sp2(w1: np.ndarray, w2: np.ndarray, c: np.ndarray, x: np.ndarray,
         y: np.ndarray) -> list[tuple[float, float]]:
    """(a1, a2) with rot(w1, a1) rot(w2, a2) x = y, both axes through c: two solutions, one
    when the circles only touch (or, with rounded constants, just miss)."""
    u, v = x - c, y - c
    k = float(w1 @ w2)
    den = k * k - 1.0
    alpha = (k * (w2 @ u) - (w1 @ v)) / den
    beta = (k * (w1 @ v) - (w2 @ u)) / den
    n = _cross(w1, w2)
    g2 = (u @ u - alpha * alpha - beta * beta - 2 * alpha * beta * k) / (n @ n)
    base = alpha * w1 + beta * w2
    gammas = (0.0,) if g2 <= 0 else (math.sqrt(g2), -math.sqrt(g2))
    out = []
    for g in gammas:
        z = base + g * n + c
        out.append((_sp1(w1, c, z, y), _sp1(w2, c, x, z)))
    return out


def _sp3(w: np.ndarray, c: np.ndarray, x: np.ndarray, y: np.ndarray,
         delta: float) -> list[float]:
    """Angles of the rotation about (w, c) that put x at distance delta from y (clamped to
    the nearest distance when none does)."""
    u, v = x - c, y - c
    d2 = delta * delta - float(w @ (u - v)) ** 2
    u = u - w * (w @ u)
    v = v - w * (w @ v)
    a0 = math.atan2(float(w @ _cross(u, v)), float(u @ v))
    nu, nv = float(np.linalg.norm(u)), float(np.linalg.norm(v))
    if nu * nv < 1e-12:
        return [0.0]
    cos_b = (nu * nu + nv * nv - d2) / (2 * nu * nv)
    b = math.acos(max(-1.0, min(1.0, cos_b)))
    return [a0 - b, a0 + b] if b > 1e-12 else [a0]


# -- the solutions ----------------------------------------------------------------------------

def _inv(t: np.ndarray) -> np.ndarray:
    out = np.eye(4)
    r = t[:3, :3].T
    out[:3, :3], out[:3, 3] = r, -r @ t[:3, 3]
    return out


def _apply(t: np.ndarray, x: np.ndarray) -> np.ndarray:
    return t[:3, :3] @ x + t[:3, 3]


def _euler(s: Pieper, i: int, g: np.ndarray, c: np.ndarray) -> list[tuple[float, ...]]:
    """(a_i, a_i+1, a_i+2) with screw_i screw_i+1 screw_i+2 = g, three axes meeting at c."""
    w = s.w
    # a point on the third axis but not on the second: only the first two move it
    x = c + w[i + 2]
    out = []
    for a, b in _sp2(w[i], w[i + 1], c, x, _apply(g, x)):
        rest = _inv(_screw(w[i + 1], c, b)) @ _inv(_screw(w[i], c, a)) @ g
        # a point off the third axis fixes its angle
        y = c + _cross(w[i + 2], np.array([1.0, 0.0, 0.0]) if abs(w[i + 2][0]) < 0.9
                         else np.array([0.0, 1.0, 0.0]))
        out.append((a, b, _sp1(w[i + 2], c, y, _apply(rest, y))))
    return out


def candidates(s: Pieper, target: np.ndarray, tip: np.ndarray) -> list[np.ndarray]:
    """Up to eight configurations of the (idealised) chain that reach ``target`` (4x4, root
    frame) with effector ``tip``; angles in (-pi, pi]."""
    g = target @ _inv(s.home @ tip)          # = screw_1 ... screw_6 (product of exponentials)
    w, p = s.w, s.p
    out = []
    if s.kind == "wrist":
        pw = _apply(g, s.c2)                  # the wrist centre, moved by joints 1-3 only
        delta = float(np.linalg.norm(pw - s.c1))
        for a3 in _sp3(w[2], p[2], s.c2, s.c1, delta):
            x3 = _apply(_screw(w[2], p[2], a3), s.c2)
            for a1, a2 in _sp2(w[0], w[1], s.c1, x3, pw):
                head = _screw(w[0], s.c1, a1) @ _screw(w[1], s.c1, a2) @ _screw(w[2], p[2], a3)
                for a4, a5, a6 in _euler(s, 3, _inv(head) @ g, s.c2):
                    out.append(np.array([a1, a2, a3, a4, a5, a6]))
    else:
        # g^-1 moves the hip point c1 to where joints 4-6 must take it back:
        # screw_4 screw_5 screw_6 x = c1 with x = g^-1 c1
        x = _apply(_inv(g), s.c1)
        delta = float(np.linalg.norm(x - s.c2))
        for b in _sp3(w[3], p[3], s.c1, s.c2, delta):
            a4 = -b
            y = _apply(_screw(w[3], p[3], b), s.c1)            # = screw_5 screw_6 x
            for a5, a6 in _sp2(w[4], w[5], s.c2, x, y):
                tail = _screw(w[3], p[3], a4) @ _screw(w[4], s.c2, a5) @ _screw(w[5], s.c2, a6)
                for a1, a2, a3 in _euler(s, 0, g @ _inv(tail), s.c1):
                    out.append(np.array([a1, a2, a3, a4, a5, a6]))
    return out


def into_limits(q: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """q with each angle moved by a whole turn into [lo, hi] where that is possible."""
    q = np.array(q)
    for k in (-1, 1):
        shifted = q + k * 2 * math.pi
        q = np.where(((q < lo) | (q > hi)) & (shifted >= lo) & (shifted <= hi), shifted, q)
    return q
