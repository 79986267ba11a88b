"""OpenHRP::AutoBalancerService servant. Runs in: ORB threads.

Every call is validated here as far as it can be without the component's state, then handed
to the EC thread (Component.call), where AutoBalancerCore validates the rest completely
before changing anything; a refusal (BalancerError) becomes hrpsys's ``false`` and a log line
with the reason. Blocking calls (waitFootSteps, goStop, startAutoBalancer's transition) wait
on completions the EC thread resolves (rtcf.waiters.CycleWaiters): no lock is shared with
the cycle, and they stop waiting when the component stops executing.
"""

from __future__ import annotations

import math
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import replace
from typing import Any, Callable

from rtcf.corba.idl import stub_module
from rtcf.services import run_or_refuse
from rtcf.validate import same_value

from .core import ABC, IDLE, SYNC_TO_ABC, SYNC_TO_IDLE, BalancerConfig, BalancerError
from .footsteps import Footstep, FootstepError, Pose2, StrideLimits, wrap
from .gait import GaitError, GaitParams

OpenHRP = stub_module("OpenHRP")
OpenHRP__POA = stub_module("OpenHRP__POA")
ABS = OpenHRP.AutoBalancerService
CALL_TIMEOUT = 5.0      # [s] a command is applied at the next cycle
MAX_WAIT_CHUNK = 60.0   # [s] waitFootStepsFor's longest wait
WAIT_DONE, WAIT_RUNNING, WAIT_FAILED = 0, 1, -1
LIMBS = {"rleg", "lleg", "rarm", "larm"}


def yaw_of(rot) -> tuple[float, float]:
    """(yaw, tilt) of a quaternion (w, x, y, z): the heading, and how far its z axis is from
    vertical [rad]. Raises ValueError for a non-finite or zero quaternion."""
    w, x, y, z = (float(v) for v in rot)
    n = math.sqrt(w * w + x * x + y * y + z * z)
    if not math.isfinite(n) or n < 1e-9:
        raise ValueError(f"rot: expected a unit quaternion (w, x, y, z), got {list(rot)!r}")
    w, x, y, z = w / n, x / n, y / n, z / n
    zz = 1.0 - 2.0 * (x * x + y * y)             # the z axis' vertical component
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z)), \
        math.acos(max(-1.0, min(1.0, zz)))


def reason(op: str, e: BaseException) -> str:
    """The refusal's message without a leading "op: " (the log line names op already)."""
    text = str(e)
    for head in (f"{op}: ", f"{op.split('(')[0]}: "):
        if text.startswith(head):
            return text[len(head):]
    return text


def quat_of(yaw: float) -> list[float]:
    return [math.cos(yaw / 2.0), 0.0, 0.0, math.sin(yaw / 2.0)]


def footstep_struct(leg: str, p: Pose2, z: float = 0.0) -> Any:
    return ABS.Footstep([p.x, p.y, z], quat_of(p.theta), leg)


