"""The DCM component (components/dcm/component.py), its NAO::DCMService servant (service.py)
and DCMProxy (proxy.py), on a stepped EC with a manual clock (rtcf.testing.Harness). No ORB
transport: DCMProxy(service=<servant>) calls the servant object directly.

The pure core (timeline.py) has its own tests (test_timeline.py); these are about the shell:
ports, DCM time, call placement, preProcess/postProcess, the simulated body behind the
Position/Hardness actuators, and the errors as NAO::DCMError.

Call placement, worked out here and checked exactly (1e-9, stepped time):
* A call made by a client *between two ticks* sees getTime(0) = the time of the last
  completed cycle t0, and its commands are applied before the next cycle t0+10. A future
  first command therefore anchors at (t0, value sent at t0): tables A and C are exact. A
  command dated getTime(0) is one cycle late: it becomes a step at t0+10 and the line to the
  next command restarts from (t0+10, value), so table B's first segment is off by up to one
  cycle of slope (exact values: ``_b_between_ticks``); from offset 2000 on it is exact.
* A call made inside a preProcess callback sees getTime(0) = now (the cycle being computed),
  and a command with time <= now takes effect in that same cycle: table B is exact. A
  future first command anchors at (lastCycleTime, lastCycleValue) = (now-10, ...), so table
  A's first segments are stretched by one cycle (exact values: ``_a_in_pre``).
* Between ticks, dating the first command getTime(cycle_ms) (the next cycle) also gives
  table B exactly.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from rtcf import TimedDoubleSeq
from rtcf.corba.idl import stub_module
from rtcf.datatypes import time_of
from rtcf.lifecycle import LifeCycleState
from rtcf.testing import Harness

from rtcf_components.dcm.component import DCM
from rtcf_components.dcm.timeline import DcmError
from rtcf_components.dcm.proxy import DCMError, DCMProxy

NAO = stub_module("NAO")
EPS = 1e-9
RED = "ChestBoard/Led/Red/Actuator/Value"
GREEN = "ChestBoard/Led/Green/Actuator/Value"
BLUE = "ChestBoard/Led/Blue/Actuator/Value"
RGB = [RED, GREEN, BLUE]
FULL = "Device/SubDeviceList/"
CYCLE = 10          # ms, default profile at 100 Hz
TAU = 0.05          # s, servo_tau default
N_JOINTS = 26

B_OFFS = [0, 2000, 3000, 4000, 5000, 6000]
B_VALUES = [[1.0, 0.0, 1.0, 0.0, 1.0, 0.0],
            [1.0, 0.5, 1.0, 0.25, 0.125, 0.0],
            [0.0625, 0.125, 0.25, 0.50, 0.75, 1.0]]

# the ChestLeds tables of test_timeline.py (their rounded figures as exact fractions)
TABLE_A = {1000: (0.25, 0.25 / 3, 0.0625), 2000: (0.5, 0.5 / 3, 0.125),
           3000: (0.75, 0.25, 0.125), 4000: (1.0, 0.25, 0.125), 5000: (0.5, 0.25, 0.125),
           6000: (0.0, 0.25, 0.125), 7000: (0.0, 0.25, 0.125)}
TABLE_B = {0: (1.0, 1.0, 0.0625), 1000: (0.5, 0.75, 0.09375), 2500: (0.5, 0.75, 0.1875),
           3000: (1.0, 1.0, 0.25), 3500: (0.5, 0.625, 0.375), 5000: (1.0, 0.125, 0.75),
           5500: (0.5, 0.0625, 0.875), 7000: (0.0, 0.0, 1.0)}
# table C: Red at the listed offsets, Green/Blue at +5000; plus points read off the same lines
TABLE_C = {3000: (0.3, None, None), 5000: (0.5, 0.5, 0.03125), 7000: (0.7, None, None),
           10000: (1.0, 1.0, 0.0625), 15000: (0.5, 0.75, 0.09375), 20000: (0.0, 0.5, 0.125),
           45000: (0.5, 0.1875, 0.625), 60000: (0.0, 0.0, 1.0), 61000: (0.0, 0.0, 1.0),
           65000: (0.0, 0.0, 1.0)}


# -- helpers -----------------------------------------------------------------------------------

class Rig:
    """A Harness around one DCM, a DCMProxy on its servant, and a record of the actuators
    port by DCM time."""

    def __init__(self, params: dict | None = None, rate: float = 100.0):
        self.h = Harness(DCM, params=params, rate=rate)
        self.comp: DCM = self.h.comp
        self.dcm = DCMProxy(service=self.comp.service)
        self.keys = list(self.comp.service.getActuatorKeys())
        self.samples: dict[str, dict[int, np.ndarray]] = {}

    def activate(self) -> None:
        self.h.activate()
        self.drain()

    def drain(self) -> None:
        for port in ("actuators", "q", "qCommand", "hardness"):
            rec = self.samples.setdefault(port, {})
            for s in self.h.read_all(port):
                rec[int(round(time_of(s) * 1000.0))] = np.array(s.data, dtype=float)

    def step(self, n: int = 1) -> None:
        while n > 0:             # the probes buffer 1000 samples: drain well before that
            k = min(n, 400)
            self.h.step(k)
            self.drain()
            n -= k

    def step_to(self, t: int) -> None:
        """Step until the last completed cycle ran at DCM time t."""
        now = self.comp.now_ms
        assert (t - now) % self.comp.cycle_ms == 0 and t >= now, (t, now)
        self.step((t - now) // self.comp.cycle_ms)
        assert self.comp.now_ms == t

    def port_values(self, t: int, keys: list[str], port: str = "actuators") -> list[float]:
        row = self.samples[port][t]
        return [float(row[self.keys.index(k)]) for k in keys]

    def joint(self, port: str, t: int, j: int) -> float:
        return float(self.samples[port][t][j])

    def close(self) -> None:
        self.h.close()


@pytest.fixture
def rig():
    r = Rig()
    r.activate()
    r.step(4)                       # DCM time 40: a few cycles after the first one
    r.dcm.createAlias(["ChestLeds", RGB])
    yield r
    r.close()


def check_rgb(rig: Rig, t: int, want, label: str) -> None:
    """getValues, getValue (short and full key) and the actuators port at DCM time t."""
    got_srv = rig.dcm.getValues(RGB)
    got_port = rig.port_values(t, RGB)
    for k, (w, a, b) in enumerate(zip(want, got_srv, got_port)):
        if w is None:
            continue
        assert abs(a - w) <= EPS, f"{label}: getValues {RGB[k]} = {a}, want {w}"
        assert abs(b - w) <= EPS, f"{label}: actuators port {RGB[k]} = {b}, want {w}"
    assert rig.dcm.getValue(RED) == got_srv[0]
    assert rig.dcm.getValue(FULL + RED) == got_srv[0]


def run_table(rig: Rig, t0: int, table: dict, expected=None, label: str = "") -> None:
    """Step to t0 + offset for each offset and check the three LEDs (``expected(offset)``
    overrides the table values)."""
    for off in sorted(table):
        rig.step_to(t0 + off)
        want = expected(off) if expected else table[off]
        check_rgb(rig, t0 + off, want, f"{label} offset {off}")


def check_trace(rig: Rig, t0: int, t_end: int, expected) -> None:
    """Every recorded cycle of the actuators port in [t0, t_end] against expected(offset)."""
    n = 0
    for t in range(t0, t_end + 1, rig.comp.cycle_ms):
        got = rig.port_values(t, RGB)
        want = expected(t - t0)
        for k in range(3):
            assert abs(got[k] - want[k]) <= EPS, (
                f"{RGB[k]} at offset {t - t0}: {got[k]} != {want[k]}")
        n += 1
    assert n == (t_end - t0) // rig.comp.cycle_ms + 1


def line(t, t_a, v_a, t_c, v_c):
    return v_a + (v_c - v_a) * (t - t_a) / (t_c - t_a)


def seg(t, times, values, start=None):
    """Piecewise-linear value at t through (times, values); ``start`` replaces the first
    point (the anchor), held after the last."""
    pts = list(zip(times, values))
    if start is not None:
        pts = [start] + pts
    if t <= pts[0][0]:
        return pts[0][1]
    for (ta, va), (tc, vc) in zip(pts, pts[1:]):
        if t <= tc:
            return line(t, ta, va, tc, vc)
    return pts[-1][1]


def seed_time_mixed(dcm: DCMProxy) -> None:
    """The DCM documentation's time-mixed example, verbatim apart from the proxy."""
    dcm.setAlias(["ChestLeds", "ClearAll", "time-mixed",
                  [[[1.0, dcm.getTime(4000)], [0.0, dcm.getTime(6000)]],
                   [[0.25, dcm.getTime(3000)]],
                   [[0.125, dcm.getTime(2000)]]]])


