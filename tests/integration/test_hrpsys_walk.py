"""The hrpsys way: the walking NAO started as a user starts it
(scripts/run's manager with -f compositions/hrpsys_walk.conf, only the naming address
changed, simulation flat out), and scripts/hrpsys_walk.py run with stubs compiled from
hrpsys's own declarations (tests/integration/hrpsys: nothing of rtcf's): it finds abc and st
at the naming root, starts the AutoBalancer and the Stabilizer as hrpsys_config.py does and
walks with goPos + waitFootSteps."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from integration_support import compile_hrpsys_stubs, start_as_a_user

pytest.importorskip("mujoco")

pytestmark = pytest.mark.slow          # seconds of simulated walking

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def walk_system(naming, tmp_path):
    mp = start_as_a_user(["-f", str(ROOT / "compositions" / "hrpsys_walk.conf"),
                          "-o", "rtcf.simulation.real_time_factor:0"], naming, tmp_path,
                         ["st"], timeout=60)
    try:
        yield naming.port, mp
    finally:
        mp.stop()


def test_hrpsys_config_style_client_walks_the_nao(walk_system, tmp_path):
    port, mp = walk_system
    out_dir = tmp_path / "stubs"
    out_dir.mkdir()
    compile_hrpsys_stubs(out_dir, "AutoBalancerService.idl", "StabilizerService.idl")
    res = subprocess.run([sys.executable, str(ROOT / "scripts" / "hrpsys_walk.py"),
                          "--stubs", str(out_dir), "--nameserver", f"localhost:{port}",
                          "--x", "0.2"], capture_output=True, text=True, timeout=300,
                         cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr + mp.log()
    out = json.loads(res.stdout.strip().splitlines()[-1])
    print("\n" + res.stdout)
    assert out["startAutoBalancer"] is True and out["goPos"] is True
    assert out["setAutoBalancerParam"] is True and out["abc_mode"] == "MODE_IDLE"
    assert out["st_mode"] == "MODE_ST"
    assert out["stride_parameter"] == [0.04, 0.04, 20.0, 0.04, 0.012, 5.0]
    assert out["planned_steps"] == 6 and out["remaining"] == 0
    assert abs(out["feet_middle"][0] - 0.2) < 1e-6
