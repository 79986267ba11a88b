"""The player core (components/sequence_player/seqplay.py) and pattern files (pattern.py):
the eight signals, the cases where hrpsys's SequencePlayerService returns false (PlayerError
here, nothing changed), joint groups, loadPattern (with its timing numbers), the project
decisions of seqplay.py's module doc."""

from __future__ import annotations

import numpy as np
import pytest

from rtcf_components.sequence_player.interpolator import LINEAR
from rtcf_components.sequence_player.pattern import PatternError, read_records
from rtcf_components.sequence_player.seqplay import PlayerError, SequencePlayerCore

DT = 0.005
EPS = 1e-9
J = ["J0", "J1", "J2", "J3"]


def player(**kw) -> SequencePlayerCore:
    return SequencePlayerCore(J, DT, force_sensors=kw.pop("fs", ("lf", "rf")), **kw)


def run(p: SequencePlayerCore, n: int | None = None) -> np.ndarray:
    out = []
    while (n is None or len(out) < n) and p.step():
        out.append(p.q_ref.copy())
    return np.array(out)


def snapshot(p: SequencePlayerCore) -> tuple:
    return (p.is_empty(), p.q_ref.tolist(), {s: (ip.remaining, ip.x.tolist())
                                             for s, ip in p.inter.items()},
            sorted(p.groups))


def test_nothing_is_output_while_idle():
    p = player()
    assert p.is_empty() and not p.step()
    assert p.dims == {"q": 4, "zmp": 3, "acc": 3, "p": 3, "rpy": 3, "tq": 4,
                      "wrenches": 12, "optional": 1}


def test_set_joint_angles_starts_from_qinit_and_holds_the_front_sample():
    p = player()
    p.set_inputs(q_init=np.array([0.2, 0.0, 0.0, 0.0]))
    p.set_joint_angles([1.0, 0.0, -1.0, 0.5], 1.0)
    s = run(p)
    assert len(s) == 201                     # the held front sample, then 200
    assert list(s[0]) == [0.2, 0.0, 0.0, 0.0]
    assert s[100, 2] == pytest.approx(-0.5, abs=EPS)
    assert s[100, 0] == pytest.approx(0.6, abs=EPS)
    assert list(s[-1]) == [1.0, 0.0, -1.0, 0.5]
    assert p.is_empty()


def test_set_inputs_takes_an_array_or_a_list_and_refuses_the_wrong_length():
    p = player()
    for q in (np.zeros(3), [0.0] * 5):
        p.set_inputs(q_init=q)
        assert not p.q_init_ok, q
    p.set_inputs(q_init=[0.1, 0.2, 0.3, 0.4], zmp=[0.0, 0.0, 0.1])
    assert p.q_init_ok and list(p.q_init) == [0.1, 0.2, 0.3, 0.4]
    assert list(p.zmp_init) == [0.0, 0.0, 0.1]
    p.set_inputs(q_init=np.arange(4.0))
    assert p.q_init_ok and list(p.q_init) == [0.0, 1.0, 2.0, 3.0]


def test_tm_zero_is_one_sample_and_negative_tm_is_refused():
    p = player()
    p.set_joint_angles([1.0, 1.0, 1.0, 1.0], 0.0)
    s = run(p)
    assert [list(r) for r in s] == [[0.0] * 4, [1.0] * 4]
    before = snapshot(p)
    for bad in (lambda: p.set_joint_angles([0.0] * 4, -0.1),
                lambda: p.set_joint_angle("J0", 1.0, -1.0),
                lambda: p.set_base_pos([0, 0, 0], float("nan"))):
        with pytest.raises(PlayerError, match=">= 0"):
            bad()
    assert snapshot(p) == before
    p.set_joint_angle("J1", 2.0, 0.0)          # online goal: one sample
    assert len(run(p)) == 1 and p.q_ref[1] == 2.0


