"""rtshell (rtls, rtcat, rtact, rtdeact, rtreset, rtcon, rtdis, rtconf) against running rtcf
managers. rtact/rtdeact/rtreset exit 0 even when the call fails, so every lifecycle check
reads the state over CORBA afterwards; data flow is observed with probes (InPorts living in
the test process, see conftest.py)."""

from __future__ import annotations

import re
import time

import numpy as np
import pytest

pytestmark = pytest.mark.slow    # seconds per test: left out of scripts/test -m "not slow"

# Process A: sources plus the lifecycle subjects, each group in its own EC.
SHELL_A = """
name: shellA
components:
  - {type: SineGenerator, module: examples, name: shgen, params: {amplitude: 1.0, frequency: 0.5}}
  - {type: Recorder, module: examples, name: shrec}
  - {type: Gain, module: examples, name: shgainA, params: {gain: 2.0}}
  - {type: SineGenerator, module: examples, name: shsg, params: {frequency: 0.5}}
  - {type: Recorder, module: examples, name: shidle}
  - {type: Faulty, module: faulty, name: shfaulty}
connections:
  - {from: shgen.out, to: shrec.in, subscription_type: flush, buffer.length: 16}
execution_contexts:
  - {name: main, kind: periodic, rate: 50, members: [shgen, shrec, shgainA, shsg]}
  - {name: lc, kind: periodic, rate: 40, members: [shidle]}
  - {name: fault, kind: periodic, rate: 50, members: [shfaulty]}
activate: [shgen, shrec, shgainA, shsg, shfaulty]
"""
A_NAMES = ["shgen", "shrec", "shgainA", "shsg", "shidle", "shfaulty"]

# Process B: the receiving side of cross-process connections.
SHELL_B = """
name: shellB
components:
  - {type: Gain, module: examples, name: shgainB, params: {gain: 2.0}}
execution_contexts:
  - {name: mainB, kind: periodic, rate: 50, members: [shgainB]}
"""

# A second configuration set for shsg, from its instance conf file (rtconf cannot create
# sets: "-s NEW set" answers "No such configuration set").
SG_CONF = """\
conf.other.amplitude: 5.0
conf.other.frequency: 0.5
"""


@pytest.fixture(scope="module")
def procs(module_launch, tmp_path_factory, it):
    conf = tmp_path_factory.mktemp("conf") / "shsg.conf"
    conf.write_text(SG_CONF)
    a = module_launch(SHELL_A, A_NAMES, f"example.shsg.config_file:{conf}")
    b = module_launch(SHELL_B, "shgainB")
    for inst in ("shgen", "shrec", "shgainA", "shsg", "shfaulty"):
        it.wait_state(a.ref(inst), "ACTIVE")
    it.wait_state(a.ref("shidle"), "INACTIVE")
    it.wait_state(b.ref("shgainB"), "ACTIVE")
    return a, b


def ls_long(it, a) -> dict[str, list[str]]:
    """rtls -l of the host context: instance -> [state, ports, in, out, svc]."""
    cp = it.rtsh("rtls", "-l", f"/localhost:{a.ns_port}/{it.HOST}.host_cxt/")
    assert cp.returncode == 0, cp.stderr
    rows = {}
    for line in cp.stdout.splitlines():
        parts = line.split()
        if parts and parts[-1].endswith(".rtc"):
            rows[parts[-1][:-len(".rtc")]] = parts[:-1]
    return rows


def state_of(it, mp, inst) -> str:
    return it.component_state(mp.ref(inst))


def re_search(pattern, text):
    return re.search(pattern, text, re.M)


def max_abs(samples) -> float:
    return max(float(np.max(np.abs(s))) for s in samples if s.size)


def connectors_between(it, out_ref, in_ref) -> list:
    out = []
    for cp in it.connector_profiles(out_ref):
        if any(p._is_equivalent(in_ref) for p in cp.ports):
            out.append(cp)
    return out


# -- listing --------------------------------------------------------------------------------

def test_rtls_lists_components_of_both_processes(procs, it):
    a, b = procs
    cp = it.rtsh("rtls", f"/localhost:{a.ns_port}/{it.HOST}.host_cxt/")
    assert cp.returncode == 0, cp.stderr
    names = set(cp.stdout.split())
    assert {f"{n}.rtc" for n in A_NAMES + ["shgainB"]} <= names, cp.stdout


