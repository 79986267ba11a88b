"""MotionProxy: ALMotion's robot-model calls over CORBA, with NAOqi's plain-list results.

The robot-model examples of NAOqi's ALMotion documentation run unchanged once the proxy is
obtained::

    proxy = MotionProxy("Kinematics0")      # instead of ALProxy("ALMotion", ip, 9559)
    print("Robot Position", proxy.getRobotPosition(False))
    result = proxy.getTransform("RArm", 0, True)       # 16 floats, row-major, metres
    result = proxy.getPosition("CameraTop", 1, True)   # [x, y, z, wx, wy, wz]

Errors (unknown names, spaces, malformed arguments) raise ``MotionError`` with the
component's reason: a RuntimeError, as ALMotion's exceptions are in NAOqi's Python SDK (so
``except RuntimeError`` catches it), and a NAO::KinematicsError. Numbers may be any Python
or numpy number (numpy ints, bools and floats), as NAOqi converts them.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Callable

import numpy as np

from rtcf.corba.idl import stub_module

NAO = stub_module("NAO")
FRAME_TORSO, FRAME_WORLD, FRAME_ROBOT = 0, 1, 2
AXIS_MASK_VEL, AXIS_MASK_ALL = 7, 63


class MotionError(NAO.KinematicsError, RuntimeError):
    """A call ALMotion would refuse: a RuntimeError with the reason (``.reason``)."""

    def __str__(self) -> str:
        return self.reason


def _check(cond: bool, msg: str) -> None:
    if not cond:
        raise MotionError(msg)


def _call(fn: Callable, *args: Any) -> Any:
    """fn(*args), the component's KinematicsError raised as a MotionError."""
    try:
        return fn(*args)
    except NAO.KinematicsError as e:
        if isinstance(e, MotionError):
            raise
        raise MotionError(e.reason) from None


def _integer(x: Any) -> int | None:
    """x as an int when it is an integral number (int, numpy int, 2.0), else None."""
    if isinstance(x, numbers.Integral) and not isinstance(x, bool):
        return int(x)
    if isinstance(x, numbers.Real) and not isinstance(x, bool) and float(x).is_integer():
        return int(x)
    return None


def _name(x: Any, op: str) -> str:
    _check(isinstance(x, str) and x.isascii(), f"{op}: name: expected an ASCII string, got {x!r}")
    return str(x)


def _space(x: Any, op: str) -> int:
    v = _integer(x)
    _check(v in (0, 1, 2),
           f"{op}: space: expected 0 (FRAME_TORSO), 1 (FRAME_WORLD) or 2 (FRAME_ROBOT), got {x!r}")
    return v


def _flag(x: Any, op: str) -> bool:
    """A boolean as NAOqi takes it: bool, numpy bool or any number (non-zero is True)."""
    _check(isinstance(x, (numbers.Number, np.bool_)),
           f"{op}: expected True or False (or a number), got {x!r}")
    v = complex(x)
    _check(math.isfinite(v.real) and v.imag == 0,
           f"{op}: expected True or False (or a number), got {x!r}")
    return bool(v.real)


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
        return list(_call(self.service.getTransform, _name(name, op), _space(space, op),
                          _flag(useSensorValues, op)))

    def getPosition(self, name: str, space: int, useSensorValues: bool) -> list[float]:
        op = "getPosition"
        return list(_call(self.service.getPosition, _name(name, op), _space(space, op),
                          _flag(useSensorValues, op)))

    def getRobotPosition(self, useSensors: bool) -> list[float]:
        return list(_call(self.service.getRobotPosition,
                          _flag(useSensors, "getRobotPosition")))

    def getBodyNames(self, name: str) -> list[str]:
        return list(_call(self.service.getBodyNames, _name(name, "getBodyNames")))

    def getJointNames(self, name: str) -> list[str]:
        return list(_call(self.service.getJointNames, _name(name, "getJointNames")))

    def getSensorNames(self) -> list[str]:
        """The model's sensors with a frame (NAO: CameraTop, CameraBottom)."""
        return list(_call(self.service.getSensorNames))

    def getLimits(self, name: str) -> list[list[float]]:
        return [list(r) for r in _call(self.service.getLimits, _name(name, "getLimits"))]

    def solveIK(self, chainName: str, space: int, target6D: Any,
                axisMask: int = AXIS_MASK_ALL) -> dict:
        """{"success", "angles", "positionError", "orientationError", "iterations",
        "reason"}; success False (with the reason) when no solution exists."""
        op = "solveIK"
        try:
            target = [float(v) for v in target6D]
        except (TypeError, ValueError):
            raise MotionError(f"{op}: target6D: expected 6 numbers, got {target6D!r}") from None
        _check(len(target) == 6 and all(math.isfinite(v) for v in target),
               f"{op}: target6D: expected 6 finite numbers, got {target6D!r}")
        mask = _integer(axisMask)
        _check(mask is not None and 0 < mask < 64,
               f"{op}: axisMask: expected 1..63, got {axisMask!r}")
        r = _call(self.service.solveIK, _name(chainName, op), _space(space, op), target, mask)
        return {"success": r.success, "angles": list(r.angles),
                "positionError": r.positionError, "orientationError": r.orientationError,
                "iterations": r.iterations, "reason": r.reason}