def seed_time_separate(dcm: DCMProxy, first_offset: int = 0) -> int:
    """The DCM documentation's Python time-separate example; returns t."""
    t = dcm.getTime(first_offset)
    dcm.setAlias(["ChestLeds", "ClearAll", "time-separate", 0,
                  [t, t + 2000, t + 3000, t + 4000, t + 5000, t + 6000], B_VALUES])
    return t


def slope_bound(values_per_ms: float, cycles: int = 1) -> float:
    return abs(values_per_ms) * CYCLE * cycles + EPS


# -- the worked ChestLeds tables ----------------------------------------------------------------

def test_table_a_time_mixed_between_ticks_exact(rig):
    t0 = rig.dcm.getTime(0)
    seed_time_mixed(rig.dcm)
    assert rig.comp.core.buffer_size(RED) == 2
    run_table(rig, t0, TABLE_A, label="A")
    check_trace(rig, t0, t0 + 7000, lambda off: (seg(off, [0, 4000, 6000], [0.0, 1.0, 0.0]),
                                                 seg(off, [0, 3000], [0.0, 0.25]),
                                                 seg(off, [0, 2000], [0.0, 0.125])))
    rig.step(100)
    check_rgb(rig, rig.comp.now_ms, TABLE_A[7000], "A held")


def _a_in_pre(off: int) -> tuple:
    """Table A when the call is made in a preProcess callback at t0: the first line of each
    LED starts at (t0 - cycle, 0), one cycle before the call."""
    s = -CYCLE
    return (seg(off, [4000, 6000], [1.0, 0.0], start=(s, 0.0)),
            seg(off, [3000], [0.25], start=(s, 0.0)),
            seg(off, [2000], [0.125], start=(s, 0.0)))


def test_table_a_in_pre_process_is_one_cycle_early(rig):
    """In preProcess the anchor is (lastCycleTime, lastCycleValue) = (t0-10, 0): the values
    before each LED's first command differ from table A by at most one cycle of slope."""
    called = []

    def pre():
        if not called:
            called.append(rig.dcm.getTime(0))
            seed_time_mixed(rig.dcm)
    rig.comp.at_pre_process(pre)
    rig.step(1)
    t0 = called[0]
    assert t0 == rig.comp.now_ms
    run_table(rig, t0, TABLE_A, expected=_a_in_pre, label="A in pre")
    check_trace(rig, t0, t0 + 7000, _a_in_pre)
    for off, want in TABLE_A.items():
        got = _a_in_pre(off)
        bounds = (slope_bound(1 / 4000), slope_bound(0.25 / 3000), slope_bound(0.125 / 2000))
        for g, w, b in zip(got, want, bounds):
            assert abs(g - w) <= b
    # at the first command of each LED the two placements agree again
    assert _a_in_pre(4000)[0] == 1.0 and _a_in_pre(3000)[1] == 0.25


def test_table_b_in_pre_process_exact(rig):
    """The documentation's 't = getTime(0)' inside a preProcess callback: the command dated now is a
    step in that very cycle (offset 0) and the whole table B is exact."""
    called = []

    def pre():
        if not called:
            called.append(seed_time_separate(rig.dcm))
    conn = rig.comp.at_pre_process(pre)
    rig.step(1)
    conn.disconnect()
    t0 = called[0]
    assert t0 == rig.comp.now_ms
    run_table(rig, t0, TABLE_B, label="B in pre")
    check_trace(rig, t0, t0 + 7000, lambda off: tuple(seg(off, B_OFFS, v) for v in B_VALUES))


def _b_between_ticks(off: int) -> tuple:
    """Table B when the call is made between ticks: the command dated t0 = getTime(0) (the
    last cycle) is consumed late at t0+10, and the first line runs from (t0+10, v0)."""
    if off < CYCLE:
        return (0.0, 0.0, 0.0)     # nothing sent yet at t0
    return tuple(seg(off, B_OFFS[1:], vals[1:], start=(CYCLE, vals[0])) for vals in B_VALUES)


