"""The CORBA servants of our ECs: RTC::ExecutionContextService for a periodic EC, and
OpenRTM::ExtTrigExecutionContextService (with tick()) for a stepped one, so that each
reports the repository id of its real kind, as OpenRTM's PeriodicExecutionContext and
ExtTrigExecutionContext do. Both report kind PERIODIC.

Every component owns an execution context, as in OpenRTM (hrpsys's rtm.py does
``get_owned_contexts()[0]`` for every RTC it finds). The first member of an EC owns it; a
component that runs in another's EC (a later member of a shared EC) owns its *own context*
(:class:`OwnContextServant`): its place in the EC it runs in, seen as an EC of its own. It
acts on the same lifecycle state, so ``rtact`` (owned context 0) and rtm.py (participating
context 0 when there is one) change and read one state. OpenRTM's composites and hrpsys's
``serializeComponents`` leave such a member a stopped EC of its own, with a separate state;
here the member's own context runs with the EC it runs in and cannot be started, stopped or
re-rated alone (that is the owner's EC's business), and it is never an ExtTrig service, so
a simulator that ticks each RTC's owned ExtTrig context (openhrp3's Controller_impl) ticks
a shared stepped EC once, through its owner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..execution import ExecutionContext, SteppedEC
from .idl import stub_module
from .nv import rc, to_nvlist

if TYPE_CHECKING:
    from .runtime import CorbaRuntime

RTC = stub_module("RTC")
RTC__POA = stub_module("RTC__POA")
OpenRTM__POA = stub_module("OpenRTM__POA")


def ec_servant(ec: ExecutionContext, runtime: "CorbaRuntime") -> "ECServant":
    """The servant class of ``ec``'s kind: ExtTrig for an EC driven by tick()."""
    cls = ExtTrigECServant if getattr(ec, "ticked", False) else ECServant
    return cls(ec, runtime)


def live_properties(ec: ExecutionContext) -> dict[str, str]:
    """The EC's live timing as profile properties (``stats.*``, read by rtcat -ll and the
    web view): cycles and overruns since start; achieved rate [Hz], p99 and worst lateness
    [us] over the last second. Runs in: an ORB thread; reads the EC's counters only."""
    s = ec.recent_stats(1.0)
    out = {"stats.cycles": str(int(s["cycles"])), "stats.overruns": str(int(s["overruns"])),
           "stats.rate": f"{s['rate']:.1f}",
           "stats.lateness_p99_us": f"{s['lateness_p99'] * 1e6:.0f}",
           "stats.lateness_max_us": f"{s['lateness_max'] * 1e6:.0f}",
           "stats.window_s": "1"}
    causes = getattr(ec, "overrun_causes", None)    # a paced simulation's (rtcf.simtime)
    if causes is not None:
        for k, v in causes.items():
            out[f"stats.overruns.{k}"] = str(int(v))
    return out


class ECServant(RTC__POA.ExecutionContextService):
    """Runs in: ORB threads. Lifecycle requests go through the EC's thread-safe API (they
    are applied by the EC thread at its next cycle)."""

    def __init__(self, ec: ExecutionContext, runtime: "CorbaRuntime"):
        self.ec = ec
        self.rt = runtime
        self.ref: Any = None

    def _comp(self, comp_ref: Any) -> Any:
        return self.rt.local_component(comp_ref)

    # ExecutionContext
    def is_running(self) -> bool:
        return self.ec.is_running()

    def start(self) -> Any:
        return rc(self.ec.start())

    def stop(self) -> Any:
        return rc(self.ec.stop())

    def get_rate(self) -> float:
        return float(self.ec.rate)

    def set_rate(self, rate: float) -> Any:
        return rc(self.ec.set_rate(rate))

    def add_component(self, comp_ref: Any) -> Any:
        comp = self._comp(comp_ref)
        if comp is None:
            return RTC.BAD_PARAMETER   # only components of this process can join
        try:
            self.ec.add_component(comp)
        except Exception:
            return RTC.PRECONDITION_NOT_MET
        return RTC.RTC_OK

    def remove_component(self, comp_ref: Any) -> Any:
        comp = self._comp(comp_ref)
        if comp is None or comp not in self.ec.members():
            return RTC.BAD_PARAMETER
        self.ec.remove_component(comp)
        return RTC.RTC_OK

    def _request(self, comp_ref: Any, what: str) -> Any:
        comp = self._comp(comp_ref)
        if comp is None:
            return RTC.BAD_PARAMETER
        code = getattr(self.ec, what)(comp)
        apply_now = getattr(self.ec, "apply_requests", None)
        if apply_now is not None and code.name == "RTC_OK":
            apply_now(comp)          # a stepped EC: the state changes now, not at a tick
        return rc(code)

    def activate_component(self, comp_ref: Any) -> Any:
        return self._request(comp_ref, "activate_component")

    def deactivate_component(self, comp_ref: Any) -> Any:
        return self._request(comp_ref, "deactivate_component")

    def reset_component(self, comp_ref: Any) -> Any:
        return self._request(comp_ref, "reset_component")

    def get_component_state(self, comp_ref: Any) -> Any:
        comp = self._comp(comp_ref)
        if comp is None:
            return RTC.CREATED_STATE
        return RTC.LifeCycleState._items[int(self.ec.get_component_state(comp))]

    def get_kind(self) -> Any:
        return RTC.PERIODIC if self.ec.kind == "PERIODIC" else RTC.OTHER

    # ExecutionContextService
    def get_profile(self) -> Any:
        owner = self.ec.owner
        owner_ref = self.rt.component_ref(owner) if owner is not None else None
        parts = [self.rt.component_ref(c) for c in self.ec.members()]
        props = {"name": self.ec.name, "type": type(self.ec).__name__,
                 "rate": f"{self.ec.rate:g}", "kind": self.ec.kind}
        props.update(live_properties(self.ec))
        return RTC.ExecutionContextProfile(self.get_kind(), float(self.ec.rate), owner_ref,
                                           [p for p in parts if p is not None],
                                           to_nvlist(props))



