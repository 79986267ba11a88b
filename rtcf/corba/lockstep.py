"""The lockstep wire (``rtcf/idl/Lockstep.idl``): a leader's time base steps the execution
contexts of follower processes, one ``step(t, parts)`` call per process and instant
(rtcf.lockstep has the design, rtcf.simtime the time bases).

* :class:`FollowerServant` (in a follower): ``step`` runs the process's parts at the given
  simulated time in the calling ORB thread and returns once they have run; ``finish`` ends
  the process.
* :class:`RemoteFollower` (in the leader): the client of one follower, what a RemotePart
  calls; every CORBA failure (the process died: COMM_FAILURE, TRANSIENT; it hangs:
  TIMEOUT after ``step_timeout``; refused: out of step) becomes a LockstepError naming the
  process and its execution contexts.
* :class:`LeaderServant` (in the leader): ``join`` (refused once simulated time has
  started, for a process the composition does not place, twice, or with other parts) and
  the time control of the whole system for components of other processes.
* :class:`RemoteLeader` (in a follower): that time control as the follower time base's
  ``controller``.
* :class:`OpenRTMMember` (in the leader): an OpenRTM-aist component in the loop, stepped
  through its own EC's ``OpenRTM::ExtTrigExecutionContextService::tick()``.
* :class:`StepMail` (in every process of the run): data on flush connectors between the
  leader and a follower travels on the step call, not as puts of its own: one round trip
  per process and instant, data included.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

import omniORB
from omniORB import CORBA

from ..errors import LockstepError
from ..log import get_logger
from .idl import stub_module

Lockstep = stub_module("Lockstep")
Lockstep__POA = stub_module("Lockstep__POA")
OpenRTM = stub_module("OpenRTM")
RTC = stub_module("RTC")
log = get_logger("lockstep")

DEFAULT_STEP_TIMEOUT = 5.0      # [s] rtcf.simulation.step_timeout
LEADER_PROPERTY = "rtcf.lockstep.leader"   # component profile property: the leader's IOR
# connector profile property an InPort's side publishes in a lockstep run: where its reader
# lives, "<composition>/<process>" (OpenRTM peers ignore properties they do not know)
PROCESS_PROPERTY = "dataport.rtcf.lockstep_process"
MAIN = "main"


class StepMail:
    """Flush samples between the leader and a follower, carried on the step call.

    A writer's flush push to an InPortCdr in another process of the same lockstep run goes
    on the step when it is made while an instant runs (the time base's ``stepping`` thread)
    and the pair is leader -> a follower it steps or follower -> leader: the CDR payload is
    posted for that process instead of put. The leader sends a follower's posted samples as
    the inbox of its next step; a follower returns what it posted during a step as the step's result.
    The receiving process hands each to its connector's InPortCdrServant.put() (decoding,
    listeners, errors as for a put), in write order, before anything else of the instant
    runs. Every other push (another thread, between instants, follower to follower, a peer
    outside the run) is a put as before. A sample whose connector is gone when it is
    delivered is dropped quietly; a disconnection also drops what is still posted for it.

    ``enabled`` False (rtcf.simulation.step_data NO): this process's writers put as before
    (it still delivers what others carry to it). Runs in: a carrier and take: the thread
    running an instant (one at a time: no lock); drop: any thread; deliver: the step's
    thread.
    """

    def __init__(self, system: str, process: str, enabled: bool = True):
        self.system = system
        self.process = process
        self.leader = process == MAIN
        self.enabled = bool(enabled)
        self.tb: Any = None                 # the process's SimTimeBase (set at start)
        self.followers: frozenset[str] = frozenset()   # leader: the processes it steps
        self.inports: dict[str, Any] = {}   # the runtime's connector id -> InPortCdrServant
        # connector id (bytes, as on the wire) -> what its payloads are handed to (the
        # InPortCdrServant's receiver(), registered at connect)
        self._receivers: dict[bytes, Callable[[bytes], bool]] = {}
        # process -> its box: one list object for the mail's life (a carrier holds it),
        # emptied in place by take()
        self._boxes: dict[str, list[Any]] = {}
        self._gone: frozenset[bytes] = frozenset()   # connectors dropped since the last take
        self._lock = threading.Lock()
        self.refused = 0                    # delivered samples their InPortCdr refused
        self.dropped = 0                    # samples whose connector had gone

    def address(self) -> str:
        """What a reader of this process publishes (PROCESS_PROPERTY)."""
        return f"{self.system}/{self.process}"

    def route(self, address: Any) -> str | None:
        """The process a flush push to a reader published at ``address`` is carried to
        on the step, or None: a put of its own (not this run, same process, follower to
        follower, or carrying is off)."""
        if not self.enabled or not isinstance(address, str) or "/" not in address:
            return None
        system, _, process = address.rpartition("/")
        if system != self.system or process == self.process or not process:
            return None
        if self.leader:                 # only to a process whose steps take its box
            return process if process in self.followers else None
        return process if process == MAIN else None

    def box(self, process: str) -> list[Any]:
        """The box of samples posted for ``process`` (made once, kept)."""
        with self._lock:
            box = self._boxes.get(process)
            if box is None:
                box = self._boxes[process] = []
            return box

    def carrier(self, process: str, connector: str, encode: Callable[[Any], bytes],
                direct: Callable[[Any], Any], ok: Any) -> Callable[[Any], Any]:
        """The deliver function of a writer's flush connector to a reader in ``process``
        (route() said so): while this thread runs an instant, the sample's CDR (``encode``)
        is posted for ``process`` and ``ok`` answered; otherwise ``direct(sample)`` (a put).
        Everything that does not change per sample is looked up here, once per connector.
        Runs in: the thread that connects; the function runs in the writer's thread."""
        extend = self.box(process).extend
        key = connector.encode()
        get_ident = threading.get_ident
        mail = self

        def deliver(sample: Any) -> Any:
            tb = mail.tb
            if tb is None or tb.stepping != get_ident():
                return direct(sample)
            extend((key, encode(sample)))
            tb.carried += 1
            return ok
        return deliver

    def receive(self, connector: str, receiver: Callable[[bytes], bool]) -> None:
        """A reader of this process connected: ``receiver`` (its InPortCdrServant's
        receiver(): True when the sample was taken) gets the payloads carried to
        ``connector`` from now on. Runs in: the thread that connects."""
        self._receivers[connector.encode()] = receiver

    def take(self, process: str) -> list[bytes]:
        """What is posted for ``process`` (connector id, payload, ... in write order; the
        wire's Mail); the box is emptied. Posting and taking happen in the thread running
        the instant, one after the other, so the boxes need no lock; a disconnection
        (drop(), any thread) is applied to them here."""
        if self._gone:
            self._drop_gone()
        box = self._boxes.get(process)
        if not box:                     # nothing posted: the shared empty list
            return _NONE
        out = box[:]
        box.clear()
        return out

    def discard(self, process: str) -> None:
        """What is posted for ``process`` goes nowhere (the step failed)."""
        box = self._boxes.get(process)
        if box:
            box.clear()

    def drop(self, connector: str) -> None:
        """A connector was disconnected: what is still posted for it is dropped (by the
        next take(), in the thread that posts)."""
        key = connector.encode()
        self._receivers.pop(key, None)
        with self._lock:
            self._gone = self._gone | {key}

    def _drop_gone(self) -> None:
        with self._lock:
            gone, self._gone = self._gone, frozenset()
        for box in list(self._boxes.values()):
            kept: list[bytes] = []
            for i in range(0, len(box) - 1, 2):
                if box[i] not in gone:
                    kept += box[i:i + 2]
            self.dropped += (len(box) - len(kept)) // 2
            box[:] = kept

    def deliver(self, mail: list[bytes]) -> None:
        """Hand the samples another process carried to this one (a Mail: connector id,
        payload, ...) to their InPortCdrServants (their receiver(), else put(); in
        order)."""
        receivers = self._receivers
        n = len(mail)
        for i in range(0, n - 1, 2):
            receive = receivers.get(mail[i])
            if receive is None:
                servant = self.inports.get(mail[i].decode())
                if servant is None:
                    self.dropped += 1       # disconnected meanwhile: dropped quietly
                    continue
                if servant.put(mail[i + 1]) is not _PORT_OK:
                    self.refused += 1
                continue
            if not receive(mail[i + 1]):
                self.refused += 1
        tb = self.tb
        if tb is not None:
            tb.carried += n >> 1


