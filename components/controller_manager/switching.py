"""Switch requests and their checks, before the real-time loop sees them.

Pure (no rtcf / omniORB import). :func:`plan_switch` validates a switchController call
against the loaded controllers and returns a :class:`SwitchRequest` for the real-time loop
(ControllerManagerCore.begin_switch), or raises ControllerError under STRICT naming what is
wrong. The checks, in order; each refused start or stop is, under BEST_EFFORT, left out
(``refused`` / ``not_stopped`` say which and why) and the rest of the switch goes on:

1. **names**: a name that is not loaded fails a STRICT switch and is skipped under
   BEST_EFFORT (PR2's switchController).
2. **states** (ros2_control's SwitchController, Jazzy: STRICT fails when anything goes
   wrong; BEST_EFFORT triggers only the transitions of controllers not yet in the target
   state): stopping a controller that is not running, or starting one that is running, is
   refused. A name in both lists is a restart of a running controller (stopping, then
   starting, with no tick between). PR2's pr2_controller_interface (controller.h at
   PR2/pr2_mechanism 1029c5d) is more lenient: its stopRequest calls ``stopping()`` on an
   initialized controller and succeeds; the stricter rule keeps ``stopping()`` for
   controllers that ran.
3. **chains** (ros2_control's check_following_controllers_for_activate /
   check_preceeding_controllers_for_deactivate): after the switch every running controller
   has the controllers it got with get_controller running.
4. **claimed interfaces** (ros2_control's resource manager): no two running controllers
   own one ``joint/type`` interface, and the hardware takes every claimed type.
5. **fallbacks** (ros2_control's fallback controllers: ros-controls/roadmap
   design_drafts/fallback_controllers.md, "Activating the controller with fallback
   controllers"): a controller with ``fallback_controllers`` starts only when each
   fallback is loaded and could start the moment it fails: every controller a fallback
   depends on (get_controller) is then running outside the failing controller's chain, or
   is one of its fallbacks. (The draft's third check, that the fallbacks cover every
   interface of the failing controller, is not made: a fallback may hold fewer joints.)
"""

from __future__ import annotations

import enum
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

from .controller import ControllerError, ControllerState
from .slot import Slot

__all__ = ["Strictness", "SwitchRefused", "SwitchRequest", "plan_switch", "chains",
           "check_names"]

_RUNNING = ControllerState.RUNNING
_VIA = "(chained through get_controller)"


class Strictness(enum.IntEnum):
    """switchController strictness (pr2_mechanism_msgs/SwitchController,
    controller_manager_msgs/SwitchController)."""

    UNSPECIFIED = 0     # PR2: treated as BEST_EFFORT with a warning
    BEST_EFFORT = 1     # unknown names skipped, refused starts and stops left out
    STRICT = 2          # any problem fails the whole switch, nothing changes


class SwitchRefused(ControllerError):
    """A STRICT switch refused: ``kind`` ("start" or "stop") of controller ``name``, ``why``
    and a ``hint`` for the user (the message joins them)."""

    def __init__(self, kind: str, name: str, why: str, hint: str = ""):
        what = f"{name!r} {why}" if kind == "start" else f"cannot stop {name!r}: {why}"
        super().__init__(f"switchController (STRICT): {what}{hint}")
        self.kind, self.name, self.why, self.hint = kind, name, why, hint


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


def chains(links: Mapping[str, tuple[Iterable[str], Iterable[str]]]) -> dict[str, set[str]]:
    """name -> the other controllers connected to it through before/after lists."""
    group: dict[str, set[str]] = {n: {n} for n in links}
    for n, (before, after) in links.items():
        for m in list(before) + list(after):
            if m in group and group[m] is not group[n]:
                merged = group[n] | group[m]
                for k in merged:
                    group[k] = merged
    return {n: g - {n} for n, g in group.items()}


def check_names(names: Any, what: str) -> list[str]:
    if isinstance(names, str) or not isinstance(names, (list, tuple)):
        raise ControllerError(f"{what}: expected a list of controller names, got {names!r}")
    for n in names:
        if not isinstance(n, str) or not n:
            raise ControllerError(f"{what}: expected non-empty names, got {n!r}")
    return list(names)


