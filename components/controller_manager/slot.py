"""A loaded controller as the manager keeps it (PR2's ControllerSpec) and its statistics.

Pure (no rtcf / omniORB import). The statistics are written only by the EC thread.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from .controller import Controller

__all__ = ["ControllerStats", "Slot"]


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

    @property
    def depends_on(self) -> list[str]:
        """The controllers it got with get_controller (BEFORE_ME or AFTER_ME), once each."""
        c = self.controller
        return list(dict.fromkeys(c.before_list + c.after_list))
