"""The declarative system description: which components, their parameters, connections, ECs.

A composition is checked completely before anything starts (house style rule 7): every
problem is collected and reported at once in one :class:`~rtcf.errors.CompositionError`, each
line naming the file, the path inside it and the bad value::

    nao.yaml: components[1].params.dt: expected > 0, got -0.01
    demo.yaml: connections[0].from: expected "instance.port", got 'gen'

The YAML format (every key except ``components[].type`` is optional)::

    name: demo                      # default: the file name without extension
    components:
      - type: SineGenerator         # the component type name (type_name)
        module: examples            # module/package in manager.modules.load_path defining it
        name: gen                   # instance name; default: type name + counter (SineGenerator0)
        params: {amplitude: 1.0, frequency: 0.5}
        config_set: default         # configuration set to activate
        process: main               # process that hosts it (multi-process systems)
        ec: main                    # shorthand: append this component to that EC's members
      - {type: Recorder, module: examples, name: rec}
      # an OpenRTM-aist component started elsewhere, ticked in lockstep (simulation only):
      # its naming path (or an IOR); it owns an ExtTrig EC (SynchExtTriggerEC)
      - {name: ctrl, external: host_cxt/ctrl.rtc, ec: control}
    connections:
      # from/to are "instance.port"; every other key is a connector property
      - {from: gen.out, to: rec.in, subscription_type: flush}
      - {from: gen.out, to: rec.in2, properties: {subscription_type: new, push_policy: all}}
    execution_contexts:
      # members run in the listed order; kind periodic (own thread) or stepped (tick());
      # rate [Hz] defaults to the default rate. A component may be in several ECs.
      - {name: main, kind: periodic, rate: 100, members: [gen, rec]}
    activate: all                   # "all" (default), "none", or a list of instance names
    processes:                      # optional: per-process settings (free-form mappings)
      main: {}
    simulation:                     # optional: every EC runs in simulated time (rtcf.simtime)
      real_time_factor: 1.0         # 0 = as fast as possible, 1 = real time, 20 = 20x

Connector properties are stored without the ``dataport.`` prefix and with OpenRTM's key
names: ``push_policy``, ``push_rate`` and ``skip_count`` become ``publisher.push_policy``,
``publisher.push_rate`` and ``publisher.skip_count`` (``dataport.publisher.*`` on the wire).
Values are strings, as on the wire (YAML ``true`` becomes ``YES``).

Components that are in no EC's member list go to an EC named ``default`` (periodic, at the
``default_rate`` given to the loader; OpenRTM's ``exec_cxt.periodic.rate``).

rtc.conf's ``manager.components.precreate`` / ``preconnect`` / ``preactivation`` describe the
same things in OpenRTM syntax; :func:`from_rtc_conf` turns them into a :class:`Composition`
so the manager treats both sources alike, and :func:`merge` combines two compositions.
:func:`check_params` is the semantic check against the component classes.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Literal, Mapping

from rtcf import rtcconf
from rtcf.errors import CompositionError, ConfigError, ModuleError, show_value
from rtcf.validate import (CALL_TIMEOUT_MAX, CALL_TIMEOUT_MIN, check_factor, check_rate,
                           parse_yes_no)
from rtcf.yamlio import load_yaml_file

__all__ = [
    "ComponentDecl", "ExternalDecl", "ConnectionDecl", "ECDecl", "SimulationDecl", "Composition",
    "CompositionError",
    "load_composition", "parse_composition", "check_params", "from_rtc_conf", "merge",
    "DEFAULT_EC",
]

DEFAULT_EC = "default"
EC_KINDS = ("periodic", "stepped")
_TOP_KEYS = ("name", "components", "connections", "execution_contexts", "activate",
             "processes", "simulation")
_SIMULATION_KEYS = ("real_time_factor",)
_COMPONENT_KEYS = ("type", "module", "name", "params", "config_set", "process", "ec",
                   "external")
_EXTERNAL_KEYS = ("name", "external", "ec")
_EC_KEYS = ("name", "kind", "rate", "members")
# OpenRTM connector keys that people write without their "publisher." level.
_SHORT_KEYS = {"push_policy": "publisher.push_policy", "push_rate": "publisher.push_rate",
               "skip_count": "publisher.skip_count"}
_ENUM_PROPS = {"subscription_type": ("flush", "new", "periodic"),
               "dataflow_type": ("push", "pull"),
               "publisher.push_policy": ("all", "fifo", "skip", "new")}
# exec_cxt.periodic.type values and the EC kind that implements them.
_EC_TYPES = {"PeriodicExecutionContext": "periodic", "OpenHRPExecutionContext": "stepped",
             "ExtTrigExecutionContext": "stepped", "SimulatorExecutionContext": "stepped"}


@dataclass(frozen=True)
class ComponentDecl:
    """One component instance. ``name`` is filled in by the loaders (default naming).

    ``properties`` holds extra OpenRTM component properties from a precreate item;
    ``where`` is (file, path) of the declaration, used in error messages.
    """

    name: str | None
    type: str
    module: str | None = None
    params: dict[str, object] = field(default_factory=dict)
    config_set: str | None = None
    process: str | None = None
    ec: str | None = None
    properties: dict[str, str] = field(default_factory=dict)
    where: tuple[str, str] = field(default=("", ""), compare=False, repr=False)


@dataclass(frozen=True)
class ExternalDecl:
    """A component started elsewhere (an OpenRTM-aist component in its own rtcd) that a
    simulation ticks in lockstep (rtcf.lockstep): ``rtc`` is its naming path
    (``host_cxt/ctrl.rtc``, in the composition's naming services) or an IOR / corbaloc URL.
    It is a member of ECs and an end of connections like a component; nothing of it is
    created here."""

    name: str
    rtc: str
    ec: str | None = None
    where: tuple[str, str] = field(default=("", ""), compare=False, repr=False)


@dataclass(frozen=True)
class ConnectionDecl:
    """A data connection ``source`` ("inst.port") -> ``target`` with connector properties."""

    source: str
    target: str
    properties: dict[str, str] = field(default_factory=dict)
    where: tuple[str, str] = field(default=("", ""), compare=False, repr=False)


@dataclass(frozen=True)
class ECDecl:
    """An execution context: ``rate`` [Hz], ``members`` (instance names) in execution order."""

    name: str
    kind: Literal["periodic", "stepped"]
    rate: float
    members: list[str] = field(default_factory=list)
    where: tuple[str, str] = field(default=("", ""), compare=False, repr=False)


@dataclass(frozen=True)
class SimulationDecl:
    """The composition's ``simulation`` key: run every EC in simulated time (rtcf.simtime)
    at ``real_time_factor`` (0 = as fast as possible, 1 = real time)."""

    real_time_factor: float = 1.0
    where: tuple[str, str] = field(default=("", ""), compare=False, repr=False)


@dataclass(frozen=True)
class Composition:
    """A whole system: what to create, wire, attach to which EC, and activate."""

    name: str
    source_file: str
    components: list[ComponentDecl] = field(default_factory=list)
    connections: list[ConnectionDecl] = field(default_factory=list)
    execution_contexts: list[ECDecl] = field(default_factory=list)
    activate: list[str] = field(default_factory=list)
    processes: dict[str, dict] = field(default_factory=dict)
    simulation: SimulationDecl | None = None
    externals: list[ExternalDecl] = field(default_factory=list)

    def external(self, name: str) -> ExternalDecl | None:
        """The external component (ticked in lockstep) of instance ``name``, or None.
        Runs in: any thread."""
        for decl in self.externals:
            if decl.name == name:
                return decl
        return None

    def component(self, name: str) -> ComponentDecl:
        """The component declared under instance ``name`` (KeyError if none).
        Runs in: any thread."""
        for decl in self.components:
            if decl.name == name:
                return decl
        raise KeyError(name)


class _Errors:
    """Collects ``file: path: message, got value`` lines; raises them all at the end."""

    _NO_VALUE = object()

    def __init__(self, filename: str):
        self.filename = filename
        self.lines: list[str] = []

    def add(self, path: str, message: str, value: object = _NO_VALUE, *,
            filename: str | None = None) -> None:
        text = f"{filename or self.filename}: {path}: {message}"
        if value is not self._NO_VALUE:
            text += f", got {show_value(value)}"
        self.lines.append(text)

    def at(self, where: tuple[str, str], sub: str, message: str, value: object = _NO_VALUE):
        """Add an error located relative to a declaration's ``where``."""
        self.add(f"{where[1]}{sub}", message, value, filename=where[0] or None)

    def raise_if_any(self) -> None:
        if self.lines:
            raise CompositionError(self.lines)


# --------------------------------------------------------------------------- helpers


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# An importable module name: dotted identifiers, optionally ending in .py (the manager strips
# it). Anything else ("../../etc", "a/b", "") would reach importlib as a relative or bogus name.
_MODULE_NAME = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


def valid_module_name(name: str) -> bool:
    """True for an importable dotted module name such as ``examples`` or ``pkg.mod``."""
    name = name[:-3] if name.endswith(".py") else name
    return bool(_MODULE_NAME.match(name)) and name.isascii()


def _valid_name(name: str) -> bool:
    """Instance names may not contain '.', '/', ':' or blanks (they break port paths),
    control characters (a newline splits the status line and the logs) or characters outside
    Latin-1 (a CORBA string, and so a naming service entry, carries only Latin-1)."""
    return bool(name) and not any(c in name for c in "./: \t?&,") and not bad_name_char(name)


def bad_name_char(text: str) -> str | None:
    """The first character of ``text`` that a name may not hold: a control character
    (C0, DEL, C1) or one outside Latin-1; None when there is none."""
    for c in text:
        o = ord(c)
        if o < 32 or 127 <= o < 160 or o > 255:
            return c
    return None


NAME_RULE = ("expected an instance name without '.', '/', ':', blanks, control characters "
             "or characters outside Latin-1")


def _prop_str(value: object) -> str:
    if isinstance(value, bool):
        return "YES" if value else "NO"
    return str(value)


def _check_properties(raw: Mapping[str, object], path: str, err: _Errors,
                      where: tuple[str, str] | None = None) -> dict[str, str]:
    """Normalize connector property keys/values and check the ones with known domains."""

    def report(sub: str, message: str, value: object) -> None:
        if where is None:
            err.add(f"{path}{sub}", message, value)
        else:
            err.at(where, sub, message, value)

    props: dict[str, str] = {}
    for key, value in raw.items():
        if not isinstance(key, str) or not key:
            report("", "property names must be non-empty strings", key)
            continue
        name = key.removeprefix("dataport.")
        name = _SHORT_KEYS.get(name, name)
        if value is None or isinstance(value, (list, dict)):
            report(f".{key}", "expected a scalar value", value)
            continue
        text = _prop_str(value).strip()
        if name in _ENUM_PROPS:
            if text.lower() not in _ENUM_PROPS[name]:
                report(f".{key}", f"expected one of {', '.join(_ENUM_PROPS[name])}", value)
                continue
            text = text.lower()
        elif name.endswith("buffer.length"):
            if not text.isdigit() or int(text) <= 0:
                report(f".{key}", "expected a positive integer", value)
                continue
        elif name == "publisher.push_rate":
            try:
                ok = float(text) > 0 and math.isfinite(float(text))
            except ValueError:
                ok = False
            if not ok:
                report(f".{key}", "expected > 0 [Hz]", value)
                continue
        elif name == "publisher.skip_count":
            if not text.isdigit():
                report(f".{key}", "expected an integer >= 0", value)
                continue
        elif name == "call_timeout":
            try:
                ok = CALL_TIMEOUT_MIN <= float(text) <= CALL_TIMEOUT_MAX
            except ValueError:
                ok = False
            if not ok:
                report(f".{key}", f"expected a number of seconds between "
                       f"{CALL_TIMEOUT_MIN:g} and {CALL_TIMEOUT_MAX:g}", value)
                continue
        props[name] = text
    return props


def _split_port(text: object) -> tuple[str, str] | None:
    if not isinstance(text, str):
        return None
    inst, dot, port = text.partition(".")
    if not dot or not inst or not port:
        return None
    return inst, port


def _assign_names(components: list[ComponentDecl], taken: set[str]) -> list[ComponentDecl]:
    """Give unnamed components ``<type><n>`` names (OpenRTM process_unique policy).

    Counting is per type in declaration order and skips every name already taken,
    including explicit names declared later in the file.
    """
    counters: dict[str, int] = {}
    out = []
    for decl in components:
        if decl.name is None:
            n = counters.get(decl.type, 0)
            while f"{decl.type}{n}" in taken:
                n += 1
            counters[decl.type] = n + 1
            decl = replace(decl, name=f"{decl.type}{n}")
            taken.add(decl.name)
        out.append(decl)
    return out


# --------------------------------------------------------------------------- YAML


def load_composition(path: str | Path, default_rate: float = 1000.0, *,
                     allow_empty: bool = False) -> Composition:
    """Read a composition YAML file and validate its structure (see the module docstring).

    The file must be UTF-8 text; a key given twice in a mapping is an error (yamlio)."""
    filename = str(path)
    data = load_yaml_file(path, "composition", CompositionError)
    return parse_composition(data, filename, default_rate=default_rate,
                             allow_empty=allow_empty)


def parse_composition(data: object, filename: str = "<composition>",
                      default_rate: float = 1000.0, *,
                      allow_empty: bool = False) -> Composition:
    """Build a :class:`Composition` from already-loaded YAML data, checking its structure.

    Raises :class:`CompositionError` listing every problem found; a composition without
    components is one, unless ``allow_empty`` (e.g. rtc.conf's precreate adds them).
    """
    err = _Errors(filename)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        err.add("document", "expected a mapping at the top level", data)
        err.raise_if_any()
    for key in data:
        if key not in _TOP_KEYS:
            err.add(str(key), f"unknown key (known: {', '.join(sorted(_TOP_KEYS))})")

    name = data.get("name", Path(filename).stem)
    if not isinstance(name, str) or not name:
        err.add("name", "expected a non-empty string", name)
        name = Path(filename).stem

    externals: list[ExternalDecl] = []
    components = _parse_components(data.get("components"), err, externals)
    connections = _parse_connections(data.get("connections"), err)
    ecs = _parse_ecs(data.get("execution_contexts"), err, default_rate)
    processes = _parse_processes(data.get("processes"), err)
    activate = _parse_activate(data.get("activate", "all"), err)
    simulation = _parse_simulation(data, err)

    if not components and not err.lines and allow_empty is False:
        err.add("components", "no components declared: nothing to run")
    comp = Composition(name, filename, components, connections, ecs,
                       [] if activate is None else activate, processes, simulation,
                       externals)
    comp = _finish(comp, err, default_rate, activate_all=activate is None)
    err.raise_if_any()
    return comp


def _parse_external(item: dict, path: str, err: _Errors) -> ExternalDecl | None:
    for key in item:
        if key not in _EXTERNAL_KEYS:
            err.add(f"{path}.{key}", "an external component is started elsewhere: it takes "
                    f"only {', '.join(_EXTERNAL_KEYS)}")
    fields: dict[str, Any] = {}
    for key in _EXTERNAL_KEYS:
        value = item.get(key)
        if value is not None and (not isinstance(value, str) or not value):
            err.add(f"{path}.{key}", "expected a non-empty string", value)
            value = None
        fields[key] = value
    if item.get("name") is None:
        err.add(f"{path}.name", "an external component needs its instance name")
        return None
    if fields["name"] is None or fields["external"] is None:
        return None
    if not _valid_name(fields["name"]):
        err.add(f"{path}.name", NAME_RULE, fields["name"])
        return None
    return ExternalDecl(fields["name"], fields["external"], fields["ec"],
                        where=(err.filename, path))


def _parse_components(raw: object, err: _Errors,
                      externals: list[ExternalDecl] | None = None) -> list[ComponentDecl]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        err.add("components", "expected a list", raw)
        return []
    decls: list[ComponentDecl] = []
    for i, item in enumerate(raw):
        path = f"components[{i}]"
        if not isinstance(item, dict):
            err.add(path, "expected a mapping", item)
            continue
        if "external" in item and externals is not None:
            ext = _parse_external(item, path, err)
            if ext is not None:
                externals.append(ext)
            continue
        for key in item:
            if key not in _COMPONENT_KEYS:
                err.add(f"{path}.{key}",
                        f"unknown key (known: {', '.join(_COMPONENT_KEYS)})")
        ctype = item.get("type")
        if not isinstance(ctype, str) or not ctype:
            err.add(f"{path}.type", "expected a component type name", ctype)
            continue
        fields: dict[str, Any] = {}
        for key in ("module", "name", "config_set", "process", "ec"):
            value = item.get(key)
            if value is not None and (not isinstance(value, str) or not value):
                err.add(f"{path}.{key}", "expected a non-empty string", value)
                value = None
            fields[key] = value
        if fields["module"] is not None and not valid_module_name(fields["module"]):
            err.add(f"{path}.module", "expected an importable module name (dotted "
                    "identifiers, e.g. examples or my_pkg.comps)", fields["module"])
            fields["module"] = None
        if fields["name"] is not None and not _valid_name(fields["name"]):
            err.add(f"{path}.name", NAME_RULE, fields["name"])
        params = item.get("params", {})
        if params is None:
            params = {}
        if not isinstance(params, dict):
            err.add(f"{path}.params", "expected a mapping", params)
            params = {}
        for key in params:
            if not isinstance(key, str):
                err.add(f"{path}.params", "parameter names must be strings", key)
        decls.append(ComponentDecl(fields["name"], ctype, fields["module"], dict(params),
                                   fields["config_set"], fields["process"], fields["ec"],
                                   where=(err.filename, path)))
    return decls


def _parse_connections(raw: object, err: _Errors) -> list[ConnectionDecl]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        err.add("connections", "expected a list", raw)
        return []
    out: list[ConnectionDecl] = []
    for i, item in enumerate(raw):
        path = f"connections[{i}]"
        if not isinstance(item, dict):
            err.add(path, "expected a mapping", item)
            continue
        ends = {}
        for key in ("from", "to"):
            if _split_port(item.get(key)) is None:
                err.add(f"{path}.{key}", 'expected "instance.port"', item.get(key))
            ends[key] = item.get(key)
        raw_props: dict[str, object] = {}
        nested = item.get("properties", {})
        if nested is None:
            nested = {}
        if not isinstance(nested, dict):
            err.add(f"{path}.properties", "expected a mapping", nested)
            nested = {}
        props = _check_properties(nested, f"{path}.properties", err)
        raw_props = {k: v for k, v in item.items() if k not in ("from", "to", "properties")}
        props.update(_check_properties(raw_props, path, err))
        if all(_split_port(v) for v in ends.values()):
            out.append(ConnectionDecl(ends["from"], ends["to"], props,
                                      where=(err.filename, path)))
    return out


def _parse_ecs(raw: object, err: _Errors, default_rate: float) -> list[ECDecl]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        err.add("execution_contexts", "expected a list", raw)
        return []
    out: list[ECDecl] = []
    seen: set[str] = set()
    for i, item in enumerate(raw):
        path = f"execution_contexts[{i}]"
        if not isinstance(item, dict):
            err.add(path, "expected a mapping", item)
            continue
        for key in item:
            if key not in _EC_KEYS:
                err.add(f"{path}.{key}", f"unknown key (known: {', '.join(_EC_KEYS)})")
        name = item.get("name")
        if not isinstance(name, str) or not name:
            err.add(f"{path}.name", "expected a non-empty string", name)
            continue
        if name in seen:
            err.add(f"{path}.name", "duplicate execution context name", name)
        seen.add(name)
        kind = item.get("kind", "periodic")
        if kind not in EC_KINDS:
            err.add(f"{path}.kind", f"expected one of {', '.join(EC_KINDS)}", kind)
            kind = "periodic"
        rate = item.get("rate", default_rate)
        problem = check_rate(rate)
        if problem:
            err.add(f"{path}.rate", problem, rate)
            rate = default_rate
        members = item.get("members", [])
        if members is None:
            members = []
        if not isinstance(members, list):
            err.add(f"{path}.members", "expected a list of instance names", members)
            members = []
        clean: list[str] = []
        for j, member in enumerate(members):
            if not isinstance(member, str) or not member:
                err.add(f"{path}.members[{j}]", "expected an instance name", member)
            elif member in clean:
                err.add(f"{path}.members[{j}]", "listed twice in this execution context",
                        member)
            else:
                clean.append(member)
        out.append(ECDecl(name, kind, float(rate), clean, where=(err.filename, path)))
    return out


def _parse_processes(raw: object, err: _Errors) -> dict[str, dict]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        err.add("processes", "expected a mapping of process name to settings", raw)
        return {}
    out: dict[str, dict] = {}
    for name, settings in raw.items():
        if settings is None:
            settings = {}
        if not isinstance(name, str) or not isinstance(settings, dict):
            err.add(f"processes.{name}", "expected a mapping of settings", settings)
            continue
        out[name] = dict(settings)
    return out


def _parse_simulation(data: dict, err: _Errors) -> SimulationDecl | None:
    """``simulation: {real_time_factor: F}``; an empty ``simulation:`` means factor 1."""
    if "simulation" not in data:
        return None
    raw = data["simulation"]
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        err.add("simulation", "expected a mapping, e.g. {real_time_factor: 1.0}", raw)
        return None
    for key in raw:
        if key not in _SIMULATION_KEYS:
            err.add(f"simulation.{key}",
                    f"unknown key (known: {', '.join(_SIMULATION_KEYS)})")
    factor = raw.get("real_time_factor", 1.0)
    problem = check_factor(factor)
    if problem:
        err.add("simulation.real_time_factor", problem, factor)
        return None
    return SimulationDecl(float(factor), where=(err.filename, "simulation"))


def _parse_activate(raw: object, err: _Errors) -> list[str] | None:
    """None means "all" (resolved once the instance names are known)."""
    if raw == "all" or raw is None:
        return None
    if raw == "none":
        return []
    if not isinstance(raw, list) or not all(isinstance(x, str) and x for x in raw):
        err.add("activate", 'expected "all", "none" or a list of instance names', raw)
        return []
    return list(dict.fromkeys(raw))


# --------------------------------------------------------------------------- cross-checks


def _finish(comp: Composition, err: _Errors, default_rate: float, *,
            activate_all: bool = False, check_refs: bool = True,
            activate_path: str = "activate") -> Composition:
    """Name components, fill the default EC, resolve ``activate: all``, check references."""
    explicit: dict[str, ComponentDecl] = {}
    for decl in comp.components:
        if decl.name is None:
            continue
        if decl.name in explicit:
            first = explicit[decl.name].where
            err.at(decl.where, ".name",
                   f"duplicate instance name (first declared at {first[0]}: {first[1]})",
                   decl.name)
        else:
            explicit[decl.name] = decl
    named: dict[str, Any] = dict(explicit)
    for ext in comp.externals:
        if ext.name in named:
            first = named[ext.name].where
            err.at(ext.where, ".name",
                   f"duplicate instance name (first declared at {first[0]}: {first[1]})",
                   ext.name)
        else:
            named[ext.name] = ext
    if comp.externals and comp.simulation is None:
        for ext in comp.externals:
            err.at(ext.where, ".external", "an external component is ticked in lockstep "
                   "with simulated time: the composition needs simulation:", ext.rtc)
    components = _assign_names(comp.components, {*explicit, *(e.name for e in
                                                              comp.externals)})
    names = [d.name for d in components]

    ecs = [replace(ec, members=list(ec.members)) for ec in comp.execution_contexts]
    by_name = {ec.name: ec for ec in ecs}
    for decl in [*components, *comp.externals]:
        if decl.ec is None:
            continue
        if decl.ec not in by_name and decl.ec != DEFAULT_EC:
            err.at(decl.where, ".ec", "unknown execution context "
                   f"(declared: {', '.join(by_name) or 'none'})", decl.ec)
        elif decl.ec in by_name and decl.name not in by_name[decl.ec].members:
            by_name[decl.ec].members.append(decl.name)
    assigned = {m for ec in ecs for m in ec.members}
    loose = [d for d in [*components, *comp.externals] if d.name not in assigned]
    if loose:
        if DEFAULT_EC not in by_name:
            default = ECDecl(DEFAULT_EC, "periodic", float(default_rate), [],
                             where=(comp.source_file, "execution_contexts"))
            ecs.append(default)
            by_name[DEFAULT_EC] = default
        by_name[DEFAULT_EC].members.extend(d.name for d in loose)

    if comp.processes:
        for decl in components:
            if decl.process is not None and decl.process not in comp.processes:
                err.at(decl.where, ".process", "unknown process "
                       f"(declared: {', '.join(comp.processes)})", decl.process)
    processes = dict(comp.processes)
    for decl in components:
        if decl.process is not None:
            processes.setdefault(decl.process, {})

    activate = list(names) if activate_all else list(comp.activate)
    result = replace(comp, components=components, execution_contexts=ecs,
                     activate=activate, processes=processes)
    if check_refs:
        _check_refs(result, err, activate_path)
    return result


def _check_refs(comp: Composition, err: _Errors, activate_path: str = "activate") -> None:
    """Report connection endpoints, EC members and activate names that name no instance."""
    known = [d.name for d in comp.components] + [e.name for e in comp.externals]
    listing = ", ".join(known) or "none"
    for conn in comp.connections:
        for sub, end in ((".from", conn.source), (".to", conn.target)):
            inst = end.partition(".")[0]
            if inst not in known:
                err.at(conn.where, sub, f"unknown instance '{inst}' (known: {listing})", end)
    seen: dict[tuple[str, str], ConnectionDecl] = {}
    for conn in comp.connections:
        key = tuple(sorted((conn.source, conn.target)))
        first = seen.get(key)   # type: ignore[arg-type]
        if first is None:
            seen[key] = conn    # type: ignore[index]
            continue
        if parse_yes_no(_prop_str(conn.properties.get("allow_dup_connection", ""))):
            continue
        here = f"{first.where[0]}: {first.where[1]}" if first.where[0] != conn.where[0] \
            else first.where[1]
        err.at(conn.where, "", f"the same connection as {here} (every sample would arrive "
               "twice; set allow_dup_connection: YES on both if that is meant)",
               f"{conn.source} -> {conn.target}")
    for ec in comp.execution_contexts:
        for j, member in enumerate(ec.members):
            if member not in known:
                err.at(ec.where, f".members[{j}]",
                       f"unknown instance (known: {listing})", member)
    for j, name in enumerate(comp.activate):
        if name not in known:
            err.add(f"{activate_path}[{j}]", f"unknown instance (known: {listing})", name,
                    filename=comp.source_file)


# --------------------------------------------------------------------------- semantics


def check_params(composition: Composition,
                 resolve: Callable[[str, str | None], Any]) -> None:
    """Check every component's type and parameters against its class.

    ``resolve(type_name, module)`` returns the component class or raises LookupError
    (a ModuleError when the module itself cannot be imported);
    ``cls.declared_params()`` returns ``{name: Param}`` where ``Param.coerce(value)`` returns
    the typed value or raises ``ValueError("expected > 0")``. Raises one CompositionError
    listing every unknown type, unknown parameter and rejected value.
    """
    err = _Errors(composition.source_file)
    for decl in composition.components:
        try:
            cls = resolve(decl.type, decl.module)
        except LookupError as exc:
            detail = str(exc.args[0]) if exc.args else "not found"
            if isinstance(exc, ModuleError):   # the module is the fault
                err.at(decl.where, ".module", detail)
                continue
            err.at(decl.where, ".type", f"unknown component type ({detail})", decl.type)
            continue
        declared = cls.declared_params()
        for pname, value in decl.params.items():
            param = declared.get(pname)
            if param is None:
                err.at(decl.where, f".params.{pname}", f"unknown parameter of {decl.type} "
                       f"(known: {', '.join(sorted(declared)) or 'none'})")
                continue
            try:
                param.coerce(value)
            except ValueError as exc:
                message = str(exc) or "invalid value"
                if ", got " in message:  # the Param already quoted the value
                    err.at(decl.where, f".params.{pname}", message)
                else:
                    err.at(decl.where, f".params.{pname}", message, value)
    err.raise_if_any()


# --------------------------------------------------------------------------- rtc.conf


def from_rtc_conf(conf: Mapping[str, str], filename: str = "rtc.conf", *,
                  check_refs: bool = True) -> Composition:
    """Build a Composition from rtc.conf's manager.components.* keys (OpenRTM syntax).

    precreate items become components (``instance_name`` names them, ``module`` picks the
    module, ``conf.default.<param>=v`` sets parameters, other keys go to ``properties``);
    each preconnect target becomes one connection, the first port written being the source
    (OpenRTM lets either end come first: the manager orients it by port direction);
    preactivation lists what to activate (OpenRTM activates nothing by default). All
    components share one EC named ``default`` of kind and rate given by
    ``exec_cxt.periodic.type`` and ``exec_cxt.periodic.rate``. Remote endpoints
    (``rtcname://``, ``rtcloc://``) are not supported. ``check_refs=False`` leaves reference
    checks to :func:`merge`, for preconnect items naming components of another source.
    """
    err = _Errors(filename)
    where = lambda key: rtcconf.where(conf, key, filename)  # noqa: E731
    try:
        rate = rtcconf.get_float(conf, "exec_cxt.periodic.rate", 1000.0, gt=0,
                                 filename=filename)
    except ConfigError as exc:
        err.lines.append(str(exc))
        rate = 1000.0
    ec_type = conf.get("exec_cxt.periodic.type", "") or "PeriodicExecutionContext"
    kind = _EC_TYPES.get(ec_type)
    if kind is None:
        err.add("exec_cxt.periodic.type", f"expected one of {', '.join(_EC_TYPES)}",
                ec_type, filename=where("exec_cxt.periodic.type"))
        kind = "periodic"

    components: list[ComponentDecl] = []
    connections: list[ConnectionDecl] = []
    activate: list[str] = []
    key = "manager.components.precreate"
    try:
        specs = rtcconf.parse_precreate(conf, filename)
    except ConfigError as exc:
        err.lines.append(str(exc))
        specs = []
    for i, spec in enumerate(specs):
        props = dict(spec.params)
        module = props.pop("module", None) or None
        if module is not None and not valid_module_name(module):
            err.add(f"{key}[{i}].module", "expected an importable module name (dotted "
                    "identifiers, e.g. examples or my_pkg.comps)", module, filename=where(key))
            module = None
        params = {k[len("conf.default."):]: props.pop(k) for k in list(props)
                  if k.startswith("conf.default.")}
        if spec.instance_name is not None and not _valid_name(spec.instance_name):
            err.add(f"{key}[{i}].instance_name", NAME_RULE, spec.instance_name,
                    filename=where(key))
        components.append(ComponentDecl(spec.instance_name, spec.type_name, module,
                                        params, properties=props,
                                        where=(where(key), f"{key}[{i}]")))
    key = "manager.components.preconnect"
    try:
        links = rtcconf.parse_preconnect(conf, filename)
    except ConfigError as exc:
        err.lines.append(str(exc))
        links = []
    for i, link in enumerate(links):
        path = f"{key}[{i}]"
        if not link.targets:
            err.add(path, "expected at least one port=instance.port target", link.text,
                    filename=where(key))
        for end in (link.source, *link.targets):
            if "://" in end:
                err.add(path, "remote endpoints are not supported", end,
                        filename=where(key))
        props = _check_properties(link.properties, path, err, where=(where(key), path))
        for target in link.targets:
            connections.append(ConnectionDecl(link.source, target, dict(props),
                                              where=(where(key), path)))
    key = "manager.components.preactivation"
    for name in rtcconf.parse_preactivation(conf, filename):
        if "://" in name:
            err.add(key, "remote components are not supported", name, filename=where(key))
        elif name not in activate:
            activate.append(name)

    ecs = [ECDecl(DEFAULT_EC, kind, rate, [], where=(where("exec_cxt.periodic.rate"),
                                                    "exec_cxt.periodic.rate"))]
    comp = Composition(Path(filename).stem, filename, components, connections,
                       ecs if components else [], activate, {})
    comp = _finish(comp, err, rate, check_refs=check_refs,
                   activate_path="manager.components.preactivation")
    err.raise_if_any()
    return comp


def merge(a: Composition, b: Composition) -> Composition:
    """Combine two compositions (e.g. rtc.conf's precreate and a YAML file), ``b`` after ``a``.

    Components and connections are concatenated (an instance name used by both is an
    error); ECs of the same name merge (``b``'s kind and rate win, members appended without
    duplicates); activate lists are united in order; ``b``'s processes settings win.
    References are checked on the result.
    """
    err = _Errors(b.source_file)
    seen = {d.name: d for d in a.components}
    for decl in b.components:
        if decl.name in seen:
            first = seen[decl.name].where
            err.at(decl.where, ".name", f"instance name already used at {first[0]}: "
                   f"{first[1]}", decl.name)
    ecs = {ec.name: replace(ec, members=list(ec.members)) for ec in a.execution_contexts}
    for ec in b.execution_contexts:
        if ec.name in ecs:
            old = ecs[ec.name]
            members = old.members + [m for m in ec.members if m not in old.members]
            ecs[ec.name] = replace(ec, members=members)
        else:
            ecs[ec.name] = replace(ec, members=list(ec.members))
    connections = list(a.connections)
    connections += [c for c in b.connections if c not in connections]
    processes = {**a.processes, **b.processes}
    result = Composition(b.name or a.name, b.source_file, a.components + b.components,
                         connections, list(ecs.values()),
                         list(dict.fromkeys(a.activate + b.activate)), processes,
                         b.simulation if b.simulation is not None else a.simulation,
                         a.externals + b.externals)
    _check_refs(result, err)
    err.raise_if_any()
    return result
