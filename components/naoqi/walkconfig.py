"""NAOqi's move config for NAO (ALMotion's moveTo / move / moveToward "moveConfig").

Pure: imports neither rtcf nor omniORB. The names, defaults and ranges are those of NAOqi
2.x's Locomotion control page for NAO (doc.aldebaran.com/2-1/naoqi/motion/control-walk.html,
"Move config"):

=================  ======================================================  =======  =====  =====
name               meaning                                                  default  min    max
=================  ======================================================  =======  =====  =====
MaxStepX           maximum forward translation along X [m]                 0.040    0.001  0.080
MaxStepY           absolute maximum lateral translation along Y [m]        0.140    0.101  0.160
MaxStepTheta       absolute maximum rotation around Z [rad]                0.349    0.001  0.524
MaxStepFrequency   maximum step frequency, normalised                      1.0      0.0    1.0
StepHeight         peak foot elevation along Z [m]                         0.020    0.005  0.040
TorsoWx            peak torso rotation around X [rad]                      0.000    -0.122 0.122
TorsoWy            peak torso rotation around Y [rad]                      0.000    -0.122 0.122
=================  ======================================================  =======  =====  =====

How this system maps them (its own decisions, documented in docs/walking.md):

* MaxStepY is the distance between the feet (NAO's stance is 0.10 m): a sideways step takes
  the foot at most MaxStepY - 0.10 out; inward the feet may come 12 mm closer than the stance
  (NAO's own footstep clipping, ros-naoqi nao_apps nao_footstep_clipping.py: min_step_y
  0.088 m). Backward steps are limited to MaxStepX as well (nao_footstep_clipping:
  min_step_x -0.04); the inward turn of a foot to MaxStepTheta / 3.
* MaxStepFrequency f sets the step duration T = 0.6 - 0.2 f s (0.4 s at f = 1: with the
  default MaxStepX that is 0.1 m/s, NAO's walking speed).
* TorsoWx / TorsoWy other than 0 are refused: the torso keeps its StandInit attitude.

A value outside its range, an unknown name, or anything not a number is refused whole
(MoveConfigError names it); nothing is clipped silently.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

NAMES = ("MaxStepX", "MaxStepY", "MaxStepTheta", "MaxStepFrequency", "StepHeight", "TorsoWx",
         "TorsoWy")
DEFAULT = {"MaxStepX": 0.040, "MaxStepY": 0.140, "MaxStepTheta": 0.349,
           "MaxStepFrequency": 1.0, "StepHeight": 0.020, "TorsoWx": 0.0, "TorsoWy": 0.0}
MIN = {"MaxStepX": 0.001, "MaxStepY": 0.101, "MaxStepTheta": 0.001, "MaxStepFrequency": 0.0,
       "StepHeight": 0.005, "TorsoWx": -0.122, "TorsoWy": -0.122}
MAX = {"MaxStepX": 0.080, "MaxStepY": 0.160, "MaxStepTheta": 0.524, "MaxStepFrequency": 1.0,
       "StepHeight": 0.040, "TorsoWx": 0.122, "TorsoWy": 0.122}
STANCE = 0.10               # [m] between NAO's feet (2 x HipOffsetY)
INSIDE = 0.012              # [m] the feet may come this much closer (0.088 m apart)
T_SLOW, T_FAST = 0.6, 0.4   # [s] step duration at MaxStepFrequency 0 and 1


class MoveConfigError(ValueError):
    """A move config NAOqi would not take; nothing changed."""


def parse(config) -> dict:
    """A NAOqi move config ([["MaxStepX", 0.06], ...], or a dict) merged over the defaults.
    Raises MoveConfigError naming the bad entry."""
    out = dict(DEFAULT)
    if config is None:
        return out
    items = config.items() if isinstance(config, dict) else config
    try:
        items = list(items)
    except TypeError:
        raise MoveConfigError(f"move config: expected a list of [name, value] pairs, got "
                              f"{config!r}") from None
    for i, item in enumerate(items):
        try:
            name, value = item
        except (TypeError, ValueError):
            raise MoveConfigError(f"move config[{i}]: expected [name, value], got "
                                  f"{item!r}") from None
        if name not in DEFAULT:
            raise MoveConfigError(f"move config[{i}]: unknown name {name!r}; NAO's are "
                                  f"{', '.join(NAMES)}")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise MoveConfigError(f"move config {name}: expected a number, got {value!r}")
        v = float(value)
        if not (math.isfinite(v) and MIN[name] <= v <= MAX[name]):
            raise MoveConfigError(f"move config {name}: {value!r} is outside "
                                  f"[{MIN[name]:g}, {MAX[name]:g}]")
        out[name] = v
    for k in ("TorsoWx", "TorsoWy"):
        if out[k] != 0.0:
            raise MoveConfigError(f"move config {k}: {out[k]:g}: only 0 is supported (the "
                                  f"torso keeps its attitude)")
    return out


@dataclass(frozen=True)
class Gait:
    """A parsed config as the balancer takes it."""

    forward: float          # [m]
    outside: float          # [m]
    theta: float            # [rad]
    step_time: float        # [s]
    step_height: float      # [m]

    @property
    def max_velocity(self) -> tuple[float, float, float]:
        """(vx, vy, vtheta) at full stride [m/s, m/s, rad/s]: a stride per step forward, a
        sideways or turning stride per two steps (the other foot follows)."""
        return (self.forward / self.step_time, self.outside / (2.0 * self.step_time),
                self.theta / (2.0 * self.step_time))


def gait(cfg: dict) -> Gait:
    f = cfg["MaxStepFrequency"]
    return Gait(cfg["MaxStepX"], cfg["MaxStepY"] - STANCE, cfg["MaxStepTheta"],
                T_SLOW - (T_SLOW - T_FAST) * f, cfg["StepHeight"])


def as_list(cfg: dict) -> list:
    """NAOqi's form: [[name, value], ...] in NAOqi's order."""
    return [[k, float(cfg[k])] for k in NAMES]
