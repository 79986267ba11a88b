"""Data ports: OutPort / InPort, ring buffers with OpenRTM's policies, connectors.

A connector joins one OutPort to one InPort. Its buffer lives on the reading side; its
publisher (the subscription type) decides when a written sample is handed over:

* ``flush``: in ``write()``, in the writer's thread;
* ``new``: by a publisher thread woken by each write (push_policy all | fifo | skip | new);
* ``periodic``: by a publisher thread at ``push_rate`` Hz (same push policies).

In simulation mode (rtcf.simtime) a publisher thread would hand samples over at a moment
that depends on the machine, not on simulated time. There, ``new`` and ``periodic``
connectors whose receiver lives in this process deliver in the writer's thread at write()
(still through their push policy; ``periodic`` at the first write at or after each push
instant k / push_rate of simulated time), so two runs are bit-identical.

Within one process the sample is copied into a preallocated buffer slot; no CORBA, no
pickling. The CORBA layer supplies other ``deliver`` functions (CDR over InPortCdr.put) and
reuses the same publishers. Properties use OpenRTM's ``dataport.*`` names without the prefix.
"""

from __future__ import annotations

import enum
import itertools
import math
import threading
import time
import uuid
from collections import deque
from typing import Any, Callable

from .clock import wall_time
from .datatypes import DataType, stamp, type_by_name
from .errors import ConfigError, PortError
from .log import get_logger
from .validate import CALL_TIMEOUT_MAX, CALL_TIMEOUT_MIN, parse_yes_no


class ReadStatus(enum.Enum):
    NEW = "new"          # a sample not read before
    OLD = "old"          # nothing new; port.value keeps the last sample (readback)
    NO_DATA = "no_data"  # nothing ever received


# members used on every call, looked up once (an enum member's lookup through its class
# costs about 1k instructions on Python 3.11)
_NEW, _OLD, _NO_DATA = ReadStatus.NEW, ReadStatus.OLD, ReadStatus.NO_DATA


class PortStatus(enum.IntEnum):
    """OpenRTM::PortStatus (the InPortCdr.put result), same numbering."""
    PORT_OK = 0
    PORT_ERROR = 1
    BUFFER_FULL = 2
    BUFFER_EMPTY = 3
    BUFFER_TIMEOUT = 4
    UNKNOWN_ERROR = 5


_OK = PortStatus.PORT_OK


class PortEvent(enum.Enum):
    """Listener events (OpenRTM ConnectorDataListener / ConnectorListener)."""
    ON_WRITE = "on_write"                # OutPort.write, before delivery
    ON_SEND = "on_send"                  # a connector hands a sample over
    ON_RECEIVED = "on_received"          # an InPort buffer accepted a sample
    ON_BUFFER_FULL = "on_buffer_full"    # a sample was dropped or overwrote an unread one
    ON_READ = "on_read"                  # InPort.read returned NEW
    ON_BUFFER_EMPTY = "on_buffer_empty"  # InPort.read found nothing new
    ON_CONNECT = "on_connect"
    ON_DISCONNECT = "on_disconnect"
    # the connection was removed because its remote peer died or stopped answering; the
    # listener's sample argument is the reason (a str). ON_DISCONNECT fires just before.
    # Notified in the CORBA runtime's liveness thread (rtcf/corba/liveness.py).
    ON_CONNECTION_LOST = "on_connection_lost"


SUBSCRIPTIONS = ("flush", "new", "periodic")
MAX_BUFFER_LENGTH = 65536   # samples are preallocated: bound what a connect() may ask for
PUSH_POLICIES = ("all", "fifo", "skip", "new")
FULL_POLICIES = ("overwrite", "do_nothing", "block")
EMPTY_POLICIES = ("readback", "do_nothing", "block")
TIMESTAMP_POLICIES = ("", "on_write", "on_send", "on_received", "on_read")


# -- connector properties -----------------------------------------------------------------

