"""The ZMP preview controller (autobalancer.lipm) against the closed-form linear inverted
pendulum: the steady periodic gait orbit, a ZMP shift, the Riccati solution, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rtcf_components.autobalancer.lipm import (GRAVITY, PreviewController, PreviewError,
                                               dare, lipm_closed_form, periodic_gait_com,
                                               preview_gains)

DT, ZC = 0.01, 0.27        # NAO at StandInit: the CoM 0.27 m above the soles


@pytest.fixture(scope="module")
def gains():
    return preview_gains(DT, ZC)


def run(gains, ref: np.ndarray, n: int):
    """Drive a controller with the reference array (one row per period, beyond the end held)
    for n periods; returns the CoM positions and the cart-table ZMPs (n, 2)."""
    pc = PreviewController(gains, c0=ref[0], p0=ref[0])
    N = gains.horizon
    pad = np.vstack([ref, np.repeat(ref[-1:], N + 2, axis=0)])
    com, zmp = np.zeros((n, 2)), np.zeros((n, 2))
    for k in range(n):
        s = pc.step(pad[k + 1: k + 1 + N])
        com[k], zmp[k] = s[0], pc.zmp
    return com, zmp


def test_closed_form_lipm_solves_the_pendulum_equation():
    # c'' = (c - p) / Tc^2 integrated finely from the same start: the formula is the solution
    tc2 = ZC / GRAVITY
    x, p, h = np.array([0.01, 0.05]), 0.03, 1e-3

    def f(s):
        return np.array([s[1], (s[0] - p) / tc2])
    for _ in range(300):                              # RK4 to t = 0.3 s
        k1 = f(x)
        k2 = f(x + 0.5 * h * k1)
        k3 = f(x + 0.5 * h * k2)
        k4 = f(x + h * k3)
        x = x + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
    cf, vf = lipm_closed_form(0.3, 0.01, 0.05, 0.03, ZC)
    assert abs(cf - x[0]) < 1e-9 and abs(vf - x[1]) < 1e-8


def test_periodic_gait_matches_the_closed_form_orbit(gains):
    """A ZMP alternating +-5 cm every 0.4 s (instantaneous transfer): once the start has died
    out, the CoM follows the steady LIPM orbit c = a (1 - cosh((t - T/2)/Tc) / cosh(T/2Tc))
    within 2.5 mm (the controller's ZMP cannot jump, the closed form's does)."""
    a, T, start = 0.05, 0.4, 2.0
    n = int(20.0 / DT)
    t = np.arange(n + 1) * DT
    k = np.floor((t - start) / T)
    ref = np.zeros((n + 1, 2))
    ref[:, 1] = np.where(t < start, 0.0, np.where(k % 2 == 0, a, -a))
    com, zmp = run(gains, ref, n)
    tt = t[1:]
    steady = (tt > 8.0) & (tt < 18.0)       # the window sees the reference's end after 18 s
    closed = periodic_gait_com(tt[steady] - start, a, T, ZC)
    err = np.abs(com[steady, 1] - closed)
    print(f"\nperiodic orbit: max |CoM - closed form| {err.max() * 1e3:.2f} mm, "
          f"orbit amplitude {np.abs(closed).max() * 1e3:.1f} mm")
    assert err.max() < 2.5e-3
    # the cart-table ZMP sits on the reference except around the transfers
    mid = np.abs(((tt - start) % T) - T / 2) < T / 4
    zerr = np.abs(zmp[steady & mid, 1] - ref[1:][steady & mid, 1])
    assert zerr.max() < 5e-3
    assert np.all(np.abs(com[:, 0]) < 1e-12)        # x untouched


def test_zmp_shift_moves_the_com_over_the_new_point(gains):
    """A 5 cm shift of the ZMP reference at t = 2 s: the CoM starts moving before it (the
    preview), ends over the new point at rest, and the ZMP never leaves the span by more than
    the preview's anticipation (it first moves away from the goal to start the CoM)."""
    n = int(6.0 / DT)
    ref = np.zeros((n + 1, 2))
    ref[int(2.0 / DT):, 0] = 0.05
    com, zmp = run(gains, ref, n)
    assert com[int(1.9 / DT) - 1, 0] > 1e-4                       # anticipation
    assert abs(com[-1, 0] - 0.05) < 1e-4
    assert zmp[:, 0].min() > -0.02 and zmp[:, 0].max() < 0.07


def test_riccati_solution_satisfies_the_equation():
    A = np.array([[1.0, 0.1], [0.0, 1.0]])
    B = np.array([[0.005], [0.1]])
    Q, R = np.diag([1.0, 0.1]), np.array([[0.01]])
    P = dare(A, B, Q, R)
    res = A.T @ P @ A - A.T @ P @ B @ np.linalg.solve(R + B.T @ P @ B, B.T @ P @ A) + Q - P
    assert np.abs(res).max() < 1e-9 * np.abs(P).max()


def test_gains_are_deterministic_and_decay(gains):
    again = preview_gains(DT, ZC)
    assert again.Gi == gains.Gi and np.array_equal(again.Gp, gains.Gp)
    assert gains.horizon == 160
    assert abs(gains.Gp[-1]) < 0.01 * abs(gains.Gp[:20]).max()      # the far future matters little


@pytest.mark.parametrize("kw, what", [({"dt": 0.0}, "dt"), ({"dt": math.nan}, "dt"),
                                      ({"zc": -0.1}, "zc"), ({"horizon": 1e6}, "horizon"),
                                      ({"r": 0.0}, "r"), ({"qe": "x"}, "qe")])
def test_bad_arguments_are_refused(kw, what):
    args = {"dt": DT, "zc": ZC, **kw}
    with pytest.raises(PreviewError, match=what):
        preview_gains(**args)
