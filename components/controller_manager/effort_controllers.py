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

import struct
from typing import Any

import numpy as np

from .controller import ControllerError
from .registry import register_controller
from .robot import RobotState

from .controllers import JointPositionController, per_joint

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
        self.p = per_joint(params, "p", n, 0.0, who)
        self.i = per_joint(params, "i", n, 0.0, who)
        self.d = per_joint(params, "d", n, 0.0, who)
        self.i_clamp = per_joint(params, "i_clamp", n, 0.0, who)
        ref = params.get("reference", False)
        if not isinstance(ref, bool):
            raise ControllerError(f"{who}: reference: expected true or false, got {ref!r}")
        if ref and not hasattr(robot, "reference"):
            raise ControllerError(f"{who}: reference: the hardware streams no joint "
                                  f"reference")
        self.follow_reference = ref
        # the state arrays are views of two buffers, so that update() reads each buffer with
        # one tolist() and writes it with one store: [setpoint | setpoint_velocity] and
        # [error | i_error | i_term | effort] (chained controllers and commands write the
        # setpoint arrays in place, as before)
        self._sp_sv = np.concatenate((self.setpoint, self.setpoint_velocity))
        # the lists stored back with struct.pack_into (the doubles as they are: the same
        # bits as ``a[...] = values``, which first makes an array of the list: ~8k
        # instructions for 24 values, pack_into a fraction of it)
        self._pack_sp = struct.Struct(f"{2 * n}d").pack_into
        self._pack_out = struct.Struct(f"{4 * n}d").pack_into
        self.setpoint, self.setpoint_velocity = self._sp_sv[:n], self._sp_sv[n:]
        self._out = np.zeros(4 * n)
        # the two buffers are fixed for the controller's life: pack_into stores through
        # memoryviews of them (an ndarray's own buffer export costs several times more)
        self._sp_sv_view, self._out_view = memoryview(self._sp_sv), memoryview(self._out)
        # update() reads back only i_error (error, i_term and effort are written before they
        # are read): into a list of the four kept for the controller's life
        self._ie_view = self._out_view[n:2 * n]
        self._out_list = [0.0] * (4 * n)
        self.error, self.i_error = self._out[:n], self._out[n:2 * n]
        self._i_term, self.effort = self._out[2 * n:3 * n], self._out[3 * n:]
        # i_error is wound back to i_term / i where i != 0 (control_toolbox); 0 elsewhere
        self._inv_i = np.divide(1.0, self.i, out=np.zeros(n), where=self.i != 0.0)
        # update() works on Python floats (a handful of joints: scalar math costs less than
        # a numpy call per step); the gains as lists, the joints' robot indices as ints
        self._joints = [int(k) for k in self.idx]
        # per joint j (robot index k): its places in the [setpoint | setpoint_velocity] and
        # [error | i_error | i_term | effort] lists, and its gains
        self._per_joint = [(j, k, n + j, 2 * n + j, 3 * n + j, p, i, d, c, -c, inv)
                           for j, (k, p, i, d, c, inv) in enumerate(zip(
                               self._joints, self.p.tolist(), self.i.tolist(),
                               self.d.tolist(), self.i_clamp.tolist(),
                               self._inv_i.tolist()))]
        # the effort commands' place in the robot's array: a slice when the joints are
        # consecutive in the robot's order (a store without an index array), else the index
        first = self._joints[0]
        self._dest = (slice(first, first + n) if self._joints == list(range(first, first + n))
                      else self.idx)
        # the reference and its velocity in one buffer when the robot state has one
        self._refs = getattr(robot, "references", None) if ref else None
        self._effort_store: tuple | None = None        # made by starting()
        return True

    def starting(self, time: float) -> None:
        JointPositionController.starting(self, time)
        self.i_error.fill(0.0)
        self.effort.fill(0.0)
        # the effort store of update() as a memoryview pair when the joints are consecutive
        # (the same bytes as effort_command[dest] = effort, a fraction of numpy's cost)
        dest = self._dest
        self._effort_store = ((memoryview(self.robot.effort_command)[dest],
                               memoryview(self.effort))
                              if isinstance(dest, slice) else None)

    def update(self, time: float, period: float) -> None:
        """The PID of every joint, on Python floats, in numpy's order of operations (the
        same bits as elementwise float64 arithmetic; the clamps as np.minimum /
        np.maximum, NaN passed on). Runs in: EC thread (the manager's tick)."""
        robot = self.robot
        joints = self._joints
        n = len(joints)
        spv = self._sp_sv_view.tolist()               # setpoint, then setpoint_velocity
        if self.follow_reference:
            refs = self._refs
            if refs is not None:                      # reference, then its velocity
                ref = refs.tolist()
                ref_v, m = ref, len(ref) // 2
            else:
                ref, ref_v, m = robot.reference.tolist(), robot.reference_velocity.tolist(), 0
            for j, k in enumerate(joints):
                r = ref[k]
                if r - r == 0.0:                          # finite: follow it
                    spv[j] = r
                    spv[n + j] = ref_v[m + k]
            self._pack_sp(self._sp_sv_view, 0, *spv)
        pos, vel = robot.position.tolist(), robot.velocity.tolist()
        out = self._out_list                          # error, i_error, i_term, effort
        out[n:2 * n] = self._ie_view.tolist()
        for j, k, j1, j2, j3, p, i, d, clamp, neg_clamp, inv_i in self._per_joint:
            e = spv[j] - pos[k]
            # integral with the clamp of control_toolbox's Pid
            it = i * (out[j1] + e * period)
            if it >= clamp:                           # np.minimum(it, clamp): NaN passes
                it = clamp
            if it <= neg_clamp:                       # np.maximum(it, -clamp)
                it = neg_clamp
            # effort = p e + i_term + d (v_sp - dq)
            out[j] = e
            out[j1] = it * inv_i
            out[j2] = it
            out[j3] = p * e + it + (spv[j1] - vel[k]) * d
        self._pack_out(self._out_view, 0, *out)
        store = self._effort_store
        if store is not None:
            store[0][:] = store[1]
        else:
            robot.effort_command[self._dest] = self.effort

    def state_values(self) -> dict[str, Any]:
        out = JointPositionController.state_values(self)
        out.update({"effort": self.effort.tolist(), "i_error": self.i_error.tolist(),
                    "follow_reference": self.follow_reference})
        return out


register_controller(JointEffortController)
