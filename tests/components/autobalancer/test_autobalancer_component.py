"""The AutoBalancer component on the MuJoCo NAO (compositions/nao_walk.yaml in process, in
simulation time at factor 0): startAutoBalancer, goPos and waitFootSteps through the
servant as hrpsys clients call them, the walk measured on the simulated robot (ground truth:
the soles' sites), the ports, and refused calls that leave the robot standing. Physics
tolerances only, no timing."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("mujoco")

pytestmark = pytest.mark.slow          # seconds of simulated walking

from rtcf.corba.idl import stub_module  # noqa: E402
from rtcf.testing import SimSystem  # noqa: E402
from rtcf_components.scenarios.walking import COMPOSITION  # noqa: E402

OpenHRP = stub_module("OpenHRP")
ABS = OpenHRP.AutoBalancerService


def stance(sim) -> tuple[np.ndarray, float]:
    """Ground truth: the middle of the soles and their mean heading, world frame."""
    m, d = sim.mj_model, sim.mj_data
    p, yaw = [], []
    for site in ("l_sole", "r_sole"):
        i = m.site(site).id
        p.append(d.site_xpos[i].copy())
        R = d.site_xmat[i].reshape(3, 3)
        yaw.append(math.atan2(R[1, 0], R[0, 0]))
    return 0.5 * (p[0] + p[1]), 0.5 * (yaw[0] + yaw[1])


@pytest.fixture(scope="module")
def system():
    with SimSystem(COMPOSITION) as s:
        s.advance(0.2)
        s.time_base.resume()           # flat out in its own thread: the servant's calls block
        try:
            yield s
        finally:
            s.time_base.pause()


def footsteps(*steps):
    return [ABS.Footsteps([ABS.Footstep(list(p), [1.0, 0.0, 0.0, 0.0], leg)])
            for leg, p in steps]


def test_refused_before_start(system):
    svc = system["AutoBalancer0"].service
    assert svc.goPos(0.1, 0.0, 0.0) is False
    assert svc.goVelocity(0.1, 0.0, 0.0) is False
    assert svc.stopAutoBalancer() is False
    assert svc.startAutoBalancer(["rarm", "larm"]) is False       # the legs must be named
    assert svc.startAutoBalancer(["rleg", "lleg", "tail"]) is False


def test_walk_forward_through_gopos(system):
    abc = system["AutoBalancer0"]
    svc = abc.service
    sim = system["DCM0"].robot_body.sim
    assert svc.startAutoBalancer(["rleg", "lleg"]) is True          # blocks for the transition
    assert abc.core.mode == "MODE_ABC"
    p0, yaw0 = stance(sim)
    ok, plan = svc.getGoPosFootstepsSequence(0.3, 0.0, 0.0)
    assert ok and len(plan) == 1 + 9 and plan[0].fs[0].leg == "lleg"   # support, 9 steps
    assert svc.goPos(0.3, 0.0, 0.0) is True
    ok, left, idx = svc.getRemainingFootstepSequence()
    assert ok and len(left) == 9 and idx == 1
    low = [sim.sensors.base_pos[2]]
    svc.waitFootSteps()
    assert not abc.core.walking
    p1, yaw1 = stance(sim)
    c, s = math.cos(-yaw0), math.sin(-yaw0)
    dx, dy = p1[0] - p0[0], p1[1] - p0[1]
    fwd, side = c * dx - s * dy, s * dx + c * dy
    print(f"\ngoPos(0.3, 0, 0): moved {fwd:.4f} m forward, {side:.4f} m sideways, turned "
          f"{math.degrees(yaw1 - yaw0):.2f} deg; torso z {sim.sensors.base_pos[2]:.4f} m")
    assert abs(fwd - 0.3) < 0.03 and abs(side) < 0.03
    assert abs(math.degrees(yaw1 - yaw0)) < 3.0
    assert sim.sensors.base_pos[2] > 0.3 and min(low) > 0.3          # standing
    assert abc.walk_out.value.data is False
    assert list(abc.contact_out.value.data) == [True, True]
    ok, left, idx = svc.getRemainingFootstepSequence()
    assert ok and left == [] and idx == 10


def test_bad_walks_are_refused_and_the_robot_keeps_standing(system):
    abc = system["AutoBalancer0"]
    svc = abc.service
    sim = system["DCM0"].robot_body.sim
    if abc.core.mode != "MODE_ABC":
        assert svc.startAutoBalancer(["rleg", "lleg"])
    feet = abc.core.feet()
    assert svc.goPos(math.nan, 0.0, 0.0) is False
    assert svc.goPos(1e6, 0.0, 0.0) is False
    assert svc.goVelocity(0.1, math.inf, 0.0) is False
    # setFootSteps: the support foot, then a step 20 cm ahead (the limit is 4 cm)
    l, r = feet["lleg"], feet["rleg"]
    far = footsteps(("rleg", (r.x, r.y, 0.0)), ("lleg", (l.x + 0.2, l.y, 0.0)))
    assert svc.setFootSteps(far, 0) is False
    tilted = [ABS.Footsteps([ABS.Footstep([r.x, r.y, 0.0], [0.9, 0.4, 0.0, 0.0], "rleg")])]
    assert svc.setFootSteps(tilted + far[1:], 0) is False
    assert svc.setFootSteps(footsteps(("rleg", (0, 0, 0)), ("arm", (0, 0, 0))), 0) is False
    assert svc.waitFootStepsFor(0.5) == 0                          # nothing was queued
    assert abc.core.feet() == feet
    ok, ggp = svc.getGaitGeneratorParam()
    ggp.use_toe_joint = True
    assert svc.setGaitGeneratorParam(ggp) is False
    ggp.use_toe_joint = False
    ggp.stride_parameter = [0.04, 0.04, 20.0, 0.04, 0.5, 5.0]    # inside wider than the stance
    assert svc.setGaitGeneratorParam(ggp) is False
    ggp.stride_parameter = [0.04, 0.04, 20.0, 0.04, 0.012, 5.0]
    ggp.default_step_time = math.nan
    assert svc.setGaitGeneratorParam(ggp) is False
    assert sim.sensors.base_pos[2] > 0.3 and abs(sim.sensors.base_rpy[1]) < 0.2


def test_setfootsteps_walks_the_given_steps(system):
    abc = system["AutoBalancer0"]
    svc = abc.service
    sim = system["DCM0"].robot_body.sim
    if abc.core.mode != "MODE_ABC":
        assert svc.startAutoBalancer(["rleg", "lleg"])
    p0, _ = stance(sim)
    # in the client's own frame: the right foot at the origin; two steps of 3 cm
    steps = footsteps(("rleg", (0.0, -0.05, 0.0)), ("lleg", (0.03, 0.05, 0.0)),
                      ("rleg", (0.06, -0.05, 0.0)), ("lleg", (0.06, 0.05, 0.0)))
    assert svc.setFootSteps(steps, 0) is True
    assert svc.setFootSteps(steps, 0) is False                     # walking: refused
    svc.waitFootSteps()
    p1, _ = stance(sim)
    moved = float(np.hypot(*(p1 - p0)[:2]))
    print(f"\nsetFootSteps two 3 cm steps: moved {moved:.4f} m")
    assert abs(moved - 0.06) < 0.015
    ok, ggp = svc.getGaitGeneratorParam()
    assert ok and list(ggp.stride_parameter) == pytest.approx([0.04, 0.04, 20.0, 0.04,
                                                                0.012, 5.0])
    assert svc.stopAutoBalancer() is True
    assert abc.core.mode == "MODE_IDLE"


def test_autobalancer_param_as_hrpsys_robot_scripts_set_it(system):
    """get, change, set: what hrpsys robot set-ups do (setStAbcParameters: default_zmp_offsets
    with the arms' zeros, move_base_gain, transition_time), then refusals of what this
    balancer cannot do, each changing nothing."""
    from rtcf_components.autobalancer.footsteps import Pose2
    abc = system["AutoBalancer0"]
    svc = abc.service
    if abc.core.mode != "MODE_ABC":
        assert svc.startAutoBalancer(["rleg", "lleg"])
    ok, p = svc.getAutoBalancerParam()
    assert ok and p.controller_mode == ABS.MODE_ABC
    assert [list(v) for v in p.default_zmp_offsets] == [[0.02, 0.0, 0.0], [0.02, -0.0, 0.0]]
    assert list(p.leg_names) == ["rleg", "lleg"] and p.use_force_mode == ABS.MODE_NO_FORCE
    assert p.has_ik_failed is False                     # the walks of the tests before
    p.default_zmp_offsets = [[0.01, 0.01, 0], [0.01, -0.01, 0], [0, 0, 0], [0, 0, 0]]
    p.move_base_gain = 0.8
    p.transition_time = 0.5
    assert svc.setAutoBalancerParam(p) is True
    ok, q = svc.getAutoBalancerParam()
    assert [list(v) for v in q.default_zmp_offsets] == [[0.01, 0.01, 0.0], [0.01, -0.01, 0.0]]
    assert q.transition_time == 0.5 and q.move_base_gain == 0.8
    assert abc.core.cfg.transition_time == 0.5
    # the ZMP reference of the steps planned from now on: 1 cm ahead, 1 cm inside each sole
    assert list(abc.core.gait.foot_zmp("lleg", Pose2())) == pytest.approx([0.01, -0.01])
    assert list(abc.core.gait.foot_zmp("rleg", Pose2())) == pytest.approx([0.01, 0.01])
    bad = []
    for name, value in (("use_force_mode", ABS.MODE_REF_FORCE),
                        ("default_zmp_offsets", [[0.01, 0.01, 0], [0.02, -0.01, 0]]),
                        ("default_zmp_offsets", [[0.01, 0.01, 0], [0.01, -0.01, 0],
                                                 [0.05, 0, 0], [0, 0, 0]]),
                        ("default_zmp_offsets", [[math.nan, 0.0, 0.0], [0.0, 0.0, 0.0]]),
                        ("transition_time", math.inf), ("move_base_gain", 0.0),
                        ("leg_names", ["rleg", "lleg", "rarm"]),
                        ("additional_force_applied_link_name", "LHand")):
        ok, r = svc.getAutoBalancerParam()
        setattr(r, name, value)
        bad.append(svc.setAutoBalancerParam(r))
    assert bad == [False] * len(bad)
    ok, after = svc.getAutoBalancerParam()
    assert [list(v) for v in after.default_zmp_offsets] == \
        [[0.01, 0.01, 0.0], [0.01, -0.01, 0.0]] and after.transition_time == 0.5
    # back to the defaults for whoever runs next; controller_mode is state, ignored on set
    after.default_zmp_offsets = [[0.02, 0.0, 0.0], [0.02, 0.0, 0.0]]
    after.transition_time = 1.0
    after.controller_mode = ABS.MODE_IDLE
    assert svc.setAutoBalancerParam(after) is True
    assert abc.core.mode == "MODE_ABC" and abc.core.params.zmp_offset_x == 0.02
