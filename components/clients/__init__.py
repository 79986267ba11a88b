"""One import path for client code, from any folder: the proxies of the bundled components.

    from rtcf_components.clients import MotionProxy, DCMProxy, BlendingPlannerProxy
    from rtcf_components.clients import wait_interpolation   # SequencePlayer, any motion length
    from rtcf_components.clients.naoqi import ALProxy        # NAOqi: ALProxy("ALMotion", ip, port)
    from rtcf_components.clients import motion               # NAOqi's motion module (FRAME_TORSO, ...)
    from rtcf_components.clients.dsr import *                # Doosan DRL / DSR_ROBOT2 calls

The proxies live with their components (``rtcf_components.<name>.proxy``); this package only
names them in one place and imports each on first use, so a script that needs the DCM's proxy
does not pay for the kinematics. It is not a component: the manager finds nothing to create
here. Runs in: any thread (import time only).
"""

from __future__ import annotations

import importlib
from typing import Any

# name -> module that defines it, relative to rtcf_components (imported on first use)
_EXPORTS = {
    "MotionProxy": "kinematics.proxy",
    "MotionError": "kinematics.proxy",
    "DCMProxy": "dcm.proxy",
    "DCMError": "dcm.proxy",
    "BlendingPlannerProxy": "blending_planner.proxy",
    "ControllerManagerProxy": "controller_manager.proxy",
    "wait_interpolation": "sequence_player.proxy",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'rtcf_components.clients' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"rtcf_components.{module}"), name)
    globals()[name] = value
    return value
