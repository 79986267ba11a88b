"""Doosan reference frames and pose arithmetic (pure: numpy only). Poses are (p [mm], R).

Frames, as DSR_ROBOT2 numbers them (doosan-robotics/doosan-robot2 at
443f0c587059c7c45aba6d523b0edad87de29fee, dsr_common2/imp/DSR_ROBOT2.py): DR_BASE 0 (the
robot base), DR_TOOL 1 (the TCP: for a motion, the TCP at the motion's start), DR_WORLD 2 (the
component's world_frame parameter, the base by default) and user frames DR_TC_USER_MIN 101
.. DR_TC_USER_MAX 200 (the user_frames parameter and set_user_cart_coord).

Relative targets (mod=DR_MV_MOD_REL), the project's reading of Doosan's movec text, for
every motion: the translation is added in the axes of the ref frame, the rotation composes
as R_delta . R_prev in the ref frame's axes, and as R_prev . R_delta for DR_TOOL.
"""

from __future__ import annotations

import numpy as np

from .geometry import pose_from_posx, posx_from_pose, rot_zyz

BASE, TOOL, WORLD = 0, 1, 2
USER_MIN, USER_MAX = 101, 200
EPS = 1e-9

Pose = tuple   # (p [mm] (3,), R (3, 3))


class FrameError(ValueError):
    """An unknown or degenerate frame; the message names it."""


def matrix(p: np.ndarray, r: np.ndarray) -> np.ndarray:
    t = np.eye(4)
    t[:3, :3], t[:3, 3] = r, p
    return t


def frame_pose(ref: int, frames: dict[int, np.ndarray], tool: Pose | None) -> Pose:
    """(p, R) of frame ``ref`` in the base frame. Raises FrameError for a frame that is not
    there (an unconfigured user frame names its number)."""
    if ref == BASE:
        return np.zeros(3), np.eye(3)
    if ref == TOOL:
        if tool is None:
            raise FrameError("ref 1 (DR_TOOL) is not available here")
        return tool
    f = frames.get(ref)
    if f is None:
        if ref == WORLD:
            return np.zeros(3), np.eye(3)
        if USER_MIN <= ref <= USER_MAX:
            raise FrameError(f"ref {ref}: user frame {ref} is not set (set_user_cart_coord, "
                             "or the user_frames parameter)")
        raise FrameError(f"ref must be 0 (DR_BASE), 1 (DR_TOOL), 2 (DR_WORLD) or a user "
                         f"frame {USER_MIN}..{USER_MAX}, got {ref}")
    return f[:3, 3].copy(), f[:3, :3].copy()


def to_base(x: list[float], ref: int, frames: dict[int, np.ndarray],
            tool: Pose | None = None) -> Pose:
    """A posx given in frame ``ref`` as (p, R) in the base frame."""
    fp, fr = frame_pose(ref, frames, tool)
    p, r = pose_from_posx(x)
    return fp + fr @ p, fr @ r


def from_base(p: np.ndarray, r: np.ndarray, ref: int, frames: dict[int, np.ndarray],
              tool: Pose | None = None) -> list[float]:
    """The base-frame pose (p, R) as a posx in frame ``ref``."""
    fp, fr = frame_pose(ref, frames, tool)
    return posx_from_pose(fr.T @ (p - fp), fr.T @ r)


def relative(prev: Pose, delta: list[float], ref: int, frames: dict[int, np.ndarray],
             tool: Pose | None = None) -> Pose:
    """``prev`` moved by ``delta`` (a posx) in the axes of ``ref`` (see the module doc)."""
    _, fr = frame_pose(ref, frames, tool if tool is not None else prev)
    d, rd = np.asarray(delta[:3], dtype=float), rot_zyz(*delta[3:6])
    p = prev[0] + fr @ d
    if ref == TOOL:
        return p, prev[1] @ rd
    return p, (fr @ rd @ fr.T) @ prev[1]


def target(x: list[float], ref: int, mod: int, start: Pose,
           frames: dict[int, np.ndarray]) -> Pose:
    """The base-frame pose a motion to posx ``x`` aims at from ``start``: absolute in frame
    ``ref`` (DR_TOOL: the TCP at the start) or relative to ``start``."""
    if mod == 1:
        return relative(start, x, ref, frames, start)
    return to_base(x, ref, frames, start)


def trans(pos: list[float], delta: list[float], ref: int, ref_out: int,
          frames: dict[int, np.ndarray]) -> list[float]:
    """DSR's trans(pos, delta, ref, ref_out): ``pos`` given in ``ref`` moved by ``delta`` in
    the axes of ``ref`` (DR_TOOL: in the tool frame of ``pos`` itself, and the result stays in
    the coordinates of ``pos``), then expressed in ``ref_out``."""
    if ref == TOOL:
        p, r = pose_from_posx(pos)
        d, rd = np.asarray(delta[:3], dtype=float), rot_zyz(*delta[3:6])
        return posx_from_pose(p + r @ d, r @ rd)
    p, r = to_base(pos, ref, frames)
    moved = relative((p, r), delta, ref, frames)
    return from_base(*moved, ref_out, frames)


def from_points(x1: list[float], x2: list[float], x3: list[float],
                origin: list[float]) -> Pose:
    """The frame whose x axis points from x1 to x2, whose x-y plane holds x3 (y towards it)
    and whose origin is the position of ``origin`` (set_user_cart_coord(x1, x2, x3, pos))."""
    a, b, c = (np.asarray(v[:3], dtype=float) for v in (x1, x2, x3))
    return from_vectors(b - a, c - a, origin)


def from_vectors(u: list[float] | np.ndarray, v: list[float] | np.ndarray,
                 origin: list[float]) -> Pose:
    """x along u, y in the plane of u and v towards v, z = x cross y; origin the position of
    ``origin`` (set_user_cart_coord(u1, v1, pos)). Raises FrameError when degenerate."""
    u, v = np.asarray(u, dtype=float), np.asarray(v, dtype=float)
    nu = np.linalg.norm(u)
    if not np.all(np.isfinite(u)) or not np.all(np.isfinite(v)) or nu < EPS:
        raise FrameError("the x direction is zero or not finite")
    x = u / nu
    y = v - x * float(x @ v)
    ny = np.linalg.norm(y)
    if ny < 1e-6 * max(1.0, float(np.linalg.norm(v))):
        raise FrameError("the two directions are parallel: they span no plane")
    y /= ny
    z = np.cross(x, y)
    return np.asarray(origin[:3], dtype=float), np.column_stack((x, y, z))
