"""The observing tools where they used to fail: periodic OpenRTM writers that repeat their
last sample (counted once), port names with dots, an output that cannot be written (a
missing folder, a folder in the file's place, a full disk: what was written is kept), a
dead component under ``--all``, and a recorder started in the background by a script (SIGINT
ignored by the shell) stopped with SIGINT."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from test_tool_commands import connectors, one_line_error, run, tool, wait_connected

pytestmark = pytest.mark.slow    # seconds per test: left out of scripts/test -m "not slow"

DOTTED = """
name: dotted
components:
  - {type: DottedPorts, module: dotted, name: dot}
  - {type: CountingWriter, module: counting, name: fast, params: {limit: 10000000, width: 30, burst: 40}}
execution_contexts:
  - {name: main, kind: periodic, rate: 100, members: [dot, fast]}
activate: [dot]
"""


@pytest.fixture(scope="module")
def system(module_launch: Any) -> Any:
    return module_launch(DOTTED, ["dot", "fast"])


@pytest.fixture(scope="module")
def ns(system: Any) -> str:
    return f"localhost:{system.ns_port}"


# -- 16. periodic writers that repeat -------------------------------------------------------

@pytest.fixture(scope="module")
def peer(tmp_path_factory: Any) -> Any:
    from test_openrtm_peer import PeerProcess
    p = PeerProcess(tmp_path_factory.mktemp("obs_peer"))
    yield p
    p.close()


def test_periodic_taps_count_only_new_samples(peer: Any, it: Any) -> None:
    """An OpenRTM-aist periodic publisher sends its last sample again when nothing new was
    written (readback): 5 written, 5 received, however many times they were sent. This is
    the tap of rtcf-print --rate, rtcf-record --max-rate and the web view's plots."""
    from rtcf.tools.session import Session
    from rtcf.tools.tap import SampleQueue, Tap
    from rtcf.web.taps import TapSet
    orb = it.orb()
    RTC = it.stubs("RTC")
    out_ref = orb.string_to_object(peer.out_ior)._narrow(RTC.PortService)
    s = Session(None)
    q = SampleQueue(10_000)
    tap = Tap(s, s.port_from_ref(out_ref, "peer.out"), q, max_rate=100)
    plots = TapSet(push_rate=100)
    ring = plots.open("peer", s, s.port_from_ref(out_ref, "peer.out"))
    got: list = []

    def arrived(n: int) -> bool:
        """Sample n at the tap and in the plot's ring (each connection may come up a little
        later than the other on a loaded machine: the repeats bring n to it then)."""
        got.extend(q.drain())
        plots.poll()
        return (any(tap.decode(d).tm.sec == n for _, _, d in got)
                and any(int(v[0]) == n for _, _, v in ring.since(0)))
    try:
        for n in range(1, 6):
            peer.write([n, n], n, 0)
            it.wait_until(lambda: arrived(n), 10, what=f"sample {n} at the tap and the plot")
        it.wait_until(lambda: tap.repeats >= 20, 20, what="the writer's repeats")
        got += q.drain()
        plots.poll()
    finally:
        tap.close()
        plots.shutdown()
    assert [tap.decode(d).tm.sec for _, _, d in got] == [1, 2, 3, 4, 5]
    assert [int(v[0]) for _, _, v in ring.since(0)] == [1, 2, 3, 4, 5]


# -- 17. port names with dots ---------------------------------------------------------------

DOTTED_SPLIT = """
name: dotted_split
components:
  - {type: DottedPorts, module: dotted, name: dota}
  - {type: DottedPorts, module: dotted, name: dotb, process: other}
connections:
  - {from: dota.arm.q, to: dotb.arm.qRef}
execution_contexts:
  - {name: main, kind: periodic, rate: 50, members: [dota, dotb]}
"""


