"""Live values of out ports for the page's plots, through :class:`rtcf.tools.tap.Tap`: a
connection from the chosen out port into this process whose samples land in a bounded
:class:`~rtcf.tools.tap.SampleQueue` (a full queue drops and counts). ``poll`` decodes them
in the server's worker thread, flattens them to numbers and keeps the last ``RING`` in a
ring per port that every page plotting it reads from.

The connection is ``periodic`` with push policy ``new`` at ``push_rate`` Hz: the writing
component's EC only copies each sample into the connector's one-slot buffer (as for any
connected port), and its publisher thread sends the newest at most ``push_rate`` times a
second, so a 1 kHz port costs its process at most that many calls and the plot shows the
port sampled at that rate.
"""

from __future__ import annotations

import collections
import itertools
import threading
from typing import Any

from ..tools.tap import SampleQueue, Tap
from ..tools.values import to_plain

RING = 4096                 # samples kept per port (at 100 Hz: 40 s)
QUEUE = 1024                # undecoded samples waiting for the next poll
MAX_VALUES = 64             # numbers plotted per sample (a long sequence is cut)
DEFAULT_PUSH_RATE = 50.0    # [Hz]


def flatten(plain: Any, prefix: str = "", out: list | None = None,
            labels: list | None = None) -> tuple[list[float], list[str]]:
    """The numbers of a sample in plain form (``to_plain``: dicts, lists, numbers) with
    their labels (``data[3]``, ``data.position.x``); the top-level ``tm`` and strings are
    left out, a sample gives at most MAX_VALUES numbers."""
    out = [] if out is None else out
    labels = [] if labels is None else labels
    if len(out) >= MAX_VALUES:
        return out, labels
    if isinstance(plain, dict):
        for name, value in plain.items():
            if name == "tm" and not prefix:
                continue
            flatten(value, f"{prefix}.{name}" if prefix else name, out, labels)
    elif isinstance(plain, list):
        for i, value in enumerate(plain):
            flatten(value, f"{prefix}[{i}]", out, labels)
    elif isinstance(plain, (bool, int, float)):
        out.append(float(plain))
        labels.append(prefix or "value")
    return out, labels


class PortRing:
    """One plotted port: its tap, its queue and the flattened samples ``(seq, time [s],
    values)``. ``dropped`` counts samples the queue refused. Runs in: the worker thread
    (``poll``) and the event loop (``since``)."""

    def __init__(self, key: str, tap: Tap, queue: SampleQueue):
        self.key = key
        self.tap = tap
        self.queue = queue
        self.data_type = tap.handle.data_cls
        self.samples: collections.deque = collections.deque(maxlen=RING)
        self.labels: list[str] = []
        self.seq = 0
        self.users = 1
        self.sink: Any = None        # called with (time [ns], sample) as each is decoded
        self._lock = threading.Lock()

    @property
    def dropped(self) -> int:
        return self.queue.dropped

    def poll(self) -> int:
        """Decode what the queue holds into the ring; the number of samples taken."""
        items = self.queue.drain()
        for _, t_ns, data in items:
            try:
                sample = self.tap.decode(data)
            except ValueError:
                continue
            plain = to_plain(sample)
            values, labels = flatten(plain)
            tm = plain.get("tm") if isinstance(plain, dict) else None
            stamp_ns = tm["sec"] * 1_000_000_000 + tm["nsec"] if isinstance(tm, dict) else 0
            if stamp_ns <= 0:
                stamp_ns = t_ns
            t = stamp_ns * 1e-9
            with self._lock:
                if labels != self.labels:
                    self.labels = labels
                self.seq += 1
                self.samples.append((self.seq, t, values))
            if self.sink is not None:
                try:
                    self.sink(stamp_ns, sample)
                except Exception:          # a failing consumer must not stop the plots
                    self.sink = None
                    raise
        return len(items)

    def since(self, seq: int) -> list[tuple[int, float, list[float]]]:
        """Samples newer than ``seq`` (oldest first)."""
        with self._lock:
            if not self.samples or self.samples[-1][0] <= seq:
                return []
            first = self.samples[0][0]
            start = max(0, seq - first + 1)
            return list(itertools.islice(self.samples, start, None))


class TapSet:
    """The plotted ports of one web server, shared by every page that plots the same one.

    Runs in: the server's worker threads (open, poll, close and shutdown make CORBA calls,
    never the event loop); open, close and shutdown take the lock, so several workers (and
    the Foxglove bridge's) may call them at once."""

    def __init__(self, push_rate: float = DEFAULT_PUSH_RATE):
        self.push_rate = push_rate
        self.rings: dict[str, PortRing] = {}
        self._lock = threading.Lock()

    def open(self, key: str, session: Any, handle: Any) -> PortRing:
        """Tap the out port of ``handle`` (a session PortHandle) or share the tap already
        open under ``key``. Raises the session's ToolError with a one-line reason.
        Runs in: a worker thread."""
        with self._lock:
            ring = self.rings.get(key)
            if ring is not None:
                ring.users += 1
                return ring
            queue = SampleQueue(QUEUE)
            tap = Tap(session, handle, queue, key=key, subscription_type="periodic",
                      push_policy="new", buffer_length=1,
                      extra={"publisher.push_rate": f"{self.push_rate:g}"})
            ring = PortRing(key, tap, queue)
            self.rings[key] = ring
            return ring

    def poll(self) -> None:
        """Decode every queue into its ring. Runs in: a worker thread."""
        for ring in list(self.rings.values()):
            ring.poll()

    def close(self, key: str) -> None:
        """Drop one user of a tap; the last one disconnects it. Runs in: a worker thread."""
        with self._lock:
            ring = self.rings.get(key)
            if ring is None:
                return
            ring.users -= 1
            if ring.users > 0:
                return
            del self.rings[key]
        ring.tap.close()

    def shutdown(self) -> None:
        """Close every tap (the server's cleanup). Runs in: a worker thread."""
        with self._lock:
            rings, self.rings = list(self.rings.values()), {}
        for ring in rings:
            ring.tap.close()