def test_table_b_between_ticks_one_cycle_late(rig):
    t0 = seed_time_separate(rig.dcm)
    assert t0 == rig.comp.now_ms
    # nothing happens until the next cycle; there the command dated t0 is a step
    assert rig.dcm.getValues(RGB) == [0.0, 0.0, 0.0]
    rig.step(1)
    check_rgb(rig, t0 + CYCLE, TABLE_B[0], "B first cycle (t0+10)")
    offs = {k: v for k, v in TABLE_B.items() if k > 0}
    run_table(rig, t0, offs, expected=_b_between_ticks, label="B between ticks")
    check_trace(rig, t0, t0 + 7000, _b_between_ticks)
    # within one cycle of slope of the table on the first segment, exact from 2000 on
    for off, want in offs.items():
        got = _b_between_ticks(off)
        for x, (g, w) in enumerate(zip(got, want)):
            if off >= 2000:
                assert abs(g - w) <= EPS
            else:
                per_ms = (B_VALUES[x][1] - B_VALUES[x][0]) / 2000
                assert abs(g - w) <= slope_bound(per_ms)
    assert abs(_b_between_ticks(1000)[0] - 0.5) > 1e-3     # the difference is real


def test_table_b_between_ticks_dated_next_cycle_exact(rig):
    """Between ticks, dating the first command at the next cycle (getTime(cycle)) gives
    table B exactly, with t0 = that next cycle."""
    t0 = seed_time_separate(rig.dcm, first_offset=rig.comp.cycle_ms)
    assert t0 == rig.comp.now_ms + CYCLE
    run_table(rig, t0, TABLE_B, label="B dated next cycle")
    check_trace(rig, t0, t0 + 7000, lambda off: tuple(seg(off, B_OFFS, v) for v in B_VALUES))


@pytest.mark.slow
def test_table_c_cpp_variant_exact(rig):
    times = [rig.dcm.getTime(k * 10000) for k in range(1, 7)]
    t0 = times[0] - 10000
    assert t0 == rig.comp.now_ms
    rig.dcm.setAlias(["ChestLeds", "ClearAll", "time-separate", 0, times, B_VALUES])
    run_table(rig, t0, TABLE_C, label="C")
    # every cycle on the actuators port: straight lines between the commands, then held
    check_trace(rig, t0, t0 + 65000, lambda off: tuple(
        seg(off, [k * 10000 for k in range(1, 7)], v, start=(0, 0.0)) for v in B_VALUES))


# -- DCM time ------------------------------------------------------------------------------------

def test_get_time_int_and_offset(rig):
    now = rig.comp.now_ms
    assert now == 40
    t = rig.dcm.getTime(0)
    assert type(t) is int and t == now
    assert rig.dcm.getTime(4000) == now + 4000
    assert rig.dcm.getTime(-30) == now - 30
    assert type(rig.comp.service.getTime(7)) is int
    rig.step(3)
    assert rig.dcm.getTime(0) == now + 3 * CYCLE
    # DCM time counts from the EC's first cycle, in ms
    assert min(rig.samples["actuators"]) == 0


def test_get_time_before_first_cycle_is_an_error():
    r = Rig()
    try:
        with pytest.raises(NAO.DCMError) as ei:
            r.dcm.getTime(0)
        assert "cycle" in ei.value.reason
        r.activate()
        assert r.dcm.getTime(0) == 0
    finally:
        r.close()


def test_profile_nao_v5_cycle_12ms():
    r = Rig({"profile": "naoV5"}, rate=1000.0 / 12)
    try:
        assert r.comp.cycle_ms == 12
        r.activate()
        r.step(5)
        assert r.dcm.getTime(0) == 60
        assert sorted(r.samples["actuators"])[:3] == [0, 12, 24]
    finally:
        r.close()


def test_default_profile_10ms_and_dcm_time_follows_the_ec():
    r = Rig({"profile": "naoV5"}, rate=100.0)    # mismatched EC: warned, EC wins
    try:
        assert r.comp.cycle_ms == 12
        r.activate()
        r.step(2)
        assert r.dcm.getTime(0) == 20
    finally:
        r.close()
    r = Rig()
    try:
        assert r.comp.cycle_ms == 10
    finally:
        r.close()


def test_get_value_unknown_key(rig):
    with pytest.raises(NAO.DCMError) as ei:
        rig.dcm.getValue("ChestBoard/Led/Purple/Actuator/Value")
    assert "Purple" in ei.value.reason
    with pytest.raises(NAO.DCMError):
        rig.dcm.getValues([RED, "Nope"])
    with pytest.raises(NAO.DCMError):
        rig.comp.service.getValue("")


def test_keys_lists(rig):
    assert len(rig.keys) == len(set(rig.keys)) == rig.comp.devices.n_actuators
    assert RED in rig.keys and "HeadYaw/Position/Actuator/Value" in rig.keys
    sensors = list(rig.comp.service.getSensorKeys())
    assert sensors[0] == "HeadYaw/Position/Sensor/Value" and len(sensors) >= N_JOINTS
    assert len(rig.samples["actuators"][rig.comp.now_ms]) == len(rig.keys)


def test_create_alias_unknown_member_placeholder_through_proxy(rig):
    got = rig.dcm.createAlias(["Mix", [RED, "Bogus/Actuator/Value", FULL + BLUE]])
    assert got == ["Mix", [RED, "", FULL + BLUE]]
    t = rig.dcm.getTime(0)
    rig.dcm.setAlias(["Mix", "ClearAll", "time-separate", 0, [t + 100], [[0.5], [0.7], [0.9]]])
    rig.step_to(t + 100)
    check_rgb(rig, t + 100, (0.5, 0.0, 0.9), "placeholder")


def test_set_single_actuator_and_alias_through_proxy(rig):
    t = rig.dcm.getTime(0)
    rig.dcm.set([FULL + GREEN, "ClearAll", [[0.4, t + 200], [0.2, t + 400, 0]]])
    rig.dcm.set(["ChestLeds", "Merge", [[0.8, t + 100]]])     # an alias name in set()
    rig.step_to(t + 100)
    check_rgb(rig, t + 100, (0.8, 0.8, 0.8), "set t+100")
    rig.step_to(t + 400)
    check_rgb(rig, t + 400, (0.8, 0.2, 0.8), "set t+400")


# -- qRef and the simulated body ------------------------------------------------------------------

def _gain(h: float, dt: float = CYCLE / 1000.0) -> float:
    return 1.0 - math.exp(-h * dt / TAU)


def _set_hardness(rig: Rig, value: float) -> None:
    names = [f"{j}/Hardness/Actuator/Value" for j in rig.comp.devices.joint_names]
    got = rig.dcm.createAlias(["Body/Stiffness", names])
    assert "" not in got[1]
    t = rig.dcm.getTime(0)
    rig.dcm.setAlias(["Body/Stiffness", "ClearAll", "time-separate", 0, [t],
                      [[value]] * len(names)])


def _qref(rig: Rig, values) -> None:
    rig.h.write("qRef", TimedDoubleSeq(data=list(values)))


