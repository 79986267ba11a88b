"""DCM component (NAO Device Communication Manager), spec section 1.

Pure core modules (no rtcf / omniORB import): ``devices`` (actuator and sensor tables from the
model file), ``timeline`` (timed-command buffers, aliases, the per-cycle computation) and
``body`` (the simulated body behind the actuators).
"""

from .body import Body, SimulatedBody
from .devices import DeviceTable, ModelError, normalize_key
from .timeline import DcmCore, DcmError

__all__ = ["Body", "DcmCore", "DcmError", "DeviceTable", "ModelError", "SimulatedBody",
           "normalize_key"]
