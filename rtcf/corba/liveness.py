"""Connections to peers that die or hang: suspect connectors, probes, removal on both ends.

Two mechanisms, both run by one low-rate thread per CorbaRuntime (``rtcf-liveness``), never
by an EC thread:

* **Suspect connectors** (writer side of push, reader side of pull). The first call to a
  peer that fails with a transport error (TIMEOUT, TRANSIENT, COMM_FAILURE,
  OBJECT_NOT_EXIST) marks the connector's :class:`PeerGuard` suspect. While suspect, the
  cycle path skips the peer at the cost of one flag test, so a hung peer costs the caller at
  most one call timeout in total. The thread probes the peer's port (``get_connector_profile``
  on a reference of its own with a short timeout): an answer that still lists the connector
  resumes it; a dead peer, one that forgot the connector, or one that has not answered for
  ``rtcf.connector.suspect_timeout`` seconds gets the connection removed on both ends
  (ours, then ``notify_disconnect`` on the others).
* **Stored profiles** (every port, every ``rtcf.connector.check_interval`` seconds, and
  soon after a tool reads a port's profile): each remote port of each connector is asked for
  that connector (``get_connector_profile(id)``). A dead port (OBJECT_NOT_EXIST, or
  TRANSIENT / COMM_FAILURE twice in a row) or a port that no longer knows the connector (twice
  in a row: a connect in progress is not mistaken for a loss) gets the connector removed
  here too. OpenRTM's ports do the same when their profile is read (PortBase::updateConnectors
  in n-ando/OpenRTM-aist src/lib/rtm/PortBase.cpp drops connectors whose ports are dead).
  A port that does not answer in time (hung) is left to the suspect logic.

Every removal is a :class:`ConnectionEvent`: logged as a warning, kept in
``CorbaRuntime.events`` (the manager's status line shows them), passed to the runtime's
connection listeners, and notified on the port as ``PortEvent.ON_CONNECTION_LOST`` with the
reason as the sample argument.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from omniORB import CORBA

from ..log import get_logger

if TYPE_CHECKING:
    from .runtime import CorbaRuntime

log = get_logger("corba.liveness")

def _within_run(cp: Any, system: str) -> bool:
    """True when ``cp`` joins two processes of the lockstep run of composition ``system``
    (its reader published where it lives: rtcf/corba/lockstep.py PROCESS_PROPERTY). Such a
    connection is not checked: every instant's step call to the other process proves it
    alive, and a process of the run that dies or hangs ends the run (its step fails; the
    launcher sees it exit). The check's calls and their profiles cost each process Python
    work under the GIL every check_interval, which the time base thread waited for: an
    overrun a second of a paced split system with no motion at all (bench/README.md)."""
    from .lockstep import PROCESS_PROPERTY
    from .nv import nv_find
    value = nv_find(cp.properties, PROCESS_PROPERTY)
    return isinstance(value, str) and value.rpartition("/")[0] == system


DEAD = (CORBA.OBJECT_NOT_EXIST, CORBA.COMM_FAILURE, CORBA.TRANSIENT, CORBA.TIMEOUT)
PROBE_TIMEOUT_MS = 500       # a probe or a check call never waits longer than this
PROBE_INTERVAL = 0.25        # [s] how often suspect peers are probed
MIN_CHECK_SPACING = 0.25     # [s] profile reads by tools trigger checks at most this often
DEFAULT_CHECK_INTERVAL = 1.0     # [s] rtcf.connector.check_interval
DEFAULT_SUSPECT_TIMEOUT = 5.0    # [s] rtcf.connector.suspect_timeout


def with_timeout(orb: Any, ref: Any, ms: int) -> Any:
    """A separate object reference to the same object, with its own call timeout (so a probe
    does not share the timeout of the data path)."""
    import omniORB
    try:
        ref = orb.string_to_object(orb.object_to_string(ref))
        omniORB.setClientCallTimeout(ref, ms)
    except Exception:
        pass
    return ref


@dataclass(frozen=True)
class ConnectionEvent:
    """A connection removed because its peer died or stopped answering."""
    time: float          # time.time() when it was removed
    port: str            # our port, <instance>.<port>
    connector_id: str
    name: str            # the connector's name (rtcon: the ports it joins)
    reason: str

    def __str__(self) -> str:
        return f"{self.port}: connection {self.name or self.connector_id} lost ({self.reason})"


class PeerGuard:
    """The suspect state of one connector's remote peer.

    ``suspect`` is read in the cycle path (EC or publisher thread) and written by that path
    (mark) and by the liveness thread (resume / drop). The probe asks the peer's
    PortService for this connector (``get_connector_profile``, a real call that honours a
    per-reference timeout, unlike ``_non_existent``). Runs in: any thread.
    """

    __slots__ = ("port_servant", "cid", "probe_ref", "suspect", "since", "failures",
                 "skipped", "reason", "closed", "announced")

    def __init__(self, port_servant: Any, cid: str, peer_port: Any):
        self.port_servant = port_servant
        self.cid = cid
        self.probe_ref = port_servant.probe_ref(peer_port) if peer_port is not None else None
        self.suspect = False
        self.since = 0.0
        self.failures = 0
        self.skipped = 0
        self.reason = ""
        self.closed = False
        self.announced = False

    def mark(self, err: BaseException) -> None:
        """The cycle path saw a transport failure: skip the peer until a probe answers.
        Runs in: the caller's thread (cheap: no call, no log)."""
        if self.suspect or self.closed:
            return
        self.reason = type(err).__name__
        self.since = time.monotonic()
        self.failures = 0
        self.announced = False
        self.suspect = True
        watchdog = self.port_servant.rt.liveness
        if watchdog is not None:
            watchdog.watch(self)

    def probe(self) -> bool | None:
        """True: the peer answers and has the connection; False: dead or it forgot the
        connection; None: no answer yet (hung, or one failure to connect)."""
        if self.probe_ref is None:
            return False
        try:
            cp = self.probe_ref.get_connector_profile(self.cid)
        except CORBA.TIMEOUT:
            return None
        except (CORBA.TRANSIENT, CORBA.COMM_FAILURE):
            self.failures += 1
            return False if self.failures >= 2 else None
        except CORBA.Exception:
            return False
        return cp.connector_id == self.cid


