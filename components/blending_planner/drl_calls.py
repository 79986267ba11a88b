"""The DRL state, math, frame and TCP calls of the BlendingPlanner servant (no CORBA types).

Each returns (error type, reason, values): 0, "", the values in Doosan's units, or a DR_Error
type (commands.DR_ERROR_*) and why. Joint states come from the EC thread (one call, the
reference or the measured joints of the ``q`` port); the math runs in the caller's thread
on the immutable arm model. Runs in: ORB threads.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .frames import (BASE, TOOL, USER_MAX, USER_MIN, WORLD, FrameError, frame_pose, from_base,
                     matrix, to_base, trans)
from .commands import DR_ERROR_RUNTIME, DR_ERROR_TYPE, DR_ERROR_VALUE, MotionError, finite
from .geometry import posx_from_pose, rot_from_quat

CALL_TIMEOUT = 2.0
Answer = tuple[int, str, list[float]]


def _ok(values: Sequence[float]) -> Answer:
    return 0, "", [float(v) for v in values]


def _fail(reason: str, etype: int = DR_ERROR_VALUE) -> Answer:
    return etype, reason, []


class DrlCalls:
    def __init__(self, comp: Any):
        self.comp = comp

    def _ec(self, fn: Any) -> Any:
        return self.comp.call(fn, timeout=CALL_TIMEOUT)

    def _which(self, which: int) -> str:
        if which not in (0, 1):
            raise MotionError(f"which must be 0 (desired) or 1 (current), got {which}")
        return "current" if which == 1 else "desired"

    def _guard(self, fn: Any) -> Answer:
        try:
            return fn()
        except MotionError as e:
            return _fail(e.reason, e.type)
        except FrameError as e:
            return _fail(str(e))
        except TimeoutError:
            return _fail(f"{self.comp.instance_name} ran no cycle within {CALL_TIMEOUT} s: is "
                         "its execution context running?", DR_ERROR_RUNTIME)

    def _arm(self) -> Any:
        arm = self.comp.arm
        if arm is None:
            raise MotionError(f"no arm model: {self.comp.arm_reason}", DR_ERROR_RUNTIME)
        return arm

    def _state(self, which: int) -> tuple:
        """(q [rad] or None, dq [rad/s] or None, p, R) in the EC thread."""
        kind = self._which(which)
        comp = self.comp

        def grab() -> tuple:
            s = comp.stream
            q = comp.service.motions.joints_of(kind)
            if kind == "current" and comp.dq_meas is not None and q is not None \
                    and len(comp.dq_meas) == len(q):
                dq = np.array(comp.dq_meas, dtype=float)
            elif s.q is not None:
                dq = (s.q - s.q_prev) / s.dt if s.busy else np.zeros_like(s.q)
            else:
                dq = None
            return q, dq, np.array(s.p), np.array(s.p_prev), s.dt, s.busy, s.quat.copy()
        q, dq, p, p_prev, dt, busy, quat = self._ec(grab)
        return q, dq, p, p_prev, dt, busy, quat

    # -- state ---------------------------------------------------------------------------------
    def joints(self, which: int) -> Answer:
        def run() -> Answer:
            q = self._state(which)[0]
            if q is None:
                raise MotionError(f"no arm model: {self.comp.arm_reason}", DR_ERROR_RUNTIME)
            return _ok(np.degrees(q))
        return self._guard(run)

    def joint_velocity(self, which: int) -> Answer:
        def run() -> Answer:
            dq = self._state(which)[1]
            if dq is None:
                raise MotionError(f"no arm model: {self.comp.arm_reason}", DR_ERROR_RUNTIME)
            return _ok(np.degrees(dq))
        return self._guard(run)

    def pose(self, which: int, ref: int) -> Answer:
        """posx of the TCP in ref (BASE, WORLD or a user frame) and the solution space;
        which 2: the flange (the TCP without its offset) of the current joints."""
        def run() -> Answer:
            if ref == TOOL:
                raise MotionError("ref must be DR_BASE, DR_WORLD or a user frame, got 1 "
                                  "(DR_TOOL)")
            q, _, p, _, _, _, quat = self._state(1 if which == 2 else which)
            arm = self.comp.arm
            if which == 2:
                arm = self._arm().with_tool(np.eye(4))
            if q is not None and arm is not None:
                p, r = arm.tcp_pose(q)
                sol = arm.solution_space(q)
            else:
                r, sol = rot_from_quat(quat), 0
            return _ok(from_base(p, r, ref, self.comp.frames) + [sol])
        return self._guard(run)

    def task_velocity(self, which: int, ref: int) -> Answer:
        """[vx, vy, vz] mm/s and [wx, wy, wz] deg/s of the TCP, in the axes of ref."""
        def run() -> Answer:
            if ref == TOOL:
                raise MotionError("ref must be DR_BASE, DR_WORLD or a user frame, got 1")
            q, dq, p, p_prev, dt, busy, _ = self._state(which)
            arm = self.comp.arm
            if q is not None and arm is not None:
                v = arm.tcp_jacobian(q) @ dq
                lin, ang = v[:3], np.degrees(v[3:])
            else:
                lin, ang = (p - p_prev) / dt if busy else np.zeros(3), np.zeros(3)
            _, rot = frame_pose(ref, self.comp.frames, None)
            return _ok(list(rot.T @ lin) + list(rot.T @ ang))
        return self._guard(run)

    # -- math ----------------------------------------------------------------------------------
    def fkin(self, q: Sequence[float], ref: int) -> Answer:
        def run() -> Answer:
            arm = self._arm()
            qd = finite("pos", q, 6)
            p, r = arm.tcp_pose(np.radians(qd))
            return _ok(from_base(p, r, self._base_or_world(ref), self.comp.frames))
        return self._guard(run)

    def ikin(self, x: Sequence[float], sol: int, ref: int) -> Answer:
        def run() -> Answer:
            arm = self._arm()
            xs = finite("pos", x, 6)
            if not 0 <= sol <= 7:
                raise MotionError(f"sol_space must be 0..7, got {sol}")
            p, r = to_base(xs, self._base_or_world(ref), self.comp.frames)
            near = self._state(0)[0]
            q, why = arm.solve_in_space(p, r, sol, near)
            if q is None:
                raise MotionError(f"ikin: {why}")
            return _ok(np.degrees(q))
        return self._guard(run)

    def _base_or_world(self, ref: int) -> int:
        if ref not in (BASE, WORLD):
            raise MotionError(f"ref must be 0 (DR_BASE) or 2 (DR_WORLD), got {ref}")
        return ref

    def trans(self, pos: Sequence[float], delta: Sequence[float], ref: int,
              ref_out: int) -> Answer:
        def run() -> Answer:
            ps, ds = finite("pos", pos, 6), finite("delta", delta, 6)
            if ref_out == TOOL:
                raise MotionError("ref_out must be DR_BASE, DR_WORLD or a user frame")
            return _ok(trans(ps, ds, ref, ref_out, self.comp.frames))
        return self._guard(run)

    def solution_space(self, q: Sequence[float]) -> Answer:
        def run() -> Answer:
            return _ok([self._arm().solution_space(np.radians(finite("pos", q, 6)))])
        return self._guard(run)

    def coord_transform(self, pos: Sequence[float], ref_in: int, ref_out: int) -> Answer:
        """A posx given in ref_in expressed in ref_out (DR_TOOL: the TCP now)."""
        def run() -> Answer:
            ps = finite("pose_in", pos, 6)
            tool = None
            if TOOL in (ref_in, ref_out):
                _, _, p, _, _, _, quat = self._state(0)
                tool = (p, rot_from_quat(quat))
            p, r = to_base(ps, ref_in, self.comp.frames, tool)
            return _ok(from_base(p, r, ref_out, self.comp.frames, tool))
        return self._guard(run)

    def singularity_handling(self, mode: int) -> Answer:
        """DR_AVOID (0) or DR_TASK_STOP (1) for the motions planned next."""
        def run() -> Answer:
            arm = self._arm()
            if mode not in (0, 1):
                raise MotionError(f"mode must be 0 (DR_AVOID) or 1 (DR_TASK_STOP); "
                                  f"{mode} (DR_VAR_VEL) is not available" if mode == 2 else
                                  f"mode must be 0 (DR_AVOID) or 1 (DR_TASK_STOP), got {mode}",
                                  DR_ERROR_RUNTIME if mode == 2 else DR_ERROR_VALUE)
            arm.avoid = mode == 0
            return _ok([])
        return self._guard(run)

    # -- frames and TCPs -----------------------------------------------------------------------
    def set_user_frame(self, fid: int, pose: Sequence[float], ref: int) -> Answer:
        def run() -> Answer:
            xs = finite("pos", pose, 6)
            if ref not in (BASE, WORLD):
                raise MotionError(f"ref must be 0 (DR_BASE) or 2 (DR_WORLD), got {ref}")
            comp = self.comp
            frames = dict(comp.frames)
            if fid == 0:
                free = [i for i in range(USER_MIN, USER_MAX + 1) if i not in frames]
                if not free:
                    raise MotionError("all user frames 101..200 are in use")
                fid2 = free[0]
            elif USER_MIN <= fid <= USER_MAX:
                if fid not in frames:
                    raise MotionError(f"user frame {fid} is not set: overwrite needs an "
                                      "existing one")
                fid2 = fid
            else:
                raise MotionError(f"id must be 101..200, got {fid}")
            p, r = to_base(xs, ref, frames)
            frames[fid2] = matrix(p, r)
            comp.frames = frames                  # one assignment: readers see old or new
            return _ok([fid2])
        return self._guard(run)

    def get_user_frame(self, fid: int) -> Answer:
        def run() -> Answer:
            f = self.comp.frames.get(fid)
            if f is None or not USER_MIN <= fid <= USER_MAX:
                raise MotionError(f"user frame {fid} is not set")
            return _ok(posx_from_pose(f[:3, 3], f[:3, :3]) + [BASE])
        return self._guard(run)

    def set_tcp(self, name: str) -> Answer:
        def run() -> Answer:
            comp = self.comp
            arm = self._arm()
            if name and name not in comp.tcp_table:
                raise MotionError(f"no TCP named {name!r} (known: "
                                  f"{', '.join(sorted(comp.tcp_table)) or 'none'}; add_tcp)")
            posx = comp.tcp_table[name] if name else list(comp.tcp_offset)
            new_arm = arm.with_tool(comp.tool_matrix(posx))

            def swap() -> str:
                if comp.stream.busy or comp.service.motions.pending() or comp.motion:
                    return "set_tcp while a motion runs (wait for it to end)"
                comp.arm = new_arm
                comp.tcp_name = name
                s = comp.stream
                s.fk = new_arm.tcp_pose
                p, r = new_arm.tcp_pose(s.q)
                s.reset(s.q, p, r)
                return ""
            why = self._ec(swap)
            if why:
                raise MotionError(why, DR_ERROR_RUNTIME)
            return _ok([])
        return self._guard(run)

    def add_tcp(self, name: str, pos: Sequence[float]) -> Answer:
        def run() -> Answer:
            if not isinstance(name, str) or not name.strip():
                raise MotionError("name must be a non-empty string", DR_ERROR_TYPE)
            xs = finite("pos", pos, 6)
            table = dict(self.comp.tcp_table)
            table[name] = xs
            self.comp.tcp_table = table
            return _ok([])
        return self._guard(run)

    def del_tcp(self, name: str) -> Answer:
        def run() -> Answer:
            table = dict(self.comp.tcp_table)
            if name not in table:
                raise MotionError(f"no TCP named {name!r}")
            if name == self.comp.tcp_name:
                raise MotionError(f"TCP {name!r} is the current one", DR_ERROR_RUNTIME)
            del table[name]
            self.comp.tcp_table = table
            return _ok([])
        return self._guard(run)
