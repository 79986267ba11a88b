"""Simulation time: execution contexts whose clock is simulated time, all of a process in
lockstep on one time base driven by one thread (OpenRTM's OpenHRP / Simulator execution
contexts, where the simulator ticks every controller once per simulation step).

* :class:`SimTimeBase` owns simulated time (``now`` [s]) and the one thread that runs every
  cycle. It runs the cycles of each simulated *instant* back to back, as fast as the machine
  allows (real-time factor 0) or paced against a wall clock at a factor (1 = real time,
  20 = twenty times faster). ``pause()``, ``resume()``, ``advance(seconds)`` and
  ``set_real_time_factor()`` may be called from any thread (e.g. an ORB thread serving a
  Simulator's service).
* :class:`SimulationEC` is an :class:`~rtcf.execution.ExecutionContext` (so the lifecycle,
  members, ECInfo, the CORBA EC service and rtshell work unchanged) whose cycles the time
  base runs: cycle k of an EC at rate r runs at the instant k / r [s] exactly; ECInfo.now and
  ECInfo.planned are that instant, ECInfo.measured_period the simulated time since the
  EC's previous cycle.
* :class:`SimClock` reads simulated time; it is every SimulationEC's ``clock``.

What ``now`` means: the simulated time the system has reached. The cycles of every instant
before ``now`` have run, those of ``now`` have not (they are about to run, or are running: a
hook reading its EC's clock sees its own instant). Simulated time starts at 0.

Order. At an instant, the due ECs run one after the other in the order they were created on
the time base (in a composition: the order of ``execution_contexts``, the implicit
``default`` EC last), each running its members in their declared order. Declaration order
rather than a rule such as "the faster EC first" because which EC should go first at a
shared instant depends on the data flow (a 100 Hz SequencePlayer feeding a 1 kHz controller
wants the player first; a 1 kHz simulator feeding a 100 Hz DCM wants the simulator first):
the author of the composition decides, and declares the producer first.

Lifecycle requests and commands. At full speed they are applied at the start of the EC's
next cycle, as on a wall-clock EC. Whenever the time base thread waits (paused, held, at
the stop time, or ahead of the wall clock when paced) it wakes for them and applies them at
once, at the current simulated time (ECInfo.now = now, ECInfo.planned = that EC's next
instant): a synchronous activation from another thread therefore never hangs, paused or
not. The thread also runs the EC-thread calls of ``set_rate``, ``remove_component`` etc.
between two instants.

Threads: one thread per time base (``rtcf-sim``), started when the first SimulationEC
starts and ended when the last one stops. Everything a component does in its hooks runs in
it; a hook that blocks stops simulated time for every EC (lockstep has no other way).
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
from collections import deque
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Callable, Iterator

import numpy as np

from .clock import Clock, ManualClock, MonotonicClock
from .component import Component, run_command
from .errors import ConfigError, show_value
from .execution import HISTORY, ExecutionContext
from .overrun import check_policy, next_deadline
from .pacer import Pacer, set_thread_fifo, thread_is_realtime
from .lifecycle import LifeCycleState, ReturnCode
from .errors import LockstepError
from .log import get_logger
from .validate import check_factor

__all__ = ["SimTimeBase", "SimClock", "SimulationEC", "check_factor", "enable_process_simulation",
           "disable_process_simulation", "process_time_base", "EPS"]

_S = LifeCycleState
INF = math.inf
_get_ident = threading.get_ident
# Simulated times within EPS of an instant count as that instant: advance(0.001) repeated
# a thousand times accumulates float error, and must still run exactly one 1 kHz cycle each.
EPS = 1e-9
CALL_TIMEOUT = 10.0   # [s] wall: how long a call into the time base thread may wait
# Why a paced instant ended past the next one's wall time (SimTimeBase.overrun_causes): the
# largest of its parts. A late release (the time base thread's schedstat, Linux): ``cpu``,
# it spent at least half the lateness waiting for a CPU (the machine's load); ``gil``, it
# was put to sleep once more after its timed wait ended (the GIL held by another thread of
# the process); ``timer``, neither: its timer fired late (or the virtual CPU did not run: a
# hypervisor). ``remote``: the step calls to other processes of a lockstep run (their
# wake-up, GIL, members and the wire); ``members``: this process's own cycles. The instants
# that follow a late one and are late too (catch_up) count under its cause.
OVERRUN_CAUSES = ("cpu", "gil", "timer", "remote", "members")
LATE_RELEASE = 200e-6   # [s] a release this late reads the thread's schedstat at once


def _schedstat() -> int | None:
    """A descriptor of the calling thread's /proc schedstat (Linux), else None."""
    try:
        return os.open("/proc/thread-self/schedstat", os.O_RDONLY)
    except OSError:
        return None


def _sched(fd: int | None) -> tuple[float, int]:
    """The thread's time spent runnable but not running so far [s] and how many times it
    was switched in (schedstat; 0, 0 without it)."""
    if fd is None:
        return 0.0, 0
    try:
        f = os.pread(fd, 64, 0).split()
        return int(f[1]) * 1e-9, int(f[2])
    except (OSError, IndexError, ValueError):
        return 0.0, 0


def _seconds(seconds: object, what: str) -> float:
    ok = isinstance(seconds, (int, float, np.integer, np.floating)) \
        and not isinstance(seconds, bool) and 0.0 <= float(seconds) < INF  # NaN: False
    if not ok:
        raise ValueError(f"{what}: expected a finite number of seconds >= 0, "
                         f"got {show_value(seconds)}")
    return float(seconds)  # type: ignore[arg-type]


