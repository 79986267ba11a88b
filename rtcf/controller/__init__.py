"""pr2-style real-time controllers: the Controller API, the robot interface, the manager core.

Spec: components.md section 5. Pure Python + numpy: nothing here imports the rest of rtcf or
omniORB; the RT component that runs the manager at 1 kHz is components/controller_manager.
"""

from .base import (AFTER_ME, BEFORE_ME, INTERFACE_TYPES, Controller, ControllerError,
                   ControllerProvider, ControllerState)
from .manager import ControllerManagerCore, ControllerStats, Strictness, SwitchRequest
from .registry import (import_controllers, register_controller, register_module, registered_types,
                       reload_modules, resolve_controller, watched_modules)
from .robot import Hardware, JointHandle, LoopbackHardware, RobotState
from .scheduler import schedule_controllers

__all__ = ["AFTER_ME", "BEFORE_ME", "INTERFACE_TYPES", "Controller", "ControllerError", "ControllerProvider",
           "ControllerState", "ControllerManagerCore", "ControllerStats", "Strictness",
           "SwitchRequest", "import_controllers", "register_controller", "register_module",
           "registered_types", "reload_modules", "resolve_controller", "watched_modules", "Hardware", "JointHandle",
           "LoopbackHardware", "RobotState", "schedule_controllers"]
