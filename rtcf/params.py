"""Typed parameter declarations and OpenRTM-style configuration sets.

A component declares its parameters at class level::

    class Gen(Component):
        amplitude = Param(float, 1.0, unit="rad", bounds=(0, 10), doc="peak value")

and reads ``self.amplitude`` in its hooks. Values come, lowest first, from the default, the
rtc.conf / component conf file, the composition, and run-time changes (rtconf, ``set_param``).
Run-time changes are validated at once (bad input raises ParamError and changes nothing) and
*staged*: the EC applies them at a cycle boundary (after on_state_update, or at activation),
as OpenRTM does, so a hook never sees a value change in the middle of a cycle.
"""

from __future__ import annotations

import math
import threading
from typing import Any, Callable, Iterable

from .errors import ParamError, show_value
from .validate import parse_yes_no

def _parse_bool(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)) and v in (0, 1):
        return bool(v)
    word = parse_yes_no(v)
    if word is not None:
        return word
    raise ValueError(f"expected a boolean (YES/NO, true/false, 1/0), got {show_value(v)}")


def _parse_scalar(typ: type, v: Any) -> Any:
    out = _parse_scalar_any(typ, v)
    # NaN and infinities pass bounds checks (every comparison with NaN is False) and would
    # flow into the cycle: no parameter takes them.
    if typ is float and not math.isfinite(out):
        raise ValueError(f"expected a finite number, got {show_value(v)}")
    return out


def _parse_scalar_any(typ: type, v: Any) -> Any:
    if typ is bool:
        return _parse_bool(v)
    if typ is str:
        if not isinstance(v, (str, int, float)) or isinstance(v, bool):
            raise ValueError(f"expected a string, got {show_value(v)}")
        return str(v)
    if isinstance(v, bool):
        raise ValueError(f"expected {typ.__name__}, got {show_value(v)}")
    if isinstance(v, str):
        try:
            v = typ(v.strip()) if typ is not int else int(v.strip(), 0)
        except ValueError:
            raise ValueError(f"expected {typ.__name__}, got {show_value(v)}") from None
        return v
    if typ is int:
        if isinstance(v, float) and not v.is_integer():
            raise ValueError(f"expected int, got {show_value(v)}")
        try:
            return int(v)
        except (TypeError, ValueError):
            raise ValueError(f"expected int, got {show_value(v)}") from None
    if typ is float:
        try:
            return float(v)
        except OverflowError:          # an int beyond the float range
            raise ValueError(f"expected a finite number, got {show_value(v)}") from None
        except (TypeError, ValueError):
            raise ValueError(f"expected float, got {show_value(v)}") from None
    raise ValueError(f"unsupported parameter type {typ.__name__}")


