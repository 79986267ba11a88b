"""The observing tools' commands as README and docs/observing.md show them, on the default
system (compositions/nao_sim.yaml), and what they must say so that nobody is misled: a
value written into an in port that a live writer feeds is replaced at its next write
(rtcf-inject and rtcf-play say so), a bare rtcf-play of a whole system's recording writes
nothing until told what to replay, and the manager's web view on port 0 logs the port it
really serves."""

from __future__ import annotations

import re
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from test_tool_commands import one_line_error, run

pytestmark = pytest.mark.slow    # seconds per test: left out of scripts/test -m "not slow"

ROOT = Path(__file__).resolve().parents[2]
NAO_SIM = ROOT / "compositions" / "nao_sim.yaml"
NAMES = ["SequencePlayer0", "DCM0", "Kinematics0", "qLog", "sensorLog"]


@pytest.fixture(scope="module")
def nao(module_launch: Any) -> Any:
    return module_launch(NAO_SIM, NAMES)


@pytest.fixture(scope="module")
def ns(nao: Any) -> str:
    return f"localhost:{nao.ns_port}"


@pytest.fixture(scope="module")
def recording(ns: str, tmp_path_factory: Any) -> Path:
    out = tmp_path_factory.mktemp("docs") / "run.mcap"
    cp = run("rtcf-record", "-n", ns, "-o", out, "--all", "--duration", "2", "-q")
    assert cp.returncode == 0, cp.stderr
    return out


def test_readme_print_record_graph(ns: str, recording: Path, tmp_path: Path) -> None:
    cp = run("rtcf-print", "--nameserver", ns, "DCM0:q", "-n", "5")
    assert cp.returncode == 0 and len(cp.stdout.splitlines()) == 5, cp.stderr
    assert recording.exists()
    svg = tmp_path / "system.svg"
    cp = run("rtcf-graph", "-n", ns, "-o", svg)
    assert cp.returncode == 0 and svg.read_text().startswith("<svg"), cp.stderr


def test_readme_play_says_the_port_is_fed_live(ns: str, recording: Path) -> None:
    """README: rtcf-play run.mcap --map DCM0.q=Kinematics0:q. DCM0.q feeds Kinematics0.q in
    the running system, so each replayed sample lasts until DCM0's next one: say so."""
    cp = run("rtcf-play", recording, "-n", ns, "--map", "DCM0.q=Kinematics0:q")
    assert cp.returncode == 0, cp.stderr
    sent = int(re.search(r"sent (\d+) messages", cp.stderr).group(1))
    from rtcf.tools.mcapio import open_recording
    with open_recording(str(recording)) as rec:     # DCM0.q's messages, no other channel
        assert sent == rec.channels["DCM0.q"].count
    notes = [x for x in cp.stderr.splitlines() if "note:" in x]
    assert len(notes) == 1 and "Kinematics0.rtc:q is also fed by DCM0.q" in notes[0], \
        cp.stderr


def test_a_bare_play_of_a_whole_system_replays_nothing(ns: str, recording: Path) -> None:
    """rtcf-play run.mcap on a recording of --all would write into every in port of the
    live system: it asks what to replay instead, showing where each channel would go."""
    cp = run("rtcf-play", recording, "-n", ns)
    line = one_line_error(cp, "say what to replay", "--only CHANNEL", "--all")
    assert "DCM0.q -> " in line and "Kinematics0.rtc:q" in line
    # docs/observing.md: one channel into the ports it fed
    cp = run("rtcf-play", recording, "-n", ns, "--only", "DCM0.q", "-q")
    assert cp.returncode == 0, cp.stderr
    assert "also fed by DCM0.q" in cp.stderr
    # and every channel into the ports it fed, asked for with --all
    cp = run("rtcf-play", recording, "-n", ns, "--all")
    assert cp.returncode == 0, cp.stderr
    from rtcf.tools.mcapio import open_recording
    with open_recording(str(recording)) as rec:
        fed = [c for c in rec.channels.values() if c.metadata.get("connected_to")]
        want = sum(c.count for c in fed)
    assert f"sent {want} messages" in cp.stderr


def test_readme_inject(ns: str) -> None:
    """README's example writes a port no writer feeds (the player's start position for its
    next motion); into a fed port, the tool says which writer replaces the value."""
    cp = run("rtcf-inject", "-n", ns, "SequencePlayer0:basePosInit",
             "{x: 0.0, y: 0.0, z: 0.33}")
    assert cp.returncode == 0, cp.stderr
    assert "wrote 1 TimedPoint3D" in cp.stdout and "note:" not in cp.stderr
    cp = run("rtcf-inject", "-n", ns, "Kinematics0:q", "[0.1, 0.2]")
    assert cp.returncode == 0, cp.stderr
    assert "Kinematics0.rtc:q is also fed by DCM0.q" in cp.stderr


def test_manager_web_view_on_port_0_logs_its_port(launch: Any) -> None:
    lone = ("name: web0\ncomponents:\n  - {type: SineGenerator, module: examples, "
            "name: web0}\nexecution_contexts:\n  - {name: main, kind: periodic, rate: 50, "
            "members: [web0]}\nactivate: all\n")
    mp = launch(lone, "web0", "rtcf.web.enable:YES", "rtcf.web.port:0")
    deadline = time.monotonic() + 120
    while not (m := re.search(r"web view at http://127\.0\.0\.1:(\d+)/", mp.log())):
        assert time.monotonic() < deadline, mp.log()
        time.sleep(0.2)
    port = int(m.group(1))
    assert port != 0
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/system", timeout=2) as r:
                assert r.status == 200
                break
        except OSError:
            assert time.monotonic() < deadline, mp.log()
            time.sleep(0.2)


def test_observing_pictures_script(tmp_path: Path) -> None:
    """scripts/observing_pictures makes docs/observing.md's two pictures from the default
    system (a system and naming service of its own, stopped at the end)."""
    import shutil
    import subprocess
    from test_web_view import _browser_missing
    missing = _browser_missing()
    if missing:
        pytest.skip(missing)
    pytest.importorskip("matplotlib")
    assert shutil.which("chromium")
    cp = subprocess.run([str(ROOT / "scripts" / "observing_pictures"), "--out",
                         str(tmp_path)], capture_output=True, text=True, timeout=300,
                        stdin=subprocess.DEVNULL)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    for name in ("rtcf-graph-default.png", "web_view.png"):
        data = (tmp_path / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 30_000, name
