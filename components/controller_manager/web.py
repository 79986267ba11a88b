"""The controller manager's panel of the web view (an ``rtcf.web_panels`` entry point, see
rtcf/web/panels.py): its controllers through its provided
RTController::ControllerManagerService (idl/ControllerManagerService.idl), listed with their
statistics and the manager's, and switched (start / stop). The page's part is
``web_panel.js`` beside this file. Runs in: the web server's worker threads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rtcf.corba.client import provided_ior
from rtcf.corba.idl import stub_module
from rtcf.errors import ActionError
from rtcf.web.panels import Panel
from rtcf.web.system import SystemView, corba_error

from .switching import Strictness

SWITCH_TIMEOUT = 2.0      # [s] switchController waits at most this for the loop


class Controllers:
    """ControllerManagerService references per component, found once and kept."""

    def __init__(self, view: SystemView):
        self.view = view
        self._services: dict[str, Any] = {}

    def _service(self, cid: str) -> tuple[dict, Any]:
        entry, _ = self.view.component(cid)
        svc = self._services.get(entry["id"])
        if svc is not None:
            return entry, svc
        stub = stub_module("RTController").ControllerManagerService
        for port in entry["ports"]:
            for iface in port["interfaces"]:
                if (iface["polarity"] == "provided"
                        and iface["type"].endswith("ControllerManagerService")):
                    _, ref = self.view.port_ref(entry["id"], port["name"])
                    key = f"port.{iface['type']}.{iface['name']}"
                    try:
                        ior = provided_ior(ref, key, f"{entry['name']}.{port['name']}")
                    except Exception as e:
                        raise ActionError(str(e)) from None
                    if not ior:
                        raise ActionError(f"{entry['name']}: {port['name']} published no "
                                          f"{key}")
                    svc = self.view.orb.string_to_object(ior)._narrow(stub)
                    if svc is None:
                        raise ActionError(f"{entry['name']}: {key} is not a "
                                          f"ControllerManagerService")
                    self._services[entry["id"]] = svc
                    return entry, svc
        raise ActionError(f"{entry['name']} provides no ControllerManagerService")

    def describe(self, cid: str) -> dict[str, Any]:
        """Controllers (name, type, state, position), their statistics and the manager's."""
        entry, svc = self._service(cid)
        try:
            infos = svc.listControllers()
            stats = svc.getStatistics()
            types = list(svc.listControllerTypes())
        except Exception as e:
            self._services.pop(entry["id"], None)
            raise ActionError(f"{entry['name']}: {corba_error(e)}") from None
        per = {c.name: c for c in stats.controllers}
        ctrls = []
        for i in infos:
            s = per.get(i.name)
            ctrls.append({
                "name": i.name, "type": i.type, "state": i.state, "position": i.position,
                "updates": int(s.updates) if s else 0,
                "mean_us": s.mean_time * 1e6 if s else 0.0,
                "max_us": s.max_time * 1e6 if s else 0.0,
                "overruns": int(s.overruns) if s else 0,
                "faults": int(s.faults) if s else 0,
                "last_error": s.last_error if s else ""})
        return {"component": entry["id"], "name": entry["name"], "controllers": ctrls,
                "types": types,
                "manager": {"ticks": int(stats.ticks),
                            "period_mean_us": stats.period_mean * 1e6,
                            "lateness_p99_us": stats.lateness_p99 * 1e6,
                            "lateness_max_us": stats.lateness_max * 1e6,
                            "ec_overruns": int(stats.ec_overruns),
                            "overhead_mean_us": stats.overhead_mean * 1e6,
                            "switches": int(stats.switches)}}

    def act(self, cid: str, action: str, body: dict[str, Any]) -> str:
        """The panel's operations: ``switch`` with ``{"start": [...], "stop": [...]}``."""
        if action != "switch":
            raise ActionError(f"controllers: unknown operation {action!r} (switch)")
        start, stop = body.get("start", []), body.get("stop", [])
        if not (isinstance(start, list) and isinstance(stop, list)
                and all(isinstance(n, str) for n in start + stop)):
            raise ActionError('switch: expected {"start": [names], "stop": [names]}')
        return self.switch(cid, start, stop)

    def switch(self, cid: str, start: list[str], stop: list[str]) -> str:
        """switchController(start, stop, STRICT): the manager's refusal comes back as an
        ActionError with its message."""
        entry, svc = self._service(cid)
        try:
            ok, message = svc.switchController(list(start), list(stop),
                                               int(Strictness.STRICT), SWITCH_TIMEOUT)
        except Exception as e:
            raise ActionError(f"{entry['name']}: switch failed: {corba_error(e)}") from None
        if not ok:
            raise ActionError(f"{entry['name']}: switch refused: {message}")
        return f"{entry['name']}: started {', '.join(start) or '-'}, stopped " \
               f"{', '.join(stop) or '-'}"


PANEL = Panel(name="controllers", title="Controllers", interface="ControllerManagerService",
              script=Path(__file__).with_name("web_panel.js"), make=Controllers)
