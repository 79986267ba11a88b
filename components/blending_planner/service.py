"""Doosan::BlendingPlannerService servant. Runs in: ORB threads.

moveBlending validates and plans in the calling thread (the core is pure), samples the plan
at the component's cycle, solves the arm's IK along the whole path, and only then hands the
finished motion to the EC thread (Component.call). Expected refusals are ``False`` plus a
reason for getLastError (spec PD-0.2: Doosan returns a boolean).
"""

from __future__ import annotations

import math
import threading
import time as _time
from typing import Any, Sequence

from rtcf.corba.idl import stub_module

from .component import Motion
from .geometry import posx_from_pose, rot_from_quat
from .planner import (DR_STATE_BUSY, DR_STATE_IDLE, SYNC, WAIT_DONE, WAIT_FAILED,
                      WAIT_RUNNING, Request, plan)

Doosan = stub_module("Doosan")
Doosan__POA = stub_module("Doosan__POA")
CALL_TIMEOUT = 2.0      # [s] an EC command runs at the next cycle
SYNC_MARGIN = 2.0       # [s] beyond the planned duration (x 1.5) before SYNC gives up
STEPPED_WAIT = 60.0     # [s] of wall clock a SYNC call waits for a stepped EC
MAX_WAIT_CHUNK = 60.0   # [s] the longest one waitMotion call may block


class BlendingPlannerCore:
    """The service logic without CORBA types (also used in-process and by the servant)."""

    def __init__(self, comp: Any):
        self.comp = comp
        self._lock = threading.Lock()        # one request planned at a time
        self._error = ""
        self._error_lock = threading.Lock()
        self._newest: tuple[Motion, float] | None = None    # accepted motion, its deadline

    # -- errors --------------------------------------------------------------------------
    def _refuse(self, reason: str) -> bool:
        with self._error_lock:
            self._error = reason
        self.comp.log.info("moveBlending refused: %s", reason)
        return False

    def last_error(self) -> str:
        with self._error_lock:
            return self._error

    def _ec_call(self, fn: Any) -> Any:
        return self.comp.call(fn, timeout=CALL_TIMEOUT)

    # -- operations ----------------------------------------------------------------------
    def move_blending(self, segments: Sequence[Sequence[float]], pos_cnt: int,
                      vel: Sequence[float], acc: Sequence[float], time: float, ref: int,
                      mode: int, sync_type: int) -> bool:
        """Runs in: an ORB thread (or any thread but the EC's)."""
        if not self._lock.acquire(blocking=False):
            return self._refuse("another moveBlending request is being planned")
        try:
            motion = self._prepare(Request(segments, int(pos_cnt), list(vel), list(acc),
                                           float(time), int(ref), int(mode), int(sync_type)))
        except TimeoutError:
            return self._refuse(f"{self.comp.instance_name} ran no cycle within "
                                f"{CALL_TIMEOUT} s: is its execution context running?")
        finally:
            self._lock.release()
        if isinstance(motion, str):
            return self._refuse(motion)
        with self._error_lock:
            self._error = ""
        self._newest = (motion, _time.monotonic() + self._limit(motion))
        if int(sync_type) != SYNC:
            return True
        why = self._wait(motion, "SYNC")
        return self._refuse(why) if why else True

    def _limit(self, motion: Motion) -> float:
        """[s] of wall clock a motion may take before a waiter stops it."""
        limit = motion.plan.duration * 1.5 + SYNC_MARGIN
        # a stepped EC (tests, simulation) advances only when ticked: wait on the wall clock
        if self.comp.clock_is_stepped():
            limit = max(limit, STEPPED_WAIT)
        return limit

    def _wait(self, motion: Motion, what: str, deadline: float | None = None,
              chunk: float = math.inf) -> str | None:
        """Wait for ``motion`` to end: "" when it completed, else why not (a motion that
        outlives its limit, measured from now or from ``deadline`` [monotonic s], is
        stopped); None when it still runs after ``chunk`` [s]."""
        limit = self._limit(motion)
        if deadline is None:
            deadline = _time.monotonic() + limit
        left = deadline - _time.monotonic()
        if motion.done.wait(max(0.0, min(left, chunk))):
            return motion.outcome
        if left > chunk:
            return None
        self._ec_call(self.comp.request_stop)
        return (f"{what}: the motion of {motion.plan.duration:.3f} s did not end within "
                f"{limit:.1f} s (is the execution context running?); stopping it")

    def wait_motion(self, timeout: float) -> int:
        """A wait of at most ``timeout`` [s] for the newest accepted motion: WAIT_DONE,
        WAIT_RUNNING, or WAIT_FAILED (reason in last_error). Runs in: an ORB thread."""
        if not 0.0 <= timeout <= MAX_WAIT_CHUNK:      # NaN fails too
            self._refuse(f"waitMotion: timeout must be 0..{MAX_WAIT_CHUNK:g} s, got {timeout!r}")
            return WAIT_FAILED
        newest = self._newest
        if newest is None:
            return WAIT_DONE
        try:
            why = self._wait(newest[0], "waitMotion", newest[1], timeout)
        except TimeoutError:
            self._refuse(f"{self.comp.instance_name} ran no cycle within {CALL_TIMEOUT} s: "
                         f"is its execution context running?")
            return WAIT_FAILED
        if why is None:
            return WAIT_RUNNING
        if why:
            self._refuse(why)
            return WAIT_FAILED
        return WAIT_DONE

    def move_wait(self) -> bool:
        """Doosan's mwait: True once no motion runs. Runs in: an ORB thread."""
        try:
            motion = self._ec_call(lambda: self.comp.motion)
        except TimeoutError:
            return self._refuse(f"{self.comp.instance_name} ran no cycle within "
                                f"{CALL_TIMEOUT} s: is its execution context running?")
        if motion is None:
            return True
        why = self._wait(motion, "mwait")
        return self._refuse(why) if why else True

    def check_motion(self) -> int:
        """Doosan's check_motion: 0 idle, 2 busy. Runs in: an ORB thread."""
        busy = self._ec_call(self.comp.snapshot)[0]
        return DR_STATE_BUSY if busy else DR_STATE_IDLE

    def _prepare(self, req: Request) -> Motion | str:
        comp = self.comp
        busy, p0, r0, q0 = self._ec_call(comp.snapshot)
        if busy:
            return "a motion is already running (Doosan: wait for an amoveb to end)"
        res = plan(req, (p0, r0), comp.frames)
        if not res.ok:
            return res.reason
        pl = res.plan
        dt = comp.cycle_period()
        if dt is None:
            return f"{comp.instance_name} is in no execution context: nothing would move"
        n = pl.n_samples(dt)
        if n > comp.max_samples:
            return (f"the motion lasts {pl.duration:.3f} s = {n} cycles of {dt:g} s, over "
                    f"max_samples = {comp.max_samples}")
        samples = pl.sample(dt)
        q = None
        if comp.arm is not None:
            ik = comp.arm.solve_path(samples.pos, samples.quat, q0, dt)
            if not ik.ok:
                k = ik.index
                seg = pl.segment_at(float(samples.s[k]))
                pose = [round(v, 3) for v in posx_from_pose(samples.pos[k],
                                                            rot_from_quat(samples.quat[k]))]
                return (f"IK fails on segment {seg}, sample {k} of {len(samples)} (t = "
                        f"{samples.t[k]:.3f} s, s = {samples.s[k]:.2f} mm, pose {pose}): "
                        f"{ik.reason}")
            q = ik.q
        motion = Motion(pl, samples, q)
        why = self._ec_call(lambda: comp.start(motion, p0))
        return why or motion

    def stop(self) -> bool:
        return bool(self._ec_call(self.comp.request_stop))

    def tcp_pose(self) -> list[float]:
        """The TCP pose the joint reference gives (FK), the planned one without an arm."""
        _, p, r, q = self._ec_call(self.comp.snapshot)
        if q is not None and self.comp.arm is not None:
            p, r = self.comp.arm.tcp_pose(q)
        return posx_from_pose(p, r)

    def last_plan(self) -> tuple | None:
        return self.comp.last_plan


