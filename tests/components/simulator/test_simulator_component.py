"""The Simulator component on a stepped EC (rtcf.testing.Harness, no ORB) and its servant."""

import logging
import math
import re
from pathlib import Path

import numpy as np
import pytest

from rtcf import LifeCycleState, PortEvent, ReadStatus, TimedDoubleSeq
from rtcf.testing import Harness

from rtcf_components.examples.components import SineGenerator
from rtcf_components.simulator import component as simulator_component
from rtcf_components.simulator.component import Simulator
from rtcf_components.simulator.service import Simulation

G = 9.81


@pytest.fixture
def nao():
    h = Harness(Simulator, rate=100)
    h.activate()
    yield h
    h.close()


@pytest.fixture
def arm():
    h = Harness(Simulator, params={"model": "m1013"}, rate=1000)
    h.activate()
    yield h
    h.close()


def latest(h, port):
    status, v = h.read_latest(port)
    assert status is ReadStatus.NEW, port
    return v


def seq(values):
    return TimedDoubleSeq(data=np.asarray(values, dtype=float))


def test_ports_follow_robothardware_names(nao, arm):
    assert {"qRef", "tauRef", "stiffness", "q", "dq", "tau", "gsensor", "gyrometer",
            "lfsensor", "rfsensor", "basePos", "baseRpy", "zmp"} <= set(nao.comp.ports)
    assert "SimulatorService" in nao.comp.service_ports
    # the fixed arm has no IMU, feet or base pose
    assert set(arm.comp.ports) == {"qRef", "tauRef", "stiffness", "q", "dq", "tau"}


def test_outputs_are_stamped_with_the_cycle_time_and_the_robot_stands(nao):
    nao.step(100)
    w = nao.comp.sim_model.mass * G
    lf, rf = latest(nao, "lfsensor"), latest(nao, "rfsensor")
    t = lf.tm.sec + lf.tm.nsec * 1e-9
    assert t == pytest.approx(nao.now - 0.01, abs=1e-9)     # the last cycle's time
    assert lf.data[2] + rf.data[2] == pytest.approx(w, rel=0.02)
    acc = latest(nao, "gsensor").data
    assert math.hypot(acc.ax, acc.ay, acc.az) == pytest.approx(G, rel=0.01)
    assert latest(nao, "basePos").data.z > 0.3
    z = latest(nao, "zmp").data
    assert abs(z.y) < 0.01 and -0.05 < z.x < 0.1
    q = latest(nao, "q")
    assert q.data.shape == (26,) and latest(nao, "tau").data.shape == (26,)


def test_only_ports_in_use_are_written_but_every_value_is_current(arm):
    """An out port without a connection or a listener is not written (nothing would see the
    sample); its value is still the current state, stamped with the cycle's time."""
    comp = arm.comp
    comp.dq_out.disconnect_all()                     # no reader on dq any more
    q0, dq0 = comp.q_out.writes, comp.dq_out.writes
    arm.step(4)
    dq = comp.sim.sensors.dq.copy()                  # the state the next cycle writes
    arm.step()
    assert comp.q_out.writes == q0 + 5 and comp.dq_out.writes == dq0
    np.testing.assert_array_equal(comp.dq_out.value.data, dq)
    tm = comp.dq_out.value.tm
    assert tm.sec + tm.nsec * 1e-9 == pytest.approx(arm.now - 0.001, abs=1e-9)
    seen = []
    comp.dq_out.add_listener(PortEvent.ON_WRITE, lambda port, cid, sample: seen.append(1))
    arm.step(2)                                      # a listener puts it in use again
    assert comp.dq_out.writes == dq0 + 2 and len(seen) == 2


def test_sensors_are_read_only_views(arm):
    s = arm.comp.sim.sensors
    with pytest.raises(ValueError):
        s.q[0] = 1.0                                 # MuJoCo's state is not writable here
    q = s.q.copy()
    arm.step()
    assert not np.array_equal(q, s.q)               # the view follows the physics (it falls)


@pytest.mark.slow
def test_qref_moves_a_joint(nao):
    q = latest(nao, "q").data.copy()
    q[0] = 0.6                                              # HeadYaw
    nao.write("qRef", seq(q))
    nao.step(100)
    assert latest(nao, "q").data[0] == pytest.approx(0.6, abs=0.02)


