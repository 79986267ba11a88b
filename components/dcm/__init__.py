"""DCM component (NAO Device Communication Manager).

Pure core modules (no rtcf / omniORB import): ``devices`` (actuator and sensor tables from the
model file), ``timeline`` (timed-command buffers, aliases, the per-cycle computation) and
``body`` (the body protocol and the first-order servo body behind the actuators) and
``mujoco_body`` (the body on the Simulator's physics core, imported only for ``body: mujoco``).
Depends on the ``kinematics`` package (the robot model file reader) and, for ``body: mujoco``,
on the ``simulator`` package's core; neither depends on the DCM.
"""

from .body import Body, SimulatedBody
from .devices import DeviceTable, ModelError, normalize_key
from .timeline import DcmCore, DcmError

__all__ = ["Body", "DcmCore", "DcmError", "DeviceTable", "ModelError", "SimulatedBody",
           "normalize_key"]
