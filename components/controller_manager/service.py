"""RTController::ControllerManagerService servant. Runs in: ORB threads.

Loads and unloads run the controller's init and the scheduling here, in the ORB thread, and
hand the new schedule to the EC thread through the component's command queue
(Component.call); a switch is validated here, queued through the same command queue
(Component.post) and awaited on a completion the real-time loop fulfils once the switch is
done. The EC thread never waits for this side. Following PD-0.2 the mutating operations
answer (ok, message); a refused one changes nothing.
"""

from __future__ import annotations

import time
from concurrent.futures import Future, TimeoutError as FutureTimeout
from typing import Any

from omniORB import CORBA, any as oany

from .controller import ControllerError
from .registry import registered_types
from rtcf.corba.idl import stub_module

RTController = stub_module("RTController")
RTController__POA = stub_module("RTController__POA")
CALL_TIMEOUT = 2.0         # [s] a schedule change is taken at the next tick (1 ms)
DEFAULT_SWITCH_TIMEOUT = 1.0
GRACE = 0.5                # [s] a switch taken by the loop completes one tick later
STATS_MAX_AGE = 0.05       # [s] getStatistics answers a snapshot at most this old


def params_from_idl(params: Any) -> dict[str, Any]:
    """ParamSeq -> dict; ControllerError on duplicate or empty names."""
    out: dict[str, Any] = {}
    for p in params:
        if not p.name or p.name in out:
            raise ControllerError(f"params: empty or duplicate name {p.name!r}")
        v = p.value
        out[p.name] = oany.from_any(v, keep_structs=False) if isinstance(v, CORBA.Any) else v
    return out


def params_to_idl(values: dict[str, Any]) -> list:
    return [RTController.Param(k, oany.to_any(v)) for k, v in values.items()]


