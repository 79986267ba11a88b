"""The generated MuJoCo models (model/sim/*.xml, components/simulator/mjcf.py)."""

from pathlib import Path

import mujoco
import numpy as np
import pytest
import yaml

from rtcf_components.simulator import SimError, SimModel, mjcf

ROOT = Path(__file__).resolve().parents[3]


def project_joints(name):
    return yaml.safe_load((ROOT / "model" / name).read_text())["joints"]


@pytest.mark.parametrize("name", ["nao_v5", "m1013"])
def test_regenerating_gives_the_same_bytes(name):
    text = mjcf.generate()[name]
    assert (ROOT / "model" / "sim" / f"{name}.xml").read_text(encoding="utf-8") == text


def test_check_mode_reports_nothing_stale():
    assert mjcf.main(["--check"]) == 0


@pytest.mark.parametrize("name, yaml_name, floating",
                         [("nao_v5", "nao_h25_v5.yaml", True),
                          ("m1013", "doosan_m1013.yaml", False)])
def test_joint_order_and_limits_match_the_project_model(name, yaml_name, floating):
    m = SimModel.load(name)
    joints = project_joints(yaml_name)
    assert m.joint_names == tuple(j["name"] for j in joints)
    assert m.floating is floating
    # the MJCF takes the URDF's limits; the project file's come from the documentation
    # table, within 0.3 mrad of them except RKneePitch (documentation [-0.103083,
    # 2.120198], URDF [-0.092328, 2.11255], the left knee's range)
    lower = [j["limits"][0] for j in joints]
    upper = [j["limits"][1] for j in joints]
    if name == "nao_v5":
        k = m.joint_names.index("RKneePitch")
        assert (lower[k], upper[k]) == (-0.103083, 2.120198)
        np.testing.assert_allclose([m.lower[k], m.upper[k]], [-0.092328, 2.11255], atol=1e-6)
        lower[k], upper[k] = -0.092328, 2.11255
    velocity = [j["velocity"] for j in joints]
    if name == "m1013":
        # the project file holds the URDF's 150 deg and 90 deg/s on every joint; the simulated
        # arm has its controller's ranges and speeds, wider (see mjcf.py)
        assert upper == [2.617] * 6 and velocity == [1.571] * 6
        reach = np.radians(mjcf.M1013_RANGE_DEG)
        assert np.all(reach >= np.array(upper)) and np.all(-reach <= np.array(lower))
        lower, upper = -reach, reach
        velocity = np.radians(mjcf.M1013_SPEED_DEG)
    np.testing.assert_allclose(m.lower, lower, atol=3e-4)
    np.testing.assert_allclose(m.upper, upper, atol=3e-4)
    effort = [j["torque"] for j in joints]
    if name == "m1013":       # the project file repeats the old URDF's 30 N m (see mjcf.py)
        assert effort == [30] * 6
        effort = mjcf.M1013_EFFORT
    np.testing.assert_allclose(m.effort_limit, effort, rtol=1e-6)
    np.testing.assert_allclose(m.velocity_limit, velocity, rtol=1e-6)
    assert m.timestep == 0.001


def test_nao_mass_is_the_urdf_total_without_the_fingers():
    m = SimModel.load("nao_v5")
    # 5.305402 kg in the URDF, of which 24 links of 2 mg (fingers, FSR pads) are left out
    assert m.mass == pytest.approx(5.305402 - 24 * 2e-6, abs=1e-9)
    assert len(m.fsr_names) == 8 and m.fsr_names[0] == "LFoot/FSR/FrontLeft"
    assert {"torso", "Head", "l_ankle", "r_ankle"} <= set(m.body_names)


def test_m1013_inertials_are_moved_into_link_frames():
    """The Doosan file's COMs are base-frame values at the zero posture: placed back in
    link frames, the world COM of each link at q = 0 must equal the file's number."""
    m = mujoco.MjModel.from_xml_path(str(ROOT / "model" / "sim" / "m1013.xml"))
    d = mujoco.MjData(m)
    mujoco.mj_kinematics(m, d)
    for name, (mass, com, _) in mjcf.M1013_INERTIALS.items():
        b = m.body(name).id
        assert m.body_mass[b] == pytest.approx(mass)
        np.testing.assert_allclose(d.xipos[b], com, atol=2e-6)
    assert SimModel.load("m1013").fsr_names == ()


def test_model_is_immutable():
    m = SimModel.load("nao_v5")
    with pytest.raises(AttributeError):
        m.mass = 1.0
    with pytest.raises(ValueError):
        m.lower[0] = 0.0


def test_missing_model_file_names_the_file(tmp_path):
    p = tmp_path / "nothere.xml"
    with pytest.raises(SimError, match="nothere.xml: no such model file"):
        SimModel.load(str(p))


def test_broken_model_file_names_the_file_and_mujocos_reason(tmp_path):
    p = tmp_path / "broken.xml"
    p.write_text("<mujoco><worldbody><body><geom type='sphere'/></body></worldbody>")
    with pytest.raises(SimError, match=r"broken.xml: MuJoCo cannot load this model: .+"):
        SimModel.load(str(p))


def test_model_without_servo_actuators_is_refused(tmp_path):
    p = tmp_path / "bare.xml"
    p.write_text("<mujoco><worldbody><body><joint name='j'/><geom size='0.1'/></body>"
                 "</worldbody></mujoco>")
    with pytest.raises(SimError, match="bare.xml: expected a position actuator"):
        SimModel.load(str(p))


def test_model_without_effort_limits_is_refused(tmp_path):
    p = tmp_path / "noeffort.xml"
    p.write_text("<mujoco><worldbody><body><joint name='j'/><geom size='0.1'/></body>"
                 "</worldbody><actuator><position name='j' joint='j'/>"
                 "<motor name='j_motor' joint='j'/></actuator></mujoco>")
    with pytest.raises(SimError, match="noeffort.xml: expected an actuatorfrcrange .* on j"):
        SimModel.load(str(p))
