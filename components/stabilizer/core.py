"""StabilizerCore: ZMP and CoM feedback for a position-controlled biped (hrpsys's Stabilizer
role), from foot force sensors and the IMU.

Pure core: imports neither rtcf nor omniORB, reads no clock (one ``step`` is one period).
Metres, radians, newtons, seconds; joint vectors in the kinematics model's order.

The method is Kajita et al.'s stabilizer for position-controlled humanoids:

    S. Kajita, M. Morisawa, K. Miura, S. Nakaoka, K. Harada, K. Kaneko, F. Kanehiro,
    K. Yokoi, "Biped walking stabilization based on linear inverted pendulum tracking",
    IEEE/RSJ IROS 2010, pp. 4489-4496

(hrpsys-base's Stabilizer implements it as its EEFM algorithm), with the CoM feedback
written on the capture point (divergent component of motion) as in

    J. Englsberger, C. Ott, M. A. Roa, A. Albu-Schaeffer, G. Hirzinger, "Bipedal walking
    control based on Capture Point dynamics", IEEE/RSJ IROS 2011, pp. 4420-4427.

Each period, with every quantity in the gravity-aligned frame of the torso (the IMU's roll
and pitch for the measured robot, the reference torso's for the reference) and relative to
the "foot origin" (the middle of the soles in contact):

1. capture point feedback (the CoM): xi = c + c'/omega, omega = sqrt(g / z_c); the error
   e = xi_act - xi_ref is driven to zero by the ZMP command
   p_cmd = p_ref + (1 + k_cp / omega) e  (then e' = -k_cp e), clamped into the support
   polygon less a margin;
2. ankle strategy: each sole in contact is rotated by damping control so its measured
   centre of pressure (from its FSRs) goes to the desired one,
   d/dt dtheta = (tau_act - tau_des) / D - dtheta / T_d  (Kajita 2010, eq. 23);
   in double support the feet share the command by where p_cmd lies between them, and the
   difference of their normal forces is controlled by lengthening one leg and shortening
   the other (foot force difference control, Kajita 2010, eq. 20);
3. hip strategy: the torso's measured roll and pitch are driven back to the reference by
   turning the torso over the hips (body attitude control, Kajita 2010 section III-D).

The feet's corrected poses are then reached by the whole-leg IK (autobalancer.legik), the
head and arms keep the reference. ``fallen`` is set when the torso tilts beyond
``fall_tilt``; the control then fades out (nothing can be balanced any more).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

IDLE, ST, SYNC_TO_IDLE, SYNC_TO_ST = "MODE_IDLE", "MODE_ST", "MODE_SYNC_TO_IDLE", \
    "MODE_SYNC_TO_ST"
LEGS = ("lleg", "rleg")


class StabilizerError(ValueError):
    """A refused request or parameter; nothing changed."""


@dataclass(frozen=True)
class StabilizerParams:
    """Gains and limits (the hrpsys stParam members they stand for in brackets)."""

    cp_gain: float = 6.0                  # [1/s] k_cp: capture point error decay
    zmp_margin: float = 0.01              # [m] p_cmd kept this far inside the soles
    damping: tuple = (3.0, 3.0)           # [N m s/rad] D roll, pitch (eefm_rot_damping_gain)
    damping_time: float = 0.5             # [s] T_d (eefm_rot_time_const)
    rot_limit: float = 0.2                # [rad] ankle correction limit
    swing_time: float = 0.05              # [s] a lifted sole's correction fades this fast
    force_gain: float = 5e-4              # [m/(N s)] force difference control
    force_time: float = 0.4               # [s]
    z_limit: float = 0.02                 # [m] leg length correction limit
    body_gain: tuple = (0.5, 0.5)         # [1/s] body attitude roll, pitch: hrpsys's
    #   eefm_body_attitude_control_gain default; 4 /s cost 0.4 N of a standing push
    body_time: float = 1.0                # [s]
    body_limit: float = 0.2               # [rad]
    cog_cutoff: float = 15.0              # [Hz] low pass of the CoM error rate
    contact_threshold: float = 5.0        # [N] a sole carries at least this to count
    transition_time: float = 1.0          # [s] fade in / out
    fall_tilt: float = 0.6                # [rad] torso tilt that means fallen
    gravity: float = 9.81                 # [m/s^2]
    emergency_check: str = "NO_CHECK"     # "CP": emergency while the measured capture point
    #   is outside the soles in contact less cp_check_margin (hrpsys emergency_check_mode)
    cp_check_margin: tuple = (0.0, 0.0, 0.0, 0.0)   # [m] front, rear, inside, outside
    estop_while_walking: bool = False     # check while walking too (is_estop_while_walking)

    def check(self) -> None:
        pos = ("damping_time", "swing_time", "force_time", "body_time", "cog_cutoff",
               "transition_time", "fall_tilt", "gravity")
        for k in pos:
            v = getattr(self, k)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0.0):
                raise StabilizerError(f"{k}: expected a finite number > 0, got {v!r}")
        for k in ("cp_gain", "zmp_margin", "rot_limit", "force_gain", "z_limit",
                  "body_limit", "contact_threshold"):
            v = getattr(self, k)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0.0):
                raise StabilizerError(f"{k}: expected a finite number >= 0, got {v!r}")
        for k in ("damping", "body_gain"):
            v = getattr(self, k)
            if len(v) != 2 or not all(isinstance(x, (int, float)) and math.isfinite(x)
                                      and x >= 0.0 for x in v):
                raise StabilizerError(f"{k}: expected two finite numbers >= 0, got {v!r}")
        if self.emergency_check not in ("NO_CHECK", "CP"):
            raise StabilizerError(f"emergency_check: expected 'NO_CHECK' or 'CP', got "
                                  f"{self.emergency_check!r}")
        m = self.cp_check_margin
        if len(m) != 4 or not all(isinstance(x, (int, float)) and math.isfinite(x)
                                  and 0.0 <= x <= 0.05 for x in m):
            raise StabilizerError(f"cp_check_margin: expected four margins (front, rear, "
                                  f"inside, outside) in [0, 0.05] m, got {m!r}")
        if min(self.damping) <= 0.0:
            raise StabilizerError(f"damping: expected > 0 (a smaller damping is a faster "
                                  f"ankle), got {self.damping!r}")


@dataclass(frozen=True)
class Sole:
    """A sole's rectangle in its own frame [m]: x from rear to front, y from right to left."""

    x: tuple
    y: tuple


