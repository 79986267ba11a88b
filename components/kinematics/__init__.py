"""Kinematics component (NAO ALMotion's robot model).

Pure core modules (no rtcf / omniORB import): ``model`` (robot models as data: mDH tables,
URDF-style joint lists, URDF files), ``codegen`` (constant-folded FK formulas) and
``algorithms`` (FK for one or N configurations, frames, spaces, Jacobians, IK).
"""

from .algorithms import (FRAME_ROBOT, FRAME_TORSO, FRAME_WORLD, IKResult, body_transform,
                         chain_fk, chain_fk_batch, chain_frames, chain_jacobian, position6d,
                         solve_ik, transform, transform_from_6d)
from .model import Chain, Model, ModelError, load_model

__all__ = ["FRAME_ROBOT", "FRAME_TORSO", "FRAME_WORLD", "Chain", "IKResult", "Model",
           "ModelError", "body_transform", "chain_fk", "chain_fk_batch", "chain_frames",
           "chain_jacobian", "load_model", "position6d", "solve_ik", "transform",
           "transform_from_6d"]
