"""The DRL motion commands of the BlendingPlanner servant, without CORBA types.

    ticket = motions.submit(MoveL(...))            # checks, queues; never blocks
    state, err_type, reason = motions.wait(ticket, UNTIL_DONE, 2.0)   # bounded

A command is checked at once (commands.check: a refusal is a FAILED ticket), then planned by
the component's planning thread (motion.plan_motion, run in the component's worker process,
or in the thread itself with plan_in_worker NO), in the order the commands came (a Doosan
program's order),
from where everything before it ends; the planned trajectory is handed to the EC thread,
which starts it at its next cycle, superposed on what still runs (stream.py). Nothing of a
refused command moves. Clients wait in bounded calls (``wait``): a long plan (IK of every
10 ms of a 20 s spiral) never holds a client call open past its timeout.

Ticket states: QUEUED (waiting for the planning thread), PLANNING, STARTED (in the stream),
BLENDING (its TCP is inside its blending sphere: a sync motion with a radius returns here),
DONE, FAILED (refused before moving: DR_Error type and reason), STOPPED (stop() or an
OVERRIDE ended it early, or dropped it before it started).
Runs in: submit / wait / stop in ORB threads, the planning thread, listeners in the EC thread.
"""

from __future__ import annotations

import collections
import threading
import time as _time
from typing import Any

import numpy as np

from .commands import (DR_ERROR_RUNTIME, DR_ERROR_STOP, OVERRIDE, Command, MotionError,
                       check)
from .motion import Start
from .stream import Layer
from .worker import WorkerDied

QUEUED, PLANNING, STARTED, BLENDING, DONE, FAILED, STOPPED = 0, 1, 2, 3, 4, -1, -2
STATE_NAMES = {QUEUED: "QUEUED", PLANNING: "PLANNING", STARTED: "STARTED",
               BLENDING: "BLENDING", DONE: "DONE", FAILED: "FAILED", STOPPED: "STOPPED"}
UNTIL_STARTED, UNTIL_BLENDING, UNTIL_DONE = 2, 3, 4
KEEP_TICKETS = 256        # finished tickets remembered for wait()
CALL_TIMEOUT = 2.0        # [s] an EC command runs at the next cycle
NO_CYCLE_LIMIT = 2.0      # [s] of wall clock without a cycle before a wait gives up
STEPPED_LIMIT = 60.0      # [s] the same for a stepped EC (tests, simulation)
HANDOVER_TRIES = 3

# stop modes (DSR_ROBOT2: DR_QSTOP_STO 0, DR_QSTOP 1, DR_SSTOP 2, DR_HOLD 3)
QSTOP_STO, QSTOP, SSTOP, HOLD = 0, 1, 2, 3


class Ticket:
    """One command's life. Its fields change under the MotionCore's condition."""

    def __init__(self, tid: int, cmd: Command | None, core: "MotionCore"):
        self.id, self.cmd, self.core = tid, cmd, core
        self.state = QUEUED
        self.error_type = 0
        self.reason = ""
        self.traj = None
        self.note = ""
        self.cancel_reason = ""   # why its motion ends early (an OVERRIDE)

    # -- listener of its layer (EC thread) ---------------------------------------------------
    def started(self, layer: Layer) -> None:
        self.core._set(self, STARTED)

    def blending(self, layer: Layer) -> None:
        self.core._set(self, BLENDING)

    def finished(self, layer: Layer, completed: bool) -> None:
        if completed:
            self.core._set(self, DONE)
        else:
            self.core._set(self, STOPPED, DR_ERROR_STOP, self.cancel_reason
                           or self.core.stop_reason or "stopped before the end")


