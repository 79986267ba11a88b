"""Generate the MuJoCo models (MJCF) of model/sim/ from the project's robot descriptions.

    python -m rtcf_components.simulator.mjcf            # rewrites model/sim/*.xml
    python -m rtcf_components.simulator.mjcf --check    # exit 1 when a committed file differs

Pure data transformation, run at development time (no mujoco import): the output is
committed, and a test checks that regenerating gives the same bytes.

Sources
- NAO V5: joint order from model/nao_h25_v5.yaml (the DCM's order, so MuJoCo's qpos order
  is the project's), everything else from the public NAO V5 URDF (ros-naoqi nao_robot,
  tests/data/naoV50.urdf): link inertials, joint origins, axes, limits, effort and velocity,
  the FSR / IMU / sole frames, the gear ratios (`mechanicalReduction`).
- Doosan M1013: joint origins and axes from model/doosan_m1013.yaml, joint ranges and speeds
  from Doosan's controller configuration (M1013_RANGE_DEG below; the URDF's 150 deg are
  narrower than the robot),
  link inertials from doosan-robotics/doosan-robot2 dsr_description2/urdf/m1013.urdf at
  commit fdf36f4dd88c33f8eef3be85234077d15c6ca40d (the table M1013_INERTIALS below). That
  file's effort limits (30 N m on every joint, as the project model repeats) cannot hold
  the arm's own weight (gravity alone needs 63 N m at joint2 = 0.5 rad, 131 N m
  horizontal), so the efforts are those of the same repository's later
  dsr_description2/xacro/macro.m1013.white.xacro at commit
  257243e6c392f0d5e22e02e52cbdeb27c4c634a2 (M1013_EFFORT below). That
  gives each centre of mass in the BASE frame at the zero posture, not in the link frame
  (link6's lies at z = 1.40 m, the flange's height at zero is 1.45 m; read in link frames
  they would put link6's mass 1.4 m off the flange); the generator transforms them (and the
  inertia tensors, taken as base-aligned) into the link frames.

Modelling choices (docs/simulator.md, "Models, actuators and sensors")
- Collision: primitives only, no meshes. NAO feet are boxes of the sole (0.16 x 0.08 m, as
  the SimSpark NAO model, placed around the URDF's four FSRs, bottom at the URDF's sole
  frame); limbs are capsules from joint to joint; the torso a box, the head a sphere. Robot
  geoms collide with the floor only (contype 2 / conaffinity 1 against the floor's 1 / 2):
  NAO's legs touch each other in some postures and the real covers slide.
- The NAO's fingers (16 mimic joints of 2 mg links) are left out; LHand/RHand are hinges
  over the URDF's 0..1 range on the gripper link.
- Rotor inertia reflected through the gearbox as joint armature (J_rotor * N^2 with the
  URDF's reduction N), which is also what keeps the light distal links stable at 1 ms.
- Each joint has two actuators: `<joint>` a position servo (kp, kv; force range scaled by
  the stiffness at run time) and `<joint>_motor` a torque input; the joint's
  actuatorfrcrange clamps their sum at the URDF effort.
- NAO joint speeds: the URDF's velocity limit is the motor's no-load speed through the
  gearbox (velocity x mechanicalReduction = 8000 rpm on the legs, Maxon RE-max 24, and
  11 900 rpm on the head and arms, RE-max 17 (11 864 on HeadYaw, ShoulderPitch, ElbowYaw),
  the no-load speeds of Aldebaran's NAO motor table "H25 - Motors - V 3.2",
  doc.aldebaran.com/1-14/family/nao_h25/motors_h25_v32.html). A DC motor
  driven by a voltage (the NAO's motor boards drive PWM) gives less torque the faster it
  turns: the back-EMF acts as a damping k outside the torque limit. The model takes the
  torque-speed line through (0, URDF effort) and (URDF velocity, 0): k = effort / velocity
  (custom numeric `back_emf`, applied by the core as joint damping while a joint's stiffness
  is above 0), and the servo's own kv is lowered by k so that the servo loop's total damping
  (critical with the armature) is unchanged below saturation. A saturated joint then tends
  to the no-load speed instead of accelerating on (a HeadYaw step reached 27 rad/s).
- LHipYawPitch and RHipYawPitch are one motor on the real NAO: an equality couples them.
"""

