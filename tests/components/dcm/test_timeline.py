"""Tests of the DCM core (components/dcm/timeline.py): NAOqi DCM behaviour.

Worked tables: the ChestLeds examples of the DCM documentation (A: time-mixed; B and C:
time-separate, Python and C++ variants). Exact checks use 1e-9 (stepped time, no clock).
"""

import math
from pathlib import Path

import numpy as np
import pytest

from rtcf_components.dcm.devices import DeviceTable
from rtcf_components.dcm.timeline import MAX_COMMANDS, DcmCore, DcmError

MODEL = Path(__file__).resolve().parents[3] / "model" / "nao_h25_v5.yaml"
RED = "ChestBoard/Led/Red/Actuator/Value"
GREEN = "ChestBoard/Led/Green/Actuator/Value"
BLUE = "ChestBoard/Led/Blue/Actuator/Value"
RGB = (RED, GREEN, BLUE)
FULL = "Device/SubDeviceList/"
HEAD = "HeadYaw/Position/Actuator/Value"
EPS = 1e-9
T0 = 100_000  # an arbitrary DCM time [ms] for the call


@pytest.fixture(scope="module")
def table():
    return DeviceTable.from_model(MODEL)


@pytest.fixture
def core(table):
    """A core whose last cycle ran at T0 (so T0 is the anchor time), ChestLeds created."""
    c = DcmCore(table)
    c.step(T0 - 10)
    c.step(T0)
    c.create_alias(["ChestLeds", list(RGB)])
    return c


def rgb(c):
    return [c.value(k) for k in RGB]


def run(c, start, end, period):
    """Step at start, start+period, ... <= end; return {time: [r, g, b]}."""
    out = {}
    for now in range(start, end + 1, period):
        c.step(now)
        out[now] = rgb(c)
    return out


def pl(knots, t):
    """Piecewise-linear reference through (time, value) knots, held after the last one."""
    if t >= knots[-1][0]:
        return knots[-1][1]
    for (ta, va), (tb, vb) in zip(knots, knots[1:]):
        if ta <= t <= tb:
            return va + (vb - va) * (t - ta) / (tb - ta)
    raise AssertionError("before the first knot")


def check_table(trace, rows):
    for off, expected in rows.items():
        got = trace[T0 + off]
        for name, g, e in zip("RGB", got, expected):
            assert abs(g - e) < EPS, f"offset {off} {name}: got {g}, expected {e}"


# -- table A: time-mixed, ClearAll -----------------------------------------------------------------

TABLE_A = {
    1000: (0.25, 0.25 / 3, 0.0625),
    2000: (0.5, 0.5 / 3, 0.125),
    3000: (0.75, 0.25, 0.125),
    4000: (1.0, 0.25, 0.125),
    5000: (0.5, 0.25, 0.125),
    6000: (0.0, 0.25, 0.125),
    7000: (0.0, 0.25, 0.125),
}
KNOTS_A = (
    [(T0, 0.0), (T0 + 4000, 1.0), (T0 + 6000, 0.0)],
    [(T0, 0.0), (T0 + 3000, 0.25)],
    [(T0, 0.0), (T0 + 2000, 0.125)],
)


def set_a(c, t):
    # The documentation's Python call, with dcm.getTime(x) = t + x
    c.set_alias(["ChestLeds", "ClearAll", "time-mixed",
                 [[[1.0, t + 4000], [0.0, t + 6000]], [[0.25, t + 3000]], [[0.125, t + 2000]]]])


def test_table_a_time_mixed_10ms(core):
    set_a(core, core.get_time(0))
    check_table(run(core, T0 + 10, T0 + 8000, 10), TABLE_A)


@pytest.mark.parametrize("period", [12, 7])
def test_table_a_other_periods_lie_on_the_ideal_lines(core, period):
    # Consumed commands anchor the next segment, so every cycle sits on the ideal line.
    set_a(core, T0)
    trace = run(core, T0 + period, T0 + 8000, period)
    for now, vals in trace.items():
        for knots, v in zip(KNOTS_A, vals):
            assert abs(v - pl(knots, now)) < EPS, (now, vals)
    if period == 12:                                   # 3000 = 250 * 12: the table's row
        assert trace[T0 + 3000] == pytest.approx([0.75, 0.25, 0.125], abs=EPS)


def test_table_a_called_in_preprocess_is_within_one_cycle_of_slope(table):
    # If the call comes before the cycle at t0 (previous cycle t0-10), the line starts at
    # t0-10: one cycle of slope either way is allowed (<= 0.0025 for 1.0/4000 ms at 10 ms).
    c = DcmCore(table)
    c.step(T0 - 10)
    c.create_alias(["ChestLeds", list(RGB)])
    set_a(c, T0)
    trace = run(c, T0, T0 + 8000, 10)
    worst = max(abs(g - e) for off, row in TABLE_A.items()
                for g, e in zip(trace[T0 + off], row))
    assert 0 < worst <= 0.0025 + EPS
    assert trace[T0 + 1000][0] == pytest.approx(1010 / 4010, abs=EPS)