class ConnectorProps:
    """Validated connector properties (OpenRTM dataport.* keys, prefix stripped)."""

    def __init__(self, props: dict[str, Any] | None = None):
        raw = {}
        for k, v in (props or {}).items():
            k = k[len("dataport."):] if k.startswith("dataport.") else k
            raw[k] = str(v).strip()
        self.raw = raw
        self.subscription_type = self._choice("subscription_type", SUBSCRIPTIONS, "flush")
        self.dataflow_type = self._choice("dataflow_type", ("push", "pull"), "push")
        self.interface_type = raw.get("interface_type", "corba_cdr") or "corba_cdr"
        self.push_policy = self._choice("publisher.push_policy", PUSH_POLICIES, "new",
                                        alias="push_policy")
        self.skip_count = self._int("publisher.skip_count", 0, lo=0, alias="skip_count")
        self.push_rate = self._float("publisher.push_rate", 100.0, alias="push_rate")
        self.buffer_length = self._int("buffer.length", 8, lo=1, hi=MAX_BUFFER_LENGTH)
        self.full_policy = self._choice("buffer.write.full_policy", FULL_POLICIES,
                                        "overwrite")
        self.write_timeout = self._float("buffer.write.timeout", 1.0)
        self.empty_policy = self._choice("buffer.read.empty_policy", EMPTY_POLICIES,
                                         "readback")
        self.read_timeout = self._float("buffer.read.timeout", 1.0)
        self.timestamp_policy = self._choice("timestamp_policy", TIMESTAMP_POLICIES, "")
        # rtcf's own: how long one call to a remote peer may take [s] (None: the process
        # default, rtcf.connector.call_timeout); a peer that takes longer is skipped
        self.call_timeout = self._float("call_timeout", None)  # type: ignore[arg-type]
        if self.call_timeout is not None and not (
                CALL_TIMEOUT_MIN <= self.call_timeout <= CALL_TIMEOUT_MAX):
            raise ConfigError(f"dataport.call_timeout: expected a number of seconds between "
                              f"{CALL_TIMEOUT_MIN:g} and {CALL_TIMEOUT_MAX:g}, got "
                              f"{self.raw.get('call_timeout')!r}")
        if self.subscription_type == "periodic" and self.push_rate <= 0:
            raise ConfigError(f"dataport.publisher.push_rate: expected > 0, got "
                              f"{self.push_rate}")

    def _get(self, key: str, alias: str | None) -> str | None:
        v = self.raw.get(key)
        if (v is None or v == "") and alias:
            v = self.raw.get(alias)
        return v if v not in (None, "") else None

    def _choice(self, key: str, allowed: tuple[str, ...], default: str,
                alias: str | None = None) -> str:
        v = self._get(key, alias)
        if v is None:
            return default
        v = v.lower()
        if v not in allowed:
            raise ConfigError(f"dataport.{key}: expected one of "
                              f"{', '.join(a for a in allowed if a)}, got {v!r}")
        return v

    def _int(self, key: str, default: int, lo: int, alias: str | None = None,
             hi: int | None = None) -> int:
        v = self._get(key, alias)
        if v is None:
            return default
        try:
            n = int(v)
        except ValueError:
            raise ConfigError(f"dataport.{key}: expected an integer, got {v!r}") from None
        if n < lo:
            raise ConfigError(f"dataport.{key}: expected >= {lo}, got {n}")
        if hi is not None and n > hi:
            raise ConfigError(f"dataport.{key}: expected <= {hi}, got {n}")
        return n

    def _float(self, key: str, default: float, alias: str | None = None) -> float:
        v = self._get(key, alias)
        if v is None:
            return default
        try:
            return float(v)
        except ValueError:
            raise ConfigError(f"dataport.{key}: expected a number, got {v!r}") from None


# -- buffer -------------------------------------------------------------------------------

