"""OpenHRP::StabilizerService servant. Runs in: ORB threads.

start / stop / setParameter are handed to the EC thread (Component.call); start and stop
then wait for the transition on a completion the EC thread resolves. hrpsys's interface has
no result for them: a refusal is logged with its reason and changes nothing.
"""

from __future__ import annotations

import math
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import replace
from typing import Any, Callable

from rtcf.corba.idl import stub_module
from rtcf.services import run_or_refuse
from rtcf.validate import same_value

from .core import IDLE, ST, StabilizerError, StabilizerParams

OpenHRP = stub_module("OpenHRP")
OpenHRP__POA = stub_module("OpenHRP__POA")
SS = OpenHRP.StabilizerService
CALL_TIMEOUT = 5.0
MODES = {"MODE_IDLE": SS.MODE_IDLE, "MODE_ST": SS.MODE_ST,
         "MODE_SYNC_TO_IDLE": SS.MODE_SYNC_TO_IDLE, "MODE_SYNC_TO_ST": SS.MODE_ST}


class StabilizerServiceImpl(OpenHRP__POA.StabilizerService):
    def __init__(self, comp: Any):
        self.comp = comp
        self.log = comp.log

    def _apply(self, op: str, fn: Callable[[], Any]) -> bool:
        """``fn`` in the EC thread; False (reason logged) when refused."""
        return run_or_refuse(self.comp, op, fn, (StabilizerError, ValueError), CALL_TIMEOUT)[0]

    def _wait_settled(self, op: str) -> None:
        """Until the transition just started is over (or the stabilizer stops executing);
        not at all when it does not execute now."""
        if self.comp.waiters.executing():
            self.comp.waiters.wait(self.comp.settled, op=op)

    def _core(self):
        if self.comp.core is None:
            raise StabilizerError(f"{self.comp.instance_name} is not active")
        return self.comp.core

    def startStabilizer(self) -> None:
        def start():
            core = self._core()
            if core.mode in (ST, "MODE_SYNC_TO_ST"):
                return
            core.start()
        if self._apply("startStabilizer", start):
            self._wait_settled("startStabilizer")

    def stopStabilizer(self) -> None:
        def stop():
            core = self._core()
            if core.mode in (IDLE, "MODE_SYNC_TO_IDLE"):
                return
            core.stop()
        if self._apply("stopStabilizer", stop):
            self._wait_settled("stopStabilizer")

    def dummy(self) -> bool:
        return True

    def getParameter(self) -> Any:
        comp = self.comp

        def read():
            core = comp.core
            if core is None:
                return comp.st_params, "MODE_IDLE", (0.0, 0.0), (0.0, 0.0), 0.27
            return (core.params, core.mode, tuple(core.ref_cp), tuple(core.act_cp), core.zc)
        try:
            got = comp.call(read, timeout=CALL_TIMEOUT)
        except FutureTimeout:
            got = (comp.st_params, "MODE_IDLE", (0.0, 0.0), (0.0, 0.0), 0.27)
        return st_param_struct(*got)

    def setParameter(self, i_param: Any) -> None:
        op = "setParameter"
        comp = self.comp
        try:
            core = comp.core
            cur = core.params if core is not None else comp.st_params
            zc = core.zc if core is not None else 0.27
            mode = core.mode if core is not None else "MODE_IDLE"
            params = params_from_struct(i_param, cur, mode, zc)
        except StabilizerError as e:
            self.log.warning("%s refused: %s", op, e)
            return

        def apply():
            comp.st_params = params
            if comp.core is not None:
                comp.core.set_params(params)
        self._apply(op, apply)


# -- stParam <-> StabilizerParams ---------------------------------------------------------

def _omega(p: StabilizerParams, zc: float) -> float:
    return math.sqrt(p.gravity / max(zc, 0.05))