def test_qref_moves_commands_and_sensors(rig):
    d = rig.comp.devices
    lo, hi = d.joint_limits[:, 0], d.joint_limits[:, 1]
    target = np.clip(np.linspace(-0.3, 0.3, N_JOINTS), lo, hi)   # inside the limits
    target[d.joint_index("RHipYawPitch")] = target[d.joint_index("LHipYawPitch")]
    s0 = rig.samples["q"][rig.comp.now_ms].copy()
    _qref(rig, target)
    rig.step(1)
    t = rig.comp.now_ms
    assert np.allclose(rig.samples["qCommand"][t], target, atol=EPS, rtol=0)
    want = s0 + (target - s0) * _gain(1.0)
    assert np.allclose(rig.samples["q"][t], want, atol=EPS, rtol=0)
    # the Position actuators hold the reference; the sensors converge (first order, tau)
    pos_keys = [f"{j}/Position/Actuator/Value" for j in d.joint_names]
    assert np.allclose(rig.dcm.getValues(pos_keys), target, atol=EPS, rtol=0)
    rig.step(1)
    s1 = rig.samples["q"][t]
    assert np.allclose(rig.samples["q"][t + CYCLE], s1 + (target - s1) * _gain(1.0),
                       atol=EPS, rtol=0)
    rig.step(150)
    assert np.allclose(rig.samples["q"][rig.comp.now_ms], target, atol=1e-9)
    sens_keys = [f"{j}/Position/Sensor/Value" for j in d.joint_names]
    assert np.allclose(rig.dcm.getValues(sens_keys), rig.samples["q"][rig.comp.now_ms],
                       atol=EPS, rtol=0)
    assert np.allclose(rig.samples["hardness"][rig.comp.now_ms], 1.0)


@pytest.mark.parametrize("h", [0.0, 0.5])
def test_qref_scaled_by_hardness(rig, h):
    _set_hardness(rig, h)       # applied at the next cycle, together with qRef
    s0 = rig.samples["q"][rig.comp.now_ms].copy()
    target = np.full(N_JOINTS, 0.2)
    lo, hi = rig.comp.devices.joint_limits.T
    _qref(rig, target)
    rig.step(1)
    t = rig.comp.now_ms
    assert np.allclose(rig.samples["hardness"][t], h, atol=EPS, rtol=0)
    assert np.allclose(rig.samples["qCommand"][t], 0.2, atol=EPS, rtol=0)
    want = s0 + (np.clip(target, lo, hi) - s0) * _gain(h)
    want[14] = want[8]          # RHipYawPitch follows LHipYawPitch
    assert np.allclose(rig.samples["q"][t], want, atol=EPS, rtol=0)
    rig.step(20)
    if h == 0.0:
        assert np.array_equal(rig.samples["q"][rig.comp.now_ms], s0), "limp joints moved"


def test_qref_clamped_to_joint_limits(rig):
    d = rig.comp.devices
    lo, hi = d.joint_limits[:, 0], d.joint_limits[:, 1]
    target = np.where(np.arange(N_JOINTS) % 2 == 0, 5.0, -5.0)
    _qref(rig, target)
    rig.step(200)
    qs = np.array([rig.samples["q"][t] for t in sorted(rig.samples["q"])])
    assert (qs >= lo - EPS).all() and (qs <= hi + EPS).all()
    final = rig.samples["q"][rig.comp.now_ms]
    want = np.clip(target, lo, hi)
    want[d.joint_index("RHipYawPitch")] = want[d.joint_index("LHipYawPitch")]
    assert np.allclose(final, want, atol=1e-8)
    # the DCM itself does not clamp (NAOqi documents none): qCommand is the actuator value sent
    cmd = rig.samples["qCommand"][rig.comp.now_ms]
    assert np.array_equal(cmd, target)
    assert rig.dcm.getValue("HeadYaw/Position/Actuator/Value") == 5.0


def test_hip_yaw_pitch_coupling(rig):
    d = rig.comp.devices
    li, ri = d.joint_index("LHipYawPitch"), d.joint_index("RHipYawPitch")
    target = np.zeros(N_JOINTS)
    target[li], target[ri] = -0.4, 0.6
    _qref(rig, target)
    rig.step(100)
    t = rig.comp.now_ms
    cmd, q = rig.samples["qCommand"][t], rig.samples["q"][t]
    assert cmd[li] == -0.4 and cmd[ri] == 0.6          # both commands stored
    assert abs(q[li] + 0.4) < 1e-6
    for tt, row in rig.samples["q"].items():
        assert row[ri] == row[li], f"R sensor != L sensor at {tt}"
    assert (rig.dcm.getValue("RHipYawPitch/Position/Sensor/Value")
            == rig.dcm.getValue("LHipYawPitch/Position/Sensor/Value"))
    assert rig.dcm.getValue("RHipYawPitch/Position/Actuator/Value") == 0.6


def test_qref_nan_leaves_that_joint(rig):
    _qref(rig, np.full(N_JOINTS, 0.2))
    rig.step(1)
    ref = np.full(N_JOINTS, 0.3)
    ref[0] = ref[5] = np.nan
    _qref(rig, ref)
    rig.step(1)
    cmd = rig.samples["qCommand"][rig.comp.now_ms]
    assert cmd[0] == 0.2 and cmd[5] == 0.2
    assert np.all(np.delete(cmd, [0, 5]) == 0.3)
    _qref(rig, np.full(N_JOINTS, np.nan))         # all NaN: nothing moves
    rig.step(1)
    assert np.array_equal(rig.samples["qCommand"][rig.comp.now_ms], cmd)


@pytest.mark.parametrize("n", [0, 25, 27, 129])
def test_qref_wrong_length_ignored(rig, n):
    _qref(rig, np.full(N_JOINTS, 0.1))
    rig.step(1)
    before = rig.samples["qCommand"][rig.comp.now_ms].copy()
    now = rig.comp.now_ms
    _qref(rig, np.full(n, 0.7))
    rig.step(2)
    assert rig.h.state == LifeCycleState.ACTIVE
    assert rig.comp.now_ms == now + 2 * CYCLE
    assert np.array_equal(rig.samples["qCommand"][rig.comp.now_ms], before)
    _qref(rig, np.full(N_JOINTS, 0.15))          # and the next good sample is taken
    rig.step(1)
    assert np.allclose(rig.samples["qCommand"][rig.comp.now_ms], 0.15)


