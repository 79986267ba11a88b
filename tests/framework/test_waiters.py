"""rtcf.waiters.CycleWaiters: completions of blocking calls, resolved in the EC thread."""

from __future__ import annotations

import logging
import threading
from typing import Any

import pytest

from rtcf import Component, CycleWaiters
from rtcf.testing import Harness


class Counter(Component):
    """Counts its cycles; owns a CycleWaiters as a component with blocking calls does."""

    def on_initialize(self) -> None:
        self.cycles = 0
        self.seen_at_resolve: list[int] = []
        self.waiters = CycleWaiters(self)

    def on_activated(self, ec: Any) -> None:
        self.waiters.start()

    def on_deactivated(self, ec: Any) -> None:
        self.waiters.release()

    def on_aborting(self, ec: Any) -> None:
        self.waiters.release()

    def on_finalize(self) -> None:
        self.waiters.release()

    def on_execute(self, ec: Any) -> None:
        self.cycles += 1
        self.waiters.check()


@pytest.fixture
def h():
    hh = Harness(Counter, rate=100.0)
    hh.activate()
    yield hh
    hh.close()


def after(h: Harness, n: int):
    return lambda: h.comp.cycles >= n


class Stepper:
    """Steps a harness from a thread while the test's thread blocks in wait()."""

    def __init__(self, h: Harness, until: Any):
        self.h, self.until, self.stop = h, until, threading.Event()
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _run(self) -> None:
        while not self.stop.is_set() and not self.until():
            self.h.step()

    def join(self) -> None:
        self.stop.set()
        self.t.join(60.0)


def test_resolved_at_the_end_of_the_first_cycle_where_the_predicate_holds(h):
    start = h.comp.cycles
    done = h.comp.waiters.when(after(h, start + 3))
    h.step(2)
    assert not done.done() and len(h.comp.waiters) == 1
    h.step()
    assert done.result(0) is True
    assert h.comp.cycles == start + 3 and len(h.comp.waiters) == 0


def test_a_predicate_holding_already_resolves_at_registration(h):
    done = h.comp.waiters.when(lambda: True)
    assert done.result(0) is True and len(h.comp.waiters) == 0


def test_several_waiters_resolve_each_in_its_own_cycle(h):
    start = h.comp.cycles
    first, second = (h.comp.waiters.when(after(h, start + k)) for k in (1, 2))
    h.step()
    assert first.done() and not second.done()
    h.step()
    assert second.result(0) is True


def test_a_cancelled_completion_is_dropped_and_never_evaluated_again(h):
    calls = []

    def never() -> bool:
        calls.append(1)
        return False
    done = h.comp.waiters.when(never)
    assert len(h.comp.waiters) == 1 and len(calls) == 1
    assert done.cancel()
    h.step()
    assert len(h.comp.waiters) == 0 and len(calls) == 1
    h.step(3)
    assert len(calls) == 1


@pytest.mark.parametrize("how", ["deactivate", "finalize"])
def test_pending_completions_are_released_with_false(h, how):
    done = h.comp.waiters.when(lambda: False)
    assert h.comp.waiters.executing()
    if how == "deactivate":
        h.deactivate()
    else:
        h.comp.finalize()
    assert done.result(0) is False
    assert len(h.comp.waiters) == 0 and not h.comp.waiters.executing()


def test_executing_only_while_active_in_a_running_context():
    hh = Harness(Counter, rate=100.0)
    try:
        assert not hh.comp.waiters.executing()              # inactive
        hh.activate()
        assert hh.comp.waiters.executing()
        hh.ec.stop()
        assert not hh.comp.waiters.executing()              # its context stopped
    finally:
        hh.close()


def test_in_simulation_time_registration_happens_at_once_in_the_caller_s_thread(h):
    threads = []

    def pred() -> bool:
        threads.append(threading.get_ident())
        return False
    h.comp.waiters.when(pred)
    # registered between two ticks: no tick may come to run a posted command
    assert threads == [threading.get_ident()] and len(h.comp.waiters) == 1


def test_on_a_wall_clock_registration_is_posted_to_the_ec_thread(periodic_ec, wait_for):
    comp = Counter("wall")
    comp.initialize()
    ec = periodic_ec(200.0, name="wall")
    ec.add_component(comp, owned=True)
    ec.start()
    try:
        ec.activate_component(comp)
        assert wait_for(comp.waiters.executing)
        ec_thread, threads = [], []

        def on_ec(_: Any) -> None:
            ec_thread.append(threading.get_ident())
        comp.post(lambda: on_ec(None)).result(30.0)
        target = comp.cycles + 2

        def pred() -> bool:
            threads.append(threading.get_ident())
            return comp.cycles >= target
        done = comp.waiters.when(pred)
        assert done.result(30.0) is True
        assert threads and set(threads) == set(ec_thread)
        assert comp.cycles >= target
    finally:
        ec.stop()
        comp.finalize()


def test_wait_returns_true_once_the_predicate_holds(h):
    target = h.comp.cycles + 5
    stepper = Stepper(h, after(h, target))
    try:
        assert h.comp.waiters.wait(after(h, target)) is True
    finally:
        stepper.join()
    assert h.comp.cycles >= target


def test_wait_with_a_short_timeout_is_answered_by_the_next_cycle(h):
    assert h.comp.waiters.wait(lambda: True, timeout=0.0) is True


def test_wait_times_out_with_none_and_leaves_nothing_behind(h):
    assert h.comp.waiters.wait(lambda: False, timeout=0.0) is None
    h.step()
    assert len(h.comp.waiters) == 0


def test_wait_when_not_executing_answers_at_once(h, caplog):
    h.deactivate()
    assert h.comp.waiters.wait(lambda: True, op="waitX") is True
    with caplog.at_level(logging.WARNING):
        assert h.comp.waiters.wait(lambda: False, op="waitX") is False
    assert "waitX: Counter0 is not executing: not waiting" in caplog.text


def test_wait_ends_with_false_when_the_component_is_deactivated_meanwhile(h, caplog,
                                                                         wait_for):
    got = []
    t = threading.Thread(target=lambda: got.append(h.comp.waiters.wait(lambda: False,
                                                                       op="waitY")))
    with caplog.at_level(logging.WARNING):
        t.start()
        assert wait_for(lambda: len(h.comp.waiters) == 1)
        h.deactivate()
        t.join(60.0)
    assert got == [False]
    assert "waitY: Counter0 stopped executing while waiting" in caplog.text
