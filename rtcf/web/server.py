"""The live web view's server (aiohttp): the page, a JSON API for the operations, and one
WebSocket per page that carries the system (states and EC timing every ``live_interval``,
the structure every ``structure_interval``) and the values of the ports plotted on it
(``plot_hz`` frames a second, decimated to at most ``MAX_POINTS_PER_FRAME`` points).

Threads: the asyncio loop (HTTP, WebSockets, timers) never calls CORBA; every CORBA call
runs in a small worker pool; taps receive samples in ORB threads. A page that reads too
slowly loses frames (counted), never memory: at most one send per page is in flight.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any, Callable

from aiohttp import WSMsgType, web

from .hosts import HostPolicy, check_allowed
from .panels import load_panels
from .system import ActionError, SystemView
from .taps import DEFAULT_PUSH_RATE, TapSet
from ..tools.session import ToolError
from ..tools.values import json_text

STATIC = Path(__file__).resolve().parent / "static"
DEFAULT_PORT = 8780
MAX_POINTS_PER_FRAME = 20     # per port and frame: 25 frames/s -> 500 points/s at most


# every answer: no framing by any page (clickjacking), and the page's own scripts, styles
# and connections only (the vendored libraries are files under /static; no inline script)
SECURITY_HEADERS = {
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
                               "img-src 'self' data:; connect-src 'self'; "
                               "frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def parse_json(text: str) -> Any:
    """JSON text -> value; ValueError with a one-line reason for anything else (nesting
    too deep for the parser included: RecursionError)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("the JSON is nested too deeply") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"not JSON: {e}") from None


def guard(hosts: Callable[[], HostPolicy | None], app_origins: bool = False) -> Any:
    """The middleware that admits a request only when its Host is one of the server's
    names (DNS rebinding, see :mod:`rtcf.web.hosts`) and its Origin, when a browser sends
    one, is the page's own (``http://`` + that Host); an operation must come as JSON
    (which another site's page cannot send without a CORS preflight, never answered here).
    The WebSocket handshake is a GET to /ws and passes the same checks. ``app_origins``:
    the Foxglove bridge's Origin rule (``HostPolicy.app_origin_ok``)."""

    @web.middleware
    async def middleware(request: web.Request, handler: Any) -> web.StreamResponse:
        policy = hosts()
        if policy is None:
            raise web.HTTPServiceUnavailable(text="starting")
        host = request.headers.get("Host", "")
        if not policy.accepts(host):
            raise web.HTTPMisdirectedRequest(
                text=f"this server does not answer to the host {host[:100]!r} (it answers "
                     f"to {', '.join(policy.names())}; more names: --allow-host, "
                     f"rtcf.web.allowed_hosts)")
        origin = request.headers.get("Origin")
        ok = policy.app_origin_ok if app_origins else policy.origin_ok
        if origin is not None and not ok(origin, host):
            raise web.HTTPForbidden(text=f"requests from {origin[:100]} are refused")
        if request.method == "POST" and request.content_type != "application/json":
            raise web.HTTPUnsupportedMediaType(text="operations are sent as application/json")
        return await handler(request)
    return middleware


async def _security_headers(request: web.Request, response: web.StreamResponse) -> None:
    response.headers.update(SECURITY_HEADERS)


class Page:
    """One connected page: its WebSocket, the ports it plots and how far it has read.
    Runs in: the event loop (every method)."""

    def __init__(self, ws: web.WebSocketResponse):
        self.ws = ws
        self.plots: dict[str, int] = {}     # tap key -> last sample seq sent
        self.sending: dict[str, asyncio.Task] = {}     # message type -> the send going on
        self.frames_dropped = 0

    def send(self, payload: dict[str, Any]) -> None:
        """Queue one message; skipped (counted) while the previous one of its type is still
        going (a page that reads slowly loses frames; nothing queues up for it)."""
        kind = payload["type"]
        going = self.sending.get(kind)
        if going is not None and not going.done():
            self.frames_dropped += 1
            return
        self.sending[kind] = asyncio.ensure_future(self._send(json_text(payload)))

    async def _send(self, text: str) -> None:
        try:
            await self.ws.send_str(text)
        except (ConnectionError, RuntimeError):
            pass


