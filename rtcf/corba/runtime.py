"""The CORBA side of a manager: ORB, naming, servants for components, ports and ECs.

``CorbaRuntime(manager)`` initialises the ORB from rtc.conf, finds the naming services of
``corba.nameservers`` (starting omniNames on that loopback address when none answers; with
``connect_naming=False`` only when the first name is bound), and from then on the manager
registers every component and EC here. Components are bound under ``naming.formats``
(between hold_bindings() and release_bindings() a system being built binds nothing), kept
bound by a re-registration loop (naming.update.*), and at exit only the names this process
bound and still holds are unbound. Its liveness thread (liveness.py) removes connections
whose peers died or stay silent (rtcf.connector.check_interval, rtcf.connector.
suspect_timeout); ``connection_note()`` summarises them for the status line.
"""

from __future__ import annotations

import os
import socket
import threading
from typing import TYPE_CHECKING, Any

from .. import rtcconf
from ..component import Component
from ..execution import ExecutionContext
from ..log import get_logger
from ..ports import InPort, OutPort
from .dataport import DataPortServant
from .ecservice import ECServant, ec_servant
from .idl import ensure_stubs, stub_module
from .liveness import DEFAULT_CHECK_INTERVAL, DEFAULT_SUSPECT_TIMEOUT, Liveness
from .naming import (NamingClient, Reregistrar, ensure_naming_service, format_names,
                     object_alive)
from .nv import to_nvlist
from .orb import init_orb, root_poa, shutdown_orb
from .rtobject import RTObjectServant

if TYPE_CHECKING:
    from ..manager import Manager

RTC = stub_module("RTC")
log = get_logger("corba")


def _is_loopback_name(host: str) -> bool:
    return host in ("localhost", "127.0.0.1", "::1", "") or host.startswith("127.")


