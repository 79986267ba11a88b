"""MotionProxy: ALMotion's robot-model calls over CORBA, with NAOqi's plain-list results.

The seed's examples run unchanged once the proxy is obtained::

    proxy = MotionProxy("Kinematics0")      # instead of ALProxy("ALMotion", ip, 9559)
    print("Robot Position", proxy.getRobotPosition(False))
    result = proxy.getTransform("RArm", 0, True)       # 16 floats, row-major, metres
    result = proxy.getPosition("CameraTop", 1, True)   # [x, y, z, wx, wy, wz]

Errors (unknown names, spaces, malformed arguments) raise NAO::KinematicsError with the
component's reason, as ALMotion raises its exceptions.
"""

from __future__ import annotations

import math
from typing import Any

from rtcf.corba.idl import stub_module

NAO = stub_module("NAO")
FRAME_TORSO, FRAME_WORLD, FRAME_ROBOT = 0, 1, 2
AXIS_MASK_VEL, AXIS_MASK_ALL = 7, 63


def _check(cond: bool, msg: str) -> None:
    if not cond:
        raise NAO.KinematicsError(msg)


def _name(x: Any, op: str) -> str:
    _check(isinstance(x, str) and x.isascii(), f"{op}: name: expected an ASCII string, got {x!r}")
    return x


def _space(x: Any, op: str) -> int:
    _check(isinstance(x, int) and not isinstance(x, bool) and x in (0, 1, 2),
           f"{op}: space: expected 0 (FRAME_TORSO), 1 (FRAME_WORLD) or 2 (FRAME_ROBOT), got {x!r}")
    return x


def _flag(x: Any, op: str) -> bool:
    _check(isinstance(x, (bool, int)) and x in (0, 1), f"{op}: expected True or False, got {x!r}")
    return bool(x)


class MotionProxy:
    """NAOqi-style ALMotion model client. ``service`` may be given directly (an object
    reference or an in-process servant); otherwise the Kinematics component ``name`` is found
    in the naming service ``nameserver``."""

    FRAME_TORSO, FRAME_WORLD, FRAME_ROBOT = FRAME_TORSO, FRAME_WORLD, FRAME_ROBOT

    def __init__(self, name: str = "Kinematics0", nameserver: str = "localhost:2809",
                 service: Any = None):
        if service is None:
            from rtcf.corba.client import get_service
            service = get_service(name, "KinematicsService", stub=NAO.KinematicsService,
                                  nameserver=nameserver)
        self.service = service

    def getTransform(self, name: str, space: int, useSensorValues: bool) -> list[float]:
        op = "getTransform"
        return list(self.service.getTransform(_name(name, op), _space(space, op),
                                              _flag(useSensorValues, op)))

    def getPosition(self, name: str, space: int, useSensorValues: bool) -> list[float]:
        op = "getPosition"
        return list(self.service.getPosition(_name(name, op), _space(space, op),
                                             _flag(useSensorValues, op)))

    def getRobotPosition(self, useSensors: bool) -> list[float]:
        return list(self.service.getRobotPosition(_flag(useSensors, "getRobotPosition")))

    def getBodyNames(self, name: str) -> list[str]:
        return list(self.service.getBodyNames(_name(name, "getBodyNames")))

    def getJointNames(self, name: str) -> list[str]:
        return list(self.service.getJointNames(_name(name, "getJointNames")))

    def getLimits(self, name: str) -> list[list[float]]:
        return [list(r) for r in self.service.getLimits(_name(name, "getLimits"))]

    def solveIK(self, chainName: str, space: int, target6D: Any,
                axisMask: int = AXIS_MASK_ALL) -> dict:
        """{"success", "angles", "positionError", "orientationError", "iterations",
        "reason"}; success False (with the reason) when no solution exists."""
        op = "solveIK"
        try:
            target = [float(v) for v in target6D]
        except (TypeError, ValueError):
            raise NAO.KinematicsError(f"{op}: target6D: expected 6 numbers, got {target6D!r}")
        _check(len(target) == 6 and all(math.isfinite(v) for v in target),
               f"{op}: target6D: expected 6 finite numbers, got {target6D!r}")
        _check(isinstance(axisMask, int) and not isinstance(axisMask, bool)
               and 0 < axisMask < 64, f"{op}: axisMask: expected 1..63, got {axisMask!r}")
        r = self.service.solveIK(_name(chainName, op), _space(space, op), target, axisMask)
        return {"success": r.success, "angles": list(r.angles),
                "positionError": r.positionError, "orientationError": r.orientationError,
                "iterations": r.iterations, "reason": r.reason}
