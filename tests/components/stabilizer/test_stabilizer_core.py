"""StabilizerCore with plain numbers (no physics): pass-through when idle, the fade in and
out, the sign of each feedback (a centre of pressure behind its target turns the sole toe
down, a torso tilted forward is turned back, the heavier-than-wanted foot is shortened), the
fall detection, bad parameters."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rtcf_components.autobalancer.com import load_mass_model
from rtcf_components.kinematics import chain_fk, load_model
from rtcf_components.stabilizer.component import soles_from_mjcf
from rtcf_components.stabilizer.core import (IDLE, ST, SYNC_TO_ST, StabilizerCore,
                                             StabilizerError, StabilizerParams)
from rtcf_components.simulator.core import SIM_DIR

STAND_INIT = np.array([0.0, 0.0, 1.39, 0.34, -1.39, -1.04, 0.0, 0.0, 0.0, 0.0, -0.43, 0.69,
                       -0.34, 0.0, 0.0, 0.0, -0.43, 0.69, -0.34, 0.0, 1.39, -0.34, 1.39, 1.04,
                       0.0, 0.0])
BOTH = {"lleg": True, "rleg": True}
DT = 0.01


@pytest.fixture(scope="module")
def parts():
    kin = load_model("nao_h25_v5")
    return kin, load_mass_model(kin), soles_from_mjcf(SIM_DIR / "nao_v5.xml")


def make(parts, **kw):
    kin, mass, soles = parts
    return StabilizerCore(kin, mass, soles, StabilizerParams(transition_time=0.1, **kw), DT)


def standing_inputs(core, cop=(0.025, 0.0), rp=(0.0, 0.08), weight=None):
    """The reference standing still in StandInit, measured exactly so unless changed; ``cop``
    relative to each sole's centre across (the soles' boxes are 3.4 mm off their frames)."""
    w = (weight if weight is not None else core.mass * 9.81) / 2
    return dict(q_ref=STAND_INIT, zmp_ref_torso=None, ref_contact=BOTH, q_act=STAND_INIT,
                act_rp=rp, force={"lleg": w, "rleg": w},
                cop={"lleg": np.array([cop[0], cop[1] + 0.0034]),
                     "rleg": np.array([cop[0], cop[1] - 0.0034])})


def run(core, n, **inputs):
    for _ in range(n):
        q = core.step(**inputs)
    return q


def test_soles_come_from_the_model(parts):
    _, _, soles = parts
    assert soles["lleg"].x == pytest.approx((-0.055, 0.105))
    assert soles["lleg"].y == pytest.approx((-0.0366, 0.0434))
    assert soles["rleg"].y == pytest.approx((-0.0434, 0.0366))


def test_idle_passes_the_reference_through(parts):
    core = make(parts)
    q = core.step(**standing_inputs(core, cop=(0.09, 0.03), rp=(0.2, 0.3)))
    assert core.mode == IDLE and np.array_equal(q, STAND_INIT)


def test_fade_in_then_out(parts):
    core = make(parts)
    core.start()
    assert core.mode == SYNC_TO_ST
    run(core, 10, **standing_inputs(core))
    assert core.mode == ST
    with pytest.raises(StabilizerError, match="already"):
        core.start()
    core.stop()
    run(core, 10, **standing_inputs(core))
    assert core.mode == IDLE
    with pytest.raises(StabilizerError, match="not started"):
        core.stop()


def test_cop_behind_its_target_turns_the_soles_toe_down(parts):
    """Standing, the measured centres of pressure 3.5 cm behind the soles' centres (where the
    reference wants the ZMP): the ankle damping turns both soles toe down (positive pitch about the sole's y), in
    the commanded ankle pitch as well."""
    core = make(parts, body_gain=(0.0, 0.0), force_gain=0.0, cp_gain=0.0)
    core.start()
    inputs = standing_inputs(core, cop=(-0.01, 0.0))          # the centres are at x 0.025
    q = run(core, 30, **inputs)
    for leg in ("lleg", "rleg"):
        assert core.d_rot[leg][1] > 0.01                     # toe down
        assert abs(core.d_rot[leg][0]) < 1e-3
    kin = parts[0]
    ankle = kin.joint_names.index("LAnklePitch")
    # NAO's ankle pitch is positive toe down too
    assert q[ankle] > STAND_INIT[ankle] + 0.005


def test_torso_tilted_forward_is_turned_back(parts):
    core = make(parts, damping=(1e6, 1e6), force_gain=0.0, cp_gain=0.0, body_gain=(4.0, 4.0))
    core.start()
    run(core, 30, **standing_inputs(core, rp=(0.0, 0.08 + 0.05)))
    assert core.d_body[1] < -0.01                           # the torso pitched back


def test_heavier_left_foot_is_shortened(parts):
    core = make(parts, damping=(1e6, 1e6), body_gain=(0.0, 0.0), cp_gain=0.0)
    core.start()
    inputs = standing_inputs(core)
    w = core.mass * 9.81
    inputs["force"] = {"lleg": 0.7 * w, "rleg": 0.3 * w}
    q = run(core, 30, **inputs)
    assert core.d_z < -1e-4                    # d_z: the left leg's length minus the right's
    kin = parts[0]
    L = chain_fk(kin, "LLeg", q[kin.chain("LLeg").index])
    R = chain_fk(kin, "RLeg", q[kin.chain("RLeg").index])
    assert L[2, 3] > R[2, 3] + 1e-4            # the left sole drawn up: it carries less


def test_a_fall_fades_the_feedback_out(parts):
    core = make(parts, fall_tilt=0.5)
    core.start()
    run(core, 10, **standing_inputs(core))
    run(core, 20, **standing_inputs(core, rp=(0.0, 0.9)))
    assert core.fallen and core.mode == IDLE


@pytest.mark.parametrize("kw, what", [({"cp_gain": -1.0}, "cp_gain"),
                                      ({"damping": (0.0, 1.0)}, "damping"),
                                      ({"transition_time": math.nan}, "transition_time"),
                                      ({"body_gain": (1.0,)}, "body_gain")])
def test_bad_parameters(kw, what):
    with pytest.raises(StabilizerError, match=what):
        StabilizerParams(**kw).check()


def cp_check(parts, tilt, walking=False, **kw):
    """Standing, then the measured torso tilted forward by ``tilt`` for three periods (the
    measured capture point runs ahead); the core after that."""
    core = make(parts, **kw)
    core.start()
    run(core, 15, **standing_inputs(core))
    run(core, 3, walking=walking, **standing_inputs(core, rp=(0.0, 0.08 + tilt)))
    return core


def test_capture_point_check_as_hrpsys_emergency_check_mode_cp(parts):
    """emergency_check "CP": emergency while the measured capture point is outside the soles
    (less cp_check_margin: front, rear, inside, outside), not while walking unless
    estop_while_walking; NO_CHECK never. The soles reach 0.105 m ahead of their frames."""
    assert not cp_check(parts, 0.0, emergency_check="CP").emergency
    far = cp_check(parts, 0.2, emergency_check="CP")
    assert far.act_cp[0] > 0.12 and far.emergency and not far.fallen
    assert not cp_check(parts, 0.2, emergency_check="NO_CHECK").emergency
    assert not cp_check(parts, 0.2, walking=True, emergency_check="CP").emergency
    assert cp_check(parts, 0.2, walking=True, emergency_check="CP",
                    estop_while_walking=True).emergency
    near = cp_check(parts, 0.09, emergency_check="CP")
    assert 0.065 < near.act_cp[0] < 0.1 and not near.emergency
    assert cp_check(parts, 0.09, emergency_check="CP",
                    cp_check_margin=(0.04, 0.0, 0.0, 0.0)).emergency      # front margin
    assert not cp_check(parts, 0.09, emergency_check="CP",
                        cp_check_margin=(0.0, 0.04, 0.04, 0.04)).emergency
    with pytest.raises(StabilizerError, match="emergency_check"):
        make(parts, emergency_check="COP")
    with pytest.raises(StabilizerError, match="cp_check_margin"):
        make(parts, cp_check_margin=(0.0, 0.0, math.nan, 0.0))