@pytest.mark.slow
def test_stiffness_port_zero_makes_it_fall(nao):
    nao.write("stiffness", seq([0.0]))
    nao.step(200)
    assert latest(nao, "basePos").data.z < 0.2
    assert np.abs(latest(nao, "tau").data).max() < 1e-9


@pytest.mark.slow
def test_stiffness_parameter_acts_when_set(nao):
    nao.set_param("stiffness", 0.0)
    nao.step(200)
    assert latest(nao, "basePos").data.z < 0.2
    nao.comp.service.reset()                     # reset keeps the parameter: limp again
    nao.step(1)
    assert np.abs(latest(nao, "tau").data).max() < 1e-9


@pytest.mark.parametrize("port, values, reason", [
    ("qRef", [math.nan] * 26, "qRef: sample refused"),
    ("qRef", [0.0] * 3, "qRef: sample refused"),
    ("tauRef", [math.inf] * 26, "tauRef: sample refused"),
    ("stiffness", [2.0], "stiffness: sample refused"),
    ("stiffness", [0.5] * 3, "stiffness: sample refused"),
    ("stiffness", [math.nan], "stiffness: sample refused"),
])
def test_bad_command_samples_are_refused_and_it_keeps_running(nao, caplog, port, values,
                                                              reason):
    ctrl = nao.comp.sim.mj_data.ctrl.copy()
    t0 = nao.comp.sim.time
    nao.write(port, seq(values))
    nao.step(10)
    assert nao.comp.refused == 1
    assert reason in caplog.text
    np.testing.assert_array_equal(nao.comp.sim.mj_data.ctrl, ctrl)
    assert nao.comp.sim.time == pytest.approx(t0 + 0.1)
    assert latest(nao, "basePos").data.z > 0.3            # still standing


def test_torques_saturate_and_are_counted(arm, caplog):
    eff = arm.comp.sim_model.effort_limit
    arm.write("tauRef", seq(2 * eff))
    arm.step(2)
    assert arm.comp.sim.saturations == 6
    np.testing.assert_allclose(latest(arm, "tau").data, eff)
    assert "beyond the effort limit clamped" in caplog.text


def test_arm_torque_mode_by_default(arm):
    arm.write("tauRef", seq([20.0, 0, 0, 0, 0, 0]))        # joint1: vertical axis
    arm.step(300)
    assert latest(arm, "q").data[0] > 0.05


def test_period_not_a_multiple_of_the_timestep_fails_activation():
    h = Harness(Simulator, rate=300)                        # 3.33 ms
    try:
        h.activate()
        assert h.comp.sim is None
        assert str(h.state) != "LifeCycleState.ACTIVE_STATE"
    finally:
        h.close()


def test_unknown_model_fails_initialisation(tmp_path):
    with pytest.raises(Exception, match="model: .*nope.xml: no such model file"):
        Harness(Simulator, params={"model": str(tmp_path / "nope.xml")})


# -- the service (servant called directly; the wire is tested in tests/integration) ----------

@pytest.mark.slow
def test_pause_step_resume_on_a_wall_clock_ec(nao):
    svc, sim = nao.comp.service, nao.comp.sim
    svc.pause()
    assert svc.isPaused()
    t0 = sim.time
    nao.step(5)
    assert sim.time == t0                                    # paused physics does not advance
    with pytest.raises(Simulation.SimulatorError, match=r"step: expected a number of periods"):
        svc.step(-1)
    with pytest.raises(Simulation.SimulatorError, match=r"step: expected a number of periods"):
        svc.step(0)
    svc.step(3)
    nao.step(10)
    assert sim.time == pytest.approx(t0 + 0.03)              # exactly three periods
    svc.resume()
    with pytest.raises(Simulation.SimulatorError, match="pause\\(\\) it first"):
        svc.step(1)
    nao.step(2)
    assert sim.time == pytest.approx(t0 + 0.05)
    assert svc.getTime() == pytest.approx(t0 + 0.05)


@pytest.mark.slow
def test_set_real_time_factor_needs_simulation_time(nao):
    with pytest.raises(Simulation.SimulatorError,
                       match="is not in simulation time .* driven from outside by tick"):
        nao.comp.service.setRealTimeFactor(2.0)


