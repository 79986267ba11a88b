"""An independent OpenRTM-style data-port peer, written from specs/openrtm_interop.md §1 only.

It must NOT import rtcf: it uses omniORB and the stubs that ship inside rtctree-aist (what
rtshell uses), and runs in its own process because two stub sets for the same repository
ids must not be loaded in one process.

Two RTC::PortService servants (``peer.out`` and ``peer.in``, both TimedDoubleSeq, push,
corba_cdr) follow OpenRTM's connection algorithm:

* connect(): an OutPort or InPort adds ``dataport.serializer.cdr.endian=little,big`` when
  absent (OpenRTM's OutPortBase::connect and InPortBase::connect); a
  UUID is assigned when connector_id is empty; then ``ports[0].notify_connect(profile)``.
* notify_connect(): (i) publish (the InPort adds ``dataport.corba_cdr.inport_ior`` as a
  string and ``dataport.corba_cdr.inport_ref`` as an object Any, plus its own
  ``dataport.inport.data_type``; the OutPort its ``dataport.outport.data_type``), (ii) call
  notify_connect on the next port of the list, (iii) subscribe (the OutPort resolves
  inport_ior, else inport_ref, narrowed to OpenRTM::InPortCdr), store the profile.
* disconnect(id): ``ports[0].notify_disconnect(id)``; notify_disconnect releases this side
  and calls notify_disconnect on the next port.

Pull (``dataport.dataflow_type=pull``): the OutPort publishes ``dataport.corba_cdr.
outport_ior``/``outport_ref`` (an OpenRTM::OutPortCdr per connector); writes queue there and
get() hands out the oldest, or raises CORBA.BAD_PARAM when nothing is queued, as an
OpenRTM-aist-Python OutPort does when its buffer is empty.

Periodic (``dataport.subscription_type=periodic``): as OpenRTM-aist's PublisherPeriodic with
``publisher.push_policy`` new (OpenRTM_aist/PublisherPeriodic.py, pushNew): a thread pushes
the newest written sample every 1/``publisher.push_rate`` seconds (default 100 Hz) and, once
one sample was written, pushes the last one again when nothing new came (the buffer's
readback): a reader gets repeats of the last sample.

Payloads: the OutPort marshals with ``omniORB.cdrMarshal(tc, value, little)`` where tc is
``omniORB.any.to_any(value).typecode()``; the InPortCdr servant (one per connector) unmarshals
with ``omniORB.cdrUnmarshal(tc, data, little)``; little is the first token of the
connector's ``dataport.serializer.cdr.endian``. The peer pushes synchronously whatever the
subscription type (that only changes the peer's own publisher).

Protocol: at startup one JSON line on stdout
``{"out": IOR, "in": IOR, "pid": n, "rtcf_loaded": false}``; then one
JSON command per stdin line, one JSON reply line each:
  {"cmd": "write", "values": [...], "sec": s, "nsec": n} -> {"ok": true, "status": [names]}
  {"cmd": "received"}  -> {"ok": true, "samples": [[sec, nsec, [values]], ...]}
  {"cmd": "raw"}       -> {"ok": true, "raw": [[cid, little, hex], ...], "errors": [...],
                          "empty_gets": n (pull get() calls refused: buffer empty)}
  {"cmd": "clear"}     -> forget received samples, raw payloads and errors
  {"cmd": "profiles"}  -> {"ok": true, "out": [cp...], "in": [cp...]}, cp = {"name",
                          "connector_id", "ports": [IOR...], "properties": {k: str}}
  {"cmd": "forget"}    -> both ports drop every connection without telling anyone (a peer
                          that lost its state, e.g. restarted in place)
  {"cmd": "rtobject", "ns": "host:port", "context": "h.host_cxt", "rtc": n}
                       -> an RTC::RTObject named n (no ports, no execution context) with
                          an SDO configuration as OpenRTM-aist-Python's (below), bound at
                          context/n.rtc in that naming service
  {"cmd": "rtobject", ..., "ec": "OpenHRPExecutionContext"}
                       -> the same, but the component owns that execution context
                          (below) and its ports are peer.in and peer.out
  {"cmd": "ticks"}     -> {"ok": true, "ticks": [[n, state, sec, nsec], ...] (every tick
                          that ran a cycle: the count, the state after the state update,
                          the stamp of the newest input sample taken, or -1, -1),
                          "executed": n (onExecute calls), "activated": n, "deactivated": n}
  {"cmd": "config"}    -> {"ok": true, "active": id or null (none active), "sets": {...},
                          "applied": {...} (the values the component runs with)}
  {"cmd": "unbind"}    -> the RTObject's name removed
  {"cmd": "quit"}      -> {"ok": true}, then the process exits

Owned execution context (the wire contract: OpenRTM.idl's ExtTrigExecutionContextService,
RTC::ExecutionContextService plus ``void tick()``), as OpenRTM-aist-Python's
OpenHRPExecutionContext.py (registered also as SynchExtTriggerEC) behaves: it is running from
the start; tick() returns at once when it is not running, otherwise runs, in the caller's
thread and under one lock, the state update (a pending activation, deactivation or reset),
onExecute when the component is active, and the post-do; activate_component /
deactivate_component / reset_component return after a tick of their own (its
onWaitingActivated / onWaitingDeactivated / onWaitingReset call tick()), so activation runs
one cycle. Kind PERIODIC, rate 1000 until set_rate.
The component's onExecute takes the newest sample peer.in received since the last cycle and
writes [cycle count, its values...] on peer.out with that sample's stamp (nothing written
when nothing came).

SDO configuration (OpenRTM-aist-Python's SdoConfiguration.py over ConfigAdmin.py): sets
"default" (active) and "fast", one parameter "gain". set_configuration_set_values stores the
values and leaves NO set active (ConfigAdmin.setConfigurationSetValues: ``_active = False``)
until activate_configuration_set, which applies them; meanwhile
get_active_configuration_set raises SDOPackage.NotAvailable.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import traceback
import uuid

import omniORB
from omniORB import CORBA, any as oany

from rtctree.rtc import OpenRTM, RTC, SDOPackage  # noqa: F401  (SDOPackage: NameValue)
from rtctree.rtc import OpenRTM__POA, RTC__POA, SDOPackage__POA

DATA_TYPE = "IDL:RTC/TimedDoubleSeq:1.0"
P = "dataport."
ENDIAN = P + "serializer.cdr.endian"
IOR_IN, REF_IN = P + "corba_cdr.inport_ior", P + "corba_cdr.inport_ref"
IOR_OUT, REF_OUT = P + "corba_cdr.outport_ior", P + "corba_cdr.outport_ref"


def nv(name, value):
    return SDOPackage.NameValue(name, oany.to_any(value))


def nv_find(nvlist, name):
    for item in nvlist:
        if item.name == name:
            try:
                return item.value.value()
            except Exception:
                return None
    return None


def nv_add_if_absent(nvlist, name, value):
    if nv_find(nvlist, name) is None:
        nvlist.append(nv(name, value))


def nv_replace(nvlist, name, value):
    for i, item in enumerate(nvlist):
        if item.name == name:
            nvlist[i] = nv(name, value)
            return
    nvlist.append(nv(name, value))


def little_of(nvlist):
    """OpenRTM: the first token of serializer.cdr.endian decides (default little)."""
    raw = nv_find(nvlist, ENDIAN)
    if not isinstance(raw, str) or not raw.strip():
        return True
    return raw.split(",")[0].strip().lower() != "big"


class Peer:
    def __init__(self):
        self.orb = CORBA.ORB_init(
            [sys.argv[0], "-ORBendPoint", "giop:tcp:127.0.0.1:",
             "-ORBclientCallTimeOutPeriod", "10000"], CORBA.ORB_ID)
        self.poa = self.orb.resolve_initial_references("RootPOA")
        self.poa._get_the_POAManager().activate()
        self.lock = threading.Lock()
        self.received = []   # [sec, nsec, [values]]
        self.raw = []        # [cid, little, hex]
        self.errors = []     # strings
        self.empty_gets = 0  # pull: get() calls refused with BAD_PARAM (empty buffer)
        self.out = OutPortService(self, "peer.out")
        self.inp = InPortService(self, "peer.in")

    def activate(self, servant):
        self.poa.activate_object(servant)
        return self.poa.servant_to_reference(servant)

    def deactivate(self, servant):
        try:
            self.poa.deactivate_object(self.poa.servant_to_id(servant))
        except Exception:
            pass


class PortServiceBase(RTC__POA.PortService):
    port_type = ""
    subscription_types = ""

    def __init__(self, peer, name):
        self.peer = peer
        self.name = name
        self.profiles = {}   # connector id -> ConnectorProfile (insertion order)
        self.lock = threading.RLock()
        self.ref = peer.activate(self)

    # -- profile ---------------------------------------------------------------------------
    def properties(self):
        return [nv("port.port_type", self.port_type),
                nv(P + "data_type", DATA_TYPE),
                nv(P + "subscription_type", self.subscription_types),
                nv(P + "dataflow_type", "push,pull" if self.port_type == "DataOutPort"
                   else "push"),
                nv(P + "interface_type", "corba_cdr")]

    def get_port_profile(self):
        return RTC.PortProfile(self.name, [], self.ref, self.get_connector_profiles(), None,
                               self.properties())

    def get_connector_profiles(self):
        with self.lock:
            return list(self.profiles.values())

    def get_connector_profile(self, cid):
        with self.lock:
            cp = self.profiles.get(cid)
        return cp if cp is not None else RTC.ConnectorProfile("", "", [], [])

    def _index(self, cp):
        for i, p in enumerate(cp.ports):
            try:
                if p is not None and p._is_equivalent(self.ref):
                    return i
            except CORBA.Exception:
                continue
        return -1

    # -- connect ---------------------------------------------------------------------------
    def _before_connect(self, cp):
        pass

    def connect(self, cp):
        if not cp.ports or self._index(cp) < 0:
            return RTC.BAD_PARAMETER, cp
        self._before_connect(cp)
        if not cp.connector_id:
            cp.connector_id = str(uuid.uuid4())
        try:
            return cp.ports[0].notify_connect(cp)
        except CORBA.Exception as e:
            self.peer.errors.append(f"{self.name}.connect: {e!r}")
            return RTC.RTC_ERROR, cp

    def notify_connect(self, cp):
        if not cp.connector_id:
            cp.connector_id = str(uuid.uuid4())
        cid = cp.connector_id
        with self.lock:
            if cid in self.profiles:
                return RTC.BAD_PARAMETER, cp
        try:
            self._publish(cp)
        except Exception as e:
            self.peer.errors.append(f"{self.name}.publish: {e!r}")
            return RTC.RTC_ERROR, cp
        idx = self._index(cp)
        if 0 <= idx < len(cp.ports) - 1:
            try:
                code, cp = cp.ports[idx + 1].notify_connect(cp)
            except CORBA.Exception as e:
                self.peer.errors.append(f"{self.name}.notify_next: {e!r}")
                code = RTC.RTC_ERROR
            if code != RTC.RTC_OK:
                self._unpublish(cid)
                return code, cp
        try:
            self._subscribe(cp)
        except Exception as e:
            self.peer.errors.append(f"{self.name}.subscribe: {e!r}")
            self._unpublish(cid)
            return RTC.RTC_ERROR, cp
        with self.lock:
            self.profiles[cid] = cp
        return RTC.RTC_OK, cp

    # -- disconnect ------------------------------------------------------------------------
    def disconnect(self, cid):
        with self.lock:
            cp = self.profiles.get(cid)
        if cp is None:
            return RTC.BAD_PARAMETER
        for p in cp.ports:
            try:
                return p.notify_disconnect(cid)
            except CORBA.Exception:
                continue
        return RTC.RTC_ERROR

    def notify_disconnect(self, cid):
        with self.lock:
            cp = self.profiles.pop(cid, None)
        if cp is None:
            return RTC.BAD_PARAMETER
        idx = self._index(cp)
        if 0 <= idx < len(cp.ports) - 1:
            try:
                cp.ports[idx + 1].notify_disconnect(cid)
            except CORBA.Exception:
                pass
        self._unsubscribe(cid)
        self._unpublish(cid)
        return RTC.RTC_OK

    def disconnect_all(self):
        for cid in list(self.profiles):
            self.disconnect(cid)
        return RTC.RTC_OK

    # -- hooks -----------------------------------------------------------------------------
    def _publish(self, cp):
        pass

    def _unpublish(self, cid):
        pass

    def _subscribe(self, cp):
        pass

    def _unsubscribe(self, cid):
        pass


class OutPortCdrServant(OpenRTM__POA.OutPortCdr):
    """Pull: get() hands out the oldest buffered payload; an empty buffer raises
    CORBA.BAD_PARAM, which is what a reader of an OpenRTM-aist-Python OutPort sees."""

    def __init__(self, peer, little):
        self.peer = peer
        self.little = little
        self.queue = []      # [value]

    def get(self):
        with self.peer.lock:
            if not self.queue:
                self.peer.empty_gets += 1
                raise CORBA.BAD_PARAM(0, CORBA.COMPLETED_NO)
            value = self.queue.pop(0)
        tc = oany.to_any(value).typecode()
        return OpenRTM.PORT_OK, omniORB.cdrMarshal(tc, value, self.little)


class OutPortService(PortServiceBase):
    port_type = "DataOutPort"
    subscription_types = "flush,new,periodic"

    def __init__(self, peer, name):
        super().__init__(peer, name)
        self.consumers = {}   # cid -> (InPortCdr ref, little)
        self.providers = {}   # cid -> OutPortCdrServant (pull)
        self.periodic = {}    # cid -> PeriodicPublisher

    def _before_connect(self, cp):
        nv_add_if_absent(cp.properties, ENDIAN, "little,big")

    def _publish(self, cp):
        nv_replace(cp.properties, P + "outport.data_type", DATA_TYPE)
        if nv_find(cp.properties, P + "dataflow_type") == "pull":
            servant = OutPortCdrServant(self.peer, little_of(cp.properties))
            ref = self.peer.activate(servant)
            with self.lock:
                self.providers[cp.connector_id] = servant
            nv_replace(cp.properties, IOR_OUT, self.peer.orb.object_to_string(ref))
            nv_replace(cp.properties, REF_OUT, ref)

    def _unpublish(self, cid):
        with self.lock:
            servant = self.providers.pop(cid, None)
        if servant is not None:
            self.peer.deactivate(servant)

    def _subscribe(self, cp):
        if nv_find(cp.properties, P + "dataflow_type") == "pull":
            with self.lock:
                servant = self.providers.get(cp.connector_id)
            if servant is not None:
                servant.little = little_of(cp.properties)
            return
        obj = None
        ior = nv_find(cp.properties, IOR_IN)
        if isinstance(ior, str) and ior:
            obj = self.peer.orb.string_to_object(ior)
        if obj is None:
            obj = nv_find(cp.properties, REF_IN)
        if obj is None or isinstance(obj, str):
            raise LookupError("no inport_ior / inport_ref published")
        ref = obj._narrow(OpenRTM.InPortCdr)
        if ref is None:
            raise LookupError("inport reference is not an OpenRTM::InPortCdr")
        if nv_find(cp.properties, P + "subscription_type") == "periodic":
            rate = float(nv_find(cp.properties, P + "publisher.push_rate") or 100.0)
            pub = PeriodicPublisher(ref, little_of(cp.properties), rate)
            with self.lock:
                self.periodic[cp.connector_id] = pub
            return
        with self.lock:
            self.consumers[cp.connector_id] = (ref, little_of(cp.properties))

    def _unsubscribe(self, cid):
        with self.lock:
            self.consumers.pop(cid, None)
            pub = self.periodic.pop(cid, None)
        if pub is not None:
            pub.stop.set()

    def write(self, values, sec, nsec):
        value = RTC.TimedDoubleSeq(RTC.Time(int(sec), int(nsec)), [float(v) for v in values])
        tc = oany.to_any(value).typecode()          # recomputed per write, as OpenRTM does
        with self.lock:
            consumers = list(self.consumers.values())
            providers = list(self.providers.values())
            periodic = list(self.periodic.values())
        with self.peer.lock:
            for servant in providers:
                servant.queue.append(value)
        for pub in periodic:
            pub.latest = omniORB.cdrMarshal(tc, value, pub.little)
        status = []
        for ref, little in consumers:
            data = omniORB.cdrMarshal(tc, value, little)
            try:
                status.append(str(ref.put(data)))
            except CORBA.Exception as e:
                status.append(f"EXCEPTION {e!r}")
        return status


class PeriodicPublisher:
    """One periodic connection's publisher thread (see the module docstring)."""

    def __init__(self, ref, little, rate):
        self.ref, self.little = ref, little
        self.period = 1.0 / max(rate, 0.1)
        self.latest = None
        self.stop = threading.Event()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        while not self.stop.wait(self.period):
            data = self.latest
            if data is None:          # nothing written yet: the buffer is empty
                continue
            try:
                self.ref.put(data)    # the newest, or the last one again (readback)
            except CORBA.Exception:
                pass