class AutoBalancerServiceImpl(OpenHRP__POA.AutoBalancerService):
    def __init__(self, comp: Any):
        self.comp = comp
        self.log = comp.log

    # -- helpers -----------------------------------------------------------------------------
    def _apply(self, op: str, fn: Callable[[], Any]) -> Any:
        """``fn`` in the EC thread; its result, or False (reason logged) when refused."""
        ok, got = run_or_refuse(self.comp, op, fn,
                                (BalancerError, FootstepError, GaitError, ValueError),
                                CALL_TIMEOUT, why=lambda e: reason(op, e))
        return got if ok else False

    def _core(self, op: str):
        core = self.comp.core
        if core is None:
            raise BalancerError(f"{op}: {self.comp.instance_name} is not active")
        return core

    def _wait(self, op: str, pred: Callable[[], bool], timeout: float = math.inf) -> bool | None:
        """Block until ``pred`` holds in the EC thread (rtcf.waiters.CycleWaiters.wait)."""
        return self.comp.waiters.wait(pred, timeout, op=op)

    def _finite(self, op: str, **kw: Any) -> bool:
        """True when every argument is a finite number; else False, the refusal logged."""
        for k, v in kw.items():
            if not isinstance(v, (int, float)) or not math.isfinite(v):
                self.log.warning("%s refused: %s: expected a finite number, got %r", op, k, v)
                return False
        return True

    # -- walking -----------------------------------------------------------------------------
    def goPos(self, x: float, y: float, th: float) -> bool:
        op = "goPos"
        if not self._finite(op, x=x, y=y, th=th):
            return False
        ok = self._apply(op, lambda: self._core(op).go_pos(x, y, math.radians(th)))
        return ok is not False

    def goVelocity(self, vx: float, vy: float, vth: float) -> bool:
        op = "goVelocity"
        if not self._finite(op, vx=vx, vy=vy, vth=vth):
            return False
        return self._apply(op, lambda: (self._core(op).go_velocity(vx, vy, math.radians(vth)),
                                        True)[1])

    def goStop(self) -> bool:
        if not self._apply("goStop", lambda: (self._core("goStop").go_stop(), True)[1]):
            return False
        return bool(self._wait("goStop", self.comp.settled))

    def emergencyStop(self) -> bool:
        return self.goStop()

    def releaseEmergencyStop(self) -> bool:
        return True

    def _steps(self, op: str, fss: Any, spss: Any | None) -> list[Footstep]:
        """The footsteps of an hrpsys FootstepsSequence as planar steps (the first one the
        support foot); BalancerError names the bad entry."""
        core = self.comp.core
        steps = []
        params = core.params if core is not None else GaitParams()
        if spss is not None and len(spss) != len(fss):
            raise BalancerError(f"{op}: {len(spss)} step parameter sets for {len(fss)} "
                                f"footsteps")
        z0 = None
        for i, f in enumerate(fss):
            if len(f.fs) != 1:
                raise BalancerError(f"{op}: footstep {i}: a biped moves one foot per step, "
                                    f"got {len(f.fs)} feet")
            s = f.fs[0]
            leg = str(s.leg)
            if leg not in ("rleg", "lleg"):
                raise BalancerError(f"{op}: footstep {i}: leg {leg!r}: expected 'rleg' or "
                                    f"'lleg'")
            pos = [float(v) for v in s.pos]
            if not all(math.isfinite(v) for v in pos):
                raise BalancerError(f"{op}: footstep {i}: pos {pos!r}: expected finite numbers")
            try:
                yaw, tilt = yaw_of(s.rot)
            except ValueError as e:
                raise BalancerError(f"{op}: footstep {i}: {e}") from None
            if tilt > 0.01:
                raise BalancerError(f"{op}: footstep {i}: the sole is tilted {tilt:.3f} rad: "
                                    f"only flat ground is supported")
            z0 = pos[2] if z0 is None else z0
            if abs(pos[2] - z0) > 0.005:
                raise BalancerError(f"{op}: footstep {i}: z {pos[2]:g} m differs from the "
                                    f"first footstep's {z0:g} m: only flat ground is supported")
            time_, height = params.step_time, params.step_height
            if spss is not None:
                if len(spss[i].sps) != 1:
                    raise BalancerError(f"{op}: step parameters {i}: expected one, got "
                                        f"{len(spss[i].sps)}")
                sp = spss[i].sps[0]
                time_, height = float(sp.step_time), float(sp.step_height)
                if not (math.isfinite(time_) and 0.1 <= time_ <= 5.0):
                    raise BalancerError(f"{op}: step parameters {i}: step_time {time_!r}: "
                                        f"expected 0.1 .. 5 s")
                if not (math.isfinite(height) and 0.0 <= height <= 0.1):
                    raise BalancerError(f"{op}: step parameters {i}: step_height {height!r}: "
                                        f"expected 0 .. 0.1 m")
                if sp.toe_angle != 0.0 or sp.heel_angle != 0.0:
                    raise BalancerError(f"{op}: step parameters {i}: toe / heel angles are not "
                                        f"supported (got {sp.toe_angle}, {sp.heel_angle})")
            steps.append(Footstep(leg, Pose2(pos[0], pos[1], yaw), time_, height))
        return steps

    def setFootSteps(self, fss: Any, overwrite_fs_idx: int) -> bool:
        return self._set_footsteps("setFootSteps", fss, None)

    def setFootStepsWithParam(self, fss: Any, spss: Any, overwrite_fs_idx: int) -> bool:
        return self._set_footsteps("setFootStepsWithParam", fss, spss)

    def _set_footsteps(self, op: str, fss: Any, spss: Any) -> bool:
        try:
            steps = self._steps(op, fss, spss)
        except BalancerError as e:
            self.log.warning("%s refused: %s", op, reason(op, e))
            return False
        return self._apply(op, lambda: (self._core(op).set_footsteps(steps), True)[1])

    def waitFootSteps(self) -> None:
        self._wait("waitFootSteps", self.comp.settled)

    def waitFootStepsEarly(self, tm: float) -> None:
        if not (isinstance(tm, (int, float)) and math.isfinite(tm) and tm >= 0.0):
            self.log.warning("waitFootStepsEarly refused: tm %r: expected >= 0 s", tm)
            return
        comp = self.comp

        def early() -> bool:
            core = comp.core
            return core is None or core.gait is None or not core.walking or \
                core.gait.time_left() <= tm
        self._wait("waitFootStepsEarly", early)

    def waitFootStepsFor(self, timeout: float) -> int:
        if not (isinstance(timeout, (int, float)) and 0.0 <= timeout <= MAX_WAIT_CHUNK):
            self.log.warning("waitFootStepsFor refused: timeout must be 0..%g s, got %r",
                             MAX_WAIT_CHUNK, timeout)
            return WAIT_FAILED
        got = self._wait("waitFootStepsFor", self.comp.settled, timeout)
        return WAIT_RUNNING if got is None else WAIT_DONE if got else WAIT_FAILED

    # -- modes -------------------------------------------------------------------------------
    def startAutoBalancer(self, limbs: Any) -> bool:
        op = "startAutoBalancer"
        names = [str(x) for x in limbs]
        unknown = [x for x in names if x not in LIMBS]
        if unknown or "rleg" not in names or "lleg" not in names:
            self.log.warning("%s refused: limbs %r: expected rleg and lleg (rarm, larm may "
                             "be named: the arms follow qRef)", op, names)
            return False
        comp = self.comp

        def start() -> bool:
            core = self._core(op)
            if not comp.have_ref:
                raise BalancerError("no joint reference yet (connect qRef or qInit)")
            core.start(comp.q_ref)
            return True
        if not self._apply(op, start):
            return False
        return bool(self._wait(op, comp.settled))

    def stopAutoBalancer(self) -> bool:
        op = "stopAutoBalancer"
        if not self._apply(op, lambda: (self._core(op).stop(), True)[1]):
            return False
        return bool(self._wait(op, self.comp.settled))

    # -- parameters --------------------------------------------------------------------------
    def getGaitGeneratorParam(self) -> tuple:
        def read():
            core = self.comp.core
            return (core.params, core.limits, core.cfg.gravity) if core is not None else \
                (self.comp.params_, self.comp.limits, self.comp.gravity)
        try:
            params, limits, g = self.comp.call(read, timeout=CALL_TIMEOUT)
        except FutureTimeout:
            params, limits, g = self.comp.params_, self.comp.limits, self.comp.gravity
        return True, gait_param_struct(params, limits, g)

    def setGaitGeneratorParam(self, i_param: Any) -> bool:
        op = "setGaitGeneratorParam"
        comp = self.comp
        try:
            core = comp.core
            cur_p = core.params if core is not None else comp.params_
            cur_l = core.limits if core is not None else comp.limits
            cur_g = core.cfg.gravity if core is not None else comp.gravity
            params, limits, g = params_from_struct(i_param, cur_p, cur_l, cur_g)
        except (BalancerError, FootstepError, GaitError) as e:
            self.log.warning("%s refused: %s", op, reason(op, e))
            return False

        def apply() -> bool:
            comp.params_, comp.limits = params, limits
            comp.cfg_over["gravity"] = g
            if comp.core is not None:
                comp.core.set_params(params, limits)
                comp.core.cfg = replace(comp.core.cfg, gravity=g)
            return True
        return self._apply(op, apply)

    def getAutoBalancerParam(self) -> tuple:
        comp = self.comp

        def read():
            core = comp.core
            if core is None:
                cfg = BalancerConfig(**{"transition_time": comp.transition_time,
                                        **comp.cfg_over})
                return comp.params_, cfg, IDLE, 0
            return core.params, core.cfg, core.mode, core.ik_failures
        try:
            params, cfg, mode, failures = comp.call(read, timeout=CALL_TIMEOUT)
        except FutureTimeout:
            params, cfg, mode, failures = comp.params_, BalancerConfig(
                **{"transition_time": comp.transition_time, **comp.cfg_over}), IDLE, 0
        return True, abc_param_struct(params, cfg, mode, failures, comp.move_base_gain)

    def setAutoBalancerParam(self, i_param: Any) -> bool:
        op = "setAutoBalancerParam"
        comp = self.comp
        try:
            core = comp.core
            params = core.params if core is not None else comp.params_
            new_params, over, gain = abc_from_struct(i_param, params)
        except (BalancerError, GaitError) as e:
            self.log.warning("%s refused: %s", op, reason(op, e))
            return False

        def apply() -> bool:
            comp.params_ = replace(comp.params_, zmp_offset_x=new_params.zmp_offset_x,
                                   zmp_offset_y=new_params.zmp_offset_y)
            comp.cfg_over.update(over)
            comp.move_base_gain = gain
            if comp.core is not None:
                core = comp.core
                core.set_params(replace(core.params, zmp_offset_x=new_params.zmp_offset_x,
                                        zmp_offset_y=new_params.zmp_offset_y), core.limits)
                core.cfg = replace(core.cfg, **over)
            return True
        return self._apply(op, apply)

    # -- views -------------------------------------------------------------------------------
    def getFootstepParam(self) -> tuple:
        def read():
            core = self.comp.core
            if core is None or core.gait is None:
                return None
            gg = core.gait
            return (dict(gg.feet), dict(gg.foot_z), dict(gg.contact), gg.current_step())
        got = self._apply("getFootstepParam", read)
        if not got:
            empty = footstep_struct("rleg", Pose2())
            return False, ABS.FootstepParam(empty, empty, empty, empty, empty, ABS.BOTH,
                                            ABS.BOTH)
        feet, fz, contact, cur = got
        if cur is None:
            sup_leg, swing_leg = "rleg", "lleg"
            src = dst = feet[swing_leg]
        else:
            swing_leg = cur[0].leg
            sup_leg = "rleg" if swing_leg == "lleg" else "lleg"
            src, dst = cur[1], cur[0].pose
        sup = footstep_struct(sup_leg, feet[sup_leg])
        mid = Pose2(0.5 * (feet[sup_leg].x + dst.x), 0.5 * (feet[sup_leg].y + dst.y),
                    wrap(feet[sup_leg].theta + 0.5 * wrap(dst.theta - feet[sup_leg].theta)))
        both = contact["lleg"] and contact["rleg"]
        state = ABS.RLEG if sup_leg == "rleg" else ABS.LLEG
        return True, ABS.FootstepParam(
            sup, footstep_struct(swing_leg, feet[swing_leg], fz[swing_leg]),
            footstep_struct(swing_leg, src), footstep_struct(swing_leg, dst),
            footstep_struct("", mid), state, ABS.BOTH if both else state)

    def getRemainingFootstepSequence(self) -> tuple:
        def read():
            core = self.comp.core
            if core is None or core.gait is None:
                return None
            gg = core.gait
            return gg.remaining(), dict(gg.feet), gg.done_index
        got = self._apply("getRemainingFootstepSequence", read)
        if not got:
            return False, [], 0
        steps, feet, done = got
        # hrpsys: with the support foot step X-1, the steps X, X+1, ... and X
        return True, [footstep_struct(s.leg, s.pose) for s in steps], int(done) + 1

    def getGoPosFootstepsSequence(self, x: float, y: float, th: float) -> tuple:
        op = "getGoPosFootstepsSequence"

        def plan():
            core = self._core(op)
            steps = core.plan_go_pos(x, y, math.radians(th))
            feet = core.gait.planned_feet
            return steps, feet
        if not self._finite(op, x=x, y=y, th=th):
            return False, []
        got = self._apply(op, plan)
        if not got:
            return False, []
        steps, feet = got
        out = []
        if steps:
            sup = "rleg" if steps[0].leg == "lleg" else "lleg"
            out.append(ABS.Footsteps([footstep_struct(sup, feet[sup])]))
        out += [ABS.Footsteps([footstep_struct(s.leg, s.pose)]) for s in steps]
        return True, out


