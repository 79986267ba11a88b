"""Data ports living in a tool process: a tap that receives what a remote out port writes,
and an injector that writes into a remote in port (CORBA side).

A tap is an OpenRTM connection from the out port to an ``OpenRTM::InPortCdr`` servant in
this process (push, corba_cdr, ``dataport.subscription_type`` new by default so that the
writer's publisher thread, not its EC, makes the call; flush on request). The servant's
``put()`` only appends ``(key, receive time [ns], CDR bytes)`` to a bounded
:class:`SampleQueue` and returns at once: a full queue drops the sample and counts it, it
never blocks the writer. Decoding happens in the reader's thread (``Tap.decode``).

The tool side of each connection is an ``RTC::PortService`` (:class:`ToolPort`) on the port
servant base of every port of ours (rtcf.corba.portbase), so it follows OpenRTM's
notify_connect chain as they do: the profile lists the remote port first and ours second,
and ``connect()`` is called on the remote port, exactly as rtcon does. Closing a tap
or injector disconnects it; a tool killed without closing is dropped by the writer when its
``put()`` fails (README, "When peers fail").

    s = Session(["localhost:2809"])
    q = SampleQueue(1000)
    tap = Tap(s, s.port("DCM0:q", "out"), q, key=0)
    key, t_ns, data = q.get(timeout=1.0)
    sample = tap.decode(data)             # an rtcf.datatypes instance
    tap.close()

Runs in: the servants in omniORB's threads; everything else in the caller's thread.
"""

from __future__ import annotations

import collections
import os
import threading
import time
from typing import Any

import omniORB
from omniORB import CORBA

from rtcf.corba.cdr import codec_for
from rtcf.corba.client import UNREACHABLE
from rtcf.corba.idl import stub_module
from rtcf.corba.nv import nv_find, nv_set, to_nvlist
from rtcf.corba.orb import get_orb, root_poa
from rtcf.corba.portbase import PortServiceBase
from .session import PortHandle, Session, ToolError

__all__ = ["SampleQueue", "Tap", "Injector", "ToolPort", "DEFAULT_QUEUE", "other_writers"]

RTC = stub_module("RTC")
OpenRTM = stub_module("OpenRTM")
OpenRTM__POA = stub_module("OpenRTM__POA")

P = "dataport."
IOR_IN, REF_IN = P + "corba_cdr.inport_ior", P + "corba_cdr.inport_ref"
DEFAULT_QUEUE = 10000
_counter = 0
_counter_lock = threading.Lock()


def _next_name(kind: str) -> str:
    global _counter
    with _counter_lock:
        _counter += 1
        return f"rtcf-tool{os.getpid()}.{kind}{_counter}"


class SampleQueue:
    """A bounded FIFO that never blocks the producer: a full queue drops the new item and
    counts it. ``received`` counts every offer, ``dropped`` those refused.
    Runs in: any thread."""

    def __init__(self, maxlen: int = DEFAULT_QUEUE):
        if maxlen < 1:
            raise ValueError(f"queue length must be >= 1, got {maxlen}")
        self.maxlen = maxlen
        self._items: collections.deque = collections.deque()
        self._cv = threading.Condition(threading.Lock())
        self.received = 0
        self.dropped = 0

    def offer(self, item: Any) -> bool:
        with self._cv:
            self.received += 1
            if len(self._items) >= self.maxlen:
                self.dropped += 1
                return False
            self._items.append(item)
            self._cv.notify()
            return True

    def get(self, timeout: float | None = None) -> Any:
        """The oldest item, or None when nothing came within ``timeout`` seconds."""
        with self._cv:
            if not self._items and not self._cv.wait_for(lambda: self._items, timeout):
                return None
            return self._items.popleft()

    def drain(self, limit: int | None = None) -> list:
        """Up to ``limit`` items at once without waiting."""
        with self._cv:
            n = len(self._items) if limit is None else min(limit, len(self._items))
            return [self._items.popleft() for _ in range(n)]

    def __len__(self) -> int:
        return len(self._items)


