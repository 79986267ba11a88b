"""Data ports on the wire: RTC::PortService for InPort/OutPort, OpenRTM::InPortCdr and
OutPortCdr, and the CDR connectors, following OpenRTM's notify_connect negotiation
(specs/openrtm_interop.md §1).

push: the InPort publishes ``dataport.corba_cdr.inport_ior``/``inport_ref``; the OutPort
subscribes by resolving it and creating a publisher whose deliver function marshals the
sample (bare CDR, codec cached per connector) and calls ``put``. When the peer InPortCdr
servant lives in this process the sample is handed over directly (no CDR).
pull: the roles flip (``outport_ior``; InPort.read() calls ``get``).
A peer that fails or stops answering (push: on put; pull: on get) makes the connector
suspect: it is skipped until the liveness thread (liveness.py) sees the peer answer again,
or removed on both ends when the peer is dead or stays silent; a pull from an OpenRTM
OutPortCdr whose buffer is empty (get raises BAD_PARAM) is no data this cycle.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Callable

from omniORB import CORBA

from ..log import Throttled, get_logger
from ..ports import (Connector, ConnectorProps, InPort, OutPort, Port, PortStatus, Publisher,
                     RingBuffer, attach, detach)
from ..errors import ConfigError
from .cdr import codec_for
from .idl import stub_module
from .liveness import DEAD as _DEAD, PeerGuard
from .lockstep import PROCESS_PROPERTY
from .nv import from_nvlist, nv_find, nv_set, to_nvlist
from .portbase import PortServiceBase

if TYPE_CHECKING:
    from .runtime import CorbaRuntime

RTC = stub_module("RTC")
OpenRTM = stub_module("OpenRTM")
OpenRTM__POA = stub_module("OpenRTM__POA")

_PS = {int(s): s for s in PortStatus}
_STATUS = OpenRTM.PortStatus._items
_OK = OpenRTM.PORT_OK
P = "dataport."
IOR_IN, REF_IN = P + "corba_cdr.inport_ior", P + "corba_cdr.inport_ref"
IOR_OUT, REF_OUT = P + "corba_cdr.outport_ior", P + "corba_cdr.outport_ref"
# Per-connector call timeouts [ms] to a remote peer; a peer that takes longer is skipped until
# it answers a probe. A call made in an EC thread (a flush put, a pull get) stalls that EC
# for the timeout once when the peer hangs: 100 ms there (a healthy peer's put measured p99.99
# 7.8 ms, max 28 ms on the loaded development VM); a publisher thread (new, periodic) can
# wait longer without harm. dataport.call_timeout [s] or rtcf.connector.call_timeout set them.
CALL_TIMEOUT_MS = 1000        # publisher threads
EC_CALL_TIMEOUT_MS = 100      # calls in the EC thread: flush push, pull
log = get_logger("corba.dataport")


def _same_type(port: Port, declared: str | None) -> bool:
    """OpenRTM sends repository ids (IDL:RTC/TimedDoubleSeq:1.0); old versions the bare
    type name. Anything else naming another type is a mismatch."""
    if not declared:
        return True
    want = port.data_type
    d = declared.strip()
    return d in (want.REPO_ID, want.__name__, want.IDL_NAME, f"RTC::{want.__name__}")


def _endian_little(props: dict[str, Any]) -> bool:
    raw = str(props.get(P + "serializer.cdr.endian", "little") or "little")
    first = raw.split(",")[0].strip().lower()
    return first != "big"


class InPortCdrServant(OpenRTM__POA.InPortCdr):
    """Receives CDR payloads for one connector. Runs in: ORB threads."""

    def __init__(self, port: InPort, connector_id: str, buffer: RingBuffer,
                 props: ConnectorProps, little: bool):
        self.port = port
        self.codec = codec_for(port.data_type, little)
        self.scratch = port.data_type()
        self.deliver = port.receiver(connector_id, buffer, props)
        self.buffer = buffer
        self.direct = props.full_policy == "overwrite"   # decode straight into the buffer
        self.lock = threading.Lock()
        self.bad = Throttled(log, 5.0)

    def put(self, data: bytes) -> Any:
        if self.direct and not self.port.listened:
            try:
                self.buffer.put_decoded(self.codec.decode, data)
            except (ValueError, TypeError) as e:
                return self._malformed(data, e)
            return _OK
        with self.lock:
            try:
                self.codec.decode(data, self.scratch)
            except (ValueError, TypeError) as e:
                return self._malformed(data, e)
            status = self.deliver(self.scratch)
        return _STATUS[int(status)]

    def _malformed(self, data: bytes, e: Exception) -> Any:
        self.bad.warning("%s: rejected a malformed %s payload (%d bytes): %s",
                         self.port.full_name, self.port.data_type.__name__, len(data), e)
        return OpenRTM.PORT_ERROR

    def receiver(self) -> Callable[[bytes], bool]:
        """put() as a function made once, what StepMail hands a carried payload to: True
        when the sample was taken. With an overwrite buffer and no listener on the port the
        payload is decoded straight into the buffer in one call (InPort.decoder);
        otherwise it is put(). The same errors and warnings as put(). Runs in: the thread
        that connects; the function: the delivering thread."""
        put = self.put
        malformed = self._malformed

        def other(data: bytes) -> bool:
            return put(data) is _OK

        def bad(data: bytes, e: Exception) -> bool:
            malformed(data, e)
            return False
        if not self.direct:
            return other
        return self.port.decoder(self.buffer, self.codec.decode, other, bad)


class OutPortCdrServant(OpenRTM__POA.OutPortCdr):
    """Serves pull connections: get() hands out the oldest buffered sample."""

    def __init__(self, port: OutPort, buffer: RingBuffer, little: bool):
        self.port = port
        self.buffer = buffer
        self.codec = codec_for(port.data_type, little)
        self.spare = port.data_type()
        self.lock = threading.Lock()

    def get(self) -> tuple[Any, bytes]:
        """Runs in: an ORB thread (the reader's pull)."""
        with self.lock:
            got = self.buffer.take(self.spare)
            if got is None:
                return OpenRTM.BUFFER_EMPTY, b""
            self.spare = got
            return OpenRTM.PORT_OK, self.codec.encode(got)


class DataPortServant(PortServiceBase):
    """RTC::PortService of one InPort or OutPort. Runs in: ORB threads."""

    def __init__(self, port: Port, runtime: "CorbaRuntime"):
        super().__init__(runtime, port.full_name)
        self.port = port
        self.conf_kind = "outport" if isinstance(port, OutPort) else "inport"
        self.servants: dict[str, Any] = {}      # connector id -> InPortCdr/OutPortCdr servant
        self.guards: dict[str, PeerGuard] = {}  # connector id -> remote peer's suspect state

    def properties(self) -> dict[str, str]:
        outp = isinstance(self.port, OutPort)
        return {
            "port.port_type": self.port.port_type,
            P + "data_type": self.port.data_type.REPO_ID,
            P + "subscription_type": "flush,new,periodic" if outp else "Any",
            P + "dataflow_type": "push,pull",
            P + "interface_type": "corba_cdr",
        }

    def profile(self) -> Any:
        return RTC.PortProfile(self.port.full_name, [], self.ref,
                               self.get_connector_profiles(),
                               self.rt.component_ref(self.port.owner),
                               to_nvlist(self.properties()))

    def _before_connect(self, cp: Any) -> None:
        # OpenRTM's OutPortBase::connect and InPortBase::connect both add the default
        # (n-ando/OpenRTM-aist src/lib/rtm/InPortBase.cpp, InPortBase::connect)
        if nv_find(cp.properties, P + "serializer.cdr.endian") is None:
            nv_set(cp.properties, P + "serializer.cdr.endian", "little,big")

    def _negotiate(self, cp: Any) -> tuple[Any, Any]:
        props = from_nvlist(cp.properties, strings_only=False)
        cid = cp.connector_id
        try:
            cprops = ConnectorProps({k: v for k, v in props.items() if isinstance(v, str)})
        except ConfigError as e:
            log.warning("%s: connect refused: %s", self.port.full_name, e)
            return RTC.BAD_PARAMETER, cp
        if not _same_type(self.port, props.get(P + "data_type")):
            log.warning("%s: connect refused: data type %s, this port carries %s",
                        self.port.full_name, props.get(P + "data_type"),
                        self.port.data_type.REPO_ID)
            return RTC.BAD_PARAMETER, cp
        if cprops.interface_type not in ("corba_cdr", "direct"):
            log.warning("%s: connect refused: interface_type %r is not supported",
                        self.port.full_name, cprops.interface_type)
            return RTC.BAD_PARAMETER, cp
        little = _endian_little(props)
        pull = cprops.dataflow_type == "pull"
        # (i) publish our interface (and our side's data type, as OpenRTM does)
        side = "outport" if isinstance(self.port, OutPort) else "inport"
        nv_set(cp.properties, f"{P}{side}.data_type", self.port.data_type.REPO_ID)
        buffer = None
        if isinstance(self.port, InPort) and not pull:
            buffer = RingBuffer(self.port.data_type, cprops)
            servant = InPortCdrServant(self.port, cid, buffer, cprops, little)
            ref = self.rt.activate(servant)
            nv_set(cp.properties, IOR_IN, self.rt.orb.object_to_string(ref))
            nv_set(cp.properties, REF_IN, ref)
            self.servants[cid] = servant
            self.rt.inports[cid] = servant
            mail = self._mail()
            if mail is not None:          # where this reader lives in a lockstep run
                nv_set(cp.properties, PROCESS_PROPERTY, mail.address())
                mail.receive(cid, servant.receiver())
        elif isinstance(self.port, OutPort) and pull:
            buffer = RingBuffer(self.port.data_type, cprops)
            servant = OutPortCdrServant(self.port, buffer, little)
            ref = self.rt.activate(servant)
            nv_set(cp.properties, IOR_OUT, self.rt.orb.object_to_string(ref))
            nv_set(cp.properties, REF_OUT, ref)
            self.servants[cid] = servant
        # (ii) the next port enriches the profile
        code, cp = self._notify_next(cp)
        if code != RTC.RTC_OK:
            self._release(cid)
            return code, cp
        # (iii) subscribe to what the others published
        try:
            connector = self._subscribe(cp, cid, cprops, little, buffer)
        except (LookupError, ValueError, CORBA.Exception) as e:
            log.warning("%s: connect failed: %s", self.port.full_name, e)
            self._release(cid)
            return RTC.RTC_ERROR, cp
        self._store(cp)
        connector.profile = cp
        attach(self.port, connector)
        return RTC.RTC_OK, cp

    def _resolve(self, cp: Any, ior_key: str, ref_key: str, iface: Any) -> Any:
        obj = None
        ior = nv_find(cp.properties, ior_key)
        if isinstance(ior, str) and ior:
            obj = self.rt.orb.string_to_object(ior)
        if obj is None:
            obj = nv_find(cp.properties, ref_key)
        if obj is None or isinstance(obj, str):
            raise LookupError(f"the peer published no {ior_key}")
        narrowed = obj._narrow(iface)
        if narrowed is None:
            raise LookupError(f"{ior_key} is not a {iface._NP_RepositoryId}")
        return narrowed

    def _subscribe(self, cp: Any, cid: str, props: ConnectorProps, little: bool,
                   buffer: RingBuffer | None) -> Connector:
        port = self.port
        name = cp.name or cid
        if isinstance(port, OutPort):
            c = Connector(cid, name, props, port, None)
            if props.dataflow_type == "pull":
                c.buffer = None
                c.publisher = Publisher(port.data_type, props, buffer.put, name=name)
            else:
                peer = self._resolve(cp, IOR_IN, REF_IN, OpenRTM.InPortCdr)
                c.publisher = Publisher(port.data_type, props,
                                        self._pusher(peer, cp, little), name=name)
            return c
        c = Connector(cid, name, props, None, port)
        if props.dataflow_type == "pull":
            c.buffer = RingBuffer(port.data_type, props)
            peer = self._resolve(cp, IOR_OUT, REF_OUT, OpenRTM.OutPortCdr)
            c.puller = self._puller(peer, c.buffer, cp, little)
        else:
            c.buffer = buffer
        return c

    def call_timeout_ms(self, cp: Any) -> int:
        """The connector's call timeout [ms]: ``dataport.call_timeout`` [s] of the profile,
        else the process's ``rtcf.connector.call_timeout`` [s], else EC_CALL_TIMEOUT_MS
        when the call runs in an EC thread (flush push, pull) and CALL_TIMEOUT_MS when it
        runs in a publisher thread (new, periodic). Runs in: ORB thread (connect)."""
        raw = nv_find(cp.properties, P + "call_timeout")
        try:
            seconds = float(raw) if isinstance(raw, str) and raw.strip() else float(
                self.rt.conf.get("rtcf.connector.call_timeout", "") or "nan")
        except ValueError:
            seconds = float("nan")
        if seconds == seconds and seconds > 0:
            return max(1, int(round(seconds * 1000)))
        props = from_nvlist(cp.properties)
        in_ec = props.get(P + "dataflow_type", "push") == "pull" or str(
            props.get(P + "subscription_type", "flush") or "flush").lower() == "flush"
        return EC_CALL_TIMEOUT_MS if in_ec else CALL_TIMEOUT_MS

    def _guard(self, peer: Any, cp: Any) -> PeerGuard:
        """A per-connector call timeout and suspect state for a remote peer."""
        try:
            import omniORB
            omniORB.setClientCallTimeout(peer, self.call_timeout_ms(cp))
        except Exception:
            pass
        cid = cp.connector_id
        others = [p for p in cp.ports if p is not None and not p._is_equivalent(self.ref)]
        guard = PeerGuard(self, cid, others[0] if others else None)
        self.guards[cid] = guard
        return guard

    def _mail(self) -> Any:
        """The process's StepMail when it is part of a lockstep run, else None."""
        lock = getattr(self.rt.manager, "lockstep", None)
        return getattr(lock, "mail", None)

    def _pusher(self, peer: Any, cp: Any, little: bool) -> Any:
        local = self.rt.local_servant(peer)
        if isinstance(local, InPortCdrServant):
            return local.deliver              # same process: straight into its buffer
        direct = self._putter(peer, cp, little)
        mail = self._mail()
        dest = mail.route(nv_find(cp.properties, PROCESS_PROPERTY)) if mail else None
        if dest is None:
            return direct
        # the reader lives in another process of this lockstep run: a push made while an
        # instant runs travels on the step call (StepMail), any other is a put
        deliver = mail.carrier(dest, cp.connector_id,
                               codec_for(self.port.data_type, little).encode, direct,
                               PortStatus.PORT_OK)
        deliver.fast_ok = True  # type: ignore[attr-defined]
        return deliver

    def _putter(self, peer: Any, cp: Any, little: bool) -> Any:
        guard = self._guard(peer, cp)
        cid = cp.connector_id
        encode = codec_for(self.port.data_type, little).encode
        bad = Throttled(log, 5.0)
        ok = OpenRTM.PORT_OK
        error = PortStatus.PORT_ERROR

        invoke = peer._obj.invoke            # the generated put() minus one Python frame
        desc = OpenRTM.InPortCdr._d_put

        def deliver(sample: Any) -> PortStatus:
            if guard.suspect:                 # a hung or dead peer costs one flag test
                guard.skipped += 1
                return error
            try:
                st = invoke("put", desc, (encode(sample),))
            except _DEAD as e:
                guard.mark(e)                 # the liveness thread probes, then resumes/drops
                return error
            except (CORBA.Exception, ValueError) as e:   # never into the writer's hook
                bad.warning("%s: sending on connector %s failed: %r", self.port.full_name,
                            cid, e)
                return error
            return PortStatus.PORT_OK if st is ok else _PS[st._v]
        # it catches everything itself: flush writes may call it directly
        deliver.fast_ok = True  # type: ignore[attr-defined]
        return deliver

    def _puller(self, peer: Any, buffer: RingBuffer, cp: Any, little: bool) -> Any:
        guard = self._guard(peer, cp)
        cid = cp.connector_id
        decode = codec_for(self.port.data_type, little).decode
        scratch = self.port.data_type()
        bad = Throttled(log, 30.0)

        def pull() -> None:
            """Runs in: the reader's EC thread (InPort.read). Never raises."""
            if guard.suspect:
                guard.skipped += 1
                return
            try:
                st, data = peer.get()
            except _DEAD as e:
                guard.mark(e)
                return
            except Exception as e:
                # OpenRTM's OutPortCdr.get raises BAD_PARAM when its buffer is empty: no
                # data this cycle, as for any other refusal of the peer
                if not isinstance(e, CORBA.BAD_PARAM):
                    bad.warning("%s: pulling on connector %s failed: %r",
                                self.port.full_name, cid, e)
                return
            if st == OpenRTM.PORT_OK:
                try:
                    decode(data, scratch)
                except (ValueError, TypeError) as e:
                    bad.warning("%s: pulled a malformed %s payload on connector %s: %s",
                                self.port.full_name, self.port.data_type.__name__, cid, e)
                    return
                buffer.put(scratch)
        return pull

    def notify_disconnect_local(self, cid: str) -> None:
        """Forget a connection without telling the (dead) peer."""
        self.forget_connector(cid)

    def _release(self, cid: str) -> None:
        mail = self._mail()
        if mail is not None:
            mail.drop(cid)                # what is still to be carried for it
        if self.rt.inports.get(cid) is self.servants.get(cid):
            self.rt.inports.pop(cid, None)
        guard = self.guards.pop(cid, None)
        if guard is not None:
            guard.closed = True
        c = detach(self.port, cid)
        if c is not None:
            c.close()
        servant = self.servants.pop(cid, None)
        if servant is not None:
            self.rt.deactivate(servant)
