"""Robot models as data: one loader, one immutable ``Model``.

Pure module: imports neither rtcf nor omniORB. Lengths are metres and angles radians
everywhere in the model, whatever unit the file uses.

Every chain, whether it comes from a modified-DH table (NAO, ALMotion's convention), from
joint origins and axes (an arm described like a URDF) or from a URDF file, ends up in one
internal form (the one Pinocchio and URDF use):

    T_root->joint_i(q) = X_1 . R(a_1, q_1) . X_2 . R(a_2, q_2) ... X_i . R(a_i, q_i)
    T_root->effector(q) = T_root->joint_n(q) . tip

where X_i is a fixed transform from the previous joint frame and a_i a unit axis in joint
frame i. Joint frames are "joint-axis frames": for an mDH chain each one is rotated so that
it is parallel to the root frame at q = 0 (the URDF convention, and what ALMotion reports for
a joint name), so a joint frame of ours and of the NAO URDF can be compared directly.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

MODEL_DIR = Path(__file__).resolve().parents[2] / "model"
BUNDLED = {
    "nao_h25_v5": "nao_h25_v5.yaml",
    "nao_v32": "nao_v32.yaml",
    "doosan_m1013": "doosan_m1013.yaml",
}
_UNITS = {"m": 1.0, "mm": 1e-3}


class ModelError(ValueError):
    """A model file or a lookup in a model is wrong; the message names what and where."""


# -- elementary transforms ---------------------------------------------------------------------

def rot(axis: Sequence[float], angle: float) -> np.ndarray:
    """4x4 rotation by ``angle`` [rad] about the unit vector ``axis`` (Rodrigues)."""
    x, y, z = axis
    c, s, v = math.cos(angle), math.sin(angle), 1.0 - math.cos(angle)
    m = np.eye(4)
    m[:3, :3] = [[c + x * x * v, x * y * v - z * s, x * z * v + y * s],
                 [y * x * v + z * s, c + y * y * v, y * z * v - x * s],
                 [z * x * v - y * s, z * y * v + x * s, c + z * z * v]]
    return m


def trans(x: float, y: float, z: float) -> np.ndarray:
    m = np.eye(4)
    m[:3, 3] = x, y, z
    return m


def rpy(r: float, p: float, y: float) -> np.ndarray:
    """URDF's fixed-axis roll-pitch-yaw: Rz(y) . Ry(p) . Rx(r)."""
    return rot((0, 0, 1), y) @ rot((0, 1, 0), p) @ rot((1, 0, 0), r)


_AXES = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0)}


# -- the model ---------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Chain:
    """A serial chain from the model root to an effector, in the internal form above."""

    name: str
    joints: tuple[str, ...]          # kinematic joints, root to tip
    index: np.ndarray                # their positions in Model.joint_names
    lower: np.ndarray                # [rad]
    upper: np.ndarray                # [rad]
    X: np.ndarray                    # (n, 4, 4) previous joint frame -> joint frame, q = 0
    axes: np.ndarray                 # (n, 3) unit joint axes in their own frames
    tip: np.ndarray                  # (4, 4) last joint frame -> effector
    members: tuple[str, ...] = ()    # every joint the chain owns (NAO arms: with the hand)
    # compiled formulas derived from the constants above (kinematics.algorithms fills it);
    # a cache, not state: it never changes what a call returns
    cache: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def dof(self) -> int:
        return len(self.joints)


@dataclass(frozen=True, eq=False)
class Frame:
    """A named frame fixed to a chain's effector (a camera, a tool)."""

    name: str
    parent: str                      # chain name
    offset: np.ndarray               # (4, 4) effector -> frame