# -- GaitGeneratorParam <-> this gait generator's parameters ----------------------------------

def _fixed(params: GaitParams, limits: StrideLimits) -> dict:
    """The members this gait generator does not change: their reported values."""
    r = params.double_support_ratio
    return {
        "default_double_support_ratio_before": r / 2.0,
        "default_double_support_ratio_after": r / 2.0,
        "default_double_support_static_ratio": 0.0,
        "default_double_support_static_ratio_before": 0.0,
        "default_double_support_static_ratio_after": 0.0,
        "default_double_support_ratio_swing_before": r / 2.0,
        "default_double_support_ratio_swing_after": r / 2.0,
        "stride_limitation_for_circle_type": [limits.forward, limits.outside,
                                              math.degrees(limits.outside_theta),
                                              limits.backward, limits.inside],
        "default_orbit_type": ABS.CYCLOID,
        "swing_trajectory_delay_time_offset": 0.0,
        "swing_trajectory_final_distance_weight": 1.0,
        "stair_trajectory_way_point_offset": [0.0, 0.0, 0.0],
        "cycloid_delay_kick_point_offset": [0.0, 0.0, 0.0],
        "swing_trajectory_time_offset_xy2z": 0.0,
        "toe_pos_offset_x": 0.0, "heel_pos_offset_x": 0.0,
        "toe_zmp_offset_x": 0.0, "heel_zmp_offset_x": 0.0,
        "toe_angle": 0.0, "heel_angle": 0.0, "toe_check_thre": 0.0, "heel_check_thre": 0.0,
        "toe_heel_phase_ratio": [],
        "use_toe_joint": False, "use_toe_heel_transition": False,
        "use_toe_heel_auto_set": False,
        "zmp_weight_map": [1.0, 1.0, 0.0, 0.0],
        "optional_go_pos_finalize_footstep_num": 0,
        "overwritable_footstep_index_offset": 1,
        "overwritable_stride_limitation": [limits.forward, limits.outside,
                                           math.degrees(limits.outside_theta),
                                           limits.backward, limits.inside],
        "use_stride_limitation": True,
        "stride_limitation_type": ABS.SQUARE,
        "leg_margin": [0.0, 0.0, 0.0, 0.0],
        "footstep_modification_gain": 0.0,
        "modify_footsteps": False,
        "cp_check_margin": [0.0, 0.0],
        "margin_time_ratio": 0.0,
    }


