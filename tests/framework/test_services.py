"""rtcf.services.run_or_refuse: a service operation run in the EC thread, answered as an
hrpsys servant answers (its result, or False with the reason logged)."""

from __future__ import annotations

import logging

from rtcf import Component, MonotonicClock, SteppedEC
from rtcf.services import run_or_refuse
from rtcf.testing import Harness


class Refusal(Exception):
    pass


def test_the_result_of_an_accepted_call_comes_back():
    with Harness(Component) as h:
        h.activate()
        assert run_or_refuse(h.comp, "op", lambda: 42, (Refusal,)) == (True, 42)


def test_a_refusal_is_false_with_the_reason_logged(caplog):
    def refuse():
        raise Refusal("op: too far")
    with Harness(Component) as h, caplog.at_level(logging.WARNING):
        h.activate()
        assert run_or_refuse(h.comp, "op", refuse, (Refusal,)) == (False, None)
        assert run_or_refuse(h.comp, "op", refuse, (Refusal,),
                             why=lambda e: str(e).removeprefix("op: ")) == (False, None)
    lines = [r.getMessage() for r in caplog.records]
    assert lines == ["op refused: op: too far", "op refused: too far"]


def test_another_exception_propagates():
    def broken():
        raise KeyError("bug")
    with Harness(Component) as h:
        h.activate()
        try:
            run_or_refuse(h.comp, "op", broken, (Refusal,))
        except KeyError:
            pass
        else:
            raise AssertionError("a bug was taken for a refusal")


def test_no_cycle_in_time_is_false_with_an_error_naming_the_component(caplog):
    comp = Component("slow")
    comp.initialize()
    ec = SteppedEC(100.0, name="slow", clock=MonotonicClock())    # running, never ticked
    ec.add_component(comp, owned=True)
    ec.start()
    try:
        with caplog.at_level(logging.ERROR):
            got = run_or_refuse(comp, "op", lambda: 1, (Refusal,), timeout=0.2)
        assert got == (False, None)
        assert "op: slow ran no cycle within 0.2 s" in caplog.text
    finally:
        ec.stop()
        comp.finalize()
