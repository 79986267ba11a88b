"""The physics core (components/simulator/core.py): physical checks with tolerances."""

import math
from pathlib import Path

import mujoco
import numpy as np
import pytest

from rtcf_components.simulator import SimDiverged, SimError, SimModel, Simulation, check_push

G = 9.81


@pytest.fixture(scope="module")
def nao():
    return SimModel.load("nao_v5")


@pytest.fixture(scope="module")
def arm():
    return SimModel.load("m1013")


def run(sim, seconds):
    for _ in range(round(seconds / sim.period)):
        sim.step()


def foot_corners(sim):
    """World xy of the 8 sole-box corners."""
    m, d = sim.mj_model, sim.mj_data
    pts = []
    for name in ("lfoot", "rfoot"):
        g = m.geom(name).id
        R, c, h = d.geom_xmat[g].reshape(3, 3), d.geom_xpos[g], m.geom_size[g]
        for sx in (-1, 1):
            for sy in (-1, 1):
                pts.append((c + R @ (h * [sx, sy, -1]))[:2])
    return np.array(pts)


def test_period_must_be_a_multiple_of_the_timestep(nao):
    with pytest.raises(SimError, match="not a whole multiple of the model's timestep"):
        Simulation(nao, 0.0015)
    for bad in (0.0, -0.01, math.nan, "x"):
        with pytest.raises(SimError, match="period"):
            Simulation(nao, bad)
    assert Simulation(nao, 0.01).substeps == 10


@pytest.mark.slow
def test_nao_stands_fsr_total_is_the_weight_and_zmp_inside_the_feet(nao):
    """20 s of simulated time at the default stiffness: checked every period."""
    sim = Simulation(nao, 0.01)
    s = sim.sensors
    z0 = s.base_pos[2]
    assert 0.30 < z0 < 0.36                          # torso height standing on straight legs
    hull = foot_corners(sim)
    for _ in range(2000):
        sim.step()
        assert np.all(s.q >= nao.lower - 1e-3) and np.all(s.q <= nao.upper + 1e-3)
        assert hull[:, 0].min() < s.zmp[0] < hull[:, 0].max()
        assert hull[:, 1].min() < s.zmp[1] < hull[:, 1].max()
        assert abs(s.fsr.sum() - nao.mass * G) < 0.02 * nao.mass * G
    np.testing.assert_allclose(foot_corners(sim), hull, atol=1e-3)   # the feet did not slide
    weight = nao.mass * G
    assert s.fsr.sum() == pytest.approx(weight, rel=0.02)
    assert s.lfoot[2] + s.rfoot[2] == pytest.approx(weight, rel=0.02)
    assert s.fsr.min() > 0                            # every FSR loaded
    hull = foot_corners(sim)
    assert hull[:, 0].min() < s.zmp[0] < hull[:, 0].max()
    assert hull[:, 1].min() < s.zmp[1] < hull[:, 1].max()
    assert abs(s.base_pos[2] - z0) < 0.005           # torso height drift [m]
    assert abs(s.base_rpy[0]) < 0.05 and abs(s.base_rpy[1]) < 0.05
    # a standing accelerometer reads +g along the torso's up axis; the gyro about nothing
    assert np.linalg.norm(s.acc) == pytest.approx(G, rel=0.01)
    assert s.acc[2] > 0.99 * G * math.cos(s.base_rpy[1]) - 0.1
    assert np.abs(s.gyro).max() < 0.01
    assert np.all(s.q >= nao.lower - 1e-3) and np.all(s.q <= nao.upper + 1e-3)
    # the CoP of each foot lies inside its sole, its FSRs share its normal force
    for cop, fsr, f in ((s.lcop, s.fsr[:4], s.lfoot), (s.rcop, s.fsr[4:], s.rfoot)):
        assert -0.055 < cop[0] < 0.105 and abs(cop[1]) < 0.045
        assert fsr.sum() == pytest.approx(f[2], rel=1e-9)


