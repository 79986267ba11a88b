"""Live values of out ports for the page's plots: a tap is an InPort in the web process,
connected to the chosen out port as rtcon would connect two ports, whose samples are
flattened to numbers and kept in a bounded ring (the oldest dropped and counted).

The connection uses a ``periodic`` publisher with push policy ``new`` at ``push_rate`` Hz:
the writing component's EC only copies each sample into the connector's bounded buffer (as
for any connected port); the component's publisher thread sends the newest sample at most
``push_rate`` times a second, so a 1 kHz port costs its process at most that many CORBA
calls, and the plot shows the port sampled at that rate.
"""

from __future__ import annotations

import collections
import itertools
import threading
import time
from typing import Any

import numpy as np

from ..component import Component
from ..datatypes import DataType, time_of, type_by_name
from ..ports import PortEvent

RING = 4096                 # samples kept per tap (at 100 Hz: 40 s)
MAX_VALUES = 64             # numbers plotted per sample (a long sequence is cut)
DEFAULT_PUSH_RATE = 100.0   # [Hz]


def flatten(sample: Any, prefix: str = "", out: list | None = None,
            labels: list | None = None) -> tuple[list[float], list[str]]:
    """The numbers of a sample (every member but ``tm``, recursively) and their labels:
    ``data[3]``, ``data.position.x``. Strings are skipped."""
    out = [] if out is None else out
    labels = [] if labels is None else labels
    if isinstance(sample, DataType):
        for name, _ in type(sample).FIELDS:
            if name == "tm" and not prefix:
                continue
            flatten(getattr(sample, name), f"{prefix}.{name}" if prefix else name, out,
                    labels)
    elif isinstance(sample, np.ndarray):
        flat = sample.reshape(-1)[: MAX_VALUES - len(out)]
        out.extend(float(v) for v in flat)
        labels.extend(f"{prefix}[{i}]" for i in range(len(flat)))
    elif isinstance(sample, (list, tuple)):
        for i, v in enumerate(sample):
            if len(out) >= MAX_VALUES:
                break
            flatten(v, f"{prefix}[{i}]", out, labels)
    elif isinstance(sample, (bool, int, float, np.number)) and len(out) < MAX_VALUES:
        out.append(float(sample))
        labels.append(prefix or "value")
    return out, labels


class _TapComponent(Component):
    """Holds the web view's InPorts (web process; never in an EC)."""

    category = "tool"


class Tap:
    """One subscribed out port. ``samples``: (seq, time [s], values) in a bounded deque;
    ``dropped``: samples that fell out of it before anyone read them.
    Runs in: the ORB thread that delivers (``_on_received``) and the server's threads."""

    def __init__(self, key: str, data_type: type, port: Any, comp: Any):
        self.key = key
        self.data_type = data_type
        self.port = port
        self.comp = comp
        self.samples: collections.deque = collections.deque(maxlen=RING)
        self.labels: list[str] = []
        self.seq = 0
        self.dropped = 0
        self.users = 0
        self.connector_id = ""
        self.error = ""
        self._lock = threading.Lock()
        port.add_listener(PortEvent.ON_RECEIVED, self._on_received)

    def _on_received(self, port: Any, cid: str, sample: Any) -> None:
        values, labels = flatten(sample)
        t = time_of(sample) if hasattr(sample, "tm") else 0.0
        if t <= 0.0:
            t = time.time()
        with self._lock:
            if len(self.samples) == self.samples.maxlen:
                self.dropped += 1
            if labels != self.labels:
                self.labels = labels
            self.seq += 1
            self.samples.append((self.seq, t, values))

    def since(self, seq: int) -> list[tuple[int, float, list[float]]]:
        """Samples newer than ``seq`` (oldest first)."""
        with self._lock:
            if not self.samples or self.samples[-1][0] <= seq:
                return []
            first = self.samples[0][0]
            start = max(0, seq - first + 1)
            return list(itertools.islice(self.samples, start, None))


class TapSet:
    """The taps of one web process, shared by every page that plots the same port."""

    def __init__(self, push_rate: float = DEFAULT_PUSH_RATE):
        from ..corba.runtime import CorbaRuntime
        self.push_rate = push_rate
        self.rt = CorbaRuntime(None, {"naming.enable": "NO"})
        self.taps: dict[str, Tap] = {}
        self._n = itertools.count(1)
        self._lock = threading.Lock()

    def open(self, key: str, port_ref: Any, data_type: str) -> Tap:
        """Connect a tap to ``port_ref`` (an out port of type ``data_type``, a repository
        id) or share the one already open. ValueError with a one-line reason."""
        with self._lock:
            tap = self.taps.get(key)
            if tap is not None:
                tap.users += 1
                return tap
            try:
                dtype = type_by_name(data_type)
            except LookupError:
                raise ValueError(f"{key}: data type {data_type or '?'} is not one rtcf "
                                 f"knows, so it cannot be plotted") from None
            comp = _TapComponent(f"rtcf_web_tap{next(self._n)}")
            port = comp.add_in_port("in", dtype)
            comp.initialize()
            self.rt.register_component(comp)
            tap = Tap(key, dtype, port, comp)
            try:
                tap.connector_id = self._connect(port_ref, self.rt.port_servant(port).ref,
                                                 dtype, key)
            except Exception:
                self.rt.unregister_component(comp)
                raise
            tap.users = 1
            self.taps[key] = tap
            return tap

    def _connect(self, out_ref: Any, in_ref: Any, dtype: type, key: str) -> str:
        from ..corba.idl import stub_module
        from ..corba.nv import to_nvlist
        RTC = stub_module("RTC")
        props = {"dataport.dataflow_type": "push", "dataport.interface_type": "corba_cdr",
                 "dataport.subscription_type": "periodic",
                 "dataport.publisher.push_rate": f"{self.push_rate:g}",
                 "dataport.publisher.push_policy": "new",
                 "dataport.buffer.length": "1",
                 "dataport.data_type": dtype.REPO_ID}
        prof = RTC.ConnectorProfile("rtcf-web", "", [out_ref, in_ref], to_nvlist(props))
        try:
            code, prof = out_ref.connect(prof)
        except Exception as e:
            raise ValueError(f"{key}: connecting failed ({type(e).__name__})") from None
        if code != RTC.RTC_OK:
            raise ValueError(f"{key}: the port refused the connection ({code})")
        return prof.connector_id

    def close(self, key: str) -> None:
        """Drop one user of a tap; the last one disconnects it."""
        with self._lock:
            tap = self.taps.get(key)
            if tap is None:
                return
            tap.users -= 1
            if tap.users > 0:
                return
            del self.taps[key]
        try:
            self.rt.unregister_component(tap.comp)      # disconnects on both ends
        except Exception:
            pass

    def shutdown(self) -> None:
        for key in list(self.taps):
            tap = self.taps.pop(key)
            try:
                self.rt.unregister_component(tap.comp)
            except Exception:
                pass
        try:
            self.rt.shutdown()
        except Exception:
            pass
