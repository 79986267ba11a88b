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

**Local interfaces** (``local=True``) are Python objects shared by two components of one
process, bound only by a connection declared in the composition (or ``connect_services`` in
code), never through CORBA: a controller manager driving the DCM next to it, as a NAOqi
local module reaches the DCM in its process. They are not published on the wire. A
required local interface is mandatory: the manager refuses a composition that does not
connect it, before anything starts (:func:`local_binding_problems`), with the consumer's
``hint``.

Service calls arrive on ORB threads: validate there, then hand work to the EC thread with
``Component.post`` / ``Component.call`` (house style rule 3).
"""

from __future__ import annotations

from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any, Callable

from .errors import PortError


@dataclass
class Provided:
    instance_name: str
    type_name: str
    servant: Any
    local: bool = False           # a Python object for components of this process only


class Consumer:
    """The client end of a required interface; ``ref`` is set when connected.
    Runs in: bound and unbound in the thread that connects; called from the EC
    thread."""

    def __init__(self, instance_name: str, type_name: str, stub: Any = None,
                 local: bool = False, hint: str = ""):
        self.instance_name = instance_name
        self.type_name = type_name
        self.stub = stub          # IDL stub class used to narrow a CORBA reference
        self.local = local        # bound in process only, mandatory (see the module doc)
        self.hint = hint          # what to connect, for the error when it is not
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

    def provide(self, instance_name: str, type_name: str, servant: Any,
                local: bool = False) -> Provided:
        """Offer ``servant`` (a CORBA servant, or with ``local`` any Python object for
        components of this process). Runs in: on_initialize."""
        if instance_name in self.provided or instance_name in self.required:
            raise PortError(f"{self.full_name}: interface {instance_name!r} already exists")
        p = Provided(instance_name, type_name, servant, local)
        self.provided[instance_name] = p
        return p

    def require(self, instance_name: str, type_name: str, stub: Any = None,
                local: bool = False, hint: str = "") -> Consumer:
        """Ask for an interface of ``type_name``; ``local``: a Python object of a component
        of this process, mandatory (``hint`` says what to connect). Runs in: on_initialize."""
        if instance_name in self.provided or instance_name in self.required:
            raise PortError(f"{self.full_name}: interface {instance_name!r} already exists")
        c = Consumer(instance_name, type_name, stub, local, hint)
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


def _offers(port: ServicePort, local: bool) -> dict[str, Any]:
    return {f"port.{p.type_name}.{p.instance_name}": p.servant
            for p in port.provided.values() if p.local == local}


def connect_services(a: ServicePort, b: ServicePort, local: bool | None = None) -> int:
    """Bind required interfaces of each port to provided ones of the other, as Python
    objects (no ORB). ``local``: None binds every interface (no ORB at all), True only the
    local ones (the CORBA layer binds the others). Returns the number of bindings made."""
    made = 0
    for x, y in ((a, b), (b, a)):
        for consumer in x.required.values():
            if local is not None and consumer.local != local:
                continue
            obj = match_provider(consumer, _offers(y, consumer.local))
            if obj is not None:
                consumer.ref = obj
                made += 1
    return made


def local_binding_problems(ports: list[ServicePort], pairs: list[tuple[ServicePort,
                                                                       ServicePort]]
                           ) -> list[tuple[Any, str]]:
    """(owner, message) for every required local interface of ``ports`` that the
    connections ``pairs`` would leave unbound: not connected, or connected only to ports
    that provide no local interface of its type. Pure check, binds nothing."""
    out = []
    for port in ports:
        for c in port.required.values():
            if not c.local:
                continue
            peers = [y for x, y in pairs if x is port] + [x for x, y in pairs if y is port]
            if any(match_provider(c, _offers(peer, True)) is not None for peer in peers):
                continue
            where = ", ".join(peer.full_name for peer in peers)
            what = (f"is connected to {where}, which provides no local {c.type_name}"
                    if peers else "is not connected")
            out.append((port.owner, f"service port {port.name!r} needs a {c.type_name} "
                                    f"({c.instance_name}, in this process) and {what}"
                                    + (f": {c.hint}" if c.hint else "")))
    return out


def run_or_refuse(comp: Any, op: str, fn: Callable[[], Any],
                  refused: tuple[type[BaseException], ...], timeout: float = 5.0,
                  why: Callable[[BaseException], str] = str) -> tuple[bool, Any]:
    """Run ``fn`` in ``comp``'s EC thread for the service operation ``op``
    (``Component.call``): (True, its result). (False, None) when it raised one of
    ``refused`` (logged as a warning "op refused: why(e)") or no cycle ran it within
    ``timeout`` [s] (logged as an error naming the component): how an hrpsys servant answers
    ``false``. Any other exception propagates. Runs in: an ORB thread."""
    try:
        return True, comp.call(fn, timeout=timeout)
    except refused as e:
        comp.log.warning("%s refused: %s", op, why(e))
    except FutureTimeout:
        comp.log.error("%s: %s ran no cycle within %.1f s: is its execution context "
                       "running?", op, comp.instance_name, timeout)
    return False, None
