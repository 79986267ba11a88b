"""Geometry of a blended Doosan path (pure: numpy only; no rtcf, no omniORB).

Units: millimetres and degrees at the Doosan boundary (posx = x, y, z [mm], A, B, C [deg]);
rotation matrices and quaternions inside. Orientation: R = Rz(A) Ry(B) Rz(C) (Z-Y-Z Euler
angles, Doosan's task-pose convention).

Path pieces are parametrised by arc length s in [0, length] and evaluate whole arrays of s at
once (``points``), so sampling a plan is a handful of vectorised calls, one per piece.
"""

from __future__ import annotations

import math

import numpy as np

EPS_LEN = 1e-6       # [mm] shorter than this is "the same point"


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x b for two 3-vectors (np.cross costs ~30 us a call; this ~2 us)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                     a[0] * b[1] - a[1] * b[0]])


# -- rotations ------------------------------------------------------------------------------
def rot_zyz(a_deg: float, b_deg: float, c_deg: float) -> np.ndarray:
    """R = Rz(A) Ry(B) Rz(C), angles in degrees (written out: one array, no products)."""
    a, b, c = math.radians(a_deg), math.radians(b_deg), math.radians(c_deg)
    ca, sa, cb, sb, cc, sc = math.cos(a), math.sin(a), math.cos(b), math.sin(b), \
        math.cos(c), math.sin(c)
    return np.array([[ca * cb * cc - sa * sc, -ca * cb * sc - sa * cc, ca * sb],
                     [sa * cb * cc + ca * sc, -sa * cb * sc + ca * cc, sa * sb],
                     [-sb * cc, sb * sc, cb]])


def zyz_from_rot(r: np.ndarray) -> tuple[float, float, float]:
    """(A, B, C) [deg] with B in [0, 180]; at B = 0 or 180 the split is A = angle, C = 0."""
    b = math.atan2(math.hypot(r[0, 2], r[1, 2]), r[2, 2])
    if math.sin(b) > 1e-9:
        a = math.atan2(r[1, 2], r[0, 2])
        c = math.atan2(r[2, 1], -r[2, 0])
    elif r[2, 2] > 0:       # B = 0: only A + C is defined
        a, c = math.atan2(r[1, 0], r[0, 0]), 0.0
    else:                   # B = 180: only A - C is defined
        a, c = math.atan2(-r[0, 1], -r[0, 0]), 0.0
    return math.degrees(a), math.degrees(b), math.degrees(c)


def rpy_from_rot(r: np.ndarray) -> tuple[float, float, float]:
    """Roll, pitch, yaw [rad] of R = Rz(yaw) Ry(pitch) Rx(roll) (OpenRTM Orientation3D)."""
    pitch = math.atan2(-r[2, 0], math.hypot(r[0, 0], r[1, 0]))
    if math.cos(pitch) > 1e-9:
        roll = math.atan2(r[2, 1], r[2, 2])
        yaw = math.atan2(r[1, 0], r[0, 0])
    else:
        roll, yaw = math.atan2(-r[1, 2], r[1, 1]), 0.0
    return roll, pitch, yaw


def pose_from_posx(x: np.ndarray | list) -> tuple[np.ndarray, np.ndarray]:
    """(p [mm], R) from a posx [x, y, z, A, B, C]."""
    return np.array(x[:3], dtype=float), rot_zyz(x[3], x[4], x[5])


def posx_from_pose(p: np.ndarray, r: np.ndarray) -> list[float]:
    return [float(p[0]), float(p[1]), float(p[2]), *zyz_from_rot(r)]