class WebView:
    """The web server of one system: the routes (``app``), the request handlers, the
    polling and plotting tasks and the pages they feed.

    Runs in: the asyncio event loop (``app`` before it starts; every handler and task
    after); ``call`` hands a blocking function (each CORBA call) to the worker pool and
    awaits it, so the loop never waits on a component."""

    def __init__(self, nameservers: list[str] | None, push_rate: float = DEFAULT_PUSH_RATE,
                 live_interval: float = 0.5, structure_interval: float = 3.0,
                 plot_hz: float = 25.0, parent_pid: int | None = None,
                 foxglove: tuple[str, int] | None = None):
        panels, panel_errors = load_panels()     # brought by component packages
        self.view = SystemView(nameservers, panels.values(), panel_errors)
        self.taps = TapSet(push_rate)
        self.panels: dict[str, Any] = {}         # name -> (Panel, its server side)
        for name, panel in panels.items():
            try:
                self.panels[name] = (panel, panel.make(self.view))
            except Exception as e:               # a broken plug-in: the view goes on
                self.view.panel_errors.append(f"web panel {name!r}: {type(e).__name__}: {e}")
        self.pool = concurrent.futures.ThreadPoolExecutor(4, thread_name_prefix="rtcf-web")
        self.pages: set[Page] = set()
        self.live_interval = live_interval
        self.structure_interval = structure_interval
        self.plot_hz = plot_hz
        self.parent_pid = parent_pid
        self.fox: Any = None
        if foxglove is not None:       # the Foxglove WebSocket protocol on its own port
            from .foxglove_bridge import FoxgloveBridge
            self.fox = FoxgloveBridge(self, *foxglove)
        self._refresh_now = asyncio.Event()
        self._page_opened = asyncio.Event()
        self._tasks: list[asyncio.Task] = []
        self.hosts: HostPolicy | None = None     # set once the port is bound

    async def call(self, fn: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.pool, fn, *args)

    # -- the application ------------------------------------------------------------------
    def app(self) -> web.Application:
        app = web.Application(middlewares=[guard(lambda: self.hosts)])
        app.on_response_prepare.append(_security_headers)
        app.router.add_get("/", self.index)
        app.router.add_get("/ws", self.websocket)
        app.router.add_get("/api/system", self.get_system)
        app.router.add_post("/api/state", self.post_state)
        app.router.add_post("/api/param", self.post_param)
        app.router.add_post("/api/configset", self.post_configset)
        app.router.add_get("/panels/{name}.js", self.panel_script)
        app.router.add_get("/api/{panel}/{cid}", self.get_panel)
        app.router.add_post("/api/{panel}/{cid}/{action}", self.post_panel)
        app.router.add_static("/static", STATIC, follow_symlinks=False)
        app.on_startup.append(self._on_startup)
        app.on_cleanup.append(self._on_cleanup)
        return app

    async def _on_startup(self, app: web.Application) -> None:
        self._refresh_now = asyncio.Event()
        self._page_opened = asyncio.Event()
        if self.fox is not None:
            self.fox.start(asyncio.get_running_loop())
        self._tasks = [asyncio.ensure_future(self._poll()),
                       asyncio.ensure_future(self._plots())]
        if self.parent_pid is not None:
            self._tasks.append(asyncio.ensure_future(self._watch_parent()))

    async def _watch_parent(self) -> None:
        """The backup of PR_SET_PDEATHSIG: stop once the manager that started us is gone."""
        while os.getppid() == self.parent_pid:
            await asyncio.sleep(0.5)
        os.kill(os.getpid(), signal.SIGTERM)

    async def _on_cleanup(self, app: web.Application) -> None:
        for t in self._tasks:
            t.cancel()
        for page in list(self.pages):
            await page.ws.close()
        if self.fox is not None:
            await self.fox.close()
        await self.call(self.taps.shutdown)
        self.pool.shutdown(wait=False)

    async def index(self, request: web.Request) -> web.StreamResponse:
        return web.FileResponse(STATIC / "index.html")

    # -- system polling -------------------------------------------------------------------
    async def _poll(self) -> None:
        """Refresh the system while a page is open (an idle server asks nothing of the
        components; /api/system refreshes on demand)."""
        last_structure = 0.0
        while True:
            if not self.pages and self.fox is None:
                await self._page_opened.wait()
                last_structure = 0.0
            now = time.monotonic()
            try:
                if now - last_structure >= self.structure_interval or \
                        self._refresh_now.is_set():
                    self._refresh_now.clear()
                    last_structure = now
                    await self.call(self.view.refresh_structure)
                    if self.fox is not None:
                        await self.call(self.fox.sync, self.view.structure)
                else:
                    await self.call(self.view.refresh_live)
            except Exception as e:                 # a bug must not stop the view
                self.view.errors.append(f"refresh failed: {type(e).__name__}: {e}")
            snap = {"type": "system", **self.view.snapshot()}
            for page in list(self.pages):
                page.send(snap)
            if not self.pages:
                self._page_opened.clear()
            try:
                await asyncio.wait_for(self._refresh_now.wait(), self.live_interval)
            except asyncio.TimeoutError:
                pass

    async def _plots(self) -> None:
        period = 1.0 / self.plot_hz
        while True:
            await asyncio.sleep(period)
            if not self.taps.rings:
                continue
            try:
                await self.call(self.taps.poll)
            except Exception as e:                 # a bug must not stop the plots
                self.view.errors.append(f"plots: {type(e).__name__}: {e}")
            for page in list(self.pages):
                frames = []
                for key, seq in list(page.plots.items()):
                    tap = self.taps.rings.get(key)
                    if tap is None:
                        continue
                    samples = tap.since(seq)
                    if not samples:
                        continue
                    page.plots[key] = samples[-1][0]
                    if len(samples) > MAX_POINTS_PER_FRAME:    # decimate, keep the newest
                        step = len(samples) / MAX_POINTS_PER_FRAME
                        samples = [samples[int(len(samples) - 1 - i * step)]
                                   for i in range(MAX_POINTS_PER_FRAME)][::-1]
                    frames.append({"key": key, "t": [s[1] for s in samples],
                                   "y": [s[2] for s in samples], "labels": tap.labels,
                                   "seq": tap.seq, "dropped": tap.dropped})
                if frames:
                    page.send({"type": "plot", "frames": frames,
                               "frames_dropped": page.frames_dropped})

    # -- WebSocket --------------------------------------------------------------------------
    async def websocket(self, request: web.Request) -> web.StreamResponse:
        ws = web.WebSocketResponse(heartbeat=10.0, max_msg_size=1 << 16)
        await ws.prepare(request)
        page = Page(ws)
        self.pages.add(page)
        self._page_opened.set()
        page.send({"type": "system", **self.view.snapshot()})
        try:
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    continue
                try:
                    req = parse_json(msg.data)
                    if not isinstance(req, dict):
                        raise ValueError("expected a JSON object with \"op\"")
                    op = req.get("op")
                    if op == "plot":
                        await self._subscribe(page, str(req["component"]), str(req["port"]))
                    elif op == "unplot":
                        key = str(req["key"])
                        if page.plots.pop(key, None) is not None:
                            await self.call(self.taps.close, key)
                    else:
                        raise ValueError(f"unknown op {op!r}")
                except KeyError as e:
                    await ws.send_str(json.dumps({"type": "error",
                                                  "message": f"{op}: missing {e}"}))
                except (ValueError, TypeError, ActionError) as e:
                    await ws.send_str(json.dumps({"type": "error", "message": str(e)}))
                except Exception as e:           # a bug must not drop the page's socket
                    self.view.errors.append(f"websocket: {type(e).__name__}: {e}")
                    await ws.send_str(json.dumps({"type": "error", "message":
                                                  f"internal error: {type(e).__name__}"}))
        finally:
            self.pages.discard(page)
            for key in list(page.plots):
                await self.call(self.taps.close, key)
        return ws

    async def _subscribe(self, page: Page, cid: str, port: str) -> None:
        def open_tap() -> Any:
            entry, _ = self.view.component(cid)
            key = f"{entry['id']}:{port}"
            handle = self.view.port_handle(cid, port)
            try:
                return key, self.taps.open(key, self.view.session, handle), entry["name"]
            except ToolError as e:
                raise ActionError(str(e)) from None
        key, tap, name = await self.call(open_tap)
        if key in page.plots:              # already plotted on this page: one user only
            await self.call(self.taps.close, key)
        page.plots[key] = tap.seq
        await page.ws.send_str(json.dumps({"type": "plotting", "key": key,
                                           "title": f"{name}.{port}",
                                           "data_type": tap.data_type.__name__}))

    # -- HTTP API -----------------------------------------------------------------------
    async def _answer(self, fn: Any, *args: Any, refresh: bool = True) -> web.Response:
        try:
            message = await self.call(fn, *args)
        except ActionError as e:
            return web.json_response({"ok": False, "error": str(e)}, status=400)
        if refresh:
            self._refresh_now.set()
        return web.json_response({"ok": True, "message": message})

    async def _json(self, request: web.Request, what: str) -> dict[str, Any]:
        """The request's body as a JSON object; 400 naming ``what`` was expected."""
        try:
            body = parse_json(await request.text())
        except (ValueError, UnicodeDecodeError) as e:
            raise web.HTTPBadRequest(text=f"expected {what}: {e}") from None
        if not isinstance(body, dict):
            raise web.HTTPBadRequest(text=f"expected {what}, got a JSON "
                                          f"{type(body).__name__}")
        return body

    async def _body(self, request: web.Request, *keys: str) -> list[str]:
        body = await self._json(request, f"a JSON object with {', '.join(keys)}")
        return [str(body[k]) if body.get(k) is not None else "" for k in keys]

    async def get_system(self, request: web.Request) -> web.Response:
        if time.time() - self.view.updated > self.live_interval * 2:   # no page polling
            await self.call(self.view.refresh_structure)
        return web.json_response(self.view.snapshot(), dumps=json_text)

    async def post_state(self, request: web.Request) -> web.Response:
        cid, action, ec = await self._body(request, "component", "action", "ec")
        return await self._answer(self.view.change_state, cid, action, ec or None)

    async def post_param(self, request: web.Request) -> web.Response:
        cid, set_id, name, value = await self._body(request, "component", "set", "name",
                                                    "value")
        return await self._answer(self.view.set_param, cid, set_id, name, value)

    async def post_configset(self, request: web.Request) -> web.Response:
        cid, set_id = await self._body(request, "component", "set")
        return await self._answer(self.view.activate_set, cid, set_id)

    # -- panels of component packages (rtcf/web/panels.py) -------------------------------
    def _panel(self, request: web.Request) -> tuple[Any, Any]:
        name = request.match_info.get("panel") or request.match_info.get("name", "")
        if name not in self.panels:
            raise web.HTTPNotFound(text=f"no web panel {name[:40]!r} (installed: "
                                        f"{', '.join(self.panels) or 'none'})")
        return self.panels[name]

    async def panel_script(self, request: web.Request) -> web.StreamResponse:
        panel, _ = self._panel(request)
        return web.FileResponse(panel.script, headers={"Content-Type":
                                                       "application/javascript"})

    async def get_panel(self, request: web.Request) -> web.Response:
        """GET /api/<panel>/<cid>: the panel's data for one component."""
        _, backend = self._panel(request)
        try:
            data = await self.call(backend.describe, request.match_info["cid"])
        except ActionError as e:
            return web.json_response({"ok": False, "error": str(e)}, status=400)
        return web.json_response({"ok": True, **data}, dumps=json_text)

    async def post_panel(self, request: web.Request) -> web.Response:
        """POST /api/<panel>/<cid>/<action> with a JSON object: one of the panel's
        operations; its refusal comes back as a 400 with the reason."""
        _, backend = self._panel(request)
        body = await self._json(request, "a JSON object")
        return await self._answer(backend.act, request.match_info["cid"],
                                  request.match_info["action"], body, refresh=False)


