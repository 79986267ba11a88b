"""AutoBalancer component: hrpsys-base's AutoBalancer (gait generator and CoM control).

Pure core modules (no rtcf / omniORB import): ``lipm`` (ZMP preview control of the linear
inverted pendulum, Kajita et al. 2003), ``footsteps`` (planar foot poses, stride limits, the
goPos planner), ``gait`` (footsteps -> ZMP reference, CoM, swing-foot trajectories), ``com``
(the whole-body centre of mass from the simulator's link masses), ``legik`` (both legs'
inverse kinematics with NAO's shared hip yaw-pitch motor) and ``core`` (the balancer's modes
and cycle). The RT component is ``autobalancer.component.AutoBalancer``.
"""

from .footsteps import Footstep, FootstepError, Pose2, StrideLimits
from .gait import GaitError, GaitGenerator, GaitParams
from .lipm import PreviewController, PreviewError, lipm_closed_form, preview_gains

__all__ = ["Footstep", "FootstepError", "GaitError", "GaitGenerator", "GaitParams", "Pose2",
           "PreviewController", "PreviewError", "StrideLimits", "lipm_closed_form",
           "preview_gains"]