def test_qref_merges_with_buffered_position_commands(rig):
    """qRef is a Merge command dated now: a future timed command on the same actuator still
    plays after it."""
    key = "HeadYaw/Position/Actuator/Value"
    t = rig.dcm.getTime(0)
    rig.dcm.set([key, "ClearAll", [[1.0, t + 1000]]])
    rig.step(10)
    _qref(rig, np.zeros(N_JOINTS))
    rig.step(1)
    t1 = rig.comp.now_ms
    assert rig.dcm.getValue(key) == 0.0
    rig.step_to(t + 1000)
    assert abs(rig.dcm.getValue(key) - 1.0) <= EPS
    # the line toward 1.0 restarted from the qRef step
    assert abs(rig.samples["qCommand"][t1 + 100][0] - (100 / (t + 1000 - t1))) <= EPS


# -- preProcess / postProcess --------------------------------------------------------------------

def test_pre_post_order_and_what_they_see(rig):
    t = rig.dcm.getTime(0)
    rig.dcm.set([RED, "ClearAll", [[1.0, t + 1000]]])      # Red = (now - t) / 1000
    _qref(rig, np.full(N_JOINTS, 0.3))
    events = []
    sens = "HeadYaw/Position/Sensor/Value"

    def pre():
        events.append(("pre", rig.dcm.getTime(0), rig.dcm.getValue(RED), rig.dcm.getValue(sens)))

    def pre2():
        events.append(("pre2", rig.dcm.getTime(0)))

    def post():
        events.append(("post", rig.dcm.getTime(0), rig.dcm.getValue(RED),
                       rig.dcm.getValue(sens)))
    rig.comp.at_pre_process(pre)
    rig.comp.at_post_process(post)
    rig.comp.at_pre_process(pre2)
    rig.step(3)
    assert [e[0] for e in events] == ["pre", "pre2", "post"] * 3
    for k in range(3):
        pre_e, pre2_e, post_e = events[3 * k: 3 * k + 3]
        now = t + (k + 1) * CYCLE
        assert pre_e[1] == pre2_e[1] == post_e[1] == now          # getTime(0) is now
        # pre sees the previous cycle's values, post this cycle's
        assert abs(pre_e[2] - (now - CYCLE - t) / 1000) <= EPS
        assert abs(post_e[2] - (now - t) / 1000) <= EPS
        assert post_e[2] == rig.port_values(now, [RED])[0]
        assert pre_e[3] == rig.joint("q", now - CYCLE, 0)
        assert post_e[3] == rig.joint("q", now, 0)
        assert pre_e[3] != post_e[3]                              # the sensor moved


def test_set_in_pre_process_same_cycle(rig):
    def pre():
        rig.dcm.set([RED, "ClearAll", [[0.7, rig.dcm.getTime(0)]]])
        rig.dcm.set([GREEN, "ClearAll", [[0.3, rig.dcm.getTime(-25)]]])   # late: a step
        rig.dcm.set([BLUE, "ClearAll", [[0.9, rig.dcm.getTime(CYCLE)]]])  # next cycle
    conn = rig.comp.at_pre_process(pre)
    rig.step(1)
    conn.disconnect()
    now = rig.comp.now_ms
    check_rgb(rig, now, (0.7, 0.3, None), "set in pre")
    # Blue: one cycle of its line from (lastCycleTime, 0) = (now-10, 0) to (now+10, 0.9)
    assert abs(rig.dcm.getValue(BLUE) - 0.45) <= EPS
    rig.step(1)
    check_rgb(rig, now + CYCLE, (0.7, 0.3, 0.9), "after")


def test_raising_callbacks_do_not_stop_the_dcm(rig):
    calls = {"pre": 0, "post": 0, "after": 0}

    def bad_pre():
        calls["pre"] += 1
        raise RuntimeError("boom in pre")

    def bad_post():
        calls["post"] += 1
        raise ZeroDivisionError("boom in post")

    def good():
        calls["after"] += 1
    rig.comp.at_pre_process(bad_pre)
    rig.comp.at_post_process(bad_post)
    rig.comp.at_post_process(good)
    t = rig.dcm.getTime(0)
    rig.dcm.set([RED, "ClearAll", [[1.0, t + 100]]])
    rig.step(10)
    assert calls == {"pre": 10, "post": 10, "after": 10}
    assert rig.h.state == LifeCycleState.ACTIVE
    assert rig.dcm.getTime(0) == t + 100
    check_rgb(rig, t + 100, (1.0, 0.0, 0.0), "after raising callbacks")


def test_connection_disconnect(rig):
    calls = []
    c1 = rig.comp.at_pre_process(lambda: calls.append("pre"))
    c2 = rig.comp.at_post_process(lambda: calls.append("post"))
    rig.step(2)
    assert calls == ["pre", "post"] * 2
    c1.disconnect()
    rig.step(1)
    assert calls[-1] == "post" and calls.count("pre") == 2
    c2.disconnect()
    c2.disconnect()           # twice is harmless
    c1.disconnect()
    n = len(calls)
    rig.step(2)
    assert len(calls) == n


def test_same_callable_registered_twice_disconnects_one(rig):
    calls = []

    def cb():
        calls.append(1)
    c1 = rig.comp.at_pre_process(cb)
    rig.comp.at_pre_process(cb)
    rig.step(1)
    assert len(calls) == 2
    c1.disconnect()
    rig.step(1)
    assert len(calls) == 3


# -- errors: NAO::DCMError with a reason, nothing changed ----------------------------------------

def _fill_red(rig: Rig, n: int) -> None:
    t = rig.dcm.getTime(0)
    rig.dcm.set([RED, "ClearAll", [[0.5, t + 1000 + k] for k in range(n)]])


