"""The SequencePlayer in a manager process, driven by an hrpsys-style client in a third process
that imports no rtcf: its stubs are compiled here, with omniidl, from an IDL holding only
hrpsys-base's SequencePlayerService declarations (tests/integration/hrpsys/) plus the
standard RTC IDL, and it finds the service the way hrpsys's rtm.py does (naming, version,
provided interface service0, lone-port connect, IOR from the first connector property)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from integration_support import compile_hrpsys_stubs

pytestmark = pytest.mark.slow    # seconds per test: left out of scripts/test -m "not slow"

HOST = socket.gethostname()

HERE = Path(__file__).resolve().parent
N = 26

COMPOSITION = """\
name: seq_only
components:
  - {type: SequencePlayer, module: sequence_player, name: seq, params: {dt: 0.01}}
execution_contexts:
  - {name: e, kind: periodic, rate: 100, members: [seq]}
activate: all
"""



def test_unchanged_hrpsys_client_drives_the_player(launch, it, probe, tmp_path):
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    compile_hrpsys_stubs(stubs)
    pattern = tmp_path / "wave"
    rows = [[0.0] + [0.0] * N, [0.05] + [0.1] * N, [0.1] + [0.3] * N]
    (tmp_path / "wave.pos").write_text("\n".join(" ".join(map(str, r)) for r in rows))
    mp = launch(COMPOSITION, "seq", "exec_cxt.periodic.sched_fifo:NO")
    p = probe()
    it.connect_ports(mp.port("seq", "qRef"), p.ref, subscription_type="flush")
    res = subprocess.run([sys.executable, str(HERE / "hrpsys" / "hrpsys_client.py"),
                          str(stubs), str(mp.ns_port), HOST, "seq", str(pattern)],
                         capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert res.returncode == 0, res.stderr + mp.log()
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["instance_name"] == "seq" and out["version"] == "315.12.1"
    assert out["version_ok"] and out["found_port"] and out["narrowed"]
    assert out["connect"] == "RTC_OK"
    expected_true = ["setJointAngles", "isEmpty_after_wait", "setJointAngle", "addJointGroup",
                     "setJointAnglesOfGroup", "waitInterpolationOfGroup", "group_isEmpty",
                     "setInterpolationMode", "setBasePos", "setJointAnglesSequence",
                     "setInitialState", "removeJointGroup", "setInterpolationMode_back"]
    expected_false = ["isEmpty_moving", "bad_length", "negative_tm", "unknown_joint",
                      "addJointGroup_again", "setZmp_bad", "setTargetPose_unreachable",
                      "setJointAnglesSequenceFull_bad", "isEmpty_pattern"]
    assert {k: out[k] for k in expected_true} == dict.fromkeys(expected_true, True), out
    assert {k: out[k] for k in expected_false} == dict.fromkeys(expected_false, False), out
    # what the player wrote: the pose reached exactly, then the group, then the pattern
    p.wait_count(100, timeout=5.0)
    seen = np.array(p.recent(2000))
    assert np.any(np.all(seen[:, [0, 2]] == [0.5, 1.2], axis=1))
    assert np.any(np.all(seen[:, [0, 1]] == [-0.4, 0.1], axis=1))
    assert np.any(np.all(seen[:, 2:] == 0.3, axis=1))           # the pattern's last record
    assert "setTargetPose('head') refused" in mp.log()
    assert mp.alive()
