"""ZMP preview control of a linear inverted pendulum (cart-table model).

Pure core: imports neither rtcf nor omniORB, reads no clock (the period is a constructor
argument, each ``step`` is one period). Metres and seconds.

The method is Kajita et al.'s preview control of the ZMP:

    S. Kajita, F. Kanehiro, K. Kaneko, K. Fujiwara, K. Harada, K. Yokoi, H. Hirukawa,
    "Biped walking pattern generation by using preview control of zero-moment point",
    IEEE ICRA 2003, pp. 1620-1626,

with the optimal preview servo of Katayama et al. ("Design of an optimal controller for a
discrete-time system subject to previewable demand", Int. J. Control 41(3), 1985) that the
paper uses. Per horizontal axis, the centre of mass c on a table of height z_c (the CoM
height, constant) with its jerk as input:

    x_{k+1} = A x_k + B u_k,   x = [c, c', c''],   p_k = C x_k = c_k - (z_c / g) c''_k

A = [[1, T, T^2/2], [0, 1, T], [0, 0, 1]], B = [T^3/6, T^2/2, T], C = [1, 0, -z_c/g]. The
controller minimises sum Qe e_k^2 + R du_k^2 (e = p - p_ref) over an infinite horizon with
the reference known N samples ahead:

    u_k = -G_i sum_{i<=k} e_i - G_x x_k - sum_{j=1..N} G_p(j) p_ref(k+j)

G_i, G_x and G_p come from the discrete algebraic Riccati equation of the system augmented
with the integral of the error (solved here by the doubling algorithm: no scipy needed).
hrpsys-base's AutoBalancer generates its CoM the same way (rtc/AutoBalancer/PreviewController).

The closed-form reference the tests compare with: a LIPM whose ZMP sits at p for a whole step,
c'' = (c - p) / Tc^2 with Tc = sqrt(z_c / g), moves as
c(t) = p + (c0 - p) cosh(t / Tc) + Tc c0' sinh(t / Tc) (``lipm_closed_form``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

GRAVITY = 9.81   # [m/s^2] as in the simulated world (MuJoCo's default gravity)


class PreviewError(ValueError):
    """A bad preview-controller argument; nothing was changed."""


def _finite(x, what: str, lo: float = -math.inf, hi: float = math.inf,
            open_lo: bool = False) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise PreviewError(f"{what}: expected a number, got {x!r}") from None
    if not math.isfinite(v) or v < lo or v > hi or (open_lo and v == lo):
        bound = f"({lo:g}" if open_lo else f"[{lo:g}"
        raise PreviewError(f"{what}: expected a finite number in {bound}, {hi:g}], got {x!r}")
    return v


def dare(A: np.ndarray, B: np.ndarray, Q: np.ndarray, R: np.ndarray,
         tol: float = 1e-12, max_iter: int = 64) -> np.ndarray:
    """The stabilising solution P of P = A'PA - A'PB (R + B'PB)^-1 B'PA + Q.

    Structure-preserving doubling (Chu et al. 2004): quadratic convergence, each iteration
    doubles the horizon of the Riccati recursion. Raises PreviewError when it does not
    converge (an unstabilisable pair)."""
    n = A.shape[0]
    Ak = A.copy()
    Gk = B @ np.linalg.solve(R, B.T)
    Hk = Q.copy()
    eye = np.eye(n)
    for _ in range(max_iter):
        W = eye + Gk @ Hk
        W1 = np.linalg.solve(W, Ak)                 # (I + G H)^-1 A
        W2 = np.linalg.solve(W, Gk)                 # (I + G H)^-1 G
        H_new = Hk + W1.T @ Hk @ Ak
        G_new = Gk + Ak @ W2 @ Ak.T
        A_new = Ak @ W1
        done = np.linalg.norm(H_new - Hk, ord=1) <= tol * max(1.0, np.linalg.norm(H_new, ord=1))
        Ak, Gk, Hk = A_new, G_new, H_new
        if done:
            return 0.5 * (Hk + Hk.T)
    raise PreviewError("the Riccati equation did not converge (check the weights)")


@dataclass(frozen=True)
class PreviewGains:
    """The controller's gains for one (period, CoM height, weights, horizon)."""

    dt: float                 # [s]
    zc: float                 # [m] CoM height above the ZMP plane
    g: float                  # [m/s^2]
    A: np.ndarray             # (3, 3)
    B: np.ndarray             # (3,)
    C: np.ndarray             # (3,)
    Gi: float                 # integral gain
    Gx: np.ndarray            # (3,) state gain
    Gp: np.ndarray            # (N,) preview gains for p_ref(k+1) ... p_ref(k+N)

    @property
    def horizon(self) -> int:
        return int(self.Gp.size)


def preview_gains(dt: float, zc: float, horizon: float = 1.6, qe: float = 1.0,
                  r: float = 1e-6, g: float = GRAVITY) -> PreviewGains:
    """Gains of the preview servo for period ``dt`` [s], CoM height ``zc`` [m] and a preview
    of ``horizon`` [s] (Kajita 2003 uses 1.6 s; the gains are negligible beyond about 2 Tc
    ... 3 step times). ``qe`` weighs the ZMP error, ``r`` the jerk increment."""
    dt = _finite(dt, "dt", 0.0, 1.0, open_lo=True)
    zc = _finite(zc, "zc", 0.0, 100.0, open_lo=True)
    horizon = _finite(horizon, "horizon", dt, 60.0)
    qe = _finite(qe, "qe", 0.0, 1e12, open_lo=True)
    r = _finite(r, "r", 0.0, 1e12, open_lo=True)
    g = _finite(g, "g", 0.0, 1e3, open_lo=True)
    A = np.array([[1.0, dt, dt * dt / 2.0], [0.0, 1.0, dt], [0.0, 0.0, 1.0]])
    B = np.array([dt ** 3 / 6.0, dt * dt / 2.0, dt])
    C = np.array([1.0, 0.0, -zc / g])
    # augmented system on [sum e ; dx] (Katayama 1985, as in Kajita 2003 eq. 12-14)
    At = np.eye(4)
    At[0, 1:] = C @ A
    At[1:, 1:] = A
    Bt = np.concatenate(([C @ B], B)).reshape(4, 1)
    It = np.array([1.0, 0.0, 0.0, 0.0]).reshape(4, 1)
    Qt = np.zeros((4, 4))
    Qt[0, 0] = qe
    Rm = np.array([[r]])
    P = dare(At, Bt, Qt, Rm)
    S = float(r + (Bt.T @ P @ Bt)[0, 0])
    K = (Bt.T @ P @ At) / S                   # [Gi, Gx]
    Ac = At - Bt @ K
    n = max(1, int(round(horizon / dt)))
    Gp = np.empty(n)
    X = -Ac.T @ P @ It
    for j in range(n):
        Gp[j] = float((Bt.T @ X)[0, 0]) / S
        X = Ac.T @ X
    # Gp(1) = -Gi (Katayama), Gp(j) = (R + B'PB)^-1 B' X_{j-1}: the loop above gives G_p(j)
    # for j = 2 ... n+1 from X_1 ... X_n; shift so Gp[0] is G_p(1) = -Gi
    Gi = float(K[0, 0])
    Gp = np.concatenate(([-Gi], Gp[:-1]))
    for a in (A, B, C, Gp):
        a.flags.writeable = False
    Gx = K[0, 1:].copy()
    Gx.flags.writeable = False
    return PreviewGains(dt, zc, g, A, B, C, Gi, Gx, Gp)


class PreviewController:
    """One preview servo for x and y together (same gains). Runs in: the owner's thread.

    ``state`` (3, 2): position, velocity, acceleration of the CoM on x (column 0) and y;
    ``zmp`` (2,): the cart-table ZMP of the current state. ``step(ref)`` takes the ZMP
    reference of the next N samples, ``ref`` (N, 2) with ref[0] = p_ref(k+1) ... (the
    current reference p_ref(k) is the one given to the previous step, kept inside), and
    advances one period. No allocation per step."""

    def __init__(self, gains: PreviewGains, c0=(0.0, 0.0), p0=None):
        self.gains = gains
        self.state = np.zeros((3, 2))
        self.err_sum = np.zeros(2)
        self.zmp = np.zeros(2)
        self._p_ref = np.zeros(2)
        self._u = np.zeros(2)
        self._tmp = np.zeros(2)
        self.reset(c0, p0)

    def reset(self, c0, p0=None) -> None:
        """At rest with the CoM at ``c0`` (2,) [m] and the current ZMP reference ``p0``
        (default: under the CoM)."""
        c = np.asarray(c0, dtype=float).reshape(2)
        self.state[:] = 0.0
        self.state[0] = c
        self.err_sum[:] = 0.0
        self._p_ref[:] = c if p0 is None else np.asarray(p0, dtype=float).reshape(2)
        self.zmp[:] = c

    def step(self, ref: np.ndarray) -> np.ndarray:
        """Advance one period with the reference window ``ref`` (N, 2); returns ``state``
        (the new CoM position, velocity and acceleration). Runs in: owner thread."""
        g = self.gains
        s = self.state
        # the integral of the error includes the current sample (Kajita 2003 eq. 14)
        np.dot(g.C, s, out=self.zmp)
        np.subtract(self.zmp, self._p_ref, out=self._tmp)
        self.err_sum += self._tmp
        np.dot(g.Gx, s, out=self._u)
        self._u += g.Gi * self.err_sum
        np.dot(g.Gp, ref, out=self._tmp)
        self._u += self._tmp
        np.negative(self._u, out=self._u)
        # x_{k+1} = A x_k + B u_k, in place (A is upper triangular: update top-down)
        dt = g.dt
        s[0] += dt * s[1] + 0.5 * dt * dt * s[2] + g.B[0] * self._u
        s[1] += dt * s[2] + g.B[1] * self._u
        s[2] += g.B[2] * self._u
        self._p_ref[:] = ref[0]
        np.dot(g.C, s, out=self.zmp)
        return s


def lipm_closed_form(t, c0: float, v0: float, p: float, zc: float,
                     g: float = GRAVITY) -> tuple:
    """Position and velocity of a linear inverted pendulum whose ZMP stays at ``p``:
    c(t) = p + (c0 - p) cosh(t/Tc) + Tc v0 sinh(t/Tc), Tc = sqrt(zc / g)."""
    tc = math.sqrt(zc / g)
    t = np.asarray(t, dtype=float)
    ch, sh = np.cosh(t / tc), np.sinh(t / tc)
    c = p + (c0 - p) * ch + tc * v0 * sh
    v = (c0 - p) / tc * sh + v0 * ch
    return c, v


def periodic_gait_com(t, a: float, step_time: float, zc: float, g: float = GRAVITY):
    """The steady periodic LIPM orbit for a ZMP alternating +a, -a every ``step_time``
    (instantaneous transfer, step k covers [k T, (k+1) T), +a on even k): the CoM crosses 0
    at each step change and c(t) = s a (1 - cosh((tau - T/2)/Tc) / cosh(T/(2 Tc))) within
    the step (tau: time into the step, s = +1 / -1). Closed form for the tests."""
    tc = math.sqrt(zc / g)
    t = np.asarray(t, dtype=float)
    k = np.floor(t / step_time)
    tau = t - k * step_time
    sign = np.where(k % 2 == 0, 1.0, -1.0)
    return sign * a * (1.0 - np.cosh((tau - step_time / 2.0) / tc)
                       / math.cosh(step_time / (2.0 * tc)))
