"""The bundled controllers (components/controller_manager/controllers.py) on the pure manager
core with loopback hardware and a manual clock: PD formula, trajectory waypoints hit exactly
(cubic and quintic), a new trajectory while running without a jump, chaining through
get_controller, validation of bad commands."""

from __future__ import annotations

import numpy as np
import pytest

from rtcf_components.controller_manager import (ControllerError, ControllerManagerCore,
                                                LoopbackHardware, RobotState)

from rtcf_components.controller_manager.controllers import (JointPositionController,
                                            JointTrajectoryController)

DT = 1e-3
JOINTS = ["a", "b", "c"]


class Rig:
    def __init__(self, initial=(0.1, -0.2, 0.3)):
        self.robot = RobotState(JOINTS, [-2.0] * 3, [2.0] * 3)
        self.hw = LoopbackHardware(JOINTS, initial=initial)
        self.core = ControllerManagerCore(self.robot, self.hw, period=DT)
        self.k = 0

    def tick(self, n=1):
        for _ in range(n):
            self.core.update(self.k * DT)
            self.k += 1

    def start(self, *names):
        self.core.request_switch(list(names), [], 2)
        self.tick(2)

    def c(self, name):
        return self.core.slot(name).controller


def test_pd_holds_the_position_at_starting_then_follows_the_formula():
    r = Rig()
    r.core.load("pd", JointPositionController, {"joints": ["a", "c"], "kp": [0.5, 1.0],
                                                 "kd": 0.0})
    r.start("pd")
    assert r.c("pd").setpoint.tolist() == pytest.approx([0.1, 0.3])
    assert r.robot.command[[0, 2]].tolist() == pytest.approx([0.1, 0.3])
    assert np.isnan(r.robot.command[1])                      # b is nobody's
    r.core.command("pd", {"setpoint": [1.1, -0.7]})
    r.tick()
    # command = q + kp (sp - q): a: 0.1 + 0.5*1.0, c: 0.3 + 1.0*(-1.0)
    assert r.robot.command[[0, 2]].tolist() == pytest.approx([0.6, -0.7], abs=1e-12)
    r.tick()                                                  # loopback: q = 0.6 now
    assert r.robot.command[0] == pytest.approx(0.6 + 0.5 * 0.5)


def test_pd_kd_acts_on_the_velocity_error():
    r = Rig(initial=(0.0, 0.0, 0.0))
    r.core.load("pd", JointPositionController, {"joints": ["a"], "kp": 0.0, "kd": 0.01})
    r.start("pd")
    r.hw.q[0] = 0.001                                        # moves 1 mm rad in one tick
    r.tick()
    assert r.robot.velocity[0] == pytest.approx(1.0)
    assert r.robot.command[0] == pytest.approx(0.001 - 0.01 * 1.0)


@pytest.mark.parametrize("interp", ["cubic", "quintic"])
def test_trajectory_hits_every_waypoint_at_its_time_and_holds_the_last(interp):
    r = Rig(initial=(0.0, 0.0, 0.0))
    r.core.load("tr", JointTrajectoryController, {
        "joints": ["a", "b"], "interpolation": interp,
        "times": [0.1, 0.25, 0.4], "positions": [[0.5, -0.5], [1.0, 0.0], [0.2, 0.1]]})
    r.start("tr")                 # started at tick 1, t0 = 0.001
    t0 = 1 * DT
    seen = {}
    for _ in range(500):
        r.tick()
        seen[round((r.k - 1) * DT - t0, 6)] = r.robot.command[:2].copy()
    assert seen[0.1].tolist() == pytest.approx([0.5, -0.5], abs=1e-9)
    assert seen[0.25].tolist() == pytest.approx([1.0, 0.0], abs=1e-9)
    assert seen[0.4].tolist() == pytest.approx([0.2, 0.1], abs=1e-9)
    assert seen[0.45].tolist() == pytest.approx([0.2, 0.1], abs=1e-12)
    steps = np.abs(np.diff(np.array([seen[k] for k in sorted(seen)]), axis=0))
    assert steps.max() < 0.02      # smooth: no step larger than ~ v_max * dt