T = 10_000   # a future DCM time for the bad calls
PROXY_ERRORS = {
    # set: layout and element types
    "set not a list": lambda d: d.set("ChestLeds"),
    "set 2 elements": lambda d: d.set([RED, "Merge"]),
    "set 4 elements": lambda d: d.set([RED, "Merge", [[1.0, T]], 0]),
    "set name not str": lambda d: d.set([7, "Merge", [[1.0, T]]]),
    "set unknown actuator": lambda d: d.set(["ChestBoard/Led/Pink/Actuator/Value", "Merge",
                                             [[1.0, T]]]),
    "set prefix case": lambda d: d.set(["device/subDeviceList/" + RED, "Merge", [[1.0, T]]]),
    "set kind lowercase": lambda d: d.set([RED, "merge", [[1.0, T]]]),
    "set kind unknown": lambda d: d.set([RED, "Replace", [[1.0, T]]]),
    "set kind not str": lambda d: d.set([RED, 0, [[1.0, T]]]),
    "set commands not list": lambda d: d.set([RED, "Merge", 1.0]),
    "set command 1 element": lambda d: d.set([RED, "Merge", [[1.0]]]),
    "set command 4 elements": lambda d: d.set([RED, "Merge", [[1.0, T, 0, 0]]]),
    "set value str": lambda d: d.set([RED, "Merge", [["1.0", T]]]),
    "set value None": lambda d: d.set([RED, "Merge", [[None, T]]]),
    "set time float": lambda d: d.set([RED, "Merge", [[1.0, float(T)]]]),
    "set time NaN": lambda d: d.set([RED, "Merge", [[1.0, float("nan")]]]),
    "set time 2**40": lambda d: d.set([RED, "Merge", [[1.0, 2 ** 40]]]),
    "set importance float": lambda d: d.set([RED, "Merge", [[1.0, T, 0.5]]]),
    "set importance negative": lambda d: d.set([RED, "Merge", [[1.0, T, -1]]]),
    "set second command bad": lambda d: d.set([RED, "Merge", [[1.0, T], [1.0, "x"]]]),
    # setAlias
    "setAlias not a list": lambda d: d.setAlias(None),
    "setAlias mode unknown": lambda d: d.setAlias(["ChestLeds", "Merge", "time-Mixed",
                                                   [[], [], []]]),
    "setAlias mode missing": lambda d: d.setAlias(["ChestLeds", "Merge"]),
    "setAlias mixed 3 elements": lambda d: d.setAlias(["ChestLeds", "Merge", "time-mixed"]),
    "setAlias mixed 5 elements": lambda d: d.setAlias(["ChestLeds", "Merge", "time-mixed",
                                                       [[], [], []], 0]),
    "setAlias separate 5 elements": lambda d: d.setAlias(["ChestLeds", "Merge",
                                                          "time-separate", 0, [T]]),
    "setAlias unknown alias": lambda d: d.setAlias(["NoSuchAlias", "Merge", "time-mixed",
                                                    [[], [], []]]),
    "setAlias actuator as alias": lambda d: d.setAlias([RED, "Merge", "time-mixed", [[]]]),
    "setAlias kind unknown": lambda d: d.setAlias(["ChestLeds", "CLEARALL", "time-mixed",
                                                   [[[1.0, T]], [], []]]),
    "setAlias name not str": lambda d: d.setAlias([1, "Merge", "time-mixed", [[], [], []]]),
    "setAlias mixed 2 members": lambda d: d.setAlias(["ChestLeds", "Merge", "time-mixed",
                                                      [[[1.0, T]], [[1.0, T]]]]),
    "setAlias mixed 4 members": lambda d: d.setAlias(["ChestLeds", "Merge", "time-mixed",
                                                      [[[1.0, T]]] * 4]),
    "setAlias mixed bad command": lambda d: d.setAlias(["ChestLeds", "Merge", "time-mixed",
                                                        [[[1.0, T]], [[1.0]], []]]),
    "setAlias mixed time float": lambda d: d.setAlias(["ChestLeds", "Merge", "time-mixed",
                                                       [[[1.0, T]], [], [[1.0, 1.5]]]]),
    "setAlias separate values short": lambda d: d.setAlias(
        ["ChestLeds", "Merge", "time-separate", 0, [T, T + 10], [[1, 2], [1, 2], [1]]]),
    "setAlias separate values long": lambda d: d.setAlias(
        ["ChestLeds", "Merge", "time-separate", 0, [T], [[1], [1, 2], [1]]]),
    "setAlias separate 2 members": lambda d: d.setAlias(
        ["ChestLeds", "Merge", "time-separate", 0, [T], [[1], [1]]]),
    "setAlias separate importance float": lambda d: d.setAlias(
        ["ChestLeds", "Merge", "time-separate", 0.0, [T], [[1], [1], [1]]]),
    "setAlias separate importance str": lambda d: d.setAlias(
        ["ChestLeds", "Merge", "time-separate", "0", [T], [[1], [1], [1]]]),
    "setAlias separate time float": lambda d: d.setAlias(
        ["ChestLeds", "Merge", "time-separate", 0, [T, T + 0.5], [[1, 1]] * 3]),
    "setAlias separate time NaN": lambda d: d.setAlias(
        ["ChestLeds", "Merge", "time-separate", 0, [float("nan")], [[1]] * 3]),
    "setAlias separate value str": lambda d: d.setAlias(
        ["ChestLeds", "Merge", "time-separate", 0, [T], [[1], ["x"], [1]]]),
    "setAlias separate times not list": lambda d: d.setAlias(
        ["ChestLeds", "Merge", "time-separate", 0, T, [[1]] * 3]),
    # createAlias
    "createAlias not a list": lambda d: d.createAlias("ChestLeds"),
    "createAlias 3 elements": lambda d: d.createAlias(["A", [RED], 0]),
    "createAlias name not str": lambda d: d.createAlias([3, [RED]]),
    "createAlias members not list": lambda d: d.createAlias(["A", RED]),
    "createAlias member not str": lambda d: d.createAlias(["A", [RED, 4]]),
    "createAlias replace with bad member": lambda d: d.createAlias(["ChestLeds", [RED, None]]),
    # getTime
    "getTime float": lambda d: d.getTime(1.5),
    "getTime str": lambda d: d.getTime("10"),
    "getTime bool": lambda d: d.getTime(True),
    "getTime overflow": lambda d: d.getTime(2 ** 32),    # beyond the 2^32-1 DCM time
    # getValue
    "getValue unknown": lambda d: d.getValue("HeadYaw/Position/Actuator"),
}


def _servant_errors():
    TC = NAO.TimedCommand
    ok = [TC(1.0, T, 0)]
    return {
        "set unknown": lambda s: s.set("Bogus", "Merge", ok),
        "set kind": lambda s: s.set(RED, "ClearSome", ok),
        "set kind empty": lambda s: s.set(RED, "", ok),
        "set importance negative": lambda s: s.set(RED, "Merge", [TC(1.0, T, -2)]),
        "set time above 32 bits": lambda s: s.set(RED, "Merge", [TC(1.0, 2 ** 33, 0)]),
        "createAlias name not str": lambda s: s.createAlias(5, [RED]),
        "createAlias empty name": lambda s: s.createAlias("", [RED]),
        "createAlias member not str": lambda s: s.createAlias("A", [RED, 1.0]),
        "mixed unknown alias": lambda s: s.setAliasTimeMixed("Nope", "Merge", [ok]),
        "mixed kind": lambda s: s.setAliasTimeMixed("ChestLeds", "clearAll", [ok, ok, ok]),
        "mixed member count": lambda s: s.setAliasTimeMixed("ChestLeds", "Merge", [ok, ok]),
        "separate member count": lambda s: s.setAliasTimeSeparate(
            "ChestLeds", "Merge", 0, [T], [[1.0]] * 4),
        "separate value count": lambda s: s.setAliasTimeSeparate(
            "ChestLeds", "Merge", 0, [T, T + 1], [[1.0, 2.0], [1.0], [1.0, 2.0]]),
        "separate importance negative": lambda s: s.setAliasTimeSeparate(
            "ChestLeds", "Merge", -1, [T], [[1.0]] * 3),
        "separate kind": lambda s: s.setAliasTimeSeparate(
            "ChestLeds", "Append", 0, [T], [[1.0]] * 3),
        "getValue unknown": lambda s: s.getValue("Bogus"),
        "getValues unknown": lambda s: s.getValues([RED, "Bogus"]),
        "getTime overflow": lambda s: s.getTime(2 ** 32 - 1),  # now + that > 2^32-1
    }


