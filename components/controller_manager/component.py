"""The ControllerManager RT component: pr2-style controllers at 1 kHz (spec section 5)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from rtcf import Component, Param, TimedDoubleSeq
from rtcf.component import find_component
from rtcf.controller import (ControllerError, ControllerManagerCore, LoopbackHardware,
                             RobotState, import_controllers)
from rtcf.services import ServicePort

from dcm.component import find_model
from dcm.devices import DeviceTable

from . import controllers as bundled
from .hardware import DcmHardware, PortHardware

ROOT = Path(__file__).resolve().parents[2]


def find_config(name: str) -> Path:
    """A controller config file: absolute, relative to the working folder or the project."""
    p = Path(name)
    for cand in (p, ROOT / p):
        if cand.is_file():
            return cand
    raise FileNotFoundError(f"controller_config {name!r} not found (looked in . and {ROOT})")


def load_config(path: Path) -> dict[str, Any]:
    """Read and check a controller config file::

        controllers:                       # name -> type and params (PR2's param server)
          head_pd: {type: JointPositionController, joints: [HeadYaw, HeadPitch], kp: 1.0}
        load: [head_pd]                    # loaded at on_initialize, in this order
        start: [head_pd]                   # started at each activation
    """
    try:
        doc = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as e:
        raise ControllerError(f"{path}: not valid YAML: {e}") from None
    if not isinstance(doc, dict) or set(doc) - {"controllers", "load", "start"}:
        raise ControllerError(f"{path}: expected a mapping with keys controllers, load, "
                              f"start; got {sorted(doc) if isinstance(doc, dict) else doc!r}")
    ctrls = doc.get("controllers") or {}
    if not isinstance(ctrls, dict):
        raise ControllerError(f"{path}: controllers: expected a mapping, got {ctrls!r}")
    for name, entry in ctrls.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("type"), str):
            raise ControllerError(f"{path}: controllers.{name}: expected a mapping with a "
                                  f"'type', got {entry!r}")
    for key in ("load", "start"):
        names = doc.get(key) or []
        if not isinstance(names, list) or any(n not in ctrls for n in names):
            raise ControllerError(f"{path}: {key}: expected a list of names from "
                                  f"controllers, got {names!r}")
    return {"controllers": ctrls, "load": doc.get("load") or [],
            "start": doc.get("start") or []}


class ControllerManager(Component):
    """pr2-style real-time controller manager (pr2_controller_manager) over NAO's DCM.

    | port | type | unit | meaning |
    |---|---|---|---|
    | ControllerManagerService | service | - | RTController::ControllerManagerService as service0 (idl/ControllerManagerService.idl) |
    | q (in, hardware=ports) | TimedDoubleSeq | rad | measured joint positions, body order (connect DCM0.q) |
    | qRef (hardware=ports) | TimedDoubleSeq | rad | joint position commands, body order, NaN = no command (connect to DCM0.qRef) |
    | qRef (in, hardware=simulator) | TimedDoubleSeq | rad | joint reference stream, model order, for controllers with reference: true (connect BlendingPlanner0.qRef) |

    Each EC cycle runs one manager tick (rtcf.controller.ControllerManagerCore): read the
    hardware, start pending controllers, update the running ones in schedule order, write the
    hardware, stop pending ones. Run it alone on a periodic EC at 1 kHz. hardware=dcm binds
    to the DCM instance named by ``dcm`` in this process (commands enter through its
    preProcess); hardware=ports uses the q / qRef ports; hardware=loopback is an ideal robot
    (benchmarks, dry runs). Deactivation stops every running controller.
    """

    type_name = "ControllerManager"
    category = "controller"
    hardware = Param(str, "dcm", choices=("dcm", "ports", "loopback", "simulator"),
                     read_only=True, doc="where joint state comes from and commands go")
    simulator = Param(str, "Simulator0", read_only=True,
                      doc="instance name of the Simulator (hardware=simulator: effort "
                          "interface, components/controller_manager/sim_hardware.py)")
    dcm = Param(str, "DCM0", read_only=True, doc="instance name of the DCM (hardware=dcm)")
    model = Param(str, "nao_h25_v5.yaml", read_only=True,
                  doc="robot model file: the joints of the robot state (body order)")
    controller_config = Param(str, "", read_only=True,
                              doc="YAML file: controller types/params, load and start lists")
    controller_modules = Param(list, [], elem=str, read_only=True,
                               doc="modules (on controller_path) whose controllers register")
    controller_path = Param(list, [], elem=str, read_only=True,
                            doc="folders searched for controller modules")
    overrun_us = Param(float, 0.0, unit="us", bounds=(0.0, None), read_only=True,
                       doc="an update longer than this is an overrun; 0: the EC period")
    qref_every = Param(int, 1, bounds=(1, 1000), read_only=True,
                       doc="hardware=ports: write qRef every that many ticks")

    # -- lifecycle -------------------------------------------------------------------------
    def on_initialize(self) -> None:
        """Runs in: the creating thread. Builds the robot state, loads the configured
        controllers (their init runs here, not in the EC thread)."""
        devices = DeviceTable.from_model(find_model(self.model))
        lim = devices.joint_limits
        if self.hardware == "simulator":
            from . import effort_controllers  # noqa: F401  (registers JointEffortController)
            from .sim_hardware import EffortRobotState
            self.robot = EffortRobotState(devices.joint_names, lim[:, 0], lim[:, 1])
        else:
            self.robot = RobotState(devices.joint_names, lim[:, 0], lim[:, 1])
        self.config: dict[str, Any] = {"controllers": {}, "load": [], "start": []}
        if self.controller_config:
            self.config = load_config(find_config(self.controller_config))
        hw: Any = None
        if self.hardware == "loopback":
            hw = LoopbackHardware(devices.joint_names, lower=lim[:, 0], upper=lim[:, 1])
        elif self.hardware == "ports":
            q_in = self.add_in_port("q", TimedDoubleSeq)
            q_ref = self.add_out_port("qRef", TimedDoubleSeq)
            hw = PortHardware(devices.joint_names, q_in, q_ref, self.qref_every)
        elif self.hardware == "simulator":
            from .sim_hardware import SimulatorHardware
            hw = SimulatorHardware(devices.joint_names, self.add_in_port("qRef", TimedDoubleSeq))
        self.hw = hw
        self.core = ControllerManagerCore(self.robot, hw, load_path=self.controller_path,
                                          on_fault=self._on_fault)
        for mod in self.controller_modules:
            import_controllers(mod, self.controller_path)
        self.types_bundled = (bundled.JointPositionController.type_name,
                              bundled.JointTrajectoryController.type_name)
        for name in self.config["load"]:
            self.load_from_config(name)
        from .service import ControllerManagerServiceImpl   # needs the compiled stubs
        self.service = ControllerManagerServiceImpl(self)
        port = self.add_service_port(ServicePort("ControllerManagerService"))
        port.provide("service0", "ControllerManagerService", self.service)

    def load_from_config(self, name: str, run_rt: Any = None) -> None:
        """Load controller ``name`` with the type and params of controller_config.
        Runs in: a non-real-time thread."""
        entry = self.config["controllers"].get(name)
        if entry is None:
            raise ControllerError(f"loadController({name!r}): no type given and "
                                  f"controller_config has no entry {name!r}")
        params = {k: v for k, v in entry.items() if k != "type"}
        if run_rt is None:
            self.core.load(name, entry["type"], params)
        else:
            self.core.load(name, entry["type"], params, run_rt)

    def on_activated(self, ec: Any) -> None:
        """Runs in: EC thread. Binds the DCM (hardware=dcm), starts the configured
        controllers (two ticks from now)."""
        if self.hardware == "dcm" and self.hw is None:
            dcm = find_component(self.dcm)
            if dcm is None or not hasattr(dcm, "at_pre_process"):
                raise ControllerError(f"{self.instance_name}: hardware=dcm but no DCM named "
                                      f"{self.dcm!r} lives in this process (use "
                                      f"hardware=ports across processes)")
            hw = DcmHardware(dcm)
            if hw.joint_names != self.robot.joint_names:
                raise ControllerError(f"{self.instance_name}: DCM {self.dcm!r} has other "
                                      f"joints than model {self.model!r}")
            hw.attach()
            self.hw = self.core.hardware = hw
        if self.hardware == "simulator" and self.hw.owner is None:
            sim = find_component(self.simulator)
            if sim is None:
                raise ControllerError(f"{self.instance_name}: hardware=simulator but no "
                                      f"Simulator named {self.simulator!r} lives in this "
                                      f"process")
            self.hw.bind(sim)
        self.core.period = ec.period
        self.core.overrun_limit = self.overrun_us * 1e-6 if self.overrun_us > 0 else ec.period
        if self.config["start"] and not self.core.switch_pending:
            self.core.begin_switch(self.core.prepare_switch(self.config["start"], [], 2))

    def on_execute(self, ec: Any) -> None:
        """Runs in: EC thread. One manager tick at the cycle's start time."""
        self.core.update(ec.now)

    def on_deactivated(self, ec: Any) -> None:
        """Runs in: EC thread."""
        self.core.stop_all(ec.now)

    def on_finalize(self) -> None:
        if isinstance(self.hw, DcmHardware):
            self.hw.detach()

    def _on_fault(self, name: str, where: str, e: BaseException) -> None:
        """Runs in: EC thread, only when a controller raised (it has been stopped)."""
        self.log.error("controller %r: %s raised %s: %s; it is stopped", name, where,
                       type(e).__name__, e)

    # -- for the servant -------------------------------------------------------------------
    def run_rt(self, fn: Any, timeout: float = 2.0) -> Any:
        """Run ``fn`` between two ticks in the EC thread and return its result.
        Runs in: a non-real-time thread."""
        return self.call(fn, timeout=timeout)

    def is_active(self) -> bool:
        ec = self._primary_ec
        return ec is not None and ec.get_component_state(self).name == "ACTIVE"
