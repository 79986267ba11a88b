"""Test harnesses without any ORB: one component on a stepped EC with a manual clock
(:class:`Harness`), or a whole composition on a paused simulation time base
(:class:`SimSystem`).

    h = Harness(MyComp, params={"gain": 2.0}, rate=100)
    h.activate()
    h.write("in", TimedDoubleSeq(data=[1, 2]))
    h.step(3)
    status, sample = h.read("out")

Every InPort of the component gets a feeding OutPort and every OutPort a probing InPort,
connected in-process with flush connectors (buffer length 1000 on the probes, so no sample is
lost between reads).

    with SimSystem("compositions/nao_sim.yaml") as system:
        system.advance(2.0)
        dcm = system["DCM0"]
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Mapping

from .clock import ManualClock
from .component import Component
from .datatypes import DataType
from .execution import SteppedEC
from .lifecycle import LifeCycleState, ReturnCode
from .ports import InPort, OutPort, ReadStatus, connect


class Harness:
    """One component on a stepped EC with a manual clock, its ports fed and probed in-process (see
    the module doc). Runs in: the test's thread: step() runs the cycles there."""
    def __init__(self, comp: type[Component] | Component, params: dict[str, Any] | None = None,
                 rate: float = 1000.0, name: str | None = None, start_time: float = 0.0,
                 config_set: str | None = None):
        self.comp = comp if isinstance(comp, Component) else comp(name)
        if params:
            self.comp.params.load(params, config_set)
        if config_set:
            self.comp.params.select_initial(config_set)
        self.clock = ManualClock(start_time)
        self.ec = SteppedEC(rate, name=f"{self.comp.instance_name}.harness", clock=self.clock)
        if not self.comp.initialized:
            self.comp.initialize()
        self.ec.add_component(self.comp, owned=True)
        self.feeders: dict[str, OutPort] = {}
        self.probes: dict[str, InPort] = {}
        for pname, port in self.comp.ports.items():
            if isinstance(port, InPort):
                feeder = OutPort(f"feed_{pname}", port.data_type)
                connect(feeder, port, {"subscription_type": "flush"})
                self.feeders[pname] = feeder
            elif isinstance(port, OutPort):
                probe = InPort(f"probe_{pname}", port.data_type)
                connect(port, probe, {"subscription_type": "flush", "buffer.length": 1000})
                self.probes[pname] = probe
        self.ec.start()

    # lifecycle (applied at the next step, as in a real EC cycle's pre-do)
    def activate(self, step: bool = True) -> ReturnCode:
        rc = self.ec.activate_component(self.comp)
        if step and rc == ReturnCode.RTC_OK:
            self.step()
        return rc

    def deactivate(self, step: bool = True) -> ReturnCode:
        rc = self.ec.deactivate_component(self.comp)
        if step and rc == ReturnCode.RTC_OK:
            self.step()
        return rc

    def reset(self, step: bool = True) -> ReturnCode:
        rc = self.ec.reset_component(self.comp)
        if step and rc == ReturnCode.RTC_OK:
            self.step()
        return rc

    @property
    def state(self) -> LifeCycleState:
        return self.ec.get_component_state(self.comp)

    @property
    def now(self) -> float:
        return self.clock.now()

    def step(self, n: int = 1) -> None:
        self.ec.step(n)

    def set_param(self, name: str, value: Any) -> None:
        self.comp.set_param(name, value)

    # data
    def write(self, port: str, sample: DataType) -> None:
        self.feeders[port].write(sample)

    def read(self, port: str) -> tuple[ReadStatus, DataType]:
        """The oldest unread sample the component wrote on ``port``."""
        probe = self.probes[port]
        status = probe.read()
        return status, probe.value

    def read_all(self, port: str) -> list[DataType]:
        """Every unread sample written on ``port`` (copies), oldest first."""
        probe = self.probes[port]
        out = []
        while probe.read() is ReadStatus.NEW:
            out.append(probe.value.copy())
        return out

    def read_latest(self, port: str) -> tuple[ReadStatus, DataType]:
        probe = self.probes[port]
        return probe.read_newest(), probe.value

    def close(self) -> None:
        if self.ec.is_running():
            self.ec.stop()
        self.comp.finalize()

    def __enter__(self) -> "Harness":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class SimSystem:
    """A composition built in this process on a paused simulation time base.

    For the demos, the acceptance tests and the benchmarks: the composition is loaded and
    checked as the command line loads it (:func:`rtcf.composition.load_composition`, its
    default instance names included) and built by the manager in simulation mode
    (rtcf.simtime: every EC a SimulationEC on one time base, here at real-time factor 0),
    with no ORB. The time base is held at t = 0 through the build and then paused;
    :meth:`advance` runs every EC cycle due in the next seconds of simulated time
    (``SimTimeBase.advance``: the ECs of different rates in lockstep, in composition order
    at a shared instant), so a run is deterministic and the caller can look at the
    components between two steps.

    composition: a file path (relative paths are read against the current directory);
    params: {instance: {param: value}} merged over the composition's params (an instance
    the composition does not declare is a CompositionError naming it).
    Runs in: the test's (or demo's) thread; advance() returns once the time base's thread
    ran the cycles due.
    """

    def __init__(self, composition: str | Path,
                 params: Mapping[str, Mapping[str, Any]] | None = None):
        from . import rtcconf
        from .composition import load_composition
        from .errors import CompositionError
        from .manager import Manager
        comp = load_composition(composition)
        overrides = dict(params or {})
        unknown = sorted(set(overrides) - {d.name for d in comp.components})
        if unknown:
            raise CompositionError(f"{composition}: params given for {unknown}, which the "
                                   f"composition does not declare (it declares "
                                   f"{[d.name for d in comp.components]})")
        comp = replace(comp, components=[
            replace(d, params={**d.params, **overrides[d.name]}) if d.name in overrides
            else d for d in comp.components])
        conf = rtcconf.merge_conf(rtcconf.defaults(), {
            "rtcf.simulation.enable": "YES", "rtcf.simulation.real_time_factor": "0"})
        self.manager = Manager(conf, corba=False)
        self.manager.sim_stop_at = 0.0           # held at t = 0 until paused below
        try:
            self.manager.build(comp)
        except BaseException:
            self.manager.shutdown()
            raise
        tb = self.time_base = self.manager.time_base
        tb.pause()
        tb.set_stop_time(None)

    @property
    def now(self) -> float:
        """The simulated time [s]."""
        return self.time_base.now

    def __getitem__(self, name: str) -> Any:
        return self.manager.components[name]

    def advance(self, seconds: float, each: Callable[[float], None] | None = None,
                step: float | None = None) -> float:
        """Run every cycle due in the next ``seconds`` of simulated time. With ``each``, the
        time runs in steps of ``step`` (default: the period of the first EC) and
        ``each(t)`` is called after each, t the simulated time the step began. Returns the
        new time. Runs in: the caller's thread (the EC threads run the cycles)."""
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
