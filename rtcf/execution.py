"""Execution contexts: PeriodicEC (own thread, absolute deadlines) and SteppedEC (tick()).

One cycle, for each member in the declared order (the EC thread is the only thread that
touches component state):

1. pre-do: drain the component's command queue (service calls), apply lifecycle requests,
   run exit/entry actions (on_deactivated, on_activated, on_aborting, on_reset);
2. do: on_execute when Active, on_error when in Error;
3. post-do: on_state_update when Active, then staged parameter changes become live.

A hook that raises or returns failure is logged once with its traceback and sends that
component to Error at the start of the next cycle (on_deactivated, on_aborting, then
on_error, all in that cycle, as OpenRTM-aist does); the other members keep running.
"""

from __future__ import annotations

import os
import threading
import time
import traceback
from array import array
from collections import deque
from typing import Any, Callable

import numpy as np

from .clock import Clock, ManualClock, MonotonicClock
from .component import Component, ECInfo
from .errors import ConfigError, LifecycleError, show_value
from .lifecycle import LifeCycleState, Request, ReturnCode, TRANSITIONS, is_failure
from .log import get_logger
from .overrun import OVERRUN_POLICIES, next_deadline
from .pacer import Pacer, set_thread_fifo, spin_until
from .ports import update_port_locks
from .validate import RATE_MAX, RATE_MIN, check_rate

__all__ = ["ExecutionContext", "PeriodicEC", "SteppedEC", "Member", "check_rate",
           "OVERRUN_POLICIES", "next_deadline", "spin_until", "set_thread_fifo", "HISTORY",
           "RATE_MIN", "RATE_MAX"]

_S = LifeCycleState
# the states the cycle compares with, looked up once (an enum member's lookup through its
# class costs about as much as calling an empty hook)
_ACTIVE, _ERROR = _S.ACTIVE, _S.ERROR
HISTORY = 8192  # cycles of timing history kept for percentiles
_get_ident = threading.get_ident


def percentiles(values: np.ndarray, qs: tuple[float, ...], presorted: bool = False
                ) -> list[float]:
    """np.percentile(values, q) (numpy's default, linear) for each q of ``qs`` [0..100],
    from one partition of a copy (or the sorted ``values`` as given): the same numbers
    without np.percentile, whose first call imports numpy.ma and held the GIL 5-9 ms in an
    ORB thread reading an EC's profile (measured: it made a paced simulation's next
    instants late, ten overruns). Runs in: any thread."""
    n = values.size
    if n == 0:
        return [0.0 for _ in qs]
    pos = [q / 100.0 * (n - 1) for q in qs]
    lo = [int(p) for p in pos]
    hi = [min(k + 1, n - 1) for k in lo]
    if presorted:
        s = values
    else:
        s = values.copy()
        s.partition(sorted(set(lo + hi)))
    return [float(s[a] + (s[b] - s[a]) * (p - a)) for p, a, b in zip(pos, lo, hi)]


class Member:
    """A component's place in one EC: its state there, pending requests and timing."""

    __slots__ = ("comp", "info", "state", "next_state", "requests", "primary",
                 "error_logged", "exec_time", "exec_sum", "exec_max", "exec_count",
                 "started", "state_update", "params")

    def __init__(self, comp: Component, info: ECInfo, primary: bool):
        self.comp = comp
        self.params = comp.params   # its ParamStore (the cycle asks it without the property)
        self.info = info
        self.state = _S.INACTIVE
        self.next_state = _S.INACTIVE
        self.requests: deque[Request] = deque()
        self.primary = primary
        self.error_logged = False
        self.exec_time = 0.0
        self.exec_sum = 0.0
        self.exec_max = 0.0
        self.exec_count = 0
        self.started = False
        # on_state_update is called only when the component has one (its class, or its own
        # attribute when it joins): the base's does nothing, and calling it cost every
        # member a call each cycle
        self.state_update = (getattr(type(comp), "on_state_update", None)
                             is not Component.on_state_update
                             or "on_state_update" in getattr(comp, "__dict__", {}))


