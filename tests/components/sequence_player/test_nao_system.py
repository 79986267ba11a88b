"""The default composition (compositions/nao_dcm.yaml), built without an ORB and with its EC
made stepped: SequencePlayer0.qRef drives DCM0.qRef and DCM0.qCommand comes back as
SequencePlayer0.qInit, so a motion after idle starts from the held command."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from rtcf import rtcconf
from rtcf.composition import parse_composition
from rtcf.manager import Manager

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def system():
    data = yaml.safe_load((ROOT / "compositions" / "nao_dcm.yaml").read_text())
    for ec in data["execution_contexts"]:
        ec["kind"] = "stepped"
    conf = rtcconf.merge_conf(rtcconf.defaults(), {
        "manager.modules.load_path": str(ROOT / "components")})
    m = Manager(conf, corba=False)
    m.build(parse_composition(data, "nao_dcm.yaml"))
    yield m
    m.shutdown()


@pytest.mark.slow
def test_player_drives_the_dcm_and_reads_back_the_held_command(system):
    sp, dcm, ec = (system.components["SequencePlayer0"], system.components["DCM0"],
                   system.ecs["dcm"])
    assert sp.dt == pytest.approx(ec.period)
    ec.step(3)
    s = sp.service
    goal = np.zeros(26)
    goal[0] = 0.5                          # HeadYaw
    assert s.setJointAngles(goal.tolist(), 0.5)
    ec.step(60)
    assert s.isEmpty()
    assert dcm.cmd_out.value.data[0] == pytest.approx(0.5, abs=1e-12)
    assert sp.core.q_init[0] == pytest.approx(0.5, abs=1e-12)      # fed back
    ec.step(100)
    assert dcm.q_out.value.data[0] == pytest.approx(0.5, abs=0.01)  # the body followed
    # after idle, a one-joint motion starts from the held command: no jump back to zero
    assert s.setJointAngle("HeadPitch", 0.2, 0.2)
    ec.step(1)
    assert sp.core.q_ref[0] == pytest.approx(0.5, abs=1e-12)
    ec.step(30)
    assert list(dcm.cmd_out.value.data[:2]) == pytest.approx([0.5, 0.2], abs=1e-12)