class Liveness:
    """The runtime's liveness thread (see the module doc). Runs in: its own thread."""

    def __init__(self, runtime: "CorbaRuntime", check_interval: float = DEFAULT_CHECK_INTERVAL,
                 suspect_timeout: float = DEFAULT_SUSPECT_TIMEOUT):
        self.rt = runtime
        self.check_interval = check_interval
        self.suspect_timeout = suspect_timeout
        self.events: deque[ConnectionEvent] = deque(maxlen=100)
        self.lost = 0
        self.skipped_lockstep = 0      # connector checks left to the lockstep run
        self.listeners: list[Callable[[ConnectionEvent], Any]] = []
        self._guards: dict[int, PeerGuard] = {}
        self._misses: dict[tuple[int, str], int] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._check_soon = False
        self._thread = threading.Thread(target=self._run, name="rtcf-liveness", daemon=True)
        self._thread.start()

    # -- called from other threads --------------------------------------------------------
    def watch(self, guard: PeerGuard) -> None:
        """Probe this suspect peer from now on (logged by the liveness thread).
        Runs in: the cycle path's thread."""
        with self._lock:
            self._guards[id(guard)] = guard
        self._wake.set()

    def check_soon(self) -> None:
        """A tool read a profile: check the stored connectors now (not in this thread)."""
        self._check_soon = True
        self._wake.set()

    def suspects(self) -> list[PeerGuard]:
        with self._lock:
            return [g for g in self._guards.values() if g.suspect]

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not threading.current_thread():
            self._thread.join(2.0)

    # -- the thread -------------------------------------------------------------------------
    def _run(self) -> None:
        next_check = time.monotonic() + self.check_interval
        last_check = 0.0
        while not self._stop.is_set():
            with self._lock:
                busy = bool(self._guards)
            now = time.monotonic()
            wait = PROBE_INTERVAL if busy else max(0.0, next_check - now)
            self._wake.wait(min(wait, self.check_interval))
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                self._probe_suspects()
                now = time.monotonic()
                soon = self._check_soon and now - last_check >= MIN_CHECK_SPACING
                if soon or now >= next_check:
                    self._check_soon = False
                    last_check = now
                    next_check = now + self.check_interval
                    self._check_profiles()
            except Exception:     # never let the thread die
                log.exception("liveness check failed")

    def _probe_suspects(self) -> None:
        with self._lock:
            guards = list(self._guards.values())
        for g in guards:
            if g.closed:
                self._forget(g)
                continue
            if not g.announced:
                g.announced = True
                log.warning("%s: connector %s: peer did not answer (%s); skipping it until "
                            "it answers a probe", g.port_servant.full_name, g.cid, g.reason)
            silent = time.monotonic() - g.since
            alive = g.probe() if silent <= self.suspect_timeout else None
            if alive:
                g.suspect = False
                self._forget(g)
                log.warning("%s: connector %s: peer answers again after %.1f s; resuming "
                            "(%d sends skipped)", g.port_servant.full_name, g.cid,
                            time.monotonic() - g.since, g.skipped)
                g.skipped = 0
            elif alive is False:
                self._forget(g)
                self.drop(g.port_servant, g.cid, f"peer is gone ({g.reason})")
            elif time.monotonic() - g.since > self.suspect_timeout:
                self._forget(g)
                self.drop(g.port_servant, g.cid,
                          f"peer did not answer for {self.suspect_timeout:g} s")

    def _forget(self, g: PeerGuard) -> None:
        with self._lock:
            self._guards.pop(id(g), None)

    def _lockstep_system(self) -> str | None:
        """The composition of the lockstep run this process takes part in, else None."""
        mail = getattr(getattr(self.rt.manager, "lockstep", None), "mail", None)
        return getattr(mail, "system", None)

    def _check_profiles(self) -> None:
        with self._lock:
            suspect = {(id(g.port_servant), g.cid) for g in self._guards.values()}
        seen = set()
        system = self._lockstep_system()
        for ps in self.rt.all_port_servants():
            for cid, cp, age in ps.stored_connectors():
                seen.add((id(ps), cid))
                if age < self.check_interval or (id(ps), cid) in suspect:
                    continue            # a connect in progress; or the guard's business
                if system is not None and _within_run(cp, system):
                    self.skipped_lockstep += 1
                    continue
                verdict = self._check_one(ps, cid, cp)
                key = (id(ps), cid)
                if verdict is None:
                    self._misses.pop(key, None)
                    continue
                n = self._misses.get(key, 0) + 1
                self._misses[key] = n
                if n >= 2 or verdict.startswith("!"):
                    self._misses.pop(key, None)
                    self.drop(ps, cid, verdict.lstrip("!"))
        for key in set(self._misses) - seen:
            del self._misses[key]

    def _check_one(self, ps: Any, cid: str, cp: Any) -> str | None:
        """None when every remote port of the connector knows it, else a reason (``!`` first:
        certain at once)."""
        for port in cp.ports:
            if port is None or self.rt.local_servant(port) is not None:
                continue
            ref = ps.probe_ref(port)
            try:
                other = ref.get_connector_profile(cid)
            except CORBA.TIMEOUT:
                continue                          # hung, not dead: the guard decides
            except CORBA.OBJECT_NOT_EXIST:
                return "!peer port does not exist any more"
            except (CORBA.TRANSIENT, CORBA.COMM_FAILURE) as e:
                return f"peer port unreachable ({type(e).__name__})"
            except CORBA.Exception:
                continue
            if other.connector_id != cid:
                return "the peer port no longer has this connection"
        return None

    # -- removal ------------------------------------------------------------------------------
    def drop(self, ps: Any, cid: str, reason: str) -> None:
        """Remove a connection on our side, report it (log, port listeners, connection
        listeners), then tell the other ports (short timeouts). Runs in: the liveness thread (or any non-EC thread)."""
        cp = ps.forget_connector(cid)
        if cp is None:
            return                                 # already gone (an orderly disconnect)
        # reported here first: telling a hung peer may take its whole call timeout
        event = ConnectionEvent(time.time(), ps.full_name, cid, cp.name, reason)
        self.lost += 1
        self.events.append(event)
        log.warning("%s", event)
        port_obj = getattr(ps, "port", None)
        notify = getattr(port_obj, "_notify", None)
        if notify is not None:
            from ..ports import PortEvent
            notify(PortEvent.ON_CONNECTION_LOST, cid, reason)
        for cb in list(self.listeners):
            try:
                cb(event)
            except Exception:
                log.exception("connection listener failed")
        for port in cp.ports:
            if port is None or port._is_equivalent(ps.ref):
                continue
            try:
                target = self.rt.local_servant(port) or ps.probe_ref(port)
                target.notify_disconnect(cid)
            except CORBA.Exception:
                pass                               # dead or hung: its own check removes it