def test_static_zmp_is_the_com_projection_and_the_imu_sees_gravity(nao):
    """Standing still, the ZMP is the ground projection of the centre of mass, and the
    accelerometer reads gravity's reaction in the torso frame (R^T (0, 0, g))."""
    sim = Simulation(nao, 0.01)
    run(sim, 3.0)
    s, d = sim.sensors, sim.mj_data
    com = d.subtree_com[sim.mj_model.body("torso").id]
    np.testing.assert_allclose(s.zmp[:2], com[:2], atol=0.003)
    R = d.xmat[sim.mj_model.body("torso").id].reshape(3, 3)
    np.testing.assert_allclose(s.acc, R.T @ [0.0, 0.0, G], atol=0.05)
    # (xmat is from the last substep, one timestep before the pose in qpos)
    assert s.torso_rpy[1] == pytest.approx(math.asin(-R[2, 0]), abs=1e-5)


def test_stiffness_zero_falls(nao):
    sim = Simulation(nao, 0.01)
    sim.set_position_targets(sim.sensors.q, 0.0)
    run(sim, 2.0)
    assert sim.sensors.base_pos[2] < 0.2             # torso on the floor, not at 0.33 m
    assert np.all(np.abs(sim.sensors.tau) < 1e-9)    # no servo torque at all


def test_half_stiffness_halves_the_torque_limit(nao):
    sim = Simulation(nao, 0.01)
    q = sim.sensors.q.copy()
    j = nao.joint_names.index("LShoulderPitch")
    q[j] += 1.0                                       # far target: saturates
    sim.set_position_targets(q, 0.5)
    sim.step()
    assert abs(sim.sensors.tau[j]) == pytest.approx(0.5 * nao.effort_limit[j], rel=1e-6)


def aim_head(model, target):
    """A standing NAO whose HeadYaw servo is sent to `target` [rad]: (sim, joint index)."""
    sim = Simulation(model, 0.01)
    q = sim.sensors.q.copy()
    j = model.joint_names.index("HeadYaw")
    q[j] = target
    sim.set_position_targets(q, 1.0)
    return sim, j


def test_position_servo_tracks_a_target(nao):
    sim, j = aim_head(nao, 0.5)
    run(sim, 1.0)
    assert sim.sensors.q[j] == pytest.approx(0.5, abs=0.02)


def test_torques_saturate_and_are_counted(arm):
    sim = Simulation(arm, 0.001)
    tau = np.zeros(6)
    tau[0] = 1e5
    tau[5] = -1e5
    sim.set_torques(tau)
    sim.step()
    assert sim.saturations == 2
    assert sim.sensors.tau[0] == pytest.approx(arm.effort_limit[0])
    assert sim.sensors.tau[5] == pytest.approx(-arm.effort_limit[5])
    sim.set_torques(np.zeros(6))
    assert sim.saturations == 2


def test_arm_is_limp_by_default_and_torques_move_it(arm):
    sim = Simulation(arm, 0.001)
    assert arm.default_stiffness == 0.0
    tau = np.zeros(6)
    tau[0] = 10.0                                     # joint1 (vertical axis): no gravity
    sim.set_torques(tau)
    run(sim, 0.5)
    assert sim.sensors.q[0] > 0.05 and sim.sensors.dq[0] > 0


def test_arm_servo_holds_a_bent_pose_against_gravity(arm):
    q = np.array([0.0, 0.8, 0.5, 0.0, 0.3, 0.0])
    sim = Simulation(arm, 0.001, initial_q=q)
    sim.set_position_targets(q, 1.0)
    run(sim, 1.0)
    np.testing.assert_allclose(sim.sensors.q, q, atol=0.02)
    assert abs(sim.sensors.tau[1]) > 50                # joint2 carries the arm


def test_push_moves_the_robot(nao):
    sim = Simulation(nao, 0.01)
    run(sim, 0.2)
    before = sim.body_state("torso")[0].copy()
    sim.push("torso", [40.0, 0.0, 0.0], 0.1)
    run(sim, 0.3)
    pos, quat, lin, ang = sim.body_state("torso")
    assert pos[0] - before[0] > 0.01                  # pushed forward
    assert sim.mj_data.xfrc_applied.any() == False    # noqa: E712  the push has ended


