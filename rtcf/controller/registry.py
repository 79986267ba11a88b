"""Finding controller classes by type name: a registry, or a dotted name on the load path.

``loadController(name, type)`` takes either a registered type name (``register_controller``,
the class's ``type_name``) or ``module.path.ClassName`` / ``module.path:ClassName`` importable
from sys.path plus the given load path (PR2 used pluginlib class names the same way).
"""

from __future__ import annotations

import importlib
import inspect
import sys
import threading
from pathlib import Path
from types import ModuleType
from typing import Iterable

from .base import Controller, ControllerError

__all__ = ["register_controller", "registered_types", "resolve_controller",
           "register_module", "import_controllers"]

_REGISTRY: dict[str, type[Controller]] = {}
_LOCK = threading.Lock()


def register_controller(cls: type[Controller], name: str | None = None) -> type[Controller]:
    """Make ``cls`` loadable by ``name`` (default: its type_name). Usable as a decorator."""
    if not (isinstance(cls, type) and issubclass(cls, Controller)):
        raise ControllerError(f"register_controller: expected a Controller subclass, got "
                              f"{cls!r}")
    with _LOCK:
        _REGISTRY[name or cls.type_name] = cls
    return cls


def registered_types() -> list[str]:
    with _LOCK:
        return sorted(_REGISTRY)


def register_module(module: ModuleType) -> list[str]:
    """Register every Controller subclass defined in ``module``; returns their type names."""
    names = []
    for _, obj in inspect.getmembers(module, inspect.isclass):
        if issubclass(obj, Controller) and obj is not Controller \
                and obj.__module__ == module.__name__:
            register_controller(obj)
            names.append(obj.type_name)
    return names


def _import(module_name: str, load_path: Iterable[str | Path]) -> ModuleType:
    for p in reversed([str(Path(x).resolve()) for x in load_path]):
        if p not in sys.path:
            sys.path.insert(0, p)
    try:
        return importlib.import_module(module_name)
    except ImportError as e:
        raise ControllerError(f"cannot import controller module {module_name!r}: {e}") from e


def resolve_controller(type_name: str, load_path: Iterable[str | Path] = ()
                       ) -> type[Controller]:
    """The class for ``type_name``. Runs in: non-real-time threads."""
    if not isinstance(type_name, str) or not type_name.strip():
        raise ControllerError(f"controller type: expected a non-empty name, got "
                              f"{type_name!r}")
    with _LOCK:
        cls = _REGISTRY.get(type_name)
    if cls is not None:
        return cls
    sep = ":" if ":" in type_name else "."
    if sep not in type_name:
        raise ControllerError(f"unknown controller type {type_name!r} (registered: "
                              f"{', '.join(registered_types()) or 'none'}; or give "
                              f"module.ClassName)")
    module_name, _, cls_name = type_name.rpartition(sep)
    module = _import(module_name, load_path)
    cls = getattr(module, cls_name, None)
    if not (isinstance(cls, type) and issubclass(cls, Controller)):
        raise ControllerError(f"controller type {type_name!r}: module {module_name!r} has no "
                              f"Controller subclass {cls_name!r}")
    return cls


def import_controllers(module_name: str, load_path: Iterable[str | Path] = ()) -> list[str]:
    """Import ``module_name`` from sys.path plus ``load_path`` and register its controllers;
    returns their type names. Runs in: a non-real-time thread."""
    return register_module(_import(module_name, load_path))