class BlendingPlannerServiceImpl(Doosan__POA.BlendingPlannerService):
    """The CORBA face of BlendingPlannerCore."""

    def __init__(self, comp: Any):
        self.core = BlendingPlannerCore(comp)

    def moveBlending(self, segment, posCnt, vel, acc, time, ref, mode, syncType) -> bool:
        return self.core.move_blending([list(s) for s in segment], posCnt, vel, acc, time,
                                       ref, mode, syncType)

    def getLastError(self) -> str:
        return self.core.last_error()

    def getLastPlan(self) -> Any:
        got = self.core.last_plan()
        if got is None:
            return Doosan.PlanInfo(False, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, [])
        pl, sm = got
        pts = [Doosan.PathPoint(float(sm.t[k]), float(sm.s[k]), float(sm.speed[k]),
                                posx_from_pose(sm.pos[k], rot_from_quat(sm.quat[k])))
               for k in range(len(sm))]
        return Doosan.PlanInfo(True, pl.length, pl.duration, sm.dt, pl.v_peak, pl.a,
                               pl.rotation, pts)

    def getTcpPose(self) -> list:
        return self.core.tcp_pose()

    def stop(self) -> bool:
        return self.core.stop()

    def moveWait(self) -> bool:
        return self.core.move_wait()

    def checkMotion(self) -> int:
        return self.core.check_motion()

    def waitMotion(self, timeout: float) -> int:
        return self.core.wait_motion(timeout)
