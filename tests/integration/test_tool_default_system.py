"""The tools against the default composition (compositions/nao_dcm.yaml): the snapshot
matches the composition, and rtcf-record --all records every out port, every message
decodes, and DCM0.q's recorded values are those a second reader of the port received."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

pytestmark = pytest.mark.slow    # seconds per test: left out of scripts/test -m "not slow"

ROOT = Path(__file__).resolve().parents[2]
COMP = ROOT / "compositions" / "nao_dcm.yaml"
NAMES = ["SequencePlayer0", "DCM0", "sensors", "Kinematics0"]


@pytest.fixture(scope="module")
def default_system(module_launch):
    return module_launch(COMP, NAMES)


def test_snapshot_matches_the_composition(default_system):
    from rtcf.tools.session import Session
    snap = Session([f"localhost:{default_system.ns_port}"]).snapshot()
    spec = yaml.safe_load(COMP.read_text())
    comps = {c.name: c for c in snap.components}
    assert set(NAMES) <= set(comps)
    assert all(comps[n].state == "ACTIVE" for n in NAMES)
    want = {(c["from"], c["to"]) for c in spec["connections"]}
    got = {tuple(k.ports) for k in snap.connections()}
    assert want <= got
    ec = snap.ec(comps["SequencePlayer0"].owned_ecs[0]) or \
        snap.ec(comps["SequencePlayer0"].participating_ecs[0])
    assert ec.members == spec["execution_contexts"][0]["members"]
    assert ec.rate == spec["execution_contexts"][0]["rate"]


def test_record_all_of_the_default_system(default_system, tmp_path):
    from rtcf.tools.mcapio import decode_message, open_recording
    from rtcf.tools.session import Session
    from rtcf.tools.tap import SampleQueue, Tap
    ns = f"localhost:{default_system.ns_port}"
    s = Session([ns])
    snap = s.snapshot()
    outs = {p.full_name for c in snap.components if c.name in NAMES for p in c.ports
            if p.direction == "out"}
    q = SampleQueue(10000)
    tap = Tap(s, s.port("DCM0:q", "out"), q)          # a second reader of DCM0.q
    out = tmp_path / "default.mcap"
    env = {k: v for k, v in os.environ.items() if k != "RTCTREE_NAMESERVERS"}
    try:
        cp = subprocess.run([str(Path(sys.executable).parent / "rtcf-record"), "-n", ns,
                             "--all", "-o", str(out), "--duration", "2", "-q"],
                            capture_output=True, text=True, timeout=60, env=env)
    finally:
        tap.close()
    assert cp.returncode == 0, cp.stderr
    seen = {}
    for _k, _t, data in q.drain():
        smp = tap.decode(data)
        seen[(smp.tm.sec, smp.tm.nsec)] = smp.data.copy()
    with open_recording(str(out)) as rec:
        assert outs <= set(rec.channels)
        # 2 s of the ports written every cycle at 100 Hz (the player's other outputs are
        # written only while a motion plays): 200 samples each on a quiet machine, fewer on
        # a loaded one; ten is what any machine that runs the system gives
        for topic in ("DCM0.q", "DCM0.qCommand", "Kinematics0.lArmPose",
                      "Kinematics0.headPose"):
            assert rec.channels[topic].count >= 10, topic
        matched = 0
        for ch, log_time, pub, data in rec.messages():
            smp = decode_message(ch.message_encoding, ch.cls, data)
            assert pub == smp.tm.sec * 1_000_000_000 + smp.tm.nsec
            if ch.topic == "DCM0.q" and (smp.tm.sec, smp.tm.nsec) in seen:
                assert np.array_equal(smp.data, seen[(smp.tm.sec, smp.tm.nsec)])
                matched += 1
    assert matched >= 10


def test_record_max_rate_decimates_at_the_writer(default_system, tmp_path):
    """--max-rate 10 on a 100 Hz port: about 10 messages a second, each a sample the port
    wrote (stamps on the EC's 10 ms grid, no repeats)."""
    from rtcf.tools.mcapio import open_recording
    ns = f"localhost:{default_system.ns_port}"
    out = tmp_path / "slow.mcap"
    env = {k: v for k, v in os.environ.items() if k != "RTCTREE_NAMESERVERS"}
    cp = subprocess.run([str(Path(sys.executable).parent / "rtcf-record"), "-n", ns,
                         "DCM0:q", "-o", str(out), "--duration", "2", "--max-rate", "10",
                         "-q"], capture_output=True, text=True, timeout=60, env=env)
    assert cp.returncode == 0, cp.stderr
    with open_recording(str(out)) as rec:
        n = rec.channels["DCM0.q"].count
        stamps = [pub for _c, _l, pub, _d in rec.messages()]
    # at most two sends a period (the writer's periodic publisher catches up once after a
    # late wake-up) in the 2 s: 41, where the 100 Hz writer gives ~200 undecimated
    assert 1 <= n <= 2 * 2 * 10 + 1, n
    assert len(set(stamps)) == len(stamps)