@pytest.mark.parametrize("call,match", [
    (lambda p: p.set_joint_angles([0.0] * 3, 1.0), "jvs: expected 4 values, got 3"),
    (lambda p: p.set_joint_angles_with_mask([0.0] * 4, [True] * 3, 1.0),
     "mask: expected 4 values, got 3"),
    (lambda p: p.set_joint_angles_with_mask([0.0] * 5, [True] * 4, 1.0), "expected 4"),
    (lambda p: p.set_joint_angle("nope", 1.0, 1.0), "unknown joint 'nope'"),
    (lambda p: p.set_joint_angles_sequence([], []), "at least one keyframe"),
    (lambda p: p.set_joint_angles_sequence([[0.0] * 4], [1.0, 1.0]), "expected 1 durations"),
    (lambda p: p.set_joint_angles_sequence([[0.0] * 3], [1.0]), r"jvss\[0\]: expected 4"),
    (lambda p: p.set_joint_angles_sequence([[0.0] * 4], [1.0], mask=[True]),
     "mask: expected 4 or 0 values, got 1"),
    (lambda p: p.set_base_pos([0.0, 0.0], 1.0), "pos: expected 3 values, got 2"),
    (lambda p: p.set_base_rpy([0.0] * 4, 1.0), "rpy: expected 3"),
    (lambda p: p.set_zmp([], 1.0), "zmp: expected 3"),
    (lambda p: p.set_wrenches([0.0] * 6, 1.0), "wrenches .*2 sensors.*expected 12"),
    (lambda p: p.set_interpolation_mode(2), "LINEAR .0. or HOFFARBIB .1., got 2"),
    (lambda p: p.set_joint_angles_of_group("none", [0.0], 1.0), "unknown joint group"),
    (lambda p: p.clear_of_group("none"), "unknown joint group 'none'"),
    (lambda p: p.remove_joint_group("none"), "unknown joint group"),
    (lambda p: p.add_joint_group("g", ["J0", "Jx"]), "unknown joint 'Jx'"),
    (lambda p: p.add_joint_group("g", []), "no joint given"),
    (lambda p: p.set_joint_angles([0.0, 0.0, float("inf"), 0.0], 1.0), "finite"),
])
def test_false_cases_change_nothing(call, match):
    p = player()
    p.set_joint_angles([0.5] * 4, 1.0)
    run(p, 20)
    before = snapshot(p)
    with pytest.raises(PlayerError, match=match):
        call(p)
    assert snapshot(p) == before


def test_full_sequence_validation():
    p = player(fs=())
    ok = dict(jvss=[[0.0] * 4], vels=[], torques=[[0.0] * 4], poss=[[0.0] * 3],
              rpys=[[0.0] * 3], accs=[[0.0] * 3], zmps=[[0.0] * 3], wrenches=[[]],
              optionals=[[0.0]], tms=[0.5])
    for key, bad, match in (("torques", [], "torques: expected 1 rows"),
                            ("poss", [[0.0] * 2], r"poss\[0\]: expected 3"),
                            ("vels", [[0.0] * 4] * 2, "vels: expected 0 or 1"),
                            ("jvss", [], "at least one keyframe"),
                            ("tms", [0.5, 0.5], "expected 1 durations")):
        with pytest.raises(PlayerError, match=match):
            p.set_joint_angles_sequence_full(**{**ok, key: bad})
    assert p.is_empty()
    p.set_joint_angles_sequence_full(**{**ok, "jvss": [[1.0] * 4], "poss": [[0, 0, 1.0]],
                                        "tms": [0.5]})
    run(p)
    assert list(p.q_ref) == [1.0] * 4 and list(p.p.x) == [0.0, 0.0, 1.0]


