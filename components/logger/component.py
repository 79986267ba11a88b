"""SampleLogger: keeps every sample of a TimedDoubleSeq stream, written to a .npz at the end.

For simulation runs (hrpsys DataLogger's role, one stream per instance): the determinism
check compares two runs' files byte for byte, the demos plot them. The samples live in a
:class:`~.buffer.SampleBuffer` (the core), allocated once, at the first sample (its width) or
at initialisation when ``columns`` is set; the cycle only copies. The file is written when
the component is deactivated or finalized (not in the EC cycle's data path).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from rtcf import CheckContext, Component, Param, ReadStatus, ReturnCode, TimedDoubleSeq

from .buffer import SampleBuffer

# looked up once: an enum member's lookup through its class costs about as much as a call
_NEW = ReadStatus.NEW

__all__ = ["SampleLogger"]


class SampleLogger(Component):
    """Logs a TimedDoubleSeq stream: sample times and values.

    | port | type | unit | meaning |
    |---|---|---|---|
    | in | TimedDoubleSeq | - | the stream to keep (every sample, in order) |

    The .npz holds ``t`` (N,) [s] (the samples' stamps) and ``data`` (N, width); samples
    beyond ``max_samples`` or of another width are counted (``dropped``), not kept.
    """

    category = "simulation"
    path = Param(str, "", read_only=True,
                 doc="file written at deactivation / finalize ('' = keep in memory only)")
    max_samples = Param(int, 100000, bounds=(1, 10_000_000), read_only=True,
                        doc="samples kept (the buffer is allocated once)")
    columns = Param(int, 0, bounds=(0, 100000), read_only=True,
                    doc="width of a sample; 0 takes it from the first sample")

    @classmethod
    def check_config(cls, params: dict[str, Any], ctx: CheckContext) -> list[tuple[str, str]]:
        """Before anything starts: the file can be made where ``path`` says (the nearest
        existing folder on its way is a folder one may write in; the path itself is not a
        folder). Runs in: the manager's main thread."""
        problem = path_problem(params["path"])
        return [(ctx.param("path"), problem)] if problem else []

    def on_initialize(self) -> None:
        self.inp = self.add_in_port("in", TimedDoubleSeq)
        self.buffer = SampleBuffer(self.max_samples, self.columns)
        self.written = ""
        self.save_error = ""

    def on_execute(self, ec: Any) -> None:
        """Runs in: EC thread. Copies every new sample into the buffer."""
        inp = self.inp
        read, append, new = inp.read, self.buffer.append, _NEW
        while read() is new:
            v = inp.value
            tm = v.tm
            append(tm.sec + tm.nsec * 1e-9, v.data)

    @property
    def count(self) -> int:
        """Samples kept so far."""
        return self.buffer.count

    @property
    def dropped(self) -> int:
        """Samples not kept (another width, or beyond max_samples)."""
        return self.buffer.dropped

    def samples(self) -> tuple[np.ndarray, np.ndarray]:
        """(t, data) kept so far (copies). Runs in: any thread (between cycles)."""
        return self.buffer.samples()

    def digest(self) -> str:
        """SHA-256 of the kept times and values (bit-exact comparison of two runs)."""
        return self.buffer.digest()

    def save(self) -> str:
        """Write the .npz (if ``path`` is set); returns the path written or ''. A file that
        cannot be written is logged as an error naming it (``save_error``), never raised.
        Runs in: the EC thread at deactivation, or the finalizing thread."""
        if not self.path:
            return ""
        try:
            self.buffer.save(self.path)
        except OSError as e:
            self.save_error = f"could not write {self.path}: {e.strerror or e}"
            self.log.error("%s: %s (%d samples lost)", self.instance_name, self.save_error,
                           self.count)
            return ""
        self.save_error = ""
        self.written = self.path
        self.log.info("%s: %d samples (%d dropped) -> %s, sha256 %s", self.instance_name,
                      self.count, self.dropped, self.path, self.digest()[:16])
        return self.path

    def on_deactivated(self, ec: Any) -> ReturnCode | None:
        """Runs in: EC thread, once at deactivation (file I/O outside the cycle's path).
        A file that cannot be written: ERROR (the run's log is lost)."""
        if self.path and not self.save():
            return ReturnCode.RTC_ERROR
        return None

    def on_finalize(self) -> ReturnCode | None:
        """Runs in: the finalizing thread."""
        if self.save_error:
            return ReturnCode.RTC_ERROR               # said at deactivation already
        if self.count and self.written != self.path and not self.save():
            return ReturnCode.RTC_ERROR
        return None


def path_problem(path: str) -> str:
    """Why a .npz cannot be written at ``path`` ('' when it can, as far as can be known
    before writing)."""
    if not path:
        return ""
    full = os.path.abspath(path)
    if os.path.isdir(full):
        return f"{path} is a folder; expected a file name (e.g. {os.path.join(path, 'log.npz')})"
    folder = os.path.dirname(full)
    while not os.path.exists(folder):
        folder = os.path.dirname(folder)
    if not os.path.isdir(folder):
        return f"cannot write {path}: {folder} is a file, not a folder"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"cannot write {path}: no permission to write in {folder}"
    return ""
