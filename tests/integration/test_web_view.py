"""The live web view in a real headless browser (Debian's chromium + chromium-driver through
selenium) against systems started here: the graph, live states after rtshell's rtdeact /
rtact, a live plot, parameters edited on the page (and a refusal shown), the controllers of
a controller manager; and the server's own behaviour (the manager's web child ends with the
manager, kill -9 included; bad addresses refused; EC timing in the EC profile).

Skipped with the reason when chromium, chromedriver or selenium is missing (scripts/test
installs them where it can)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow    # seconds per test: left out of scripts/test -m "not slow"

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "compositions" / "demo.yaml"
CONTROLLERS = ROOT / "compositions" / "nao_controllers.yaml"


def one_component(type_name: str, module: str, name: str) -> str:
    """A composition of one component in a 100 Hz EC, activated."""
    return (f"name: {name}\ncomponents:\n  - {{type: {type_name}, module: {module}, "
            f"name: {name}}}\nexecution_contexts:\n  - {{name: main, kind: periodic, "
            f"rate: 100, members: [{name}]}}\nactivate: all\n")


# a system of its own (names of its own: it is killed with -9 and leaves them behind)
LONE = one_component("SineGenerator", "examples", "lone")
CHROME_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--window-size=1400,1050"]


def _browser_missing() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e .[test])"
    for exe in ("chromium", "chromedriver"):
        if shutil.which(exe) is None:
            return (f"{exe} not found: install Debian's chromium and chromium-driver "
                    f"(scripts/test does it as root)")
    return None


def _free_port() -> int:
    from rtcf.corba.naming import free_port
    return free_port()


def _get_json(url: str, timeout: float = 30.0) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return json.loads(r.read())


class WebServer:
    """``rtcf-web`` in a subprocess against the test's naming service."""

    def __init__(self, ns_port: int, log_dir: Path, *extra: str):
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.log_path = log_dir / f"rtcf-web-{self.port}.log"
        exe = Path(sys.executable).parent / "rtcf-web"
        cmd = [str(exe) if exe.exists() else sys.executable,
               *([] if exe.exists() else ["-m", "rtcf.web"]),
               "-n", f"localhost:{ns_port}", "--port", str(self.port), *extra]
        with open(self.log_path, "wb") as out:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 120            # a loaded machine starts slowly
        while True:
            try:
                _get_json(self.url + "api/system", 5.0)
                return
            except (urllib.error.URLError, ConnectionError, OSError):
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    pytest.fail(f"rtcf-web did not start:\n{self.log()}")
                time.sleep(0.2)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:]

    def system(self) -> Any:
        return _get_json(self.url + "api/system")

    def post(self, path: str, body: dict) -> tuple[int, dict]:
        """POST ``body`` as JSON to the API: (the HTTP status, the JSON answer)."""
        req = urllib.request.Request(self.url + path, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)


@pytest.fixture(scope="module")
def browser() -> Any:
    missing = _browser_missing()
    if missing:
        pytest.skip(missing)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    profile = tempfile.mkdtemp(prefix="rtcf-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium")
    for flag in CHROME_FLAGS + [f"--user-data-dir={profile}"]:
        opts.add_argument(flag)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=opts)
    # a script that polls the page gets a minute: on a loaded machine the page's thread is
    # busy drawing live plots for seconds at a time
    driver.set_script_timeout(60)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def demo(module_launch: Any) -> Any:
    return module_launch(DEMO, ["gen", "gain", "rec"])


@pytest.fixture(scope="module")
def web(demo: Any, tmp_path_factory: Any) -> Any:
    server = WebServer(demo.ns_port, tmp_path_factory.mktemp("web"))
    yield server
    server.stop()


def js(driver: Any, script: str, *args: Any) -> Any:
    return driver.execute_script(script, *args)


def wait_js(driver: Any, script: str, what: str, timeout: float = 10.0, *args: Any) -> Any:
    """Poll ``script`` until it returns something truthy. ``timeout`` is what it takes on a
    quiet machine; the wait fails after a minute at the least (a passing test never waits
    that out)."""
    timeout = max(timeout, 60.0)
    deadline = time.monotonic() + timeout
    while True:
        value = js(driver, script, *args)
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what} "
                                 f"(last {value!r})")
        time.sleep(0.1)


def click(driver: Any, css: str) -> None:
    """Click in one step (the details panel is redrawn as states change, so an element
    found first and clicked later may have been replaced)."""
    wait_js(driver, "const e = document.querySelector(arguments[0]); if (e) e.click();"
            " return !!e", f"{css} to click", 5.0, css)