@dataclass(frozen=True, eq=False)
class Model:
    """An immutable robot model. Scratch data for the algorithms lives elsewhere."""

    name: str
    joint_names: tuple[str, ...]
    lower: np.ndarray
    upper: np.ndarray
    max_velocity: np.ndarray
    max_torque: np.ndarray
    chains: Mapping[str, Chain]
    frames: Mapping[str, Frame] = field(default_factory=dict)
    source: str = ""
    _joint_pos: Mapping[str, tuple[str, int]] = field(default_factory=dict, repr=False)

    def joint_index(self, name: str) -> int:
        """Position of a joint in ``joint_names``."""
        try:
            return self.joint_names.index(name)
        except ValueError:
            raise ModelError(f"{self.name}: unknown joint {name!r}") from None

    def chain(self, name: str) -> Chain:
        try:
            return self.chains[name]
        except KeyError:
            raise ModelError(f"{self.name}: unknown chain {name!r} (chains: "
                             f"{', '.join(self.chains)})") from None

    def chain_for_joints(self, joints: Sequence[str]) -> Chain | None:
        """The chain whose kinematic joints are exactly ``joints`` (case-insensitive)."""
        want = [j.lower() for j in joints]
        for c in self.chains.values():
            if [j.lower() for j in c.joints] == want:
                return c
        return None

    def joint_location(self, name: str) -> tuple[str, int] | None:
        """(chain name, position in that chain) of a kinematic joint, or None."""
        return self._joint_pos.get(name)

    def names_of(self, name: str) -> tuple[str, ...]:
        """ALMotion's getJointNames: "Body" (every joint), a chain (its joints, hand
        included), or one joint."""
        if name == "Body":
            return self.joint_names
        if name in self.chains:
            return self.chains[name].members
        if name in self.joint_names:
            return (name,)
        raise ModelError(f"{self.name}: unknown joint, chain or collection {name!r}: expected "
                         f"Body, a chain ({', '.join(self.chains)}) or a joint name")

    def collection(self, name: str) -> tuple[str, ...]:
        """ALMotion's getBodyNames: "Body", "Joints", "JointActuators" (every joint),
        "Chains" (the chain names) or a chain name."""
        if name in ("Body", "Joints", "JointActuators", "Actuators"):
            return self.joint_names
        if name == "Chains":
            return tuple(self.chains)
        if name in self.chains:
            return self.chains[name].members
        raise ModelError(f"{self.name}: unknown collection {name!r}: expected Body, Joints, "
                         f"JointActuators, Chains or a chain ({', '.join(self.chains)})")

    @property
    def body_names(self) -> tuple[str, ...]:
        """Every name getTransform knows: chains, joints, frames, and the root "Torso"."""
        return (*self.chains, *self.joint_names, *self.frames, "Torso")


# -- loading -----------------------------------------------------------------------------------

def find_model_file(spec: str | PathLike) -> Path:
    """A bundled name, a path (absolute or relative to the working folder) or a file in model/."""
    s = str(spec)
    if s in BUNDLED:
        return MODEL_DIR / BUNDLED[s]
    p = Path(s)
    for cand in (p, MODEL_DIR / p):
        if cand.is_file():
            return cand
    raise ModelError(f"model {s!r} not found: not a bundled model ({', '.join(BUNDLED)}), "
                     f"nor a file here or in {MODEL_DIR}")


def read_model_data(path: str | PathLike) -> dict:
    """Parse a YAML model file; ``inherit: other.yaml`` merges section by section (the keys
    of ``constants``, ``joint_limits`` and ``frames`` override those of the parent)."""
    import yaml  # only the loader needs it

    path = Path(path)
    src = path.name
    try:
        with open(path, "r", encoding="utf-8") as f:
            data = yaml.safe_load(f)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        raise ModelError(f"{src}: cannot read the model file: {e}") from None
    if not isinstance(data, dict):
        raise ModelError(f"{src}: expected a mapping at the top level, got {type(data).__name__}")
    parent = data.pop("inherit", None)
    if parent is None:
        return data
    if not isinstance(parent, str):
        raise ModelError(f"{src}: inherit: expected a model file name, got {parent!r}")
    base = read_model_data(path.parent / parent)
    for key, value in data.items():
        if key in ("constants", "frames") and isinstance(value, dict):
            base[key] = {**base.get(key, {}), **value}
        elif key == "joint_limits":
            if not isinstance(value, dict):
                raise ModelError(f"{src}: joint_limits: expected joint: [min, max], got {value!r}")
            names = {j.get("name"): j for j in base.get("joints", []) if isinstance(j, dict)}
            for jn, lim in value.items():
                if jn not in names:
                    raise ModelError(f"{src}: joint_limits.{jn}: no such joint in {parent}")
                names[jn]["limits"] = lim
        else:
            base[key] = value
    return base


def load_model(spec: str | PathLike) -> Model:
    """A bundled name (``nao_h25_v5``, ``nao_v32``, ``doosan_m1013``), a YAML model file or a
    ``.urdf`` file. Raises ModelError naming the file, the place and the bad value."""
    path = find_model_file(spec)
    if path.suffix.lower() == ".urdf":
        from .urdf import model_from_urdf
        return model_from_urdf(path)
    return model_from_data(read_model_data(path), path.name)