# -- table B: time-separate, Python variant --------------------------------------------------------

TABLE_B = {
    0: (1.0, 1.0, 0.0625),
    1000: (0.5, 0.75, 0.09375),
    2500: (0.5, 0.75, 0.1875),
    3000: (1.0, 1.0, 0.25),
    3500: (0.5, 0.625, 0.375),
    5000: (1.0, 0.125, 0.75),
    5500: (0.5, 0.0625, 0.875),
    7000: (0.0, 0.0, 1.0),
}
B_OFFSETS = [0, 2000, 3000, 4000, 5000, 6000]
B_VALUES = [[1.0, 0.0, 1.0, 0.0, 1.0, 0.0],
            [1.0, 0.5, 1.0, 0.25, 0.125, 0.0],
            [0.0625, 0.125, 0.25, 0.50, 0.75, 1.0]]


def set_b(c, t, offsets=B_OFFSETS):
    c.set_alias(["ChestLeds", "ClearAll", "time-separate", 0,
                 [t + o for o in offsets], B_VALUES])


def preprocess_core(table):
    """The call is made at t0 before the cycle at t0 runs (a preProcess callback),
    so the command dated t = getTime(0) is consumed by the first cycle: an immediate step."""
    c = DcmCore(table)
    c.step(T0 - 10)
    c.create_alias(["ChestLeds", list(RGB)])
    return c


def test_table_b_time_separate_python_10ms(table):
    c = preprocess_core(table)
    set_b(c, T0)
    check_table(run(c, T0, T0 + 8000, 10), TABLE_B)


def test_table_b_12ms_lies_on_the_ideal_lines(table):
    c = preprocess_core(table)
    set_b(c, T0)
    trace = run(c, T0, T0 + 8000, 12)
    for x in range(3):
        knots = [(T0 + o, v) for o, v in zip(B_OFFSETS, B_VALUES[x])]
        for now, vals in trace.items():
            assert abs(vals[x] - pl(knots, now)) < EPS, (x, now)
    assert trace[T0 + 3000] == pytest.approx([1.0, 1.0, 0.25], abs=EPS)   # 3000 = 250 * 12


def test_table_b_dated_now_after_the_cycle_is_late(core):
    # Same call after the cycle at t0 has run: the first command is late: it is
    # applied at the next cycle and the line restarts from (t0+10, 1.0).
    set_b(core, core.get_time(0))
    trace = run(core, T0 + 10, T0 + 3000, 10)
    assert trace[T0 + 10] == pytest.approx([1.0, 1.0, 0.0625], abs=EPS)
    assert trace[T0 + 1000][0] == pytest.approx(1.0 - 990 / 1990, abs=EPS)
    assert trace[T0 + 2500] == pytest.approx([0.5, 0.75, 0.1875], abs=EPS)  # point to point again


# -- table C: time-separate, C++ variant -----------------------------------------------------------

def test_table_c_time_separate_cpp(core):
    set_b(core, T0, offsets=[10000, 20000, 30000, 40000, 50000, 60000])
    trace = run(core, T0 + 10, T0 + 70000, 10)
    for off, red in [(3000, 0.3), (5000, 0.5), (7000, 0.7), (10000, 1.0), (15000, 0.5),
                     (20000, 0.0), (60000, 0.0), (65000, 0.0), (70000, 0.0)]:
        assert abs(trace[T0 + off][0] - red) < EPS, off
    assert abs(trace[T0 + 5000][1] - 0.5) < EPS
    assert abs(trace[T0 + 5000][2] - 0.03125) < EPS
    assert trace[T0 + 70000] == pytest.approx([0.0, 0.0, 1.0], abs=EPS)
    for k in RGB:
        assert core.buffer_size(k) == 0


def test_table_c_at_12ms(core):
    offsets = [10000, 20000, 30000, 40000, 50000, 60000]
    set_b(core, T0, offsets=offsets)
    trace = run(core, T0 + 12, T0 + 61000, 12)
    for x in range(3):
        knots = [(T0, 0.0)] + [(T0 + o, v) for o, v in zip(offsets, B_VALUES[x])]
        for now, vals in trace.items():
            assert abs(vals[x] - pl(knots, now)) < EPS, (x, now)
    # 3000, 15000 and 60000 are multiples of 12: the table's values exactly
    assert trace[T0 + 3000][0] == pytest.approx(0.3, abs=EPS)
    assert trace[T0 + 15000][0] == pytest.approx(0.5, abs=EPS)
    assert trace[T0 + 60000][0] == pytest.approx(0.0, abs=EPS)


