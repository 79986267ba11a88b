"""ControllerManager component: pr2-style real-time controllers, and the Controller API.

Controllers import what they subclass and use from here (pure: importing this package
imports neither rtcf nor omniORB)::

    from rtcf_components.controller_manager import AFTER_ME, Controller, ControllerError

The core (no rtcf / omniORB import): ``controller`` (the Controller base, PR2's
pr2_controller_interface), ``robot`` (RobotState, JointHandle, the Hardware protocol,
LoopbackHardware), ``registry`` (controller types by name, module reloading),
``scheduler`` (update order from BEFORE_ME / AFTER_ME), ``switching`` (switch requests and
their checks: strictness, chains, claimed interfaces, fallbacks), ``core`` (the manager
core: load, unload, switch, the real-time tick), ``config`` (the controller_config file),
``controllers`` and ``effort_controllers`` (the bundled controllers) and ``profile`` (what
rtshell shows). The RT component is ``component.ControllerManager`` with its hardware
bindings (``hardware``: the DCM in process or DCM ports; ``sim_hardware``: a Simulator in
process), the RTController::ControllerManagerService servant (``service``), a Python
client (``proxy``) and the command line ``rtcf-controllers`` (``cli``).
"""

from .controller import (AFTER_ME, BEFORE_ME, INTERFACE_TYPES, Controller, ControllerError,
                         ControllerProvider, ControllerState)
from .core import ControllerManagerCore, ControllerStats
from .registry import (import_controllers, register_controller, register_module,
                       registered_types, reload_modules, resolve_controller, watched_modules)
from .robot import Hardware, JointHandle, LoopbackHardware, RobotState
from .scheduler import schedule_controllers
from .switching import Strictness, SwitchRefused, SwitchRequest

__all__ = ["AFTER_ME", "BEFORE_ME", "INTERFACE_TYPES", "Controller", "ControllerError",
           "ControllerProvider", "ControllerState", "ControllerManagerCore", "ControllerStats",
           "Strictness", "SwitchRefused", "SwitchRequest", "import_controllers",
           "register_controller", "register_module", "registered_types", "reload_modules",
           "resolve_controller", "watched_modules", "Hardware", "JointHandle",
           "LoopbackHardware", "RobotState", "schedule_controllers"]
