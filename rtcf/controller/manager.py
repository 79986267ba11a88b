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
time of that controller's previous update (on its first update: the tick's measured period,
or its own nominal period when it has an ``update_rate``).

ros2_control's additions (facts from ros2_control's controller_manager documentation and
SwitchController.srv; an independent design here):

* **command interfaces**: a controller claims ``joint/type`` interfaces
  (``Controller.command_interface_configuration``); a running controller owns them. A switch
  that would make two running controllers own one is refused under STRICT; under
  BEST_EFFORT the conflicting controller is not started (the rest of the switch goes on;
  ``refused`` names it and why). A claim of a type the hardware does not take
  (``Hardware.command_interfaces``) is treated the same way.
* **update_rate** (load param, Hz, at most the manager's rate): the controller updates at
  the first tick not earlier than half a manager period before its next due time (the tick
  nearest to it, as ros2_control picks the cycle of smallest period error); due times
  advance by 1/update_rate (no divisor needed: 300 Hz in a 1 kHz loop updates after 3, 4, 3
  ms...), and after a stall the next due time is one controller period ahead (no burst).
* **fallback_controllers** (load param, names): when a controller fails (its update raises,
  or its starting raises) it is stopped, with every running controller chained to it, and
  the fallbacks of each of them start in the same tick (starting, then update). A fallback
  that is not loaded, already running, or whose interfaces are taken is reported, not
  started.
* **chains**: controllers linked by get_controller (BEFORE_ME / AFTER_ME, directly or through
  others) form a chain; when one fails, every running member is stopped with it. A switch
  may not break a chain: the controller that called get_controller (ros2_control's
  preceding controller) needs the one it got (the following controller) running. A switch
  that would start the first without the second, or stop the second while the first stays
  running, is refused under STRICT and that start or stop is dropped under BEST_EFFORT
  (ros2_control's check_following_controllers_for_activate /
  check_preceeding_controllers_for_deactivate: the same rule and strictness handling).
* **switch results**: a performed switch lists the controllers started, stopped, refused
  and failed (starting raised, or an interface was taken meanwhile).

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

from .base import Controller, ControllerError, ControllerState, check_interface
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
                 "faults", "last_error", "period_last")

    def __init__(self) -> None:
        self.updates = 0
        self.period_last = 0.0               # the period passed to the last update [s]
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
        return {"updates": self.updates, "period_last": self.period_last,
                "last": self.last, "max": self.max,
                "mean": self.mean, "overruns": self.overruns,
                "last_overrun_time": self.last_overrun_time, "faults": self.faults,
                "last_error": self.last_error}


class Slot:
    """A loaded controller in the manager: PR2's ControllerSpec, with ros2_control's
    claimed interfaces, update rate and fallbacks."""

    __slots__ = ("name", "type_name", "controller", "stats", "loaded", "params", "claims",
                 "fallbacks", "chain", "update_rate", "update_period", "next_due",
                 "last_update", "last_tick")

    def __init__(self, name: str, type_name: str, controller: Controller,
                 params: Mapping[str, Any] | None = None, claims: Sequence[str] = (),
                 fallbacks: Sequence[str] = (), update_rate: float = 0.0):
        self.name = name
        self.type_name = type_name
        self.controller = controller
        self.stats = ControllerStats()
        self.loaded = True
        self.params = dict(params or {})
        self.claims = tuple(claims)
        self.fallbacks = tuple(fallbacks)
        self.chain: tuple[Slot, ...] = ()    # the others linked to it by get_controller
        self.update_rate = float(update_rate)                  # 0: every tick
        self.update_period = 1.0 / update_rate if update_rate > 0 else 0.0
        self.next_due = 0.0
        self.last_update: float | None = None
        self.last_tick = -1