class ControllerManagerServiceImpl(RTController__POA.ControllerManagerService):
    def __init__(self, comp: Any):
        self.comp = comp
        self.core = comp.core
        self._stats: tuple[float, Any] | None = None

    def _run_rt(self, fn: Any) -> Any:
        return self.comp.run_rt(fn, CALL_TIMEOUT)

    def _guard(self, what: str, fn: Any) -> tuple[bool, str]:
        try:
            return True, fn() or ""
        except ControllerError as e:
            return False, str(e)
        except (TimeoutError, FutureTimeout):
            return False, (f"{what}: {self.comp.instance_name} ran no cycle within "
                           f"{CALL_TIMEOUT} s (is its execution context running?)")

    def loadController(self, name: str, type_name: str, params: Any) -> tuple[bool, str]:
        def load() -> str:
            values = params_from_idl(params)
            if not type_name and not values:
                self.comp.load_from_config(name, self._run_rt)
            else:
                if not type_name:
                    raise ControllerError(f"loadController({name!r}): params given without "
                                          f"a type")
                self.core.load(name, type_name, values, self._run_rt)
            pos = self.core.schedule.index(name)
            return f"loaded {name!r} ({self.core.slot(name).type_name}) at position {pos}"
        return self._guard("loadController", load)

    def unloadController(self, name: str) -> tuple[bool, str]:
        def unload() -> str:
            self.core.unload(name, self._run_rt)
            return f"unloaded {name!r}"
        return self._guard("unloadController", unload)

    def switchController(self, start: Any, stop: Any, strictness: int,
                         timeout: float) -> tuple[bool, str]:
        ok, msg, _ = self.switch(list(start), list(stop), strictness, timeout)
        return ok, msg

    def switch(self, start: list, stop: list, strictness: int, timeout: float
               ) -> tuple[bool, str, Any]:
        """Validate, hand to the real-time loop, wait until performed: (ok, message, the
        SwitchRequest or None). Runs in: an ORB (non-real-time) thread."""
        if not timeout >= 0:
            return False, f"switchController: timeout: expected >= 0 s, got {timeout}", None
        timeout = timeout or DEFAULT_SWITCH_TIMEOUT
        core, comp = self.core, self.comp
        with core.admin:
            try:
                req = core.prepare_switch(start, stop, strictness)
            except ControllerError as e:
                return False, str(e), None
            if not comp.is_active():
                return False, (f"switchController: {comp.instance_name} is not active: the "
                               f"real-time loop performs switches"), None
            done: Future = Future()
            req.on_done = done.set_result
            deadline = time.monotonic() + timeout
            posted = comp.post(lambda: core.begin_switch(req))
            try:
                posted.result(timeout)
            except FutureTimeout:
                if posted.cancel():
                    return False, (f"switchController: the real-time loop did not take the "
                                   f"switch within {timeout} s; nothing was changed"), None
            except ControllerError as e:
                return False, str(e), None
            try:
                done.result(max(0.0, deadline - time.monotonic()) + GRACE)
            except FutureTimeout:
                return False, ("switchController: the real-time loop took the switch but "
                               "did not finish it (execution context stopped?)"), req
        if req.aborted:
            return False, "switchController: aborted, the manager was deactivated", req
        msg = req.summary()
        if not req.ok:
            msg = f"switchController: not everything went as asked: {msg}"
        return req.ok, msg, req

    def commandController(self, name: str, params: Any) -> tuple[bool, str]:
        def command() -> str:
            self.core.command(name, params_from_idl(params), self._run_rt)
            return f"{name!r} took the command"
        return self._guard("commandController", command)

    def getControllerState(self, name: str) -> list:
        try:
            values = self.core.slot(name).controller.state_values()
        except ControllerError as e:
            raise RTController.ControllerError(str(e))
        return params_to_idl(values)

    def listControllers(self) -> list:
        return [RTController.ControllerInfo(n, t, s, p)
                for (n, t, s, p) in self.core.list_controllers()]

    def listControllerTypes(self) -> list:
        return registered_types()

    def getStatistics(self) -> Any:
        """A snapshot at most STATS_MAX_AGE old: a client polling in a loop costs the
        process (and the GIL the EC thread needs) one computation per STATS_MAX_AGE."""
        now = time.monotonic()
        cached = self._stats
        if cached is not None and now - cached[0] < STATS_MAX_AGE:
            return cached[1]
        st = statistics(self.comp)
        self._stats = (now, st)
        return st

    def describeControllers(self) -> list:
        return [RTController.ControllerDetail(
            d["name"], d["type"], d["state"], d["position"], d["update_rate"], d["claims"],
            d["fallbacks"], d["chain"], d["period_last"], d["last"], d["mean"], d["max"],
            d["updates"], d["overruns"], d["faults"], d["last_error"])
            for d in self.core.describe()]

    def listInterfaces(self) -> list:
        return [RTController.InterfaceInfo(n, o) for n, o in self.core.list_interfaces()]

    def reloadControllerModules(self, restore: bool) -> tuple[bool, str]:
        return self._guard("reloadControllerModules",
                           lambda: self.comp.reload_modules(bool(restore), self))


def statistics(comp: Any) -> Any:
    """RTController::ManagerStatistics from the core and the EC. Runs in: any thread; takes
    no lock the EC thread needs and holds the GIL for tens of microseconds (counters and one
    partition of a copy of the lateness history; see ControllerManager.loop_figures)."""
    core = comp.core
    st = core.statistics()
    es = comp.loop_figures()
    ctrls = [RTController.ControllerStatistics(
        name, c["state"].lower(), c["updates"], c["last"], c["mean"], c["max"],
        c["overruns"], c["last_overrun_time"], c["faults"], c["last_error"])
        for name, c in st["controllers"].items()]
    return RTController.ManagerStatistics(
        st["ticks"], core.period, es.get("mean_period", st["period_mean"]),
        st["period_min"], st["period_max"], es.get("lateness_p50", 0.0),
        es.get("lateness_p99", 0.0), es.get("lateness_max", 0.0), es.get("overruns", 0),
        st["overhead_last"], st["overhead_mean"], st["overhead_max"], st["switches"], ctrls)
