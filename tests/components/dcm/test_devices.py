"""Tests of the DCM device tables (components/dcm/devices.py) and the NAO model file."""

from pathlib import Path

import numpy as np
import pytest
import yaml

from rtcf_components.dcm.devices import DEVICE_PREFIX, DeviceTable, ModelError, normalize_key

MODEL = Path(__file__).resolve().parents[3] / "model" / "nao_h25_v5.yaml"

BODY_ORDER = (  # ALMotion getJointNames("Body")
    "HeadYaw HeadPitch LShoulderPitch LShoulderRoll LElbowYaw LElbowRoll LWristYaw LHand "
    "LHipYawPitch LHipRoll LHipPitch LKneePitch LAnklePitch LAnkleRoll RHipYawPitch RHipRoll "
    "RHipPitch RKneePitch RAnklePitch RAnkleRoll RShoulderPitch RShoulderRoll RElbowYaw "
    "RElbowRoll RWristYaw RHand").split()


@pytest.fixture(scope="module")
def table():
    return DeviceTable.from_model(MODEL)


@pytest.fixture(scope="module")
def raw():
    with open(MODEL) as f:
        return yaml.safe_load(f)


def test_joints_in_body_order(table):
    assert table.joint_names == tuple(BODY_ORDER)
    assert table.n_joints == 26


def test_chains(table):
    chains = dict(zip(table.joint_names, table.joint_chains))
    assert chains["HeadPitch"] == "Head"
    assert chains["LHand"] == "LArm" and chains["RHand"] == "RArm"
    assert chains["LHipYawPitch"] == "LLeg" and chains["RAnkleRoll"] == "RLeg"
    assert [n for n in BODY_ORDER if chains[n] == "LArm"] == [
        "LShoulderPitch", "LShoulderRoll", "LElbowYaw", "LElbowRoll", "LWristYaw", "LHand"]
    assert sorted(set(chains.values())) == ["Head", "LArm", "LLeg", "RArm", "RLeg"]


@pytest.mark.parametrize("joint,lo,hi", [  # Aldebaran's joint limits
    ("HeadYaw", -2.0857, 2.0857), ("HeadPitch", -0.6720, 0.5149),
    ("LShoulderRoll", -0.3142, 1.3265), ("RShoulderRoll", -1.3265, 0.3142),
    ("LElbowRoll", -1.5446, -0.0349), ("RElbowRoll", 0.0349, 1.5446),
    ("LWristYaw", -1.8238, 1.8238), ("LHand", 0.0, 1.0), ("RHand", 0.0, 1.0),
    ("LHipYawPitch", -1.145303, 0.740810), ("RHipYawPitch", -1.145303, 0.740810),
    ("LHipRoll", -0.379472, 0.790477), ("RHipRoll", -0.790477, 0.379472),
    ("LHipPitch", -1.535889, 0.484090), ("RHipPitch", -1.535889, 0.484090),
    ("LKneePitch", -0.092346, 2.112528), ("RKneePitch", -0.103083, 2.120198),
    ("LAnklePitch", -1.189516, 0.922747), ("RAnklePitch", -1.186448, 0.932056),
    ("LAnkleRoll", -0.397880, 0.769001), ("RAnkleRoll", -0.768992, 0.397935),
])
def test_joint_limits(table, joint, lo, hi):
    j = table.joint_index(joint)
    assert tuple(table.joint_limits[j]) == (lo, hi)
    assert tuple(table.actuator_ranges[table.position_actuators[j]]) == (lo, hi)


def test_actuator_and_sensor_tables(table):
    n = table.n_joints
    for j, name in enumerate(BODY_ORDER):
        assert table.actuator_keys[table.position_actuators[j]] == f"{name}/Position/Actuator/Value"
        assert table.actuator_keys[table.hardness_actuators[j]] == f"{name}/Hardness/Actuator/Value"
        assert table.sensor_keys[table.position_sensors[j]] == f"{name}/Position/Sensor/Value"
    assert table.actuator_index("HeadYaw/Position/Actuator/Value") == 0
    assert table.actuator_index("HeadYaw/Hardness/Actuator/Value") == n
    assert table.actuator_index("ChestBoard/Led/Red/Actuator/Value") == 2 * n
    assert table.sensor_index("RHand/Position/Sensor/Value") == n - 1
    # chest 3 + face 2 eyes x 3 colours x 8 + ears 2 x 10 + feet 2 x 3
    assert table.n_actuators == 2 * n + 3 + 48 + 20 + 6
    assert table.interpolate.all() and table.interpolate.shape == (table.n_actuators,)
    assert (table.actuator_ranges[2 * n:] == [0.0, 1.0]).all()
    assert (table.actuator_ranges[n:2 * n] == [0.0, 1.0]).all()
    assert not table.joint_limits.flags.writeable