# -- basic shape: step, linear, hold ---------------------------------------------------------------

def test_step_linear_hold(core):
    core.set([HEAD, "ClearAll", [[0.2, T0 + 100], [0.6, T0 + 300]]])
    trace = {}
    for now in range(T0 + 10, T0 + 500, 10):
        core.step(now)
        trace[now] = core.value(HEAD)
    assert trace[T0 + 50] == pytest.approx(0.1, abs=EPS)
    assert trace[T0 + 200] == pytest.approx(0.4, abs=EPS)
    assert trace[T0 + 300] == pytest.approx(0.6, abs=EPS)
    assert trace[T0 + 490] == pytest.approx(0.6, abs=EPS)
    assert core.buffer_size(HEAD) == 0
    assert core.last_command(HEAD) == (T0 + 300, 0.6)


def test_commands_before_the_first_cycle_start_from_the_current_value(table):
    c = DcmCore(table)
    c.set([HEAD, "Merge", [[1.0, 1000]]])
    c.step(0)
    assert c.value(HEAD) == 0.0
    c.step(500)
    assert c.value(HEAD) == pytest.approx(0.5, abs=EPS)
    assert c.last_cycle_time == 500 and c.get_time(20) == 520


def test_first_step_consumes_past_commands_as_late(table):
    c = DcmCore(table)
    c.set([HEAD, "Merge", [[0.4, -50], [1.0, 1000]]])
    c.step(0)
    assert c.value(HEAD) == pytest.approx(0.4, abs=EPS)
    c.step(500)
    assert c.value(HEAD) == pytest.approx(0.7, abs=EPS)


# -- update kinds ----------------------------------------------------------------------------------

def test_merge_equal_time_newest_wins(core):
    core.set([HEAD, "Merge", [[0.2, T0 + 100], [0.9, T0 + 200]]])
    core.set([HEAD, "Merge", [[0.7, T0 + 100]]])
    assert core.buffer(HEAD) == [(T0 + 100, 0.2), (T0 + 100, 0.7), (T0 + 200, 0.9)]
    core.step(T0 + 100)
    assert core.value(HEAD) == pytest.approx(0.7, abs=EPS)
    assert core.buffer_size(HEAD) == 1


def test_merge_equal_time_within_one_list_keeps_list_order(core):
    core.set([HEAD, "Merge", [[0.3, T0 + 50], [0.1, T0 + 20], [0.4, T0 + 50]]])
    assert core.buffer(HEAD) == [(T0 + 20, 0.1), (T0 + 50, 0.3), (T0 + 50, 0.4)]
    core.step(T0 + 60)
    assert core.value(HEAD) == 0.4


def test_merge_keeps_existing(core):
    core.set([HEAD, "Merge", [[0.5, T0 + 300]]])
    core.set([HEAD, "Merge", [[0.1, T0 + 100], [0.9, T0 + 500]]])
    assert [t for t, _ in core.buffer(HEAD)] == [T0 + 100, T0 + 300, T0 + 500]


def test_merge_inserting_an_earlier_head_restarts_from_the_value_being_sent(core):
    core.set([HEAD, "Merge", [[1.0, T0 + 1000]]])
    core.step(T0 + 500)
    assert core.value(HEAD) == pytest.approx(0.5, abs=EPS)
    core.set([HEAD, "Merge", [[0.0, T0 + 600]]])       # new head: anchor (T0+500, 0.5)
    core.step(T0 + 550)
    assert core.value(HEAD) == pytest.approx(0.25, abs=EPS)
    core.step(T0 + 600)
    assert core.value(HEAD) == 0.0
    core.step(T0 + 800)                                # then point to point to 1.0 @ +1000
    assert core.value(HEAD) == pytest.approx(0.5, abs=EPS)


def test_clear_all_replaces(core):
    core.set([HEAD, "Merge", [[0.5, T0 + 300], [0.6, T0 + 400]]])
    core.set([HEAD, "ClearAll", [[0.1, T0 + 100]]])
    assert core.buffer(HEAD) == [(T0 + 100, 0.1)]


def test_clear_all_empty_list_empties_and_holds(core):
    core.set([HEAD, "Merge", [[1.0, T0 + 1000]]])
    core.step(T0 + 400)
    core.set([HEAD, "ClearAll", []])
    assert core.buffer_size(HEAD) == 0
    for now in (T0 + 410, T0 + 2000):
        core.step(now)
        assert core.value(HEAD) == pytest.approx(0.4, abs=EPS)


