"""loadPattern files (hrpsys's .pos, .zmp, ... of one basename): pure reading, no rtcf /
omniORB. Runs in: the caller's thread (the servant reads in an ORB thread, never in the EC
thread).

Each file ``basename + ext`` is a whitespace token stream of records ``time v_1 ... v_n``.
The fast path is numpy.loadtxt (C parser) when every line is one record, which is how
pattern files are written; any other layout (records wrapped over lines, several on a line)
falls back to a token-stream parse of the same file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from .interpolator import TM_LIMIT, VALUE_LIMIT

# extension -> signal(s) it feeds; dimensions come from the robot (dof, force sensors, ...)
EXTENSIONS = (".pos", ".zmp", ".gsens", ".hip", ".waist", ".torque", ".wrenches",
              ".optionaldata", ".optionalData")


class PatternError(ValueError):
    """A pattern file that cannot be used; the message names the file and the problem."""


@dataclass(frozen=True)
class Track:
    """One file: record values (k, n) and the times between records (k - 1,)."""
    path: str
    values: np.ndarray
    gaps: np.ndarray


def read_records(path: str, n: int) -> Track:
    """Read ``time v_1 .. v_n`` records from ``path``."""
    try:
        if os.path.getsize(path) == 0:
            raise PatternError(f"{path}: empty file (expected 'time' and {n} values per "
                               "record)")
        data = np.loadtxt(path, dtype=np.float64, comments=None, ndmin=2)
        if data.shape[1] != n + 1:
            raise ValueError("not one record per line")
    except ValueError:
        data = _token_stream(path, n)
    except OSError as e:
        raise PatternError(f"{path}: cannot read: {e.strerror or e}") from None
    if data.shape[0] == 0:
        raise PatternError(f"{path}: no record (expected 'time' and {n} values per record)")
    if not np.isfinite(data.sum()):       # one pass; locate the culprit only if needed
        bad = np.flatnonzero(~np.isfinite(data).all(axis=1))
        if bad.size:                       # (else only the sum overflowed)
            raise PatternError(f"{path}: record {int(bad[0])} has a value that is not "
                               "finite")
    big = np.flatnonzero((np.abs(data[:, 1:]) > VALUE_LIMIT).any(axis=1)
                         | (np.abs(data[:, 0]) > TM_LIMIT))
    if big.size:
        raise PatternError(f"{path}: record {int(big[0])} has a value beyond +-{VALUE_LIMIT:g} "
                           f"or a time beyond {TM_LIMIT:g} s (it would overflow the "
                           "interpolation)")
    gaps = np.diff(data[:, 0])
    if np.any(gaps < 0.0):
        r = int(np.flatnonzero(gaps < 0.0)[0]) + 1
        raise PatternError(f"{path}: time goes back at record {r} "
                           f"({data[r - 1, 0]} -> {data[r, 0]} s)")
    return Track(path, data[:, 1:], gaps)


def _token_stream(path: str, n: int) -> np.ndarray:
    with open(path, "rb") as f:
        tokens = f.read().split()
    try:
        flat = np.array(tokens, dtype=np.float64)
    except ValueError:
        bad = next(t for t in tokens if not _is_float(t))
        raise PatternError(f"{path}: token {bad.decode(errors='replace')!r} is not a "
                           "number") from None
    width = n + 1
    if flat.size % width:
        raise PatternError(f"{path}: {flat.size} numbers do not make whole records of "
                           f"{width} (time and {n} values): {flat.size % width} left over")
    return flat.reshape(-1, width)


def _is_float(tok: bytes) -> bool:
    try:
        float(tok)
        return True
    except ValueError:
        return False


def read_pattern(basename: str, dims: dict[str, int]) -> dict[str, Track]:
    """Every existing ``basename + ext`` for the extensions of ``dims`` (ext -> values per
    record). ``.optionalData`` (as hrpsys's documentation writes it) is read when
    ``.optionaldata`` (what its code reads) does not exist.
    Raises PatternError when no file exists or one cannot be used (then nothing is used)."""
    tracks: dict[str, Track] = {}
    for ext, n in dims.items():
        path = basename + ext
        if ext == ".optionaldata" and not os.path.exists(path):
            path = basename + ".optionalData"
        if os.path.exists(path):
            tracks[ext] = read_records(path, n)
    if not tracks:
        raise PatternError(f"loadPattern: no pattern file {basename}"
                           f"{{{','.join(dims)}}} exists")
    return tracks
