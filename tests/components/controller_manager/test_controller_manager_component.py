"""The ControllerManager component (shell, servant, hardware bindings) without an ORB
transport, on stepped ECs with manual clocks: the DCM bound in process (commands act in the
same DCM cycle), the port hardware, configured load/start, the servant's answers, switches
that block until the loop performed them, deactivation."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from omniORB import any as oany

from rtcf import SteppedEC, TimedDoubleSeq
from rtcf.composition import parse_composition
from rtcf.corba.idl import stub_module
from rtcf.errors import CompositionError
from rtcf.manager import Manager
from rtcf.services import connect_services
from rtcf.lifecycle import LifeCycleState
from rtcf.testing import Harness

from rtcf_components.controller_manager.component import ControllerManager
from rtcf_components.dcm.component import DCM

R = stub_module("RTController")

CONFIG = """
controllers:
  head_pd: {type: JointPositionController, joints: [HeadYaw, HeadPitch], kp: 1.0}
  head_traj: {type: JointTrajectoryController, joints: [HeadYaw], output: head_pd,
              interpolation: quintic}
  arm_pd: {type: JointPositionController, joints: [LShoulderPitch], kp: 0.5}
load: [head_pd, head_traj]
start: [head_pd]
"""


def P(**kw):
    return [R.Param(k, oany.to_any(v)) for k, v in kw.items()]


@pytest.fixture
def system(tmp_path):
    """DCM0 (1 ms cycle) and a ControllerManager bound to it, one stepped 1 kHz EC."""
    cfg = tmp_path / "ctrl.yaml"
    cfg.write_text(CONFIG)
    dcm = DCM("DCM0")
    dcm.params.load({"period_ms": 1})
    dcm.initialize()
    cm = ControllerManager("CM0")
    cm.params.load({"hardware": "dcm", "controller_config": str(cfg)})
    cm.initialize()
    connect_services(cm.service_ports["hardware"], dcm.service_ports["DCMService"])
    ec = SteppedEC(1000, name="ctl")
    ec.add_component(cm)
    ec.add_component(dcm)
    ec.start()
    ec.activate_component(dcm)
    ec.activate_component(cm)
    yield ec, cm, dcm
    ec.stop()
    cm.finalize()
    dcm.finalize()


def in_thread(fn, *args):
    box = []
    t = threading.Thread(target=lambda: box.append(fn(*args)), daemon=True)
    t.start()
    return t, box


def step_until_done(ec, t, wait=60.0):
    """Tick the stepped EC until the call in thread ``t`` has returned (a minute at most:
    on a loaded machine the thread may take long to get there)."""
    deadline = time.monotonic() + wait
    while t.is_alive() and time.monotonic() < deadline:
        time.sleep(0.002)
        ec.step(1)
    t.join(1.0)


def test_configured_controllers_are_loaded_and_started(system):
    ec, cm, dcm = system
    info = cm.service.listControllers()
    assert [(c.name, c.state, c.position) for c in info] == [
        ("head_traj", "initialized", 0), ("head_pd", "initialized", 1)]
    ec.step(3)     # tick 1: activation (switch queued), stop half; tick 2: starting
    assert [c.state for c in cm.service.listControllers()] == ["initialized", "running"]


def test_a_command_acts_in_the_same_dcm_cycle(system):
    ec, cm, dcm = system
    ec.step(3)
    ok, msg = cm.service.commandController("head_pd", P(setpoint=[0.3, -0.1]))
    assert ok, msg
    ec.step(1)
    yaw, pitch = cm.robot.index("HeadYaw"), cm.robot.index("HeadPitch")
    sent = dcm.core.values[dcm.devices.position_actuators[[yaw, pitch]]]
    assert sent.tolist() == pytest.approx([0.3, -0.1], abs=1e-12)   # kp = 1: the setpoint
    assert np.isnan(cm.robot.command[cm.robot.index("LShoulderPitch")])
    ec.step(300)                  # the simulated servo (tau 50 ms) gets there
    assert dcm.sensor_values[yaw] == pytest.approx(0.3, abs=1e-3)
    assert cm.robot.position[yaw] == pytest.approx(dcm.sensor_values[yaw], abs=1e-3)
    applied = cm.hw.commands_applied          # a steady command is not sent again
    ec.step(20)
    assert cm.hw.commands_applied == applied


def test_servant_load_switch_unload_round_trip(system):
    ec, cm, dcm = system
    s = cm.service
    ec.step(3)
    ok, msg = s.loadController("arm_pd", "", [])            # type and params from the config
    assert ok and "arm_pd" in msg
    ok, msg = s.loadController("arm_pd", "", [])
    assert not ok and "'arm_pd' is already loaded" in msg
    ok, msg = s.loadController("x", "NoSuchType", [])
    assert not ok and "unknown controller type 'NoSuchType'" in msg
    ok, msg = s.loadController("y", "JointPositionController", P(joints=["Nose"]))
    assert not ok and "unknown joint 'Nose'" in msg
    # head_traj writes head_pd's setpoint: stopping head_pd under it breaks the chain
    ok, msg = s.switchController(["arm_pd", "head_traj"], ["head_pd"], R.STRICT, 2.0)
    assert not ok and "'head_traj' depends on 'head_pd'" in msg
    assert not cm.core.switch_pending
    t, box = in_thread(s.switchController, ["arm_pd", "head_traj"], [], R.STRICT, 60.0)
    step_until_done(ec, t)
    assert box and box[0][0], box
    states = {c.name: c.state for c in s.listControllers()}
    assert states == {"head_traj": "running", "head_pd": "running", "arm_pd": "running"}
    ok, msg = s.unloadController("arm_pd")
    assert not ok and "is running" in msg
    ok, msg = s.unloadController("head_pd")
    assert not ok and "'head_traj' depends on it" in msg
    t, box = in_thread(s.switchController, [], ["arm_pd"], R.BEST_EFFORT, 60.0)
    step_until_done(ec, t)
    assert box[0][0]
    ok, msg = s.unloadController("arm_pd")
    assert ok, msg
    assert [c.name for c in s.listControllers()] == ["head_traj", "head_pd"]


def test_switch_refusals_change_nothing(system):
    ec, cm, dcm = system
    s = cm.service
    ec.step(3)
    ok, msg = s.switchController(["nope"], [], R.STRICT, 1.0)
    assert not ok and "no controller named 'nope'" in msg
    ok, msg = s.switchController([], [], 7, 1.0)
    assert not ok and "strictness: expected 0, 1 (BEST_EFFORT) or 2 (STRICT), got 7" in msg
    ok, msg = s.switchController([], [], 1, -1.0)
    assert not ok and "timeout: expected >= 0 s, got -1.0" in msg
    # nobody ticks: the request is withdrawn after the timeout and never performed
    ok, msg = s.switchController([], ["head_pd"], R.STRICT, 0.05)
    assert not ok and "did not take the switch within 0.05 s" in msg
    ec.step(5)
    assert cm.core.slot("head_pd").controller.is_running
    assert not cm.core.switch_pending


def test_deactivation_stops_every_controller_and_switch_needs_an_active_manager(system):
    ec, cm, dcm = system
    ec.step(3)
    ec.deactivate_component(cm)
    ec.step(1)
    assert [c.state for c in cm.service.listControllers()] == ["initialized", "initialized"]
    ok, msg = cm.service.switchController(["head_pd"], [], R.STRICT, 0.1)
    assert not ok and "CM0 is not active" in msg


def test_statistics(system):
    ec, cm, dcm = system
    ec.step(3 + 50)
    st = cm.service.getStatistics()
    assert st.ticks == 53 and st.period_nominal == pytest.approx(1e-3)
    assert st.period_min == pytest.approx(1e-3) and st.period_max == pytest.approx(1e-3)
    assert st.switches == 1
    pd = {c.name: c for c in st.controllers}["head_pd"]
    assert pd.updates == 52 and pd.state == "running" and pd.faults == 0
    assert pd.max_time >= pd.mean_time > 0
    vals = {p.name: oany.from_any(p.value) for p in cm.service.getControllerState("head_pd")}
    assert vals["joints"] == ["HeadYaw", "HeadPitch"] and len(vals["error"]) == 2
    with pytest.raises(R.ControllerError):
        cm.service.getControllerState("nope")


def _build(components, connections=()):
    comp = parse_composition({"name": "binding", "components": components,
                              "connections": list(connections),
                              "execution_contexts": [{"name": "ctl", "rate": 100, "members": [
                                  c.get("name") or f"{c['type']}0" for c in components]}]},
                             "binding.yaml")
    m = Manager({}, corba=False)
    try:
        m.build(comp, start=False)
    finally:
        names = sorted(m.components)
        m.shutdown()
    return names


DCM_DECL = {"type": "DCM", "module": "dcm"}
CM_DECL = {"type": "ControllerManager", "module": "controller_manager",
           "params": {"hardware": "dcm"}}


def test_a_dcm_manager_whose_hardware_port_is_not_connected_is_refused_before_start():
    """The binding to the DCM is declared in the composition (a connection of the manager's
    hardware port to the DCM's service port), never looked up by name: without it the build
    stops before anything starts, naming the place, the port and the line to add."""
    with pytest.raises(CompositionError) as e:
        _build([DCM_DECL, CM_DECL])
    msg = str(e.value)
    assert "binding.yaml: components[1]: ControllerManager0: service port 'hardware' " \
           "needs a DCMLocal" in msg and "is not connected" in msg
    assert "{from: ControllerManager0.hardware, to: DCM0.DCMService}" in msg
    with pytest.raises(CompositionError, match=r"is connected to Kinematics0.KinematicsService,"
                                               r" which provides no local DCMLocal"):
        _build([DCM_DECL, CM_DECL, {"type": "Kinematics", "module": "kinematics"}],
               [{"from": "ControllerManager0.hardware", "to": "Kinematics0.KinematicsService"}])
    assert _build([DCM_DECL, CM_DECL], [{"from": "ControllerManager0.hardware",
                                         "to": "DCM0.DCMService"}]) == \
        ["ControllerManager0", "DCM0"]


def test_port_hardware_reads_q_and_writes_qref_with_nan_for_free_joints():
    cm = ControllerManager("CM1")
    cm.params.load({"hardware": "ports"})
    with Harness(cm) as h:
        h.activate()
        q = np.linspace(-0.5, 0.5, 26)
        h.write("q", TimedDoubleSeq(data=q))
        ok, msg = cm.service.loadController("pd", "JointPositionController",
                                            P(joints=["HeadYaw", "LElbowRoll"]))
        assert ok, msg
        cm.core.request_switch(["pd"], [], 2)      # the harness owns the loop
        h.step(2)
        assert cm.robot.position.tolist() == pytest.approx(q.tolist())
        h.read_all("qRef")
        h.step(1)
        out = h.read_all("qRef")[-1].data
        held = [cm.robot.index("HeadYaw"), cm.robot.index("LElbowRoll")]
        assert out[held].tolist() == pytest.approx(q[held].tolist())
        assert np.isnan(np.delete(out, held)).all()


def test_bad_config_file_fails_initialisation_naming_it(tmp_path):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("controllers: {a: {joints: [HeadYaw]}}\n")
    cm = ControllerManager("CM2")
    cm.params.load({"hardware": "loopback", "controller_config": str(cfg)})
    with pytest.raises(Exception, match=r"bad.yaml: controllers.a: expected a mapping with a "
                                        r"'type'"):
        cm.initialize()


def test_dcm_hardware_reports_halted_while_every_hardness_is_zero(tmp_path):
    dcm = DCM("DCM0")
    dcm.params.load({"period_ms": 1, "initial_hardness": 0.0})
    dcm.initialize()
    cm = ControllerManager("CM3")
    cm.params.load({"hardware": "dcm"})
    cm.initialize()
    connect_services(cm.service_ports["hardware"], dcm.service_ports["DCMService"])
    ec = SteppedEC(1000, name="h")
    ec.add_component(cm)
    ec.add_component(dcm)
    ec.start()
    ec.activate_component(dcm)
    ec.activate_component(cm)
    try:
        ec.step(3)
        assert cm.hw.halted is True
        dcm.service.set("HeadYaw/Hardness/Actuator/Value", "Merge",
                        [stub_module("NAO").TimedCommand(1.0, dcm.now_ms, 0)])
        ec.step(2)
        assert cm.hw.halted is False
    finally:
        ec.stop()
        cm.finalize()
        dcm.finalize()


BOOM = """
from rtcf_components.controller_manager import Controller

class Boom(Controller):
    def init(self, robot, params):
        self.j = robot.joint("HeadYaw")
        self.at = params.get("at", 3)
        self.n = 0

    def update(self, time, period):
        self.n += 1
        if self.n == self.at:
            raise ZeroDivisionError("gain schedule empty")
        self.j.command = 0.1
"""


def test_controllers_from_the_load_path_and_a_raising_one_is_logged_and_stopped(
        tmp_path, caplog):
    (tmp_path / "boom_ctrls.py").write_text(BOOM)
    cm = ControllerManager("CM4")
    cm.params.load({"hardware": "loopback", "controller_path": [str(tmp_path)],
                    "controller_modules": ["boom_ctrls"]})
    with Harness(cm) as h:
        h.activate()
        s = cm.service
        assert "Boom" in s.listControllerTypes()
        assert s.loadController("b1", "Boom", [])[0]                     # registered name
        assert s.loadController("b2", "boom_ctrls.Boom", P(at=10**6))[0]  # dotted name
        cm.core.request_switch(["b1", "b2"], [], 2)
        with caplog.at_level("ERROR"):
            h.step(10)
        st = {c.name: c for c in s.getStatistics().controllers}
        assert st["b1"].state == "initialized" and st["b1"].faults == 1
        assert "ZeroDivisionError: gain schedule empty" in st["b1"].last_error
        assert st["b2"].state == "running" and st["b2"].updates == 9
        assert "controller 'b1': update raised ZeroDivisionError" in caplog.text
        assert h.state is LifeCycleState.ACTIVE                 # the manager keeps going


def _config_error(tmp_path, config: str) -> str:
    cfg = tmp_path / "ctl.yaml"
    cfg.write_text(config)
    cm = dict(CM_DECL, params={"hardware": "loopback", "controller_config": str(cfg)})
    with pytest.raises(CompositionError) as e:
        _build([cm])
    return str(e.value)


def test_controller_config_mistakes_are_refused_before_anything_starts(tmp_path):
    """Once a start list naming an unloaded controller, two started
    controllers claiming one interface, a fallback naming an unknown controller were
    accepted and failed at activation (the manager in ERROR while the run went on) or only
    when needed. Now the build stops before anything starts, naming the file and the
    value."""
    head = ("controllers:\n  a: {type: JointPositionController, joints: [HeadYaw]}\n"
            "  b: {type: JointPositionController, joints: [HeadYaw, HeadPitch]}\n")
    msg = _config_error(tmp_path, head + "load: [a]\nstart: [a, b]\n")
    assert "binding.yaml: components[0]: " in msg
    assert "ctl.yaml: start: 'b' is not in load (only loaded controllers start at " \
           "activation; load is ['a'])" in msg
    msg = _config_error(tmp_path, head + "load: [a, b]\nstart: [a, b]\n")
    assert "ctl.yaml: start: 'b' claims HeadYaw/position (owned by 'a')" in msg
    msg = _config_error(tmp_path, head.replace("joints: [HeadYaw]}",
                                               "joints: [HeadYaw], fallback_controllers: "
                                               "[ghost]}") + "load: [a]\nstart: [a]\n")
    assert "ctl.yaml: controllers.a.fallback_controllers: 'ghost' is not a controller of " \
           "this file (controllers: a, b)" in msg
    msg = _config_error(tmp_path, head.replace("joints: [HeadYaw]}",
                                               "joints: [HeadYaw], fallback_controllers: "
                                               "[b]}") + "load: [a]\nstart: [a]\n")
    assert "ctl.yaml: start: 'a' has the fallback 'b', which is not loaded" in msg
