"""Completions for a component's blocking service calls, resolved in its EC thread.

A servant's blocking call (hrpsys's waitInterpolation, waitFootSteps, NAOqi's wait) waits
for a condition on the component's state, which only the EC thread touches. It registers a
predicate with the component's :class:`CycleWaiters` and blocks on the returned Future; the
EC thread evaluates the predicates at the end of each cycle and resolves the Future in the
first cycle where its predicate holds. No lock is shared with the cycle, and the wait ends
(False) when the component stops executing.

The component owns one and calls it from its hooks::

    def on_initialize(self):  self.waiters = CycleWaiters(self)
    def on_activated(self, ec):  self.waiters.start()
    def on_execute(self, ec):  ...; self.waiters.check()          # last
    def on_deactivated(self, ec):  self.waiters.release()         # on_aborting, on_finalize too

and its servant waits with ``comp.waiters.wait(pred, timeout, op=...)``.
"""

from __future__ import annotations

import math
import time
from concurrent.futures import Future, TimeoutError as FutureTimeout
from typing import TYPE_CHECKING, Callable

from .lifecycle import LifeCycleState

if TYPE_CHECKING:
    from .component import Component

POLL = 0.1          # [s] how often a waiting call checks that the component still executes
CALL_TIMEOUT = 5.0  # [s] a predicate evaluated now runs at the next cycle


class CycleWaiters:
    """The pending completions of one component (see the module doc)."""

    def __init__(self, comp: "Component"):
        self._comp = comp
        self._pending: list[tuple[Callable[[], bool], Future]] = []
        self._executing = False

    def __len__(self) -> int:
        """How many completions are pending. Runs in: any thread (a snapshot)."""
        return len(self._pending)

    # -- the component's hooks --------------------------------------------------------------
    def start(self) -> None:
        """The component executes from now (its on_activated succeeded). Runs in: EC
        thread."""
        self._executing = True

    def check(self) -> None:
        """Resolve (True) the completions whose predicate holds now; drop the cancelled
        ones. Call it last in on_execute, so that a waiter sees the whole cycle's effect.
        Runs in: EC thread."""
        if not self._pending:
            return
        keep = []
        for pred, done in self._pending:
            if done.cancelled():
                continue
            if pred():
                done.set_result(True)
            else:
                keep.append((pred, done))
        self._pending = keep

    def release(self) -> None:
        """The component stops executing: every pending completion is resolved with False.
        Call it from on_deactivated, on_aborting and on_finalize. Runs in: EC thread, or the
        thread that finalises the component."""
        self._executing = False
        pending, self._pending = self._pending, []
        for _, done in pending:
            if not done.done():
                done.set_result(False)

    # -- the servant's side ------------------------------------------------------------------
    def executing(self) -> bool:
        """Active (between on_activated and its deactivation) in a running execution
        context. Runs in: any thread."""
        ec = self._comp.primary_ec
        return (self._executing and ec is not None and ec.is_running()
                and ec.get_component_state(self._comp) is LifeCycleState.ACTIVE)

    def when(self, pred: Callable[[], bool]) -> Future:
        """A Future resolved (True) in the EC thread at the end of the first cycle where
        ``pred()`` holds, checked after the commands already posted (at once if it holds
        when registered); False if the component stops executing first. Cancel it to stop
        waiting. On a stepped EC (a manual clock, simulation time) it is registered now,
        between two ticks, since no tick may come to run a posted command; else it is posted
        to the EC thread. Runs in: any thread."""
        done: Future = Future()
        ec = self._comp.primary_ec
        if ec is not None and not ec.clock_is_real():
            with ec.exclusive():
                self._register(pred, done)
        else:
            self._comp.post(lambda: self._register(pred, done))
        return done

    def wait(self, pred: Callable[[], bool], timeout: float = math.inf,
             op: str | None = None) -> bool | None:
        """Block until ``pred`` holds in the EC thread: True. When the component is not
        executing nothing will change: True if ``pred`` holds now, else False at once.
        False too when the component stops executing while waiting; None when ``pred``
        still does not hold after ``timeout`` [s, monotonic]. A timeout shorter than a poll
        is answered by the next cycle. ``op`` names the call in the warning logged when it
        returns False (None: no warning). Runs in: any thread but the EC thread (an ORB
        thread)."""
        comp = self._comp
        if not self.executing():
            if self._holds_now(pred):
                return True
            if op is not None:
                comp.log.warning("%s: %s is not executing: not waiting", op,
                                 comp.instance_name)
            return False
        end = time.monotonic() + timeout
        if timeout < POLL and self._holds_now(pred):
            return True
        done = self.when(pred)
        while True:
            try:
                if done.result(timeout=max(0.0, min(POLL, end - time.monotonic()))):
                    return True
                break                                   # released: deactivated, finalised
            except FutureTimeout:
                if not self.executing():
                    done.cancel()
                    break
                if time.monotonic() >= end:
                    done.cancel()
                    return None
        if op is not None:
            comp.log.warning("%s: %s stopped executing while waiting", op, comp.instance_name)
        return False

    def _holds_now(self, pred: Callable[[], bool]) -> bool:
        """``pred()`` evaluated in the EC thread (False if no cycle runs it in time)."""
        try:
            return bool(self._comp.call(pred, timeout=CALL_TIMEOUT))
        except FutureTimeout:
            return False

    def _register(self, pred: Callable[[], bool], done: Future) -> None:
        if done.cancelled():            # the caller gave up before the EC thread came
            return
        if pred():
            done.set_result(True)
        else:
            self._pending.append((pred, done))


__all__ = ["CycleWaiters", "POLL"]
