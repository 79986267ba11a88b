"""Simulation::SimulatorService servant. Runs in: ORB threads.

Arguments are validated here, on the ORB thread, completely (check_push, step counts,
factors); work on the physics is handed to the EC thread (Component.call) and applied at the
start of the next cycle. In simulation time, pause / resume / step / setRealTimeFactor go to
the component's time base (rtcf.simtime.SimTimeBase, `Component.time_base`); on a wall-clock
EC they act on the component's physics only. Every refusal is a SimulatorError whose reason
names what was wrong; nothing changes then.

One servant for every component that owns a MuJoCo physics: its host is the Simulator
component itself, or a :class:`BodyHost` for a component whose body is a MuJoCo physics (the
DCM with ``body: mujoco``), so that the same clients drive both. A host offers
``instance_name``, ``call(fn, timeout)`` (run in its EC thread), ``time_base`` (its EC's,
``Component.time_base``), ``sim`` (the core.Simulation, None before the first activation),
``sim_model`` (its SimModel) and ``reset_robot()`` (EC thread).
"""

from __future__ import annotations

import math
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Callable

from rtcf.corba.idl import stub_module

from .core import SimError, check_push, quat_rpy

Simulation = stub_module("Simulation")
Simulation__POA = stub_module("Simulation__POA")
CALL_TIMEOUT = 5.0     # [s] a call is applied at the next cycle
MAX_STEPS = 10_000_000


def _error(text: str) -> Exception:
    # a CORBA string is Latin-1: an echoed non-Latin-1 value must not make the reply fail
    return Simulation.SimulatorError(text.encode("latin-1", "backslashreplace").decode("latin-1"))


class BodyHost:
    """The servant's host for a component whose body is a MuJoCo physics (the DCM's
    mujoco_body.MujocoBody): the body's simulation, the component's EC thread and time
    base, and the component's own ``reset`` (the robot and its commands).
    Runs in: any thread."""

    def __init__(self, comp: Any, body: Any, reset: Callable[[], None]):
        self.comp, self.body, self._reset = comp, body, reset

    @property
    def instance_name(self) -> str:
        return self.comp.instance_name

    @property
    def sim(self) -> Any:
        return self.body.sim

    @property
    def sim_model(self) -> Any:
        return self.body.model

    @property
    def time_base(self) -> Any:
        return self.comp.time_base

    def call(self, fn: Callable[[], Any], timeout: float | None = CALL_TIMEOUT) -> Any:
        return self.comp.call(fn, timeout=timeout)

    def reset_robot(self) -> None:
        """Runs in: EC thread."""
        self._reset()


class SimulatorServiceImpl(Simulation__POA.SimulatorService):
    def __init__(self, comp: Any):
        self.comp = comp

    # -- helpers -----------------------------------------------------------------------------
    def _call(self, op: str, fn: Callable[[], Any]) -> Any:
        """Run fn in the EC thread; its SimError (or a stalled EC) as SimulatorError."""
        try:
            return self.comp.call(fn, timeout=CALL_TIMEOUT)
        except (SimError, ValueError) as e:
            raise _error(f"{op}: {e}") from None
        except (FutureTimeout, TimeoutError):
            raise _error(f"{op}: {self.comp.instance_name} ran no cycle within {CALL_TIMEOUT} "
                         "s: is its execution context running?") from None

    def _active(self, op: str) -> None:
        sim = self.comp.sim
        if sim is None:
            raise _error(f"{op}: {self.comp.instance_name} has not been activated yet "
                         "(no physics)")
        if sim.diverged is not None:
            raise _error(f"{op}: {sim.diverged}: {self.comp.instance_name} is in ERROR: reset "
                         "the component (rtreset, or reset_component on its execution "
                         "context) and activate it again")

    # -- time ---------------------------------------------------------------------------------
    def _time_base(self, op: str) -> Any:
        tb = self.comp.time_base
        if tb is None:
            raise _error(f"{op}: {self.comp.instance_name} is in no execution context")
        return tb

    def pause(self) -> None:
        self._time_base("pause").pause()

    def resume(self) -> None:
        self._time_base("resume").resume()

    def isPaused(self) -> bool:
        return bool(self._time_base("isPaused").paused)

    def step(self, n: int) -> None:
        if not isinstance(n, int) or not 1 <= n <= MAX_STEPS:
            raise _error(f"step: expected a number of periods in [1, {MAX_STEPS}], got {n!r}")
        self._active("step")
        tb = self._time_base("step")
        if not tb.paused:
            raise _error("step: the simulation is running; pause() it first")
        try:
            tb.advance(n * self.comp.sim.period)
        except ValueError as e:
            raise _error(f"step: {e}") from None

    def getTime(self) -> float:
        tb = self.comp.time_base
        if tb is not None and getattr(tb, "simulated", False):
            return float(tb.now)
        sim = self.comp.sim
        return float(sim.time) if sim is not None else 0.0

    def setRealTimeFactor(self, factor: float) -> None:
        tb = self._time_base("setRealTimeFactor")
        if not (isinstance(factor, (int, float)) and math.isfinite(factor) and factor >= 0):
            raise _error(f"setRealTimeFactor: expected a finite factor >= 0, got {factor!r}")
        try:
            tb.set_real_time_factor(float(factor))
        except ValueError as e:
            raise _error(f"setRealTimeFactor: {e}") from None

    # -- the robot ----------------------------------------------------------------------------
    def reset(self) -> None:
        self._active("reset")
        self._call("reset", self.comp.reset_robot)

    def push(self, body: str, force: Any, duration: float) -> None:
        try:
            f, _ = check_push(self.comp.sim_model, body, (force.x, force.y, force.z), duration)
        except SimError as e:
            raise _error(str(e)) from None
        self._active("push")
        self._call("push", lambda: self.comp.sim.push(body, f, duration))

    def getBodyState(self, body: str) -> Any:
        if body not in self.comp.sim_model.body_names:
            raise _error(f"getBodyState: unknown body {body!r}; bodies: "
                         f"{', '.join(self.comp.sim_model.body_names)}")
        self._active("getBodyState")
        pos, quat, lin, ang = self._call("getBodyState", lambda: self.comp.sim.body_state(body))
        rpy = [0.0, 0.0, 0.0]
        quat_rpy(quat, rpy)
        V = Simulation.Vector3
        return Simulation.BodyState(V(*map(float, pos)), Simulation.Quaternion(*map(float, quat)),
                                    V(*rpy), V(*map(float, lin)), V(*map(float, ang)))

    def getBodyNames(self) -> list:
        return list(self.comp.sim_model.body_names)
