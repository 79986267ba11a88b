"""Integration test setup: a private naming service, rtcf managers in subprocesses, rtshell
commands, and in-process CORBA helpers (component state, port references, a data probe).

* ``naming`` (session): omniNames on a free loopback port, stopped at the end.
* ``launch`` (function) / ``module_launch`` (module): ``launch(yaml_or_path, name)`` runs
  ``python -m rtcf.manager`` on that composition in its own process group, waits until
  ``<hostname>.host_cxt/<name>.rtc`` resolves and returns a :class:`ManagerProcess`. Every
  process is stopped at teardown (SIGTERM, then SIGKILL).
* ``start_as_a_user(args, naming, cwd, names)``: the manager started as scripts/run starts
  it (``-f`` rtc.conf files, no test components), once ``names`` are bound.
* ``compile_hrpsys_stubs(out, *idls)``: an hrpsys client's stubs, from hrpsys-base's IDL.
* ``rtsh(cmd, *args)``: run an rtshell command (found next to sys.executable).
* ``component_state(ref)``: the component's LifeCycleState asked over CORBA from its owned
  (else participating) EC; tests check states this way, never through exit codes.
* ``probe`` (function): InPorts living in the test process (registered with rtcf's own
  CorbaRuntime, not bound in naming) that record every sample pushed to them.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
TESTCOMPS = HERE / "testcomps"
BIN = Path(sys.executable).parent
HOST = socket.gethostname()
# generous bounds: a loaded machine (two busy loops per core) starts and stops a manager in
# several seconds; a passing test never waits them out
STARTUP_TIMEOUT = 120.0
STOP_TIMEOUT = 30.0

# Every manager process started by this session (pid -> Popen), checked at the very end.
_STARTED: dict[int, subprocess.Popen] = {}


# -- small utilities -------------------------------------------------------------------------

# The least a wait for a condition waits before it fails [s]: what takes a second on a quiet
# machine takes many on a loaded one, and a test that passes never waits this out.
MIN_WAIT = 60.0


def wait_until(pred: Callable[[], Any], timeout: float = 5.0, interval: float = 0.05,
               what: str = "condition") -> Any:
    """Poll pred until it returns something truthy; AssertionError naming ``what`` after
    ``timeout`` seconds, and never before MIN_WAIT (the timeout a caller gives is what the
    condition takes on a quiet machine)."""
    timeout = max(timeout, MIN_WAIT)
    deadline = time.monotonic() + timeout
    last = None
    while True:
        last = pred()
        if last:
            return last
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what} "
                                 f"(last value {last!r})")
        time.sleep(interval)


def rtsh(cmd: str, *args: str, timeout: float = 20.0, check: bool = False
         ) -> subprocess.CompletedProcess:
    """Run an rtshell command (``rtls``, ``rtcat``, ...) from sys.executable's bin folder."""
    exe = BIN / cmd
    if not exe.exists():
        pytest.skip(f"{exe} not found (install rtshell-aist in this venv)")
    env = dict(os.environ)
    env.pop("RTCTREE_NAMESERVERS", None)
    cp = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True,
                        timeout=timeout, env=env, stdin=subprocess.DEVNULL)
    if check and cp.returncode != 0:
        raise AssertionError(f"{cmd} {' '.join(map(str, args))} exited {cp.returncode}:\n"
                             f"{cp.stdout}\n{cp.stderr}")
    return cp


# -- CORBA in the test process -----------------------------------------------------------------

def orb() -> Any:
    from rtcf.corba.orb import init_orb
    return init_orb({})


def stubs(name: str) -> Any:
    from rtcf.corba.idl import stub_module
    return stub_module(name)


def naming_client(port: int) -> Any:
    from rtcf.corba.naming import NamingClient
    return NamingClient(orb(), f"127.0.0.1:{port}")


