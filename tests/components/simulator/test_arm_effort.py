"""The effort path: the ControllerManager's simulator hardware (components/controller_manager/
sim_hardware.py) and JointEffortController on the MuJoCo M1013. In arm_sim (simulation
time, in process): the 1 kHz PID holds the arm against gravity with torques equal to the
model's gravity torques. On a bare Simulation: NaN commands give no torque, torques beyond
the effort limit saturate and are counted, a reference stream that repeats samples gets a
sane velocity, and binding to the wrong robot is refused with the joints named."""

from __future__ import annotations

import math

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from rtcf import InPort, OutPort, TimedDoubleSeq, connect  # noqa: E402
from rtcf_components.controller_manager import ControllerError  # noqa: E402

from rtcf_components.controller_manager.sim_hardware import ReferenceRobotState, SimulatorHardware  # noqa: E402
from rtcf_components.simulator.core import SimModel, Simulation  # noqa: E402
from rtcf.testing import SimSystem  # noqa: E402

from rtcf_components.scenarios.runs import ARM_SIM  # noqa: E402

HOME = np.array([0, 0, math.pi / 2, 0, math.pi / 2, 0])


@pytest.fixture(scope="module")
def arm_model():
    return SimModel.load("m1013")


@pytest.mark.slow
def test_arm_sim_holds_home_against_gravity_with_the_integral():
    with SimSystem(ARM_SIM,
                   params={"qLog": {"path": ""}, "qRefLog": {"path": ""}}) as s:
        cm, sim_comp = s["ControllerManager0"], s["Simulator0"]
        s.advance(2.0)
        sim = sim_comp.sim
        assert cm.hw.owner is sim_comp and not cm.hw.halted
        ctl = cm.core.slot("arm_pid").controller
        q = sim.sensors.q.copy()
        assert np.abs(q - HOME).max() < 1e-4                     # held [rad]
        # the torque it needs: gravity at this posture (MuJoCo inverse dynamics, at rest)
        m, d = sim.mj_model, mujoco.MjData(sim.mj_model)
        d.qpos[:] = q
        mujoco.mj_forward(m, d)
        d.qacc[:] = 0.0
        d.qvel[:] = 0.0
        mujoco.mj_inverse(m, d)
        gravity = d.qfrc_inverse.copy()
        assert abs(gravity[1]) > 20.0                            # joint2 carries the arm
        assert ctl.effort == pytest.approx(gravity, abs=0.02 * np.abs(gravity).max())
        assert sim.saturations == 0


def test_nan_command_gives_no_torque_and_saturation_is_counted(arm_model):
    sim = Simulation(arm_model, 1e-3, initial_q=HOME)
    sim.reset()
    hw = SimulatorHardware(arm_model.joint_names)
    hw.bind(sim)
    robot = ReferenceRobotState(arm_model.joint_names, arm_model.lower, arm_model.upper)
    hw.read(robot, 0.0)
    assert robot.position == pytest.approx(HOME, abs=1e-9)
    robot.effort_command[:] = math.nan
    robot.effort_command[5] = 1e6                                # far beyond 50 N m
    hw.write(robot, 0.0)
    sim.step()
    hw.read(robot, 1e-3)
    assert sim.saturations == 1
    assert robot.effort[5] == pytest.approx(arm_model.effort_limit[5])
    assert robot.effort[:5] == pytest.approx(np.zeros(5), abs=1e-9)


