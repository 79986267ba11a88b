"""The controllers as rtshell sees them: status parameters (``rtconf ... list``) and extra
properties of the component profile (``rtcat -ll``).

Built from ``ControllerManagerCore.describe()`` in the thread of the tool's request (an ORB
thread), only when the core's ``generation`` moved since the last build (a load, an unload,
a switch, a failure); the EC thread only counts. Facts about the tools: rtshell's rtcat
prints a component profile's ``properties`` under "Extra properties" with ``-ll``, and rtconf
prints the parameters of the active configuration set (rtshell-aist, rtcat.py / rtconf.py).
"""

from __future__ import annotations

import threading
from typing import Any

PROPERTY_PREFIX = "controller."      # controller.<name> per loaded controller
RUNNING_PROPERTY = "controllers.running"


def status_values(rows: list[dict[str, Any]]) -> dict[str, str]:
    """The status parameters from ``describe()`` rows (update order):

    * running_controllers: ``head_traj,head_pd``
    * loaded_controllers: ``head_traj (JointTrajectoryController, running),larm_pd (...)``
    * claimed_interfaces: ``head_pd: HeadYaw/position HeadPitch/position,larm_pd: ...``
      (every loaded controller that claims interfaces, running or not)
    """
    return {
        "running_controllers": ",".join(d["name"] for d in rows if d["state"] == "running"),
        "loaded_controllers": ",".join(f"{d['name']} ({d['type']}, {d['state']})"
                                       for d in rows),
        "claimed_interfaces": ",".join(f"{d['name']}: {' '.join(d['claims'])}"
                                       for d in rows if d["claims"]),
    }


def properties(rows: list[dict[str, Any]]) -> dict[str, str]:
    """Profile properties: ``controllers.running`` and one ``controller.<name>`` line per
    loaded controller (state, type, position, rate, claims, the controllers it depends
    on, fallbacks)."""
    out = {RUNNING_PROPERTY: ", ".join(d["name"] for d in rows if d["state"] == "running")
           or "-"}
    for d in rows:
        parts = [d["state"], d["type"], f"position {d['position']}",
                 f"{d['update_rate']:g} Hz" if d["update_rate"] else "every tick"]
        if d["claims"]:
            parts.append("claims " + " ".join(d["claims"]))
        if d["depends_on"]:
            parts.append("depends on " + " ".join(d["depends_on"]))
        if d["fallbacks"]:
            parts.append("fallbacks " + " ".join(d["fallbacks"]))
        out[PROPERTY_PREFIX + d["name"]] = ", ".join(parts)
    return out


class ProfileView:
    """Keeps a component's status parameters and profile properties in step with its
    controller manager core. ``refresh`` may run in several ORB threads at once."""

    def __init__(self, comp: Any):
        self.comp = comp
        self.built = -1                      # the core generation last published
        self.lock = threading.Lock()         # never taken by the EC thread

    def refresh(self) -> bool:
        """Rebuild when the core changed; True when it did. Runs in: an ORB thread or the
        main thread (never the EC thread)."""
        core = self.comp.core
        with self.lock:
            gen = core.generation
            if gen == self.built:
                return False
            for _ in range(3):               # a switch may land while we read
                rows = core.describe()
                now = core.generation
                if now == gen:
                    break
                gen = now
            self.comp.params.publish(status_values(rows))
            kept = {k: v for k, v in self.comp.properties.items()
                    if not k.startswith(PROPERTY_PREFIX) and k != RUNNING_PROPERTY}
            kept.update(properties(rows))
            self.comp.properties = kept      # one assignment: readers see old or new
            self.built = gen
            return True
