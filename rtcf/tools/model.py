"""A running system as plain data: components, ports, connections, execution contexts.

Everything here is a dataclass of strings, numbers, lists and dicts, so a snapshot goes to
JSON with ``dataclasses.asdict`` (``Snapshot.to_json()``) and back (``Snapshot.from_dict``).
It is filled by ``rtcf.tools.snapshot.take_snapshot`` (the CORBA side) through the standard
RTC/SDO interfaces only, so it describes OpenRTM-aist components as well as ours.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["PortInfo", "ConnectorInfo", "ContextInfo", "ComponentInfo", "Snapshot"]


@dataclass
class ConnectorInfo:
    """One connection as a port's profile lists it. ``ports``: the full port names
    (``Comp0.out``) of both ends, in the profile's order; ``addresses`` the same as
    ``server/path.rtc:port`` where the component was found in the naming service."""

    id: str
    name: str
    ports: list[str] = field(default_factory=list)
    properties: dict[str, str] = field(default_factory=dict)
    addresses: list[str] = field(default_factory=list)


@dataclass
class PortInfo:
    """``direction``: ``out`` | ``in`` | ``service``; ``data_type``: the repository id
    (``IDL:RTC/TimedDoubleSeq:1.0``) or '' for a service port; ``interfaces``: service
    interfaces as ``provided|required type.instance``."""

    name: str                       # the short name (``q``), as in addresses
    full_name: str                  # as the profile says (``DCM0.q``)
    direction: str
    data_type: str = ""
    properties: dict[str, str] = field(default_factory=dict)
    connectors: list[ConnectorInfo] = field(default_factory=list)
    interfaces: list[str] = field(default_factory=list)


@dataclass
class ContextInfo:
    """An execution context: ``id`` is ``<owner>:<handle>`` (unique in a snapshot);
    ``kind`` PERIODIC | EVENT_DRIVEN | OTHER; ``members`` the instance names it runs (owner
    first when it runs its owner), ``states`` each member's state in this EC."""

    id: str
    owner: str
    handle: int
    kind: str
    rate: float
    running: bool
    members: list[str] = field(default_factory=list)
    states: dict[str, str] = field(default_factory=dict)
    properties: dict[str, str] = field(default_factory=dict)


@dataclass
class ComponentInfo:
    """``address``: rtshell address of the component (``localhost:2809/h.host_cxt/X.rtc``);
    ``state``: CREATED | INACTIVE | ACTIVE | ERROR | UNKNOWN in its first EC (owned, else
    participating), or UNREACHABLE when the name is bound but the object does not answer.
    Runs in: any thread (plain data)."""

    name: str
    address: str
    server: str
    path: str
    type_name: str = ""
    vendor: str = ""
    category: str = ""
    version: str = ""
    description: str = ""
    state: str = "UNKNOWN"
    ports: list[PortInfo] = field(default_factory=list)
    owned_ecs: list[str] = field(default_factory=list)          # ContextInfo ids
    participating_ecs: list[str] = field(default_factory=list)  # ContextInfo ids
    properties: dict[str, str] = field(default_factory=dict)
    error: str = ""

    def port(self, name: str) -> PortInfo | None:
        for p in self.ports:
            if p.name == name or p.full_name == name:
                return p
        return None


@dataclass
class Snapshot:
    """The system as seen at ``time`` [s since the epoch] on ``nameservers``; ``errors``:
    one line per naming service or object that could not be read.
    Runs in: any thread (plain data)."""

    time: float
    nameservers: list[str]
    components: list[ComponentInfo] = field(default_factory=list)
    ecs: list[ContextInfo] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def component(self, name_or_address: str) -> ComponentInfo | None:
        for c in self.components:
            if name_or_address in (c.name, c.address):
                return c
        return None

    def ec(self, ec_id: str) -> ContextInfo | None:
        for e in self.ecs:
            if e.id == ec_id:
                return e
        return None

    def connections(self) -> list[ConnectorInfo]:
        """Every connection once (a connection is listed by both of its ports)."""
        seen: dict[str, ConnectorInfo] = {}
        for c in self.components:
            for p in c.ports:
                for k in p.connectors:
                    seen.setdefault(k.id, k)
        return list(seen.values())

    def out_ports(self) -> list[tuple[ComponentInfo, PortInfo]]:
        return [(c, p) for c in self.components for p in c.ports if p.direction == "out"]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self, **kw: Any) -> str:
        return json.dumps(self.to_dict(), **kw)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Snapshot":
        comps = []
        for c in d.get("components", []):
            c = dict(c)
            ports = []
            for p in c.pop("ports", []):
                p = dict(p)
                p["connectors"] = [ConnectorInfo(**k) for k in p.get("connectors", [])]
                ports.append(PortInfo(**p))
            comps.append(ComponentInfo(ports=ports, **c))
        return cls(time=d["time"], nameservers=list(d.get("nameservers", [])),
                   components=comps, ecs=[ContextInfo(**e) for e in d.get("ecs", [])],
                   errors=list(d.get("errors", [])))
