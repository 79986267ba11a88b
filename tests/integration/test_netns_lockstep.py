"""Lockstep across hosts: a simulation whose Simulator is on host A and
whose controller manager is on host B, two network namespaces joined by a veth pair (as
tests/integration/test_netns.py makes them), one naming service on A. The manager on B is
started by hand with --process; it finds the launcher's time base in the naming service and
joins it; every instant the launcher steps B's part over the veth. The joint log on A is
the one the same composition gives in one process, bit for bit.

Skips with the reason when network namespaces cannot be made here."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from test_netns import (A_IP, B_IP, _start, _stop, _wait_listening,  # noqa: F401
                       two_hosts)                                     # (the fixture)

ROOT = Path(__file__).resolve().parents[2]
pytest.importorskip("mujoco")

CONTROLLERS = """
controllers:
  hold:
    type: JointPositionController
    joints: [joint1, joint2, joint3, joint4, joint5, joint6]
    kp: 1.0
    setpoint: [0.3, 0.0, 1.5707963, 0.0, 1.5707963, 0.0]
load: [hold]
start: [hold]
"""

COMPOSITION = """
name: arm_two_hosts
simulation: {{real_time_factor: 0}}
components:
  - {{type: ControllerManager, module: controller_manager, {placement}
     params: {{hardware: ports, model: doosan_m1013.yaml, controller_config: {ctl}}}}}
  - {{type: Simulator, module: simulator,
     params: {{model: m1013, stiffness: 1.0, initial_q: [0, 0, 1.5707963, 0, 1.5707963, 0]}}}}
  - {{type: SampleLogger, module: logger, name: qLog, params: {{path: {log}}}}}
connections:
  - {{from: Simulator0.q, to: ControllerManager0.q, subscription_type: flush}}
  - {{from: ControllerManager0.qRef, to: Simulator0.qRef, subscription_type: flush}}
  - {{from: Simulator0.q, to: qLog.in, subscription_type: flush}}
execution_contexts:
  - {{name: arm, kind: periodic, rate: 100, members: [ControllerManager0, Simulator0, qLog]}}
processes:
  main: {{}}
  b: {{host: host-b}}
"""


def _write(tmp: Path, name: str, placement: str) -> tuple[Path, Path]:
    ctl = tmp / "ctl.yaml"
    ctl.write_text(CONTROLLERS)
    log = tmp / f"{name}.npz"
    path = tmp / f"{name}.yaml"
    path.write_text(COMPOSITION.format(placement=placement, ctl=ctl, log=log))
    return path, log


def _logged(path: Path) -> tuple[np.ndarray, np.ndarray]:
    with np.load(path) as d:
        return d["t"].copy(), d["data"].copy()


def test_simulator_on_host_a_controller_manager_on_host_b(two_hosts, tmp_path):  # noqa: F811
    a, b = two_hosts
    from rtcf.corba.naming import _omninames_command
    port = 2809
    split, split_log = _write(tmp_path, "split", "process: b,")
    one, one_log = _write(tmp_path, "one", "")
    logdir = tmp_path / "names"
    logdir.mkdir()
    names = _start(a, [*_omninames_command(), "-start", str(port), "-logdir", str(logdir),
                       "-ORBendPoint", f"giop:tcp:{A_IP}:{port}"], tmp_path / "names.log")
    procs = [names]
    common = ["-o", f"corba.nameservers:{A_IP}:{port}", "-o",
              "exec_cxt.periodic.sched_fifo:NO", "--quiet"]
    try:
        _wait_listening(a, A_IP, port)
        # host B first, by hand: it waits for the launcher's time base to appear
        remote = _start(b, [sys.executable, "-m", "rtcf.manager", str(split), "--process",
                            "b", "-o", f"corba.endpoints:{B_IP}", *common], tmp_path / "b.log")
        procs.append(remote)
        launcher = _start(a, [sys.executable, "-m", "rtcf.manager", str(split),
                              "--duration", "2", "-o", f"corba.endpoints:{A_IP}", *common],
                          tmp_path / "a.log")
        procs.append(launcher)
        launcher.wait(120)
        remote.wait(60)
        a_log = (tmp_path / "a.log").read_text()
        b_log = (tmp_path / "b.log").read_text()
        assert launcher.returncode == 0, a_log[-3000:]
        assert remote.returncode == 0, b_log[-3000:]
        assert "process b joined the lockstep simulation (arm)" in a_log, a_log[-3000:]
        assert "lockstep: 200 steps to 1 other process (b)" in a_log, a_log[-3000:]
        assert "the leader ended the lockstep run" in b_log, b_log[-3000:]
        # the same composition in one process (on host A) logs the same joints
        single = _start(a, [sys.executable, "-m", "rtcf.manager", str(one), "--duration",
                            "2", "-o", f"corba.endpoints:{A_IP}", *common],
                        tmp_path / "one.log")
        procs.append(single)
        single.wait(120)
        assert single.returncode == 0, (tmp_path / "one.log").read_text()[-3000:]
    finally:
        for p in reversed(procs):
            _stop(p)
    t_split, q_split = _logged(split_log)
    t_one, q_one = _logged(one_log)
    assert len(t_split) == 200
    assert q_split[-1, 0] == pytest.approx(0.3, abs=0.02)      # joint1 went to the setpoint
    assert t_split.tobytes() == t_one.tobytes() and q_split.tobytes() == q_one.tobytes()