def test_clear_after_deletes_greater_or_equal(core):
    core.set([HEAD, "Merge", [[0.1, T0 + 100], [0.2, T0 + 200], [0.3, T0 + 300]]])
    core.set([HEAD, "ClearAfter", [[0.25, T0 + 250], [0.22, T0 + 200]]])
    assert core.buffer(HEAD) == [(T0 + 100, 0.1), (T0 + 200, 0.22), (T0 + 250, 0.25)]


def test_clear_before_deletes_less_or_equal(core):
    core.set([HEAD, "Merge", [[0.1, T0 + 100], [0.2, T0 + 200], [0.3, T0 + 300]]])
    core.set([HEAD, "ClearBefore", [[0.22, T0 + 200], [0.15, T0 + 150]]])
    assert core.buffer(HEAD) == [(T0 + 150, 0.15), (T0 + 200, 0.22), (T0 + 300, 0.3)]


@pytest.mark.parametrize("kind", ["Merge", "ClearAfter", "ClearBefore"])
def test_empty_list_deletes_nothing_except_clear_all(core, kind):
    core.set([HEAD, "Merge", [[0.1, T0 + 100]]])
    core.set([HEAD, kind, []])
    assert core.buffer_size(HEAD) == 1


def test_set_alias_kind_applies_per_member(core):
    core.set(["ChestLeds", "Merge", [[0.5, T0 + 500]]])        # set() with an alias name
    assert [core.buffer_size(k) for k in RGB] == [1, 1, 1]
    core.set_alias(["ChestLeds", "ClearAfter", "time-mixed",
                    [[[0.9, T0 + 400]], [[0.9, T0 + 600]], []]])
    assert core.buffer(RED) == [(T0 + 400, 0.9)]
    assert core.buffer(GREEN) == [(T0 + 500, 0.5), (T0 + 600, 0.9)]
    assert core.buffer(BLUE) == [(T0 + 500, 0.5)]


# -- late commands ---------------------------------------------------------------------------------

def test_late_command_is_an_instant_step_and_line_restarts_from_now(core):
    core.step(T0 + 1000)
    core.set([RED, "Merge", [[0.5, T0 + 500], [1.0, T0 + 2010]]])
    core.step(T0 + 1010)
    assert core.value(RED) == 0.5
    core.step(T0 + 1510)
    assert core.value(RED) == pytest.approx(0.75, abs=EPS)


def test_command_dated_now_set_before_the_cycle_applies_in_that_cycle(core):
    core.set([RED, "Merge", [[0.8, T0 + 10]]])
    core.step(T0 + 10)
    assert core.value(RED) == 0.8


def test_several_commands_between_cycles_only_last_is_sent(core):
    core.set([RED, "Merge", [[0.1, T0 + 2], [0.9, T0 + 5], [0.3, T0 + 7], [0.0, T0 + 107]]])
    core.step(T0 + 10)
    assert core.value(RED) == pytest.approx(0.3 - 0.3 * 3 / 100, abs=EPS)
    assert core.last_command(RED) == (T0 + 7, 0.3)


# -- NaN ------------------------------------------------------------------------------------------

def test_single_nan_is_dropped(core):
    core.set([RED, "Merge", [[math.nan, T0 + 100], [0.5, T0 + 200]]])
    assert core.buffer(RED) == [(T0 + 200, 0.5)]


def test_all_nan_member_untouched_even_under_clear_all(core):
    for k in RGB:
        core.set([k, "Merge", [[0.5, T0 + 500]]])
    nan = float("nan")
    core.set_alias(["ChestLeds", "ClearAll", "time-separate", 0, [T0 + 100, T0 + 200],
                    [[nan, nan], [0.1, nan], [0.2, 0.3]]])
    assert core.buffer(RED) == [(T0 + 500, 0.5)]
    assert core.buffer(GREEN) == [(T0 + 100, 0.1)]
    assert core.buffer(BLUE) == [(T0 + 100, 0.2), (T0 + 200, 0.3)]
    core.set_alias(["ChestLeds", "ClearAll", "time-mixed",
                    [[], [[np.float64("nan"), T0 + 100]], [[nan, T0 + 1], [nan, T0 + 2]]]])
    assert core.buffer(RED) == []                 # an empty list is not "all NaN"
    assert core.buffer(GREEN) == [(T0 + 100, 0.1)]
    assert core.buffer(BLUE) == [(T0 + 100, 0.2), (T0 + 200, 0.3)]


def test_nan_time_is_an_error(core):
    before = core.snapshot()
    for t in (float("nan"), np.float64("nan")):
        with pytest.raises(DcmError, match="NaN"):
            core.set([RED, "Merge", [[0.5, t]]])
        with pytest.raises(DcmError, match=r"\[4\]\[1\]: time is NaN"):
            core.set_alias(["ChestLeds", "Merge", "time-separate", 0, [T0, t],
                            [[0, 0], [0, 0], [0, 0]]])
    assert core.snapshot() == before


