"""scripts/dsr_figures: the DRL program on arm_sim (scripts/run on a free naming port,
stopped at the end) and the measured arm against what each call asked for: movel
straight within 1 mm at 100 mm/s +- 2 %, movec on its circle, movej's joints together with
the leading one at vel and on target within 0.1 deg, stop(DR_QSTOP) to rest within the
documented distance. Simulated time: the numbers do not depend on the machine's speed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow    # a MuJoCo arm_sim process for ~30 s
def test_the_drl_motions_on_the_simulated_arm(tmp_path):
    pytest.importorskip("matplotlib")
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "dsr_figures.py"), "--out",
                           str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    m = json.loads((tmp_path / "metrics.json").read_text())
    assert m["movej"]["sync"] < 1e-9
    assert m["movej"]["lead_peak"] == pytest.approx(60.0, rel=1e-6)
    assert m["movej"]["arrive_ref_deg"] < 1e-6 and m["movej"]["arrive_meas_deg"] < 0.1
    assert m["movel"]["off_line_mm"] < 1.0
    assert 98.0 <= m["movel"]["cruise_min"] and m["movel"]["cruise_max"] <= 102.0
    assert m["movec"]["radial_mm"] < 1.0 and m["movec"]["plane_mm"] < 1.0
    assert m["stop"]["ref_mm"] == pytest.approx(m["stop"]["documented_mm"], abs=0.2)
    assert m["stop"]["meas_mm"] < m["stop"]["documented_mm"] + 1.0
    assert m["blend"]["end_mm"] < 1e-3 and m["blend"]["corner_mm"] < 40.0
    assert m["current_minus_desired_deg"] < 0.1
    for name in ("dsr_movej.png", "dsr_movel.png", "dsr_movec.png", "dsr_stop.png"):
        assert (tmp_path / name).stat().st_size > 10000