class SwitchRequest:
    """A validated switch. ``phase``: QUEUED -> STOPPED (stop half done) -> DONE."""

    QUEUED, STOPPED, DONE = 0, 1, 2

    def __init__(self, start: Sequence[Slot], stop: Sequence[Slot], skipped: Sequence[str],
                 strictness: Strictness):
        self.start = tuple(start)
        self.stop = tuple(stop)
        self.skipped = tuple(skipped)
        self.strictness = strictness
        self.refused: tuple[tuple[str, str], ...] = ()   # (name, why): BEST_EFFORT drops
        self.not_stopped: tuple[tuple[str, str], ...] = ()   # stops BEST_EFFORT dropped
        self.started: list[str] = []                     # filled by the real-time loop
        self.stopped: list[str] = []
        self.failed: list[tuple[str, str]] = []          # (name, what went wrong)
        self.phase = self.QUEUED
        self.aborted = False                 # dropped by stop_all (manager deactivated)
        self.stop_time: float | None = None
        self.start_time: float | None = None
        self.on_done: Callable[["SwitchRequest"], None] | None = None

    @property
    def done(self) -> bool:
        return self.phase == self.DONE

    @property
    def ok(self) -> bool:
        """Done, not aborted, no starting or stopping failed (either strictness; BEST_EFFORT
        only tolerates unknown names and refused starts or stops); under STRICT nothing
        refused."""
        return (self.done and not self.aborted and not self.failed
                and (self.strictness is not Strictness.STRICT or not self.refused))

    def summary(self) -> str:
        """One line for the caller: what was started, stopped, skipped, refused, failed."""
        parts = [f"started {self.started}, stopped {self.stopped}"]
        if self.start_time is not None:
            parts[0] += f" at t={self.start_time}"
        if self.failed:
            parts.append("failed: " + "; ".join(f"{n!r} {why}" for n, why in self.failed))
        if self.refused:
            parts.append("not started: " + "; ".join(f"{n!r} {why}"
                                                     for n, why in self.refused))
        if self.not_stopped:
            parts.append("not stopped: " + "; ".join(f"{n!r}: {why}"
                                                     for n, why in self.not_stopped))
        if self.skipped:
            parts.append(f"skipped unknown {list(self.skipped)}")
        if self.strictness == 0:
            parts.append("strictness 0 taken as BEST_EFFORT")
        return "; ".join(parts)


def _direct(fn: Callable[[], Any]) -> Any:
    return fn()