class ExecutionContext:
    """Common part of the execution contexts (OpenRTM ExecutionContextService semantics).

    Runs in: membership, state queries, lifecycle requests, set_rate and time control
    (pause, resume, advance): any thread (an ORB thread, a tool's, the manager's); they lock
    only what they share and hand the work to the EC thread, waiting for it where OpenRTM
    does (sync transitions). start and stop: the thread that owns the EC (the manager's
    main thread), never the EC thread. status and report: the manager's main thread, one
    caller (status keeps the interval mark). Hooks run in the EC thread only.
    """

    kind = "PERIODIC"

    def __init__(self, rate: float = 1000.0, name: str = "", clock: Clock | None = None,
                 sync_transition: bool = True, transition_timeout: float = 0.5):
        problem = check_rate(rate)
        if problem:
            raise ConfigError(f"execution context {name or ''}: rate: {problem}, "
                              f"got {show_value(rate)}")
        self.name = name
        self.rate = float(rate)
        self.period = 1.0 / self.rate
        self.clock = clock or MonotonicClock()
        self.sync_transition = sync_transition
        self.transition_timeout = transition_timeout
        self.owner: Component | None = None
        self.log = get_logger(f"ec.{name}" if name else "ec")
        self._members: list[Member] = []
        self._by_comp: dict[int, Member] = {}
        self._lock = threading.RLock()          # membership and requests only
        self._state_changed = threading.Condition(threading.Lock())
        self._running = False
        self._thread_ident: int | None = None
        self.cycles = 0
        self.overruns = 0
        self.started_at: float | None = None
        self._last_start: float | None = None
        # the timing rings: the cycle stores into the arrays (an array slot costs less than
        # a numpy scalar store), the statistics read the numpy views of the same memory
        self._late_ring = array("d", bytes(8 * HISTORY))
        self._period_ring = array("d", bytes(8 * HISTORY))
        self._lateness = np.frombuffer(self._late_ring, dtype=np.float64)
        self._periods = np.frombuffer(self._period_ring, dtype=np.float64)
        self._rings = (self._lateness.view(), self._periods.view())
        for ring in self._rings:
            ring.flags.writeable = False
        self.servant: Any = None                 # set by the CORBA layer
        self.skipped = 0                         # deadlines dropped by a resync
        self.trace: Any = None                   # a rtcf.trace.CycleTrace when tracing
        self.last_trace: Any = None              # the trace of the last run, after stop()
        self._tick_lock = threading.RLock()      # held while a stepped cycle runs
        self._paused = False                     # time control: no cycle while paused
        self._steps = 0                          # cycles advance() still has to run
        self._advancing = False                  # SteppedEC: advance() runs its own ticks
        self._steps_done = threading.Condition(threading.Lock())

    # -- membership ----------------------------------------------------------------------
    def add_component(self, comp: Component, owned: bool = False) -> int:
        """Attach ``comp`` (Inactive here); returns this EC's handle for it."""
        # its ports' buffers shared with another EC's members take the lock before this
        # EC's thread may use them; after the change, decided again (update_port_locks)
        self._port_locks(comp, joining=self)
        try:
            return self._add(comp, owned)
        finally:
            self._port_locks(comp)

    def _port_locks(self, comp: Component, joining: Any = None) -> None:
        for ec in update_port_locks(comp, joining):
            ec.quiesce()

    def quiesce(self) -> None:
        """Return once no cycle of this EC is under way (at once in its own thread, or when
        it is not running). Runs in: any thread."""
        if not self._running or self.in_ec_thread():
            return
        try:
            if self._thread_alive():
                self._run_in_thread(lambda: None)     # runs between two cycles
            else:
                with self.exclusive():
                    pass
        except TimeoutError:
            self.log.warning("execution context %r: no pause between cycles within 10 s",
                             self.name)

    def _add(self, comp: Component, owned: bool) -> int:
        with self._lock:
            if id(comp) in self._by_comp:
                raise LifecycleError(f"{comp.instance_name} already takes part in "
                                     f"execution context {self.name!r}")
            if not comp.initialized:
                raise LifecycleError(f"{comp.instance_name} is not initialised")
            if owned or (not comp.owned_ecs and self.owner is None):
                ec_id = len(comp.owned_ecs)
                comp.owned_ecs.append(self)
                if self.owner is None:
                    self.owner = comp
            else:
                ec_id = 1000 + len(comp.ecs) - len(comp.owned_ecs)
            info = ECInfo(ec_id, self)
            primary = comp._primary_ec is None
            m = Member(comp, info, primary)
            if primary:
                comp._primary_ec = self
            comp.ecs.append(self)
            self._members = self._members + [m]       # copy-on-write for the EC thread
            self._by_comp[id(comp)] = m
        if self._running and self.in_ec_thread():
            self._startup(m)
        return ec_id

    def remove_component(self, comp: Component) -> None:
        """Detach ``comp``: deactivate if Active, on_shutdown if started. Blocking."""
        m = self._by_comp.get(id(comp))
        if m is None:
            return
        if self._running and not self.in_ec_thread() and self._thread_alive():
            self._run_in_thread(lambda: self._remove(m))
        else:
            self._remove(m)

    def _remove(self, m: Member) -> None:
        if m.state is _S.ACTIVE:
            self._call(m, "on_deactivated")
        if m.started:
            self._call(m, "on_shutdown")
            m.started = False
        with self._lock:
            self._members = [x for x in self._members if x is not m]
            self._by_comp.pop(id(m.comp), None)
        comp = m.comp
        if self in comp.ecs:
            comp.ecs.remove(self)
        if self in comp.owned_ecs:
            comp.owned_ecs.remove(self)
        if comp._primary_ec is self:
            comp._primary_ec = comp.ecs[0] if comp.ecs else None
            comp._drain_commands()
        self._port_locks(comp)
        self._notify_state()

    def members(self) -> list[Component]:
        return [m.comp for m in self._members]

    def member(self, comp: Component) -> Member:
        m = self._by_comp.get(id(comp))
        if m is None:
            raise LifecycleError(f"{comp.instance_name} does not take part in execution "
                                 f"context {self.name!r}")
        return m

    def handle_of(self, comp: Component) -> int:
        return self.member(comp).info.id

    # -- state queries and requests (any thread) -------------------------------------------
    def get_component_state(self, comp: Component) -> LifeCycleState:
        m = self._by_comp.get(id(comp))
        if m is None:
            return _S.CREATED
        return m.state

    def _request(self, comp: Component, req: Request) -> ReturnCode:
        valid_in, target = TRANSITIONS[req]
        with self._lock:
            m = self._by_comp.get(id(comp))
            if m is None:
                return ReturnCode.BAD_PARAMETER
            pending_state = m.state
            for r in m.requests:
                pending_state = TRANSITIONS[r][1]
            if pending_state is not valid_in:
                return ReturnCode.PRECONDITION_NOT_MET
            m.requests.append(req)
        self.wake()
        if self.sync_transition and self._running and not self.in_ec_thread() \
                and self.clock_is_real():
            if not self._wait_state(m, target):
                return ReturnCode.RTC_ERROR
        return ReturnCode.RTC_OK

    def activate_component(self, comp: Component) -> ReturnCode:
        return self._request(comp, Request.ACTIVATE)

    def deactivate_component(self, comp: Component) -> ReturnCode:
        return self._request(comp, Request.DEACTIVATE)

    def reset_component(self, comp: Component) -> ReturnCode:
        return self._request(comp, Request.RESET)

    def deactivate_now(self, comp: Component) -> ReturnCode:
        """Deactivate and make sure it is applied before returning, also where no EC thread
        will apply it (stepped or stopped EC): shutdown and exit paths."""
        rc = self.deactivate_component(comp)
        if rc == ReturnCode.RTC_OK and not self._thread_alive():
            with self.exclusive():
                m = self._by_comp.get(id(comp))
                if m is not None and (m.requests or m.next_state is not m.state):
                    self._transition(m)
        return rc

    def _wait_state(self, m: Member, target: LifeCycleState) -> bool:
        """Block until the request is applied (OpenRTM sync_transition); True if the
        component ended in ``target``."""
        deadline = time.monotonic() + max(self.transition_timeout, 2 * self.period)
        with self._state_changed:
            while m.requests or m.next_state is not m.state:
                left = deadline - time.monotonic()
                if left <= 0 or not self._thread_alive():
                    return False
                self._state_changed.wait(min(left, 0.05))
        return m.state is target

    def _notify_state(self) -> None:
        with self._state_changed:
            self._state_changed.notify_all()

    # -- hook invocation -----------------------------------------------------------------
    def _call(self, m: Member, hook: str) -> bool:
        """Run one hook; on failure log (once per episode) and return False."""
        try:
            result = getattr(m.comp, hook)(m.info)
        except Exception:
            self._failed(m, hook, traceback.format_exc())
            return False
        if result is not None and is_failure(result):     # None: the usual success
            self._failed(m, hook, f"{hook} returned {result!r}")
            return False
        return True

    def _failed(self, m: Member, hook: str, detail: str) -> None:
        if not m.error_logged:
            m.error_logged = True
            m.comp.log.error("%s failed in execution context %r; the component goes to "
                             "ERROR\n%s", hook, self.name, detail.rstrip())
        if hook not in ("on_aborting", "on_error", "on_finalize", "on_shutdown"):
            m.next_state = _S.ERROR

    # -- the cycle -----------------------------------------------------------------------
    def _transition(self, m: Member) -> None:
        """pre-do: requests, then exit/entry actions (EC thread)."""
        if m.requests and m.next_state is m.state:
            with self._lock:
                req = m.requests.popleft() if m.requests else None
            if req is not None:
                valid_in, target = TRANSITIONS[req]
                if m.state is valid_in:
                    m.next_state = target
        if m.next_state is m.state:
            return
        old, new = m.state, m.next_state
        # exit action of the old state
        if old is _S.ACTIVE:
            self._call(m, "on_deactivated")
        elif old is _S.ERROR:
            m.error_logged = False
            if not self._call(m, "on_reset"):
                m.next_state = m.state = _S.ERROR
                self._notify_state()
                return
        new = m.next_state if m.next_state is _S.ERROR else new
        m.state = new
        m.next_state = new
        # entry action of the new state
        if new is _S.ACTIVE:
            m.error_logged = False
            self._apply_params(m)
            self._call(m, "on_activated")
        elif new is _S.ERROR:
            self._call(m, "on_aborting")
        self._notify_state()

    def _apply_params(self, m: Member) -> None:
        if m.comp.params.has_staged:
            try:
                changed = m.comp.params.apply_staged()
                if changed:
                    m.comp.on_params_changed(changed)
            except Exception:
                self._failed(m, "on_params_changed", traceback.format_exc())

    def _cycle(self, planned: float, now: float) -> None:
        measured = now - self._last_start if self._last_start is not None else self.period
        self._last_start = now
        cycle = self.cycles
        perf = time.perf_counter
        active = _ACTIVE
        # one clock read per member: a member's end is the next one's start (its time
        # includes the few stores of the previous member's timing below)
        t0 = perf()
        for m in self._members:
            info = m.info
            info.planned = planned
            info.now = now
            info.measured_period = measured
            info.cycle = cycle
            comp = m.comp
            if m.primary and comp._commands:
                comp._drain_commands()
            if m.requests or m.next_state is not m.state:
                self._transition(m)
            state = m.state
            if state is active:
                if m.next_state is active:
                    # self._call(m, "on_execute") written out: the one call every active
                    # member makes every cycle
                    try:
                        result = comp.on_execute(info)
                    except Exception:
                        self._failed(m, "on_execute", traceback.format_exc())
                    else:
                        if result is not None and is_failure(result):
                            self._failed(m, "on_execute", f"on_execute returned {result!r}")
                    if m.state_update and m.next_state is active:
                        self._call(m, "on_state_update")
                # params.has_staged without a call (nor the params property's)
                if m.primary and m.params._staged:
                    self._apply_params(m)
            elif state is _ERROR:
                self._call(m, "on_error")
            t1 = perf()
            dt = t1 - t0
            t0 = t1
            m.exec_time = dt
            m.exec_sum += dt
            m.exec_count += 1
            if dt > m.exec_max:
                m.exec_max = dt
        self.cycles = cycle + 1

    def _startup(self, m: Member) -> None:
        if not m.started:
            m.started = True
            self._call(m, "on_startup")

    def _startup_all(self) -> None:
        for m in self._members:
            self._startup(m)

    def _shutdown_all(self) -> None:
        for m in self._members:
            if m.state is _S.ACTIVE:
                m.requests.clear()
                m.next_state = _S.INACTIVE
                self._transition(m)
            if m.started:
                m.started = False
                self._call(m, "on_shutdown")
        self._notify_state()

    def _has_work(self) -> bool:
        for m in self._members:
            if (m.state is not _S.INACTIVE or m.requests or m.next_state is not m.state
                    or m.comp._commands):
                return True
        return False

    def _pending(self) -> bool:
        """A member has a lifecycle request, a command or staged parameters waiting."""
        for m in self._members:
            comp = m.comp
            if m.requests or m.next_state is not m.state or (m.primary and (
                    comp._commands or (comp.params.has_staged and m.state is _S.ACTIVE))):
                return True
        return False

    def _apply_pending(self, now: float, planned: float | None = None) -> None:
        """Drain commands, apply lifecycle requests and staged parameters of the members
        with something pending, at time ``now`` (no on_execute): what a cycle's pre-do does,
        for an EC whose time does not move (paused, held) so that a synchronous activation
        or a Component.call still completes. Runs in: the EC thread."""
        planned = now if planned is None else planned
        for m in self._members:
            comp = m.comp
            staged = m.primary and comp.params.has_staged and m.state is _S.ACTIVE
            commands = m.primary and comp._commands
            if not (m.requests or m.next_state is not m.state or commands or staged):
                continue
            info = m.info
            info.now = now
            info.planned = planned
            if commands:
                comp._drain_commands()
            n = 0
            while (m.requests or m.next_state is not m.state) and n < 16:
                self._transition(m)
                n += 1
            if m.primary and comp.params.has_staged and m.state is _S.ACTIVE:
                self._apply_params(m)

    # -- time control ------------------------------------------------------------------------
    # Every EC kind is a time base (rtcf.simtime's SimTimeBase has the same calls): the
    # Simulator's service and any component reach theirs as Component.time_base. A
    # wall-clock PeriodicEC paces itself on the wall clock, a SteppedEC is driven from
    # outside (tick()); a SimulationEC's time base is its SimTimeBase.
    simulated = False

    @property
    def time_base(self) -> Any:
        """What controls this EC's time: the EC itself (wall clock or driven from outside);
        a SimulationEC's SimTimeBase."""
        return self

    @property
    def now(self) -> float:
        """The EC's clock [s]."""
        return self.clock.now()

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def real_time_factor(self) -> float:
        """1: a wall-clock EC runs at real time (a stepped EC at its driver's pace)."""
        return 1.0

    def set_real_time_factor(self, factor: float) -> None:
        """ValueError: only simulated time has a factor (rtcf.simulation.enable)."""
        raise ValueError(f"execution context {self.name!r} runs on the wall clock, not in "
                         "simulation time (rtcf.simulation.enable: YES): it has no real-time "
                         "factor")

    def pause(self) -> None:
        """No cycle runs until resume() (lifecycle requests and commands are still applied
        at once). From another thread it returns once no cycle runs."""
        self._paused = True
        self.wake()
        if self._running and not self.in_ec_thread() and self._thread_alive():
            self._run_in_thread(lambda: None)

    def resume(self) -> None:
        """Cycles run again (the schedule starts afresh from now)."""
        with self._steps_done:
            self._steps = 0
            self._paused = False
            self._steps_done.notify_all()
        self.wake()

    def advance(self, seconds: float) -> float:
        """Pause, run the cycles of the next ``seconds`` (round(seconds * rate)), stay
        paused; return the EC's time. ValueError for a negative, NaN or infinite value."""
        ok = isinstance(seconds, (int, float, np.integer, np.floating)) \
            and not isinstance(seconds, bool) and 0.0 <= float(seconds) < float("inf")
        if not ok:
            raise ValueError(f"advance: expected a finite number of seconds >= 0, got "
                             f"{show_value(seconds)}")
        n = int(round(float(seconds) * self.rate))
        self._paused = True
        self._advance_cycles(n)
        return self.now

    def _advance_cycles(self, n: int) -> None:
        with self._steps_done:
            self._steps += n
        self.wake()
        if n <= 0 or self.in_ec_thread() or not self._running:
            return
        with self._steps_done:
            while self._steps > 0 and self._paused and self._thread_alive():
                self._steps_done.wait(0.5)

    def _step_done(self) -> None:
        """A cycle asked for by advance() has run. Runs in: the EC thread."""
        with self._steps_done:
            if self._steps > 0:
                self._steps -= 1
                if self._steps == 0:
                    self._steps_done.notify_all()

    # -- control (overridden) ------------------------------------------------------------
    def start(self) -> ReturnCode:
        raise NotImplementedError

    def stop(self) -> ReturnCode:
        raise NotImplementedError

    def is_running(self) -> bool:
        return self._running

    def wake(self) -> None:
        """Something is pending for the EC thread (request, command, parameter)."""

    def accepts_commands(self) -> bool:
        return self._running

    def exclusive(self) -> Any:
        """A context in which no cycle runs (for work done outside the EC thread)."""
        return self._tick_lock

    def in_ec_thread(self) -> bool:
        return self._thread_ident == threading.get_ident()

    def clock_is_real(self) -> bool:
        return not isinstance(self.clock, ManualClock)

    def _thread_alive(self) -> bool:
        return False

    def _run_in_thread(self, fn: Callable[[], Any]) -> Any:
        return fn()

    def set_rate(self, rate: float) -> ReturnCode:
        """Change the rate; on_rate_changed runs for every member (in the EC thread when
        the EC runs, else in the caller's)."""
        try:
            rate = float(rate)
        except (TypeError, ValueError):
            return ReturnCode.BAD_PARAMETER
        if check_rate(rate):
            return ReturnCode.BAD_PARAMETER

        def apply() -> None:
            self.rate = rate
            self.period = 1.0 / rate
            for m in self._members:
                m.info.period = self.period
                if m.state is _S.ACTIVE:
                    self._call(m, "on_rate_changed")
            self._rate_changed()
        if self._running and not self.in_ec_thread() and self._thread_alive():
            self._run_in_thread(apply)
        else:
            apply()
        return ReturnCode.RTC_OK

    def _rate_changed(self) -> None:
        pass

    # -- tracing ---------------------------------------------------------------------------
    def enable_trace(self, capacity: int = 65536, path: str | None = None) -> None:
        """Record every cycle's timing (rtcf.trace) from the next start on; ``path``: where
        stop() saves it (.npz). Call before start()."""
        self._trace_cfg = (int(capacity), path)

    def _open_trace(self) -> None:
        cfg = getattr(self, "_trace_cfg", None)
        if cfg is not None and self.trace is None:
            from .trace import CycleTrace
            self.trace = CycleTrace(cfg[0], [m.comp.instance_name for m in self._members])

    def _close_trace(self) -> None:
        trace, self.trace = self.trace, None
        if trace is None:
            return
        path = self._trace_cfg[1]
        if path:
            try:
                saved = trace.save(path, self.period, self.name)
                self.log.info("cycle trace of %r saved to %s (python -m rtcf.trace %s)",
                              self.name, saved, saved)
            except OSError as e:
                self.log.error("cannot save the cycle trace of %r to %s: %s", self.name, path, e)
        trace.close()
        self.last_trace = trace

    # -- what the manager prints ------------------------------------------------------------
    def member_states(self) -> str:
        """``Name:ACT Other:INA`` in member order."""
        return " ".join(f"{m.comp.instance_name}:{m.state.name[:3]}" for m in self._members)

    def status(self, now: float | None = None) -> str:
        """The status line's part for this EC since the previous call (``now``: the
        monotonic time of this call): cycles per second and overruns in that interval, its
        worst lateness, the total overruns, member states. Reads the counters and the
        lateness ring the EC thread fills anyway. Runs in: the manager's main thread (one
        caller: it keeps the interval mark)."""
        now = time.monotonic() if now is None else now
        iv = self.interval_stats(getattr(self, "_status_mark", None))
        t0 = getattr(self, "_status_time", now)
        self._status_mark, self._status_time = iv["mark"], now
        dt = now - t0
        rate = f"{iv['cycles'] / dt:.0f}/{self.rate:g} Hz" if dt > 0 else f"-/{self.rate:g} Hz"
        return (f"[{self.name} {rate} late max {iv['late_max'] * 1e3:.2f} ms overruns "
                f"+{iv['overruns']} ({self.overruns} total)] {self.member_states()}")

    def report(self) -> str:
        """The final report's line for this EC: cycles, achieved rate, overruns, lateness
        percentiles."""
        st = self.stats()
        return (f"{self.name}: {st['cycles']} cycles, {st['achieved_rate']:.2f} Hz "
                f"(nominal {self.rate:g}), overruns {st['overruns']}, lateness p50 "
                f"{st['lateness_p50'] * 1e6:.1f} us p99 {st['lateness_p99'] * 1e6:.1f} us "
                f"p99.9 {st['lateness_p999'] * 1e6:.1f} us max "
                f"{st['lateness_max'] * 1e6:.1f} us")

    # -- statistics ----------------------------------------------------------------------
    def timing_rings(self) -> tuple[np.ndarray, np.ndarray]:
        """Read-only views of the lateness and period rings [s]: cycle ``c`` (counted from
        1 by ``cycles``) at index ``(c - 1) % HISTORY``. Runs in: any thread; the EC thread
        keeps writing them, so copy what must hold still."""
        return self._rings

    def interval_stats(self, mark: tuple[int, int] | None) -> dict[str, Any]:
        """Cycles, overruns and the worst lateness [s] since ``mark`` (what a previous call
        returned; None: since the start). Any thread; reads counters and the ring only."""
        cycles, overruns = self.cycles, self.overruns
        c0, o0 = mark if mark is not None else (0, 0)
        n = min(cycles - c0, HISTORY)
        if n > 0:
            idx = np.arange(cycles - n, cycles) % HISTORY
            late_max = float(self._lateness[idx].max())
        else:
            late_max = 0.0
        return {"cycles": cycles - c0, "overruns": overruns - o0, "late_max": late_max,
                "mark": (cycles, overruns)}

    def recent_stats(self, window: float = 1.0) -> dict[str, float]:
        """Running totals plus the achieved rate [Hz], p99 and worst lateness [s] of the
        cycles of the last ``window`` seconds (0 when the EC has not cycled in that time).
        Runs in: any thread (a tool's request on an ORB thread); reads the counters and
        the timing rings only, so the EC thread does nothing for it."""
        cycles, overruns, last = self.cycles, self.overruns, self._last_start
        out = {"cycles": float(cycles), "overruns": float(overruns), "rate": 0.0,
               "lateness_p99": 0.0, "lateness_max": 0.0}
        n = min(cycles - 1, HISTORY - 1, max(1, int(window * self.rate)))
        if n <= 0 or last is None or self.clock.now() - last > max(window, 2 * self.period):
            return out
        idx = (cycles - 1 - np.arange(n)) % HISTORY
        late = self._lateness[idx]
        periods = self._periods[idx]
        mean = float(periods.mean())
        out["rate"] = 1.0 / mean if mean > 0 else 0.0
        out["lateness_p99"] = percentiles(late, (99.0,))[0]
        out["lateness_max"] = float(late.max())
        return out

    def stats(self, window: float = 1.0) -> dict[str, Any]:
        """Timing profile: achieved rate and mean period over the last ``window`` seconds
        of cycles, overruns, lateness percentiles [s] over the kept history, per member
        execution times [s]."""
        n = min(self.cycles, HISTORY)
        late = np.sort(self._lateness[:n]) if n else np.zeros(1)
        k = min(n - 1, max(1, int(window * self.rate))) if n > 1 else 0
        if k > 0:
            idx = (self.cycles - 1 - np.arange(k)) % HISTORY
            recent = self._periods[idx]
            mean_period = float(recent.mean()) if recent.mean() > 0 else self.period
        else:
            mean_period = self.period
        p50, p99, p999 = percentiles(late, (50.0, 99.0, 99.9), presorted=True)
        return {
            "name": self.name, "rate": self.rate, "cycles": self.cycles,
            "overruns": self.overruns,
            "achieved_rate": (1.0 / mean_period) if k > 0 else 0.0,
            "mean_period": mean_period,
            "lateness_p50": p50,
            "lateness_p99": p99,
            "lateness_p999": p999,
            "lateness_max": float(late[-1]),
            "realtime": bool(getattr(self, "realtime", False)),
            "members": {m.comp.instance_name: {
                "state": m.state.name, "exec_last": m.exec_time, "exec_max": m.exec_max,
                "exec_mean": m.exec_sum / m.exec_count if m.exec_count else 0.0}
                for m in self._members},
        }