class _InPortCdr(OpenRTM__POA.InPortCdr):
    """Receives one connection's payloads. Runs in: ORB threads; answers at once.

    ``dedupe`` (periodic connections): a payload equal to the previous one is not a new
    sample but the writer's last one sent again, and is counted in ``repeats`` instead of
    queued. OpenRTM-aist's periodic publisher does that: with push policy new, once one
    sample was written it sends the newest sample every period and, when nothing new came,
    the last one again (the buffer's readback; OpenRTM_aist/PublisherPeriodic.py, pushNew).
    A new sample differs from the last at least in its ``tm``."""

    def __init__(self, queue: SampleQueue, key: Any, dedupe: bool = False):
        self.queue = queue
        self.key = key
        self.dedupe = dedupe
        self.last: bytes | None = None
        self.repeats = 0

    def put(self, data: bytes) -> Any:
        if self.dedupe:
            if data == self.last:
                self.repeats += 1
                return OpenRTM.PORT_OK
            self.last = data
        self.queue.offer((self.key, time.time_ns(), data))
        return OpenRTM.PORT_OK


class ToolPort(PortServiceBase):
    """The tool's end of one connection, on the port servant base every port of ours
    shares (rtcf.corba.portbase: profiles, the notify_connect / notify_disconnect chain).
    ``role`` 'in': it publishes an InPortCdr (a tap); 'out': it subscribes to the peer's
    InPortCdr (an injector). It belongs to no runtime and is never connected from its
    own side. Runs in: ORB threads."""

    def __init__(self, role: str, data_type: str, queue: SampleQueue | None = None,
                 key: Any = None, dedupe: bool = False):
        super().__init__(None, _next_name("in" if role == "in" else "out"))
        self.role = role
        self.dedupe = dedupe
        self.name = self.full_name
        self.data_type = data_type
        self.queue, self.key = queue, key
        self.poa = root_poa()
        self.servants: dict[str, Any] = {}
        self.peers: dict[str, Any] = {}          # cid -> OpenRTM.InPortCdr (out role)
        self.ref = self.poa.id_to_reference(self.poa.activate_object(self))

    def profile(self) -> Any:
        kind = "DataInPort" if self.role == "in" else "DataOutPort"
        props = {"port.port_type": kind, P + "data_type": self.data_type,
                 P + "dataflow_type": "push", P + "interface_type": "corba_cdr",
                 P + "subscription_type": "flush,new,periodic"}
        return RTC.PortProfile(self.name, [], self.ref, self.get_connector_profiles(), None,
                               to_nvlist(props))

    def connect(self, cp: Any) -> tuple[Any, Any]:
        return RTC.BAD_PARAMETER, cp             # a tool connects from the remote side

    def _negotiate(self, cp: Any) -> tuple[Any, Any]:
        cid = cp.connector_id
        if self.role == "in":
            servant = _InPortCdr(self.queue, self.key, self.dedupe)
            ref = self.poa.id_to_reference(self.poa.activate_object(servant))
            nv_set(cp.properties, IOR_IN, get_orb().object_to_string(ref))
            nv_set(cp.properties, REF_IN, ref)
            nv_set(cp.properties, P + "inport.data_type", self.data_type)
            self.servants[cid] = servant
        code, cp = self._notify_next(cp)
        if code != RTC.RTC_OK:
            self._release(cid)
            return code, cp
        if self.role == "out":
            peer = _resolve_inport(cp)
            if peer is None:
                return RTC.RTC_ERROR, cp
            self.peers[cid] = peer
        self._store(cp)
        return RTC.RTC_OK, cp

    def _release(self, cid: str) -> None:
        self.peers.pop(cid, None)
        servant = self.servants.pop(cid, None)
        if servant is not None:
            _deactivate(self.poa, servant)

    def close(self) -> None:
        """Forget everything and deactivate (after the remote side was told)."""
        for cid in list(self.profiles):
            self.forget_connector(cid)
        _deactivate(self.poa, self)