def resolve_rtc(port: int, instance: str) -> Any:
    """The RTC::RTObject bound at <hostname>.host_cxt/<instance>.rtc (LookupError if not)."""
    RTC = stubs("RTC")
    obj = naming_client(port).resolve(f"{HOST}.host_cxt/{instance}.rtc")
    narrowed = obj._narrow(RTC.RTObject)
    if narrowed is None:
        raise LookupError(f"{instance} is not an RTC::RTObject")
    return narrowed


def component_ec(ref: Any) -> Any:
    ecs = list(ref.get_owned_contexts()) or list(ref.get_participating_contexts())
    if not ecs:
        raise AssertionError("the component is in no execution context")
    return ecs[0]


def component_state(ref: Any) -> str:
    """'CREATED' | 'INACTIVE' | 'ACTIVE' | 'ERROR' read over CORBA."""
    st = component_ec(ref).get_component_state(ref)
    return str(st).replace("_STATE", "")


def wait_state(ref: Any, want: str, timeout: float = 5.0) -> None:
    wait_until(lambda: component_state(ref) == want, timeout, what=f"state {want}")


def port_ref(comp_ref: Any, port: str) -> Any:
    """The PortService named <instance>.<port> (or just <port>) of a component."""
    for p in comp_ref.get_ports():
        name = p.get_port_profile().name
        if name == port or name.split(".", 1)[-1] == port:
            return p
    raise LookupError(f"no port {port!r}")


def connector_profiles(pref: Any) -> list:
    return list(pref.get_connector_profiles())


def props_of(cp: Any) -> dict[str, Any]:
    from rtcf.corba.nv import from_nvlist
    return from_nvlist(cp.properties, strings_only=False)


def make_profile(ports: list, props: dict[str, Any], name: str = "test") -> Any:
    from rtcf.corba.nv import to_nvlist
    RTC = stubs("RTC")
    full = {"dataport.dataflow_type": "push", "dataport.interface_type": "corba_cdr",
            "dataport.subscription_type": "flush",
            "dataport.data_type": "IDL:RTC/TimedDoubleSeq:1.0"}
    full.update(props)
    full = {k: v for k, v in full.items() if v is not None}
    return RTC.ConnectorProfile(name, "", list(ports), to_nvlist(full))


def connect_ports(out_ref: Any, in_ref: Any, **props: Any) -> str:
    """Connect two PortServices the way rtcon does (connect() on the first); returns the
    connector id. Keys without 'dataport.' get it."""
    RTC = stubs("RTC")
    full = {(k if k.startswith("dataport.") else "dataport." + k): v for k, v in props.items()}
    code, cp = out_ref.connect(make_profile([out_ref, in_ref], full))
    assert code == RTC.RTC_OK, f"connect returned {code}"
    return cp.connector_id


# -- the data probe -----------------------------------------------------------------------------

class ProbeHandle:
    """One InPort of a component in the test process; records what arrives over CORBA."""

    def __init__(self, comp: Any, port: Any, ref: Any):
        self.comp = comp
        self.port = port
        self.ref = ref
        self._lock = threading.Lock()
        self.samples: list[np.ndarray] = []
        self.count = 0
        from rtcf.ports import PortEvent
        port.add_listener(PortEvent.ON_RECEIVED, self._on_received)

    def _on_received(self, port: Any, cid: str, sample: Any) -> None:
        data = np.array(sample.data, dtype=float, copy=True)
        with self._lock:
            self.count += 1
            self.samples.append(data)
            if len(self.samples) > 2000:
                del self.samples[:1000]

    def clear(self) -> None:
        with self._lock:
            self.samples.clear()
            self.count = 0

    def recent(self, n: int = 10) -> list[np.ndarray]:
        with self._lock:
            return list(self.samples[-n:])

    def wait_count(self, n: int, timeout: float = 5.0) -> int:
        return wait_until(lambda: self.count >= n and self.count, timeout,
                          what=f"{n} samples at probe {self.comp.instance_name}")

    def quiet_for(self, seconds: float) -> bool:
        """True when no sample arrived during ``seconds``."""
        before = self.count
        time.sleep(seconds)
        return self.count == before


