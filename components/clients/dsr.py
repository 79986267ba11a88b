"""Doosan's DRL / DSR_ROBOT2 calls for scripts written for a Doosan arm: ``from DSR_ROBOT2
import *`` becomes ``from rtcf_components.clients.dsr import *``. Defined in
``rtcf_components.blending_planner.dsr``."""

from ..blending_planner.dsr import *  # noqa: F401,F403
from ..blending_planner.dsr import __all__  # noqa: F401
