"""BlendingPlanner component (Doosan MoveBlending / moveb / amoveb), spec section 4.

Pure core modules (no rtcf / omniORB import): ``geometry`` (rotations, path pieces: lines,
arcs, Hermite blends) and ``planner`` (request validation, blending, the speed profile,
sampling).
"""

from .planner import Plan, PlanResult, Request, Samples, plan

__all__ = ["Plan", "PlanResult", "Request", "Samples", "plan"]