FIELDS = [n for n, _ in (
    ("default_step_time", 0), ("default_step_height", 0), ("default_double_support_ratio", 0),
    ("default_double_support_ratio_before", 0), ("default_double_support_ratio_after", 0),
    ("default_double_support_static_ratio", 0),
    ("default_double_support_static_ratio_before", 0),
    ("default_double_support_static_ratio_after", 0),
    ("default_double_support_ratio_swing_before", 0),
    ("default_double_support_ratio_swing_after", 0), ("stride_parameter", 0),
    ("stride_limitation_for_circle_type", 0), ("default_orbit_type", 0),
    ("swing_trajectory_delay_time_offset", 0), ("swing_trajectory_final_distance_weight", 0),
    ("stair_trajectory_way_point_offset", 0), ("cycloid_delay_kick_point_offset", 0),
    ("swing_trajectory_time_offset_xy2z", 0), ("gravitational_acceleration", 0),
    ("toe_pos_offset_x", 0), ("heel_pos_offset_x", 0), ("toe_zmp_offset_x", 0),
    ("heel_zmp_offset_x", 0), ("toe_angle", 0), ("heel_angle", 0), ("toe_check_thre", 0),
    ("heel_check_thre", 0), ("toe_heel_phase_ratio", 0), ("use_toe_joint", 0),
    ("use_toe_heel_transition", 0), ("use_toe_heel_auto_set", 0), ("zmp_weight_map", 0),
    ("leg_default_translate_pos", 0), ("optional_go_pos_finalize_footstep_num", 0),
    ("overwritable_footstep_index_offset", 0), ("overwritable_stride_limitation", 0),
    ("use_stride_limitation", 0), ("stride_limitation_type", 0), ("leg_margin", 0),
    ("footstep_modification_gain", 0), ("modify_footsteps", 0), ("cp_check_margin", 0),
    ("margin_time_ratio", 0))]


