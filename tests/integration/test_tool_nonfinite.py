"""Values that are not finite (NaN, +inf, -inf) through every observing tool: the page's live
plots in a real browser (one such port must not stop the other plots), JSON recordings (the
three kept apart, read back by Python and by the browser's own JSON.parse, replayed as they
were), rtcf-print --json, the Foxglove bridge, and rtcf-inject of the JSON numbers 1e9, NaN,
Infinity and -Infinity."""

from __future__ import annotations

import asyncio
import json
import math
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest

from test_tool_commands import connectors, run, tool, wait_connected
from test_web_view import WebServer, _free_port, browser, open_page, select_component, \
    wait_js  # noqa: F401  (browser: the fixture)

pytestmark = pytest.mark.slow    # seconds per test: left out of scripts/test -m "not slow"

COMPOSITION = """
name: nonfinite
components:
  - {type: NonFiniteWriter, module: nonfinite, name: nf}
  - {type: Gain, module: examples, name: nfrelay, params: {gain: 1.0}}
execution_contexts:
  - {name: main, kind: periodic, rate: 50, members: [nf, nfrelay]}
activate: all
"""


@pytest.fixture(scope="module")
def system(module_launch: Any) -> Any:
    return module_launch(COMPOSITION, ["nf", "nfrelay"])


@pytest.fixture(scope="module")
def ns(system: Any) -> str:
    return f"localhost:{system.ns_port}"


def _is(values: list, want: list) -> bool:
    """Equal, NaN equal to NaN."""
    return len(values) == len(want) and all(
        (isinstance(a, float) and math.isnan(a) and isinstance(b, float) and math.isnan(b))
        or a == b for a, b in zip(values, want))


# -- 6. JSON recordings -----------------------------------------------------------------------

def test_json_recording_keeps_nan_and_the_infinities_apart(ns: str, tmp_path: Path,
                                                           browser: Any) -> None:
    from mcap.reader import make_reader
    from rtcf.datatypes import TimedDoubleSeq
    from rtcf.tools.mcapio import decode_message
    out = tmp_path / "nf.mcap"
    cp = run("rtcf-record", "-n", ns, "-o", out, "--duration", "1.5", "nf:bad")
    assert cp.returncode == 0, cp.stderr
    with open(out, "rb") as f:
        reader = make_reader(f)
        msgs = [(s, c, m) for s, c, m in reader.iter_messages()]
    assert msgs
    schema = json.loads(msgs[0][0].data)
    texts = [m.data.decode() for _, _, m in msgs]
    for text in texts:
        body = json.loads(text)                 # Python's reader
        assert body["data"][0] is None          # NaN
        assert body["data"][1] == math.inf and body["data"][2] == -math.inf
        assert isinstance(body["data"][3], float) and body["data"][3] >= 1
        # rtcf's own reader (rtcf-play) gives the sample back exactly
        s = decode_message("json", TimedDoubleSeq, text.encode())
        assert math.isnan(s.data[0]) and list(s.data[1:3]) == [math.inf, -math.inf]
    # the browser's JSON.parse reads it too, and the same three apart
    got = browser.execute_script("return arguments[0].map(t => { const d = JSON.parse(t)"
                                 ".data; return [d[0] === null, d[1] === Infinity, "
                                 "d[2] === -Infinity]; })", texts[:5])
    assert got == [[True, True, True]] * len(got)
    # what the channel's schema says a double is: a JSON number, or null for NaN
    item = schema["properties"]["data"]["items"]
    assert item["type"] == "number" and "null" in item.get("$comment", "").lower()


def test_print_json_keeps_them_apart(ns: str) -> None:
    cp = run("rtcf-print", "--nameserver", ns, "nf:bad", "-n", "2", "--json", "-t", "10")
    assert cp.returncode == 0, cp.stderr
    lines = [json.loads(x) for x in cp.stdout.splitlines()]
    assert len(lines) == 2
    for x in lines:
        assert x["data"][:3] == [None, math.inf, -math.inf]


