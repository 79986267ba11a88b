"""The build step's parts that need no running system: checks and the EC factory.

``Manager.check`` / ``Manager.build`` put them in order (see rtcf.manager):

* :func:`check_components`: everything about the components that can be known before one
  exists (types, parameters from every source, configuration sets, each type's own check
  of its configuration, ``Component.check_config``, the names they would bind);
* :func:`check_connections`: every connection against the real ports of the created
  components (direction, data type, connector properties);
* :class:`ECSettings`, read from rtc.conf once, and :func:`make_ec`, the factory of every
  execution context kind (periodic, stepped, simulation time) and of the simulation time
  base.

Each error names the file, the path inside it and the bad value; every problem found is
listed in one CompositionError.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Mapping, NamedTuple

from . import rtcconf
from .component import CheckContext, Component, ECPlace
from .composition import Composition, ECDecl, bad_name_char, check_params
from .errors import CompositionError, ConfigError, RtcfError, show_value
from .execution import ExecutionContext, PeriodicEC, SteppedEC
from .loader import ModuleLoader
from .paramsources import apply_conf_sources
from .params import ParamStore
from .ports import ConnectorProps, InPort, OutPort
from .services import ServicePort, local_binding_problems
from .simtime import SimTimeBase, SimulationEC

@dataclass(frozen=True)
class ECSettings:
    """What rtc.conf says about execution contexts and simulation time, read once
    (:meth:`from_conf`); the EC factory's only input besides the composition.
    Runs in: the manager's main thread."""

    spin: float = 200e-6               # [s] spin window before each deadline
    sched_fifo: bool = False
    spin_yield: bool = False
    overrun_policy: str = "skip"
    trace: bool = False
    trace_cycles: int = 65536
    trace_file: str = "rtcf-trace-%n-%p.npz"
    sync_transition: bool = True
    transition_timeout: float = 0.5    # [s]
    simulation: bool | None = None     # rtcf.simulation.enable; None: the composition says
    real_time_factor: float | None = None   # rtcf.simulation.real_time_factor
    lockstep_cpu: int | None = None    # rtcf.simulation.cpu, resolved (None: any CPU)
    ec_cpus: frozenset[int] | None = None   # exec_cxt.periodic.cpu_affinity (None: not set)

    @classmethod
    def from_conf(cls, conf: Mapping[str, str]) -> "ECSettings":
        """Read the ``exec_cxt.*`` and ``rtcf.simulation.*`` keys; ConfigError naming the
        key and where it was set for a bad value."""
        enable = "rtcf.simulation.enable"
        return cls(
            spin=rtcconf.get_float(conf, "exec_cxt.periodic.spin_us", 200.0, ge=0) * 1e-6,
            sched_fifo=rtcconf.get_bool(conf, "exec_cxt.periodic.sched_fifo", False),
            spin_yield=rtcconf.get_bool(conf, "exec_cxt.periodic.spin_yield", False),
            overrun_policy=(conf.get("exec_cxt.periodic.overrun_policy") or "skip").strip(),
            trace=rtcconf.get_bool(conf, "exec_cxt.periodic.trace", False),
            trace_cycles=int(rtcconf.get_float(conf, "exec_cxt.periodic.trace_cycles",
                                               65536, ge=16)),
            trace_file=conf.get("exec_cxt.periodic.trace_file", "rtcf-trace-%n-%p.npz"),
            sync_transition=rtcconf.get_bool(conf, "exec_cxt.sync_transition", True),
            transition_timeout=rtcconf.get_float(conf, "exec_cxt.transition_timeout", 0.5,
                                                 ge=0),
            simulation=rtcconf.get_bool(conf, enable)
            if str(conf.get(enable) or "").strip() else None,
            real_time_factor=rtcconf.get_float(conf, "rtcf.simulation.real_time_factor",
                                               None, ge=0),
            lockstep_cpu=lockstep_cpu(conf),
            ec_cpus=_ec_cpus(conf))

    def simulation_factor(self, composition: Composition) -> float | None:
        """The real-time factor when ``composition`` runs in simulation time, else None:
        rtcf.simulation.enable (YES / NO) wins over the composition's ``simulation`` key,
        rtcf.simulation.real_time_factor over its factor."""
        sim = getattr(composition, "simulation", None)   # stand-ins in tests have none
        if self.simulation is False or (self.simulation is None and sim is None):
            return None
        if self.real_time_factor is not None:
            return self.real_time_factor
        return sim.real_time_factor if sim is not None else 1.0

    def make_time_base(self, factor: float, driven: bool = False) -> SimTimeBase:
        """The process's simulation time base at ``factor``, pacing with the EC settings;
        ``driven``: a follower of a lockstep simulation across processes (rtcf.lockstep),
        whose instants its leader runs."""
        return SimTimeBase(factor, spin=self.spin, spin_yield=self.spin_yield,
                           sched_fifo=self.sched_fifo, driven=driven, cpu=self.lockstep_cpu)