def test_push_duration_is_rounded_to_timesteps(nao):
    sim = Simulation(nao, 0.01)
    sim.push("torso", [1.0, 0, 0], 0.0234)
    assert sim._push_left == 23
    sim.step()
    assert sim._push_left == 13
    sim.step()
    sim.step()
    assert sim._push_left == 0 and not sim.mj_data.xfrc_applied.any()


@pytest.mark.parametrize("body, force, duration, match", [
    ("Tail", [1, 0, 0], 0.1, "unknown body 'Tail'; bodies of nao_v5: torso, "),
    ("torso", [1, 0], 0.1, "push force: expected 3 numbers"),
    ("torso", [1, math.nan, 0], 0.1, "push force: expected finite numbers"),
    ("torso", [1, 0, 0], -1.0, "push duration"),
    ("torso", [1, 0, 0], math.inf, "push duration"),
])
def test_bad_push_is_refused_and_changes_nothing(nao, body, force, duration, match):
    sim = Simulation(nao, 0.01)
    with pytest.raises(SimError, match=match):
        sim.push(body, force, duration)
    assert sim._push_left == 0


def test_nan_commands_are_refused_and_change_nothing(nao):
    sim = Simulation(nao, 0.01)
    ctrl = sim.mj_data.ctrl.copy()
    frc = sim.mj_model.actuator_forcerange.copy()
    q = sim.sensors.q.copy()
    bad_q = q.copy()
    bad_q[3] = math.nan
    with pytest.raises(SimError, match=r"q_ref: expected finite numbers, got \[.*nan"):
        sim.set_position_targets(bad_q, 1.0)
    with pytest.raises(SimError, match="q_ref: expected 26 numbers, got shape"):
        sim.set_position_targets(q[:5], 1.0)
    with pytest.raises(SimError, match=r"stiffness: expected a number in \[0, 1\], got 1.5"):
        sim.set_position_targets(q, 1.5)
    with pytest.raises(SimError, match=r"stiffness: expected a number in \[0, 1\], got nan"):
        sim.set_position_targets(q, math.nan)
    stiff = np.ones(26)
    stiff[0] = -0.1
    with pytest.raises(SimError, match=r"stiffness: expected numbers in \[0, 1\]"):
        sim.set_position_targets(q, stiff)
    with pytest.raises(SimError, match="tau: expected finite numbers"):
        sim.set_torques(np.full(26, math.inf))
    with pytest.raises(SimError, match="tau: expected 26 numbers"):
        sim.set_torques([1.0])
    np.testing.assert_array_equal(sim.mj_data.ctrl, ctrl)
    np.testing.assert_array_equal(sim.mj_model.actuator_forcerange, frc)
    sim.step()                                         # and it keeps running
    assert sim.time == pytest.approx(0.01)


@pytest.mark.slow
def test_time_is_an_exact_multiple_of_the_period(nao):
    sim = Simulation(nao, 0.01)
    for _ in range(1000):
        sim.step()
    assert sim.time == 1000 * 0.01
    assert sim.mj_data.time == pytest.approx(10.0, abs=1e-9)
    sim.reset()
    assert sim.time == 0.0 and sim.mj_data.time == 0.0


def test_determinism_two_runs_are_bit_identical(nao):
    def log():
        sim = Simulation(nao, 0.01)
        q = sim.sensors.q.copy()
        out = []
        for k in range(150):
            q[0] = 0.5 * math.sin(0.1 * k)
            sim.set_position_targets(q, 0.8)
            if k == 50:
                sim.push("torso", [10.0, 5.0, 0.0], 0.05)
            sim.step()
            s = sim.sensors
            out.append(np.concatenate([s.q, s.dq, s.tau, s.acc, s.gyro, s.fsr, s.lfoot,
                                       s.rfoot, s.zmp, s.base_pos, s.base_quat]))
        return np.array(out)
    a, b = log(), log()
    assert a.tobytes() == b.tobytes()


