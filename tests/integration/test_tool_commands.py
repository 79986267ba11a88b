"""The command-line tools against a running system: rtcf-record's MCAP read back with the
``mcap`` library (count, values, times, equal to what the writer wrote), replayed with
rtcf-play into a port with the same values, rtcf-print, rtcf-inject, rtcf-graph, and bad
input (an unknown port, a truncated or missing MCAP file, a value of the wrong shape, a port
of a dead component): one line naming it, exit status 1, no file half-written."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.slow    # seconds per test: left out of scripts/test -m "not slow"

N = 150           # samples the writer writes
WIDTH = 30
COMPOSITION = f"""
name: tools
components:
  - {{type: CountingWriter, module: counting, name: cw, params: {{limit: {N}, width: {WIDTH}}}}}
  - {{type: Gain, module: examples, name: twice, params: {{gain: 2.0}}}}
  - {{type: Gain, module: examples, name: relay, params: {{gain: 1.0}}}}
connections:
  - {{from: cw.out, to: twice.in, subscription_type: flush}}
execution_contexts:
  - {{name: main, kind: periodic, rate: 100, members: [cw, twice, relay]}}
activate: [twice, relay]
"""


def tool(name: str) -> str:
    exe = Path(sys.executable).parent / name
    assert exe.exists(), f"{exe} missing: the console scripts come with the install"
    return str(exe)


def run(name: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "RTCTREE_NAMESERVERS"}
    return subprocess.run([tool(name), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=env, stdin=subprocess.DEVNULL)


def one_line_error(cp: subprocess.CompletedProcess, *needles: str) -> str:
    assert cp.returncode == 1, (cp.returncode, cp.stdout, cp.stderr)
    lines = cp.stderr.strip().splitlines()
    assert len(lines) == 1, cp.stderr
    for n in needles:
        assert n in lines[0], (n, lines[0])
    assert "Traceback" not in cp.stderr
    return lines[0]


@pytest.fixture(scope="module")
def system(module_launch):
    return module_launch(COMPOSITION, ["cw", "twice", "relay"])


@pytest.fixture(scope="module")
def ns(system):
    return f"localhost:{system.ns_port}"


def connectors(system, inst, port):
    return len(system.port(inst, port).get_connector_profiles())


class Lines:
    """The lines a child process writes to a pipe, collected by a thread as they come."""

    def __init__(self, stream) -> None:
        self.lines: list[str] = []
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream) -> None:
        for line in stream:
            self.lines.append(line)

    def text(self) -> str:
        self.thread.join(30)
        return "".join(self.lines)


def wait_connected(it, system, inst, port, count, what) -> None:
    """Until the out port has ``count`` connectors (a tool's connection is there)."""
    it.wait_until(lambda: connectors(system, inst, port) == count, what=what)


@pytest.fixture(scope="module")
def recording(system, ns, it, tmp_path_factory):
    """rtcf-record of cw.out and twice.out while cw writes its N samples, stopped by
    SIGINT (Ctrl-C) once its progress line counts them all (2 N) written."""
    out = tmp_path_factory.mktemp("rec") / "run.mcap"
    proc = subprocess.Popen([tool("rtcf-record"), "-n", ns, "-o", str(out), "cw:out",
                             "twice:out"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    err = Lines(proc.stderr)
    try:
        it.wait_until(lambda: connectors(system, "cw", "out") == 2 and
                      connectors(system, "twice", "out") == 1, what="recorder connected")
        cw = system.ref("cw")
        assert str(it.component_ec(cw).activate_component(cw)) == "RTC_OK"
        it.wait_until(lambda: any(f": {2 * N} samples," in x for x in err.lines),
                      what=f"the recorder's progress line to count {2 * N} samples")
        proc.send_signal(signal.SIGINT)
        proc.wait(60)
        stderr = err.text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, stderr
    assert "recording 2 ports" in stderr and f"wrote {out}" in stderr
    return out


def test_recording_reads_back_with_mcap(recording):
    from mcap.reader import make_reader
    assert not Path(str(recording) + ".part").exists()
    with open(recording, "rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        topics = {c.topic: c for c in summary.channels.values()}
        assert set(topics) == {"cw.out", "twice.out"}
        for c in topics.values():
            assert c.message_encoding == "json"
            schema = summary.schemas[c.schema_id]
            assert (schema.name, schema.encoding) == ("RTC::TimedDoubleSeq", "jsonschema")
            assert json.loads(schema.data)["properties"]["data"]["type"] == "array"
        counts = summary.statistics.channel_message_counts
        assert counts[topics["cw.out"].id] == N
        assert counts[topics["twice.out"].id] == N
        got: dict[str, list] = {"cw.out": [], "twice.out": []}
        for _schema, ch, msg in reader.iter_messages(log_time_order=False):
            got[ch.topic].append(msg)
    for topic, factor in (("cw.out", 1.0), ("twice.out", 2.0)):
        msgs = got[topic]
        assert [m.sequence for m in msgs] == list(range(1, N + 1))
        logs = [m.log_time for m in msgs]
        assert logs == sorted(logs), f"{topic}: log times not monotonic"
        for n, m in enumerate(msgs, start=1):
            body = json.loads(m.data)
            assert body["tm"] == {"sec": n, "nsec": 1000 * n}
            assert m.publish_time == n * 1_000_000_000 + 1000 * n
            want = factor * (n + np.arange(WIDTH) / 100.0)
            assert np.array_equal(np.array(body["data"]), want), (topic, n)
        assert abs(logs[0] * 1e-9 - time.time()) < 600    # receive times: the epoch


def test_replay_into_a_port_gives_the_same_values(recording, system, ns, it):
    from rtcf.tools.session import Session
    from rtcf.tools.tap import SampleQueue, Tap
    s = Session([ns])
    q = SampleQueue(10 * N)
    tap = Tap(s, s.port("relay:out", "out"), q)
    try:
        cp = run("rtcf-play", recording, "-n", ns, "--map", "cw.out=relay:in", "--only",
                 "cw.out", "-q")
        assert cp.returncode == 0, cp.stderr
        samples = []
        deadline = time.monotonic() + 60
        while len(samples) < N and time.monotonic() < deadline:
            item = q.get(timeout=0.5)
            if item is not None:
                samples.append(tap.decode(item[2]))
        time.sleep(0.3)
        samples += [tap.decode(d) for _, _, d in q.drain()]
    finally:
        tap.close()
    assert len(samples) == N, [s.tm.sec for s in samples]
    for n, smp in enumerate(samples, start=1):
        assert (smp.tm.sec, smp.tm.nsec) == (n, 1000 * n)
        assert np.array_equal(smp.data, n + np.arange(WIDTH) / 100.0)


def test_cdr_encoding_is_the_openrtm_bytes(system, ns, tmp_path):
    """--encoding cdr: the port's bytes behind the CDR_LE header, an omgidl schema."""
    from mcap.reader import make_reader
    from rtcf.corba.cdr import codec_for
    from rtcf.datatypes import TimedDoubleSeq
    out = tmp_path / "cdr.mcap"
    cp = run("rtcf-record", "-n", ns, "-o", out, "--encoding", "cdr", "--duration", "1.5",
             "twice:out", "relay:out")
    assert cp.returncode == 0, cp.stderr
    with open(out, "rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        for c in summary.channels.values():
            schema = summary.schemas[c.schema_id]
            assert (c.message_encoding, schema.encoding) == ("cdr", "omgidl")
            assert "struct TimedDoubleSeq" in schema.data.decode()
        for _s, ch, msg in reader.iter_messages():
            assert msg.data[:4] == b"\x00\x01\x00\x00"
            codec_for(TimedDoubleSeq).decode(msg.data[4:])


def test_print_and_inject(system, ns, it):
    # nothing flows on relay.out until something is injected: inject once rtcf-print has
    # connected
    before = connectors(system, "relay", "out")
    proc = subprocess.Popen([tool("rtcf-print"), "--nameserver", ns, "relay:out", "-n", "3",
                             "--json", "-t", "120"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    wait_connected(it, system, "relay", "out", before + 1, "rtcf-print connected")
    inj = run("rtcf-inject", "-n", ns, "relay:in", "{tm: {sec: 7, nsec: 9}, data: [1, 2.5]}",
              "-c", "3", "-r", "20")
    assert inj.returncode == 0, inj.stderr
    assert "wrote 3 TimedDoubleSeq" in inj.stdout
    out, err = proc.communicate(timeout=30)
    lines = [json.loads(x) for x in out.splitlines()]
    assert len(lines) == 3, (out, err)
    assert all(x["data"] == [1.0, 2.5] and x["tm"] == {"sec": 7, "nsec": 9} for x in lines)
    assert lines[0]["port"].endswith("relay.rtc:out")
    text = run("rtcf-print", "--nameserver", ns, "twice:out", "-n", "1", "-t", "3")
    assert text.returncode == 0


def test_graph(system, ns, tmp_path):
    svg = tmp_path / "g.svg"
    cp = run("rtcf-graph", "-n", ns, "-o", svg)
    assert cp.returncode == 0, cp.stderr
    text = svg.read_text()
    for name in ("cw", "twice", "relay", "EC main", "CountingWriter"):
        assert f">{name}" in text or name in text, name
    assert text.count("<path") >= 1          # cw.out -> twice.in
    cp = run("rtcf-graph", "-n", ns, "--json")
    snap = json.loads(cp.stdout)
    assert {c["name"] for c in snap["components"]} >= {"cw", "twice", "relay"}
    pytest.importorskip("matplotlib")
    png = tmp_path / "g.png"
    assert run("rtcf-graph", "-n", ns, "-o", png).returncode == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# -- bad input ---------------------------------------------------------------------------------

def test_unknown_port(system, ns, tmp_path):
    one_line_error(run("rtcf-print", "--nameserver", ns, "twice:nope", "-n", "1"),
                   "twice:nope", "no port 'nope'", "ports: in, out")
    out = tmp_path / "x.mcap"
    one_line_error(run("rtcf-record", "-n", ns, "-o", out, "twice:out", "ghost:out"),
                   "ghost:out", "no component ghost")
    assert list(tmp_path.iterdir()) == []           # nothing written, not even a .part
    one_line_error(run("rtcf-inject", "-n", ns, "twice:out", "[1]"), "is an out port")
    one_line_error(run("rtcf-print", "--nameserver", "localhost:1", "twice:out"),
                   "no naming service answers at localhost:1")


def test_wrong_shape(system, ns):
    line = one_line_error(run("rtcf-inject", "-n", ns, "relay:in", "[1, 'a']"),
                          "relay.rtc:in takes TimedDoubleSeq", "data[1]", "expected a number")
    assert "'a'" in line
    one_line_error(run("rtcf-inject", "-n", ns, "relay:in", "{dat: [1]}"),
                   "unknown member 'dat'")
    one_line_error(run("rtcf-inject", "-n", ns, "relay:in", "[1, 2"), "not YAML/JSON")


def test_truncated_and_missing_mcap(recording, ns, tmp_path):
    data = recording.read_bytes()
    cut = tmp_path / "cut.mcap"
    cut.write_bytes(data[: len(data) // 2])
    one_line_error(run("rtcf-play", cut, "-n", ns), str(cut), "incomplete MCAP file")
    one_line_error(run("rtcf-play", tmp_path / "none.mcap", "-n", ns), "no such file")
    junk = tmp_path / "junk.mcap"
    junk.write_text("hello")
    one_line_error(run("rtcf-play", junk, "-n", ns), "not an MCAP file")
    one_line_error(run("rtcf-play", recording, "-n", ns, "--map", "nope=relay:in"),
                   "no channel 'nope'", "cw.out")


def test_record_refuses_to_overwrite(recording, ns):
    one_line_error(run("rtcf-record", "-n", ns, "-o", recording, "twice:out"),
                   "exists (use --force")


def test_killed_recorder_leaves_no_mcap(system, ns, tmp_path, it):
    """kill -9: no .mcap (only the .part, which no MCAP reader mistakes for one), and the
    writer drops the dead recorder's connection by itself."""
    before = connectors(system, "twice", "out")
    out = tmp_path / "k.mcap"
    proc = subprocess.Popen([tool("rtcf-record"), "-n", ns, "-o", str(out), "twice:out",
                             "-q"], stderr=subprocess.PIPE)
    wait_connected(it, system, "twice", "out", before + 1, "recorder connected")
    # twice.out only writes while cw writes: have the writer run into the dead recorder
    cw = system.ref("cw")
    ec = it.component_ec(cw)
    ec.deactivate_component(cw)
    it.wait_state(cw, "INACTIVE")
    proc.kill()
    proc.wait()
    assert not out.exists() and Path(str(out) + ".part").exists()
    inj = run("rtcf-inject", "-n", ns, "twice:in", "[1, 2]", "-r", "50", "-c", "20", "-q")
    assert inj.returncode == 0, inj.stderr
    wait_connected(it, system, "twice", "out", before,
                   "the dead recorder's connection dropped by the writer")


def test_print_rate_limit(system, ns, it):
    """--rate 2: the writer sends its newest sample at 2 Hz (periodic) and rtcf-print keeps
    at least half a period between two lines, so in its T seconds at most 2 * 2 * T + 1 of
    the 100 samples injected at 50 Hz are printed. The bound holds however loaded the
    machine; without the limit every sample would be printed."""
    t = 8
    before = connectors(system, "relay", "out")
    proc = subprocess.Popen([tool("rtcf-print"), "--nameserver", ns, "relay:out", "--rate",
                             "2", "-t", str(t)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    wait_connected(it, system, "relay", "out", before + 1, "rtcf-print connected")
    from rtcf.tools.cli import inject_main          # in this process: no start-up to wait
    sigterm = signal.getsignal(signal.SIGTERM)      # (the tool installs its own handler)
    try:
        assert inject_main(["-n", ns, "relay:in", "[3]", "-r", "50", "-c", "100", "-q"]) == 0
    finally:
        signal.signal(signal.SIGTERM, sigterm)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    lines = out.splitlines()
    assert 1 <= len(lines) <= 2 * 2 * t + 1 < 100, out
    assert all(x.startswith("relay.out [") and x.endswith("[3]") for x in lines), out


def test_dead_component(launch, naming, it, tmp_path):
    """A port of a component whose process died, its name still bound (a stale entry)."""
    mp = launch("""
name: doomed
components:
  - {type: Gain, module: examples, name: doomed}
execution_contexts:
  - {name: main, kind: periodic, rate: 50, members: [doomed]}
activate: all
""", "doomed")
    ref = mp.ref("doomed")
    mp.kill()
    path = f"{it.HOST}.host_cxt/doomed.rtc"

    def unbound() -> bool:       # the reaper unbinds what the killed manager left
        try:
            it.naming_client(naming.port).resolve(path)
            return False
        except LookupError:
            return True
    it.wait_until(unbound, 10, what="the reaper unbinding doomed")
    it.naming_client(naming.port).bind(path, ref)     # what a crashed OpenRTM leaves
    ns = f"localhost:{naming.port}"
    one_line_error(run("rtcf-print", "--nameserver", ns, "doomed:out", "-n", "1"),
                   "doomed", "does not answer")
    out = tmp_path / "d.mcap"
    one_line_error(run("rtcf-record", "-n", ns, "-o", out, "doomed:out"), "does not answer")
    assert list(tmp_path.glob("d.mcap*")) == []
    one_line_error(run("rtcf-inject", "-n", ns, "doomed:in", "[1]"), "does not answer")
    it.naming_client(naming.port).unbind(path)


def test_record_all(system, ns, tmp_path):
    from rtcf.tools.mcapio import open_recording
    out = tmp_path / "all.mcap"
    cp = run("rtcf-record", "-n", ns, "-o", out, "--all", "--duration", "1", "-q")
    assert cp.returncode == 0, cp.stderr
    with open_recording(str(out)) as rec:
        assert set(rec.channels) == {"cw.out", "twice.out", "relay.out"}
        assert rec.channels["cw.out"].metadata["connected_to"].endswith("twice.rtc:in")
        assert json.loads(rec.metadata["rtcf.stats"]["dropped_by_queue"]) == 0
