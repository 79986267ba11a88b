"""Shared helpers of the framework tests: a spy component that records its hooks and can be
told to fail on purpose, a bounded poller, and execution contexts that are always stopped."""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

import pytest

from rtcf.component import Component
from rtcf.execution import PeriodicEC, SteppedEC
from rtcf.lifecycle import HOOKS, ReturnCode
from rtcf.params import Param

# How a spy fails in a hook: raise, return False, or return ReturnCode.RTC_ERROR.
RAISE = "raise"
FAIL_MODES = (RAISE, False, ReturnCode.RTC_ERROR)


class SpyFailure(RuntimeError):
    """What a spy raises when told to fail by raising."""


class SpyBase(Component):
    """Records every hook call as (hook, ec_id) in ``calls`` (ec_id is None for
    on_initialize / on_finalize) and, when a shared ``journal`` list is given, also appends
    (instance_name, hook, ec_id) there. ``fail[hook] = mode`` makes that hook fail;
    ``actions[hook] = fn(comp, ec)`` runs a probe inside the hook (ec is None for
    on_initialize / on_finalize)."""

    def __init__(self, name: str | None = None, fail: dict[str, Any] | None = None,
                 journal: list | None = None):
        super().__init__(name)
        self.calls: list[tuple[str, int | None]] = []
        self.journal = journal
        self.fail: dict[str, Any] = dict(fail or {})
        self.actions: dict[str, Callable[[Any, Any], Any]] = {}
        self.threads: dict[str, int] = {}     # hook -> ident of the last thread running it

    # -- helpers for the tests ---------------------------------------------------------------
    def hooks(self, ec_id: int | None | str = "any") -> list[str]:
        """Hook names in call order (optionally only those with this ec id)."""
        return [h for h, i in self.calls if ec_id == "any" or i == ec_id]

    def count(self, hook: str, ec_id: int | None | str = "any") -> int:
        return self.hooks(ec_id).count(hook)

    def clear(self) -> None:
        self.calls.clear()

    # -- the recording machinery -------------------------------------------------------------
    def _hook(self, hook: str, ec: Any) -> Any:
        ec_id = None if ec is None else ec.id
        self.calls.append((hook, ec_id))
        self.threads[hook] = threading.get_ident()
        if self.journal is not None:
            self.journal.append((self.instance_name, hook, ec_id))
        action = self.actions.get(hook)
        if action is not None:
            action(self, ec)
        if hook in self.fail:
            mode = self.fail[hook]
            if mode == RAISE:
                raise SpyFailure(f"{self.instance_name}: {hook} fails on purpose")
            return mode
        return None

    def on_initialize(self) -> Any:
        return self._hook("on_initialize", None)

    def on_finalize(self) -> Any:
        return self._hook("on_finalize", None)

    def on_startup(self, ec: Any) -> Any:
        return self._hook("on_startup", ec)

    def on_shutdown(self, ec: Any) -> Any:
        return self._hook("on_shutdown", ec)

    def on_activated(self, ec: Any) -> Any:
        return self._hook("on_activated", ec)

    def on_deactivated(self, ec: Any) -> Any:
        return self._hook("on_deactivated", ec)

    def on_execute(self, ec: Any) -> Any:
        return self._hook("on_execute", ec)

    def on_state_update(self, ec: Any) -> Any:
        return self._hook("on_state_update", ec)

    def on_aborting(self, ec: Any) -> Any:
        return self._hook("on_aborting", ec)

    def on_error(self, ec: Any) -> Any:
        return self._hook("on_error", ec)

    def on_reset(self, ec: Any) -> Any:
        return self._hook("on_reset", ec)

    def on_rate_changed(self, ec: Any) -> Any:
        return self._hook("on_rate_changed", ec)


assert set(HOOKS) <= set(vars(SpyBase)), "SpyBase must override every hook"


def make_spy_class(type_name: str = "Spy", **params: Param) -> type[SpyBase]:
    """A SpyBase subclass with the given parameters declared at class level."""
    return type(type_name, (SpyBase,), {"type_name": type_name, **params})


@pytest.fixture
def spy_class() -> Callable[..., type[SpyBase]]:
    """Factory of spy classes: ``spy_class(gain=Param(float, 1.0))``."""
    return make_spy_class


@pytest.fixture
def make_spy() -> Callable[..., SpyBase]:
    """Factory of spy instances, initialised unless ``initialize=False``:
    ``make_spy("a", fail={"on_execute": "raise"}, journal=shared, cls=MySpy)``."""

    def factory(name: str = "spy", fail: dict[str, Any] | None = None,
                journal: list | None = None, cls: type[SpyBase] | None = None,
                initialize: bool = True) -> SpyBase:
        comp = (cls or SpyBase)(name, fail=fail, journal=journal)
        if initialize:
            comp.initialize()
        return comp
    return factory


def poll(predicate: Callable[[], Any], timeout: float = 3.0, interval: float = 0.002) -> bool:
    """Wait until predicate() is true (bounded: ``timeout`` seconds, never less than 30, as
    a loaded machine is slow and a passing test never waits the bound out); return its
    final truth."""
    deadline = time.monotonic() + max(timeout, 30.0)
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())


@pytest.fixture
def wait_for() -> Callable[..., bool]:
    return poll


@pytest.fixture
def stepped_ec() -> Callable[..., SteppedEC]:
    """Factory of SteppedECs, stopped at teardown."""
    made: list[SteppedEC] = []

    def factory(rate: float = 100.0, name: str = "stepped", **kw: Any) -> SteppedEC:
        ec = SteppedEC(rate, name=name, **kw)
        made.append(ec)
        return ec
    yield factory
    for ec in made:
        if ec.is_running():
            ec.stop()


@pytest.fixture
def periodic_ec() -> Callable[..., PeriodicEC]:
    """Factory of PeriodicECs, stopped (thread joined) at teardown."""
    made: list[PeriodicEC] = []

    def factory(rate: float = 200.0, name: str = "periodic", **kw: Any) -> PeriodicEC:
        ec = PeriodicEC(rate, name=name, **kw)
        made.append(ec)
        return ec
    yield factory
    for ec in made:
        if ec.is_running():
            ec.stop()


class SteppingClock:
    """A wall clock stand-in that moves ``step`` seconds at every reading: not a ManualClock,
    so a pacer or a time base spins on it, and a spin ends after a known number of
    readings (``reads``)."""

    def __init__(self, step: float = 1e-6, t: float = 0.0):
        self.t = t
        self.step = step
        self.reads = 0

    def now(self) -> float:
        self.t += self.step
        self.reads += 1
        return self.t


@pytest.fixture
def stepping_clock() -> type[SteppingClock]:
    """The SteppingClock class: ``stepping_clock(1e-6)``."""
    return SteppingClock
