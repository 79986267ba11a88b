"""Tests of the component lifecycle (rtcf.lifecycle, rtcf.component and the state machine in
rtcf.execution), driven by a SteppedEC directly and through rtcf.testing.Harness.

Expected order (openrtm_interop.md §3): on_initialize at creation, on_startup when the EC
starts; activate -> on_activated, then on_execute + on_state_update each tick; a failure ->
next tick on_deactivated, on_aborting, on_error, then on_error every tick; reset -> on_reset ->
INACTIVE.
"""

from __future__ import annotations

import logging
import threading

import pytest

from rtcf.errors import LifecycleError, ParamError
from rtcf.execution import SteppedEC
from rtcf.lifecycle import (HOOKS, LifeCycleState, Request, ReturnCode, TRANSITIONS,
                            is_failure)
from rtcf.params import Param
from rtcf.testing import Harness

S = LifeCycleState
# How a spy fails (see conftest.SpyBase): raise, return False, return RTC_ERROR.
RAISE = "raise"
FAIL_MODES = (RAISE, False, ReturnCode.RTC_ERROR)
ERROR_TRIPLE = ["on_deactivated", "on_aborting", "on_error"]


# -- two ways of driving a component: SteppedEC directly, and the Harness -------------------

class Direct:
    """A component on a bare SteppedEC; requests are applied at the next step()."""

    def __init__(self, comp):
        self.comp = comp
        self.ec = SteppedEC(100.0, name="direct")
        self.ec.add_component(comp)
        self.ec.start()

    def activate(self):
        return self.ec.activate_component(self.comp)

    def deactivate(self):
        return self.ec.deactivate_component(self.comp)

    def reset(self):
        return self.ec.reset_component(self.comp)

    def step(self, n=1):
        self.ec.step(n)

    @property
    def state(self):
        return self.ec.get_component_state(self.comp)

    def close(self):
        if self.ec.is_running():
            self.ec.stop()


class ViaHarness(Direct):
    def __init__(self, comp):
        self.comp = comp
        self.h = Harness(comp, rate=100.0)
        self.ec = self.h.ec

    def activate(self):
        return self.h.activate(step=False)

    def deactivate(self):
        return self.h.deactivate(step=False)

    def reset(self):
        return self.h.reset(step=False)

    def step(self, n=1):
        self.h.step(n)

    @property
    def state(self):
        return self.h.state


@pytest.fixture(params=["stepped", "harness"])
def drive(request):
    made = []

    def factory(comp):
        d = Direct(comp) if request.param == "stepped" else ViaHarness(comp)
        made.append(d)
        return d
    yield factory
    for d in made:
        d.close()


def tick_hooks(spy, driver, n=1):
    """Run n ticks and return the hook names called during them."""
    spy.clear()
    driver.step(n)
    return spy.hooks()


# -- the pure table -------------------------------------------------------------------------

def test_transition_table():
    assert TRANSITIONS[Request.ACTIVATE] == (S.INACTIVE, S.ACTIVE)
    assert TRANSITIONS[Request.DEACTIVATE] == (S.ACTIVE, S.INACTIVE)
    assert TRANSITIONS[Request.RESET] == (S.ERROR, S.INACTIVE)
    # OMG numbering, mapped one to one by the CORBA layer
    assert [int(s) for s in (S.CREATED, S.INACTIVE, S.ACTIVE, S.ERROR)] == [0, 1, 2, 3]
    assert int(ReturnCode.PRECONDITION_NOT_MET) == 5


@pytest.mark.parametrize("result, failed", [
    (None, False), (True, False), (ReturnCode.RTC_OK, False), (0, False),
    (False, True), (ReturnCode.RTC_ERROR, True), (ReturnCode.PRECONDITION_NOT_MET, True),
    (1, True),
])
def test_is_failure(result, failed):
    assert is_failure(result) is failed


# -- creation and startup ---------------------------------------------------------------------

