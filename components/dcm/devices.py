"""Actuator and sensor tables of the DCM, built from a robot model file.

Pure: imports neither rtcf nor omniORB, and reads no clock. The tables are immutable once
built; the DCM core (timeline.py) and the simulated body (body.py) index into them.

Key names follow NAOqi's ALMemory keys: ``<Device>/<Quantity>/<Actuator|Sensor>/Value``. The
DCM accepts a key with or without the prefix ``Device/SubDeviceList/`` (stripped exactly, when
present; matching is case-sensitive). The tables store the short form.

Actuator order (the order of ``DcmCore.values``):
  1. the joint Position actuators, ALMotion body order (getJointNames("Body"));
  2. the joint Hardness actuators, same order;
  3. the non-joint actuators of the model's ``devices:`` section, in file order.
Sensor order: the joint Position sensors, body order.
"""

from __future__ import annotations

from dataclasses import dataclass
from os import PathLike
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

__all__ = ["DEVICE_PREFIX", "ModelError", "DeviceTable", "normalize_key"]

DEVICE_PREFIX = "Device/SubDeviceList/"


class ModelError(ValueError):
    """The model file (or dict) is malformed; the message names the path and the bad value."""


def normalize_key(key: str) -> str:
    """Strip exactly ``Device/SubDeviceList/`` if ``key`` starts with it."""
    if key.startswith(DEVICE_PREFIX):
        return key[len(DEVICE_PREFIX):]
    return key


def position_actuator_key(joint: str) -> str:
    return f"{joint}/Position/Actuator/Value"


def hardness_actuator_key(joint: str) -> str:
    return f"{joint}/Hardness/Actuator/Value"


def position_sensor_key(joint: str) -> str:
    return f"{joint}/Position/Sensor/Value"


@dataclass(frozen=True)
class _Joint:
    name: str
    chain: str
    lower: float  # [rad] (hands: open fraction)
    upper: float


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)


class DeviceTable:
    """Ordered actuator and sensor tables (immutable after construction).

    Attributes (numpy arrays are read-only):
      joint_names        tuple of the joint names, body order
      joint_chains       tuple of the chain of each joint (Head, LArm, LLeg, RLeg, RArm)
      joint_limits       (n_joints, 2) float array, [min, max] [rad]
      actuator_keys      tuple of short actuator keys, actuator order
      actuator_ranges    (n_actuators, 2) float array: joint limits for Position actuators,
                         [0, 1] for Hardness, the model's range for other devices
      interpolate        (n_actuators,) bool array (True for joints; a device's own ``interpolate``)
      sensor_keys        tuple of short sensor keys
      position_actuators (n_joints,) int array: actuator index of each joint's Position
      hardness_actuators (n_joints,) int array: actuator index of each joint's Hardness
      position_sensors   (n_joints,) int array: sensor index of each joint's Position sensor
      groups             dict group name -> tuple of actuator keys (from ``devices:``)
    """

    def __init__(
        self,
        joints: Sequence[tuple[str, str, float, float]],
        devices: Sequence[tuple[str, float, float, bool]] = (),
        groups: Mapping[str, Sequence[str]] | None = None,
        name: str = "",
    ) -> None:
        """Build from plain data.

        joints:  (name, chain, lower, upper) in body order.
        devices: (short key, lower, upper, interpolate) of the non-joint actuators.
        """
        self.name = name
        js = [_Joint(n, c, float(lo), float(hi)) for n, c, lo, hi in joints]
        self.joint_names: tuple[str, ...] = tuple(j.name for j in js)
        self.joint_chains: tuple[str, ...] = tuple(j.chain for j in js)
        nj = len(js)
        keys: list[str] = []
        ranges: list[tuple[float, float]] = []
        interp: list[bool] = []
        for j in js:
            keys.append(position_actuator_key(j.name))
            ranges.append((j.lower, j.upper))
            interp.append(True)
        for j in js:
            keys.append(hardness_actuator_key(j.name))
            ranges.append((0.0, 1.0))
            interp.append(True)
        for key, lo, hi, it in devices:
            keys.append(normalize_key(key))
            ranges.append((float(lo), float(hi)))
            interp.append(bool(it))
        self.actuator_keys: tuple[str, ...] = tuple(keys)
        self._actuator_index: dict[str, int] = {}
        for i, k in enumerate(keys):
            if k in self._actuator_index:
                raise ModelError(f"{name or 'model'}: duplicate actuator key {k!r}")
            self._actuator_index[k] = i
        self.sensor_keys: tuple[str, ...] = tuple(position_sensor_key(j.name) for j in js)
        self._sensor_index = {k: i for i, k in enumerate(self.sensor_keys)}

        self.joint_limits = _ro(np.array([(j.lower, j.upper) for j in js], dtype=float).reshape(nj, 2))
        self.actuator_ranges = _ro(np.array(ranges, dtype=float).reshape(len(keys), 2))
        self.interpolate = _ro(np.array(interp, dtype=bool))
        self.position_actuators = _ro(np.arange(0, nj, dtype=np.intp))
        self.hardness_actuators = _ro(np.arange(nj, 2 * nj, dtype=np.intp))
        self.position_sensors = _ro(np.arange(0, nj, dtype=np.intp))
        self.groups: dict[str, tuple[str, ...]] = {
            g: tuple(normalize_key(k) for k in ks) for g, ks in (groups or {}).items()
        }

    # -- construction from the model file ---------------------------------------------------

    @classmethod
    def from_model(cls, model: str | PathLike | Mapping[str, Any]) -> "DeviceTable":
        """Load a model file path (YAML) or an already parsed dict.

        Errors raise ModelError naming the source, the path and the bad value, e.g.
        ``nao_h25_v5.yaml: joints[3].limits: expected [min, max] with min <= max, got [1, 0]``.
        """
        if isinstance(model, Mapping):
            data, src = model, "model"
        else:
            # the robot-model reader shared with the Kinematics core (one file per robot,
            # `inherit:` for a variant that differs by constants)
            from rtcf_components.kinematics.model import ModelError as FileError, read_model_data

            src = str(model).rsplit("/", 1)[-1]
            try:
                data = read_model_data(model)
            except FileError as e:
                raise ModelError(str(e)) from None
        return cls(*_parse(data, src), name=str(data.get("name", src)))

    # -- lookups ------------------------------------------------------------------------------

    @property
    def n_actuators(self) -> int:
        return len(self.actuator_keys)

    @property
    def n_joints(self) -> int:
        return len(self.joint_names)

    @property
    def n_sensors(self) -> int:
        return len(self.sensor_keys)

    def actuator_index(self, key: str) -> int:
        """Index of an actuator, short or full key; raises KeyError if unknown."""
        if not isinstance(key, str):
            raise KeyError(key)
        return self._actuator_index[normalize_key(key)]

    def has_actuator(self, key: str) -> bool:
        return isinstance(key, str) and normalize_key(key) in self._actuator_index

    def sensor_index(self, key: str) -> int:
        """Index of a sensor, short or full key; raises KeyError if unknown."""
        if not isinstance(key, str):
            raise KeyError(key)
        return self._sensor_index[normalize_key(key)]

    def joint_index(self, name: str) -> int:
        """Body-order index of a joint name; raises KeyError if unknown."""
        try:
            return self.joint_names.index(name)
        except ValueError:
            raise KeyError(name) from None

    def __repr__(self) -> str:
        return (f"DeviceTable({self.name!r}: {self.n_joints} joints, "
                f"{self.n_actuators} actuators, {self.n_sensors} sensors)")


