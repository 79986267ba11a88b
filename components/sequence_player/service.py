"""OpenHRP::SequencePlayerService servant. Runs in: ORB threads.

Commands are handed to the EC thread (Component.call) and applied at the start of the next
cycle, where SequencePlayerCore validates them completely before changing anything; its
PlayerError becomes hrpsys's ``false`` and a log line with the reason. Work that would take
the EC thread's time is done here instead: reading pattern files and computing their
samples (loadPattern), inverse kinematics (setTargetPose). Blocking calls wait on
completions resolved by the EC thread (rtcf.waiters.CycleWaiters): no lock is shared with
the cycle, and they stop waiting when the component stops executing.
"""

from __future__ import annotations

import math
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Callable

import numpy as np
from omniORB import CORBA

from rtcf.corba.idl import stub_module
from rtcf.services import run_or_refuse

from .pattern import PatternError
from .seqplay import PlayerError

OpenHRP = stub_module("OpenHRP")
OpenHRP__POA = stub_module("OpenHRP__POA")
CALL_TIMEOUT = 5.0      # [s] a command is applied at the next cycle
MAX_WAIT_CHUNK = 60.0   # [s] the longest one waitInterpolationFor call may block
WAIT_DONE, WAIT_RUNNING, WAIT_FAILED = 0, 1, -1     # waitInterpolationFor's answers
SPS = OpenHRP.SequencePlayerService


def _rows(seqs: Any) -> list[list[float]]:
    return [list(s) for s in seqs]