def test_mask_goes_to_qinit_and_set_joint_angle_holds_the_others():
    p = player()
    p.set_inputs(q_init=np.array([0.1, 0.2, 0.3, 0.4]))
    p.set_joint_angles_with_mask([1.0, 1.0, 1.0, 1.0], [True, False, True, False], 0.5)
    run(p)
    assert list(p.q_ref) == [1.0, 0.2, 1.0, 0.4]
    p.set_joint_angles([0.0] * 4, 1.0)
    run(p, 101)                       # halfway (the held sample, then 100)
    mid = p.q_ref.copy()
    p.set_joint_angle("J2", 2.0, 0.5)
    s = run(p)
    assert len(s) == 100
    assert s[-1][2] == 2.0
    # the others stop smoothly near where they were (their velocity dies out)
    assert np.allclose(s[-1][[0, 1, 3]], mid[[0, 1, 3]], atol=0.2)
    assert np.all(np.abs(np.diff(s[:, 0])) < 0.02)


def test_sequence_with_mask_applies_the_mask():
    p = player()
    p.set_inputs(q_init=np.array([0.1, 0.2, 0.3, 0.4]))
    p.set_joint_angles_sequence([[1.0] * 4, [2.0] * 4], [0.5, 0.5],
                                mask=[True, False, False, True])
    s = run(p)
    assert len(s) == 201
    assert list(s[-1]) == [2.0, 0.2, 0.3, 2.0]
    assert np.all(s[:, 1] == 0.2) and np.all(s[:, 2] == 0.3)


def test_clear_joint_angles_stops_between_start_and_target():
    p = player()
    p.set_joint_angles([1.0] * 4, 1.0)
    run(p, 101)
    p.clear_joint_angles()
    s = run(p)
    assert len(s) == 1 and s[0][0] == pytest.approx(0.5, abs=EPS)


def test_clear_and_clear_no_wait_and_reinit_from_qinit():
    p = player()
    p.set_joint_angles([1.0] * 4, 1.0)
    run(p, 50)
    p.clear()
    assert p.is_empty() and not p.step()
    p.set_inputs(q_init=np.full(4, 0.3))
    p.set_joint_angles([1.0] * 4, 1.0)
    assert run(p, 1)[0][0] == 0.3            # a new motion after idle starts at qInit
    p.clear_no_wait()
    assert not p.is_empty() and not p.step() and p.is_empty()


def test_online_base_signals_and_interpolation_mode():
    p = player()
    p.set_interpolation_mode(LINEAR)
    p.set_base_pos([1.0, 0.0, 0.0], 1.0)
    p.set_zmp([0.0, 0.1, 0.0], 0.5)
    p.set_wrenches([10.0] * 12, 1.0)
    run(p, 100)
    assert p.p.x[0] == pytest.approx(0.5, abs=EPS)     # linear: half way at half time
    assert p.zmp.x[1] == pytest.approx(0.1, abs=EPS)
    assert p.wrenches.x[5] == pytest.approx(5.0, abs=EPS)
    run(p)
    assert list(p.p.x) == [1.0, 0.0, 0.0]


def test_set_initial_state_writes_the_inputs_once():
    p = player()
    p.set_inputs(q_init=np.array([0.1, 0.2, 0.3, 0.4]), base_pos=np.array([0, 0, 0.3]),
                 base_rpy=np.array([0, 0, 1.0]), zmp=np.array([0.01, 0, 0]))
    p.set_initial_state()
    s = run(p)
    assert len(s) == 1 and list(s[0]) == [0.1, 0.2, 0.3, 0.4]
    assert list(p.p.x) == [0, 0, 0.3] and p.rpy.x[2] == 1.0 and p.zmp.x[0] == 0.01
    p.set_inputs(q_init=np.zeros(3))                  # a bad qInit: cannot initialise
    with pytest.raises(PlayerError, match="qInit does not have 4 values"):
        p.set_initial_state()
    with pytest.raises(PlayerError, match="cannot initialise"):
        p.set_joint_angles([0.0] * 4, 1.0)


