"""OpenRTM components in the loop: an OpenRTM-aist-style component started
on its own, owning an OpenRTM::ExtTrigExecutionContextService as OpenRTM-aist-Python's
OpenHRPExecutionContext / SynchExtTriggerEC does (the suite's independent peer,
openrtm_peer.py, which loads no rtcf), is named in a simulation composition as an
``external`` member and ticked in lockstep: once per instant, in the declared order, its
output reaching the next member within the same instant; it is activated before simulated
time starts and deactivated at the end; one that owns no ExtTrig EC is refused before time
starts; one that dies mid-run ends the run naming it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import naming_client
from test_lockstep import _cmd, _env, _ns, _rows
from test_openrtm_peer import PeerProcess

pytestmark = pytest.mark.slow

COMPOSITION = """
name: exttick
simulation: {{real_time_factor: {factor}}}
components:
  - {{type: StepWriter, module: steplog, name: w, params: {{path: {d}/w.npz}}}}
  - {{name: Ctrl0, external: {rtc}}}
  - {{type: StepReader, module: steplog, name: r, params: {{path: {d}/r.npz}}}}
connections:
  - {{from: w.out, to: Ctrl0.in}}
  - {{from: Ctrl0.out, to: r.in}}
execution_contexts:
  - {{name: sense, kind: periodic, rate: 100, members: [w]}}
  - {{name: control, kind: periodic, rate: 100, members: [Ctrl0]}}
  - {{name: act, kind: periodic, rate: 100, members: [r]}}
"""

RTC_PATH = "peer.host_cxt/Ctrl0.rtc"


@pytest.fixture
def peer(tmp_path, naming):
    p = PeerProcess(tmp_path)
    yield p
    p.close()
    # the naming service is the session's: a killed peer's name would show in other tests
    naming_client(naming.port).unbind(RTC_PATH)


def _write(tmp_path: Path, factor: float = 0, rtc: str = RTC_PATH) -> Path:
    path = tmp_path / "exttick.yaml"
    path.write_text(COMPOSITION.format(factor=factor, d=tmp_path, rtc=rtc))
    return path


def _bind(peer: PeerProcess, naming, ec: str | None = "OpenHRPExecutionContext") -> None:
    args = {"ns": f"127.0.0.1:{naming.port}", "context": "peer.host_cxt", "rtc": "Ctrl0"}
    if ec:
        args["ec"] = ec
    peer.cmd("rtobject", **args)


def test_an_openrtm_component_is_ticked_once_per_instant_in_the_declared_order(
        naming, peer, tmp_path):
    _bind(peer, naming)
    done = subprocess.run(_cmd(_write(tmp_path), naming.port, "--duration", "1"),
                          cwd=tmp_path, env=_env(), capture_output=True, text=True,
                          timeout=120)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-4000:]
    w, r = _rows(tmp_path / "w.npz"), _rows(tmp_path / "r.npz")
    k = np.arange(100)
    assert np.array_equal(w[:, 0], k / 100) and np.array_equal(r[:, 0], k / 100)
    ticks = peer.cmd("ticks")
    # activated with a tick of its own before time started (one cycle, nothing read yet),
    # then one tick per instant; deactivated at the end (no cycle: not active any more)
    assert ticks["activated"] == 1 and ticks["deactivated"] == 1
    assert ticks["executed"] == 1 + 100
    rows = ticks["ticks"]
    assert rows[0][2:] == [-1, -1]
    got = np.array([s + n * 1e-9 for _, _, s, n in rows[1:]])
    # each tick took the sample w wrote at that instant (w ran before it) ...
    assert np.array_equal(_ns(got), _ns(k / 100))
    # ... and r, after it at the same instant, read what the component wrote then
    assert np.array_equal(_ns(r[:, 1]), _ns(r[:, 0]))
    assert "lockstep: 100 steps to 1 other process (external Ctrl0)" in out


def test_an_external_member_without_an_exttrig_context_is_refused_before_time_starts(
        naming, peer, tmp_path):
    _bind(peer, naming, ec=None)          # an RTObject that owns no execution context
    done = subprocess.run(_cmd(_write(tmp_path), naming.port, "--duration", "1"),
                          cwd=tmp_path, env=_env(), capture_output=True, text=True,
                          timeout=120)
    out = done.stdout + done.stderr
    assert done.returncode == 2, out[-4000:]
    assert "external component 'Ctrl0' owns no OpenRTM::ExtTrigExecutionContextService" in out
    assert "components[1].external" in out
    assert not (tmp_path / "w.npz").exists() or _rows(tmp_path / "w.npz").shape[0] == 0


def test_an_external_member_not_found_is_refused(naming, tmp_path):
    done = subprocess.run(_cmd(_write(tmp_path, rtc="nobody.host_cxt/Ctrl0.rtc"),
                               naming.port, "--duration", "1"),
                          cwd=tmp_path, env=_env(), capture_output=True, text=True,
                          timeout=120)
    out = done.stdout + done.stderr
    assert done.returncode == 2, out[-4000:]
    assert "external component 'Ctrl0' not found or not answering" in out


def test_an_external_member_that_dies_ends_the_run_naming_it(naming, peer, tmp_path):
    _bind(peer, naming)
    log = open(tmp_path / "launcher.log", "wb")
    proc = subprocess.Popen(_cmd(_write(tmp_path, factor=1.0), naming.port,
                                 "--duration", "60"),
                            cwd=tmp_path, env=_env(), stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    log.close()
    try:
        deadline = time.monotonic() + 60
        while peer.cmd("ticks")["executed"] < 20:
            assert proc.poll() is None, (tmp_path / "launcher.log").read_text()[-3000:]
            assert time.monotonic() < deadline
            time.sleep(0.05)
        os.killpg(peer.proc.pid, signal.SIGKILL)
        code = proc.wait(60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    out = (tmp_path / "launcher.log").read_text()
    assert code == 1, out[-3000:]
    assert "lockstep: process 'external Ctrl0' (execution context 'control') failed" in out
