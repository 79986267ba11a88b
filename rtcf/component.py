"""The Component base class: profile, hooks, ports, parameters, the command queue.

Subclass it, declare parameters as class attributes (``Param``), create ports in
``on_initialize`` and implement the hooks you need. Hooks take an ``ECInfo`` (except
on_initialize / on_finalize) and return None or raise; returning False or a non-OK
ReturnCode also counts as failure. Per-EC lifecycle state is kept by the execution
contexts (execution.py), as in OpenRTM.
"""

from __future__ import annotations

import contextlib
import inspect
from collections import deque
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, Callable, ClassVar

from .errors import LifecycleError, PortError
from .lifecycle import LifeCycleState, is_failure
from .log import get_logger
from .params import Param, ParamStore
from .ports import InPort, OutPort, Port

if TYPE_CHECKING:
    from .execution import ExecutionContext


class ECInfo:
    """What a hook learns about the cycle it runs in (one per component and EC, updated in
    place every cycle: no allocation).

    id: the EC's handle for this component (0.. owned, 1000.. participating, as OpenRTM);
    period: nominal period [s]; planned: the deadline this cycle was planned for [s, EC clock];
    now: when the cycle started [s, EC clock]; measured_period: time since the previous
    cycle start [s]; cycle: cycles run by the EC. On a SimulationEC (rtcf.simtime) every
    time is simulated seconds: planned = now = the cycle's instant.
    """

    __slots__ = ("id", "ec", "period", "planned", "now", "measured_period", "cycle")

    def __init__(self, ec_id: int, ec: "ExecutionContext"):
        self.id = ec_id
        self.ec = ec
        self.period = ec.period
        self.planned = 0.0
        self.now = 0.0
        self.measured_period = ec.period
        self.cycle = 0

    def __repr__(self) -> str:
        return (f"ECInfo(id={self.id}, period={self.period}, planned={self.planned}, "
                f"cycle={self.cycle})")


class ECPlace:
    """An execution context a component will run in, as the pre-start check sees it: its
    name, rate [Hz] and ``rate_where`` (the file and path that set the rate, for errors).
    Runs in: the manager's main thread (the pre-start check); read only."""

    __slots__ = ("name", "rate", "rate_where")

    def __init__(self, name: str, rate: float, rate_where: str):
        self.name, self.rate, self.rate_where = name, float(rate), rate_where

    def __repr__(self) -> str:
        return f"ECPlace({self.name!r}, {self.rate:g} Hz)"


class CheckContext:
    """What :meth:`Component.check_config` learns about an instance before anything starts:
    its ``instance`` name, the execution contexts it will run in (``ecs``: ECPlace, in
    declaration order) and where its parameters were declared (``param(name)`` gives the
    "file: path.params.name" to name in an error). Runs in: the manager's main thread (the
    pre-start check); read only."""

    __slots__ = ("instance", "ecs", "_params_where")

    def __init__(self, instance: str, ecs: "tuple[ECPlace, ...]" = (),
                 params_where: str = ""):
        self.instance = instance
        self.ecs = tuple(ecs)
        self._params_where = params_where or f"{instance}.params"

    def param(self, name: str) -> str:
        return f"{self._params_where}.{name}"


