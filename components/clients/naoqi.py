"""NAOqi's ``ALProxy`` for scripts written for NAO: ``from naoqi import ALProxy`` becomes
``from rtcf_components.clients.naoqi import ALProxy`` and the rest of the script stays as it is.

``ALProxy(module, ip, port)`` finds the component standing in for the NAOqi module through the
naming service at ``ip:port`` (where NAOqi has its broker):

| NAOqi module | proxy | component instance (environment variable to change it) |
|---|---|---|
| ALMotion | ALMotionProxy: the robot-model calls (MotionProxy) and the walk (moveTo, move, ...) | Kinematics0 (RTCF_ALMOTION) and NAOqi0 (RTCF_NAOQI) |
| ALRobotPosture | ALRobotPostureProxy | NAOqi0 (RTCF_NAOQI) |
| ALMemory | ALMemoryProxy | NAOqi0 (RTCF_NAOQI) |
| DCM | DCMProxy | DCM0 (RTCF_DCM) |

The NAOqi component runs in compositions/nao_walk.yaml; in a system without it the model
calls of ALMotion work and its walk calls raise RuntimeError saying so.

Any other module name raises RuntimeError, as NAOqi does for a module it cannot find.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

_MODULES = {"ALMotion": ("naoqi.proxy", "ALMotionProxy", "RTCF_ALMOTION", "Kinematics0"),
            "ALRobotPosture": ("naoqi.proxy", "ALRobotPostureProxy", "RTCF_NAOQI", "NAOqi0"),
            "ALMemory": ("naoqi.proxy", "ALMemoryProxy", "RTCF_NAOQI", "NAOqi0"),
            "DCM": ("dcm.proxy", "DCMProxy", "RTCF_DCM", "DCM0")}


def ALProxy(module: str, ip: str = "localhost", port: int = 2809) -> Any:
    """The proxy of the component standing in for NAOqi ``module`` (see the table above)."""
    got = _MODULES.get(module)
    if got is None:
        raise RuntimeError(f"ALProxy: no module {module!r} in this system (available: "
                           f"{', '.join(_MODULES)})")
    path, cls, env, default = got
    proxy_cls = getattr(importlib.import_module(f"rtcf_components.{path}"), cls)
    extra = {"naoqi": os.environ.get("RTCF_NAOQI", "NAOqi0")} if module == "ALMotion" else {}
    return proxy_cls(os.environ.get(env, default), nameserver=f"{ip}:{int(port)}", **extra)
