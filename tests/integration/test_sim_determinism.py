"""Determinism at the composition level: compositions/nao_sim.yaml and arm_sim.yaml, each run
twice by the manager as a user runs it (its own process, CORBA, ``--duration`` in simulated
seconds, real-time factor 0 from -o), give bit-identical sensor logs (the SampleLoggers'
.npz: measured joints, IMU and FSR values, their time stamps)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.slow    # seconds per test: left out of scripts/test -m "not slow"

pytest.importorskip("mujoco")

ROOT = Path(__file__).resolve().parents[2]


def run_once(folder: Path, ns_port: int, composition: str, seconds: float) -> None:
    folder.mkdir()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "rtcf.manager", str(ROOT / "compositions" / composition),
           "--quiet", "--duration", str(seconds),
           "-o", f"corba.nameservers:localhost:{ns_port}",
           "-o", f"manager.modules.load_path:{ROOT / 'components'}",
           "-o", "rtcf.simulation.real_time_factor:0"]
    done = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True,
                          timeout=180, start_new_session=True)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "real-time factor" in done.stdout + done.stderr       # it ran in simulation time


def logs(folder: Path, names: list[str]) -> dict[str, tuple[bytes, bytes, int]]:
    out = {}
    for n in names:
        with np.load(folder / "log" / n) as d:
            out[n] = (d["t"].tobytes(), d["data"].tobytes(), len(d["t"]))
    return out


def test_nao_sim_twice_gives_bit_identical_sensor_logs(naming, tmp_path):
    names = ["nao_sim_q.npz", "nao_sim_sensors.npz"]
    run_once(tmp_path / "a", naming.port, "nao_sim.yaml", 3.0)
    run_once(tmp_path / "b", naming.port, "nao_sim.yaml", 3.0)
    a, b = logs(tmp_path / "a", names), logs(tmp_path / "b", names)
    for n in names:
        assert a[n][2] >= 299                    # 3 s at 100 Hz were logged
        assert a[n] == b[n], f"{n} differs between the two runs"


def test_arm_sim_twice_gives_bit_identical_joint_logs(naming, tmp_path):
    names = ["arm_sim_q.npz"]
    run_once(tmp_path / "a", naming.port, "arm_sim.yaml", 1.0)
    run_once(tmp_path / "b", naming.port, "arm_sim.yaml", 1.0)
    a, b = logs(tmp_path / "a", names), logs(tmp_path / "b", names)
    assert a["arm_sim_q.npz"][2] >= 999                 # 1 s at 1 kHz
    assert a == b
