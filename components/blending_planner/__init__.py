"""BlendingPlanner component (Doosan MoveBlending / moveb / amoveb).

Pure core modules (no rtcf / omniORB import): ``geometry`` (rotations, path pieces: lines,
arcs, Hermite blends), ``planner`` (request validation, blending, the speed profile,
sampling) and ``arm`` (the IK seam to the Kinematics core). The RT component is
``component.BlendingPlanner``; its servant is in ``service``.
"""

from .component import BlendingPlanner
from .planner import Plan, PlanResult, Request, Samples, plan

__all__ = ["BlendingPlanner", "Plan", "PlanResult", "Request", "Samples", "plan"]
