"""Every RTC owns an execution context, tried as hrpsys and rtshell users
try it: hrpsys-base's rtm.py (its CORBA calls in its order, tests/integration/hrpsys/
rtm_calls.py) finds, stops, starts and checks every component of the shipped hrpsys system,
of the same system with ``seq`` last in its EC, and of nao_sim in simulation time; rtshell's
rtact / rtdeact / rtcat act on a later member of a shared EC through its owned context."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from integration_support import HOST, compile_hrpsys_stubs, start_as_a_user

pytestmark = pytest.mark.slow    # seconds per test: left out of scripts/test -m "not slow"

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
HRPSYS_NAMES = ["seq", "DCM0", "sensors", "Kinematics0"]
NAO_SIM_NAMES = ["SequencePlayer0", "DCM0", "Kinematics0", "qLog", "sensorLog"]


@pytest.fixture(scope="module")
def rtc_stubs(tmp_path_factory):
    out = tmp_path_factory.mktemp("rtm_stubs")
    compile_hrpsys_stubs(out)
    return out


def _rtm(stub_dir: Path, port: int, host: str, names: list[str], cwd: Path) -> dict:
    res = subprocess.run([sys.executable, str(HERE / "hrpsys" / "rtm_calls.py"),
                          str(stub_dir), str(port), host, *names],
                         capture_output=True, text=True, timeout=120, cwd=cwd)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout.strip().splitlines()[-1])


def _check(out: dict, names: list[str], first: str) -> None:
    for name in names:
        row = out[name]
        assert row["found"], (name, out)                 # findRTC no longer returns None
        assert row["owned"] == 1, (name, row)            # get_owned_contexts()[0] exists
        assert row["active_at_start"], (name, row)
        assert row["stop"] == ["RTC_OK", True] and row["inactive_after_stop"], (name, row)
        assert row["start"] == ["RTC_OK", True] and row["active_after_start"], (name, row)
        assert row["owned_state"] == "ACTIVE_STATE", (name, row)
        if name == first:        # it owns the shared EC, participates in none
            assert row["participating"] == 0 and row["ec_is_owned"], (name, row)
        else:                    # rtm.py uses the EC it participates in, as in OpenRTM
            assert row["participating"] == 1 and not row["ec_is_owned"], (name, row)
    # hrpsys_config.activateComps: all run in one EC already
    assert out["_serialize"] == ["already serialized"] * (len(names) - 1), out
    assert out["_all_active"], out


def test_rtm_py_on_the_shipped_hrpsys_system(naming, tmp_path, rtc_stubs):
    mp = start_as_a_user(["-f", str(ROOT / "compositions" / "hrpsys_nao.conf")], naming, tmp_path,
                HRPSYS_NAMES, "")
    try:
        out = _rtm(rtc_stubs, naming.port, "", HRPSYS_NAMES, tmp_path)
        _check(out, HRPSYS_NAMES, "seq")
    finally:
        mp.stop()


def test_rtm_py_when_seq_is_not_the_first_member(naming, tmp_path, rtc_stubs):
    comp = yaml.safe_load((ROOT / "compositions" / "hrpsys_nao.yaml").read_text())
    members = comp["execution_contexts"][0]["members"]
    comp["execution_contexts"][0]["members"] = members[1:] + members[:1]   # seq last
    path = tmp_path / "seq_last.yaml"
    path.write_text(yaml.safe_dump(comp))
    mp = start_as_a_user([str(path), "-f", str(ROOT / "compositions" / "hrpsys_nao.conf")], naming,
                tmp_path, HRPSYS_NAMES, "")
    try:
        out = _rtm(rtc_stubs, naming.port, "", HRPSYS_NAMES, tmp_path)
        _check(out, HRPSYS_NAMES, "DCM0")
    finally:
        mp.stop()


def test_rtm_py_on_nao_sim_in_simulation_time(naming, tmp_path, rtc_stubs):
    mp = start_as_a_user([str(ROOT / "compositions" / "nao_sim.yaml")], naming, tmp_path,
                NAO_SIM_NAMES, HOST)
    try:
        out = _rtm(rtc_stubs, naming.port, HOST, NAO_SIM_NAMES, tmp_path)
        _check(out, NAO_SIM_NAMES, "SequencePlayer0")
    finally:
        mp.stop()


SHARED = """
name: shared
components:
  - {type: SineGenerator, module: examples, name: owng}
  - {type: Recorder, module: examples, name: ownr1}
  - {type: Recorder, module: examples, name: ownr2}