class ConfigurationServant(SDOPackage__POA.Configuration):
    """SDOPackage::Configuration as OpenRTM-aist-Python answers it (the module docstring)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.sets = {"default": {"gain": "1.0"}, "fast": {"gain": "5.0"}}
        self.active, self.is_active = "default", True
        self.applied = dict(self.sets["default"])

    def _cs(self, sid):
        return SDOPackage.ConfigurationSet(sid, "", [nv(k, v) for k, v in
                                                     self.sets[sid].items()])

    def get_configuration_sets(self):
        with self.lock:
            return [self._cs(s) for s in self.sets]

    def get_configuration_set(self, sid):
        with self.lock:
            if sid not in self.sets:
                raise SDOPackage.InvalidParameter(f"no configuration set {sid}")
            return self._cs(sid)

    def get_active_configuration_set(self):
        with self.lock:
            if not self.is_active:
                raise SDOPackage.NotAvailable(
                    "NotAvailable: Configuration.get_active_configuration_set()")
            return self._cs(self.active)

    def set_configuration_set_values(self, cs):
        with self.lock:
            if cs.id not in self.sets:
                return False
            for item in cs.configuration_data:
                self.sets[cs.id][item.name] = str(item.value.value())
            self.is_active = False
            return True

    def activate_configuration_set(self, sid):
        with self.lock:
            if sid not in self.sets:
                raise SDOPackage.InvalidParameter(f"no configuration set {sid}")
            self.active, self.is_active = sid, True
            self.applied = dict(self.sets[sid])
            return True


class ExtTrigECServant(OpenRTM__POA.ExtTrigExecutionContextService):
    """The component's own EC (module docstring: OpenHRPExecutionContext's behaviour)."""

    INACTIVE, ACTIVE, ERROR = RTC.INACTIVE_STATE, RTC.ACTIVE_STATE, RTC.ERROR_STATE

    def __init__(self, peer, rtobj, kind):
        self.peer = peer
        self.rtobj = rtobj
        self.kind = kind
        self.running = True
        self.rate = 1000.0
        self.state = self.INACTIVE
        self.pending = None          # "activate", "deactivate", "reset"
        self.tick_lock = threading.RLock()
        self.ticks = []              # [n, state, sec, nsec]
        self.executed = 0
        self.activated = 0
        self.deactivated = 0
        self.taken = 0               # peer.received entries consumed by onExecute
        self.ref = peer.activate(self)

    def _is_self(self, comp):
        try:
            return comp is not None and comp._is_equivalent(self.rtobj.ref)
        except CORBA.Exception:
            return False

    def _cycle(self):
        with self.tick_lock:
            if self.pending == "activate" and self.state == self.INACTIVE:
                self.state = self.ACTIVE
                self.activated += 1
            elif self.pending == "deactivate" and self.state == self.ACTIVE:
                self.state = self.INACTIVE
                self.deactivated += 1
            elif self.pending == "reset" and self.state == self.ERROR:
                self.state = self.INACTIVE
            self.pending = None
            if self.state != self.ACTIVE:
                return
            self.executed += 1
            with self.peer.lock:
                new = self.peer.received[self.taken:]
                self.taken = len(self.peer.received)
            if new:
                sec, nsec, values = new[-1]
                self.peer.out.write([float(self.executed), *values], sec, nsec)
            else:
                sec, nsec = -1, -1
            self.ticks.append([self.executed, str(self.state), sec, nsec])

    def tick(self):
        if self.running:
            self._cycle()

    def _transition(self, what, comp, allowed):
        if not self._is_self(comp):
            return RTC.BAD_PARAMETER
        if self.state not in allowed:
            return RTC.PRECONDITION_NOT_MET
        self.pending = what
        self.tick()
        return RTC.RTC_OK

    def activate_component(self, comp):
        return self._transition("activate", comp, (self.INACTIVE,))

    def deactivate_component(self, comp):
        return self._transition("deactivate", comp, (self.ACTIVE,))

    def reset_component(self, comp):
        return self._transition("reset", comp, (self.ERROR,))

    def get_component_state(self, comp):
        return self.state if self._is_self(comp) else RTC.CREATED_STATE

    def is_running(self):
        return self.running

    def start(self):
        if self.running:
            return RTC.PRECONDITION_NOT_MET
        self.running = True
        return RTC.RTC_OK

    def stop(self):
        if not self.running:
            return RTC.PRECONDITION_NOT_MET
        self.running = False
        return RTC.RTC_OK

    def get_rate(self):
        return self.rate

    def set_rate(self, rate):
        if rate <= 0:
            return RTC.BAD_PARAMETER
        self.rate = float(rate)
        return RTC.RTC_OK

    def add_component(self, comp):
        return RTC.PRECONDITION_NOT_MET

    def remove_component(self, comp):
        return RTC.PRECONDITION_NOT_MET

    def get_kind(self):
        return RTC.PERIODIC

    def get_profile(self):
        return RTC.ExecutionContextProfile(RTC.PERIODIC, self.rate, self.rtobj.ref, [],
                                           [nv("type", self.kind)])


class RTObjectServant(RTC__POA.RTObject):
    """A component with no ports and no execution context (or, given ``ec``, its own
    ExtTrig EC and the peer's two ports); its SDO configuration."""

    def __init__(self, peer, name, ec=None):
        self.name = name
        self.peer = peer
        self.config = ConfigurationServant()
        self.config_ref = peer.activate(self.config)
        self.ref = peer.activate(self)
        self.ec = ExtTrigECServant(peer, self, ec) if ec else None

    def get_component_profile(self):
        return RTC.ComponentProfile(self.name, "AistLike", "OpenRTM-aist-style peer",
                                    "1.0", "peer", "test", [], None, [])

    def get_owned_contexts(self):
        return [self.ec.ref] if self.ec is not None else []

    def get_participating_contexts(self):
        return []

    def get_context(self, handle):
        return self.ec.ref if self.ec is not None and handle == 0 else None

    def get_context_handle(self, cxt):
        return 0 if self.ec is not None else -1

    def get_ports(self):
        if self.ec is None:
            return []
        return [self.peer.out.ref, self.peer.inp.ref]

    def get_configuration(self):
        return self.config_ref


def bind_rtobject(peer, ns, context, name, ec=None):
    import CosNaming
    root = peer.orb.string_to_object(f"corbaloc::{ns}/NameService")._narrow(
        CosNaming.NamingContext)
    ctx_id, _, ctx_kind = context.rpartition(".")
    ctx_name = [CosNaming.NameComponent(ctx_id, ctx_kind)]
    try:
        ctx = root.bind_new_context(ctx_name)
    except CosNaming.NamingContext.AlreadyBound:
        ctx = root.resolve(ctx_name)._narrow(CosNaming.NamingContext)
    servant = RTObjectServant(peer, name, ec)
    ctx.rebind([CosNaming.NameComponent(name, "rtc")], servant.ref)
    peer.rtobject = (servant, ctx, name)


class InPortCdrServant(OpenRTM__POA.InPortCdr):
    def __init__(self, peer, cid, little):
        self.peer = peer
        self.cid = cid
        self.little = little
        template = RTC.TimedDoubleSeq(RTC.Time(0, 0), [])
        self.tc = oany.to_any(template).typecode()

    def put(self, data):
        with self.peer.lock:
            self.peer.raw.append([self.cid, self.little, bytes(data).hex()])
            del self.peer.raw[:-200]
        try:
            v = omniORB.cdrUnmarshal(self.tc, data, self.little)
        except Exception as e:
            with self.peer.lock:
                self.peer.errors.append(f"put({self.cid}): {e!r}")
            return OpenRTM.PORT_ERROR
        with self.peer.lock:
            self.peer.received.append([int(v.tm.sec), int(v.tm.nsec),
                                       [float(x) for x in v.data]])
        return OpenRTM.PORT_OK


class InPortService(PortServiceBase):
    port_type = "DataInPort"
    subscription_types = "Any"

    def __init__(self, peer, name):
        super().__init__(peer, name)
        self.servants = {}   # cid -> InPortCdrServant

    def _before_connect(self, cp):
        nv_add_if_absent(cp.properties, ENDIAN, "little,big")

    def _publish(self, cp):
        cid = cp.connector_id
        servant = InPortCdrServant(self.peer, cid, little_of(cp.properties))
        ref = self.peer.activate(servant)
        with self.lock:
            self.servants[cid] = servant
        nv_replace(cp.properties, IOR_IN, self.peer.orb.object_to_string(ref))
        nv_replace(cp.properties, REF_IN, ref)
        nv_replace(cp.properties, P + "inport.data_type", DATA_TYPE)

    def _subscribe(self, cp):
        # the endian is only final once every port has seen the profile
        with self.lock:
            servant = self.servants.get(cp.connector_id)
        if servant is not None:
            servant.little = little_of(cp.properties)

    def _unpublish(self, cid):
        with self.lock:
            servant = self.servants.pop(cid, None)
        if servant is not None:
            self.peer.deactivate(servant)


def profile_json(peer, cp):
    props = {}
    for item in cp.properties:
        try:
            v = item.value.value()
        except Exception:
            v = None
        if isinstance(v, CORBA.Object):
            v = peer.orb.object_to_string(v)
        props[item.name] = v if isinstance(v, str) else str(v)
    return {"name": cp.name, "connector_id": cp.connector_id,
            "ports": [peer.orb.object_to_string(p) for p in cp.ports],
            "properties": props}


def handle(peer, msg):
    cmd = msg.get("cmd")
    if cmd == "write":
        return {"ok": True, "status": peer.out.write(msg["values"], msg.get("sec", 0),
                                                     msg.get("nsec", 0))}
    if cmd == "received":
        with peer.lock:
            return {"ok": True, "samples": list(peer.received)}
    if cmd == "raw":
        with peer.lock:
            return {"ok": True, "raw": list(peer.raw), "errors": list(peer.errors),
                    "empty_gets": peer.empty_gets}
    if cmd == "clear":
        with peer.lock:
            peer.received.clear()
            peer.raw.clear()
            peer.errors.clear()
            peer.empty_gets = 0
        return {"ok": True}
    if cmd == "profiles":
        return {"ok": True,
                "out": [profile_json(peer, cp) for cp in peer.out.get_connector_profiles()],
                "in": [profile_json(peer, cp) for cp in peer.inp.get_connector_profiles()]}
    if cmd == "forget":     # drop every connection of both ports, telling nobody
        for port in (peer.out, peer.inp):
            with port.lock:
                ids = list(port.profiles)
                port.profiles.clear()
            for cid in ids:
                port._unsubscribe(cid)
                port._unpublish(cid)
        return {"ok": True}
    if cmd == "rtobject":
        bind_rtobject(peer, msg["ns"], msg["context"], msg["rtc"], msg.get("ec"))
        return {"ok": True}
    if cmd == "ticks":
        ec = peer.rtobject[0].ec
        with ec.tick_lock:
            return {"ok": True, "ticks": list(ec.ticks), "executed": ec.executed,
                    "activated": ec.activated, "deactivated": ec.deactivated}
    if cmd == "config":
        c = peer.rtobject[0].config
        with c.lock:
            return {"ok": True, "active": c.active if c.is_active else None,
                    "sets": c.sets, "applied": c.applied}
    if cmd == "unbind":
        import CosNaming
        _, ctx, name = peer.rtobject
        ctx.unbind([CosNaming.NameComponent(name, "rtc")])
        return {"ok": True}
    if cmd == "quit":
        return {"ok": True}
    return {"ok": False, "error": f"unknown command {cmd!r}"}


def main():
    peer = Peer()
    print(json.dumps({"out": peer.orb.object_to_string(peer.out.ref),
                      "in": peer.orb.object_to_string(peer.inp.ref),
                      "pid": os.getpid(),
                      "rtcf_loaded": any(m == "rtcf" or m.startswith("rtcf.")
                                         for m in sys.modules)}), flush=True)
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
            reply = handle(peer, msg)
        except Exception as e:
            msg = {}
            reply = {"ok": False, "error": repr(e), "trace": traceback.format_exc()}
        print(json.dumps(reply), flush=True)
        if msg.get("cmd") == "quit":
            break
    try:
        peer.orb.shutdown(False)
        peer.orb.destroy()
    except Exception:
        pass


if __name__ == "__main__":
    main()
