"""The DCM in another process, reached through CORBA: DCMProxy("DCM0", nameserver=...)
runs the ChestLeds examples of NAOqi's DCM documentation (setAlias: time-mixed, table A,
and time-separate, table B) on the wall clock, bad input
gets NAO::DCMError with a reason while the DCM keeps running, rtcat shows the DCMService
CorbaPort and get_service finds the servant.

Setup: a private omniNames on a free loopback port and ``python -m rtcf.manager`` on a
composition with just the DCM on a 100 Hz periodic EC; both are stopped at module teardown,
whatever happened (process group SIGTERM, then SIGKILL).

Sampling and tolerance (one cycle of slope either way, as on the real robot): a value is
read by DCM time: poll getTime(0) until it reaches t0 + offset, read getValues, and keep the
sample only if getTime(0) has not moved meanwhile, so the sampled cycle s is known exactly
(s >= t0 + offset). Two checks per value:
* against the table's piecewise-linear curve evaluated at s: within two cycles of the local
  slope (one cycle for the placement of the call: over CORBA the call lands at the start of
  the next cycle, so a command dated getTime(0) is one cycle late; one cycle of slack for
  getTime calls that straddle a cycle boundary); this check is insensitive to polling delay;
* against the table value at the worked offset itself: within the local slope times
  (one cycle + the polling delay s - (t0 + offset)). The delay is normally 0 or 1 cycle (the
  +-2 cycles of slack the brief allows); on a loaded machine it is longer, and the first check,
  which does not depend on it, carries the test.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow    # seconds per test: left out of scripts/test -m "not slow"

ROOT = Path(__file__).resolve().parents[2]
HOST = socket.gethostname()
RED = "ChestBoard/Led/Red/Actuator/Value"
GREEN = "ChestBoard/Led/Green/Actuator/Value"
BLUE = "ChestBoard/Led/Blue/Actuator/Value"
RGB = [RED, GREEN, BLUE]
CYCLE = 10          # ms, the DCM at 100 Hz
EPS = 1e-9
WAIT = 60.0         # [s] the most a wait for DCM time may take (a loaded machine is slow)

COMPOSITION = """\
name: dcm_only
components:
  - {type: DCM, module: dcm, params: {profile: default}}
execution_contexts:
  - {name: dcm, kind: periodic, rate: 100, members: [DCM0]}
