"""The controller manager core (pr2_controller_manager, spec 5.2 and 5.3), without rtcf/ORB.

Two sides, as in PR2's ControllerManager:

* non-real-time (service threads): ``load`` / ``unload`` construct, initialise and schedule
  in the caller's thread, then hand the new controller tuple to the real-time side through
  ``run_rt`` (a callable that runs a function between two ticks in the EC thread and returns
  its result: ``Component.call`` in the RT component, a plain call in tests).
  ``prepare_switch`` validates a switch; ``begin_switch`` (between ticks) queues it for the
  real-time loop. One non-real-time operation at a time (``admin`` lock, never taken by the
  EC thread).
* real-time (EC thread): ``update(time)`` once per tick.

One tick (spec 5.2, with the project's tick labelling):

1. commands to NaN (PR2 zeroCommands), ``hardware.read`` (PR2 propagateActuatorPosition...);
   if ``hardware.halted`` went from True to False (motors enabled again), ``stopping`` then
   ``starting`` of every running controller (PR2's restart after a halt);
2. if a switch's stop half ran at the end of the previous tick: ``starting()`` of every
   controller to start, in request order; the switch is complete (``on_done``);
3. ``update(time, period)`` of every RUNNING controller in schedule order, each timed; a
   controller slower than ``overrun_limit`` gets an overrun counted; one that raises is
   stopped (``stopping``) and reported (``on_fault``), the others go on;
4. ``hardware.write``;
5. if a switch was queued before this tick: ``stopping()`` of every controller to stop, in
   request order. Its starts run at step 2 of the next tick.

So stop A / start B gives ``[N] A.update, A.stopping | [N+1] B.starting, B.update``: no tick
runs both, starting is in the tick of the first update just before it, stopping in the tick of
the last update just after it, and nothing runs between the two halves (spec 5.2 PD).

The measured period passed to update is the difference between this tick's time and the
previous one's (the nominal period on the first tick).

Facts (the double-buffered controller list handed to the real-time loop, the order of one
update, the switch performed by the loop while the caller waits, the load / unload checks)
follow PR2/pr2_mechanism pr2_controller_manager/src/controller_manager.cpp; the code is an
independent Python design (a command queue instead of spinning on shared flags).
"""

from __future__ import annotations

import enum
import threading
import time as _time
import traceback
from typing import Any, Callable, Iterable, Mapping, Sequence

from .base import Controller, ControllerError, ControllerState
from .registry import resolve_controller
from .robot import Hardware, RobotState
from .scheduler import schedule_controllers

__all__ = ["ControllerManagerCore", "Strictness", "SwitchRequest", "ControllerStats"]

_RUNNING = ControllerState.RUNNING
_INIT = ControllerState.INITIALIZED


class Strictness(enum.IntEnum):
    """switchController strictness (pr2_mechanism_msgs/SwitchController)."""

    UNSPECIFIED = 0     # PR2: treated as BEST_EFFORT with a warning
    BEST_EFFORT = 1     # unknown names are skipped
    STRICT = 2          # any unknown name fails the whole switch


class ControllerStats:
    """Per-controller timing [s] and events, written only by the EC thread."""

    __slots__ = ("updates", "last", "max", "total", "overruns", "last_overrun_time",
                 "faults", "last_error")

    def __init__(self) -> None:
        self.updates = 0
        self.last = 0.0
        self.max = 0.0
        self.total = 0.0
        self.overruns = 0
        self.last_overrun_time = 0.0
        self.faults = 0
        self.last_error = ""

    @property
    def mean(self) -> float:
        return self.total / self.updates if self.updates else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"updates": self.updates, "last": self.last, "max": self.max,
                "mean": self.mean, "overruns": self.overruns,
                "last_overrun_time": self.last_overrun_time, "faults": self.faults,
                "last_error": self.last_error}


class Slot:
    """A loaded controller in the manager: PR2's ControllerSpec."""

    __slots__ = ("name", "type_name", "controller", "stats", "loaded")

    def __init__(self, name: str, type_name: str, controller: Controller):
        self.name = name
        self.type_name = type_name
        self.controller = controller
        self.stats = ControllerStats()
        self.loaded = True


