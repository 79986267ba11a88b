"""Every script's --help reads as written: named as the user types it
(scripts/<name>), the whole description (not its first line cut mid-sentence), a help text
for every option, and no reference to a document outside the repository (a section of a
specification, a seed text)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(p.name for p in (ROOT / "scripts").iterdir()
                 if p.is_file() and os.access(p, os.X_OK) and p.suffix == ""
                 and p.name not in ("test", "bootstrap"))


def test_the_scripts_are_found():
    assert {"run", "sim_demo", "blending_demo", "motion_examples", "nao_sequence_demo",
            "controllers_demo", "dcm_chest_leds", "sequence_player_plot"} <= set(SCRIPTS)


@pytest.mark.parametrize("name", SCRIPTS)
def test_help_is_whole_and_self_contained(name):
    env = dict(os.environ, RTCF_VENV=str(Path(sys.executable).parent.parent), COLUMNS="100")
    cp = subprocess.run([str(ROOT / "scripts" / name), "--help"], capture_output=True,
                        text=True, timeout=120, env=env, stdin=subprocess.DEVNULL)
    text = cp.stdout
    assert cp.returncode == 0, cp.stdout + cp.stderr
    if name != "run":                                  # the manager is named rtcf, as rtcd
        assert text.startswith(f"usage: scripts/{name} "), text[:200]
    head, _, options = text.partition("\noptions:\n")
    description = head.split("\n\n", 1)[1].strip() if "\n\n" in head else ""
    assert description, text
    last = description.splitlines()[-1].strip()
    assert last.endswith((".", ")", ":")) or last.startswith("scripts/"), \
        f"{name}: the description ends mid-sentence: {last!r}"
    for bad in (r"\bspec \d", r"\bseed('s)?\b", r"\bthe spec's\b"):
        assert not re.search(bad, text, re.I), f"{name}: {bad!r} in --help:\n{text}"
    lines = options.splitlines()
    for i, line in enumerate(lines):                   # every option says what it does
        m = re.match(r"  (-\S.*?)(?:\s{2,}(\S.*))?$", line)
        if m and not m.group(2):
            following = lines[i + 1] if i + 1 < len(lines) else ""
            assert following.startswith(" " * 8) and not following.strip().startswith("-"), \
                f"{name}: option {m.group(1)!r} has no help text"
