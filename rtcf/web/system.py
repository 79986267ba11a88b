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
from typing import Any

from ..corba.idl import ensure_stubs, stub_module
from ..corba.naming import NamingClient
from ..corba.nv import from_nvlist, nv_value
from ..corba.orb import init_orb

CALL_TIMEOUT_MS = 2000          # a hung component costs the view at most this per call
MAX_DEPTH = 6                   # naming contexts walked below the root
STATES = {0: "CREATED", 1: "INACTIVE", 2: "ACTIVE", 3: "ERROR"}


class ActionError(Exception):
    """An operation the page asked for was refused; the message says why (one line)."""


def _short_id(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:10]


def _state_name(st: Any) -> str:
    try:
        return STATES.get(int(st._v), str(st))
    except Exception:
        return str(st).replace("_STATE", "")


def _corba_error(e: Exception) -> str:
    text = getattr(e, "description", "") or getattr(e, "reason", "") or ""
    return f"{type(e).__name__}{': ' + text if text else ''}"


class SystemView:
    """Discovers the system through the naming services and keeps the last snapshot.

    ``nameservers``: ``host:port`` items, as rtshell's RTCTREE_NAMESERVERS."""

    def __init__(self, nameservers: list[str], orb: Any = None):
        ensure_stubs()
        import omniORB
        self.RTC = stub_module("RTC")
        self.SDO = stub_module("SDOPackage")
        self.orb = orb or init_orb({})
        omniORB.setClientCallTimeout(CALL_TIMEOUT_MS)
        self.nameservers = [n if ":" in n else f"{n}:2809" for n in nameservers]
        self._lock = threading.Lock()
        self._comps: dict[str, dict] = {}      # id -> {"ref", "ecs": [(id, ref)], ...}
        self._ecs: dict[str, Any] = {}         # ec id -> ref
        self._ports: dict[str, Any] = {}       # "comp id:port" -> PortService ref
        self.structure: dict[str, Any] = {"components": [], "connections": [], "ecs": []}
        self.errors: list[str] = []
        self.updated = 0.0

    # -- discovery ---------------------------------------------------------------------
    def _walk(self, client: NamingClient, ns: str, path: list[str], depth: int,
              out: list[tuple[str, Any]]) -> None:
        for ident, kind, is_ctx in client.list("/".join(path)):
            seg = f"{ident}.{kind}" if kind else ident
            if is_ctx and depth < MAX_DEPTH:
                self._walk(client, ns, path + [seg], depth + 1, out)
            elif kind == "rtc":
                full = "/".join(path + [seg])
                out.append((f"{ns}/{full}", client.resolve(full)))

    def _find(self) -> list[tuple[str, Any]]:
        found: list[tuple[str, Any]] = []
        for ns in self.nameservers:
            try:
                client = NamingClient(self.orb, ns, CALL_TIMEOUT_MS)
                self._walk(client, ns, [], 0, found)
            except Exception as e:
                self.errors.append(f"naming service {ns}: {_corba_error(e)}")
        return found

    def _ior(self, ref: Any) -> str:
        return self.orb.object_to_string(ref)

    def refresh_structure(self) -> dict[str, Any]:
        """Walk the naming services and read every component's profile, ports,
        connections, ECs and configuration. Runs in: a worker thread (~10 calls per
        component)."""
        with self._lock:
            self.errors = []
            comps, ecs, ports, port_names = {}, {}, {}, {}
            out_comps, conns, seen_conn = [], [], set()
            ec_info: dict[str, dict] = {}
            for path, obj in self._find():
                try:
                    ref = obj._narrow(self.RTC.RTObject)
                    if ref is None:
                        continue
                    prof = ref.get_component_profile()
                except Exception as e:
                    self.errors.append(f"{path}: {_corba_error(e)}")
                    continue
                cid = _short_id(path)
                entry: dict[str, Any] = {
                    "id": cid, "path": path, "name": prof.instance_name,
                    "type": prof.type_name, "category": prof.category,
                    "description": prof.description, "ports": [], "ecs": [],
                    "states": {}, "state": "UNKNOWN", "controller_manager": False,
                    "config": None}
                for pp in prof.port_profiles:
                    props = from_nvlist(pp.properties)
                    short = pp.name.split(".", 1)[-1]
                    ptype = props.get("port.port_type", "")
                    kind = ("out" if ptype == "DataOutPort" else
                            "in" if ptype == "DataInPort" else "service")
                    dtype = props.get("dataport.data_type", "")
                    ifaces = [{"name": i.instance_name, "type": i.type_name,
                               "polarity": "provided" if i.polarity == self.RTC.PROVIDED
                               else "required"} for i in pp.interfaces]
                    if any(i["type"].endswith("ControllerManagerService")
                           and i["polarity"] == "provided" for i in ifaces):
                        entry["controller_manager"] = True
                    entry["ports"].append({"name": short, "kind": kind,
                                           "type": dtype.split("/")[-1].split(":")[0],
                                           "data_type": dtype, "interfaces": ifaces})
                    ports[f"{cid}:{short}"] = pp.port_ref
                    port_names[self._ior(pp.port_ref)] = (cid, short, kind)
                    for cp in pp.connector_profiles:
                        if cp.connector_id in seen_conn:
                            continue
                        seen_conn.add(cp.connector_id)
                        conns.append(cp)
                comp_ecs = []
                for owned, lst in ((True, "get_owned_contexts"),
                                   (False, "get_participating_contexts")):
                    try:
                        refs = getattr(ref, lst)()
                    except Exception:
                        refs = []
                    for ec_ref in refs:
                        eid = _short_id(self._ior(ec_ref))
                        comp_ecs.append((eid, ec_ref))
                        ecs[eid] = ec_ref
                        info = ec_info.setdefault(eid, {"id": eid, "owner": None,
                                                        "members": []})
                        if owned:
                            info["owner"] = cid
                        if cid not in info["members"]:
                            info["members"].append(cid)
                entry["ecs"] = [e for e, _ in comp_ecs]
                entry["config"] = self._read_config(ref)
                comps[cid] = {"ref": ref, "ecs": comp_ecs}
                out_comps.append(entry)
            for eid, info in ec_info.items():
                info.update(self._read_ec(ecs[eid]))
                info.setdefault("name", f"ec-{eid[:4]}")
            out_conns = []
            for cp in conns:
                ends = [port_names.get(self._ior(p)) for p in cp.ports]
                ends = [e for e in ends if e is not None]
                props = from_nvlist(cp.properties)
                src = next((e for e in ends if e[2] == "out"), None)
                dst = next((e for e in ends if e[2] == "in"), None)
                if src is None or dst is None:
                    if len(ends) == 2 and all(e[2] == "service" for e in ends):
                        src, dst = ends
                    else:
                        continue     # an end outside the naming services (a tool's tap)
                out_conns.append({
                    "id": cp.connector_id, "name": cp.name,
                    "source": src[0], "source_port": src[1],
                    "target": dst[0], "target_port": dst[1],
                    "kind": "service" if src[2] == "service" else "data",
                    "subscription": props.get("dataport.subscription_type", ""),
                    "data_type": props.get("dataport.data_type", "")})
            self._comps, self._ecs, self._ports = comps, ecs, ports
            self.structure = {"components": out_comps, "connections": out_conns,
                              "ecs": sorted(ec_info.values(), key=lambda e: e["name"])}
        self.refresh_live()
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
        out: dict[str, Any] = {"kind": "", "rate": 0.0, "stats": {}}
        try:
            prof = ec_ref._narrow(self.RTC.ExecutionContextService).get_profile()
            props = from_nvlist(prof.properties)
            out["kind"] = str(prof.kind)
            out["rate"] = float(prof.rate)
            if props.get("name"):
                out["name"] = props["name"]
            out["stats"] = {k[6:]: _num(v) for k, v in props.items()
                            if k.startswith("stats.")}
        except Exception:
            try:
                out["rate"] = float(ec_ref.get_rate())
            except Exception as e:
                out["error"] = _corba_error(e)
        return out

    def refresh_live(self) -> dict[str, Any]:
        """States of every component in each of its ECs and the ECs' live timing. Runs in:
        a worker thread (one call per component and EC)."""
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
        return {**self.structure, "errors": list(self.errors), "time": self.updated,
                "nameservers": self.nameservers}

    # -- lookups -------------------------------------------------------------------------
    def component(self, cid: str) -> tuple[dict, Any]:
        for entry in self.structure["components"]:
            if entry["id"] == cid or entry["name"] == cid:
                return entry, self._comps[entry["id"]]
        raise ActionError(f"no component {cid!r} in the view (refresh the page?)")

    def port_ref(self, cid: str, port: str) -> tuple[dict, Any]:
        entry, _ = self.component(cid)
        for p in entry["ports"]:
            if p["name"] == port:
                return p, self._ports[f"{entry['id']}:{port}"]
        raise ActionError(f"{entry['name']}: no port {port!r}")

    # -- operations ----------------------------------------------------------------------
    def change_state(self, cid: str, action: str, ec_id: str | None = None) -> str:
        """activate | deactivate | reset ``cid`` in one EC (the first by default), as
        rtact / rtdeact / rtreset do."""
        if action not in ("activate", "deactivate", "reset"):
            raise ActionError(f"unknown action {action!r} (activate, deactivate, reset)")
        entry, c = self.component(cid)
        ecs = [(e, r) for e, r in c["ecs"] if ec_id in (None, "", e)]
        if not ecs:
            raise ActionError(f"{entry['name']}: no execution context {ec_id!r}")
        try:
            code = getattr(ecs[0][1], f"{action}_component")(c["ref"])
        except Exception as e:
            raise ActionError(f"{entry['name']}: {action} failed: {_corba_error(e)}") from None
        if code != self.RTC.RTC_OK:
            raise ActionError(f"{entry['name']}: {action} refused ({code})")
        return f"{entry['name']}: {action} accepted"

    def set_param(self, cid: str, set_id: str, name: str, value: str) -> str:
        """Set ``name`` in configuration set ``set_id`` to ``value`` (a string, as rtconf
        sends it) and re-activate the set when it is the active one: the component's own
        validation applies and a refusal comes back as an ActionError."""
        entry, c = self.component(cid)
        try:
            conf = c["ref"].get_configuration()
            cs = conf.get_configuration_set(set_id)
        except self.SDO.InvalidParameter as e:
            raise ActionError(_named(entry["name"], e.description)) from None
        except Exception as e:
            raise ActionError(f"{entry['name']}: {_corba_error(e)}") from None
        from omniORB import CORBA
        found = False
        for nv in cs.configuration_data:
            if nv.name == name:
                nv.value = CORBA.Any(CORBA.TC_string, str(value))
                found = True
        if not found:
            raise ActionError(f"{entry['name']}: no parameter {name!r} in set {set_id!r}")
        try:
            ok = conf.set_configuration_set_values(cs)
            active = conf.get_active_configuration_set().id
            if ok and active == set_id:
                ok = conf.activate_configuration_set(set_id)
        except (self.SDO.InvalidParameter, self.SDO.InternalError) as e:
            raise ActionError(_named(entry["name"], e.description)) from None
        except Exception as e:
            raise ActionError(f"{entry['name']}: {name}: {_corba_error(e)}") from None
        if not ok:
            raise ActionError(f"{entry['name']}: {name}={value!r} refused")
        return f"{entry['name']}: {set_id}.{name} = {value}"

    def activate_set(self, cid: str, set_id: str) -> str:
        entry, c = self.component(cid)
        try:
            ok = c["ref"].get_configuration().activate_configuration_set(set_id)
        except self.SDO.InvalidParameter as e:
            raise ActionError(_named(entry["name"], e.description)) from None
        except Exception as e:
            raise ActionError(f"{entry['name']}: {_corba_error(e)}") from None
        if not ok:
            raise ActionError(f"{entry['name']}: activating set {set_id!r} refused")
        return f"{entry['name']}: configuration set {set_id} active"


def _named(name: str, text: str) -> str:
    """``text`` prefixed with the component's name unless it names it already."""
    return text if text.startswith(f"{name}.") or text.startswith(f"{name}:") \
        else f"{name}: {text}"


def _any_text(value: Any) -> str:
    v = nv_value(value)
    return v if isinstance(v, str) else str(v)


def _num(text: str) -> float | str:
    try:
        return float(text)
    except ValueError:
        return text
