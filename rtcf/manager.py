"""The process runtime: rtc.conf -> components -> ECs -> connections -> activation -> shutdown.

``Manager.build(composition)`` checks everything it can before anything runs: the structure
(composition.py), component types and parameters against their classes, then it creates the
components (on_initialize), checks every connection against the real ports, and only then
attaches ECs, connects, starts and activates. Any error finalises what was created and raises
CompositionError naming the file, the path and the bad value.

Shutdown (SIGINT/SIGTERM, --duration, or shutdown()): every Active component is deactivated
(on_deactivated), every EC stops (on_shutdown), every component is finalised (on_finalize).

Simulation time (the composition's ``simulation`` key, or rtc.conf's
``rtcf.simulation.enable``): every EC of the process is a rtcf.simtime.SimulationEC on one
time base (``Manager.time_base``); the ECs start and the components are activated with
simulated time held at 0, and ``--duration`` counts simulated seconds.
"""

from __future__ import annotations

import contextlib
import math
import signal
import sys
import threading
import time
from typing import Any, Callable, Mapping

from . import log as rlog
from . import rtcconf
from .component import Component
from .composition import Composition, ComponentDecl
from .errors import CompositionError, ConfigError, RtcfError
from .execution import ExecutionContext
from .lifecycle import LifeCycleState, ReturnCode
from .build import ECSettings, Wire, check_components, check_connections, make_ec
from .loader import ModuleLoader
from .paramsources import apply_conf_sources
from .ports import connect
from .services import ServicePort, connect_services
from .simtime import (SimTimeBase, disable_process_simulation,
                      enable_process_simulation, process_time_base)

OVERRUN_LOG_INTERVAL = 5.0   # [s] at most one overrun warning per EC in that time


