"""scripts/sim_demo: the wave on the MuJoCo NAO and the blended square on the M1013, drawn
as filmstrips (MuJoCo's offscreen renderer, OSMesa) and tracking plots (matplotlib)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[3]
NAMES = ("nao_filmstrip.png", "nao_tracking.png", "arm_filmstrip.png", "arm_tracking.png")


def _pixels(path: Path) -> np.ndarray:
    from matplotlib import image
    return image.imread(str(path))[..., :3]


@pytest.mark.slow
def test_the_demo_writes_filmstrips_and_plots_of_both_robots(tmp_path):
    pytest.importorskip("matplotlib")
    env = dict(os.environ, PYTHONPATH=str(ROOT),
               RTCF_CWD=str(tmp_path))
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "sim_demo.py"),
                           "--out", "pics"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    out = tmp_path / "pics"
    if "no filmstrips" in done.stderr:          # no OSMesa and no way to install it here
        written = [n for n in NAMES if "tracking" in n]
        missing_film = done.stderr.strip().splitlines()[-1]
    else:
        written, missing_film = list(NAMES), ""
    for name in written:
        img = _pixels(out / name)
        assert img.shape[0] > 200 and img.shape[1] > 400, name
        # a picture, not a blank page: many distinct grey levels and real contrast
        assert img.std() > 0.05, f"{name} looks blank (std {img.std():.3f})"
    if "filmstrip" in " ".join(written):
        film = _pixels(out / "nao_filmstrip.png")
        h = film.shape[0]
        # the robot is drawn: the frames of the strip differ from each other (it moves)
        left, right = film[h // 4:h // 2, : film.shape[1] // 6], film[h // 4:h // 2, -film.shape[1] // 6:]
        assert np.abs(left - right).mean() > 0.005
    if missing_film:
        pytest.skip(f"filmstrips not rendered: {missing_film}")