activate: all
"""

B_OFFS = [0, 2000, 3000, 4000, 5000, 6000]
B_VALUES = [[1.0, 0.0, 1.0, 0.0, 1.0, 0.0],
            [1.0, 0.5, 1.0, 0.25, 0.125, 0.0],
            [0.0625, 0.125, 0.25, 0.50, 0.75, 1.0]]
A_CURVES = [([0, 4000, 6000], [0.0, 1.0, 0.0]), ([0, 3000], [0.0, 0.25]),
            ([0, 2000], [0.0, 0.125])]
B_CURVES = [(B_OFFS, v) for v in B_VALUES]
TABLE_A = {1000: (0.25, 0.25 / 3, 0.0625), 2000: (0.5, 0.5 / 3, 0.125),
           3000: (0.75, 0.25, 0.125), 4000: (1.0, 0.25, 0.125), 5000: (0.5, 0.25, 0.125),
           6000: (0.0, 0.25, 0.125), 7000: (0.0, 0.25, 0.125)}
TABLE_B = {0: (1.0, 1.0, 0.0625), 1000: (0.5, 0.75, 0.09375), 2500: (0.5, 0.75, 0.1875),
           3000: (1.0, 1.0, 0.25), 3500: (0.5, 0.625, 0.375), 5000: (1.0, 0.125, 0.75),
           5500: (0.5, 0.0625, 0.875), 7000: (0.0, 0.0, 1.0)}


def curve(t: float, times: list, values: list) -> float:
    if t <= times[0]:
        return values[0]
    for ta, va, tc, vc in zip(times, values, times[1:], values[1:]):
        if t <= tc:
            return va + (vc - va) * (t - ta) / (tc - ta)
    return values[-1]


def local_slope(t: float, times: list, values: list, span: float = 4 * CYCLE) -> float:
    """The steepest |dv/dt| [1/ms] of the curve within span of t."""
    best = 0.0
    for ta, va, tc, vc in zip(times, values, times[1:], values[1:]):
        if tc >= t - span and ta <= t + span:
            best = max(best, abs(vc - va) / (tc - ta))
    return best


# -- the DCM process ----------------------------------------------------------------------------

class DcmProcess:
    def __init__(self, tmp: Path):
        from rtcf.corba.naming import ensure_naming_service, free_port
        self.naming = ensure_naming_service("127.0.0.1", free_port(), timeout=WAIT)
        self.port = self.naming.port
        self.nameserver = f"localhost:{self.port}"
        self.yaml = tmp / "dcm_only.yaml"
        self.yaml.write_text(COMPOSITION)
        self.log_path = tmp / "dcm_only.log"
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(ROOT), str(ROOT / "components")] + ([env["PYTHONPATH"]]
                                                     if env.get("PYTHONPATH") else []))
        env["PYTHONUNBUFFERED"] = "1"
        cmd = [sys.executable, "-m", "rtcf.manager", str(self.yaml), "--quiet",
               "-o", f"corba.nameservers:{self.nameserver}",
               "-o", f"manager.modules.load_path:{ROOT / 'components'}",
               "-o", "exec_cxt.periodic.sched_fifo:NO"]
        with open(self.log_path, "wb") as out:
            self.proc = subprocess.Popen(cmd, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=subprocess.STDOUT, env=env,
                                         start_new_session=True)

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-4000:]
        except OSError:
            return "<no log>"

    def wait_ready(self, timeout: float = 120.0):
        """A DCMProxy once DCM0 is bound, its service answers and DCM time runs."""
        from rtcf_components.dcm.proxy import DCMProxy
        deadline = time.monotonic() + timeout
        last: Exception | None = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"manager exited with {self.proc.returncode}:\n"
                                     f"{self.log()}")
            try:
                dcm = DCMProxy("DCM0", nameserver=self.nameserver)
                dcm.getTime(0)
                return dcm
            except Exception as e:      # not bound yet / no cycle yet
                last = e
            time.sleep(0.1)
        raise AssertionError(f"DCM0 not ready within {timeout} s ({last!r}):\n{self.log()}")

    def stop(self) -> None:
        try:
            if self.proc.poll() is None:
                try:
                    os.killpg(self.proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
                try:
                    self.proc.wait(8)
                except subprocess.TimeoutExpired:
                    try:
                        os.killpg(self.proc.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    self.proc.wait(8)
            else:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        finally:
            self.naming.stop()


@pytest.fixture(scope="module")
def dcm_proc(tmp_path_factory):
    p = DcmProcess(tmp_path_factory.mktemp("dcm_corba"))
    try:
        p.dcm = p.wait_ready()
        yield p
    finally:
        p.stop()
    assert p.proc.poll() is not None


@pytest.fixture
def dcm(dcm_proc):
    d = dcm_proc.dcm
    d.createAlias(["ChestLeds", RGB])
    now = d.getTime(0)
    d.setAlias(["ChestLeds", "ClearAll", "time-separate", 0, [now], [[0.0], [0.0], [0.0]]])
    wait_dcm_time(d, now + 3 * CYCLE)
    assert d.getValues(RGB) == [0.0, 0.0, 0.0]
    return d


def wait_dcm_time(dcm, t: int, timeout: float = WAIT) -> int:
    deadline = time.monotonic() + timeout
    while True:
        now = dcm.getTime(0)
        if now >= t:
            return now
        if time.monotonic() > deadline:
            raise AssertionError(f"DCM time stuck at {now}, waiting for {t}")
        time.sleep(0.002 if t - now < 50 else 0.02)


def sample_at(dcm, t: int) -> tuple[int, list[float]]:
    """(s, values): the LED values of the cycle at DCM time s >= t, s known exactly (the
    reading is kept when getTime(0) did not move across it)."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        tb = wait_dcm_time(dcm, t)
        vals = dcm.getValues(RGB)
        if dcm.getTime(0) == tb:
            return tb, vals
    raise AssertionError(f"could not read getValues within one DCM cycle in {WAIT} s")