def model_from_data(data: Mapping[str, Any], src: str = "model") -> Model:
    """Build a Model from parsed model-file data (see model/*.yaml for the format)."""
    unit = data.get("length_unit", "m")
    if unit not in _UNITS:
        raise ModelError(f"{src}: length_unit: expected one of {sorted(_UNITS)}, got {unit!r}")
    scale = _UNITS[unit]
    consts = data.get("constants", {}) or {}
    if not isinstance(consts, Mapping):
        raise ModelError(f"{src}: constants: expected a mapping, got {consts!r}")
    num = _Numbers(consts, scale, src)

    joints = data.get("joints")
    if not isinstance(joints, list) or not joints:
        raise ModelError(f"{src}: joints: expected a non-empty list, got {joints!r}")
    names, lo, hi, vel, tq, member_of = [], [], [], [], [], {}
    for i, j in enumerate(joints):
        where = f"{src}: joints[{i}]"
        if not isinstance(j, Mapping) or not isinstance(j.get("name"), str):
            raise ModelError(f"{where}: expected a mapping with a name, got {j!r}")
        lim = j.get("limits")
        if (not isinstance(lim, (list, tuple)) or len(lim) != 2
                or not all(_finite(x) for x in lim) or lim[0] > lim[1]):
            raise ModelError(f"{where}.limits: expected [min, max] with min <= max, got {lim!r}")
        for key in ("velocity", "torque"):
            if key in j and not (_finite(j[key]) and j[key] >= 0):
                raise ModelError(f"{where}.{key}: expected a number >= 0, got {j[key]!r}")
        names.append(j["name"])
        lo.append(float(lim[0]))
        hi.append(float(lim[1]))
        vel.append(float(j.get("velocity", 0.0)))
        tq.append(float(j.get("torque", 0.0)))
        if "chain" in j:
            member_of.setdefault(j["chain"], []).append(j["name"])
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise ModelError(f"{src}: joints: duplicate joint names {dup}")
    lower, upper = _ro(lo), _ro(hi)

    chains_raw = data.get("chains")
    if not isinstance(chains_raw, Mapping) or not chains_raw:
        raise ModelError(f"{src}: chains: expected a mapping of chains, got {chains_raw!r}")
    chains: dict[str, Chain] = {}
    for cname, c in chains_raw.items():
        where = f"{src}: chains.{cname}"
        chain = _chain(cname, c, where, num, names, lower, upper)
        members = tuple(member_of.get(cname, chain.joints))
        chains[cname] = dataclasses.replace(chain, members=members, cache={})

    frames: dict[str, Frame] = {}
    for fname, f in (data.get("frames") or {}).items():
        where = f"{src}: frames.{fname}"
        if not isinstance(f, Mapping) or f.get("parent") not in chains:
            raise ModelError(f"{where}.parent: expected one of the chains "
                             f"{list(chains)}, got {f.get('parent') if isinstance(f, Mapping) else f!r}")
        frames[fname] = Frame(fname, f["parent"], _ro(_ops(f.get("ops", []), f"{where}.ops", num)))
    return make_model(str(data.get("name", src)), names, lower, upper, _ro(vel), _ro(tq),
                      chains, frames, src)


def make_model(name: str, names: Sequence[str], lower, upper, vel, tq,
               chains: Mapping[str, Chain], frames: Mapping[str, Frame], src: str) -> Model:
    pos = {j: (c.name, k) for c in chains.values() for k, j in enumerate(c.joints)}
    return Model(name, tuple(names), _ro(lower), _ro(upper), _ro(vel), _ro(tq),
                 MappingProxyType(dict(chains)), MappingProxyType(dict(frames)), src,
                 MappingProxyType(pos))


class _Numbers:
    """Reads a length: a number, or a constant's name ("-Name" negates); scaled to metres."""

    def __init__(self, consts: Mapping[str, Any], scale: float, src: str):
        self.consts, self.scale, self.src = consts, scale, src

    def __call__(self, x: Any, where: str) -> float:
        if isinstance(x, str):
            neg = x.startswith("-")
            key = x[1:] if neg else x
            if key not in self.consts or not _finite(self.consts[key]):
                raise ModelError(f"{where}: unknown or non-numeric constant {x!r}")
            v = float(self.consts[key])
            return (-v if neg else v) * self.scale
        if not _finite(x):
            raise ModelError(f"{where}: expected a finite number or a constant name, got {x!r}")
        return float(x) * self.scale


def _ops(lst: Any, where: str, num: _Numbers) -> np.ndarray:
    """Elementary transforms applied left to right: [trans, x, y, z], [rotx|roty|rotz, deg],
    [rotx_rad|roty_rad|rotz_rad, rad]."""
    if not isinstance(lst, list):
        raise ModelError(f"{where}: expected a list of operations, got {lst!r}")
    m = np.eye(4)
    for k, op in enumerate(lst):
        w = f"{where}[{k}]"
        if not isinstance(op, list) or not op:
            raise ModelError(f"{w}: expected [operation, values...], got {op!r}")
        kind = op[0]
        if kind == "trans" and len(op) == 4:
            m = m @ trans(*(num(v, w) for v in op[1:]))
        elif kind in ("rotx", "roty", "rotz", "rotx_rad", "roty_rad", "rotz_rad") \
                and len(op) == 2 and _finite(op[1]):
            ang = float(op[1]) if kind.endswith("_rad") else math.radians(float(op[1]))
            m = m @ rot(_AXES[kind[3]], ang)
        else:
            raise ModelError(f"{w}: expected [trans, x, y, z] or [rotx|roty|rotz(_rad), angle], "
                             f"got {op!r}")
    return m