def test_play_pattern_applies_rpy_and_zmp_as_named():
    p = player()
    p.play_pattern([[1.0] * 4, [2.0] * 4], [[0.0, 0.0, 0.5]], [[0.1, 0.0, 0.0]], [0.5])
    s = run(p)
    assert len(s) == 200 and list(s[-1]) == [2.0] * 4
    assert list(p.rpy.x) == [0.0, 0.0, 0.5]           # rpy to RPY (hrpsys swaps them)
    assert list(p.zmp.x) == [0.1, 0.0, 0.0]
    assert s[99][0] == 1.0                             # keyframe 1 reached at 0.5 s
    with pytest.raises(PlayerError, match="tm: expected 1 or 2 durations, got 3"):
        p.play_pattern([[1.0] * 4] * 2, [], [], [1, 1, 1])
    p.play_pattern([[2.5] * 4], [], [], [0.0])         # pattern time 0: average speed
    assert len(run(p)) == 1000     # idle: from qInit (0), 2.5 rad at 0.5 rad/s = 5 s


# -- groups -----------------------------------------------------------------------------------
def test_groups_are_case_insensitive_independent_and_override_until_removed():
    p = player()
    p.add_joint_group("Arm", ["J1", "J2"])
    with pytest.raises(PlayerError, match="already exists"):
        p.add_joint_group("ARM", ["J0"])
    p.set_joint_angles_of_group("arm", [1.0, -1.0], 1.0)
    p.set_joint_angles([0.5] * 4, 0.5)                 # whole body, shorter
    s = run(p, 101)
    assert list(s[-1][[0, 3]]) == [0.5, 0.5]           # Q done (held sample + 100)
    assert s[99][1] == pytest.approx(0.5, abs=EPS)     # the group half way (its own curve)
    assert not p.is_empty() and p.q.is_empty() and not p.group_is_empty("ARM")
    run(p)
    assert list(p.q_ref) == [0.5, 1.0, -1.0, 0.5]
    # the group still wins for its joints while idle
    p.set_joint_angles([2.0] * 4, 0.5)
    run(p)
    assert list(p.q_ref) == [2.0, 1.0, -1.0, 2.0]
    assert list(p.q.x) == [2.0] * 4                    # Q moved underneath
    p.remove_joint_group("arm")                        # blend back to Q over 2.5 s
    assert not p.is_empty()
    s = run(p)
    assert len(s) == 500
    assert s[249][1] == pytest.approx(1.5, abs=EPS)    # half weight at half time
    assert list(s[-1]) == [2.0] * 4 and "ARM" not in p.groups
    assert np.all(np.abs(np.diff(s[:, 1])) < 0.01)     # no jump


def test_group_first_use_starts_from_current_values_and_other_groups():
    p = player()
    p.set_inputs(q_init=np.array([0.1, 0.2, 0.3, 0.4]))
    p.add_joint_group("a", ["J0"])
    p.add_joint_group("b", ["J0", "J1"])               # overlaps: b wins (name order)
    p.set_joint_angles_of_group("a", [1.0], 0.5)
    s = run(p, 1)
    assert s[0][0] == pytest.approx(0.1, abs=1e-3)     # from qInit, no jump
    run(p)
    p.set_joint_angles_of_group("b", [0.0, 0.0], 0.5)
    s = run(p, 1)
    assert s[0][0] == pytest.approx(1.0, abs=1e-3)     # from group a's value
    with pytest.raises(PlayerError, match="has not been used"):
        p2 = player()
        p2.add_joint_group("x", ["J3"])
        p2.clear_joint_angles_of_group("x")


def test_group_sequence_pattern_and_clear():
    p = player()
    p.add_joint_group("g", ["J3"])
    p.play_pattern_of_group("g", [[1.0], [2.0]], [0.5])
    run(p, 100)
    assert p.q_ref[3] == pytest.approx(1.0, abs=EPS)
    p.set_joint_angles_sequence_of_group("g", [[0.0]], [0.5])
    s = run(p)
    assert len(s) == 101 and s[-1][3] == 0.0
    p.play_pattern_of_group("g", [[1.0]], [1.0])
    run(p, 10)
    p.clear_of_group("g")
    assert p.group_is_empty("g") and p.group_is_empty("unknown")
    with pytest.raises(PlayerError, match=r"pos of group G\[0\]: expected 1"):
        p.play_pattern_of_group("g", [[1.0, 2.0]], [1.0])
    p.remove_joint_group("g")
    with pytest.raises(PlayerError, match="being removed"):
        p.set_joint_angles_of_group("g", [0.0], 1.0)


