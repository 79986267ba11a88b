"""Bundled controllers: a joint position PD and a joint trajectory follower.

Pure (the controller framework of this package + numpy): usable with any manager core. Both
are registered under their class names when this module is imported.

JointPositionController (PR2's robot_mechanism_controllers JointPositionController, for
position-controlled joints): per joint ``command = q + kp (setpoint - q) + kd (setpoint_vel
- dq)``, clamped to the joint limits. kp is dimensionless (1 sends the setpoint itself, less
than 1 softens), kd in [s]. ``starting`` holds the measured position, so the first command
after a start never jumps.

JointTrajectoryController: waypoints (positions at times after the trajectory start) joined
by cubic (continuous position and velocity) or quintic (also acceleration) polynomials;
interior waypoint velocities are the mean of the neighbouring slopes (0 where the slope
changes sign), accelerations 0; the first and the last waypoint are reached at rest and the
last one is held. A new trajectory taken while
running starts from the sampled state of the old one at that tick (position, velocity,
acceleration), so it never jumps. With ``output: <pd name>`` it is chained to a
JointPositionController loaded earlier (get_controller AFTER_ME: the PD updates after it, in
the same tick) and writes that PD's setpoint; without, it writes the joint commands.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .controller import AFTER_ME, Controller, ControllerError
from .registry import register_controller
from .robot import RobotState

__all__ = ["JointPositionController", "JointTrajectoryController", "Trajectory"]


def _joint_list(params: dict[str, Any], who: str) -> list[str]:
    joints = params.get("joints")
    if isinstance(joints, str):
        joints = [j.strip() for j in joints.split(",") if j.strip()]
    if not isinstance(joints, (list, tuple)) or not joints or \
            not all(isinstance(j, str) for j in joints):
        raise ControllerError(f"{who}: joints: expected a non-empty list of joint names, "
                              f"got {joints!r}")
    if len(set(joints)) != len(joints):
        raise ControllerError(f"{who}: joints: duplicate names in {joints!r}")
    return list(joints)


def per_joint(params: dict[str, Any], key: str, n: int, default: float, who: str,
               lo: float = 0.0) -> np.ndarray:
    v = params.get(key, default)
    try:
        arr = np.array(v, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ControllerError(f"{who}: {key}: expected a number or {n} numbers, got {v!r}") \
            from None
    if arr.size == 1:
        arr = np.full(n, arr[0])
    if arr.size != n or not np.all(np.isfinite(arr)) or np.any(arr < lo):
        raise ControllerError(f"{who}: {key}: expected one number >= {lo:g} or {n} of them, "
                              f"got {v!r}")
    return arr


class JointPositionController(Controller):
    """PD on the position error of a set of joints; output: a position command.

    params: joints (names), kp (default 1.0), kd [s] (default 0.0), setpoint [rad]
    (optional: the initial setpoint; default: the position measured at starting).
    Commands: {setpoint: [rad...]} (and optionally setpoint_velocity [rad/s]).
    """

    def init(self, robot: RobotState, params: dict[str, Any]) -> bool:
        who = f"{self.name} ({type(self).__name__})"
        self.joint_names = _joint_list(params, who)
        self.robot = robot
        self.idx = robot.indices(self.joint_names)      # ControllerError names the joint
        n = len(self.joint_names)
        self.kp = per_joint(params, "kp", n, 1.0, who)
        self.kd = per_joint(params, "kd", n, 0.0, who)
        self.lower = robot.lower[self.idx]
        self.upper = robot.upper[self.idx]
        self.claim(self.joint_names, "position")
        self.setpoint = np.zeros(n)
        self.setpoint_velocity = np.zeros(n)
        self._initial = None
        if "setpoint" in params:
            self._initial = self._check_setpoint(params["setpoint"], who)
        self._q = np.zeros(n)
        self._dq = np.zeros(n)
        self._cmd = np.zeros(n)
        self._tmp = np.zeros(n)
        self.error = np.zeros(n)
        return True

    def _check_setpoint(self, v: Any, who: str) -> np.ndarray:
        n = len(self.joint_names)
        try:
            arr = np.array(v, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            raise ControllerError(f"{who}: setpoint: expected {n} numbers, got {v!r}") \
                from None
        if arr.size != n or not np.all(np.isfinite(arr)):
            raise ControllerError(f"{who}: setpoint: expected {n} finite numbers [rad], "
                                  f"got {v!r}")
        return arr

    def starting(self, time: float) -> None:
        if self._initial is not None:
            np.copyto(self.setpoint, self._initial)
            self._initial = None
        else:
            np.take(self.robot.position, self.idx, out=self.setpoint)
        self.setpoint_velocity.fill(0.0)

    def update(self, time: float, period: float) -> None:
        robot = self.robot
        q, dq, cmd, tmp = self._q, self._dq, self._cmd, self._tmp
        np.take(robot.position, self.idx, out=q)
        np.take(robot.velocity, self.idx, out=dq)
        np.subtract(self.setpoint, q, out=self.error)
        np.multiply(self.kp, self.error, out=cmd)
        np.subtract(self.setpoint_velocity, dq, out=tmp)
        tmp *= self.kd
        cmd += tmp
        cmd += q
        np.maximum(cmd, self.lower, out=cmd)
        np.minimum(cmd, self.upper, out=cmd)
        robot.command[self.idx] = cmd

    def prepare_command(self, params: dict[str, Any]) -> Any:
        who = f"{self.name} command"
        unknown = set(params) - {"setpoint", "setpoint_velocity"}
        if unknown or "setpoint" not in params:
            raise ControllerError(f"{who}: expected {{setpoint: [...]}} (optional "
                                  f"setpoint_velocity), got keys {sorted(params)}")
        sp = self._check_setpoint(params["setpoint"], who)
        sv = self._check_setpoint(params.get("setpoint_velocity", [0.0] * sp.size), who)
        return sp, sv

    def apply_command(self, prepared: Any) -> None:
        sp, sv = prepared
        np.copyto(self.setpoint, sp)
        np.copyto(self.setpoint_velocity, sv)

    def state_values(self) -> dict[str, Any]:
        return {"joints": list(self.joint_names), "setpoint": self.setpoint.tolist(),
                "error": self.error.tolist(),
                "max_abs_error": float(np.max(np.abs(self.error)))}


class Trajectory:
    """Waypoints and polynomial coefficients, preallocated for segments 0..K.

    Segment 0 runs from the state at the start (filled in by ``splice``, at the tick the
    trajectory is taken) to waypoint 0; segment k from waypoint k-1 to waypoint k.
    coeffs[k]: (6, n) polynomial in tau = t - t_start[k]. Built in a non-real-time thread.
    """

    def __init__(self, times: Sequence[float], positions: np.ndarray, quintic: bool):
        self.quintic = quintic
        self.t = np.concatenate(([0.0], np.asarray(times, float)))   # segment starts/ends
        self.p = np.asarray(positions, float)                         # (K, n) waypoints
        k, n = self.p.shape
        self.v = np.zeros((k, n))
        for i in range(k - 1):                                        # interior velocities
            prev = self.p[i - 1] if i > 0 else None
            s1 = (self.p[i] - prev) / (self.t[i + 1] - self.t[i]) if prev is not None \
                else None
            s2 = (self.p[i + 1] - self.p[i]) / (self.t[i + 2] - self.t[i + 1])
            if s1 is not None:
                self.v[i] = np.where(s1 * s2 > 0, 0.5 * (s1 + s2), 0.0)
        self.coeffs = np.zeros((k, 6, n))
        for i in range(1, k):
            _fill(self.coeffs[i], self.p[i - 1], self.v[i - 1], 0.0, self.p[i], self.v[i],
                  0.0, self.t[i + 1] - self.t[i], quintic)
        self.base = 0.0

    @property
    def duration(self) -> float:
        return float(self.t[-1])

    def splice(self, base: float, p0: np.ndarray, v0: np.ndarray, a0: np.ndarray) -> None:
        """Start at time ``base`` [s] from state (p0, v0, a0). Runs in: EC thread."""
        self.base = base
        _fill(self.coeffs[0], p0, v0, a0 if self.quintic else 0.0, self.p[0], self.v[0],
              0.0, self.t[1], self.quintic)


def _fill(c: np.ndarray, p0: Any, v0: Any, a0: Any, p1: Any, v1: Any, a1: Any, T: float,
          quintic: bool) -> None:
    """Coefficients of one segment of duration T into c (6, n), in place."""
    d = p1 - p0
    c[0] = p0
    c[1] = v0
    if quintic:
        c[2] = 0.5 * a0
        c[3] = (20 * d - (8 * v1 + 12 * v0) * T - (3 * a0 - a1) * T * T) / (2 * T ** 3)
        c[4] = (-30 * d + (14 * v1 + 16 * v0) * T + (3 * a0 - 2 * a1) * T * T) / (2 * T ** 4)
        c[5] = (12 * d - 6 * (v1 + v0) * T - (a0 - a1) * T * T) / (2 * T ** 5)
    else:
        c[2] = (3 * d - (2 * v0 + v1) * T) / (T * T)
        c[3] = (-2 * d + (v0 + v1) * T) / T ** 3
        c[4] = 0.0
        c[5] = 0.0


class JointTrajectoryController(Controller):
    """Follows waypoint trajectories (see the module doc).

    params: joints; interpolation "cubic" (default) or "quintic"; output (optional name of a
    JointPositionController loaded earlier; its joints must include these); times [s] and
    positions [[rad...] per waypoint] (optional: a trajectory to run from starting).
    Commands: {times: [...], positions: [[...], ...]} (times > 0, increasing, relative to
    the tick that takes the trajectory).
    """

    def init(self, robot: RobotState, params: dict[str, Any]) -> bool:
        who = f"{self.name} ({type(self).__name__})"
        self.joint_names = _joint_list(params, who)
        self.robot = robot
        self.idx = robot.indices(self.joint_names)
        n = len(self.joint_names)
        interp = params.get("interpolation", "cubic")
        if interp not in ("cubic", "quintic"):
            raise ControllerError(f"{who}: interpolation: expected 'cubic' or 'quintic', "
                                  f"got {interp!r}")
        self.quintic = interp == "quintic"
        self.out: JointPositionController | None = None
        self.out_idx = None
        if params.get("output"):
            out = self.get_controller(str(params["output"]), AFTER_ME,
                                      JointPositionController)
            if out is False:
                raise ControllerError(self.get_controller_error)
            self.out = out
            missing = [j for j in self.joint_names if j not in self.out.joint_names]
            if missing:
                raise ControllerError(f"{who}: output {self.out.name!r} does not control "
                                      f"{missing}")
            self.out_idx = np.array([self.out.joint_names.index(j)
                                     for j in self.joint_names], dtype=np.intp)
        if self.out is None:
            self.claim(self.joint_names, "position")     # chained: the PD claims them
        self.pos = np.zeros(n)
        self.vel = np.zeros(n)
        self.acc = np.zeros(n)
        self.error = np.zeros(n)
        self._q = np.zeros(n)
        self._tmp = np.zeros(n)
        self._traj: Trajectory | None = None
        self._pending: Trajectory | None = None
        self._seg = 0
        self.trajectories = 0
        if "times" in params or "positions" in params:
            self._pending = self.prepare_command({"times": params.get("times"),
                                                  "positions": params.get("positions")})
        return True

    # -- commands (non-real-time, then a swap between ticks) ------------------------------
    def prepare_command(self, params: dict[str, Any]) -> Trajectory:
        who = f"{self.name} trajectory"
        times, positions = params.get("times"), params.get("positions")
        n = len(self.joint_names)
        try:
            t = np.array(times, dtype=float).reshape(-1)
            p = np.array(positions, dtype=float)
        except (TypeError, ValueError):
            raise ControllerError(f"{who}: expected times [s] and positions [[rad]*{n}] "
                                  f"per waypoint, got {times!r}, {positions!r}") from None
        if t.size == 0 or p.ndim != 2 or p.shape != (t.size, n):
            raise ControllerError(f"{who}: positions: expected {t.size} waypoints of {n} "
                                  f"values, got shape {p.shape}")
        if not (np.all(np.isfinite(t)) and np.all(np.isfinite(p))):
            raise ControllerError(f"{who}: times and positions must be finite, got "
                                  f"{times!r}, {positions!r}")
        if t[0] <= 0 or np.any(np.diff(t) <= 0):
            raise ControllerError(f"{who}: times: expected > 0 and strictly increasing, "
                                  f"got {t.tolist()}")
        lo, hi = self.robot.lower[self.idx], self.robot.upper[self.idx]
        bad = np.argwhere((p < lo) | (p > hi))
        if bad.size:
            k, j = bad[0]
            raise ControllerError(f"{who}: waypoint {k}: {self.joint_names[j]} = {p[k, j]} "
                                  f"is outside its limits [{lo[j]}, {hi[j]}]")
        return Trajectory(t, p, self.quintic)

    def apply_command(self, prepared: Trajectory) -> None:
        self._pending = prepared                 # taken by the next update (splice)

    # -- real time -----------------------------------------------------------------------
    def starting(self, time: float) -> None:
        np.take(self.robot.position, self.idx, out=self.pos)
        self.vel.fill(0.0)
        self.acc.fill(0.0)
        self._traj = None

    def update(self, time: float, period: float) -> None:
        pending = self._pending
        if pending is not None:
            self._pending = None
            self._sample(time)                  # the state of the old trajectory now
            pending.splice(time, self.pos, self.vel, self.acc)
            self._traj = pending
            self._seg = 0
            self.trajectories += 1
        self._sample(time)
        np.take(self.robot.position, self.idx, out=self._q)
        np.subtract(self.pos, self._q, out=self.error)
        if self.out is not None:
            self.out.setpoint[self.out_idx] = self.pos
            self.out.setpoint_velocity[self.out_idx] = self.vel
        else:
            self.robot.command[self.idx] = self.pos

    def _sample(self, time: float) -> None:
        tr = self._traj
        if tr is None:
            return                               # hold pos (set at starting)
        tau = time - tr.base
        t = tr.t
        last = t.size - 2
        seg = self._seg
        while seg < last and tau >= t[seg + 1]:
            seg += 1
        self._seg = seg
        if tau >= t[-1]:
            np.copyto(self.pos, tr.p[-1])
            self.vel.fill(0.0)
            self.acc.fill(0.0)
            return
        tau -= t[seg]
        c = tr.coeffs[seg]
        # Horner for p, v, a (in place)
        pos, vel, acc, tmp = self.pos, self.vel, self.acc, self._tmp
        np.multiply(c[5], tau, out=pos)
        pos += c[4]; pos *= tau; pos += c[3]; pos *= tau; pos += c[2]; pos *= tau
        pos += c[1]; pos *= tau; pos += c[0]
        np.multiply(c[5], 5.0 * tau, out=vel)
        np.multiply(c[4], 4.0, out=tmp); vel += tmp; vel *= tau
        np.multiply(c[3], 3.0, out=tmp); vel += tmp; vel *= tau
        np.multiply(c[2], 2.0, out=tmp); vel += tmp; vel *= tau
        vel += c[1]
        np.multiply(c[5], 20.0 * tau, out=acc)
        np.multiply(c[4], 12.0, out=tmp); acc += tmp; acc *= tau
        np.multiply(c[3], 6.0, out=tmp); acc += tmp; acc *= tau
        np.multiply(c[2], 2.0, out=tmp); acc += tmp

    def state_values(self) -> dict[str, Any]:
        tr = self._traj
        return {"joints": list(self.joint_names), "desired": self.pos.tolist(),
                "error": self.error.tolist(),
                "max_abs_error": float(np.max(np.abs(self.error))),
                "trajectories": self.trajectories,
                "remaining": max(0.0, tr.duration - (self.robot.time - tr.base))
                if tr is not None else 0.0}


register_controller(JointPositionController)
register_controller(JointTrajectoryController)