# -- errors: each is rejected and changes nothing -------------------------------------

GOOD_MIXED = [[[0.5, T0 + 100]], [[0.5, T0 + 100]], [[0.5, T0 + 100]]]
GOOD_SEP = [[0.5], [0.5], [0.5]]

BAD_SET = [
    ("not a list", "expected"),
    ([RED, "Merge"], "expected"),
    ([RED, "Merge", [], 0], "expected"),
    ([3, "Merge", []], r"\[0\]: name must be a string"),
    (["Nope/Actuator/Value", "Merge", []], "unknown actuator or alias 'Nope"),
    (["device/SubDeviceList/" + RED, "Merge", []], "unknown"),   # case-sensitive prefix
    ([FULL + FULL + RED, "Merge", []], "unknown"),               # prefix stripped once
    ([RED, "merge", []], r"\[1\]: update kind"),
    ([RED, "Clear", []], "update kind"),
    ([RED, None, []], "update kind"),
    ([RED, "Merge", [0.5, T0]], r"\[2\]\[0\]: expected \[value, time"),
    ([RED, "Merge", 0.5], r"\[2\]: expected a list"),
    ([RED, "Merge", [[0.5]]], r"\[2\]\[0\]"),
    ([RED, "Merge", [[0.5, T0, 0, 0]]], r"\[2\]\[0\]"),
    ([RED, "Merge", [["0.5", T0]]], r"\[2\]\[0\]\[0\]: value must be a number"),
    ([RED, "Merge", [[True, T0]]], r"\[2\]\[0\]\[0\]: value"),
    ([RED, "Merge", [[math.inf, T0]]], "finite"),
    ([RED, "Merge", [[0.5, float(T0)]]], r"\[2\]\[0\]\[1\]: time must be an int"),
    ([RED, "Merge", [[0.5, True]]], "time must be an int"),
    ([RED, "Merge", [[0.5, "100"]]], "time must be an int"),
    ([RED, "Merge", [[0.5, 2 ** 32]]], "32-bit"),
    ([RED, "Merge", [[0.5, T0, 1.0]]], r"\[2\]\[0\]\[2\]: importance"),
    ([RED, "Merge", [[0.5, T0, -1]]], "importance"),
    ([RED, "Merge", [[0.5, T0, False]]], "importance"),
    ([RED, "Merge", [[0.5, T0], [0.5, T0 + 10.5]]], r"\[2\]\[1\]\[1\]"),
]


@pytest.mark.parametrize("cmd,msg", BAD_SET)
def test_set_errors_change_nothing(core, cmd, msg):
    core.set([RED, "Merge", [[0.3, T0 + 300]]])
    before = core.snapshot()
    with pytest.raises(DcmError, match=msg) as ei:
        core.set(cmd)
    assert str(ei.value).startswith("set: ")
    assert core.snapshot() == before


BAD_ALIAS = [
    ("ChestLeds", "expected"),
    (["ChestLeds", "Merge"], "expected"),
    ([1, "Merge", "time-mixed", GOOD_MIXED], r"\[0\]: alias name"),
    (["Nope", "Merge", "time-mixed", GOOD_MIXED], "unknown alias 'Nope'"),
    ([RED, "Merge", "time-mixed", GOOD_MIXED], "unknown alias"),  # an actuator is no alias
    (["ChestLeds", "Replace", "time-mixed", GOOD_MIXED], r"\[1\]: update kind"),
    (["ChestLeds", "Merge", "time-Mixed", GOOD_MIXED], r"\[2\]: mode"),
    (["ChestLeds", "Merge", 0, GOOD_MIXED], r"\[2\]: mode"),
    (["ChestLeds", "Merge", "time-mixed", GOOD_MIXED, 0], "time-mixed expects 4 elements, got 5"),
    (["ChestLeds", "Merge", "time-separate", 0, [T0]], "time-separate expects 6 elements, got 5"),
    (["ChestLeds", "Merge", "time-mixed", GOOD_MIXED[:2]],
     r"\[3\] has 2 command lists, expected 3"),
    (["ChestLeds", "Merge", "time-mixed", 5], r"\[3\]: expected one command list"),
    (["ChestLeds", "Merge", "time-mixed", [[[0.5, T0]], [[0.5, T0]], [[0.5, 1.5]]]],
     r"\[3\]\[2\]\[0\]\[1\]: time must be an int"),
    (["ChestLeds", "Merge", "time-mixed", [[[0.5, T0]], [[0.5, T0]], [[None, T0]]]],
     r"\[3\]\[2\]\[0\]\[0\]: value"),
    (["ChestLeds", "Merge", "time-mixed", [[[0.5, T0]], [(0.5,)], []]], r"\[3\]\[1\]\[0\]"),
    (["ChestLeds", "Merge", "time-separate", "0", [T0], GOOD_SEP], r"\[3\]: importance"),
    (["ChestLeds", "Merge", "time-separate", 0.0, [T0], GOOD_SEP], r"\[3\]: importance"),
    (["ChestLeds", "Merge", "time-separate", 0, T0, GOOD_SEP], r"\[4\]: expected a list"),
    (["ChestLeds", "Merge", "time-separate", 0, [T0 + 0.0], GOOD_SEP], r"\[4\]\[0\]: time"),
    (["ChestLeds", "Merge", "time-separate", 0, [T0], GOOD_SEP[:2]],
     r"\[5\] has 2 value lists, expected 3"),
    (["ChestLeds", "Merge", "time-separate", 0, [T0], [[0.5], 0.5, [0.5]]],
     r"\[5\]\[1\]: expected a list"),
    (["ChestLeds", "Merge", "time-separate", 0, [T0], [[0.5], [0.5], ["x"]]],
     r"\[5\]\[2\]\[0\]: value"),
]


