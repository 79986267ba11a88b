"""pr2-style real-time controllers: the Controller API, the robot interface, the manager core.

Spec: components.md section 5. Pure Python + numpy: nothing here imports the rest of rtcf or
omniORB; the RT component that runs the manager at 1 kHz is components/controller_manager.
"""

from .base import (AFTER_ME, BEFORE_ME, Controller, ControllerError, ControllerProvider,
                   ControllerState)
from .manager import ControllerManagerCore, ControllerStats, Strictness, SwitchRequest
from .registry import (import_controllers, register_controller, register_module, registered_types,
                       resolve_controller)
from .robot import Hardware, JointHandle, LoopbackHardware, RobotState
from .scheduler import schedule_controllers

__all__ = ["AFTER_ME", "BEFORE_ME", "Controller", "ControllerError", "ControllerProvider",
           "ControllerState", "ControllerManagerCore", "ControllerStats", "Strictness",
           "SwitchRequest", "import_controllers", "register_controller", "register_module",
           "registered_types", "resolve_controller", "Hardware", "JointHandle",
           "LoopbackHardware", "RobotState", "schedule_controllers"]