def _ec_cpus(conf: Mapping[str, str]) -> frozenset[int] | None:
    from .realtime import cpu_affinity
    cpus = cpu_affinity(conf, "exec_cxt.periodic.cpu_affinity")
    return None if cpus is None else frozenset(cpus)


def lockstep_cpu(conf: Mapping[str, str]) -> int | None:
    """rtcf.simulation.cpu resolved: a CPU number, or None (any CPU: NO, or auto on a
    machine where the process may use one CPU only). ConfigError naming the key and where
    it was set for another value."""
    key = "rtcf.simulation.cpu"
    text = str(conf.get(key) or "auto").strip().lower()
    if text == "no":
        return None
    if text == "auto":
        try:
            cpus = sorted(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            return None
        return cpus[-1] if len(cpus) > 1 else None
    if not text.isdigit():
        raise ConfigError(f"{rtcconf.where(conf, key)}: {key}: expected auto, NO or a CPU "
                          f"number (0, 1, ...), got {show_value(conf.get(key))}")
    return int(text)


def make_ec(decl: ECDecl, settings: ECSettings,
            time_base: SimTimeBase | None = None, rank: int | None = None) -> ExecutionContext:
    """The execution context ``decl`` declares: on ``time_base`` when the process runs in
    simulation time (every EC kind then is a SimulationEC), else a SteppedEC or a
    PeriodicEC (with its cycle trace when exec_cxt.periodic.trace is set). ``rank``: the
    EC's place at a shared simulated instant in a lockstep simulation across processes
    (rtcf.lockstep.plan); otherwise its creation order."""
    common: dict[str, Any] = dict(name=decl.name, sync_transition=settings.sync_transition,
                                  transition_timeout=settings.transition_timeout)
    if time_base is not None:
        return SimulationEC(decl.rate, time_base=time_base, rank=rank, **common)
    ec: ExecutionContext
    if decl.kind == "stepped":
        ec = SteppedEC(decl.rate, **common)
    else:
        ec = PeriodicEC(decl.rate, spin=settings.spin, sched_fifo=settings.sched_fifo,
                        spin_yield=settings.spin_yield,
                        overrun_policy=settings.overrun_policy, cpus=settings.ec_cpus,
                        **common)
    if settings.trace:
        path = settings.trace_file.replace("%n", decl.name).replace("%p", str(os.getpid()))
        ec.enable_trace(settings.trace_cycles, path)
    return ec

def check_components(composition: Composition, conf: Mapping[str, str],
                     loader: ModuleLoader, names_bound: bool) -> None:
    """Everything about the components that can be known before one is created: types
    (modules loaded), parameters of the composition, of rtc.conf and of the component
    conf files it names, configuration set names, each type's own check of its configuration
    (``Component.check_config``), (``names_bound``: the names will be bound in a naming
    service) the names they would bind, and a cycle trace asked in simulation time. One CompositionError lists every
    problem; nothing is created, bound or started."""
    for decl in composition.components:
        if decl.module:
            try:
                loader.load_module(decl.module)
            except LookupError:
                pass  # reported by check_params at .module
    check_params(composition, loader.resolve)
    errors = []
    for decl in composition.components:
        cls = loader.resolve(decl.type, decl.module)
        store = ParamStore(cls.declared_params(), owner=decl.name or "")
        try:
            apply_conf_sources(conf, store, cls, decl.name or "")
        except RtcfError as e:           # names its own file or rtc.conf key
            errors.append(str(e))
            continue
        file, path = decl.where
        try:
            if decl.params:
                store.load(dict(decl.params), decl.config_set)
            if decl.config_set:
                store.select_initial(decl.config_set)
        except RtcfError as e:
            errors.append(f"{file or composition.source_file}: {path}: {e}")
        else:
            errors.extend(component_check(cls, dict(store.values), composition, decl))
        problem = naming_problem(conf, cls, decl.name or "") if names_bound else None
        if problem:
            errors.append(f"{file or composition.source_file}: {path}.name: {problem}")
    problem = trace_problem(composition, conf)
    if problem:
        errors.append(problem)
    if errors:
        raise CompositionError(errors)


def trace_problem(composition: Composition, conf: Mapping[str, str]) -> str | None:
    """exec_cxt.periodic.trace asked of a composition that runs in simulation time: its ECs
    follow the simulated time base and record no trace (the time base's lateness is in the
    final report), so say so rather than write nothing. Runs in: the main thread."""
    key = "exec_cxt.periodic.trace"
    if not rtcconf.get_bool(conf, key, False):
        return None
    enable = "rtcf.simulation.enable"
    on = rtcconf.get_bool(conf, enable) if str(conf.get(enable) or "").strip() else None
    if on is False or (on is None and getattr(composition, "simulation", None) is None):
        return None
    why = ("rtcf.simulation.enable is YES" if on else
           f"{composition.source_file} runs in simulation time (its simulation key)")
    return (f"{rtcconf.where(conf, key)}: {key}: traces wall-clock periodic execution "
            f"contexts, but {why}: its ECs follow the simulated time base and would write no "
            f"trace (the time base's lateness is in the final report); add -o "
            f"rtcf.simulation.enable:NO to trace this system on wall-clock ECs, got "
            f"{conf.get(key)!r}")

def component_check(cls: type[Component], values: dict[str, Any], composition: Composition,
                    decl: Any) -> list[str]:
    """The component type's own pre-start check (Component.check_config) of one declared
    instance, as "file: path: message" lines. Runs in: the main thread."""
    file, path = decl.where
    file = file or composition.source_file
    ecs = []
    for ec in composition.execution_contexts:
        if decl.name in ec.members:
            ec_file, ec_path = ec.where
            ec_file = ec_file or composition.source_file
            where = (f"{ec_file}: {ec_path}.rate" if ec_path != "execution_contexts" else
                     f"{ec_file}: execution_contexts (the default {ec.name!r}, its rate from "
                     "exec_cxt.periodic.rate)")
            ecs.append(ECPlace(ec.name, ec.rate, where))
    ctx = CheckContext(decl.name or "", tuple(ecs), f"{file}: {path}.params")
    try:
        found = cls.check_config(values, ctx)
    except Exception as e:           # the hook's own failure must not hide the others
        return [f"{file}: {path}: {cls.type_name}.check_config failed: {e!r}"]
    return [f"{where}: {message}" for where, message in found]


def naming_problem(conf: Mapping[str, str], cls: type[Component], instance: str) -> str | None:
    """What stops the names of this component (naming.formats) from being bound: a format
    that does not expand, or a name with a control character or a character outside
    Latin-1 (CORBA strings carry Latin-1 only). None when they are fine."""
    from .corba.naming import format_names
    fmt = conf.get("naming.formats", "%h.host_cxt/%n.rtc")
    try:
        paths = format_names(fmt, instance=instance, type=cls.type_name, vendor=cls.vendor,
                             version=cls.version, category=cls.category,
                             manager=conf.get("manager.name", "manager"))
    except (ValueError, TypeError) as e:
        return f"{rtcconf.where(conf, 'naming.formats')}: naming.formats: {e}"
    for path in paths:
        text = "/".join(f"{i}.{k}" if k else i for i, k in path)
        c = bad_name_char(text)
        if c is not None:
            what = "a control character" if ord(c) < 160 else "a character outside " \
                "Latin-1, which a naming service cannot carry"
            return (f"naming.formats {show_value(fmt)} gives the name "
                    f"{show_value(text)} with {what} ({c!r})")
    return None

class Wire(NamedTuple):
    """One checked connection: data (``out`` -> ``inp``) or between two service ports."""

    out: Any
    inp: Any
    properties: dict[str, str]
    decl: Any

def check_connections(composition: Composition,
                      components: Mapping[str, Component]) -> list[Wire]:
    """Every connection of ``composition`` against the real ports of ``components``: both
    ends exist, an OutPort and an InPort (either first, as OpenRTM allows) of one data
    type with valid connector properties, or two service ports. One CompositionError lists
    every problem; and every local interface a component requires (rtcf.services) bound
    by one of them."""
    errors, wires = [], []
    for i, conn in enumerate(composition.connections):
        file, path = conn.where
        file = file or composition.source_file
        path = path or f"connections[{i}]"
        ends = []
        for key, ref in (("from", conn.source), ("to", conn.target)):
            inst, _, pname = ref.partition(".")
            comp = components.get(inst)
            port = None
            if comp is not None:
                port = comp.ports.get(pname) or comp.service_ports.get(pname)
            if port is None:
                known = ", ".join([*comp.ports, *comp.service_ports]) \
                    if comp is not None else ""
                errors.append(f"{file}: {path}.{key}: unknown port (ports of {inst}: "
                              f"{known or 'none'}), got {ref!r}")
            ends.append(port)
        a, b = ends
        if a is None or b is None:
            continue
        if isinstance(a, ServicePort) or isinstance(b, ServicePort):
            if not (isinstance(a, ServicePort) and isinstance(b, ServicePort)):
                errors.append(f"{file}: {path}: a service port connects only to another "
                              f"service port, got {conn.source!r} and {conn.target!r}")
            else:
                wires.append(Wire(a, b, conn.properties, conn))
            continue
        if isinstance(a, InPort) and isinstance(b, OutPort):
            a, b = b, a          # OpenRTM lets either end come first
        if not (isinstance(a, OutPort) and isinstance(b, InPort)):
            errors.append(f"{file}: {path}: expected an OutPort and an InPort, got "
                          f"{a.port_type} {conn.source!r} and {b.port_type} "
                          f"{conn.target!r}")
            continue
        if a.data_type is not b.data_type:
            errors.append(f"{file}: {path}: data types differ: {conn.source} is "
                          f"{a.data_type.__name__}, {conn.target} is "
                          f"{b.data_type.__name__}")
            continue
        try:
            ConnectorProps(conn.properties)
        except ConfigError as e:
            errors.append(f"{file}: {path}.properties: {e}")
            continue
        wires.append(Wire(a, b, conn.properties, conn))
    # the in-process (local) interfaces a component requires: declared connections only
    ours = [components[d.name] for d in composition.components if d.name in components]
    for owner, problem in local_binding_problems(
            [sp for c in ours for sp in c.service_ports.values()],
            [(w.out, w.inp) for w in wires if isinstance(w.out, ServicePort)]):
        file, path = composition.component(owner.instance_name).where
        errors.append(f"{file or composition.source_file}: {path}: "
                      f"{owner.instance_name}: {problem}")
    if errors:
        raise CompositionError(errors)
    return wires
