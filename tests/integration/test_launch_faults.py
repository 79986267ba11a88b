"""Launches that fail or die, and naming services that move or restart.

* a failing launch against a live system's naming service leaves the live names and
  connections alone; a parameter error starts no omniNames;
* a second process taking a live name warns naming both, and gives it back at exit;
* kill -9 of a launcher: its child managers, the omniNames it started and its temporary
  folder go within a few seconds, and so do the names it left;
* re-registration (on by default) lists the components again after a naming-service
  restart; the restart command rtcf offers works while the data file exists;
* a naming service asked for on 127.0.0.2 is started there.
"""

from __future__ import annotations

import glob
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rtcf.corba import naming as nm

pytestmark = pytest.mark.slow    # seconds per test: left out of scripts/test -m "not slow"

ROOT = Path(__file__).resolve().parents[2]
TESTCOMPS = Path(__file__).resolve().parent / "testcomps"
HOST = socket.gethostname()


def _cmd(yaml_path: Path, ns: str, *overrides: str) -> list[str]:
    cmd = [sys.executable, "-m", "rtcf.manager", str(yaml_path), "--quiet",
           "-o", f"corba.nameservers:{ns}", "-o", "logger.log_level:INFO",
           "-o", f"manager.modules.load_path:{ROOT / 'components'},{TESTCOMPS}"]
    for o in overrides:
        cmd += ["-o", o]
    return cmd


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT),
                                         env.get("PYTHONPATH", "")])
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / f"{name}.yaml"
    p.write_text(text)
    return p


def _run(tmp_path: Path, text: str, ns: str, *overrides: str,
         timeout: float = 300) -> subprocess.CompletedProcess:
    """Run a manager to its end (a launch expected to fail)."""
    path = _write(tmp_path, f"run{time.monotonic_ns() % 10**8}", text)
    return subprocess.run(_cmd(path, ns, *overrides), capture_output=True, text=True,
                          timeout=timeout, env=_env(), cwd=tmp_path, stdin=subprocess.DEVNULL)


class _Started:
    """Popen'd managers (and any process found to belong to them), killed at teardown."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen] = []
        self.pids: set[int] = set()

    def start(self, tmp_path: Path, text: str, ns: str, *overrides: str) -> subprocess.Popen:
        path = _write(tmp_path, f"sys{len(self.procs)}", text)
        log = open(tmp_path / f"sys{len(self.procs)}.log", "wb")
        p = subprocess.Popen(_cmd(path, ns, *overrides), stdout=log, stderr=subprocess.STDOUT,
                             env=_env(), cwd=tmp_path, stdin=subprocess.DEVNULL,
                             start_new_session=True)
        p.log_path = tmp_path / f"sys{len(self.procs)}.log"   # type: ignore[attr-defined]
        self.procs.append(p)
        return p

    def close(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                    p.wait(30)
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    pass
        for pid in list(self.pids) + [p.pid for p in self.procs]:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        for p in self.procs:
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                pass


@pytest.fixture
def started():
    s = _Started()
    yield s
    s.close()


def _processes_with(*needles: str) -> dict[int, str]:
    """Live processes whose command line contains every needle."""
    found = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        try:
            stat = (d / "stat").read_text()
            if stat.rsplit(")", 1)[1].split()[0] == "Z":
                continue
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, IndexError):
            continue
        if all(n in cmd for n in needles):
            found[int(d.name)] = cmd
    return found


def _resolves(client, instance: str) -> bool:
    try:
        obj = client.resolve(f"{HOST}.host_cxt/{instance}.rtc")
    except LookupError:
        return False
    try:
        return not obj._non_existent()
    except Exception:
        return False


LIVE = """
name: live
components:
  - {{type: SineGenerator, module: examples, name: {gen}}}
  - {{type: Recorder, module: examples, name: {rec}}}
connections:
  - {{from: {gen}.out, to: {rec}.in}}
execution_contexts:
  - {{name: main, kind: periodic, rate: 50, members: [{gen}, {rec}]}}
