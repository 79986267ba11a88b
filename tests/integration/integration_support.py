"""The helpers of tests/integration/conftest.py for test modules that import them by name.

``from conftest import wait_until`` is ambiguous: tests/framework has a conftest.py too, and
which one Python finds under the name ``conftest`` depends on which test folders pytest
collected first (a test module of this folder failed to import when run together with
tests/framework). This module finds the conftest.py beside it, the same module object
pytest loaded (so its classes and state are shared), and loads it only if pytest has not.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_PATH = Path(__file__).with_name("conftest.py").resolve()


def _conftest():
    for mod in list(sys.modules.values()):
        f = getattr(mod, "__file__", None)
        if f and Path(f).resolve() == _PATH:
            return mod
    spec = importlib.util.spec_from_file_location("integration_conftest", _PATH)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


_conf = _conftest()


def __getattr__(name: str):
    return getattr(_conf, name)
