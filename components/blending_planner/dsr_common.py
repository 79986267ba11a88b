"""DSR_ROBOT2's constants, DR_Error and the position types (posj, posx, posb), for scripts.

Facts from doosan-robotics/doosan-robot2 (DoosanRobotics/doosan-robot2 at
443f0c587059c7c45aba6d523b0edad87de29fee): dsr_common2/imp/DSR_ROBOT2.py (the DR_*
constants), dsr_common2/imp/DR_common2.py (posj, posx, posb, get_posj, get_posx,
get_normal_pos, is_number) and, at a694f8a0334ff3c2476106f8e86e9e111974d249,
common2/imp/DR_error2.py (DR_Error and its types). Where this module differs, it says so:
DR_Error does not shut anything down (DR_error2's constructor calls rclpy.shutdown()), and
the number checks also refuse NaN, infinities and booleans (DR_common2's is_number looks at
the first element of a list only and lets NaN through, which the controller then refuses).
Runs in: the caller's thread.
"""

from __future__ import annotations

import inspect
import math
import numbers
from typing import Any

# -- DR_error2.py ------------------------------------------------------------------------------
DR_ERROR_TYPE = 1000       # a parameter of the wrong type
DR_ERROR_VALUE = 1001      # a parameter of a wrong value (or one this robot cannot do)
DR_ERROR_RUNTIME = 1002    # the system could not do it (DRL: "C extension module error")
DR_ERROR_STOP = 1003       # stopped
DR_ERROR_INVALID_MODBUS_NAME = 1010

# -- DSR_ROBOT2.py -----------------------------------------------------------------------------
POINT_COUNT = 6
DR_SOL_MIN, DR_SOL_MAX = 0, 7
DR_LINE, DR_CIRCLE = 0, 1
DR_BASE, DR_TOOL, DR_WORLD = 0, 1, 2
DR_TC_USER_MIN, DR_TC_USER_MAX = 101, 200
DR_MV_MOD_ABS, DR_MV_MOD_REL = 0, 1
DR_MV_RA_NONE = 0
DR_MV_RA_DUPLICATE, DR_MV_RA_OVERRIDE = 0, 1
DR_MV_COMMAND_NORM = 0
DR_MVS_VEL_NONE, DR_MVS_VEL_CONST = 0, 1
DR_STATE_IDLE, DR_STATE_INIT, DR_STATE_BUSY, DR_STATE_BLEND = 0, 1, 2, 3
DR_STATE_ACC, DR_STATE_CRZ, DR_STATE_DEC = 4, 5, 6
DR_AXIS_X, DR_AXIS_Y, DR_AXIS_Z = 0, 1, 2
DR_AXIS_A, DR_AXIS_B, DR_AXIS_C = 10, 11, 12
DR_OP_SPEED_MIN, DR_OP_SPEED_MAX = 1, 100
DR_QSTOP_STO, DR_QSTOP, DR_SSTOP, DR_HOLD = 0, 1, 2, 3
DR_STOP_FIRST, DR_STOP_LAST = DR_QSTOP_STO, DR_HOLD
DR_COND_NONE = -10000
DR_VELJ_DT_LEN, DR_ACCJ_DT_LEN, DR_VELX_DT_LEN, DR_ACCX_DT_LEN = 6, 6, 2, 2
DR_ANGLE_DT_LEN = 2
DR_VECTOR_U1_LEN, DR_VECTOR_V1_LEN = 3, 3
DR_HOME_TARGET_MECHANIC, DR_HOME_TARGET_USER = 0, 1
DR_MV_ORI_TEACH, DR_MV_ORI_FIXED, DR_MV_ORI_RADIAL = 0, 1, 2
DR_MV_APP_NONE, DR_MV_APP_WELD = 0, 1
ON, OFF = 1, 0

CONSTANTS = [name for name in dir() if name.startswith("DR_")] + ["POINT_COUNT", "ON", "OFF"]


class DR_Error(Exception):
    """DSR's error: ``type`` (DR_ERROR_TYPE 1000, DR_ERROR_VALUE 1001, DR_ERROR_RUNTIME
    1002, DR_ERROR_STOP 1003), ``msg``, and where it was raised from (``funcname``,
    ``lineno``: the DSR call's caller when ``back`` is true, as DR_error2)."""

    def __init__(self, type: int, msg: str = "", back: bool = False):
        super().__init__(type, msg)
        self.type, self.msg = type, msg
        frames = inspect.stack(0)
        depth = min(len(frames) - 1, 2 if back else 1)
        self.lineno, self.funcname = frames[depth].lineno, frames[depth].function

    def __str__(self) -> str:
        return f"DR_Error {self.type}: {self.msg}"


def is_number(x: Any) -> bool:
    """A finite real number (not a bool), or a list / tuple of them."""
    if isinstance(x, (list, tuple)):
        return all(is_number(v) for v in x)
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(x)


def is_int(x: Any) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