def _rot_rp(roll: float, pitch: float) -> np.ndarray:
    """R = Ry(pitch) Rx(roll)."""
    cr, sr, cp, sp = math.cos(roll), math.sin(roll), math.cos(pitch), math.sin(pitch)
    return np.array([[cp, sp * sr, sp * cr], [0.0, cr, -sr], [-sp, cp * sr, cp * cr]])


def _rot_xy(roll: float, pitch: float) -> np.ndarray:
    """A small rotation of a sole: R = Ry(pitch) Rx(roll) in the sole's own axes."""
    return _rot_rp(roll, pitch)


class StabilizerCore:
    """See the module doc. Runs in: owner thread (the component's EC thread).

    ``step`` takes the reference (joint angles, ZMP in the torso frame, the torso's planned
    roll and pitch, which soles the reference stands on) and the measurements (joint
    angles, the torso's roll and pitch, each sole's normal force [N] and centre of pressure
    in its frame) and returns the joint angles to send. After ``step``, in the foot-origin
    frame (the middle of the soles in contact, gravity aligned, torso heading):
    ``ref_zmp``, ``act_zmp``, ``cmd_zmp``, ``ref_cp``, ``act_cp``, ``ref_com``, ``act_com``
    (2,) [m]; ``fallen``; ``mode``; ``emergency`` (emergency_check "CP": the measured
    capture point outside the soles in contact less cp_check_margin, in MODE_ST with a
    sole on the ground, while standing unless estop_while_walking).
    """

    def __init__(self, kin_model, mass_model, soles: dict, params: StabilizerParams,
                 dt: float):
        from rtcf_components.autobalancer.com import ComCalculator
        from rtcf_components.autobalancer.legik import LegIK
        from rtcf_components.kinematics.algorithms import chain_fk
        params.check()
        self._fk = chain_fk
        self.kin = kin_model
        self.params = params
        self.dt = float(dt)
        self.soles = soles
        self._sole_centre = {leg: np.array([0.5 * (s.x[0] + s.x[1]), 0.5 * (s.y[0] + s.y[1]),
                                            0.0]) for leg, s in soles.items()}
        self.n = len(kin_model.joint_names)
        self.com_ref = ComCalculator(kin_model, mass_model)     # one each: they cache
        self.com_act = ComCalculator(kin_model, mass_model)
        self.mass = mass_model.total
        self.ik = LegIK(kin_model)
        self.chains = {"lleg": kin_model.chain("LLeg"), "rleg": kin_model.chain("RLeg")}
        self.idx = {leg: np.asarray(c.index) for leg, c in self.chains.items()}
        self.q = np.zeros(self.n)
        self.q_legs = np.zeros(12)
        self.mode = IDLE
        self.fallen = False
        self.emergency = False
        self._blend = 0.0
        self._blend_to = 0.0
        self._blend_from = 0.0
        self._blend_k = 0
        self._blend_n = 1
        # controller states
        self.d_rot = {leg: np.zeros(2) for leg in LEGS}      # sole roll, pitch corrections
        self.d_z = 0.0                                        # left minus right length change
        self.d_body = np.zeros(2)                             # torso roll, pitch correction
        self._have_err = False
        for k in ("ref_zmp", "act_zmp", "cmd_zmp", "ref_cp", "act_cp", "ref_com", "act_com"):
            setattr(self, k, np.zeros(2))
        self.zc = 0.27

    # -- modes ---------------------------------------------------------------------------
    def start(self) -> None:
        if self.mode in (ST, SYNC_TO_ST):
            raise StabilizerError("the Stabilizer is already started")
        self.fallen = False
        self._begin(1.0)
        self.mode = SYNC_TO_ST

    def stop(self) -> None:
        if self.mode in (IDLE, SYNC_TO_IDLE):
            raise StabilizerError("the Stabilizer is not started")
        self._begin(0.0)
        self.mode = SYNC_TO_IDLE

    def _begin(self, to: float) -> None:
        self._blend_from, self._blend_to = self._blend, to
        self._blend_k = 0
        self._blend_n = max(1, int(round(self.params.transition_time / self.dt)))

    def set_params(self, params: StabilizerParams) -> None:
        params.check()
        self.params = params

    @property
    def active(self) -> bool:
        return self.mode != IDLE

    # -- the cycle -------------------------------------------------------------------------
    def step(self, q_ref: np.ndarray, zmp_ref_torso, ref_contact: dict, q_act: np.ndarray,
             act_rp: tuple, force: dict, cop: dict, walking: bool = False) -> np.ndarray:
        """One period. ``zmp_ref_torso`` (3,) the reference ZMP in the reference torso frame
        (None: under the reference CoM); ``ref_contact`` {leg: bool}; ``act_rp`` the IMU's
        torso roll and pitch [rad]; ``force`` {leg: normal force [N]}, ``cop`` {leg: (2,)
        [m] in the sole frame}; ``walking`` the balancer's walkingStates. The reference
        torso's roll and pitch are those that put the reference soles flat. Returns ``q``.
        Runs in: owner thread."""
        np.copyto(self.q, q_ref)
        self.emergency = False
        if self.mode == IDLE:
            return self.q
        p = self.params
        if max(abs(act_rp[0]), abs(act_rp[1])) > p.fall_tilt and not self.fallen:
            self.fallen = True
            self._begin(0.0)
            self.mode = SYNC_TO_IDLE
        self._contact = dict(ref_contact)
        self._measure(q_ref, zmp_ref_torso, ref_contact, q_act, act_rp, force, cop)
        if p.emergency_check == "CP" and self.mode == ST and not self.fallen and \
                self._total_force > 0.0 and (not walking or p.estop_while_walking):
            self.emergency = self._cp_outside(ref_contact)
        if not self.fallen:
            self._control(ref_contact, force, cop)
        else:
            self._relax()
        if self.mode in (SYNC_TO_ST, SYNC_TO_IDLE):
            self._blend_k += 1
            s = self._blend_k / self._blend_n
            s = s * s * s * (10.0 - 15.0 * s + 6.0 * s * s) if s < 1.0 else 1.0
            self._blend = self._blend_from + s * (self._blend_to - self._blend_from)
            if self._blend_k >= self._blend_n:
                self._blend = self._blend_to
                self.mode = ST if self._blend_to >= 1.0 else IDLE
                if self.mode == IDLE:
                    self._reset_states()
                    return self.q
        self._apply(q_ref)
        return self.q

    def _reset_states(self) -> None:
        for leg in LEGS:
            self.d_rot[leg][:] = 0.0
        self.d_z = 0.0
        self.d_body[:] = 0.0
        self._have_err = False

    def _origin(self, T: dict, R: np.ndarray, contact: dict) -> np.ndarray:
        legs = [leg for leg in LEGS if contact[leg]] or list(LEGS)
        return sum(R @ T[leg][:3, 3] for leg in legs) / len(legs)

    def _measure(self, q_ref, zmp_ref_torso, ref_contact, q_act, act_rp, force, cop):
        fk = self._fk
        Tr = {leg: fk(self.kin, self.chains[leg], q_ref[self.idx[leg]]) for leg in LEGS}
        Ta = {leg: fk(self.kin, self.chains[leg], q_act[self.idx[leg]]) for leg in LEGS}
        ref_rp = _flat_rp(Tr, ref_contact)
        Rr = _rot_rp(*ref_rp)
        Ra = _rot_rp(*act_rp)
        self._Tr, self._Ta, self._Rr, self._Ra = Tr, Ta, Rr, Ra
        self._ref_rp, self._act_rp = ref_rp, (float(act_rp[0]), float(act_rp[1]))
        o_r = self._origin(Tr, Rr, ref_contact)
        o_a = self._origin(Ta, Ra, ref_contact)
        cw_r = Rr @ self.com_ref.com(q_ref)
        cw_a = Ra @ self.com_act.com(q_act)
        c_r, c_a = cw_r - o_r, cw_a - o_a
        self.zc = max(0.05, float(c_r[2]))
        self.ref_com[:] = c_r[:2]
        self.act_com[:] = c_a[:2]
        if zmp_ref_torso is None:
            self.ref_zmp[:] = c_r[:2]
        else:
            self.ref_zmp[:] = (Rr @ np.asarray(zmp_ref_torso, float) - o_r)[:2]
        # CoM velocities relative to the feet in contact: the previous CoM against the
        # previous feet of the SAME contact set, so a change of support is no jump
        feet_r = {leg: Rr @ Tr[leg][:3, 3] for leg in LEGS}
        feet_a = {leg: Ra @ Ta[leg][:3, 3] for leg in LEGS}
        a = 1.0 - math.exp(-2.0 * math.pi * self.params.cog_cutoff * self.dt)
        if self._have_err:
            legs = [leg for leg in LEGS if ref_contact[leg]] or list(LEGS)
            po_r = sum(self._feet_r[leg] for leg in legs) / len(legs)
            po_a = sum(self._feet_a[leg] for leg in legs) / len(legs)
            v_r = ((c_r - (self._cw_r - po_r)) / self.dt)[:2]
            v_a = ((c_a - (self._cw_a - po_a)) / self.dt)[:2]
            self._v_r += a * (v_r - self._v_r)
            self._v_a += a * (v_a - self._v_a)
        else:
            self._v_r, self._v_a = np.zeros(2), np.zeros(2)
            self._have_err = True
        self._feet_r, self._feet_a, self._cw_r, self._cw_a = feet_r, feet_a, cw_r, cw_a
        total = 0.0
        z = np.zeros(2)
        for leg in LEGS:
            f = force[leg]
            if f > self.params.contact_threshold:
                T = Ta[leg]
                pt = Ra @ (T[:3, :3] @ np.array([cop[leg][0], cop[leg][1], 0.0]) + T[:3, 3]) - o_a
                z += f * pt[:2]
                total += f
        self._total_force = total
        if total > 0.0:
            self.act_zmp[:] = z / total
        else:
            self.act_zmp[:] = self.act_com
        omega = math.sqrt(self.params.gravity / self.zc)
        self.omega = omega
        self.ref_cp[:] = self.ref_com + self._v_r / omega
        self.act_cp[:] = self.act_com + self._v_a / omega

    def _support_clamp(self, pt: np.ndarray, contact: dict) -> np.ndarray:
        """``pt`` moved into the support polygon (the soles' rectangles less the margin, their
        convex hull in double support), foot-origin frame."""
        m = self.params.zmp_margin
        corners = []
        legs = [leg for leg in LEGS if contact[leg]]
        if not legs:
            return pt
        o = self._origin(self._Ta, self._Ra, contact)
        for leg in legs:
            s = self.soles[leg]
            T = self._Ta[leg]
            for x in (s.x[0] + m, s.x[1] - m):
                for y in (s.y[0] + m, s.y[1] - m):
                    c = self._Ra @ (T[:3, :3] @ np.array([x, y, 0.0]) + T[:3, 3]) - o
                    corners.append((float(c[0]), float(c[1])))
        return _clamp_to_hull(pt, corners)

    def _cp_outside(self, contact: dict) -> bool:
        """Whether the measured capture point is outside the soles in contact, each less
        cp_check_margin (front, rear, inside, outside; hrpsys's order)."""
        front, rear, inside, outside = self.params.cp_check_margin
        legs = [leg for leg in LEGS if contact[leg]]
        if not legs:
            return False
        o = self._origin(self._Ta, self._Ra, contact)
        corners = []
        for leg in legs:
            s = self.soles[leg]
            x0, x1 = s.x[0] + rear, s.x[1] - front
            # y from the right edge to the left one: a left sole's inside is its right edge
            y0, y1 = (s.y[0] + inside, s.y[1] - outside) if leg == "lleg" else \
                (s.y[0] + outside, s.y[1] - inside)
            if x0 > x1:
                x0 = x1 = 0.5 * (x0 + x1)
            if y0 > y1:
                y0 = y1 = 0.5 * (y0 + y1)
            T = self._Ta[leg]
            for x in (x0, x1):
                for y in (y0, y1):
                    c = self._Ra @ (T[:3, :3] @ np.array([x, y, 0.0]) + T[:3, 3]) - o
                    corners.append((float(c[0]), float(c[1])))
        cp = self.act_cp
        near = _clamp_to_hull(cp, corners)
        return float(np.hypot(near[0] - cp[0], near[1] - cp[1])) > 1e-9

    def _control(self, contact: dict, force: dict, cop: dict) -> None:
        p, dt = self.params, self.dt
        # 1. capture point feedback
        gain = 1.0 + p.cp_gain / self.omega
        cmd = self.ref_zmp + gain * (self.act_cp - self.ref_cp)
        self.cmd_zmp[:] = self._support_clamp(cmd, contact)
        # 2. distribute: the share of each sole (by where cmd lies between them)
        legs = [leg for leg in LEGS if contact[leg]]
        weight = self.mass * p.gravity
        share = {leg: 0.0 for leg in LEGS}
        if len(legs) == 2:
            o = self._origin(self._Ta, self._Ra, contact)
            pl = (self._Ra @ self._Ta["lleg"][:3, 3] - o)[:2]
            pr = (self._Ra @ self._Ta["rleg"][:3, 3] - o)[:2]
            d = pl - pr
            alpha = float(np.clip((self.cmd_zmp - pr) @ d / max(d @ d, 1e-9), 0.0, 1.0))
            share["lleg"], share["rleg"] = alpha, 1.0 - alpha
        elif legs:
            share[legs[0]] = 1.0
        # ankle damping control: the desired CoP of each loaded sole. In single support it is
        # the command; in double support the force shares realise the command's part along
        # the line between the feet, the ankles the part across it (each sole's centre
        # moved by that much)
        targets = {}
        if len(legs) == 2:
            o = self._origin(self._Ta, self._Ra, contact)
            cen = {leg: (self._Ra @ (self._Ta[leg][:3, :3] @ self._sole_centre[leg]
                                     + self._Ta[leg][:3, 3]) - o)[:2] for leg in LEGS}
            d = cen["lleg"] - cen["rleg"]
            n = np.array([d[1], -d[0]]) / max(float(np.linalg.norm(d)), 1e-9)
            across = float((self.cmd_zmp - 0.5 * (cen["lleg"] + cen["rleg"])) @ n)
            for leg in LEGS:
                targets[leg] = cen[leg] + across * n
        elif legs:
            targets[legs[0]] = self.cmd_zmp
        for leg in LEGS:
            dr = self.d_rot[leg]
            f = force[leg]
            if contact[leg] and f > p.contact_threshold:
                want = self._in_sole(leg, targets[leg], contact)
                s = self.soles[leg]
                want[0] = min(max(want[0], s.x[0] + p.zmp_margin), s.x[1] - p.zmp_margin)
                want[1] = min(max(want[1], s.y[0] + p.zmp_margin), s.y[1] - p.zmp_margin)
                # tau = F x (cop): roll = F cop_y, pitch = -F cop_x; the sole turns toward
                # the torque error (a toe pressed down moves the CoP forward)
                e_roll = f * (cop[leg][1] - want[1])
                e_pitch = -f * (cop[leg][0] - want[0])
                dr[0] += dt * (e_roll / p.damping[0] - dr[0] / p.damping_time)
                dr[1] += dt * (e_pitch / p.damping[1] - dr[1] / p.damping_time)
            else:                                # in the air: back to the plan quickly
                dr -= min(1.0, dt / p.swing_time) * dr
            np.clip(dr, -p.rot_limit, p.rot_limit, out=dr)
        # foot force difference control (double support)
        if len(legs) == 2:
            want_df = weight * (share["lleg"] - share["rleg"])
            meas_df = force["lleg"] - force["rleg"]
            self.d_z += dt * (p.force_gain * (want_df - meas_df) - self.d_z / p.force_time)
        else:
            self.d_z -= dt * self.d_z / p.force_time
        self.d_z = min(max(self.d_z, -p.z_limit), p.z_limit)
        # 3. body attitude (hip strategy): the torso's roll and pitch back to the reference
        act, ref = self._act_rp, self._ref_rp
        for k in range(2):
            err = ref[k] - act[k]
            self.d_body[k] += dt * (p.body_gain[k] * err - self.d_body[k] / p.body_time)
        np.clip(self.d_body, -p.body_limit, p.body_limit, out=self.d_body)

    def _relax(self) -> None:
        dt = self.dt
        for leg in LEGS:
            self.d_rot[leg] -= dt * self.d_rot[leg] / self.params.damping_time
        self.d_z -= dt * self.d_z / self.params.force_time
        self.d_body -= dt * self.d_body / self.params.body_time

    def _in_sole(self, leg: str, pt: np.ndarray, contact: dict) -> np.ndarray:
        """A foot-origin point as (x, y) in the measured sole frame."""
        o = self._origin(self._Ta, self._Ra, contact)
        T = self._Ta[leg]
        w = self._Ra.T @ (np.array([pt[0], pt[1], 0.0]) + o)     # back to the torso frame
        local = T[:3, :3].T @ (w - T[:3, 3])
        return local[:2].copy()

    def _apply(self, q_ref: np.ndarray) -> None:
        """Corrected sole poses through the leg IK; the blend fades the corrections."""
        b = self._blend
        Rr = self._Rr
        # the torso turned by d_body over the feet: the soles seen from it turn the other way
        Rb = _rot_rp(b * self.d_body[0], b * self.d_body[1])
        up = Rr.T @ np.array([0.0, 0.0, 1.0])                  # the vertical, torso frame
        targets = {}
        for leg in LEGS:
            T = self._Tr[leg].copy()
            dr = self.d_rot[leg] * b
            T[:3, :3] = T[:3, :3] @ _rot_xy(dr[0], dr[1])
            dz = (-0.5 if leg == "lleg" else 0.5) * self.d_z * b
            T[:3, 3] += dz * up
            targets[leg] = T
        for leg in LEGS:
            T = targets[leg]
            T[:3, :3] = Rb.T @ T[:3, :3]
            T[:3, 3] = Rb.T @ T[:3, 3]
        self.q_legs[:6] = q_ref[self.idx["lleg"]]
        self.q_legs[6:] = q_ref[self.idx["rleg"]]
        self.ik.solve(targets["lleg"], targets["rleg"], self.q_legs)
        self.q[self.idx["lleg"]] = self.q_legs[:6]
        self.q[self.idx["rleg"]] = self.q_legs[6:]