@pytest.mark.parametrize("cmd,msg", BAD_ALIAS)
def test_set_alias_errors_change_nothing(core, cmd, msg):
    core.set([RED, "Merge", [[0.3, T0 + 300]]])
    before = core.snapshot()
    with pytest.raises(DcmError, match=msg) as ei:
        core.set_alias(cmd)
    assert str(ei.value).startswith("setAlias: ")
    assert core.snapshot() == before


def test_time_separate_value_count_message(core):
    before = core.snapshot()
    vals = [list(v) for v in B_VALUES]
    vals[1] = vals[1][:5]
    with pytest.raises(DcmError) as ei:
        core.set_alias(["ChestLeds", "Merge", "time-separate", 0,
                        [T0 + o for o in B_OFFSETS], vals])
    assert str(ei.value) == "setAlias: [5][1] has 5 values, expected 6 (one per time)"
    assert core.snapshot() == before


def test_error_in_a_later_member_leaves_earlier_members_unchanged(core):
    before = core.snapshot()
    with pytest.raises(DcmError):
        core.set_alias(["ChestLeds", "ClearAll", "time-mixed",
                        [[[0.5, T0 + 100]], [[0.5, T0 + 100]], [[0.5, T0 + 100, "high"]]]])
    assert core.snapshot() == before


def test_create_alias_errors(core):
    before = core.snapshot()
    for bad in ["x", ["A"], ["A", [RED], 1], [1, [RED]], ["", [RED]], ["A", RED],
                ["A", [RED, 3]], ["A", [None]]]:
        with pytest.raises(DcmError, match="createAlias"):
            core.create_alias(bad)
    assert core.snapshot() == before


def test_get_time_and_step_argument_errors(core, table):
    with pytest.raises(DcmError, match="getTime"):
        core.get_time(1.0)
    with pytest.raises(DcmError, match="getTime"):
        core.get_time(True)
    with pytest.raises(DcmError, match="no DCM cycle"):
        DcmCore(table).get_time(0)
    assert core.get_time(np.int32(4000)) == T0 + 4000
    assert isinstance(core.get_time(np.int64(5)), int)
    before = core.snapshot()
    with pytest.raises(DcmError, match="backwards"):
        core.step(T0 - 1)
    with pytest.raises(DcmError, match="int"):
        core.step(T0 + 10.0)
    assert core.snapshot() == before


# -- the 512 limit (NAOqi 2.x) ---------------------------------------------------------------------

def fill(n, start=T0 + 1):
    return [[0.5, start + k] for k in range(n)]


def test_limit_511_plus_1_ok(core):
    core.set([RED, "Merge", fill(511)])
    core.set([RED, "Merge", fill(1, start=T0 + 5000)])
    assert core.buffer_size(RED) == MAX_COMMANDS == 512


def test_limit_512_plus_1_rejected(core):
    core.set([RED, "Merge", fill(512)])
    before = core.snapshot()
    with pytest.raises(DcmError, match="would hold 513 commands, limit 512"):
        core.set([RED, "Merge", fill(1, start=T0 + 5000)])
    with pytest.raises(DcmError, match="513"):
        core.set_alias(["ChestLeds", "Merge", "time-separate", 0, [T0 + 9000],
                        [[0.1], [0.1], [0.1]]])
    assert core.snapshot() == before
    core.set([RED, "ClearAll", fill(512)])          # replacing is fine
    core.set([RED, "ClearAfter", fill(3, start=T0 + 510)])
    assert core.buffer_size(RED) == 512


