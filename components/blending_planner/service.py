"""Doosan::BlendingPlannerService servant. Runs in: ORB threads.

moveBlending validates and plans the request, samples the plan at the component's cycle and
solves the arm's IK along the whole path (worker.prepare_moveb, pure: in the component's
worker process, or in the calling thread with plan_in_worker NO), and only then hands the
finished motion to the EC thread (Component.call). Expected refusals are ``False`` plus a
reason for getLastError (spec PD-0.2: Doosan returns a boolean).

The DRL motions (moveJoint, moveLine, ...) go to motion_service.MotionCore (checked at once,
planned in the planning thread, waited for with waitCommand); the state and math calls to
drl_calls.DrlCalls.
"""

from __future__ import annotations

import math
import threading
import time as _time
from typing import Any, Sequence

from rtcf.corba.idl import stub_module

from . import commands as cm
from .component import Motion
from .drl_calls import DrlCalls
from .geometry import posx_from_pose, rot_from_quat
from .motion_service import FAILED, SSTOP, STOPPED, MotionCore
from .planner import (DR_STATE_BUSY, DR_STATE_IDLE, SYNC, WAIT_DONE, WAIT_FAILED,
                      WAIT_RUNNING, Request)
from .worker import WorkerDied

DR_STATE_INIT = 1            # DSR_ROBOT2: a motion is being calculated
Doosan = stub_module("Doosan")
Doosan__POA = stub_module("Doosan__POA")
CALL_TIMEOUT = 2.0      # [s] an EC command runs at the next cycle
SYNC_MARGIN = 2.0       # [s] beyond the planned duration (x 1.5) before SYNC gives up
STEPPED_WAIT = 60.0     # [s] of wall clock a SYNC call waits for a stepped EC
MAX_WAIT_CHUNK = 60.0   # [s] the longest one waitMotion call may block


class BlendingPlannerCore:
    """The service logic without CORBA types (also used in-process and by the servant)."""

    def __init__(self, comp: Any, motions: MotionCore):
        self.comp = comp
        self.motions = motions
        self._lock = threading.Lock()        # one request planned at a time
        self._not_planning = threading.Event()  # clear while a moveBlending is planned
        self._not_planning.set()
        self._error = ""
        self._error_lock = threading.Lock()
        self._newest: tuple[Motion, float] | None = None    # accepted motion, its deadline
        self.newest_is_moveb = False

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
        self._not_planning.clear()      # waitMotion / mwait / check_motion see it planned
        try:
            motion = self._prepare(Request(segments, int(pos_cnt), list(vel), list(acc),
                                           float(time), int(ref), int(mode), int(sync_type)))
            if not isinstance(motion, str):
                with self._error_lock:
                    self._error = ""
                self._newest = (motion, _time.monotonic() + self._limit(motion))
                self.newest_is_moveb = True
        except TimeoutError:
            motion = (f"{self.comp.instance_name} ran no cycle within {CALL_TIMEOUT} s: is "
                      f"its execution context running?")
        finally:
            self._not_planning.set()
            self._lock.release()
        if isinstance(motion, str):
            return self._refuse(motion)
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
        # a moveBlending still being planned (its caller may have timed out) counts as running
        t0 = _time.monotonic()
        if not self._not_planning.wait(timeout):
            return WAIT_RUNNING
        timeout = max(0.0, timeout - (_time.monotonic() - t0))
        if not self.newest_is_moveb:
            return self._wait_drl(timeout)
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

    def _wait_drl(self, timeout: float) -> int:
        """waitMotion for the DRL motions: until nothing is queued, planned or moving; failed
        when the newest command failed or was stopped."""
        idle, newest = self.motions.wait_idle(timeout)
        if not idle:
            return WAIT_RUNNING
        if newest is not None and newest.state in (FAILED, STOPPED):
            with self._error_lock:
                self._error = newest.reason
            return WAIT_FAILED
        return WAIT_DONE

    def move_wait(self) -> bool:
        """Doosan's mwait: True once no motion runs. Runs in: an ORB thread."""
        while not self._not_planning.wait(MAX_WAIT_CHUNK):     # a moveBlending being planned
            pass
        if not self.newest_is_moveb:
            while True:
                got = self._wait_drl(MAX_WAIT_CHUNK)
                if got != WAIT_RUNNING:
                    return got == WAIT_DONE
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
        """Doosan's check_motion: 0 DR_STATE_IDLE, 1 DR_STATE_INIT (a motion is being
        planned), 2 DR_STATE_BUSY (moving). Runs in: an ORB thread."""
        moving = self._ec_call(lambda: self.comp.stream.busy)
        if moving:
            return DR_STATE_BUSY
        planning = self.motions.pending() or not self._not_planning.is_set()
        return DR_STATE_INIT if planning else DR_STATE_IDLE

    def _prepare(self, req: Request) -> Motion | str:
        comp = self.comp
        busy, p0, r0, q0 = self._ec_call(comp.snapshot)
        if busy:
            return "a motion is already running (Doosan: wait for an amoveb to end)"
        try:
            got = comp.planning.moveb(comp.instance_name, req, p0, r0, q0, comp.frames,
                                      comp.cycle_period(), comp.max_samples, comp.arm)
        except WorkerDied as e:
            return str(e)
        if isinstance(got, str):
            return got
        motion = Motion(*got)
        why = self._ec_call(lambda: comp.start(motion, p0))
        return why or motion

    def stop(self) -> bool:
        """moveb's stop(): every motion decelerates along its path at its own acceleration
        (DR_SSTOP); queued DRL commands are dropped."""
        return self.motions.stop(SSTOP)

    def tcp_pose(self) -> list[float]:
        """The TCP pose the joint reference gives (FK), the planned one without an arm."""
        _, p, r, q = self._ec_call(self.comp.snapshot)
        if q is not None and self.comp.arm is not None:
            p, r = self.comp.arm.tcp_pose(q)
        return posx_from_pose(p, r)

    def last_plan(self) -> tuple | None:
        return self.comp.last_plan