class SteppedEC(ExecutionContext):
    """Runs cycles only when told to (tick/step), in the caller's thread, on a manual clock:
    deterministic tests and simulation (OpenHRP's ExecutionContext with tick()).

    Its kind is PERIODIC, as OpenRTM's ExtTrigExecutionContext reports: each tick is one
    period of ``rate``. ``ticked`` tells the manager it has no rate of its own to report.

    Runs in: tick(), step() and advance() run the cycles in the calling thread (a test, a
    simulator, an ORB thread serving OpenRTM's tick()); concurrent callers run one after
    the other. The other methods as ExecutionContext's."""

    kind = "PERIODIC"
    ticked = True

    def __init__(self, rate: float = 1000.0, name: str = "", clock: ManualClock | None = None,
                 **kw: Any):
        super().__init__(rate, name, clock or ManualClock(), **kw)

    def start(self) -> ReturnCode:
        if self._running:
            return ReturnCode.PRECONDITION_NOT_MET
        self._running = True
        self._open_trace()
        self.started_at = self.clock.now()
        prev, self._thread_ident = self._thread_ident, threading.get_ident()
        try:
            self._startup_all()
        finally:
            self._thread_ident = prev
        return ReturnCode.RTC_OK

    def stop(self) -> ReturnCode:
        if not self._running:
            return ReturnCode.PRECONDITION_NOT_MET
        self._thread_ident = threading.get_ident()
        try:
            self._shutdown_all()
        finally:
            self._thread_ident = None
            self._running = False
            self._close_trace()
        return ReturnCode.RTC_OK

    def accepts_commands(self) -> bool:
        # posted commands run at the next tick, in the ticking thread
        return self._running

    def tick(self) -> None:
        """Run one cycle at the current clock time, then advance the clock by one period.
        Thread-safe: concurrent ticks (e.g. from ORB threads) run one after the other.
        Paused (time control), a tick runs no cycle: it only applies pending lifecycle
        requests and commands, and the clock does not move."""
        # the lock is reentrant: pause(), advance() and apply_requests() may be called from
        # a hook, inside the tick that holds it. acquire / release rather than `with`: the
        # same steps, about half the cost of the context manager's calls
        lock = self._tick_lock
        lock.acquire()
        try:
            if self._paused and not self._advancing:
                self._paused_tick()
                return
            if not self._running:
                self.start()
            self._thread_ident = _get_ident()
            clock = self.clock
            try:
                now = clock.now()
                last = self._last_start
                if last is not None:
                    self._period_ring[self.cycles % HISTORY] = now - last
                self._cycle(now, now)
                if self.trace is not None:
                    self.trace.record(now, now, now, now, clock.now(),
                                      [m.exec_time for m in self._members])
            finally:
                self._thread_ident = None
            if isinstance(clock, ManualClock):
                clock.advance(self.period)
        finally:
            lock.release()

    def _paused_tick(self) -> None:
        if not self._running:
            return
        prev, self._thread_ident = self._thread_ident, threading.get_ident()
        try:
            self._apply_pending(self.clock.now())
        finally:
            self._thread_ident = prev
        self._notify_state()

    # time control: driven from outside, the EC's time moves only when ticked
    def pause(self) -> None:
        """Ticks run no cycle until resume(); returns once no tick runs."""
        self._paused = True
        with self._tick_lock:
            pass

    def resume(self) -> None:
        self._paused = False

    def advance(self, seconds: float) -> float:
        """Pause, then run round(seconds * rate) cycles now, in the caller's thread (its
        driver's ticks stay refused until resume()); returns the EC's time."""
        ExecutionContext.advance(self, seconds)     # checks, pauses, counts the cycles
        tick = self.tick
        with self._tick_lock:                       # the driver's ticks wait meanwhile
            n, self._steps = self._steps, 0
            self._advancing = True                  # its own ticks run paused as they are
            try:
                for _ in range(n):
                    tick()
            finally:
                self._advancing = False
        return self.now

    def _advance_cycles(self, n: int) -> None:
        with self._steps_done:
            self._steps += n

    def set_real_time_factor(self, factor: float) -> None:
        raise ValueError(f"execution context {self.name!r} is not in simulation time "
                         "(rtcf.simulation.enable: YES): it is driven from outside by "
                         "tick(), at its driver's pace, and has no real-time factor")

    def step(self, n: int = 1) -> None:
        """``n`` ticks, one after the other (each takes the lock and checks for a pause)."""
        tick = self.tick
        if n == 1:
            tick()
            return
        for _ in range(int(n)):
            tick()

    def status(self, now: float | None = None) -> str:
        """Driven by tick(): no rate or lateness of its own."""
        return f"[{self.name} stepped {self.cycles} cycles] {self.member_states()}"

    def report(self) -> str:
        return f"{self.name}: {self.cycles} cycles, ticked (no rate of its own)"

    def apply_requests(self, comp: Component) -> None:
        """Apply ``comp``'s queued lifecycle requests now (on_activated, ...), without a
        cycle: OpenRTM's ExtTrig EC applies a transition asked for by a tool at once, not at
        the next tick. Runs in: the caller's thread (an ORB thread), between ticks."""
        if not self._running:
            return
        with self._tick_lock:
            m = self._by_comp.get(id(comp))
            if m is None:
                return
            prev, self._thread_ident = self._thread_ident, threading.get_ident()
            try:
                for _ in range(8):     # a request, then a failure's way into ERROR at most
                    if not (m.requests or m.next_state is not m.state):
                        break
                    self._transition(m)
            finally:
                self._thread_ident = prev