def gait_param_struct(params: GaitParams, limits: StrideLimits, gravity: float) -> Any:
    values = _fixed(params, limits)
    values.update({
        "default_step_time": params.step_time,
        "default_step_height": params.step_height,
        "default_double_support_ratio": params.double_support_ratio,
        "stride_parameter": limits.as_hrpsys(),
        "gravitational_acceleration": gravity,
        "leg_default_translate_pos": [[0.0, -limits.half_width, 0.0],
                                      [0.0, limits.half_width, 0.0]],
    })
    return ABS.GaitGeneratorParam(*[values[f] for f in FIELDS])


def params_from_struct(s: Any, params: GaitParams, limits: StrideLimits,
                       gravity: float) -> tuple:
    """(GaitParams, StrideLimits, gravity) from a GaitGeneratorParam, or BalancerError
    naming a member that is out of range or that this gait generator cannot change."""
    fixed = _fixed(params, limits)
    for name, want in fixed.items():
        if name.startswith(("default_double_support_ratio_", "stride_limitation_for",
                            "overwritable_stride")):
            continue                                 # derived from members that do change
        got = getattr(s, name)
        if not same_value(got, want):
            raise BalancerError(f"{name} = {got!r}: this gait generator keeps {want!r} "
                                f"(see idl/AutoBalancerService.idl)")
    sp = [float(v) for v in s.stride_parameter]
    if len(sp) != 6 or not all(math.isfinite(v) for v in sp):
        raise BalancerError(f"stride_parameter: expected 6 finite numbers, got {sp!r}")
    translate = [[float(v) for v in p] for p in s.leg_default_translate_pos]
    if len(translate) != 2 or any(len(p) != 3 for p in translate):
        raise BalancerError(f"leg_default_translate_pos: expected [rleg xyz, lleg xyz], got "
                            f"{translate!r}")
    (rx, ry, rz), (lx, ly, lz) = translate
    if abs(rx) > 1e-9 or abs(lx) > 1e-9 or abs(rz) > 1e-9 or abs(lz) > 1e-9 or \
            abs(ry + ly) > 1e-9 or ly <= 0.0:
        raise BalancerError(f"leg_default_translate_pos {translate!r}: expected [0, -w, 0], "
                            f"[0, w, 0] (a symmetric stance)")
    g = float(s.gravitational_acceleration)
    if not (math.isfinite(g) and 1.0 <= g <= 100.0):
        raise BalancerError(f"gravitational_acceleration: expected 1 .. 100 m/s^2, got {g!r}")
    for k, v, lo, hi in (("default_step_time", s.default_step_time, 0.1, 5.0),
                         ("default_step_height", s.default_step_height, 0.0, 0.1)):
        if not (math.isfinite(v) and lo <= v <= hi):
            raise BalancerError(f"{k}: expected {lo:g} .. {hi:g}, got {v!r}")
    try:
        new_limits = StrideLimits(sp[0], sp[1], math.radians(sp[2]), sp[3], sp[4],
                                  math.radians(sp[5]), ly)
    except FootstepError as e:
        raise BalancerError(f"stride_parameter: {e}") from None
    new_params = GaitParams(**{**params.__dict__,
                               "step_time": float(s.default_step_time),
                               "step_height": float(s.default_step_height),
                               "double_support_ratio": float(s.default_double_support_ratio)})
    try:
        new_params.check()
    except GaitError as e:
        raise BalancerError(str(e)) from None
    return new_params, new_limits, g