# -- the command ----------------------------------------------------------------------------

def check_address(address: str, port: int) -> str | None:
    """Why the server cannot listen at address:port, or None."""
    import socket
    try:
        infos = socket.getaddrinfo(address, port, type=socket.SOCK_STREAM)
    except OSError as e:
        return f"cannot resolve the address {address!r} ({e.strerror or e})"
    fam, _, _, _, addr = infos[0]
    with socket.socket(fam, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(addr)
        except OSError as e:
            return f"cannot listen on {address}:{port}: {e.strerror or e}"
    return None


def _port(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) < 65536:
        raise argparse.ArgumentTypeError(f"expected a TCP port 0-65535, got {text!r}")
    return int(text)


def _rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 1.0 <= value <= 1000.0:
        raise argparse.ArgumentTypeError(f"expected a rate between 1 and 1000 [Hz], "
                                         f"got {text!r}")
    return value


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="rtcf-web", description="Serve the live web view of the RT components found "
        "in the naming services (states, ECs, live plots, parameters, and the panels of "
        "component packages).")
    ap.add_argument("-n", "--nameserver", action="append", metavar="HOST:PORT",
                    help="naming service (repeatable; default: RTCTREE_NAMESERVERS, else "
                    "localhost:2809)")
    ap.add_argument("--address", default="127.0.0.1",
                    help="address to listen on (default 127.0.0.1: this machine only)")
    ap.add_argument("-p", "--port", type=_port, default=DEFAULT_PORT,
                    help=f"TCP port (default {DEFAULT_PORT}; 0: any free port)")
    ap.add_argument("--push-rate", type=_rate, default=DEFAULT_PUSH_RATE, metavar="HZ",
                    help="how often a plotted port sends its newest sample (default "
                    f"{DEFAULT_PUSH_RATE:g} Hz)")
    ap.add_argument("--foxglove-port", type=_port, default=None, metavar="PORT",
                    help="also speak the Foxglove WebSocket protocol on this port (same "
                    "address), so Foxglove and Lichtblick connect live (default: off)")
    ap.add_argument("--allow-host", action="append", default=[], metavar="NAME[:PORT]",
                    help="also answer requests for this host name (repeatable; the address, "
                    "localhost and the loopback addresses are always answered; any other "
                    "name is refused, against DNS rebinding)")
    ap.add_argument("--parent-pid", type=int, default=None, help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def follow_parent(pid: int) -> None:
    """Stop (SIGTERM) when the manager that started this server dies, kill -9 included."""
    from ..corba.nsguard import set_parent_death_signal
    set_parent_death_signal(signal.SIGTERM)
    if os.getppid() != pid:              # it died before the line above
        sys.exit(0)


def main(argv: list[str] | None = None) -> int:
    """The ``rtcf-web`` command (and the manager's web child: ``--parent-pid``)."""
    args = parse_args(argv)
    if args.parent_pid is not None:
        follow_parent(args.parent_pid)    # started as a normal process (spawning_normal)
    problem = next((f"--allow-host: {p}" for p in map(check_allowed, args.allow_host)
                    if p), None)
    problem = problem or check_address(args.address, args.port)
    if problem is None and args.foxglove_port is not None:
        if args.foxglove_port == args.port and args.port != 0:
            problem = f"--foxglove-port {args.port} is the page's port too"
        else:
            problem = check_address(args.address, args.foxglove_port)
    if problem:
        print(f"rtcf-web: {problem}", file=sys.stderr)
        return 2
    try:
        asyncio.run(_serve(args, args.nameserver))
    except ToolError as e:
        print(f"rtcf-web: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        pass
    return 0


async def _serve(args: argparse.Namespace, nameservers: list[str] | None) -> None:
    fox = (args.address, args.foxglove_port) if args.foxglove_port is not None else None
    view = WebView(nameservers, push_rate=args.push_rate, parent_pid=args.parent_pid,
                   foxglove=fox)
    nameservers = view.view.nameservers
    runner = web.AppRunner(view.app(), handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, args.address, args.port)
    await site.start()
    port = runner.addresses[0][1]                  # the real one (port 0 too)
    view.hosts = HostPolicy(args.address, port, args.allow_host)
    shown = f"[{args.address}]" if ":" in args.address else args.address
    print(f"rtcf-web: serving http://{shown}:{port}/ (naming: {', '.join(nameservers)}; "
          f"answers to {', '.join(view.hosts.names())})", file=sys.stderr, flush=True)
    fox_runner = None
    if view.fox is not None:
        fox_app = view.fox.app(guard(lambda: view.fox.hosts, app_origins=True))
        fox_app.on_response_prepare.append(_security_headers)
        fox_runner = web.AppRunner(fox_app, handle_signals=False)
        await fox_runner.setup()
        await web.TCPSite(fox_runner, args.address, args.foxglove_port).start()
        view.fox.port = fox_runner.addresses[0][1]
        view.fox.hosts = HostPolicy(args.address, view.fox.port, args.allow_host)
        print(f"rtcf-web: Foxglove WebSocket protocol at ws://{shown}:{view.fox.port}",
              file=sys.stderr, flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()
        if fox_runner is not None:
            await fox_runner.cleanup()


if __name__ == "__main__":
    sys.exit(main())