_PORT_OK = OpenRTM.PORT_OK
_D_STEP = Lockstep.Follower._d_step     # the step operation's descriptor (generated stub)
_NONE: list[bytes] = []     # take()'s answer for an empty box: never appended to


def _why(e: Exception, timeout: float) -> str:
    """A CORBA failure of a step in words."""
    if isinstance(e, CORBA.TIMEOUT):
        return (f"no answer within {timeout:g} s (the process hangs, or a cycle took "
                f"longer: rtcf.simulation.step_timeout)")
    if isinstance(e, (CORBA.COMM_FAILURE, CORBA.TRANSIENT, CORBA.OBJECT_NOT_EXIST)):
        return f"the process does not answer (it died?): {type(e).__name__}"
    return f"{type(e).__name__}: {e}"


class FollowerServant(Lockstep__POA.Follower):
    """A follower process's side. Runs in: ORB threads (a step runs the cycles there)."""

    def __init__(self, time_base: Any, parts: list[Any], on_finish: Callable[[str], None],
                 mail: StepMail | None = None):
        self.tb = time_base
        self.parts = list(parts)        # SimulationECs, in the order joined with
        self._single = [[ec] for ec in self.parts]   # a step of one part: its list, made once
        self.on_finish = on_finish
        self.mail = mail
        # what the mail's take(MAIN) reads, held here (the same list for the mail's life)
        self._box = mail.box(MAIN) if mail is not None else []
        self.stopping = False
        self.ref: Any = None

    def step(self, t: float, parts: list[int], inbox: list[bytes]) -> list[bytes]:
        if self.stopping:
            raise Lockstep.Refused("this process is stopping")
        try:
            if len(parts) == 1:
                ecs = self._single[parts[0]]
            else:
                ecs = [self.parts[i] for i in parts]
        except (IndexError, TypeError):
            raise Lockstep.Refused(f"no part {list(parts)!r}: this process runs "
                                   f"{len(self.parts)}") from None
        mail = self.mail
        if mail is None:
            try:
                self.tb.run_step(t, ecs)
            except LockstepError as e:
                raise Lockstep.Refused(e.reason) from None
            return _NONE
        if inbox:
            mail.deliver(inbox)         # the leader's samples, before the parts run
        try:
            self.tb.run_step(t, ecs)
        except LockstepError as e:
            mail.discard(MAIN)
            raise Lockstep.Refused(e.reason) from None
        if mail._gone:                  # mail.take(MAIN), written out
            mail._drop_gone()
        box = self._box
        if not box:
            return _NONE
        out = box[:]
        box.clear()
        return out

    def finish(self, reason: str) -> None:
        log.info("the leader ended the lockstep run: %s", reason)
        self.stopping = True
        self.on_finish(reason)


