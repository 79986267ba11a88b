"""Joint groups of the player (hrpsys's addJointGroup): pure, no rtcf / omniORB. Runs in: EC thread.

A group owns an interpolator over some joints; from its first command until it is removed
its values win in qRef for those joints (groups in name order); removal blends it back to
the whole-body Q interpolator over 2.5 s. ``GroupCommands`` is mixed into
SequencePlayerCore (it uses the core's validation helpers and interpolators).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .errors import PlayerError
from .interpolator import Interpolator

REMOVE_BLEND_TIME = 2.5        # [s] a removed group blends back to Q (hrpsys)


@dataclass
class Group:
    """A joint group: its own interpolator over some joints."""
    name: str                      # upper case
    joints: tuple[str, ...]
    index: np.ndarray
    inter: Interpolator
    used: bool = False             # overrides qRef from its first command on
    removing: bool = False
    blend_T: float = 0.0
    blend_r: float = 0.0

    def is_empty(self) -> bool:
        return self.inter.is_empty() and not self.removing


class GroupCommands:
    """The group operations of SequencePlayerCore."""

    def group(self, gname: str) -> Group:
        g = self.groups.get(str(gname).upper())
        if g is None:
            known = ", ".join(sorted(self.groups)) or "none"
            raise PlayerError(f"unknown joint group {gname!r} (groups: {known})")
        return g

    def group_is_empty(self, gname: str) -> bool:
        """An unknown group counts as empty (waitInterpolationOfGroup)."""
        g = self.groups.get(str(gname).upper())
        return g is None or g.is_empty()

    def add_joint_group(self, gname: str, jnames: Sequence[str]) -> None:
        name = str(gname).upper()
        if not name:
            raise PlayerError("group name must not be empty")
        if name in self.groups:
            raise PlayerError(f"joint group {name!r} already exists")
        jn = tuple(jnames)
        if not jn:
            raise PlayerError(f"joint group {name!r}: no joint given")
        idx = np.array([self.joint_index(j) for j in jn], dtype=np.int64)
        if len(set(idx.tolist())) != idx.size:
            raise PlayerError(f"joint group {name!r}: a joint is listed twice: {list(jn)}")
        ip = Interpolator(len(jn), self.dt, self.mode)
        g = Group(name, jn, idx, ip)
        self.groups[name] = g
        self._order = [self.groups[k] for k in sorted(self.groups)]

    def remove_joint_group(self, gname: str) -> None:
        """Start blending the group back into Q (2.5 s); it is deleted at the end."""
        g = self.group(gname)
        if not g.used:
            self._delete_group(g.name)
            return
        if g.removing:
            return
        g.inter.clear()
        g.removing = True
        g.blend_T = g.blend_r = REMOVE_BLEND_TIME

    def _delete_group(self, name: str) -> None:
        self.groups.pop(name, None)
        self._order = [self.groups[k] for k in sorted(self.groups)]

    def _current_q(self, skip: Group | None = None) -> np.ndarray:
        q = self.q.x.copy()
        for g in self._order:
            if g.used and g is not skip:
                q[g.index] = g.inter.x
        return q

    def _group_for_command(self, gname: str) -> Group:
        g = self.group(gname)
        if g.removing:
            raise PlayerError(f"joint group {g.name!r} is being removed")
        return g

    def _use(self, g: Group) -> None:
        """First command to a group: start from the current joint values."""
        if not g.used:
            g.inter.reset(self._current_q(skip=g)[g.index])
            g.used = True

    def set_joint_angles_of_group(self, gname: str, jvs: Sequence[float], tm: float) -> None:
        g = self._group_for_command(gname)
        goal = self._vec(jvs, len(g.joints), f"jvs of group {g.name}")
        T = self._tm(tm)
        self._init_if_idle()
        self._use(g)
        g.inter.set_goal(goal, T)

    def set_joint_angles_sequence_of_group(self, gname: str, jvss, tms) -> None:
        g = self._group_for_command(gname)
        if len(jvss) == 0:
            raise PlayerError("jvss: at least one keyframe is needed, got 0")
        keys = self._rows(jvss, len(g.joints), f"jvss of group {g.name}")
        T = self._tms(tms, keys.shape[0])
        self._init_if_idle()
        self._use(g)
        g.inter.override_from_front()
        g.inter.go_keyframes(keys, T)

    def play_pattern_of_group(self, gname: str, pos, tm) -> None:
        g = self._group_for_command(gname)
        keys, T = self._keyframes(pos, tm, len(g.joints), f"pos of group {g.name}")
        self._init_if_idle()
        self._use(g)
        g.inter.go_keyframes(keys, T)     # 0: the average-speed rule

    def clear_joint_angles_of_group(self, gname: str) -> None:
        g = self._group_for_command(gname)
        if not g.used:
            raise PlayerError(f"joint group {g.name!r} has not been used yet")
        g.inter.hold()

    def clear_of_group(self, gname: str) -> None:
        g = self.group(gname)
        g.inter.clear()

    def checked_tm(self, tm: float) -> float:
        """tm validated (>= 0, finite), 0 becoming one dt. Pure: any thread."""
        return self._tm(tm)

    def target_pose_start(self, gname: str) -> tuple[tuple[str, ...], np.ndarray,
                                                      np.ndarray, np.ndarray]:
        """Where a setTargetPose on group gname starts: its joint names, every joint
        (model order) as the group's next motion will start from it, and the base pose."""
        g = self._group_for_command(gname)
        if not self.q_init_ok:
            raise PlayerError(f"cannot initialise: qInit does not have {self.dof} values")
        if self.is_empty():
            q = self.q_init.copy()
            for other in self._order:
                if other.used:
                    q[other.index] = other.inter.x
            base_pos, base_rpy = self.base_pos_init.copy(), self.base_rpy_init.copy()
        else:
            q = self._current_q()
            base_pos, base_rpy = self.p.x.copy(), self.rpy.x.copy()
        if g.used:
            q[g.index] = g.inter.tail[0]
        return g.joints, q, base_pos, base_rpy
