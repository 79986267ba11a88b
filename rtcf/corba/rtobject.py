"""The component as OpenRTM's DataFlowComponent (RTObject + SDO) and its SDO Configuration.

Runs in: ORB threads. Profiles are read-only views of the component; lifecycle requests go
to the ECs; configuration changes are validated here and staged for the EC thread.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ..component import Component
from ..errors import ParamError
from ..log import get_logger
from ..lifecycle import LifeCycleState, is_failure
from .idl import stub_module
from .nv import from_nvlist, to_nvlist

if TYPE_CHECKING:
    from .runtime import CorbaRuntime

RTC = stub_module("RTC")
SDO = stub_module("SDOPackage")
OpenRTM__POA = stub_module("OpenRTM__POA")
SDO__POA = stub_module("SDOPackage__POA")
log = get_logger("corba.rtobject")


def _refresh(comp: Component) -> None:
    """comp.refresh_profile(); a failure is logged and the tool gets the last values."""
    try:
        comp.refresh_profile()
    except Exception:
        log.exception("%s: refresh_profile failed", comp.instance_name)


class RTObjectServant(OpenRTM__POA.DataFlowComponent):
    """IDL:openrtm.aist.go.jp/OpenRTM/DataFlowComponent:1.0 for one Component."""

    def __init__(self, comp: Component, runtime: "CorbaRuntime"):
        self.comp = comp
        self.rt = runtime
        self.ref: Any = None
        self.config = ConfigurationServant(comp)
        self.config_ref: Any = None
        self._own: Any = None          # OwnContextServant, made on first use

    # -- owned and participating contexts ---------------------------------------------------
    def own_context(self) -> Any:
        """The reference of the context this component owns when it owns no EC (it runs in
        another component's EC): ecservice.OwnContextServant, activated on first use."""
        if self._own is None:
            from .ecservice import OwnContextServant
            own = OwnContextServant(self.comp, self.rt)
            own.ref = self.rt.activate(own)
            self._own = own
        return self._own.ref

    def close(self) -> None:
        """Deactivate the own context (the runtime unregisters the component)."""
        own, self._own = self._own, None
        if own is not None:
            self.rt.deactivate(own)

    def _is_own(self, ec_ref: Any) -> bool:
        own = self._own
        return own is not None and self.rt.local_servant(ec_ref) is own

    def _owned_refs(self) -> list:
        """OpenRTM: every RTC owns an EC. The ECs it owns, else its own context."""
        refs = [r for r in (self.rt.ec_ref(ec) for ec in self.comp.owned_ecs) if r]
        return refs or [self.own_context()]

    # -- LightweightRTObject -------------------------------------------------------------
    def initialize(self) -> Any:
        return RTC.PRECONDITION_NOT_MET if self.comp.initialized else RTC.RTC_OK

    def finalize(self) -> Any:
        # OpenRTM refuses finalize() while the component takes part in an EC; use exit().
        if self.comp.ecs:
            return RTC.PRECONDITION_NOT_MET
        self.comp.finalize()
        return RTC.RTC_OK

    def exit(self) -> Any:
        if self.comp.finalized:
            return RTC.PRECONDITION_NOT_MET
        self.rt.exit_component(self.comp)
        return RTC.RTC_OK

    def is_alive(self, ec_ref: Any) -> bool:
        if self._is_own(ec_ref):
            ec_ref = self.rt.ec_ref(self.comp.ecs[0]) if self.comp.ecs else None
        ec = self.rt.local_ec(ec_ref)
        if ec is None or ec not in self.comp.ecs:
            return False
        return ec.get_component_state(self.comp) is not LifeCycleState.CREATED

    def get_context(self, handle: int) -> Any:
        if handle == 0 and not self.comp.owned_ecs:
            return self.own_context()
        for ec in self.comp.ecs:
            if ec.handle_of(self.comp) == handle:
                return self.rt.ec_ref(ec)
        return None

    def get_owned_contexts(self) -> list:
        return self._owned_refs()

    def get_participating_contexts(self) -> list:
        return [r for r in (self.rt.ec_ref(ec) for ec in self.comp.ecs
                            if ec not in self.comp.owned_ecs) if r]

    def get_context_handle(self, ec_ref: Any) -> int:
        if self._is_own(ec_ref) and not self.comp.owned_ecs:
            return 0
        ec = self.rt.local_ec(ec_ref)
        if ec is None or ec not in self.comp.ecs:
            return -1
        return ec.handle_of(self.comp)

    def attach_context(self, ec_ref: Any) -> int:
        ec = self.rt.local_ec(ec_ref)
        if ec is None:
            return -1   # foreign ECs are not supported
        try:
            return ec.add_component(self.comp)
        except Exception:
            return -1

    def detach_context(self, handle: int) -> Any:
        if handle == 0 and not self.comp.owned_ecs:
            return RTC.PRECONDITION_NOT_MET    # its own context: it cannot leave it
        for ec in self.comp.ecs:
            if ec.handle_of(self.comp) == handle:
                if ec.get_component_state(self.comp) is LifeCycleState.ACTIVE:
                    return RTC.PRECONDITION_NOT_MET
                ec.remove_component(self.comp)
                return RTC.RTC_OK
        return RTC.BAD_PARAMETER

    # -- ComponentAction / DataFlowComponentAction (called by remote ECs only) ------------
    def _hook(self, name: str, handle: int | None = None) -> Any:
        ec = None
        for e in self.comp.ecs:
            if handle is None or e.handle_of(self.comp) == handle:
                ec = e
                break
        try:
            if name in ("on_initialize", "on_finalize"):
                result = getattr(self.comp, name)()
            else:
                info = ec.member(self.comp).info if ec is not None else None
                result = getattr(self.comp, name)(info)
        except Exception:
            self.comp.log.exception("%s (called over CORBA) failed", name)
            return RTC.RTC_ERROR
        return RTC.RTC_ERROR if is_failure(result) else RTC.RTC_OK

    def on_initialize(self): return self._hook("on_initialize")
    def on_finalize(self): return self._hook("on_finalize")
    def on_startup(self, h): return self._hook("on_startup", h)
    def on_shutdown(self, h): return self._hook("on_shutdown", h)
    def on_activated(self, h): return self._hook("on_activated", h)
    def on_deactivated(self, h): return self._hook("on_deactivated", h)
    def on_aborting(self, h): return self._hook("on_aborting", h)
    def on_error(self, h): return self._hook("on_error", h)
    def on_reset(self, h): return self._hook("on_reset", h)
    def on_execute(self, h): return self._hook("on_execute", h)
    def on_state_update(self, h): return self._hook("on_state_update", h)
    def on_rate_changed(self, h): return self._hook("on_rate_changed", h)

    # -- RTObject ------------------------------------------------------------------------
    def profile_properties(self) -> dict[str, str]:
        c = self.comp
        props = {
            "implementation_id": c.type_name, "type_name": c.type_name,
            "description": c.description(), "version": c.version, "vendor": c.vendor,
            "category": c.category, "activity_type": "PERIODIC", "kind": "DataFlowComponent",
            "max_instance": str(c.max_instance), "language": c.language,
            "lang_type": "SCRIPT", "instance_name": c.instance_name,
            "naming.names": ",".join(self.rt.names_of(c)), "pid": str(os.getpid()),
        }
        if c.ecs:
            props["exec_cxt.periodic.rate"] = f"{c.ecs[0].rate:g}"
        props.update(c.properties)
        return props

    def get_component_profile(self) -> Any:
        c = self.comp
        _refresh(c)
        return RTC.ComponentProfile(
            c.instance_name, c.type_name, c.description(), c.version, c.vendor, c.category,
            [p.profile() for p in self.rt.port_servants(c)], None,
            to_nvlist(self.profile_properties()))

    def get_ports(self) -> list:
        return [p.ref for p in self.rt.port_servants(self.comp)]

    # -- SDO -----------------------------------------------------------------------------
    def get_sdo_id(self) -> str:
        return self.comp.instance_name

    def get_sdo_type(self) -> str:
        return self.comp.type_name

    def get_device_profile(self) -> Any:
        c = self.comp
        return SDO.DeviceProfile(c.type_name, c.vendor, c.type_name, c.version, [])

    def get_service_profiles(self) -> list:
        return []

    def get_service_profile(self, sid: str) -> Any:
        raise SDO.InvalidParameter(f"no SDO service {sid!r}")

    def get_sdo_service(self, sid: str) -> Any:
        raise SDO.InvalidParameter(f"no SDO service {sid!r}")

    def get_configuration(self) -> Any:
        return self.config_ref

    def get_monitoring(self) -> Any:
        raise SDO.InterfaceNotImplemented("monitoring is not implemented")

    def get_organizations(self) -> list:
        return []

    def get_owned_organizations(self) -> list:
        return []

    def get_status_list(self) -> list:
        return []

    def get_status(self, name: str) -> Any:
        raise SDO.InvalidParameter(f"no status {name!r}")


class ConfigurationServant(SDO__POA.Configuration):
    """SDOPackage::Configuration over the component's ParamStore (values as strings)."""

    def __init__(self, comp: Component):
        self.comp = comp

    def _set(self, name: str, values: dict[str, Any]) -> Any:
        specs = self.comp.params.specs
        strings = {k: specs[k].to_string(v) for k, v in values.items() if k in specs}
        return SDO.ConfigurationSet(name, "", to_nvlist(strings))

    def _wake(self) -> None:
        """A changed parameter becomes live at the next cycle: wake each EC that waits."""
        for ec in self.comp.ecs:
            ec.wake()

    def _snapshot(self) -> tuple[str, dict[str, dict[str, Any]]]:
        _refresh(self.comp)
        return self.comp.params.snapshot()

    def get_configuration_sets(self) -> list:
        _, sets = self._snapshot()
        return [self._set(n, v) for n, v in sets.items()]

    def get_configuration_set(self, set_id: str) -> Any:
        _, sets = self._snapshot()
        if set_id not in sets:
            raise SDO.InvalidParameter(f"{self.comp.instance_name}: no configuration set "
                                       f"{set_id!r}")
        return self._set(set_id, sets[set_id])

    def get_active_configuration_set(self) -> Any:
        active, sets = self._snapshot()
        return self._set(active, sets[active])

    def set_configuration_set_values(self, cs: Any) -> bool:
        values = from_nvlist(cs.configuration_data)
        try:
            self.comp.params.set_set_values(cs.id, values)
        except ParamError as e:
            raise SDO.InvalidParameter(str(e))
        self._wake()
        return True

    def add_configuration_set(self, cs: Any) -> bool:
        if cs.id in self.comp.params.snapshot()[1]:
            raise SDO.InvalidParameter(f"configuration set {cs.id!r} exists")
        return self.set_configuration_set_values(cs)

    def remove_configuration_set(self, set_id: str) -> bool:
        try:
            self.comp.params.remove_set(set_id)
        except ParamError as e:
            raise SDO.InvalidParameter(str(e))
        return True

    def activate_configuration_set(self, set_id: str) -> bool:
        try:
            self.comp.params.activate_set(set_id)
        except ParamError as e:
            raise SDO.InvalidParameter(str(e))
        self._wake()
        return True

    def get_configuration_parameters(self) -> list:
        return []

    def get_configuration_parameter_values(self) -> list:
        active, sets = self._snapshot()
        return self._set(active, sets[active]).configuration_data

    def get_configuration_parameter_value(self, name: str) -> Any:
        for nv in self.get_configuration_parameter_values():
            if nv.name == name:
                return nv.value
        raise SDO.InvalidParameter(f"no parameter {name!r}")

    def set_configuration_parameter(self, name: str, value: Any) -> bool:
        try:
            self.comp.params.set(name, value.value())
        except ParamError as e:
            raise SDO.InvalidParameter(str(e))
        self._wake()
        return True

    # Needed only so rtctree's "dynamic" observer mode and tools that add profiles work.
    def set_device_profile(self, profile: Any) -> bool:
        return True

    def add_service_profile(self, profile: Any) -> bool:
        return True

    def remove_service_profile(self, sid: str) -> bool:
        return True

    def add_organization(self, org: Any) -> bool:
        return True

    def remove_organization(self, oid: str) -> bool:
        return True
