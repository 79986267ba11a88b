"""The DSR_ROBOT2 call forms (components/blending_planner/dsr.py) against a recording stand-in
for the component: keyword forms, global defaults, return codes and DR_Error types as
doosan-robot2's DSR_ROBOT2.py / DR_common2.py define them."""

import pytest

from rtcf_components.blending_planner import dsr_motion as dsr
from rtcf_components.blending_planner.dsr import (DR_BASE, DR_CIRCLE, DR_COND_NONE,
                                                  DR_ERROR_TYPE, DR_ERROR_VALUE, DR_LINE,
                                                  DR_MV_MOD_REL, DR_TOOL, DR_Error, amoveb,
                                                  moveb, posb, posx, set_accx, set_ref_coord,
                                                  set_velx)


class Recorder:
    """Stands in for BlendingPlannerProxy: records moveBlending requests, answers
    ``answer`` and, on a refusal, ``reason`` from getLastError."""

    def __init__(self, answer=True):
        self.calls, self.answer, self.reason = [], answer, ""
        self.service = self

    def move_blending(self, *args):
        self.calls.append(args)
        return self.answer

    def getLastError(self):
        return self.reason


@pytest.fixture
def planner(monkeypatch):
    rec = Recorder()
    monkeypatch.setattr(dsr, "_proxy", rec)
    monkeypatch.setattr(dsr, "_g_velx", [0.0, DR_COND_NONE])
    monkeypatch.setattr(dsr, "_g_accx", [0.0, DR_COND_NONE])
    monkeypatch.setattr(dsr, "_g_coord", DR_BASE)
    return rec


LINE = posb(DR_LINE, posx(100, 0, 0, 0, 0, 0), radius=5)


def test_keyword_forms_and_return_codes(planner):
    assert moveb([LINE], v=50, a=100, t=0, mod=DR_MV_MOD_REL, ref=DR_TOOL) == 0
    segs, vel, acc, time, ref, mod, sync = planner.calls[-1]
    assert segs == [[100.0, 0, 0, 0, 0, 0] + [0.0] * 6 + [0.0, 5.0]]
    assert (vel, acc, time, ref, mod, sync) == ([50.0, DR_COND_NONE], [100.0, DR_COND_NONE],
                                                0.0, DR_TOOL, DR_MV_MOD_REL, 0)
    assert amoveb([LINE], vel=[50, 20], acc=[100, 40]) == 0
    assert planner.calls[-1][1:3] == ([50.0, 20.0], [100.0, 40.0])
    assert planner.calls[-1][-1] == 1
    planner.answer = False
    planner.reason = "a motion is already running (Doosan: wait for an amoveb to end)"
    assert moveb([LINE], v=50, a=100) == -1       # the system's state: -1, as DSR
    planner.reason = "IK fails on segment 0, sample 12 of 40 (...): no IK solution"
    with pytest.raises(DR_Error) as e:            # what the robot cannot do: DR_Error
        moveb([LINE], v=50, a=100)
    assert e.value.type == DR_ERROR_VALUE and "IK fails" in e.value.msg


def test_none_takes_the_globals(planner):
    with pytest.raises(DR_Error) as e:            # the globals are 0 until set
        moveb([LINE])
    assert e.value.type == DR_ERROR_VALUE and "vel1" in e.value.msg
    assert set_velx(120) == 0 and set_accx(240, 90) == 0 and set_ref_coord(DR_TOOL) == 0
    assert moveb([LINE], vel=None, acc=None) == 0
    _, vel, acc, _, ref, _, _ = planner.calls[-1]
    assert vel == [120.0, DR_COND_NONE] and acc == [240.0, 90.0] and ref == DR_TOOL


@pytest.mark.parametrize("call,kind,words", [
    (lambda: moveb(LINE, v=1, a=1), DR_ERROR_TYPE, "seg_list"),
    (lambda: moveb([], v=1, a=1), DR_ERROR_VALUE, "seg_list"),
    (lambda: moveb([[0] * 14], v=1, a=1), DR_ERROR_TYPE, "seg_list(item)"),
    (lambda: moveb([LINE], v="x", a=1), DR_ERROR_TYPE, "vel, v"),
    (lambda: moveb([LINE], v=-5, a=1), DR_ERROR_VALUE, "vel, v"),
    (lambda: moveb([LINE], v=1, a=1, ref=300), DR_ERROR_VALUE, "ref"),
    (lambda: moveb([LINE], v=1, a=1, mod=2), DR_ERROR_VALUE, "mod"),
    (lambda: posb(DR_CIRCLE, posx(1, 0, 0, 0, 0, 0)), DR_ERROR_VALUE, "pos2"),
    (lambda: posb(DR_LINE, [1, 2, 3]), DR_ERROR_TYPE, "pos"),
    (lambda: posb(DR_LINE, posx(1, 0, 0, 0, 0, 0), radius=-1), DR_ERROR_VALUE, "radius"),
    (lambda: posb(5, posx(1, 0, 0, 0, 0, 0)), DR_ERROR_VALUE, "seg_type"),
    (lambda: set_velx(0), DR_ERROR_VALUE, "vel1"),
    (lambda: set_ref_coord(50), DR_ERROR_VALUE, "coord"),
])
def test_wrong_arguments_raise_dr_error_and_send_nothing(planner, call, kind, words):
    with pytest.raises(DR_Error) as e:
        call()
    assert e.value.type == kind and words in e.value.msg
    assert planner.calls == []