def test_rtls_long_states_and_port_counts(procs, it):
    a, _ = procs
    rows = ls_long(it, a)
    # state, then total/connected for all ports, in, out, service ports
    assert rows["shgen"] == ["Active", "1/1", "0/0", "1/1", "0/0"], rows
    assert rows["shrec"] == ["Active", "1/1", "1/1", "0/0", "0/0"], rows
    assert rows["shgainA"][0] == "Active", rows
    assert [f.split("/")[0] for f in rows["shgainA"][1:]] == ["2", "1", "1", "0"], rows
    assert rows["shsg"][0] == "Active" and rows["shsg"][3].startswith("1/"), rows
    assert rows["shidle"] == ["Inactive", "1/0", "1/0", "0/0", "0/0"], rows
    assert rows["shfaulty"] == ["Active", "0/0", "0/0", "0/0", "0/0"], rows


def test_rtcat_ll_profile_ec_ports_and_connector(procs, it):
    a, _ = procs
    cp = it.rtsh("rtcat", "-ll", a.path("shgen"))
    assert cp.returncode == 0, cp.stderr
    out = cp.stdout
    lines = [ln.strip() for ln in out.splitlines()]

    def field(name):
        for ln in lines:
            if ln.startswith(name + " "):
                return ln[len(name):].strip()
        raise AssertionError(f"no {name!r} in:\n{out}")

    assert lines[0].split() == ["shgen.rtc", "Active"]
    assert field("Category") == "example"
    assert field("Instance name") == "shgen"
    assert field("Type name") == "SineGenerator"
    assert field("Vendor") == "rtcf"
    assert field("Version") == "1.0.0"
    assert field("Description").startswith("Writes amplitude")
    # the owned EC: periodic at the composition's rate, shgen owns it (first member)
    assert "-Execution Context 0" in out, out
    assert field("State") == "Running"
    assert field("Kind") == "Periodic"
    assert float(field("Rate")) == pytest.approx(50.0)
    assert field("Owner") == "shgen"
    assert {"shgen", "shrec", "shgainA", "shsg"} <= set(lines), out
    # the port and its connector, with the connector properties rtcat shows
    assert "-DataOutPort: out" in out, out
    assert "-Connected to" in out and "shrec.rtc:in" in out, out
    assert field("dataport.subscription_type") == "flush,new,periodic"   # port property
    conn = out[out.index("-Connected to"):]
    assert re_search(r"dataport\.subscription_type\s+flush\s*$", conn), conn
    assert re_search(r"dataport\.data_type\s+IDL:RTC/TimedDoubleSeq:1\.0", conn), conn
    assert re_search(r"dataport\.dataflow_type\s+push\s*$", conn), conn
    assert re_search(r"dataport\.interface_type\s+corba_cdr\s*$", conn), conn
    assert re_search(r"dataport\.serializer\.cdr\.endian\s+little,big", conn), conn
    assert re_search(r"dataport\.buffer\.length\s+16\s*$", conn), conn
    assert "inport_ior" not in conn and "inport_ref" not in conn  # rtcat hides them


def test_rtcat_participant_shows_port_and_type(procs, it):
    a, _ = procs
    cp = it.rtsh("rtcat", "-l", a.path("shrec"))
    assert cp.returncode == 0, cp.stderr
    assert "DataInPort: in" in cp.stdout, cp.stdout
    assert "Recorder" in cp.stdout


# -- lifecycle ----------------------------------------------------------------------------------

def test_rtact_rtdeact_change_the_state(procs, it):
    a, _ = procs
    ref = a.ref("shidle")
    assert it.component_state(ref) == "INACTIVE"
    it.rtsh("rtact", a.path("shidle"))          # exit code says nothing
    it.wait_state(ref, "ACTIVE", timeout=3)
    assert ls_long(it, a)["shidle"][0] == "Active"
    it.rtsh("rtdeact", a.path("shidle"))
    it.wait_state(ref, "INACTIVE", timeout=3)
    assert ls_long(it, a)["shidle"][0] == "Inactive"


def test_rtreset_of_a_component_not_in_error_changes_nothing(procs, it):
    a, _ = procs
    ref = a.ref("shidle")
    assert it.component_state(ref) == "INACTIVE"
    cp = it.rtsh("rtreset", a.path("shidle"))
    assert cp.returncode == 0        # the rtshell quirk: failure still exits 0
    time.sleep(0.2)
    assert it.component_state(ref) == "INACTIVE"