@pytest.mark.parametrize("interp", ["cubic", "quintic"])
def test_a_new_trajectory_while_running_does_not_jump(interp):
    r = Rig(initial=(0.0, 0.0, 0.0))
    r.core.load("tr", JointTrajectoryController, {"joints": ["a"], "interpolation": interp})
    r.start("tr")
    r.core.command("tr", {"times": [0.2], "positions": [[1.0]]})
    r.tick(100)                                       # mid-way, moving fast
    tr = r.c("tr")
    p_before, v_before = tr.pos[0], tr.vel[0]
    assert v_before > 3.0
    r.core.command("tr", {"times": [0.3], "positions": [[-0.5]]})
    r.tick()
    p_after, v_after = tr.pos[0], tr.vel[0]
    # continuous position and velocity: the next sample is one tick along the old motion
    assert p_after == pytest.approx(p_before + v_before * DT, abs=5e-4)
    assert v_after == pytest.approx(v_before, rel=0.05)
    assert tr.trajectories == 2
    r.tick(400)
    assert r.robot.command[0] == pytest.approx(-0.5, abs=1e-12)


def test_chained_trajectory_feeds_the_pd_in_the_same_tick():
    r = Rig(initial=(0.0, 0.0, 0.0))
    r.core.load("pd", JointPositionController, {"joints": ["a", "b"], "kp": 1.0})
    r.core.load("tr", JointTrajectoryController, {"joints": ["b"], "output": "pd"})
    assert r.core.schedule == ["tr", "pd"]              # AFTER_ME: pd after tr
    with pytest.raises(ControllerError, match="'pd' depends|'tr' depends"):
        r.core.unload("pd")
    r.start("pd", "tr")
    r.core.command("tr", {"times": [0.1], "positions": [[0.4]]})
    tr = r.c("tr")
    for _ in range(150):            # produced in tick N, consumed in tick N (no cycle of lag)
        r.tick()
        assert r.robot.command[1] == pytest.approx(tr.pos[0], abs=1e-15)
    assert r.c("pd").setpoint[1] == pytest.approx(0.4)
    assert r.robot.command[1] == pytest.approx(0.4)      # kp 1: the setpoint itself
    assert r.c("tr").error[0] == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("cmd, msg", [
    ({"times": [0.0], "positions": [[0.1]]}, r"times: expected > 0 and strictly increasing"),
    ({"times": [0.2, 0.1], "positions": [[0.1], [0.2]]}, "strictly increasing"),
    ({"times": [0.2], "positions": [[0.1, 0.2]]}, r"expected 1 waypoints of 1 values"),
    ({"times": [0.2], "positions": [[5.0]]}, r"a = 5.0 is outside its limits"),
    ({"times": "x", "positions": [[0.1]]}, "expected times"),
])
def test_bad_trajectories_are_refused_and_change_nothing(cmd, msg):
    r = Rig()
    r.core.load("tr", JointTrajectoryController, {"joints": ["a"]})
    r.start("tr")
    with pytest.raises(ControllerError, match=msg):
        r.core.command("tr", cmd)
    r.tick(5)
    assert r.c("tr").trajectories == 0


def test_bad_controller_params_fail_the_load_with_the_reason():
    r = Rig()
    with pytest.raises(ControllerError, match="unknown joint 'zz'"):
        r.core.load("pd", JointPositionController, {"joints": ["a", "zz"]})
    with pytest.raises(ControllerError, match="kp: expected one number >= 0 or 2"):
        r.core.load("pd", JointPositionController, {"joints": ["a", "b"], "kp": [1, 2, 3]})
    with pytest.raises(ControllerError, match="interpolation: expected 'cubic' or 'quintic'"):
        r.core.load("tr", JointTrajectoryController, {"joints": ["a"], "interpolation": "x"})
    with pytest.raises(ControllerError, match="no controller of that name"):
        r.core.load("tr", JointTrajectoryController, {"joints": ["a"], "output": "pd"})
    assert r.core.schedule == []


def test_running_pd_and_trajectory_ticks_leave_no_allocation_behind():
    import sys
    r = Rig(initial=(0.0, 0.0, 0.0))
    r.core.load("pd", JointPositionController, {"joints": ["a", "b", "c"], "kd": 0.01})
    r.core.load("tr", JointTrajectoryController, {"joints": ["a", "c"], "output": "pd",
                                                  "interpolation": "quintic"})
    r.start("pd", "tr")
    r.core.command("tr", {"times": [1.0, 2.0, 3.0],
                          "positions": [[0.5, 0.1], [-0.5, 0.2], [0.0, 0.0]]})
    r.tick(100)
    before = sys.getallocatedblocks()
    r.tick(2000)                               # through segments 1 and 2
    assert sys.getallocatedblocks() - before < 50
