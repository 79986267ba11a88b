"""The live web view: ``rtcf-web`` (or ``scripts/run --web``) serves a page showing the RT
components found in the naming services: the system graph with live states, each execution
context's rate, lateness and overruns, live plots of out ports, parameters and
configuration sets, state changes, and the panels component packages bring (the controller
manager's controllers).

``server`` (aiohttp: the page, the JSON API, WebSockets), ``system`` (the CORBA side: the
snapshot and the operations), ``taps`` (out ports plotted, through bounded rings),
``panels`` (the extension point: panels declared as ``rtcf.web_panels`` entry points),
``child`` (the manager's web server process). Vendored JavaScript libraries are under
``static/vendor``.
"""
