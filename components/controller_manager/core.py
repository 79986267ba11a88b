"""The controller manager core (pr2_controller_manager), without rtcf/ORB.

Two sides, as in PR2's ControllerManager:

* non-real-time (service threads): ``load`` / ``unload`` construct, initialise and schedule
  in the caller's thread, then hand the new controller tuple to the real-time side through
  ``run_rt`` (a callable that runs a function between two ticks in the EC thread and returns
  its result: ``Component.call`` in the RT component, a plain call in tests).
  ``prepare_switch`` validates a switch (the checks: ``switching.py``); ``begin_switch``
  (between ticks) queues it for the real-time loop. One non-real-time operation at a time
  (``admin`` lock, never taken by the EC thread).
* real-time (EC thread): ``update(time)`` once per tick.

One tick:

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
the last update just after it, and nothing runs between the two halves.

The measured period passed to update is the difference between this tick's time and the
time of that controller's previous update (on its first update: the tick's measured period,
or its own nominal period when it has an ``update_rate``).

ros2_control's additions (facts from ros2_control's controller_manager documentation and
SwitchController.srv; an independent design here):

* **command interfaces**: a controller claims ``joint/type`` interfaces
  (``Controller.command_interface_configuration``); a running controller owns them; the
  hardware says which types it takes (``Hardware.command_interfaces``). The RobotState's
  command arrays of the other types are read-only, so a controller that writes one fails
  loudly (its update raises) instead of commanding nothing.
* **update_rate** (load param, Hz, at most the manager's rate): the controller updates at
  the first tick not earlier than half a manager period before its next due time (the tick
  nearest to it, as ros2_control picks the cycle of smallest period error); due times
  advance by 1/update_rate (no divisor needed: 300 Hz in a 1 kHz loop updates after 3, 4, 3
  ms...), and after a stall the next due time is one controller period ahead (no burst).
* **fallback_controllers** (load param, names): when a controller fails (its update raises,
  or its starting raises) it is stopped, with every running controller chained to it, and
  the fallbacks of each of them start in the same tick (starting, then update). A start is
  refused unless its fallbacks could start then (``switching.py``); at the failure the same
  chain rule holds: a fallback whose get_controller dependencies are neither running nor
  started as fallbacks in that tick is reported, not started, as is one whose interfaces
  are taken.
* **chains**: controllers linked by get_controller (BEFORE_ME / AFTER_ME, directly or through
  others) form a chain; when one fails, every running member is stopped with it. A switch
  may not break a chain (``switching.py``).
* **switch results**: a performed switch lists the controllers started, stopped, refused
  and failed (starting raised, or an interface was taken meanwhile).

Facts (the double-buffered controller list handed to the real-time loop, the order of one
update, the switch performed by the loop while the caller waits, the load / unload checks)
follow PR2/pr2_mechanism pr2_controller_manager/src/controller_manager.cpp; the code is an
independent Python design (a command queue instead of spinning on shared flags).
"""

from __future__ import annotations

import threading
import time as _time
import traceback
from typing import Any, Callable, Iterable, Mapping, Sequence

from .controller import Controller, ControllerError, ControllerState, check_interface
from .registry import resolve_controller
from .robot import Hardware, RobotState
from .scheduler import schedule_controllers
from .slot import ControllerStats, Slot
from .switching import Strictness, SwitchRequest, chains, plan_switch

__all__ = ["ControllerManagerCore", "ControllerStats"]

_RUNNING = ControllerState.RUNNING
_INIT = ControllerState.INITIALIZED