def _started_by(times: list, applied: int) -> list:
    """The curve's times when its first ramp started ``applied`` ms after t0 instead of at
    t0 (the command reached the DCM that late: the ramp runs from the value then to the
    first timed command)."""
    return [max(times[0], min(applied, times[1]))] + list(times[1:]) if len(times) > 1 \
        else list(times)


def check_table(dcm, t0: int, table: dict, curves: list, label: str,
                applied: int = 0) -> list:
    """``applied``: DCM time (after t0, ms) by which the command had surely been applied
    (read when the call returned); the first ramp of each curve started between t0 and
    then, so a value may lie between the curve started at t0 and the one started then."""
    report = []
    for off in sorted(table):
        target = t0 + off
        s, vals = sample_at(dcm, target)
        delay = s - target
        report.append((off, delay, vals))
        for k, (times, values) in enumerate(curves):
            late = _started_by(times, applied)
            slope = max(local_slope(s - t0, times, values), local_slope(s - t0, late, values))
            at_s = (curve(s - t0, times, values), curve(s - t0, late, values))
            tol = slope * 2 * CYCLE + EPS
            assert min(at_s) - tol <= vals[k] <= max(at_s) + tol, (
                f"{label} {RGB[k]} at DCM time t0+{s - t0}: {vals[k]}, curve {at_s}")
            at_off = (table[off][k], curve(off, late, values))
            slope = max(slope, local_slope(off, times, values))
            tol = slope * (CYCLE + delay) + EPS
            assert min(at_off) - tol <= vals[k] <= max(at_off) + tol, (
                f"{label} {RGB[k]} at offset {off} (+{delay} ms): {vals[k]}, table "
                f"{table[off][k]} (applied by t0+{applied})")
    print(label, f"applied by t0+{applied} ms;", [(off, delay) for off, delay, _ in report])
    return report


# -- the DCM documentation's examples over CORBA ------------------------------------------------

def test_seed_time_mixed_table_a(dcm):
    got = dcm.createAlias(["ChestLeds", RGB])
    assert got == ["ChestLeds", RGB]
    t_red = dcm.getTime(4000)
    dcm.setAlias(["ChestLeds", "ClearAll", "time-mixed",
                  [[[1.0, t_red], [0.0, dcm.getTime(6000)]],
                   [[0.25, dcm.getTime(3000)]],
                   [[0.125, dcm.getTime(2000)]]]])
    t0 = t_red - 4000
    # the ramps start when the DCM applies the call (setAlias returns after that): a cycle
    # after t0 on a quiet machine, later on a loaded one
    check_table(dcm, t0, TABLE_A, A_CURVES, "A", applied=dcm.getTime(0) - t0)


def test_seed_time_separate_table_b(dcm):
    t = dcm.getTime(0)
    dcm.setAlias(["ChestLeds", "ClearAll", "time-separate", 0,
                  [t, t + 2000, t + 3000, t + 4000, t + 5000, t + 6000], B_VALUES])
    # setAlias returns after the DCM applied it: a cycle after t on a quiet machine, later on
    # a loaded one (the step dated t is then sent at once and the first ramp starts there)
    check_table(dcm, t, TABLE_B, B_CURVES, "B", applied=dcm.getTime(0) - t)


# -- errors over CORBA --------------------------------------------------------------------------