class BlendingPlannerServiceImpl(Doosan__POA.BlendingPlannerService):
    """The CORBA face of BlendingPlannerCore, MotionCore and DrlCalls."""

    def __init__(self, comp: Any):
        self.motions = MotionCore(comp)
        self.core = BlendingPlannerCore(comp, self.motions)
        self.calls = DrlCalls(comp)

    def close(self) -> None:
        self.motions.close()

    # -- DRL motions ---------------------------------------------------------------------------
    def submit(self, cmd: Any) -> int:
        self.core.newest_is_moveb = False
        return self.motions.submit(cmd)

    def moveJoint(self, pos, vel, acc, time, radius, mode, blendType):
        return self.submit(cm.MoveJ(list(pos), _six(vel), _six(acc), time, radius, mode,
                                    blendType))

    def moveLine(self, pos, vel, acc, time, radius, ref, mode, blendType):
        return self.submit(cm.MoveL(list(pos), list(vel), list(acc), time, radius, ref, mode,
                                    blendType))

    def moveJointx(self, pos, vel, acc, time, radius, ref, mode, blendType, sol):
        return self.submit(cm.MoveJX(list(pos), _six(vel), _six(acc), time, radius, ref, mode,
                                     blendType, sol))

    def moveCircle(self, pos1, pos2, vel, acc, time, radius, ref, mode, angle1, angle2,
                   blendType):
        return self.submit(cm.MoveC(list(pos1), list(pos2), list(vel), list(acc), time,
                                    radius, ref, mode, angle1, angle2, blendType))

    def moveSplineJoint(self, pos, vel, acc, time, mode):
        return self.submit(cm.MoveSJ([list(p) for p in pos], _six(vel), _six(acc), time,
                                     mode))

    def moveSplineTask(self, pos, vel, acc, time, ref, mode, velOpt):
        return self.submit(cm.MoveSX([list(p) for p in pos], list(vel), list(acc), time, ref,
                                     mode, velOpt))

    def moveSpiral(self, revolution, maxRadius, maxLength, vel, acc, time, taskAxis, ref):
        return self.submit(cm.MoveSpiral(revolution, maxRadius, maxLength, list(vel),
                                         list(acc), time, taskAxis, ref))

    def movePeriodic(self, amp, period, atime, repeat, ref):
        return self.submit(cm.MovePeriodic(list(amp), list(period), atime, int(repeat), ref))

    def moveHome(self, target):
        return self.submit(cm.MoveHome(target))

    def waitCommand(self, id, until, timeout):
        if not 0.0 <= timeout <= MAX_WAIT_CHUNK:
            return Doosan.CommandStatus(FAILED, cm.DR_ERROR_VALUE,
                                        f"waitCommand: timeout must be 0..{MAX_WAIT_CHUNK:g}"
                                        f" s, got {timeout!r}", "")
        state, etype, reason = self.motions.wait(id, until, timeout)
        note = self.motions.status(id)[3]
        return Doosan.CommandStatus(state, etype, reason, note)

    def stopMotion(self, stopMode):
        if stopMode not in (0, 1, 2, 3):
            return False
        return self.motions.stop(stopMode)

    def changeOperationSpeed(self, speed):
        if not 1 <= speed <= 100:
            return False
        comp = self.core.comp
        comp.call(lambda: comp.stream.set_speed(speed / 100.0, comp.speed_ramp),
                  timeout=CALL_TIMEOUT)
        return True

    def setSingularityHandling(self, mode):
        return self._result(self.calls.singularity_handling(mode))

    # -- state and math --------------------------------------------------------------------------
    @staticmethod
    def _result(answer):
        etype, reason, values = answer
        return Doosan.Result(etype, reason, values)

    def getJoints(self, which):
        return self._result(self.calls.joints(which))

    def getJointVelocity(self, which):
        return self._result(self.calls.joint_velocity(which))

    def getPose(self, which, ref):
        return self._result(self.calls.pose(which, ref))

    def getTaskVelocity(self, which, ref):
        return self._result(self.calls.task_velocity(which, ref))

    def forwardKinematics(self, q, ref):
        return self._result(self.calls.fkin(list(q), ref))

    def inverseKinematics(self, x, solSpace, ref):
        return self._result(self.calls.ikin(list(x), solSpace, ref))

    def transPose(self, pos, delta, ref, refOut):
        return self._result(self.calls.trans(list(pos), list(delta), ref, refOut))

    def solutionSpace(self, q):
        return self._result(self.calls.solution_space(list(q)))

    def coordTransform(self, pos, refIn, refOut):
        return self._result(self.calls.coord_transform(list(pos), refIn, refOut))

    def setUserFrame(self, id, pose, ref):
        return self._result(self.calls.set_user_frame(id, list(pose), ref))

    def getUserFrame(self, id):
        return self._result(self.calls.get_user_frame(id))

    def setTcp(self, name):
        return self._result(self.calls.set_tcp(name))

    def getTcp(self):
        return self.core.comp.tcp_name

    def addTcp(self, name, pos):
        return self._result(self.calls.add_tcp(name, list(pos)))

    def delTcp(self, name):
        return self._result(self.calls.del_tcp(name, ))

    # -- MoveBlending --------------------------------------------------------------------------

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


def _six(values) -> list[float]:
    """A joint speed: one value for every joint, or six."""
    vals = list(values)
    return vals * 6 if len(vals) == 1 else vals