def test_creation_runs_on_initialize_then_on_startup_at_ec_start(make_spy):
    spy = make_spy("c", initialize=False)
    assert spy.calls == []
    ec = SteppedEC(100.0, name="e")
    with pytest.raises(LifecycleError, match="not initialised"):
        ec.add_component(spy)
    spy.initialize()
    assert spy.calls == [("on_initialize", None)]
    with pytest.raises(LifecycleError, match="already initialised"):
        spy.initialize()
    assert ec.add_component(spy) == 0
    assert ec.get_component_state(spy) is S.INACTIVE
    assert spy.hooks() == ["on_initialize"]
    assert ec.start() == ReturnCode.RTC_OK
    assert spy.calls == [("on_initialize", None), ("on_startup", 0)]
    ec.step(5)     # nothing happens while Inactive
    assert spy.calls == [("on_initialize", None), ("on_startup", 0)]
    assert ec.start() == ReturnCode.PRECONDITION_NOT_MET
    ec.stop()


def test_harness_initialises_and_starts(make_spy):
    spy = make_spy("h", initialize=False)
    h = Harness(spy)
    assert spy.calls == [("on_initialize", None), ("on_startup", 0)]
    assert h.state is S.INACTIVE
    h.close()


def test_on_initialize_failure_raises(make_spy):
    for mode in FAIL_MODES:
        spy = make_spy("bad", fail={"on_initialize": mode}, initialize=False)
        with pytest.raises(Exception):
            spy.initialize()
        assert not spy.initialized


def test_state_of_a_non_member_is_created(make_spy):
    spy = make_spy()
    ec = SteppedEC(100.0)
    assert ec.get_component_state(spy) is S.CREATED
    assert ec.activate_component(spy) == ReturnCode.BAD_PARAMETER


# -- activate / execute / deactivate ----------------------------------------------------------

def test_activate_runs_on_activated_then_execute_and_state_update_each_tick(make_spy, drive):
    spy = make_spy()
    d = drive(spy)
    spy.clear()
    assert d.activate() == ReturnCode.RTC_OK
    assert spy.calls == []                      # applied at the next cycle start
    assert d.state is S.INACTIVE
    assert tick_hooks(spy, d) == ["on_activated", "on_execute", "on_state_update"]
    assert d.state is S.ACTIVE
    assert tick_hooks(spy, d, 3) == ["on_execute", "on_state_update"] * 3
    assert {i for _, i in spy.calls} == {0}


def test_deactivate_runs_on_deactivated_and_stops_execute(make_spy, drive):
    spy = make_spy()
    d = drive(spy)
    d.activate()
    d.step(2)
    assert d.deactivate() == ReturnCode.RTC_OK
    assert tick_hooks(spy, d) == ["on_deactivated"]
    assert d.state is S.INACTIVE
    assert tick_hooks(spy, d, 4) == []
    # and it can be activated again
    d.activate()
    assert tick_hooks(spy, d) == ["on_activated", "on_execute", "on_state_update"]


@pytest.mark.parametrize("mode", FAIL_MODES, ids=["raise", "false", "rtc_error"])
def test_failure_in_on_execute_goes_to_error_on_the_next_tick(make_spy, drive, mode):
    spy = make_spy()
    d = drive(spy)
    d.activate()
    d.step(2)
    spy.fail["on_execute"] = mode
    failing = tick_hooks(spy, d)
    assert "on_execute" in failing and "on_error" not in failing
    del spy.fail["on_execute"]
    assert tick_hooks(spy, d) == ERROR_TRIPLE
    assert d.state is S.ERROR
    # on_error every tick after, nothing else
    assert tick_hooks(spy, d, 5) == ["on_error"] * 5
    assert d.state is S.ERROR


@pytest.mark.parametrize("mode", FAIL_MODES, ids=["raise", "false", "rtc_error"])
def test_reset_runs_on_reset_and_returns_to_inactive(make_spy, drive, mode):
    spy = make_spy(fail={"on_execute": mode})
    d = drive(spy)
    d.activate()
    d.step(3)
    assert d.state is S.ERROR
    spy.fail.clear()
    assert d.reset() == ReturnCode.RTC_OK
    assert tick_hooks(spy, d) == ["on_reset"]
    assert d.state is S.INACTIVE
    assert tick_hooks(spy, d, 3) == []
    d.activate()
    assert tick_hooks(spy, d) == ["on_activated", "on_execute", "on_state_update"]
    assert d.state is S.ACTIVE


