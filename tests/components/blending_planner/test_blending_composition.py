"""compositions/arm_blending.yaml builds, and a moveb streams the joint reference to the
driver stand-in (run here on a stepped EC instead of the file's periodic one)."""

from pathlib import Path

import numpy as np
import pytest
import yaml

from rtcf import rtcconf
from rtcf.composition import parse_composition
from rtcf.manager import Manager
from rtcf.ports import InPort, connect

pytest.importorskip("rtcf_components.kinematics.algorithms")

ROOT = Path(__file__).resolve().parents[3]


def test_arm_blending_composition_drives_the_driver():
    data = yaml.safe_load((ROOT / "compositions" / "arm_blending.yaml").read_text())
    for ec in data["execution_contexts"]:
        ec["kind"] = "stepped"
    conf = rtcconf.merge_conf(rtcconf.defaults(),
                              {"manager.modules.load_path": str(ROOT / "components")})
    m = Manager(conf, corba=False)
    m.build(parse_composition(data, "arm_blending.yaml"))
    try:
        bp, driver = m.components["BlendingPlanner0"], m.components["driver"]
        kin = m.components["Kinematics0"]
        reader = InPort("armPose", kin.port("armPose").data_type)    # armPose has a reader
        connect(kin.port("armPose"), reader, {"subscription_type": "flush"})
        tcp_reader = InPort("tcpPose", bp.port("tcpPose").data_type)   # and tcpPose
        connect(bp.port("tcpPose"), tcp_reader, {"subscription_type": "flush"})
        ec = m.ecs["arm"]
        ec.step(2)
        core = bp.service.core
        seg = [[0, 0, -50, 0, 0, 0] + [0.0] * 6 + [0, 0]]
        assert core.move_blending(seg, 1, [100, -10000], [400, -10000], 0, 101, 1, 1), \
            core.last_error()
        before = driver.received
        steps = 0
        while bp.motion is not None:
            ec.step()
            steps += 1
        assert driver.received - before >= steps
        q_end = driver.last
        p, _ = bp.arm.tcp_pose(q_end)
        assert np.linalg.norm(p - np.array(core.tcp_pose()[:3])) < 0.2
        # Kinematics0 (same cycle, after the planner) gives the flange pose of qRef: with
        # tcp_offset 0 it is the TCP pose the planner wrote, within the IK tolerance
        reader.read_newest()
        arm_pose = reader.value.data
        tcp_reader.read_newest()
        tcp = tcp_reader.value.data
        for a, b in ((arm_pose.position.x, tcp.position.x), (arm_pose.position.y,
                     tcp.position.y), (arm_pose.position.z, tcp.position.z)):
            assert abs(a - b) < 2e-4
    finally:
        m.shutdown()
