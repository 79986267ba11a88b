"""The web view against attackers: DNS rebinding (a Host name the server was not configured
for), framing by a page of another site (clickjacking), an Origin of another scheme, and
malformed WebSocket / API messages. Each is tried twice: with plain HTTP requests as curl
sends them, and from a real headless Chromium on an attack page of another origin
(``--host-resolver-rules`` maps the attacker's name to 127.0.0.1, as a rebinding DNS
server would)."""

from __future__ import annotations

import asyncio
import http.client
import http.server
import json
import shutil
import socket
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest

from test_web_view import CHROME_FLAGS, DEMO, WebServer, _browser_missing, _free_port, \
    wait_js

pytestmark = pytest.mark.slow    # seconds per test: left out of scripts/test -m "not slow"

EVIL = "evil.example"


@pytest.fixture(scope="module")
def demo(module_launch: Any) -> Any:
    return module_launch(DEMO, ["gen", "gain", "rec"])


@pytest.fixture(scope="module")
def web(demo: Any, tmp_path_factory: Any) -> Any:
    server = WebServer(demo.ns_port, tmp_path_factory.mktemp("websec"))
    yield server
    server.stop()


def request(web: WebServer, method: str, path: str, body: bytes | None = None,
            host: str | None = None, **headers: str) -> tuple[int, dict, bytes]:
    """One request to the server at 127.0.0.1 with the Host header given (as curl -H)."""
    conn = http.client.HTTPConnection("127.0.0.1", web.port, timeout=10)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", host or f"127.0.0.1:{web.port}")
        for k, v in headers.items():
            conn.putheader(k.replace("_", "-"), v)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


def post_json(web: WebServer, path: str, obj: Any, host: str | None = None,
              **headers: str) -> tuple[int, dict, bytes]:
    return request(web, "POST", path, json.dumps(obj).encode(), host=host,
                   Content_Type="application/json", **headers)


# -- 1. DNS rebinding: the Host header ---------------------------------------------------

def test_a_rebinding_host_is_refused_everywhere(web: WebServer, demo: Any, it: Any) -> None:
    evil = f"{EVIL}:{web.port}"
    for method, path in (("GET", "/"), ("GET", "/api/system"),
                         ("GET", "/static/app.js")):
        code, _, _ = request(web, method, path, host=evil)
        assert code == 421, (method, path, code)
    # the exact attack of the report: an operation with a matching Origin
    code, _, body = post_json(web, "/api/state", {"component": "rec", "action": "deactivate"},
                              host=evil, Origin=f"http://{evil}")
    assert code == 421 and EVIL in body.decode()
    code, _, _ = post_json(web, "/api/param", {"component": "gen", "set": "default",
                                               "name": "amplitude", "value": "0.5"},
                           host=evil, Origin=f"http://{evil}")
    assert code == 421
    assert it.component_state(demo.ref("rec")) == "ACTIVE"
    # a loopback name on another port (the name is ours, the port is not) is refused too
    code, _, _ = request(web, "GET", "/api/system", host=f"127.0.0.1:{web.port + 1}")
    assert code == 421
    # no Host at all (HTTP/1.0 clients): refused
    code, _, _ = request(web, "GET", "/api/system", host=" ")
    assert code in (400, 421)


def test_the_configured_names_are_served(web: WebServer) -> None:
    for host in (f"127.0.0.1:{web.port}", f"localhost:{web.port}", f"LOCALHOST:{web.port}",
                 f"[::1]:{web.port}"):
        code, _, body = request(web, "GET", "/api/system", host=host)
        assert code == 200, (host, code, body[:200])


