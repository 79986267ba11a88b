"""Robot models as data (components/kinematics/model.py, urdf.py): the bundled models, the
V3.2 model differing by constants only, URDF files, and every ModelError with a message that
names the file, the place and the bad value."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest

from rtcf_components.kinematics import ModelError, chain_fk, chain_fk_batch, load_model
from rtcf_components.kinematics.algorithms import body_transform
from rtcf_components.kinematics.model import BUNDLED, MODEL_DIR, model_from_data, read_model_data
from rtcf_components.kinematics.urdf import model_from_urdf

DATA = Path(__file__).resolve().parents[2] / "data"
NAO_URDF = DATA / "naoV50.urdf"
H25 = MODEL_DIR / "nao_h25_v5.yaml"

BODY_ORDER = (  # ALMotion getJointNames("Body")
    "HeadYaw HeadPitch LShoulderPitch LShoulderRoll LElbowYaw LElbowRoll LWristYaw LHand "
    "LHipYawPitch LHipRoll LHipPitch LKneePitch LAnklePitch LAnkleRoll RHipYawPitch RHipRoll "
    "RHipPitch RKneePitch RAnklePitch RAnkleRoll RShoulderPitch RShoulderRoll RElbowYaw "
    "RElbowRoll RWristYaw RHand").split()


@pytest.fixture(scope="module")
def h25_data():
    return read_model_data(H25)


def build(data, mutate=None):
    d = copy.deepcopy(data)
    if mutate is not None:
        mutate(d)
    return model_from_data(d, "bad.yaml")


# -- bundled models ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(BUNDLED))
def test_every_bundled_model_loads(name):
    m = load_model(name)
    assert m.source == BUNDLED[name]
    assert m.chains and len(m.joint_names) == len(m.lower) == len(m.upper)
    assert np.all(m.lower <= m.upper)
    for c in m.chains.values():
        assert c.X.shape == (c.dof, 4, 4) and c.axes.shape == (c.dof, 3)
        np.testing.assert_allclose(np.linalg.norm(c.axes, axis=1), 1.0, atol=1e-15)
        np.testing.assert_array_equal(c.lower, m.lower[c.index])
        assert tuple(m.joint_names[i] for i in c.index) == c.joints
        # immutable: the arrays cannot be written
        with pytest.raises(ValueError):
            c.X[0, 0, 0] = 1.0
        q = 0.5 * (c.lower + c.upper)
        assert np.all(np.isfinite(chain_fk(m, c, q)))
    with pytest.raises(ValueError):
        m.lower[0] = 0.0
    with pytest.raises(TypeError):
        m.chains["x"] = None           # a read-only mapping
    # the same model from its file path and from a name relative to model/
    assert load_model(MODEL_DIR / BUNDLED[name]).joint_names == m.joint_names
    assert load_model(BUNDLED[name]).joint_names == m.joint_names


def test_nao_h25_contents():
    m = load_model("nao_h25_v5")
    assert m.name == "NAO H25 V5"
    assert m.joint_names == tuple(BODY_ORDER)
    assert list(m.chains) == ["Head", "LArm", "LLeg", "RLeg", "RArm"]
    assert m.chains["LArm"].joints == tuple(BODY_ORDER[2:7])
    assert m.chains["LArm"].members == tuple(BODY_ORDER[2:8])        # the hand belongs to LArm
    assert m.chains["RLeg"].members == m.chains["RLeg"].joints
    assert set(m.frames) == {"CameraTop", "CameraBottom"}
    assert set(m.body_names) == {*m.chains, *BODY_ORDER, "CameraTop", "CameraBottom", "Torso"}
    # Aldebaran's joint limits, and the maximum velocity / torque of the URDF (getLimits)
    i = m.joint_index("LElbowRoll")
    assert (m.lower[i], m.upper[i]) == (-1.5446, -0.0349)
    i = m.joint_index("RKneePitch")
    assert (m.lower[i], m.upper[i]) == (-0.103083, 2.120198)
    i = m.joint_index("HeadYaw")
    assert (m.max_velocity[i], m.max_torque[i]) == (8.26797, 1.547)


def test_m1013_contents():
    m = load_model("doosan_m1013")
    assert m.name == "Doosan M1013"
    assert m.joint_names == tuple(f"joint{k}" for k in range(1, 7))
    c = m.chain("arm")
    np.testing.assert_array_equal(c.lower, [-2.617] * 6)
    np.testing.assert_array_equal(c.axes, [[0, 0, 1]] * 6)
    np.testing.assert_allclose(c.X[0][:3, 3], [0, 0, 0.1525])
    np.testing.assert_allclose(c.X[2][:3, 3], [0.62, 0, 0])
    np.testing.assert_array_equal(c.tip, np.eye(4))
    np.testing.assert_array_equal(m.max_velocity, [1.571] * 6)
    assert m.frames == {}


V32_CONSTANTS = {"ElbowOffsetY": 0.0, "UpperArmLength": 90.0, "LowerArmLength": 50.55,
                 "HandOffsetX": 58.0, "HandOffsetZ": 15.9, "FootHeight": 45.11}


def test_v32_differs_by_constants_only(h25_data):
    """nao_v32 = the H25 file with the V3.2 link constants (and V3.x limits, V3.3 cameras):
    its chains are exactly those of the H25 data with the constants replaced."""
    v32 = load_model("nao_v32")
    h25 = load_model("nao_h25_v5")
    assert v32.name == "NAO V3.2"
    assert v32.joint_names == h25.joint_names and list(v32.chains) == list(h25.chains)
    same = build(h25_data, lambda d: d["constants"].update(V32_CONSTANTS))
    for name, c in v32.chains.items():
        ref, other = same.chains[name], h25.chains[name]
        assert c.joints == ref.joints == other.joints
        np.testing.assert_array_equal(c.X, ref.X)
        np.testing.assert_array_equal(c.axes, ref.axes)
        np.testing.assert_array_equal(c.tip, ref.tip)
        # same structure as H25: the rotations and axes match, only lengths differ
        np.testing.assert_allclose(c.X[:, :3, :3], other.X[:, :3, :3], atol=1e-15)
        np.testing.assert_array_equal(c.axes, other.axes)
    zero = np.zeros(26)
    mm = 1e-3
    np.testing.assert_allclose(body_transform(v32, zero, "LArm")[:3, 3],
                               np.array([90 + 50.55 + 58, 98, 100 - 15.9]) * mm, atol=1e-12)
    np.testing.assert_allclose(body_transform(v32, zero, "RLeg")[:3, 3],
                               np.array([0, -50, -(85 + 100 + 102.9 + 45.11)]) * mm, atol=1e-12)
    # the limits that differ between the versions, and only those
    diff = {n for n, a, b, c, d in zip(h25.joint_names, h25.lower, v32.lower, h25.upper,
                                        v32.upper) if (a, c) != (b, d)}
    assert diff == {"LShoulderRoll", "RShoulderRoll", "LElbowRoll", "RElbowRoll",
                    "LHipPitch", "RHipPitch"}
    i = v32.joint_index("LShoulderRoll")
    assert (v32.lower[i], v32.upper[i]) == (0.0087, 1.6494)
    np.testing.assert_array_equal(v32.chains["LArm"].lower, v32.lower[v32.chains["LArm"].index])


def test_chain_for_joints():
    m = load_model("nao_h25_v5")
    assert m.chain_for_joints(BODY_ORDER[2:7]) is m.chains["LArm"]
    assert m.chain_for_joints([j.lower() for j in BODY_ORDER[8:14]]) is m.chains["LLeg"]
    assert m.chain_for_joints(["HeadYaw", "HeadPitch"]) is m.chains["Head"]
    assert m.chain_for_joints(["HeadPitch", "HeadYaw"]) is None      # order matters
    assert m.chain_for_joints(BODY_ORDER[2:8]) is None                # with the hand: no
    assert m.chain_for_joints([]) is None
    assert m.joint_location("LKneePitch") == ("LLeg", 3)
    assert m.joint_location("LHand") is None


# -- lookups -------------------------------------------------------------------------------

def test_unknown_lookups():
    m = load_model("nao_h25_v5")
    with pytest.raises(ModelError, match=r"NAO H25 V5: unknown chain 'Larm' \(chains: Head, "
                                         r"LArm, LLeg, RLeg, RArm\)"):
        m.chain("Larm")
    with pytest.raises(ModelError, match="NAO H25 V5: unknown joint 'LKnee'"):
        m.joint_index("LKnee")
    with pytest.raises(ModelError, match=r"unknown body name 'CameraMiddle': expected a chain "
                                         r"\(Head, LArm, LLeg, RLeg, RArm\), a joint, a frame "
                                         r"\(CameraTop, CameraBottom\) or Torso"):
        body_transform(m, np.zeros(26), "CameraMiddle")
    with pytest.raises(ModelError, match="unknown chain 'LArm'"):
        chain_fk(load_model("doosan_m1013"), "LArm", [0] * 5)


# -- files -----------------------------------------------------------------------------------

def test_file_errors(tmp_path):
    with pytest.raises(ModelError, match=r"model 'nao_h99' not found: not a bundled model "
                                         r"\(nao_h25_v5, nao_v32, doosan_m1013\)"):
        load_model("nao_h99")
    bad = tmp_path / "broken.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(ModelError, match="broken.yaml: cannot read the model file"):
        load_model(bad)
    bad.write_bytes(b"name: \xff\xfe\n")
    with pytest.raises(ModelError, match="broken.yaml: cannot read the model file"):
        load_model(bad)
    bad.write_text("- a\n- b\n")
    with pytest.raises(ModelError, match="broken.yaml: expected a mapping at the top level, "
                                         "got list"):
        load_model(bad)
    bad.write_text("inherit: 3\n")
    with pytest.raises(ModelError, match="broken.yaml: inherit: expected a model file name, "
                                         "got 3"):
        load_model(bad)
    bad.write_text("inherit: missing.yaml\n")
    with pytest.raises(ModelError, match="missing.yaml: cannot read the model file"):
        load_model(bad)


def test_inherit(tmp_path):
    (tmp_path / "base.yaml").write_text(H25.read_text())
    child = tmp_path / "child.yaml"
    child.write_text("inherit: base.yaml\nname: child\nconstants: {FootHeight: 40}\n"
                     "joint_limits: {HeadYaw: [-1, 1]}\n")
    m = load_model(child)
    assert m.name == "child"
    i = m.joint_index("HeadYaw")
    assert (m.lower[i], m.upper[i]) == (-1, 1)
    assert body_transform(m, np.zeros(26), "LLeg")[2, 3] == pytest.approx(-0.3279, abs=1e-12)
    child.write_text("inherit: base.yaml\njoint_limits: {Knee: [-1, 1]}\n")
    with pytest.raises(ModelError, match=r"child.yaml: joint_limits.Knee: no such joint in "
                                         r"base.yaml"):
        load_model(child)
    child.write_text("inherit: base.yaml\njoint_limits: [1, 2]\n")
    with pytest.raises(ModelError, match=r"child.yaml: joint_limits: expected joint: "
                                         r"\[min, max\], got \[1, 2\]"):
        load_model(child)


def _set(path, value):
    """A mutation that sets data[path...] = value (path of keys / indices)."""
    def f(d):
        obj = d
        for k in path[:-1]:
            obj = obj[k]
        obj[path[-1]] = value
    return f


def _del(path):
    def f(d):
        obj = d
        for k in path[:-1]:
            obj = obj[k]
        del obj[path[-1]]
    return f


# (mutation, the message: file, place and value)
DATA_ERRORS = {
    "unit": (_set(["length_unit"], "inch"),
             "bad.yaml: length_unit: expected one of ['m', 'mm'], got 'inch'"),
    "constants": (_set(["constants"], [1, 2]),
                  "bad.yaml: constants: expected a mapping, got [1, 2]"),
    "no joints": (_del(["joints"]), "bad.yaml: joints: expected a non-empty list, got None"),
    "empty joints": (_set(["joints"], []), "bad.yaml: joints: expected a non-empty list, got []"),
    "joint no name": (_set(["joints", 3], {"limits": [0, 1]}),
                      "bad.yaml: joints[3]: expected a mapping with a name, "
                      "got {'limits': [0, 1]}"),
    "limits order": (_set(["joints", 0, "limits"], [1.0, -1.0]),
                     "bad.yaml: joints[0].limits: expected [min, max] with min <= max, "
                     "got [1.0, -1.0]"),
    "limits length": (_set(["joints", 5, "limits"], [1.0]),
                      "bad.yaml: joints[5].limits: expected [min, max] with min <= max, "
                      "got [1.0]"),
    "limits nan": (_set(["joints", 5, "limits"], [float("nan"), 1.0]),
                   "bad.yaml: joints[5].limits: expected [min, max] with min <= max, "
                   "got [nan, 1.0]"),
    "limits text": (_set(["joints", 5, "limits"], ["a", 1.0]),
                    "bad.yaml: joints[5].limits: expected [min, max] with min <= max, "
                    "got ['a', 1.0]"),
    "no limits": (_del(["joints", 2, "limits"]),
                  "bad.yaml: joints[2].limits: expected [min, max] with min <= max, got None"),
    "velocity": (_set(["joints", 1, "velocity"], -2),
                 "bad.yaml: joints[1].velocity: expected a number >= 0, got -2"),
    "torque": (_set(["joints", 1, "torque"], True),
               "bad.yaml: joints[1].torque: expected a number >= 0, got True"),
    "duplicate": (_set(["joints", 1, "name"], "HeadYaw"),
                  "bad.yaml: joints: duplicate joint names ['HeadYaw']"),
    "no chains": (_del(["chains"]), "bad.yaml: chains: expected a mapping of chains, got None"),
    "chain rows": (_set(["chains", "Head", "joints"], "HeadYaw"),
                   "bad.yaml: chains.Head.joints: expected a non-empty list of joint rows, "
                   "got 'HeadYaw'"),
    "chain unknown joint": (_set(["chains", "LArm", "joints", 2, "joint"], "LElbow"),
                            "bad.yaml: chains.LArm.joints[2].joint: expected a joint of the "
                            "joints list, got 'LElbow'"),
    "alpha": (_set(["chains", "LLeg", "joints", 1, "alpha_deg"], "-90"),
              "bad.yaml: chains.LLeg.joints[1].alpha_deg: expected a number, got '-90'"),
    "unknown constant": (_set(["chains", "LArm", "joints", 2, "d"], "UpperArmLenght"),
                         "bad.yaml: chains.LArm.joints[2].d: unknown or non-numeric constant "
                         "'UpperArmLenght'"),
    "negated unknown constant": (_set(["chains", "RLeg", "base"], [["trans", 0, "-HipOffset", 0]]),
                                 "bad.yaml: chains.RLeg.base[0]: unknown or non-numeric "
                                 "constant '-HipOffset'"),
    "non-numeric constant": (_set(["constants", "ThighLength"], "long"),
                             "bad.yaml: chains.LLeg.joints[3].a: unknown or non-numeric "
                             "constant '-ThighLength'"),
    "a not a number": (_set(["chains", "LLeg", "joints", 3, "a"], [1]),
                       "bad.yaml: chains.LLeg.joints[3].a: expected a finite number or a "
                       "constant name, got [1]"),
    "bad op": (_set(["chains", "Head", "end"], [["rotw", 90]]),
               "bad.yaml: chains.Head.end[0]: expected [trans, x, y, z] or "
               "[rotx|roty|rotz(_rad), angle], got ['rotw', 90]"),
    "op arity": (_set(["chains", "Head", "end"], [["trans", 1, 2]]),
                 "bad.yaml: chains.Head.end[0]: expected [trans, x, y, z] or "
                 "[rotx|roty|rotz(_rad), angle], got ['trans', 1, 2]"),
    "ops not list": (_set(["chains", "Head", "base"], "up"),
                     "bad.yaml: chains.Head.base: expected a list of operations, got 'up'"),
    "post": (_set(["chains", "LArm", "joints", 1, "post"], [[]]),
             "bad.yaml: chains.LArm.joints[1].post[0]: expected [operation, values...], got []"),
    "mixed rows": (_set(["chains", "Head", "joints", 1], {"joint": "HeadPitch", "axis": [0, 1, 0]}),
                   "bad.yaml: chains.Head.joints: every row must be a mapping, all mDH"),
    "frame parent": (_set(["frames", "CameraTop", "parent"], "Neck"),
                     "bad.yaml: frames.CameraTop.parent: expected one of the chains ['Head', "
                     "'LArm', 'LLeg', 'RLeg', 'RArm'], got 'Neck'"),
    "frame not a mapping": (_set(["frames", "CameraTop"], [1, 2]),
                            "bad.yaml: frames.CameraTop.parent: expected one of the chains "
                            "['Head', 'LArm', 'LLeg', 'RLeg', 'RArm'], got [1, 2]"),
    "frame ops": (_set(["frames", "CameraTop", "ops"], [["roty_rad", "x"]]),
                  "bad.yaml: frames.CameraTop.ops[0]: expected [trans, x, y, z] or "
                  "[rotx|roty|rotz(_rad), angle], got ['roty_rad', 'x']"),
}


@pytest.mark.parametrize("case", list(DATA_ERRORS))
def test_model_data_errors(h25_data, case):
    mutate, message = DATA_ERRORS[case]
    with pytest.raises(ModelError) as e:
        build(h25_data, mutate)
    assert str(e.value).startswith(message), str(e.value)


ARM_ROW = {"joint": "j1", "xyz": [0, 0, 0.1], "rpy": [0, 0, 0], "axis": [0, 0, 1]}
URDF_STYLE_ERRORS = {
    "xyz": ({"xyz": [0, 0]}, "bad.yaml: chains.arm.joints[0]: expected xyz: [x, y, z] and "
                             "rpy: [r, p, y], got xyz [0, 0], rpy [0, 0, 0]"),
    "rpy": ({"rpy": [0, "a", 0]}, "bad.yaml: chains.arm.joints[0]: expected xyz: [x, y, z] and "
                                  "rpy: [r, p, y], got xyz [0, 0, 0.1], rpy [0, 'a', 0]"),
    "xyz value": ({"xyz": [0, 0, "Up"]}, "bad.yaml: chains.arm.joints[0].xyz: unknown or "
                                         "non-numeric constant 'Up'"),
    "axis zero": ({"axis": [0, 0, 0]}, "bad.yaml: chains.arm.joints[0].axis: expected a "
                                       "non-zero [x, y, z], got [0, 0, 0]"),
    "axis missing": ({"axis": None}, "bad.yaml: chains.arm.joints[0].axis: expected a "
                                     "non-zero [x, y, z], got None"),
}


def one_joint(**row):
    return {"name": "one", "joints": [{"name": "j1", "limits": [-1, 1]}],
            "chains": {"arm": {"joints": [{**ARM_ROW, **row}],
                               "end": [["trans", 0.2, 0, 0]]}}}


@pytest.mark.parametrize("case", list(URDF_STYLE_ERRORS))
def test_urdf_style_row_errors(case):
    row, message = URDF_STYLE_ERRORS[case]
    with pytest.raises(ModelError) as e:
        model_from_data(one_joint(**row), "bad.yaml")
    assert str(e.value) == message


def test_one_joint_chain():
    """A chain of one joint (the generated code's single-argument path), URDF-style rows."""
    m = model_from_data(one_joint(axis=[0, 0, 2]), "one.yaml")
    c = m.chain("arm")
    np.testing.assert_array_equal(c.axes, [[0, 0, 1]])         # normalised
    T = chain_fk(m, c, [np.pi / 2])
    np.testing.assert_allclose(T[:3, 3], [0, 0.2, 0.1], atol=1e-15)
    B = chain_fk_batch(m, c, np.array([[np.pi / 2], [0.0]]))
    np.testing.assert_allclose(B[0], T, atol=1e-15)
    np.testing.assert_allclose(B[1][:3, 3], [0.2, 0, 0.1], atol=1e-15)


# -- URDF files ------------------------------------------------------------------------------

def test_urdf_default_chains():
    m = load_model(NAO_URDF)
    assert m.name == "NaoH25V50" and m.source == "naoV50.urdf"
    # one chain per leaf link with a moving joint on its way
    assert {"l_gripper", "r_gripper", "l_sole", "r_sole", "gaze"} <= set(m.chains)
    assert m.chains["l_gripper"].joints == tuple(BODY_ORDER[2:8])
    assert m.chains["r_sole"].joints == tuple(BODY_ORDER[14:20])
    i = m.joint_index("HeadYaw")
    assert (m.lower[i], m.upper[i], m.max_velocity[i], m.max_torque[i]) == \
        (-2.08567, 2.08567, 8.26797, 1.547)
    i = m.joint_index("LFinger11")                   # continuous: no limits
    assert (m.lower[i], m.upper[i]) == (-np.inf, np.inf)
    # fixed joints fold into the constants: l_sole 45.11 mm below the ankle
    np.testing.assert_allclose(m.chains["l_sole"].tip[:3, 3], [0, 0, -0.04511])
    T = chain_fk(m, "l_sole", np.zeros(6))
    np.testing.assert_allclose(T[:3, 3], [0, 0.05, -(0.085 + 0.1 + 0.1029 + 0.04511)],
                               atol=1e-15)


def test_urdf_named_chains():
    m = model_from_urdf(NAO_URDF, {"LLeg": ("torso", "l_sole"), "Head": ("torso", "Head")})
    assert list(m.chains) == ["LLeg", "Head"]
    assert m.joint_names == tuple(BODY_ORDER[8:14]) + ("HeadYaw", "HeadPitch")
    np.testing.assert_array_equal(m.chains["Head"].tip, np.eye(4))


SMALL_URDF = """<?xml version="1.0"?>
<robot name="small">
  <link name="base"/><link name="a"/><link name="b"/><link name="c"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/>
    <origin xyz="0 0 0.1" rpy="0 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="2" velocity="3"/></joint>
  <joint name="j2" type="{j2}"><parent link="a"/><child link="b"/>
    <origin xyz="0.2 0 0" rpy="0 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="2" velocity="3"/></joint>
  <joint name="j3" type="fixed"><parent link="b"/><child link="c"/>
    <origin xyz="0.05 0 0" rpy="0 0 0"/></joint>
</robot>
"""


def test_urdf_errors(tmp_path):
    good = tmp_path / "small.urdf"
    good.write_text(SMALL_URDF.format(j2="revolute"))
    m = load_model(good)
    assert list(m.chains) == ["c"] and m.chains["c"].joints == ("j1", "j2")
    np.testing.assert_allclose(chain_fk(m, "c", [0, 0])[:3, 3], [0.25, 0, 0.1], atol=1e-15)

    bad = tmp_path / "prism.urdf"
    bad.write_text(SMALL_URDF.format(j2="prismatic"))
    with pytest.raises(ModelError, match="prism.urdf: joint 'j2' is prismatic: only revolute, "
                                         "continuous and fixed joints are supported"):
        load_model(bad)
    bad = tmp_path / "garbage.urdf"
    bad.write_text("<robot name='x'><link name='a'>")
    with pytest.raises(ModelError, match="garbage.urdf: not a valid URDF"):
        load_model(bad)
    with pytest.raises(ModelError, match=r"small.urdf: chains.arm: no link 'd' in the URDF"):
        model_from_urdf(good, {"arm": ("base", "d")})
    with pytest.raises(ModelError, match=r"small.urdf: chains.arm: 'base' does not descend "
                                         r"from 'c'"):
        model_from_urdf(good, {"arm": ("c", "base")})
    with pytest.raises(ModelError, match=r"small.urdf: every chain must start at one root "
                                         r"link, got \['a', 'base'\]"):
        model_from_urdf(good, {"x": ("base", "b"), "y": ("a", "c")})