def test_limit_counts_repeated_alias_members(core):
    core.create_alias(["Twice", [RED, RED]])
    before = core.snapshot()
    with pytest.raises(DcmError, match=r"\[3\]\[1\].*would hold 600"):
        core.set_alias(["Twice", "Merge", "time-mixed", [fill(300), fill(300)]])
    assert core.snapshot() == before
    core.set(["Twice", "Merge", fill(256)])
    assert core.buffer_size(RED) == 512


def test_limit_is_configurable(table):
    c = DcmCore(table, max_commands=2)
    c.set([RED, "Merge", fill(2)])
    with pytest.raises(DcmError, match="limit 2"):
        c.set([RED, "Merge", fill(1)])


# -- names, aliases, argument types ----------------------------------------------------------------

def test_short_and_full_keys_are_the_same_actuator(core):
    core.set([FULL + HEAD, "Merge", [[0.3, T0 + 10]]])
    assert core.buffer_size(HEAD) == 1 and core.buffer_size(FULL + HEAD) == 1
    core.step(T0 + 10)
    assert core.value(HEAD) == core.value(FULL + HEAD) == 0.3
    with pytest.raises(KeyError):
        core.value("headyaw/Position/Actuator/Value")


def test_create_alias_returns_checked_copy_with_placeholders(core):
    arg = ["Mix", [RED, "Bogus/Actuator/Value", FULL + BLUE, ""]]
    out = core.create_alias(arg)
    assert out == ["Mix", [RED, "", FULL + BLUE, ""]]
    assert out is not arg and out[1] is not arg[1]
    assert arg[1][1] == "Bogus/Actuator/Value"               # the argument is not modified
    assert core.alias("Mix") == [RED, "", BLUE, ""]
    core.set_alias(["Mix", "Merge", "time-mixed",
                    [[[0.1, T0 + 10]], [[0.2, T0 + 10]], [[0.3, T0 + 10]], []]])
    core.step(T0 + 10)
    assert rgb(core) == [0.1, 0.0, 0.3]
    # a placeholder's commands are ignored but still validated
    with pytest.raises(DcmError, match=r"\[3\]\[1\]\[0\]\[1\]"):
        core.set_alias(["Mix", "Merge", "time-mixed", [[], [[0.2, 1.0]], [], []]])


def test_create_alias_replaces(core):
    core.create_alias(["ChestLeds", [BLUE]])
    core.set_alias(["ChestLeds", "Merge", "time-separate", 0, [T0 + 10], [[0.7]]])
    core.step(T0 + 10)
    assert rgb(core) == [0.0, 0.0, 0.7]


def test_tuples_and_numpy_scalars_are_accepted(core):
    core.set_alias(("ChestLeds", "ClearAll", "time-mixed",
                    ([(np.float32(0.5), np.int64(T0 + 10), np.int32(3))],
                     ((np.int64(1), T0 + 10),), [])))
    core.set_alias(["ChestLeds", "Merge", "time-separate", np.int8(0),
                    np.array([T0 + 20]), [np.array([0.25]), [0.5], (np.float64(0.75),)]])
    core.step(T0 + 10)
    assert rgb(core) == [0.5, 1.0, 0.375]             # blue: halfway to 0.75 @ +20
    core.step(T0 + 20)
    assert rgb(core) == [0.25, 0.5, 0.75]
    assert isinstance(core.buffer(RED), list)


def test_importance_is_ignored(core):
    core.set([RED, "Merge", [[0.5, T0 + 10, 0], [0.6, T0 + 20, 7]]])
    core.set([GREEN, "Merge", [[0.5, T0 + 10], [0.6, T0 + 20]]])
    core.step(T0 + 10)
    core.step(T0 + 20)
    assert core.value(RED) == core.value(GREEN) == 0.6


def test_actuator_name_wins_over_alias_of_same_name(core):
    core.create_alias([RED, [BLUE]])
    core.set([RED, "Merge", [[0.5, T0 + 10]]])
    assert core.buffer_size(RED) == 1 and core.buffer_size(BLUE) == 0
    core.set_alias([RED, "Merge", "time-mixed", [[[0.5, T0 + 10]]]])
    assert core.buffer_size(BLUE) == 1


def test_non_interpolating_actuator_steps():
    t = DeviceTable([("J", "C", -1.0, 1.0)], devices=[("Us/Actuator/Value", 0.0, 1.0, False)])
    c = DcmCore(t)
    c.step(0)
    c.set(["Us/Actuator/Value", "Merge", [[1.0, 100], [0.2, 200]]])
    for now in range(10, 100, 10):
        c.step(now)
        assert c.value("Us/Actuator/Value") == 0.0
    c.step(100)
    assert c.value("Us/Actuator/Value") == 1.0
    c.step(190)
    assert c.value("Us/Actuator/Value") == 1.0
    c.step(205)
    assert c.value("Us/Actuator/Value") == 0.2
    assert c.buffer_size("Us/Actuator/Value") == 0


