"""NAOqi's ``motion`` module, the constants ALMotion scripts use (``import motion`` in NAOqi;
``from rtcf_components.clients import motion`` here): spaces and axis masks, as idl/KinematicsService.idl
and NAOqi's documentation number them."""

FRAME_TORSO = 0
FRAME_WORLD = 1
FRAME_ROBOT = 2

AXIS_MASK_X = 1
AXIS_MASK_Y = 2
AXIS_MASK_Z = 4
AXIS_MASK_WX = 8
AXIS_MASK_WY = 16
AXIS_MASK_WZ = 32
AXIS_MASK_VEL = 7
AXIS_MASK_ROT = 56
AXIS_MASK_ALL = 63