def test_bad_input_over_corba_gets_dcm_error_and_dcm_keeps_running(dcm_proc, dcm):
    from rtcf.corba.idl import stub_module
    NAO = stub_module("NAO")
    far = dcm.getTime(100000)
    now = dcm.getTime(0)
    dcm.setAlias(["ChestLeds", "ClearAll", "time-separate", 0, [now], [[0.5], [0.6], [0.7]]])
    wait_dcm_time(dcm, now + 2 * CYCLE)
    before = dcm.getValues(RGB)
    assert before == [0.5, 0.6, 0.7]
    srv = dcm.service
    TC = NAO.TimedCommand
    bad = {
        # checked by the DCM process (the proxy passes these on)
        "unknown actuator": lambda: dcm.set(["ChestBoard/Led/Pink/Actuator/Value", "Merge",
                                             [[1.0, far]]]),
        "unknown alias": lambda: dcm.setAlias(["NoSuchAlias", "ClearAll", "time-mixed", [[]]]),
        "update kind": lambda: dcm.setAlias(["ChestLeds", "clearall", "time-mixed",
                                             [[], [], []]]),
        "member count": lambda: dcm.setAlias(["ChestLeds", "ClearAll", "time-mixed",
                                              [[[1.0, far]]]]),
        "value count": lambda: dcm.setAlias(["ChestLeds", "ClearAll", "time-separate", 0,
                                             [far, far + 10], [[1, 2], [1], [1, 2]]]),
        "over 512": lambda: dcm.set([RED, "Merge", [[0.1, far + k] for k in range(513)]]),
        "getValue unknown": lambda: dcm.getValue("Nope/Actuator/Value"),
        "getTime overflow": lambda: dcm.getTime(2 ** 32 - 1),   # now + that > 2^32-1
        "servant importance": lambda: srv.set(RED, "Merge", [TC(1.0, far, -1)]),
        "servant member count": lambda: srv.setAliasTimeSeparate(
            "ChestLeds", "Merge", 0, [far], [[1.0]] * 4),
        # checked by the proxy before the call
        "mode": lambda: dcm.setAlias(["ChestLeds", "ClearAll", "time-Mixed", [[], [], []]]),
        "timed command": lambda: dcm.set([RED, "Merge", [[1.0, 1.5]]]),
        "getTime float": lambda: dcm.getTime(0.5),
    }
    reasons = {}
    for name, call in bad.items():
        with pytest.raises(NAO.DCMError) as ei:
            call()
        reasons[name] = ei.value.reason
        assert isinstance(ei.value.reason, str) and len(ei.value.reason) > 5, name
    assert "Pink" in reasons["unknown actuator"]
    assert "NoSuchAlias" in reasons["unknown alias"]
    assert "clearall" in reasons["update kind"]
    assert "512" in reasons["over 512"]
    # nothing changed, and the DCM keeps running
    t1 = dcm.getTime(0)
    wait_dcm_time(dcm, t1 + 5 * CYCLE)
    assert dcm.getValues(RGB) == before
    assert dcm_proc.proc.poll() is None
    dcm.set([RED, "ClearAll", [[0.9, dcm.getTime(0)]]])     # and still takes commands
    wait_dcm_time(dcm, dcm.getTime(0) + 2 * CYCLE)
    assert dcm.getValue(RED) == 0.9