def test_error_then_rtreset_returns_to_inactive(procs, it):
    a, _ = procs
    ref = a.ref("shfaulty")
    path = a.path("shfaulty")
    assert it.component_state(ref) == "ACTIVE"
    cp = it.rtsh("rtconf", path, "set", "fail", "YES")
    assert cp.returncode == 0, cp.stderr
    it.wait_state(ref, "ERROR", timeout=3)
    assert ls_long(it, a)["shfaulty"][0] == "Error"
    time.sleep(0.2)
    assert it.component_state(ref) == "ERROR"    # stays in Error
    it.rtsh("rtconf", path, "set", "fail", "NO")
    assert it.rtsh("rtconf", path, "get", "fail").stdout.strip() == "NO"
    it.rtsh("rtreset", path)
    it.wait_state(ref, "INACTIVE", timeout=3)
    it.rtsh("rtact", path)
    it.wait_state(ref, "ACTIVE", timeout=3)
    # fail=NO took effect: it keeps running, cycle after cycle (its EC's count moves on)
    from rtcf.corba.nv import from_nvlist

    def cycles() -> int:
        ec = it.component_ec(ref)._narrow(it.stubs("RTC").ExecutionContextService)
        return int(from_nvlist(ec.get_profile().properties)["stats.cycles"])
    c0 = cycles()
    it.wait_until(lambda: cycles() >= c0 + 10, what="ten more cycles")
    assert it.component_state(ref) == "ACTIVE"


# -- connections --------------------------------------------------------------------------------

def _check_flow(it, probe_h, timeout=5.0):
    n0 = probe_h.count
    probe_h.wait_count(n0 + 5, timeout)


@pytest.mark.parametrize("props,sub", [
    (["dataport.subscription_type=flush"], "flush"),
    ([], "new"),                                   # rtcon's default
    (["dataport.dataflow_type=pull"], "new"),
], ids=["flush", "default-new", "pull"])
def test_rtcon_rtdis_between_processes(procs, it, probe, props, sub):
    a, b = procs
    gen_out = a.port("shgen", "out")
    gain_in, gain_out = b.port("shgainB", "in"), b.port("shgainB", "out")
    p = probe()
    it.connect_ports(gain_out, p.ref)          # observe what shgainB produces
    time.sleep(0.3)
    assert p.count == 0                        # no input yet: Gain writes nothing
    args = [a.path("shgen", "out"), b.path("shgainB", "in")]
    for prop in props:
        args += ["-p", prop]
    cp = it.rtsh("rtcon", *args)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    cps = connectors_between(it, gen_out, gain_in)
    assert len(cps) == 1
    got = it.props_of(cps[0])
    assert got["dataport.subscription_type"] == sub
    assert got["dataport.dataflow_type"] == ("pull" if any("pull" in x for x in props)
                                             else "push")
    assert got["dataport.data_type"] == "IDL:RTC/TimedDoubleSeq:1.0"
    # both ends store the same connector
    assert [c.connector_id for c in it.connector_profiles(gain_in)] == [cps[0].connector_id]
    _check_flow(it, p)
    m = max_abs(p.recent(20))
    assert 1.5 < m <= 2.0 + 1e-9, m          # gain 2 x a unit-amplitude sine
    # rtdis removes it on both ends and the data stops
    cp = it.rtsh("rtdis", *args[:2])
    assert cp.returncode == 0, cp.stdout + cp.stderr
    it.wait_until(lambda: not connectors_between(it, gen_out, gain_in), 3,
                  what="connector gone at the OutPort")
    assert it.connector_profiles(gain_in) == []
    # what was on its way may still land; then nothing more (the generator writes at 50 Hz)
    it.wait_until(lambda: p.quiet_for(0.8), what="no more data after rtdis")
    # the composition's own connection is untouched
    assert len(it.connector_profiles(a.port("shrec", "in"))) == 1


def test_rtcon_within_one_process(procs, it, probe):
    a, _ = procs
    gen_out, gain_in = a.port("shgen", "out"), a.port("shgainA", "in")
    p = probe()
    it.connect_ports(a.port("shgainA", "out"), p.ref)
    cp = it.rtsh("rtcon", a.path("shgen", "out"), a.path("shgainA", "in"),
                 "-p", "dataport.subscription_type=flush")
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert len(connectors_between(it, gen_out, gain_in)) == 1
    _check_flow(it, p)
    assert 1.5 < max_abs(p.recent(20)) <= 2.0 + 1e-9
    cid = connectors_between(it, gen_out, gain_in)[0].connector_id
    it.rtsh("rtdis", "-i", cid, a.path("shgen", "out"))
    it.wait_until(lambda: not connectors_between(it, gen_out, gain_in), 3,
                  what="connector removed by rtdis -i")
    it.wait_until(lambda: p.quiet_for(0.6), what="no more data after rtdis -i")