def test_reset_to_a_posture_and_bad_reset(nao):
    sim = Simulation(nao, 0.01)
    q = np.zeros(26)
    knee = [nao.joint_names.index(n) for n in ("LKneePitch", "RKneePitch")]
    hip = [nao.joint_names.index(n) for n in ("LHipPitch", "RHipPitch")]
    ankle = [nao.joint_names.index(n) for n in ("LAnklePitch", "RAnklePitch")]
    q[knee], q[hip], q[ankle] = 0.8, -0.4, -0.4
    sim.reset(q)
    assert sim.sensors.base_pos[2] < 0.32             # crouched
    np.testing.assert_allclose(sim.sensors.q[knee], 0.8, atol=0.02)
    with pytest.raises(SimError, match="q: expected 26 numbers"):
        sim.reset([0.0])
    with pytest.raises(SimError, match=r"stiffness: expected a number in \[0, 1\]"):
        sim.reset(stiffness=-0.5)
    np.testing.assert_allclose(sim.sensors.q[knee], 0.8, atol=0.02)
    sim.reset(stiffness=0.0)                          # limp from t = 0: no servo torque at all
    assert np.all(sim.sensors.tau == 0.0)


def test_body_state(nao):
    sim = Simulation(nao, 0.01)
    pos, quat, lin, ang = sim.body_state("torso")
    np.testing.assert_allclose(pos, sim.sensors.base_pos)
    assert np.linalg.norm(quat) == pytest.approx(1.0)
    assert np.abs(lin).max() < 0.05 and np.abs(ang).max() < 0.5
    with pytest.raises(SimError, match="unknown body 'nope'"):
        sim.body_state("nope")


@pytest.mark.parametrize("name", ["m1013", "nao_v5"])
def test_velocity_count_is_the_elementwise_one(name):
    """A few joints (the M1013) are counted on Python floats, many (the NAO) with numpy: both
    count exactly the samples with |dq| > limit: at, just above and below the limit, signs,
    NaN (not counted), +-inf (counted)."""
    sim = Simulation(SimModel.load(name), 0.01 if name == "nao_v5" else 0.001)
    lim = np.array(sim.model.velocity_limit)
    dof = sim.mj_model.jnt_dofadr[[sim.mj_model.joint(j).id for j in sim.model.joint_names]]
    rng = np.random.default_rng(7)
    cases = [lim, -lim, np.nextafter(lim, np.inf), -np.nextafter(lim, np.inf),
             np.nextafter(lim, 0.0), np.full(lim.size, np.nan), np.full(lim.size, -np.inf)]
    cases += [rng.uniform(-2, 2, lim.size) * lim for _ in range(20)]
    for dq in cases:
        sim.mj_data.qvel[dof] = dq
        before = sim.velocity_exceeded
        sim._read_sensors()
        assert sim.velocity_exceeded - before == np.count_nonzero(np.abs(dq) > lim), dq


def test_velocity_limit_exceedances_are_counted(arm):
    """MuJoCo has no joint velocity limit and the M1013's drives have no back-EMF model: the
    limp arm (its default: torque control, nothing commanded) falls under gravity, joint2
    passes Doosan's 1.571 rad/s, and the core counts every joint sample above the limit."""
    sim = Simulation(arm, 0.001, initial_q=[0.0, 0.8, 0.5, 0.0, 0.3, 0.0])    # bent forward
    run(sim, 0.3)
    assert abs(sim.sensors.dq[1]) > arm.velocity_limit[1]
    assert sim.velocity_exceeded > 0
    sim.reset()
    assert sim.velocity_exceeded == 0


# -- the NAO's joint speeds follow its motors' torque-speed line --------------

@pytest.mark.parametrize("joint, target", [("HeadYaw", 2.0), ("HeadYaw", -2.0),
                                           ("HeadPitch", 0.4), ("LShoulderPitch", -1.5),
                                           ("RElbowYaw", 1.5), ("LWristYaw", 1.5)])
