"""Walking scenarios on the simulated NAO, for the demo (scripts/walk_demo), the benchmarks
(bench/bench_walk.py) and the tests: compositions/nao_walk.yaml built in process in
simulation time (rtcf.testing.SimSystem, factor 0, no ORB), driven between steps of
simulated time so that a run is deterministic, and measured on the physics (ground truth:
the soles' sites, the torso body, MuJoCo's whole-body CoM).

    with WalkRig() as rig:
        rig.start(stabilizer=True)
        rig.walk_to(1.0, 0.0, 0.0)          # goPos through the balancer's core
        print(rig.stance())                  # (x, y, heading) of the feet's middle, world
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from rtcf.testing import SimSystem

ROOT = Path(__file__).resolve().parents[2]
COMPOSITION = ROOT / "compositions" / "nao_walk.yaml"
FALL_HEIGHT = 0.22          # [m] torso lower than this: fallen (standing: 0.32)
FALL_TILT = 0.6             # [rad]


@dataclass
class Trace:
    """Samples of a run, one row per 10 ms period (arrays after ``arrays()``)."""

    t: list = field(default_factory=list)
    base_pos: list = field(default_factory=list)        # torso, world (ground truth)
    base_rpy: list = field(default_factory=list)
    com: list = field(default_factory=list)             # MuJoCo's whole-body CoM, world
    zmp: list = field(default_factory=list)             # measured ZMP (contact forces), world
    zmp_ref: list = field(default_factory=list)         # the balancer's reference, its world
    feet_ref: list = field(default_factory=list)        # [lx ly lz lth rx ry rz rth], its world
    soles: list = field(default_factory=list)           # [lx ly lth rx ry rth] ground truth
    contact: list = field(default_factory=list)         # [left, right] carry over 5 N
    q: list = field(default_factory=list)               # measured joints
    q_cmd: list = field(default_factory=list)           # the DCM's command
    q_ref: list = field(default_factory=list)           # the balancer's output

    def arrays(self) -> "Trace":
        out = Trace()
        for k in self.__dataclass_fields__:
            setattr(out, k, np.array(getattr(self, k)))
        return out


class WalkRig:
    """nao_walk.yaml in process (module doc). ``params``: {instance: {param: value}}."""

    def __init__(self, params: dict | None = None, composition: Path = COMPOSITION):
        self.system = SimSystem(composition, params)
        self.abc = self.system["AutoBalancer0"]
        self.st = self.system["Stabilizer0"]
        self.dcm = self.system["DCM0"]
        self.seq = self.system["SequencePlayer0"]
        self.sim = self.dcm.robot_body.sim
        self.trace: Trace | None = None
        self.fell = False
        self.system.advance(0.2)
        self._origin = self.stance()
        self.balancer_origin: tuple[float, float, float] | None = None

    # -- driving (between cycles: deterministic) ------------------------------------------
    def start(self, stabilizer: bool = True) -> None:
        """startAutoBalancer (and startStabilizer), then the transitions."""
        abc = self.abc
        if self.balancer_origin is None:
            self.balancer_origin = self.stance()
        abc.call(lambda: abc.core.start(abc.q_ref))
        self.advance(abc.core.cfg.transition_time + 0.05)
        if stabilizer:
            self.st.call(self.st.core.start)
            self.advance(self.st.core.params.transition_time + 0.05)

    def advance(self, seconds: float, each: Callable[[], None] | None = None) -> None:
        """Run ``seconds`` of simulated time period by period, recording and watching for a
        fall (then it stops early)."""
        n = int(round(seconds / 0.01))
        for _ in range(n):
            self.system.advance(0.01)
            self._sample()
            if each is not None:
                each()
            if self.fallen_now():
                self.fell = True
                return

    def walk(self, request: Callable[[Any], Any], limit: float = 120.0,
             each: Callable[[], None] | None = None) -> float:
        """``request(core)`` in the EC thread (a goPos, ...), then run until no step is left
        (or ``limit`` seconds); returns the walking time [s]."""
        abc = self.abc
        abc.call(lambda: request(abc.core))
        t0 = self.system.now
        while (abc.core.walking or abc.core.mode.startswith("MODE_SYNC")) and \
                self.system.now - t0 < limit and not self.fell:
            self.advance(0.1, each)
        return self.system.now - t0

    def walk_to(self, x: float, y: float, theta: float, **kw: Any) -> float:
        return self.walk(lambda core: core.go_pos(x, y, theta), **kw)

    def push(self, force, duration: float = 0.2, body: str = "torso") -> None:
        """A push at the body's centre of mass from the next physics step."""
        self.sim.push(body, list(force), duration)

    def record(self) -> Trace:
        self.trace = Trace()
        return self.trace

    # -- measuring (ground truth) ---------------------------------------------------------
    def soles(self) -> tuple[np.ndarray, np.ndarray, float, float]:
        m, d = self.sim.mj_model, self.sim.mj_data
        out = []
        for site in ("l_sole", "r_sole"):
            i = m.site(site).id
            R = d.site_xmat[i].reshape(3, 3)
            out.append((d.site_xpos[i].copy(), math.atan2(R[1, 0], R[0, 0])))
        return out[0][0], out[1][0], out[0][1], out[1][1]

    def stance(self) -> tuple[float, float, float]:
        """(x, y, heading) of the middle of the soles, world."""
        pl, pr, yl, yr = self.soles()
        yaw = yl + 0.5 * math.atan2(math.sin(yr - yl), math.cos(yr - yl))
        return (0.5 * (pl[0] + pr[0]), 0.5 * (pl[1] + pr[1]), yaw)

    def moved(self) -> tuple[float, float, float]:
        """The stance's motion since the rig was built, in the start stance's frame."""
        x0, y0, t0 = self._origin
        x, y, t = self.stance()
        c, s = math.cos(-t0), math.sin(-t0)
        dx, dy = x - x0, y - y0
        return (c * dx - s * dy, s * dx + c * dy,
                math.atan2(math.sin(t - t0), math.cos(t - t0)))

    def fallen_now(self) -> bool:
        s = self.sim.sensors
        return bool(s.base_pos[2] < FALL_HEIGHT or abs(s.base_rpy[0]) > FALL_TILT
                    or abs(s.base_rpy[1]) > FALL_TILT)

    def com(self) -> np.ndarray:
        return self.sim.mj_data.subtree_com[1].copy()

    def _sample(self) -> None:
        tr = self.trace
        if tr is None:
            return
        s, core = self.sim.sensors, self.abc.core
        tr.t.append(self.system.now)
        tr.base_pos.append(s.base_pos.copy())
        tr.base_rpy.append(s.base_rpy.copy())
        tr.com.append(self.com())
        tr.zmp.append(s.zmp[:2].copy())
        tr.zmp_ref.append(core.zmp_ref[:2].copy())
        if core.gait is not None:
            f = core.gait.feet
            tr.feet_ref.append([f["lleg"].x, f["lleg"].y, core.gait.foot_z["lleg"],
                                f["lleg"].theta, f["rleg"].x, f["rleg"].y,
                                core.gait.foot_z["rleg"], f["rleg"].theta])
        else:
            tr.feet_ref.append([math.nan] * 8)
        pl, pr, yl, yr = self.soles()
        tr.soles.append([pl[0], pl[1], yl, pr[0], pr[1], yr])
        tr.contact.append([s.lfoot[2] > 5.0, s.rfoot[2] > 5.0])
        tr.q.append(s.q.copy())
        tr.q_cmd.append(self.dcm.cmd_out.value.data.copy())
        tr.q_ref.append(core.q.copy())

    def to_world(self, x, y):
        """Points of the balancer's world frame (arrays) in the simulator's world: the
        balancer's frame is the stance where it first started (ground truth then; the
        stance when the rig was built, if the balancer was started some other way)."""
        x0, y0, t0 = self.balancer_origin or self._origin
        c, s = math.cos(t0), math.sin(t0)
        x, y = np.asarray(x), np.asarray(y)
        return x0 + c * x - s * y, y0 + s * x + c * y

    def close(self) -> None:
        self.system.close()

    def __enter__(self) -> "WalkRig":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def ankle_push_bound(m: float, zc: float, h_push: float, d: float, duration: float,
                     g: float = 9.81) -> float:
    """The largest horizontal push [N] of ``duration`` [s] at height ``h_push`` [m] that the
    ankle strategy can absorb: the linear inverted pendulum (CoM height ``zc``) with the ZMP
    held at the support edge ``d`` [m] ahead of the CoM from the push's start, the capture
    point xi = c + c'/omega reaching that edge at the push's end (the best the feet can do):

        F_max = (zc / h_push) m omega^2 d / (1 - exp(-omega duration)),  omega = sqrt(g/zc)

    (the push's moment about the ZMP counts at its own height, hence zc / h_push)."""
    omega = math.sqrt(g / zc)
    return (zc / h_push) * m * omega * omega * d / (1.0 - math.exp(-omega * duration))
