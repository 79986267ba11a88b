"""The web view's parameter edit against a component that follows OpenRTM-aist's SDO
configuration: after ``set_configuration_set_values`` the component has no active set until
``activate_configuration_set`` is called, and ``get_active_configuration_set`` raises
SDOPackage.NotAvailable meanwhile (OpenRTM-aist-Python: ConfigAdmin.setConfigurationSetValues
sets ``_active = False``; SdoConfiguration.get_active_configuration_set raises NotAvailable
when no set is active). rtshell's rtconf reads the active set's name first and re-activates
it after setting a value; the page must do the same, or it leaves the component with no
active set (and ``rtconf set`` fails on it afterwards)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from rtcf.corba.idl import ensure_stubs, stub_module
from rtcf.web.system import ActionError, SystemView


class OpenRTMConfiguration:
    """SDOPackage::Configuration as OpenRTM-aist-Python answers it (the parts the page
    uses), on plain values."""

    def __init__(self, sets: dict[str, dict[str, str]], active: str):
        self.sets = sets
        self.active = active
        self.is_active = True
        self.applied = dict(sets[active])       # what the component runs with
        self.SDO = stub_module("SDOPackage")

    def _cs(self, set_id: str) -> Any:
        from omniORB import CORBA
        return self.SDO.ConfigurationSet(set_id, "", [
            self.SDO.NameValue(k, CORBA.Any(CORBA.TC_string, v))
            for k, v in self.sets[set_id].items()])

    def get_configuration_sets(self) -> list:
        return [self._cs(s) for s in self.sets]

    def get_configuration_set(self, set_id: str) -> Any:
        if set_id not in self.sets:
            raise self.SDO.InvalidParameter(f"no set {set_id}")
        return self._cs(set_id)

    def get_active_configuration_set(self) -> Any:
        if not self.is_active:
            raise self.SDO.NotAvailable("NotAvailable: Configuration."
                                        "get_active_configuration_set()")
        return self._cs(self.active)

    def set_configuration_set_values(self, cs: Any) -> bool:
        if cs.id not in self.sets:
            return False
        for nv in cs.configuration_data:
            self.sets[cs.id][nv.name] = nv.value.value()
        self.is_active = False                  # ConfigAdmin: _active = False
        return True

    def activate_configuration_set(self, set_id: str) -> bool:
        if set_id not in self.sets:
            raise self.SDO.InvalidParameter(f"no set {set_id}")
        self.active, self.is_active = set_id, True
        self.applied = dict(self.sets[set_id])
        return True


def _view(conf: OpenRTMConfiguration) -> SystemView:
    """A SystemView holding one component whose configuration is ``conf`` (no naming)."""
    ensure_stubs()
    view = SystemView.__new__(SystemView)
    view.SDO = stub_module("SDOPackage")
    view.RTC = stub_module("RTC")
    view.structure = {"components": [{"id": "c1", "name": "aist0", "path": "x/aist0.rtc",
                                      "ports": [], "ecs": []}]}
    view._comps = {"c1": {"ref": SimpleNamespace(get_configuration=lambda: conf),
                          "ecs": []}}
    return view


def test_editing_the_active_set_leaves_it_active_and_applied() -> None:
    conf = OpenRTMConfiguration({"default": {"gain": "1.0"}, "fast": {"gain": "5.0"}},
                                "default")
    view = _view(conf)
    msg = view.set_param("aist0", "default", "gain", "2.5")
    assert "gain = 2.5" in msg
    assert conf.is_active and conf.active == "default"
    assert conf.applied == {"gain": "2.5"}
    # and what rtconf does next works: the active set is readable
    assert conf.get_active_configuration_set().id == "default"


def test_editing_another_set_keeps_the_active_one() -> None:
    conf = OpenRTMConfiguration({"default": {"gain": "1.0"}, "fast": {"gain": "5.0"}},
                                "default")
    view = _view(conf)
    view.set_param("aist0", "fast", "gain", "7.0")
    assert conf.sets["fast"] == {"gain": "7.0"}
    assert conf.is_active and conf.active == "default"     # re-activated, not switched
    assert conf.applied == {"gain": "1.0"}


def test_a_refused_value_is_reported() -> None:
    conf = OpenRTMConfiguration({"default": {"gain": "1.0"}}, "default")
    view = _view(conf)
    with pytest.raises(ActionError, match="no parameter 'nosuch'"):
        view.set_param("aist0", "default", "nosuch", "1")
    assert conf.is_active
