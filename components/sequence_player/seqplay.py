"""The player (hrpsys seqplay): eight signal interpolators, joint groups, patterns.

Pure: no rtcf / omniORB import, no clock. Runs in: EC thread (the component owns it); the
only methods meant for other threads are the ``prepare_*`` functions, which read files and
compute the state-independent parts of a pattern.

Commands validate everything first and raise PlayerError (a ValueError) naming the bad
value; a rejected command changes nothing. The servant turns PlayerError into hrpsys's
``false``. Project decisions (idl/SequencePlayerService.idl):

* tm == 0 in a command reaches the goal in one sample (one dt); tm < 0 is refused;
* online goals (setJointAngle, ...WithMask, setBasePos, setBaseRpy, setZmp, setWrenches,
  setJointAnglesOfGroup) replace the running goal in place from the current (x, v, a);
* playPattern applies pos, rpy and zmp as named.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np

from .errors import PlayerError
from .groups import Group, GroupCommands
from .interpolator import (EPS, HOFFARBIB, MODES, TM_LIMIT, VALUE_LIMIT, Interpolator,
                           rule_v)
from .pattern import Track, read_pattern

SIGNALS = ("q", "zmp", "acc", "p", "rpy", "tq", "wrenches", "optional")
WRENCH_AVG_SPEED = 100.0       # [N/s] average-speed rule of the wrench interpolator


@dataclass
class PreparedPattern:
    """What loadPattern read, with the state-independent samples already computed."""
    basename: str
    first: dict[str, np.ndarray] = field(default_factory=dict)     # signal -> (1, n)
    rest: dict[str, np.ndarray | None] = field(default_factory=dict)
    files: tuple[str, ...] = ()
    samples: int = 0


class SequencePlayerCore(GroupCommands):
    """hrpsys's seqplay, vectorised. ``step()`` once per cycle; outputs are ``q_ref`` and
    the ``x`` of the other interpolators (``zmp``, ``acc``, ``p``, ``rpy``, ``tq``,
    ``wrenches``, ``optional``)."""

    def __init__(self, joint_names: Sequence[str], dt: float,
                 force_sensors: Sequence[str] = (), optional_dim: int = 1,
                 base_pos: Sequence[float] = (0.0, 0.0, 0.0)):
        if not dt > 0.0:
            raise PlayerError(f"dt must be > 0 [s], got {dt}")
        self.joint_names = tuple(joint_names)
        self.dof = len(self.joint_names)
        self._jindex = {n: i for i, n in enumerate(self.joint_names)}
        self.force_sensors = tuple(force_sensors)
        self.optional_dim = int(optional_dim)
        self.dt = float(dt)
        dims = {"q": self.dof, "zmp": 3, "acc": 3, "p": 3, "rpy": 3, "tq": self.dof,
                "wrenches": 6 * len(self.force_sensors), "optional": self.optional_dim}
        self.dims = dims
        self.inter = {s: Interpolator(n, self.dt, HOFFARBIB,
                                      WRENCH_AVG_SPEED if s == "wrenches" else 0.5)
                      for s, n in dims.items()}
        self.q, self.zmp, self.acc, self.p, self.rpy, self.tq, self.wrenches, \
            self.optional = (self.inter[s] for s in SIGNALS)
        self._inters = tuple(self.inter.values())    # the same eight for the core's life
        self.mode = HOFFARBIB
        # inputs, written by the shell (qInit, basePosInit, baseRpyInit, zmpRefInit)
        self.q_init = np.zeros(self.dof)
        self.q_init_ok = True
        self.base_pos_init = np.array(base_pos, dtype=float)
        self.base_rpy_init = np.zeros(3)
        self.zmp_init = np.zeros(3)
        self.p.reset(self.base_pos_init)
        # outputs
        self.q_ref = np.zeros(self.dof)
        self.groups: dict[str, Group] = {}
        self._order: list[Group] = []          # groups in name order
        self._clear_pending = False
        self.max_ik_error = (1e-4, 1e-3)       # [m], [rad]
        self.max_ik_iteration = 50

    # -- per cycle (EC thread) ---------------------------------------------------------------
    def is_empty(self) -> bool:
        """True iff every interpolator and every group is empty (hrpsys isEmpty)."""
        for ip in self._inters:
            if not ip.is_empty():
                return False
        for g in self._order:
            if not g.is_empty():
                return False
        return True

    def step(self) -> bool:
        """Take one sample of everything that moves. Returns False (and changes nothing)
        when the player is empty: hrpsys then writes no output."""
        if self._clear_pending:
            self._clear_pending = False
            self.clear()
        if self.is_empty():
            return False
        for ip in self.inter.values():
            ip.step()
        q_ref = self.q_ref
        q_ref[:] = self.q.x
        removed = []
        for g in self._order:
            if not g.used:
                continue
            g.inter.step()
            if g.removing:
                w = self._blend_weight(g)
                q_ref[g.index] = w * g.inter.x + (1.0 - w) * self.q.x[g.index]
                if g.blend_r == 0.0:
                    removed.append(g.name)
            else:
                q_ref[g.index] = g.inter.x
        for name in removed:
            self._delete_group(name)
        return True

    def _blend_weight(self, g: Group) -> float:
        """Weight of the group in qRef while it is removed: 1 -> 0, minimum jerk."""
        dt = self.dt
        g.blend_r = g.blend_r - dt if g.blend_r > dt + EPS else 0.0
        s = (g.blend_T - g.blend_r) / g.blend_T
        return 1.0 - s * s * s * (10.0 - 15.0 * s + 6.0 * s * s)

    def reference(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Copies of the current q, basePos, baseRpy and zmp (getReference)."""
        return self.q_ref.copy(), self.p.x.copy(), self.rpy.x.copy(), self.zmp.x.copy()

    # -- initial state -----------------------------------------------------------------------
    def set_inputs(self, q_init: np.ndarray | None = None, base_pos: np.ndarray | None = None,
                   base_rpy: np.ndarray | None = None, zmp: np.ndarray | None = None) -> None:
        """New input port values (the shell calls this when a port has new data). A qInit
        of the wrong length makes the player unable to initialise until a good one comes."""
        if q_init is not None:
            # an array's own size: the same number as np.size, without its wrapper (qInit
            # comes every cycle)
            size = q_init.size if type(q_init) is np.ndarray else np.size(q_init)
            if size == self.dof:
                self.q_init[:] = q_init
                self.q_init_ok = True
            else:
                self.q_init_ok = False
        if base_pos is None and base_rpy is None and zmp is None:
            return
        for arr, val in ((self.base_pos_init, base_pos), (self.base_rpy_init, base_rpy),
                         (self.zmp_init, zmp)):
            if val is not None and np.size(val) == 3:
                arr[:] = val

    def _init_if_idle(self) -> None:
        """Any command on an idle player first starts from the input ports."""
        if not self.q_init_ok:
            raise PlayerError(f"cannot initialise: qInit does not have {self.dof} values")
        if not self.is_empty():
            return
        self.q.reset(self.q_init)
        self.p.reset(self.base_pos_init)
        self.rpy.reset(self.base_rpy_init)
        self.zmp.reset(self.zmp_init)
        self.acc.reset(np.zeros(3))
        self.q_ref[:] = self._current_q()

    def set_initial_state(self) -> None:
        """If idle: the input ports become one-sample goals, so the outputs are written once
        with those values."""
        if not self.q_init_ok:
            raise PlayerError(f"cannot initialise: qInit does not have {self.dof} values")
        if not self.is_empty():
            return
        self._init_if_idle()
        for s in ("q", "p", "rpy", "zmp", "acc"):
            ip = self.inter[s]
            ip.go(ip.x.copy(), self.dt)

    # -- validation helpers ------------------------------------------------------------------
    def _tm(self, tm: float, what: str = "tm") -> float:
        tm = float(tm)
        if not tm >= 0.0 or math.isinf(tm):
            raise PlayerError(f"{what} must be >= 0 and finite [s], got {tm}")
        if tm > TM_LIMIT:
            raise PlayerError(f"{what} must be at most {TM_LIMIT:g} [s] (longer overflows the "
                              f"interpolation), got {tm}")
        return tm if tm > 0.0 else self.dt           # PD: tm == 0 is one sample

    def _vec(self, v: Iterable[float], n: int, what: str) -> np.ndarray:
        arr = np.asarray(list(v) if not isinstance(v, np.ndarray) else v, dtype=float)
        arr = arr.reshape(-1)
        if arr.size != n:
            raise PlayerError(f"{what}: expected {n} values, got {arr.size}")
        if not np.all(np.isfinite(arr)):
            raise PlayerError(f"{what}: values must be finite, got {arr.tolist()}")
        if arr.size and float(np.abs(arr).max()) > VALUE_LIMIT:
            raise PlayerError(f"{what}: values must be within +-{VALUE_LIMIT:g} (larger ones "
                              f"overflow the interpolation), got {arr.tolist()}")
        return arr

    def _keyframes(self, pos: Sequence[Sequence[float]], tm: Sequence[float], n: int,
                   what: str) -> tuple[np.ndarray, np.ndarray]:
        """Keyframes (k, n) and their durations (k,) [s] validated: one duration for all or
        one per keyframe, each >= 0 and finite (0: the average-speed rule). Pure."""
        k = len(pos)
        if k == 0:
            raise PlayerError(f"{what}: at least one keyframe is needed, got 0")
        keys = self._rows(pos, n, what)
        t = list(tm)
        if len(t) not in (1, k):
            raise PlayerError(f"tm: expected 1 or {k} durations, got {len(t)}")
        T = np.asarray(t * k if len(t) == 1 else t, dtype=float)
        bad = ~(T >= 0.0) | np.isinf(T)
        if bad.any():
            raise PlayerError(f"tm: durations must be >= 0 and finite [s], got {T[bad][0]}")
        if T.max() > TM_LIMIT:
            raise PlayerError(f"tm: durations must be at most {TM_LIMIT:g} [s] (longer "
                              f"overflows the interpolation), got {T.max()}")
        return keys, T

    def _rows(self, rows: Sequence[Sequence[float]], n: int, what: str) -> np.ndarray:
        out = np.empty((len(rows), n))
        for i, r in enumerate(rows):
            out[i] = self._vec(r, n, f"{what}[{i}]")
        return out

    def _tms(self, tms: Sequence[float], k: int, what: str = "tms") -> np.ndarray:
        t = np.asarray(list(tms), dtype=float).reshape(-1)
        if t.size != k:
            raise PlayerError(f"{what}: expected {k} durations (one per keyframe), "
                              f"got {t.size}")
        return np.array([self._tm(x, f"{what}[{i}]") for i, x in enumerate(t)])

    def _bmask(self, mask: Sequence[bool], allow_empty: bool = False) -> np.ndarray:
        m = np.asarray(list(mask), dtype=bool).reshape(-1)
        if m.size == 0 and allow_empty:
            return np.ones(self.dof, dtype=bool)
        if m.size != self.dof:
            extra = " or 0" if allow_empty else ""
            raise PlayerError(f"mask: expected {self.dof}{extra} values, got {m.size}")
        return m

    def joint_index(self, name: str) -> int:
        try:
            return self._jindex[name]
        except KeyError:
            raise PlayerError(f"unknown joint {name!r}") from None

    # -- whole-body joint commands -----------------------------------------------------------
    def set_joint_angles(self, jvs: Sequence[float], tm: float) -> None:
        """All joints to jvs in tm, through the sequence path."""
        g = self._vec(jvs, self.dof, "jvs")
        T = self._tm(tm)
        self._init_if_idle()
        self.q.override_from_front()
        self.q.go(g, T)

    def set_joint_angles_with_mask(self, jvs: Sequence[float], mask: Sequence[bool],
                                   tm: float) -> None:
        """Online goal: masked joints to jvs, the others to qInit (the held command)."""
        g = self._vec(jvs, self.dof, "jvs")
        m = self._bmask(mask)
        T = self._tm(tm)
        self._init_if_idle()
        self.q.set_goal(np.where(m, g, self.q_init), T)

    def set_joint_angle(self, jname: str, jv: float, tm: float) -> None:
        """Online goal: one joint to jv, the others re-targeted to their current values."""
        i = self.joint_index(jname)
        jv = self._vec([jv], 1, f"angle of {jname}")[0]
        T = self._tm(tm)
        self._init_if_idle()
        goal = self.q.x.copy()
        goal[i] = jv
        self.q.set_goal(goal, T)

    def set_joint_angles_sequence(self, jvss: Sequence[Sequence[float]],
                                  tms: Sequence[float],
                                  mask: Sequence[bool] | None = None) -> None:
        """Keyframes overriding the current goal; masked-out joints keep their reference."""
        if len(jvss) == 0:
            raise PlayerError("jvss: at least one keyframe is needed, got 0")
        keys = self._rows(jvss, self.dof, "jvss")
        T = self._tms(tms, keys.shape[0])
        m = None if mask is None else self._bmask(mask, allow_empty=True)
        self._init_if_idle()
        self.q.override_from_front()
        if m is not None and not m.all():
            keys[:, ~m] = self.q.tail[0][~m]
        self.q.go_keyframes(keys, T)

    def set_joint_angles_sequence_full(self, jvss, vels, torques, poss, rpys, accs, zmps,
                                       wrenches, optionals, tms) -> None:
        """Keyframes for every signal; each overrides its own goal. vels may be empty (then
        rule V); every other list is required (PD: hrpsys crashes on empty ones)."""
        k = len(jvss)
        if k == 0:
            raise PlayerError("jvss: at least one keyframe is needed, got 0")
        T = self._tms(tms, k)
        rows = {"q": self._rows(jvss, self.dof, "jvss")}
        spec = (("tq", torques, "torques"), ("p", poss, "poss"), ("rpy", rpys, "rpys"),
                ("acc", accs, "accs"), ("zmp", zmps, "zmps"),
                ("wrenches", wrenches, "wrenches"), ("optional", optionals, "optionals"))
        for sig, lst, what in spec:
            if len(lst) != k:
                raise PlayerError(f"{what}: expected {k} rows (one per keyframe), "
                                  f"got {len(lst)}")
            rows[sig] = self._rows(lst, self.dims[sig], what)
        v = None
        if len(vels):
            if len(vels) != k:
                raise PlayerError(f"vels: expected 0 or {k} rows, got {len(vels)}")
            v = self._rows(vels, self.dof, "vels")
        self._init_if_idle()
        for sig, keys in rows.items():
            ip = self.inter[sig]
            ip.override_from_front()
            ip.go_keyframes(keys, T, v if sig == "q" else None)

    def clear_joint_angles(self) -> None:
        """Stop the Q interpolator where it is."""
        self._init_if_idle()
        self.q.hold()

    # -- other signals (online goals) --------------------------------------------------------
    def _set_signal(self, sig: str, values: Sequence[float], tm: float, what: str) -> None:
        g = self._vec(values, self.dims[sig], what)
        T = self._tm(tm)
        self._init_if_idle()
        self.inter[sig].set_goal(g, T)

    def set_base_pos(self, pos: Sequence[float], tm: float) -> None:
        self._set_signal("p", pos, tm, "pos")

    def set_base_rpy(self, rpy: Sequence[float], tm: float) -> None:
        self._set_signal("rpy", rpy, tm, "rpy")

    def set_zmp(self, zmp: Sequence[float], tm: float) -> None:
        self._set_signal("zmp", zmp, tm, "zmp")

    def set_wrenches(self, w: Sequence[float], tm: float) -> None:
        self._set_signal("wrenches", w, tm,
                         f"wrenches (6 per force sensor, {len(self.force_sensors)} sensors)")

    # -- patterns ----------------------------------------------------------------------------
    def play_pattern(self, pos, rpy, zmp, tm) -> None:
        """Append keyframes for Q (rule V from qInit), RPY and ZMP (as named, PD). tm has
        one duration per keyframe, or one for all (0: the average-speed rule). rpy / zmp
        may have fewer rows (the last one is held) or none (that signal is not moved)."""
        args = self.pattern_args(pos, rpy, zmp, tm)
        self._init_if_idle()
        self.apply_planned(self.plan_pattern(args, self.pattern_start()), args)

    def pattern_args(self, pos, rpy, zmp, tm) -> tuple:
        """playPattern's arguments validated: (keys, durations, {signal: rows}). Pure."""
        keys, T = self._keyframes(pos, tm, self.dof, "pos")
        k = len(keys)
        others = {}
        for sig, lst, what in (("rpy", rpy, "rpy"), ("zmp", zmp, "zmp")):
            if len(lst):
                r = self._rows(lst[:k], 3, what)
                others[sig] = r[np.minimum(np.arange(k), r.shape[0] - 1)]
        return keys, T, others

    def pattern_start(self) -> dict[str, np.ndarray]:
        """Where a playPattern would start (EC thread): qInit, and the tails of Q, RPY, ZMP
        as they are after the re-initialisation an idle player does first."""
        if not self.q_init_ok:
            raise PlayerError(f"cannot initialise: qInit does not have {self.dof} values")
        if self.is_empty():
            tails = {}
            for sig, x in (("q", self.q_init), ("rpy", self.base_rpy_init),
                           ("zmp", self.zmp_init)):
                t = np.zeros((3, self.dims[sig]))
                t[0] = x
                tails[sig] = t
        else:
            tails = {sig: self.inter[sig].tail for sig in ("q", "rpy", "zmp")}
        tails["q_init"] = self.q_init.copy()
        return tails

    def plan_pattern(self, args: tuple, start: dict[str, np.ndarray]) -> dict:
        """Every sample of a playPattern from ``start`` (pattern_start). Pure: runs in an
        ORB thread for the servant, so a long pattern costs the cycle only an append."""
        keys, T, others = args
        q = self.q
        eff = q.effective_durations(start["q"][0], keys, T)
        blocks = {"q": q.plan_keyframes(start["q"], keys, eff,
                                        rule_v(start["q_init"], keys, eff))}
        for sig, r in others.items():
            blocks[sig] = self.inter[sig].plan_keyframes(start[sig], r, eff,
                                                         np.zeros_like(r))
        return {"start": start, "blocks": blocks}

    def apply_planned(self, plans: dict, args: tuple) -> None:
        """Append a planned pattern (EC thread); if a tail moved since it was planned, plan
        again here from the actual tails."""
        self._init_if_idle()
        now = self.pattern_start()
        if not all(np.array_equal(now[k], v) for k, v in plans["start"].items()):
            plans = self.plan_pattern(args, now)
        for sig, blk in plans["blocks"].items():
            self.inter[sig].append_planned(now[sig], blk)

    def prepare_pattern(self, basename: str) -> PreparedPattern:
        """Read the files of ``basename`` and compute every sample after the first record.
        Pure (no player state is read or changed besides the mode and dimensions): runs in
        an ORB thread. Raises PatternError (a ValueError) naming the file."""
        exts = {".pos": self.dof, ".zmp": 3, ".gsens": 3, ".hip": 3, ".waist": 6,
                ".torque": self.dof, ".wrenches": 6 * len(self.force_sensors),
                ".optionaldata": self.optional_dim}
        tracks = read_pattern(basename, exts)
        feeds: dict[str, tuple[Track, slice]] = {}
        for ext, sig in ((".pos", "q"), (".zmp", "zmp"), (".gsens", "acc"), (".hip", "rpy"),
                         (".torque", "tq"), (".wrenches", "wrenches"),
                         (".optionaldata", "optional")):
            if ext in tracks:
                feeds[sig] = (tracks[ext], slice(None))
        if ".waist" in tracks:
            feeds["p"] = (tracks[".waist"], slice(0, 3))
            if ".hip" not in tracks:
                feeds["rpy"] = (tracks[".waist"], slice(3, 6))
        out = PreparedPattern(basename, files=tuple(t.path for t in tracks.values()))
        for sig, (track, cols) in feeds.items():
            vals = np.ascontiguousarray(track.values[:, cols])
            out.first[sig] = vals[:1]
            out.rest[sig] = self.inter[sig].records_block(vals, track.gaps)
            out.samples = max(out.samples, 0 if out.rest[sig] is None
                              else out.rest[sig].shape[0])
        return out

    def load_pattern(self, pattern: PreparedPattern, tm: float) -> None:
        """Append a prepared pattern: record 0 reached in tm from each signal's tail."""
        T = self._tm(tm)
        self._init_if_idle()
        for sig in pattern.first:
            self.inter[sig].go_records_prepared(pattern.first[sig], T, pattern.rest[sig])

    # -- clearing and modes ------------------------------------------------------------------
    def clear(self) -> None:
        """Drop every queued sample of every signal and group: the output stops now."""
        for ip in self.inter.values():
            ip.clear()
        for g in self._order:
            g.inter.clear()

    def clear_no_wait(self) -> None:
        """clear() at the start of the next step (dropping blocks is O(1) per block)."""
        self._clear_pending = True

    def set_interpolation_mode(self, mode: int) -> None:
        if mode not in MODES:
            raise PlayerError(f"interpolation mode must be LINEAR (0) or HOFFARBIB (1), "
                              f"got {mode!r}")
        self.mode = int(mode)
        for ip in self.inter.values():
            ip.set_mode(mode)
        for g in self._order:
            g.inter.set_mode(mode)