class _Probes:
    def __init__(self) -> None:
        from rtcf.component import Component
        from rtcf.corba.runtime import CorbaRuntime
        from rtcf.datatypes import TimedDoubleSeq

        class Probe(Component):
            """Records what its InPort receives (test process)."""

            category = "test"

            def on_initialize(self) -> None:
                self.inp = self.add_in_port("in", TimedDoubleSeq)

        self._cls = Probe
        self.rt = CorbaRuntime(None, {"naming.enable": "NO"})
        self.comps: list = []
        self._n = 0

    def new(self) -> ProbeHandle:
        self._n += 1
        comp = self._cls(f"probe{os.getpid()}_{self._n}")
        comp.initialize()
        self.rt.register_component(comp)
        ps = self.rt.port_servant(comp.inp)
        self.comps.append(comp)
        return ProbeHandle(comp, comp.inp, ps.ref)

    def close_one(self, comp: Any) -> None:
        try:
            self.rt.unregister_component(comp)   # disconnects every connection first
        except Exception:
            pass

    def close(self) -> None:
        for comp in self.comps:
            self.close_one(comp)
        self.comps.clear()


_probes: _Probes | None = None


def _probe_registry() -> _Probes:
    global _probes
    if _probes is None:
        _probes = _Probes()
    return _probes


def _probe_factory() -> Any:
    """``new()`` -> a ProbeHandle; all are unregistered (and disconnected) at the end."""
    made: list[ProbeHandle] = []
    reg = _probe_registry()

    def new() -> ProbeHandle:
        h = reg.new()
        made.append(h)
        return h
    yield new
    for h in made:
        reg.close_one(h.comp)


@pytest.fixture
def probe() -> Any:
    yield from _probe_factory()


@pytest.fixture(scope="module")
def module_probe() -> Any:
    yield from _probe_factory()


# -- naming service and managers ----------------------------------------------------------------

@pytest.fixture(scope="session")
def naming() -> Any:
    from rtcf.corba.naming import ensure_naming_service, free_port
    handle = ensure_naming_service("127.0.0.1", free_port(), timeout=15)
    assert handle.started
    yield handle
    handle.stop()