def _flat_rp(T: dict, contact: dict) -> tuple:
    """The torso roll and pitch [rad] that make the soles in contact (their mean normal)
    vertical."""
    legs = [leg for leg in LEGS if contact[leg]] or list(LEGS)
    n = sum(T[leg][:3, 2] for leg in legs)
    n = n / np.linalg.norm(n)
    # R = Ry(p) Rx(r) with R n = z: Rx(r) zeroes n's y component, Ry(p) its x component
    roll = math.atan2(n[1], n[2])
    pitch = math.atan2(-n[0], math.hypot(n[1], n[2]))
    return roll, pitch


def _clamp_to_hull(pt: np.ndarray, corners: list) -> np.ndarray:
    """The nearest point of the convex hull of ``corners`` to ``pt`` (pt itself inside)."""
    p = sorted(set(corners))
    if len(p) < 3:
        return pt

    def cross(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])
    lower, upper = [], []
    for q in p:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], q) <= 0:
            lower.pop()
        lower.append(q)
    for q in reversed(p):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], q) <= 0:
            upper.pop()
        upper.append(q)
    hull = lower[:-1] + upper[:-1]
    x, y = float(pt[0]), float(pt[1])
    inside = all(cross(a, b, (x, y)) >= 0 for a, b in zip(hull, hull[1:] + hull[:1]))
    if inside:
        return pt
    best, bd = None, math.inf
    for a, b in zip(hull, hull[1:] + hull[:1]):
        ex, ey = b[0] - a[0], b[1] - a[1]
        t = max(0.0, min(1.0, ((x - a[0]) * ex + (y - a[1]) * ey) / max(ex * ex + ey * ey,
                                                                          1e-18)))
        cx, cy = a[0] + t * ex, a[1] + t * ey
        d = (cx - x) ** 2 + (cy - y) ** 2
        if d < bd:
            best, bd = (cx, cy), d
    return np.array(best)
