"""Doosan's DRL / DSR_ROBOT2 for scripts, over the BlendingPlanner: the motions, the state and
math calls, the constants, DR_Error, and the ROS 2 boilerplate of the example scripts.

A script written for a Doosan arm runs with its import lines changed (``from DSR_ROBOT2
import *``, the DRL globals on the teach pendant, become
``from rtcf_components.clients.dsr import *``; see dsr_rclpy for rclpy / DR_init), or
unchanged through dsr_run::

    set_velx(100); set_accx(200)
    movej(posj(0, 0, 90, 0, 90, 0), vel=30, acc=60)
    movel(posx(559, 34.5, 500, 0, 180, 0), radius=20)       # blends into the next motion
    movec(posx(600, 100, 500, 0, 180, 0), posx(650, 34.5, 500, 0, 180, 0))
    pos, sol = get_current_posx()

Reference: doosan-robotics/doosan-robot2 (DoosanRobotics/doosan-robot2) at
443f0c587059c7c45aba6d523b0edad87de29fee, dsr_common2/imp/DSR_ROBOT2.py and DR_common2.py;
DR_error2.py and dsr_msgs2 at a694f8a0334ff3c2476106f8e86e9e111974d249. Every public
function of that DSR_ROBOT2.py is defined here: the ones the BlendingPlanner can do
(``SUPPORTED``), and the others (``UNSUPPORTED``: I/O, force control, the safety
controller, ...) raising DR_Error(DR_ERROR_RUNTIME) that says why, rather than a NameError.
docs/doosan.md lists them all with the differences.
"""

from __future__ import annotations

from typing import Any

from . import dsr_motion as _motion
from . import dsr_rclpy as rclpy
from . import dsr_state as _state
from .dsr_common import *  # noqa: F401,F403
from .dsr_common import (CONSTANTS, DR_ERROR_RUNTIME, DR_ERROR_TYPE, DR_ERROR_VALUE,
                         DR_Error, get_normal_pos, get_param, get_posj, get_posx, is_int,
                         is_number, posb, posj, posx)
from .dsr_motion import *  # noqa: F401,F403
from .dsr_rclpy import DR_init, RobotStop
from .dsr_state import *  # noqa: F401,F403

# DRFC.py (the robot modes) and DSR_ROBOT2.py (singularity handling)
ROBOT_MODE_MANUAL, ROBOT_MODE_AUTONOMOUS = 0, 1
DR_AVOID, DR_TASK_STOP, DR_VAR_VEL = 0, 1, 2
ROBOT_SPACE_JOINT, ROBOT_SPACE_TASK = 0, 1
DR_CONFIG_PRT_EXT_RESULT = False
DR_CONFIG_PRT_RESULT = False


def print_ext_result(text: str) -> None:
    """DSR_ROBOT2's trace print: prints "__text" when DR_CONFIG_PRT_EXT_RESULT is true."""
    if DR_CONFIG_PRT_EXT_RESULT:
        print(f"__{text}")


def print_result(text: str) -> None:
    if DR_CONFIG_PRT_RESULT:
        print(f"__{text}")


def set_robot_mode(robot_mode: int) -> int:
    """The arm here is always in ROBOT_MODE_AUTONOMOUS (programs move it): asking for it is
    0; the manual mode (jogging, direct teaching at the teach pendant) raises DR_Error."""
    if not is_int(robot_mode):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : robot_mode")
    if robot_mode != ROBOT_MODE_AUTONOMOUS:
        raise DR_Error(DR_ERROR_RUNTIME, f"set_robot_mode({robot_mode}): only "
                       "ROBOT_MODE_AUTONOMOUS (1) exists here: there is no teach pendant")
    return 0


def get_robot_mode() -> int:
    return ROBOT_MODE_AUTONOMOUS


def set_singularity_handling(mode: int = DR_AVOID) -> int:
    """How task motions pass a singularity, for those planned next: DR_AVOID (the default:
    the TCP leaves the path as little as the joints' speed limits allow; the deviation comes
    as a RuntimeWarning) or DR_TASK_STOP (such a motion raises DR_Error before it moves).
    DR_VAR_VEL raises DR_Error(DR_ERROR_RUNTIME): not available."""
    if not is_int(mode):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : mode")
    if not DR_AVOID <= mode <= DR_VAR_VEL:
        raise DR_Error(DR_ERROR_VALUE, f"Invalid value : mode({mode})")
    _state.service_values("set_singularity_handling", lambda s: s.setSingularityHandling, int(mode))
    return 0


def set_singular_handling(mode: int = DR_AVOID) -> int:
    return set_singularity_handling(mode)


def get_current_pose(space_type: int) -> list[float]:
    """ROBOT_SPACE_JOINT (0): the joints now [deg]; ROBOT_SPACE_TASK (1): the TCP now (base)."""
    if not is_int(space_type):
        raise DR_Error(DR_ERROR_TYPE, "Invalid type : space_type")
    if space_type == ROBOT_SPACE_JOINT:
        return list(_state.get_current_posj())
    if space_type == ROBOT_SPACE_TASK:
        return list(_state.get_current_posx(0)[0])
    raise DR_Error(DR_ERROR_VALUE, f"Invalid value : space_type({space_type})")


def get_current_tool_flange_posx(ref: Any = None) -> posx:
    """The flange pose now (the TCP without its offset) in DR_BASE or DR_WORLD."""
    rr = 0 if ref is None else ref
    if rr not in (0, 2):
        raise DR_Error(DR_ERROR_VALUE, f"Invalid value : ref({rr})")
    return posx(_state.service_values("get_current_tool_flange_posx", lambda s: s.getPose, 2,
                               rr)[:6])