def plan_switch(loaded: Mapping[str, Slot], start: Sequence[str], stop: Sequence[str],
                strictness: int, interface_types: Sequence[str]) -> SwitchRequest:
    """Validate a switch (see the module doc) over the controllers ``loaded`` (name ->
    Slot) on hardware taking ``interface_types``. Runs in: a non-real-time thread, under
    the manager's admin lock."""
    start = check_names(start, "switchController: start")
    stop = check_names(stop, "switchController: stop")
    try:
        level = Strictness(int(strictness))
    except (TypeError, ValueError):
        raise ControllerError(f"switchController: strictness: expected 0, 1 "
                              f"(BEST_EFFORT) or 2 (STRICT), got {strictness!r}") from None
    missing = [n for n in stop + start if n not in loaded]
    if missing and level is Strictness.STRICT:
        raise ControllerError(f"switchController (STRICT): no controller named "
                              f"{', '.join(map(repr, missing))} is loaded")
    starts = [n for n in dict.fromkeys(start) if n in loaded]
    stops = [n for n in dict.fromkeys(stop) if n in loaded]
    refused: list[tuple[str, str]] = []        # starts dropped (BEST_EFFORT)
    not_stopped: list[tuple[str, str]] = []    # stops dropped (BEST_EFFORT)
    while True:                # one drop per round: a drop can change later verdicts
        problem = (_state_problem(loaded, starts, stops)
                   or _chain_problem(loaded, starts, stops)
                   or _claim_problem(loaded, starts, stops, interface_types)
                   or _fallback_problem(loaded, starts, stops))
        if problem is None:
            break
        kind, n, why, hint = problem
        if level is Strictness.STRICT:
            raise SwitchRefused(kind, n, why, hint)
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


#: (kind: "start" or "stop", the controller, why it is refused, a hint for the user)
Problem = Optional[tuple[str, str, str, str]]


def _running(loaded: Mapping[str, Slot], n: str) -> bool:
    return loaded[n].controller.state is _RUNNING


def _state_problem(loaded: Mapping[str, Slot], starts: list[str], stops: list[str]
                   ) -> Problem:
    """A stop of a controller that is not running, or a start of one that is running and
    not stopped in the same switch (a restart names it in both lists)."""
    for n in stops:
        if not _running(loaded, n):
            return ("stop", n, "it is not running", "")
    for n in starts:
        if _running(loaded, n) and n not in stops:
            return ("start", n, "is already running",
                    "; to restart it, name it in both the stop and the start list")
    return None


def _chain_problem(loaded: Mapping[str, Slot], starts: list[str], stops: list[str]
                   ) -> Problem:
    """The first start or stop that would leave a running controller without a controller
    it depends on (get_controller). Starts are checked first, as ros2_control checks its
    activations before its deactivations."""
    start_set, stop_set = set(starts), set(stops)

    def runs_after(n: str) -> bool:
        return n in start_set or (_running(loaded, n) and n not in stop_set)

    def deps(n: str) -> list[str]:
        return [m for m in loaded[n].depends_on if m in loaded]

    for n in starts:
        for f in deps(n):
            if runs_after(f):
                continue
            if f in stop_set:
                return ("start", n, f"depends on {f!r} {_VIA}, which this switch stops",
                        f"; keep {f!r} running, or leave {n!r} stopped")
            return ("start", n, f"depends on {f!r} {_VIA}, which is not running and not "
                                f"started in this switch", f"; start {f!r} with it")
    for n in stops:
        if n in start_set:                   # a restart: its dependents never notice
            continue
        for p in loaded:         # (one being started was refused above)
            if n in deps(p) and runs_after(p):
                return ("stop", n, f"{p!r} depends on it {_VIA} and stays running",
                        f"; stop {p!r} in the same switch, or use BEST_EFFORT to "
                        f"leave {n!r} running")
    return None


def _claim_problem(loaded: Mapping[str, Slot], starts: list[str], stops: list[str],
                   types: Sequence[str]) -> Problem:
    """The first start whose command interfaces the hardware does not take or another
    controller owns after the switch."""
    stop_set = set(stops)
    owners: dict[str, str] = {}            # after the switch, of those that stay
    for n, slot in loaded.items():
        if _running(loaded, n) and n not in stop_set and n not in starts:
            for i in slot.claims:
                owners[i] = n
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


def _fallback_problem(loaded: Mapping[str, Slot], starts: list[str], stops: list[str]
                      ) -> Problem:
    """The first start whose fallbacks could not start the moment it fails: a fallback
    that is not loaded, or one that depends on a controller that would not be running
    then (stopped with the failing controller's chain, or not running after this switch)
    and is not a fallback too."""
    start_set, stop_set = set(starts), set(stops)
    for n in starts:
        slot = loaded[n]
        if not slot.fallbacks:
            continue
        gone = {n} | {c.name for c in slot.chain}        # stopped when n fails
        for fb in slot.fallbacks:
            if fb not in loaded:
                return ("start", n, f"has the fallback {fb!r}, which is not loaded",
                        f"; load {fb!r} first (a fallback starts the moment its "
                        f"controller fails)")
            if fb in gone:
                return ("start", n, f"has the fallback {fb!r}, which is chained to it "
                                    f"{_VIA} and stops with it", "")
            for d in loaded[fb].depends_on:
                if d in slot.fallbacks:
                    continue
                runs = d in loaded and d not in gone and (
                    d in start_set or (_running(loaded, d) and d not in stop_set))
                if not runs:
                    return ("start", n, f"has the fallback {fb!r}, which depends on "
                                        f"{d!r} {_VIA}; {d!r} would not be running when "
                                        f"{n!r} fails",
                            f"; add {d!r} to the fallback_controllers of {n!r}, or keep "
                            f"it running outside {n!r}'s chain")
    return None