@pytest.mark.parametrize("mode", FAIL_MODES, ids=["raise", "false", "rtc_error"])
def test_reset_failing_stays_in_error(make_spy, drive, mode):
    spy = make_spy(fail={"on_execute": RAISE})
    d = drive(spy)
    d.activate()
    d.step(3)
    assert d.state is S.ERROR
    spy.fail = {"on_reset": mode}
    assert d.reset() == ReturnCode.RTC_OK
    hooks = tick_hooks(spy, d)
    assert hooks[0] == "on_reset"
    assert "on_execute" not in hooks and "on_activated" not in hooks
    assert d.state is S.ERROR
    assert tick_hooks(spy, d, 3) == ["on_error"] * 3
    # a later successful reset works
    spy.fail.clear()
    assert d.reset() == ReturnCode.RTC_OK
    d.step()
    assert d.state is S.INACTIVE


@pytest.mark.parametrize("mode", FAIL_MODES, ids=["raise", "false", "rtc_error"])
def test_failure_in_on_activated_goes_to_error(make_spy, drive, mode):
    spy = make_spy(fail={"on_activated": mode})
    d = drive(spy)
    d.activate()
    d.step(3)
    assert d.state is S.ERROR
    assert spy.count("on_execute") == 0
    assert spy.count("on_aborting") == 1
    assert spy.hooks()[-1] == "on_error"


@pytest.mark.parametrize("mode", FAIL_MODES, ids=["raise", "false", "rtc_error"])
def test_failure_in_on_deactivated_goes_to_error(make_spy, drive, mode):
    spy = make_spy(fail={"on_deactivated": mode})
    d = drive(spy)
    d.activate()
    d.step(2)
    d.deactivate()
    hooks = tick_hooks(spy, d, 2)
    assert hooks[0] == "on_deactivated"
    assert "on_aborting" in hooks and "on_execute" not in hooks
    assert hooks[-1] == "on_error"
    assert d.state is S.ERROR


@pytest.mark.parametrize("mode", FAIL_MODES, ids=["raise", "false", "rtc_error"])
def test_failure_in_on_state_update_goes_to_error_on_the_next_tick(make_spy, drive, mode):
    spy = make_spy()
    d = drive(spy)
    d.activate()
    d.step()
    spy.fail["on_state_update"] = mode
    assert tick_hooks(spy, d) == ["on_execute", "on_state_update"]
    assert tick_hooks(spy, d) == ERROR_TRIPLE
    assert d.state is S.ERROR


@pytest.mark.parametrize("mode", FAIL_MODES, ids=["raise", "false", "rtc_error"])
def test_failure_in_on_startup_sends_the_component_to_error(make_spy, mode):
    # rtcf sends any failing hook but on_aborting/on_error/on_finalize/on_shutdown to
    # ERROR (execution.py docstring); OpenRTM-aist ignores on_startup's result.
    spy = make_spy(fail={"on_startup": mode})
    d = Direct(spy)
    assert spy.hooks() == ["on_initialize", "on_startup"]
    assert tick_hooks(spy, d) == ["on_aborting", "on_error"]
    assert d.state is S.ERROR
    assert d.activate() == ReturnCode.PRECONDITION_NOT_MET
    assert d.reset() == ReturnCode.RTC_OK
    assert tick_hooks(spy, d) == ["on_reset"]
    assert d.state is S.INACTIVE
    d.close()


def test_failure_in_on_error_or_on_aborting_keeps_error(make_spy, drive):
    spy = make_spy(fail={"on_execute": RAISE, "on_aborting": RAISE, "on_error": False})
    d = drive(spy)
    d.activate()
    d.step(4)
    assert d.state is S.ERROR
    assert tick_hooks(spy, d, 3) == ["on_error"] * 3


# -- preconditions -------------------------------------------------------------------------------

def test_activate_when_active_and_reset_when_inactive_are_refused(make_spy, drive):
    spy = make_spy()
    d = drive(spy)
    spy.clear()
    assert d.reset() == ReturnCode.PRECONDITION_NOT_MET
    assert d.deactivate() == ReturnCode.PRECONDITION_NOT_MET
    assert tick_hooks(spy, d, 2) == []
    assert d.state is S.INACTIVE
    d.activate()
    d.step()
    spy.clear()
    assert d.activate() == ReturnCode.PRECONDITION_NOT_MET
    assert d.reset() == ReturnCode.PRECONDITION_NOT_MET
    assert tick_hooks(spy, d) == ["on_execute", "on_state_update"]
    assert d.state is S.ACTIVE