def _ws_handshake(port: int, host: str, origin: str | None = None) -> int:
    """The status of a WebSocket upgrade request to /ws with this Host (101: opened)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        lines = [f"GET /ws HTTP/1.1", f"Host: {host}", "Upgrade: websocket",
                 "Connection: Upgrade", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
                 "Sec-WebSocket-Version: 13"]
        if origin:
            lines.append(f"Origin: {origin}")
        s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        head = s.recv(4096).decode(errors="replace")
    return int(head.split()[1])


def test_the_websocket_handshake_checks_host_and_origin(web: WebServer) -> None:
    good = f"127.0.0.1:{web.port}"
    assert _ws_handshake(web.port, good, f"http://{good}") == 101
    assert _ws_handshake(web.port, good) == 101                  # a script, no browser
    evil = f"{EVIL}:{web.port}"
    assert _ws_handshake(web.port, evil, f"http://{evil}") == 421
    assert _ws_handshake(web.port, good, "http://evil.example") == 403
    assert _ws_handshake(web.port, good, f"https://{good}") == 403


def test_allowed_hosts_names_more_names(demo: Any, tmp_path: Path) -> None:
    """A name given with --allow-host (rtcf.web.allowed_hosts) is served; others still not."""
    server = WebServer(demo.ns_port, tmp_path, "--allow-host", "robot.local",
                       "--allow-host", "tunnel.example:9999")
    try:
        assert request(server, "GET", "/api/system",
                       host=f"robot.local:{server.port}")[0] == 200
        assert request(server, "GET", "/api/system", host="tunnel.example:9999")[0] == 200
        assert request(server, "GET", "/api/system",
                       host=f"tunnel.example:{server.port}")[0] == 421
        assert request(server, "GET", "/api/system",
                       host=f"{EVIL}:{server.port}")[0] == 421
        assert "robot.local" in server.log()
    finally:
        server.stop()


def test_allow_host_is_checked_before_anything_starts(naming: Any) -> None:
    import subprocess
    import sys
    cp = subprocess.run([sys.executable, "-m", "rtcf.web", "-n", f"localhost:{naming.port}",
                         "--port", "0", "--allow-host", "bad host/x"],
                        capture_output=True, text=True, timeout=30)
    assert cp.returncode == 2
    assert cp.stderr.strip().splitlines()[-1].startswith("rtcf-web: --allow-host: ")
    assert "Traceback" not in cp.stderr


def test_allowed_hosts_from_rtc_conf() -> None:
    from rtcf.errors import ConfigError
    from rtcf.web.child import web_settings, allowed_hosts
    conf = {"rtcf.web.allowed_hosts": "robot.local, nao.example:9000"}
    assert allowed_hosts(conf) == ["robot.local", "nao.example:9000"]
    assert allowed_hosts({}) == []
    with pytest.raises(ConfigError, match="rtcf.web.allowed_hosts"):
        allowed_hosts({"rtcf.web.allowed_hosts": "a b"})
    assert web_settings({})[0] == "127.0.0.1"


def test_host_rules() -> None:
    """The rules in one place: which Host headers a server at address:port accepts."""
    from rtcf.web.server import HostPolicy
    local = HostPolicy("127.0.0.1", 8780)
    assert local.accepts("127.0.0.1:8780") and local.accepts("localhost:8780")
    assert local.accepts("[::1]:8780") and local.accepts("127.0.0.1:8780")
    assert not local.accepts("127.0.0.1") and not local.accepts("evil.example:8780")
    assert not local.accepts("localhost:8781") and not local.accepts("")
    assert not local.accepts("localhost.evil.example:8780")
    assert not local.accepts("192.168.1.5:8780")     # not an address this server has
    lan = HostPolicy("192.168.1.5", 80, ["robot.local"])
    assert lan.accepts("192.168.1.5") and lan.accepts("192.168.1.5:80")
    assert lan.accepts("robot.local") and not lan.accepts("robot.evil.example")
    wild = HostPolicy("0.0.0.0", 8780)
    assert wild.accepts("10.0.0.7:8780")         # an address literal reaches only itself
    assert not wild.accepts("robot.local:8780")  # a name must be listed
    assert HostPolicy("0.0.0.0", 8780, ["robot.local"]).accepts("robot.local:8780")


# -- 2. framing ------------------------------------------------------------------------------

def test_every_answer_forbids_framing(web: WebServer) -> None:
    for path in ("/", "/api/system", "/static/app.js", "/nosuch"):
        _, headers, _ = request(web, "GET", path)
        assert headers.get("x-frame-options") == "DENY", path
        csp = headers.get("content-security-policy", "")
        assert "frame-ancestors 'none'" in csp, path
    _, headers, _ = request(web, "GET", "/")
    csp = {d.split()[0]: d.split()[1:] for d in
           headers["content-security-policy"].split(";") if d.strip()}
    assert csp["script-src"] == ["'self'"]        # no inline script, no eval
    assert csp["default-src"] == ["'none'"]
    assert headers.get("x-content-type-options") == "nosniff"


# -- 3. Origin with another scheme ------------------------------------------------------

def test_origin_of_another_scheme_is_refused(web: WebServer, demo: Any, it: Any) -> None:
    host = f"127.0.0.1:{web.port}"
    code, _, _ = post_json(web, "/api/state", {"component": "rec", "action": "deactivate"},
                           Origin=f"https://{host}")
    assert code == 403
    code, _, _ = post_json(web, "/api/state", {"component": "rec", "action": "deactivate"},
                           Origin="null")
    assert code == 403
    assert it.component_state(demo.ref("rec")) == "ACTIVE"
    # the page's own origin still passes (rec is active already: the EC's refusal, not ours)
    code, _, _ = post_json(web, "/api/state", {"component": "rec", "action": "activate"},
                           Origin=f"http://{host}")
    assert code == 400


# -- 4. malformed messages -----------------------------------------------------------------

def test_bad_api_bodies_get_a_clean_error(web: WebServer) -> None:
    deep = b"[" * 100_000
    for path in ("/api/state", "/api/param", "/api/configset", "/api/controllers/x/switch"):
        for body in (deep, b"[1, 2]", b"\"text\"", b"{", b"{\"start\": 5}"):
            code, _, text = request(web, "POST", path, body,
                                    Content_Type="application/json")
            assert code == 400, (path, body[:20], code, text[:300])
            assert b"Traceback" not in text
    assert "Traceback" not in web.log() and "RecursionError" not in web.log()


def test_bad_websocket_messages_get_an_error_and_the_socket_stays(web: WebServer) -> None:
    import aiohttp

    async def talk() -> list[dict]:
        answers = []
        async with aiohttp.ClientSession() as s:
            async with s.ws_connect(f"ws://127.0.0.1:{web.port}/ws") as ws:
                for text in ("[1, 2]", "[" * 60_000, "5", "{\"op\": 3}", "not json",
                             "{\"op\": \"plot\", \"component\": [], \"port\": {}}",
                             "{\"op\": \"unplot\"}"):
                    await ws.send_str(text)
                    while True:
                        msg = await ws.receive(timeout=10)
                        assert msg.type == aiohttp.WSMsgType.TEXT, (text[:20], msg)
                        d = json.loads(msg.data)
                        if d["type"] == "error":
                            answers.append(d)
                            break
        return answers
    answers = asyncio.run(talk())
    assert len(answers) == 7
    assert all(a["message"] and "Traceback" not in a["message"] for a in answers)
    assert "nested" in answers[1]["message"]
    assert "Traceback" not in web.log()


# -- the same from a real browser -----------------------------------------------------------

class AttackSite:
    """The attacker's web server: one page (``html``) at http://evil.example:PORT/."""

    def __init__(self, html: str):
        body = html.encode()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def evil_browser() -> Any:
    """Chromium that resolves evil.example to 127.0.0.1 (what a rebinding DNS answers) and
    records every Content-Security-Policy violation of the pages it opens."""
    missing = _browser_missing()
    if missing:
        pytest.skip(missing)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    profile = tempfile.mkdtemp(prefix="rtcf-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium")
    for flag in CHROME_FLAGS + [f"--user-data-dir={profile}",
                                f"--host-resolver-rules=MAP {EVIL} 127.0.0.1"]:
        opts.add_argument(flag)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=opts)
    driver.set_script_timeout(10)
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": (
        "window.__csp = []; document.addEventListener('securitypolicyviolation', "
        "e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));")})
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def test_browser_a_framing_page_gets_no_view(evil_browser: Any, web: WebServer) -> None:
    site = AttackSite(f"<!doctype html><title>win a prize</title>"
                      f"<iframe id='f' width=1200 height=900 "
                      f"src='http://127.0.0.1:{web.port}/'></iframe>")
    try:
        evil_browser.get(f"http://{EVIL}:{site.port}/")
        wait_js(evil_browser, "return document.readyState === 'complete'", "the attack page")
        frame = evil_browser.find_element("css selector", "#f")
        evil_browser.switch_to.frame(frame)
        try:
            loaded = evil_browser.execute_script(
                "return !!(window.rtcf || document.getElementById('graph'))")
        finally:
            evil_browser.switch_to.default_content()
        assert not loaded, "the view was rendered inside another site's frame"
    finally:
        site.close()


