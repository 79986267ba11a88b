"""The CORBA side of the tools: an ORB, the naming services in use, addresses resolved to
component and port references, and snapshots of the system (rtcf.tools.model).

Only the standard RTC/SDO interfaces are used (RTObject, PortService,
ExecutionContextService), so OpenRTM-aist components are seen as ours are.

    s = Session(["localhost:2809"])          # None: RTCTREE_NAMESERVERS, else localhost:2809
    snap = s.snapshot()                      # rtcf.tools.model.Snapshot
    port = s.port("DCM0.rtc:q", direction="out")     # PortHandle (ref, info, data class)
    s.change_state("DCM0", "deactivate")     # as rtdeact
    s.close()

Errors a user can cause (an unknown component or port, a dead one, no naming service) are
:class:`ToolError` with one line naming the address. Runs in: any thread (one at a time per
Session for the naming walk).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from omniORB import CORBA

from rtcf import datatypes as dt
from rtcf.corba.client import UNREACHABLE, connect_naming, narrow_component
from rtcf.corba.idl import ensure_stubs, stub_module
from rtcf.corba.naming import NamingClient
from rtcf.corba.nv import from_nvlist
from rtcf.corba.orb import init_orb
from rtcf.errors import ToolError
from .address import Address, AddressError, nameservers_from_env, normalise_server, parse_address
from .model import ComponentInfo, ConnectorInfo, ContextInfo, PortInfo, Snapshot

__all__ = ["Session", "PortHandle", "ToolError", "CALL_TIMEOUT_MS"]

CALL_TIMEOUT_MS = 2000     # a hung component costs a tool at most this per call
_DIRECTIONS = {"DataOutPort": "out", "DataInPort": "in", "CorbaPort": "service"}


@dataclass
class PortHandle:
    """A data port found by address: ``ref`` its RTC::PortService, ``info`` its PortInfo,
    ``data_cls`` the rtcf data type of its ``dataport.data_type``, ``owner_ref`` the
    component (RTObject)."""

    address: str
    component: str
    ref: Any
    owner_ref: Any
    info: PortInfo
    data_cls: type


def _short(exc: BaseException) -> str:
    return type(exc).__name__


def _loopback(host: str) -> bool:
    return host in ("localhost", "::1", "") or host.startswith("127.")


class Session:
    """One ORB (the process's, created with a call timeout) and the naming services."""

    def __init__(self, nameservers: list[str] | None = None,
                 call_timeout_ms: int = CALL_TIMEOUT_MS):
        try:
            servers = [normalise_server(s) for s in nameservers] if nameservers else \
                nameservers_from_env()
        except AddressError as e:
            raise ToolError(str(e)) from None
        self.nameservers = servers or ["localhost:2809"]
        ensure_stubs()
        self.RTC = stub_module("RTC")
        remote = any(not _loopback(s.rpartition(":")[0]) for s in self.nameservers)
        self.orb = init_orb({"corba.endpoints": "all" if remote else "",
                             "corba.args": f"-ORBclientCallTimeOutPeriod {call_timeout_ms}"})
        self.timeout_ms = call_timeout_ms
        self._naming: dict[str, NamingClient] = {}

    # -- naming ------------------------------------------------------------------------------
    def naming(self, server: str) -> NamingClient:
        """The naming client of ``host:port``; NoNamingService (a ToolError) when nothing
        answers there."""
        client = self._naming.get(server)
        if client is None:
            client = connect_naming(self.orb, server, self.timeout_ms, probe=True)
            self._naming[server] = client
        return client

    def _walk(self, client: NamingClient, prefix: str = "", depth: int = 0
              ) -> list[tuple[str, Any]]:
        """(path, object) of every ``*.rtc`` binding under ``prefix`` (contexts followed up
        to 6 levels; ``.mgr`` managers are not components)."""
        out: list[tuple[str, Any]] = []
        for ident, kind, is_ctx in client.list(prefix):
            seg = f"{ident}.{kind}" if kind else ident
            path = f"{prefix}/{seg}" if prefix else seg
            if is_ctx:
                if depth < 6:
                    out += self._walk(client, path, depth + 1)
            elif kind == "rtc":
                try:
                    out.append((path, client.resolve(path)))
                except (LookupError, CORBA.Exception):
                    continue
        return out

    def components(self) -> list[tuple[str, str, Any]]:
        """(server, path, object) of every component bound on the naming services; a server
        that does not answer raises ToolError."""
        found = []
        for server in self.nameservers:
            client = self.naming(server)
            try:
                found += [(server, p, o) for p, o in self._walk(client)]
            except CORBA.Exception as e:
                raise ToolError(f"listing the naming service at {server} failed "
                                f"({_short(e)})") from None
        return found

    # -- addresses ---------------------------------------------------------------------------
    def component(self, address: str | Address) -> tuple[Address, Any]:
        """(parsed address, RTC::RTObject) of a component address (a port part is
        ignored). ToolError: unknown, not a component, or not answering."""
        try:
            addr = address if isinstance(address, Address) else parse_address(address)
        except AddressError as e:
            raise ToolError(str(e)) from None
        if addr.server is None:
            name = addr.path[-1]
            hits = [(s, p, o) for s, p, o in self.components()
                    if p.rsplit("/", 1)[-1] == name]
            if not hits:
                raise ToolError(f"{addr.text}: no component {name} on the naming service"
                                f"{'s' if len(self.nameservers) > 1 else ''} "
                                f"{', '.join(self.nameservers)}")
            if len(hits) > 1:
                raise ToolError(f"{addr.text}: {len(hits)} components named {name}: "
                                f"{', '.join(f'{s}/{p}' for s, p, _ in hits)}; give one "
                                f"in full")
            server, path, obj = hits[0]
            addr = Address(addr.text, server, tuple(path.split("/")), addr.port)
        else:
            client = self.naming(addr.server)
            try:
                obj = client.resolve(addr.naming_path)
            except LookupError:
                raise ToolError(f"{addr.text}: nothing is bound at {addr.naming_path} in "
                                f"the naming service at {addr.server}") from None
            except CORBA.Exception as e:
                raise ToolError(f"{addr.text}: naming service {addr.server} failed "
                                f"({_short(e)})") from None
        try:
            ref = narrow_component(obj, addr.text)
        except LookupError as e:
            raise ToolError(str(e)) from None
        return addr, ref

    def port(self, address: str, direction: str | None = None) -> PortHandle:
        """The data port at ``address`` (``...comp.rtc:port``); ``direction`` 'out' / 'in'
        checks it. ToolError names what is wrong."""
        try:
            addr = parse_address(address, want_port=True)
        except AddressError as e:
            raise ToolError(str(e)) from None
        addr, comp = self.component(addr)
        try:
            prof = comp.get_component_profile()
        except UNREACHABLE as e:
            raise ToolError(f"{address}: the component does not answer ({_short(e)}): a "
                            f"component that stopped?") from None
        names = []
        for pp in prof.port_profiles:
            short = pp.name.split(".", 1)[-1]
            names.append(short)
            if addr.port not in (pp.name, short):
                continue
            info = _port_info(pp, {})
            if info.direction == "service":
                raise ToolError(f"{address}: {pp.name} is a service port, not a data port")
            if direction and info.direction != direction:
                raise ToolError(f"{address}: {pp.name} is an {info.direction} port; an "
                                f"{direction} port is needed here")
            try:
                cls = dt.type_by_name(info.data_type)
            except LookupError:
                raise ToolError(f"{address}: data type {info.data_type or '(none)'} is not "
                                f"one of the OpenRTM data types rtcf knows") from None
            return PortHandle(str(addr), prof.instance_name, pp.port_ref, comp, info, cls)
        raise ToolError(f"{address}: {prof.instance_name} has no port {addr.port!r} "
                        f"(ports: {', '.join(names) or 'none'})")

    def port_from_ref(self, ref: Any, label: str | None = None) -> PortHandle:
        """A PortHandle of a data port known only by its RTC::PortService reference (a port
        whose component is not in the naming service, e.g. a bare OpenRTM port)."""
        try:
            pp = ref.get_port_profile()
        except UNREACHABLE as e:
            raise ToolError(f"{label or 'port'}: does not answer ({_short(e)})") from None
        info = _port_info(pp, {}, None, self.orb)
        try:
            cls = dt.type_by_name(info.data_type)
        except LookupError:
            raise ToolError(f"{label or pp.name}: data type {info.data_type or '(none)'} is "
                            f"not one of the OpenRTM data types rtcf knows") from None
        return PortHandle(label or pp.name, pp.name.split(".", 1)[0], ref, pp.owner, info,
                          cls)

    def change_state(self, address: str, action: str, ec_index: int = 0) -> None:
        """``activate`` | ``deactivate`` | ``reset`` the component at ``address`` in its
        execution context number ``ec_index`` (owned ones first, then participating ones,
        as rtctree's rtact/rtdeact/rtreset count them). ToolError when refused."""
        methods = {"activate": "activate_component", "deactivate": "deactivate_component",
                   "reset": "reset_component"}
        if action not in methods:
            raise ToolError(f"state change must be one of {', '.join(methods)}, got "
                            f"{action!r}")
        addr, ref = self.component(address)
        try:
            ecs = list(ref.get_owned_contexts()) + list(ref.get_participating_contexts())
        except UNREACHABLE as e:
            raise ToolError(f"{address}: the component does not answer ({_short(e)})") \
                from None
        if not 0 <= ec_index < len(ecs):
            raise ToolError(f"{address}: no execution context number {ec_index} (it is in "
                            f"{len(ecs)})")
        try:
            code = getattr(ecs[ec_index], methods[action])(ref)
        except CORBA.Exception as e:
            raise ToolError(f"{address}: {action} failed ({_short(e)})") from None
        if code != self.RTC.RTC_OK:
            raise ToolError(f"{address}: {action} refused ({code})")

    # -- snapshot ----------------------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        """The whole system on the naming services, as plain data. A naming service that
        does not answer, or a bound object that does not, is listed in ``errors`` (the
        component as UNREACHABLE) rather than raised."""
        snap = Snapshot(time=time.time(), nameservers=list(self.nameservers))
        found = []
        for server in self.nameservers:
            try:
                client = self.naming(server)
                found += [(server, p, o) for p, o in self._walk(client)]
            except (ToolError, CORBA.Exception) as e:
                snap.errors.append(str(e) if isinstance(e, ToolError)
                                   else f"{server}: {_short(e)}")
        port_names: dict[str, str] = {}
        port_addr: dict[str, str] = {}
        ec_seen: dict[str, ContextInfo] = {}
        raw = []
        for server, path, obj in found:
            address = f"{server}/{path}"
            name = path.rsplit("/", 1)[-1]
            name = name[:-4] if name.endswith(".rtc") else name
            info = ComponentInfo(name=name, address=address, server=server, path=path)
            try:
                ref = obj._narrow(self.RTC.RTObject)
                prof = ref.get_component_profile()
            except (CORBA.Exception, AttributeError) as e:
                info.state = "UNREACHABLE"
                info.error = f"{address}: does not answer ({_short(e)})"
                snap.errors.append(info.error)
                snap.components.append(info)
                continue
            info.name = prof.instance_name or name
            info.type_name, info.vendor = prof.type_name, prof.vendor
            info.category, info.version = prof.category, prof.version
            info.description = prof.description
            info.properties = from_nvlist(prof.properties)
            for pp in prof.port_profiles:
                try:
                    port_names[self.orb.object_to_string(pp.port_ref)] = pp.name
                    port_addr[pp.name] = f"{address}:{pp.name.split('.', 1)[-1]}"
                except CORBA.Exception:
                    pass
            raw.append((info, ref, prof))
            snap.components.append(info)
        for info, ref, prof in raw:
            info.ports = [_port_info(pp, port_names, port_addr, self.orb)
                          for pp in prof.port_profiles]
            try:
                self._ecs(info, ref, ec_seen)
            except CORBA.Exception as e:
                info.error = f"{info.address}: reading its execution contexts failed " \
                             f"({_short(e)})"
                snap.errors.append(info.error)
        snap.ecs = list(ec_seen.values())
        by_id = {e.id: e for e in snap.ecs}
        for info in snap.components:      # the state in its first EC
            for ec_id in info.owned_ecs + info.participating_ecs:
                st = by_id[ec_id].states.get(info.name)
                if st:
                    info.state = st
                    break
        return snap

    def _ecs(self, info: ComponentInfo, ref: Any, seen: dict[str, ContextInfo]) -> None:
        own_context = False
        for owned, ecs in ((True, ref.get_owned_contexts()),
                           (False, ref.get_participating_contexts())):
            for ec in ecs:
                if ec is None:
                    continue
                key = self.orb.object_to_string(ec)
                e = seen.get(key)
                if e is None:
                    e = self._ec_info(ec, info, ref, owned)
                    if owned and e.properties.get("type") == "OwnContext":
                        # an rtcf component's own context: its place in the EC it runs in
                        # (listed as that EC, which it also participates in)
                        own_context = True
                        continue
                    seen[key] = e
                elif owned:
                    e.owner = info.name
                (info.owned_ecs if owned else info.participating_ecs).append(e.id)
                if info.name not in e.members:
                    e.members.append(info.name)
                try:
                    st = ec.get_component_state(ref)
                    e.states[info.name] = str(st).replace("_STATE", "")
                except CORBA.Exception as x:
                    e.states[info.name] = f"UNKNOWN ({_short(x)})"
        if own_context and info.participating_ecs:
            info.owned_ecs.insert(0, info.participating_ecs[0])

    def _ec_info(self, ec: Any, info: ComponentInfo, ref: Any, owned: bool) -> ContextInfo:
        """The EC as data; its id is ``<owner>:<the owner's handle of it>`` whichever member
        it was found through (``<member>:p<handle>`` when it has no owner)."""
        kind, rate, running, props, owner, owner_ref = "OTHER", 0.0, False, {}, "", None
        svc = None
        try:
            svc = ec._narrow(self.RTC.ExecutionContextService)
        except CORBA.Exception:
            pass
        try:
            if svc is not None:
                p = svc.get_profile()
                kind, rate = str(p.kind), float(p.rate)
                props = from_nvlist(p.properties)
                owner_ref = p.owner
                if owner_ref is not None:
                    owner = self._name_of(owner_ref)
            else:
                kind, rate = str(ec.get_kind()), float(ec.get_rate())
            running = bool(ec.is_running())
        except CORBA.Exception:
            pass
        if owned:
            owner, owner_ref = info.name, ref
        handle = -1
        for who in (owner_ref, ref):
            if who is None:
                continue
            try:
                handle = int(who.get_context_handle(ec))
                break
            except CORBA.Exception:
                continue
        ec_id = f"{owner}:{handle}" if owner else f"{info.name}:p{handle}"
        return ContextInfo(id=ec_id, owner=owner, handle=handle, kind=kind, rate=rate,
                      running=running, properties=props)

    def _name_of(self, rto: Any) -> str:
        try:
            return rto.get_component_profile().instance_name
        except CORBA.Exception:
            return ""

    def close(self) -> None:
        """Nothing to release but the naming clients (the ORB is the process's)."""
        self._naming.clear()


def _port_info(pp: Any, port_names: dict[str, str],
               port_addr: dict[str, str] | None = None, orb: Any = None) -> PortInfo:
    props = from_nvlist(pp.properties)
    direction = _DIRECTIONS.get(props.get("port.port_type", ""), "service"
                                if pp.interfaces else "unknown")
    ifaces = [f"{'provided' if str(i.polarity) == 'PROVIDED' else 'required'} "
              f"{i.type_name}.{i.instance_name}" for i in pp.interfaces]
    conns = []
    for cp in pp.connector_profiles:
        ends = []
        for p in cp.ports:
            ends.append(_end_name(p, port_names, orb))
        conns.append(ConnectorInfo(id=cp.connector_id, name=cp.name, ports=ends,
                                   properties=from_nvlist(cp.properties),
                                   addresses=[(port_addr or {}).get(n, "") for n in ends]))
    return PortInfo(name=pp.name.split(".", 1)[-1], full_name=pp.name, direction=direction,
                    data_type=props.get("dataport.data_type", ""), properties=props,
                    connectors=conns, interfaces=ifaces)


def _end_name(p: Any, port_names: dict[str, str], orb: Any) -> str:
    """The full name of a connector's end: from the snapshot's ports, else asked of the port
    itself (a tool's port, a component not in the naming service), else '?'."""
    if p is None or orb is None:
        return "?"
    try:
        ior = orb.object_to_string(p)
    except CORBA.Exception:
        return "?"
    name = port_names.get(ior)
    if name is None:
        try:
            name = p.get_port_profile().name
        except CORBA.Exception:
            name = "?"
        port_names[ior] = name
    return name