class RingBuffer:
    """A bounded FIFO of preallocated samples with OpenRTM's full/empty policies.

    Runs in: any thread (writer and reader may differ; one short lock). The condition
    variable is used only by the ``block`` policies; the others never wait.
    """

    def __init__(self, data_type: type, props: ConnectorProps):
        self.length = props.buffer_length
        self.full_policy = props.full_policy
        self.write_timeout = props.write_timeout
        self.empty_policy = props.empty_policy
        self.read_timeout = props.read_timeout
        self.stamp_received = props.timestamp_policy == "on_received"
        self._slots = [data_type() for _ in range(self.length)]
        self._head = 0        # index of the oldest unread sample
        # the number of unread samples: changed under the lock by put / take; a reader may
        # look at it without the lock (0: a take now would find nothing)
        self.count = 0
        self._lock = threading.Lock()
        self._blocking = "block" in (self.full_policy, self.empty_policy)
        self._cond = threading.Condition(self._lock) if self._blocking else None
        self.overwritten = 0  # unread samples lost to the overwrite policy
        self.dropped = 0      # samples refused by do_nothing / block timeout
        # True while one thread at a time puts and takes (writer and reader in one EC:
        # set_unlocked); put / take then skip the lock
        self.unlocked = False
        if not self._blocking:
            # the policies that never wait get put / take built once, without the
            # per-call policy branches (same steps, same order, same results)
            self.take = self._plain_take()  # type: ignore[method-assign]
            if self.full_policy == "overwrite" and not self.stamp_received:
                self.put = self._overwrite_put()  # type: ignore[method-assign]

    def __len__(self) -> int:
        return self.count

    def set_unlocked(self, flag: bool) -> bool:
        """Build put / take without (True) or with (False) the lock; True when that
        changed something. Only for buffers whose policies never wait. Lock-free is safe
        only while every put and take runs in one thread at a time (the writer's and the
        reader's components members of one EC and of no other: update_port_locks decides).
        Runs in: the thread that connects or changes EC membership."""
        flag = bool(flag) and not self._blocking
        if flag == self.unlocked:
            return False
        self.unlocked = flag
        self.take = self._plain_take()  # type: ignore[method-assign]
        if self.full_policy == "overwrite" and not self.stamp_received:
            self.put = self._overwrite_put()  # type: ignore[method-assign]
        return True

    def put(self, sample: DataType) -> PortStatus:
        """Copy ``sample`` into the next slot (stamped now for on_received)."""
        with self._lock:
            if self.count == self.length:
                if self.full_policy == "overwrite":
                    self._head = (self._head + 1) % self.length
                    self.count -= 1
                    self.overwritten += 1
                elif self.full_policy == "do_nothing":
                    self.dropped += 1
                    return PortStatus.BUFFER_FULL
                else:
                    deadline = time.monotonic() + self.write_timeout
                    while self.count == self.length:
                        left = deadline - time.monotonic()
                        if left <= 0:
                            self.dropped += 1
                            return PortStatus.BUFFER_TIMEOUT
                        self._cond.wait(left)  # type: ignore[union-attr]
            slot = self._slots[(self._head + self.count) % self.length]
            slot.assign(sample)
            if self.stamp_received:
                stamp(slot, wall_time())
            self.count += 1
            if self._blocking:
                self._cond.notify_all()  # type: ignore[union-attr]
            return _OK

    def _overwrite_put(self) -> Callable[[DataType], PortStatus]:
        """put() for the overwrite policy, no blocking, nothing stamped: a full buffer drops
        its oldest sample, whose slot takes the new one. ``put.ring`` is this buffer (an
        OutPort with this one connector folds the put into its write: _ring_write)."""
        # lock.acquire() / release() rather than ``with lock``: the same lock held over the
        # same steps, about 1k instructions less per call (no __exit__(None, None, None))
        acquire, release = self._lock.acquire, self._lock.release
        slots = self._slots       # the same list object for the buffer's life (take swaps
        length = self.length      # items in it, never replaces it)
        ok = PortStatus.PORT_OK

        def free_put(sample: DataType) -> PortStatus:
            # put's steps without the lock (set_unlocked)
            count = self.count
            if count == length:
                idx = self._head
                head = idx + 1
                self._head = head if head != length else 0
                self.overwritten += 1
                try:
                    slots[idx].assign(sample)
                except BaseException:
                    self.count = count - 1
                    raise
            else:
                idx = self._head + count
                if idx >= length:
                    idx -= length
                slots[idx].assign(sample)
                self.count = count + 1
            return ok

        if self.unlocked:
            free_put.ring = self  # type: ignore[attr-defined]
            return free_put

        def put(sample: DataType) -> PortStatus:
            acquire()
            try:
                count = self.count
                if count == length:
                    idx = self._head
                    head = idx + 1
                    self._head = head if head != length else 0
                    self.overwritten += 1
                    try:
                        slots[idx].assign(sample)
                    except BaseException:
                        self.count = count - 1   # as put(): the oldest is lost all the same
                        raise
                else:
                    idx = self._head + count
                    if idx >= length:
                        idx -= length
                    slots[idx].assign(sample)
                    self.count = count + 1
            finally:
                release()
            return ok
        put.ring = self  # type: ignore[attr-defined]
        return put

    def _plain_take(self) -> Callable[..., DataType | None]:
        """take() for buffers whose policies never wait (``block`` is then a no-op)."""
        acquire, release = self._lock.acquire, self._lock.release
        slots = self._slots
        length = self.length

        def free_take(into_swap: DataType, block: bool = False) -> DataType | None:
            # take's steps without the lock (set_unlocked)
            count = self.count
            if count == 0:
                return None
            head = self._head
            out = slots[head]
            slots[head] = into_swap
            head += 1
            self._head = head if head != length else 0
            self.count = count - 1
            return out

        if self.unlocked:
            return free_take

        def take(into_swap: DataType, block: bool = False) -> DataType | None:
            acquire()
            try:
                count = self.count
                if count == 0:
                    return None
                head = self._head
                out = slots[head]
                slots[head] = into_swap
                head += 1
                self._head = head if head != length else 0
                self.count = count - 1
                return out
            finally:
                release()
        return take

    def put_decoded(self, decode: Callable[[Any, DataType], Any], data: Any) -> PortStatus:
        """Decode ``data`` straight into the next slot (one copy instead of two); a decode
        error propagates and leaves the buffer's content as it was, except that in a full
        overwrite buffer the oldest sample is lost. Only for the overwrite policy."""
        with self._lock:
            full = self.count == self.length
            idx = self._head if full else (self._head + self.count) % self.length
            try:
                decode(data, self._slots[idx])
            except BaseException:
                if full:
                    self._head = (self._head + 1) % self.length
                    self.count -= 1
                    self.overwritten += 1
                raise
            if full:
                self._head = (self._head + 1) % self.length
                self.overwritten += 1
            else:
                self.count += 1
            if self.stamp_received:
                stamp(self._slots[idx], wall_time())
            return _OK

    def put_status_full(self) -> bool:
        return self.count == self.length

    def take(self, into_swap: DataType, block: bool = False) -> DataType | None:
        """Pop the oldest sample by exchanging it with ``into_swap`` (no copy): the caller's
        sample object goes into the ring as a spare slot, the buffered one is returned."""
        with self._lock:
            if self.count == 0 and block and self._blocking:
                deadline = time.monotonic() + self.read_timeout
                while self.count == 0:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._cond.wait(left)  # type: ignore[union-attr]
            if self.count == 0:
                return None
            out = self._slots[self._head]
            self._slots[self._head] = into_swap
            self._head = (self._head + 1) % self.length
            self.count -= 1
            if self._blocking:
                self._cond.notify_all()  # type: ignore[union-attr]
            return out

    def clear(self) -> None:
        with self._lock:
            self.count = 0
            if self._blocking:
                self._cond.notify_all()  # type: ignore[union-attr]


# -- publishers ---------------------------------------------------------------------------

Deliver = Callable[[DataType], PortStatus]

# The clock of simulated time while the process is in simulation mode (rtcf.simtime sets
# it), else None; read when a publisher is made.
_sim_clock: Any = None


def set_simulation_clock(clock: Any) -> None:
    """In simulation mode, the clock of simulated time (None: wall-clock mode). Publishers
    made while it is set deliver in-process samples in the writer's thread."""
    global _sim_clock
    _sim_clock = clock