def _direct(fn: Callable[[], Any]) -> Any:
    return fn()


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
        self._hardware: Hardware | None = None
        self.hardware = hardware                   # restricts the robot's command arrays
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
                for n, others in chains(links).items()]

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
        """Validate a switch (PR2 switchController before it posts the request; the checks
        and how each strictness treats them: rtcf_components.controller_manager.switching).

        strictness 0 means BEST_EFFORT (PR2 warns; the request's ``strictness`` shows it).
        A name may be in both lists (a restart: stopping, then starting, no tick between).
        Runs in: a non-real-time thread, holding ``admin`` until the switch is done.
        """
        with self.admin:
            return plan_switch(self._loaded, start, stop, strictness, self.interface_types)

    @property
    def hardware(self) -> Hardware | None:
        return self._hardware

    @hardware.setter
    def hardware(self, hw: Hardware | None) -> None:
        """Bind the hardware (None: the caller fills ``robot`` itself); the robot state's
        command arrays of the types it does not take become read-only. Runs in: a
        non-real-time thread, before the ticks."""
        self._hardware = hw
        self.robot.restrict(self.interface_types)

    @property
    def interface_types(self) -> tuple[str, ...]:
        """The command interface types the hardware takes (all without hardware)."""
        if self._hardware is None:
            return ("position", "velocity", "effort")
        return tuple(getattr(self._hardware, "command_interfaces", ("position",)))

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

    @property
    def slots(self) -> tuple[Slot, ...]:
        """The real-time view: the loaded controllers in update order (a tuple the EC
        thread swaps whole; read it once per use). Runs in: any thread."""
        return self._schedule

    def loaded_slots(self) -> dict[str, Slot]:
        """The loaded controllers in load order (a snapshot). Runs in: any thread."""
        return dict(self._loaded)

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
                            depends_on=s.depends_on))
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
        hw = self._hardware
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
        self._start_fallbacks(victims, time)

    def _start_fallbacks(self, victims: list[Slot], time: float) -> None:
        """Start the fallbacks of the stopped ``victims`` in this tick, by the chain rule: a
        fallback starts only when every controller it depends on (get_controller) runs or
        starts with it; one that is not loaded, cannot start, or would run without what it
        depends on is reported on the victim. Runs in: EC thread (rare)."""
        loaded = self._loaded
        seen = {v.name for v in victims}
        wanted: list[tuple[Slot, Slot]] = []           # (victim, fallback)
        for v in victims:
            for fb in v.fallbacks:
                if fb in seen:
                    continue
                seen.add(fb)
                target = loaded.get(fb)
                if target is None or not target.loaded:
                    self._report(v, time, "fallback", ControllerError(
                        f"fallback {fb!r} is not loaded"))
                elif target.controller.state is not _RUNNING:
                    wanted.append((v, target))

        def missing(t: Slot, starting: set[str]) -> str | None:
            for d in t.depends_on:
                s = loaded.get(d)
                if d not in starting and (s is None or s.controller.state is not _RUNNING):
                    return d
            return None

        starting = {t.name for _, t in wanted}
        dropped = True
        while dropped:                         # a drop can strand another fallback
            dropped = False
            for pair in list(wanted):
                d = missing(pair[1], starting)
                if d is not None:
                    wanted.remove(pair)
                    starting.discard(pair[1].name)
                    dropped = True
                    self._report(pair[0], time, "fallback", ControllerError(
                        f"fallback {pair[1].name!r} not started: it depends on {d!r} "
                        f"(chained through get_controller), which is not running"))
        started = []
        for v, t in wanted:
            why = self._start(t, time)
            if why:
                self._report(v, time, "fallback", ControllerError(f"fallback {t.name!r} {why}"))
            else:
                started.append((v, t))
                self._late_start = True
        for v, t in started:                  # one it needs failed to start after all
            d = missing(t, set())
            if d is not None and t.controller.state is _RUNNING:
                t.controller.state = _INIT
                self._release(t)
                self._call_stopping(t, time)
                self.generation += 1
                self._report(v, time, "fallback", ControllerError(
                    f"fallback {t.name!r} stopped again: {d!r}, which it depends on, did "
                    f"not start"))

    def _report(self, slot: Slot, time: float, where: str, e: BaseException) -> None:
        st = slot.stats
        st.faults += 1
        st.last_error = f"{where} at t={time:.6f}: {type(e).__name__}: {e}"
        if isinstance(e, ValueError) and "read-only" in str(e):
            st.last_error += (f" (a command array of an interface type the hardware does not "
                              f"take; it takes {', '.join(self.robot.command_types)})")
        if self.on_fault is not None:
            try:
                self.on_fault(slot.name, where, e)
            except Exception:
                traceback.print_exc()