# -- property checks -------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(5))
def test_output_between_two_commands_stays_within_their_values(table, seed):
    rng = np.random.default_rng(seed)
    c = DcmCore(table)
    c.step(0)
    keys = table.actuator_keys[:40]
    plans = {}
    for k in keys:
        times = np.sort(rng.choice(np.arange(5, 3000), size=int(rng.integers(1, 12)),
                                   replace=False))
        vals = rng.uniform(-1, 1, size=len(times))
        plans[k] = list(zip(times.tolist(), vals.tolist()))
        c.set([k, "Merge", [[v, t] for t, v in plans[k]]])
    period = int(rng.integers(5, 17))
    prev_out = {k: 0.0 for k in keys}
    for now in range(period, 3200, period):
        c.step(now)
        for k in keys:
            v = c.value(k)
            past = [(t, x) for t, x in plans[k] if t <= now]
            fut = [(t, x) for t, x in plans[k] if t > now]
            if past and fut:
                lo, hi = sorted((past[-1][1], fut[0][1]))
                # between the last consumed and the next command (a first segment starts
                # from the previous output instead)
                assert lo - EPS <= v <= hi + EPS
            elif not fut:
                assert v == past[-1][1]                     # held after the last command
            else:
                lo, hi = sorted((prev_out[k], fut[0][1]))
                assert lo - EPS <= v <= hi + EPS
            prev_out[k] = v


@pytest.mark.parametrize("seed", range(3))
def test_split_sets_equal_one_set(table, seed):
    # Merging in several calls or one gives the same trajectory (sorting is stable).
    rng = np.random.default_rng(100 + seed)
    cmds = [[float(v), int(t)] for v, t in zip(rng.uniform(0, 1, 30), rng.integers(1, 2000, 30))]
    a, b = DcmCore(table), DcmCore(table)
    a.step(0), b.step(0)
    a.set([RED, "Merge", cmds])
    for chunk in (cmds[:10], cmds[10:25], cmds[25:]):
        b.set([RED, "Merge", chunk])
    assert a.buffer(RED) == b.buffer(RED)
    for now in range(10, 2100, 10):
        assert b.step(now) is b.values                 # the output array is reused
        a.step(now)
        assert a.value(RED) == b.value(RED)


def test_backlog_of_many_due_commands_in_one_cycle(core):
    # More due commands than the vectorised passes handle: the row-by-row fallback.
    core.set([RED, "Merge", [[0.01 * k, T0 + 1 + k // 2] for k in range(40)] + [[1.0, T0 + 1000]]])
    core.set([GREEN, "Merge", [[0.3, T0 + 5], [0.0, T0 + 1000]]])        # one due
    core.set([BLUE, "Merge", [[0.5, T0 + 3], [0.6, T0 + 4], [0.7, T0 + 20]]])  # two due
    core.step(T0 + 10)
    assert core.last_command(RED) == (T0 + 10, 0.19)      # 19 = the newest of the two at +10
    assert core.buffer_size(RED) == 21
    assert core.value(RED) == pytest.approx(0.19, abs=EPS)  # next head +10: (0.2 @ +11)
    assert core.value(GREEN) == pytest.approx(0.3 - 0.3 * 5 / 995, abs=EPS)
    assert core.value(BLUE) == pytest.approx(0.6 + 0.1 * 6 / 16, abs=EPS)
    core.step(T0 + 100)
    assert core.buffer_size(RED) == 1 and core.last_command(RED) == (T0 + 20, 0.39)
    assert core.value(RED) == pytest.approx(0.39 + 0.61 * 80 / 980, abs=EPS)
    core.step(T0 + 1000)
    assert rgb(core) == [1.0, 0.0, 0.7]


def test_reset_sets_held_values_and_keeps_aliases(core, table):
    core.set(["ChestLeds", "Merge", [[0.5, T0 + 100]]])
    core.step(T0 + 50)
    init = np.linspace(0, 1, table.n_actuators)
    core.reset(init)
    assert all(core.buffer_size(k) == 0 and core.last_command(k) is None for k in RGB)
    core.step(T0 + 200)
    np.testing.assert_array_equal(core.values, init)
    core.set(["ChestLeds", "Merge", [[1.0, T0 + 300]]])     # alias kept; starts from init
    core.step(T0 + 250)
    i = table.actuator_index(RED)
    assert core.value(RED) == pytest.approx(init[i] + (1.0 - init[i]) * 0.5, abs=EPS)
    before = core.snapshot()
    with pytest.raises(DcmError, match="reset"):
        core.reset([0.0])
    assert core.snapshot() == before
    core.reset()
    assert not core.values.any() and core.last_cycle_time == T0 + 250