def quat_from_rot(r: np.ndarray) -> np.ndarray:
    """Unit quaternion (w, x, y, z) of a rotation matrix (Shepperd's method)."""
    t = r[0, 0] + r[1, 1] + r[2, 2]
    if t > 0:
        s = 2.0 * math.sqrt(t + 1.0)
        q = [0.25 * s, (r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s, (r[1, 0] - r[0, 1]) / s]
    elif r[0, 0] > r[1, 1] and r[0, 0] > r[2, 2]:
        s = 2.0 * math.sqrt(1.0 + r[0, 0] - r[1, 1] - r[2, 2])
        q = [(r[2, 1] - r[1, 2]) / s, 0.25 * s, (r[0, 1] + r[1, 0]) / s, (r[0, 2] + r[2, 0]) / s]
    elif r[1, 1] > r[2, 2]:
        s = 2.0 * math.sqrt(1.0 + r[1, 1] - r[0, 0] - r[2, 2])
        q = [(r[0, 2] - r[2, 0]) / s, (r[0, 1] + r[1, 0]) / s, 0.25 * s, (r[1, 2] + r[2, 1]) / s]
    else:
        s = 2.0 * math.sqrt(1.0 + r[2, 2] - r[0, 0] - r[1, 1])
        q = [(r[1, 0] - r[0, 1]) / s, (r[0, 2] + r[2, 0]) / s, (r[1, 2] + r[2, 1]) / s, 0.25 * s]
    q = np.array(q)
    return q / np.linalg.norm(q)


def rot_from_quat(q: np.ndarray) -> np.ndarray:
    w, x, y, z = q
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def quats_from_rots(r: np.ndarray) -> np.ndarray:
    """(N, 3, 3) rotation matrices -> (N, 4) unit quaternions (w, x, y, z), w >= 0 where
    possible: quat_from_rot vectorised (each row by its largest diagonal term)."""
    r = np.asarray(r, dtype=float)
    n = r.shape[0]
    out = np.empty((n, 4))
    d0, d1, d2 = r[:, 0, 0], r[:, 1, 1], r[:, 2, 2]
    tr = d0 + d1 + d2
    case = np.argmax(np.stack((tr, d0, d1, d2), axis=1), axis=1)
    for c in range(4):
        m = case == c
        if not m.any():
            continue
        rm = r[m]
        if c == 0:
            s = 2.0 * np.sqrt(1.0 + tr[m])
            q = (0.25 * s, (rm[:, 2, 1] - rm[:, 1, 2]) / s, (rm[:, 0, 2] - rm[:, 2, 0]) / s,
                 (rm[:, 1, 0] - rm[:, 0, 1]) / s)
        elif c == 1:
            s = 2.0 * np.sqrt(1.0 + d0[m] - d1[m] - d2[m])
            q = ((rm[:, 2, 1] - rm[:, 1, 2]) / s, 0.25 * s, (rm[:, 0, 1] + rm[:, 1, 0]) / s,
                 (rm[:, 0, 2] + rm[:, 2, 0]) / s)
        elif c == 2:
            s = 2.0 * np.sqrt(1.0 + d1[m] - d0[m] - d2[m])
            q = ((rm[:, 0, 2] - rm[:, 2, 0]) / s, (rm[:, 0, 1] + rm[:, 1, 0]) / s, 0.25 * s,
                 (rm[:, 1, 2] + rm[:, 2, 1]) / s)
        else:
            s = 2.0 * np.sqrt(1.0 + d2[m] - d0[m] - d1[m])
            q = ((rm[:, 1, 0] - rm[:, 0, 1]) / s, (rm[:, 0, 2] + rm[:, 2, 0]) / s,
                 (rm[:, 1, 2] + rm[:, 2, 1]) / s, 0.25 * s)
        out[m] = np.stack(q, axis=1)
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out


def same_hemisphere(quat: np.ndarray) -> np.ndarray:
    """Flip rows of an (N, 4) quaternion sequence so that neighbours lie within 90 deg of
    each other (q and -q are the same rotation): the sequence then interpolates smoothly."""
    out = np.array(quat, dtype=float)
    for i in range(1, len(out)):
        if float(out[i - 1] @ out[i]) < 0.0:
            out[i] = -out[i]
    return out


def rotation_angle(r0: np.ndarray, r1: np.ndarray) -> float:
    """Angle [rad] of the rotation taking r0 to r1."""
    c = (np.trace(r0.T @ r1) - 1.0) / 2.0
    return math.acos(max(-1.0, min(1.0, c)))


def slerp(q0: np.ndarray, q1: np.ndarray, f: np.ndarray, out: np.ndarray) -> None:
    """Quaternions between q0 and q1 at fractions f (n,) into out (n, 4), shortest way."""
    d = float(np.dot(q0, q1))
    if d < 0.0:
        q1, d = -q1, -d
    if d > 0.9999995:                       # nearly equal: linear, renormalised
        np.multiply.outer(1.0 - f, q0, out=out)
        out += np.multiply.outer(f, q1)
        out /= np.linalg.norm(out, axis=1, keepdims=True)
        return
    th = math.acos(d)
    s = math.sin(th)
    np.multiply.outer(np.sin((1.0 - f) * th) / s, q0, out=out)
    out += np.multiply.outer(np.sin(f * th) / s, q1)


# -- path pieces -----------------------------------------------------------------------------
class Line:
    """Straight piece from a to b."""

    kind = "line"

    def __init__(self, a: np.ndarray, b: np.ndarray):
        self.a, self.b = a, b
        d = b - a
        self.length = float(np.linalg.norm(d))
        self.u = d / self.length if self.length > 0 else np.zeros(3)

    def points(self, s: np.ndarray) -> np.ndarray:
        return self.a + np.multiply.outer(s, self.u)

    def tangent(self, s: float) -> np.ndarray:
        return self.u

    def trimmed(self, cut_start: float, cut_end: float) -> "Line":
        return Line(self.a + cut_start * self.u, self.b - cut_end * self.u)

    def cut_length(self, r: float, at_end: bool) -> float:
        """Arc length from the end (or start) to where the sphere of radius r around it
        meets the piece."""
        return r


class Arc:
    """Circular piece: centre c, radius rho, from angle 0 along e1 towards e2, sweep [rad]."""

    kind = "arc"

    def __init__(self, c: np.ndarray, rho: float, e1: np.ndarray, e2: np.ndarray,
                 sweep: float):
        self.c, self.rho, self.e1, self.e2, self.sweep = c, rho, e1, e2, sweep
        self.length = rho * sweep

    @classmethod
    def through(cls, p0: np.ndarray, via: np.ndarray, p1: np.ndarray) -> "Arc":
        """The arc from p0 through via to p1. Raises ValueError (collinear / coincident)."""
        a, b = via - p0, p1 - p0
        n = cross(a, b)
        nn = float(np.dot(n, n))
        la, lb, lc = (float(np.linalg.norm(v)) for v in (a, b, p1 - via))
        if min(la, lb, lc) < EPS_LEN:
            raise ValueError("two of its three points coincide")
        if math.sqrt(nn) < 1e-9 * la * lb or math.sqrt(nn) / (la * lb) < 1e-9:
            raise ValueError("its three points are collinear")
        # circumcentre of the triangle p0, via, p1
        c = p0 + (np.dot(a, a) * cross(b, n) + np.dot(b, b) * cross(n, a)) / (2.0 * nn)
        rho = float(np.linalg.norm(p0 - c))
        e1 = (p0 - c) / rho
        e2 = cross(n / math.sqrt(nn), e1)           # direction of travel through via
        ang = lambda p: math.atan2(float(np.dot(p - c, e2)), float(np.dot(p - c, e1))) % (2 * math.pi)
        sweep = ang(p1)
        if sweep < 1e-12:
            sweep = 2 * math.pi
        return cls(c, rho, e1, e2, sweep)

    def points(self, s: np.ndarray) -> np.ndarray:
        th = np.asarray(s) / self.rho
        return (self.c + np.multiply.outer(np.cos(th) * self.rho, self.e1)
                + np.multiply.outer(np.sin(th) * self.rho, self.e2))

    def tangent(self, s: float) -> np.ndarray:
        th = s / self.rho
        return -math.sin(th) * self.e1 + math.cos(th) * self.e2

    def cut_length(self, r: float, at_end: bool) -> float:
        """Arc length cut by the sphere of radius r (chord r) at one end; r <= 2 rho."""
        return 2.0 * self.rho * math.asin(min(1.0, r / (2.0 * self.rho)))

    def trimmed(self, cut_start: float, cut_end: float) -> "Arc":
        th0 = cut_start / self.rho
        e1 = math.cos(th0) * self.e1 + math.sin(th0) * self.e2
        e2 = -math.sin(th0) * self.e1 + math.cos(th0) * self.e2
        return Arc(self.c, self.rho, e1, e2, self.sweep - (cut_start + cut_end) / self.rho)


class Hermite:
    """Cubic Hermite curve p0 -> p1 with end tangents t0, t1 (unit) scaled to the chord
    length. Arc length is tabulated numerically; s -> u by interpolation."""

    kind = "hermite"
    N_TABLE = 1025
    _GL_X, _GL_W = np.polynomial.legendre.leggauss(8)

    def __init__(self, p0: np.ndarray, t0: np.ndarray, p1: np.ndarray, t1: np.ndarray):
        chord = float(np.linalg.norm(p1 - p0))
        m0, m1 = chord * t0, chord * t1
        # polynomial coefficients: p(u) = c0 + c1 u + c2 u^2 + c3 u^3
        self.coef = np.array([p0, m0, 3 * (p1 - p0) - 2 * m0 - m1, 2 * (p0 - p1) + m0 + m1])
        self.t0, self.t1 = t0, t1
        # length: 8-point Gauss-Legendre on each half of [0, 1] (the speed |p'(u)| is smooth)
        d = self._deriv(self._GL_U)
        self.length = float(self._GL_WU @ np.sqrt((d * d).sum(axis=1)))
        self._s_tab: np.ndarray | None = None     # s -> u table, built at first sampling

    _GL_U = np.concatenate((0.25 * (_GL_X + 1.0), 0.25 * (_GL_X + 3.0)))
    _GL_WU = np.concatenate((_GL_W, _GL_W)) * 0.25

    def _deriv(self, u: np.ndarray) -> np.ndarray:
        c = self.coef
        u = np.asarray(u)[..., None]
        return c[1] + u * (2 * c[2] + 3 * u * c[3])

    def _table(self) -> np.ndarray:
        if self._s_tab is None:
            self.u_tab = np.linspace(0.0, 1.0, self.N_TABLE)
            seg = np.linalg.norm(np.diff(self._eval(self.u_tab), axis=0), axis=1)
            s = np.concatenate(([0.0], np.cumsum(seg)))
            self._s_tab = s * (self.length / s[-1])     # chord sums, scaled to the length
        return self._s_tab

    def _eval(self, u: np.ndarray) -> np.ndarray:
        c = self.coef
        u = np.asarray(u)[..., None]
        return c[0] + u * (c[1] + u * (c[2] + u * c[3]))

    def points(self, s: np.ndarray) -> np.ndarray:
        return self._eval(np.interp(s, self._table(), self.u_tab))

    def tangent(self, s: float) -> np.ndarray:
        u = float(np.interp(s, self._table(), self.u_tab)) if 0 < s < self.length else \
            (0.0 if s <= 0 else 1.0)
        d = self._deriv(u)
        return d / np.linalg.norm(d)


def deflection(u1: np.ndarray, u2: np.ndarray) -> float:
    """Angle [rad] between two unit directions (0 = straight on, pi = reversal)."""
    return math.acos(max(-1.0, min(1.0, float(np.dot(u1, u2)))))


def tangent_arc(j: np.ndarray, u1: np.ndarray, u2: np.ndarray, r: float) -> Arc:
    """The arc tangent to the line arriving at j along u1 and the line leaving along u2, with
    tangent points at distance r from j (a LINE-LINE blend): radius r / tan(phi/2)."""
    phi = deflection(u1, u2)
    rho = r / math.tan(phi / 2.0)
    a = j - r * u1                                   # tangent point on the incoming line
    bis = u2 - u1
    normal_in = bis - np.dot(bis, u1) * u1           # towards the centre, normal to u1
    normal_in /= np.linalg.norm(normal_in)
    c = a + rho * normal_in
    e1 = (a - c) / rho
    return Arc(c, rho, e1, u1, phi)