class CorbaRuntime:
    """The process's CORBA side: the ORB, the servants of its components, ECs and ports, the
    naming service bindings, connections through the PortServices. Runs in: the manager's main
    thread, except where a method says otherwise."""
    def __init__(self, manager: "Manager | None" = None, conf: dict[str, str] | None = None,
                 connect_naming: bool = True):
        ensure_stubs()
        self.manager = manager
        source = conf if conf is not None else (
            manager.conf if manager is not None else rtcconf.defaults())
        # a Conf keeps where each key came from, for error messages (-o, rtc.conf:12)
        self.conf = source.copy() if isinstance(source, rtcconf.Conf) else dict(source)
        self.orb = init_orb(self.conf)
        self.poa = root_poa()
        self.rtobjects: dict[str, RTObjectServant] = {}    # instance name -> servant
        self.ports: dict[int, list] = {}                  # id(component) -> port servants
        self.ecs: dict[int, ECServant] = {}                # id(ec) -> servant
        self.inports: dict[str, Any] = {}                  # connector id -> InPortCdrServant
        self.naming: list[NamingClient] = []
        self.naming_handles: list[Any] = []
        self.bindings: dict[str, list] = {}                # instance -> naming paths
        self._rereg: Reregistrar | None = None
        self._held: list | None = None                     # (comp, ref) not bound yet
        self._bound: dict[tuple[str, str], Any] = {}       # (naming url, path) -> our ref
        self._displaced: dict[tuple[str, str], Any] = {}   # ... -> the live ref it replaced
        self._naming_done = False
        self._own_naming: set[str] = set()                 # urls of omniNames we started
        self._reaper: Any = None                           # reaper.py (see _reap)
        self._lock = threading.RLock()
        self.liveness: Liveness | None = Liveness(
            self,
            rtcconf.get_float(self.conf, "rtcf.connector.check_interval",
                              DEFAULT_CHECK_INTERVAL, gt=0),
            rtcconf.get_float(self.conf, "rtcf.connector.suspect_timeout",
                              DEFAULT_SUSPECT_TIMEOUT, gt=0))
        if connect_naming:
            self.ensure_naming()

    # -- naming --------------------------------------------------------------------------
    def ensure_naming(self) -> None:
        """Find (or start) the naming services of corba.nameservers, once."""
        if self._naming_done or not rtcconf.get_bool(self.conf, "naming.enable", True):
            return
        self._naming_done = True
        for item in rtcconf.get_list(self.conf, "corba.nameservers"):
            host, _, port = item.partition(":")
            port_n = int(port or 2809)
            try:
                handle = ensure_naming_service(host or "127.0.0.1", port_n,
                                               start=_is_loopback_name(host))
            except Exception as e:
                log.warning("naming service %s unavailable: %s", item, e)
                continue
            if handle.started:
                log.info("started omniNames on %s:%d (data in %s; it stops with this "
                         "process; to restart it by hand meanwhile: %s)", handle.host, port_n,
                         handle.log_dir, " ".join(handle.restart_command()))
                self.naming_handles.append(handle)
            try:
                client = NamingClient(self.orb, f"{handle.host}:{port_n}")
                self.naming.append(client)
                if handle.started:
                    self._own_naming.add(client.url)
            except Exception as e:
                log.warning("naming service %s unusable: %s", item, e)
        if self._update_enabled() and self.naming:
            interval = rtcconf.get_float(self.conf, "naming.update.interval", 10.0, gt=0)
            self._rereg = Reregistrar(self.naming, {}, interval)
            self._rereg.start()

    def _update_enabled(self) -> bool:
        """naming.update.enable (YES by default, as OpenRTM-aist: re-register every
        naming.update.interval = 10 s)."""
        return rtcconf.get_bool(self.conf, "naming.update.enable", True)

    def hold_bindings(self) -> None:
        """Register components from now on without binding their names (a system being
        built: nothing binds before every check passed)."""
        self._held = []

    def release_bindings(self) -> None:
        """Bind the names held since hold_bindings()."""
        held, self._held = self._held, None
        for comp, ref in held or []:
            if self.rtobjects.get(comp.instance_name) is not None:
                self._bind(comp, ref)

    def discard_held_bindings(self) -> None:
        self._held = None

    def names_of(self, comp: Component) -> list[str]:
        fmt = self.conf.get("naming.formats", "%h.host_cxt/%n.rtc")
        paths = format_names(fmt, instance=comp.instance_name, type=comp.type_name,
                             hostname=socket.gethostname(), vendor=comp.vendor,
                             version=comp.version, category=comp.category,
                             manager=self.conf.get("manager.name", "manager"),
                             pid=os.getpid())
        return ["/".join(f"{i}.{k}" if k else i for i, k in p) for p in paths]

    # -- servants ------------------------------------------------------------------------
    def activate(self, servant: Any) -> Any:
        oid = self.poa.activate_object(servant)
        servant._rtcf_oid = oid
        return self.poa.id_to_reference(oid)

    def deactivate(self, servant: Any) -> None:
        oid = getattr(servant, "_rtcf_oid", None)
        if oid is not None:
            try:
                self.poa.deactivate_object(oid)
            except Exception:
                pass
            servant._rtcf_oid = None

    def local_servant(self, ref: Any) -> Any:
        """The servant behind ``ref`` when it lives in this process, else None.
        Runs in: any thread (ORB threads ask it)."""
        if ref is None:
            return None
        try:
            return self.poa.reference_to_servant(ref)
        except Exception:
            return None

    def register_component(self, comp: Component) -> Any:
        with self._lock:
            servant = RTObjectServant(comp, self)
            servant.ref = self.activate(servant)
            servant.config_ref = self.activate(servant.config)
            comp.servant = servant
            self.rtobjects[comp.instance_name] = servant
            port_servants = []
            for port in comp.ports.values():
                if isinstance(port, (InPort, OutPort)):
                    ps = DataPortServant(port, self)
                    ps.ref = self.activate(ps)
                    port_servants.append(ps)
            for sport in comp.service_ports.values():
                from .serviceport import ServicePortServant
                ps = ServicePortServant(sport, self)
                ps.ref = self.activate(ps)
                port_servants.append(ps)
            self.ports[id(comp)] = port_servants
        self._bind(comp, servant.ref)
        return servant.ref

    def _bind(self, comp: Component, ref: Any) -> None:
        if self._held is not None:
            self._held.append((comp, ref))
            return
        self.ensure_naming()
        paths = self.names_of(comp)
        self.bindings[comp.instance_name] = paths
        for client in self.naming:
            for path in paths:
                try:
                    self._bind_one(client, path, ref, comp)
                except Exception as e:
                    log.warning("binding %s in %s failed: %s", path, client.url, e)
        if self._rereg is not None:
            for path in paths:
                self._rereg.bindings[path] = ref

    def _bind_one(self, client: NamingClient, path: str, ref: Any, comp: Component) -> None:
        """Bind path to ref; warn, naming both, when a live object of another process held
        it (its ref is kept and restored when we unbind, if it still lives then)."""
        try:
            held = client.resolve(path)
        except (LookupError, ValueError):
            held = None
        except Exception:
            held = None
        if held is not None and not held._is_equivalent(ref) and object_alive(held):
            other = "an object"
            try:
                from .idl import stub_module as _sm
                prof = held._narrow(_sm("RTC").RTObject).get_component_profile()
                other = f"component {prof.instance_name} (type {prof.type_name})"
            except Exception:
                pass
            log.warning("%s: the name %s in %s was held by %s of another live process; "
                        "it now names %s (type %s) of this process (pid %d); the other one "
                        "gets it back when this process ends", comp.instance_name, path,
                        client.url, other, comp.instance_name, comp.type_name, os.getpid())
            self._displaced[(client.url, path)] = held
        client.bind(path, ref)
        self._bound[(client.url, path)] = ref
        if client.url not in self._own_naming:
            before = self._displaced.get((client.url, path))
            self._reap({"bind": [client.url, path, self.orb.object_to_string(ref),
                                 self.orb.object_to_string(before) if before else ""]})

    def _stop_reaper(self) -> None:
        """We unbound in order: the reaper ends without touching anything."""
        with self._lock:
            reaper, self._reaper = self._reaper, None
        if not reaper:
            return
        try:
            reaper.stdin.write('{"quit": true}\n')
            reaper.stdin.close()
        except (OSError, ValueError):
            pass
        try:
            reaper.wait(3.0)
        except Exception:
            reaper.kill()

    def _reap(self, msg: dict) -> None:
        """Tell reaper.py (started on first use, in its own session) what we bound in a
        naming service we did not start: if this process dies without unbinding (kill -9),
        the reaper does it. Runs in: any thread."""
        import json
        import subprocess
        import sys
        from pathlib import Path

        from ..realtime import spawning_normal
        with self._lock:
            if self._reaper is None:
                if "bind" not in msg:
                    return
                try:
                    with spawning_normal():
                        self._reaper = subprocess.Popen(
                            [sys.executable, str(Path(__file__).with_name("reaper.py"))],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True, text=True)
                except OSError as e:
                    log.warning("cannot start the naming reaper: %s", e)
                    self._reaper = False
                    return
            if not self._reaper:
                return
            try:
                self._reaper.stdin.write(json.dumps(msg) + "\n")
                self._reaper.stdin.flush()
            except (OSError, ValueError):
                pass

    def _unbind_paths(self, paths: list) -> None:
        """Unbind only what this process bound and still holds; give a displaced live
        holder its name back."""
        for path in paths:
            if self._rereg is not None:
                self._rereg.bindings.pop(path, None)
            for client in self.naming:
                key = (client.url, path)
                ours = self._bound.pop(key, None)
                before = self._displaced.pop(key, None)
                if ours is None:
                    continue
                self._reap({"unbind": [client.url, path]})
                try:
                    try:
                        held = client.resolve(path)
                    except LookupError:
                        continue
                    if not held._is_equivalent(ours):
                        continue                 # someone else holds it now: theirs
                    if before is not None and object_alive(before):
                        client.bind(path, before)
                    else:
                        client.unbind(path)
                except Exception:
                    pass

    def unregister_component(self, comp: Component) -> None:
        with self._lock:
            servant = self.rtobjects.pop(comp.instance_name, None)
            ports = self.ports.pop(id(comp), [])
        if self._held:
            self._held = [(c, r) for c, r in self._held if c is not comp]
        self._unbind_paths(self.bindings.pop(comp.instance_name, []))
        for ps in ports:
            try:
                ps.close()
            except Exception:
                log.exception("closing port %s failed", getattr(ps, "port", ps))
            self.deactivate(ps)
        if servant is not None:
            servant.close()
            self.deactivate(servant.config)
            self.deactivate(servant)
        comp.servant = None

    def register_ec(self, ec: ExecutionContext) -> Any:
        servant = ec_servant(ec, self)
        servant.ref = self.activate(servant)
        ec.servant = servant
        self.ecs[id(ec)] = servant
        return servant.ref

    def component_ref(self, comp: Component | None) -> Any:
        """The RTObject reference of ``comp`` in this process, or None. Runs in: any thread."""
        if comp is None:
            return None
        s = self.rtobjects.get(comp.instance_name)
        return s.ref if s is not None and s.comp is comp else None

    def ec_ref(self, ec: ExecutionContext) -> Any:
        """Runs in: any thread."""
        s = self.ecs.get(id(ec))
        return s.ref if s is not None else None

    def port_servants(self, comp: Component) -> list:
        """Runs in: any thread."""
        return list(self.ports.get(id(comp), []))

    def all_port_servants(self) -> list:
        """Runs in: any thread (the liveness thread)."""
        with self._lock:
            return [ps for servants in self.ports.values() for ps in servants]

    def connection_note(self) -> str:
        """For the status line: lost and suspect connections ("" when there are none)."""
        lv = self.liveness
        if lv is None:
            return ""
        parts = []
        suspects = lv.suspects()
        if suspects:
            parts.append(f"{len(suspects)} connection(s) not answering: " +
                         ", ".join(sorted({g.port_servant.full_name for g in suspects})))
        if lv.events:
            parts.append(f"{lv.lost} connection(s) lost, last: {lv.events[-1]}")
        return "; ".join(parts)

    def port_servant(self, port: Any) -> Any:
        """Runs in: any thread."""
        for ps in self.ports.get(id(port.owner), []):  # data and service ports
            if ps.port is port:
                return ps
        return None

    def local_component(self, ref: Any) -> Component | None:
        """Runs in: any thread (ORB threads)."""
        s = self.local_servant(ref)
        return s.comp if isinstance(s, RTObjectServant) else None

    def local_ec(self, ref: Any) -> ExecutionContext | None:
        """Runs in: any thread (ORB threads)."""
        s = self.local_servant(ref)
        return s.ec if isinstance(s, ECServant) else None

    # -- operations used by the manager --------------------------------------------------
    def connect(self, out: OutPort, inp: InPort, props: dict[str, str],
                name: str = "") -> Any:
        """Connect two ports of this process through their PortServices, so the connection
        shows in their connector profiles (rtcat) while data still moves in-process."""
        a, b = self.port_servant(out), self.port_servant(inp)
        full = {"dataport." + k if not k.startswith("dataport.") else k: v
                for k, v in props.items()}
        full.setdefault("dataport.dataflow_type", "push")
        full.setdefault("dataport.interface_type", "corba_cdr")
        full.setdefault("dataport.subscription_type", "flush")
        full.setdefault("dataport.data_type", out.data_type.REPO_ID)
        cp = RTC.ConnectorProfile(name or f"{out.full_name}_{inp.full_name}", "",
                                  [a.ref, b.ref], to_nvlist(full))
        code, cp = a.connect(cp)
        if code != RTC.RTC_OK:
            from ..errors import PortError
            raise PortError(f"connect {out.full_name} -> {inp.full_name} failed: {code}")
        return out.connectors.get(cp.connector_id)

    def connect_services(self, a: Any, b: Any, name: str = "") -> str:
        """Connect two service ports of this process through their PortServices."""
        sa, sb = self.port_servant(a), self.port_servant(b)
        cp = RTC.ConnectorProfile(name or f"{a.full_name}_{b.full_name}", "",
                                  [sa.ref, sb.ref], [])
        code, cp = sa.connect(cp)
        if code != RTC.RTC_OK:
            from ..errors import PortError
            raise PortError(f"connect {a.full_name} -- {b.full_name} failed: {code}")
        return cp.connector_id

    def exit_component(self, comp: Component) -> None:
        """LightweightRTObject.exit from a tool: runs in a helper thread so the CORBA call
        returns first (the servant is deactivated on the way).
        Runs in: an ORB thread (the exit call); the exit itself in its own thread."""
        def run() -> None:
            try:
                comp.exit()
            finally:
                mgr = self.manager
                if mgr is not None and not mgr.components:
                    mgr.request_stop()
        threading.Thread(target=run, name=f"rtcf-exit-{comp.instance_name}",
                         daemon=True).start()

    def shutdown(self) -> None:
        if self.liveness is not None:
            self.liveness.stop()
            self.liveness = None
        if self._rereg is not None:
            self._rereg.stop()
        for name in list(self.bindings):
            self._unbind_paths(self.bindings.pop(name, []))
        self._stop_reaper()
        shutdown_orb(wait=False)
        for handle in self.naming_handles:
            handle.stop()
        self.naming_handles.clear()