class Publisher:
    """Hands written samples to ``deliver`` according to the subscription type."""

    def __init__(self, data_type: type, props: ConnectorProps, deliver: Deliver,
                 name: str = ""):
        self.kind = props.subscription_type
        self.deliver = deliver
        self.props = props
        self.data_type = data_type
        self.sent = 0
        self.failed = 0
        self.last_status = PortStatus.PORT_OK
        self._thread: threading.Thread | None = None
        # simulation mode, receiver in this process: deliver at write (module docstring)
        self._sync = _sim_clock if self.kind != "flush" and getattr(
            deliver, "in_process", False) else None
        self._next_push = -math.inf
        if self.kind != "flush":
            # queued copies live in preallocated samples recycled through _free: a write
            # allocates nothing once the pool is warm
            self._limit = props.buffer_length if props.push_policy != "all" else None
            self._queue: deque[DataType] = deque()
            self._free = [data_type() for _ in range(min(props.buffer_length, 64) + 1)]
            self._cond = threading.Condition(threading.Lock())
            self._stop = False
            self._skip_counter = 0
            if self._sync is not None:
                return
            self._thread = threading.Thread(target=self._run, daemon=True,
                                            name=f"rtcf-pub-{name}")
            self._thread.start()

    def fast_write(self) -> Callable[[DataType], PortStatus]:
        """The function OutPort.write calls: for a flush connector with nothing to stamp,
        the deliver function itself (no bookkeeping layers in the cycle path).
        Runs in: the thread that connects (once per connection)."""
        if self.kind == "flush" and self.props.timestamp_policy != "on_send" \
                and getattr(self.deliver, "fast_ok", False):
            return self.deliver
        return self.write

    def write(self, sample: DataType) -> PortStatus:
        """Runs in: the writer's thread."""
        if self.kind == "flush":
            return self._send(sample)
        with self._cond:
            q = self._queue
            if self._limit is not None and len(q) >= self._limit:
                self._free.append(q.popleft())      # the oldest unsent sample is dropped
            slot = self._free.pop() if self._free else self.data_type()
            slot.assign(sample)
            q.append(slot)
            if self._sync is None:
                if self.kind == "new":      # a periodic publisher wakes on its own clock
                    self._cond.notify()
                return _OK
            if self.kind == "periodic":
                t = self._sync.now()
                if t < self._next_push:
                    return _OK
                rate = self.props.push_rate
                n = math.floor(t * rate) + 1
                while n / rate <= t:
                    n += 1
                self._next_push = n / rate
            batch = self._pick()
        status = _OK
        for s in batch:
            status = self._send(s)
        with self._cond:
            self._free.extend(batch)
        return status

    def _send(self, sample: DataType) -> PortStatus:
        if self.props.timestamp_policy == "on_send":
            stamp(sample, wall_time())
        try:
            status = self.deliver(sample)
        except Exception:  # a failing transport must not take the writer down
            get_logger().exception("data port delivery failed")
            status = PortStatus.UNKNOWN_ERROR
        self.last_status = status
        if status == _OK:
            self.sent += 1
        else:
            self.failed += 1
        return status

    def _pick(self) -> list[DataType]:
        """Samples to send now, by push policy (called with the lock held)."""
        q = self._queue
        if not q:
            return []
        policy = self.props.push_policy
        if policy == "all":
            out = list(q)
            q.clear()
        elif policy == "fifo":
            out = [q.popleft()]
        elif policy == "new":
            out = [q.pop()]
            self._free.extend(q)
            q.clear()
        else:  # skip: send one, then skip skip_count samples
            out = []
            while q:
                s = q.popleft()
                if self._skip_counter == 0:
                    out.append(s)
                else:
                    self._free.append(s)
                self._skip_counter = (self._skip_counter + 1) % (self.props.skip_count + 1)
        return out

    def _run(self) -> None:
        period = 1.0 / self.props.push_rate if self.kind == "periodic" else None
        next_t = time.monotonic()
        while True:
            with self._cond:
                if period is None:
                    while not self._queue and not self._stop:
                        self._cond.wait()
                else:
                    next_t += period
                    left = next_t - time.monotonic()
                    if left > 0 and not self._stop:
                        self._cond.wait_for(lambda: self._stop, timeout=left)
                    elif left < -period:
                        next_t = time.monotonic()
                if self._stop:
                    return
                batch = self._pick()
            for s in batch:
                self._send(s)
            if batch:
                with self._cond:
                    self._free.extend(batch)

    def close(self) -> None:
        """Stop the publisher thread (if any) and wait for it. Runs in: the thread that
        disconnects."""
        if self._thread is not None:
            with self._cond:
                self._stop = True
                self._cond.notify_all()
            if self._thread is not threading.current_thread():
                self._thread.join(timeout=2.0)
            self._thread = None


# -- ports --------------------------------------------------------------------------------

Listener = Callable[..., Any]


