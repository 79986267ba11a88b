"""The NAO's per-period code in the Simulator core, in its cheaper forms, against the formulas
it replaced, bit for bit over many moving periods: the foot wrenches read through views made
once (not MuJoCo's arrays looked up by index every period), unpacked into floats (the shared
subtree centre read once, the FSR rectangle's differences made once, min / max written out)
and written into the sensors in one packed call, the same floats kept in feet_values, the
torso angles likewise, and a repeated stiffness array
skipped (its limits and back-EMF damping set once), including an array changed in place and
a sign of zero flipped."""

from __future__ import annotations

import math

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from rtcf_components.simulator.core import SimModel, Simulation  # noqa: E402

PERIODS = 240


def bits(a) -> bytes:
    return np.ascontiguousarray(a, dtype=np.float64).tobytes()


def feet_reference(sim: Simulation) -> dict:
    """The former _read_feet: MuJoCo's rows looked up by body and site every period."""
    m, d = sim.mj_model, sim.mj_data
    out = {"lfoot": np.zeros(6), "rfoot": np.zeros(6), "lcop": np.zeros(2),
           "rcop": np.zeros(2), "fsr": np.zeros(8), "zmp": np.zeros(3)}
    fz_total = mx = my = 0.0
    for k, (site, body, xf, xr, yl, yr) in enumerate(sim._feet):
        foot = out["lfoot"] if k == 0 else out["rfoot"]
        cop = out["lcop"] if k == 0 else out["rcop"]
        w = d.cfrc_ext[body].tolist()
        c = d.subtree_com[m.body_rootid[body]].tolist()
        fx, fy, fz = w[3], w[4], w[5]
        p = d.site_xpos[site].tolist()
        ox = w[0] + c[1] * fz - c[2] * fy
        oy = w[1] + c[2] * fx - c[0] * fz
        mx += ox
        my += oy
        fz_total += fz
        tx = ox - (p[1] * fz - p[2] * fy)
        ty = oy - (p[2] * fx - p[0] * fz)
        tz = w[2] + c[0] * fy - c[1] * fx - (p[0] * fy - p[1] * fx)
        R = d.site_xmat[site].tolist()
        fn = R[2] * fx + R[5] * fy + R[8] * fz
        t0 = R[0] * tx + R[3] * ty + R[6] * tz
        t1 = R[1] * tx + R[4] * ty + R[7] * tz
        foot[...] = (R[0] * fx + R[3] * fy + R[6] * fz, R[1] * fx + R[4] * fy + R[7] * fz,
                     fn, t0, t1, R[2] * tx + R[5] * ty + R[8] * tz)
        if fn > 1e-6:
            cop[0], cop[1] = -t1 / fn, t0 / fn
            u = min(1.0, max(0.0, (cop[0] - xr) / (xf - xr)))
            v = min(1.0, max(0.0, (cop[1] - yr) / (yl - yr)))
        else:
            fn = 0.0
            cop[0] = cop[1] = 0.0
            u = v = 0.5
        f = out["fsr"]
        f[4 * k] = fn * u * v
        f[4 * k + 1] = fn * u * (1.0 - v)
        f[4 * k + 2] = fn * (1.0 - u) * v
        f[4 * k + 3] = fn * (1.0 - u) * (1.0 - v)
    if fz_total > 1e-6:
        out["zmp"][0], out["zmp"][1] = -my / fz_total, mx / fz_total
    return out


def rpy_reference(q) -> np.ndarray:
    """The former quat_rpy into a fresh array, element by element."""
    out = np.zeros(3)
    w, x, y, z = q.tolist()
    out[0] = math.atan2(2.0 * (w * x + y * z), 1.0 - 2.0 * (x * x + y * y))
    out[1] = math.asin(max(-1.0, min(1.0, 2.0 * (w * y - z * x))))
    out[2] = math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    return out


def limits_reference(sim: Simulation, s: np.ndarray) -> tuple:
    """The force range and the damping that stiffness ``s`` sets, computed afresh."""
    hi = sim.model.effort_limit * s
    damping = sim._damping0 + sim.model.back_emf * (s > 0.0)
    return bits(-hi), bits(hi), bits(damping)


def test_feet_and_repeated_stiffness_give_the_bits_of_the_former_formulas():
    sim = Simulation(SimModel.load("nao_v5"), 0.01)
    m = sim.mj_model
    n = sim.n
    servo = slice(int(sim._servo[0]), int(sim._servo[0]) + n)
    dofs = slice(int(sim._dadr[0]), int(sim._dadr[0]) + n)
    q0 = np.array(sim.sensors.q)
    q = np.zeros(n)
    hard = np.full(n, 0.8)            # one array, changed in place as the DCM's Hardness is
    moved_feet = 0
    rolled = set()
    for k in range(PERIODS):
        np.add(q0, 0.25 * math.sin(0.05 * k), out=q)
        np.clip(q, sim.model.lower, sim.model.upper, out=q)
        if k % 40 == 20:
            hard[k % n] = 0.0 if k % 80 == 20 else -0.0      # a signed zero: other bits
        if k % 60 == 30:
            hard[(3 * k) % n] = 0.35
        if k == 150:
            hard[:] = 1.0
        sim.set_position_targets(q, hard)
        lo, hi, damping = limits_reference(sim, hard)
        assert bits(m.actuator_forcerange[servo, 0]) == lo, k
        assert bits(m.actuator_forcerange[servo, 1]) == hi, k
        assert bits(m.dof_damping[dofs]) == damping, k
        sim.step()
        ref = feet_reference(sim)
        for name, want in ref.items():
            assert bits(getattr(sim.sensors, name)) == bits(want), (k, name)
        assert bits(sim.feet_values) == bits(sim._feet_buffer), k
        moved_feet += ref["lfoot"][2] != 0.0
        rpy = rpy_reference(sim.sensors.base_quat)
        assert bits(sim.sensors.base_rpy) == bits(rpy) == bits(sim.sensors.torso_rpy), k
        rolled.add(bits(rpy))
    assert moved_feet > PERIODS // 4        # a foot carried weight: the forms were used
    assert len(rolled) > PERIODS // 2       # and the torso turned


def test_a_number_after_an_array_and_the_same_array_again_set_the_limits_again():
    sim = Simulation(SimModel.load("nao_v5"), 0.01)
    m = sim.mj_model
    n = sim.n
    servo = slice(int(sim._servo[0]), int(sim._servo[0]) + n)
    half = np.full(n, 0.5)
    sim.set_stiffness(half)
    sim.set_stiffness(1.0)
    sim.set_stiffness(half)                 # the same bits as two calls ago: applied again
    assert bits(m.actuator_forcerange[servo, 1]) == bits(sim.model.effort_limit * 0.5)
    with pytest.raises(ValueError):
        sim.set_stiffness(np.full(n, 1.5))
    sim.set_stiffness(half)
    assert bits(m.actuator_forcerange[servo, 1]) == bits(sim.model.effort_limit * 0.5)
    with pytest.raises(ValueError):         # the same bits in another shape: still refused
        sim.set_stiffness(half.reshape(n, 1))
