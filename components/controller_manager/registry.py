"""Finding controller classes by type name: a registry, or a dotted name on the load path.

``loadController(name, type)`` takes either a registered type name (``register_controller``,
the class's ``type_name``) or ``module.path.ClassName`` / ``module.path:ClassName`` importable
from sys.path plus the given load path (PR2 used pluginlib class names the same way).

Modules imported here are watched: when a controller is loaded from a module whose file
changed since it was imported, the module is imported afresh, as a new module object (so
unload, edit, load runs the edited code, and a class removed from the file no longer loads;
controllers still loaded keep the class they were made from), and ``reload_modules``
re-imports all of them (PR2's reload-libraries).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import inspect
import os
import sys
import threading
from pathlib import Path
from types import ModuleType
from typing import Iterable

from .controller import Controller, ControllerError

__all__ = ["register_controller", "registered_types", "resolve_controller",
           "register_module", "import_controllers", "reload_modules", "watched_modules"]

_REGISTRY: dict[str, type[Controller]] = {}
_LOCK = threading.Lock()
_STAMPS: dict[str, tuple[int, int] | None] = {}   # module -> (mtime_ns, size) at import


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


def _stamp(module: ModuleType) -> tuple[int, int] | None:
    path = getattr(module, "__file__", None)
    try:
        st = os.stat(path) if path else None
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size) if st is not None else None


def _reimport(module: ModuleType) -> ModuleType:
    """Import ``module`` afresh from its source, as a new module object: a class removed
    from the file is gone (importlib.reload would keep the old one in the module), and the
    types registered from the old module are replaced by those of the new one. Its cached
    bytecode is dropped first (an edit within the same second and of the same size would
    otherwise reuse it). When the new code fails to import, the old module stays."""
    name = module.__name__
    cached = getattr(module, "__cached__", None)
    if cached:
        try:
            os.remove(cached)
        except OSError:
            pass
    importlib.invalidate_caches()
    sys.modules.pop(name, None)
    try:
        fresh = importlib.import_module(name)
    except Exception as e:
        sys.modules[name] = module
        raise ControllerError(f"re-importing controller module {name!r} failed: "
                              f"{type(e).__name__}: {e}") from e
    with _LOCK:
        gone = [t for t, cls in _REGISTRY.items() if cls.__module__ == name]
        for t in gone:
            del _REGISTRY[t]
    if gone:
        register_module(fresh)
    _STAMPS[name] = _stamp(fresh)
    return fresh


def _moved(module: ModuleType) -> bool:
    """True when importing a top-level module's name now would find another file."""
    if "." in module.__name__ or not getattr(module, "__file__", None):
        return False
    importlib.invalidate_caches()
    spec = importlib.machinery.PathFinder.find_spec(module.__name__, sys.path)
    origin = getattr(spec, "origin", None)
    return origin is not None and os.path.realpath(origin) != \
        os.path.realpath(module.__file__)


def _import(module_name: str, load_path: Iterable[str | Path]) -> ModuleType:
    for p in reversed([str(Path(x).resolve()) for x in load_path]):
        if p not in sys.path:
            sys.path.insert(0, p)
    module = sys.modules.get(module_name)
    if module is not None and module_name in _STAMPS:
        if _moved(module):                       # another folder now provides that name
            del sys.modules[module_name]
            del _STAMPS[module_name]
        elif _stamp(module) != _STAMPS[module_name]:
            return _reimport(module)             # edited since: the new code
        else:
            return module
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise ControllerError(f"cannot import controller module {module_name!r}: {e}") from e
    except Exception as e:                       # a broken module must not take us down
        raise ControllerError(f"importing controller module {module_name!r} raised "
                              f"{type(e).__name__}: {e}") from e
    if module_name not in _STAMPS:
        _STAMPS[module_name] = _stamp(module)
    return module


def watched_modules() -> list[str]:
    """The controller modules imported through this registry (reloadable)."""
    return sorted(_STAMPS)


def reload_modules() -> list[str]:
    """Re-import every watched module and register its controllers again; returns their
    names. Controllers already made keep their old class. Runs in: a non-real-time thread."""
    done = []
    for name in watched_modules():
        module = sys.modules.get(name)
        if module is None:
            continue
        _reimport(module)
        done.append(name)
    return done


def resolve_controller(type_name: str, load_path: Iterable[str | Path] = ()
                       ) -> type[Controller]:
    """The class for ``type_name``. Runs in: non-real-time threads."""
    if not isinstance(type_name, str) or not type_name.strip():
        raise ControllerError(f"controller type: expected a non-empty name, got "
                              f"{type_name!r}")
    with _LOCK:
        cls = _REGISTRY.get(type_name)
    if cls is not None:
        mod = sys.modules.get(cls.__module__)
        if mod is not None and cls.__module__ in _STAMPS and \
                _stamp(mod) != _STAMPS[cls.__module__]:
            _reimport(mod)                           # its file changed: the new code
            with _LOCK:
                cls = _REGISTRY.get(type_name)
            if cls is None:
                raise ControllerError(f"unknown controller type {type_name!r}: module "
                                      f"{mod.__name__!r} was edited and defines it no more "
                                      f"(registered: {', '.join(registered_types()) or 'none'})")
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