class Port:
    """Common part of data ports: name, owner, connectors, listeners."""

    port_type = ""

    def __init__(self, name: str, data_type: type | str):
        if isinstance(data_type, str):
            data_type = type_by_name(data_type)
        if not (isinstance(data_type, type) and issubclass(data_type, DataType)):
            raise PortError(f"port {name!r}: data type must be an rtcf.datatypes type, "
                            f"got {data_type!r}")
        self.name = name
        self.data_type = data_type
        self.owner: Any = None
        self.connectors: dict[str, "Connector"] = {}
        self._listeners: dict[PortEvent, list[Listener]] = {}
        self.properties: dict[str, str] = {}
        # in_use()'s answer kept up to date (connectors and listeners change only through
        # attach / detach / add_listener): cycle code tests it without a call
        self.used = False

    @property
    def full_name(self) -> str:
        """``<instance>.<port>``. Runs in: any thread."""
        owner = getattr(self.owner, "instance_name", "")
        return f"{owner}.{self.name}" if owner else self.name

    @property
    def listened(self) -> bool:
        """True while any listener is registered (a transport then takes the path that
        tells them). Runs in: any thread."""
        return bool(self._listeners)

    def add_listener(self, event: PortEvent, callback: Listener) -> Callable[[], None]:
        """Register ``callback(port, connector_id, sample)``; returns a remover.
        Runs in: any thread; the callback runs in the thread that delivers (the writer's
        EC thread for flush connectors, the publisher thread otherwise)."""
        self._listeners.setdefault(event, []).append(callback)
        self.used = True
        self._listeners_changed()

        def remove() -> None:
            cbs = self._listeners.get(event, [])
            if callback in cbs:
                cbs.remove(callback)
            if not cbs:
                self._listeners.pop(event, None)
            self.used = bool(self.connectors) or bool(self._listeners)
            self._listeners_changed()
        return remove

    def _listeners_changed(self) -> None:
        """A listener came or went (InPort: its writers' fast path changes)."""

    def _notify(self, event: PortEvent, connector_id: str, sample: Any) -> None:
        for cb in self._listeners.get(event, ()):
            try:
                cb(self, connector_id, sample)
            except Exception:
                get_logger().exception("listener of %s failed", self.full_name)

    def in_use(self) -> bool:
        """True when a connector or a listener would see this port's reads or writes: a
        component may skip reading or writing a port that is not in use (nothing could
        arrive or be delivered); also the attribute ``used``. Runs in: any thread."""
        return bool(self.connectors) or bool(self._listeners)

    def disconnect_all(self) -> None:
        """Runs in: the thread that finalises the owner."""
        for cid in list(self.connectors):
            disconnect(cid, self)


class OutPort(Port):
    """A data output. ``value`` is a preallocated sample to fill in place before write()."""

    port_type = "DataOutPort"

    def __init__(self, name: str, data_type: type | str, value: DataType | None = None):
        super().__init__(name, data_type)
        self.value = value if value is not None else self.data_type()
        self.timestamp_policy = ""
        self._pubs: tuple["Connector", ...] = ()
        self.writes = 0

    def write(self, sample: DataType | None = None) -> bool:
        """Send ``sample`` (or ``self.value``) on every connector.

        Returns True when every connector accepted it (OpenRTM's write() result).
        Runs in: the owner's EC thread.
        """
        if sample is None:
            sample = self.value
        elif type(sample) is not self.data_type:
            raise self._type_error(sample)
        if self.timestamp_policy == "on_write":
            stamp(sample, wall_time())
        self.writes += 1
        if self._listeners:
            self._notify(PortEvent.ON_WRITE, "", sample)
        ok = True
        for put in self._pubs:
            if put(sample) is not _OK:
                ok = False
        return ok

    def _refresh(self) -> None:
        conns = [c for c in self.connectors.values() if c.publisher is not None]
        pubs = []
        for c in conns:
            put = c.publisher.fast_write()
            ring = getattr(put, "ring_buffer", None)
            if ring is not None and c.inport is not None and not c.inport._listeners:
                # an in-process reader no listener watches: straight into its buffer
                put = ring.put
            pubs.append(put)
        self._pubs = tuple(pubs)
        self.timestamp_policy = ("on_write" if any(
            c.props.timestamp_policy == "on_write" for c in conns) else "")
        self._specialise()

    def _type_error(self, sample: Any) -> PortError:
        return PortError(f"{self.full_name}: write expects {self.data_type.__name__}, "
                         f"got {type(sample).__name__}")

    def _listeners_changed(self) -> None:
        """An ON_WRITE listener came or went: write() takes the path that tells it."""
        with _registry_lock:
            self._specialise()

    def _specialise(self) -> None:
        """While nothing is stamped at write and no listener watches this port, ``write``
        is a function built for its current connectors (an instance attribute over the
        method): the same steps as the method without the branches decided here.
        Runs in: the thread that connects, disconnects or changes listeners."""
        if self.timestamp_policy or self._listeners:
            self.__dict__.pop("write", None)
            return
        port = self
        data_type = self.data_type
        ok = _OK
        if not self._pubs:
            def write(sample: DataType | None = None) -> bool:
                if sample is not None and type(sample) is not data_type:
                    raise port._type_error(sample)
                port.writes += 1
                return True
        elif len(self._pubs) == 1 and getattr(self._pubs[0], "ring", None) is not None:
            # one in-process reader's overwrite buffer: its put folded in (one call)
            write = _ring_write(self, self._pubs[0].ring)
        elif len(self._pubs) == 1:
            put = self._pubs[0]

            def write(sample: DataType | None = None) -> bool:
                if sample is None:
                    sample = port.value
                elif type(sample) is not data_type:
                    raise port._type_error(sample)
                port.writes += 1
                return put(sample) is ok
        else:
            pubs = self._pubs

            def write(sample: DataType | None = None) -> bool:
                if sample is None:
                    sample = port.value
                elif type(sample) is not data_type:
                    raise port._type_error(sample)
                port.writes += 1
                done = True
                for put in pubs:
                    if put(sample) is not ok:
                        done = False
                return done
        write.__doc__ = OutPort.write.__doc__
        self.write = write  # type: ignore[method-assign]