SERVANT_ERRORS = _servant_errors()


def _assert_rejected(rig: Rig, call, arg) -> str:
    core = rig.comp.core
    before = core.snapshot()
    with pytest.raises(NAO.DCMError) as ei:
        call(arg)
    after = core.snapshot()
    assert after == before, "a rejected call changed the DCM"
    reason = ei.value.reason
    assert isinstance(reason, str) and len(reason) > 5, reason
    if arg is rig.dcm:      # NAOqi's proxies raise RuntimeError: so does DCMProxy
        assert isinstance(ei.value, RuntimeError), type(ei.value)
        assert type(ei.value) is DCMError and str(ei.value) == reason
    # the DCM keeps running and the state is still what it was
    rig.step(1)
    assert rig.h.state == LifeCycleState.ACTIVE
    return reason


@pytest.fixture
def busy_rig(rig):
    """ChestLeds with commands in flight, so a wrongly applied call would show."""
    t = rig.dcm.getTime(0)
    rig.dcm.setAlias(["ChestLeds", "ClearAll", "time-separate", 0, [t + 500, t + 900],
                      [[0.5, 0.1], [0.2, 0.6], [0.3, 0.3]]])
    rig.step(2)
    return rig


@pytest.mark.parametrize("case", sorted(PROXY_ERRORS))
def test_error_through_proxy(busy_rig, case):
    _assert_rejected(busy_rig, PROXY_ERRORS[case], busy_rig.dcm)


@pytest.mark.parametrize("case", sorted(SERVANT_ERRORS))
def test_error_through_servant(busy_rig, case):
    _assert_rejected(busy_rig, SERVANT_ERRORS[case], busy_rig.comp.service)


def test_error_reasons_name_the_fault(busy_rig):
    r = _assert_rejected(busy_rig, PROXY_ERRORS["set unknown actuator"], busy_rig.dcm)
    assert "Pink" in r
    r = _assert_rejected(busy_rig, PROXY_ERRORS["set kind lowercase"], busy_rig.dcm)
    assert "merge" in r
    r = _assert_rejected(busy_rig, PROXY_ERRORS["setAlias mode unknown"], busy_rig.dcm)
    assert "time-Mixed" in r
    r = _assert_rejected(busy_rig, PROXY_ERRORS["setAlias mixed 2 members"], busy_rig.dcm)
    assert "3" in r and "2" in r
    r = _assert_rejected(busy_rig, SERVANT_ERRORS["separate value count"],
                         busy_rig.comp.service)
    assert "[5][1]" in r
    r = _assert_rejected(busy_rig, SERVANT_ERRORS["set unknown"], busy_rig.comp.service)
    assert "Bogus" in r


def test_error_buffer_limit_512(rig):
    _fill_red(rig, 512)
    assert rig.comp.core.buffer_size(RED) == 512
    far = rig.dcm.getTime(100000)
    # one more through set, Merge
    r = _assert_rejected(rig, lambda d: d.set([RED, "Merge", [[0.1, far]]]), rig.dcm)
    assert "512" in r
    # setAlias: the Red member would exceed, Green/Blue would not: nothing is applied
    r = _assert_rejected(rig, lambda d: d.setAlias(
        ["ChestLeds", "Merge", "time-separate", 0, [far], [[0.1], [0.2], [0.3]]]), rig.dcm)
    assert "512" in r and rig.comp.core.buffer_size(GREEN) == 0
    # through the servant
    _assert_rejected(rig, lambda s: s.set(RED, "Merge", [NAO.TimedCommand(0.1, far, 0)]),
                     rig.comp.service)
    # 513 in one ClearAll call on an empty actuator
    _assert_rejected(rig, lambda d: d.set([GREEN, "ClearAll",
                                           [[0.1, far + k] for k in range(513)]]), rig.dcm)
    # ClearAll replacing the 512 (minus the consumed ones) is fine
    rig.dcm.set([RED, "ClearAll", [[0.2, far]]])
    assert rig.comp.core.buffer_size(RED) == 1


def test_errors_keep_the_component_active_and_running(busy_rig):
    now = busy_rig.comp.now_ms
    for call in PROXY_ERRORS.values():
        with pytest.raises(NAO.DCMError):
            call(busy_rig.dcm)
    busy_rig.step(5)
    assert busy_rig.h.state == LifeCycleState.ACTIVE
    assert busy_rig.dcm.getTime(0) == now + 5 * CYCLE


def test_nan_value_dropped_through_proxy(rig):
    """NaN values are accepted (not an error): the command is dropped, a member whose
    commands are all NaN is untouched even under ClearAll."""
    t = rig.dcm.getTime(0)
    rig.dcm.setAlias(["ChestLeds", "ClearAll", "time-separate", 0, [t + 100],
                      [[0.5], [0.5], [0.5]]])
    rig.dcm.setAlias(["ChestLeds", "ClearAll", "time-separate", 0, [t + 200],
                      [[0.9], [float("nan")], [0.1]]])
    rig.step_to(t + 200)
    check_rgb(rig, t + 200, (0.9, 0.5, 0.1), "NaN member untouched")


# -- whole reasons, short echoes, client-side garbage -------------------------------------------

def _deep(n: int) -> list:
    out: list = []
    x = out
    for _ in range(n):
        x.append([])
        x = x[0]
    return out


