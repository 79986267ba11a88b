"""Run a simulation composition in this process in simulation time, one step at a time.

For the demos (scripts/sim_demo), the acceptance tests and the benchmarks: the composition
is loaded as scripts/run would load it and built by the manager in simulation mode
(rtcf.simtime: every EC a SimulationEC on one time base, here at real-time factor 0), with
no ORB. The time base is held at t = 0 through the build and then paused;
:meth:`SimSystem.advance` runs every EC cycle due in the next seconds of simulated time
(``SimTimeBase.advance``: the ECs of different rates in lockstep, in composition order at a
shared instant), so a run is deterministic and the caller can look at the components
between two steps.

    with SimSystem("compositions/nao_sim.yaml") as system:
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

__all__ = ["SimSystem", "ROOT"]


class SimSystem:
    """A composition built in process on a paused simulation time base (module doc).

    params: {instance: {param: value}} overrides merged into the composition's params.
    """

    def __init__(self, composition: str | Path,
                 params: Mapping[str, Mapping[str, Any]] | None = None):
        path = Path(composition)
        if not path.is_absolute():
            path = ROOT / path
        data = yaml.safe_load(path.read_text())
        comps = []
        for c in data.get("components", []):
            name = c.get("name") or f"{c['type']}0"
            if params and name in params:
                c = dict(c)
                c["params"] = {**(c.get("params") or {}), **params[name]}
            comps.append(c)
        data["components"] = comps
        conf = rtcconf.merge_conf(rtcconf.defaults(), {
            "manager.modules.load_path": str(ROOT / "components"),
            "rtcf.simulation.enable": "YES", "rtcf.simulation.real_time_factor": "0"})
        self.manager = Manager(conf, corba=False)
        self.manager.sim_stop_at = 0.0           # held at t = 0 until paused below
        try:
            self.manager.build(parse_composition(data, path.name))
        except BaseException:
            self.manager.shutdown()
            raise
        tb = self.time_base = self.manager.time_base
        tb.pause()
        tb.set_stop_time(None)
        self.cycles = 0

    @property
    def now(self) -> float:
        return self.time_base.now

    def __getitem__(self, name: str) -> Any:
        return self.manager.components[name]

    def advance(self, seconds: float, each: Callable[[float], None] | None = None,
                step: float | None = None) -> float:
        """Run every cycle due in the next ``seconds`` of simulated time. With ``each``, the
        time runs in steps of ``step`` (default: the period of the first EC) and
        ``each(t)`` is called after each, t the simulated time the step began. Returns the
        new time."""
        if not (isinstance(seconds, (int, float)) and math.isfinite(seconds) and seconds >= 0):
            raise ValueError(f"advance: expected seconds >= 0, got {seconds!r}")
        tb = self.time_base
        if each is None:
            return tb.advance(seconds)
        dt = step or next(iter(self.manager.ecs.values())).period
        n = int(round(seconds / dt))
        t0 = tb.now
        for k in range(n):
            t = t0 + k * dt
            tb.advance(t0 + (k + 1) * dt - tb.now)
            each(t)
        return tb.now

    def close(self) -> None:
        self.manager.shutdown()

    def __enter__(self) -> "SimSystem":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
