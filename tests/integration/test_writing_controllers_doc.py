"""docs/writing-controllers.md, step by step as the page says: its files written into a
folder outside the repository, the system started with scripts/run from that folder, the
page's client commands run in bash (the naming port and the folder names replaced), the
page's no-ORB test script run, and its effort controller moving the simulated arm (a
controller written as the page says must move it)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from integration_support import ROOT

pytestmark = pytest.mark.slow    # seconds per test: left out of scripts/test -m "not slow"

DOC = ROOT / "docs" / "writing-controllers.md"
BLOCK = re.compile(r"(?:<!-- doc-test: (\w+) -->\n)?```(\w+)\n(.*?)```", re.S)


def blocks():
    """(tag or None, language, text) of every fenced block, in page order."""
    return [(m.group(1), m.group(2), m.group(3)) for m in BLOCK.finditer(DOC.read_text())]


def page_files():
    out = {}
    for _, _, text in blocks():
        first, _, rest = text.partition("\n")
        if first.startswith("# file: "):
            out[first[len("# file: "):].strip()] = text
    return out


def shell(text: str, folder: Path, port: int) -> str:
    return (text.replace("~/rtcf", str(ROOT)).replace("~/myctl", str(folder))
            .replace("localhost:2809", f"localhost:{port}"))


def test_the_page_names_its_steps():
    tags = [t for t, _, _ in blocks() if t]
    assert tags == ["system", "client", "client", "client", "arm", "effort"]
    assert set(page_files()) == {"my_controllers.py", "my.controllers.yaml",
                                 "my_system.yaml", "test_sway.py", "my_effort.py",
                                 "my_arm.controllers.yaml", "my_arm.yaml", "check_arm.py"}


def test_writing_controllers_as_the_page_says(naming, tmp_path):
    folder = tmp_path / "myctl"
    folder.mkdir()
    for name, text in page_files().items():
        (folder / name).write_text(text)
    # section 6: the no-ORB test
    p = subprocess.run([sys.executable, "test_sway.py"], cwd=folder, capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0 and p.stdout.strip() == "0.1", p.stderr
    # section 3: the system, from the user's folder (scripts/run sets RTCF_CWD)
    system = next(t for tag, _, t in blocks() if tag == "system")
    script = shell(system, folder, naming.port).strip() + \
        f" -o corba.nameservers:localhost:{naming.port}\n"
    log = open(tmp_path / "run.log", "wb")
    proc = subprocess.Popen(["bash", "-c", script], stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        outputs = []
        for text in [t for tag, _, t in blocks() if tag == "client"]:
            # each client block in its own shell, with M set as in the first one
            prefix = "set -e\n" + ("" if text.startswith("M=") else
                                   "M=localhost:2809/$(hostname).host_cxt/"
                                   "ControllerManager0.rtc\n")
            p = subprocess.run(["bash", "-c", shell(prefix + text, folder, naming.port)],
                               capture_output=True, text=True, timeout=120)
            assert p.returncode == 0, (text, p.stdout, p.stderr,
                                       (tmp_path / "run.log").read_text()[-3000:])
            outputs.append(p.stdout + p.stderr)
        spawn_and_list, handover, edit = outputs
        assert "sway my_controllers.Sway running" in spawn_and_list
        assert "rate=250Hz claims=HeadYaw/position fallbacks=hold" in spawn_and_list
        assert "HeadYaw/position claimed by sway" in spawn_and_list
        assert spawn_and_list.rstrip().endswith("\nsway")     # rtconf get running_controllers
        assert "refused, as it should be" in handover
        assert "'hold' claims HeadYaw/position (owned by 'sway')" in handover
        assert "started ['hold'], stopped ['sway']" in handover
        assert "started ['sway'], stopped ['hold']" in edit
        assert "0.3" in (folder / "my_controllers.py").read_text()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
        log.close()
    text = (tmp_path / "run.log").read_text()          # the final report
    assert "sway (my_controllers.Sway, 250 Hz): running" in text, text[-3000:]


def test_the_effort_controller_of_the_page_moves_the_simulated_arm(naming, tmp_path):
    """Section 7: the page's effort controller, as written, turns the arm's base by its
    angle while the bundled PID holds the rest (the effort commands reach the simulation);
    the page's run command runs it and its report shows the controller running."""
    folder = tmp_path / "myctl"
    folder.mkdir()
    for name, text in page_files().items():
        (folder / name).write_text(text)
    check = next(t for tag, _, t in blocks() if tag == "effort")
    p = subprocess.run(["bash", "-c", shell("set -e\n" + check, folder, naming.port)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.strip() == "joint1 0.30 rad, joint2 0.00 rad", p.stdout + p.stderr
    run = next(t for tag, _, t in blocks() if tag == "arm")
    script = shell(run, folder, naming.port).strip() + \
        f" --duration 2 -o corba.nameservers:localhost:{naming.port}\n"
    p = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=300)
    report = p.stdout + p.stderr
    assert p.returncode == 0, report[-3000:]
    assert "nudge (my_effort.Nudge, every tick): running" in report and \
        "0 faults" in report.split("nudge (my_effort.Nudge")[1].splitlines()[0], report[-3000:]