activate: [{gen}, {rec}]
"""

FAILING = {
    "bad_connection": LIVE.replace("to: {rec}.in", "to: {rec}.nosuchport"),
    "init_raises": """
name: failing
components:
  - {{type: SineGenerator, module: examples, name: {gen}}}
  - {{type: Recorder, module: examples, name: {rec}}}
  - {{type: InitFails, module: faulty, name: broken}}
execution_contexts:
  - {{name: main, kind: periodic, rate: 50, members: [{gen}, {rec}, broken]}}
""",
}


# -- defect 1 -----------------------------------------------------------------------------------

@pytest.mark.parametrize("case", sorted(FAILING))
def test_failing_launch_leaves_the_live_system_alone(launch, it, tmp_path, naming, case):
    tag = f"{case[:4]}{time.monotonic_ns() % 10**6}"
    gen, rec = f"lgen{tag}", f"lrec{tag}"
    live = launch(LIVE.format(gen=gen, rec=rec), [gen, rec])
    gref, rref = live.ref(gen), live.ref(rec)
    conns = [cp.connector_id for cp in it.connector_profiles(live.port(gen, "out"))]
    assert len(conns) == 1
    cp = _run(tmp_path, FAILING[case].format(gen=gen, rec=rec), f"localhost:{naming.port}")
    assert cp.returncode == 2, cp.stderr
    assert "Traceback" not in cp.stderr, cp.stderr
    client = it.naming_client(naming.port)
    for inst, ref in ((gen, gref), (rec, rref)):
        held = client.resolve(f"{HOST}.host_cxt/{inst}.rtc")
        assert held._is_equivalent(ref), f"{inst} is no longer bound to the live component"
    assert [c.connector_id for c in it.connector_profiles(live.port(gen, "out"))] == conns
    assert it.component_state(gref) == "ACTIVE" and live.alive()


MULTI_FAILING = """
name: multifail
components:
  - {{type: SineGenerator, module: examples, name: {gen}}}
  - {{type: Recorder, module: examples, name: {rec}, process: other}}
  - {{type: InitFails, module: faulty, name: broken, process: other}}
connections:
  - {{from: {gen}.out, to: {rec}.in}}
execution_contexts:
  - {{name: main, kind: periodic, rate: 50, members: [{gen}, {rec}, broken]}}