def test_a_pending_request_counts_for_the_precondition(make_spy):
    spy = make_spy()
    d = Direct(spy)
    assert d.activate() == ReturnCode.RTC_OK
    assert d.activate() == ReturnCode.PRECONDITION_NOT_MET     # already on its way
    assert d.deactivate() == ReturnCode.RTC_OK                 # after the pending activate
    spy.clear()
    d.step(3)
    assert d.state is S.INACTIVE
    assert spy.hooks().count("on_activated") == 1
    assert spy.hooks().count("on_deactivated") == 1
    assert spy.hooks().index("on_activated") < spy.hooks().index("on_deactivated")
    d.close()


def test_requests_in_error_are_refused_except_reset(make_spy, drive):
    spy = make_spy(fail={"on_execute": RAISE})
    d = drive(spy)
    d.activate()
    d.step(3)
    assert d.state is S.ERROR
    assert d.activate() == ReturnCode.PRECONDITION_NOT_MET
    assert d.deactivate() == ReturnCode.PRECONDITION_NOT_MET
    assert tick_hooks(spy, d) == ["on_error"]


# -- isolation and logging ------------------------------------------------------------------------

def test_a_failing_component_does_not_stop_the_others(make_spy):
    ec = SteppedEC(100.0, name="two")
    good, bad = make_spy("good"), make_spy("bad")
    ec.add_component(bad)
    ec.add_component(good)
    ec.start()
    ec.activate_component(bad)
    ec.activate_component(good)
    ec.step(2)
    bad.fail["on_execute"] = RAISE
    counts = []
    for _ in range(5):
        ec.step()
        counts.append(good.count("on_execute"))
    assert counts == [3, 4, 5, 6, 7]
    assert ec.get_component_state(good) is S.ACTIVE
    assert ec.get_component_state(bad) is S.ERROR
    assert good.count("on_error") == 0
    ec.stop()


@pytest.fixture
def rtcf_errors(caplog, monkeypatch):
    """caplog capturing ERROR records of the rtcf loggers (even if logging was configured
    with propagate off by another test)."""
    monkeypatch.setattr(logging.getLogger("rtcf"), "propagate", True)
    caplog.set_level(logging.ERROR, logger="rtcf")
    return caplog


