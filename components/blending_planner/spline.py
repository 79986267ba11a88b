"""Cubic splines through knots and the symmetric trapezoid (pure: numpy only).

Used by the DRL motions (motion.py): joint paths between IK knots (a C2 curve in time that
starts and ends at rest), movesj / movesx through their waypoints, and the speed profile
every motion of the DRL API is timed with.
"""

from __future__ import annotations

import math

import numpy as np


class CubicSpline:
    """The C2 cubic spline through (x_k, y_k) with given end slopes (clamped) or zero end
    curvature (natural). ``y`` is (K,) or (K, m): m curves share the knots. x strictly
    increasing. Runs in: any thread (vectorised; built once, evaluated on arrays)."""

    def __init__(self, x: np.ndarray, y: np.ndarray, slope0: np.ndarray | None = None,
                 slope1: np.ndarray | None = None):
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        self.flat = y.ndim == 1
        y = y.reshape(len(x), -1)
        k = len(x)
        if k < 2 or np.any(np.diff(x) <= 0):
            raise ValueError("spline knots: at least two, strictly increasing")
        h = np.diff(x)
        d = np.diff(y, axis=0) / h[:, None]
        # tridiagonal system for the second derivatives M
        a = np.zeros(k)
        b = np.ones(k)
        c = np.zeros(k)
        r = np.zeros((k, y.shape[1]))
        a[1:-1], b[1:-1], c[1:-1] = h[:-1], 2 * (h[:-1] + h[1:]), h[1:]
        r[1:-1] = 6 * (d[1:] - d[:-1])
        if slope0 is not None:
            b[0], c[0] = 2 * h[0], h[0]
            r[0] = 6 * (d[0] - np.asarray(slope0, dtype=float))
        if slope1 is not None:
            a[-1], b[-1] = h[-1], 2 * h[-1]
            r[-1] = 6 * (np.asarray(slope1, dtype=float) - d[-1])
        self.m = _thomas(a, b, c, r)
        self.x, self.y, self.h = x, y, h

    def __call__(self, xe: np.ndarray, deriv: int = 0) -> np.ndarray:
        xe = np.asarray(xe, dtype=float)
        i = np.clip(np.searchsorted(self.x, xe, side="right") - 1, 0, len(self.x) - 2)
        h = self.h[i][:, None]
        t0 = (xe - self.x[i])[:, None]
        t1 = (self.x[i + 1] - xe)[:, None]
        m0, m1, y0, y1 = self.m[i], self.m[i + 1], self.y[i], self.y[i + 1]
        if deriv == 0:
            out = (m0 * t1 ** 3 + m1 * t0 ** 3) / (6 * h) + (y0 / h - m0 * h / 6) * t1 \
                + (y1 / h - m1 * h / 6) * t0
        elif deriv == 1:
            out = (-m0 * t1 ** 2 + m1 * t0 ** 2) / (2 * h) - (y0 / h - m0 * h / 6) \
                + (y1 / h - m1 * h / 6)
        else:
            out = (m0 * t1 + m1 * t0) / h
        return out[:, 0] if self.flat else out


def _thomas(a: np.ndarray, b: np.ndarray, c: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Solve the tridiagonal system (sub a, diagonal b, super c) for every column of r."""
    n = len(b)
    cp = np.zeros(n)
    rp = np.zeros_like(r)
    cp[0] = c[0] / b[0]
    rp[0] = r[0] / b[0]
    for i in range(1, n):
        den = b[i] - a[i] * cp[i - 1]
        cp[i] = c[i] / den
        rp[i] = (r[i] - a[i] * rp[i - 1]) / den
    out = np.zeros_like(r)
    out[-1] = rp[-1]
    for i in range(n - 2, -1, -1):
        out[i] = rp[i] - cp[i] * out[i + 1]
    return out


class Trapezoid:
    """A symmetric trapezoidal profile of the progress u in [0, 1] over [0, T]: accelerate
    for ta, cruise, decelerate for ta (ta <= T / 2; ta = T / 2 is the triangle)."""

    def __init__(self, duration: float, t_acc: float):
        self.T = float(duration)
        self.ta = float(min(t_acc, duration / 2.0))
        # peak rate of u [1/s]: the area under the rate is 1
        self.peak = 1.0 / (self.T - self.ta) if self.T > 0 else 0.0

    @classmethod
    def for_distance(cls, dist: float, v: float, a: float) -> "Trapezoid":
        """The fastest profile covering ``dist`` at speed <= v and acceleration <= a."""
        if dist <= 0:
            return cls(0.0, 0.0)
        if dist >= v * v / a:
            return cls(dist / v + v / a, v / a)
        ta = math.sqrt(dist / a)
        return cls(2.0 * ta, ta)

    @classmethod
    def for_time(cls, duration: float) -> "Trapezoid":
        """``time`` given: T exactly, accelerating and decelerating for T / 4 each (the
        project's choice for moveb, Doosan giving no profile for it; used for every
        motion)."""
        return cls(duration, duration / 4.0)

    def stretched(self, duration: float) -> "Trapezoid":
        """The same shape over a longer time (ta scaled with T)."""
        if self.T <= 0 or duration <= self.T:
            return self
        return Trapezoid(duration, self.ta * duration / self.T)

    def u(self, t: np.ndarray) -> np.ndarray:
        """Progress at times t [s] (clipped to [0, T])."""
        T, ta, v = self.T, self.ta, self.peak
        if T <= 0:
            return np.ones_like(np.asarray(t, dtype=float))
        t = np.clip(np.asarray(t, dtype=float), 0.0, T)
        a = v / ta if ta > 0 else 0.0
        u = np.where(t < ta, 0.5 * a * t * t, 0.5 * a * ta * ta + v * (t - ta))
        return np.where(t > T - ta, 1.0 - 0.5 * a * (T - t) ** 2, u)

    def rate(self, t: np.ndarray) -> np.ndarray:
        """du/dt at times t."""
        if self.T <= 0 or self.ta <= 0:
            return np.zeros_like(np.asarray(t, dtype=float))
        t = np.clip(np.asarray(t, dtype=float), 0.0, self.T)
        a = self.peak / self.ta
        return np.minimum(self.peak, a * np.minimum(t, self.T - t))

    def times(self, dt: float) -> np.ndarray:
        """0, dt, ..., the last at T (a motion ends exactly on its target)."""
        n = int(math.ceil(self.T / dt - 1e-9)) + 1 if self.T > 0 else 1
        return np.minimum(np.arange(n) * dt, self.T)