class RemoteFollower:
    """The leader's client of one follower process (what RemotePart.remote is). Runs in:
    the leader's time base thread."""

    def __init__(self, process: str, ref: Any, step_timeout: float = DEFAULT_STEP_TIMEOUT,
                 mail: StepMail | None = None):
        self.process = process
        self.ref = ref
        self.timeout = float(step_timeout)
        self.mail = mail
        omniORB.setClientCallTimeout(ref, max(1, int(self.timeout * 1000)))
        self._invoke = ref._obj.invoke      # the generated step() minus one Python frame
        # what the mail's take(process) reads, held here (the same list for the mail's life)
        self._box = mail.box(process) if mail is not None else []
        self._deliver = mail.deliver if mail is not None else (lambda out: None)

    def step(self, t: float, parts: list[Any]) -> None:
        key = [parts[0].index] if len(parts) == 1 else [p.index for p in parts]
        mail = self.mail
        if mail is not None and mail._gone:
            mail._drop_gone()
        box = self._box                 # mail.take(process), written out
        if box:
            inbox = box[:]
            box.clear()
        else:
            inbox = _NONE
        try:
            out = self._invoke("step", _D_STEP, (t, key, inbox))
            if out:
                self._deliver(out)      # before the next EC in the order runs
        except Lockstep.Refused as e:
            raise LockstepError(self.process, [p.name for p in parts], t, e.reason) from None
        except CORBA.Exception as e:
            raise LockstepError(self.process, [p.name for p in parts], t,
                                _why(e, self.timeout)) from None

    def finish(self, reason: str) -> None:
        try:
            self.ref.finish(reason)
        except CORBA.Exception:
            pass                          # gone already


