"""The module loader: component modules and packages by name, and their component types.

A bundled component (``kinematics``, ``dcm.mujoco_body``, or spelled
``rtcf_components.kinematics``) is imported from the package ``rtcf_components`` (the
checkout's components/ folder); any other module from ``manager.modules.load_path``, the
user's folders (OpenRTM's load path). A package keeps its RT component shell in
``<package>.component``. A module that cannot be imported is a ModuleError (reported at the
composition's ``.module``), a type it does not define a LookupError (at ``.type``); each
names the module, and nothing has started.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.machinery
import inspect
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Mapping

from . import rtcconf
from .component import Component
from .composition import valid_module_name
from .errors import ModuleError, show_value
from .paths import user_path

# the bundled component packages: the checkout's components/ folder, imported as the package
# rtcf_components (rtcf_components.py beside rtcf/); the framework only loads them by name
BUNDLED_PACKAGE = "rtcf_components"
BUNDLED_COMPONENTS = Path(__file__).resolve().parents[1] / "components"


class ModuleLoader:
    """Component modules and the component types they define, for one manager. Not
    thread-safe: the manager calls it from the main thread."""

    def __init__(self, conf: Mapping[str, str]):
        self.conf = conf
        self.modules: dict[str, ModuleType] = {}
        self.types: dict[str, type[Component]] = {}

    def load_path(self) -> list[Path]:
        """manager.modules.load_path, the user's component folders: entries given with -o are
        read against the directory the command was typed in, those of an rtc.conf against
        that file's folder. The bundled components are not among them: they are the package
        ``rtcf_components`` (see :meth:`load_module`); an entry naming their folder (older
        rtc.conf files list ``./components``) is left out. Runs in: the main thread."""
        origin = self.conf.origin.get("manager.modules.load_path", ("", None))[0] \
            if isinstance(self.conf, rtcconf.Conf) else ""
        base = user_path(".") if origin == "-o" else Path(origin).parent
        out = []
        for item in rtcconf.get_list(self.conf, "manager.modules.load_path"):
            p = Path(item).expanduser()
            if not p.is_absolute() and (base / p).is_dir():
                p = base / p
            p = p.resolve()
            if p != BUNDLED_COMPONENTS and p not in out:
                out.append(p)
        return out

    def _bundled_name(self, name: str) -> str | None:
        """``rtcf_components.<name>`` when ``name`` (or its first part) is a bundled component
        package, else None. A module of the same first name in the user's load path is
        refused rather than either one hiding the other."""
        first = name.split(".")[0]
        if first == BUNDLED_PACKAGE:
            return name
        if not (BUNDLED_COMPONENTS / first / "__init__.py").is_file():
            return None
        user = [str(p) for p in self.load_path()]
        spec = importlib.machinery.PathFinder.find_spec(first, user) if user else None
        if spec is not None:
            raise ModuleError(
                f"module {name!r} names both the bundled {BUNDLED_PACKAGE}.{first} and "
                f"{spec.origin or (spec.submodule_search_locations or [first])[0]} in the "
                f"load path: write {BUNDLED_PACKAGE}.{name} for the bundled one, or rename "
                "yours")
        return f"{BUNDLED_PACKAGE}.{name}"

    def load_module(self, name: str) -> ModuleType:
        """Import a component module or package (see the module doc) and learn the component
        types it defines. Runs in: the main thread."""
        if name in self.modules:
            return self.modules[name]
        if not isinstance(name, str) or not valid_module_name(name):
            raise ModuleError(f"{name!r} is not an importable module name (dotted "
                                "identifiers, e.g. examples or my_pkg.comps)")
        requested = name
        name = name[:-3] if name.endswith(".py") else name
        bundled = self._bundled_name(name)
        if bundled is None:
            for p in reversed(self.load_path()):
                if str(p) not in sys.path:
                    sys.path.insert(0, str(p))
        target = bundled or name
        try:
            module = importlib.import_module(target)
        except ImportError as e:
            parts = target.split(".")
            if not isinstance(e, ModuleNotFoundError) or e.name not in {
                    ".".join(parts[:i + 1]) for i in range(len(parts))}:
                raise _import_failure(name, e) from None   # found, but its imports fail
            where = ", ".join(map(str, self.load_path())) or "empty"
            raise ModuleError(f"cannot import module {name!r}: not a bundled component "
                                f"({', '.join(bundled_names())}) and not in the load path "
                                f"({where}): {e}") from e
        except (Exception, SystemExit) as e:
            # the module's own code failed (raised, a SyntaxError, sys.exit at import): one
            # line naming the module, its file and the error, and nothing started
            raise _import_failure(name, e) from None
        name = target
        if hasattr(module, "__path__"):
            # a component package keeps its RTC shell in <package>.component
            try:
                module = importlib.import_module(f"{name}.component")
            except ModuleNotFoundError as e:
                if e.name != f"{name}.component":
                    raise _import_failure(f"{name}.component", e) from None
            except (Exception, SystemExit) as e:
                raise _import_failure(f"{name}.component", e) from None
        self.modules[requested] = module
        for cls in component_classes(module):
            self.types.setdefault(cls.type_name, cls)
        return module

    def register(self, cls: type[Component]) -> None:
        """Make a component class known without a module (tests, embedding). Runs in: the
        main thread."""
        self.types[cls.type_name] = cls

    def resolve(self, type_name: str, module: str | None = None) -> type[Component]:
        """The component class of ``type_name``: defined by ``module`` when one is named,
        else by any module loaded so far. Runs in: the main thread."""
        if module:
            defined = []
            for cls in component_classes(self.load_module(module)):
                if cls.type_name == type_name:
                    return cls
                defined.append(cls.type_name)
            raise LookupError(f"module {module!r} defines no component type {type_name!r};"
                              f" it defines {_known_types(type_name, defined)}")
        if type_name in self.types:
            return self.types[type_name]
        raise LookupError(f"no module named, and the loaded ones define "
                          f"{_known_types(type_name, self.types)}")


def component_classes(module: ModuleType) -> list[type[Component]]:
    """The Component subclasses a module defines or imports, in name order."""
    return [obj for _, obj in inspect.getmembers(module, inspect.isclass)
            if issubclass(obj, Component) and obj is not Component]


def bundled_names() -> list[str]:
    """The short names of the bundled component packages (``dcm``, ``kinematics``, ...)."""
    if not BUNDLED_COMPONENTS.is_dir():
        return []
    return sorted(p.name for p in BUNDLED_COMPONENTS.iterdir()
                  if (p / "__init__.py").is_file() and p.name.isidentifier())


def _import_failure(name: str, e: BaseException) -> ModuleError:
    """The ModuleError for a module whose import failed: where and why."""
    if isinstance(e, SyntaxError):
        where = f"{e.filename}:{e.lineno}" if e.filename else "?"
        detail = f"SyntaxError: {e.msg}"
    else:
        where = "?"
        tb = e.__traceback__
        while tb is not None:          # the deepest frame: where the module's code failed
            where = f"{tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}"
            tb = tb.tb_next
        if isinstance(e, SystemExit):
            detail = f"it called sys.exit({e.code!r}) while being imported"
        else:
            detail = f"{type(e).__name__}: {show_value(str(e)) if len(str(e)) > 80 else e}"
    return ModuleError(f"importing module {name!r} failed ({where}): {detail}")


def _known_types(type_name: str, known: Any) -> str:
    """"A, B; did you mean 'A'?" for an unknown type error."""
    names = sorted(known)
    close = difflib.get_close_matches(type_name, names, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"{', '.join(names) or 'no component types'}{hint}"
