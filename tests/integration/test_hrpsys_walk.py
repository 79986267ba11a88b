"""The hrpsys way: the walking NAO started as a user starts it
(scripts/run's manager with -f compositions/hrpsys_walk.conf, only the naming address
changed, simulation flat out), and scripts/hrpsys_walk.py run with stubs compiled from
hrpsys's own declarations (tests/integration/hrpsys: nothing of rtcf's): it finds abc and st
at the naming root, starts the AutoBalancer and the Stabilizer as hrpsys_config.py does and
walks with goPos + waitFootSteps."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from integration_support import ManagerProcess, naming_client, stubs

pytest.importorskip("mujoco")

pytestmark = pytest.mark.slow          # seconds of simulated walking

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent


def compile_hrpsys_walk_stubs(out: Path) -> None:
    from rtcf.corba.idl import standard_idl_dir
    std = standard_idl_dir()
    omniidl = Path(sys.executable).parent / "omniidl"
    files = sorted(str(p) for p in std.glob("*.idl"))
    files += [str(HERE / "hrpsys" / "AutoBalancerService.idl"),
              str(HERE / "hrpsys" / "StabilizerService.idl")]
    res = subprocess.run([str(omniidl), "-bpython", f"-C{out}", f"-I{std}",
                          f"-I{HERE / 'hrpsys'}", *files],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr


@pytest.fixture
def walk_system(naming, tmp_path):
    log_path = tmp_path / "manager.log"
    log = open(log_path, "wb")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.Popen([sys.executable, "-m", "rtcf.manager", "--quiet",
                             "-f", str(ROOT / "compositions" / "hrpsys_walk.conf"),
                             "-o", f"corba.nameservers:localhost:{naming.port}",
                             "-o", "rtcf.simulation.real_time_factor:0",
                             "-o", "exec_cxt.periodic.sched_fifo:NO"],
                            cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT, env=env,
                            start_new_session=True)
    log.close()
    mp = ManagerProcess(proc, log_path, naming.port, ROOT / "compositions" / "hrpsys_walk.yaml")
    RTC = stubs("RTC")
    deadline = time.monotonic() + 60
    try:
        while True:
            assert mp.alive(), mp.log()
            try:
                ref = naming_client(naming.port).resolve("st.rtc")._narrow(RTC.RTObject)
                if ref is not None and not ref._non_existent():
                    break
            except Exception:
                pass
            assert time.monotonic() < deadline, mp.log()
            time.sleep(0.2)
        yield naming.port, mp
    finally:
        mp.stop()


def test_hrpsys_config_style_client_walks_the_nao(walk_system, tmp_path):
    port, mp = walk_system
    out_dir = tmp_path / "stubs"
    out_dir.mkdir()
    compile_hrpsys_walk_stubs(out_dir)
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