def test_the_error_traceback_is_logged_once_not_every_cycle(make_spy, drive, rtcf_errors):
    spy = make_spy("noisy")
    d = drive(spy)
    d.activate()
    d.step()
    spy.fail["on_execute"] = RAISE
    spy.fail["on_error"] = RAISE         # even a failing on_error is not logged each cycle
    rtcf_errors.clear()
    d.step(20)
    assert d.state is S.ERROR
    errors = [r for r in rtcf_errors.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1, [r.getMessage() for r in errors]
    text = rtcf_errors.text
    assert "on_execute" in text and "Traceback" in text
    assert "SpyFailure" in text and "noisy: on_execute fails on purpose" in text
    # a new episode (after reset and a new failure) is logged again, once
    spy.fail.clear()
    d.reset()
    d.step()
    d.activate()
    d.step()
    spy.fail["on_execute"] = False
    rtcf_errors.clear()
    d.step(10)
    errors = [r for r in rtcf_errors.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1
    assert "returned False" in errors[0].getMessage()


# -- stop, finalize -----------------------------------------------------------------------------

def test_ec_stop_deactivates_active_members_then_shuts_down(make_spy):
    journal: list = []
    ec = SteppedEC(100.0, name="stop")
    a, b = make_spy("a", journal=journal), make_spy("b", journal=journal)
    ec.add_component(a)
    ec.add_component(b)
    ec.start()
    ec.activate_component(a)
    ec.step(2)
    journal.clear()
    assert ec.stop() == ReturnCode.RTC_OK
    assert ("a", "on_deactivated", 0) in journal
    assert journal.index(("a", "on_deactivated", 0)) < journal.index(("a", "on_shutdown", 0))
    # the first member owns the EC (handle 0); the second participates (1000..)
    assert ec.handle_of(b) == 1000
    assert ("b", "on_shutdown", 1000) in journal
    assert not any(n == "b" and h == "on_deactivated" for n, h, _ in journal)
    assert len(journal) == 3
    assert not ec.is_running()
    assert ec.get_component_state(a) is S.INACTIVE
    assert ec.stop() == ReturnCode.PRECONDITION_NOT_MET


def test_finalize_runs_on_finalize_once(make_spy):
    spy = make_spy("fin")
    d = Direct(spy)
    d.activate()
    d.step(2)
    spy.clear()
    spy.finalize()
    spy.finalize()
    assert spy.count("on_finalize") == 1
    assert spy.count("on_deactivated") == 1 and spy.count("on_shutdown") == 1
    assert spy.hooks()[-1] == "on_finalize"
    assert d.ec.members() == []
    assert spy.ecs == [] and spy.finalized
    d.step(2)
    assert spy.count("on_execute") == 0
    d.close()


def test_harness_close_shuts_down_and_finalizes(make_spy):
    spy = make_spy("hc")
    h = Harness(spy)
    h.activate()
    spy.clear()
    h.close()
    assert spy.hooks() == ["on_deactivated", "on_shutdown", "on_finalize"]


def test_on_finalize_failure_is_logged_not_raised(make_spy, rtcf_errors):
    spy = make_spy("ff", fail={"on_finalize": RAISE})
    spy.finalize()
    assert spy.count("on_finalize") == 1
    assert "on_finalize" in rtcf_errors.text


# -- several ECs -----------------------------------------------------------------------------------

def test_a_component_in_two_ecs_has_independent_states(make_spy):
    spy = make_spy("shared")
    ec1, ec2 = SteppedEC(100.0, name="one"), SteppedEC(50.0, name="two")
    assert ec1.add_component(spy) == 0
    assert ec2.add_component(spy) >= 1000
    id2 = ec2.handle_of(spy)
    assert ec1.handle_of(spy) == 0
    ec1.start()
    ec2.start()
    assert spy.calls[-2:] == [("on_startup", 0), ("on_startup", id2)]
    ec1.activate_component(spy)
    ec1.step(2)
    ec2.step(2)
    assert spy.state_in(ec1) is S.ACTIVE and spy.state_in(ec2) is S.INACTIVE
    assert spy.count("on_execute", 0) == 2 and spy.count("on_execute", id2) == 0

    def fail_in_second(comp, ec):
        if ec.id == id2:
            raise RuntimeError("only in the second EC")
    spy.actions["on_execute"] = fail_in_second
    ec2.activate_component(spy)
    ec2.step(3)
    ec1.step(3)
    assert spy.state_in(ec2) is S.ERROR
    assert spy.state_in(ec1) is S.ACTIVE
    assert spy.count("on_aborting", id2) == 1 and spy.count("on_aborting", 0) == 0
    assert spy.count("on_execute", 0) == 5
    assert spy.count("on_error", 0) == 0
    ec1.stop()
    ec2.stop()


# -- parameters --------------------------------------------------------------------------------------

@pytest.fixture
def param_spy(make_spy, spy_class):
    cls = spy_class("ParamSpy", gain=Param(float, 1.0, bounds=(0, 10)),
                    mode=Param(str, "a", choices=("a", "b")))
    spy = make_spy("p", cls=cls)
    spy.seen = []          # (hook, gain) as the hooks saw it
    for hook in ("on_activated", "on_execute", "on_state_update"):
        spy.actions[hook] = lambda c, ec, hook=hook: c.seen.append((hook, c.gain))
    spy.changed = []
    spy.on_params_changed = spy.changed.append
    return spy


def test_staged_param_is_visible_only_after_on_state_update(param_spy, drive):
    d = drive(param_spy)
    d.activate()
    d.step()
    param_spy.seen.clear()
    param_spy.set_param("gain", 2.5)
    assert param_spy.gain == 1.0            # staged, not live
    d.step()
    assert param_spy.seen == [("on_execute", 1.0), ("on_state_update", 1.0)]
    assert param_spy.gain == 2.5            # live after on_state_update
    assert param_spy.changed == [{"gain"}]
    d.step()
    assert param_spy.seen[-2:] == [("on_execute", 2.5), ("on_state_update", 2.5)]


def test_param_set_inside_on_execute_is_applied_after_that_cycle(param_spy, drive):
    d = drive(param_spy)
    d.activate()
    d.step()
    param_spy.seen.clear()

    def set_in_cycle(c, ec):
        c.seen.append(("on_execute", c.gain))
        if c.gain == 1.0:
            c.set_param("gain", 3.0)
    param_spy.actions["on_execute"] = set_in_cycle
    d.step(2)
    assert param_spy.seen == [("on_execute", 1.0), ("on_state_update", 1.0),
                              ("on_execute", 3.0), ("on_state_update", 3.0)]


def test_param_set_while_inactive_becomes_live_at_activation(param_spy, drive):
    d = drive(param_spy)
    param_spy.set_param("gain", 4.0)
    d.step(3)
    assert param_spy.gain == 1.0
    assert param_spy.seen == []
    d.activate()
    d.step()
    assert param_spy.seen[0] == ("on_activated", 4.0)
    assert param_spy.gain == 4.0


def test_bad_set_param_raises_and_changes_nothing(param_spy, drive):
    d = drive(param_spy)
    d.activate()
    d.step()
    store = param_spy.params
    before = store.snapshot()
    for name, value in (("gain", 11.0), ("gain", "abc"), ("mode", "z"), ("nope", 1)):
        with pytest.raises(ParamError) as info:
            param_spy.set_param(name, value)
        assert name in str(info.value)
    assert not store.has_staged
    assert store.snapshot() == before
    d.step(2)
    assert param_spy.gain == 1.0 and param_spy.mode == "a"
    assert param_spy.changed == []


# -- commands into the EC thread -------------------------------------------------------------------

def test_post_runs_at_the_next_tick_in_the_ec_thread(make_spy):
    spy = make_spy("cmd")
    h = Harness(spy)
    h.activate()
    spy.clear()
    ran = []

    def command():
        ran.append((h.ec.in_ec_thread(), h.ec.cycles))
        spy.calls.append(("command", None))
        return 42
    fut = spy.post(command)
    assert not fut.done() and ran == []
    cycle = h.ec.cycles
    h.step()
    assert fut.result(0) == 42
    assert ran == [(True, cycle)]
    assert spy.hooks() == ["command", "on_execute", "on_state_update"]
    # a failing command reaches the caller and leaves the component Active
    fut = spy.post(lambda: 1 / 0)
    h.step()
    with pytest.raises(ZeroDivisionError):
        fut.result(0)
    assert h.state is S.ACTIVE
    h.close()


def test_call_on_a_stepped_ec_runs_between_ticks(make_spy):
    """Nobody may ever tick a stepped EC again, so call() from another thread runs the
    command at once, under the tick lock (never in the middle of a cycle)."""
    spy = make_spy("caller")
    h = Harness(spy)
    box = {}
    in_tick = threading.Event()
    release = threading.Event()
    spy.actions["on_execute"] = lambda c, ec: (in_tick.set(), release.wait(5.0))
    h.activate(step=False)
    ticker = threading.Thread(target=h.step)
    ticker.start()
    assert in_tick.wait(3.0)

    def client():
        box["during_tick"] = not release.is_set()
        box["result"] = spy.call(lambda: release.is_set(), timeout=5.0)
    t = threading.Thread(target=client)
    t.start()
    t.join(0.2)
    assert t.is_alive()                  # blocked: a cycle is running
    release.set()
    ticker.join(5.0)
    t.join(5.0)
    assert box == {"during_tick": True, "result": True}
    h.close()


def test_call_inside_a_hook_runs_at_once(make_spy):
    spy = make_spy("inner")
    h = Harness(spy)
    out = []
    spy.actions["on_execute"] = lambda c, ec: out.append(c.call(lambda: ec.cycle))
    h.activate()
    assert out == [h.ec.cycles - 1]
    h.close()


def test_post_without_a_running_ec_runs_at_once(make_spy):
    spy = make_spy("alone")
    fut = spy.post(lambda: "now")
    assert fut.done() and fut.result() == "now"
    ec = SteppedEC(100.0)
    ec.add_component(spy)        # not started: still at once
    assert spy.post(lambda: 7).result(0) == 7


def test_hooks_cover_every_rtc_action():
    assert set(HOOKS) == {
        "on_initialize", "on_finalize", "on_startup", "on_shutdown", "on_activated",
        "on_deactivated", "on_execute", "on_state_update", "on_aborting", "on_error",
        "on_reset", "on_rate_changed"}


def test_exit_runs_on_finalize_before_on_shutdown(make_spy):
    """OpenRTM-aist's rtexit order (spec openrtm_interop §3): onDeactivated, onFinalize,
    then onShutdown; the manager's own shutdown keeps on_shutdown before on_finalize."""
    spy = make_spy("leaving")
    h = Harness(spy)
    h.activate()
    spy.calls.clear()
    spy.exit()
    assert [c[0] for c in spy.calls] == ["on_deactivated", "on_finalize", "on_shutdown"]
