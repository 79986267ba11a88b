"""Service ports (OpenRTM's CorbaPort): provided and required interfaces.

A component creates a ServicePort in on_initialize, ``provide``s servant objects on it and
``require``s interfaces from others::

    port = self.add_service_port(ServicePort("DCMService"))
    port.provide("service0", "DCMService", DCMServiceImpl(self))
    self.other = port.require("dcm", "DCMService")     # a Consumer, bound on connect

Without an ORB (tests, one process) ``connect_services`` binds a consumer straight to the
provider's Python object. With the CORBA layer the same ports are PortServices that exchange
``port.<type>.<instance>`` IORs on connect, as OpenRTM does, and consumers hold object
references.

Service calls arrive on ORB threads: validate there, then hand work to the EC thread with
``Component.post`` / ``Component.call`` (house style rule 3).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import PortError


@dataclass
class Provided:
    instance_name: str
    type_name: str
    servant: Any


class Consumer:
    """The client end of a required interface; ``ref`` is set when connected.
    Runs in: bound and unbound in the thread that connects; called from the EC
    thread."""

    def __init__(self, instance_name: str, type_name: str, stub: Any = None):
        self.instance_name = instance_name
        self.type_name = type_name
        self.stub = stub          # IDL stub class used to narrow a CORBA reference
        self.ref: Any = None

    @property
    def connected(self) -> bool:
        return self.ref is not None

    def bind(self, obj: Any) -> None:
        if self.stub is not None and hasattr(obj, "_narrow"):
            narrowed = obj._narrow(self.stub)
            if narrowed is None:
                raise PortError(f"required interface {self.type_name}.{self.instance_name}:"
                                f" the provided object is not a {self.type_name}")
            obj = narrowed
        self.ref = obj

    def unbind(self) -> None:
        self.ref = None

    def __getattr__(self, name: str) -> Any:
        ref = self.__dict__.get("ref")
        if ref is None:
            raise PortError(f"required interface {self.type_name}.{self.instance_name} is "
                            "not connected")
        return getattr(ref, name)


class ServicePort:
    """A named port carrying provided and required interfaces.
    Runs in: declared in on_initialize; connected by the manager's main thread or an
    ORB thread (rtcon)."""

    port_type = "CorbaPort"

    def __init__(self, name: str):
        self.name = name
        self.owner: Any = None
        self.provided: dict[str, Provided] = {}
        self.required: dict[str, Consumer] = {}
        self.connections: dict[str, list[tuple[Consumer, Any]]] = {}

    @property
    def full_name(self) -> str:
        owner = getattr(self.owner, "instance_name", "")
        return f"{owner}.{self.name}" if owner else self.name

    def provide(self, instance_name: str, type_name: str, servant: Any) -> Provided:
        if instance_name in self.provided or instance_name in self.required:
            raise PortError(f"{self.full_name}: interface {instance_name!r} already exists")
        p = Provided(instance_name, type_name, servant)
        self.provided[instance_name] = p
        return p

    def require(self, instance_name: str, type_name: str, stub: Any = None) -> Consumer:
        if instance_name in self.provided or instance_name in self.required:
            raise PortError(f"{self.full_name}: interface {instance_name!r} already exists")
        c = Consumer(instance_name, type_name, stub)
        self.required[instance_name] = c
        return c


def match_provider(consumer: Consumer, offers: dict[str, Any], port_name: str = "") -> Any:
    """Pick the offer for ``consumer`` from ``offers`` (descriptor -> object/IOR).

    Descriptors follow OpenRTM: ``<port>.provided.<type>.<instance>`` (new style) and
    ``port.<type>.<instance>`` (old style, same instance name). If neither names it, the
    only offer of the same type is used (a convenience OpenRTM lacks).
    """
    old = f"port.{consumer.type_name}.{consumer.instance_name}"
    if old in offers:
        return offers[old]
    same_type = {k: v for k, v in offers.items()
                 if k.startswith("port.") and k.split(".")[1] == consumer.type_name}
    if len(same_type) == 1:
        return next(iter(same_type.values()))
    return None


def connect_services(a: ServicePort, b: ServicePort) -> int:
    """Bind required interfaces of each port to provided ones of the other (no ORB).
    Returns the number of bindings made."""
    made = 0
    for x, y in ((a, b), (b, a)):
        offers = {f"port.{p.type_name}.{p.instance_name}": p.servant
                  for p in y.provided.values()}
        for consumer in x.required.values():
            obj = match_provider(consumer, offers)
            if obj is not None:
                consumer.ref = obj
                made += 1
    return made