# -- loadPattern ------------------------------------------------------------------------------
def test_load_pattern_timing_numbers(tmp_path):
    p = SequencePlayerCore(["J"], DT)
    (tmp_path / "m.pos").write_text("0.0 0.0\n1.0 1.0\n1.5 0.5\n")
    p.set_inputs(q_init=np.array([0.2]))
    p.load_pattern(p.prepare_pattern(str(tmp_path / "m")), 2.0)
    s = run(p)[:, 0]
    assert len(s) == 700
    for tau, x in ((1.0, 0.1), (2.0, 0.0), (2.5, 0.5), (3.0, 1.0), (3.25, 0.75), (3.5, 0.5)):
        assert s[round(tau / DT) - 1] == pytest.approx(x, abs=EPS)


def test_load_pattern_dt_rows_every_extension_and_appending(tmp_path):
    p = SequencePlayerCore(["A", "B"], DT, force_sensors=("fs",), optional_dim=2)
    b = tmp_path / "walk"
    rows = "0 0.1 1\n0.005 0.2 2\n0.01 0.15 3\n"
    (tmp_path / "walk.pos").write_text(rows)
    (tmp_path / "walk.torque").write_text(rows)
    (tmp_path / "walk.zmp").write_text("0 1 2 3\n0.005 4 5 6\n0.01 7 8 9")
    (tmp_path / "walk.gsens").write_text("0 0 0 9.8 0.005 0 0 9.8 0.01 0 0 9.7")  # one line
    (tmp_path / "walk.waist").write_text("0 0 0 0.3 0 0 0.1\n0.01 0 0 0.3 0 0 0.2\n")
    (tmp_path / "walk.wrenches").write_text("0 1 2 3 4 5 6\n0.01 6 5 4 3 2 1\n")
    (tmp_path / "walk.optionalData").write_text("0 1 0\n0.01 0 1\n")
    p.load_pattern(p.prepare_pattern(str(b)), DT)
    s = run(p)
    assert [list(r) for r in s] == [[0.1, 1.0], [0.2, 2.0], [0.15, 3.0]]
    assert list(p.tq.x) == [0.15, 3.0] and list(p.zmp.x) == [7, 8, 9]
    assert list(p.acc.x) == [0, 0, 9.7]
    assert list(p.p.x) == [0, 0, 0.3] and list(p.rpy.x) == [0, 0, 0.2]   # waist -> RPY
    assert list(p.wrenches.x) == [6, 5, 4, 3, 2, 1] and list(p.optional.x) == [0, 1]
    (tmp_path / "walk.hip").write_text("0 0 0 -1\n")                     # .hip wins
    prep = p.prepare_pattern(str(b))
    p.load_pattern(prep, 0.5)
    p.load_pattern(prep, 0.5)                        # appended behind the first
    assert p.q.remaining == 2 * (100 + 2)
    run(p)
    assert p.rpy.x[2] == -1.0


def test_pattern_errors_name_the_file(tmp_path):
    p = SequencePlayerCore(["A", "B"], DT)
    with pytest.raises(PatternError, match="no pattern file .*nothing"):
        p.prepare_pattern(str(tmp_path / "nothing"))
    (tmp_path / "bad.pos").write_text("0 1 2\n1 x 3\n")
    with pytest.raises(PatternError, match=r"bad.pos: token 'x' is not a number"):
        p.prepare_pattern(str(tmp_path / "bad"))
    (tmp_path / "short.pos").write_text("0 1 2\n1 3\n")
    with pytest.raises(PatternError, match="5 numbers do not make whole records of 3"):
        p.prepare_pattern(str(tmp_path / "short"))
    (tmp_path / "back.pos").write_text("0 1 2\n1 3 4\n0.5 0 0\n")
    with pytest.raises(PatternError, match="time goes back at record 2"):
        p.prepare_pattern(str(tmp_path / "back"))
    (tmp_path / "empty.pos").write_text("")
    with pytest.raises(PatternError, match="empty.pos: .*(no record|empty)"):
        p.prepare_pattern(str(tmp_path / "empty"))
    assert p.is_empty()