class SimClock:
    """A :class:`~rtcf.clock.Clock` reading a time base's simulated time [s]."""

    __slots__ = ("_base",)

    def __init__(self, base: "SimTimeBase"):
        self._base = base

    def now(self) -> float:
        """Runs in: any thread."""
        return self._base.now


class SimTimeBase:
    """Simulated time and the one thread that runs every SimulationEC of it in lockstep.

    ``real_time_factor``: 0 runs cycles back to back, F > 0 paces simulated time at F times
    the wall clock. ``wall_clock``: what pacing reads (a ManualClock in tests). Paced, each
    instant is released as a PeriodicEC releases a cycle: a timed wait until ``spin``
    seconds before its wall-clock time, then a busy-wait to it (``spin_yield``: releasing the
    GIL while spinning; ``spin`` 0: the timed wait only; never on a ManualClock), and with
    ``sched_fifo`` the thread runs under SCHED_FIFO at ``priority`` while it paces (not while
    it runs flat out: factor 0, advance()), where permitted. A lockstep follower's
    (``driven``) instants run in the ORB thread of the leader's step calls: with
    ``sched_fifo`` and a factor above 0 that thread is put under SCHED_FIFO at ``priority``
    at its first step and stays so (the priority of the leader's thread that waits for it).

    Runs in: the public methods may be called from any thread unless said otherwise.
    """

    simulated = True

    def __init__(self, real_time_factor: float = 1.0, *, wall_clock: Clock | None = None,
                 name: str = "sim", spin: float = 200e-6, spin_yield: bool = False,
                 sched_fifo: bool = False, priority: int = 50,
                 overrun_policy: str = "catch_up", driven: bool = False,
                 cpu: int | None = None):
        problem = check_factor(real_time_factor)
        if problem:
            raise ConfigError(f"simulation time: real_time_factor: {problem}, got "
                              f"{show_value(real_time_factor)}")
        ok = isinstance(spin, (int, float, np.integer, np.floating)) \
            and not isinstance(spin, bool) and 0.0 <= float(spin) < INF
        if not ok:
            raise ConfigError(f"simulation time: spin: expected a number of seconds >= 0, "
                              f"got {show_value(spin)}")
        if check_policy(overrun_policy):
            raise ConfigError(f"simulation time: overrun_policy: {check_policy(overrun_policy)}"
                              f", got {show_value(overrun_policy)}")
        self.name = name
        self.log = get_logger(f"simtime.{name}")
        self.now = 0.0                      # written by the time base thread only
        self.clock = SimClock(self)
        self._factor = float(real_time_factor)
        self._wall = wall_clock or MonotonicClock()
        # a ManualClock moves only when told: spinning on it would never end
        self.spin = 0.0 if isinstance(self._wall, ManualClock) else float(spin)
        self.spin_yield = bool(spin_yield)
        self.sched_fifo = bool(sched_fifo)
        self.priority = int(priority)
        # lockstep across processes, paced under SCHED_FIFO: the CPU that the leader's time
        # base thread and every follower's step thread share (None: no pinning)
        self.cpu = cpu
        self._pin_warned = False
        self.fifo = False                   # the thread runs under SCHED_FIFO now
        self._fifo_asked = False            # what the thread last asked for
        self._paused = False
        self._holds = 0
        self._target: float | None = None   # advance(): stop here, stay paused
        self._stop_at: float | None = None  # never pass this time (--duration)
        self.stop_reached = threading.Event()
        self._created = 0                        # ECs created on this base (their order)
        self._ecs: list[SimulationEC] = []       # the running ones, creation order
        self._next_due = INF
        self._cond = threading.Condition(threading.Lock())
        self._run_lock = threading.RLock()       # held while an instant / pending work runs
        self._advance_lock = threading.Lock()    # one advance() at a time
        self._calls: deque[tuple[Callable[[], Any], Future]] = deque()
        self._thread: threading.Thread | None = None
        self._ident: int | None = None
        self._wakes = 0
        self._seen = 0
        self._idle_gen = -1
        self._reanchor = True               # pacing starts afresh at the next instant
        self._pacer = Pacer(self._wall, spin=self.spin, spin_yield=self.spin_yield)
        self.overrun_policy = overrun_policy
        # lockstep across processes (rtcf.lockstep, rtcf/corba/lockstep.py)
        self.driven = bool(driven)          # a follower: instants come from run_step()
        self.controller: Any = None         # a follower: the leader's time control
        self.fault: LockstepError | None = None   # what ended a lockstep run
        self.on_fault: Callable[[LockstepError], None] | None = None
        self.remote_calls = 0               # leader: steps sent to other processes
        self.carried = 0                    # samples carried on step calls (both ways)
        # the thread running an instant now (the time base thread in _instant, a follower's
        # step thread in run_step), else None: flush pushes to another process of the
        # lockstep run made there travel on the step call (rtcf/corba/lockstep.py StepMail)
        self.stepping: int | None = None
        self._last_step = -INF              # follower: the instant of its last step
        self._fifo_step = threading.local()  # follower: .asked in a step thread once asked
        self._fifo_warned = False
        # statistics (read by the manager's status line and report)
        self.instants = 0
        self.resyncs = 0
        self.overruns = 0                   # paced: instants that ended past the next one
        self.overrun_causes = dict.fromkeys(OVERRUN_CAUSES, 0)   # the overruns by cause
        self._cause: str | None = None      # the cause of the late instants in a row
        self._remote_time = 0.0             # [s] wall of this instant's step calls
        self._rd_fd: int | None = None      # the time base thread's schedstat
        self._rd_wait = (0.0, 0)            # its schedstat when its last pacing wait began
        self._rd_at = -INF                  # the instant that wait was for
        self._rd_release: tuple[float, int] | None = None   # ... at a late release
        self._sleeps = 0                    # timed waits since (each may sleep once)
        self.lateness_max = 0.0             # paced: worst wall lateness of an instant [s]
        self.wall_started: float | None = None   # wall clock at the first instant
        self.wall_reached: float | None = None   # wall clock when the stop time was reached

    # -- the contract ---------------------------------------------------------------------
    # In a follower process of a lockstep simulation (``controller`` set) the time control
    # calls act on the leader's time base: the system has one simulated clock.
    @property
    def real_time_factor(self) -> float:
        c = self.controller
        return c.real_time_factor if c is not None else self._factor

    @property
    def paused(self) -> bool:
        c = self.controller
        return c.paused if c is not None else self._paused

    def pause(self, wait: bool = True) -> None:
        """Stop simulated time after the current instant. From another thread it returns
        once no cycle runs any more (``now`` then stays put); from the time base thread
        (a hook, a command), or with ``wait`` False, it takes effect when the current
        instant ends."""
        if self.controller is not None:
            self.controller.pause(wait=wait and not self.in_thread())
            return
        with self._cond:
            self._paused = True
            self._reanchor = True
            self._wake_locked()
        if wait:
            self._wait_instant()

    def resume(self) -> None:
        """Let simulated time run again (paced from now on at the factor). After a lockstep
        fault it stays paused (the run is ending)."""
        if self.controller is not None:
            self.controller.resume()
            return
        if self.fault is not None:
            return
        with self._cond:
            self._paused = False
            self._reanchor = True
            self._wake_locked()

    def advance(self, seconds: float, wait: bool = True) -> float:
        """Run every cycle due in the next ``seconds`` of simulated time (the instants t
        with now <= t < now + seconds), unpaced, and stay paused; return the new ``now``.
        Pauses first if running. ValueError for a negative, NaN or infinite value. From
        another thread it blocks until done; from the time base thread (a hook or a command)
        it only sets the target and returns it (the cycles run after the current instant).
        At the stop time (``set_stop_time``) it returns there."""
        s = _seconds(seconds, "advance")
        if self.controller is not None:
            return self.controller.advance(s, wait=wait and not self.in_thread())
        if self.in_thread() or not wait:
            with self._cond:
                self._paused = True
                self._target = max(self._target or self.now, self.now) + s
                self._wake_locked()
                return self._target
        with self._advance_lock:
            self.pause()
            with self._cond:
                if not self._alive():
                    # no EC runs: nothing is due, time just moves
                    with self._run_lock:
                        self.now = self._clamp(self.now + s)
                    return self.now
                self._target = self.now + s
                self._wake_locked()
                while self._target is not None and self._alive():
                    self._cond.wait(0.5)
                self._target = None
            return self.now

    def set_real_time_factor(self, factor: float) -> None:
        """0 = as fast as possible, 1 = real time, F = F times real time. ValueError for a
        negative, NaN or infinite factor (nothing changes)."""
        problem = check_factor(factor)
        if problem:
            raise ValueError(f"set_real_time_factor: {problem}, got {show_value(factor)}")
        if self.controller is not None:
            self.controller.set_real_time_factor(float(factor))
            return
        with self._cond:
            self._factor = float(factor)
            self._reanchor = True
            self._wake_locked()

    # -- extras for the manager and tests ---------------------------------------------------
    def hold(self) -> None:
        """Simulated time does not advance until release() (holds count): the leader of a
        lockstep simulation holds it from its build until every process has joined and
        activated its components."""
        with self._cond:
            self._holds += 1
            self._reanchor = True
        self._wait_instant()

    def release(self) -> None:
        with self._cond:
            self._holds -= 1
            self._reanchor = True
            self._wake_locked()

    @contextlib.contextmanager
    def held(self) -> Iterator["SimTimeBase"]:
        """A context in which simulated time does not advance (requests and commands are
        still applied): the manager starts the ECs and activates the components inside
        one, so every run starts at t = 0 with the same states."""
        with self._cond:
            self._holds += 1
            self._reanchor = True
        self._wait_instant()
        try:
            yield self
        finally:
            with self._cond:
                self._holds -= 1
                self._reanchor = True
                self._wake_locked()

    def set_stop_time(self, t: float | None) -> None:
        """Never run past simulated time ``t`` [s] (None: no limit): the instants before
        ``t`` run, then ``now`` becomes ``t`` and ``stop_reached`` is set (--duration)."""
        if t is not None:
            t = _seconds(t, "stop time")
        with self._cond:
            self._stop_at = t
            self.stop_reached.clear()
            if t is not None and self.now >= t - EPS:
                self.stop_reached.set()
            self._wake_locked()

    @property
    def stop_time(self) -> float | None:
        return self._stop_at

    @property
    def holding(self) -> bool:
        return self._holds > 0

    def wake(self) -> None:
        """Something is pending for the time base thread (request, command, parameter).
        Runs in: any thread."""
        with self._cond:
            self._wake_locked()

    def wait_idle(self, timeout: float = 5.0) -> bool:
        """Block until the thread has handled everything asked of it so far and waits
        (paused, held, at the stop time, or ahead of the wall clock): True, or False after
        ``timeout`` (e.g. it runs flat out). For tests; never call it from the thread."""
        with self._cond:
            if not self._alive():
                return True
            self._wake_locked()
            gen = self._wakes
            return self._cond.wait_for(lambda: self._idle_gen >= gen or not self._alive(),
                                       timeout)

    def in_thread(self) -> bool:
        return self._ident is not None and self._ident == threading.get_ident()

    def thread_alive(self) -> bool:
        t = self._thread
        return t is not None and t.is_alive()

    def call(self, fn: Callable[[], Any]) -> Any:
        """Run ``fn`` in the time base thread between two instants and return its result
        (re-raises its exception); at once when called from that thread."""
        if self.in_thread():
            return fn()
        fut: Future = Future()
        with self._cond:
            self._calls.append((fn, fut))
            self._ensure_thread()
            self._wake_locked()
        try:
            return fut.result(CALL_TIMEOUT)
        except FutureTimeout:
            raise TimeoutError(f"simulation time base {self.name!r} did not run the call "
                               f"within {CALL_TIMEOUT:g} s (a hook blocks?)") from None

    def stats(self) -> dict[str, Any]:
        """Simulated time, factor, state and counters. Runs in: any thread."""
        wall = self._wall.now()
        end = self.wall_reached if self.wall_reached is not None else wall
        elapsed = end - self.wall_started if self.wall_started is not None else 0.0
        return {"now": self.now, "real_time_factor": self._factor, "paused": self._paused,
                "held": self._holds > 0, "instants": self.instants, "resyncs": self.resyncs,
                "overruns": self.overruns, "overrun_causes": dict(self.overrun_causes),
                "lateness_max": self.lateness_max, "wall": wall, "wall_elapsed": elapsed,
                "fifo": self.fifo,
                "achieved_factor": self.now / elapsed if elapsed > 0 else 0.0,
                "ecs": [ec.name for ec in self._ecs]}

    def status(self, wall: float | None = None) -> str:
        """``[sim t=... s x<achieved factor> (target F)]`` since the previous call (``wall``:
        the monotonic time of this call). Runs in: the manager's main thread (one caller)."""
        import time as _time
        wall = _time.monotonic() if wall is None else wall
        t = self.now
        t0, w0 = getattr(self, "_status_mark", None) or (t, wall)
        self._status_mark = (t, wall)
        achieved = f"x{(t - t0) / (wall - w0):.2f}" if wall > w0 else "x-"
        target = "as fast as possible" if self._factor == 0 else f"target x{self._factor:g}"
        state = (" stopped" if self.stop_reached.is_set() else " paused" if self._paused
                 else " held" if self._holds else "")
        return f"[sim t={t:.3f} s {achieved} ({target}){state}]"

    def report(self) -> str:
        """The final report's line: simulated and wall time, achieved factor, instants."""
        st = self.stats()
        target = "as fast as possible" if st["real_time_factor"] == 0 else \
            f"target {st['real_time_factor']:g}"
        line = (f"simulation: {st['now']:.3f} s of simulated time in "
                f"{st['wall_elapsed']:.3f} s wall, real-time factor "
                f"{st['achieved_factor']:.2f} ({target}), {st['instants']} instants")
        remote = {e.process for e in self._ecs if not e.local}
        if remote:
            line += (f"; lockstep: {self.remote_calls} steps to {len(remote)} other "
                     f"process{'es' if len(remote) > 1 else ''} "
                     f"({', '.join(sorted(remote))})")
        elif self.driven:
            line += "; lockstep: stepped by the leader"
        if self.carried:
            line += f", {self.carried} samples carried on the steps"
        if self.overruns:
            line += f"; overruns {self.overruns} ({causes_text(self.overrun_causes)})"
        if self.fault is not None:
            line += f"\n{self.fault}"
        return line

    def __repr__(self) -> str:
        state = "paused" if self._paused else "held" if self._holds else "running"
        return (f"<SimTimeBase {self.name!r} t={self.now:.6f} s factor {self._factor:g} "
                f"{state}>")

    # -- internals: registration -------------------------------------------------------------
    def _register(self, ec: "SimulationEC", rank: float | None = None) -> float:
        """The rank of a new EC (the order of ECs at a shared instant): ``rank`` when given
        (a lockstep plan's), else its creation order."""
        with self._cond:
            self._created += 1
            return float(self._created) if rank is None else float(rank)

    # -- lockstep: parts that run in other processes (the leader) ------------------------------
    @property
    def lockstep(self) -> bool:
        """Part of a lockstep simulation across processes (a follower, or a leader with
        parts in other processes)."""
        return self.driven or any(not e.local for e in self._ecs)

    def add_remote(self, part: "RemotePart") -> None:
        """Schedule a part of the system that runs in another process (a lockstep leader):
        at each of its instants the time base steps it there, in rank order with the local
        ECs. Runs in: any thread (before simulated time starts)."""
        self.call(lambda: self._attach_remote(part))

    def _attach_remote(self, part: "RemotePart") -> None:
        part._schedule_from(self.now)
        self._ecs = sorted([*self._ecs, part], key=lambda e: e._rank)
        self._refresh_due()

    def run_step(self, t: float, parts: list["SimulationEC"]) -> None:
        """A follower's instant, asked for by the leader: one cycle of each of ``parts`` at
        simulated time ``t`` [s], in the order given, in the calling thread (an ORB thread),
        which counts as the time base thread meanwhile. LockstepError when a part's next
        instant is not ``t`` (out of step). Runs in: the leader's step call."""
        # acquire / release rather than `with`: the same steps, fewer calls (every instant)
        lock = self._run_lock
        lock.acquire()
        prev = self._ident
        try:
            self._ident = self.stepping = _get_ident()
            if self.sched_fifo and not getattr(self._fifo_step, "asked", False):
                # the step thread at the stepping side's priority: a planning worker or
                # another busy process of the machine must not delay the instant here
                self._fifo_step.asked = True
                asked = self._factor > 0.0
                self.fifo = set_thread_fifo(asked, self.priority)
                if asked:
                    self._pin(True)
                if asked and not self.fifo and not self._fifo_warned:
                    self._fifo_warned = True
                    self.log.warning("exec_cxt.periodic.sched_fifo: SCHED_FIFO is not "
                                     "permitted here: the lockstep steps run in a normal "
                                     "thread")
            if self.wall_started is None:
                self.wall_started = self._wall.now()
            for ec in parts:
                if abs(ec._next - t) > EPS:
                    raise LockstepError(
                        "?", [ec.name], t, f"out of step: execution context {ec.name!r} "
                        f"of this process is due at {ec._next:.9f} s")
            if t != self._last_step:
                self.instants += 1
                self._last_step = t
            self.now = t
            if len(parts) == 1:
                parts[0]._sim_cycle(t, 0.0)
            else:
                for ec in parts:
                    ec._sim_cycle(t, 0.0)
            # now: every cycle of this process before it has run (its next instant)
            ecs = self._ecs
            if len(ecs) == 1:
                due = ecs[0]._next
            else:
                due = INF
                for ec in ecs:
                    if ec._next < due:
                        due = ec._next
            self._next_due = due
            if due < INF:
                self.now = due
        finally:
            self.stepping = None
            self._ident = prev
            lock.release()

    def _attach(self, ec: "SimulationEC") -> None:
        """Runs in: the time base thread. Schedule ``ec`` from the current time and run
        on_startup of its members."""
        ec._schedule_from(self.now)
        self._ecs = sorted([*self._ecs, ec], key=lambda e: e._rank)
        self._refresh_due()
        ec._startup_all()

    def _detach(self, ec: "SimulationEC") -> None:
        """Runs in: the time base thread."""
        self._ecs = [e for e in self._ecs if e is not ec]
        self._refresh_due()
        ec._shutdown_members(self.now)

    def _refresh_due(self) -> None:
        due = INF
        for ec in self._ecs:
            if ec._next < due:
                due = ec._next
        self._next_due = due

    # -- internals: the thread -----------------------------------------------------------------
    def _alive(self) -> bool:
        t = self._thread
        return t is not None and t.is_alive()

    def _wake_locked(self) -> None:
        self._wakes += 1
        self._cond.notify_all()

    def _wait_instant(self) -> None:
        """From another thread: return once the current instant (if any) has ended."""
        if self._alive() and not self.in_thread():
            with self._run_lock:
                pass

    def _ensure_thread(self) -> None:
        """Called with the condition held."""
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._main, name=f"rtcf-{self.name}",
                                            daemon=True)
            self._thread.start()

    def _clamp(self, t: float) -> float:
        if self._stop_at is not None and t >= self._stop_at - EPS:
            self.stop_reached.set()
            if self.wall_reached is None:
                self.wall_reached = self._wall.now()
            return max(self.now, self._stop_at)
        return t

    def _main(self) -> None:
        me = threading.current_thread()
        ident = self._ident = threading.get_ident()
        self._rd_fd = _schedstat()          # this thread's
        self.fifo = self._fifo_asked = False     # a new thread starts as a normal one
        if self.sched_fifo and thread_is_realtime():
            set_thread_fifo(False, self.priority)   # made by a raised thread (rtcf.realtime)
        try:
            self._loop()
        except BaseException:
            self.log.exception("simulation time base %r stopped by an internal error",
                               self.name)
        finally:
            fd, self._rd_fd = self._rd_fd, None
            if fd is not None:
                os.close(fd)
            calls: list = []
            with self._cond:
                if self._thread is me:        # ended by an error: nobody runs the calls
                    self._thread = None
                    self._target = None
                    calls, self._calls = list(self._calls), deque()
                if self._ident == ident:
                    self._ident = None
                self._cond.notify_all()
            for _, fut in calls:
                if fut.set_running_or_notify_cancel():
                    fut.set_exception(RuntimeError("the simulation time base thread stopped"))

    def _run_calls(self) -> None:
        with self._run_lock:
            while self._calls:
                run_command(*self._calls.popleft())

    def _apply_pending(self) -> None:
        """Requests, commands and staged parameters of every EC, at the current time."""
        with self._run_lock:
            now = self.now
            for ec in self._ecs:
                if ec.local:
                    ec._apply_pending(now)

    def _idle(self, timeout: float | None) -> None:
        """Wait for a wake-up (or ``timeout`` [s]); nothing when one is pending."""
        with self._cond:
            if self._calls or self._wakes != self._seen:
                return
            self._idle_gen = self._seen
            self._cond.notify_all()
            self._cond.wait(timeout)

    def _loop(self) -> None:
        while True:
            if self._calls:
                self._run_calls()
            if self._wakes != self._seen:
                self._seen = self._wakes
                self._apply_pending()
            if not self._ecs:
                with self._cond:
                    if not self._ecs and not self._calls:
                        self._thread = None
                        self._cond.notify_all()
                        return
                continue
            target = self._target
            stop = self._stop_at
            if stop is not None and self.stop_reached.is_set():
                if target is not None:      # an advance cannot pass the stop time
                    with self._cond:
                        self._target = None
                        self._cond.notify_all()
                self.stop_reached.set()
                self._idle(None)
                continue
            if self._holds or (self._paused and target is None) or self.driven:
                self._reanchor = True       # (a follower's instants come from run_step)
                self._idle(None)
                continue
            limit = target if target is not None else INF
            if stop is not None and stop < limit:
                limit = stop
            t = self._next_due
            reach = t >= limit - EPS          # no cycle before the limit: time reaches it
            lateness = 0.0
            factor = self._factor
            paced = factor > 0.0 and target is None   # an advance runs unpaced
            if self.sched_fifo and paced is not self._fifo_asked:
                self._fifo_asked = paced
                self.fifo = set_thread_fifo(paced, self.priority)
                self._pin(paced and self.lockstep)
            if paced:
                at = limit if reach else t
                pacer = self._pacer
                if self._reanchor or not pacer.anchored:
                    self._reanchor = False
                    pacer.anchor(at, speed=factor)
                if self._rd_fd is not None and self._rd_at != at:
                    self._rd_at = at            # once per instant (a wake-up comes back)
                    self._rd_wait = _sched(self._rd_fd)
                    self._sleeps = 0
                lateness = pacer.release(pacer.due(at), self._pace_wait, spin=not reach)
                if lateness is not None and self._rd_fd is not None:
                    self._rd_release = (_sched(self._rd_fd) if lateness > LATE_RELEASE
                                        else None)
                if lateness is None:
                    continue                          # woken: requests, calls, pause
                self.resyncs = pacer.resyncs
                if lateness > self.lateness_max:
                    self.lateness_max = lateness
            if reach:
                self._reach(limit, t)
            else:
                try:
                    self._instant(t, limit, lateness)
                except LockstepError as e:
                    self._failed(e)
                    continue
                if paced:
                    self._after_instant(t)

    def _failed(self, fault: LockstepError) -> None:
        """A process of a lockstep simulation failed a step: simulated time pauses at the
        instant that could not complete (nothing is dropped or made up) and the run ends
        (``on_fault``, the manager). Runs in: the time base thread."""
        with self._cond:
            self.fault = fault
            self._paused = True
            self._target = None
            self._cond.notify_all()
        self.log.error("%s", fault)
        cb = self.on_fault
        if cb is not None:
            try:
                cb(fault)
            except Exception:
                self.log.exception("the lockstep fault handler failed")

    def _pace_wait(self, seconds: float) -> bool:
        """The pacer's timed wait: idle (applying nothing) for ``seconds`` at most; True
        when something needs the thread (a request, a call, pause, a new factor)."""
        self._sleeps += 1
        self._idle(seconds)
        return bool(self._calls) or self._wakes != self._seen

    def _after_instant(self, t: float) -> None:
        """The overrun policy (rtcf.overrun) after a paced instant: an instant that ended
        past the next one's wall time counts an overrun; under catch_up the next runs at
        once, more than RESYNC_LAG behind the schedule restarts; under skip the wall-clock
        schedule slips (no simulated instant is ever dropped)."""
        pacer = self._pacer
        t_next = self._next_due
        if t_next == INF or self._reanchor:
            return
        due = pacer.due(t)
        nxt = pacer.due(t_next)
        end = self._wall.now()
        if end <= nxt and self.overrun_policy == "catch_up":
            self._cause = None
            return
        deadline, missed, _ = next_deadline(due, end, nxt - due, self.overrun_policy,
                                            pacer.released)
        if missed:
            cause = self._cause
            if cause is None:               # the first late instant of a row: why
                cause = self._cause = self._why_late(due, end)
            self.overrun_causes[cause] += missed
            self.overruns += missed
            for ec in self._ecs:            # the ECs whose cycles made the instant late
                if ec.local and ec._last_start == t:
                    ec.overruns += missed
                    ec.overrun_causes[cause] += missed
        else:
            self._cause = None
        if deadline != nxt:
            pacer.anchor(t_next, wall=deadline)

    def _why_late(self, due: float, end: float) -> str:
        """The cause (OVERRUN_CAUSES) of a late instant due at wall time ``due`` that
        ended at ``end``: the largest of its late release, its step calls and its own
        cycles."""
        pacer = self._pacer
        wake = pacer.released - due
        remote = self._remote_time
        members = end - pacer.released - remote
        if wake >= remote and wake >= members:
            if self._rd_fd is None:
                return "timer"                  # nothing tells more
            now = self._rd_release or _sched(self._rd_fd)
            if now[0] - self._rd_wait[0] >= 0.5 * wake:
                return "cpu"
            return "gil" if now[1] - self._rd_wait[1] > self._sleeps else "timer"
        return "remote" if remote >= members else "members"

    def _pin(self, on: bool) -> None:
        """Put the calling thread on ``cpu`` (on) or back on every CPU of the process
        (off), where ``cpu`` is set. Runs in: the time base thread, a follower's step
        thread."""
        if self.cpu is None or not hasattr(os, "sched_setaffinity"):
            return
        try:
            cpus = {self.cpu} if on else os.sched_getaffinity(os.getpid())
            os.sched_setaffinity(0, cpus)
        except (OSError, ValueError) as e:
            if not self._pin_warned:
                self._pin_warned = True
                self.log.warning("rtcf.simulation.cpu: the lockstep threads stay on every "
                                 "CPU (CPU %s: %s)", self.cpu, e)

    def _reach(self, limit: float, due: float) -> None:
        """Time reaches ``limit`` (an advance target or the stop time) with no cycle left
        before it; a limit within EPS of the next instant snaps onto it."""
        with self._run_lock:
            t = due if abs(due - limit) <= EPS else limit
            if t > self.now:
                self.now = t
            if self._stop_at is not None and self.now >= self._stop_at - EPS:
                self.stop_reached.set()
                if self.wall_reached is None:
                    self.wall_reached = self._wall.now()
        with self._cond:
            if self._target is not None and self.now >= self._target - EPS:
                self._target = None
                self._cond.notify_all()

    def _instant(self, t: float, limit: float, lateness: float) -> None:
        """Run the cycles of every EC due at ``t``, in rank order; then time reaches the
        next instant (or ``limit``). Consecutive due parts of one other process (a lockstep
        leader's RemoteParts) go in one step call: one round trip per process and instant.
        A failed step raises LockstepError with ``now`` left at ``t``."""
        # acquire / release rather than `with`: the same steps, half the calls' cost
        lock = self._run_lock
        lock.acquire()
        try:
            if self._holds or (self._paused and self._target is None):
                return                  # paused while this thread was deciding
            if self.wall_started is None:
                self.wall_started = self._wall.now()
            self.now = t
            self._remote_time = 0.0
            batch: list[RemotePart] = []
            self.stepping = threading.get_ident()
            try:
                for ec in self._ecs:
                    if ec._next == t:
                        if ec.local:
                            if batch:
                                self._step_remote(t, batch)
                                batch = []
                            ec._sim_cycle(t, lateness)
                        else:
                            if batch and batch[0].remote is not ec.remote:
                                self._step_remote(t, batch)
                                batch = []
                            batch.append(ec)
                if batch:
                    self._step_remote(t, batch)
            finally:
                self.stepping = None
            due = INF
            for ec in self._ecs:
                if ec._next < due:
                    due = ec._next
            self._next_due = due
            self.instants += 1
            self.now = due if due < limit else limit
        finally:
            lock.release()

    def _step_remote(self, t: float, parts: list["RemotePart"]) -> None:
        """One step call to the process of ``parts`` (all due at ``t``); their grids move on
        once it has answered. LockstepError names the process and the ECs."""
        remote = parts[0].remote
        if remote is None:
            raise LockstepError(parts[0].process, [p.name for p in parts], t,
                                "the process has not joined")
        self.remote_calls += 1
        now = self._wall.now            # the pacing clock (a ManualClock in tests)
        a = now()
        remote.step(t, parts)           # raises LockstepError
        self._remote_time += now() - a
        for part in parts:              # part._advance(), written out
            k = part._k + 1
            part._k = k
            part._next = k / part.rate
            part.cycles += 1