"""


def test_failing_child_process_leaves_the_live_names_alone(launch, it, tmp_path, naming):
    """A multi-process relaunch is atomic. Its child fails in
    on_initialize: the command exits 2, and at no moment does a name of the live system
    point at the failing one (it used to for 0.8 s, and the command exited 0)."""
    import threading
    tag = f"{time.monotonic_ns() % 10**6}"
    gen, rec = f"mgen{tag}", f"mrec{tag}"
    live = launch(LIVE.format(gen=gen, rec=rec), [gen, rec])
    refs = {gen: live.ref(gen), rec: live.ref(rec)}
    client = it.naming_client(naming.port)
    moved: list[str] = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            for inst, ref in refs.items():
                try:
                    held = client.resolve(f"{HOST}.host_cxt/{inst}.rtc")
                    if not held._is_equivalent(ref):
                        moved.append(inst)
                except Exception as e:
                    moved.append(f"{inst}: {e!r}")
            time.sleep(0.01)
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        cp = _run(tmp_path, MULTI_FAILING.format(gen=gen, rec=rec), f"localhost:{naming.port}")
    finally:
        done.set()
        watcher.join(5)
    assert cp.returncode == 2, cp.stderr
    assert "process 'other' failed" in cp.stderr and "InitFails" in cp.stderr, cp.stderr
    assert "not ready within" not in cp.stderr, cp.stderr   # the child's report, no timeout
    assert not moved, f"the live names moved during the failed launch: {moved[:5]}"
    assert it.component_state(refs[gen]) == "ACTIVE" and live.alive()
    assert not _processes_with("rtcf.manager", "--process other", "multifail")


def test_child_with_a_name_the_naming_service_cannot_carry_fails_at_once(tmp_path, naming):
    """It used to leave the main process running 30 s before giving up."""
    text = MULTI_FAILING.replace("name: broken", "name: br\u00f6ken\u540d").replace(
        "broken]", "br\u00f6ken\u540d]").format(gen="ngen", rec="nrec")
    cp = _run(tmp_path, text, f"localhost:{naming.port}")
    assert cp.returncode == 2 and "outside Latin-1" in cp.stderr, cp.stderr
    assert "not ready within" not in cp.stderr, cp.stderr   # the child's report, no timeout


def test_child_process_dying_while_running_ends_the_launch_non_zero(tmp_path, naming,
                                                                     started):
    tag = f"{time.monotonic_ns() % 10**6}"
    gen, rec = f"xgen{tag}", f"xrec{tag}"
    text = MULTI_FAILING.replace("  - {{type: InitFails, module: faulty, name: broken, "
                                 "process: other}}\n", "").replace(", broken]", "]")
    proc = started.start(tmp_path, text.format(gen=gen, rec=rec), f"localhost:{naming.port}")
    client = _Client(f"127.0.0.1:{naming.port}")
    _wait_bound(proc, client, gen, rec)
    children = _processes_with("rtcf.manager", "--process other", f"sys{len(started.procs) - 1}")
    assert len(children) == 1, children
    os.kill(next(iter(children)), signal.SIGKILL)
    assert proc.wait(120) == 1, proc.log_path.read_text()
    assert "a process of the system exited" in proc.log_path.read_text()


def test_parameter_error_starts_no_naming_service(tmp_path):
    port = nm.free_port()
    text = LIVE.replace("name: {gen}}", "name: {gen}, params: {{frequency: -1}}}")
    cp = _run(tmp_path, text.format(gen="pgen", rec="prec"), f"localhost:{port}")
    assert cp.returncode == 2 and "frequency" in cp.stderr, cp.stderr
    assert not nm.naming_service_alive("127.0.0.1", port)
    assert not _processes_with("omniNames", f":{port}")
    assert not glob.glob(f"/tmp/rtcf-omninames-{port}-*")


def test_taking_a_live_name_warns_naming_both_and_gives_it_back(launch, it, tmp_path, naming,
                                                                started):
    tag = f"{time.monotonic_ns() % 10**6}"
    gen, rec = f"dgen{tag}", f"drec{tag}"
    first = launch(LIVE.format(gen=gen, rec=rec), [gen, rec])
    gref = first.ref(gen)
    second = started.start(tmp_path, LIVE.format(gen=gen, rec=f"other{tag}"),
                           f"localhost:{naming.port}")
    client = it.naming_client(naming.port)
    it.wait_until(lambda: _resolves(client, f"other{tag}"), 20, what="the second system")
    text = second.log_path.read_text()
    assert f"was held by component {gen} (type SineGenerator) of another live process" \
        in text, text
    assert f"of this process (pid {second.pid})" in text, text
    assert not client.resolve(f"{HOST}.host_cxt/{gen}.rtc")._is_equivalent(gref)
    os.killpg(second.pid, signal.SIGTERM)
    assert second.wait(60) == 0
    # the first system's component has its name back; the second's own name is gone
    assert client.resolve(f"{HOST}.host_cxt/{gen}.rtc")._is_equivalent(gref)
    assert not _resolves(client, f"other{tag}")


# -- defect 12 ----------------------------------------------------------------------------------

MULTI = """
name: multi
components:
  - {{type: SineGenerator, module: examples, name: {gen}}}
  - {{type: Recorder, module: examples, name: {rec}, process: second}}
  - {{type: Recorder, module: examples, name: {rec2}, process: third}}
connections:
  - {{from: {gen}.out, to: {rec}.in}}
execution_contexts:
  - {{name: main, kind: periodic, rate: 50, members: [{gen}, {rec}, {rec2}]}}
