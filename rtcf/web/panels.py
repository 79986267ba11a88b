"""Panels of the web view brought by component packages: the extension point.

The web view knows no component. A package that wants a section in a component's details
(the controller manager's list of controllers with start / stop buttons) declares a
:class:`Panel` as an entry point of the group ``rtcf.web_panels`` in the ``setup.cfg`` of
the distribution that installs it::

    [options.entry_points]
    rtcf.web_panels =
        controllers = rtcf_components.controller_manager.web:PANEL

A panel serves the components whose service ports provide an interface of its
``interface`` type (``ControllerManagerService``). It has three parts:

* ``script``: a JavaScript file, served at ``/panels/<name>.js`` and loaded by the page,
  that registers the panel's renderer: ``rtcf.panel(name, {render(c, data, ui)})`` returns
  the elements of its section (``ui``: the page's ``el``, ``fmt``, ``post``, ``reload``);
* ``make(view)``: the server side, made once per web view with its
  :class:`~rtcf.web.system.SystemView`: ``describe(cid) -> dict`` answers
  ``GET /api/<name>/<cid>`` (polled every second while the component is selected) and
  ``act(cid, action, body) -> str`` answers ``POST /api/<name>/<cid>/<action>`` (a JSON
  object). Both run in the web server's worker threads and raise
  :class:`~rtcf.web.system.ActionError` with a message for the user.

Entry points, rather than a registry filled when the manager loads a component module:
the web view runs in a process of its own (``rtcf-web``, or the manager's child) that never
loads the system's component modules; an installed package's entry points are found there
without importing anything else of it. A panel that fails to load is left out and named in
the page's errors; the view goes on without it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Callable

GROUP = "rtcf.web_panels"
NAME = re.compile(r"[a-z][a-z0-9_]{0,31}$")
RESERVED = frozenset({"system", "state", "param", "configset"})   # the view's own API


@dataclass(frozen=True)
class Panel:
    """One panel: ``name`` (its URL part, ``[a-z][a-z0-9_]*``), ``title`` (the section's
    heading), ``interface`` (the provided interface type it serves), ``script`` (the page's
    part) and ``make`` (view -> the server side with ``describe`` and ``act``)."""

    name: str
    title: str
    interface: str
    script: Path
    make: Callable[[Any], Any]

    def serves(self, interface_type: str) -> bool:
        """True for a provided interface of this panel's type (``IDL:...:1.0``, a scoped
        ``RTController::ControllerManagerService`` or the plain name). Runs in: any
        thread."""
        base = interface_type.split(":")[-2] if interface_type.startswith("IDL:") \
            else interface_type
        return base.split("::")[-1].split("/")[-1] == self.interface


def check(panel: Any, source: str) -> str | None:
    """What is wrong with a declared panel, or None."""
    if not isinstance(panel, Panel):
        return f"{source}: expected an rtcf.web.panels.Panel, got {type(panel).__name__}"
    if not NAME.match(panel.name) or panel.name in RESERVED:
        return (f"{source}: name: expected [a-z][a-z0-9_]* other than "
                f"{', '.join(sorted(RESERVED))}, got {panel.name!r}")
    if not Path(panel.script).is_file():
        return f"{source}: script {str(panel.script)!r} is not a file"
    if not callable(panel.make):
        return f"{source}: make: expected a callable, got {panel.make!r}"
    return None


def load_panels(entry_points: Any = None) -> tuple[dict[str, Panel], list[str]]:
    """The installed panels by name, and one line per panel left out (it failed to import,
    is malformed, or its name is taken). Runs in: the web view's process, at start."""
    eps = metadata.entry_points(group=GROUP) if entry_points is None else entry_points
    panels: dict[str, Panel] = {}
    errors: list[str] = []
    for ep in sorted(eps, key=lambda e: e.name):
        source = f"web panel {ep.name!r} ({ep.value})"
        try:
            panel = ep.load()
        except Exception as e:              # a broken plug-in must not stop the view
            errors.append(f"{source}: {type(e).__name__}: {e}")
            continue
        problem = check(panel, source)
        if problem is None and panel.name in panels:
            problem = f"{source}: the name {panel.name!r} is taken by another panel"
        if problem is not None:
            errors.append(problem)
            continue
        panels[panel.name] = panel
    return panels, errors