class RemotePart:
    """A lockstep leader's view of a part of the system (an EC's members in another
    process): its grid of instants (cycle k at k / rate, as a SimulationEC's) and the
    process that runs it (``remote``: a client with ``step(t, parts)``, see
    rtcf/corba/lockstep.py). Runs in: the time base thread."""

    __slots__ = ("name", "rate", "_rank", "remote", "index", "_k", "_next", "cycles",
                 "process")
    local = False

    def __init__(self, name: str, rate: float, rank: float, process: str, index: int,
                 remote: Any = None):
        self.name = name
        self.rate = float(rate)
        self._rank = float(rank)
        self.process = process
        self.index = index               # its place in the follower's list of parts
        self.remote = remote
        self._k = 0
        self._next = INF
        self.cycles = 0

    def _schedule_from(self, t: float) -> None:
        self._k = first_instant(t, self.rate)
        self._next = self._k / self.rate

    def _advance(self) -> None:
        self._k += 1
        self._next = self._k / self.rate
        self.cycles += 1

    def __repr__(self) -> str:
        return f"<RemotePart {self.name!r} of process {self.process!r} at {self.rate:g} Hz>"


def causes_text(causes: dict[str, int]) -> str:
    """``wake-up waiting for a CPU 2, own cycles 1`` (the causes with a count, in
    OVERRUN_CAUSES order), or ``none``."""
    words = {"cpu": "wake-up waiting for a CPU", "gil": "wake-up waiting for the GIL",
             "timer": "late timer",
             "remote": "other processes' steps", "members": "own cycles"}
    text = ", ".join(f"{words[k]} {causes[k]}" for k in OVERRUN_CAUSES if causes.get(k))
    return text or "none"


