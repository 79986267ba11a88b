"""docs/writing-components.md, as the page says: its files (the blocks that start with
``# file: ...``) written into a folder outside the repository, the page's test run with the
two commands it gives, the system started from that folder with its command-line load path,
and the page's rtcat / rtconf lines run against it (the folders and the naming port replaced
by the test's own)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow    # a system and two pytest runs: seconds

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "writing-components.md"
BLOCK = re.compile(r"```(\w*)\n(.*?)```", re.S)


def blocks() -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in BLOCK.finditer(DOC.read_text())]


def page_files() -> dict[str, str]:
    out = {}
    for _, text in blocks():
        first, _, rest = text.partition("\n")
        if first.startswith("# file: "):
            out[first[len("# file: "):].strip()] = text
    return out


def page_commands() -> list[str]:
    """The page's shell lines, in page order (comments and blank lines left out)."""
    out = []
    for lang, text in blocks():
        if lang in ("sh", "bash"):
            out += [line for line in text.splitlines() if line.strip() and
                    not line.lstrip().startswith("#")]
    return out


def localize(line: str, folder: Path, port: int) -> str:
    return (line.replace("~/rtcf", str(ROOT)).replace("$HOME/my_components", str(folder))
            .replace("~/my_components", str(folder))
            .replace("localhost:2809", f"localhost:{port}"))


def bash(line: str, folder: Path, port: int, timeout: float = 120):
    env = dict(os.environ, RTCF_VENV=str(Path(sys.executable).parent.parent))
    return subprocess.run(["bash", "-c", localize(line, folder, port)], cwd=folder,
                          capture_output=True, text=True, timeout=timeout, env=env,
                          stdin=subprocess.DEVNULL)


def test_the_page_gives_its_files_and_commands():
    assert set(page_files()) == {"mything/component.py", "mything/core.py",
                                 "mything/__init__.py", "mything/tests/test_low_pass.py",
                                 "filtering.yaml"}
    cmds = page_commands()
    assert cmds[0] == "cd ~/my_components" and "load_path:$HOME/my_components" in cmds[1]
    assert any("-m pytest" in c for c in cmds) and any("rtconf" in c for c in cmds)


def test_writing_components_as_the_page_says(naming, tmp_path):
    folder = tmp_path / "my_components"
    for name, text in page_files().items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    port = naming.port
    cmds = page_commands()
    # section 5: the page's test, both ways the page runs it
    for line in (c for c in cmds if "-m pytest" in c):
        cp = bash(line + " -q -p no:cacheprovider", folder, port)
        assert cp.returncode == 0 and "1 passed" in cp.stdout, line + "\n" + cp.stdout + cp.stderr
    # section 1: the load path on the command line (the page's line runs until Ctrl-C)
    first = next(c for c in cmds if "load_path:$HOME/my_components" in c)
    cp = bash(f"{first} --duration 1 -o corba.nameservers:localhost:{port}", folder, port)
    assert cp.returncode == 0 and "running filtering (3 components)" in cp.stdout + cp.stderr, \
        cp.stdout + cp.stderr
    # section 6: the system from the user's folder, then the other terminal's lines
    system = next(c for c in cmds if "--duration 10" in c)
    env = dict(os.environ, RTCF_VENV=str(Path(sys.executable).parent.parent))
    log = open(tmp_path / "run.log", "wb")
    proc = subprocess.Popen(["bash", "-c", localize(system, folder, port)], cwd=folder,
                            stdout=log, stderr=subprocess.STDOUT, env=env,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        rtcat = next(c for c in cmds if "rtcat" in c)
        deadline = time.monotonic() + 60
        while True:
            cp = bash(rtcat, folder, port)
            if cp.returncode == 0:
                break
            assert proc.poll() is None, (tmp_path / "run.log").read_text()
            assert time.monotonic() < deadline, cp.stdout + cp.stderr
            time.sleep(0.3)
        assert "lp.rtc" in cp.stdout and "Active" in cp.stdout, cp.stdout
        rtconf = next(c for c in cmds if "rtconf" in c)
        cp = bash(rtconf, folder, port)
        assert cp.returncode == 0, cp.stdout + cp.stderr
        got = bash(rtconf.replace("set cutoff 0.5", "get cutoff"), folder, port)
        assert got.stdout.strip() == "0.5", got.stdout + got.stderr
        assert proc.wait(60) == 0, (tmp_path / "run.log").read_text()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()