activate: [{gen}, {rec}, {rec2}]
"""


@pytest.mark.parametrize("ns", ["shared", "own"])
def test_kill_9_of_a_launcher_leaves_nothing(tmp_path, naming, started, ns):
    """kill -9 of the launcher only (not its group): the child managers end, and with them
    the launcher's names (shared naming service), or the omniNames it started and its
    private folder (own naming service)."""
    tag = f"{ns}{time.monotonic_ns() % 10**6}"
    names = [f"mgen{tag}", f"mrec{tag}", f"mrec2{tag}"]
    port = naming.port if ns == "shared" else nm.free_port()
    launcher = started.start(tmp_path, MULTI.format(gen=names[0], rec=names[1],
                                                    rec2=names[2]), f"localhost:{port}")
    client = _Client(f"127.0.0.1:{port}")
    deadline = time.monotonic() + 120
    while not all(_resolves_safe(client, n) for n in names):
        assert launcher.poll() is None, launcher.log_path.read_text()
        assert time.monotonic() < deadline, launcher.log_path.read_text()
        time.sleep(0.1)
    yaml_path = str(tmp_path / "sys0.yaml")
    want = 3 if ns == "shared" else 5
    settle = time.monotonic() + 30
    while True:
        # a process forked by one of them shows its parent's command line until it execs
        # (a reaper, for one), so the count is taken once it is steady
        system = _processes_with(yaml_path)                 # launcher + two children
        if ns == "own":
            system.update(_processes_with("omniNames", f"rtcf-omninames-{port}-"))
            system.update(_processes_with("nsguard.py", f"rtcf-omninames-{port}-"))
        if len(system) == want or time.monotonic() > settle:
            break
        time.sleep(0.1)
    started.pids.update(system)
    assert len(system) == want, system
    if ns == "own":
        assert len(glob.glob(f"/tmp/rtcf-omninames-{port}-*")) == 1

    os.kill(launcher.pid, signal.SIGKILL)
    launcher.wait(5)
    t0 = time.monotonic()
    while time.monotonic() - t0 < 60:
        left = {pid: cmd for pid, cmd in system.items() if Path(f"/proc/{pid}").exists()
                and _not_zombie(pid)}
        if not left:
            break
        time.sleep(0.1)
    assert not left, f"left running after kill -9 of the launcher: {left}"
    if ns == "own":
        assert not glob.glob(f"/tmp/rtcf-omninames-{port}-*")
        assert not nm.naming_service_alive("127.0.0.1", port)
    else:
        for n in names:
            with pytest.raises(LookupError):
                client.resolve(f"{HOST}.host_cxt/{n}.rtc")


class _Client:
    """A NamingClient made on first use (the naming service may not be up yet)."""

    def __init__(self, where: str):
        self.where = where
        self._c = None

    def resolve(self, path: str):
        if self._c is None:
            from rtcf.corba.orb import init_orb
            self._c = nm.NamingClient(init_orb({}), self.where)
        return self._c.resolve(path)


def _resolves_safe(client, instance: str) -> bool:
    try:
        return _resolves(client, instance)
    except Exception:
        return False


def _wait_bound(proc: subprocess.Popen, client, *instances: str) -> None:
    """Until every instance resolves to a live object (the started manager still runs)."""
    deadline = time.monotonic() + 120
    while not all(_resolves_safe(client, i) for i in instances):
        assert proc.poll() is None and time.monotonic() < deadline, proc.log_path.read_text()
        time.sleep(0.1)


def _not_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


# -- defect 13 ----------------------------------------------------------------------------------

def test_components_listed_again_after_a_naming_service_restart(tmp_path, started):
    """Re-registration is on without being asked for (OpenRTM-aist's default); the
    interval is naming.update.interval: a manager at 1 s is listed again after the naming
    service restarts, while one at 600 s, started beside it, is not yet (its first check
    is due 600 s after its start). The contrast shows the interval at work, however slow
    the machine."""
    from rtcf.corba.orb import init_orb
    port = nm.free_port()
    ns = nm.ensure_naming_service(port=port, timeout=60)
    try:
        tag = f"{time.monotonic_ns() % 10**6}"
        gen, rec = f"rgen{tag}", f"rrec{tag}"
        slow_gen, slow_rec = f"lgen{tag}", f"lrec{tag}"
        proc = started.start(tmp_path, LIVE.format(gen=gen, rec=rec), f"localhost:{port}",
                             "naming.update.interval:1")
        slow = started.start(tmp_path, LIVE.format(gen=slow_gen, rec=slow_rec).replace(
            "name: live", "name: live600"), f"localhost:{port}", "naming.update.interval:600")
        client = nm.NamingClient(init_orb({}), f"127.0.0.1:{port}")
        deadline = time.monotonic() + 120
        while not (_resolves_safe(client, gen) and _resolves_safe(client, slow_gen)):
            assert proc.poll() is None and slow.poll() is None and \
                time.monotonic() < deadline, proc.log_path.read_text()
            time.sleep(0.1)
        ns.stop()                                   # the naming service dies...
        ns = nm.ensure_naming_service(port=port, timeout=60)   # ...a fresh one, empty
        t0 = time.monotonic()
        while not (_resolves_safe(client, gen) and _resolves_safe(client, rec)):
            assert time.monotonic() - t0 < 120, \
                f"not listed again:\n{proc.log_path.read_text()}"
            time.sleep(0.05)
        print(f"listed again {time.monotonic() - t0:.2f} s after the restart "
              "(naming.update.interval 1 s)")
        assert not _resolves_safe(client, slow_gen) and not _resolves_safe(client, slow_rec)
    finally:
        ns.stop()


def _start_restart(cmd: list[str], port: int) -> subprocess.Popen:
    """Run an offered omniNames restart command; returns once it answers on ``port``."""
    restart = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                               start_new_session=True)
    deadline = time.monotonic() + 60
    while not nm.naming_service_alive("127.0.0.1", port):
        assert restart.poll() is None, f"the offered restart command failed: {cmd}"
        assert time.monotonic() < deadline
        time.sleep(0.05)
    return restart


def test_offered_restart_command_works_while_the_data_file_exists(tmp_path):
    from rtcf.corba.orb import init_orb
    port = nm.free_port()
    data = tmp_path / "ns"
    ns = nm.ensure_naming_service(port=port, log_dir=data, timeout=60)
    restart = None
    try:
        client = nm.NamingClient(init_orb({}), f"127.0.0.1:{port}")
        client.bind("kept.host_cxt/x.rtc", client.root)
        ns.stop()
        assert nm.has_data_file(data)
        cmd = ns.restart_command()
        assert "-start" not in cmd
        restart = _start_restart(cmd, port)
        assert client.resolve("kept.host_cxt/x.rtc") is not None   # its data came back
        restart.terminate()
        restart.wait(5)
        # and rtcf itself restarts it from the same folder (no -start with a data file)
        ns = nm.ensure_naming_service(port=port, log_dir=data, timeout=60)
        assert ns.started
        assert client.resolve("kept.host_cxt/x.rtc") is not None
    finally:
        ns.stop()
        if restart is not None and restart.poll() is None:
            restart.kill()
            restart.wait(5)


def test_printed_restart_command_works_after_omninames_was_killed(tmp_path, started):
    """The command rtcf prints when it starts an omniNames restarts it
    after that omniNames died: the data folder stays while the system runs (it used to go
    with omniNames) and the command has no -start. The folder goes when the system ends."""
    import re
    import shlex
    port = nm.free_port()
    tag = f"{time.monotonic_ns() % 10**6}"
    gen, rec = f"kgen{tag}", f"krec{tag}"
    proc = started.start(tmp_path, LIVE.format(gen=gen, rec=rec), f"localhost:{port}",
                         "naming.update.enable:NO")    # the names must come from the file
    client = _Client(f"127.0.0.1:{port}")
    restart = None
    try:
        deadline = time.monotonic() + 120
        while not _resolves_safe(client, gen):
            assert proc.poll() is None and time.monotonic() < deadline, \
                proc.log_path.read_text()
            time.sleep(0.1)
        m = re.search(r"started omniNames on \S+ \(data in (\S+); .*to restart it by hand "
                      r"meanwhile: (.*)\)$", proc.log_path.read_text(), re.M)
        assert m, proc.log_path.read_text()
        folder, cmd = Path(m.group(1)), shlex.split(m.group(2))
        names = {pid: c for pid, c in _processes_with("-logdir", str(folder)).items()
                 if "nsguard" not in c}
        assert len(names) == 1, names
        os.kill(next(iter(names)), signal.SIGKILL)         # omniNames dies
        deadline = time.monotonic() + 60
        while nm.naming_service_alive("127.0.0.1", port):
            assert time.monotonic() < deadline
            time.sleep(0.1)
        time.sleep(1.0)                                    # the guard has seen it die
        assert folder.is_dir() and nm.has_data_file(folder), "the data folder went"
        restart = _start_restart(cmd, port)
        fresh = _Client(f"127.0.0.1:{port}")
        assert _resolves_safe(fresh, gen) and _resolves_safe(fresh, rec)   # from the file
        assert proc.poll() is None
    finally:
        if restart is not None:
            restart.terminate()
            restart.wait(5)
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(60)
    deadline = time.monotonic() + 60
    while folder.exists():                                 # gone with the system
        assert time.monotonic() < deadline, f"{folder} left behind"
        time.sleep(0.1)


# -- defect 14 ----------------------------------------------------------------------------------

def test_naming_service_started_on_the_loopback_address_asked_for(tmp_path, started):
    port = nm.free_port("127.0.0.2")
    tag = f"{time.monotonic_ns() % 10**6}"
    proc = started.start(tmp_path, LIVE.format(gen=f"agen{tag}", rec=f"arec{tag}"),
                         f"127.0.0.2:{port}")
    try:
        client = _Client(f"127.0.0.2:{port}")
        deadline = time.monotonic() + 120
        while not _resolves_safe(client, f"agen{tag}"):
            assert proc.poll() is None and time.monotonic() < deadline, \
                proc.log_path.read_text()
            time.sleep(0.1)
        out = subprocess.run(["ss", "-ltn"], capture_output=True, text=True).stdout
        lines = [ln for ln in out.splitlines() if f":{port} " in ln]
        assert lines and all("127.0.0.2:" in ln for ln in lines), lines
        assert not nm.naming_service_alive("127.0.0.1", port)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(60)
    assert not glob.glob(f"/tmp/rtcf-omninames-{port}-*")


def test_kill_9_of_a_single_process_manager_unbinds_its_names(tmp_path, naming, started):
    """No child to clean up after it: the manager's reaper (its own session, fed through a
    pipe that kill -9 closes) unbinds the names it left in the shared naming service."""
    tag = f"{time.monotonic_ns() % 10**6}"
    gen, rec = f"sgen{tag}", f"srec{tag}"
    proc = started.start(tmp_path, LIVE.format(gen=gen, rec=rec), f"localhost:{naming.port}")
    client = _Client(f"127.0.0.1:{naming.port}")
    _wait_bound(proc, client, gen, rec)
    reapers = {pid for pid, cmd in _processes_with("reaper.py").items()
               if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]
               == str(proc.pid)}
    assert len(reapers) == 1, reapers
    started.pids.update(reapers)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(5)
    t0 = time.monotonic()
    while _names_left(client, gen, rec) or any(_not_zombie(p) for p in reapers):
        assert time.monotonic() - t0 < 60, (_names_left(client, gen, rec), reapers)
        time.sleep(0.1)


def _names_left(client, *instances: str) -> list[str]:
    left = []
    for inst in instances:
        try:
            client.resolve(f"{HOST}.host_cxt/{inst}.rtc")
            left.append(inst)
        except LookupError:
            pass
    return left
