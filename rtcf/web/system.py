"""The system as the web view sees it: every RT component bound in the naming services, with
its ports, connections, execution contexts (and their live timing), states and
configuration sets, as plain JSON-ready data; and the operations the page asks for, made
through the same CORBA interfaces rtshell uses (the EC's activate/deactivate/reset, the SDO
configuration interface as rtconf, RTController::ControllerManagerService).

Works against any OpenRTM-compatible component. Runs in: the web server's worker threads
(every call here blocks on CORBA); one lock serialises the refreshes.
"""

from __future__ import annotations

import hashlib
import threading
import time
from typing import Any, Iterable

from ..corba.idl import ensure_stubs, stub_module
from ..errors import ActionError
from ..corba.nv import from_nvlist, nv_value

CALL_TIMEOUT_MS = 2000          # a hung component costs the view at most this per call
STATES = {0: "CREATED", 1: "INACTIVE", 2: "ACTIVE", 3: "ERROR"}


def _short_id(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:10]


def _state_name(st: Any) -> str:
    try:
        return STATES.get(int(st._v), str(st))
    except Exception:
        return str(st).replace("_STATE", "")


def corba_error(e: Exception) -> str:
    """A CORBA exception in a few words for the page (its type and description)."""
    text = getattr(e, "description", "") or getattr(e, "reason", "") or ""
    return f"{type(e).__name__}{': ' + text if text else ''}"


