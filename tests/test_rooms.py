"""scripts/layout: the picture of rtcf's rooms in docs/architecture.md is drawn from the code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _layout(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "layout.py"), *args],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_every_module_of_rtcf_is_in_a_room_and_rtcf_imports_no_component():
    cp = _layout("--text")
    assert cp.returncode == 0, cp.stderr
    rooms = dict(line.split(": ", 1) for line in cp.stdout.splitlines() if " -> " not in line)
    assert "manager" in rooms["process"] and "portbase" in rooms["corba/"]
    arrows = [line.split(": ")[0] for line in cp.stdout.splitlines() if " -> " in line]
    assert "process -> core" in arrows
    assert not [a for a in arrows if a.endswith("-> components")], arrows


def test_the_picture_is_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "layout.png"
    cp = _layout("--out", str(out))
    assert cp.returncode == 0, cp.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 20000