def test_token_stream_equals_line_records(tmp_path):
    rng = np.random.default_rng(3)
    data = np.c_[np.arange(50) * DT, rng.normal(size=(50, 5))]
    (tmp_path / "a.pos").write_text("\n".join(" ".join(repr(float(v)) for v in r) for r in data))
    (tmp_path / "b.pos").write_text("\t".join(repr(float(v)) for v in data.ravel()))
    a, b = read_records(str(tmp_path / "a.pos"), 5), read_records(str(tmp_path / "b.pos"), 5)
    assert np.array_equal(a.values, data[:, 1:]) and np.array_equal(b.values, a.values)
    assert np.array_equal(a.gaps, b.gaps)


@pytest.mark.parametrize("call,match", [
    (lambda p: p.set_joint_angles_of_group("g", [0.0], 1.0), r"jvs of group G: expected 2"),
    (lambda p: p.set_joint_angles_of_group("g", [0.0, 0.0], -0.5), ">= 0"),
    (lambda p: p.set_joint_angles_sequence_of_group("g", [], []), "at least one keyframe"),
    (lambda p: p.set_joint_angles_sequence_of_group("g", [[0.0, 0.0]], [1.0, 2.0]),
     "expected 1 durations"),
    (lambda p: p.set_joint_angles_sequence_of_group("g", [[0.0]], [1.0]),
     r"jvss of group G\[0\]: expected 2"),
    (lambda p: p.set_joint_angles_sequence_of_group("x", [[0.0]], [1.0]), "unknown joint group"),
    (lambda p: p.play_pattern_of_group("g", [[0.0, 0.0]], [1.0, 1.0]),
     "tm: expected 1 or 1 durations, got 2"),
    (lambda p: p.play_pattern_of_group("g", [], [1.0]), "at least one keyframe"),
    (lambda p: p.clear_joint_angles_of_group("x"), "unknown joint group 'x'"),
    (lambda p: p.add_joint_group("h", ["J0", "J0"]), "listed twice"),
    (lambda p: p.add_joint_group("", ["J0"]), "must not be empty"),
])
def test_group_false_cases_change_nothing(call, match):
    p = player()
    p.add_joint_group("g", ["J1", "J2"])
    p.set_joint_angles_of_group("g", [0.3, 0.3], 1.0)
    run(p, 10)
    before = snapshot(p)
    with pytest.raises(PlayerError, match=match):
        call(p)
    assert snapshot(p) == before


def test_a_group_being_removed_refuses_commands_and_clear():
    p = player()
    p.add_joint_group("g", ["J1"])
    p.set_joint_angles_of_group("g", [1.0], 0.1)
    run(p)
    p.remove_joint_group("G")
    for call in (lambda: p.clear_joint_angles_of_group("g"),
                 lambda: p.play_pattern_of_group("g", [[0.0]], [1.0]),
                 lambda: p.set_joint_angles_sequence_of_group("g", [[0.0]], [1.0])):
        with pytest.raises(PlayerError, match="being removed"):
            call()
    assert not p.group_is_empty("g")           # removing counts as moving
    run(p)
    assert p.group_is_empty("g") and "G" not in p.groups
    p.add_joint_group("g", ["J1"])             # the name is free again


def test_pattern_planned_elsewhere_is_appended_or_planned_again():
    """The servant plans playPattern in an ORB thread from a snapshot; the cycle appends it,
    or plans again when the start moved in between: the result equals a direct call."""
    rows, rpy = [[0.5] * 4, [1.0] * 4, [0.2] * 4], [[0.0, 0.0, 0.3]]
    for moved in (False, True):
        a, b = player(), player()
        args = a.pattern_args(rows, rpy, [], [0.3])
        plans = a.plan_pattern(args, a.pattern_start())
        if moved:
            for p in (a, b):
                p.set_joint_angles([-1.0] * 4, 0.2)
                run(p, 5)
        a.apply_planned(plans, args)
        b.play_pattern(rows, rpy, [], [0.3])
        sa, sb = run(a), run(b)
        assert len(sa) == len(sb) and np.array_equal(sa, sb)
        assert list(a.rpy.x) == [0.0, 0.0, 0.3]


