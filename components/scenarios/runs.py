"""The shipped simulation systems driven as a user would, in process in simulation time.

Each builds a composition (compositions/nao_sim.yaml or arm_sim.yaml) with
:class:`rtcf.testing.SimSystem`, drives it as a user would (the SequencePlayer's
pattern, the DCM's setAlias, BlendingPlanner's moveBlending), records every cycle into
preallocated arrays and returns them. Used by the acceptance tests
(tests/integration/test_sim_acceptance.py), scripts/sim_demo and bench/bench_sim_system.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from rtcf.testing import SimSystem

from .metrics import box_corners_xy, convex_hull, signed_distance

__all__ = ["NaoRecord", "run_nao", "ArmRecord", "run_arm", "SQUARE", "WAVE"]

ROOT = Path(__file__).resolve().parents[2]
NAO_SIM = ROOT / "compositions" / "nao_sim.yaml"
ARM_SIM = ROOT / "compositions" / "arm_sim.yaml"
WAVE = str(ROOT / "model" / "patterns" / "nao_wave")
DEG = np.pi / 180.0


@dataclass
class NaoRecord:
    """Every DCM cycle of a NAO run (N samples; joints in the DCM's body order)."""

    t: np.ndarray              # (N,) [s] simulated time of the cycle
    q_ref: np.ndarray          # (N, 26) SequencePlayer0.qRef [rad]
    q_cmd: np.ndarray          # (N, 26) Position actuator values sent [rad]
    q: np.ndarray              # (N, 26) measured (Position sensors) [rad]
    dq: np.ndarray             # (N, 26) measured joint speed, physics order = body order [rad/s]
    hardness: np.ndarray       # (N, 26)
    base_pos: np.ndarray       # (N, 3) torso position, ground truth [m]
    base_rpy: np.ndarray       # (N, 3)
    zmp: np.ndarray            # (N, 3) [m, world]
    support_margin: np.ndarray  # (N,) ZMP distance inside the support polygon [m] (< 0 out)
    sensors: np.ndarray        # (N, 23) DCM0's IMU / FSR keys (DCM0.sensor_keys[26:])
    sensor_keys: tuple
    joint_names: tuple
    lower: np.ndarray
    upper: np.ndarray
    mass: float                # [kg] the physics model's total mass
    velocity_limit: np.ndarray  # (26,) [rad/s] the physics model's (the URDF's) joint speeds
    velocity_exceeded: int = 0  # joint samples above velocity_limit (the core's count)
    frames: list = field(default_factory=list)   # (t, image) pairs if a renderer was given

    @property
    def fsr_total_kg(self) -> np.ndarray:
        k = self.sensor_keys
        return (self.sensors[:, k.index("LFoot/FSR/TotalWeight/Sensor/Value")]
                + self.sensors[:, k.index("RFoot/FSR/TotalWeight/Sensor/Value")])


def _feet_geoms(mj_model: Any) -> list[int]:
    import mujoco
    ids = [mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_GEOM, n) for n in ("lfoot", "rfoot")]
    if min(ids) < 0:
        raise RuntimeError("the NAO model has no 'lfoot' / 'rfoot' sole geoms")
    return ids


def support_polygon(sim: Any, feet: list[int], min_force: float = 1.0) -> np.ndarray:
    """Convex hull (CCW, (k, 2) [m]) of the soles of the feet carrying > min_force [N]."""
    d, m = sim.mj_data, sim.mj_model
    s = sim.sensors
    pts = []
    for gid, wrench in zip(feet, (s.lfoot, s.rfoot)):
        if abs(wrench[2]) > min_force:
            pts.append(box_corners_xy(d.geom_xpos[gid], d.geom_xmat[gid].reshape(3, 3),
                                      m.geom_size[gid]))
    if not pts:
        return np.zeros((0, 2))
    return convex_hull(np.vstack(pts))


