"""NAO::KinematicsService servant. Runs in: ORB threads.

Every operation answers at once from the angles of the component's last completed cycle (the
component publishes them without a lock shared with the EC thread). ModelError and argument
errors become the IDL exception NAO::KinematicsError with the same reason.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

from rtcf.corba.idl import stub_module

from .model import ModelError

NAO = stub_module("NAO")
NAO__POA = stub_module("NAO__POA")
KS = NAO.KinematicsService


@contextmanager
def _errors(op: str) -> Iterator[None]:
    try:
        yield
    except (ModelError, ValueError, TypeError) as e:
        raise NAO.KinematicsError(f"{op}: {e}") from None


class KinematicsServiceImpl(NAO__POA.KinematicsService):
    def __init__(self, comp: Any):
        self.comp = comp

    def getTransform(self, name: str, space: int, useSensorValues: bool) -> list:
        with _errors("getTransform"):
            return [float(v) for v in self.comp.get_transform(name, space,
                                                               useSensorValues).ravel()]

    def getPosition(self, name: str, space: int, useSensorValues: bool) -> list:
        with _errors("getPosition"):
            return self.comp.get_position(name, space, useSensorValues)

    def getRobotPosition(self, useSensors: bool) -> list:
        return self.comp.get_robot_position(useSensors)

    def getBodyNames(self, name: str) -> list:
        with _errors("getBodyNames"):
            return list(self.comp.robot.collection(name))

    def getJointNames(self, name: str) -> list:
        with _errors("getJointNames"):
            return list(self.comp.robot.names_of(name))

    def getSensorNames(self) -> list:
        return list(self.comp.robot.frames)

    def getLimits(self, name: str) -> list:
        with _errors("getLimits"):
            return self.comp.get_limits(name)

    def solveIK(self, chain: str, space: int, target6D: Any, axisMask: int) -> Any:
        with _errors("solveIK"):
            r = self.comp.solve(chain, space, list(target6D), axisMask)
        return KS.IKResult(bool(r.success), [float(v) for v in r.q], float(r.position_error),
                           float(r.orientation_error), int(r.iterations), r.reason)
