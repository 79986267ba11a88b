"""scripts/sequence_player_plot.py: records qRef while the sample pattern plays and writes a
PNG (skipped without matplotlib, an optional extra)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[3]


def _script():
    spec = importlib.util.spec_from_file_location(
        "sequence_player_plot", ROOT / "scripts" / "sequence_player_plot.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_records_the_pattern_sample_for_sample():
    mod = _script()
    names, data = mod.record(str(ROOT / "model" / "patterns" / "nao_wave"), 1.0, 0.01,
                             "hoffarbib")
    rec = np.loadtxt(ROOT / "model" / "patterns" / "nao_wave.pos")
    assert len(names) == 26
    total = 1.0 + rec[-1, 0] - rec[0, 0]
    assert len(data) == round(total / 0.01)
    for row in rec:                       # every record is reached exactly, at its time
        k = round((1.0 + row[0] - rec[0, 0]) / 0.01) - 1
        assert np.array_equal(data[k, 1:], row[1:])


@pytest.mark.slow
def test_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "seq.png"
    assert _script().main(["--out", str(out), "--joints", "RShoulderPitch,HeadYaw"]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