def test_foxglove_bridge_keeps_them_apart(system: Any, tmp_path: Path) -> None:
    import aiohttp
    fox_port = _free_port()
    server = WebServer(system.ns_port, tmp_path, "--foxglove-port", str(fox_port))

    async def first_message() -> bytes:
        async with aiohttp.ClientSession() as s:
            async with s.ws_connect(f"ws://127.0.0.1:{fox_port}/",
                                    protocols=["foxglove.websocket.v1"]) as ws:
                channels: dict = {}
                while True:
                    msg = await ws.receive(timeout=60)
                    if msg.type == aiohttp.WSMsgType.TEXT:
                        d = json.loads(msg.data)
                        if d["op"] == "advertise":
                            channels.update({c["topic"]: c["id"] for c in d["channels"]})
                            if "/nf/bad" in channels:
                                await ws.send_str(json.dumps({"op": "subscribe",
                                    "subscriptions": [{"id": 1,
                                                       "channelId": channels["/nf/bad"]}]}))
                    elif msg.type == aiohttp.WSMsgType.BINARY:
                        return msg.data
    try:
        data = asyncio.run(first_message())
    finally:
        server.stop()
    assert data[0] == 1 and struct.unpack_from("<I", data, 1)[0] == 1
    body = json.loads(data[13:])
    assert body["data"][:3] == [None, math.inf, -math.inf]


# -- 5. live plots --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def web(system: Any, tmp_path_factory: Any) -> Any:
    server = WebServer(system.ns_port, tmp_path_factory.mktemp("webnf"))
    yield server
    server.stop()


def test_page_plots_a_nan_port_and_the_others_go_on(browser: Any, web: WebServer,
                                                    tmp_path: Path) -> None:
    """One port with NaN and infinities: its plot shows gaps where they are and counts
    them; the plot of another port beside it goes on (a raw NaN in the frame made the
    browser's JSON.parse throw, and every plot on the page stopped)."""
    browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": (
        "window.__errors = []; window.addEventListener('error', "
        "e => window.__errors.push(String(e.message)));")})
    open_page(browser, web)
    select_component(browser, "nf")
    for port in ("bad", "good"):
        wait_js(browser, "const b = document.querySelector(`#details button.plot[data-port="
                "'${arguments[0]}']`); if (b) b.click(); return !!b", f"plot {port}", 5.0,
                port)
    wait_js(browser, "const p = Object.values(rtcf.plots);"
            " return p.length === 2 && p.every(x => x.count > 20)",
            "both plots filling", 20.0)
    bad = browser.execute_script(
        "const p = Object.values(rtcf.plots).find(x => x.title === 'nf.bad');"
        " return {nonfinite: p.nonfinite, first: p.data.slice(1).map(s => s[s.length - 1]),"
        " info: p.info.textContent}")
    assert bad["first"][:3] == [None, None, None]      # gaps in the plot
    assert bad["first"][3] > 0
    assert bad["nonfinite"] > 0 and "not finite" in bad["info"]
    good = browser.execute_script(
        "const p = Object.values(rtcf.plots).find(x => x.title === 'nf.good');"
        " return p.data[1].slice(-5)")
    assert all(isinstance(v, (int, float)) and -1 <= v <= 1 for v in good)
    assert browser.execute_script("return window.__errors") == []
    # a picture for a person (kept in tmp_path)
    browser.execute_script("document.getElementById('plots-card').scrollIntoView()")
    assert browser.save_screenshot(str(tmp_path / "nan_plots.png"))


# -- 7. rtcf-inject ---------------------------------------------------------------------------

def test_inject_takes_json_numbers(ns: str, system: Any, it: Any) -> None:
    before = connectors(system, "nfrelay", "out")
    proc = subprocess.Popen([tool("rtcf-print"), "--nameserver", ns, "nfrelay:out", "-n",
                             "1", "--json", "-t", "120"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        wait_connected(it, system, "nfrelay", "out", before + 1, "rtcf-print connected")
        inj = run("rtcf-inject", "-n", ns, "nfrelay:in",
                  "[1e9, NaN, Infinity, -Infinity, -2.5E-3, .nan]", "-c", "3", "-r", "10")
        assert inj.returncode == 0, inj.stderr
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    line = json.loads(out.splitlines()[0])
    assert line["data"] == [1e9, None, math.inf, -math.inf, -2.5e-3, None], (out, err)