def _deactivate(poa: Any, servant: Any) -> None:
    try:
        poa.deactivate_object(poa.servant_to_id(servant))
    except Exception:
        pass


def _resolve_inport(cp: Any) -> Any:
    obj = None
    ior = nv_find(cp.properties, IOR_IN)
    if isinstance(ior, str) and ior:
        obj = get_orb().string_to_object(ior)
    if obj is None:
        obj = nv_find(cp.properties, REF_IN)
    if obj is None or isinstance(obj, str):
        return None
    return obj._narrow(OpenRTM.InPortCdr)


def _connect(handle: PortHandle, tool: ToolPort, props: dict[str, str]) -> str:
    """connect() on the remote port with [remote, tool] as rtcon would; the connector id."""
    cp = RTC.ConnectorProfile(tool.name, "", [handle.ref, tool.ref], to_nvlist(props))
    try:
        code, cp = handle.ref.connect(cp)
    except UNREACHABLE as e:
        tool.close()
        raise ToolError(f"{handle.address}: the component does not answer "
                        f"({type(e).__name__}): a component that stopped?") from None
    except CORBA.Exception as e:
        tool.close()
        raise ToolError(f"{handle.address}: connect failed ({type(e).__name__})") from None
    if code != RTC.RTC_OK:
        tool.close()
        raise ToolError(f"{handle.address}: the port refused the connection ({code}; "
                        f"properties {props})")
    return cp.connector_id


def _props(handle: PortHandle, subscription_type: str, extra: dict[str, str] | None
           ) -> dict[str, str]:
    props = {P + "interface_type": "corba_cdr", P + "dataflow_type": "push",
             P + "subscription_type": subscription_type,
             P + "data_type": handle.info.data_type,
             P + "serializer.cdr.endian": "little"}
    for k, v in (extra or {}).items():
        props[k if k.startswith(P) else P + k] = str(v)
    return props


class Tap:
    """A connection from a remote out port to this process; samples go to ``queue`` as
    ``(key, receive time [ns since the epoch], CDR bytes)``. ``subscription_type``: new
    (default: the writer's publisher thread calls us) or flush (its EC thread does);
    ``push_policy`` all (default) keeps every sample the writer's publisher buffered.
    ``max_rate`` [Hz]: a periodic subscription instead, the writer sending only its newest
    sample at most that often (decimation at the source: the writer's cost drops with it);
    on a periodic connection a payload equal to the last is the writer's last sample sent
    again and is not queued (``repeats`` counts them)."""

    def __init__(self, session: Session, handle: PortHandle, queue: SampleQueue,
                 key: Any = None, subscription_type: str = "new", push_policy: str = "all",
                 buffer_length: int = 64, max_rate: float | None = None,
                 extra: dict[str, str] | None = None):
        if handle.info.direction != "out":
            raise ToolError(f"{handle.address}: an out port is needed to read from")
        if subscription_type not in ("new", "flush", "periodic"):
            raise ToolError(f"subscription type must be new, flush or periodic, got "
                            f"{subscription_type!r}")
        self.handle = handle
        self.queue = queue
        self.key = handle.address if key is None else key
        self.codec = codec_for(handle.data_cls, True)
        more = {"publisher.push_policy": push_policy, "buffer.length": str(buffer_length)}
        if max_rate:      # the writer sends its newest sample at most max_rate times a second
            subscription_type = "periodic"
            more.update({"publisher.push_rate": f"{max_rate:g}",
                         "publisher.push_policy": "new"})
        more.update(extra or {})
        self.tool = ToolPort("in", handle.info.data_type, queue, self.key,
                             dedupe=subscription_type == "periodic")
        self.cid = _connect(handle, self.tool, _props(handle, subscription_type, more))
        self.closed = False

    @property
    def repeats(self) -> int:
        """Payloads a periodic writer sent again unchanged (not queued)."""
        return sum(s.repeats for s in list(self.tool.servants.values()))

    def decode(self, data: bytes, out: Any = None) -> Any:
        """The sample in ``data`` (ValueError if malformed)."""
        return self.codec.decode(data, out)

    def close(self, timeout_ms: int = 1000) -> None:
        """Disconnect (the remote side is told, waiting at most ``timeout_ms``)."""
        if self.closed:
            return
        self.closed = True
        _disconnect(self.handle, self.cid, timeout_ms)
        self.tool.close()