def test_led_keys(table):
    keys = set(table.actuator_keys)
    for c in ("Red", "Green", "Blue"):
        assert f"ChestBoard/Led/{c}/Actuator/Value" in keys
        for side in ("Left", "Right"):
            for d in range(0, 360, 45):
                assert f"Face/Led/{c}/{side}/{d}Deg/Actuator/Value" in keys
        assert f"LFoot/Led/{c}/Actuator/Value" in keys
        assert f"RFoot/Led/{c}/Actuator/Value" in keys
    ears = [k for k in keys if k.startswith("Ears/")]
    assert len(ears) == 20 and "Ears/Led/Right/324Deg/Actuator/Value" in keys
    assert table.groups["ChestLeds"] == tuple(
        f"ChestBoard/Led/{c}/Actuator/Value" for c in ("Red", "Green", "Blue"))


def test_key_normalisation(table):
    key = "HeadYaw/Position/Actuator/Value"
    assert normalize_key(DEVICE_PREFIX + key) == key
    assert normalize_key(key) == key
    assert normalize_key(DEVICE_PREFIX + DEVICE_PREFIX + key) == DEVICE_PREFIX + key
    assert table.actuator_index(DEVICE_PREFIX + key) == table.actuator_index(key)
    assert table.sensor_index(DEVICE_PREFIX + "HeadYaw/Position/Sensor/Value") == 0
    for bad in ("headyaw/Position/Actuator/Value", "device/subdevicelist/" + key,
                "Device/SubDeviceList" + key, DEVICE_PREFIX + DEVICE_PREFIX + key,
                "HeadYaw/Position/Sensor/Value", "", 3):
        with pytest.raises(KeyError):
            table.actuator_index(bad)
        assert not table.has_actuator(bad)


def test_from_dict_equals_from_file(table, raw):
    t2 = DeviceTable.from_model(raw)
    assert t2.actuator_keys == table.actuator_keys
    np.testing.assert_array_equal(t2.joint_limits, table.joint_limits)


def test_model_file_keeps_room_for_kinematics(raw):
    assert raw["name"] == "NAO H25 V5"
    assert set(raw) >= {"joints", "devices"}
    head = MODEL.read_text().splitlines()[0]
    assert head.startswith("#")


@pytest.mark.parametrize("mutate,msg", [
    (lambda d: d.pop("joints"), r"joints: expected a non-empty list"),
    (lambda d: d["joints"][3].update(limits=[1.0, 0.0]), r"joints\[3\]\.limits: expected"),
    (lambda d: d["joints"][3].update(limits=[0.0]), r"joints\[3\]\.limits"),
    (lambda d: d["joints"][3].update(limits=["a", 1]), r"joints\[3\]\.limits"),
    (lambda d: d["joints"][2].update(name="HeadYaw"), r"joints\[2\]\.name: duplicate"),
    (lambda d: d["joints"][0].update(name=None), r"joints\[0\]\.name"),
    (lambda d: d["joints"][0].pop("chain"), r"joints\[0\]\.chain"),
    (lambda d: d["devices"][1].update(actuators=["Face/Led/Red"]), r"devices\[1\]\.actuators\[0\]"),
    (lambda d: d["devices"][0].update(range=[1, 0]), r"devices\[0\]\.range"),
    (lambda d: d["devices"][0].update(interpolate="yes"), r"devices\[0\]\.interpolate"),
    (lambda d: d["devices"][0].update(actuators=["HeadYaw/Position/Actuator/Value"]),
     "duplicate actuator key"),
])
def test_model_errors_name_path_and_value(raw, mutate, msg):
    import copy
    d = copy.deepcopy(raw)
    mutate(d)
    with pytest.raises(ModelError, match=msg):
        DeviceTable.from_model(d)


