"""JointEffortController (components/controller_manager/effort_controllers.py) on the pure
manager core with a small torque-driven joint model (q'' = (tau - load) / J): the
control_toolbox Pid formula (p, i with i_clamp, d on the velocity error), holding against a
constant load with the integral, the streamed reference, chaining a trajectory follower, and
the refusals (no effort interface, no p, unknown params)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rtcf_components.controller_manager import ControllerError, ControllerManagerCore, RobotState

from rtcf_components.controller_manager.controllers import JointTrajectoryController
from rtcf_components.controller_manager.effort_controllers import JointEffortController
from rtcf_components.controller_manager.sim_hardware import ReferenceRobotState
from test_controllers import Rig as PositionRig  # the sibling test module's rig

DT = 1e-3
JOINTS = ["a", "b"]


class TorqueJoints:
    """Two rigid joints of inertia J [kg m^2] under a constant load torque [N m]."""

    def __init__(self, inertia=0.05, load=(0.0, 0.0)):
        self.joint_names = tuple(JOINTS)
        self.q = np.zeros(2)
        self.dq = np.zeros(2)
        self.tau = np.zeros(2)
        self.J = inertia
        self.load = np.array(load, float)
        self.halted = False
        self.command_interfaces = ("effort",)     # torque-driven: controllers claim effort

    def read(self, robot, time):
        np.copyto(robot.position, self.q)
        np.copyto(robot.velocity, self.dq)
        np.copyto(robot.effort, self.tau)

    def write(self, robot, time):
        self.tau = np.nan_to_num(robot.effort_command, nan=0.0)
        self.dq += (self.tau - self.load) / self.J * DT       # semi-implicit Euler
        self.q += self.dq * DT


class Rig(PositionRig):
    """test_controllers' rig (tick, start, c) on torque-driven joints."""

    def __init__(self, **hw):
        self.robot = ReferenceRobotState(JOINTS, [-3.0] * 2, [3.0] * 2)
        self.hw = TorqueJoints(**hw)
        self.core = ControllerManagerCore(self.robot, self.hw, period=DT)
        self.k = 0


def test_pid_formula_of_control_toolbox():
    r = Rig()
    r.core.load("pid", JointEffortController,
                {"joints": ["a"], "p": 100.0, "i": 50.0, "d": 2.0, "i_clamp": 1000.0})
    r.start("pid")
    assert r.robot.effort_command[0] == 0.0                  # starting holds q: no error, no effort
    assert math.isnan(r.robot.effort_command[1])             # b is nobody's
    r.core.command("pid", {"setpoint": [0.2]})
    q0, dq0 = r.hw.q[0], r.hw.dq[0]
    r.tick()
    e = 0.2 - q0
    period = DT                                        # the measured tick
    want = 100.0 * e + 50.0 * (e * period) + 2.0 * (0.0 - dq0)
    assert r.robot.effort_command[0] == pytest.approx(want, rel=1e-12)
    c = r.c("pid")
    assert c.i_error[0] == pytest.approx(e * period, rel=1e-12)


def test_i_clamp_bounds_the_integral_term():
    r = Rig(inertia=1e3)            # a heavy joint: it barely moves, the error stays large
    r.core.load("pid", JointEffortController,
                {"joints": ["a"], "p": 0.0, "i": 100.0, "d": 0.0, "i_clamp": 3.0})
    r.start("pid")
    r.core.command("pid", {"setpoint": [10.0]})       # beyond reach, error grows
    r.tick(500)
    c = r.c("pid")
    assert r.robot.effort_command[0] == pytest.approx(3.0, abs=1e-9)
    assert c.i_error[0] * 100.0 == pytest.approx(3.0, abs=1e-9)     # wound back
    r.core.command("pid", {"setpoint": [-10.0]})
    r.tick(2)                     # no windup beyond the clamp: it unwinds from 3 at once
    assert 0.0 < r.robot.effort_command[0] < 3.0