def test_two_groups_removed_together_finish_together():
    p = player()
    for name, joint in (("a", "J0"), ("b", "J1")):
        p.add_joint_group(name, [joint])
        p.set_joint_angles_of_group(name, [1.0], 0.1)
    run(p)
    p.remove_joint_group("a")
    p.remove_joint_group("b")
    s = run(p)
    assert len(s) == 500 and p.groups == {} and p.is_empty()
    assert list(s[-1]) == [0.0] * 4


HUGE = 1e308      # finite, but the quintic's coefficients overflowed to inf, then NaN


@pytest.mark.parametrize("call", [
    lambda p: p.set_joint_angles([HUGE, 0.0, 0.0, 0.0], 1.0),
    lambda p: p.set_joint_angles_with_mask([0.0, -HUGE, 0.0, 0.0], [True] * 4, 1.0),
    lambda p: p.set_joint_angle("J2", HUGE, 1.0),
    lambda p: p.set_joint_angles_sequence([[HUGE, 0.0, 0.0, 0.0]], [1.0]),
    lambda p: p.set_base_pos([HUGE, 0.0, 0.0], 1.0),
    lambda p: p.set_base_rpy([0.0, HUGE, 0.0], 1.0),
    lambda p: p.set_zmp([0.0, 0.0, -HUGE], 1.0),
    lambda p: p.set_wrenches([HUGE] + [0.0] * 11, 1.0),
    lambda p: p.play_pattern([[0.0] * 4], [[HUGE, 0.0, 0.0]], [[0.0] * 3], [1.0]),
    lambda p: p.set_joint_angles_sequence_full([[0.0] * 4], [[HUGE] * 4], [[0.0] * 4],
                                               [[0.0] * 3], [[0.0] * 3], [[0.0] * 3],
                                               [[0.0] * 3], [[0.0] * 12], [[0.0]], [1.0]),
    lambda p: p.set_zmp([0.0, 0.0, 0.0], HUGE),
    lambda p: p.set_joint_angles([0.0] * 4, 1e70),
    lambda p: p.set_joint_angles_sequence([[0.0] * 4], [HUGE]),
], ids=["setJointAngles", "withMask", "setJointAngle", "sequence", "setBasePos",
        "setBaseRpy", "setZmp", "setWrenches", "playPattern", "sequenceFull-vels",
        "setZmp-tm", "setJointAngles-tm", "sequence-tm"])
def test_values_that_overflow_the_interpolation_are_refused(call):
    p = player()
    p.set_joint_angles([0.5] * 4, 1.0)
    run(p, 20)
    before = snapshot(p)
    with pytest.raises(PlayerError, match="overflow the interpolation|overflows the "
                                          "interpolation"):
        call(p)
    assert snapshot(p) == before
    out = run(p)
    assert np.all(np.isfinite(out))
    assert all(np.all(np.isfinite(ip.x)) for ip in p.inter.values())


def test_the_largest_accepted_value_stays_finite():
    p = player()
    p.set_zmp([1e100, -1e100, 0.0], 0.0)
    p.set_base_rpy([1e100, 0.0, 0.0], 0.005)
    p.set_joint_angles([-1e100, 1e100, 0.0, 0.0], 0.005)
    run(p)
    assert all(np.all(np.isfinite(ip.x)) and np.all(np.isfinite(ip.v))
               for ip in p.inter.values())


def test_pattern_file_values_that_overflow_are_refused(tmp_path):
    f = tmp_path / "big.zmp"
    f.write_text("0.5 0 0 0\n1.0 1e308 0 0\n")
    with pytest.raises(PatternError, match="record 1 .*overflow the interpolation"):
        read_records(str(f), 3)