def test_browser_a_rebinding_page_cannot_act(evil_browser: Any, web: WebServer, demo: Any,
                                             it: Any) -> None:
    """The attacker's page is at http://evil.example:PORT (the view's port); the name now
    resolves to 127.0.0.1, so the browser sends its same-origin requests to the view."""
    evil_browser.get(f"http://{EVIL}:{web.port}/")
    assert not evil_browser.execute_script("return !!window.rtcf"), \
        "the view answered a page at evil.example"
    result = evil_browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        const out = {};
        fetch('/api/state', {method: 'POST', headers: {'Content-Type': 'application/json'},
              body: JSON.stringify({component: 'rec', action: 'deactivate'})})
          .then(r => { out.post = r.status; return fetch('/api/system'); })
          .then(r => { out.get = r.status; })
          .catch(e => { out.error = String(e); })
          .finally(() => {
            const ws = new WebSocket(`ws://${location.host}/ws`);
            ws.onopen = () => { out.ws = 'open'; ws.close(); done(out); };
            ws.onerror = () => { out.ws = 'refused'; done(out); };
          });
    """)
    assert result.get("post") == 421 and result.get("get") == 421, result
    assert result.get("ws") == "refused", result
    assert it.component_state(demo.ref("rec")) == "ACTIVE"


def test_browser_the_page_runs_under_its_policy(evil_browser: Any, web: WebServer) -> None:
    """The page's own scripts (the vendored libraries included) work under the CSP: the
    graph is drawn, a plot fills, and no violation is reported."""
    evil_browser.get(web.url)
    wait_js(evil_browser, "return window.rtcf && rtcf.cy && rtcf.cy.nodes().length === 4",
            "the graph on the page")
    evil_browser.execute_script(
        "document.querySelector(\"#components tr[data-name='gen']\").click()")
    wait_js(evil_browser, "const b = document.querySelector(\"#details button.plot\");"
            " if (b) b.click(); return !!b", "the plot button")
    wait_js(evil_browser, "return Object.values(rtcf.plots).some(p => p.count > 5)",
            "points in the plot", 15.0)
    assert evil_browser.execute_script("return window.__csp") == []


# -- the Foxglove WebSocket bridge ---------------------------------------------------------

@pytest.fixture(scope="module")
def fox(demo: Any, tmp_path_factory: Any) -> Any:
    port = _free_port()
    server = WebServer(demo.ns_port, tmp_path_factory.mktemp("webfox"), "--foxglove-port",
                       str(port))
    server.fox_port = port
    yield server
    server.stop()


def _fox_handshake(port: int, host: str, origin: str | None = None,
                   protocol: str = "foxglove.sdk.v1") -> tuple[int, str]:
    """(status, chosen subprotocol) of a Foxglove WebSocket handshake."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        lines = ["GET / HTTP/1.1", f"Host: {host}", "Upgrade: websocket",
                 "Connection: Upgrade", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
                 "Sec-WebSocket-Version: 13", f"Sec-WebSocket-Protocol: {protocol}"]
        if origin:
            lines.append(f"Origin: {origin}")
        s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        head = s.recv(4096).decode(errors="replace")
    chosen = next((line.split(":", 1)[1].strip() for line in head.split("\r\n")
                   if line.lower().startswith("sec-websocket-protocol:")), "")
    return int(head.split()[1]), chosen


