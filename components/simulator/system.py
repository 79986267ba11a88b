"""Run a simulation composition in this process on stepped execution contexts.

For the demos (scripts/sim_demo), the acceptance tests and the benchmarks: the composition
is loaded as scripts/run would load it, every execution context is made ``stepped`` (no ORB,
no threads), and :meth:`SteppedSystem.advance` runs every EC cycle due in the next seconds of
simulated time, in time order (ECs due at the same instant in composition order), so ECs of
different rates stay in lockstep and a run is deterministic.

    with SteppedSystem("compositions/nao_sim.yaml") as system:
        system.advance(2.0)
        dcm = system["DCM0"]
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable, Mapping

import yaml

from rtcf import rtcconf
from rtcf.composition import parse_composition
from rtcf.manager import Manager

ROOT = Path(__file__).resolve().parents[2]

__all__ = ["SteppedSystem", "ROOT"]


class SteppedSystem:
    """A composition built in process with stepped ECs (see the module doc).

    params: {instance: {param: value}} overrides merged into the composition's params;
    drop: instance names left out (with their connections and EC membership).
    """

    def __init__(self, composition: str | Path, params: Mapping[str, Mapping[str, Any]] |
                 None = None, drop: tuple[str, ...] = ()):
        path = Path(composition)
        if not path.is_absolute():
            path = ROOT / path
        data = yaml.safe_load(path.read_text())
        data.pop("simulation", None)          # this runner is its own time base
        comps = []
        for i, c in enumerate(data.get("components", [])):
            name = c.get("name") or f"{c['type']}0"
            if name in drop:
                continue
            if params and name in params:
                c = dict(c)
                c["params"] = {**(c.get("params") or {}), **params[name]}
            comps.append(c)
        data["components"] = comps
        data["connections"] = [
            c for c in data.get("connections", [])
            if c["from"].split(".")[0] not in drop and c["to"].split(".")[0] not in drop]
        for ec in data["execution_contexts"]:
            ec["kind"] = "stepped"
            ec["members"] = [m for m in ec["members"] if m not in drop]
        if "activate" in data and isinstance(data["activate"], list):
            data["activate"] = [a for a in data["activate"] if a not in drop]
        conf = rtcconf.merge_conf(rtcconf.defaults(), {
            "manager.modules.load_path": str(ROOT / "components")})
        self.manager = Manager(conf, corba=False)
        self.manager.build(parse_composition(data, path.name))
        self.ecs = list(self.manager.ecs.values())
        self._ticks = [0 for _ in self.ecs]        # cycles run by each EC
        self.now = 0.0
        self.cycles = 0

    def __getitem__(self, name: str) -> Any:
        return self.manager.components[name]

    def advance(self, seconds: float, each: Callable[[float], None] | None = None) -> float:
        """Run every cycle due in the next ``seconds`` of simulated time; ``each(t)`` is
        called after each cycle of the first (fastest-listed) EC. Returns the new time."""
        if not (isinstance(seconds, (int, float)) and math.isfinite(seconds) and seconds >= 0):
            raise ValueError(f"advance: expected seconds >= 0, got {seconds!r}")
        end = self.now + seconds
        eps = 1e-9
        while True:
            due = [n * ec.period for n, ec in zip(self._ticks, self.ecs)]
            k = min(range(len(self.ecs)), key=lambda i: (due[i], i))
            t = due[k]
            if t >= end - eps:
                break
            self.ecs[k].tick()
            self.cycles += 1
            self._ticks[k] += 1
            if each is not None and k == 0:
                each(t)
        self.now = end
        return self.now

    def close(self) -> None:
        self.manager.shutdown()

    def __enter__(self) -> "SteppedSystem":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
