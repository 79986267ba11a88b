"""ControllerManagerProxy: a Python client of RTController::ControllerManagerService.

Takes and returns plain Python values (dicts for params, tuples for results)::

    cm = ControllerManagerProxy("ControllerManager0", nameserver="localhost:2809")
    cm.load("head_pd", "JointPositionController", {"joints": ["HeadYaw"], "kp": 1.0})
    cm.switch(start=["head_pd"])                 # returns once the RT loop switched
    cm.command("head_pd", {"setpoint": [0.3]})

The mutating calls raise ControllerError with the manager's message when it answers false
(PD-0.2 on the wire, an exception for a Python caller).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from omniORB import any as oany

from .controller import ControllerError
from rtcf.corba.idl import stub_module

RTController = stub_module("RTController")


def to_params(values: Mapping[str, Any] | None) -> list:
    return [RTController.Param(str(k), oany.to_any(v)) for k, v in (values or {}).items()]


def from_params(params: Any) -> dict[str, Any]:
    return {p.name: oany.from_any(p.value) for p in params}


class ControllerManagerProxy:
    """``service`` may be given (an object reference or a servant); otherwise the component
    ``name`` is looked up in the naming service ``nameserver``."""

    def __init__(self, name: str = "ControllerManager0", nameserver: str = "localhost:2809",
                 service: Any = None):
        if service is None:
            from rtcf.corba.client import get_service
            service = get_service(name, "ControllerManagerService",
                                  stub=RTController.ControllerManagerService,
                                  nameserver=nameserver)
        self.service = service

    @staticmethod
    def _ok(answer: tuple[bool, str]) -> str:
        ok, message = answer
        if not ok:
            raise ControllerError(message)
        return message

    def load(self, name: str, type_name: str = "", params: Mapping[str, Any] | None = None
             ) -> str:
        return self._ok(self.service.loadController(name, type_name, to_params(params)))

    def unload(self, name: str) -> str:
        return self._ok(self.service.unloadController(name))

    def switch(self, start: Sequence[str] = (), stop: Sequence[str] = (),
               strictness: int = RTController.STRICT, timeout: float = 1.0) -> str:
        return self._ok(self.service.switchController(list(start), list(stop),
                                                      int(strictness), float(timeout)))

    def command(self, name: str, params: Mapping[str, Any]) -> str:
        return self._ok(self.service.commandController(name, to_params(params)))

    def state(self, name: str) -> dict[str, Any]:
        return from_params(self.service.getControllerState(name))

    def list(self) -> list[tuple[str, str, str, int]]:
        return [(c.name, c.type, c.state, c.position)
                for c in self.service.listControllers()]

    def types(self) -> list[str]:
        return list(self.service.listControllerTypes())

    def statistics(self) -> Any:
        return self.service.getStatistics()

    def describe(self) -> list[dict[str, Any]]:
        """Per controller (update order): name, type, state, position, update_rate,
        claimed_interfaces, fallback_controllers, chain and its timing figures."""
        return [{k: (list(v) if isinstance(v, (list, tuple)) else v)
                 for k, v in vars(d).items() if not k.startswith("_")}
                for d in self.service.describeControllers()]

    def interfaces(self) -> list[tuple[str, str]]:
        """(joint/type, owning controller or "") of every command interface."""
        return [(i.name, i.claimed_by) for i in self.service.listInterfaces()]

    def reload_modules(self, restore: bool = False) -> str:
        return self._ok(self.service.reloadControllerModules(bool(restore)))