def test_integral_holds_a_joint_against_a_constant_load():
    load = 4.0
    r = Rig(inertia=0.05, load=(load, 0.0))
    r.core.load("pid", JointEffortController,
                {"joints": ["a", "b"], "p": 200.0, "i": 400.0, "d": 6.0, "i_clamp": 10.0})
    r.start("pid")
    r.core.command("pid", {"setpoint": [0.5, -0.3]})
    r.tick(5000)
    assert r.hw.q == pytest.approx([0.5, -0.3], abs=1e-4)
    assert r.robot.effort_command[0] == pytest.approx(load, abs=1e-3)   # the integral carries it


def test_reference_stream_is_followed_and_nan_keeps_the_setpoint():
    r = Rig()
    r.core.load("pid", JointEffortController,
                {"joints": ["a", "b"], "p": 100.0, "d": 5.0, "reference": True})
    r.start("pid")
    r.robot.reference[:] = [0.3, math.nan]
    r.robot.reference_velocity[:] = [0.1, 0.0]
    r.tick()
    c = r.c("pid")
    assert c.setpoint.tolist() == pytest.approx([0.3, 0.0])
    assert c.setpoint_velocity[0] == pytest.approx(0.1)
    r.tick(3000)
    assert r.hw.q[0] == pytest.approx(0.3 + 0.1 * 5.0 / 100.0, abs=1e-3)  # p e = -d (v - dq)


def test_trajectory_follower_chained_to_the_effort_pid():
    r = Rig()
    r.core.load("pid", JointEffortController,
                {"joints": ["a", "b"], "p": 400.0, "i": 100.0, "d": 8.0, "i_clamp": 5.0})
    r.core.load("traj", JointTrajectoryController,
                {"joints": ["a", "b"], "interpolation": "quintic", "output": "pid"})
    r.start("traj", "pid")
    r.core.command("traj", {"times": [1.0], "positions": [[0.4, -0.2]]})
    r.tick(1000)
    assert r.c("pid").setpoint.tolist() == pytest.approx([0.4, -0.2], abs=1e-6)
    r.tick(1000)
    assert r.hw.q == pytest.approx([0.4, -0.2], abs=2e-3)


def test_refusals_name_what_is_wrong():
    pos = RobotState(JOINTS)
    pos.restrict(["position"])                        # what a position hardware takes
    c = JointEffortController()
    with pytest.raises(ControllerError, match="effort interface"):
        c.init(pos, {"joints": ["a"], "p": 1.0})
    eff = ReferenceRobotState(JOINTS)
    with pytest.raises(ControllerError, match="p: a proportional gain is required"):
        JointEffortController().init(eff, {"joints": ["a"]})
    with pytest.raises(ControllerError, match=r"unknown params \['kp'\]"):
        JointEffortController().init(eff, {"joints": ["a"], "p": 1.0, "kp": 2.0})
    with pytest.raises(ControllerError, match="i_clamp"):
        JointEffortController().init(eff, {"joints": ["a"], "p": 1.0, "i_clamp": -1.0})
    with pytest.raises(ControllerError, match="reference: expected true or false"):
        JointEffortController().init(eff, {"joints": ["a"], "p": 1.0, "reference": "yes"})
    with pytest.raises(ControllerError, match="unknown joint 'z'"):
        JointEffortController().init(eff, {"joints": ["z"], "p": 1.0})


def test_effort_pid_claims_effort_and_is_refused_on_position_hardware():
    r = Rig()
    r.core.load("pid", JointEffortController, {"joints": ["a", "b"], "p": 10.0})
    assert r.c("pid").command_interface_configuration() == ["a/effort", "b/effort"]
    r.hw.command_interfaces = ("position",)
    with pytest.raises(ControllerError, match="a/effort, b/effort, which the hardware"):
        r.start("pid")