class PeriodicEC(ExecutionContext):
    """A thread that runs a cycle at every absolute deadline t0 + k * period.

    It sleeps until ``spin`` seconds before the deadline, then spins, so that the cycle
    starts within microseconds of it; the schedule never drifts. After a cycle that ended
    past the next deadline, ``overrun_policy`` decides (OVERRUN_POLICIES): ``skip`` (default)
    waits for the first deadline still ahead, counting every missed one as an overrun;
    ``catch_up`` runs the missed cycles at once. When every member is Inactive and nothing
    is pending, the thread waits for a request. On a ManualClock the EC runs in virtual
    time: instead of sleeping it sets the clock to the deadline (deterministic tests).

    Runs in: its own thread (``rtcf-ec-<name>``) runs every cycle; the public methods as
    ExecutionContext's (wake: any thread).
    """

    def __init__(self, rate: float = 1000.0, name: str = "", clock: Clock | None = None,
                 spin: float = 200e-6, sched_fifo: bool = False, priority: int = 50,
                 spin_yield: bool = False, overrun_policy: str = "skip",
                 cpus: frozenset[int] | None = None, **kw: Any):
        super().__init__(rate, name, clock or MonotonicClock(), **kw)
        if spin < 0:
            raise ConfigError(f"execution context {name}: spin: expected >= 0 s, got {spin}")
        if overrun_policy not in OVERRUN_POLICIES:
            raise ConfigError(f"execution context {name}: overrun_policy: expected one of "
                              f"{', '.join(OVERRUN_POLICIES)}, got {show_value(overrun_policy)}")
        self.overrun_policy = overrun_policy
        self.spin = spin
        self.spin_yield = spin_yield      # release the GIL while spinning (time.sleep(0))
        self.sched_fifo = sched_fifo
        self.priority = priority
        self.cpus = cpus                  # exec_cxt.periodic.cpu_affinity (None: not bound)
        self.realtime = False
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._stop_requested = False
        self._calls: deque[tuple[Callable[[], Any], threading.Event, list]] = deque()
        self._resync = True

    def start(self) -> ReturnCode:
        if self._running:
            return ReturnCode.PRECONDITION_NOT_MET
        self._stop_requested = False
        self._running = True
        self._open_trace()
        self._started_evt = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"rtcf-ec-{self.name}",
                                        daemon=True)
        self._thread.start()
        self._started_evt.wait(5.0)
        return ReturnCode.RTC_OK

    def stop(self) -> ReturnCode:
        if not self._running:
            return ReturnCode.PRECONDITION_NOT_MET
        self._stop_requested = True
        self._wake.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(10.0)
        self._running = False
        self._thread = None
        self._close_trace()
        return ReturnCode.RTC_OK

    def wake(self) -> None:
        self._wake.set()

    def _thread_alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _run_in_thread(self, fn: Callable[[], Any]) -> Any:
        done = threading.Event()
        box: list = []
        self._calls.append((fn, done, box))
        self._wake.set()
        if not done.wait(10.0):
            raise TimeoutError(f"execution context {self.name!r} did not run the call")
        if box and isinstance(box[0], BaseException):
            raise box[0]
        return box[0] if box else None

    def _run_calls(self) -> None:
        while self._calls:
            fn, done, box = self._calls.popleft()
            try:
                box.append(fn())
            except BaseException as e:
                box.append(e)
            done.set()

    def _rate_changed(self) -> None:
        self._resync = True

    def _enter_realtime(self) -> None:
        if self.cpus is not None:         # OpenRTM's PeriodicExecutionContext::svc() does it
            try:                          # as its thread starts
                os.sched_setaffinity(0, self.cpus)
            except (AttributeError, OSError) as e:
                self.log.warning("exec_cxt.periodic.cpu_affinity: execution context %r "
                                 "stays on every CPU (%s)", self.name, e)
        if not self.sched_fifo:
            return
        self.realtime = set_thread_fifo(True, self.priority)  # False: a normal thread

    def _run(self) -> None:
        self._thread_ident = threading.get_ident()
        self._enter_realtime()
        clock = self.clock
        self.started_at = clock.now()
        self._startup_all()
        self._started_evt.set()
        wake = self._wake
        deadline = clock.now()
        trace = self.trace
        if trace is not None:
            trace.open_thread()
        policy = self.overrun_policy
        pacer = self._pacer = Pacer(clock, spin=self.spin, spin_yield=self.spin_yield,
                                    virtual=isinstance(clock, ManualClock))

        def timed_wait(seconds: float) -> bool:
            """The pacer's timed wait: True when woken for other work (a call, a request,
            stop, pause)."""
            wake.clear()
            if self._calls or self._stop_requested:
                return True
            return wake.wait(seconds)

        try:
            while not self._stop_requested:
                self._run_calls()
                if self._paused and not self._steps:
                    # paused (time control): no cycle; requests and commands apply at once
                    self._apply_pending(clock.now())
                    wake.clear()
                    if self._paused and not self._steps and not self._calls \
                            and not self._pending():
                        wake.wait(0.5)
                    self._resync = True
                    continue
                if not self._steps and not self._has_work():
                    wake.clear()
                    if not self._has_work() and not self._calls:
                        wake.wait(0.5)
                        self._resync = True
                    continue
                if self._resync:
                    deadline = clock.now()
                    self._resync = False
                period = self.period
                half = 0.5 * period if policy == "skip" else 0.0
                if trace is not None:
                    trace.before_sleep()
                late = pacer.release(deadline, timed_wait)   # sleep, then spin
                if late is None:
                    continue                  # woken for a call, a request, stop or pause
                now = pacer.released
                if trace is not None:
                    trace.after_sleep(pacer.slept)
                i = self.cycles % HISTORY
                self._late_ring[i] = late
                if self._last_start is not None:
                    self._period_ring[i] = now - self._last_start
                self._cycle(deadline, now)
                if self._steps:
                    self._step_done()
                start_deadline = deadline
                deadline += period
                end = clock.now()
                if trace is not None:
                    trace.record(start_deadline, start_deadline - pacer.spin, pacer.woke, now,
                                 end, [m.exec_time for m in self._members])
                if end > deadline or deadline - now < half:
                    deadline, missed, skipped = next_deadline(start_deadline, end, period,
                                                              policy, now)
                    self.overruns += missed
                    self.skipped += skipped
        except BaseException:
            self.log.exception("execution context %r stopped by an internal error", self.name)
        finally:
            self._shutdown_all()
            self._run_calls()
            self._thread_ident = None
