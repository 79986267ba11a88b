"""scripts/walk_demo: the NAO walks a (small) square with moveTo through the NAOqi component
and the demo draws it (plots: the top view, the torso, joint tracking, the structure)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PLOTS = ("walk_top.png", "walk_torso.png", "walk_tracking.png", "walk_structure.png")


@pytest.mark.slow
def test_the_demo_walks_a_square_and_draws_it(tmp_path):
    pytest.importorskip("matplotlib")
    pytest.importorskip("mujoco")
    from matplotlib import image
    env = dict(os.environ, PYTHONPATH=str(ROOT), RTCF_CWD=str(tmp_path))
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "walk_demo.py"),
                           "--out", "pics", "--side", "0.1", "--no-film"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "fell: False" in done.stdout
    for name in PLOTS:
        img = image.imread(str(tmp_path / "pics" / name))[..., :3]
        assert img.shape[0] > 300 and img.shape[1] > 500, name
        assert img.std() > 0.05, f"{name} looks blank"