def _ring_write(port: OutPort, ring: RingBuffer) -> Callable[..., bool]:
    """OutPort.write for one connector whose put is ``ring``'s overwrite put
    (RingBuffer._overwrite_put): the same steps in one function, the same result (overwrite
    never refuses: True). Runs in: the thread that connects; the function, in the writer's."""
    data_type = port.data_type
    acquire, release = ring._lock.acquire, ring._lock.release
    slots = ring._slots
    length = ring.length

    def free_write(sample: DataType | None = None) -> bool:
        # write's steps with the ring's lock-free put folded in (RingBuffer.set_unlocked)
        if sample is None:
            sample = port.value
        elif type(sample) is not data_type:
            raise port._type_error(sample)
        port.writes += 1
        count = ring.count
        if count == length:
            idx = ring._head
            head = idx + 1
            ring._head = head if head != length else 0
            ring.overwritten += 1
            try:
                slots[idx].assign(sample)
            except BaseException:
                ring.count = count - 1
                raise
        else:
            idx = ring._head + count
            if idx >= length:
                idx -= length
            slots[idx].assign(sample)
            ring.count = count + 1
        return True

    if ring.unlocked:
        return free_write

    def write(sample: DataType | None = None) -> bool:
        if sample is None:
            sample = port.value
        elif type(sample) is not data_type:
            raise port._type_error(sample)
        port.writes += 1
        acquire()
        try:
            count = ring.count
            if count == length:
                idx = ring._head
                head = idx + 1
                ring._head = head if head != length else 0
                ring.overwritten += 1
                try:
                    slots[idx].assign(sample)
                except BaseException:
                    ring.count = count - 1
                    raise
            else:
                idx = ring._head + count
                if idx >= length:
                    idx -= length
                slots[idx].assign(sample)
                ring.count = count + 1
        finally:
            release()
        return True
    return write


