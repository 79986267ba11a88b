"""The web view's panel extension point (rtcf/web/panels.py): panels are found through the
``rtcf.web_panels`` entry points without importing anything of the framework's choosing;
one that fails to import, is not a Panel, has a reserved or taken name, or whose script is
missing is left out with a line saying why, and the others load. The installed project
declares the controller manager's panel."""

from __future__ import annotations

from pathlib import Path

from rtcf.web.panels import Panel, load_panels

HERE = Path(__file__)


class EP:
    """An entry point as importlib.metadata gives it (name, value, load())."""

    def __init__(self, name, value, obj=None, error=None):
        self.name, self.value, self._obj, self._error = name, value, obj, error

    def load(self):
        if self._error is not None:
            raise self._error
        return self._obj


def panel(name, script=HERE):
    return Panel(name=name, title=name.title(), interface="ThingService", script=script,
                 make=lambda view: object())


def test_good_panels_load_and_bad_ones_are_named_and_left_out():
    panels, errors = load_panels([
        EP("things", "pkg.web:PANEL", panel("things")),
        EP("broken", "pkg.broken:PANEL", error=ImportError("No module named 'pkg.broken'")),
        EP("odd", "pkg.odd:PANEL", obj="not a panel"),
        EP("system", "pkg.sys:PANEL", panel("system")),
        EP("twice", "pkg.web:AGAIN", panel("things")),
        EP("noscript", "pkg.ns:PANEL", panel("noscript", HERE.with_name("missing.js"))),
    ])
    assert list(panels) == ["things"]
    assert errors == [
        "web panel 'broken' (pkg.broken:PANEL): ImportError: No module named 'pkg.broken'",
        "web panel 'noscript' (pkg.ns:PANEL): script "
        f"{str(HERE.with_name('missing.js'))!r} is not a file",
        "web panel 'odd' (pkg.odd:PANEL): expected an rtcf.web.panels.Panel, got str",
        "web panel 'system' (pkg.sys:PANEL): name: expected [a-z][a-z0-9_]* other than "
        "configset, param, state, system, got 'system'",
        "web panel 'twice' (pkg.web:AGAIN): the name 'things' is taken by another panel"]


def test_a_panel_serves_its_interface_type_in_every_spelling():
    p = panel("things")
    assert p.serves("ThingService") and p.serves("Mod::ThingService")
    assert p.serves("IDL:Mod/ThingService:1.0")
    assert not p.serves("OtherThingService") and not p.serves("ThingServices")


def test_the_project_declares_the_controller_managers_panel():
    panels, errors = load_panels()
    assert not errors, errors
    ctl = panels["controllers"]
    assert ctl.serves("ControllerManagerService") and ctl.script.name == "web_panel.js"
    assert ctl.script.parent.name == "controller_manager"