class posj(list):
    """Joint angles [deg] J1..J6 (DR_common2's posj): posj(), posj(q1, ..., q6),
    posj([6 values]) or posj(posj)."""

    def __init__(self, *args: Any):
        if len(args) == 0:
            vals = [0.0] * POINT_COUNT
        elif len(args) == 1:
            if not isinstance(args[0], (list, tuple)) or len(args[0]) != POINT_COUNT:
                raise DR_Error(DR_ERROR_TYPE, "Invalid argument type for posj.")
            vals = list(args[0])
        elif len(args) == POINT_COUNT:
            vals = list(args)
        else:
            raise DR_Error(DR_ERROR_TYPE, "Invalid number of arguments for posj.")
        if not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in vals):
            raise DR_Error(DR_ERROR_TYPE, "Invalid type : q1, q2, q3, q4, q5, q6.")
        super().__init__(vals)

    def __str__(self) -> str:
        return "[" + ", ".join(f"{v:0.3f}" for v in self) + "]"


class posx(list):
    """A task pose x, y, z [mm], A, B, C [deg] (Z-Y-Z Euler; DR_common2's posx):
    posx(x, y, z, w, p, r), posx([6 values]) or posx(posx)."""

    def __init__(self, x: Any = 0, y: Any = 0, z: Any = 0, w: Any = 0, p: Any = 0,
                 r: Any = 0):
        if isinstance(x, (list, tuple)) and len(x) == POINT_COUNT:
            vals = list(x)
        else:
            vals = [x, y, z, w, p, r]
        if not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in vals):
            raise DR_Error(DR_ERROR_TYPE, "Invalid type : x, y, z, w, p, r.")
        super().__init__(vals)

    def __str__(self) -> str:
        return "[" + ", ".join(f"{v:0.3f}" for v in self) + "]"


def get_posj(pos: Any) -> posj:
    """DR_common2's get_posj: a posj, or a list of 6 numbers as one; DR_Error else (NaN
    and infinities are a DR_ERROR_VALUE)."""
    if isinstance(pos, posj) or (isinstance(pos, (list, tuple)) and not isinstance(pos, posx)
                                 and len(pos) == POINT_COUNT):
        if not is_number(list(pos)):
            raise DR_Error(DR_ERROR_VALUE, "Invalid value : pos", True)
        return posj(list(pos))
    raise DR_Error(DR_ERROR_TYPE, "Invalid type : pos", True)


def get_posx(pos: Any) -> posx:
    """DR_common2's get_posx: a posx, or a list of 6 numbers as one."""
    if isinstance(pos, posx) or (isinstance(pos, (list, tuple)) and not isinstance(pos, posj)
                                 and len(pos) == POINT_COUNT):
        if not is_number(list(pos)):
            raise DR_Error(DR_ERROR_VALUE, "Invalid value : pos", True)
        return posx(list(pos))
    raise DR_Error(DR_ERROR_TYPE, "Invalid type : pos", True)


def get_normal_pos(pos: Any, def_type: type | None = None) -> list:
    """DR_common2's get_normal_pos: posj / posx as they are, a plain list of 6 as
    ``def_type``."""
    if isinstance(pos, (posx, posj)):
        if not is_number(list(pos)):
            raise DR_Error(DR_ERROR_VALUE, "Invalid value : pos", True)
        return pos
    if isinstance(pos, (list, tuple)) and len(pos) == POINT_COUNT:
        if not is_number(list(pos)):
            raise DR_Error(DR_ERROR_VALUE, "Invalid value : pos", True)
        if def_type in (posj, posx):
            return def_type(list(pos))
    raise DR_Error(DR_ERROR_TYPE, "Invalid type : pos", True)


def get_param(x: Any, y: Any) -> Any:
    """DR_common2's get_param: x if given, else y (the long and the short keyword)."""
    return x if x is not None else y


class posb:
    """One moveb segment (DR_common2's posb): a DR_LINE to posx1, or a DR_CIRCLE through
    posx1 to posx2, with a blending radius [mm] into the next segment."""

    def __init__(self, seg_type: int, posx1: Any, posx2: Any = None, radius: float = 0):
        if not is_int(seg_type):
            raise DR_Error(DR_ERROR_TYPE, "Invalid type : seg_type")
        if seg_type not in (DR_LINE, DR_CIRCLE):
            raise DR_Error(DR_ERROR_VALUE, "Invalid value : seg_type")
        self._seg_type = int(seg_type)
        self._posx1 = get_posx(posx1)
        self._posx2 = None
        if seg_type == DR_LINE and posx2 is not None:
            raise DR_Error(DR_ERROR_VALUE, "Invalid value : pos2")
        if seg_type == DR_CIRCLE:
            if posx2 is None:
                raise DR_Error(DR_ERROR_VALUE, "Invalid value : pos2")
            self._posx2 = get_posx(posx2)
        if not isinstance(radius, numbers.Real) or isinstance(radius, bool):
            raise DR_Error(DR_ERROR_TYPE, "Invalid type : radius")
        if not radius >= 0:
            raise DR_Error(DR_ERROR_VALUE, "Invalid value : radius")
        self._radius = radius

    def to_list(self) -> list:
        return [self._seg_type, self._posx1, self._posx2, self._radius]

    def segment(self) -> list[float]:
        """The 14 numbers of MoveBlending.srv: pos1, pos2 (zeros for a line), type, radius."""
        p2 = self._posx2 if self._posx2 is not None else [0.0] * POINT_COUNT
        return [float(v) for v in self._posx1] + [float(v) for v in p2] + \
            [float(self._seg_type), float(self._radius)]
