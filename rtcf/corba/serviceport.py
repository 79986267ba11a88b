"""RTC::PortService for service ports (OpenRTM CorbaPort).

On connect each port publishes, for every provided interface, its IOR under the new-style
key ``<comp>.<port>.provided.<type>.<instance>`` and the old-style ``port.<type>.<instance>``;
then it binds each required interface to a published IOR (services.match_provider). A port
connected to itself therefore returns its own IORs in the profile, which is how hrpsys's
rtm.py finds a provider's object.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from omniORB import CORBA

from ..log import get_logger
from ..ports import new_connector_id
from ..services import ServicePort, match_provider
from .idl import stub_module
from .nv import from_nvlist, nv_set, to_nvlist

if TYPE_CHECKING:
    from .runtime import CorbaRuntime

RTC = stub_module("RTC")
RTC__POA = stub_module("RTC__POA")
log = get_logger("corba.serviceport")


class ServicePortServant(RTC__POA.PortService):
    """Runs in: ORB threads."""

    def __init__(self, port: ServicePort, runtime: "CorbaRuntime"):
        self.port = port
        self.rt = runtime
        self.ref: Any = None
        self.profiles: dict[str, Any] = {}
        self.bound: dict[str, list] = {}           # connector id -> consumers bound by it
        self.lock = threading.RLock()
        self.refs: dict[str, Any] = {}              # provided instance -> object reference
        for p in port.provided.values():
            servant = p.servant
            if hasattr(servant, "_this") or hasattr(servant, "_default_POA"):
                self.refs[p.instance_name] = self.rt.activate(servant)
            elif isinstance(servant, CORBA.Object):
                self.refs[p.instance_name] = servant

    def profile(self) -> Any:
        ifaces = [RTC.PortInterfaceProfile(p.instance_name, p.type_name, RTC.PROVIDED)
                  for p in self.port.provided.values()]
        ifaces += [RTC.PortInterfaceProfile(c.instance_name, c.type_name, RTC.REQUIRED)
                   for c in self.port.required.values()]
        with self.lock:
            cps = list(self.profiles.values())
        return RTC.PortProfile(self.port.full_name, ifaces, self.ref, cps,
                               self.rt.component_ref(self.port.owner),
                               to_nvlist({"port.port_type": "CorbaPort"}))

    def get_port_profile(self) -> Any:
        return self.profile()

    def get_connector_profiles(self) -> list:
        with self.lock:
            return list(self.profiles.values())

    def get_connector_profile(self, cid: str) -> Any:
        with self.lock:
            return self.profiles.get(cid, RTC.ConnectorProfile("", "", [], []))

    def _index(self, cp: Any) -> int:
        for i, p in enumerate(cp.ports):
            try:
                if p is not None and p._is_equivalent(self.ref):
                    return i
            except CORBA.Exception:
                continue
        return -1

    def connect(self, cp: Any) -> tuple[Any, Any]:
        if not cp.ports or self._index(cp) < 0:
            return RTC.BAD_PARAMETER, cp
        if not cp.connector_id:
            cp.connector_id = new_connector_id()
        first = cp.ports[0]
        try:
            local = self.rt.local_servant(first)
            return local.notify_connect(cp) if local is not None else first.notify_connect(cp)
        except CORBA.Exception as e:
            log.warning("%s: connect failed: %s", self.port.full_name, e)
            return RTC.RTC_ERROR, cp

    def notify_connect(self, cp: Any) -> tuple[Any, Any]:
        cid = cp.connector_id or new_connector_id()
        cp.connector_id = cid
        with self.lock:
            if cid in self.profiles:
                return RTC.BAD_PARAMETER, cp
        # (i) publish
        for inst, ref in self.refs.items():
            p = self.port.provided[inst]
            ior = self.rt.orb.object_to_string(ref)
            nv_set(cp.properties, f"{self.port.full_name}.provided.{p.type_name}.{inst}", ior)
            nv_set(cp.properties, f"port.{p.type_name}.{inst}", ior)
        # (ii) next port
        idx = self._index(cp)
        if 0 <= idx < len(cp.ports) - 1:
            nxt = cp.ports[idx + 1]
            try:
                local = self.rt.local_servant(nxt)
                code, cp = (local.notify_connect(cp) if local is not None
                            else nxt.notify_connect(cp))
            except CORBA.Exception as e:
                log.warning("%s: peer unreachable during connect: %s", self.port.full_name, e)
                return RTC.RTC_ERROR, cp
            if code != RTC.RTC_OK:
                return code, cp
        # (iii) subscribe: bind required interfaces to what others published
        offers = {k: v for k, v in from_nvlist(cp.properties).items()
                  if k.startswith("port.")}
        own = {f"port.{self.port.provided[i].type_name}.{i}" for i in self.refs}
        offers = {k: v for k, v in offers.items() if k not in own}
        bound = []
        for consumer in self.port.required.values():
            ior = match_provider(consumer, offers)
            if ior is None:
                continue
            try:
                consumer.bind(self.rt.orb.string_to_object(ior))
                bound.append(consumer)
            except Exception as e:
                log.warning("%s: cannot bind %s: %s", self.port.full_name,
                            consumer.instance_name, e)
        with self.lock:
            self.profiles[cid] = cp
            self.bound[cid] = bound
        return RTC.RTC_OK, cp

    def disconnect(self, cid: str) -> Any:
        with self.lock:
            cp = self.profiles.get(cid)
        if cp is None:
            return RTC.BAD_PARAMETER
        first = cp.ports[0] if cp.ports else None
        try:
            local = self.rt.local_servant(first)
            return local.notify_disconnect(cid) if local is not None \
                else first.notify_disconnect(cid)
        except CORBA.Exception:
            return self.notify_disconnect(cid)

    def notify_disconnect(self, cid: str) -> Any:
        with self.lock:
            cp = self.profiles.pop(cid, None)
            bound = self.bound.pop(cid, [])
        if cp is None:
            return RTC.BAD_PARAMETER
        for consumer in bound:
            consumer.unbind()
        idx = self._index(cp)
        if 0 <= idx < len(cp.ports) - 1:
            nxt = cp.ports[idx + 1]
            try:
                local = self.rt.local_servant(nxt)
                (local.notify_disconnect(cid) if local is not None
                 else nxt.notify_disconnect(cid))
            except CORBA.Exception:
                pass
        return RTC.RTC_OK

    def disconnect_all(self) -> Any:
        with self.lock:
            ids = list(self.profiles)
        for cid in ids:
            self.disconnect(cid)
        return RTC.RTC_OK

    def close(self) -> None:
        self.disconnect_all()
        for ref in self.refs.values():
            servant = self.rt.local_servant(ref)
            if servant is not None:
                self.rt.deactivate(servant)