class Param:
    """A typed parameter declaration (a class attribute of a Component).

    type: int, float, str, bool or list (then ``elem`` gives the element type; strings are
    comma separated, as OpenRTM vector parameters; ``length`` fixes the number of
    elements). bounds: (lo, hi), inclusive, None for open. choices: allowed values.
    read_only: cannot change once the component is initialised (conf file and composition
    may still set it). status: a value the component publishes (``ParamStore.publish``) so
    that rtconf shows it; no file, composition or tool sets it (implies read_only).
    Runs in: any thread (a declaration; coerce checks a value without state).
    """

    def __init__(self, type: type, default: Any, *, unit: str = "", doc: str = "",
                 bounds: tuple[float | None, float | None] | None = None,
                 choices: Iterable[Any] | None = None, read_only: bool = False,
                 elem: type = float, widget: str = "", length: int | None = None,
                 status: bool = False):
        self.type = type
        self.elem = elem
        self.length = length      # list parameters: the exact number of elements, if fixed
        self.unit = unit
        self.doc = doc
        self.bounds = bounds
        self.choices = tuple(choices) if choices is not None else None
        self.read_only = read_only or status
        self.status = status
        self.widget = widget
        self.name = ""
        self.default = self.coerce(default)

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        if obj is None:
            return self
        return obj._params.values[self.name]

    def __set__(self, obj: Any, value: Any) -> None:
        raise AttributeError(f"parameter {self.name!r} is set with set_param(), "
                             "which stages the change for the next cycle boundary")

    def coerce(self, value: Any) -> Any:
        """Return the typed value or raise ValueError saying what was expected."""
        if self.type is list:
            if isinstance(value, str):
                items = [s for s in (p.strip() for p in value.split(",")) if s]
            elif isinstance(value, (list, tuple)):
                items = list(value)
            else:
                try:
                    items = list(value)
                except TypeError:
                    raise ValueError(f"expected a list of {self.elem.__name__}, "
                                     f"got {show_value(value)}") from None
            out = [_parse_scalar(self.elem, x) for x in items]
            if self.length is not None and len(out) != self.length:
                raise ValueError(f"expected {self.length} values, got {len(out)}: {value!r}")
            for x in out:
                self._check_range(x)
            return out
        out = _parse_scalar(self.type, value)
        self._check_range(out)
        return out

    def _check_range(self, v: Any) -> None:
        if self.choices is not None and v not in self.choices:
            raise ValueError(f"expected one of {', '.join(map(repr, self.choices))}, "
                             f"got {show_value(v)}")
        if self.bounds is not None:
            lo, hi = self.bounds
            if lo is not None and v < lo:
                raise ValueError(f"expected >= {lo}, got {show_value(v)}")
            if hi is not None and v > hi:
                raise ValueError(f"expected <= {hi}, got {show_value(v)}")

    def to_string(self, value: Any) -> str:
        """OpenRTM configuration values travel as strings."""
        if self.type is list:
            return ",".join(_fmt(x) for x in value)
        return _fmt(value)

    def constraint(self) -> str:
        """OpenRTM conf.__constraints__ style text: 0<=x<=150 or (a,b,c)."""
        if self.choices is not None:
            return "(" + ",".join(_fmt(c) for c in self.choices) + ")"
        if self.bounds is not None:
            lo, hi = self.bounds
            return (f"{lo}<=" if lo is not None else "") + "x" + \
                   (f"<={hi}" if hi is not None else "")
        return ""

    def describe(self) -> str:
        unit = f" [{self.unit}]" if self.unit else ""
        return f"{self.name}{unit}: {self.doc} (default {self.to_string(self.default)})"


def _fmt(v: Any) -> str:
    if isinstance(v, bool):
        return "YES" if v else "NO"
    return repr(v) if isinstance(v, float) else str(v)