class Manager:
    """One per process. Not thread-safe: call it from the main thread."""

    def __init__(self, conf: Mapping[str, str] | None = None, *, corba: bool | None = None):
        self.conf = rtcconf.merge_conf(rtcconf.defaults(), conf or {})
        self.components: dict[str, Component] = {}
        self.realtime: dict[str, object] = {}
        # called once before the first EC starts (a manager process sets it: the real-time
        # settings of its other threads, rtcf.realtime.raise_for_ecs)
        self.before_ecs_start: Callable[[], None] | None = None
        self._overruns_logged: dict[str, tuple[int, float]] = {}
        self.ecs: dict[str, ExecutionContext] = {}
        self.connectors: list[Any] = []
        self.log = rlog.get_logger("manager")
        self.loader = ModuleLoader(self.conf)
        self.ec_settings = ECSettings.from_conf(self.conf)   # rtc.conf's EC keys, read once
        self._counters: dict[str, int] = {}
        self._stop = threading.Event()
        self._stop_flag = False      # set by signal handlers (no lock)
        self._shut = False
        self.corba: Any = None
        self.time_base: SimTimeBase | None = None   # simulation mode: the one time base
        self.sim_stop_at: float | None = None       # simulated time where the run ends
        self.lockstep: Any = None     # rtcf.launcher.Lockstep: simulated time across processes
        want_corba = corba if corba is not None else rtcconf.get_bool(
            self.conf, "manager.corba_servant", True)
        self.corba_enabled = want_corba
        for name in rtcconf.get_list(self.conf, "manager.modules.preload"):
            self.load_module(name)

    # -- modules and types -------------------------------------------------------------------
    def load_module(self, name: str) -> Any:
        """Import a component module or package (rtcf.loader). Runs in: the main thread."""
        return self.loader.load_module(name)

    def register(self, cls: type[Component]) -> None:
        """Make a component class known without a module (tests, embedding). Runs in: the
        main thread."""
        self.loader.register(cls)

    def resolve(self, type_name: str, module: str | None = None) -> type[Component]:
        """The class of a component type (rtcf.loader). Runs in: the main thread."""
        return self.loader.resolve(type_name, module)

    # -- components ----------------------------------------------------------------------
    def _next_name(self, type_name: str) -> str:
        n = self._counters.get(type_name, 0)
        while f"{type_name}{n}" in self.components:
            n += 1
        self._counters[type_name] = n + 1
        return f"{type_name}{n}"

    def create_component(self, type_name: str, module: str | None = None,
                         name: str | None = None, params: Mapping[str, Any] | None = None,
                         config_set: str | None = None) -> Component:
        """Create and initialise one component (OpenRTM createComponent): its parameters
        from rtc.conf's sources (rtcf.paramsources), then ``params``. Runs in: the main
        thread."""
        cls = self.resolve(type_name, module)
        name = name or self._next_name(type_name)
        if name in self.components:
            raise ConfigError(f"instance name {name!r} is already used in this process")
        comp = cls(name)
        apply_conf_sources(self.conf, comp.params, type(comp), comp.instance_name)
        if params:
            comp.params.load(dict(params), config_set)
        if config_set:
            comp.params.select_initial(config_set)
        comp.initialize()
        comp.add_exit_callback(self._forget)
        self.components[name] = comp
        if self.corba is not None:
            self.corba.register_component(comp)
        return comp

    def check(self, composition: Composition) -> None:
        """Everything about the components that can be known before one is created
        (rtcf.build.check_components); nothing is created, bound or started. Runs in: the
        main thread."""
        names_bound = self.corba_enabled and rtcconf.get_bool(self.conf, "naming.enable", True)
        check_components(composition, self.conf, self.loader, names_bound)

    def _forget(self, comp: Component) -> None:
        self.components.pop(comp.instance_name, None)
        if self.corba is not None:
            self.corba.unregister_component(comp)

    # -- building a system ---------------------------------------------------------------
    def build(self, composition: Composition, start: bool = True, hold: bool = False) -> None:
        """Create, wire, start and activate a whole composition (see module doc).
        ``hold``: bind no name and activate nothing yet; go() does both (a process of a
        multi-process system waits until every process is ready). Runs in: the main thread."""
        self.check(composition)
        created: list[Component] = []
        if self.corba is not None:
            self.corba.hold_bindings()       # names are bound once every check passed
        try:
            for decl in composition.components:
                created.append(self._create_from(decl, composition))
            wires = check_connections(composition, self.components)
            ecs = self._make_ecs(composition)
        except BaseException:
            if self.corba is not None:
                self.corba.discard_held_bindings()
            for comp in reversed(created):
                comp.finalize()
            raise
        try:
            self._wire_and_start(composition, ecs, wires, start, activate=not hold)
        except BaseException:
            if self.corba is not None:
                self.corba.discard_held_bindings()
            raise
        if hold:
            self._pending_activate = list(composition.activate)
            return
        if self.corba is not None:
            self.corba.release_bindings()    # the names appear once the system is up

    def go(self, bind: bool = True, activate: bool = True) -> None:
        """After build(hold=True): bind the names and activate (the whole system is
        ready). Runs in: the main thread."""
        if activate:
            for name in getattr(self, "_pending_activate", []):
                self.activate(name)
            self._pending_activate = []
        if bind and self.corba is not None:
            self.corba.release_bindings()

    def _wire_and_start(self, composition: Composition, ecs: dict[str, ExecutionContext],
                        wires: list[Wire], start: bool, activate: bool = True) -> None:
        for ec_decl in composition.execution_contexts:
            ec = ecs[ec_decl.name]
            for member in ec_decl.members:
                ec.add_component(self.components[member])
            self.ecs[ec_decl.name] = ec
            if self.corba is not None:
                self.corba.register_ec(ec)
        for (out, inp, props, _) in wires:
            if isinstance(out, ServicePort):
                if self.corba is not None:
                    self.corba.connect_services(out, inp)
                    connect_services(out, inp, local=True)   # in-process interfaces
                else:
                    connect_services(out, inp)
            elif self.corba is not None:
                self.connectors.append(self.corba.connect(out, inp, props))
            else:
                self.connectors.append(connect(out, inp, props))
        if start:
            from . import realtime
            # freeze the heap built so far before any EC thread runs (a full collection of
            # the start-up heap would hold the GIL for tens of ms inside a cycle)
            self.realtime["gc_freeze"] = realtime.freeze_heap(self.conf)
            hook, self.before_ecs_start = self.before_ecs_start, None
            if hook is not None:
                hook()
            # simulation: held at its current time (0) until every EC runs and every
            # component is active, so that each run starts alike
            tb = self.time_base
            with tb.held() if tb is not None else contextlib.nullcontext():
                for ec in ecs.values():
                    ec.start()
                for name in composition.activate if activate else ():
                    self.activate(name)

    def _create_from(self, decl: ComponentDecl, composition: Composition) -> Component:
        try:
            return self.create_component(decl.type, decl.module, decl.name, decl.params,
                                         decl.config_set)
        except RtcfError as e:
            file, path = decl.where
            raise CompositionError(f"{file or composition.source_file}: {path}: {e}") from e
        except Exception as e:
            file, path = decl.where
            raise CompositionError(f"{file or composition.source_file}: {path}: creating "
                                   f"{decl.type} failed: {e!r}") from e

    def simulation_factor(self, composition: Composition) -> float | None:
        """The real-time factor when this composition runs in simulation time, else None
        (rtcf.build.ECSettings.simulation_factor). Runs in: the main thread."""
        factor = self.ec_settings.simulation_factor(composition)
        if factor is None and self.ec_settings.real_time_factor is not None:
            self.log.warning("rtcf.simulation.real_time_factor is set but simulation "
                             "time is off (set rtcf.simulation.enable: YES or the "
                             "composition's simulation key): ignored")
        return factor

    def _make_ecs(self, composition: Composition) -> dict[str, ExecutionContext]:
        """The composition's ECs (rtcf.build.make_ec), on the process's simulation time
        base when it runs in simulation time (made on first use)."""
        factor = self.simulation_factor(composition)
        lock = self.lockstep
        if factor is not None and self.time_base is None:
            self.time_base = self.ec_settings.make_time_base(
                factor, driven=lock is not None and lock.follower)
            if lock is not None and lock.leader:
                self.time_base.hold()     # until every process has joined (rtcf.launcher)
            if self.sim_stop_at is not None:
                self.time_base.set_stop_time(self.sim_stop_at)
            enable_process_simulation(self.time_base)
            self.log.info("simulation time: every execution context runs on one time base "
                          "at real-time factor %g%s", factor,
                          " (as fast as possible)" if factor == 0 else "")
        out: dict[str, ExecutionContext] = {}
        for d in composition.execution_contexts:
            if d.name in self.ecs:
                raise CompositionError(f"{composition.source_file}: execution context "
                                       f"{d.name!r} already exists in this process")
            out[d.name] = make_ec(d, self.ec_settings, self.time_base,
                                  rank=lock.rank(d.name) if lock is not None else None)
        return out

    # -- lifecycle -----------------------------------------------------------------------
    def activate(self, name: str) -> None:
        """Activate component ``name`` in each of its ECs (a refusal is logged). Runs in: the main
        thread."""
        comp = self.components[name]
        for ec in comp.ecs:
            rc = ec.activate_component(comp)
            if rc != ReturnCode.RTC_OK:
                self.log.warning("activating %s in %s: %s", name, ec.name, rc.name)

    def status_line(self) -> str:
        """Per EC: cycles per second and overruns since the last line, the worst lateness in
        that interval, the total overruns, member states. Reads counters and the lateness
        ring the EC thread fills anyway: costs the EC thread nothing.
        Runs in: the thread of run()."""
        parts = []
        now = time.monotonic()
        if self.time_base is not None:
            parts.append(self.time_base.status(now))
        for ec in self.ecs.values():
            parts.append(ec.status(now))
        for comp in self.components.values():      # a component's own few words
            try:
                text = comp.status()
            except Exception as e:                  # never lose the line for it
                text = f"status failed ({e})"
            if text:
                parts.append(f"| {comp.instance_name}: {text}")
        note = self.corba.connection_note() if self.corba is not None else ""
        if note:
            parts.append(f"| {note}")
        return " ".join(parts) or "no execution contexts"

    def log_overruns(self, now: float, interval: float = OVERRUN_LOG_INTERVAL) -> None:
        """Warn about new EC overruns, at most once per ``interval`` [s] per EC. Runs in:
        the thread of run() (never an EC thread: the EC only counts)."""
        for ec in self.ecs.values():
            count = ec.overruns
            logged, when = self._overruns_logged.get(ec.name, (0, -math.inf))
            if count > logged and now - when >= interval:
                what = ("missed deadlines skipped" if getattr(ec, "overrun_policy", "")
                        == "skip" else "missed cycles caught up")
                since = "since start" if when == -math.inf else f"in the last {now - when:.0f} s"
                self.log.warning("execution context %r: %d overrun(s) %s (%d total; %s)",
                                 ec.name, count - logged, since, count, what)
                self._overruns_logged[ec.name] = (count, now)
        for comp in self.components.values():      # e.g. controllers that overran
            try:
                comp.log_warnings(now)
            except Exception:
                self.log.exception("%s: log_warnings failed", comp.instance_name)

    def final_report(self) -> str:
        """A few lines for the end of a run: per EC cycles, rate, overruns, lateness.
        Runs in: the main thread, after run()."""
        lines = []
        if self.time_base is not None:
            lines.append(self.time_base.report())
        for ec in self.ecs.values():
            lines.append(ec.report())
        for comp in self.components.values():
            text = comp.summary()
            if text:
                lines.append(f"{comp.instance_name}: {text}")
        return "\n".join(lines)

    def request_stop(self, *signal_args: Any) -> None:
        """Ask run() to return. As a signal handler (called with signum, frame) it only sets
        a flag that run() polls every 0.1 s: Event.set takes a lock, and a second signal
        arriving while the handler held it deadlocked the process (seen with SIGTERMs in
        quick succession). Runs in: a signal handler, or any thread."""
        self._stop_flag = True
        if not signal_args:
            self._stop.set()

    def run(self, duration: float | None = None, status_interval: float = 1.0,
            stream: Any = None, alive: Any = None) -> None:
        """Block until SIGINT/SIGTERM or ``duration`` seconds; print a status line. In
        simulation time ``duration`` counts simulated seconds (from now, unless
        ``sim_stop_at`` set the end before the build).
        Runs in: the main thread (it installs the signal handlers there)."""
        stream = stream or sys.stderr
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, self.request_stop)
            signal.signal(signal.SIGTERM, self.request_stop)
        tb = self.time_base
        if tb is not None and duration is not None and tb.stop_time is None:
            tb.set_stop_time(tb.now + duration)
        end = time.monotonic() + duration if duration is not None and tb is None else None
        tty = stream.isatty()
        last = 0.0
        while not (self._stop_flag or self._stop.is_set()):
            now = time.monotonic()
            if end is not None and now >= end:
                break
            if tb is not None and duration is not None and tb.stop_reached.is_set():
                break
            if status_interval and now - last >= status_interval:
                last = now
                line = self.status_line()
                stream.write(("\r\033[K" + line) if tty else line + "\n")
                stream.flush()
            self.log_overruns(now)
            if alive is not None and not alive():
                self.log.error("a process of the system exited: stopping")
                break
            # a launcher whose components all live in its child processes keeps running
            if not self.components and alive is None and rtcconf.get_bool(
                    self.conf, "manager.shutdown_on_nortcs", True):
                break
            self._stop.wait(0.1 if end is None else max(0.0, min(0.1, end - now)))
        if tty:
            stream.write("\n")

    def shutdown(self) -> None:
        """Deactivate everything, stop the ECs, finalise the components, stop CORBA.
        Runs in: the main thread."""
        if self._shut:
            return
        self._shut = True
        for comp in list(self.components.values()):
            for ec in comp.ecs:
                if ec.get_component_state(comp) is LifeCycleState.ACTIVE:
                    ec.deactivate_now(comp)
        for ec in self.ecs.values():
            if ec.is_running():
                ec.stop()
        if self.time_base is not None and process_time_base() is self.time_base:
            disable_process_simulation()
        for comp in list(self.components.values()):
            comp.finalize()
        for c in self.connectors:
            if c is not None:
                c.close()
        if self.corba is not None:
            self.corba.shutdown()
            self.corba = None


if __name__ == "__main__":
    # `python -m rtcf.manager` (scripts/run, the launcher's children): the rtcf command
    from rtcf.command import main
    sys.exit(main())