class ManagerProcess:
    """A running ``python -m rtcf.manager`` in its own process group."""

    def __init__(self, proc: subprocess.Popen, log_path: Path, ns_port: int, yaml_path: Path):
        self.proc = proc
        self.log_path = log_path
        self.ns_port = ns_port
        self.yaml_path = yaml_path

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log(self, tail: int = 6000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-tail:]
        except OSError:
            return "<no log>"

    def path(self, instance: str, port: str | None = None) -> str:
        """The rtshell path of a component (or of one of its ports)."""
        p = f"/localhost:{self.ns_port}/{HOST}.host_cxt/{instance}.rtc"
        return f"{p}:{port}" if port else p

    def ref(self, instance: str) -> Any:
        return resolve_rtc(self.ns_port, instance)

    def port(self, instance: str, port: str) -> Any:
        return port_ref(self.ref(instance), port)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def wait_bound(self, names: Iterable[str], timeout: float, context: str = HOST) -> None:
        """Return once each of ``names`` is bound to a live RTC::RTObject (under
        ``<context>.host_cxt``, or at the naming root when ``context`` is ""); else stop the
        manager and fail the test with its log."""
        RTC = stubs("RTC")
        client = naming_client(self.ns_port)
        deadline = time.monotonic() + timeout
        pending = list(names)
        while pending:
            if self.proc.poll() is not None:
                text = self.log()
                self.stop()
                pytest.fail(f"manager for {self.yaml_path.name} exited with "
                            f"{self.proc.returncode} before {pending[0]} was bound:\n{text}")
            path = f"{context}.host_cxt/{pending[0]}.rtc" if context else f"{pending[0]}.rtc"
            try:   # a stale binding of a killed process does not count
                ref = client.resolve(path)._narrow(RTC.RTObject)
                if ref is not None and not ref._non_existent():
                    pending.pop(0)
                    continue
            except Exception:
                pass
            if time.monotonic() > deadline:
                text = self.log()
                self.stop()
                pytest.fail(f"{pending[0]} not bound within {timeout:g} s:\n{text}")
            time.sleep(0.05)

    def stop(self, timeout: float = STOP_TIMEOUT) -> int | None:
        """SIGTERM the group, SIGKILL after timeout; returns the exit code."""
        proc = self.proc
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait(timeout)
        else:
            try:   # the leader is gone; make sure nothing of its group remains
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        _STARTED.pop(proc.pid, None)
        return proc.returncode

    def kill(self) -> None:
        """kill -9 the whole process group (a peer dying without any cleanup)."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(STOP_TIMEOUT)


class Launcher:
    def __init__(self, ns: Any, directory: Path):
        self.ns = ns
        self.dir = directory
        self.procs: list[ManagerProcess] = []

    def __call__(self, composition: str | os.PathLike, name: str | Iterable[str],
                 *overrides: str, duration: float | None = None,
                 quiet: bool = True) -> ManagerProcess:
        names = [name] if isinstance(name, str) else list(name)
        if isinstance(composition, str) and "\n" in composition:
            yaml_path = self.dir / f"{names[0]}_{len(self.procs)}.yaml"
            yaml_path.write_text(composition)
        else:
            yaml_path = Path(composition).resolve()
        log_path = self.dir / f"{yaml_path.stem}_{len(self.procs)}.log"
        load_path = str(TESTCOMPS)
        cmd = [sys.executable, "-m", "rtcf.manager", str(yaml_path),
               *(["--quiet"] if quiet else []),
               "-o", f"corba.nameservers:localhost:{self.ns.port}",
               "-o", "logger.log_level:INFO",
               "-o", f"manager.modules.load_path:{load_path}"]
        for o in overrides:
            cmd += ["-o", o]
        if duration is not None:
            cmd += ["--duration", str(duration)]
        env = dict(os.environ)
        extra = [str(ROOT)]
        if env.get("PYTHONPATH"):
            extra.append(env["PYTHONPATH"])
        env["PYTHONPATH"] = os.pathsep.join(extra)
        env["PYTHONUNBUFFERED"] = "1"
        with open(log_path, "wb") as out:
            proc = subprocess.Popen(cmd, cwd=self.dir, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, env=env,
                                    start_new_session=True)
        _STARTED[proc.pid] = proc
        mp = ManagerProcess(proc, log_path, self.ns.port, yaml_path)
        self.procs.append(mp)
        mp.wait_bound(names, STARTUP_TIMEOUT)
        return mp

    def close(self) -> None:
        aborted = []
        for mp in reversed(self.procs):
            mp.stop()
            assert mp.proc.poll() is not None, f"manager {mp.pid} still running"
            try:
                text = mp.log_path.read_text(errors="replace")
            except OSError:
                text = ""
            if "terminate called" in text:     # omniORB threads still running at exit
                aborted.append(f"{mp.yaml_path.name}:\n{text[-2000:]}")
        self.procs.clear()
        assert not aborted, "a manager aborted at exit:\n" + "\n".join(aborted)


@pytest.fixture
def launch(naming: Any, tmp_path: Path) -> Any:
    launcher = Launcher(naming, tmp_path)
    yield launcher
    launcher.close()


@pytest.fixture(scope="module")
def module_launch(naming: Any, tmp_path_factory: Any) -> Any:
    launcher = Launcher(naming, tmp_path_factory.mktemp("managers"))
    yield launcher
    launcher.close()


def start_as_a_user(args: list[str], naming: Any, cwd: Path, names: Iterable[str],
                    host: str = "", timeout: float = 40.0) -> ManagerProcess:
    """``python -m rtcf.manager --quiet <args>`` as a user starts it (scripts/run's
    environment: no PYTHONPATH, no test components), only the naming address changed and
    SCHED_FIFO off; returns once every one of ``names`` is bound (under ``host``'s context,
    or at the naming root when ``host`` is ""), else stops it and fails with its log.
    ``timeout`` is what a quiet machine needs; never less than MIN_WAIT. The caller stops it
    (``mp.stop()``)."""
    log_path = cwd / "manager.log"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "rtcf.manager", "--quiet", *args,
                                 "-o", f"corba.nameservers:localhost:{naming.port}",
                                 "-o", "exec_cxt.periodic.sched_fifo:NO"],
                                cwd=cwd, stdout=log, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)
    _STARTED[proc.pid] = proc
    mp = ManagerProcess(proc, log_path, naming.port, cwd)
    mp.wait_bound(names, max(timeout, MIN_WAIT), host)
    return mp


def compile_hrpsys_stubs(out: Path, *idls: str) -> None:
    """Python stubs, compiled with omniidl into ``out``, of the standard RTC IDL and of
    hrpsys-base's declarations in tests/integration/hrpsys (``idls``, file names there;
    default: SequencePlayerService.idl): what an hrpsys client imports, nothing of rtcf's."""
    from rtcf.corba.idl import standard_idl_dir
    std = standard_idl_dir()
    files = sorted(str(p) for p in std.glob("*.idl"))
    files += [str(HERE / "hrpsys" / name) for name in idls or ("SequencePlayerService.idl",)]
    res = subprocess.run([str(BIN / "omniidl"), "-bpython", f"-C{out}", f"-I{std}",
                          f"-I{HERE / 'hrpsys'}", *files],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr


def _children_running_manager() -> list[str]:
    """Live processes whose parent is this process and that run rtcf.manager."""
    me = str(os.getpid())
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            ppid = stat.rsplit(")", 1)[1].split()[1]
            state = stat.rsplit(")", 1)[1].split()[0]
            if ppid != me or state == "Z":
                continue
            cmdline = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, IndexError):
            continue
        if "rtcf.manager" in cmdline:
            found.append(f"{d.name}: {cmdline}")
    return found