class SystemView:
    """The system found by an :class:`rtcf.tools.session.Session` on its naming services,
    as the page's JSON, plus the references the live refresh and the operations need.

    ``refresh_structure`` takes the session's snapshot (profiles, ports, connections, ECs)
    and the configuration sets; ``refresh_live`` only asks each component's state in each
    of its ECs and each EC's profile (its ``stats.*`` timing), which is what changes."""

    def __init__(self, nameservers: list[str] | None, panels: Iterable[Any] = (),
                 panel_errors: Iterable[str] = ()):
        """panels: the installed web panels (rtcf/web/panels.py): a component whose ports
        provide an interface a panel serves lists it (``entry["panels"]``); panel_errors:
        the panels left out, shown with the view's errors."""
        from ..tools.session import Session
        self.session = Session(nameservers, CALL_TIMEOUT_MS)
        ensure_stubs()
        self.RTC = stub_module("RTC")
        self.SDO = stub_module("SDOPackage")
        self.orb = self.session.orb
        self.nameservers = self.session.nameservers
        self._lock = threading.RLock()
        self._comps: dict[str, dict] = {}      # id -> {"ref", "ior", "ecs": [(id, ref)]}
        self._ecs: dict[str, Any] = {}         # ec id -> ExecutionContextService ref
        self.structure: dict[str, Any] = {"components": [], "connections": [], "ecs": []}
        self.errors: list[str] = []
        self.panels = list(panels)
        self.panel_errors = list(panel_errors)
        self.updated = 0.0

    def _refs(self, cid: str, address: str, ec_ids: list[str]) -> dict | None:
        """The component's reference and its ECs' (in the snapshot's order), kept while
        the name still resolves to the same object (a naming look-up, no call to it)."""
        try:
            _, ref = self.session.component(address)
        except Exception as e:
            self.errors.append(str(e))
            return None
        ior = self.orb.object_to_string(ref)
        old = self._comps.get(cid)
        if old is not None and old["ior"] == ior and len(old["ecs"]) == len(ec_ids):
            return old
        refs = list(ref.get_owned_contexts()) + list(ref.get_participating_contexts())
        refs = [r for r in refs if r is not None]
        return {"ref": ref, "ior": ior, "ecs": list(zip(ec_ids, refs))}

    def refresh_structure(self) -> dict[str, Any]:
        """Everything: the session's snapshot, references, configuration sets. Runs in: a
        worker thread."""
        with self._lock:
            self.errors = []
            snap = self.session.snapshot()
            self.errors += snap.errors
            by_name, port_at, comps, out_comps = {}, {}, {}, []
            for c in snap.components:
                cid = _short_id(c.address)
                by_name.setdefault(c.name, cid)
                ports = []
                for p in c.ports:
                    port_at[f"{c.address}:{p.name}"] = (cid, p.name, p.direction)
                    ifaces = [_iface(text) for text in p.interfaces]
                    ports.append({"name": p.name, "kind": p.direction,
                                  "type": p.data_type.split("/")[-1].split(":")[0],
                                  "data_type": p.data_type, "interfaces": ifaces})
                ec_ids = [_short_id(e) for e in c.owned_ecs + c.participating_ecs]
                entry = {"id": cid, "path": c.address, "name": c.name, "type": c.type_name,
                         "category": c.category, "description": c.description,
                         "ports": ports, "ecs": ec_ids, "states": {}, "state": c.state,
                         "panels": [pn.name for pn in self.panels if any(
                             i["polarity"] == "provided" and pn.serves(i["type"])
                             for p in ports for i in p["interfaces"])],
                         "config": None}
                if c.state != "UNREACHABLE":
                    refs = self._refs(cid, c.address, ec_ids)
                    if refs is not None:
                        comps[cid] = refs
                        entry["config"] = self._read_config(refs["ref"])
                out_comps.append(entry)
            ecs_out, ec_refs = [], {}
            for e in snap.ecs:
                eid = _short_id(e.id)
                ecs_out.append({"id": eid, "name": e.properties.get("name") or e.id,
                                "kind": e.kind, "rate": e.rate,
                                "owner": by_name.get(e.owner),
                                "members": [by_name[m] for m in e.members if m in by_name],
                                "stats": _stats(e.properties)})
                for entry in out_comps:
                    if entry["name"] in e.states and eid in entry["ecs"]:
                        entry["states"][eid] = e.states[entry["name"]]
            for refs in comps.values():
                for eid, ref in refs["ecs"]:
                    ec_refs.setdefault(eid, ref)
            conns = []
            for k in snap.connections():
                ends = [port_at.get(a) for a in k.addresses]
                ends = [e for e in ends if e is not None]
                src = next((e for e in ends if e[2] == "out"), None)
                dst = next((e for e in ends if e[2] == "in"), None)
                if src is None or dst is None:
                    if len(ends) == 2 and all(e[2] == "service" for e in ends):
                        src, dst = ends
                    else:
                        continue     # an end outside the naming services (a tool's tap)
                conns.append({"id": k.id, "name": k.name, "source": src[0],
                              "source_port": src[1], "target": dst[0], "target_port": dst[1],
                              "kind": "service" if src[2] == "service" else "data",
                              "subscription": k.properties.get(
                                  "dataport.subscription_type", "")})
            self._comps, self._ecs = comps, ec_refs
            self.structure = {"components": out_comps, "connections": conns,
                              "ecs": sorted(ecs_out, key=lambda e: e["name"])}
            self.updated = snap.time
        return self.structure

    def _read_config(self, ref: Any) -> dict[str, Any] | None:
        try:
            conf = ref.get_configuration()
            sets = conf.get_configuration_sets()
            try:
                active = conf.get_active_configuration_set().id
            except Exception:
                active = ""
        except Exception:
            return None
        return {"active": active,
                "sets": [{"id": s.id, "values": {nv.name: _any_text(nv.value)
                                                 for nv in s.configuration_data}}
                         for s in sets if not s.id.startswith("__")]}

    def _read_ec(self, ec_ref: Any) -> dict[str, Any]:
        try:
            prof = ec_ref._narrow(self.RTC.ExecutionContextService).get_profile()
        except Exception as e:
            return {"error": corba_error(e)}
        return {"rate": float(prof.rate), "stats": _stats(from_nvlist(prof.properties))}

    def refresh_live(self) -> dict[str, Any]:
        """States of every component in each of its ECs and the ECs' live timing. Runs in:
        a worker thread (one call per component and EC, to the components' processes)."""
        with self._lock:
            structure = self.structure
            for entry in structure["components"]:
                c = self._comps.get(entry["id"])
                if c is None:
                    continue
                states = {}
                for eid, ec_ref in c["ecs"]:
                    try:
                        states[eid] = _state_name(ec_ref.get_component_state(c["ref"]))
                    except Exception:
                        states[eid] = "UNREACHABLE"
                entry["states"] = states
                entry["state"] = next(iter(states.values()), "NO EC")
            for ec in structure["ecs"]:
                ref = self._ecs.get(ec["id"])
                if ref is not None:
                    ec.update(self._read_ec(ref))
            self.updated = time.time()
        return structure

    def snapshot(self) -> dict[str, Any]:
        return {**self.structure, "errors": self.panel_errors + list(self.errors),
                "time": self.updated, "nameservers": self.nameservers,
                "panels": [{"name": p.name, "title": p.title,
                            "script": f"/panels/{p.name}.js"} for p in self.panels]}

    def port_handle(self, cid: str, port: str) -> Any:
        """The session's PortHandle of an out port (for a tap). ActionError when it is not
        one."""
        from ..tools.session import ToolError
        entry, _ = self.component(cid)
        with self._lock:
            try:
                return self.session.port(f"{entry['path']}:{port}", "out")
            except ToolError as e:
                raise ActionError(str(e)) from None

    # -- lookups -------------------------------------------------------------------------
    def component(self, cid: str) -> tuple[dict, Any]:
        for entry in self.structure["components"]:
            if (entry["id"] == cid or entry["name"] == cid) and entry["id"] in self._comps:
                return entry, self._comps[entry["id"]]
        raise ActionError(f"no component {cid!r} in the view (refresh the page?)")

    def port_ref(self, cid: str, port: str) -> tuple[dict, Any]:
        """(port entry, RTC::PortService) of a port of a component in the view."""
        entry, c = self.component(cid)
        for p in entry["ports"]:
            if p["name"] == port:
                for pp in c["ref"].get_ports():
                    if pp.get_port_profile().name.split(".", 1)[-1] == port:
                        return p, pp
        raise ActionError(f"{entry['name']}: no port {port!r}")

    # -- operations ----------------------------------------------------------------------
    def change_state(self, cid: str, action: str, ec_id: str | None = None) -> str:
        """activate | deactivate | reset ``cid`` in one of its ECs (the first by default)
        with the session's change_state, as rtact / rtdeact / rtreset do."""
        from ..tools.session import ToolError
        entry, _ = self.component(cid)
        index = 0
        if ec_id:
            if ec_id not in entry["ecs"]:
                raise ActionError(f"{entry['name']}: no execution context {ec_id!r}")
            index = entry["ecs"].index(ec_id)
        with self._lock:
            try:
                self.session.change_state(entry["path"], action, index)
            except ToolError as e:
                raise ActionError(str(e)) from None
        return f"{entry['name']}: {action} accepted"

    def _sdo(self, entry: dict, what: str, fn: Any) -> Any:
        """``fn()`` (SDO configuration calls); a refusal or a failure becomes an
        ActionError naming the component (and ``what``)."""
        try:
            return fn()
        except (self.SDO.InvalidParameter, self.SDO.InternalError) as e:
            raise ActionError(_named(entry["name"], e.description)) from None
        except Exception as e:
            raise ActionError(f"{entry['name']}: {what}{corba_error(e)}") from None

    def set_param(self, cid: str, set_id: str, name: str, value: str) -> str:
        """Set ``name`` in configuration set ``set_id`` to ``value`` (a string, as rtconf
        sends it), then activate again the set that was active: the component's own
        validation applies and a refusal comes back as an ActionError.

        The active set is read *before* the change, as rtshell's rtconf does: an
        OpenRTM-aist component has no active set after set_configuration_set_values
        (ConfigAdmin.setConfigurationSetValues clears its active flag, and
        get_active_configuration_set raises NotAvailable) until activate_configuration_set
        is called; asking afterwards left it so. When no set was active, the edited set is
        activated, so the component always ends with one."""
        entry, c = self.component(cid)
        conf = self._sdo(entry, "", c["ref"].get_configuration)
        try:
            active = conf.get_active_configuration_set().id
        except Exception:          # NotAvailable: no set active (OpenRTM-aist)
            active = ""
        cs = self._sdo(entry, "", lambda: conf.get_configuration_set(set_id))
        from omniORB import CORBA
        found = False
        for nv in cs.configuration_data:
            if nv.name == name:
                nv.value = CORBA.Any(CORBA.TC_string, str(value))
                found = True
        if not found:
            raise ActionError(f"{entry['name']}: no parameter {name!r} in set {set_id!r}")

        def apply() -> bool:
            ok = conf.set_configuration_set_values(cs)
            if ok:
                ok = conf.activate_configuration_set(active or set_id)
            return ok
        if not self._sdo(entry, f"{name}: ", apply):
            raise ActionError(f"{entry['name']}: {name}={value!r} refused")
        return f"{entry['name']}: {set_id}.{name} = {value}"

    def activate_set(self, cid: str, set_id: str) -> str:
        entry, c = self.component(cid)
        if not self._sdo(entry, "", lambda: c["ref"].get_configuration()
                         .activate_configuration_set(set_id)):
            raise ActionError(f"{entry['name']}: activating set {set_id!r} refused")
        return f"{entry['name']}: configuration set {set_id} active"


def _named(name: str, text: str) -> str:
    """``text`` prefixed with the component's name unless it names it already."""
    return text if text.startswith(f"{name}.") or text.startswith(f"{name}:") \
        else f"{name}: {text}"


def _iface(text: str) -> dict[str, str]:
    """``provided Type.instance`` (the session's form) -> the page's dict."""
    polarity, _, rest = text.partition(" ")
    type_name, _, instance = rest.rpartition(".")
    return {"polarity": polarity, "type": type_name, "name": instance}


def _stats(props: dict[str, str]) -> dict[str, float | str]:
    """The EC's ``stats.*`` profile properties (rtcf ECs) as numbers."""
    return {k[6:]: _num(v) for k, v in props.items() if k.startswith("stats.")}


def _any_text(value: Any) -> str:
    v = nv_value(value)
    return v if isinstance(v, str) else str(v)


def _num(text: str) -> float | str:
    try:
        return float(text)
    except ValueError:
        return text