class Component:
    """Base of every RT component (OpenRTM's DataFlowComponent)."""

    type_name: ClassVar[str] = ""
    version: ClassVar[str] = "1.0.0"
    vendor: ClassVar[str] = "rtcf"
    category: ClassVar[str] = "rtcf"
    max_instance: ClassVar[int] = 0
    language: ClassVar[str] = "Python"

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if "type_name" not in cls.__dict__:
            cls.type_name = cls.__name__

    def __init__(self, instance_name: str | None = None):
        self.instance_name = instance_name or f"{self.type_name}0"
        self.log = get_logger(self.instance_name)
        self._params = ParamStore(self.declared_params(), owner=self.instance_name)
        self.ports: dict[str, Port] = {}
        self.service_ports: dict[str, Any] = {}
        self.ecs: list["ExecutionContext"] = []      # owned first, then participating
        self.owned_ecs: list["ExecutionContext"] = []
        self.properties: dict[str, str] = {}
        self.initialized = False
        self.finalized = False
        self._commands: deque[tuple[Callable[[], Any], Future]] = deque()
        self._primary_ec: "ExecutionContext | None" = None
        self._exit_callbacks: list[Callable[["Component"], None]] = []
        self.servant: Any = None    # set by the CORBA layer
        self._time_base: Any = None  # an assigned time base (see time_base)

    # -- profile -------------------------------------------------------------------------
    @classmethod
    def description(cls) -> str:
        """The first line of the class's own docstring, else its type name.

        Only the class's own docstring counts: ``inspect.getdoc`` would hand a subclass
        without one the docstring of its base (rtcat would show "Base of every RT
        component" for it). Runs in: any thread."""
        doc = inspect.cleandoc(cls.__dict__.get("__doc__") or "").strip()
        return doc.splitlines()[0] if doc else cls.type_name

    @classmethod
    def declared_params(cls) -> dict[str, Param]:
        """The Param declarations of the class and its bases, by name. Runs in: any thread."""
        out: dict[str, Param] = {}
        for klass in reversed(cls.__mro__):
            for name, value in vars(klass).items():
                if isinstance(value, Param):
                    out[name] = value
        return out

    @classmethod
    def check_config(cls, params: dict[str, Any], ctx: CheckContext) -> list[tuple[str, str]]:
        """The pre-start check of this type's configuration taken together and against
        where the instance will run: what each Param checks alone (type, bounds, choices)
        has passed already; this checks what only the component knows (a model file that
        must load, a list whose length is the model's joint count, a rate its physics
        needs). ``params``: the instance's effective values (defaults, conf files,
        composition, initial configuration set). Returns (where, message) for every
        problem, ``where`` from ``ctx`` (``ctx.param(name)``, ``ec.rate_where``) and the
        message ending with the bad value ("..., got 7 values"). The manager calls it for
        every declared component before it creates any, binds a name or starts an EC, and
        refuses the whole system naming each problem; the checks in the component's hooks
        stay as the last line for instances created otherwise (a test's Harness).
        Runs in: the manager's main thread. The default finds nothing."""
        return []

    @property
    def params(self) -> ParamStore:
        """This component's parameters (read them in the EC thread; set_param from
        others). Runs in: any thread."""
        return self._params

    @property
    def time_base(self) -> Any:
        """What controls the time of this component's (first) execution context: its
        rtcf.simtime.SimTimeBase in simulation time, else the EC itself (a wall-clock
        PeriodicEC, or a SteppedEC driven by tick()). All have ``now``, ``paused``,
        ``pause()``, ``resume()``, ``advance(seconds)``, ``real_time_factor``,
        ``set_real_time_factor(F)`` (ValueError outside simulation time) and ``simulated``.
        None while the component is in no EC. Assignable (a test's stand-in); assigning
        None goes back to the EC's. Runs in: any thread."""
        if self._time_base is not None:
            return self._time_base
        for ec in self.ecs:
            base = getattr(ec, "time_base", None)
            if base is not None:
                return base
        return None

    @time_base.setter
    def time_base(self, base: Any) -> None:
        """Runs in: the main thread (a test's setup)."""
        self._time_base = base

    # -- ports ---------------------------------------------------------------------------
    def _add_port(self, port: Port) -> Port:
        if port.name in self.ports or port.name in self.service_ports:
            raise PortError(f"{self.instance_name}: a port named {port.name!r} exists")
        port.owner = self
        self.ports[port.name] = port
        return port

    def add_in_port(self, name: str, data_type: type | str, **buffer_props: Any) -> InPort:
        """Create an InPort. ``buffer_props`` are default connector properties for it, e.g.
        ``buffer__length=1`` (``__`` stands for ``.``).
        Runs in: the thread that creates the component (on_initialize)."""
        return self._add_port(InPort(name, data_type, **buffer_props))  # type: ignore

    def add_out_port(self, name: str, data_type: type | str) -> OutPort:
        """Create an OutPort. Runs in: the thread that creates the component (on_initialize)."""
        return self._add_port(OutPort(name, data_type))  # type: ignore[return-value]

    def add_service_port(self, port: Any) -> Any:
        """Register a services.ServicePort (CorbaPort).
        Runs in: the thread that creates the component (on_initialize)."""
        if port.name in self.ports or port.name in self.service_ports:
            raise PortError(f"{self.instance_name}: a port named {port.name!r} exists")
        port.owner = self
        self.service_ports[port.name] = port
        return port

    def port(self, name: str) -> Any:
        """The data or service port named ``name`` (PortError naming the ports there
        are). Runs in: any thread."""
        p = self.ports.get(name) or self.service_ports.get(name)
        if p is None:
            known = ", ".join(list(self.ports) + list(self.service_ports)) or "none"
            raise PortError(f"{self.instance_name}: no port named {name!r} (ports: {known})")
        return p

    # -- parameters ----------------------------------------------------------------------
    def set_param(self, name: str, value: Any) -> None:
        """Validate now (ParamError on bad input, nothing changed); the value becomes live
        at the next cycle boundary. Runs in: any thread."""
        self._params.set(name, value)
        self._wake_ecs()

    def on_params_changed(self, names: set[str]) -> None:
        """Called in the EC thread after staged parameter changes became live.
        Runs in: EC thread."""

    def refresh_profile(self) -> None:
        """Bring run-time status up to date (``properties``, ``Param(status=True)`` values)
        just before a tool reads the component profile or the configuration. Runs in: an
        ORB thread (several at once); the default does nothing."""

    @property
    def primary_ec(self) -> "ExecutionContext | None":
        """The execution context whose thread runs posted commands (the first one the
        component joined and still is in), None when in none. Runs in: any thread."""
        return self._primary_ec

    # -- command queue (service calls -> EC thread) ----------------------------------------
    def post(self, fn: Callable[[], Any]) -> Future:
        """Run ``fn`` in this component's EC thread at the start of the next cycle and
        return a Future of its result. Without a running EC it runs at once.
        Runs in: any thread (typically an ORB thread)."""
        fut: Future = Future()
        ec = self._primary_ec
        if ec is None or not ec.accepts_commands():
            with ec.exclusive() if ec is not None else _NO_LOCK:
                run_command(fn, fut)
            return fut
        self._commands.append((fn, fut))
        ec.wake()
        return fut

    def call(self, fn: Callable[[], Any], timeout: float | None = 5.0) -> Any:
        """post() and wait for the result (re-raises the command's exception).
        Runs in: any thread; in the EC thread ``fn`` runs at once."""
        ec = self._primary_ec
        if ec is not None and ec.in_ec_thread():
            return fn()
        if ec is not None and not ec.clock_is_real():
            # a stepped EC may never be ticked again: run now, between two ticks
            with ec.exclusive():
                return fn()
        return self.post(fn).result(timeout)

    def _drain_commands(self) -> None:
        """Runs in: EC thread."""
        q = self._commands
        while q:
            fn, fut = q.popleft()
            run_command(fn, fut)

    def _wake_ecs(self) -> None:
        for ec in self.ecs:
            ec.wake()

    # -- lifecycle entry points (used by the manager and the CORBA layer) ---------------------
    def initialize(self) -> None:
        """Run on_initialize (caller's thread, before any EC). Raises on failure.
        Runs in: the manager's main thread."""
        if self.initialized:
            raise LifecycleError(f"{self.instance_name}: already initialised")
        result = self.on_initialize()
        if is_failure(result):
            raise LifecycleError(f"{self.instance_name}: on_initialize returned {result!r}")
        self._params.initialised = True
        self.initialized = True

    def state_in(self, ec: "ExecutionContext") -> LifeCycleState:
        """This component's state in ``ec``. Runs in: any thread."""
        return ec.get_component_state(self)

    def finalize(self, shutdown_first: bool = True) -> None:
        """Detach from every EC (on_shutdown there) and run on_finalize once; errors are
        logged. The manager's shutdown detaches first (on_shutdown, then on_finalize);
        exit() finalises first, the order OpenRTM-aist shows for rtexit.
        Runs in: the manager's main thread, or an ORB thread (exit)."""
        if self.finalized:
            return
        if shutdown_first:
            self._detach_all()
        self.finalized = True
        try:
            if is_failure(self.on_finalize()):
                self.log.error("on_finalize reported failure")
        except Exception:
            self.log.exception("on_finalize raised")
        if not shutdown_first:
            self._detach_all()
        for port in self.ports.values():
            port.disconnect_all()
        for cb in self._exit_callbacks:
            try:
                cb(self)
            except Exception:
                self.log.exception("exit callback failed")

    def add_exit_callback(self, callback: Callable[["Component"], None]) -> None:
        """Call ``callback(self)`` after the component is finalised (exit, or its manager's
        shutdown), as OpenRTM's RTObject tells its manager (notifyFinalized). Runs in: the
        thread that finalises it."""
        self._exit_callbacks.append(callback)

    def _detach_all(self) -> None:
        for ec in list(self.ecs):
            ec.remove_component(self)

    def exit(self) -> None:
        """LightweightRTObject.exit: deactivate everywhere, then on_finalize, then leave the
        ECs (on_shutdown) and stop the owned ones left empty (OpenRTM-aist's rtexit order).
        Runs in: an ORB thread (rtexit) or the main thread."""
        for ec in list(self.ecs):
            if ec.get_component_state(self) is LifeCycleState.ACTIVE:
                ec.deactivate_now(self)
        owned = list(self.owned_ecs)
        self.finalize(shutdown_first=False)
        for ec in owned:
            if not ec.members():
                ec.stop()

    # -- hooks (override) ------------------------------------------------------------------
    def on_initialize(self) -> Any:
        """Once, when the component is created, before any EC. Runs in: the manager's
        main thread."""
    def on_finalize(self) -> Any:
        """Once, when the component is destroyed. Runs in: the manager's main thread (an ORB
        thread for rtexit)."""
    def on_startup(self, ec: ECInfo) -> Any:
        """An EC this component is in starts. Runs in: EC thread."""
    def on_shutdown(self, ec: ECInfo) -> Any:
        """An EC this component is in stops. Runs in: EC thread."""
    def on_activated(self, ec: ECInfo) -> Any:
        """Runs in: EC thread."""
    def on_deactivated(self, ec: ECInfo) -> Any:
        """Runs in: EC thread."""
    def on_execute(self, ec: ECInfo) -> Any:
        """Each cycle while Active. Runs in: EC thread."""
    def on_state_update(self, ec: ECInfo) -> Any:
        """Each cycle while Active, after every member's on_execute. Runs in: EC thread."""
    def on_aborting(self, ec: ECInfo) -> Any:
        """Entering the Error state. Runs in: EC thread."""
    def on_error(self, ec: ECInfo) -> Any:
        """Each cycle while in the Error state. Runs in: EC thread."""
    def on_reset(self, ec: ECInfo) -> Any:
        """A reset request in the Error state. Runs in: EC thread."""
    def on_rate_changed(self, ec: ECInfo) -> Any:
        """The EC's rate changed (set_rate). Runs in: EC thread."""

    # -- what the manager reports about a component (override) -----------------------------
    # The manager calls these in its main thread (never an EC thread): they may read the
    # component's counters, never wait for the EC thread, and should cost microseconds.
    def status(self) -> str:
        """A few words for the manager's status line (printed once a second); "" for none.
        Runs in: the manager's main thread."""
        return ""

    def summary(self) -> str:
        """Lines for the report at the end of a run; "" for none. Runs in: the manager's
        main thread, at shutdown."""
        return ""

    def log_warnings(self, now: float) -> None:
        """Log what a user should hear about now (e.g. overruns of the component's own
        work), rate-limited by the component (``rtcf.log.Throttled``). ``now``: the
        manager's monotonic time [s]. Runs in: the manager's main thread, about every 0.1 s."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.instance_name}>"


def run_command(fn: Callable[[], Any], fut: Future) -> None:
    """Run a queued command ``fn`` and settle its future (its result, or the exception it
    raised; nothing if it was cancelled). Runs in: the thread that drains the queue (an EC
    thread, or the caller's when no EC runs)."""
    if not fut.set_running_or_notify_cancel():
        return
    try:
        fut.set_result(fn())
    except BaseException as e:  # the caller gets it through the future
        fut.set_exception(e)


_NO_LOCK = contextlib.nullcontext()