def test_foxglove_bridge_checks_host_and_origin(fox: WebServer) -> None:
    port = fox.fox_port
    good = f"127.0.0.1:{port}"
    assert _fox_handshake(port, good) == (101, "foxglove.sdk.v1")
    assert _fox_handshake(port, f"localhost:{port}", f"http://localhost:{port}")[0] == 101
    assert _fox_handshake(port, f"{EVIL}:{port}")[0] == 421
    assert _fox_handshake(port, good, "http://evil.example")[0] == 403
    assert _fox_handshake(port, good, "https://app.foxglove.dev")[0] == 403
    assert _fox_handshake(port, good, "null")[0] == 403        # a sandboxed frame of a site
    assert _fox_handshake(port, good, "file://")[0] == 101     # a desktop app's own page
    assert _fox_handshake(port, good, protocol="other.v1")[0] == 400   # not Foxglove


def test_foxglove_bridge_speaks_the_older_subprotocol(fox: WebServer) -> None:
    """foxglove.websocket.v1 (the specification's, older Lichtblick) is accepted and gets
    the same serverInfo and channels."""
    import aiohttp

    async def first() -> tuple[str | None, list[dict]]:
        async with aiohttp.ClientSession() as s:
            async with s.ws_connect(f"ws://127.0.0.1:{fox.fox_port}/",
                                    protocols=["foxglove.websocket.v1"]) as ws:
                out = []
                while len(out) < 2:
                    msg = await ws.receive(timeout=10)
                    out.append(json.loads(msg.data))
                await ws.send_str("[1, 2]")
                out.append(json.loads((await ws.receive(timeout=10)).data))
                return ws.protocol, out
    protocol, msgs = asyncio.run(first())
    assert protocol == "foxglove.websocket.v1"
    assert msgs[0]["op"] == "serverInfo" and msgs[1]["op"] == "advertise"
    assert msgs[2]["op"] == "status" and msgs[2]["level"] == 2
    assert "Traceback" not in fox.log()


def test_browser_another_site_cannot_read_the_foxglove_bridge(evil_browser: Any,
                                                             fox: WebServer) -> None:
    """WebSockets are not bound by the same-origin policy: a page of any site may try
    ws://127.0.0.1:PORT. The bridge must refuse it (its Origin is not the bridge's)."""
    site = AttackSite("<!doctype html><title>nothing here</title>")
    try:
        evil_browser.get(f"http://{EVIL}:{site.port}/")
        result = evil_browser.execute_async_script("""
            const done = arguments[arguments.length - 1];
            const ws = new WebSocket(`ws://127.0.0.1:${arguments[0]}/`, ['foxglove.sdk.v1']);
            ws.onmessage = (m) => { ws.close(); done('read: ' + String(m.data).slice(0, 60)); };
            ws.onerror = () => done('refused');
        """, fox.fox_port)
        assert result == "refused"
    finally:
        site.close()