class Injector:
    """A connection from this process to a remote in port; ``write(sample)`` pushes one
    sample (bare CDR, little endian) and returns the in port's status name. The in port's
    buffer for this connection holds ``buffer_length`` samples (a reader that takes one
    sample per cycle then loses none to a replay's jitter)."""

    def __init__(self, session: Session, handle: PortHandle, buffer_length: int = 128,
                 extra: dict[str, str] | None = None):
        if handle.info.direction != "in":
            raise ToolError(f"{handle.address}: an in port is needed to write to")
        self.handle = handle
        self.codec = codec_for(handle.data_cls, True)
        self.tool = ToolPort("out", handle.info.data_type)
        more = {"buffer.length": str(buffer_length)}
        more.update(extra or {})
        self.cid = _connect(handle, self.tool, _props(handle, "flush", more))
        self.peer = self.tool.peers.get(self.cid)
        if self.peer is None:
            _disconnect(handle, self.cid, 1000)
            self.tool.close()
            raise ToolError(f"{handle.address}: the port published no InPortCdr")
        self.closed = False

    def write_bytes(self, data: bytes) -> str:
        try:
            st = self.peer.put(data)
        except UNREACHABLE as e:
            raise ToolError(f"{self.handle.address}: the component does not answer "
                            f"({type(e).__name__}): a component that stopped?") from None
        return str(st)

    def write(self, sample: Any) -> str:
        return self.write_bytes(self.codec.encode(sample))

    def close(self, timeout_ms: int = 1000, linger: float = 0.3) -> None:
        """Disconnect after ``linger`` seconds: the in port's buffer for this connection
        goes with it, so its reader gets a few cycles to take the last samples."""
        if self.closed:
            return
        self.closed = True
        if linger > 0:
            time.sleep(linger)
        _disconnect(self.handle, self.cid, timeout_ms)
        self.tool.close()


def other_writers(handle: PortHandle) -> list[str]:
    """Full names of the out ports connected to the in port of ``handle`` (a tool's own
    connections left out): each sample they write replaces one written by a tool, so a
    value injected there lasts until their next write. Runs in: the caller's thread."""
    names: list[str] = []
    try:
        profiles = handle.ref.get_connector_profiles()
    except CORBA.Exception:
        return names
    for cp in profiles:
        for p in cp.ports:
            try:
                if p is None or p._is_equivalent(handle.ref):
                    continue
                name = p.get_port_profile().name
            except CORBA.Exception:
                continue
            if not name.startswith("rtcf-tool") and name not in names:
                names.append(name)
    return names


def writers_note(tool: str, handle: PortHandle) -> str | None:
    """The line a tool prints before writing into an in port that live writers feed."""
    writers = other_writers(handle)
    if not writers:
        return None
    return (f"{tool}: note: {handle.address} is also fed by {', '.join(writers)}: "
            f"{'its' if len(writers) == 1 else 'their'} next sample replaces yours "
            f"(disconnect it with rtdis, or deactivate the writer, to keep yours)")


def _disconnect(handle: PortHandle, cid: str, timeout_ms: int) -> None:
    try:
        orb = get_orb()
        ref = orb.string_to_object(orb.object_to_string(handle.ref))
        omniORB.setClientCallTimeout(ref, timeout_ms)
        ref.disconnect(cid)
    except Exception:
        pass     # gone or hung: its own liveness check drops the connection