def _ro(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def _limits(v: Any, where: str) -> tuple[float, float]:
    if (not isinstance(v, (list, tuple)) or len(v) != 2 or not all(_is_number(x) for x in v)
            or not float(v[0]) <= float(v[1])):
        raise ModelError(f"{where}: expected [min, max] with min <= max, got {v!r}")
    return float(v[0]), float(v[1])


def _parse(data: Mapping[str, Any], src: str):
    joints_raw = data.get("joints")
    if not isinstance(joints_raw, list) or not joints_raw:
        raise ModelError(f"{src}: joints: expected a non-empty list, got {joints_raw!r}")
    joints = []
    seen: set[str] = set()
    for i, j in enumerate(joints_raw):
        where = f"{src}: joints[{i}]"
        if not isinstance(j, Mapping):
            raise ModelError(f"{where}: expected a mapping, got {j!r}")
        name, chain = j.get("name"), j.get("chain")
        if not isinstance(name, str) or not name or "/" in name:
            raise ModelError(f"{where}.name: expected a joint name, got {name!r}")
        if name in seen:
            raise ModelError(f"{where}.name: duplicate joint {name!r}")
        seen.add(name)
        if not isinstance(chain, str) or not chain:
            raise ModelError(f"{where}.chain: expected a chain name, got {chain!r}")
        lo, hi = _limits(j.get("limits"), f"{where}.limits")
        joints.append((name, chain, lo, hi))

    devices = []
    groups: dict[str, list[str]] = {}
    devs_raw = data.get("devices", [])
    if not isinstance(devs_raw, list):
        raise ModelError(f"{src}: devices: expected a list of groups, got {devs_raw!r}")
    for g, grp in enumerate(devs_raw):
        where = f"{src}: devices[{g}]"
        if not isinstance(grp, Mapping):
            raise ModelError(f"{where}: expected a mapping, got {grp!r}")
        gname = grp.get("group")
        if not isinstance(gname, str) or not gname:
            raise ModelError(f"{where}.group: expected a name, got {gname!r}")
        lo, hi = _limits(grp.get("range", [0.0, 1.0]), f"{where}.range")
        interp = grp.get("interpolate", True)
        if not isinstance(interp, bool):
            raise ModelError(f"{where}.interpolate: expected true/false, got {interp!r}")
        keys = grp.get("actuators")
        if not isinstance(keys, list):
            raise ModelError(f"{where}.actuators: expected a list of keys, got {keys!r}")
        for k, key in enumerate(keys):
            if not isinstance(key, str) or not key.endswith("/Actuator/Value"):
                raise ModelError(
                    f"{where}.actuators[{k}]: expected an '.../Actuator/Value' key, got {key!r}")
            devices.append((normalize_key(key), lo, hi, interp))
        groups[gname] = [normalize_key(k) for k in keys]
    return joints, devices, groups


def iter_chain(table: DeviceTable, chain: str) -> Iterable[str]:
    """Joint names of one chain, body order."""
    return (n for n, c in zip(table.joint_names, table.joint_chains) if c == chain)
