"""Paths the user typed, read against the directory they typed the command in.

scripts/run changes into the repository before it starts the manager; it passes the
directory the user ran it in as ``RTCF_CWD``, so that the composition, ``-f`` and the ``-o``
path keys mean what they meant where the user stood.
"""

from __future__ import annotations

import os
from pathlib import Path

CALLER_CWD_ENV = "RTCF_CWD"


def user_path(path: str | os.PathLike) -> Path:
    """A path the user typed, made absolute against the directory they ran the command in.
    Runs in: any thread."""
    p = Path(path).expanduser()
    if p.is_absolute():
        return p
    return Path(os.path.normpath(Path(os.environ.get(CALLER_CWD_ENV) or ".").resolve() / p))