def run_nao(seconds: float, pattern: str | None = WAVE, pattern_time: float = 1.0,
            limp_at: float | None = None, render: Callable[[Any], Any] | None = None,
            frame_every: float = 0.5, params: dict | None = None,
            system: SimSystem | None = None) -> NaoRecord:
    """Run nao_sim for ``seconds`` of simulated time.

    pattern: a SequencePlayer pattern base name (loaded after the first cycle; None: stand);
    limp_at: simulated time [s] at which Hardness 0 is set on every joint through the DCM
    service (createAlias + setAliasTimeSeparate, as a NAOqi program does); render(sim) ->
    image every ``frame_every`` s into ``frames``.
    """
    own = system is None
    system = system or SimSystem(NAO_SIM, params={"qLog": {"path": ""},
                                                  "sensorLog": {"path": ""}, **(params or {})})
    try:
        dcm, sp = system["DCM0"], system["SequencePlayer0"]
        body = dcm.robot_body
        sim = body.sim
        feet = _feet_geoms(sim.mj_model)
        nj = len(dcm.devices.joint_names)
        n = int(round(seconds / 0.01)) + 2
        rec = NaoRecord(
            t=np.zeros(n), q_ref=np.zeros((n, nj)), q_cmd=np.zeros((n, nj)),
            q=np.zeros((n, nj)), dq=np.zeros((n, nj)), hardness=np.zeros((n, nj)),
            base_pos=np.zeros((n, 3)),
            base_rpy=np.zeros((n, 3)), zmp=np.zeros((n, 3)), support_margin=np.zeros(n),
            sensors=np.zeros((n, len(body.extra_sensors))),
            sensor_keys=tuple(dcm.sensor_keys[nj:]), joint_names=tuple(dcm.devices.joint_names),
            lower=np.array(dcm.devices.joint_limits[:, 0]),
            upper=np.array(dcm.devices.joint_limits[:, 1]), mass=float(sim.model.mass),
            velocity_limit=np.array(sim.model.velocity_limit))
        count = [0]
        next_frame = [0.0]

        def each(t: float) -> None:
            k = count[0]
            if k >= n:
                return
            s = sim.sensors
            rec.t[k] = dcm.now_ms / 1000.0 if dcm.now_ms is not None else t
            rec.q_ref[k] = sp.core.q_ref
            rec.q_cmd[k] = dcm.cmd_out.value.data
            rec.q[k] = dcm.q_out.value.data
            rec.dq[k] = s.dq
            rec.hardness[k] = dcm.hard_out.value.data
            rec.base_pos[k] = s.base_pos
            rec.base_rpy[k] = s.base_rpy
            rec.zmp[k] = s.zmp
            hull = support_polygon(sim, feet)
            rec.support_margin[k] = signed_distance(s.zmp, hull) if len(hull) >= 3 \
                else -np.inf
            rec.sensors[k] = body.extra_sensors
            count[0] = k + 1
            if render is not None and t + 1e-9 >= next_frame[0]:
                rec.frames.append((t, render(sim)))
                next_frame[0] += frame_every

        system.advance(0.01, each)
        if pattern:
            sp.core.load_pattern(sp.core.prepare_pattern(pattern), pattern_time)
        if limp_at is not None:
            system.advance(max(0.0, limp_at - system.now), each)
            keys = [f"{j}/Hardness/Actuator/Value" for j in dcm.devices.joint_names]
            dcm.service.createAlias("AllHardness", keys)
            dcm.service.setAliasTimeSeparate("AllHardness", "ClearAll", 0,
                                             [dcm.now_ms + 10], [[0.0] for _ in keys])
        system.advance(max(0.0, seconds - system.now), each)
        k = count[0]
        rec.velocity_exceeded = sim.velocity_exceeded
        for name in ("t", "q_ref", "q_cmd", "q", "dq", "hardness", "base_pos", "base_rpy", "zmp",
                     "support_margin", "sensors"):
            setattr(rec, name, getattr(rec, name)[:k])
        return rec
    finally:
        if own:
            system.close()


# -- the arm ---------------------------------------------------------------------------------
DR_LINE = 0
SQUARE = [  # a 200 mm square in the TOOL frame (ref 1) from the home TCP, corners blended
    [200, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, DR_LINE, 30],
    [200, 200, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, DR_LINE, 30],
    [0, 200, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, DR_LINE, 30],
    [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, DR_LINE, 0],
]