class InPort(Port):
    """A data input. ``read()`` moves the oldest unread sample into ``value``.

    ``value`` is replaced by the buffered sample object (no copy); hold a copy if you need
    a sample beyond the next read.
    """

    port_type = "DataInPort"

    def __init__(self, name: str, data_type: type | str, value: DataType | None = None,
                 **buffer_props: Any):
        super().__init__(name, data_type)
        self.value = value if value is not None else self.data_type()
        self.default_props = {k.replace("__", "."): v for k, v in buffer_props.items()}
        self._received = False
        self._buffers: tuple[RingBuffer, ...] = ()
        self._read_policy = "readback"
        self._stamp_on_read = False
        self._pullers: tuple[Callable[[], None], ...] = ()
        self._plain = True    # no pullers, no blocking read: read_newest's fast path
        # the one buffer while read / read_newest are the functions built for it
        # (_specialise), else None: while its ``count`` is 0, read_newest finds nothing new
        # and changes nothing, so cycle code may skip the call (OLD or NO_DATA)
        self.sole_buffer: RingBuffer | None = None

    def read(self) -> ReadStatus:
        """Runs in: the owner's EC thread."""
        for pull in self._pullers:
            pull()
        for buf in self._buffers:
            if buf.count:
                out = buf.take(self.value)
                if out is not None:
                    self.value = out
                    self._received = True
                    if self._stamp_on_read:
                        stamp(out, wall_time())
                    if self._listeners:
                        self._notify(PortEvent.ON_READ, "", out)
                    return _NEW
        if self._read_policy == "block" and self._buffers:
            out = self._buffers[0].take(self.value, block=True)
            if out is not None:
                self.value = out
                self._received = True
                return _NEW
        if self._listeners:
            self._notify(PortEvent.ON_BUFFER_EMPTY, "", None)
        return _OLD if self._received else _NO_DATA

    def read_newest(self) -> ReadStatus:
        """Drop everything but the newest unread sample, then read it. Runs in: EC thread."""
        status = _OLD if self._received else _NO_DATA
        while True:
            s = self.read()
            if s is not _NEW:
                return status
            status = s
            # nothing more to take and nothing a further read() would do (pull, block,
            # tell a listener the buffer is empty): that read's answer is known
            if self._plain and not self._listeners:
                for b in self._buffers:
                    if b.count:
                        break
                else:
                    return status

    def is_new(self) -> bool:
        """True when a sample arrived that was not read yet. Runs in: EC thread."""
        return any(b.count for b in self._buffers)

    def unread(self) -> int:
        """The number of samples received and not read yet. Runs in: EC thread."""
        return sum(len(b) for b in self._buffers)

    def _refresh(self) -> None:
        self._buffers = tuple(c.buffer for c in self.connectors.values()
                              if c.buffer is not None)
        self._pullers = tuple(c.puller for c in self.connectors.values()
                              if c.puller is not None)
        policies = [c.props for c in self.connectors.values() if c.buffer is not None]
        self._read_policy = policies[0].empty_policy if policies else "readback"
        self._stamp_on_read = any(p.timestamp_policy == "on_read" for p in policies)
        self._plain = not self._pullers and self._read_policy != "block"
        self._specialise()

    def _specialise(self) -> None:
        """With one buffer, no puller, no blocking read, nothing stamped at read and no
        listener, ``read`` and ``read_newest`` are functions built for that buffer
        (instance attributes over the methods): the same takes in the same order, the same
        answers (read_newest over a buffer that never waits has its take folded in).
        Otherwise the methods.
        Runs in: the thread that connects, disconnects or changes listeners."""
        if (len(self._buffers) != 1 or not self._plain or self._stamp_on_read
                or self._listeners):
            self.__dict__.pop("read", None)
            self.__dict__.pop("read_newest", None)
            self.sole_buffer = None
            return
        port = self
        buf = self._buffers[0]
        new, old, no_data = _NEW, _OLD, _NO_DATA
        take = buf.take

        def read() -> ReadStatus:
            if buf.count:
                out = take(port.value)
                if out is not None:
                    port.value = out
                    port._received = True
                    return new
            return old if port._received else no_data

        if buf._blocking:
            # a ``block`` full policy: take() tells a waiting writer (its method)
            def read_newest() -> ReadStatus:
                status = old if port._received else no_data
                while buf.count:
                    out = take(port.value)
                    if out is None:
                        return status
                    port.value = out
                    port._received = True
                    status = new
                return status
        elif buf.unlocked:
            # as below, the take without the lock (RingBuffer.set_unlocked)
            slots = buf._slots
            length = buf.length

            def read_newest() -> ReadStatus:
                status = old if port._received else no_data
                count = buf.count
                while count:
                    head = buf._head
                    out = slots[head]
                    slots[head] = port.value
                    head += 1
                    buf._head = head if head != length else 0
                    count -= 1
                    buf.count = count
                    port.value = out
                    port._received = True
                    status = new
                return status
        else:
            # read_newest, what cycle code calls, with the buffer's take
            # (RingBuffer._plain_take) folded in: one call per read
            acquire, release = buf._lock.acquire, buf._lock.release
            slots = buf._slots
            length = buf.length

            def read_newest() -> ReadStatus:
                status = old if port._received else no_data
                while buf.count:
                    acquire()
                    try:
                        count = buf.count
                        if count:
                            head = buf._head
                            out = slots[head]
                            slots[head] = port.value
                            head += 1
                            buf._head = head if head != length else 0
                            buf.count = count - 1
                        else:
                            out = None
                    finally:
                        release()
                    if out is None:
                        return status
                    port.value = out
                    port._received = True
                    status = new
                return status
        read.__doc__ = InPort.read.__doc__
        read_newest.__doc__ = InPort.read_newest.__doc__
        self.read = read  # type: ignore[method-assign]
        self.read_newest = read_newest  # type: ignore[method-assign]
        self.sole_buffer = buf

    def _listeners_changed(self) -> None:
        """Its in-process writers skip the listener check while none is registered:
        they look again (OutPort._refresh); so does its own read. Runs in: the thread that
        adds or removes."""
        with _registry_lock:
            self._specialise()
            for c in list(self.connectors.values()):
                if c.outport is not None:
                    c.outport._refresh()

    def receiver(self, connector_id: str, buffer: RingBuffer,
                 props: ConnectorProps) -> Deliver:
        """A deliver function that puts samples into ``buffer`` (for any transport).
        Runs in: the thread that connects; the function it returns runs in the
        delivering thread."""
        put = buffer.put
        listeners = self._listeners

        def deliver(sample: DataType) -> PortStatus:
            if not listeners:
                return put(sample)
            was_full = buffer.put_status_full()
            status = put(sample)
            if was_full:
                self._notify(PortEvent.ON_BUFFER_FULL, connector_id, sample)
            if status == _OK:
                self._notify(PortEvent.ON_RECEIVED, connector_id, sample)
            return status
        # overwrite never refuses a sample: the writer may skip the status bookkeeping
        deliver.fast_ok = props.full_policy == "overwrite"  # type: ignore[attr-defined]
        deliver.in_process = True  # type: ignore[attr-defined]  (simulation mode: sync)
        # while no listener is registered, OutPort._refresh's fast path calls the buffer's
        # put (looked up then: set_unlocked may build another)
        deliver.ring_buffer = buffer  # type: ignore[attr-defined]
        return deliver

    def decoder(self, buffer: RingBuffer, decode: Callable[[Any, DataType], Any],
                other: Callable[[Any], bool], bad: Callable[[Any, Exception], bool]
                ) -> Callable[[Any], bool]:
        """A function of an encoded payload for ``buffer`` (one of this port's): while no
        listener watches the port, ``decode(data, slot)`` straight into the buffer's next
        slot as ``buffer.put_decoded(decode, data)`` does, in one call, True; a decode
        error (ValueError, TypeError) answers ``bad(data, error)`` (in a full buffer the
        oldest sample is lost, as with put_decoded); while a listener watches, ``other(data)``.
        A buffer that is not overwrite, or stamps at receipt: ``other`` itself.
        Runs in: the thread that connects; the function, in the delivering thread."""
        if buffer.full_policy != "overwrite" or buffer.stamp_received or buffer._blocking:
            return other
        listeners = self._listeners         # the same dict for the port's life
        acquire, release = buffer._lock.acquire, buffer._lock.release
        slots = buffer._slots               # the same list for the buffer's life
        length = buffer.length

        def put(data: Any) -> bool:
            if listeners:
                return other(data)
            acquire()
            try:
                count = buffer.count
                if count == length:
                    idx = buffer._head
                    head = idx + 1
                    buffer._head = head if head != length else 0
                    buffer.overwritten += 1
                    try:
                        decode(data, slots[idx])
                    except BaseException:
                        buffer.count = count - 1     # the oldest is lost all the same
                        raise
                else:
                    idx = buffer._head + count
                    if idx >= length:
                        idx -= length
                    decode(data, slots[idx])
                    buffer.count = count + 1
            except (ValueError, TypeError) as e:
                return bad(data, e)
            finally:
                release()
            return True
        return put


# -- connectors ---------------------------------------------------------------------------

_ids = itertools.count()
_registry_lock = threading.Lock()


class Connector:
    """One connection. In-process: out-side publisher + in-side buffer in one object.

    Other transports register a Connector with only the local end's half (publisher or
    buffer) set and ``close_hook`` releasing the remote side.
    """

    def __init__(self, connector_id: str, name: str, props: ConnectorProps,
                 outport: OutPort | None, inport: InPort | None):
        self.id = connector_id
        self.name = name
        self.props = props
        self.outport = outport
        self.inport = inport
        self.buffer: RingBuffer | None = None
        self.publisher: Publisher | None = None
        self.close_hook: Callable[[], None] | None = None
        self.puller: Callable[[], None] | None = None  # pull connections: fetch into buffer
        self.profile: Any = None  # transport-specific (e.g. the CORBA ConnectorProfile)

    def close(self) -> None:
        """Stop its publisher and run its close hook once. Runs in: the thread that disconnects."""
        if self.publisher is not None:
            self.publisher.close()
        if self.close_hook is not None:
            hook, self.close_hook = self.close_hook, None
            try:
                hook()
            except Exception:
                get_logger().exception("closing connector %s failed", self.id)