# -- AutoBalancerParam <-> this balancer's parameters -----------------------------------------

ABC_FIELDS = ["default_zmp_offsets", "move_base_gain", "controller_mode", "use_force_mode",
              "graspless_manip_mode", "graspless_manip_arm", "graspless_manip_p_gain",
              "graspless_manip_reference_trans_pos", "graspless_manip_reference_trans_rot",
              "transition_time", "zmp_transition_time", "adjust_footstep_transition_time",
              "leg_names", "has_ik_failed", "pos_ik_thre", "rot_ik_thre", "is_hand_fix_mode",
              "end_effector_list", "default_gait_type", "ik_limb_parameters",
              "use_limb_stretch_avoidance", "limb_stretch_avoidance_time_const",
              "limb_stretch_avoidance_vlimit", "limb_length_margin",
              "additional_force_applied_link_name", "additional_force_applied_point_offset"]
MODES = {IDLE: "MODE_IDLE", ABC: "MODE_ABC", SYNC_TO_IDLE: "MODE_SYNC_TO_IDLE",
         SYNC_TO_ABC: "MODE_SYNC_TO_ABC"}


def _abc_fixed() -> dict:
    """The members this balancer does not change: their reported values (hrpsys's defaults
    where the feature is absent here: AutoBalancer.cpp, its fullbody IK's)."""
    return {
        "use_force_mode": ABS.MODE_NO_FORCE,
        "graspless_manip_mode": False,
        "graspless_manip_arm": "arms",
        "graspless_manip_p_gain": [0.0, 0.0, 0.0],
        "graspless_manip_reference_trans_pos": [0.0, 0.0, 0.0],
        "graspless_manip_reference_trans_rot": [1.0, 0.0, 0.0, 0.0],
        "zmp_transition_time": 0.0,
        "adjust_footstep_transition_time": 0.0,
        "leg_names": ["rleg", "lleg"],
        "is_hand_fix_mode": False,
        "end_effector_list": [ABS.Footstep([0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], "lleg"),
                              ABS.Footstep([0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], "rleg")],
        "default_gait_type": ABS.BIPED,
        "ik_limb_parameters": [],
        "use_limb_stretch_avoidance": False,
        "limb_stretch_avoidance_time_const": 1.5,
        "limb_stretch_avoidance_vlimit": [-1000e-3 * 0.01, 50e-3 * 0.01],   # at 100 Hz
        "limb_length_margin": [],
        "additional_force_applied_link_name": "torso",
        "additional_force_applied_point_offset": [0.0, 0.0, 0.0],
    }