def test_a_step_of_the_target_stays_below_the_no_load_speed(nao, joint, target):
    """A saturated servo used to accelerate on (a HeadYaw step reached 27 rad/s, the URDF
    says 8.27): with the motor's back-EMF it tends to the no-load speed (the URDF's velocity
    limit; a little below: the gearbox's passive damping adds to the back-EMF, most on the
    light wrist) and gets there."""
    sim = Simulation(nao, 0.01)
    q = sim.sensors.q.copy()
    j = nao.joint_names.index(joint)
    q[j] = target
    sim.set_position_targets(q, 1.0)
    peak = 0.0
    for _ in range(100):
        sim.step()
        peak = max(peak, abs(sim.sensors.dq[j]))
    assert peak <= nao.velocity_limit[j]
    assert peak > 0.4 * nao.velocity_limit[j]           # a fast move, not a crawl
    assert sim.velocity_exceeded == 0
    assert sim.sensors.q[j] == pytest.approx(target, abs=0.03)


def test_back_emf_is_the_torque_speed_line_and_acts_only_on_powered_joints(nao):
    """back_emf = effort / velocity limit (the line through the stall torque and the no-load
    speed); a joint at stiffness 0 is limp: no servo torque and no back-EMF."""
    np.testing.assert_allclose(nao.back_emf, nao.effort_limit / nao.velocity_limit)
    sim = Simulation(nao, 0.01)
    m = sim.mj_model
    dof = [m.jnt_dofadr[m.joint(j).id] for j in nao.joint_names]
    base = 0.02                                       # the gearbox's passive damping
    np.testing.assert_allclose(m.dof_damping[dof], base + nao.back_emf)
    stiff = np.ones(26)
    stiff[3] = 0.0
    sim.set_stiffness(stiff)
    assert m.dof_damping[dof[3]] == base
    np.testing.assert_allclose(np.delete(m.dof_damping[dof], 3),
                               base + np.delete(nao.back_emf, 3))
    sim.set_stiffness(0.0)
    np.testing.assert_allclose(m.dof_damping[dof], base)
    arm = Simulation(SimModel.load("m1013"), 0.001)
    assert not np.any(arm.model.back_emf)


# -- bounded pushes, divergence reported (never silently reset) ----------------

UNSTABLE = Path(__file__).resolve().parents[2] / "data" / "unstable_servo.xml"


@pytest.mark.parametrize("name", ["nao_v5", "m1013"])
def test_push_force_is_bounded_by_twenty_times_the_robots_weight(name):
    model = SimModel.load(name)
    weight = model.mass * G
    assert model.weight == pytest.approx(weight, rel=1e-3)
    assert model.push_limit == pytest.approx(20 * model.weight)
    body = model.body_names[-1]
    check_push(model, body, (model.push_limit, 0.0, 0.0), 0.01)       # at the bound: taken
    f = model.push_limit / math.sqrt(3.0) * 1.001                       # |f| just above
    with pytest.raises(SimError, match=rf"push force: \|f\| = {model.push_limit * 1.001:.0f} N "
                                       rf"is beyond the limit of {model.push_limit:.0f} N "
                                       rf"\(20 x {name}'s weight"):
        check_push(model, body, (f, -f, f), 0.01)


def test_the_issues_push_of_1e5_newton_is_refused(nao):
    sim = Simulation(nao, 0.01)
    with pytest.raises(SimError, match=r"push force: \|f\| = 100000 N is beyond the limit of "
                                       r"1041 N \(20 x nao_v5's weight, 5\.305 kg"):
        sim.push("torso", (1e5, 0, 0), 0.01)
    assert sim._push_left == 0


@pytest.mark.parametrize("body", ["torso", "Head", "l_wrist", "l_ankle"])
def test_a_push_at_the_limit_does_not_make_the_nao_diverge(nao, body):
    """The bound leaves a margin: MuJoCo's NAO first diverged at 200 x its weight (Head,
    l_wrist, l_ankle) and held at 100 x on every body tried, 0.01 to 3 s."""
    sim = Simulation(nao, 0.01)
    for duration in (0.01, 0.3):
        sim.reset()
        sim.push(body, (0.0, nao.push_limit * 0.96, nao.push_limit * 0.28), duration)
        run(sim, duration + 0.3)
        assert sim.diverged is None