def _values(p: StabilizerParams, mode: str, ref_cp, act_cp, zc: float) -> dict:
    """Every stParam member as this controller reports it."""
    w = _omega(p, zc)
    k1 = -(1.0 + p.cp_gain / w)
    legs = 2
    return {
        "k_tpcc_p": [0.0, 0.0], "k_tpcc_x": [0.0, 0.0], "k_brot_p": [0.0, 0.0],
        "k_brot_tc": [1.0, 1.0],
        "eefm_k1": [k1, k1], "eefm_k2": [k1 / w, k1 / w], "eefm_k3": [0.0, 0.0],
        "eefm_zmp_delay_time_const": [0.0, 0.0], "eefm_ref_zmp_aux": [0.0, 0.0],
        "eefm_rot_damping_gain": [[p.damping[0], p.damping[1], 1e5]] * legs,
        "eefm_rot_time_const": [[p.damping_time] * 3] * legs,
        "eefm_pos_damping_gain": [[1e5, 1e5, 1.0 / p.force_gain if p.force_gain > 0 else 1e9]]
        * legs,
        "eefm_pos_time_const_support": [[p.force_time] * 3] * legs,
        "eefm_pos_compensation_limit": [p.z_limit] * legs,
        "eefm_rot_compensation_limit": [p.rot_limit] * legs,
        "eefm_pos_time_const_swing": p.swing_time,
        "eefm_pos_transition_time": 0.0, "eefm_pos_margin_time": 0.0,
        "eefm_leg_inside_margin": 0.0, "eefm_leg_outside_margin": 0.0,
        "eefm_leg_front_margin": 0.0, "eefm_leg_rear_margin": 0.0,
        "eefm_body_attitude_control_gain": list(p.body_gain),
        "eefm_body_attitude_control_time_const": [p.body_time, p.body_time],
        "eefm_cogvel_cutoff_freq": p.cog_cutoff,
        "eefm_wrench_alpha_blending": 1.0, "eefm_alpha_cutoff_freq": 0.0,
        "eefm_gravitational_acceleration": p.gravity,
        "eefm_ee_pos_error_p_gain": 0.0, "eefm_ee_rot_error_p_gain": 0.0,
        "eefm_ee_error_cutoff_freq": 0.0,
        "eefm_support_polygon_vertices_sequence": [],
        "eefm_use_force_difference_control": p.force_gain > 0.0,
        "st_algorithm": SS.EEFM,
        "controller_mode": MODES.get(mode, SS.MODE_IDLE),
        "transition_time": p.transition_time,
        "is_ik_enable": [True, True], "is_feedback_control_enable": [True, True],
        "is_zmp_calc_enable": [True, True],
        "cop_check_margin": p.zmp_margin,
        "cp_check_margin": list(p.cp_check_margin),
        "ref_capture_point": [float(ref_cp[0]), float(ref_cp[1])],
        "act_capture_point": [float(act_cp[0]), float(act_cp[1])],
        "contact_decision_threshold": p.contact_threshold,
        "foot_origin_offset": [[0.0, 0.0, 0.0]] * legs,
        "emergency_check_mode": getattr(SS, p.emergency_check),
        "end_effector_list": [],
        "is_estop_while_walking": bool(p.estop_while_walking),
    }


FIELDS = ("k_tpcc_p", "k_tpcc_x", "k_brot_p", "k_brot_tc", "eefm_k1", "eefm_k2", "eefm_k3",
          "eefm_zmp_delay_time_const", "eefm_ref_zmp_aux", "eefm_rot_damping_gain",
          "eefm_rot_time_const", "eefm_pos_damping_gain", "eefm_pos_time_const_support",
          "eefm_pos_compensation_limit", "eefm_rot_compensation_limit",
          "eefm_pos_time_const_swing", "eefm_pos_transition_time", "eefm_pos_margin_time",
          "eefm_leg_inside_margin", "eefm_leg_outside_margin", "eefm_leg_front_margin",
          "eefm_leg_rear_margin", "eefm_body_attitude_control_gain",
          "eefm_body_attitude_control_time_const", "eefm_cogvel_cutoff_freq",
          "eefm_wrench_alpha_blending", "eefm_alpha_cutoff_freq",
          "eefm_gravitational_acceleration", "eefm_ee_pos_error_p_gain",
          "eefm_ee_rot_error_p_gain", "eefm_ee_error_cutoff_freq",
          "eefm_support_polygon_vertices_sequence", "eefm_use_force_difference_control",
          "st_algorithm", "controller_mode", "transition_time", "is_ik_enable",
          "is_feedback_control_enable", "is_zmp_calc_enable", "cop_check_margin",
          "cp_check_margin", "ref_capture_point", "act_capture_point",
          "contact_decision_threshold", "foot_origin_offset", "emergency_check_mode",
          "end_effector_list", "is_estop_while_walking")

# the members setParameter applies (the others must keep their values); the live ones it
# ignores (they are state, not settings)
APPLIED = {"eefm_k1", "eefm_k2", "eefm_rot_damping_gain", "eefm_rot_time_const",
           "eefm_pos_damping_gain", "eefm_pos_time_const_support",
           "eefm_pos_compensation_limit", "eefm_rot_compensation_limit",
           "eefm_pos_time_const_swing", "eefm_body_attitude_control_gain",
           "eefm_body_attitude_control_time_const", "eefm_cogvel_cutoff_freq",
           "eefm_gravitational_acceleration", "transition_time", "contact_decision_threshold",
           "cop_check_margin", "eefm_use_force_difference_control", "cp_check_margin",
           "emergency_check_mode", "is_estop_while_walking"}
LIVE = {"controller_mode", "ref_capture_point", "act_capture_point"}


def st_param_struct(p: StabilizerParams, mode: str, ref_cp, act_cp, zc: float) -> Any:
    v = _values(p, mode, ref_cp, act_cp, zc)
    return SS.stParam(*[v[f] for f in FIELDS])


def _num(name: str, v: Any, lo: float = 0.0, hi: float = math.inf,
         strict: bool = False) -> float:
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise StabilizerError(f"{name}: expected a number, got {v!r}") from None
    if not math.isfinite(x) or x < lo or x > hi or (strict and x == lo):
        raise StabilizerError(f"{name}: expected a finite number in "
                              f"{'(' if strict else '['}{lo:g}, {hi:g}], got {v!r}")
    return x