def test_error_names_the_file(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("joints: []\n")
    with pytest.raises(ModelError, match=r"^bad\.yaml: joints"):
        DeviceTable.from_model(p)
    p.write_text("- 1\n")
    with pytest.raises(ModelError, match=r"^bad\.yaml: expected a mapping"):
        DeviceTable.from_model(str(p))


def test_non_interpolating_group():
    t = DeviceTable.from_model({
        "joints": [{"name": "J", "chain": "C", "limits": [-1, 1]}],
        "devices": [{"group": "Us", "interpolate": False, "range": [0, 1],
                     "actuators": [DEVICE_PREFIX + "US/Actuator/Value"]}]})
    assert t.actuator_keys == ("J/Position/Actuator/Value", "J/Hardness/Actuator/Value",
                               "US/Actuator/Value")
    assert t.interpolate.tolist() == [True, True, False]


# -- the kinematic data of the model, checked against the FK vectors of test_fk.py ----------------

def _fk(raw, chain, q):
    """Tiny mDH evaluator, only to check the model data (the Kinematics core is elsewhere)."""
    consts = raw["constants"]

    def num(x):
        if isinstance(x, str):
            return -consts[x[1:]] if x.startswith("-") else consts[x]
        return float(x)

    def rot(axis, deg):
        c, s = np.cos(np.radians(deg)), np.sin(np.radians(deg))
        m = np.eye(4)
        i, j = {"x": (1, 2), "y": (2, 0), "z": (0, 1)}[axis]
        m[i, i], m[i, j], m[j, i], m[j, j] = c, -s, s, c
        return m

    def trans(x, y, z):
        m = np.eye(4)
        m[:3, 3] = x, y, z
        return m

    def ops(lst):
        m = np.eye(4)
        for op in lst:
            m = m @ (trans(*map(num, op[1:])) if op[0] == "trans" else rot(op[0][-1], op[1]))
        return m

    c = raw["chains"][chain]
    m = ops(c["base"])
    for row, qi in zip(c["joints"], q):
        m = (m @ rot("x", row["alpha_deg"]) @ trans(num(row["a"]), 0, 0)
             @ rot("z", row["theta_deg"] + np.degrees(qi)) @ trans(0, 0, num(row["d"])))
        m = m @ ops(row.get("post", []))
    return m @ ops(c["end"])


@pytest.mark.parametrize("chain,q,pos", [   # test_fk's vectors, default model (ElbowOffsetY = 15)
    ("Head", [0.5, 0.3], (0, 0, 126.5)),
    ("LArm", [0, 0, 0, 0, 0], (218.70, 113.00, 87.69)),
    ("LArm", [0, np.pi / 2, 0, 0, 0], (-15.00, 316.70, 87.69)),
    ("LArm", [0, 0, 0, -np.pi / 2, 0], (105.00, -0.70, 87.69)),
    ("LArm", [0.5, 0.3, -0.7, -1.0, 0.4], (183.9770, 87.7125, 57.9434)),
    ("RArm", [0, 0, 0, 0, 0], (218.70, -113.00, 87.69)),
    ("RArm", [1.4, -0.3, 1.2, 0.9, 0.2], (108.5665, -121.5796, -58.4436)),
    ("LLeg", [0] * 6, (0, 50.00, -333.09)),
    ("LLeg", [0, 0, -0.5, 1.0, -0.5, 0], (-1.3903, 50.00, -308.2515)),
    ("LLeg", [-0.5, 0, 0, 0, 0, 0], (84.1038, 65.1853, -317.9047)),
    ("LLeg", [-0.3, 0.1, -0.4, 0.8, -0.4, -0.1], (43.3224, 73.1663, -311.6305)),
    ("RLeg", [-0.3, -0.1, -0.4, 0.8, -0.4, 0.1], (43.3224, -73.1663, -311.6305)),
])
def test_model_chains_reproduce_fk_vectors(raw, chain, q, pos):
    m = _fk(raw, chain, q)
    np.testing.assert_allclose(m[:3, 3], pos, atol=1e-4)
    if all(x == 0 for x in q):
        np.testing.assert_allclose(m[:3, :3], np.eye(3), atol=1e-12)


def test_model_chain_joints_match_joint_list(raw, table):
    for chain, c in raw["chains"].items():
        assert [r["joint"] for r in c["joints"]] == [
            n for n, ch in zip(table.joint_names, table.joint_chains) if ch == chain and
            n not in ("LHand", "RHand")]


def test_model_with_zero_elbow_offset_is_the_seed_table(raw):
    import copy
    r0 = copy.deepcopy(raw)
    r0["constants"]["ElbowOffsetY"] = 0.0
    k6 = _fk(r0, "LArm", [0.5, 0.3, -0.7, -1.0, 0.4])   # test_fk's K6, full matrix
    np.testing.assert_allclose(k6, [[0.879786, 0.475106, 0.015847, 187.867155],
                                    [-0.455177, 0.832332, 0.316287, 73.382490],
                                    [0.137080, -0.285478, 0.948531, 55.818207],
                                    [0, 0, 0, 1]], atol=1e-6)
    np.testing.assert_allclose(_fk(r0, "RArm", [1.4, -0.3, 1.2, 0.9, 0.2])[:3, 3],
                               (109.3199, -107.2496, -62.8119), atol=1e-4)
    np.testing.assert_allclose(_fk(r0, "LArm", [0] * 5)[:3, 3], (218.70, 98.00, 87.69), atol=1e-9)
