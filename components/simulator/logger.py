"""SampleLogger: keeps every sample of a TimedDoubleSeq stream, written to a .npz at the end.

For simulation runs (hrpsys DataLogger's role, one stream per instance): the determinism
check of issue 15 compares two runs' files byte for byte, the demos plot them. The buffer is
allocated once, at the first sample (its width) or at activation when ``columns`` is set;
the cycle only copies. The file is written when the component is deactivated or finalized
(not in the EC cycle's data path).
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

import numpy as np

from rtcf import Component, Param, ReadStatus, TimedDoubleSeq

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

    def on_initialize(self) -> None:
        self.inp = self.add_in_port("in", TimedDoubleSeq)
        self.t = np.zeros(self.max_samples)
        self.data = np.zeros((0, 0))
        self.count = 0
        self.dropped = 0
        self.written = ""
        if self.columns:
            self.data = np.zeros((self.max_samples, self.columns))

    def on_execute(self, ec: Any) -> None:
        """Runs in: EC thread. Copies every new sample into the buffer."""
        while self.inp.read() is ReadStatus.NEW:
            v = self.inp.value
            d = v.data
            if self.data.shape[1] == 0 and self.count == 0 and d.size:
                self.data = np.zeros((self.max_samples, d.size))   # once, at the first sample
            k = self.count
            if k >= self.max_samples or d.shape != (self.data.shape[1],):
                self.dropped += 1
                continue
            self.t[k] = v.tm.sec + v.tm.nsec * 1e-9
            self.data[k] = d
            self.count = k + 1

    def samples(self) -> tuple[np.ndarray, np.ndarray]:
        """(t, data) kept so far (copies). Runs in: any thread (between cycles)."""
        n = self.count
        return self.t[:n].copy(), self.data[:n].copy()

    def digest(self) -> str:
        """SHA-256 of the kept times and values (bit-exact comparison of two runs)."""
        t, d = self.samples()
        h = hashlib.sha256()
        h.update(np.ascontiguousarray(t).tobytes())
        h.update(np.ascontiguousarray(d).tobytes())
        return h.hexdigest()

    def save(self) -> str:
        """Write the .npz (if ``path`` is set); returns the path written or ''."""
        if not self.path:
            return ""
        t, d = self.samples()
        folder = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(folder, exist_ok=True)
        np.savez(self.path, t=t, data=d)
        self.written = self.path
        self.log.info("%s: %d samples (%d dropped) -> %s, sha256 %s", self.instance_name,
                      self.count, self.dropped, self.path, self.digest()[:16])
        return self.path

    def on_deactivated(self, ec: Any) -> None:
        """Runs in: EC thread, once at deactivation (file I/O outside the cycle's path)."""
        self.save()

    def on_finalize(self) -> None:
        if self.count and self.written != self.path:
            self.save()