def test_divergence_is_reported_and_the_state_is_not_silently_reset(monkeypatch, tmp_path):
    """MuJoCo, left to itself, resets a blown-up state to the model's default pose and runs
    on (a warning on stdout only); the core turns that off and raises instead."""
    monkeypatch.chdir(tmp_path)                   # MuJoCo's default handler writes a log here
    model = SimModel.load(str(UNSTABLE))
    sim = Simulation(model, 0.002)
    run(sim, 0.02)                                # at rest upright: stable
    assert sim.diverged is None
    sim.set_position_targets([0.5])               # a target step: the stiff servo blows up
    with pytest.raises(SimDiverged, match=r"physics diverged in the period ending at "
                                          r"t = 0\.022 s: MuJoCo found NaN, infinite or huge "
                                          r"values of the accelerations \(QACC, last at DOF 0: "
                                          r"joint j1\); the robot's state is lost") as e:
        sim.step()
    assert "reset" in str(e.value)
    assert sim.diverged == str(e.value)
    assert sim.time == pytest.approx(0.022)       # the period ran; time did not restart
    with pytest.raises(SimDiverged):              # and it stays refused until a reset
        sim.step()
    assert sim.time == pytest.approx(0.022)
    sim.reset()
    assert sim.diverged is None and sim.time == 0.0
    run(sim, 0.01)
    assert sim.diverged is None and sim.sensors.q[0] == 0.0


def test_a_few_joints_clamp_on_floats_as_the_arrays_do(arm):
    """Up to SCALAR_JOINTS joints, a float64 array of torques takes the scalar path: the
    same ctrl bits and saturation count as the array path (a list takes that one), and a
    NaN or inf refused before anything is written."""
    fast, slow = Simulation(arm, 0.001), Simulation(arm, 0.001)
    lim = np.asarray(arm.effort_limit)
    rng = np.random.default_rng(7)
    cases = [rng.uniform(-2, 2, 6) * lim for _ in range(50)]
    cases += [lim.copy(), -lim, np.nextafter(lim, np.inf), np.nextafter(-lim, -np.inf),
              np.array([-0.0, 0.0, -0.0, 0.0, -0.0, 0.0]), np.zeros(6)]
    for tau in cases:
        fast.set_torques(tau)
        slow.set_torques(tau.tolist())
        assert fast.mj_data.ctrl.tobytes() == slow.mj_data.ctrl.tobytes()
        assert fast.saturations == slow.saturations
    assert fast.saturations > 0
    before, count = fast.mj_data.ctrl.copy(), fast.saturations
    for bad in (math.nan, math.inf, -math.inf):
        tau = np.full(6, 1e9)
        tau[3] = bad
        with pytest.raises(SimError, match="tau: expected finite numbers"):
            fast.set_torques(tau)
    assert fast.mj_data.ctrl.tobytes() == before.tobytes() and fast.saturations == count
    fast.set_torques(np.zeros(6)[::1])               # and it goes on


