"""The NAOqi layer's pure parts: NAO's postures, the move config, ALMemory's values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rtcf_components.kinematics import load_model
from rtcf_components.naoqi.memory import Memory, MemoryError_, check_value
from rtcf_components.naoqi.postures import (JOINTS, POSTURES, PostureError, check_speed,
                                            duration, posture, recognise)
from rtcf_components.naoqi.walkconfig import (DEFAULT, MAX, MIN, MoveConfigError, as_list,
                                              gait, parse)


def test_postures_are_in_the_dcm_body_order_and_within_the_limits():
    kin = load_model("nao_h25_v5")
    assert tuple(kin.joint_names) == JOINTS
    for name, q in POSTURES.items():
        q = np.array(q)
        # NAOqi's Stand puts the knees 0.2 mrad past the model's (documented) limit
        assert np.all(q >= kin.lower - 1e-3) and np.all(q <= kin.upper + 1e-3), name


def test_posture_lookup_and_refusals():
    assert posture("StandInit")[10] == pytest.approx(-0.45)          # LHipPitch
    with pytest.raises(PostureError, match="not offered here.*available: Stand, StandInit"):
        posture("Sit")
    with pytest.raises(PostureError, match="unknown posture 'standinit'"):
        posture("standinit")                                         # NAOqi: case-sensitive
    with pytest.raises(PostureError, match="expected a string"):
        posture(3)
    for bad in (0.0, -0.5, 1.5, math.nan, "fast"):
        with pytest.raises(PostureError, match="speed"):
            check_speed(bad)
    assert check_speed(1) == 1.0


def test_recognise_and_duration():
    q = posture("Crouch")
    assert recognise(q) == "Crouch"
    assert recognise(q + 0.1) == "Crouch"
    assert recognise(q + 0.3) == "Unknown"
    vmax = np.full(26, 2.0)
    a, b = posture("StandInit"), posture("Crouch")
    # the knee moves 1.41 rad: at half speed (1 rad/s) a minimum-jerk move needs 2.64 s
    assert duration(a, b, vmax, 0.5) == pytest.approx(1.41 * 1.875 / 1.0)
    assert duration(a, a, vmax, 0.5) == 0.5                          # the minimum


def test_move_config():
    cfg = parse(None)
    assert cfg == DEFAULT and parse([]) == DEFAULT
    cfg = parse([["MaxStepX", 0.06], ["StepHeight", 0.03]])
    assert cfg["MaxStepX"] == 0.06 and cfg["StepHeight"] == 0.03 and cfg["MaxStepY"] == 0.14
    assert parse({"MaxStepFrequency": 0.5})["MaxStepFrequency"] == 0.5
    for bad, what in (([["MaxStepX", 0.2]], "outside"), ([["MaxStepZ", 0.1]], "unknown name"),
                      ([["MaxStepX", "0.04"]], "expected a number"),
                      ([["MaxStepX", math.nan]], "outside"), ([["TorsoWy", 0.1]], "only 0"),
                      ([("MaxStepX",)], "expected \\[name, value\\]"), (42, "list")):
        with pytest.raises(MoveConfigError, match=what):
            parse(bad)
    g = gait(DEFAULT)
    assert g.forward == 0.04 and g.outside == pytest.approx(0.04)
    assert g.step_time == pytest.approx(0.4) and gait(parse({"MaxStepFrequency": 0.0})).step_time \
        == pytest.approx(0.6)
    assert g.max_velocity[0] == pytest.approx(0.1)
    assert [k for k, _ in as_list(MAX)] == [k for k, _ in as_list(MIN)]


def test_memory_values():
    m = Memory()
    m.insert("MyKey", [1, 2.5, "x", [True]])
    assert m.get("MyKey") == [1, 2.5, "x", [True]] and "MyKey" in m
    for bad in (math.inf, {"a": 1}, None, b"x"):
        with pytest.raises(MemoryError_):
            check_value(bad)
    with pytest.raises(MemoryError_, match="key"):
        m.insert("", 1)
    assert m.keys() == ["MyKey"]