class OpenRTMMember:
    """An OpenRTM-aist component in the loop (an ``external`` member of a lockstep
    composition) as the leader sees it: what a RemotePart calls. Its owned EC is an
    ``OpenRTM::ExtTrigExecutionContextService`` (OpenRTM.idl: ExecutionContextService plus
    ``void tick()``); each instant of its part, ``step`` ticks it once per due part, in the
    time base's order, as openhrp3's Controller_impl::control() ticks each controller's EC.

    The barrier holds for a *synchronous* tick: OpenRTM-aist's OpenHRPExecutionContext
    (registered also as ``SynchExtTriggerEC``) runs the state update, onExecute and the
    post-do in the caller's thread before tick() returns (OpenRTM-aist-Python
    OpenHRPExecutionContext.py). OpenRTM-aist's ``ExtTrigExecutionContext`` only wakes its
    own thread and returns before the cycle: such a component still runs once per instant,
    but what it writes may arrive after the next member has run (not deterministic).

    Activation is OpenHRP's (openhrp3 Controller_impl::activeComponents): activate_component
    on that EC, after reset_component when it answers PRECONDITION_NOT_MET (an error
    state). OpenHRPExecutionContext applies activation, deactivation and reset with a tick
    of its own (onWaitingActivated / onWaitingDeactivated / onWaitingReset): that tick runs
    one cycle of the component outside the schedule, before simulated time starts (and one
    at the end). Runs in: the leader's time base thread (step), the main thread (the rest).
    """

    def __init__(self, name: str, rtc: Any, ec: Any,
                 step_timeout: float = DEFAULT_STEP_TIMEOUT):
        self.name = name
        self.process = f"external {name}"
        self.rtc = rtc
        self.ec = ec
        self.timeout = float(step_timeout)
        self.ticks = 0
        omniORB.setClientCallTimeout(ec, max(1, int(self.timeout * 1000)))

    def step(self, t: float, parts: list[Any]) -> None:
        try:
            for _ in parts:
                self.ec.tick()
                self.ticks += 1
        except CORBA.Exception as e:
            raise LockstepError(self.process, [p.name for p in parts], t,
                                _why(e, self.timeout)) from None

    def activate(self) -> None:
        """Activate the component in its ExtTrig EC (reset first from an error state).
        LockstepError (at simulated time 0) when it refuses or does not answer."""
        try:
            code = self.ec.activate_component(self.rtc)
            if code == RTC.PRECONDITION_NOT_MET:
                self.ec.reset_component(self.rtc)
                code = self.ec.activate_component(self.rtc)
        except CORBA.Exception as e:
            raise LockstepError(self.process, ["its own"], 0.0,
                                f"activation: {_why(e, self.timeout)}") from None
        if code != RTC.RTC_OK:
            raise LockstepError(self.process, ["its own"], 0.0,
                                f"activate_component answered {code}")

    def deactivate(self) -> None:
        """At the end of the run: deactivate it (it outlives the run). Failures are logged:
        it may be gone."""
        try:
            self.ec.deactivate_component(self.rtc)
        except CORBA.Exception as e:
            log.info("external component %s: deactivation failed: %s", self.name, e)

    def finish(self, reason: str) -> None:
        pass                              # an OpenRTM component outlives the run


def find_exttrig(rtobject: Any) -> Any:
    """The OpenRTM::ExtTrigExecutionContextService among ``rtobject``'s owned contexts (as
    openhrp3's Controller_impl looks for it), or None."""
    for ec in rtobject.get_owned_contexts():
        if ec is None:
            continue
        try:
            ext = ec._narrow(OpenRTM.ExtTrigExecutionContextService)
        except CORBA.Exception:
            ext = None
        if ext is not None:
            return ext
    return None