@dataclass
class ArmRecord:
    """Every 1 ms cycle of an arm run."""

    t: np.ndarray              # (N,) [s]
    q_ref: np.ndarray          # (N, 6) BlendingPlanner0.qRef [rad]
    q: np.ndarray              # (N, 6) measured [rad]
    tau: np.ndarray            # (N, 6) commanded effort [N m] (the PID's output)
    tcp_plan: np.ndarray       # (N, 3) planned TCP [mm, base frame]
    tcp_meas: np.ndarray       # (N, 3) FK of the measured joints [mm]
    plan_speed: np.ndarray     # (N,) the plan's TCP speed at that sample [mm/s]
    moving: np.ndarray         # (N,) bool: a motion was running
    vel: float                 # the requested speed [mm/s]
    duration: float            # the plan's duration [s]
    saturations: int           # torques clipped at the effort limit (core's count), if known
    frames: list = field(default_factory=list)


def run_arm(segments: list | None = None, vel: float = 150.0, acc: float = 600.0,
            settle: float = 0.5, tail: float = 0.5, render: Callable[[Any], Any] | None = None,
            frame_every: float = 0.5, params: dict | None = None) -> ArmRecord:
    """Run arm_sim: hold ``settle`` s, then one moveBlending of ``segments`` (default: the
    blended SQUARE in the TOOL frame) at ``vel`` / ``acc``, then ``tail`` s."""
    segments = SQUARE if segments is None else segments
    system = SimSystem(ARM_SIM, params={"qLog": {"path": ""}, "qRefLog": {"path": ""},
                                        **(params or {})})
    try:
        bp, cm = system["BlendingPlanner0"], system["ControllerManager0"]
        sim = system["Simulator0"].sim                 # its Simulation (made at activation)
        ctl = cm.core.slot("arm_pid").controller
        system.advance(settle)
        ok = bp.service.core.move_blending(segments, len(segments), [vel, -10000.0],
                                           [acc, -10000.0], 0.0, 1, 0, 1)   # ref TOOL, ASYNC
        if not ok:
            raise RuntimeError(f"moveBlending refused: {bp.service.core.last_error()}")
        plan, _ = bp.last_plan
        total = plan.duration + tail
        n = int(round(total / 1e-3)) + 2
        rec = ArmRecord(t=np.zeros(n), q_ref=np.zeros((n, 6)), q=np.zeros((n, 6)),
                        tau=np.zeros((n, 6)), tcp_plan=np.zeros((n, 3)),
                        tcp_meas=np.zeros((n, 3)), plan_speed=np.zeros(n),
                        moving=np.zeros(n, dtype=bool), vel=float(vel),
                        duration=float(plan.duration), saturations=0)
        count = [0]
        next_frame = [0.0]
        t0 = system.now

        def each(t: float) -> None:
            k = count[0]
            if k >= n:
                return
            rec.t[k] = t - t0
            rec.q_ref[k] = bp.q
            rec.q[k] = sim.sensors.q
            rec.tau[k] = ctl.effort
            rec.tcp_plan[k] = bp.pose_p
            m = bp.motion
            rec.moving[k] = m is not None
            rec.plan_speed[k] = m.samples.speed[m.k] if m is not None else 0.0
            count[0] = k + 1
            if render is not None and t - t0 + 1e-9 >= next_frame[0]:
                rec.frames.append((t - t0, render(sim)))
                next_frame[0] += frame_every

        system.advance(total, each)
        k = count[0]
        for name in ("t", "q_ref", "q", "tau", "tcp_plan", "tcp_meas", "plan_speed", "moving"):
            setattr(rec, name, getattr(rec, name)[:k])
        for i in range(k):
            p, _ = bp.arm.tcp_pose(rec.q[i])
            rec.tcp_meas[i] = p
        rec.saturations = int(getattr(sim, "saturations", 0) or 0)
        return rec
    finally:
        system.close()