def test_reference_stream_velocity_survives_repeated_samples(arm_model):
    names = arm_model.joint_names
    out = OutPort("ref", TimedDoubleSeq)
    inp = InPort("qRef", TimedDoubleSeq)
    connect(out, inp, {"subscription_type": "flush", "buffer.length": 8})
    sim = Simulation(arm_model, 1e-3, initial_q=HOME)
    sim.reset()
    hw = SimulatorHardware(names, inp)
    hw.bind(sim)
    robot = ReferenceRobotState(names, arm_model.lower, arm_model.upper)
    # joint1 steps 0.003 rad every third sample (0.1 rad/s in stairs), joint2 moves each tick
    vels = []
    for k in range(30):
        q = HOME.copy()
        q[0] = 0.003 * (k // 3)
        q[1] = 0.0005 * k
        out.write(TimedDoubleSeq(data=q))
        hw.read(robot, k * 1e-3)
        vels.append(robot.reference_velocity.copy())
    v = np.array(vels)[6:]
    assert v[:, 0] == pytest.approx(np.full(len(v), 1.0), abs=1e-6)   # 0.003 / 3 ms
    assert v[:, 1] == pytest.approx(np.full(len(v), 0.5), abs=1e-6)
    for k in range(30, 60):                                      # the stream stops
        out.write(TimedDoubleSeq(data=q))
        hw.read(robot, k * 1e-3)
    assert robot.reference_velocity == pytest.approx(np.zeros(6))
    assert robot.reference == pytest.approx(q)


def test_binding_to_the_wrong_robot_names_the_joints(arm_model):
    nao = Simulation(SimModel.load("nao_v5"), 1e-2)
    hw = SimulatorHardware(arm_model.joint_names)
    with pytest.raises(ControllerError, match=r"joints \['joint1'.*are not in the simulated "
                                              r"model 'nao_v5'"):
        hw.bind(nao)
    with pytest.raises(ControllerError, match="is not a Simulator"):
        hw.bind(object())
    assert hw.owner is None                                      # nothing changed


def test_manager_without_its_simulator_is_refused_before_anything_starts():
    """hardware: simulator needs the Simulator its hardware port is connected to in the
    composition; without the connection the build stops naming the line to add."""
    from rtcf.composition import parse_composition
    from rtcf.errors import CompositionError
    from rtcf.manager import Manager

    comp = parse_composition({
        "name": "nosim",
        "components": [{"type": "ControllerManager", "module": "controller_manager",
                        "params": {"hardware": "simulator", "model": "doosan_m1013.yaml"}},
                       {"type": "Simulator", "module": "simulator", "params": {"model": "m1013"}}],
        "execution_contexts": [{"name": "arm", "rate": 1000,
                                "members": ["ControllerManager0", "Simulator0"]}]}, "nosim.yaml")
    m = Manager({}, corba=False)
    try:
        with pytest.raises(CompositionError) as e:
            m.build(comp)
        assert not m.components and not m.ecs                   # nothing left, nothing ran
    finally:
        m.shutdown()
    assert "nosim.yaml: components[0]: ControllerManager0: service port 'hardware' needs a " \
           "SimulatorLocal" in str(e.value)
    assert "{from: ControllerManager0.hardware, to: Simulator0.SimulatorService}" in str(e.value)


def _reference_velocity_elementwise(q, prev, t_change, vel, time, hold):
    """The reference velocity as elementwise float64 numpy (see _take_reference): the velocity
    of a joint whose reference changed, over the time since it last changed; 0 after
    ``hold`` seconds unchanged; NaN and +-inf as 0. Returns (vel, prev, t_change)."""
    changed = q != prev
    dt = time - t_change
    moved = changed & (dt > 0.0)
    vel = vel.copy()
    with np.errstate(all="ignore"):
        vel[moved] = (q[moved] - prev[moved]) / dt[moved]
    t_change = np.where(changed, time, t_change)
    prev = np.where(changed, q, prev)
    vel[time - t_change > hold] = 0.0
    vel[~np.isfinite(vel)] = 0.0
    return vel, prev, t_change


def test_reference_velocity_gives_the_elementwise_formula_bit_for_bit():
    names = [f"j{k}" for k in range(6)]
    rng = np.random.default_rng(3)
    for trial in range(30):
        hw, robot = SimulatorHardware(names), ReferenceRobotState(names)
        q, t = rng.normal(size=6), 0.0
        hw._take_reference(robot, q, t)
        prev, t_change, vel = q.copy(), np.full(6, t), np.zeros(6)
        for step in range(100):
            t += [1e-3, 0.0, 0.03, 1e-3][step % 4]       # repeated stamps, a long pause
            q = q.copy()
            k = int(rng.integers(6))
            q[rng.random(6) < 0.6] += rng.normal() * 1e-3  # some joints repeat their value
            if step % 7 == 0:
                q[k] = [np.nan, np.inf, -1e308, 1e308][step % 4]
            want = _reference_velocity_elementwise(q, prev, t_change, vel, t, hw.hold)
            with np.errstate(all="ignore"):
                hw._take_reference(robot, q, t)
            vel, prev, t_change = want
            assert robot.reference_velocity.tobytes() == vel.tobytes(), (trial, step)
            assert robot.reference.tobytes() == q.tobytes()


def test_a_repeated_reference_gives_the_elementwise_formula_bit_for_bit():
    # samples repeated for longer than the hold (the short path once every velocity is 0),
    # then a signed zero for a zero, a NaN repeated, a change after a long repeat
    names = [f"j{k}" for k in range(6)]
    hw, robot = SimulatorHardware(names), ReferenceRobotState(names)
    q, t = np.array([0.0, 0.5, -0.25, 1.0, 0.0, 2.0]), 0.0
    hw._take_reference(robot, q, t)
    prev, t_change, vel = q.copy(), np.full(6, t), np.zeros(6)
    samples = [q] * 30 + [np.array([0.1, 0.5, -0.25, 1.0, 0.0, 2.0])] * 30
    samples += [np.array([-0.0, 0.5, -0.25, 1.0, -0.0, 2.0])] * 30
    samples += [np.array([np.nan, 0.5, -0.25, 1.0, 0.0, 2.0])] * 30
    samples += [np.array([0.2, 0.5, -0.25, 1.0, 0.0, 2.5])] * 30
    for step, s in enumerate(samples):
        t += 1e-3
        want = _reference_velocity_elementwise(s, prev, t_change, vel, t, hw.hold)
        hw._take_reference(robot, s.copy(), t)
        vel, prev, t_change = want
        assert robot.reference_velocity.tobytes() == vel.tobytes(), step
        assert robot.reference.tobytes() == s.tobytes(), step
    assert hw._still