def _check_mode(mode: Any) -> str:
    """emergency_check_mode as StabilizerParams.emergency_check: NO_CHECK or CP (COP, which
    hrpsys ties to the SequencePlayer's interpolation, is not offered)."""
    if mode == SS.NO_CHECK:
        return "NO_CHECK"
    if mode == SS.CP:
        return "CP"
    raise StabilizerError(f"emergency_check_mode = {mode!r}: this stabilizer checks NO_CHECK "
                          f"or CP")


def params_from_struct(s: Any, p: StabilizerParams, mode: str, zc: float) -> StabilizerParams:
    """StabilizerParams from an stParam, or StabilizerError naming the member refused."""
    reported = _values(p, mode, (0.0, 0.0), (0.0, 0.0), zc)
    for name in FIELDS:
        if name in APPLIED or name in LIVE:
            continue
        if not same_value(getattr(s, name), reported[name]):
            raise StabilizerError(f"{name} = {getattr(s, name)!r}: this stabilizer keeps "
                                  f"{reported[name]!r} (see idl/StabilizerService.idl)")
    w = _omega(p, zc)
    k1 = _num("eefm_k1[0]", -float(s.eefm_k1[0]), 1.0, 1e3)
    cp_gain = (k1 - 1.0) * w
    rd = [list(r) for r in s.eefm_rot_damping_gain]
    if not rd or len(rd[0]) != 3:
        raise StabilizerError(f"eefm_rot_damping_gain: expected [[r, p, y], ...], got {rd!r}")
    damping = (_num("eefm_rot_damping_gain[0][0]", rd[0][0], 0.0, 1e6, True),
               _num("eefm_rot_damping_gain[0][1]", rd[0][1], 0.0, 1e6, True))
    rt = [list(r) for r in s.eefm_rot_time_const]
    damping_time = _num("eefm_rot_time_const[0][0]", rt[0][0] if rt else None, 0.0, 100.0,
                        True)
    pd = [list(r) for r in s.eefm_pos_damping_gain]
    dz = _num("eefm_pos_damping_gain[0][2]", pd[0][2] if pd else None, 0.0, 1e12, True)
    pt = [list(r) for r in s.eefm_pos_time_const_support]
    force_time = _num("eefm_pos_time_const_support[0][2]", pt[0][2] if pt else None, 0.0,
                      100.0, True)
    use_force = bool(s.eefm_use_force_difference_control)
    bg = [_num(f"eefm_body_attitude_control_gain[{i}]", x, 0.0, 100.0)
          for i, x in enumerate(s.eefm_body_attitude_control_gain)]
    bt = [_num(f"eefm_body_attitude_control_time_const[{i}]", x, 0.0, 100.0, True)
          for i, x in enumerate(s.eefm_body_attitude_control_time_const)]
    z_lim = list(s.eefm_pos_compensation_limit)
    r_lim = list(s.eefm_rot_compensation_limit)
    new = replace(
        p, cp_gain=cp_gain, damping=damping, damping_time=damping_time,
        force_gain=(1.0 / dz) if use_force else 0.0, force_time=force_time,
        z_limit=_num("eefm_pos_compensation_limit[0]", z_lim[0] if z_lim else None, 0.0, 0.2),
        rot_limit=_num("eefm_rot_compensation_limit[0]", r_lim[0] if r_lim else None, 0.0,
                       1.0),
        swing_time=_num("eefm_pos_time_const_swing", s.eefm_pos_time_const_swing, 0.0, 10.0,
                        True),
        body_gain=(bg[0], bg[1]), body_time=bt[0],
        cog_cutoff=_num("eefm_cogvel_cutoff_freq", s.eefm_cogvel_cutoff_freq, 0.0, 1e3, True),
        gravity=_num("eefm_gravitational_acceleration", s.eefm_gravitational_acceleration,
                     1.0, 100.0),
        transition_time=_num("transition_time", s.transition_time, 0.0, 10.0, True),
        contact_threshold=_num("contact_decision_threshold", s.contact_decision_threshold,
                               0.0, 1e4),
        zmp_margin=_num("cop_check_margin", s.cop_check_margin, 0.0, 0.05),
        emergency_check=_check_mode(s.emergency_check_mode),
        cp_check_margin=tuple(_num(f"cp_check_margin[{i}]", x, 0.0, 0.05)
                              for i, x in enumerate(s.cp_check_margin)),
        estop_while_walking=bool(s.is_estop_while_walking))
    k2 = [float(x) for x in s.eefm_k2]
    if any(abs(x - (-k1) / w) > 1e-6 * max(1.0, abs(x)) for x in k2):
        raise StabilizerError(f"eefm_k2 = {k2!r}: must be eefm_k1 / omega = "
                              f"{-k1 / w:.6g} (the capture point feedback has one gain)")
    if abs(float(s.eefm_k1[1]) - float(s.eefm_k1[0])) > 1e-9:
        raise StabilizerError(f"eefm_k1 = {list(s.eefm_k1)!r}: both axes take one gain")
    try:
        new.check()
    except StabilizerError:
        raise
    return new
