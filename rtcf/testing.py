"""Harness: run one component without any ORB on a stepped EC with a manual clock.

    h = Harness(MyComp, params={"gain": 2.0}, rate=100)
    h.activate()
    h.write("in", TimedDoubleSeq(data=[1, 2]))
    h.step(3)
    status, sample = h.read("out")

Every InPort of the component gets a feeding OutPort and every OutPort a probing InPort,
connected in-process with flush connectors (buffer length 1000 on the probes, so no sample is
lost between reads).
"""

from __future__ import annotations

from typing import Any

from .clock import ManualClock
from .component import Component
from .datatypes import DataType
from .execution import SteppedEC
from .lifecycle import LifeCycleState, ReturnCode
from .ports import InPort, OutPort, ReadStatus, connect


class Harness:
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