GARBAGE = {   # each must be a DCMError with a reason, raised by the proxy before sending
    "deeply nested commands": (lambda d: d.set([RED, "Merge", _deep(100_000)]), "[2]"),
    "deeply nested value": (lambda d: d.set([RED, "Merge", [[_deep(50_000), 10]]]), "[2][0][0]"),
    "deeply nested alias members": (lambda d: d.createAlias(["A", _deep(100_000)]), "[1][0]"),
    "non-Latin-1 key": (lambda d: d.getValue("ChestBoard/Led/\u7ea2/Actuator/Value"),
                        "Latin-1"),
    "non-Latin-1 actuator in set": (lambda d: d.set(["\u0420\u0443\u043a\u0430", "Merge", []]),
                                    "Latin-1"),
    "non-Latin-1 alias member": (lambda d: d.createAlias(["A", [RED, "\u2603"]]), "[1][1]"),
    "lone surrogate": (lambda d: d.getValue("Head\ud800Yaw"), "Latin-1"),
    "lone surrogate in getValues": (lambda d: d.getValues([RED, "\udfff"]), "[1]"),
    "getValues(None)": (lambda d: d.getValues(None), "getValues: expected a list"),
    "getValues('abc')": (lambda d: d.getValues("abc"), "getValues: expected a list"),
    "getValue(None)": (lambda d: d.getValue(None), "getValue: expected a string"),
    "time above 2^32-1": (lambda d: d.set([RED, "Merge", [[1.0, 2 ** 32]]]), "time"),
    "time far above": (lambda d: d.set([RED, "Merge", [[1.0, 10 ** 30]]]), "time"),
    "separate time above": (lambda d: d.setAlias(["ChestLeds", "Merge", "time-separate", 0,
                                                  [2 ** 40], [[1.0], [1.0], [1.0]]]), "[4][0]"),
    "value 10**400": (lambda d: d.set([RED, "Merge", [[10 ** 400, 100]]]), "finite"),
    "getTime offset 2^63": (lambda d: d.getTime(2 ** 63), "offset"),
}


@pytest.mark.parametrize("case", sorted(GARBAGE))
def test_client_side_garbage_is_a_dcm_error_with_a_reason(busy_rig, case):
    call, fragment = GARBAGE[case]
    reason = _assert_rejected(busy_rig, call, busy_rig.dcm)
    assert fragment in reason, reason
    assert len(reason) < 300, reason


def test_times_up_to_2_32_minus_1_are_valid(rig):
    """DCM time is documented (and accepted by the core) up to 2^32-1: the IDL carries it."""
    top = 2 ** 32 - 1
    rig.dcm.set([RED, "Merge", [[0.5, 2 ** 31 + 10], [0.25, top]]])
    assert rig.comp.core.buffer(RED) == [(2 ** 31 + 10, 0.5), (top, 0.25)]
    rig.dcm.setAlias(["ChestLeds", "ClearAll", "time-separate", 0, [top],
                      [[1.0], [1.0], [1.0]]])
    assert rig.comp.core.buffer(GREEN) == [(top, 1.0)]


WHOLE_REASONS = {   # the reason the client reads keeps the echoed value whole (defect 7)
    "unknown alias": (lambda d: d.setAlias(["NoSuchAlias", "Merge", "time-mixed", [[]]]),
                      "unknown alias 'NoSuchAlias'"),
    "update kind": (lambda d: d.set([RED, "Replace", []]), "got 'Replace'"),
    "empty alias name": (lambda d: d.createAlias(["", []]),
                         "alias name must be a non-empty string, got ''"),
    "unknown actuator": (lambda d: d.set(["Pink", "Merge", []]),
                         "unknown actuator or alias 'Pink'"),
    "unknown key": (lambda d: d.getValue("Nope"), "unknown actuator or sensor key 'Nope'"),
}


@pytest.mark.parametrize("case", sorted(WHOLE_REASONS))
@pytest.mark.parametrize("via", ["proxy", "servant"])
def test_reasons_are_whole(busy_rig, case, via):
    call, text = WHOLE_REASONS[case]
    target = busy_rig.dcm if via == "proxy" else _ServantAsProxy(busy_rig.comp.service)
    reason = _assert_rejected(busy_rig, call, target)
    assert reason.endswith(text) or text in reason, reason


class _ServantAsProxy:
    """The NAOqi-list calls above, sent straight to the servant (no proxy checks)."""

    def __init__(self, s):
        self.s = s

    def set(self, c):
        self.s.set(c[0], c[1], [NAO.TimedCommand(v, t, 0) for v, t in c[2]])

    def createAlias(self, a):
        return self.s.createAlias(a[0], a[1])

    def setAlias(self, c):
        self.s.setAliasTimeMixed(c[0], c[1], c[3])

    def getValue(self, k):
        return self.s.getValue(k)


@pytest.mark.parametrize("via", ["proxy", "servant"])
def test_a_huge_key_is_echoed_short(busy_rig, via):
    key = "K" * 1_000_000
    target = busy_rig.dcm if via == "proxy" else _ServantAsProxy(busy_rig.comp.service)
    for call in (lambda d: d.set([key, "Merge", []]), lambda d: d.getValue(key),
                 lambda d: d.setAlias([key, "Merge", "time-mixed", []])):
        reason = _assert_rejected(busy_rig, call, target)
        assert len(reason) < 250 and "(1000000 chars)" in reason, reason[:300]


def test_reason_helper_keeps_quotes_and_latin1():
    from rtcf_components.dcm.service import reason
    assert reason(KeyError("set: unknown actuator 'X'")) == "set: unknown actuator 'X'"
    assert reason(ValueError("got ''")) == "got ''"
    assert reason(KeyError(3)) == "3"
    assert reason(ValueError("\u2603")) == "\\u2603"


def test_command_positions_from_pre_process_act_in_the_same_cycle(rig):
    """DCM.command_positions (the controller manager's path): dated now, applied this
    cycle right after the timed commands, NaN leaves a joint; the same as a qRef sample."""
    d = rig.comp.devices
    cmd = np.full(N_JOINTS, np.nan)
    cmd[d.joint_index("HeadYaw")] = 0.4
    sent = []

    def pre():
        if not sent:
            rig.comp.command_positions(cmd)
            sent.append(rig.comp.now_ms)
    conn = rig.comp.at_pre_process(pre)
    before = rig.samples["qCommand"][rig.comp.now_ms].copy()
    rig.step(1)
    conn.disconnect()
    t = rig.comp.now_ms
    got = rig.samples["qCommand"][t]
    assert got[d.joint_index("HeadYaw")] == 0.4                      # this very cycle
    others = np.arange(N_JOINTS) != d.joint_index("HeadYaw")
    assert np.array_equal(got[others], before[others])                # NaN: left alone
    rig.step(3)
    assert rig.samples["qCommand"][rig.comp.now_ms][d.joint_index("HeadYaw")] == 0.4  # held
    with pytest.raises(DcmError, match="expected 26 values"):
        rig.comp.command_positions(np.zeros(3))
