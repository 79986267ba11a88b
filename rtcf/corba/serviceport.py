"""RTC::PortService for service ports (OpenRTM CorbaPort).

On connect each port publishes, for every provided interface, its IOR under the new-style
key ``<comp>.<port>.provided.<type>.<instance>`` and the old-style ``port.<type>.<instance>``;
then it binds each required interface to a published IOR (services.match_provider). A port
connected to itself therefore returns its own IORs in the profile, which is how hrpsys's
rtm.py finds a provider's object. Local interfaces (rtcf.services: Python objects for
components of one process) are neither published nor listed in the profile; the manager
binds them itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from omniORB import CORBA

from ..log import get_logger
from ..services import ServicePort, match_provider
from .idl import stub_module
from .nv import from_nvlist, nv_set, to_nvlist
from .portbase import PortServiceBase

if TYPE_CHECKING:
    from .runtime import CorbaRuntime

RTC = stub_module("RTC")
log = get_logger("corba.serviceport")


class ServicePortServant(PortServiceBase):
    """Runs in: ORB threads."""

    def __init__(self, port: ServicePort, runtime: "CorbaRuntime"):
        super().__init__(runtime, port.full_name)
        self.port = port
        self.bound: dict[str, list] = {}           # connector id -> consumers bound by it
        self.refs: dict[str, Any] = {}              # provided instance -> object reference
        for p in port.provided.values():
            if p.local:
                continue
            servant = p.servant
            if hasattr(servant, "_this") or hasattr(servant, "_default_POA"):
                self.refs[p.instance_name] = self.rt.activate(servant)
            elif isinstance(servant, CORBA.Object):
                self.refs[p.instance_name] = servant

    def profile(self) -> Any:
        ifaces = [RTC.PortInterfaceProfile(p.instance_name, p.type_name, RTC.PROVIDED)
                  for p in self.port.provided.values() if not p.local]
        ifaces += [RTC.PortInterfaceProfile(c.instance_name, c.type_name, RTC.REQUIRED)
                   for c in self.port.required.values() if not c.local]
        return RTC.PortProfile(self.port.full_name, ifaces, self.ref,
                               self.get_connector_profiles(),
                               self.rt.component_ref(self.port.owner),
                               to_nvlist({"port.port_type": "CorbaPort"}))

    def _negotiate(self, cp: Any) -> tuple[Any, Any]:
        cid = cp.connector_id
        # (i) publish
        for inst, ref in self.refs.items():
            p = self.port.provided[inst]
            ior = self.rt.orb.object_to_string(ref)
            nv_set(cp.properties, f"{self.port.full_name}.provided.{p.type_name}.{inst}", ior)
            nv_set(cp.properties, f"port.{p.type_name}.{inst}", ior)
        # (ii) next port
        code, cp = self._notify_next(cp)
        if code != RTC.RTC_OK:
            return code, cp
        # (iii) subscribe: bind required interfaces to what others published
        offers = {k: v for k, v in from_nvlist(cp.properties).items()
                  if k.startswith("port.")}
        own = {f"port.{self.port.provided[i].type_name}.{i}" for i in self.refs}
        offers = {k: v for k, v in offers.items() if k not in own}
        bound = []
        for consumer in self.port.required.values():
            if consumer.local:
                continue
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
            self.bound[cid] = bound
        self._store(cp)
        return RTC.RTC_OK, cp

    def _release(self, cid: str) -> None:
        with self.lock:
            bound = self.bound.pop(cid, [])
        for consumer in bound:
            consumer.unbind()

    def close(self) -> None:
        super().close()
        for ref in self.refs.values():
            servant = self.rt.local_servant(ref)
            if servant is not None:
                self.rt.deactivate(servant)