def first_instant(t: float, rate: float) -> int:
    """The index k of the first instant k / rate at or after ``t`` (within EPS)."""
    k = math.ceil(t * rate - EPS * rate)
    if k < 0:
        k = 0
    while k / rate < t - EPS:
        k += 1
    while k > 0 and (k - 1) / rate >= t - EPS:
        k -= 1
    return k


class SimulationEC(ExecutionContext):
    """An execution context whose cycles a :class:`SimTimeBase` runs in simulated time:
    cycle k at instant ``k / rate`` [s]. Lifecycle, members, ECInfo, set_rate and the CORBA
    EC service are those of every EC; start/stop attach it to / detach it from the time
    base. Its thread is the time base's thread.

    Runs in: time control and lifecycle requests: any thread (the time base's calls);
    start/stop: the owner's thread, never the time base thread; its cycles: the time base
    thread (a follower's: the ORB thread of the leader's step call)."""

    kind = "PERIODIC"

    local = True           # runs here (a lockstep leader's RemotePart runs elsewhere)

    def __init__(self, rate: float = 1000.0, name: str = "",
                 time_base: SimTimeBase | None = None, rank: float | None = None,
                 **kw: Any):
        if not isinstance(time_base, SimTimeBase):
            raise ConfigError(f"execution context {name}: a SimulationEC needs a SimTimeBase,"
                              f" got {show_value(time_base)}")
        kw.pop("clock", None)
        super().__init__(rate, name, time_base.clock, **kw)
        self._base = time_base
        self.overrun_causes = dict.fromkeys(OVERRUN_CAUSES, 0)   # its overruns by cause
        self._k = 0            # index of the next cycle on this EC's grid
        self._next = INF       # its instant [s]
        self._rank = time_base._register(self, rank)

    simulated = True

    @property
    def time_base(self) -> "SimTimeBase":
        """The SimTimeBase that runs this EC: time control (pause, advance, ...) is its."""
        return self._base

    @property
    def now(self) -> float:
        return self._base.now

    @property
    def paused(self) -> bool:
        return self._base.paused

    @property
    def real_time_factor(self) -> float:
        return self._base.real_time_factor

    def set_real_time_factor(self, factor: float) -> None:
        self._base.set_real_time_factor(factor)

    def pause(self) -> None:
        self._base.pause()

    def resume(self) -> None:
        self._base.resume()

    def advance(self, seconds: float, wait: bool = True) -> float:
        return self._base.advance(seconds)

    # -- control --------------------------------------------------------------------------
    def start(self) -> ReturnCode:
        """Attach to the time base (on_startup of the members in its thread); the first
        cycle runs at the first multiple of the period at or after the current time."""
        if self._running:
            return ReturnCode.PRECONDITION_NOT_MET
        self._running = True
        self.started_at = self._base.now
        try:
            self._base.call(lambda: self._base._attach(self))
        except BaseException:
            self._running = False
            raise
        return ReturnCode.RTC_OK

    def stop(self) -> ReturnCode:
        """Detach from the time base: active members are deactivated, on_shutdown runs."""
        if not self._running:
            return ReturnCode.PRECONDITION_NOT_MET
        try:
            if self._base.thread_alive() or self.in_ec_thread():
                self._base.call(lambda: self._base._detach(self))
            else:
                with self._base._run_lock:
                    self._shutdown_members(self._base.now)
        finally:
            self._running = False
        return ReturnCode.RTC_OK

    def add_component(self, comp: Component, owned: bool = False) -> int:
        ec_id = super().add_component(comp, owned)
        if self._running and not self.in_ec_thread():
            m = self.member(comp)
            self._run_in_thread(lambda: self._startup(m))
        return ec_id

    def wake(self) -> None:
        self._base.wake()

    def in_ec_thread(self) -> bool:
        return self._base.in_thread()

    def _thread_alive(self) -> bool:
        return self._base.thread_alive()

    def _run_in_thread(self, fn: Callable[[], Any]) -> Any:
        return self._base.call(fn)

    def exclusive(self) -> Any:
        return self._base._run_lock

    def clock_is_real(self) -> bool:
        # cycles come by themselves and pending requests are applied even while paused:
        # callers may wait for them (sync transitions, Component.call)
        return True

    def set_rate(self, rate: float) -> ReturnCode:
        """As every EC's; PRECONDITION_NOT_MET in a lockstep simulation across processes,
        whose grids of instants are the whole system's (fixed by the composition)."""
        if self._base.lockstep:
            return ReturnCode.PRECONDITION_NOT_MET
        return super().set_rate(rate)

    def _rate_changed(self) -> None:
        """Runs in: the time base thread (set_rate). The new grid starts at the first
        multiple of the new period at or after the current time."""
        if self._running and self in self._base._ecs:
            self._schedule_from(self._base.now)
            self._base._refresh_due()

    # -- driven by the time base (its thread) ----------------------------------------------
    def _schedule_from(self, t: float) -> None:
        self._k = first_instant(t, self.rate)
        self._next = self._k / self.rate

    def _sim_cycle(self, t: float, lateness: float) -> None:
        i = self.cycles % HISTORY
        self._late_ring[i] = lateness
        last = self._last_start
        if last is not None:
            self._period_ring[i] = t - last
        self._cycle(t, t)
        k = self._k + 1
        self._k = k
        self._next = k / self.rate

    def _apply_pending(self, now: float, planned: float | None = None) -> None:
        """Requests, commands and staged parameters at simulated time ``now`` (ECInfo.planned:
        this EC's next instant)."""
        super()._apply_pending(now, self._next if self._next < INF else now)

    def status(self, now: float | None = None) -> str:
        return f"[{self.name} {self.rate:g} Hz {self.cycles} cycles] {self.member_states()}"

    def report(self) -> str:
        """Cycles in simulated time, the longest member cycle (wall), and when paced the
        wall-clock lateness of its instants."""
        st = self.stats()
        worst = max((m["exec_max"] for m in st["members"].values()), default=0.0)
        tb = self._base
        paced = ""
        if tb.real_time_factor > 0:
            paced = (f", paced: wall lateness p99 {st['lateness_p99'] * 1e6:.1f} us "
                     f"max {st['lateness_max'] * 1e6:.1f} us"
                     f"{' (SCHED_FIFO)' if tb.fifo else ''}")
        return (f"{self.name}: {self.cycles} cycles at {self.rate:g} Hz of simulated time, "
                f"longest member cycle {worst * 1e6:.1f} us (wall){paced}")

    def _shutdown_members(self, now: float) -> None:
        for m in self._members:
            m.info.now = now
            m.info.planned = now
        self._shutdown_all()
        self._next = INF


# -- the process's simulation mode ------------------------------------------------------------

_PROCESS_BASE: SimTimeBase | None = None


def enable_process_simulation(base: SimTimeBase) -> None:
    """Put this process in simulation mode on ``base``: data-port timestamps
    (timestamp_policy on_write / on_send / on_read / on_received) read simulated time, and
    in-process ``new`` / ``periodic`` connectors made from now on deliver in the writer's
    thread (see rtcf.ports), so that two runs are bit-identical. Called by the manager."""
    global _PROCESS_BASE
    from . import clock, ports
    _PROCESS_BASE = base
    clock.set_stamp_clock(base.clock)
    ports.set_simulation_clock(base.clock)


def disable_process_simulation() -> None:
    """Back to wall-clock mode (manager shutdown, tests)."""
    global _PROCESS_BASE
    from . import clock, ports
    _PROCESS_BASE = None
    clock.set_stamp_clock(None)
    ports.set_simulation_clock(None)


def process_time_base() -> SimTimeBase | None:
    """The time base of this process in simulation mode, else None."""
    return _PROCESS_BASE
