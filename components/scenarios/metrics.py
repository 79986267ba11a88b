"""Figures of a simulation run: tracking errors, support polygon and ZMP, TCP speed.

Pure numpy (no rtcf, no omniORB, no MuJoCo): the acceptance tests, scripts/sim_demo and
bench/bench_sim_system.py compute the figures of the simulation runs with these functions,
so the report, the plots and the tests say the same thing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Tracking", "tracking", "convex_hull", "inside_polygon", "box_corners_xy",
           "speed_profile", "SpeedStats", "speed_constancy"]


@dataclass(frozen=True)
class Tracking:
    """Error of ``measured`` against ``reference``: per column and over all of them."""

    rms: np.ndarray        # (n,) per column
    max: np.ndarray        # (n,) max |error| per column
    rms_all: float         # over every sample of every column
    max_all: float


def tracking(reference: np.ndarray, measured: np.ndarray,
             columns: np.ndarray | None = None) -> Tracking:
    """RMS and max of ``measured - reference`` ((N, n) arrays; optional column subset)."""
    ref = np.asarray(reference, float)
    meas = np.asarray(measured, float)
    if ref.shape != meas.shape:
        raise ValueError(f"tracking: shapes differ: {ref.shape} and {meas.shape}")
    if columns is not None:
        ref, meas = ref[:, columns], meas[:, columns]
    e = meas - ref
    if e.ndim == 1:
        e = e[:, None]
    return Tracking(np.sqrt(np.mean(e * e, axis=0)), np.max(np.abs(e), axis=0),
                    float(np.sqrt(np.mean(e * e))), float(np.max(np.abs(e))))


def convex_hull(points: np.ndarray) -> np.ndarray:
    """Counter-clockwise convex hull of 2-D points (monotone chain), (k, 2)."""
    pts = sorted(set(map(tuple, np.asarray(points, float).reshape(-1, 2))))
    if len(pts) <= 2:
        return np.array(pts)

    def cross(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower: list = []
    for p in pts:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    upper: list = []
    for p in reversed(pts):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    return np.array(lower[:-1] + upper[:-1])


def inside_polygon(point: np.ndarray, hull: np.ndarray, margin: float = 0.0) -> bool:
    """True if ``point`` (x, y) is inside the counter-clockwise convex ``hull`` with at least
    ``margin`` [same unit] to every edge (negative margin: tolerance outside)."""
    return signed_distance(point, hull) >= margin


def signed_distance(point: np.ndarray, hull: np.ndarray) -> float:
    """Distance of ``point`` to the nearest edge line of a CCW convex hull: > 0 inside."""
    p = np.asarray(point, float)[:2]
    h = np.asarray(hull, float)
    best = np.inf
    for i in range(len(h)):
        a, b = h[i], h[(i + 1) % len(h)]
        edge = b - a
        n = np.hypot(*edge)
        if n == 0:
            continue
        d = (edge[0] * (p[1] - a[1]) - edge[1] * (p[0] - a[0])) / n   # left of edge: > 0
        best = min(best, d)
    return float(best)


def box_corners_xy(center: np.ndarray, rot: np.ndarray, half: np.ndarray) -> np.ndarray:
    """The 8 corners of a box (centre (3,), rotation (3, 3), half sizes (3,)) projected on
    the floor: (8, 2)."""
    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
    corners = np.asarray(center) + (signs * np.asarray(half)) @ np.asarray(rot).T
    return corners[:, :2]


def speed_profile(t: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Speed along a sampled path: central differences; (t_mid, speed) [pos unit / s]."""
    t = np.asarray(t, float)
    pos = np.asarray(pos, float)
    d = np.linalg.norm(np.diff(pos, axis=0), axis=1)
    dt = np.diff(t)
    return 0.5 * (t[1:] + t[:-1]), d / dt


@dataclass(frozen=True)
class SpeedStats:
    """Speed of a path over the samples where the plan is at its cruise speed."""

    nominal: float         # the plan's speed there
    mean: float
    std: float
    max_dev: float         # max |speed - nominal|
    samples: int


def speed_constancy(speed: np.ndarray, planned_speed: np.ndarray, nominal: float,
                    tol: float = 1e-6) -> SpeedStats:
    """Measured ``speed`` where ``planned_speed`` is within ``tol`` of ``nominal`` (the
    constant-speed stretches of a blended path)."""
    speed = np.asarray(speed, float)
    mask = np.abs(np.asarray(planned_speed, float) - nominal) <= tol * max(1.0, abs(nominal))
    s = speed[mask]
    if s.size == 0:
        return SpeedStats(nominal, float("nan"), float("nan"), float("nan"), 0)
    return SpeedStats(nominal, float(s.mean()), float(s.std()),
                      float(np.max(np.abs(s - nominal))), int(s.size))