@pytest.fixture(scope="session", autouse=True)
def _no_leftover_managers() -> Any:
    """At the end of the session no rtcf.manager child of this process may remain."""
    yield
    if _probes is not None:
        _probes.close()
    leftovers = [p for p in _STARTED.values() if p.poll() is None]
    for p in leftovers:            # clean up anyway, then report
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait(5)
    stray = _children_running_manager()
    assert not leftovers and not stray, (
        f"manager processes left running: {[p.pid for p in leftovers]} {stray}")


# -- the helpers as fixtures (test modules cannot import this conftest by name: every test
#    folder has a conftest.py) ------------------------------------------------------------------

@pytest.fixture(scope="session")
def rtsh_cmd() -> Callable[..., subprocess.CompletedProcess]:
    """``rtsh_cmd("rtls", "-l", path)`` -> CompletedProcess (stdout/stderr as text)."""
    return rtsh


@pytest.fixture(scope="session")
def it() -> Any:
    """Every helper of this module in one namespace (it.rtsh, it.component_state, ...)."""
    from types import SimpleNamespace
    return SimpleNamespace(
        HOST=HOST, BIN=BIN, TESTCOMPS=TESTCOMPS, rtsh=rtsh, wait_until=wait_until,
        orb=orb, stubs=stubs, naming_client=naming_client, resolve_rtc=resolve_rtc,
        component_ec=component_ec, component_state=component_state, wait_state=wait_state,
        port_ref=port_ref, connector_profiles=connector_profiles, props_of=props_of,
        make_profile=make_profile, connect_ports=connect_ports,
        probe_runtime=lambda: _probe_registry().rt)