def _chains(links: Mapping[str, tuple[Iterable[str], Iterable[str]]]) -> dict[str, set[str]]:
    """name -> the other controllers connected to it through before/after lists."""
    group: dict[str, set[str]] = {n: {n} for n in links}
    for n, (before, after) in links.items():
        for m in list(before) + list(after):
            if m in group and group[m] is not group[n]:
                merged = group[n] | group[m]
                for k in merged:
                    group[k] = merged
    return {n: g - {n} for n, g in group.items()}


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
        self._owners: dict[str, str] = {}         # interface -> running controller (EC)
        self._late_start = False                  # a fallback started during the updates
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
        # +1 at every change of the schedule, of a controller's state or of who owns an
        # interface (EC thread): readers rebuild their views only when it moved
        self.generation = 0

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
                why = f" ({c.get_controller_error})" if c.get_controller_error else ""
                raise ControllerError(f"loadController({name!r}): init of {tname} "
                                      f"returned false{why}")
            claims, fallbacks, rate = self._load_options(name, c, params or {})
            links = {n: (s.controller.before_list, s.controller.after_list)
                     for n, s in self._loaded.items()}
            links[name] = (c.before_list, c.after_list)
            order = schedule_controllers(links)      # ControllerError names the cause
            c.state = _INIT
            slot = Slot(name, tname, c, params, claims, fallbacks, rate)
            loaded = dict(self._loaded)
            loaded[name] = slot
            run_rt(self._installer(tuple(loaded[n] for n in order), loaded))
            self._loaded = loaded
            self._order = order
            return c

    def _load_options(self, name: str, c: Controller, params: Mapping[str, Any]
                      ) -> tuple[list[str], list[str], float]:
        """The claimed interfaces, fallbacks and update rate of a controller being loaded;
        ControllerError naming the bad value. Runs in: the loading thread."""
        who = f"loadController({name!r})"
        try:
            claims = list(c.command_interface_configuration())
        except Exception as e:
            raise ControllerError(f"{who}: command_interface_configuration raised "
                                  f"{type(e).__name__}: {e}") from e
        for i in claims:
            problem = check_interface(i)
            if problem:
                raise ControllerError(f"{who}: command interface {i!r}: {problem}")
            self.robot.index(i.split("/")[0])      # ControllerError names the joint
        claims = list(dict.fromkeys(claims))
        fallbacks = params.get("fallback_controllers", [])
        if isinstance(fallbacks, str) or not isinstance(fallbacks, (list, tuple)) or \
                not all(isinstance(f, str) and f for f in fallbacks):
            raise ControllerError(f"{who}: fallback_controllers: expected a list of "
                                  f"controller names, got {fallbacks!r}")
        if name in fallbacks:
            raise ControllerError(f"{who}: fallback_controllers: a controller cannot be its "
                                  f"own fallback, got {list(fallbacks)!r}")
        rate = params.get("update_rate", 0)
        top = 1.0 / self.period
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or \
                not 0 <= rate <= top * (1 + 1e-9):
            raise ControllerError(f"{who}: update_rate: expected a rate in [Hz] between 0 "
                                  f"(every tick) and the manager's {top:g}, got {rate!r}")
        return claims, list(fallbacks), float(rate)

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
            running = run_rt(self._remover(slot, tuple(loaded[n] for n in order), loaded))
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

    @staticmethod
    def _chained(loaded: Mapping[str, Slot]) -> list[tuple[Slot, tuple[Slot, ...]]]:
        links = {n: (s.controller.before_list, s.controller.after_list)
                 for n, s in loaded.items()}
        return [(loaded[n], tuple(loaded[m] for m in sorted(others)))
                for n, others in _chains(links).items()]

    def _installer(self, schedule: tuple[Slot, ...], loaded: Mapping[str, Slot]
                   ) -> Callable[[], None]:
        chains = self._chained(loaded)

        def install() -> None:
            for slot, chain in chains:
                slot.chain = chain
            self._schedule = schedule
            self.generation += 1
        return install

    def _remover(self, slot: Slot, schedule: tuple[Slot, ...], loaded: Mapping[str, Slot]
                 ) -> Callable[[], bool]:
        chains = self._chained(loaded)

        def remove() -> bool:
            if slot.controller.state is _RUNNING:
                return True
            for s, chain in chains:
                s.chain = chain
            self._schedule = schedule
            slot.loaded = False
            self.generation += 1
            return False
        return remove

    # -- non-real-time: switch -----------------------------------------------------------
    def prepare_switch(self, start: Sequence[str], stop: Sequence[str],
                       strictness: int = Strictness.BEST_EFFORT) -> SwitchRequest:
        """Validate a switch (PR2 switchController before it posts the request).

        strictness 0 means BEST_EFFORT (PR2 warns; the request's ``strictness`` shows it),
        BEST_EFFORT skips unknown names (listed in ``skipped``), STRICT refuses any unknown
        name. A name may be in both lists (a restart: stopping, then starting).

        Chains (ros2_control's switch checks): after the switch, every running controller
        must have the controllers it got with get_controller running. A start whose
        dependency is neither running nor started, a start whose dependency this switch
        stops, and a stop of a controller that a controller staying (or becoming) running
        depends on are refused under STRICT (nothing changes; the message names both
        controllers) and dropped under BEST_EFFORT (``refused`` / ``not_stopped`` say which
        and why; the rest of the switch goes on). A restart (a name in both lists) keeps
        its chain: no tick runs between the stop half and the start half.
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
        loaded = self._loaded
        starts = [n for n in dict.fromkeys(start) if n in loaded]
        stops = [n for n in dict.fromkeys(stop) if n in loaded]
        refused: list[tuple[str, str]] = []        # starts dropped (BEST_EFFORT)
        not_stopped: list[tuple[str, str]] = []    # stops dropped (BEST_EFFORT)
        while True:                # one drop per round: a drop can change later verdicts
            problem = (self._chain_problem(starts, stops)
                       or self._claim_problem(starts, stops))
            if problem is None:
                break
            kind, n, why, hint = problem
            if level is Strictness.STRICT:
                what = f"{n!r} {why}" if kind == "start" else f"cannot stop {n!r}: {why}"
                raise ControllerError(f"switchController (STRICT): {what}{hint}")
            if kind == "start":
                starts.remove(n)
                refused.append((n, why))
            else:
                stops.remove(n)
                not_stopped.append((n, why))
        req = SwitchRequest([loaded[n] for n in starts], [loaded[n] for n in stops],
                            missing, level)
        req.refused = tuple(refused)
        req.not_stopped = tuple(not_stopped)
        return req

    def _chain_problem(self, starts: list[str], stops: list[str]
                       ) -> tuple[str, str, str, str] | None:
        """The first start or stop that would leave a running controller without a
        controller it depends on (get_controller), as (kind, name, why, hint); None when the
        switch keeps every chain whole. Starts are checked first, as ros2_control checks
        its activations before its deactivations. Runs in: the switching thread."""
        loaded = self._loaded
        start_set, stop_set = set(starts), set(stops)

        def runs_after(n: str) -> bool:
            return n in start_set or (loaded[n].controller.state is _RUNNING
                                      and n not in stop_set)

        def deps(n: str) -> list[str]:
            c = loaded[n].controller
            return [m for m in dict.fromkeys(c.before_list + c.after_list) if m in loaded]

        via = "(chained through get_controller)"
        for n in starts:
            for f in deps(n):
                if runs_after(f):
                    continue
                if f in stop_set:
                    return ("start", n, f"depends on {f!r} {via}, which this switch stops",
                            f"; keep {f!r} running, or leave {n!r} stopped")
                return ("start", n, f"depends on {f!r} {via}, which is not running and not "
                                    f"started in this switch", f"; start {f!r} with it")
        for n in stops:
            if n in start_set:                   # a restart: its dependents never notice
                continue
            for p in loaded:         # (one being started was refused above)
                if n in deps(p) and runs_after(p):
                    return ("stop", n, f"{p!r} depends on it {via} and stays running",
                            f"; stop {p!r} in the same switch, or use BEST_EFFORT to "
                            f"leave {n!r} running")
        return None

    def _claim_problem(self, starts: list[str], stops: list[str]
                       ) -> tuple[str, str, str, str] | None:
        """The first start whose command interfaces the hardware does not take or another
        controller owns after the switch, as (kind, name, why, hint); None when every start
        can own its claims. Runs in: the switching thread."""
        loaded = self._loaded
        stop_set = set(stops)
        owners: dict[str, str] = {}            # after the switch, of those that stay
        for n, slot in loaded.items():
            if slot.controller.state is _RUNNING and n not in stop_set and n not in starts:
                for i in slot.claims:
                    owners[i] = n
        types = self.interface_types
        for n in starts:
            slot = loaded[n]
            bad = [i for i in slot.claims if i.split("/")[1] not in types]
            taken = [(i, owners[i]) for i in slot.claims if owners.get(i, n) != n]
            if bad:
                return ("start", n, f"claims {', '.join(bad)}, which the hardware does not "
                                    f"take (it takes {', '.join(types)})", "")
            if taken:
                return ("start", n, "claims " + ", ".join(f"{i} (owned by {o!r})"
                                                          for i, o in taken),
                        "; stop the owner in the same switch, or use BEST_EFFORT to start "
                        "the others")
            for i in slot.claims:
                owners[i] = n
        return None

    @property
    def interface_types(self) -> tuple[str, ...]:
        """The command interface types the hardware takes (all without hardware)."""
        if self.hardware is None:
            return ("position", "velocity", "effort")
        return tuple(getattr(self.hardware, "command_interfaces", ("position",)))

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

    def list_interfaces(self) -> list[tuple[str, str]]:
        """(joint/type, owning running controller or "") of every command interface the
        hardware takes, in joint order. Any thread (a snapshot)."""
        owners = dict(self._owners)
        return [(f"{j}/{t}", owners.get(f"{j}/{t}", ""))
                for j in self.robot.joint_names for t in self.interface_types]

    def describe(self) -> list[dict[str, Any]]:
        """Per loaded controller in schedule order: name, type, state, position, claimed
        interfaces, fallbacks, chain, depends_on (what it got with get_controller),
        update_rate and its statistics. Any thread."""
        loaded, order = self._loaded, self._order
        out = []
        for i, n in enumerate(order):
            s = loaded.get(n)
            if s is None:     # read between an unload's two assignments: it is gone
                continue
            out.append(dict(s.stats.as_dict(), name=n, type=s.type_name,
                            state=s.controller.state.name.lower(), position=i,
                            claims=list(s.claims), fallbacks=list(s.fallbacks),
                            chain=[c.name for c in s.chain], update_rate=s.update_rate,
                            depends_on=list(dict.fromkeys(s.controller.before_list
                                                          + s.controller.after_list))))
        return out

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
        tick = self.ticks
        for slot in self._schedule:
            if slot.controller.state is _RUNNING:
                spent += self._update_one(slot, time, period, tick, timer)
        if self._late_start:                  # fallbacks started after their turn
            self._late_start = False
            for slot in self._schedule:
                if slot.controller.state is _RUNNING and slot.last_tick != tick:
                    spent += self._update_one(slot, time, period, tick, timer)
        if hw is not None:
            hw.write(robot, time)
        if sw is not None and sw.phase == SwitchRequest.QUEUED:
            self._stop_half(sw, time)
        self.ticks = tick + 1
        self.updates_last = spent
        overhead = timer() - t_begin - spent
        self.overhead_last = overhead
        self.overhead_sum += overhead
        if overhead > self.overhead_max:
            self.overhead_max = overhead

    def _update_one(self, slot: Slot, time: float, tick_period: float, tick: int,
                    timer: Callable[[], float]) -> float:
        """Update one running controller if it is due; returns the time it took [s].
        Runs in: EC thread."""
        up = slot.update_period
        if up:
            if time < slot.next_due - 0.5 * self.period:
                return 0.0
            due = slot.next_due + up
            slot.next_due = due if due > time else time + up     # behind: no burst
        last = slot.last_update
        period = time - last if last is not None else (up or tick_period)
        slot.last_update = time
        slot.last_tick = tick
        t0 = timer()
        try:
            slot.controller.update(time, period)
        except Exception as e:
            self._fail(slot, time, "update", e)
        dt = timer() - t0
        st = slot.stats
        st.updates += 1
        st.period_last = period
        st.last = dt
        st.total += dt
        if dt > st.max:
            st.max = dt
        if dt > self.overrun_limit:
            st.overruns += 1
            st.last_overrun_time = time
        return dt

    def stop_all(self, time: float) -> None:
        """Stop every running controller (stopping called) and drop a pending switch
        (aborted; its waiter is told). For the manager's deactivation.
        Runs in: EC thread, between ticks."""
        for slot in self._schedule:
            if slot.controller.state is _RUNNING:
                slot.controller.state = _INIT
                self._release(slot)
                self._call_stopping(slot, time)
        sw, self._switch = self._switch, None
        self._last_time = None
        self.generation += 1
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
                c.state = _INIT                  # stopped: a failing starting is not
                try:                             # followed by a second stopping
                    c.starting(time)
                except Exception as e:
                    self._fail(slot, time, "starting", e)
                    continue
                c.state = _RUNNING
                slot.last_update = None

    def _stop_half(self, sw: SwitchRequest, time: float) -> None:
        for slot in sw.stop:
            c = slot.controller
            c.state = _INIT                  # PR2 stopRequest: from RUNNING or INITIALIZED
            self._release(slot)
            if not self._call_stopping(slot, time):
                sw.failed.append((slot.name, f"stopping raised: {slot.stats.last_error}"))
            sw.stopped.append(slot.name)
        sw.phase = SwitchRequest.STOPPED
        self.generation += 1
        sw.stop_time = time

    def _start_half(self, sw: SwitchRequest, time: float) -> None:
        for slot in sw.start:
            why = self._start(slot, time)
            if why:
                sw.failed.append((slot.name, why))
            else:
                sw.started.append(slot.name)
        sw.phase = SwitchRequest.DONE
        sw.start_time = time
        self._switch = None
        self.switches += 1
        if sw.on_done is not None:
            sw.on_done(sw)

    def _start(self, slot: Slot, time: float) -> str:
        """starting() and ownership of its interfaces; "" when running, else why not (a
        raising starting is a failure: its fallbacks start). Runs in: EC thread."""
        if not slot.loaded:
            return "was unloaded"
        owners = self._owners
        for i in slot.claims:
            o = owners.get(i)
            if o is not None and o != slot.name:
                return f"not started: {i} is owned by {o!r}"
        c = slot.controller
        try:
            c.starting(time)                 # PR2 startRequest: also from RUNNING (restart)
        except Exception as e:
            self._fail(slot, time, "starting", e)
            return f"starting raised {type(e).__name__}: {e}"
        c.state = _RUNNING
        for i in slot.claims:
            owners[i] = slot.name
        self.generation += 1
        if slot.update_period:
            slot.next_due = time
        slot.last_update = None
        return ""

    def _release(self, slot: Slot) -> None:
        """Give up the interfaces ``slot`` owns. Runs in: EC thread."""
        owners = self._owners
        for i in slot.claims:
            if owners.get(i) == slot.name:
                del owners[i]

    def _call_stopping(self, slot: Slot, time: float) -> bool:
        try:
            slot.controller.stopping(time)
        except Exception as e:               # stopping cannot fail: report and go on
            self._report(slot, time, "stopping", e)
            return False
        return True

    def _fail(self, slot: Slot, time: float, where: str, e: BaseException) -> None:
        """``slot`` failed in ``where`` (update or starting): it and every running
        controller chained to it stop (stopping called, except for a failed starting),
        then the fallbacks of each start in this tick. Runs in: EC thread (rare)."""
        was_running = slot.controller.state is _RUNNING
        slot.controller.state = _INIT
        self._release(slot)
        self.generation += 1
        self._report(slot, time, where, e)
        if was_running:
            self._call_stopping(slot, time)
        victims = [slot]
        for other in slot.chain:
            if other.controller.state is _RUNNING:
                other.controller.state = _INIT
                self._release(other)
                self._report(other, time, "chain", ControllerError(
                    f"stopped with {slot.name!r} (chained), whose {where} failed"))
                self._call_stopping(other, time)
                victims.append(other)
        tried = {v.name for v in victims}
        for v in victims:
            for fb in v.fallbacks:
                if fb in tried:
                    continue
                tried.add(fb)
                target = self._loaded.get(fb)
                if target is None or not target.loaded:
                    self._report(v, time, "fallback", ControllerError(
                        f"fallback {fb!r} is not loaded"))
                elif target.controller.state is not _RUNNING:
                    why = self._start(target, time)
                    if why:
                        self._report(v, time, "fallback", ControllerError(
                            f"fallback {fb!r} {why}"))
                    else:
                        self._late_start = True

    def _report(self, slot: Slot, time: float, where: str, e: BaseException) -> None:
        st = slot.stats
        st.faults += 1
        st.last_error = f"{where} at t={time:.6f}: {type(e).__name__}: {e}"
        if self.on_fault is not None:
            try:
                self.on_fault(slot.name, where, e)
            except Exception:
                traceback.print_exc()