def test_rtcon_twice_makes_one_connector(procs, it):
    """The second rtcon of the same two ports is refused (OpenRTM:
    allow_dup_connection off, PRECONDITION_NOT_MET), across processes and within one;
    with -p dataport.allow_dup_connection=YES it is made."""
    a, b = procs
    for out, inp in ((a.port("shgen", "out"), b.port("shgainB", "in")),
                     (a.port("shgen", "out"), a.port("shgainA", "in"))):
        outp = a.path("shgen", "out")
        inp_path = b.path("shgainB", "in") if inp._is_equivalent(b.port("shgainB", "in")) \
            else a.path("shgainA", "in")
        it.rtsh("rtcon", outp, inp_path)
        second = it.rtsh("rtcon", outp, inp_path)
        try:
            assert len(connectors_between(it, out, inp)) == 1, second.stdout + second.stderr
            assert len(it.connector_profiles(inp)) == 1
            it.rtsh("rtcon", outp, inp_path, "-p", "dataport.allow_dup_connection=YES")
            assert len(connectors_between(it, out, inp)) == 2
        finally:
            for cp in connectors_between(it, out, inp):
                out.disconnect(cp.connector_id)
        assert connectors_between(it, out, inp) == []


def test_rtcon_with_a_bogus_property_leaves_no_connector(procs, it):
    a, b = procs
    gen_out, gain_in = a.port("shgen", "out"), b.port("shgainB", "in")
    it.rtsh("rtcon", a.path("shgen", "out"), b.path("shgainB", "in"),
            "-p", "dataport.subscription_type=bogus")
    assert connectors_between(it, gen_out, gain_in) == []
    assert it.connector_profiles(gain_in) == []
    assert it.component_state(a.ref("shgen")) == "ACTIVE"


# -- configuration --------------------------------------------------------------------------------

def test_rtconf_list_get_set_and_activate_set(procs, it, probe):
    a, _ = procs
    path = a.path("shsg")
    p = probe()
    it.connect_ports(a.port("shsg", "out"), p.ref)
    _check_flow(it, p)

    out = it.rtsh("rtconf", path, "list").stdout
    assert "+default*" in out and "+other" in out, out
    out = it.rtsh("rtconf", path, "-l", "list").stdout
    assert "amplitude" in out and "frequency" in out and "channels" in out, out
    assert it.rtsh("rtconf", path, "get", "amplitude").stdout.strip() == "1.0"
    assert it.rtsh("rtconf", path, "-s", "other", "get", "amplitude").stdout.strip() == "5.0"
    assert max_abs(p.recent(20)) <= 1.0 + 1e-9

    # set in the active set: the component uses it from the next cycle
    cp = it.rtsh("rtconf", path, "set", "amplitude", "3")
    assert cp.returncode == 0, cp.stderr
    assert float(it.rtsh("rtconf", path, "get", "amplitude").stdout) == 3.0
    p.clear()
    it.wait_until(lambda: p.count >= 3 and max_abs(p.recent(3)) > 2.5, 3,
                  what="amplitude 3 in the data")
    assert max_abs(p.recent(3)) <= 3.0 + 1e-9

    # set in another set: stored, not live
    it.rtsh("rtconf", path, "-s", "other", "set", "amplitude", "4")
    assert float(it.rtsh("rtconf", path, "-s", "other", "get", "amplitude").stdout) == 4.0
    assert float(it.rtsh("rtconf", path, "get", "amplitude").stdout) == 3.0
    time.sleep(0.2)
    assert max_abs(p.recent(3)) <= 3.0 + 1e-9

    # activate the other set
    cp = it.rtsh("rtconf", path, "-s", "other", "act")
    assert cp.returncode == 0, cp.stderr
    out = it.rtsh("rtconf", path, "list").stdout
    assert "+other*" in out and "+default*" not in out, out
    assert float(it.rtsh("rtconf", path, "get", "amplitude").stdout) == 4.0
    p.clear()
    it.wait_until(lambda: p.count >= 3 and max_abs(p.recent(3)) > 3.4, 3,
                  what="amplitude 4 in the data")
    assert max_abs(p.recent(3)) <= 4.0 + 1e-9

    # back to default: amplitude 3 again
    it.rtsh("rtconf", path, "-s", "default", "act")
    assert float(it.rtsh("rtconf", path, "get", "amplitude").stdout) == 3.0


def test_rtconf_rejects_bad_values(procs, it):
    a, _ = procs
    path = a.path("shsg")
    before = it.rtsh("rtconf", path, "get", "frequency").stdout.strip()
    it.rtsh("rtconf", path, "set", "frequency", "-1")      # bounds (0, None)
    it.rtsh("rtconf", path, "set", "frequency", "fast")    # not a float
    assert it.rtsh("rtconf", path, "get", "frequency").stdout.strip() == before
    it.rtsh("rtconf", path, "set", "channels", "7")        # read-only
    assert it.rtsh("rtconf", path, "get", "channels").stdout.strip() == "3"
    assert it.component_state(a.ref("shsg")) == "ACTIVE"