from __future__ import annotations

import argparse
import math
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

from rtcf_components.kinematics.model import rpy

ROOT = Path(__file__).resolve().parents[2]
MODEL_DIR = ROOT / "model"
OUT_DIR = MODEL_DIR / "sim"
NAO_URDF = ROOT / "tests" / "data" / "naoV50.urdf"
DOOSAN_SOURCE = ("doosan-robotics/doosan-robot2 dsr_description2/urdf/m1013.urdf "
                 "@ fdf36f4dd88c33f8eef3be85234077d15c6ca40d")

TIMESTEP = 0.001                 # [s]
ROTOR_INERTIA = 1.0e-7           # [kg m^2] small DC motor rotor (assumed), times N^2
SERVO_SATURATION_ERROR = 0.03    # [rad] position error at which a servo reaches its effort
JOINT_DAMPING_NAO = 0.02         # [N m s/rad] passive (gearbox) damping, felt when limp
SOLE = (0.16, 0.08, 0.01)        # [m] NAO sole box: length, width, thickness

# M1013 link inertials, BASE frame at zero posture (see the module docstring):
# name: (mass [kg], com xyz [m], (ixx, ixy, ixz, iyy, iyz, izz) [kg m^2])
M1013_INERTIALS = {
    "base_0": (3.722, (-1.2e-05, -6e-05, 0.050723),
               (0.011, -7.19e-06, -1.94e-06, 0.011, 4.9e-06, 0.014)),
    "link1": (7.446, (7e-05, 0.044281, 0.143327),
              (0.039, 2.1e-05, -3.61e-05, 0.023, -0.003, 0.039)),
    "link2": (10.569, (-1.6e-05, 0.189372, 0.418558),
              (0.820, 1.19e-05, -0.000263, 0.82, -0.008, 0.031)),
    "link3": (3.614, (6e-06, 0.07917, 0.781807),
              (0.012, -4.38e-06, -1.2e-06, 0.008, 0.002, 0.011)),
    "link4": (3.785, (-2.1e-05, 0.12337, 1.148),
              (0.177, -2.34e-06, -4.92e-06, 0.161, -0.05, 0.022)),
    "link5": (2.598, (-1.7e-05, 0.06662, 1.33103),
              (0.007, -4.93e-06, -5.57e-06, 0.004, -6.64e-05, 0.007)),
    "link6": (1.128, (-0.000174, 0.034708, 1.40022),
              (0.001, -2.79e-06, 5.78e-06, 0.001, -6.67e-06, 0.001)),
}
M1013_EFFORT = (3460.0, 3460.0, 1630.0, 50.0, 50.0, 50.0)   # [N m] macro.m1013.white.xacro
M1013_EFFORT_SOURCE = ("doosan-robotics/doosan-robot2 dsr_description2/xacro/"
                       "macro.m1013.white.xacro @ 257243e6c392f0d5e22e02e52cbdeb27c4c634a2")
# The arm's joint ranges and speeds as its controller has them: the URDF's 2.617 rad (150 deg) on
# every joint is the ROS description's, narrower than the robot (a DRL program's movejx that
# needs joint 5 at 152.7 deg runs on the arm); the kinematics model keeps the URDF's values.
M1013_RANGE_DEG = (360.0, 360.0, 160.0, 360.0, 360.0, 360.0)     # [deg] +-, <limit><pos>
M1013_SPEED_DEG = (120.0, 120.0, 180.0, 225.0, 225.0, 225.0)     # [deg/s] <limit><vel>
M1013_RANGE_SOURCE = ("doosan-robotics/doosan-robot2 common2/bin/DRCF/config/MF/m1013a.xml "
                      "@ f8c6dc6bce8fe31d6336d5ab630b479c7f2e6d00")   # the controller emulator's
