"""Tests of rtcf.component's profile: the description comes from the class's own docstring
(a class without one once reported the base class's docstring in rtcat)."""

from __future__ import annotations

from rtcf import Component


class Documented(Component):
    """Scales its input.

    | port | type | unit | meaning |
    """


class Undocumented(Component):
    pass


class ChildOfDocumented(Documented):
    pass


class Blank(Component):
    """   """


def test_description_is_the_first_line_of_the_own_docstring():
    assert Documented.description() == "Scales its input."


def test_without_own_docstring_the_type_name_is_the_description():
    assert Undocumented.description() == "Undocumented"
    assert "Base of every RT component" not in Undocumented.description()
    assert ChildOfDocumented.description() == "ChildOfDocumented"   # not inherited either
    assert Blank.description() == "Blank"


def test_the_corba_profile_carries_it():
    """What rtcat prints: ComponentProfile.description, read through the ORB."""
    from rtcf.corba.runtime import CorbaRuntime
    rt = CorbaRuntime(None, {"naming.enable": "NO"})
    comp = Undocumented("undoc0")
    comp.initialize()
    try:
        ref = rt.register_component(comp)
        assert ref.get_component_profile().description == "Undocumented"
    finally:
        rt.unregister_component(comp)