# -- what the BlendingPlanner does not do, and why --------------------------------------------
_NO_SAFETY = "the robot's safety controller (modes, states, alarms) is not simulated"
_NO_IO = "there is no I/O in rtcf's arm systems"
_NO_FORCE = "force and compliance control need force sensing, which the planner does not have"
_NO_TOOL = ("payload and tool shape are not modelled by the planner (set_tcp chooses the TCP; "
            "the simulated arm's masses are its MJCF's)")
_NO_DRL = "scripts run as Python processes here; there is no DRL interpreter to drive"
UNSUPPORTED = {
    "set_robot_system": "real / virtual robot selection: the composition chooses the system",
    "get_robot_system": "real / virtual robot selection: the composition chooses the system",
    "get_robot_state": _NO_SAFETY,
    "set_robot_speed_mode": _NO_SAFETY + " (use change_operation_speed)",
    "get_robot_speed_mode": _NO_SAFETY,
    "set_safe_stop_reset_type": _NO_SAFETY,
    "get_last_alarm": _NO_SAFETY,
    "set_safety_mode": _NO_SAFETY,
    "get_control_mode": "the planner commands joint positions only",
    "get_control_space": "the planner commands joint positions only",
    "get_joint_torque": "joint torques are not read by the planner (arm_sim: Simulator0.tau)",
    "get_external_torque": _NO_FORCE,
    "get_tool_force": _NO_FORCE,
    "get_orientation_error": "not implemented",
    "servoj": "streaming servo targets: connect to a controller's qRef port instead",
    "enable_alter_motion": "on-line path modification is not implemented",
    "alter_motion": "on-line path modification is not implemented",
    "disable_alter_motion": "on-line path modification is not implemented",
    "jog": "jogging belongs to the teach pendant",
    "jog_multi": "jogging belongs to the teach pendant",
    "get_workpiece_weight": _NO_FORCE,
    "reset_workpiece_weight": _NO_FORCE,
    "parallel_axis": _NO_FORCE,
    "align_axis": _NO_FORCE,
    "is_done_bolt_tightening": _NO_FORCE,
    "release_compliance_ctrl": _NO_FORCE,
    "task_compliance_ctrl": _NO_FORCE,
    "set_stiffnessx": _NO_FORCE,
    "calc_coord": "not implemented (set_user_cart_coord takes the same points)",
    "set_desired_force": _NO_FORCE,
    "release_force": _NO_FORCE,
    "check_position_condition": "not implemented (read get_current_posx)",
    "check_force_condition": _NO_FORCE,
    "check_orientation_condition": "not implemented (read get_current_posx)",
    "get_digital_input": _NO_IO,
    "get_analog_input": _NO_IO,
    "get_tool_digital_input": _NO_IO,
    "set_digital_output": _NO_IO,
    "get_digital_output": _NO_IO,
    "set_analog_output": _NO_IO,
    "set_mode_analog_output": _NO_IO,
    "set_mode_analog_input": _NO_IO,
    "set_tool_digital_output": _NO_IO,
    "get_tool_digital_output": _NO_IO,
    "add_modbus_signal": _NO_IO,
    "del_modbus_signal": _NO_IO,
    "set_modbus_output": _NO_IO,
    "get_modbus_input": _NO_IO,
    "set_tool": _NO_TOOL,
    "get_tool": _NO_TOOL,
    "set_tool_shape": _NO_TOOL,
    "add_tool": _NO_TOOL,
    "del_tool": _NO_TOOL,
    "drl_script_run": _NO_DRL,
    "drl_script_stop": _NO_DRL,
    "drl_script_pause": _NO_DRL,
    "drl_script_resume": _NO_DRL,
    "get_drl_state": _NO_DRL,
}


def _unsupported(name: str, why: str) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        raise DR_Error(DR_ERROR_RUNTIME, f"{name} is not available on rtcf's BlendingPlanner: "
                                         f"{why}", True)
    call.__name__ = name
    call.__doc__ = f"Not available: {why}. Raises DR_Error(DR_ERROR_RUNTIME)."
    return call


for _name, _why in UNSUPPORTED.items():
    globals()[_name] = _unsupported(_name, _why)

SUPPORTED = sorted(set(_motion.__all__) - {"connect", "get_last_error", "DR_ERROR_STOP"}
                   | set(_state.__all__)
                   | {"print_ext_result", "print_result", "set_robot_mode", "get_robot_mode",
                      "set_singularity_handling", "set_singular_handling", "get_current_pose",
                      "get_current_tool_flange_posx"})

__all__ = sorted(set(SUPPORTED) | set(UNSUPPORTED) | set(CONSTANTS)
                 | {"DR_Error", "posj", "posx", "posb", "get_posj", "get_posx",
                    "get_normal_pos", "get_param", "is_number", "connect", "get_last_error",
                    "rclpy", "DR_init", "RobotStop", "ROBOT_MODE_MANUAL",
                    "ROBOT_MODE_AUTONOMOUS", "DR_AVOID", "DR_TASK_STOP", "DR_VAR_VEL",
                    "ROBOT_SPACE_JOINT", "ROBOT_SPACE_TASK", "DR_CONFIG_PRT_EXT_RESULT",
                    "DR_CONFIG_PRT_RESULT"})