def abc_param_struct(params: GaitParams, cfg: BalancerConfig, mode: str, ik_failures: int,
                     move_base_gain: float) -> Any:
    values = _abc_fixed()
    ox, oy = params.zmp_offset_x, params.zmp_offset_y
    values.update({
        "default_zmp_offsets": [[ox, oy, 0.0], [ox, -oy, 0.0]],
        "move_base_gain": move_base_gain,
        "controller_mode": getattr(ABS, MODES[mode]),
        "transition_time": cfg.transition_time,
        "has_ik_failed": ik_failures > 0,
        "pos_ik_thre": cfg.ik_pos_tol,
        "rot_ik_thre": cfg.ik_rot_tol,
    })
    return ABS.AutoBalancerParam(*[values[f] for f in ABC_FIELDS])


def _footstep_key(f: Any) -> tuple:
    return (str(f.leg), [float(v) for v in f.pos], [float(v) for v in f.rot])


def abc_from_struct(s: Any, params: GaitParams) -> tuple:
    """(GaitParams with the ZMP offsets, BalancerConfig changes, move_base_gain) from an
    AutoBalancerParam, or BalancerError naming the member that is out of range or that this
    balancer cannot change."""
    for name, want in _abc_fixed().items():
        got = getattr(s, name)
        if name == "end_effector_list":
            same = sorted(_footstep_key(f) for f in got) == \
                sorted(_footstep_key(f) for f in want)
        elif name == "leg_names":
            same = sorted(str(x) for x in got) == sorted(want)
        elif name == "ik_limb_parameters":
            same = len(got) == 0
        else:
            same = same_value(got, want)
        if not same:
            raise BalancerError(f"{name} = {got!r}: this balancer keeps {want!r} "
                                f"(see idl/AutoBalancerService.idl)")
    offs = [[float(v) for v in p] for p in s.default_zmp_offsets]
    if len(offs) < 2 or any(len(p) != 3 or not all(math.isfinite(v) for v in p)
                            for p in offs):
        raise BalancerError(f"default_zmp_offsets: expected [rleg xyz, lleg xyz] of finite "
                            f"numbers, got {offs!r}")
    if any(v != 0.0 for p in offs[2:] for v in p):
        raise BalancerError(f"default_zmp_offsets {offs!r}: entries after rleg and lleg (the "
                            f"arms) must be 0: the arms carry no weight here")
    (rx, ry, rz), (lx, ly, lz) = offs[0], offs[1]
    if abs(rx - lx) > 1e-9 or abs(ry + ly) > 1e-9 or rz != 0.0 or lz != 0.0:
        raise BalancerError(f"default_zmp_offsets {offs[:2]!r}: expected [x, y, 0], "
                            f"[x, -y, 0] (the same point of each sole, mirrored)")
    new_params = replace(params, zmp_offset_x=rx, zmp_offset_y=ry)
    new_params.check()
    checks = (("move_base_gain", s.move_base_gain, 1e-6, 1.0),
              ("transition_time", s.transition_time, 0.05, 10.0),
              ("pos_ik_thre", s.pos_ik_thre, 1e-6, 0.1),
              ("rot_ik_thre", s.rot_ik_thre, 1e-6, 1.0))
    for k, v, lo, hi in checks:
        if not (math.isfinite(v) and lo <= v <= hi):
            raise BalancerError(f"{k}: expected {lo:g} .. {hi:g}, got {v!r}")
    over = {"transition_time": float(s.transition_time), "ik_pos_tol": float(s.pos_ik_thre),
            "ik_rot_tol": float(s.rot_ik_thre)}
    return new_params, over, float(s.move_base_gain)
