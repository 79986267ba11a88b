"""The shipped hrpsys-style system (compositions/hrpsys_nao.conf + hrpsys_nao.yaml):
started as a user starts it (scripts/run's manager with -f and only the naming
address changed), its SequencePlayer is `seq` at the naming root, where hrpsys's rtm.findRTC
looks, and the unchanged hrpsys-style client (tests/integration/hrpsys) drives it from
there."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from integration_support import (HOST, compile_hrpsys_stubs, naming_client, start_as_a_user,
                                 stubs)

pytestmark = pytest.mark.slow    # seconds per test: left out of scripts/test -m "not slow"

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent


@pytest.fixture
def hrpsys_system(naming, tmp_path):
    mp = start_as_a_user(["-f", str(ROOT / "compositions" / "hrpsys_nao.conf")], naming,
                         tmp_path, ["seq"], timeout=30)
    try:
        yield naming.port, naming_client(naming.port).resolve("seq.rtc")._narrow(
            stubs("RTC").RTObject)
    finally:
        mp.stop()


def test_hrpsys_client_finds_seq_at_the_naming_root(hrpsys_system, tmp_path):
    port, ref = hrpsys_system
    assert ref.get_component_profile().instance_name == "seq"
    with pytest.raises(Exception):          # not under the host context: at the root only
        naming_client(port).resolve(f"{HOST}.host_cxt/seq.rtc")
    out_dir = tmp_path / "stubs"
    out_dir.mkdir()
    compile_hrpsys_stubs(out_dir)
    rows = [[0.0] + [0.0] * 26, [0.05] + [0.1] * 26, [0.1] + [0.3] * 26]
    (tmp_path / "wave.pos").write_text("\n".join(" ".join(map(str, r)) for r in rows))
    res = subprocess.run([sys.executable, str(HERE / "hrpsys" / "hrpsys_client.py"),
                          str(out_dir), str(port), "", "seq", str(tmp_path / "wave")],
                         capture_output=True, text=True, timeout=90, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["instance_name"] == "seq" and out["version_ok"] and out["narrowed"]
    assert out["connect"] == "RTC_OK"
    for k in ("setJointAngles", "isEmpty_after_wait", "setJointAnglesOfGroup",
              "setJointAnglesSequence", "setInitialState"):
        assert out[k] is True, (k, out)
    for k in ("bad_length", "negative_tm", "unknown_joint", "setZmp_bad"):
        assert out[k] is False, (k, out)