class SequencePlayerServiceImpl(OpenHRP__POA.SequencePlayerService):
    def __init__(self, comp: Any):
        self.comp = comp
        self.log = comp.log

    # -- helpers -----------------------------------------------------------------------------
    def apply(self, op: str, fn: Callable[[], Any]) -> bool:
        """Run ``fn`` in the EC thread; False (and the reason logged) if it was refused.
        Runs in: an ORB thread (each operation of this servant; the component's
        setTargetPose too), never the EC thread."""
        if self.comp.debugLevel > 0:
            self.log.info("%s", op)
        comp = self.comp

        def run() -> None:
            comp.read_inputs()          # a command after idle starts from the newest qInit
            fn()
        return run_or_refuse(comp, op, run, (PlayerError, PatternError), CALL_TIMEOUT)[0]

    def _wait(self, op: str, pred: Callable[[], bool],
              timeout: float = math.inf) -> bool | None:
        """Block until ``pred`` holds in the EC thread (rtcf.waiters.CycleWaiters.wait)."""
        return self.comp.waiters.wait(pred, timeout, op=op)

    @property
    def core(self) -> Any:
        return self.comp.core

    # -- blocking ----------------------------------------------------------------------------
    def waitInterpolation(self) -> None:
        if not self._wait("waitInterpolation", self.core.is_empty):
            raise CORBA.BAD_INV_ORDER(0, CORBA.COMPLETED_NO)

    def waitInterpolationOfGroup(self, gname: str) -> bool:
        return self._wait(f"waitInterpolationOfGroup({gname!r})",
                          lambda: self.core.group_is_empty(gname))

    def waitInterpolationFor(self, gname: str, timeout: float) -> int:
        """Runs in: an ORB thread."""
        if not 0.0 <= timeout <= MAX_WAIT_CHUNK:          # NaN fails too
            self.log.warning("waitInterpolationFor refused: timeout must be 0..%g s, got %r",
                             MAX_WAIT_CHUNK, timeout)
            return WAIT_FAILED
        if gname:
            got = self._wait(f"waitInterpolationFor({gname!r})",
                             lambda: self.core.group_is_empty(gname), timeout)
        else:
            got = self._wait("waitInterpolationFor", self.core.is_empty, timeout)
        return WAIT_RUNNING if got is None else WAIT_DONE if got else WAIT_FAILED

    def addJointGroup(self, gname: str, jnames: Any) -> bool:
        op = f"addJointGroup({gname!r})"
        if not self._wait(op, lambda: self.core.group_is_empty(gname)):
            return False
        names = list(jnames)
        return self.apply(op, lambda: self.core.add_joint_group(gname, names))

    def removeJointGroup(self, gname: str) -> bool:
        op = f"removeJointGroup({gname!r})"
        if str(gname).upper() not in self.core.groups:
            self.log.warning("%s refused: unknown joint group", op)
            return False
        if not self._wait(op, lambda: self.core.group_is_empty(gname)):
            return False
        return self.apply(op, lambda: self.core.remove_joint_group(gname))

    # -- joint commands ----------------------------------------------------------------------
    def setJointAngles(self, jvs: Any, tm: float) -> bool:
        jvs = list(jvs)
        return self.apply("setJointAngles", lambda: self.core.set_joint_angles(jvs, tm))

    def setJointAnglesWithMask(self, jvs: Any, mask: Any, tm: float) -> bool:
        jvs, mask = list(jvs), list(mask)
        return self.apply("setJointAnglesWithMask",
                           lambda: self.core.set_joint_angles_with_mask(jvs, mask, tm))

    def setJointAngle(self, jname: str, jv: float, tm: float) -> bool:
        return self.apply(f"setJointAngle({jname!r})",
                           lambda: self.core.set_joint_angle(jname, jv, tm))

    def setJointAnglesSequence(self, jvss: Any, tms: Any) -> bool:
        jvss, tms = _rows(jvss), list(tms)
        return self.apply("setJointAnglesSequence",
                           lambda: self.core.set_joint_angles_sequence(jvss, tms))

    def setJointAnglesSequenceWithMask(self, jvss: Any, mask: Any, tms: Any) -> bool:
        jvss, mask, tms = _rows(jvss), list(mask), list(tms)
        return self.apply("setJointAnglesSequenceWithMask",
                           lambda: self.core.set_joint_angles_sequence(jvss, tms, mask))

    def setJointAnglesSequenceFull(self, jvss, vels, torques, poss, rpys, accs, zmps,
                                   wrenchs, optionals, tms) -> bool:
        args = [_rows(x) for x in (jvss, vels, torques, poss, rpys, accs, zmps, wrenchs,
                                   optionals)] + [list(tms)]
        return self.apply("setJointAnglesSequenceFull",
                           lambda: self.core.set_joint_angles_sequence_full(*args))

    def clearJointAngles(self) -> bool:
        return self.apply("clearJointAngles", self.core.clear_joint_angles)

    # -- other signals -----------------------------------------------------------------------
    def setBasePos(self, pos: Any, tm: float) -> bool:
        pos = list(pos)
        return self.apply("setBasePos", lambda: self.core.set_base_pos(pos, tm))

    def setBaseRpy(self, rpy: Any, tm: float) -> bool:
        rpy = list(rpy)
        return self.apply("setBaseRpy", lambda: self.core.set_base_rpy(rpy, tm))

    def setZmp(self, zmp: Any, tm: float) -> bool:
        zmp = list(zmp)
        return self.apply("setZmp", lambda: self.core.set_zmp(zmp, tm))

    def setWrenches(self, wrenches: Any, tm: float) -> bool:
        w = list(wrenches)
        return self.apply("setWrenches", lambda: self.core.set_wrenches(w, tm))

    # -- queries and modes -------------------------------------------------------------------
    def isEmpty(self) -> bool:
        """Returns at once: reads flags the EC thread sets (commands made before by this
        client were applied when their call returned)."""
        return bool(self.core.is_empty())

    def getReference(self) -> tuple:
        q, p, r, z = self.comp.call(self.core.reference, timeout=CALL_TIMEOUT)
        return q.tolist(), p.tolist(), r.tolist(), z.tolist()

    def setInterpolationMode(self, i_mode_: Any) -> bool:
        try:
            mode = int(i_mode_._v) if hasattr(i_mode_, "_v") else int(i_mode_)
        except (TypeError, ValueError):
            self.log.warning("setInterpolationMode refused: not a mode: %r", i_mode_)
            return False
        return self.apply("setInterpolationMode",
                           lambda: self.core.set_interpolation_mode(mode))

    def setInitialState(self) -> bool:
        return self.apply("setInitialState", self.core.set_initial_state)

    # -- patterns ----------------------------------------------------------------------------
    def loadPattern(self, basename: str, tm: float) -> None:
        try:
            prepared = self.core.prepare_pattern(basename)     # file I/O here, not in the EC
        except (PatternError, PlayerError, ValueError) as e:
            self.log.warning("loadPattern(%r) refused: %s", basename, e)
            return
        if self.apply(f"loadPattern({basename!r})",
                       lambda: self.core.load_pattern(prepared, tm)):
            self.log.info("loadPattern: %s (%d samples after the first record)",
                          ", ".join(prepared.files), prepared.samples)

    def playPattern(self, pos: Any, rpy: Any, zmp: Any, tm: Any) -> None:
        """Validated and planned here from a snapshot of where it starts; the cycle only
        appends (or plans again if the start moved meanwhile)."""
        core = self.core
        try:
            args = core.pattern_args(_rows(pos), _rows(rpy), _rows(zmp), list(tm))
            start = self.comp.call(lambda: (self.comp.read_inputs(), core.pattern_start())[1],
                                   timeout=CALL_TIMEOUT)
            plans = core.plan_pattern(args, start)
        except PlayerError as e:
            self.log.warning("playPattern refused: %s", e)
            return
        except FutureTimeout:
            self.log.error("playPattern: %s ran no cycle within %.1f s",
                           self.comp.instance_name, CALL_TIMEOUT)
            return
        self.apply("playPattern", lambda: core.apply_planned(plans, args))

    def clear(self) -> None:
        self.apply("clear", self.core.clear)

    def clearNoWait(self) -> None:
        self.core.clear_no_wait()       # a flag the next cycle reads: returns at once

    # -- groups ------------------------------------------------------------------------------
    def setJointAnglesOfGroup(self, gname: str, jvs: Any, tm: float) -> bool:
        jvs = list(jvs)
        return self.apply(f"setJointAnglesOfGroup({gname!r})",
                           lambda: self.core.set_joint_angles_of_group(gname, jvs, tm))

    def setJointAnglesSequenceOfGroup(self, gname: str, jvss: Any, tms: Any) -> bool:
        jvss, tms = _rows(jvss), list(tms)
        return self.apply(
            f"setJointAnglesSequenceOfGroup({gname!r})",
            lambda: self.core.set_joint_angles_sequence_of_group(gname, jvss, tms))

    def clearJointAnglesOfGroup(self, gname: str) -> bool:
        return self.apply(f"clearJointAnglesOfGroup({gname!r})",
                           lambda: self.core.clear_joint_angles_of_group(gname))

    def clearOfGroup(self, gname: str, tm: float) -> bool:
        return self.apply(f"clearOfGroup({gname!r})",
                           lambda: self.core.clear_of_group(gname))

    def playPatternOfGroup(self, gname: str, pos: Any, tm: Any) -> bool:
        pos, tm = _rows(pos), list(tm)
        return self.apply(f"playPatternOfGroup({gname!r})",
                           lambda: self.core.play_pattern_of_group(gname, pos, tm))

    # -- setTargetPose -----------------------------------------------------------------------
    def setMaxIKError(self, pos: float, rot: float) -> None:
        if not (pos > 0 and rot > 0 and np.isfinite(pos) and np.isfinite(rot)):
            self.log.warning("setMaxIKError refused: tolerances must be > 0, got %r, %r",
                             pos, rot)
            return
        self.core.max_ik_error = (float(pos), float(rot))

    def setMaxIKIteration(self, max_iteration: int) -> None:
        if max_iteration < 1:
            self.log.warning("setMaxIKIteration refused: expected >= 1, got %r",
                             max_iteration)
            return
        self.core.max_ik_iteration = int(max_iteration)

    def setTargetPose(self, name: str, xyz: Any, rpy: Any, tm: float) -> bool:
        op = f"setTargetPose({name!r})"
        return self.comp.set_target_pose(op, name, list(xyz), list(rpy), tm)
