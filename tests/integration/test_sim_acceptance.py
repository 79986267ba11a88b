"""The simulator's acceptance: the NAO standing, waving and falling limp on MuJoCo through
SequencePlayer -> DCM (body: mujoco); the M1013 following a BlendingPlanner path through the
1 kHz joint effort PID; determinism of a composition run twice. Physics tolerances only (no
timing): the compositions run in process in simulation time (rtcf.testing.SimSystem, through
rtcf_components.scenarios), driven as a user drives them (pattern, DCM setAlias, moveBlending). Each test prints its
figures (pytest -s shows them; docs/simulator.md quotes them)."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.slow    # seconds per test: left out of scripts/test -m "not slow"

pytest.importorskip("mujoco")

from rtcf_components.scenarios.metrics import speed_constancy, speed_profile, tracking  # noqa: E402
from rtcf_components.scenarios.runs import WAVE, run_arm, run_nao  # noqa: E402

SETTLE = 1.0     # [s] after start before the standing checks (the first contact settles)


@pytest.fixture(scope="module")
def standing():
    return run_nao(20.0, pattern=None)


@pytest.fixture(scope="module")
def waving():
    return run_nao(6.0, pattern=WAVE)


@pytest.fixture(scope="module")
def arm():
    return run_arm()


def test_nao_stands_20_s_with_the_default_stiffness(standing):
    r = standing
    assert r.t[-1] >= 19.99
    after = r.t >= SETTLE
    z = r.base_pos[after, 2]
    drift = float(z.max() - z.min())
    tol = 1e-6
    over = np.maximum(r.q - r.upper - tol, r.lower - tol - r.q).max()
    fsr_err = np.abs(r.fsr_total_kg[after] / r.mass - 1.0)
    margin = r.support_margin[after]
    print(f"\nNAO standing 20 s: torso z {z.mean():.4f} m, drift {drift * 1e3:.3f} mm; "
          f"worst joint-limit excess {max(over, 0.0):.2e} rad; FSR total "
          f"{r.fsr_total_kg[after].mean():.4f} kg vs mass {r.mass:.4f} kg, max error "
          f"{fsr_err.max() * 100:.3f} %; ZMP margin min {margin.min() * 1e3:.1f} mm")
    assert drift < 0.005                                  # 5 mm over 19 s
    assert over <= 0.0                                    # never beyond a joint limit
    assert fsr_err.max() < 0.02                           # FSR total = weight within 2 %
    assert margin.min() > 0.0                             # ZMP inside the support polygon
    assert np.all(np.abs(r.base_rpy[after, :2]) < 0.05)   # upright


def test_wave_pattern_does_not_fall_and_tracks_qref(waving):
    r = waving
    z = r.base_pos[:, 2]
    moved = np.flatnonzero(np.ptp(r.q_ref, axis=0) > 0.05)      # joints the pattern moves
    tr = tracking(r.q_ref, r.q, moved)
    names = [r.joint_names[i] for i in moved]
    speed = np.abs(r.dq).max(axis=0) / r.velocity_limit
    print(f"\nNAO wave: torso z min {z.min():.4f} m (start {z[0]:.4f}), max tilt "
          f"{np.abs(r.base_rpy[:, :2]).max():.4f} rad; tracking vs qRef over {names}: "
          f"RMS {tr.rms_all:.4f} rad, max {tr.max_all:.4f} rad; per joint RMS "
          + ", ".join(f"{n} {v:.3f}" for n, v in zip(names, tr.rms))
          + f"; peak |dq| / velocity limit {speed.max():.2f} ({r.joint_names[speed.argmax()]}), "
          f"samples above the limit {r.velocity_exceeded}")
    assert z.min() > z[0] - 0.02                          # did not fall (or crouch)
    assert np.abs(r.base_rpy[:, :2]).max() < 0.2
    assert r.support_margin[r.t >= SETTLE].min() > -0.005
    assert moved.size >= 4
    assert tr.rms_all < 0.15                              # servos follow the reference
    assert tr.max_all < 0.6
    assert r.velocity_exceeded == 0                       # no joint above its no-load speed


def test_stiffness_zero_on_the_whole_body_falls():
    r = run_nao(4.0, pattern=None, limp_at=1.0)
    before = r.t < 1.0
    after = r.t > 3.5
    z0 = r.base_pos[before, 2].mean()
    z1 = r.base_pos[after, 2].mean()
    tilt = np.abs(r.base_rpy[after, :2]).max()
    print(f"\nNAO limp at 1 s: torso z {z0:.3f} m -> {z1:.3f} m, tilt {tilt:.2f} rad, "
          f"hardness after {r.hardness[after].max():.1f}")
    assert r.hardness[after].max() == 0.0                 # every Hardness went to 0
    assert z1 < z0 - 0.1 or tilt > 1.0                    # it collapsed / fell over


def test_m1013_follows_a_blended_path_on_the_effort_pid(arm):
    r = arm
    tr = tracking(r.tcp_plan, r.tcp_meas)
    dev = np.linalg.norm(r.tcp_meas - r.tcp_plan, axis=1)
    tq = tracking(r.q_ref, r.q)
    t_mid, v_meas = speed_profile(r.t, r.tcp_meas)
    _, v_plan = speed_profile(r.t, r.tcp_plan)
    cruise = speed_constancy(v_meas, v_plan, r.vel, tol=1e-3)
    print(f"\nM1013 square {r.duration:.2f} s at {r.vel:.0f} mm/s: TCP error (FK of measured "
          f"joints vs plan) RMS {np.sqrt(np.mean(dev ** 2)):.3f} mm, max {dev.max():.3f} mm; "
          f"joint error RMS {tq.rms_all:.2e} rad, max {tq.max_all:.2e} rad; measured speed "
          f"on the cruise stretches {cruise.mean:.2f} +- {cruise.std:.2f} mm/s (max dev "
          f"{cruise.max_dev:.2f} mm/s, {cruise.samples} samples); max |tau| "
          + ", ".join(f"{v:.0f}" for v in np.abs(r.tau).max(axis=0)) + " N m")
    assert r.moving.any()
    assert np.sqrt(np.mean(dev ** 2)) < 1.0               # mm
    assert dev.max() < 3.0
    assert cruise.samples > 1000
    assert abs(cruise.mean - r.vel) < 0.01 * r.vel        # 1 % of the speed
    assert cruise.max_dev < 0.1 * r.vel
    assert tr.max_all < 3.0


def test_same_composition_twice_gives_bit_identical_sensor_logs():
    a = run_nao(3.0, pattern=WAVE)
    b = run_nao(3.0, pattern=WAVE)
    print(f"\ndeterminism: {len(a.t)} cycles, q and sensors identical: "
          f"{np.array_equal(a.q, b.q)} / {np.array_equal(a.sensors, b.sensors)}")
    assert a.q.tobytes() == b.q.tobytes()
    assert a.sensors.tobytes() == b.sensors.tobytes()
    assert a.base_pos.tobytes() == b.base_pos.tobytes()