class FakeTimeBase:
    """The contract's SimTimeBase, recorded (sim-time provides the real one)."""

    simulated = True

    def __init__(self):
        self.now, self.paused, self.real_time_factor, self.advanced = 0.0, False, 1.0, []

    def pause(self):
        self.paused = True

    def resume(self):
        self.paused = False

    def advance(self, seconds):
        if not (math.isfinite(seconds) and seconds >= 0):
            raise ValueError(f"advance: bad {seconds}")
        self.advanced.append(seconds)
        return self.now

    def set_real_time_factor(self, factor):
        if factor < 0:
            raise ValueError("factor < 0")
        self.real_time_factor = factor


class SimulatorOnAFakeTimeBase(Simulator):
    """time_base as a plain attribute here, whatever rtcf.Component makes of it."""
    time_base = None


@pytest.mark.slow
def test_time_calls_go_to_the_time_base_in_simulation_time():
    nao = Harness(SimulatorOnAFakeTimeBase, rate=100)
    nao.activate()
    tb = FakeTimeBase()
    nao.comp.time_base = tb
    svc = nao.comp.service
    svc.pause()
    assert tb.paused and svc.isPaused()
    svc.step(4)
    assert tb.advanced == [pytest.approx(0.04)]
    svc.setRealTimeFactor(20.0)
    assert tb.real_time_factor == 20.0
    for bad in (-1.0, math.nan, math.inf):
        with pytest.raises(Simulation.SimulatorError, match="setRealTimeFactor: expected"):
            svc.setRealTimeFactor(bad)
    assert tb.real_time_factor == 20.0
    svc.resume()
    assert not tb.paused
    tb.now = 12.5
    assert svc.getTime() == 12.5
    nao.close()


@pytest.mark.slow
def test_push_and_body_state_through_the_servant(nao):
    svc = nao.comp.service
    V = Simulation.Vector3
    x0 = svc.getBodyState("torso").position.x
    svc.push("torso", V(40.0, 0.0, 0.0), 0.1)
    nao.step(30)
    assert svc.getBodyState("torso").position.x - x0 > 0.01
    with pytest.raises(Simulation.SimulatorError, match="push: unknown body 'Tail'; bodies"):
        svc.push("Tail", V(1, 0, 0), 0.1)
    with pytest.raises(Simulation.SimulatorError, match="push force: expected finite"):
        svc.push("torso", V(math.nan, 0, 0), 0.1)
    with pytest.raises(Simulation.SimulatorError, match="push duration"):
        svc.push("torso", V(1, 0, 0), -1.0)
    with pytest.raises(Simulation.SimulatorError, match="getBodyState: unknown body 'x'"):
        svc.getBodyState("x")
    assert "l_ankle" in svc.getBodyNames()


@pytest.mark.slow
def test_reset_through_the_servant(nao):
    svc = nao.comp.service
    nao.write("stiffness", seq([0.0]))
    nao.step(150)
    assert latest(nao, "basePos").data.z < 0.2
    svc.reset()
    nao.step(1)
    assert latest(nao, "basePos").data.z > 0.3
    assert nao.comp.sim.time == pytest.approx(0.01)


# -- a blown-up simulation is a fault of the component, reported ------------

UNSTABLE = Path(__file__).resolve().parents[2] / "data" / "unstable_servo.xml"


