"""The body behind the DCM: what turns actuator values into sensor values.

Pure numpy, no rtcf/omniORB import, no clock: the period is passed in (house style 4).
Arrays are allocated in the constructor; ``update`` works in place (house style 2).

The DCM core (timeline.py) buffers and interpolates commands without clamping them; the
joint Position command is clamped to the model's joint limits when it is sent to the device
(the project's choice: NAOqi documents no clamping in the DCM), which is here. LHipYawPitch
and RHipYawPitch are one motor on NAO (public drivers such as naoqi_dcm_driver leave
RHipYawPitch out of stiffness aliases): a command to RHipYawPitch is stored by the DCM, but
both Position sensors follow LHipYawPitch.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from .devices import DeviceTable

__all__ = ["Body", "SimulatedBody"]


class Body(Protocol):
    """Anything that takes joint commands and returns measured joint positions.

    positions, hardness: (n_joints,) arrays in body order (the Position and Hardness actuator
    values of the cycle; views of the DCM's own values, valid during the call: copy what you
    keep, never write into them); dt_s: time since the previous update [s]. Returns the (n_joints,)
    Position sensor values [rad]; the returned array may be reused by the next call.
    Runs in: EC thread.
    """

    def update(self, positions: np.ndarray, hardness: np.ndarray, dt_s: float) -> np.ndarray:
        ...


class SimulatedBody:
    """First-order servo per joint, its speed scaled by Hardness.

    Per joint: ``q += (clamp(cmd) - q) · (1 - exp(-h · dt / tau))`` with h = Hardness clamped
    to [0, 1]. At h = 0 (limp) the joint does not move toward the command; at h = 1 it closes
    63 % of the gap in ``tau`` seconds. The clamp uses the joint limits of the model.
    """

    def __init__(self, devices: DeviceTable, tau_s: float = 0.05,
                 initial: np.ndarray | None = None) -> None:
        if not tau_s > 0.0:
            raise ValueError(f"tau_s: expected > 0, got {tau_s!r}")
        self.tau_s = float(tau_s)
        n = devices.n_joints
        self._lower = np.array(devices.joint_limits[:, 0])
        self._upper = np.array(devices.joint_limits[:, 1])
        self.sensors = np.zeros(n)
        self._cmd = np.zeros(n)
        self._gain = np.zeros(n)
        names = devices.joint_names
        # The coupled hip motor (module doc); absent in test robots without legs.
        if "LHipYawPitch" in names and "RHipYawPitch" in names:
            self._hip = (names.index("LHipYawPitch"), names.index("RHipYawPitch"))
        else:
            self._hip = None
        self.reset(initial)

    def reset(self, positions: np.ndarray | None = None) -> None:
        """Set the measured positions (default: 0 clamped to the limits). Runs in: EC thread."""
        if positions is None:
            self.sensors[:] = 0.0
        else:
            self.sensors[:] = positions
        np.clip(self.sensors, self._lower, self._upper, out=self.sensors)
        if self._hip is not None:
            self.sensors[self._hip[1]] = self.sensors[self._hip[0]]

    def update(self, positions: np.ndarray, hardness: np.ndarray, dt_s: float) -> np.ndarray:
        """Advance the servos by dt_s [s]; returns ``sensors`` (updated in place).

        Runs in: EC thread.
        """
        cmd, gain = self._cmd, self._gain
        np.maximum(positions, self._lower, out=cmd)      # clamp to the joint limits
        np.minimum(cmd, self._upper, out=cmd)            # (np.clip is slower per call)
        # gain = 1 - exp(-h·dt/tau), h clamped to [0, 1]; fmax turns a NaN hardness into 0 (limp)
        np.fmax(hardness, 0.0, out=gain)
        np.minimum(gain, 1.0, out=gain)
        np.multiply(gain, -float(dt_s) / self.tau_s, out=gain)
        np.expm1(gain, out=gain)
        np.negative(gain, out=gain)
        np.subtract(cmd, self.sensors, out=cmd)
        np.multiply(cmd, gain, out=cmd)
        np.add(self.sensors, cmd, out=self.sensors)
        if self._hip is not None:
            self.sensors[self._hip[1]] = self.sensors[self._hip[0]]
        return self.sensors