M1013_ARMATURE = (0.2, 0.2, 0.1, 0.05, 0.05, 0.05)     # [kg m^2] reflected rotor (assumed)
M1013_DAMPING = 0.5                                     # [N m s/rad]
M1013_SERVO_HZ = 30.0    # the arm's position servos (off by default: torque mode): kp gives
                         # this natural frequency with the armature alone
M1013_CAPSULE_RADIUS = (0.08, 0.07, 0.06, 0.05, 0.05, 0.045)


def fmt(x: float) -> str:
    """A number as MJCF text: 9 significant digits, no '-0' (stable bytes)."""
    s = f"{float(x):.9g}"
    return "0" if s in ("-0", "0") else s


def vec(v) -> str:
    return " ".join(fmt(x) for x in v)


def rpy_matrix(r: float, p: float, y: float) -> np.ndarray:
    """URDF rpy (fixed X, then Y, then Z) as a 3x3 rotation."""
    return rpy(r, p, y)[:3, :3]


def euler_attr(rpy_: np.ndarray) -> str:
    """' euler="r p y"' (URDF's fixed-axis rpy; the compiler's eulerseq is XYZ) or ''."""
    if not np.any(np.asarray(rpy_) != 0):
        return ""
    return f' euler="{vec(rpy_)}"'


# ---------------------------------------------------------------------------- URDF reading

@dataclass
class UJoint:
    name: str
    type: str
    parent: str
    child: str
    xyz: np.ndarray
    rpy: np.ndarray
    axis: np.ndarray
    lower: float = 0.0
    upper: float = 0.0
    effort: float = 0.0
    velocity: float = 0.0


@dataclass
class ULink:
    name: str
    mass: float = 0.0
    com: np.ndarray = field(default_factory=lambda: np.zeros(3))
    com_rpy: np.ndarray = field(default_factory=lambda: np.zeros(3))
    inertia: tuple = ()          # ixx ixy ixz iyy iyz izz


def _floats(text: str | None, default: str) -> np.ndarray:
    return np.array([float(v) for v in (text or default).split()])