def test_dotted_port_names_connect_across_processes(launch: Any) -> None:
    """A connection between processes finds its ports by their whole names: the port
    profile's name is ``instance.port``, and ``arm.q`` was matched against its last part
    ``q`` (the launch failed: "the component has no port 'arm.q'")."""
    mp = launch(DOTTED_SPLIT, ["dota", "dotb"])
    ns = f"localhost:{mp.ns_port}"
    cp = run("rtcf-print", "--nameserver", ns, "dotb:arm.qRef.echo", "-n", "3", "--json",
             "-t", "60")
    assert cp.returncode == 0, cp.stderr + mp.log()
    values = [json.loads(line)["data"] for line in cp.stdout.splitlines()]
    assert len(values) == 3 and all(len(v) == 2 and v[0] == v[1] > 0 for v in values), values


def test_dotted_port_names_are_addressed(system: Any, ns: str, it: Any,
                                         tmp_path: Path) -> None:
    full = f"{ns}/{it.HOST}.host_cxt/dot.rtc:arm.q"
    for addr in ("dot:arm.q", "dot.rtc:arm.q", full):
        cp = run("rtcf-print", "--nameserver", ns, addr, "-n", "1", "--json", "-t", "10")
        assert cp.returncode == 0, (addr, cp.stderr)
        line = json.loads(cp.stdout)
        assert line["port"].endswith(":arm.q") and len(line["data"]) == 2
    # the port whose name is another's plus a suffix is its own
    cp = run("rtcf-print", "--nameserver", ns, "dot:arm", "-n", "1", "-t", "5")
    one_line_error(cp, "dot has no port 'arm'", "arm.q", "arm.qRef.echo")
    # inject into arm.qRef, read it back from arm.qRef.echo
    before = connectors(system, "dot", "arm.qRef.echo")
    proc = subprocess.Popen([tool("rtcf-print"), "--nameserver", ns, "dot:arm.qRef.echo",
                             "-n", "1", "--json", "-t", "120"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    wait_connected(it, system, "dot", "arm.qRef.echo", before + 1, "rtcf-print connected")
    inj = run("rtcf-inject", "-n", ns, "dot:arm.qRef", "[4, 5]", "-c", "3", "-r", "10")
    assert inj.returncode == 0, inj.stderr
    out, err = proc.communicate(timeout=30)
    assert json.loads(out)["data"] == [4.0, 5.0], err
    # a recording's topic is the port's full name; rtcf-play maps it back by name
    rec = tmp_path / "dot.mcap"
    cp = run("rtcf-record", "-n", ns, "-o", rec, "--duration", "1", "dot:arm.q")
    assert cp.returncode == 0, cp.stderr
    from rtcf.tools.mcapio import open_recording
    r = open_recording(str(rec))
    try:
        assert [c.topic for c in r.channels.values()] == ["dot.arm.q"]
    finally:
        r.close()
    cp = run("rtcf-play", rec, "-n", ns, "--map", "dot.arm.q=dot:arm.qRef", "-q")
    assert cp.returncode == 0, cp.stderr


# -- 18. outputs that cannot be written ------------------------------------------------------

def test_graph_to_a_missing_folder_is_one_line(ns: str, tmp_path: Path) -> None:
    cp = run("rtcf-graph", "-n", ns, "-o", "/nonexistent/g.svg")
    one_line_error(cp, "/nonexistent/g.svg", "folder /nonexistent does not exist")
    (tmp_path / "g.svg").mkdir()
    cp = run("rtcf-graph", "-n", ns, "-o", tmp_path / "g.svg")
    one_line_error(cp, "is a folder")


def test_record_to_a_folder_is_refused_before_recording(ns: str, tmp_path: Path) -> None:
    folder = tmp_path / "adir.mcap"
    folder.mkdir()
    for extra in ([], ["--force"]):
        started = time.monotonic()
        cp = run("rtcf-record", "-n", ns, "-o", folder, "--duration", "30", "dot:arm.q",
                 *extra)
        one_line_error(cp, str(folder), "is a folder")
        assert "recording" not in cp.stderr
    assert list(tmp_path.iterdir()) == [folder] and list(folder.iterdir()) == []


def test_disk_full_keeps_what_was_written(system: Any, ns: str, tmp_path: Path,
                                          it: Any) -> None:
    """The file may grow to 1.5 MB (RLIMIT_FSIZE, as a full disk: writes fail): the
    recorder keeps the complete part as a valid MCAP file, says so, and exits 1."""
    from rtcf.tools.mcapio import open_recording
    out = tmp_path / "full.mcap"
    limit = 1_500_000

    def small_disk() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    fast = system.ref("fast")
    assert str(it.component_ec(fast).activate_component(fast)) == "RTC_OK"
    try:
        proc = subprocess.run([tool("rtcf-record"), "-n", ns, "-o", str(out), "--duration",
                               "60", "-q", "fast:out"], capture_output=True, text=True,
                              timeout=120, preexec_fn=small_disk)
    finally:
        it.component_ec(fast).deactivate_component(fast)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "kept" in lines[0] and str(out) in lines[0], lines[0]
    assert out.exists() and not Path(str(out) + ".part").exists()
    assert out.stat().st_size <= limit
    from mcap.reader import make_reader
    with open(out, "rb") as f:                   # any MCAP reader reads it
        msgs = [m for _, _, m in make_reader(f).iter_messages()]
    rec = open_recording(str(out))               # and rtcf-play's
    try:
        (ch,) = rec.channels.values()
        assert ch.count == len(msgs) == len(list(rec.messages()))
    finally:
        rec.close()
    assert len(msgs) > 500
    assert [m.sequence for m in msgs] == list(range(1, len(msgs) + 1))
    assert f"{len(msgs)} messages" in lines[0]


def test_all_reports_a_dead_component(system: Any, ns: str, it: Any,
                                      tmp_path: Path) -> None:
    """A name still bound to a component whose process is gone (killed, its names left
    behind): --all says it skips it, and records the others."""
    naming = it.naming_client(system.ns_port)
    ghost = it.orb().string_to_object("corbaloc:iiop:127.0.0.1:9/doomed")
    naming.bind(f"{it.HOST}.host_cxt/doomed.rtc", ghost)
    try:
        out = tmp_path / "all.mcap"
        cp = run("rtcf-record", "-n", ns, "-o", out, "--all", "--duration", "1", "-q")
    finally:
        naming.unbind(f"{it.HOST}.host_cxt/doomed.rtc")
    assert cp.returncode == 0, cp.stderr
    skipped = [line for line in cp.stderr.splitlines() if "doomed" in line]
    assert len(skipped) == 1 and "skipping" in skipped[0] and "does not answer" in skipped[0]
    assert out.exists()


def test_background_recorder_stops_on_sigint(ns: str, tmp_path: Path) -> None:
    """A script's `rtcf-record ... &` starts with SIGINT ignored (the shell does that for
    background jobs); the recorder installs its handler, so `kill -INT` still ends it
    cleanly with a complete file."""
    out = tmp_path / "bg.mcap"
    proc = subprocess.Popen([tool("rtcf-record"), "-n", ns, "-o", str(out), "dot:arm.q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        first = proc.stderr.readline()            # the first progress line: recording
        assert first.startswith("recording 1 port"), first
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert f"wrote {out}" in err and out.exists()


def test_web_view_plots_a_dotted_port(system: Any, tmp_path: Path) -> None:
    import asyncio

    import aiohttp
    from test_web_view import WebServer
    server = WebServer(system.ns_port, tmp_path)

    async def plot() -> tuple[dict, dict]:
        async with aiohttp.ClientSession() as s:
            async with s.ws_connect(f"ws://127.0.0.1:{server.port}/ws") as ws:
                await ws.send_str(json.dumps({"op": "plot", "component": "dot",
                                              "port": "arm.q"}))
                plotting = frame = None
                while frame is None:
                    d = json.loads((await ws.receive(timeout=15)).data)
                    if d["type"] == "error":
                        raise AssertionError(d["message"])
                    if d["type"] == "plotting":
                        plotting = d
                    elif d["type"] == "plot":
                        frame = d["frames"][0]
                return plotting, frame
    try:
        plotting, frame = asyncio.run(plot())
    finally:
        server.stop()
    assert plotting["title"] == "dot.arm.q" and plotting["key"].endswith(":arm.q")
    assert frame["labels"] == ["data[0]", "data[1]"] and frame["y"][-1][0] >= 1
