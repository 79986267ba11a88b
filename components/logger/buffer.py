"""SampleBuffer: the samples of one stream (stamps and values), allocated once.

Pure numpy, no rtcf / omniORB import, no clock (the stamp comes with each sample). The
value buffer is allocated in the constructor when the width is known, otherwise at the first
sample; ``append`` only copies (house style 2). A sample of another width, or one beyond
``max_samples``, is counted in ``dropped`` and not kept.
"""

from __future__ import annotations

import hashlib
import os

import numpy as np

__all__ = ["SampleBuffer"]


class SampleBuffer:
    """max_samples: samples kept; columns: the width of a sample (0: the first sample's)."""

    def __init__(self, max_samples: int, columns: int = 0):
        if max_samples < 1:
            raise ValueError(f"max_samples: expected >= 1, got {max_samples!r}")
        if columns < 0:
            raise ValueError(f"columns: expected >= 0, got {columns!r}")
        self.max_samples = int(max_samples)
        self.t = np.zeros(self.max_samples)
        # append() stores a stamp through a memoryview of ``t`` (the same double, a
        # fraction of a numpy item store's cost); ``t`` is never replaced
        self._t_view = memoryview(self.t)
        self.data = np.zeros((self.max_samples, columns)) if columns else np.zeros((0, 0))
        self.count = 0
        self.dropped = 0
        self._shape = (columns,) if columns else None   # a sample's shape, once known

    def append(self, stamp: float, values: np.ndarray) -> bool:
        """Keep one sample (``stamp`` [s], ``values`` 1-D); False when it was dropped.
        Runs in: the owner's thread (the EC thread for the component)."""
        k = self.count
        if values.shape == self._shape and k < self.max_samples:
            self._t_view[k] = stamp
            self.data[k] = values
            self.count = k + 1
            return True
        if self._shape is None and k == 0 and values.size:
            self._shape = (values.size,)
            self.data = np.zeros((self.max_samples, values.size))   # once, at the first
            return self.append(stamp, values)
        self.dropped += 1
        return False

    def samples(self) -> tuple[np.ndarray, np.ndarray]:
        """(t, data) kept so far (copies). Runs in: any thread (between appends)."""
        n = self.count
        return self.t[:n].copy(), self.data[:n].copy()

    def digest(self) -> str:
        """SHA-256 of the kept times and values (bit-exact comparison of two runs)."""
        t, d = self.samples()
        h = hashlib.sha256()
        h.update(np.ascontiguousarray(t).tobytes())
        h.update(np.ascontiguousarray(d).tobytes())
        return h.hexdigest()

    def save(self, path: str) -> None:
        """Write ``t`` (N,) [s] and ``data`` (N, width) to the .npz ``path`` (its folder made
        when missing). Runs in: a thread outside the cycle's data path."""
        t, d = self.samples()
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        np.savez(path, t=t, data=d)
