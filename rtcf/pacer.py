"""Pacing: releasing cycles at absolute wall-clock deadlines. The one implementation behind
the wall-clock PeriodicEC and the paced simulation time base (rtcf.simtime); what follows a
late cycle is rtcf.overrun's.

A :class:`Pacer` releases absolute wall-clock deadlines (the PeriodicEC's ``t0 + k *
period``) or maps *schedule time* ``t`` (simulated seconds for the time base) to a
wall-clock deadline through an anchor: ``t`` is due at ``anchor_wall + (t - anchor_t) /
speed`` (``speed``: schedule seconds per wall second, the real-time factor), computed from
the anchor each time rather than accumulated, so the schedule never drifts. :meth:`Pacer.release` waits for a deadline the way a real-time loop
must in Python: a timed wait (the caller's, so it can wake for other work) until ``spin``
seconds before it, then a busy-wait to it (a timer wakes 50-100 us late here, the spin
within a clock reading); it reports the lateness, and restarts the schedule when it finds
itself more than rtcf.overrun.RESYNC_LAG behind (a suspended process) instead of letting a
burst follow. On a ManualClock a pacer never spins (the clock moves only when told);
``virtual`` makes it set the clock to the deadline instead of waiting (deterministic tests
of a PeriodicEC).

Pure apart from the clock it is given and the wait function the caller passes: tested on a
manual clock (tests/framework/test_pacer.py).
"""

from __future__ import annotations

import os
import time
from typing import Callable

from .clock import Clock, ManualClock
from .overrun import RESYNC_LAG
from .validate import EC_PRIORITY


def spin_until(now: Callable[[], float], deadline: float, yield_gil: bool = False) -> float:
    """Busy-wait until ``now()`` reaches ``deadline`` and return that reading. With
    ``yield_gil`` each turn calls time.sleep(0), which lets other Python threads (ORB calls)
    take the GIL. Runs in: the caller's thread."""
    t = now()
    if yield_gil:
        sleep0 = time.sleep
        while t < deadline:
            sleep0(0)
            t = now()
    else:
        while t < deadline:
            t = now()
    return t


def set_thread_fifo(enable: bool, priority: int = EC_PRIORITY) -> bool:
    """Put the calling thread under SCHED_FIFO at ``priority`` (enable) or back under
    SCHED_OTHER; True when the thread runs under SCHED_FIFO afterwards (False where it is
    not permitted: the thread then runs as a normal one). Runs in: the thread itself."""
    try:
        if enable:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
            return True
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    except (PermissionError, OSError, AttributeError):
        pass
    return False


def thread_is_realtime() -> bool:
    """True when the calling thread runs under SCHED_FIFO or SCHED_RR."""
    try:
        return os.sched_getscheduler(0) in (os.SCHED_FIFO, os.SCHED_RR)
    except (AttributeError, OSError):
        return False


class Pacer:
    """Releases deadlines on ``clock`` (see the module doc). Not thread-safe: one pacing
    thread uses it. Runs in: that thread."""

    __slots__ = ("clock", "spin", "spin_yield", "virtual", "speed", "anchor_wall",
                 "anchor_t", "anchored", "slept", "woke", "resyncs", "released")

    def __init__(self, clock: Clock, *, spin: float = 200e-6, spin_yield: bool = False,
                 virtual: bool = False):
        manual = isinstance(clock, ManualClock)
        self.clock = clock
        self.spin = 0.0 if manual else float(spin)   # a manual clock never moves by itself
        self.spin_yield = bool(spin_yield)
        self.virtual = bool(virtual) and manual
        self.speed = 1.0
        self.anchor_wall = 0.0
        self.anchor_t = 0.0
        self.anchored = False
        self.slept = False          # the last release waited on the timer
        self.woke = 0.0             # wall time the last release's timed wait ended
        self.resyncs = 0            # schedule restarts (more than RESYNC_LAG behind)
        self.released = 0.0         # wall time of the last release

    # -- the schedule -------------------------------------------------------------------------
    def anchor(self, t: float, wall: float | None = None, speed: float | None = None) -> None:
        """Schedule time ``t`` is due at ``wall`` (default: now); ``speed`` schedule seconds
        per wall second from now on (default: unchanged; > 0)."""
        self.anchor_wall = self.clock.now() if wall is None else wall
        self.anchor_t = t
        if speed is not None:
            self.speed = float(speed)
        self.anchored = True

    def unanchor(self) -> None:
        """The next release re-anchors (pacing starts afresh: a resume, a new factor)."""
        self.anchored = False

    def due(self, t: float) -> float:
        """The wall-clock deadline of schedule time ``t``."""
        return self.anchor_wall + (t - self.anchor_t) / self.speed

    # -- releasing ----------------------------------------------------------------------------
    def release(self, deadline: float, wait: Callable[[float], bool],
                spin: bool = True) -> float | None:
        """Wait until the wall clock reaches ``deadline``: ``wait(seconds)`` (the caller's
        timed wait; True when it was woken for other work) until the spin window, then a
        busy-wait. Returns the lateness [s] (>= 0) once released, or None when ``wait``
        reported other work first (the caller handles it and calls again). ``spin`` False:
        no busy-wait for this deadline (one that needs no precision). On an anchored
        schedule a release more than RESYNC_LAG late restarts the schedule at it
        (``resyncs`` counts them) and reports lateness 0."""
        clock = self.clock
        if self.virtual:
            if clock.now() < deadline:
                clock.set(deadline)        # type: ignore[attr-defined]
            self.slept = False
            self.released = self.woke = clock.now()
            return self.released - deadline
        window = self.spin if spin else 0.0
        self.slept = False
        now = clock.now()
        left = deadline - now
        while left > window:
            self.slept = True
            if wait(left - window):
                return None
            now = clock.now()
            left = deadline - now
        self.woke = now
        if left > 0.0:                     # inside the spin window
            now = spin_until(clock.now, deadline, self.spin_yield)
        self.released = now
        late = now - deadline
        if late > RESYNC_LAG and self.anchored:
            self.resyncs += 1
            self.anchor_wall += late       # the schedule restarts at this release
            return 0.0
        return late

    def release_at(self, t: float, wait: Callable[[float], bool],
                   spin: bool = True) -> float | None:
        """release() of schedule time ``t``; anchors ``t`` at now when not anchored."""
        if not self.anchored:
            self.anchor(t)
        return self.release(self.due(t), wait, spin)