@pytest.mark.parametrize("name", ["m1013", "nao_v5"])
def test_a_float64_array_of_targets_is_checked_as_any_other_form(name):
    """A float64 array of one target per joint (a qRef sample's data, every period) takes
    set_position_targets' short way: the same ctrl bits as a list of the same numbers, a
    NaN or an infinity refused with the same message before anything is written, and the
    other forms (another dtype, shape or a stiffness given) still checked the long way."""
    model = SimModel.load(name)
    fast = Simulation(model, 0.01 if name == "nao_v5" else 0.001)
    slow = Simulation(model, fast.period)
    n = len(model.joint_names)
    rng = np.random.default_rng(3)
    cases = [rng.uniform(-1, 1, n) for _ in range(10)]
    cases += [np.full(n, -0.0), np.full(n, 5e-324), np.asarray(model.upper) * 2.0]
    for q in cases:
        fast.set_position_targets(q)
        slow.set_position_targets(q.tolist())
        assert fast.mj_data.ctrl.tobytes() == slow.mj_data.ctrl.tobytes()
    before = fast.mj_data.ctrl.tobytes()
    for bad in (math.nan, math.inf, -math.inf):
        q = np.zeros(n)
        q[n // 2] = bad
        with pytest.raises(SimError, match=r"q_ref: expected finite numbers, got \[0\.0, "):
            fast.set_position_targets(q)
    with pytest.raises(SimError, match=f"q_ref: expected {n} numbers, got shape \\(1, {n}\\)"):
        fast.set_position_targets(np.zeros((1, n)))
    with pytest.raises(SimError, match=f"q_ref: expected {n} numbers, got shape \\({n - 1},\\)"):
        fast.set_position_targets(np.zeros(n - 1))
    assert fast.mj_data.ctrl.tobytes() == before
    q32 = np.linspace(-0.5, 0.5, n, dtype=np.float32)       # converted, as a list would be
    fast.set_position_targets(q32)
    slow.set_position_targets(q32.tolist())
    assert fast.mj_data.ctrl.tobytes() == slow.mj_data.ctrl.tobytes()
    fast.set_position_targets(np.zeros(2 * n)[::2])           # strided: the same values
    slow.set_position_targets([0.0] * n)
    assert fast.mj_data.ctrl.tobytes() == slow.mj_data.ctrl.tobytes()


def test_quiet_substeps_leave_the_disable_flags_as_they_were(nao):
    """The substeps before a period's last run with MuJoCo's sensors off; the model's
    disable flags are as before afterwards (the sensor bit cleared, every other bit kept),
    and the last substep evaluates the sensors (the IMU reads gravity)."""
    sim = Simulation(nao, 0.01)
    opt = sim.mj_model.opt
    sensor = int(mujoco.mjtDisableBit.mjDSBL_SENSOR)
    before = opt.disableflags
    assert not before & sensor
    sim.step()
    assert sim.mj_model.opt.disableflags == before
    extra = int(mujoco.mjtDisableBit.mjDSBL_MIDPHASE)   # any other bit
    opt.disableflags = before | extra
    sim.step()
    assert sim.mj_model.opt.disableflags == before | extra
    opt.disableflags = before
    sim.mj_data.sensordata[:] = 0.0
    sim.step()
    assert np.linalg.norm(sim.sensors.acc) == pytest.approx(G, rel=0.05)


def test_a_period_counts_the_joints_above_their_limit_elementwise(arm):
    """Each period of the M1013 (a few joints, a fixed base: step() counts the velocities
    itself) adds exactly the number of joints with |dq| > limit of the new state: the limp
    arm falls, passes its limits and swings."""
    sim = Simulation(arm, 0.001, initial_q=[0.0, 0.8, 0.5, 0.0, 0.3, 0.0])
    lim = np.asarray(arm.velocity_limit)
    seen = 0
    for _ in range(1500):
        before = sim.velocity_exceeded
        sim.step()
        over = int(np.count_nonzero(np.abs(sim.sensors.dq) > lim))
        assert sim.velocity_exceeded - before == over
        seen += over
    assert seen > 50


@pytest.mark.parametrize("n", [0, 1, 2, 6, 7])
def test_the_written_out_velocity_count_counts_as_the_loop(n):
    """The per-period count of a few joints (core._over_counter, built for the limits):
    v > lim or v < -lim per joint, exactly as the loop over the pairs; NaN never counts,
    a value equal to its limit does not, an infinite one does unless its limit is too."""
    from array import array

    from rtcf_components.simulator.core import _over_counter
    rng = np.random.default_rng(n)
    specials = [math.nan, math.inf, -math.inf, 0.0, -0.0]
    for trial in range(300):
        lims = rng.uniform(0.0, 3.0, n)
        if trial % 7 == 0 and n:
            lims[rng.integers(n)] = math.inf
        lims = lims.tolist()
        count = _over_counter(lims)
        values = rng.uniform(-4.0, 4.0, n).tolist()
        for i in range(n):
            pick = rng.integers(4)
            if pick == 0:
                values[i] = specials[rng.integers(len(specials))]
            elif pick == 1:
                values[i] = lims[i] if rng.integers(2) else -lims[i]   # at the limit
        expected = sum(1 for v, lim in zip(values, lims) if v > lim or v < -lim)
        assert count(memoryview(array("d", values))) == expected, (values, lims)