class SwitchRequest:
    """A validated switch. ``phase``: QUEUED -> STOPPED (stop half done) -> DONE."""

    QUEUED, STOPPED, DONE = 0, 1, 2

    def __init__(self, start: Sequence[Slot], stop: Sequence[Slot], skipped: Sequence[str],
                 strictness: Strictness):
        self.start = tuple(start)
        self.stop = tuple(stop)
        self.skipped = tuple(skipped)
        self.strictness = strictness
        self.phase = self.QUEUED
        self.aborted = False                 # dropped by stop_all (manager deactivated)
        self.stop_time: float | None = None
        self.start_time: float | None = None
        self.on_done: Callable[["SwitchRequest"], None] | None = None

    @property
    def done(self) -> bool:
        return self.phase == self.DONE


def _direct(fn: Callable[[], Any]) -> Any:
    return fn()


def _check_names(names: Any, what: str) -> list[str]:
    if isinstance(names, str) or not isinstance(names, (list, tuple)):
        raise ControllerError(f"{what}: expected a list of controller names, got {names!r}")
    for n in names:
        if not isinstance(n, str) or not n:
            raise ControllerError(f"{what}: expected non-empty names, got {n!r}")
    return list(names)


class ControllerManagerCore:
    """Loads, schedules, switches and updates controllers over one RobotState.

    robot: the state/command arrays; hardware: read/written once per tick (None: the caller
    fills ``robot`` itself); period: nominal tick period [s]; overrun_limit: an update longer
    than this [s] counts as an overrun (PR2: 1 ms); load_path: extra import folders for
    dotted type names; timer: a monotonic clock [s] used only for statistics;
    on_fault(name, where, exc): called in the EC thread when a controller's update or
    starting raised and it was stopped (rare: it may log).
    """

    def __init__(self, robot: RobotState, hardware: Hardware | None = None,
                 period: float = 1e-3, overrun_limit: float = 1e-3,
                 load_path: Iterable[str] = (), timer: Callable[[], float] = _time.perf_counter,
                 on_fault: Callable[[str, str, BaseException], None] | None = None):
        if not period > 0:
            raise ControllerError(f"period: expected > 0 s, got {period!r}")
        if not overrun_limit > 0:
            raise ControllerError(f"overrun_limit: expected > 0 s, got {overrun_limit!r}")
        self.robot = robot
        self.hardware = hardware
        self.period = float(period)
        self.overrun_limit = float(overrun_limit)
        self.load_path = list(load_path)
        self.timer = timer
        self.on_fault = on_fault
        self.admin = threading.RLock()            # non-real-time callers only
        self._loaded: dict[str, Slot] = {}        # non-real-time view, in load order
        self._order: list[str] = []               # schedule, as names
        self._schedule: tuple[Slot, ...] = ()     # the real-time view
        self._switch: SwitchRequest | None = None
        self._last_time: float | None = None
        self._was_halted = False
        # manager statistics (EC thread)
        self.ticks = 0
        self.period_last = self.period
        self.period_min = float("inf")
        self.period_max = 0.0
        self.period_sum = 0.0
        self.overhead_last = 0.0
        self.overhead_max = 0.0
        self.overhead_sum = 0.0
        self.updates_last = 0.0
        self.switches = 0
        self.restarts = 0                          # halted -> enabled restarts

    # -- non-real-time: load / unload ----------------------------------------------------
    def controller_by_name(self, name: str) -> Controller | None:
        """ControllerProvider for get_controller: controllers loaded so far."""
        slot = self._loaded.get(name)
        return slot.controller if slot is not None else None

    def load(self, name: str, type_name: str | type[Controller],
             params: Mapping[str, Any] | None = None,
             run_rt: Callable[[Callable[[], Any]], Any] = _direct) -> Controller:
        """Construct, init and schedule a controller; it is INITIALIZED (not running).

        ControllerError (nothing changed) when: the name is empty or taken, the type is
        unknown, construction or init fails (False or an exception: the reason is in the
        message), or the schedule fails (cycle, missing AFTER_ME target).
        Runs in: a non-real-time thread (init may take any time).
        """
        if not isinstance(name, str) or not name.strip():
            raise ControllerError(f"loadController: name: expected a non-empty string, got "
                                  f"{name!r}")
        if params is not None and not isinstance(params, Mapping):
            raise ControllerError(f"loadController({name!r}): params: expected a mapping, "
                                  f"got {params!r}")
        with self.admin:
            if name in self._loaded:
                raise ControllerError(f"loadController: a controller named {name!r} is "
                                      f"already loaded")
            cls = type_name if isinstance(type_name, type) else \
                resolve_controller(type_name, self.load_path)
            tname = type_name if isinstance(type_name, str) else cls.type_name
            try:
                c = cls()
            except Exception as e:
                raise ControllerError(f"loadController({name!r}): constructing {tname} "
                                      f"raised {e!r}") from e
            if not isinstance(c, Controller):
                raise ControllerError(f"loadController({name!r}): {tname} is not a "
                                      f"Controller")
            c.name = name
            c._provider = self
            try:
                ok = c.init(self.robot, dict(params or {}))
            except Exception as e:
                why = str(e) if isinstance(e, ControllerError) else f"{type(e).__name__}: {e}"
                raise ControllerError(f"loadController({name!r}): init of {tname} failed: "
                                      f"{why}") from e
            if ok is False:                  # None counts as success (a bare return)
                raise ControllerError(f"loadController({name!r}): init of {tname} "
                                      f"returned false")
            links = {n: (s.controller.before_list, s.controller.after_list)
                     for n, s in self._loaded.items()}
            links[name] = (c.before_list, c.after_list)
            order = schedule_controllers(links)      # ControllerError names the cause
            c.state = _INIT
            slot = Slot(name, tname, c)
            loaded = dict(self._loaded)
            loaded[name] = slot
            run_rt(self._installer(tuple(loaded[n] for n in order)))
            self._loaded = loaded
            self._order = order
            return c

    def unload(self, name: str,
               run_rt: Callable[[Callable[[], Any]], Any] = _direct) -> None:
        """Remove a stopped controller. ControllerError (nothing changed) when it is
        unknown, RUNNING, or named in another controller's before/after list.
        Runs in: a non-real-time thread."""
        with self.admin:
            slot = self._loaded.get(name)
            if slot is None:
                raise ControllerError(f"unloadController: no controller named {name!r} is "
                                      f"loaded (loaded: {', '.join(self._loaded) or 'none'})")
            for other in self._loaded.values():
                c = other.controller
                if other is not slot and (name in c.before_list or name in c.after_list):
                    raise ControllerError(f"unloadController: {name!r} cannot be unloaded, "
                                          f"{other.name!r} depends on it (get_controller)")
            if slot.controller.state is _RUNNING:
                raise ControllerError(f"unloadController: {name!r} is running; stop it "
                                      f"first (switchController)")
            loaded = {n: s for n, s in self._loaded.items() if n != name}
            order = [n for n in self._order if n != name]
            running = run_rt(self._remover(slot, tuple(loaded[n] for n in order)))
            if running:      # started meanwhile (cannot happen under the admin lock)
                raise ControllerError(f"unloadController: {name!r} is running")
            self._loaded = loaded
            self._order = order

    def command(self, name: str, params: Mapping[str, Any] | None = None,
                run_rt: Callable[[Callable[[], Any]], Any] = _direct) -> None:
        """Hand a client command to controller ``name``: ``prepare_command`` here, then
        ``apply_command`` between two ticks. ControllerError when unknown or refused.
        Runs in: a non-real-time thread."""
        if params is not None and not isinstance(params, Mapping):
            raise ControllerError(f"commandController({name!r}): params: expected a "
                                  f"mapping, got {params!r}")
        with self.admin:
            c = self.slot(name).controller
            try:
                prepared = c.prepare_command(dict(params or {}))
            except ControllerError:
                raise
            except Exception as e:
                raise ControllerError(f"commandController({name!r}): {type(e).__name__}: "
                                      f"{e}") from e
            run_rt(lambda: c.apply_command(prepared))

    def _installer(self, schedule: tuple[Slot, ...]) -> Callable[[], None]:
        def install() -> None:
            self._schedule = schedule
        return install

    def _remover(self, slot: Slot, schedule: tuple[Slot, ...]) -> Callable[[], bool]:
        def remove() -> bool:
            if slot.controller.state is _RUNNING:
                return True
            self._schedule = schedule
            slot.loaded = False
            return False
        return remove

    # -- non-real-time: switch -----------------------------------------------------------
    def prepare_switch(self, start: Sequence[str], stop: Sequence[str],
                       strictness: int = Strictness.BEST_EFFORT) -> SwitchRequest:
        """Validate a switch (PR2 switchController before it posts the request).

        strictness 0 means BEST_EFFORT (PR2 warns; the request's ``strictness`` shows it),
        BEST_EFFORT skips unknown names (listed in ``skipped``), STRICT refuses any unknown
        name. A name may be in both lists (a restart: stopping, then starting).
        Runs in: a non-real-time thread, holding ``admin`` until the switch is done.
        """
        start = _check_names(start, "switchController: start")
        stop = _check_names(stop, "switchController: stop")
        try:
            level = Strictness(int(strictness))
        except (TypeError, ValueError):
            raise ControllerError(f"switchController: strictness: expected 0, 1 "
                                  f"(BEST_EFFORT) or 2 (STRICT), got {strictness!r}") from None
        missing = [n for n in stop + start if n not in self._loaded]
        if missing and level is Strictness.STRICT:
            raise ControllerError(f"switchController (STRICT): no controller named "
                                  f"{', '.join(map(repr, missing))} is loaded")
        return SwitchRequest([self._loaded[n] for n in start if n in self._loaded],
                             [self._loaded[n] for n in stop if n in self._loaded],
                             missing, level)

    def begin_switch(self, req: SwitchRequest) -> None:
        """Queue ``req`` for the real-time loop: its stop half runs at the end of the next
        tick, its start half at the beginning of the one after. Runs in: EC thread, between
        ticks."""
        if self._switch is not None:
            raise ControllerError("switchController: another switch is in progress")
        self._switch = req

    def request_switch(self, start: Sequence[str], stop: Sequence[str],
                       strictness: int = Strictness.BEST_EFFORT) -> SwitchRequest:
        """prepare_switch + begin_switch, for a caller that owns the loop (tests, stepped
        simulation): the switch is done after two more ticks."""
        req = self.prepare_switch(start, stop, strictness)
        self.begin_switch(req)
        return req

    @property
    def switch_pending(self) -> bool:
        return self._switch is not None

    # -- queries (any thread: snapshots) ---------------------------------------------------
    def list_controllers(self) -> list[tuple[str, str, str, int]]:
        """(name, type, state, schedule position) in schedule order. Waits for a load or
        unload in progress (the admin lock; never taken by the EC thread)."""
        with self.admin:
            loaded, order = self._loaded, self._order
        return [(n, loaded[n].type_name, loaded[n].controller.state.name.lower(), i)
                for i, n in enumerate(order)]

    def slot(self, name: str) -> Slot:
        try:
            return self._loaded[name]
        except KeyError:
            raise ControllerError(f"no controller named {name!r} is loaded") from None

    @property
    def schedule(self) -> list[str]:
        return list(self._order)

    def statistics(self) -> dict[str, Any]:
        n = self.ticks
        return {
            "ticks": n, "switches": self.switches, "restarts": self.restarts,
            "period_last": self.period_last, "period_min": self.period_min if n > 1 else 0.0,
            "period_max": self.period_max,
            "period_mean": self.period_sum / (n - 1) if n > 1 else self.period,
            "overhead_last": self.overhead_last, "overhead_max": self.overhead_max,
            "overhead_mean": self.overhead_sum / n if n else 0.0,
            "controllers": {s.name: dict(s.stats.as_dict(), state=s.controller.state.name)
                            for s in self._schedule},
        }

    # -- real-time -----------------------------------------------------------------------
    def update(self, time: float) -> None:
        """One tick at ``time`` [s] (see the module doc). Runs in: EC thread."""
        timer = self.timer
        t_begin = timer()
        last = self._last_time
        if last is None:
            period = self.period
        else:
            period = time - last
            self.period_sum += period
            if period < self.period_min:
                self.period_min = period
            if period > self.period_max:
                self.period_max = period
        self.period_last = period
        self._last_time = time
        robot = self.robot
        robot.time = time
        robot.zero_commands()
        hw = self.hardware
        if hw is not None:
            hw.read(robot, time)
            halted = getattr(hw, "halted", False)
            if self._was_halted and not halted:
                self._restart_running(time)
            self._was_halted = halted
        sw = self._switch
        if sw is not None and sw.phase == SwitchRequest.STOPPED:
            self._start_half(sw, time)
        spent = 0.0
        limit = self.overrun_limit
        for slot in self._schedule:
            c = slot.controller
            if c.state is not _RUNNING:
                continue
            t0 = timer()
            try:
                c.update(time, period)
            except Exception as e:
                self._fault(slot, time, "update", e)
            dt = timer() - t0
            st = slot.stats
            st.updates += 1
            st.last = dt
            st.total += dt
            if dt > st.max:
                st.max = dt
            if dt > limit:
                st.overruns += 1
                st.last_overrun_time = time
            spent += dt
        if hw is not None:
            hw.write(robot, time)
        if sw is not None and sw.phase == SwitchRequest.QUEUED:
            self._stop_half(sw, time)
        self.ticks += 1
        self.updates_last = spent
        overhead = timer() - t_begin - spent
        self.overhead_last = overhead
        self.overhead_sum += overhead
        if overhead > self.overhead_max:
            self.overhead_max = overhead

    def stop_all(self, time: float) -> None:
        """Stop every running controller (stopping called) and drop a pending switch
        (aborted; its waiter is told). For the manager's deactivation.
        Runs in: EC thread, between ticks."""
        for slot in self._schedule:
            if slot.controller.state is _RUNNING:
                slot.controller.state = _INIT
                self._call_stopping(slot, time)
        sw, self._switch = self._switch, None
        self._last_time = None
        if sw is not None:
            sw.aborted = True
            sw.phase = SwitchRequest.DONE
            if sw.on_done is not None:
                sw.on_done(sw)

    def _restart_running(self, time: float) -> None:
        """The motors were halted and are enabled again: stopping() then starting() for
        every running controller, in schedule order (PR2 does this so controllers re-seed
        from the state the robot is really in)."""
        self.restarts += 1
        for slot in self._schedule:
            c = slot.controller
            if c.state is _RUNNING:
                self._call_stopping(slot, time)
                try:
                    c.starting(time)
                except Exception as e:
                    c.state = _INIT
                    self._report(slot, time, "starting", e)

    def _stop_half(self, sw: SwitchRequest, time: float) -> None:
        for slot in sw.stop:
            c = slot.controller
            c.state = _INIT                  # PR2 stopRequest: from RUNNING or INITIALIZED
            self._call_stopping(slot, time)
        sw.phase = SwitchRequest.STOPPED
        sw.stop_time = time

    def _start_half(self, sw: SwitchRequest, time: float) -> None:
        for slot in sw.start:
            if not slot.loaded:
                continue
            c = slot.controller
            try:
                c.starting(time)             # PR2 startRequest: also from RUNNING (restart)
            except Exception as e:
                c.state = _INIT
                self._report(slot, time, "starting", e)
                continue
            c.state = _RUNNING
        sw.phase = SwitchRequest.DONE
        sw.start_time = time
        self._switch = None
        self.switches += 1
        if sw.on_done is not None:
            sw.on_done(sw)

    def _call_stopping(self, slot: Slot, time: float) -> None:
        try:
            slot.controller.stopping(time)
        except Exception as e:               # stopping cannot fail: report and go on
            self._report(slot, time, "stopping", e)

    def _fault(self, slot: Slot, time: float, where: str, e: BaseException) -> None:
        """A raising update: the controller is stopped (stopping called) and reported."""
        slot.controller.state = _INIT
        self._report(slot, time, where, e)
        self._call_stopping(slot, time)

    def _report(self, slot: Slot, time: float, where: str, e: BaseException) -> None:
        st = slot.stats
        st.faults += 1
        st.last_error = f"{where} at t={time:.6f}: {type(e).__name__}: {e}"
        if self.on_fault is not None:
            try:
                self.on_fault(slot.name, where, e)
            except Exception:
                traceback.print_exc()