connections:
  - {from: owng.out, to: ownr1.in, subscription_type: flush}
execution_contexts:
  - {name: main, kind: periodic, rate: 50, members: [owng, ownr1, ownr2]}
activate: [owng, ownr1]
"""


def test_rtshell_on_a_later_member_of_a_shared_ec(launch, it):
    mp = launch(SHARED, ["owng", "ownr1", "ownr2"], "exec_cxt.periodic.sched_fifo:NO")
    r2 = mp.ref("ownr2")
    shared = r2.get_participating_contexts()[0]
    own = r2.get_owned_contexts()[0]
    assert not own._is_equivalent(shared)
    assert r2.get_context_handle(own) == 0 and r2.get_context_handle(shared) == 1000
    assert r2.get_context(0)._is_equivalent(own)
    # rtcat -ll: its owned context, running, at the shared EC's rate, owned by it
    cp = it.rtsh("rtcat", "-ll", mp.path("ownr2"))
    assert cp.returncode == 0, cp.stderr
    lines = [ln.strip() for ln in cp.stdout.splitlines()]
    assert "-Execution Context 0" in lines and "State  Running" in lines, cp.stdout
    assert "Owner  ownr2" in lines and "Rate   50.0" in lines, cp.stdout
    assert any(ln.split() == ["runs_in.owner", "owng"] for ln in lines), cp.stdout
    # rtact / rtdeact act on owned context 0: the state in the shared EC changes
    it.rtsh("rtact", mp.path("ownr2"))
    it.wait_until(lambda: str(shared.get_component_state(r2)) == "ACTIVE_STATE", 3,
                  what="ownr2 active in the shared EC")
    assert str(own.get_component_state(r2)) == "ACTIVE_STATE"
    it.rtsh("rtdeact", mp.path("ownr1"))
    r1 = mp.ref("ownr1")
    it.wait_until(lambda: str(r1.get_participating_contexts()[0].get_component_state(r1))
                  == "INACTIVE_STATE", 3, what="ownr1 inactive")
    # the own context cannot be stopped or re-rated alone, nor left
    RTC = it.stubs("RTC")
    svc = own._narrow(RTC.ExecutionContextService)
    assert svc.stop() == RTC.PRECONDITION_NOT_MET and own.is_running()
    assert svc.set_rate(10.0) == RTC.PRECONDITION_NOT_MET and own.get_rate() == 50.0
    assert r2.detach_context(0) == RTC.PRECONDITION_NOT_MET
    prof = svc.get_profile()
    assert prof.owner._is_equivalent(r2)
    # the owner's EC stays the owner's
    g = mp.ref("owng")
    assert len(g.get_owned_contexts()) == 1 and not g.get_participating_contexts()
    assert g.get_owned_contexts()[0]._is_equivalent(shared)


STEPPED = """
name: stepped_shared
components:
  - {type: SineGenerator, module: examples, name: stg}
  - {type: Recorder, module: examples, name: str1}
connections:
  - {from: stg.out, to: str1.in, subscription_type: flush}
execution_contexts:
  - {name: st, kind: stepped, rate: 100, members: [stg, str1]}
activate: all
"""


def test_a_shared_stepped_ec_is_ticked_through_its_owner_only(launch, it):
    """openhrp3's Controller_impl ticks each RTC's owned context narrowed to OpenRTM's
    ExtTrigExecutionContextService: the later member's own context is not one, so one
    simulation step ticks the shared stepped EC once."""
    mp = launch(STEPPED, ["stg", "str1"], "exec_cxt.periodic.sched_fifo:NO")
    OpenRTM = it.stubs("OpenRTM")
    ticked = []
    for name in ("stg", "str1"):
        for ec in mp.ref(name).get_owned_contexts():
            ext = ec._narrow(OpenRTM.ExtTrigExecutionContextService)
            if ext is not None:
                ext.tick()
                ticked.append(name)
    assert ticked == ["stg"]