def _chain(name: str, c: Any, where: str, num: _Numbers, names: list[str],
           lower: np.ndarray, upper: np.ndarray) -> Chain:
    """One chain in the internal form. mDH rows (alpha_deg, a, theta_deg, d, optional post)
    give mDH frames F_k = F_(k-1) . post_(k-1) . P_k . Rz(q_k); with A_k the rotation of F_k
    at q = 0, the joint frame J_k = F_k . A_k^T is root-parallel at zero and
    J_k = J_(k-1) . X_k . R(A_k z, q_k), X_k = A_(k-1) . post_(k-1) . P_k . A_k^T.
    URDF-style rows (xyz, rpy, axis) give X_k = origin_k directly."""
    rows = c.get("joints") if isinstance(c, Mapping) else None
    if not isinstance(rows, list) or not rows:
        raise ModelError(f"{where}.joints: expected a non-empty list of joint rows, got {rows!r}")
    base = _ops(c.get("base", []), f"{where}.base", num)
    end = _ops(c.get("end", []), f"{where}.end", num)
    kinds = {"alpha_deg" in r if isinstance(r, Mapping) else None for r in rows}
    if len(kinds) != 1 or None in kinds:
        raise ModelError(f"{where}.joints: every row must be a mapping, all mDH (alpha_deg, a, "
                         f"theta_deg, d) or all URDF-style (xyz, rpy, axis)")
    mdh = kinds == {True}
    jnames, X, axes = [], [], []
    A_prev, pending, F_prev = np.eye(4), base, np.eye(4)
    for k, row in enumerate(rows):
        w = f"{where}.joints[{k}]"
        if row.get("joint") not in names:
            raise ModelError(f"{w}.joint: expected a joint of the joints list, got "
                             f"{row.get('joint')!r}")
        jnames.append(row["joint"])
        if mdh:
            for key in ("alpha_deg", "theta_deg"):
                if not _finite(row.get(key)):
                    raise ModelError(f"{w}.{key}: expected a number, got {row.get(key)!r}")
            P = (rot(_AXES["x"], math.radians(row["alpha_deg"]))
                 @ trans(num(row.get("a", 0), f"{w}.a"), 0, 0)
                 @ rot(_AXES["z"], math.radians(row["theta_deg"]))
                 @ trans(0, 0, num(row.get("d", 0), f"{w}.d")))
            F = F_prev @ pending @ P                  # this mDH frame at q = 0
            A = F.copy()
            A[:3, 3] = 0.0
            X.append(A_prev @ pending @ P @ A.T)      # A is a pure rotation: A^-1 = A^T
            axes.append(A[:3, 2].copy())               # A . z
            pending = _ops(row.get("post", []), f"{w}.post", num)
            F_prev, A_prev = F, A
        else:
            xyz, r, ax = row.get("xyz", [0, 0, 0]), row.get("rpy", [0, 0, 0]), row.get("axis")
            if (not isinstance(xyz, list) or len(xyz) != 3 or not isinstance(r, list)
                    or len(r) != 3 or not all(_finite(v) for v in r)):
                raise ModelError(f"{w}: expected xyz: [x, y, z] and rpy: [r, p, y], got "
                                 f"xyz {xyz!r}, rpy {r!r}")
            if (not isinstance(ax, list) or len(ax) != 3 or not all(_finite(v) for v in ax)
                    or np.linalg.norm(ax) < 1e-9):
                raise ModelError(f"{w}.axis: expected a non-zero [x, y, z], got {ax!r}")
            origin = trans(*(num(v, f"{w}.xyz") for v in xyz)) @ rpy(*map(float, r))
            X.append(pending @ origin)
            axes.append(np.asarray(ax, float) / np.linalg.norm(ax))
            pending = np.eye(4)
    tip = A_prev @ pending @ end if mdh else end
    idx = np.array([names.index(j) for j in jnames], dtype=np.intp)
    return Chain(name, tuple(jnames), _ro(idx), _ro(lower[idx]), _ro(upper[idx]),
                 _ro(np.array(X)), _ro(np.array(axes)), _ro(tip))


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _ro(a: Iterable) -> np.ndarray:
    arr = np.array(a, dtype=float) if not isinstance(a, np.ndarray) else a.copy()
    arr.flags.writeable = False
    return arr
