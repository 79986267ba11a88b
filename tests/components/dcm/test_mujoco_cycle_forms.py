"""The DCM's cycle on MuJoCo (body: mujoco) in its cheaper forms, against the formulas they
replaced, bit for bit over many moving periods: the Position and Hardness values as views of
the actuator values (not gathered copies), the servo targets and stiffness passed straight
when the physics has the DCM's joint order, the FSR totals as the reduction ndarray.sum()
makes, the FSR block scaled in one call when the physics keeps NAOqi's FSR order, the
accelerometer and gyrometer copied as one block when MuJoCo keeps them side by side, every
extra sensor packed from Python floats (the core's feet values), the clamp of the Position and
Hardness values skipped while their bits repeat (and redone after a body reset), and the
ground-truth pose as floats of one tolist() per vector. One DCM on a stepped EC
(rtcf.testing.Harness)."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("mujoco")

from rtcf.testing import Harness  # noqa: E402

from rtcf_components.dcm.component import DCM, _run_of  # noqa: E402
from rtcf_components.dcm.mujoco_body import _adjacent  # noqa: E402

CYCLES = 200


def bits(a) -> bytes:
    return np.ascontiguousarray(a, dtype=np.float64).tobytes()


def test_run_of_is_a_slice_only_for_a_contiguous_increasing_run():
    assert _run_of(np.arange(3, 9)) == slice(3, 9)
    for idx in (np.array([0, 2, 3]), np.array([3, 2, 1]), np.array([1, 1])):
        assert _run_of(idx) is idx
    a = np.arange(20.0) * 1.5
    for idx in (np.arange(4, 11), np.array([5, 2, 9])):
        assert bits(a[_run_of(idx)]) == bits(np.take(a, idx))


def test_adjacent_is_one_view_only_of_a_then_b_in_one_buffer():
    buf = np.arange(12.0)
    both = _adjacent(buf[2:5], buf[5:8])
    assert both is not None and np.shares_memory(both, buf) and both.tolist() == [2, 3, 4, 5, 6, 7]
    assert _adjacent(buf[2:5], buf[6:8]) is None         # a gap
    assert _adjacent(buf[5:8], buf[2:5]) is None         # b before a
    assert _adjacent(buf[2:5], np.arange(3.0)) is None   # another buffer
    assert _adjacent(buf[0:6:2], buf[6:8]) is None       # strided


def test_dcm_cycle_on_mujoco_gives_the_bits_of_the_former_formulas():
    h = Harness(DCM, params={"body": "mujoco", "sim_model": "nao_v5"}, rate=100, name="DCM0")
    try:
        h.activate()
        dcm = h.comp
        body = dcm.robot_body
        sim = body.sim
        d = dcm.devices
        n = d.n_joints
        svc = dcm.service
        hard_keys = [f"{j}/Hardness/Actuator/Value" for j in d.joint_names]
        svc.createAlias("AllHardness", hard_keys)
        # the Hardness ramps per joint (in the DCM's interpolation) and then goes limp
        svc.setAliasTimeSeparate("AllHardness", "ClearAll", 0,
                                 [dcm.now_ms + 300, dcm.now_ms + 1500],
                                 [[0.4 + 0.02 * i, 0.0] for i in range(n)])
        pos_keys = [f"{j}/Position/Actuator/Value" for j in d.joint_names]
        svc.createAlias("AllPosition", pos_keys)
        svc.setAliasTimeSeparate("AllPosition", "ClearAll", 0, [dcm.now_ms + 800],
                                 [[0.3 * math.sin(i)] for i in range(n)])
        servo = slice(int(sim._servo[0]), int(sim._servo[0]) + sim.n)
        assert body._identity                      # nao_v5 has the DCM's joint order
        loaded = 0
        seen = set()
        assert body._imu is not None               # the extra sensors from floats
        for k in range(CYCLES):
            if k == CYCLES - 20:                   # held values: the clamp is not redone,
                body.reset()                       # but a reset forgets the clamped ones
            h.step(1)
            values = dcm.core.values
            pos, hard = np.take(values, dcm._pos), np.take(values, dcm._hard)
            assert bits(dcm.cmd_out.value.data) == bits(pos), k
            assert bits(dcm.hard_out.value.data) == bits(hard), k
            # the servo targets and stiffness the physics got: clamped, then body order
            cmd = np.minimum(np.maximum(pos, body._lower), body._upper)
            stiff = np.minimum(np.fmax(hard, 0.0), 1.0)
            lh, rh = body._hip
            cmd[rh], stiff[rh] = cmd[lh], stiff[lh]
            assert bits(sim.mj_data.ctrl[servo]) == bits(np.take(cmd, body._dcm_of)), k
            assert bits(sim.mj_model.actuator_forcerange[servo, 1]) == \
                bits(sim.model.effort_limit * np.take(stiff, body._dcm_of)), k
            x = body.extra_sensors
            fsr = np.take(sim.sensors.fsr, body._fsr_order) * body._inv_g
            assert bits(x[9:17]) == bits(fsr), k
            assert bits(x[17:18]) == bits([x[9:13].sum()]) == bits([fsr[0:4].sum()]), k
            assert bits(x[20:21]) == bits([fsr[4:8].sum()]), k
            ss = sim.sensors
            assert bits(x[0:9]) == bits(np.concatenate((ss.acc, ss.gyro, ss.torso_rpy))), k
            assert bits(x[18:20]) == bits(ss.lcop) and bits(x[21:23]) == bits(ss.rcop), k
            p, r = dcm.base_pos_out.value.data, dcm.base_rpy_out.value.data
            base = sim.sensors.base_pos
            rpy = sim.sensors.base_rpy
            assert bits([p.x, p.y, p.z]) == bits([float(base[i]) for i in range(3)]), k
            assert bits([r.r, r.p, r.y]) == bits([float(rpy[i]) for i in range(3)]), k
            loaded += x[17] > 0.1
            seen.add(bits(hard))
        assert loaded > CYCLES // 4                # the FSRs carried weight
        assert len(seen) > CYCLES // 2             # and the stiffness changed as it went
    finally:
        h.close()
