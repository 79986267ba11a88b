"""Doosan's DRL / DSR_ROBOT2 blended-move calls (moveb, amoveb, posb, posx, set_velx,
set_accx, set_ref_coord, mwait, check_motion, DR_Error and the DR_ constants) for scripts
written for a Doosan arm: ``from DSR_ROBOT2 import *`` becomes
``from rtcf.clients.dsr import *``. Defined in components/blending_planner/dsr.py."""

from . import components_on_path

components_on_path()

from blending_planner.dsr import *  # noqa: E402,F401,F403
from blending_planner.dsr import __all__  # noqa: E402,F401