class OwnContextServant(ECServant):
    """The execution context a component owns when it runs in another component's EC: its
    place in that EC (the first EC it takes part in), as an RTC::ExecutionContextService of
    its own. Lifecycle calls, states, rate, kind and running state are those of that EC;
    the profile names the component as owner. start, stop and set_rate are refused with
    PRECONDITION_NOT_MET (they belong to the EC's owner). Runs in: ORB threads."""

    def __init__(self, comp: Any, runtime: "CorbaRuntime"):   # no EC of its own
        self.comp = comp
        self.rt = runtime
        self.ref: Any = None

    @property
    def ec(self) -> Any:            # type: ignore[override]
        ecs = self.comp.ecs
        return ecs[0] if ecs else None

    def _shared(self) -> "ECServant | None":
        ec = self.ec
        return self.rt.ecs.get(id(ec)) if ec is not None else None

    def is_running(self) -> bool:
        ec = self.ec
        return bool(ec is not None and ec.is_running())

    def start(self) -> Any:
        return RTC.PRECONDITION_NOT_MET

    def stop(self) -> Any:
        return RTC.PRECONDITION_NOT_MET

    def get_rate(self) -> float:
        ec = self.ec
        return float(ec.rate) if ec is not None else 0.0

    def set_rate(self, rate: float) -> Any:
        return RTC.PRECONDITION_NOT_MET

    def add_component(self, comp_ref: Any) -> Any:
        shared = self._shared()
        return shared.add_component(comp_ref) if shared is not None else RTC.BAD_PARAMETER

    def remove_component(self, comp_ref: Any) -> Any:
        shared = self._shared()
        if shared is None or self._comp(comp_ref) is self.comp:
            return RTC.PRECONDITION_NOT_MET    # a component cannot leave its own context
        return shared.remove_component(comp_ref)

    def _request(self, comp_ref: Any, what: str) -> Any:
        shared = self._shared()
        return shared._request(comp_ref, what) if shared is not None else RTC.BAD_PARAMETER

    def get_component_state(self, comp_ref: Any) -> Any:
        shared = self._shared()
        return shared.get_component_state(comp_ref) if shared is not None \
            else RTC.CREATED_STATE

    def get_kind(self) -> Any:
        return RTC.PERIODIC

    def get_profile(self) -> Any:
        ec = self.ec
        owner_ref = self.rt.component_ref(self.comp)
        if ec is None:
            return RTC.ExecutionContextProfile(RTC.PERIODIC, 0.0, owner_ref, [],
                                               to_nvlist({"type": "OwnContext"}))
        parts = [self.rt.component_ref(c) for c in ec.members()]
        props = {"name": ec.name, "type": "OwnContext", "rate": f"{ec.rate:g}",
                 "kind": ec.kind, "runs_in": ec.name,
                 "runs_in.owner": ec.owner.instance_name if ec.owner is not None else ""}
        props.update(live_properties(ec))
        return RTC.ExecutionContextProfile(RTC.PERIODIC, float(ec.rate), owner_ref,
                                           [p for p in parts if p is not None],
                                           to_nvlist(props))


class ExtTrigECServant(ECServant, OpenRTM__POA.ExtTrigExecutionContextService):
    """A stepped EC: OpenRTM::ExtTrigExecutionContextService. Runs in: ORB threads."""

    def tick(self) -> None:
        if isinstance(self.ec, SteppedEC):
            self.ec.tick()
