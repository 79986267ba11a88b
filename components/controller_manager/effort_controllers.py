"""Joint effort controllers: a PID from the position error to a joint torque.

Pure (the controller framework of this package + numpy). Registered under its class name
when imported (the ControllerManager imports this module for hardware=simulator; other
managers list it in ``controller_modules``).

JointEffortController is PR2's robot_mechanism_controllers JointPositionController for
effort-controlled joints (pr2_controllers, robot_mechanism_controllers/src/
joint_position_controller.cpp): per joint, with control_toolbox's Pid
(control_toolbox/src/pid.cpp: gains p, i, d and ``i_clamp``, i_min = -i_clamp),

    error = setpoint - q                           (position error [rad])
    i_error += period * error                      (period: the manager's measured tick [s])
    i_term = clamp(i * i_error, -i_clamp, i_clamp) (and i_error wound back to i_term / i)
    effort = p * error + i_term + d * (setpoint_velocity - dq)

PR2 passes the desired velocity as 0 (error_dot = -dq); here a setpoint_velocity (from a
chained trajectory follower or the reference stream) is used when given, 0 otherwise. It
claims its joints' effort interfaces and writes the effort [N m] to ``effort_command`` (the
hardware saturates it at the joint's effort limit). ``starting`` holds the measured position and clears the
integral, so a start never jumps.

It subclasses the position JointPositionController so a JointTrajectoryController can be
chained to it (``output: <name>`` writes its setpoint and setpoint_velocity).

``reference: true`` makes it follow the manager's streamed joint reference (the robot
state's ``reference`` / ``reference_velocity`` arrays of a ReferenceRobotState, fed by the
hardware's qRef in-port: BlendingPlanner's qRef); joints whose reference is NaN keep the
last setpoint.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .controller import ControllerError
from .registry import register_controller
from .robot import RobotState

from .controllers import JointPositionController, _per_joint

__all__ = ["JointEffortController"]


class JointEffortController(JointPositionController):
    """PID on the position error of a set of joints; output: a joint torque [N m].

    params: joints; p [N m/rad] (required, as control_toolbox's Pid), i [N m/(rad s)],
    d [N m s/rad], i_clamp [N m] (one number or one per joint; default 0); setpoint [rad]
    (optional); reference (bool, default false: follow the streamed reference).
    Commands: {setpoint: [rad...]} (and optionally setpoint_velocity [rad/s]).
    """

    def init(self, robot: RobotState, params: dict[str, Any]) -> bool:
        who = f"{self.name} ({type(self).__name__})"
        if not robot.takes("effort"):
            raise ControllerError(f"{who}: the hardware takes {', '.join(robot.command_types)}"
                                  f" commands; a joint effort controller needs an effort "
                                  f"interface (hardware=simulator)")
        if "p" not in params:
            raise ControllerError(f"{who}: p: a proportional gain is required (control_"
                                  f"toolbox Pid), got params {sorted(params)}")
        unknown = set(params) - {"joints", "p", "i", "d", "i_clamp", "setpoint", "reference"}
        if unknown:
            raise ControllerError(f"{who}: unknown params {sorted(unknown)} (expected joints, "
                                  f"p, i, d, i_clamp, setpoint, reference)")
        base = {k: params[k] for k in ("joints", "setpoint") if k in params}
        JointPositionController.init(self, robot, base)
        # the PD base claimed the joints' position interfaces: this one writes efforts
        self.command_interfaces = []
        self.claim(self.joint_names, "effort")
        n = len(self.joint_names)
        self.p = _per_joint(params, "p", n, 0.0, who)
        self.i = _per_joint(params, "i", n, 0.0, who)
        self.d = _per_joint(params, "d", n, 0.0, who)
        self.i_clamp = _per_joint(params, "i_clamp", n, 0.0, who)
        ref = params.get("reference", False)
        if not isinstance(ref, bool):
            raise ControllerError(f"{who}: reference: expected true or false, got {ref!r}")
        if ref and not hasattr(robot, "reference"):
            raise ControllerError(f"{who}: reference: the hardware streams no joint "
                                  f"reference")
        self.follow_reference = ref
        self.i_error = np.zeros(n)
        self.effort = np.zeros(n)
        self._i_term = np.zeros(n)
        self._ref = np.zeros(n)
        self._ref_v = np.zeros(n)
        self._have = np.zeros(n, dtype=bool)
        # i_error is wound back to i_term / i where i != 0 (control_toolbox); 0 elsewhere
        self._inv_i = np.divide(1.0, self.i, out=np.zeros(n), where=self.i != 0.0)
        return True

    def starting(self, time: float) -> None:
        JointPositionController.starting(self, time)
        self.i_error.fill(0.0)
        self.effort.fill(0.0)

    def update(self, time: float, period: float) -> None:
        robot = self.robot
        if self.follow_reference:
            ref, have = self._ref, self._have
            np.take(robot.reference, self.idx, out=ref)
            np.isfinite(ref, out=have)
            np.copyto(self.setpoint, ref, where=have)
            np.take(robot.reference_velocity, self.idx, out=self._ref_v)
            np.copyto(self.setpoint_velocity, self._ref_v, where=have)
        q, dq, tmp, e = self._q, self._dq, self._tmp, self.effort
        np.take(robot.position, self.idx, out=q)
        np.take(robot.velocity, self.idx, out=dq)
        np.subtract(self.setpoint, q, out=self.error)
        # integral with the clamp of control_toolbox's Pid
        np.multiply(self.error, period, out=tmp)
        self.i_error += tmp
        it = self._i_term
        np.multiply(self.i, self.i_error, out=it)
        np.minimum(it, self.i_clamp, out=it)
        np.maximum(it, -self.i_clamp, out=it)
        np.multiply(it, self._inv_i, out=self.i_error)
        # effort = p e + i_term + d (v_sp - dq)
        np.multiply(self.p, self.error, out=e)
        e += it
        np.subtract(self.setpoint_velocity, dq, out=tmp)
        tmp *= self.d
        e += tmp
        robot.effort_command[self.idx] = e

    def state_values(self) -> dict[str, Any]:
        out = JointPositionController.state_values(self)
        out.update({"effort": self.effort.tolist(), "i_error": self.i_error.tolist(),
                    "follow_reference": self.follow_reference})
        return out


register_controller(JointEffortController)