def test_naming_update_rebinds_a_removed_binding(launch, it):
    """naming.update.enable: a binding removed behind the component's back comes back."""
    yaml = """
components:
  - {type: Recorder, module: examples, name: rebound}
execution_contexts:
  - {name: e, kind: periodic, rate: 20, members: [rebound]}
"""
    mp = launch(yaml, "rebound", "naming.update.enable:YES", "naming.update.interval:0.3")
    client = it.naming_client(mp.ns_port)
    path = f"{it.HOST}.host_cxt/rebound.rtc"
    assert client.unbind(path)
    assert it.wait_until(lambda: _bound(client, path), timeout=5.0)


def _bound(client, path) -> bool:
    try:
        client.resolve(path)
        return True
    except LookupError:
        return False


def test_exit_finalizes_unbinds_and_ends_the_process(launch, it):
    """LightweightRTObject.exit (what rtexit calls; rtexit itself needs a top-level RTC
    module on Python 3.11): the component goes, its binding goes, and a manager left with
    no component stops (manager.shutdown_on_nortcs)."""
    yaml = """
components:
  - {type: Recorder, module: examples, name: leaving}
execution_contexts:
  - {name: e, kind: periodic, rate: 20, members: [leaving]}
"""
    mp = launch(yaml, "leaving")
    RTC = it.stubs("RTC")
    assert mp.ref("leaving").exit() == RTC.RTC_OK
    assert it.wait_until(lambda: not mp.alive(), timeout=10.0), mp.log()
    assert mp.proc.returncode == 0
    client = it.naming_client(mp.ns_port)
    assert not _bound(client, f"{it.HOST}.host_cxt/leaving.rtc")


# -- the stepped EC as OpenRTM's ExtTrigExecutionContext ----------------------------------------

STEPPED = """
name: stepsys
components:
  - {type: Gain, module: examples, name: stgain}
  - {type: Gain, module: examples, name: stper}
execution_contexts:
  - {name: st, kind: stepped, rate: 200, members: [stgain]}
  - {name: per, kind: periodic, rate: 50, members: [stper]}
activate: none
"""
EXTTRIG = "IDL:openrtm.aist.go.jp/OpenRTM/ExtTrigExecutionContextService:1.0"
ECSERVICE = "IDL:omg.org/RTC/ExecutionContextService:1.0"


def test_stepped_ec_kind_repository_id_and_immediate_activation(launch, it):
    RTC = it.stubs("RTC")
    mp = launch(STEPPED, ["stgain", "stper"], duration=30)
    step_ec = it.component_ec(mp.ref("stgain"))._narrow(RTC.ExecutionContextService)
    per_ec = it.component_ec(mp.ref("stper"))._narrow(RTC.ExecutionContextService)
    # kind PERIODIC like OpenRTM's ExtTrig EC; each EC's repository id is its real kind
    assert step_ec.get_kind() == RTC.PERIODIC
    assert step_ec.get_profile().kind == RTC.PERIODIC
    assert step_ec.get_rate() == 200.0
    assert step_ec._is_a(EXTTRIG) and step_ec._is_a(ECSERVICE)
    assert per_ec.get_kind() == RTC.PERIODIC
    assert per_ec._is_a(ECSERVICE) and not per_ec._is_a(EXTTRIG)
    # rtact: Active at once, no tick needed (OpenRTM applies the transition right away)
    it.rtsh("rtact", mp.path("stgain"))
    assert it.component_state(mp.ref("stgain")) == "ACTIVE"
    cp = it.rtsh("rtcat", mp.path("stgain"))
    assert re.search(r"\bActive\b", cp.stdout), cp.stdout
    it.rtsh("rtdeact", mp.path("stgain"))
    assert it.component_state(mp.ref("stgain")) == "INACTIVE"
    it.rtsh("rtact", mp.path("stgain"))
    stepper = step_ec._narrow(it.stubs("OpenRTM").ExtTrigExecutionContextService)
    for _ in range(3):
        stepper.tick()
    assert it.component_state(mp.ref("stgain")) == "ACTIVE"
    # the exit summary gives no rate for an EC that was only ticked
    assert mp.stop() == 0
    log = mp.log()
    assert re.search(r"^st: 3 cycles, ticked \(no rate of its own\)$", log, re.M), log
    assert not re.search(r"^st: .*Hz", log, re.M), log
    assert re.search(r"^per: \d+ cycles, [\d.]+ Hz \(nominal 50\)", log, re.M), log