def read_urdf(path: Path):
    """(links by name, joints in file order, mechanical reductions by joint name)."""
    root = ET.parse(path).getroot()
    links = {}
    for el in root.findall("link"):
        link = ULink(el.get("name"))
        inertial = el.find("inertial")
        if inertial is not None:
            link.mass = float(inertial.find("mass").get("value"))
            o = inertial.find("origin")
            if o is not None:
                link.com = _floats(o.get("xyz"), "0 0 0")
                link.com_rpy = _floats(o.get("rpy"), "0 0 0")
            i = inertial.find("inertia")
            link.inertia = tuple(float(i.get(k)) for k in
                                 ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"))
        links[link.name] = link
    joints = []
    for el in root.findall("joint"):
        o = el.find("origin")
        ax = el.find("axis")
        j = UJoint(el.get("name"), el.get("type"), el.find("parent").get("link"),
                   el.find("child").get("link"),
                   _floats(o.get("xyz") if o is not None else None, "0 0 0"),
                   _floats(o.get("rpy") if o is not None else None, "0 0 0"),
                   _floats(ax.get("xyz") if ax is not None else None, "1 0 0"))
        lim = el.find("limit")
        if lim is not None:
            j.lower, j.upper = float(lim.get("lower", 0)), float(lim.get("upper", 0))
            j.effort, j.velocity = float(lim.get("effort", 0)), float(lim.get("velocity", 0))
        joints.append(j)
    reductions = {}
    for tr in root.findall("transmission"):
        jn = tr.find("joint")
        red = tr.find("actuator/mechanicalReduction")
        if jn is not None and red is not None:
            reductions[jn.get("name")] = float(red.text)
    return links, joints, reductions


def project_joints(yaml_name: str) -> list[dict]:
    with open(MODEL_DIR / yaml_name, encoding="utf-8") as f:
        return yaml.safe_load(f)["joints"]


# ---------------------------------------------------------------------------- NAO

# collision capsule radius [m] per link whose segment runs to its (first) child joint
NAO_CAPSULES = {"LBicep": 0.025, "RBicep": 0.025, "LForeArm": 0.022, "RForeArm": 0.022,
                "LThigh": 0.035, "RThigh": 0.035, "LTibia": 0.032, "RTibia": 0.032}
NAO_SITES = {"l_sole", "r_sole", "ImuTorsoAccelerometer_frame", "ImuTorsoGyrometer_frame",
             "LFsrFL_frame", "LFsrFR_frame", "LFsrRL_frame", "LFsrRR_frame",
             "RFsrFL_frame", "RFsrFR_frame", "RFsrRL_frame", "RFsrRR_frame"}
GEOM = 'contype="2" conaffinity="1"'


def _nao_geoms(link: str, child_offsets: list[np.ndarray], fsr: dict) -> list[str]:
    """Collision primitives of one NAO link (in the link frame)."""
    if link == "torso":
        return [f'<geom name="torso" type="box" size="0.045 0.06 0.085" pos="-0.01 0 0.045" {GEOM}/>']
    if link == "Head":
        return [f'<geom name="head" type="sphere" size="0.065" pos="0 0 0.06" {GEOM}/>']
    if link in ("l_wrist", "r_wrist"):
        return [f'<geom name="{link}" type="capsule" size="0.02" fromto="0 0 0 0.07 0 -0.012" {GEOM}/>']
    if link in ("l_ankle", "r_ankle"):
        # the sole box around the four FSRs (x: their centre + 5 mm toward the toe, so the
        # 160 mm sole spans -55..+105 mm from the ankle; y: their centre), bottom face on
        # the URDF's sole plane
        pts = np.array(fsr[link])
        cx = 0.5 * (pts[:, 0].min() + pts[:, 0].max()) + 0.005
        cy = 0.5 * (pts[:, 1].min() + pts[:, 1].max())
        z = pts[0, 2] + SOLE[2] / 2
        size = vec((SOLE[0] / 2, SOLE[1] / 2, SOLE[2] / 2))
        side = "lfoot" if link == "l_ankle" else "rfoot"
        return [f'<geom name="{side}" type="box" size="{size}" pos="{vec((cx, cy, z))}" '
                f'friction="1 0.005 0.0001" {GEOM}/>']
    if link in NAO_CAPSULES and child_offsets:
        end = child_offsets[0]
        return [f'<geom name="{link}" type="capsule" size="{fmt(NAO_CAPSULES[link])}" '
                f'fromto="0 0 0 {vec(end)}" {GEOM}/>']
    return []


def _inertial(link: ULink) -> str:
    ixx, ixy, ixz, iyy, iyz, izz = link.inertia
    return (f'<inertial pos="{vec(link.com)}"{euler_attr(link.com_rpy)} mass="{fmt(link.mass)}" '
            f'fullinertia="{vec((ixx, iyy, izz, ixy, ixz, iyz))}"/>')


def nao_xml() -> str:
    links, joints, reductions = read_urdf(NAO_URDF)
    order = [j["name"] for j in project_joints("nao_h25_v5.yaml")]
    by_parent: dict[str, list[UJoint]] = {}
    for j in joints:
        by_parent.setdefault(j.parent, []).append(j)
    rank = {n: i for i, n in enumerate(order)}

    def first_actuated(link: str) -> int:
        """Rank of the first project joint under `link` (orders torso's children)."""
        best = len(order)
        for j in by_parent.get(link, []):
            best = min(best, rank.get(j.name, len(order)), first_actuated(j.child))
        return best

    fsr = {}
    for j in joints:
        if j.child.startswith(("LFsr", "RFsr")):
            fsr.setdefault(j.parent, []).append(j.xyz)

    lines: list[str] = []
    actuated: list[UJoint] = []

    def body(link: str, indent: str) -> None:
        kids = sorted(by_parent.get(link, []), key=lambda j: (first_actuated(j.child), j.name))
        movable = [j for j in kids if j.type == "revolute"]
        for g in _nao_geoms(link, [j.xyz for j in movable], fsr):
            lines.append(indent + g)
        for j in kids:
            if j.child in NAO_SITES:
                lines.append(f'{indent}<site name="{j.child}" pos="{vec(j.xyz)}"'
                             f'{euler_attr(j.rpy)} size="0.005"/>')
        for j in movable:
            child = links[j.child]
            actuated.append(j)
            lines.append(f'{indent}<body name="{j.child}" pos="{vec(j.xyz)}"{euler_attr(j.rpy)}>')
            lines.append(indent + "  " + _inertial(child))
            armature = ROTOR_INERTIA * reductions[j.name] ** 2
            lines.append(f'{indent}  <joint name="{j.name}" axis="{vec(j.axis)}" '
                         f'range="{vec((j.lower, j.upper))}" armature="{fmt(armature)}" '
                         f'damping="{fmt(JOINT_DAMPING_NAO)}" '
                         f'actuatorfrcrange="{vec((-j.effort, j.effort))}"/>')
            body(j.child, indent + "  ")
            lines.append(f"{indent}</body>")

    torso = links["torso"]
    lines.append('    <body name="torso" pos="0 0 0.35">')
    lines.append('      <freejoint name="base"/>')
    lines.append("      " + _inertial(torso))
    body("torso", "      ")
    lines.append("    </body>")

    names = [j.name for j in actuated]
    if names != order:
        raise SystemExit(f"nao: MJCF joint order {names} differs from the model's {order}")
    actuators = _actuators(actuated, [reductions[j.name] for j in actuated])
    mass = sum(l.mass for n, l in links.items()
               if n == "torso" or n in {j.child for j in actuated})
    header = (f"NAO H25 V5 for MuJoCo, generated by components/simulator/mjcf.py from "
              f"model/nao_h25_v5.yaml (joint order) and tests/data/naoV50.urdf (ros-naoqi "
              f"nao_robot: inertials, joints, limits, FSR/IMU frames). Total mass "
              f"{mass:.5f} kg. Do not edit: regenerate.")
    return _document("nao_v5", header, "\n".join(lines), actuators,
                     _custom(actuated, 1.0, emf=True),
                     sensors=['    <accelerometer name="acc" site="ImuTorsoAccelerometer_frame"/>',
                              '    <gyro name="gyro" site="ImuTorsoGyrometer_frame"/>'],
                     equality=['    <joint name="HipYawPitch" joint1="RHipYawPitch" '
                               'joint2="LHipYawPitch" polycoef="0 1 0 0 0"/>'])


def _actuators(joints: list[UJoint], reductions: list[float] | None) -> list[str]:
    """A position servo `<joint>` and a torque input `<joint>_motor` per joint.

    NAO (reductions given): kp reaches the effort at SERVO_SATURATION_ERROR; the arm: kp
    gives M1013_SERVO_HZ with the armature. kv damps the servo about critically with the
    joint's armature (MuJoCo's implicitfast integrator treats kv implicitly); on the NAO
    the motor's back-EMF (`back_emf`) carries part of that damping, outside the clamp."""
    out = []
    for k, j in enumerate(joints):
        if reductions:
            arm = ROTOR_INERTIA * reductions[k] ** 2
            kp = j.effort / SERVO_SATURATION_ERROR
        else:
            arm = M1013_ARMATURE[k]
            kp = arm * (2 * math.pi * M1013_SERVO_HZ) ** 2
        kv = 2.0 * math.sqrt(kp * arm)
        if reductions:
            kv -= back_emf(j)
            if kv <= 0.0:
                raise SystemExit(f"nao: {j.name}: the back-EMF {back_emf(j):g} N m s/rad "
                                 f"exceeds the servo's critical damping")
        out.append(f'    <general name="{j.name}" joint="{j.name}" gaintype="fixed" '
                   f'biastype="affine" gainprm="{fmt(kp)}" biasprm="0 {fmt(-kp)} {fmt(-kv)}" '
                   f'forcelimited="true" forcerange="{vec((-j.effort, j.effort))}"/>')
    for j in joints:
        out.append(f'    <motor name="{j.name}_motor" joint="{j.name}" ctrllimited="true" '
                   f'ctrlrange="{vec((-j.effort, j.effort))}"/>')
    return out


def back_emf(j: UJoint) -> float:
    """[N m s/rad] the torque-speed line's slope: effort (stall) over velocity (no load)."""
    return j.effort / j.velocity


def _custom(joints: list[UJoint], default_stiffness: float, emf: bool = False) -> list[str]:
    """Data MuJoCo has no field for: joint velocity limits, the servos' stiffness at reset,
    the motors' back-EMF damping (NAO)."""
    out = ["  <custom>",
           f'    <numeric name="velocity_limit" data="{vec(j.velocity for j in joints)}"/>',
           f'    <numeric name="default_stiffness" data="{fmt(default_stiffness)}"/>']
    if emf:
        out.append(f'    <numeric name="back_emf" data="{vec(back_emf(j) for j in joints)}"/>')
    return out + ["  </custom>"]


def _document(model: str, header: str, world: str, actuators: list[str], custom: list[str],
              sensors: list[str] = (), equality: list[str] = ()) -> str:
    parts = [f"<!-- {header} -->",
             f'<mujoco model="{model}">',
             '  <compiler angle="radian" eulerseq="XYZ" autolimits="true"/>',
             f'  <option timestep="{fmt(TIMESTEP)}" integrator="implicitfast"/>',
             "  <asset>",
             '    <texture name="grid" type="2d" builtin="checker" width="256" height="256" '
             'rgb1="0.55 0.55 0.55" rgb2="0.7 0.7 0.7"/>',
             '    <material name="grid" texture="grid" texrepeat="10 10" texuniform="true"/>',
             "  </asset>",
             "  <default>",
             '    <geom solref="0.005 1" solimp="0.9 0.95 0.001" rgba="0.8 0.8 0.85 1"/>',
             "  </default>",
             "  <worldbody>",
             '    <light pos="0 0 3" dir="0 0 -1" directional="true"/>',
             '    <geom name="floor" type="plane" size="0 0 0.05" contype="1" '
             'conaffinity="2" friction="1 0.005 0.0001" material="grid"/>',
             world,
             "  </worldbody>",
             *custom]
    if equality:
        parts += ["  <equality>", *equality, "  </equality>"]
    parts += ["  <actuator>", *actuators, "  </actuator>"]
    if sensors:
        parts += ["  <sensor>", *sensors, "  </sensor>"]
    parts.append("</mujoco>")
    return "\n".join(parts) + "\n"


# ---------------------------------------------------------------------------- M1013

def m1013_xml() -> str:
    spec = yaml.safe_load((MODEL_DIR / "doosan_m1013.yaml").read_text(encoding="utf-8"))
    limits = {j["name"]: j for j in spec["joints"]}
    chain = spec["chains"]["arm"]["joints"]
    lines: list[str] = []
    base = M1013_INERTIALS["base_0"]
    lines.append('    <body name="base_0">')
    lines.append("      " + _arm_inertial(base, np.eye(3), np.zeros(3)))
    lines.append(f'      <geom name="base_0" type="cylinder" size="0.1 0.075" pos="0 0 0.075" {GEOM}/>')
    T_R, T_p = np.eye(3), np.zeros(3)           # link frame in the base frame (zero posture)
    ujoints = []
    indent = "      "
    for k, row in enumerate(chain):
        name = row["joint"]
        lim = limits[name]
        rpy_ = np.array(row["rpy"], dtype=float)
        R = rpy_matrix(*rpy_)
        xyz = np.array(row["xyz"], dtype=float)
        T_p = T_p + T_R @ xyz
        T_R = T_R @ R
        link = f"link{k + 1}"
        reach, speed = math.radians(M1013_RANGE_DEG[k]), math.radians(M1013_SPEED_DEG[k])
        j = UJoint(name, "revolute", "", link, xyz, rpy_, np.array(row["axis"], dtype=float),
                   -reach, reach, M1013_EFFORT[k], speed)
        ujoints.append(j)
        lines.append(f'{indent}<body name="{link}" pos="{vec(xyz)}"{euler_attr(rpy_)}>')
        lines.append(indent + "  " + _arm_inertial(M1013_INERTIALS[link], T_R, T_p))
        lines.append(f'{indent}  <joint name="{name}" axis="{vec(j.axis)}" '
                     f'range="{vec((j.lower, j.upper))}" armature="{fmt(M1013_ARMATURE[k])}" '
                     f'damping="{fmt(M1013_DAMPING)}" '
                     f'actuatorfrcrange="{vec((-j.effort, j.effort))}"/>')
        if k + 1 < len(chain):
            nxt = np.array(chain[k + 1]["xyz"], dtype=float)
            if np.linalg.norm(nxt) > 1e-9:
                lines.append(f'{indent}  <geom name="{link}" type="capsule" '
                             f'size="{fmt(M1013_CAPSULE_RADIUS[k])}" fromto="0 0 0 {vec(nxt)}" {GEOM}/>')
        else:
            lines.append(f'{indent}  <geom name="{link}" type="cylinder" size="0.04 0.02" '
                         f'pos="0 0 -0.02" {GEOM}/>')
            lines.append(f'{indent}  <site name="flange" size="0.01"/>')
        indent += "  "
    for k in range(len(chain), 0, -1):
        lines.append("    " + "  " * k + "</body>")
    lines.append("    </body>")
    mass = sum(v[0] for v in M1013_INERTIALS.values())
    header = (f"Doosan M1013 for MuJoCo, generated by components/simulator/mjcf.py from "
              f"model/doosan_m1013.yaml (joints), {M1013_RANGE_SOURCE} (joint ranges and "
              f"speeds), {DOOSAN_SOURCE} (link "
              f"inertials, given there in the base frame at zero posture, transformed to link "
              f"frames) and {M1013_EFFORT_SOURCE} (effort limits; the first file's 30 N m "
              f"cannot hold the arm). "
              f"Total mass {mass:.3f} kg. Do not edit: regenerate.")
    return _document("m1013", header, "\n".join(lines),
                     _actuators(ujoints, None), _custom(ujoints, 0.0))


def _arm_inertial(entry, R: np.ndarray, p: np.ndarray) -> str:
    """One M1013 inertial given in the base frame, expressed in the link frame (R, p)."""
    mass, com, (ixx, ixy, ixz, iyy, iyz, izz) = entry
    I_base = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    com_link = R.T @ (np.array(com) - p)
    I = R.T @ I_base @ R
    return (f'<inertial pos="{vec(com_link)}" mass="{fmt(mass)}" fullinertia="'
            f'{vec((I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]))}"/>')


GENERATORS = {"nao_v5": nao_xml, "m1013": m1013_xml}


def generate() -> dict[str, str]:
    """Model name -> MJCF text."""
    return {name: gen() for name, gen in GENERATORS.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rtcf_components.simulator.mjcf", description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="compare, do not write")
    args = ap.parse_args(argv)
    stale = []
    for name, text in generate().items():
        path = OUT_DIR / f"{name}.xml"
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(str(path))
        else:
            OUT_DIR.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path}")
    if stale:
        print("stale (run python -m rtcf_components.simulator.mjcf): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