class MotionCore:
    """Tickets, the planning thread and the waits of the DRL motions of one component."""

    def __init__(self, comp: Any):
        self.comp = comp
        self._cond = threading.Condition()
        self._tickets: collections.OrderedDict[int, Ticket] = collections.OrderedDict()
        self._queue: collections.deque[Ticket] = collections.deque()
        self._next = 1
        self._closed = False
        self._planning: Ticket | None = None
        self.stop_reason = ""
        self.newest: Ticket | None = None
        self._thread: threading.Thread | None = None

    # -- public ---------------------------------------------------------------------------------
    def submit(self, cmd: Command) -> int:
        """Check ``cmd`` and queue it for planning: its ticket id (a refused command gets a
        FAILED ticket). Runs in: any thread but the EC's; never blocks on planning."""
        with self._cond:
            t = Ticket(self._next, cmd, self)
            self._next += 1
            self._remember(t)
            self.newest = t
        try:
            check(cmd)
            if self.comp.motion is not None:
                raise MotionError("a moveb / amoveb is running (Doosan: wait for it to end "
                                  "before the next motion)", DR_ERROR_RUNTIME)
            if self.comp.cycle_period() is None:
                raise MotionError(f"{self.comp.instance_name} is in no execution context: "
                                  "nothing would move", DR_ERROR_RUNTIME)
        except MotionError as e:
            self._set(t, FAILED, e.type, e.reason)
            return t.id
        with self._cond:
            self.stop_reason = ""
            self._queue.append(t)
            self._ensure_thread()
            self._cond.notify_all()
        return t.id

    def wait(self, tid: int, until: int, timeout: float) -> tuple[int, int, str]:
        """Wait at most ``timeout`` [s] for ticket ``tid`` to reach state ``until``
        (UNTIL_STARTED, UNTIL_BLENDING, UNTIL_DONE) or to fail or stop: (state, DR_Error
        type or 0, reason). A ticket whose motion stalls because no cycle runs fails with
        DR_ERROR_RUNTIME. Runs in: an ORB thread."""
        deadline = _time.monotonic() + max(0.0, timeout)
        with self._cond:
            t = self._tickets.get(tid)
            if t is None:
                return FAILED, DR_ERROR_RUNTIME, f"no motion command {tid} (unknown or too old)"
            cycles, since = self.comp.stream.cycles, _time.monotonic()
            while not self._reached(t, until):
                left = deadline - _time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(min(left, 0.25))
                now_cycles = self.comp.stream.cycles
                if now_cycles != cycles or t.state in (QUEUED, PLANNING):
                    cycles, since = now_cycles, _time.monotonic()
                elif _time.monotonic() - since > self._stall_limit():
                    self.comp.log.warning("motion %d: no cycle in %.1f s", t.id,
                                          self._stall_limit())
                    return FAILED, DR_ERROR_RUNTIME, (
                        f"{self.comp.instance_name} ran no cycle for "
                        f"{self._stall_limit():g} s: is its execution context running?")
            return t.state, t.error_type, t.reason

    def wait_idle(self, timeout: float) -> tuple[bool, Ticket | None]:
        """Wait at most ``timeout`` [s] until nothing is queued, planned or moving: (idle,
        the newest ticket). Runs in: an ORB thread."""
        deadline = _time.monotonic() + max(0.0, timeout)
        with self._cond:
            while self.pending() or self.comp.stream.busy:
                left = deadline - _time.monotonic()
                if left <= 0:
                    return False, self.newest
                self._cond.wait(min(left, 0.05))
            return True, self.newest

    def pending(self) -> bool:
        """A command is queued or being planned. Runs in: any thread."""
        return bool(self._queue) or self._planning is not None

    def status(self, tid: int) -> tuple[int, int, str, str]:
        with self._cond:
            t = self._tickets.get(tid)
            if t is None:
                return FAILED, DR_ERROR_RUNTIME, "unknown motion command", ""
            return t.state, t.error_type, t.reason, t.note

    def stop(self, mode: int) -> bool:
        """DSR stop(st_mode): queued commands are dropped, the one being planned will not
        start, every running motion decelerates along its path: DR_SSTOP at its own
        deceleration, DR_QSTOP / DR_QSTOP_STO / DR_HOLD to rest in the quick_stop_time
        parameter. True if anything was moving or waiting. Runs in: an ORB thread."""
        names = {QSTOP_STO: "DR_QSTOP_STO", QSTOP: "DR_QSTOP", SSTOP: "DR_SSTOP",
                 HOLD: "DR_HOLD"}
        why = f"stopped by stop({names.get(mode, mode)})"
        with self._cond:
            self.stop_reason = why
            dropped = list(self._queue)
            self._queue.clear()
            if self._planning is not None:
                dropped.append(self._planning)
            for t in dropped:
                self._set_locked(t, STOPPED, DR_ERROR_STOP, why + " before it started")
        quick = self.comp.quick_stop_time
        if mode == SSTOP:
            fn = (lambda ly: ly.t_acc)
        else:
            fn = (lambda ly: quick)
        moving = self.comp.call(lambda: self.comp.stream.stop(fn), timeout=CALL_TIMEOUT)
        return bool(moving or dropped)

    def dropped(self, why: str) -> None:
        """Every motion was dropped (deactivation). Runs in: EC thread."""
        with self._cond:
            self.stop_reason = why
            for t in list(self._queue) + ([self._planning] if self._planning else []):
                self._set_locked(t, STOPPED, DR_ERROR_STOP, why)
            self._queue.clear()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(5.0)

    # -- internals -------------------------------------------------------------------------------
    def _stall_limit(self) -> float:
        return STEPPED_LIMIT if self.comp.clock_is_stepped() else NO_CYCLE_LIMIT

    @staticmethod
    def _reached(t: Ticket, until: int) -> bool:
        if t.state in (FAILED, STOPPED, DONE):
            return True
        return t.state >= until

    def _remember(self, t: Ticket) -> None:
        self._tickets[t.id] = t
        while len(self._tickets) > KEEP_TICKETS:
            old_id, old = next(iter(self._tickets.items()))
            if old.state in (QUEUED, PLANNING, STARTED, BLENDING):
                break
            del self._tickets[old_id]

    def _set(self, t: Ticket, state: int, etype: int = 0, reason: str = "") -> None:
        with self._cond:
            self._set_locked(t, state, etype, reason)

    def _set_locked(self, t: Ticket, state: int, etype: int = 0, reason: str = "") -> None:
        if t.state in (FAILED, STOPPED, DONE):
            return
        if state in (STARTED, BLENDING) and t.state > state:
            return
        t.state = state
        if etype:
            t.error_type, t.reason = etype, reason
        if state in (FAILED,) and reason:
            self.comp.log.info("%s refused: %s", t.cmd.name if t.cmd else "motion", reason)
        self._cond.notify_all()

    def _ensure_thread(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, daemon=True,
                                            name=f"{self.comp.instance_name}-planner")
            self._thread.start()

    def _run(self) -> None:
        """Runs in: the planning thread. One command at a time, in order."""
        while True:
            with self._cond:
                while not self._queue and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                t = self._queue.popleft()
                self._planning = t
                t.state = PLANNING
                self._cond.notify_all()
            failure: tuple[int, str] | None = None
            try:
                self._plan_and_start(t)
            except MotionError as e:
                failure = (e.type, e.reason)
            except TimeoutError:
                failure = (DR_ERROR_RUNTIME,
                           f"{self.comp.instance_name} ran no cycle within {CALL_TIMEOUT} s: "
                           "is its execution context running?")
            except Exception as e:       # a bug: the command fails, the component lives on
                self.comp.log.exception("planning %s failed", t.cmd)
                failure = (DR_ERROR_RUNTIME, f"planning failed: {e!r}")
            finally:
                # planning over and the refusal in one step: a client woken by the refusal
                # must not find the command still being planned (check_motion: INIT)
                with self._cond:
                    self._planning = None
                    if failure is not None:
                        self._set_locked(t, FAILED, *failure)
                    self._cond.notify_all()

    def _plan_and_start(self, t: Ticket) -> None:
        comp = self.comp
        for _ in range(HANDOVER_TRIES):
            with self._cond:
                if t.state == STOPPED:
                    return
            if getattr(t.cmd, "ra", 0) == OVERRIDE:
                snap = comp.call(self._override, timeout=CALL_TIMEOUT)
            else:
                snap = comp.call(self._snapshot, timeout=CALL_TIMEOUT)
            version, q, p, r, arm = snap
            try:
                traj = comp.planning.motion(t.cmd, Start(q, p, r), comp.settings(), arm)
            except WorkerDied as e:
                raise MotionError(str(e), DR_ERROR_RUNTIME) from None
            t.traj, t.note = traj, traj.note
            with self._cond:
                if t.state == STOPPED:
                    return
            why = comp.call(lambda: self._hand_over(t, traj, version, arm),
                            timeout=CALL_TIMEOUT)
            if why != "changed":              # started, or stopped before it started
                return
        raise MotionError("the motions ahead kept changing while this one was planned",
                          DR_ERROR_RUNTIME)

    # EC thread
    def _snapshot(self) -> tuple:
        s = self.comp.stream
        p, r = s.final_pose()
        return s.version, s.final_joints(), p, r, self.comp.arm

    def _override(self) -> tuple:
        """DR_MV_RA_OVERRIDE: the running motions decelerate along their paths at their
        own deceleration; the new one starts from where they come to rest. Runs in: EC."""
        s = self.comp.stream
        if s.busy:
            for ly in s.layers:
                if isinstance(ly.listener, Ticket):
                    ly.listener.cancel_reason = "overridden by a DR_MV_RA_OVERRIDE motion"
            s.stop(lambda ly: ly.t_acc)
        return self._snapshot()

    def _hand_over(self, t: Ticket, traj: Any, version: int, arm: Any) -> str:
        s = self.comp.stream
        if t.state == STOPPED:
            return "stopped"
        if s.version != version or arm is not self.comp.arm:
            return "changed"
        if self.comp.motion is not None:
            raise MotionError("a moveb / amoveb is running (Doosan: wait for it to end "
                              "before the next motion)", DR_ERROR_RUNTIME)
        s.add(traj, t)
        return ""

    # -- helpers for the servant --------------------------------------------------------------
    def joints_of(self, which: str) -> np.ndarray | None:
        """'desired' (the reference) or 'current' (measured when connected). Runs in: EC."""
        comp = self.comp
        if which == "current" and comp.q_meas is not None and comp.stream.q is not None \
                and len(comp.q_meas) == len(comp.stream.q):
            return np.array(comp.q_meas, dtype=float)
        return None if comp.stream.q is None else np.array(comp.stream.q)
