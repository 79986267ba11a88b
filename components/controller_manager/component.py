"""The ControllerManager RT component: pr2-style controllers at 1 kHz."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from rtcf import Component, Param, TimedDoubleSeq
from rtcf.datatypes import stamp
from rtcf.errors import ConfigError
from rtcf.paths import user_path
from rtcf.services import ServicePort

from rtcf_components.kinematics.model import ModelError, load_model

from . import controllers as bundled
from .config import EMPTY, load_config
from .controller import ControllerError, ControllerState
from .core import ControllerManagerCore
from .hardware import DcmHardware, PortHardware
from .profile import ProfileView
from .registry import import_controllers, reload_modules, watched_modules
from .robot import LoopbackHardware, RobotState
from .switching import Strictness, SwitchRefused

ROOT = Path(__file__).resolve().parents[2]


# controllerState (TimedDoubleSeq) layout: HEADER, then PER_CONTROLLER for each loaded
# controller in update order (listControllers gives the names in that order).
STATE_HEADER = ("ticks", "running", "tick_period", "overhead", "ec_overruns", "controllers")
STATE_PER_CONTROLLER = ("running", "update_rate", "period_last", "exec_last", "overruns",
                        "faults")
CONTROLLER_LOG_INTERVAL = 5.0   # [s] at most one controller-overrun warning in that time


def find_config(name: str) -> Path:
    """A controller config file: absolute, relative to the directory the command was typed
    in (RTCF_CWD, see rtcf.paths.user_path), or a file shipped in the project."""
    p = Path(name)
    cands = [user_path(p)] + ([] if p.is_absolute() else [ROOT / p])
    for cand in cands:
        if cand.is_file():
            return cand
    raise FileNotFoundError(f"controller_config {name!r} not found (looked in "
                            f"{user_path('.')} and {ROOT})")


def controller_folders(entries: list[str]) -> list[Path]:
    """controller_path entries as folders: absolute, or relative to the directory the
    command was typed in (a project folder as the fallback); FileNotFoundError names an
    entry that is in neither."""
    out = []
    for e in entries:
        p = Path(e)
        cands = [user_path(p)] + ([] if p.is_absolute() else [ROOT / p])
        found = next((c for c in cands if c.is_dir()), None)
        if found is None:
            raise FileNotFoundError(f"controller_path entry {e!r} is not a folder (looked "
                                    f"in {user_path('.')} and {ROOT})")
        out.append(found)
    return out


class ControllerManager(Component):
    """pr2-style real-time controller manager (pr2_controller_manager) over NAO's DCM.

    | port | type | unit | meaning |
    |---|---|---|---|
    | ControllerManagerService | service | - | RTController::ControllerManagerService as service0 (idl/ControllerManagerService.idl) |
    | q (in, hardware=ports) | TimedDoubleSeq | rad | measured joint positions, body order (connect DCM0.q) |
    | qRef (hardware=ports) | TimedDoubleSeq | rad | joint position commands, body order, NaN = no command (connect to DCM0.qRef) |
    | controllerState (out) | TimedDoubleSeq | s, Hz, counts | at state_rate: 6 header values (ticks, running controllers, tick period, manager overhead per tick, EC overruns, loaded controllers), then 6 per loaded controller in update order (running 1/0, update_rate, period passed to its last update, its last update's execution time, overruns, faults) |
    | qRef (in, hardware=simulator) | TimedDoubleSeq | rad | joint reference stream, model order, for controllers with reference: true (connect BlendingPlanner0.qRef) |
    | hardware (hardware=dcm, simulator) | service | - | requires the local interface DCMLocal / SimulatorLocal: connect it to DCM0.DCMService / Simulator0.SimulatorService in the composition (same process) |

    Each EC cycle runs one manager tick (core.ControllerManagerCore): read the
    hardware, start pending controllers, update the running ones in schedule order, write the
    hardware, stop pending ones. Run it alone on a periodic EC at 1 kHz. hardware=dcm drives
    the DCM its ``hardware`` port is connected to (commands enter through the DCM's
    preProcess); hardware=simulator the Simulator it is connected to (joint torques);
    hardware=ports uses the q / qRef ports (a DCM in another process); hardware=loopback is
    an ideal robot (benchmarks, dry runs). Deactivation stops every running controller.
    """

    type_name = "ControllerManager"
    category = "controller"
    hardware = Param(str, "dcm", choices=("dcm", "ports", "loopback", "simulator"),
                     read_only=True, doc="where joint state comes from and commands go")
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
    state_rate = Param(float, 10.0, unit="Hz", bounds=(0.0, 1000.0), read_only=True,
                       doc="controllerState publication rate; 0: not published")
    # status: what rtconf shows (set by the manager when a tool reads; see profile.py)
    running_controllers = Param(str, "", status=True,
                                doc="status: the running controllers, in update order")
    loaded_controllers = Param(str, "", status=True,
                               doc="status: every loaded controller, 'name (type, state)'")
    claimed_interfaces = Param(str, "", status=True,
                               doc="status: per controller, the interfaces it claims")

    # -- lifecycle -------------------------------------------------------------------------
    def on_initialize(self) -> None:
        """Runs in: the creating thread. Builds the robot state, loads the configured
        controllers (their init runs here, not in the EC thread) and checks the start list:
        a bad configuration stops the build before anything starts, as a ConfigError naming
        the file and the value."""
        try:
            self._initialize()
        except (ControllerError, ModelError, FileNotFoundError) as e:
            raise ConfigError(str(e)) from None

    def _initialize(self) -> None:
        # the joints and their limits from the robot model file (ros2_control reads them from
        # the robot description): the reader shared by every package that needs the model
        robot_model = load_model(self.model)
        joints, lower, upper = robot_model.joint_names, robot_model.lower, robot_model.upper
        if self.hardware == "simulator":
            from . import effort_controllers  # noqa: F401  (registers JointEffortController)
            from .sim_hardware import ReferenceRobotState
            self.robot = ReferenceRobotState(joints, lower, upper)
        else:
            self.robot = RobotState(joints, lower, upper)
        self.config: dict[str, Any] = dict(EMPTY)
        self.config_path: Path | None = None
        if self.controller_config:
            self.config_path = find_config(self.controller_config)
            self.config = load_config(self.config_path)
        hw: Any = None
        if self.hardware == "loopback":
            hw = LoopbackHardware(joints, lower=lower, upper=upper)
        elif self.hardware == "ports":
            q_in = self.add_in_port("q", TimedDoubleSeq)
            q_ref = self.add_out_port("qRef", TimedDoubleSeq)
            hw = PortHardware(joints, q_in, q_ref, self.qref_every)
        elif self.hardware == "simulator":
            from .sim_hardware import SimulatorHardware
            hw = SimulatorHardware(joints, self.add_in_port("qRef", TimedDoubleSeq))
        else:
            hw = DcmHardware(joints)
        self.hw = hw
        self.load_path = [str(p) for p in controller_folders(self.controller_path)]
        self.core = ControllerManagerCore(self.robot, hw, load_path=self.load_path,
                                          on_fault=self._on_fault)
        for mod in self.controller_modules:
            import_controllers(mod, self.load_path)
        self.state_out = self.add_out_port("controllerState", TimedDoubleSeq)
        self._state_size = -1
        self._state_every = 0
        self._state_tick = 0
        self._ec: Any = None
        self._logged = (0, -math.inf)          # controller overruns logged, when
        np.partition(np.zeros(16), [1, 2])     # numpy's first-call cost paid here, not
        #                                        in the first getStatistics (ORB thread)
        self.types_bundled = (bundled.JointPositionController.type_name,
                              bundled.JointTrajectoryController.type_name)
        for name in self.config["load"]:
            self.load_from_config(name)
        self._check_start()
        from .service import ControllerManagerServiceImpl   # needs the compiled stubs
        self.service = ControllerManagerServiceImpl(self)
        port = self.add_service_port(ServicePort("ControllerManagerService"))
        port.provide("service0", "ControllerManagerService", self.service)
        if self.hardware in ("dcm", "simulator"):
            # the DCM or Simulator of this process that the composition connects to this
            # port (a declared binding, checked before anything starts)
            peer, kind = (("DCM", "DCMLocal") if self.hardware == "dcm"
                          else ("Simulator", "SimulatorLocal"))
            port = self.add_service_port(ServicePort("hardware"))
            self.hardware_link = port.require(
                "hardware", kind, local=True,
                hint=f"hardware: {self.hardware} drives a {peer} of this process: connect it, "
                     f"e.g. {{from: {self.instance_name}.hardware, to: {peer}0.{peer}Service}}"
                     f" (hardware: ports reaches a DCM in another process)")
        self.profile_view = ProfileView(self)
        self.profile_view.refresh()

    def _check_start(self) -> None:
        """The config's start list as the activation will switch it (STRICT), checked now:
        two controllers claiming one interface, a claim the hardware does not take, a chain
        broken, a fallback that could not start. Runs in: the creating thread (before
        anything starts)."""
        if not self.config["start"]:
            return
        try:
            self.core.prepare_switch(self.config["start"], [], Strictness.STRICT)
        except SwitchRefused as e:
            raise ControllerError(f"{self.config_path}: start: {e.name!r} {e.why}"
                                  if e.kind == "start" else f"{self.config_path}: start: "
                                  f"{e}") from None

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
        """Runs in: EC thread. Binds the DCM or Simulator its ``hardware`` port is
        connected to, starts the configured controllers (two ticks from now)."""
        if self.hardware == "dcm" and self.hw.dcm is None:
            try:
                self.hw.bind(self.hardware_link.ref)
            except ValueError as e:
                raise ControllerError(f"{self.instance_name}: hardware: {e}") from None
        if self.hardware == "simulator" and self.hw.owner is None:
            self.hw.bind(self.hardware_link.ref)
        self.core.period = ec.period
        self.core.overrun_limit = self.overrun_us * 1e-6 if self.overrun_us > 0 else ec.period
        self._ec = ec.ec
        self._state_every = max(1, round(1.0 / (self.state_rate * ec.period))) \
            if self.state_rate > 0 else 0
        self._state_tick = 0
        if self.config["start"] and not self.core.switch_pending:
            self.core.begin_switch(self.core.prepare_switch(self.config["start"], [], 2))

    def on_execute(self, ec: Any) -> None:
        """Runs in: EC thread. One manager tick at the cycle's start time; every
        ``state_rate`` period, controllerState."""
        self.core.update(ec.now)
        if self._state_every:
            self._state_tick += 1
            if self._state_tick >= self._state_every:
                self._state_tick = 0
                self._publish_state(ec.now)

    def _publish_state(self, now: float) -> None:
        """Fill and write controllerState (layout: STATE_HEADER, STATE_PER_CONTROLLER).
        Runs in: EC thread; allocates only when the number of controllers changed."""
        core = self.core
        schedule = core.slots
        h, k = len(STATE_HEADER), len(STATE_PER_CONTROLLER)
        size = h + k * len(schedule)
        if size != self._state_size:
            self.state_out.value.data = np.zeros(size)
            self._state_size = size
        d = self.state_out.value.data
        running = 0
        i = h
        for slot in schedule:
            st = slot.stats
            on = slot.controller.state is ControllerState.RUNNING
            running += on
            d[i] = on
            d[i + 1] = slot.update_rate
            d[i + 2] = st.period_last
            d[i + 3] = st.last
            d[i + 4] = st.overruns
            d[i + 5] = st.faults
            i += k
        d[0] = core.ticks
        d[1] = running
        d[2] = core.period_last
        d[3] = core.overhead_last
        d[4] = self._ec.overruns if self._ec is not None else 0
        d[5] = len(schedule)
        stamp(self.state_out.value, now)
        self.state_out.write()

    def on_deactivated(self, ec: Any) -> None:
        """Runs in: EC thread."""
        self.core.stop_all(ec.now)

    def on_finalize(self) -> None:
        if isinstance(getattr(self, "hw", None), DcmHardware):
            self.hw.detach()

    def _on_fault(self, name: str, where: str, e: BaseException) -> None:
        """Runs in: EC thread, only when a controller raised (it has been stopped)."""
        self.log.error("controller %r: %s raised %s: %s; it is stopped", name, where,
                       type(e).__name__, e)

    # -- where people look: status line, final report, log, rtshell ----------------------
    def refresh_profile(self) -> None:
        """The controllers into the status parameters (rtconf) and the profile properties
        (rtcat -ll), when they changed. Runs in: an ORB thread, before a tool reads them;
        the main thread (status line)."""
        view = getattr(self, "profile_view", None)       # None before on_initialize
        if view is not None:
            view.refresh()

    def status(self) -> str:
        """A few words for the status line: running / loaded controllers, faults and
        overruns so far. Runs in: the manager's main thread (reads counters only)."""
        self.refresh_profile()
        rows = self.core.describe()
        run = [d["name"] for d in rows if d["state"] == "running"]
        faults = sum(d["faults"] for d in rows)
        over = sum(d["overruns"] for d in rows)
        return (f"{len(run)}/{len(rows)} controllers running ({', '.join(run) or '-'}), "
                f"{over} overruns, {faults} faults")

    def summary(self) -> str:
        """The final report: per controller its state, updates, cost and events."""
        rows = self.core.describe()
        if not rows:
            return "no controllers loaded"
        lines = [f"{len(rows)} controllers, {self.core.switches} switches"]
        for d in rows:
            rate = f"{d['update_rate']:g} Hz" if d["update_rate"] else "every tick"
            lines.append(f"  {d['name']} ({d['type']}, {rate}): {d['state']}, "
                         f"{d['updates']} updates, exec mean {d['mean'] * 1e6:.1f} us max "
                         f"{d['max'] * 1e6:.1f} us, {d['overruns']} overruns, "
                         f"{d['faults']} faults"
                         + (f" (last: {d['last_error']})" if d["last_error"] else ""))
        return "\n".join(lines)

    def log_warnings(self, now: float, interval: float = CONTROLLER_LOG_INTERVAL) -> None:
        """Warn about controllers whose updates overran, at most once per ``interval`` [s].
        Runs in: the manager's main thread (the Component hook), never the EC thread."""
        count, when = self._logged
        total = sum(slot.stats.overruns for slot in self.core.slots)   # cheap, 10 Hz
        if total > count and now - when >= interval:
            rows = self.core.describe()
            worst = ", ".join(f"{d['name']} {d['overruns']} (max {d['max'] * 1e3:.2f} ms)"
                              for d in rows if d["overruns"])
            self.log.warning("controller overruns (an update longer than %.3f ms): %d new; "
                             "so far %s", self.core.overrun_limit * 1e3, total - count, worst)
            self._logged = (total, now)

    def loop_figures(self) -> dict[str, Any]:
        """The EC's recent mean period and lateness p50 / p99 / max [s] over its kept
        history, and its overruns. Runs in: any thread; a copy and one partition (tens of
        us), never numpy's percentile (its first call held the GIL ~5 ms in an ORB thread
        and delayed the 1 kHz loop)."""
        ec = self._primary_ec
        if ec is None:
            return {}
        late, periods = ec.timing_rings()
        n = min(ec.cycles, late.size)
        out: dict[str, Any] = {"overruns": ec.overruns}
        if n > 0:
            sample = late[:n].copy()
            k50, k99 = (n - 1) // 2, min(n - 1, int(0.99 * (n - 1) + 0.5))
            sample.partition([k50, k99])
            out.update(lateness_p50=float(sample[k50]), lateness_p99=float(sample[k99]),
                       lateness_max=float(sample[k99:].max()))
        k = min(n - 1, max(1, int(ec.rate)))
        if k > 0:
            idx = (ec.cycles - 1 - np.arange(k)) % periods.size
            mean = float(periods[idx].mean())
            if mean > 0:
                out["mean_period"] = mean
        return out

    def reload_modules(self, restore: bool, service: Any) -> str:
        """Re-import the controller modules (see the IDL's reloadControllerModules).
        Runs in: a non-real-time thread."""
        core = self.core
        with core.admin:
            rows = core.describe()
            if rows and not restore:
                raise ControllerError(f"reloadControllerModules: {len(rows)} controllers are "
                                      f"loaded ({', '.join(d['name'] for d in rows)}); unload "
                                      f"them first, or restore them (--restore)")
            loaded = [(n, s.type_name, dict(s.params)) for n, s in core.loaded_slots().items()]
            was_running = [d["name"] for d in rows if d["state"] == "running"]
            if was_running:
                ok, msg, _ = service.switch([], was_running, 2, 2.0)
                if not ok:
                    raise ControllerError(f"reloadControllerModules: stopping {was_running} "
                                          f"failed: {msg}")
            for name, _, _ in reversed(loaded):
                core.unload(name, self.run_rt)
            modules = reload_modules()
            problems = []
            for name, type_name, params in loaded:
                try:
                    core.load(name, type_name, params, self.run_rt)
                except ControllerError as e:
                    problems.append(str(e))
            again = [n for n in was_running if n in core.loaded_slots()]
            if again:
                ok, msg, _ = service.switch(again, [], 2, 2.0)
                if not ok:
                    problems.append(msg)
        if problems:
            raise ControllerError(f"reloadControllerModules: modules {modules} re-imported, "
                                  f"but: {'; '.join(problems)}")
        return (f"re-imported {modules or 'no modules'} (watched: {watched_modules()}); "
                f"restored {[n for n, _, _ in loaded]}, restarted {again}"
                if loaded else f"re-imported {modules or 'no modules'}")

    # -- for the servant -------------------------------------------------------------------
    def run_rt(self, fn: Any, timeout: float = 2.0) -> Any:
        """Run ``fn`` between two ticks in the EC thread and return its result.
        Runs in: a non-real-time thread."""
        return self.call(fn, timeout=timeout)

    def is_active(self) -> bool:
        ec = self._primary_ec
        return ec is not None and ec.get_component_state(self).name == "ACTIVE"