def attach(port: Port, connector: Connector) -> None:
    """Register ``connector`` on ``port`` (one end) and refresh its fast path."""
    with _registry_lock:
        port.connectors[connector.id] = connector
        port.used = True
        port._refresh()  # type: ignore[attr-defined]
    port._notify(PortEvent.ON_CONNECT, connector.id, None)


def detach(port: Port, connector_id: str) -> Connector | None:
    with _registry_lock:
        c = port.connectors.pop(connector_id, None)
        port.used = bool(port.connectors) or bool(port._listeners)
        port._refresh()  # type: ignore[attr-defined]
    if c is not None:
        port._notify(PortEvent.ON_DISCONNECT, connector_id, None)
    return c


def new_connector_id() -> str:
    return str(uuid.uuid4())


def connect(outport: OutPort, inport: InPort, properties: dict[str, Any] | None = None,
            name: str = "", connector_id: str = "") -> Connector:
    """Connect two ports of this process (no CORBA). Raises PortError / ConfigError."""
    if not isinstance(outport, OutPort) or not isinstance(inport, InPort):
        raise PortError(f"connect: expected (OutPort, InPort), got "
                        f"({type(outport).__name__}, {type(inport).__name__})")
    if outport.data_type is not inport.data_type:
        raise PortError(f"connect {outport.full_name} -> {inport.full_name}: data types "
                        f"differ ({outport.data_type.__name__} vs "
                        f"{inport.data_type.__name__})")
    merged = dict(inport.default_props)
    merged.update(properties or {})
    props = ConnectorProps(merged)
    if props.dataflow_type == "pull":
        raise PortError(f"connect {outport.full_name} -> {inport.full_name}: pull "
                        "connections are made by the CORBA layer (in-process data is "
                        "always pushed)")
    allow_dup = parse_yes_no(props.raw.get("allow_dup_connection", "")) is True
    if not allow_dup:
        for c in outport.connectors.values():
            if c.inport is inport:
                raise PortError(f"connect {outport.full_name} -> {inport.full_name}: "
                                f"already connected (connector {c.id})")
    cid = connector_id or new_connector_id()
    c = Connector(cid, name or f"{outport.full_name}_{inport.full_name}", props,
                  outport, inport)
    c.buffer = RingBuffer(inport.data_type, props)
    c.publisher = Publisher(outport.data_type, props,
                            inport.receiver(cid, c.buffer, props), name=c.name)
    c.buffer.set_unlocked(_one_thread(c))    # before either end can use it
    attach(outport, c)
    attach(inport, c)
    return c


def disconnect(connector_id: str, port: Port | None = None) -> bool:
    """Remove a connector from both of its ends (either end may be given)."""
    c = None
    if port is not None:
        c = port.connectors.get(connector_id)
    if c is None:
        return False
    for end in (c.outport, c.inport):
        if end is not None:
            detach(end, connector_id)
    c.close()
    return True



# -- same-EC connectors: put and take without the lock ------------------------------------

def _one_thread(c: Connector, joining: Any = None, comp: Any = None) -> bool:
    """True when ``c`` is an in-process flush connector with a buffer that never waits and
    overwrites when full, whose writer's and reader's components are members of one and the
    same execution context and of no other (``joining``: an EC ``comp`` is about to join,
    counted already). Its puts and takes then all run in that EC's thread, one at a time
    (ports are written and read in their owner's EC thread)."""
    buf = c.buffer
    if (buf is None or c.publisher is None or c.outport is None or c.inport is None
            or buf._blocking or buf.full_policy != "overwrite"
            or c.props.subscription_type != "flush"
            or getattr(c.publisher.deliver, "ring_buffer", None) is not buf):
        return False
    ecs = []
    for owner in (c.outport.owner, c.inport.owner):
        mine = list(getattr(owner, "ecs", None) or ())
        if joining is not None and owner is comp:
            mine.append(joining)
        if len(mine) != 1:
            return False
        ecs.append(mine[0])
    return ecs[0] is ecs[1]


def update_port_locks(comp: Any, joining: Any = None) -> list[Any]:
    """Decide again, for every in-process connector of ``comp``'s ports, whether its buffer
    takes the lock (_one_thread; ``joining``: an EC ``comp`` is about to join). Returns the
    execution contexts in which a buffer ran lock-free until now and takes the lock from
    now on: the caller waits until no cycle of theirs runs (a put or take under way there
    ends before another thread may use the buffer). Runs in: the thread that changes EC
    membership."""
    was_free: list[Any] = []
    with _registry_lock:
        for port in list(getattr(comp, "ports", {}).values()):
            for c in list(port.connectors.values()):
                buf = c.buffer
                if buf is None or c.outport is None or c.inport is None:
                    continue
                free = _one_thread(c, joining, comp)
                was = buf.unlocked
                if not buf.set_unlocked(free):
                    continue
                if was:
                    ecs = getattr(c.outport.owner, "ecs", None) or ()
                    was_free.extend(ec for ec in ecs if ec not in was_free)
                c.outport._refresh()
                c.inport._specialise()
    return was_free
