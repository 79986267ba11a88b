"""One import path for client code, from any folder: the proxies of the bundled components.

    from rtcf.clients import MotionProxy, DCMProxy, BlendingPlannerProxy
    from rtcf.clients import wait_interpolation     # SequencePlayer, any motion length
    from rtcf.clients.naoqi import ALProxy          # NAOqi scripts: ALProxy("ALMotion", ip, port)
    from rtcf.clients import motion                 # NAOqi's motion module (FRAME_TORSO, ...)
    from rtcf.clients.dsr import *                  # Doosan DRL / DSR_ROBOT2 calls (moveb, ...)

The proxies live with their components (components/<name>/proxy.py), which are not an
installed package: importing this package appends the checkout's components/ folder to
sys.path (after everything else, as the manager does with manager.modules.load_path), so the
old form ``from kinematics.proxy import MotionProxy`` keeps working too and names the same
classes. Runs in: any thread (import time only).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

COMPONENTS = Path(__file__).resolve().parents[2] / "components"

# name -> module that defines it (imported on first use)
_EXPORTS = {
    "MotionProxy": "kinematics.proxy",
    "MotionError": "kinematics.proxy",
    "DCMProxy": "dcm.proxy",
    "DCMError": "dcm.proxy",
    "BlendingPlannerProxy": "blending_planner.proxy",
    "ControllerManagerProxy": "controller_manager.proxy",
    "wait_interpolation": "sequence_player.proxy",
}

__all__ = sorted(_EXPORTS) + ["COMPONENTS", "components_on_path"]


def components_on_path() -> None:
    """Make the bundled components importable (their folder appended to sys.path once).
    Raises ImportError, saying where it looked, when the folder is missing."""
    if not (COMPONENTS / "kinematics" / "__init__.py").is_file():
        raise ImportError(f"rtcf.clients: the components folder {COMPONENTS} is missing: "
                          "rtcf must be installed from its checkout (scripts/run or "
                          "scripts/test do that)")
    if str(COMPONENTS) not in sys.path:
        sys.path.append(str(COMPONENTS))


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'rtcf.clients' has no attribute {name!r}")
    components_on_path()
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