def test_divergence_puts_the_simulator_in_error_and_the_others_run_on(caplog, monkeypatch,
                                                                      tmp_path):
    """A qRef step on a servo far too stiff for its timestep: MuJoCo's state blows up. The
    Simulator says so (a log line naming what MuJoCo found), goes to ERROR as an OpenRTM
    component with a fault does, writes no NaN, and the component beside it in the same EC
    runs on; the service names the fault; rtreset + activate start the physics afresh."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(simulator_component, "_MUJOCO_LOG", None)   # a fresh throttle
    h = Harness(Simulator, params={"model": str(UNSTABLE)}, rate=500)
    sine = SineGenerator("sine")
    sine.initialize()
    h.ec.add_component(sine)
    h.ec.activate_component(sine)
    h.activate()
    h.step(5)
    assert h.state is LifeCycleState.ACTIVE
    h.read_all("q")
    svc = h.comp.service
    h.write("qRef", seq([0.5]))
    with caplog.at_level(logging.WARNING):
        h.step()                                   # wrote the last good state, then blew up
        assert np.isfinite(h.read_all("q")[-1].data).all()
        h.step()                                   # ERROR from this cycle's pre-do on
    assert h.state is LifeCycleState.ERROR
    lines = [r.getMessage() for r in caplog.records if r.name.endswith("Simulator0")]
    assert any(re.search(r"physics diverged in the period ending at t = 0\.014 s: MuJoCo found "
                         r"NaN, infinite or huge values of the accelerations \(QACC, last at DOF 0: joint j1\)"
                         r".*goes to ERROR", m) for m in lines), lines
    assert "Traceback" not in caplog.text
    assert any(r.name == "rtcf.mujoco" and "Nan, Inf or huge value in QACC" in r.getMessage()
               for r in caplog.records)            # MuJoCo's own words, in the log
    assert not (tmp_path / "MUJOCO_LOG.TXT").exists()   # not in a file in the user's folder
    writes = sine.out.writes
    h.step(3)
    assert sine.out.writes == writes + 3           # its neighbour runs on
    assert h.read_all("q") == []                   # the blown-up state is never written
    assert ec_state(h.ec, sine) is LifeCycleState.ACTIVE
    for call in (lambda: svc.push("link", Simulation.Vector3(0.1, 0, 0), 0.01),
                 lambda: svc.getBodyState("link"), svc.reset):
        with pytest.raises(Simulation.SimulatorError, match=r"physics diverged .* Simulator0 is "
                                                            r"in ERROR: reset the component"):
            call()
    h.reset()                                      # ERROR -> INACTIVE (rtreset)
    h.activate()                                   # the robot afresh at t = 0
    assert h.state is LifeCycleState.ACTIVE and h.comp.sim.diverged is None
    h.step(3)
    assert svc.getTime() == pytest.approx(0.008) and h.read_all("q")[-1].data[0] == 0.0
    h.close()
    sine.finalize()


def ec_state(ec, comp):
    return ec.get_component_state(comp)


def test_the_issues_push_of_1e5_newton_is_refused_by_the_service(nao):
    with pytest.raises(Simulation.SimulatorError, match=r"push force: \|f\| = 100000 N is "
                                                        r"beyond the limit of 1041 N"):
        nao.comp.service.push("torso", Simulation.Vector3(1e5, 0.0, 0.0), 0.01)
    assert nao.comp.sim._push_left == 0


def test_joint_speeds_above_the_limit_are_counted_and_warned(caplog):
    """The limp arm falling under gravity passes Doosan's 1.571 rad/s; the
    Simulator says so (throttled), with the core's count."""
    h = Harness(Simulator, params={"model": "m1013", "initial_q": [0, 0.8, 0.5, 0, 0.3, 0]},
                rate=1000)
    with caplog.at_level(logging.WARNING):
        h.activate()
        h.step(300)
    assert h.comp.sim.velocity_exceeded > 0
    assert re.search(r"joint samples above the velocity limit so far: \d+", caplog.text)
    h.close()


@pytest.mark.parametrize("second_writer", [False, True])
def test_command_samples_arrive_with_and_without_the_ports_sole_buffer(arm, second_writer):
    # the stiffness and tauRef ports are skipped while their sole buffer holds nothing
    # (InPort.sole_buffer); with a second connector they have none and are always read
    from rtcf import OutPort, connect
    writers = {}
    if second_writer:
        for name in ("stiffness", "tauRef"):
            writers[name] = OutPort(f"extra_{name}", TimedDoubleSeq)
            connect(writers[name], arm.comp.ports[name], {})
            assert arm.comp.ports[name].sole_buffer is None
    else:
        assert arm.comp.ports["stiffness"].sole_buffer is not None
    arm.step(3)
    eff = arm.comp.sim_model.effort_limit
    arm.write("tauRef", seq(2 * eff))
    arm.step(1)
    assert arm.comp.sim.saturations == 6
    arm.step(2)
    arm.write("stiffness", seq([0.25]))
    arm.step(1)
    np.testing.assert_array_equal(arm.comp._stiff, 0.25)
    if second_writer:
        writers["stiffness"].value = seq([0.5])
        writers["stiffness"].write()
        arm.step(1)
        np.testing.assert_array_equal(arm.comp._stiff, 0.5)