def test_garbage_and_reasons_over_corba(dcm_proc, dcm):
    """Bad input across the wire: whole reasons, short echoes, DCMError for
    what omniORB cannot marshal (no RecursionError, DATA_CONVERSION, SystemError, TypeError,
    BAD_PARAM), and times above 2^31 carried (the IDL time is long long)."""
    from rtcf.corba.idl import stub_module
    NAO = stub_module("NAO")
    reasons = {}
    deep: list = []
    x = deep
    for _ in range(100_000):
        x.append([])
        x = x[0]
    calls = {
        "unknown alias": lambda: dcm.setAlias(["NoSuchAlias", "ClearAll", "time-mixed", [[]]]),
        "kind": lambda: dcm.set([RED, "Replace", []]),
        "empty alias": lambda: dcm.createAlias(["", []]),
        "huge key": lambda: dcm.getValue("K" * 1_000_000),
        "huge alias": lambda: dcm.set(["A" * 1_000_000, "Merge", []]),
        "deep": lambda: dcm.set([RED, "Merge", deep]),
        "non-Latin-1": lambda: dcm.getValue("\u7ea2"),
        "surrogate": lambda: dcm.createAlias(["A\ud800", [RED]]),
        "None keys": lambda: dcm.getValues(None),
        "time above 2^32-1": lambda: dcm.set([RED, "Merge", [[1.0, 2 ** 32]]]),
        "raw servant non-Latin-1 reason": lambda: dcm.service.getValue("caf\xe9"),
    }
    for name, call in calls.items():
        with pytest.raises(NAO.DCMError) as ei:
            call()
        reasons[name] = ei.value.reason
    assert reasons["unknown alias"].endswith("unknown alias 'NoSuchAlias'")
    assert reasons["kind"].endswith("got 'Replace'")
    assert reasons["empty alias"].endswith("got ''")
    for name in ("huge key", "huge alias"):
        assert len(reasons[name]) < 250 and "(1000000 chars)" in reasons[name]
    assert "Latin-1" in reasons["non-Latin-1"] and "Latin-1" in reasons["surrogate"]
    assert "expected a list" in reasons["None keys"]
    assert r"'caf\xe9'" in reasons["raw servant non-Latin-1 reason"]   # echoed in ASCII
    # DCM times between 2^31 and 2^32-1 travel and are stored (they were BAD_PARAM)
    dcm.set([RED, "Merge", [[0.5, 2 ** 31 + 7]]])
    dcm.setAlias(["ChestLeds", "Merge", "time-separate", 0, [2 ** 32 - 1],
                  [[0.1], [0.2], [0.3]]])
    dcm.set([RED, "ClearAll", [[0.0, dcm.getTime(0)]]])       # leave no far commands
    dcm.setAlias(["ChestLeds", "ClearAll", "time-mixed", [[], [], []]])
    assert dcm_proc.proc.poll() is None


def test_get_time_advances_with_the_wall_clock(dcm):
    """DCM time is the wall clock in ms (a cycle's planned start), in whole cycles: it never
    runs ahead of the wall clock, and it keeps up with it (a late read is a read that waited
    for the GIL or the CPU: the next one catches up)."""
    def read():
        before = time.monotonic()
        t = dcm.getTime(0)
        return before, t, time.monotonic()
    b1, t1, a1 = read()
    time.sleep(0.3)
    deadline = time.monotonic() + WAIT
    while True:
        b2, t2, a2 = read()
        assert isinstance(t1, int) and isinstance(t2, int)
        assert (t2 - t1) % CYCLE == 0
        assert t2 - t1 <= (a2 - b1) * 1000 + CYCLE            # never ahead of the wall clock
        if t2 - t1 >= (b2 - a1) * 1000 - 2 * CYCLE:          # as far as the wall clock went
            break
        assert time.monotonic() < deadline, (t2 - t1, (b2 - a1) * 1000)


# -- tools --------------------------------------------------------------------------------------

def test_rtcat_shows_the_dcm_service_port(dcm_proc):
    exe = Path(sys.executable).parent / "rtcat"
    if not exe.exists():
        pytest.skip("rtcat not installed in this venv")
    path = f"/localhost:{dcm_proc.port}/{HOST}.host_cxt/DCM0.rtc"
    cp = subprocess.run([str(exe), "-l", path], capture_output=True, text=True, timeout=30,
                        stdin=subprocess.DEVNULL)
    assert cp.returncode == 0, cp.stderr
    out = cp.stdout
    assert "DCM0" in out and "Active" in out, out
    assert "DCMService" in out, out
    assert "CorbaPort" in out, out
    for port in ("qRef", "actuators", "hardness"):
        assert port in out, out


def test_get_service(dcm_proc):
    from rtcf.corba.client import get_service
    from rtcf.corba.idl import stub_module
    NAO = stub_module("NAO")
    svc = get_service("DCM0", "DCMService", stub=NAO.DCMService,
                      nameserver=dcm_proc.nameserver)
    t = svc.getTime(0)
    assert isinstance(t, int) and t > 0
    keys = list(svc.getActuatorKeys())
    assert RED in keys and len(keys) == 129
    assert svc.createAlias("Probe", [RED, "Bogus"]) == [RED, ""]
    with pytest.raises(LookupError):
        get_service("DCM0", "NoSuchService", nameserver=dcm_proc.nameserver)
    with pytest.raises(LookupError):
        get_service("NoSuchDCM", "DCMService", nameserver=dcm_proc.nameserver)
