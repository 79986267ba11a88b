"""What every RTC::PortService of ours shares: connector profiles and OpenRTM's chained
notify_connect / notify_disconnect over the ports listed in a ConnectorProfile.

A subclass implements ``_negotiate(cp)`` (publish, ask the next port, subscribe; it calls
``_notify_next``) and ``_release(cid)`` (drop its side of a connection), plus
``profile()``. Runs in: ORB threads.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

from omniORB import CORBA

from ..log import get_logger
from ..ports import new_connector_id
from ..validate import parse_yes_no
from .idl import stub_module
from .nv import nv_find

if TYPE_CHECKING:
    from .runtime import CorbaRuntime

DISCONNECT_TIMEOUT_MS = 2000
RTC = stub_module("RTC")
RTC__POA = stub_module("RTC__POA")
log = get_logger("corba.port")


class PortServiceBase(RTC__POA.PortService):
    """``runtime`` is the process's CorbaRuntime (its rtc.conf, liveness watchdog and
    in-process servants), or None for a port of no runtime (a tool's tap or injector)."""

    def __init__(self, runtime: "CorbaRuntime | None", full_name: str):
        self.rt = runtime
        self.full_name = full_name
        self.ref: Any = None
        self.profiles: dict[str, Any] = {}      # connector id -> RTC.ConnectorProfile
        self.stored_at: dict[str, float] = {}   # connector id -> time.monotonic() stored
        self.lock = threading.RLock()
        self._probe_refs: dict[str, Any] = {}   # IOR -> reference with a short timeout
        self._quick_refs: dict[str, Any] = {}   # IOR -> reference for notify_disconnect

    # -- to implement ----------------------------------------------------------------------
    def profile(self) -> Any:
        raise NotImplementedError

    def _negotiate(self, cp: Any) -> tuple[Any, Any]:
        raise NotImplementedError

    def _release(self, cid: str) -> None:
        raise NotImplementedError

    def _before_connect(self, cp: Any) -> None:
        """connect() on this port, before the chain starts (e.g. default properties)."""

    conf_kind = "corbaport"   # OpenRTM's rtc.conf port family: inport, outport, corbaport

    def _allow_dup_default(self) -> bool:
        """This port's own ``allow_dup_connection`` from rtc.conf, as OpenRTM reads it:
        ``port.<kind>.<port>.allow_dup_connection`` or ``port.<kind>.dataport.
        allow_dup_connection``, ``<kind>`` inport / outport / corbaport; NO unless set."""
        conf = getattr(self.rt, "conf", None) or {}
        port = self.full_name.partition(".")[2]      # "instance.port": port names may hold dots
        for key in (f"port.{self.conf_kind}.{port}.allow_dup_connection",
                    f"port.{self.conf_kind}.dataport.allow_dup_connection"):
            value = str(conf.get(key, "")).strip()
            if value:
                return parse_yes_no(value) is True
        return False

    # -- profiles --------------------------------------------------------------------------
    def get_port_profile(self) -> Any:
        self._check_soon()
        return self.profile()

    def get_connector_profiles(self) -> list:
        self._check_soon()
        with self.lock:
            return list(self.profiles.values())

    def _check_soon(self) -> None:
        """A tool reads our connectors: have the liveness thread check their peers now
        (OpenRTM drops dead connectors when the profile is read); never blocks."""
        watchdog = getattr(self.rt, "liveness", None)
        if watchdog is not None and self.profiles:
            watchdog.check_soon()

    # -- liveness (rtcf/corba/liveness.py) ---------------------------------------------------
    def stored_connectors(self) -> list[tuple[str, Any, float]]:
        """(id, profile, age [s]) of every stored connection. Runs in: the liveness thread."""
        now = time.monotonic()
        with self.lock:
            return [(cid, cp, now - self.stored_at.get(cid, now))
                    for cid, cp in self.profiles.items()]

    def probe_ref(self, port: Any) -> Any:
        """``port`` as a reference whose calls time out quickly (cached per IOR)."""
        from .liveness import PROBE_TIMEOUT_MS, with_timeout
        orb = self._orb()
        ior = orb.object_to_string(port)
        ref = self._probe_refs.get(ior)
        if ref is None:
            if len(self._probe_refs) > 256:
                self._probe_refs.clear()
            ref = self._probe_refs[ior] = with_timeout(orb, port, PROBE_TIMEOUT_MS)
        return ref

    def forget_connector(self, cid: str) -> Any:
        """Remove our side of a connection without calling anyone; the profile, or None
        when it was not (or no longer) stored."""
        with self.lock:
            cp = self.profiles.pop(cid, None)
            self.stored_at.pop(cid, None)
        if cp is not None:
            self._release(cid)
        return cp

    def get_connector_profile(self, cid: str) -> Any:
        with self.lock:
            cp = self.profiles.get(cid)
        return cp if cp is not None else RTC.ConnectorProfile("", "", [], [])

    def _index(self, cp: Any) -> int:
        """Position of this port in the profile's port list (-1 if absent)."""
        for i, p in enumerate(cp.ports):
            try:
                if p is not None and (p is self.ref or p._is_equivalent(self.ref)):
                    return i
            except CORBA.Exception:
                continue
        return -1

    def _call(self, port: Any, op: str, arg: Any) -> Any:
        """Call a PortService operation, directly when the port lives in this process.
        notify_disconnect to a remote port waits at most DISCONNECT_TIMEOUT_MS: a hung peer
        must not hold up a disconnect or a shutdown for the ORB's 10 s (the peer's own
        liveness check removes its half once it runs again)."""
        local = self.rt.local_servant(port) if self.rt is not None else None
        if local is not None:
            return getattr(local, op)(arg)
        if op == "notify_disconnect":
            port = self._quick_ref(port)
        return getattr(port, op)(arg)

    def _quick_ref(self, port: Any) -> Any:
        from .liveness import with_timeout
        orb = self._orb()
        ior = orb.object_to_string(port)
        ref = self._quick_refs.get(ior)
        if ref is None:
            if len(self._quick_refs) > 256:
                self._quick_refs.clear()
            ref = self._quick_refs[ior] = with_timeout(orb, port, DISCONNECT_TIMEOUT_MS)
        return ref

    def _orb(self) -> Any:
        """The runtime's ORB, or the process's for a port of no runtime."""
        if self.rt is not None:
            return self.rt.orb
        from .orb import get_orb
        return get_orb()

    # -- connect ---------------------------------------------------------------------------
    def _repeated_port(self, cp: Any) -> bool:
        """True when the profile names one port twice (its chain would never end)."""
        ports = [p for p in cp.ports if p is not None]
        for i, p in enumerate(ports):
            for q in ports[i + 1:]:
                try:
                    if p._is_equivalent(q):
                        return True
                except CORBA.Exception:
                    continue
        return False

    def _duplicate_of(self, cp: Any) -> str | None:
        """The id of a stored connection that already joins this port to another port of
        ``cp`` (OpenRTM's allow_dup_connection check, done on our own profiles: both ends
        store the same profile). None when there is none or duplicates are allowed, by the
        profile's ``dataport.allow_dup_connection`` or by this port's own setting."""
        raw = nv_find(cp.properties, "dataport.allow_dup_connection")
        flag = raw.strip() if isinstance(raw, str) else ""
        if parse_yes_no(flag):
            return None
        if not flag and self._allow_dup_default():
            return None
        others = []
        for p in cp.ports:
            try:
                if p is not None and not p._is_equivalent(self.ref):
                    others.append(p)
            except CORBA.Exception:
                continue
        if not others:
            return None
        with self.lock:
            stored = list(self.profiles.items())
        for cid, old in stored:
            for p in old.ports:
                for q in others:
                    try:
                        if p is not None and p._is_equivalent(q):
                            return cid
                    except CORBA.Exception:
                        continue
        return None

    def connect(self, cp: Any) -> tuple[Any, Any]:
        if not cp.ports or self._index(cp) < 0:
            log.warning("%s: connect with a profile that does not list this port",
                        self.full_name)
            return RTC.BAD_PARAMETER, cp
        if self._repeated_port(cp):
            log.warning("%s: connect refused: the profile names the same port twice",
                        self.full_name)
            return RTC.BAD_PARAMETER, cp
        fresh = not cp.connector_id
        if fresh:
            cp.connector_id = new_connector_id()
        with self.lock:
            if cp.connector_id in self.profiles:
                return RTC.BAD_PARAMETER, cp
        self._before_connect(cp)
        try:
            code, cp = self._call(cp.ports[0], "notify_connect", cp)
        except CORBA.Exception as e:
            log.warning("%s: connect failed: peer unreachable (%s)", self.full_name, e)
            code = RTC.RTC_ERROR
        if code != RTC.RTC_OK and fresh:
            # the id is new, so any port holding it holds this failed attempt
            self._clean_up_failed(cp)
        return code, cp

    def _clean_up_failed(self, cp: Any) -> None:
        """A refused connect: every port of the profile that stored its side forgets it
        (OpenRTM's connect() disconnects the failed id), so no half connection stays on a
        peer where rtdis could not find it."""
        cid = cp.connector_id
        for p in cp.ports:
            if p is None:
                continue
            try:
                self._call(p, "notify_disconnect", cid)
            except CORBA.Exception:
                continue

    def notify_connect(self, cp: Any) -> tuple[Any, Any]:
        cp.connector_id = cp.connector_id or new_connector_id()
        if self._repeated_port(cp):
            return RTC.BAD_PARAMETER, cp
        with self.lock:
            if cp.connector_id in self.profiles:
                return RTC.BAD_PARAMETER, cp
        dup = self._duplicate_of(cp)
        if dup is not None:
            log.warning("%s: connect refused: already connected to that port (connector "
                        "%s; dataport.allow_dup_connection: YES allows a second one)",
                        self.full_name, dup)
            return RTC.PRECONDITION_NOT_MET, cp
        return self._negotiate(cp)

    def _notify_next(self, cp: Any) -> tuple[Any, Any]:
        """Step (ii) of the chain: the next port in the list enriches the profile."""
        idx = self._index(cp)
        if not 0 <= idx < len(cp.ports) - 1:
            return RTC.RTC_OK, cp
        try:
            return self._call(cp.ports[idx + 1], "notify_connect", cp)
        except CORBA.Exception as e:
            log.warning("%s: peer port unreachable during connect: %s", self.full_name, e)
            return RTC.RTC_ERROR, cp

    def _store(self, cp: Any) -> None:
        with self.lock:
            self.profiles[cp.connector_id] = cp
            self.stored_at[cp.connector_id] = time.monotonic()

    # -- disconnect ------------------------------------------------------------------------
    def disconnect(self, cid: str) -> Any:
        with self.lock:
            cp = self.profiles.get(cid)
        if cp is None:
            return RTC.BAD_PARAMETER
        try:
            return self._call(cp.ports[0], "notify_disconnect", cid)
        except (CORBA.Exception, IndexError):
            return self.notify_disconnect(cid)   # the first port is gone: release ours

    def notify_disconnect(self, cid: str) -> Any:
        with self.lock:
            cp = self.profiles.pop(cid, None)
            self.stored_at.pop(cid, None)
        if cp is None:
            return RTC.BAD_PARAMETER
        idx = self._index(cp)
        self._release(cid)
        if 0 <= idx < len(cp.ports) - 1:
            try:
                self._call(cp.ports[idx + 1], "notify_disconnect", cid)
            except CORBA.Exception:
                pass   # the peer is gone; our side is released
        return RTC.RTC_OK

    def disconnect_all(self) -> Any:
        with self.lock:
            ids = list(self.profiles)
        for cid in ids:
            self.disconnect(cid)
        return RTC.RTC_OK

    def close(self) -> None:
        """Release every connection of this port (process shutdown)."""
        self.disconnect_all()
