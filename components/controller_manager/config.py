"""The controller config file (``controller_config``): what to load and start, checked whole.

Pure (yaml, no rtcf / omniORB import). The file, as PR2 kept controllers on the parameter
server and ros2_control in the controller manager's parameters::

    controllers:                       # name -> type and params
      head_pd: {type: JointPositionController, joints: [HeadYaw, HeadPitch], kp: 1.0}
      hold: {type: JointPositionController, joints: [HeadYaw]}
      sway: {type: my.Sway, fallback_controllers: [hold]}
    load: [head_pd, hold]              # loaded when the manager is created, in this order
    start: [head_pd]                   # started at each activation (each must be loaded)

:func:`load_config` refuses, naming the file, the place and the value: a malformed file, a
name in ``load`` / ``start`` that is not a controller of the file, a ``start`` name that is
not loaded, and a ``fallback_controllers`` entry that is not a controller of the file. What
needs the controllers themselves (two in ``start`` claiming one interface, a chain that
``start`` breaks, a fallback that could not start) is checked by the component once they
are loaded, before anything starts (ControllerManager.on_initialize).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from .controller import ControllerError

__all__ = ["load_config", "EMPTY"]

EMPTY: dict[str, Any] = {"controllers": {}, "load": [], "start": []}


def load_config(path: Path) -> dict[str, Any]:
    """Read and check a controller config file (see the module doc); ControllerError names
    the file and what is wrong. Runs in: the creating thread."""
    try:
        doc = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as e:
        raise ControllerError(f"{path}: not valid YAML: {e}") from None
    if not isinstance(doc, dict) or set(doc) - {"controllers", "load", "start"}:
        raise ControllerError(f"{path}: expected a mapping with keys controllers, load, "
                              f"start; got {sorted(doc) if isinstance(doc, dict) else doc!r}")
    ctrls = doc.get("controllers") or {}
    if not isinstance(ctrls, dict):
        raise ControllerError(f"{path}: controllers: expected a mapping, got {ctrls!r}")
    for name, entry in ctrls.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("type"), str):
            raise ControllerError(f"{path}: controllers.{name}: expected a mapping with a "
                                  f"'type', got {entry!r}")
        fallbacks = entry.get("fallback_controllers", [])
        if isinstance(fallbacks, list):     # its form is checked at load, with the rest
            for fb in fallbacks:
                if isinstance(fb, str) and fb not in ctrls:
                    raise ControllerError(
                        f"{path}: controllers.{name}.fallback_controllers: {fb!r} is not a "
                        f"controller of this file (controllers: {', '.join(ctrls)})")
    for key in ("load", "start"):
        names = doc.get(key) or []
        if not isinstance(names, list) or any(n not in ctrls for n in names):
            raise ControllerError(f"{path}: {key}: expected a list of names from "
                                  f"controllers, got {names!r}")
    load, start = doc.get("load") or [], doc.get("start") or []
    for n in start:
        if n not in load:
            raise ControllerError(f"{path}: start: {n!r} is not in load (only loaded "
                                  f"controllers start at activation; load is {load})")
    return {"controllers": ctrls, "load": load, "start": start}