def test_a_command_of_a_type_the_hardware_does_not_take_fails_loudly():
    """Once, on the effort hardware the position command array was read by
    nothing, so a controller that wrote it switched in and commanded no torque. The arrays
    of the types the hardware does not take are read-only: the write fails at the first
    update, the controller is stopped and the reason names the types the hardware takes."""
    from rtcf_components.controller_manager import Controller

    class WritesPosition(Controller):
        def init(self, robot, params):
            self.j = robot.joint("a")
            self.claim(["a"], "effort")
            return True

        def update(self, time, period):
            self.j.command = 0.1                   # a position command

    class WritesArray(WritesPosition):
        def init(self, robot, params):
            self.robot = robot
            return WritesPosition.init(self, robot, params)

        def update(self, time, period):
            self.robot.velocity_command[0] = 0.1

    r = Rig()
    assert r.robot.command_types == ("effort",)
    r.core.load("pos", WritesPosition)
    r.start("pos")
    r.tick(2)
    st = r.core.slot("pos")
    assert not st.controller.is_running and st.stats.faults == 1
    assert "ControllerError: a: the hardware takes no position commands (it takes effort)" \
        in st.stats.last_error
    r.core.unload("pos")
    r.core.load("vel", WritesArray)
    r.start("vel")
    r.tick(2)
    assert "assignment destination is read-only (a command array of an interface type the " \
           "hardware does not take; it takes effort)" in r.core.slot("vel").stats.last_error


def _pid_elementwise(c, robot, period):
    """The PID of control_toolbox as elementwise float64 numpy (the formula of the module
    doc, in its order of operations): what update() computes on Python floats."""
    idx = np.asarray(c.idx)
    sp, sv = c.setpoint.copy(), c.setpoint_velocity.copy()
    if c.follow_reference:
        ref, ref_v = robot.reference[idx], robot.reference_velocity[idx]
        have = np.isfinite(ref)
        sp[have], sv[have] = ref[have], ref_v[have]
    error = sp - robot.position[idx]
    i_error = c.i_error + error * period
    i_term = np.maximum(np.minimum(c.i * i_error, c.i_clamp), -c.i_clamp)
    inv_i = np.divide(1.0, c.i, out=np.zeros(len(idx)), where=c.i != 0.0)
    effort = c.p * error + i_term + (sv - robot.velocity[idx]) * c.d
    return sp, sv, error, i_term * inv_i, effort


@pytest.mark.parametrize("follow", [False, True])
def test_update_gives_the_elementwise_formula_bit_for_bit(follow):
    # NaN positions and references, signed zeros, the clamp reached and not, zero periods,
    # a restart halfway
    names = [f"j{k}" for k in range(7)]
    rng = np.random.default_rng(7)
    checked = 0
    for trial in range(40):
        joints = sorted(rng.choice(7, size=int(rng.integers(1, 8)), replace=False).tolist())
        robot = ReferenceRobotState(names, [-3.0] * 7, [3.0] * 7)
        c = JointEffortController()
        c.name = "pid"
        c.robot = robot
        c.init(robot, {"joints": [names[k] for k in joints], "reference": follow,
                       "p": float(rng.choice([0.0, 350.0])), "i": float(rng.choice([0.0, 40.0])),
                       "d": (rng.random(len(joints)) * 10).tolist(),
                       "i_clamp": float(rng.choice([0.0, 0.5, 30.0]))})
        c.starting(0.0)
        for step in range(50):
            for a in (robot.position, robot.velocity, robot.reference, robot.reference_velocity):
                a[:] = rng.normal(size=7)
            robot.position[int(rng.integers(7))] = [np.nan, 0.0, -0.0][step % 3]
            robot.reference[int(rng.integers(7))] = [np.nan, np.inf, -0.0][step % 3]
            period = [1e-3, 0.0, 1.1e-3][step % 3]
            if step == 25:
                c.starting(step * 1e-3)          # a restart clears the integral in place
            want = _pid_elementwise(c, robot, period)
            robot.effort_command.fill(np.nan)
            c.update(step * 1e-3, period)
            got = (c.setpoint, c.setpoint_velocity, c.error, c.i_error, c.effort)
            for w, g in zip(want, got):
                assert g.tobytes() == w.tobytes(), (trial, step, w, g)
            assert robot.effort_command[c.idx].tobytes() == want[4].tobytes()
            checked += 1
    assert checked == 2000