def type_into(driver: Any, css: str, text: str) -> None:
    """Replace the text of an input and press Enter (found afresh if it was redrawn)."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.keys import Keys
    for _ in range(5):
        try:
            box = driver.find_element("css selector", css)
            box.clear()
            box.send_keys(text, Keys.ENTER)
            return
        except StaleElementReferenceException:
            time.sleep(0.1)
    raise AssertionError(f"{css} kept being redrawn")


def open_page(driver: Any, web: WebServer) -> None:
    driver.get(web.url)
    wait_js(driver, "return window.rtcf && rtcf.system && rtcf.cy && "
            "rtcf.cy.nodes().length > 0", "the system on the page")


def row_state(driver: Any, name: str) -> str:
    return js(driver, "const r = document.querySelector(`#components tr[data-name='${arguments[0]}'] .state`);"
              " return r ? r.textContent : null;", name)


def select_component(driver: Any, name: str) -> None:
    click(driver, f"#components tr[data-name='{name}']")
    wait_js(driver, "return document.getElementById('details-title').textContent === arguments[0]",
            f"the details of {name}", 5.0, name)


# -- the page --------------------------------------------------------------------------------

def test_graph_shows_every_component_and_connection(browser: Any, web: WebServer, demo: Any,
                                                    it: Any) -> None:
    open_page(browser, web)
    labels = js(browser, "return rtcf.cy.nodes(\"[kind='component']\").map(n => n.data('label'))")
    names = sorted(label.split("\n")[0] for label in labels)
    assert names == ["gain", "gen", "rec"]
    # every connection the components report over CORBA is an edge between the right nodes
    expected = set()
    for inst in ("gen", "gain"):
        for cp in it.connector_profiles(it.port_ref(demo.ref(inst), "out")):
            expected.add(cp.connector_id)
    assert len(expected) == 2
    edges = js(browser, "return rtcf.cy.edges(\"[kind='data']\").map(e => "
               "[e.id().slice(2), e.source().data('label').split('\\n')[0], "
               "e.target().data('label').split('\\n')[0], e.data('label')])")
    assert {e[0] for e in edges} == expected
    assert sorted((e[1], e[2], e[3]) for e in edges) == [
        ("gain", "rec", "out → in"), ("gen", "gain", "out → in")]
    # the EC, its rate and its members in order
    ec = js(browser, "return rtcf.cy.nodes(\"[kind='ec']\").map(n => [n.data('label'), "
            "n.outgoers('edge').map(e => [e.target().data('label').split('\\n')[0], e.data('label')])])")
    assert len(ec) == 1 and ec[0][0] == "main 100 Hz"
    assert sorted(ec[0][1]) == [["gain", "2"], ["gen", "1"], ["rec", "3"]]
    # the EC table shows live timing read from the EC's profile
    wait_js(browser, "const c = document.querySelector(\"#ecs tr[data-ec='main'] td.rate\");"
            " return c && parseFloat(c.textContent) > 50", "an achieved rate near 100 Hz")


def test_state_change_by_rtshell_appears(browser: Any, web: WebServer, demo: Any,
                                         it: Any) -> None:
    open_page(browser, web)
    wait_js(browser, "return document.querySelector(\"#components tr[data-name='gain'] .state\")"
            "?.textContent === 'ACTIVE'", "gain ACTIVE on the page")
    it.rtsh("rtdeact", demo.path("gain"), check=True)
    wait_js(browser, "return document.querySelector(\"#components tr[data-name='gain'] .state\")"
            "?.textContent === 'INACTIVE'", "gain INACTIVE on the page after rtdeact")
    node_state = js(browser, "return rtcf.cy.nodes().filter(n => n.data('label')"
                    ".startsWith('gain\\n')).data('state')")
    assert node_state == "INACTIVE"
    it.rtsh("rtact", demo.path("gain"), check=True)
    wait_js(browser, "return document.querySelector(\"#components tr[data-name='gain'] .state\")"
            "?.textContent === 'ACTIVE'", "gain ACTIVE again after rtact")


def test_page_buttons_change_the_state(browser: Any, web: WebServer, demo: Any,
                                       it: Any) -> None:
    open_page(browser, web)
    select_component(browser, "rec")
    click(browser, "#details button.act.deactivate")
    it.wait_state(demo.ref("rec"), "INACTIVE")
    click(browser, "#details button.act.activate")
    it.wait_state(demo.ref("rec"), "ACTIVE")


def test_live_plot_advances(browser: Any, web: WebServer) -> None:
    open_page(browser, web)
    select_component(browser, "gen")
    click(browser, "#details button.plot[data-port='out']")
    key = wait_js(browser, "return Object.keys(rtcf.plots).find(k => rtcf.plots[k].count > 5)",
                  "the first points of gen.out")
    first = js(browser, "const p = rtcf.plots[arguments[0]]; return [p.count, p.lastT, "
               "p.labels]", key)
    assert first[2] == ["data[0]", "data[1]", "data[2]"]      # three channels
    # it goes on: ten more points, later in time
    later = wait_js(browser, "const p = rtcf.plots[arguments[0]]; return p.count > "
                    "arguments[1] + 10 && p.lastT > arguments[2] && [p.count, p.lastT, "
                    "p.data[1].slice(-1)[0]]", "ten more points of gen.out", 10.0, key,
                    first[0], first[1])
    assert -1.0 <= later[2] <= 1.0                           # amplitude 1
    card = browser.find_element("css selector", ".plot-card canvas")
    assert card.size["width"] > 200
    click(browser, ".plot-card button.close")
    wait_js(browser, "return Object.keys(rtcf.plots).length === 0", "the plot closed")


def _conf_value(ref: Any, name: str) -> str:
    from rtcf.corba.nv import from_nvlist
    cs = ref.get_configuration().get_active_configuration_set()
    return from_nvlist(cs.configuration_data)[name]


def test_parameter_edited_on_the_page_reaches_the_component(browser: Any, web: WebServer,
                                                            demo: Any) -> None:
    open_page(browser, web)
    select_component(browser, "gen")
    type_into(browser, "#details input[data-param='amplitude']", "0.25")
    wait_js(browser, "return document.getElementById('message').textContent"
            ".includes('amplitude = 0.25')", "the accepted change shown")
    deadline = time.monotonic() + 60
    while _conf_value(demo.ref("gen"), "amplitude") != "0.25":
        assert time.monotonic() < deadline, "amplitude 0.25 did not reach gen"
        time.sleep(0.1)
    # a bad value: refused by the component's own validation, shown, nothing changed
    type_into(browser, "#details input[data-param='amplitude']", "inf")
    text = wait_js(browser, "const m = document.getElementById('message');"
                   " return m.classList.contains('error') && m.textContent",
                   "the refusal shown")
    assert "amplitude" in text and "inf" in text
    assert "refused" in browser.find_element(
        "css selector", "#details input[data-param='amplitude']").get_attribute("class")
    assert _conf_value(demo.ref("gen"), "amplitude") == "0.25"


def test_screenshot(browser: Any, web: WebServer, tmp_path: Path) -> None:
    """A picture of the page with a plot (for a person to look at: kept in tmp_path)."""
    open_page(browser, web)
    select_component(browser, "gain")
    click(browser, "#details button.plot[data-port='out']")
    wait_js(browser, "return Object.values(rtcf.plots).some(p => p.count > 50)", "a plot")
    path = tmp_path / "web_view.png"
    assert browser.save_screenshot(str(path))
    assert path.stat().st_size > 20_000


def test_controllers_listed_and_switched(browser: Any, launch: Any, tmp_path: Path) -> None:
    mp = launch(CONTROLLERS, ["DCM0", "ControllerManager0"])
    server = WebServer(mp.ns_port, tmp_path)
    try:
        from rtcf_components.controller_manager.proxy import ControllerManagerProxy
        proxy = ControllerManagerProxy("ControllerManager0",
                                       nameserver=f"localhost:{mp.ns_port}")
        names = sorted(c.name for c in proxy.service.listControllers())
        assert names
        open_page(browser, server)
        select_component(browser, "ControllerManager0")
        rows = wait_js(browser, "const r = [...document.querySelectorAll("
                       "'#details table.controllers tr[data-controller]')];"
                       " return r.length && r.map(x => x.dataset.controller)",
                       "the controllers on the page")
        assert sorted(rows) == names
        # updates counted by the manager are shown and advance
        first = js(browser, "return [...document.querySelectorAll('#details table.controllers"
                   " tr[data-controller]')].map(r => r.children[3].textContent)")
        running = [c.name for c in proxy.service.listControllers() if c.state == "running"]
        assert running, "the composition starts some controllers"
        target = running[0]
        click(browser, f"#details tr[data-controller='{target}'] button")
        deadline = time.monotonic() + 60
        while {c.name: c.state for c in proxy.service.listControllers()}[target] == "running":
            assert time.monotonic() < deadline, f"{target} was not stopped from the page"
            time.sleep(0.1)
        assert first
        # a switch the manager refuses comes back with its reason
        cid = js(browser, "return rtcf.selected")
        req = urllib.request.Request(
            f"{server.url}api/controllers/{cid}/switch",
            data=json.dumps({"start": ["nosuch"], "stop": []}).encode(),
            headers={"Content-Type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(req, timeout=60)
        assert e.value.code == 400
        assert "no controller named 'nosuch'" in json.loads(e.value.read())["error"]
        # the panel is the controller manager package's (an rtcf.web_panels entry point):
        # the page loads its script, and only the manager's entry names it
        with urllib.request.urlopen(f"{server.url}panels/controllers.js", timeout=5) as r:
            assert r.headers["Content-Type"].startswith("application/javascript")
            assert b'rtcf.panel("controllers"' in r.read()
        with urllib.request.urlopen(f"{server.url}api/system", timeout=5) as r:
            system = json.loads(r.read())
        assert {"name": "controllers", "title": "Controllers",
                "script": "/panels/controllers.js"} in system["panels"]
        named = {c["name"]: c["panels"] for c in system["components"]}
        assert named["ControllerManager0"] == ["controllers"] and named["DCM0"] == []
    finally:
        server.stop()


# -- the server without a browser ---------------------------------------------------------

def test_ec_profile_carries_live_timing(demo: Any, it: Any) -> None:
    from rtcf.corba.nv import from_nvlist
    ec = it.component_ec(demo.ref("gen"))._narrow(it.stubs("RTC").ExecutionContextService)
    props = from_nvlist(ec.get_profile().properties)
    assert int(props["stats.cycles"]) > 0
    assert float(props["stats.rate"]) > 0          # live (how near 100 Hz: load-dependent)
    for key in ("stats.overruns", "stats.lateness_p99_us", "stats.lateness_max_us"):
        assert float(props[key]) >= 0
    out = it.rtsh("rtcat", "-ll", demo.path("gen"), check=True).stdout
    assert "stats.lateness_p99_us" in out and "stats.overruns" in out


def test_manager_web_child_ends_with_the_manager(launch: Any) -> None:
    port = _free_port()
    mp = launch(LONE, ["lone"], "rtcf.web.enable:YES", f"rtcf.web.port:{port}")
    url = f"http://127.0.0.1:{port}/api/system"
    deadline = time.monotonic() + 120
    while True:
        try:
            names = sorted(c["name"] for c in _get_json(url, 1.0)["components"])
            if "lone" in names:
                break
        except (urllib.error.URLError, OSError):
            pass
        assert time.monotonic() < deadline, f"no web view at {url}:\n{mp.log()}"
        time.sleep(0.2)
    m = re.search(r"web view at \S+ \(a separate process, pid (\d+)\)", mp.log())
    assert m, mp.log()
    child = int(m.group(1))
    os.kill(mp.pid, signal.SIGKILL)              # the manager alone, as kill -9 would
    mp.proc.wait(5)
    deadline = time.monotonic() + 60
    while _alive(child):
        assert time.monotonic() < deadline, "the web child outlived its manager (kill -9)"
        time.sleep(0.1)
    mp.stop()


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_rtcf_web_refuses_a_busy_port(naming: Any) -> None:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        cp = subprocess.run([sys.executable, "-m", "rtcf.web", "-n",
                             f"localhost:{naming.port}", "--port", str(port)],
                            capture_output=True, text=True, timeout=120)
    assert cp.returncode == 2
    assert cp.stderr.strip().splitlines()[-1].startswith(
        f"rtcf-web: cannot listen on 127.0.0.1:{port}")


def test_api_refuses_unknown_component_and_action(web: WebServer) -> None:
    post = web.post
    code, body = post("api/state", {"component": "nosuch", "action": "activate"})
    assert code == 400 and "no component 'nosuch'" in body["error"]
    code, body = post("api/state", {"component": "gen", "action": "explode"})
    assert code == 400 and "activate, deactivate, reset, got 'explode'" in body["error"]
    code, body = post("api/param", {"component": "gen", "set": "default", "name": "nosuch",
                                    "value": "1"})
    assert code == 400 and "nosuch" in body["error"]


# -- the Foxglove WebSocket protocol --------------------------------------------------------

def test_foxglove_client_gets_channels_and_live_messages(demo: Any, it: Any,
                                                         tmp_path: Path) -> None:
    import asyncio
    import struct

    import aiohttp
    fox_port = _free_port()
    server = WebServer(demo.ns_port, tmp_path, "--foxglove-port", str(fox_port))

    async def client() -> tuple[dict, list]:
        got: list = []
        channels: dict = {}
        async with aiohttp.ClientSession() as s:
            async with s.ws_connect(f"ws://127.0.0.1:{fox_port}/",
                                    protocols=["foxglove.sdk.v1"]) as ws:
                deadline = time.monotonic() + 60
                while len(got) < 20 and time.monotonic() < deadline:
                    msg = await ws.receive(timeout=60)
                    if msg.type == aiohttp.WSMsgType.TEXT:
                        d = json.loads(msg.data)
                        if d["op"] == "advertise":
                            for c in d["channels"]:
                                channels[c["topic"]] = c
                            if "/gen/out" in channels and not got:
                                await ws.send_str(json.dumps({"op": "subscribe",
                                    "subscriptions": [{"id": 7,
                                                       "channelId": channels["/gen/out"]["id"]}]}))
                    elif msg.type == aiohttp.WSMsgType.BINARY and msg.data[0] == 1:
                        sid, t_ns = struct.unpack_from("<IQ", msg.data, 1)
                        got.append((sid, t_ns, json.loads(msg.data[13:])))
        return channels, got
    try:
        channels, got = asyncio.run(client())
        assert {"/gen/out", "/gain/out"} <= set(channels)
        ch = channels["/gen/out"]
        assert ch["encoding"] == "json" and ch["schemaName"] == "RTC::TimedDoubleSeq"
        assert json.loads(ch["schema"])["properties"]["data"]["type"] == "array"
        assert len(got) >= 20 and all(sid == 7 for sid, _, _ in got)
        times = [t for _, t, _ in got]
        assert times == sorted(times) and times[-1] > times[0]
        for _, t_ns, m in got:
            assert len(m["data"]) == 3                    # the generator's three channels
            assert t_ns == m["tm"]["sec"] * 1_000_000_000 + m["tm"]["nsec"]
        # the client went away: the tap is disconnected from gen.out again
        out = it.port_ref(demo.ref("gen"), "out")
        it.wait_until(lambda: len(it.connector_profiles(out)) == 1, 10,
                      what="the Foxglove tap disconnected")
    finally:
        server.stop()


def test_requests_from_another_site_are_refused(web: WebServer, demo: Any, it: Any) -> None:
    """A page elsewhere must not drive the system through the user's browser."""
    def post(body: bytes, headers: dict) -> int:
        req = urllib.request.Request(web.url + "api/state", data=body, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return r.status
        except urllib.error.HTTPError as e:
            return e.code
    body = json.dumps({"component": "rec", "action": "deactivate"}).encode()
    assert post(body, {"Content-Type": "application/json",
                       "Origin": "http://evil.example"}) == 403
    assert post(body, {"Content-Type": "text/plain"}) == 415
    assert it.component_state(demo.ref("rec")) == "ACTIVE"
    host = web.url.split("://", 1)[1].rstrip("/")
    # the page's own origin passes (rec is active already: the EC's refusal, not ours)
    assert post(json.dumps({"component": "rec", "action": "activate"}).encode(),
                {"Content-Type": "application/json", "Origin": f"http://{host}"}) == 400


FAULTY = one_component("Faulty", "faulty", "webfaulty")


def test_error_shown_and_reset_from_the_page(browser: Any, launch: Any, tmp_path: Path,
                                             it: Any) -> None:
    """A parameter set on the page drives a component into Error: red on the page; the
    page's reset brings it back to Inactive."""
    mp = launch(FAULTY, "webfaulty")
    server = WebServer(mp.ns_port, tmp_path)
    try:
        open_page(browser, server)
        select_component(browser, "webfaulty")
        type_into(browser, "#details input[data-param='fail']", "YES")
        state_js = ("return document.querySelector(\"#components tr[data-name='webfaulty']"
                    " .state\")?.textContent === arguments[0]")
        wait_js(browser, state_js, "ERROR on the page", 10.0, "ERROR")
        colour = js(browser, "return rtcf.cy.nodes().filter(n => n.data('label')"
                    ".startsWith('webfaulty\\n')).style('background-color')")
        assert colour == "rgb(220,38,38)"
        click(browser, "#details button.act.reset")
        it.wait_state(mp.ref("webfaulty"), "INACTIVE")
        wait_js(browser, state_js, "INACTIVE on the page after reset", 10.0, "INACTIVE")
    finally:
        server.stop()