class LeaderServant(Lockstep__POA.Leader):
    """The leader's side. ``expected``: process -> its part names in instant order;
    ``remote_parts``: process -> the RemoteParts the time base runs. Runs in: ORB threads."""

    def __init__(self, time_base: Any, expected: dict[str, list[str]],
                 remote_parts: dict[str, list[Any]],
                 step_timeout: float = DEFAULT_STEP_TIMEOUT, mail: StepMail | None = None):
        self.tb = time_base
        self.mail = mail
        self.expected = {k: list(v) for k, v in expected.items()}
        self.remote_parts = remote_parts
        self.step_timeout = step_timeout
        self.joined: dict[str, RemoteFollower] = {}
        self.refused: list[str] = []
        self.open = True
        self._cond = threading.Condition()
        self.ref: Any = None

    # -- joining -------------------------------------------------------------------------------
    def join(self, process: str, ref: Any, parts: list[str]) -> None:
        with self._cond:
            reason = None
            if not self.open:
                reason = (f"process {process!r} joined late: the simulation is running "
                          f"(simulated time {self.tb.now:.3f} s); a process cannot join a "
                          "lockstep simulation once simulated time has started: restart the "
                          "whole system")
            elif process not in self.expected:
                reason = (f"the composition places no execution context in process "
                          f"{process!r} (its other processes: "
                          f"{', '.join(self.expected) or 'none'})")
            elif process in self.joined:
                reason = f"process {process!r} joined already"
            elif list(parts) != self.expected[process]:
                reason = (f"process {process!r} runs {list(parts)}, the composition "
                          f"{self.expected[process]}")
            if reason is not None:
                self.refused.append(reason)
                log.warning("refused a process: %s", reason)
                raise Lockstep.Refused(reason)
            client = RemoteFollower(process, ref, self.step_timeout, self.mail)
            for part in self.remote_parts.get(process, []):
                part.remote = client
            self.joined[process] = client
            self._cond.notify_all()
        log.info("process %s joined the lockstep simulation (%s)", process,
                 ", ".join(parts))

    def missing(self) -> list[str]:
        with self._cond:
            return [p for p in self.expected if p not in self.joined]

    def wait_joined(self, processes: list[str], timeout: float,
                    stop: Callable[[], bool] = lambda: False) -> list[str]:
        """Block until every process of ``processes`` has joined, ``stop()`` or the timeout;
        the ones still missing."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                missing = [p for p in processes if p not in self.joined]
                left = deadline - time.monotonic()
                if not missing or left <= 0 or stop():
                    return missing
                self._cond.wait(min(left, 0.1))

    def close(self) -> None:
        """Simulated time starts: every later join is refused."""
        with self._cond:
            self.open = False

    def finish(self, reason: str) -> None:
        for client in list(self.joined.values()):
            client.finish(reason)

    # -- time control for the other processes ----------------------------------------------------
    def pause(self, wait: bool) -> None:
        self.tb.pause(wait=wait)

    def resume(self) -> None:
        self.tb.resume()

    def advance(self, seconds: float, wait: bool) -> float:
        try:
            return float(self.tb.advance(seconds, wait=wait))
        except ValueError as e:
            raise Lockstep.Refused(str(e)) from None

    def set_real_time_factor(self, factor: float) -> None:
        try:
            self.tb.set_real_time_factor(factor)
        except ValueError as e:
            raise Lockstep.Refused(str(e)) from None

    def state(self) -> Any:
        tb = self.tb
        return Lockstep.TimeState(float(tb.now), bool(tb.paused), float(tb.real_time_factor),
                                  bool(tb.stop_reached.is_set()))


class RemoteLeader:
    """A follower's time control over the wire (SimTimeBase.controller): pause, resume,
    advance and the factor act on the leader's time base, the system's one clock. Runs in:
    any thread of the follower."""

    def __init__(self, ref: Any):
        self.ref = ref
        self._last: tuple[bool, float] = (False, 0.0)

    def _state(self) -> tuple[bool, float]:
        """(paused, factor) from the leader; once the leader is gone (the run ended, a
        follower writes its final report after), the last ones it told."""
        try:
            st = self.ref.state()
        except CORBA.SystemException:
            # gone in any of its ways: the process (COMM_FAILURE, TRANSIENT), its servant
            # (OBJECT_NOT_EXIST) or its adapter while the ORB still answers (OBJ_ADAPTER)
            return self._last
        self._last = (bool(st.paused), float(st.real_time_factor))
        return self._last

    @property
    def paused(self) -> bool:
        return self._state()[0]

    @property
    def real_time_factor(self) -> float:
        return self._state()[1]

    def pause(self, wait: bool = True) -> None:
        self.ref.pause(wait)

    def resume(self) -> None:
        self.ref.resume()

    def advance(self, seconds: float, wait: bool = True) -> float:
        try:
            return float(self.ref.advance(seconds, wait))
        except Lockstep.Refused as e:
            raise ValueError(e.reason) from None

    def set_real_time_factor(self, factor: float) -> None:
        try:
            self.ref.set_real_time_factor(factor)
        except Lockstep.Refused as e:
            raise ValueError(e.reason) from None

    def alive(self) -> bool:
        try:
            return not self.ref._non_existent()
        except CORBA.Exception:
            return False