class ParamStore:
    """The parameters of one component instance: named configuration sets, the active set,
    the typed values hooks read, and the changes staged for the next cycle boundary.

    Sets hold typed values for every declared parameter. Runs in: any thread for the
    set/activate operations (they only stage, under a short lock); ``apply_staged`` runs in
    the EC thread.
    """

    def __init__(self, specs: dict[str, Param], owner: str = ""):
        self.specs = specs
        self.owner = owner
        self.sets: dict[str, dict[str, Any]] = {"default": self._defaults()}
        self.active = "default"
        self.values: dict[str, Any] = self._defaults()
        self._staged: dict[str, Any] = {}
        self._lock = threading.Lock()
        self.initialised = False
        self.listeners: list[Callable[[set[str]], None]] = []
        self._status_prev: dict[str, Any] = {}   # status values before the last publish

    def _fresh_set(self) -> dict[str, Any]:
        """A new set: defaults, with the status values published so far."""
        fresh = self._defaults()
        fresh.update((n, self.values[n]) for n, p in self.specs.items() if p.status)
        return fresh

    def _defaults(self) -> dict[str, Any]:
        """Fresh default values (list defaults copied: instances never share them)."""
        return {n: (list(p.default) if isinstance(p.default, list) else p.default)
                for n, p in self.specs.items()}

    # -- validation ----------------------------------------------------------------------
    def _where(self, name: str) -> str:
        return f"{self.owner}.{name}" if self.owner else name

    def coerce(self, name: str, value: Any, *, runtime: bool) -> Any:
        spec = self.specs.get(name)
        if spec is None:
            known = ", ".join(sorted(self.specs)) or "none"
            raise ParamError(f"{self._where(name)}: unknown parameter (known: {known})")
        try:
            typed = spec.coerce(value)
        except ValueError as e:
            raise ParamError(f"{self._where(name)}: {e}") from None
        if spec.status:
            # Tools send whole sets back (rtconf set): the value they read is fine, even one
            # published while they were reading it; any other value is a mistake.
            if runtime and (typed == self.values[name]
                            or typed == self._status_prev.get(name, typed)):
                return typed
            raise ParamError(f"{self._where(name)}: a status value the component "
                             f"publishes, not a setting; got {show_value(value)}")
        # Tools send whole sets back (rtconf set): an unchanged read-only value is fine.
        if runtime and spec.read_only and self.initialised and typed != self.values[name]:
            raise ParamError(f"{self._where(name)}: read-only parameter cannot change at "
                             f"run time, got {show_value(value)}")
        return typed

    def _coerce_all(self, values: dict[str, Any], runtime: bool) -> dict[str, Any]:
        """Typed values of the settings in ``values`` (status values checked, then left
        out: they are never stored from outside)."""
        typed = {n: self.coerce(n, v, runtime=runtime) for n, v in values.items()}
        return {n: v for n, v in typed.items() if not self.specs[n].status}

    # -- initial sources (before on_initialize; no staging) -------------------------------
    def load(self, values: dict[str, Any], set_name: str | None = None) -> None:
        """Overlay values onto a set (created from defaults if new) and, when it is the
        active set, onto the live values. Used for conf files and the composition."""
        typed = self._coerce_all(values, runtime=False)
        name = set_name or self.active
        target = self.sets.setdefault(name, self._defaults())
        target.update(typed)
        if name == self.active:
            self.values.update(typed)

    def select_initial(self, set_name: str) -> None:
        if set_name not in self.sets:
            raise ParamError(f"{self.owner}: unknown configuration set {set_name!r} "
                             f"(known: {', '.join(sorted(self.sets))})")
        self.active = set_name
        self.values = dict(self.sets[set_name])

    # -- run time (any thread): validate now, apply at the next boundary ----------------------
    def set(self, name: str, value: Any) -> None:
        """Change one value of the active set (staged)."""
        typed = self.coerce(name, value, runtime=True)
        if self.specs[name].status:
            return                           # the value it has: nothing to change
        with self._lock:
            self.sets[self.active][name] = typed
            self._staged[name] = typed

    def update(self, values: dict[str, Any]) -> None:
        """Change several values of the active set at once (all or nothing)."""
        typed = self._coerce_all(values, runtime=True)
        with self._lock:
            self.sets[self.active].update(typed)
            self._staged.update(typed)

    def set_set_values(self, set_name: str, values: dict[str, Any]) -> None:
        """OpenRTM set_configuration_set_values: create or update a set. Changes to the
        active set are staged; other sets only change their stored values."""
        typed = self._coerce_all(values, runtime=True)
        with self._lock:
            target = self.sets.setdefault(set_name, self._fresh_set())
            target.update(typed)
            if set_name == self.active:
                self._staged.update(typed)

    def activate_set(self, set_name: str) -> None:
        with self._lock:
            if set_name not in self.sets:
                raise ParamError(f"{self.owner}: unknown configuration set {set_name!r} "
                                 f"(known: {', '.join(sorted(self.sets))})")
            self.active = set_name
            self._staged.update((n, v) for n, v in self.sets[set_name].items()
                                if not self.specs[n].status)

    def remove_set(self, set_name: str) -> None:
        with self._lock:
            if set_name == "default" or set_name == self.active:
                raise ParamError(f"{self.owner}: cannot remove configuration set "
                                 f"{set_name!r} (default or active)")
            if set_name not in self.sets:
                raise ParamError(f"{self.owner}: unknown configuration set {set_name!r}")
            del self.sets[set_name]

    def publish(self, values: dict[str, Any]) -> None:
        """Set status parameters (``Param(..., status=True)``) in every set and the live
        values, without staging: what rtconf shows next. Runs in: any thread (not meant for
        the EC cycle: it takes the store's lock)."""
        for n in values:
            spec = self.specs.get(n)
            if spec is None or not spec.status:
                raise ParamError(f"{self._where(n)}: not a status parameter")
        typed = {n: self.specs[n].coerce(v) for n, v in values.items()}
        with self._lock:
            for n, v in typed.items():
                self._status_prev[n] = self.values[n]
                for target in self.sets.values():
                    target[n] = v
                self.values[n] = v

    def snapshot(self) -> tuple[str, dict[str, dict[str, Any]]]:
        """(active set name, a copy of every set) for readers in other threads."""
        with self._lock:
            return self.active, {k: dict(v) for k, v in self.sets.items()}

    @property
    def has_staged(self) -> bool:
        return bool(self._staged)

    def apply_staged(self) -> set[str]:
        """Runs in: EC thread. Make staged values live; return the names that changed."""
        if not self._staged:
            return set()
        with self._lock:
            staged, self._staged = self._staged, {}
        changed = {n for n, v in staged.items() if self.values.get(n) != v}
        self.values.update(staged)
        if changed:
            for cb in self.listeners:
                cb(changed)
        return changed
