"""Clocks: the monotonic wall clock for real time, a manual clock for tests and simulation.

Time is always passed into cores (house style rule 4); only execution contexts read a clock.
All times are float seconds.
"""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    """What an execution context needs from a clock. Runs in: any thread."""

    def now(self) -> float:
        """Current time [s]."""
        ...


class MonotonicClock:
    """time.perf_counter(): monotonic, highest resolution available. Runs in: any thread."""

    __slots__ = ()

    def now(self) -> float:
        return time.perf_counter()


class ManualClock:
    """A clock that moves only when told to: deterministic tests and simulation.
    Runs in: any thread (a test advances it between cycles)."""

    __slots__ = ("_t",)

    def __init__(self, start: float = 0.0):
        self._t = float(start)

    def now(self) -> float:
        return self._t

    def set(self, t: float) -> None:
        """Jump to absolute time t [s]; time never goes backwards."""
        if t < self._t:
            raise ValueError(f"ManualClock.set: time would go backwards ({t} < {self._t})")
        self._t = float(t)

    def advance(self, dt: float) -> float:
        """Move forward by dt [s] and return the new time."""
        if dt < 0:
            raise ValueError(f"ManualClock.advance: expected dt >= 0, got {dt}")
        self._t += dt
        return self._t


_stamp_clock: Clock | None = None   # simulated time in simulation mode (rtcf.simtime)


def set_stamp_clock(clock: Clock | None) -> None:
    """Make data-port timestamps read ``clock`` (simulation mode) or, with None, the
    epoch clock again. Called by rtcf.simtime.enable/disable_process_simulation."""
    global _stamp_clock
    _stamp_clock = clock


def wall_time() -> float:
    """Seconds since the epoch, for data-port timestamps (RTC::Time); in simulation mode
    the simulated time instead (so that timestamps repeat from run to run)."""
    c = _stamp_clock
    return time.time() if c is None else c.now()
