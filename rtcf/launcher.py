"""Multi-process systems: one manager per process, cross-process wiring through naming.

A composition whose components name a ``process`` is split: the launching process hosts the
components of process ``main`` (and those naming none) and starts one child manager
(``python -m rtcf.manager FILE --process NAME``, same rtc.conf and -o options) per other
process. The start is atomic: the launcher and every child it started build their part on
hold (components created, ECs started, no name bound, nothing activated); each child reports
its components' object references over a pipe (``RTCF_REPORT_FD``, JSON lines: ``ready``
or ``failed``); the launcher makes each connection whose ends live in different processes,
with the OpenRTM connect() of the output port (as rtcon does), then tells every child to go
(a line on its stdin), and the names are bound and the components activated. A process that
fails before that ends the whole launch with exit status 2 and no name of a live system
touched. The whole composition is validated before any process starts.
Processes may run on other hosts: ``processes: {name: {host: ...}}`` is recorded but the
launcher only starts local children; a process started elsewhere by hand with ``--process``
joins through the same naming service.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import replace
from typing import Any

from .composition import Composition, ConnectionDecl
from .errors import CompositionError
from .log import get_logger
from .realtime import spawning_normal

MAIN = "main"
PARENT_ENV = "RTCF_PARENT_PID"     # set for a child manager: the launcher's pid
REPORT_ENV = "RTCF_REPORT_FD"      # set for a child manager: the fd it reports on
READY_TIMEOUT = 30.0               # [s] for a child to build its part
GO_TIMEOUT = 10.0                  # [s] for a child to bind its names and activate
log = get_logger("launcher")


def _parent_pid() -> int | None:
    raw = os.environ.get(PARENT_ENV, "")
    return int(raw) if raw.isdigit() else None


def follow_parent(manager: Any) -> None:
    """In a child manager: stop in order (SIGTERM -> request_stop) when the launcher dies by
    any means, kill -9 included (Linux prctl PR_SET_PDEATHSIG; parent_alive() is the
    portable backup the run loop polls)."""
    parent = _parent_pid()
    if parent is None:
        return
    from .corba.nsguard import set_parent_death_signal
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, manager.request_stop)
        signal.signal(signal.SIGINT, manager.request_stop)
    set_parent_death_signal(signal.SIGTERM)
    if os.getppid() != parent:         # it died before the line above
        manager.request_stop()


def parent_alive() -> bool:
    """False once the launcher that started this child manager has gone."""
    parent = _parent_pid()
    return parent is None or os.getppid() == parent


def sweep_orphaned_names(manager: Any, composition: Composition, process: str) -> None:
    """In a child manager whose launcher died: unbind the names of the components of the
    other processes whose objects are gone (the launcher cannot unbind its own any more).
    A name held by a live object is left alone. Runs in: the main thread, at shutdown."""
    if parent_alive() or manager.corba is None:
        return
    from .corba.naming import object_alive
    rt = manager.corba
    for decl in composition.components:
        if (decl.process or MAIN) == process:
            continue
        try:
            paths = rt.names_of(_profile_of(manager, decl))
        except Exception:
            continue
        for client in rt.naming:
            for path in paths:
                try:
                    obj = client.resolve(path)
                except Exception:
                    continue
                if not object_alive(obj):
                    try:
                        client.unbind(path)
                        log.info("unbound %s of the ended launcher", path)
                    except Exception:
                        pass


def _profile_of(manager: Any, decl: Any) -> Any:
    """What names_of needs about a component that lives in another process."""
    cls = manager.resolve(decl.type, decl.module)
    return type("Decl", (), {"instance_name": decl.name, "type_name": cls.type_name,
                             "vendor": cls.vendor, "version": cls.version,
                             "category": cls.category})


class ChildChannel:
    """A child manager's side of the launch protocol: JSON lines to the launcher on the
    inherited fd ``RTCF_REPORT_FD``, the launcher's "go" on stdin. Runs in: main thread."""

    def __init__(self, fd: int):
        self.fd = fd

    @classmethod
    def from_env(cls) -> "ChildChannel | None":
        raw = os.environ.get(REPORT_ENV, "")
        return cls(int(raw)) if raw.isdigit() and _parent_pid() is not None else None

    def report(self, message: dict) -> None:
        try:
            os.write(self.fd, (json.dumps(message) + "\n").encode())
        except OSError:
            pass                       # the launcher is gone: follow_parent stops us

    def wait_go(self, manager: Any) -> bool:
        """Block until the launcher says go (True), or says stop, closes stdin, dies or
        this process is asked to stop (False)."""
        buf = b""
        while not getattr(manager, "_stop_flag", False) and parent_alive():
            try:
                ready, _, _ = select.select([sys.stdin.fileno()], [], [], 0.1)
            except (OSError, ValueError):
                return False
            if not ready:
                continue
            chunk = os.read(sys.stdin.fileno(), 256)
            if not chunk:
                return False
            buf += chunk
            if b"\n" in buf:
                return buf.split(b"\n", 1)[0].strip() == b"go"
        return False


def component_iors(manager: Any) -> dict[str, str]:
    """instance -> stringified RTObject reference of every component of this process."""
    rt = manager.corba
    return {name: rt.orb.object_to_string(rt.component_ref(comp))
            for name, comp in manager.components.items()}


EXTERNAL = "external "              # process key of an external component: "external NAME"


def process_of(composition: Composition, instance: str) -> str:
    """The process that runs ``instance``; for an external component (started elsewhere,
    ticked in lockstep), ``external NAME``: a process of its own."""
    ext = composition.external(instance)
    if ext is not None:
        return EXTERNAL + ext.name
    return composition.component(instance).process or MAIN


def resolve_external(manager: Any, decl: Any) -> Any:
    """The RTC::RTObject of an external component: ``decl.rtc`` is an IOR / corbaloc URL or
    a naming path looked up in the composition's naming services. CompositionError naming
    the component when it is not there or does not answer. Runs in: the main thread."""
    from .corba.idl import stub_module
    RTC = stub_module("RTC")
    rt = manager.corba
    file, path = decl.where
    where = f"{file}: {path}.external" if file else f"external component {decl.name}"
    candidates: list[tuple[str, Any]] = []
    if decl.rtc.startswith(("IOR:", "corbaloc:", "corbaname:")):
        try:
            candidates.append((decl.rtc, rt.orb.string_to_object(decl.rtc)))
        except Exception as e:
            raise CompositionError(f"{where}: not an object reference ({e})") from None
    else:
        rt.ensure_naming()
        for client in rt.naming:
            try:
                candidates.append((f"{decl.rtc} in {client.url}", client.resolve(decl.rtc)))
            except Exception:
                continue
    for what, obj in candidates:
        try:
            ref = obj._narrow(RTC.RTObject)
            if ref is not None:
                ref.get_component_profile()
                return ref
        except Exception as e:
            log.info("external component %s: %s does not answer: %s", decl.name, what, e)
    raise CompositionError(f"{where}: external component {decl.name!r} not found or not "
                           f"answering ({decl.rtc!r}; start it first)")


def split(composition: Composition, process: str) -> Composition:
    """The part of ``composition`` that runs in ``process`` (local connections only)."""
    mine = {d.name for d in composition.components if (d.process or MAIN) == process}
    comps = [d for d in composition.components if d.name in mine]
    conns = [c for c in composition.connections
             if c.source.split(".")[0] in mine and c.target.split(".")[0] in mine]
    ecs = [replace(e, members=[m for m in e.members if m in mine])
           for e in composition.execution_contexts]
    return replace(composition, components=comps, connections=conns,
                   execution_contexts=[e for e in ecs if e.members],
                   activate=[a for a in composition.activate if a in mine])


def cross_connections(composition: Composition) -> list[ConnectionDecl]:
    return [c for c in composition.connections
            if process_of(composition, c.source.split(".")[0])
            != process_of(composition, c.target.split(".")[0])]


def processes(composition: Composition) -> list[str]:
    names = [MAIN]
    for d in composition.components:
        p = d.process or MAIN
        if p not in names:
            names.append(p)
    return names


class Launcher:
    """Starts the child managers and wires the cross-process connections. Runs in: the
    launcher's main thread."""

    def __init__(self, manager: Any, composition: Composition, child_args: list[str],
                 env: dict[str, str] | None = None):
        self.manager = manager
        self.composition = composition
        self.child_args = child_args
        self.env = dict(env or {})                 # added to each child's environment
        self.children: dict[str, subprocess.Popen] = {}
        self._reports: dict[str, int] = {}         # process -> read end of its report pipe
        self._iors: dict[str, str] = {}            # instance -> IOR a child reported

    def start_children(self) -> None:
        for name in processes(self.composition)[1:]:
            settings = self.composition.processes.get(name, {})
            host = settings.get("host")
            if host and host not in ("localhost", "127.0.0.1", socket.gethostname()):
                log.info("process %s runs on %s: start it there with --process %s", name,
                         host, name)
                continue
            cmd = [sys.executable, "-m", "rtcf.manager", *self.child_args,
                   "--process", name, "--quiet"]
            rfd, wfd = os.pipe()
            env = dict(os.environ, **self.env,
                       **{PARENT_ENV: str(os.getpid()), REPORT_ENV: str(wfd)})
            try:
                with spawning_normal():
                    self.children[name] = subprocess.Popen(
                        cmd, start_new_session=True, env=env, stdin=subprocess.PIPE,
                        pass_fds=(wfd,))
            finally:
                os.close(wfd)
            self._reports[name] = rfd
            log.info("started process %s (pid %d)", name, self.children[name].pid)

    def _failed(self, message: str) -> CompositionError:
        return CompositionError(f"{self.composition.source_file}: {message}")

    def wait_ready(self, timeout: float = READY_TIMEOUT) -> None:
        """Until every child started here has built its part (its report says ready) and
        every component of a process started elsewhere is bound in the naming service. A
        child that fails or exits ends the wait at once."""
        deadline = time.monotonic() + timeout
        waiting = dict(self._reports)
        buffers = {name: b"" for name in waiting}
        ours = {d.name for d in self.composition.components
                if (d.process or MAIN) == MAIN or (d.process or MAIN) in self.children}
        pending = [d.name for d in self.composition.components if d.name not in ours]
        while waiting or pending:
            if getattr(self.manager, "_stop_flag", False):
                raise self._failed("stopped while waiting for the other processes")
            if time.monotonic() > deadline:
                names = [f"process {p!r}" for p in waiting] + pending
                raise self._failed(f"{', '.join(names)} not ready within {timeout:g} s")
            if waiting:
                ready, _, _ = select.select(list(waiting.values()), [], [], 0.1)
            else:
                ready = []
                time.sleep(0.1)
            for name, fd in list(waiting.items()):
                if fd not in ready:
                    continue
                chunk = os.read(fd, 65536)
                if not chunk:
                    proc = self.children[name]
                    try:
                        proc.wait(2.0)
                    except subprocess.TimeoutExpired:
                        pass
                    raise self._failed(f"process {name!r} exited with code "
                                       f"{proc.returncode} before it was ready")
                buffers[name] += chunk
                while b"\n" in buffers[name]:
                    line, buffers[name] = buffers[name].split(b"\n", 1)
                    msg = json.loads(line)
                    if "failed" in msg:
                        raise self._failed(f"process {name!r} failed: {msg['failed']}")
                    if "ready" in msg:
                        self._iors.update(msg["ready"])
                        del waiting[name]
            for inst in list(pending):
                if self._resolve(inst) is not None:
                    pending.remove(inst)

    def go(self, timeout: float = GO_TIMEOUT) -> None:
        """Tell every child to bind its names and activate; wait until each has."""
        for name, proc in self.children.items():
            try:
                proc.stdin.write(b"go\n")
                proc.stdin.flush()
            except (OSError, ValueError):
                raise self._failed(f"process {name!r} exited before it could start")
        deadline = time.monotonic() + timeout
        waiting = dict(self._reports)
        buffers = {name: b"" for name in waiting}
        while waiting:
            left = deadline - time.monotonic()
            if left <= 0:
                raise self._failed(f"process {next(iter(waiting))!r} did not start within "
                                   f"{timeout:g} s")
            ready, _, _ = select.select(list(waiting.values()), [], [], min(left, 0.1))
            for name, fd in list(waiting.items()):
                if fd not in ready:
                    continue
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise self._failed(f"process {name!r} exited while starting")
                buffers[name] += chunk
                if b'"running"' in buffers[name]:
                    del waiting[name]

    def _resolve(self, instance: str) -> Any:
        rt = self.manager.corba
        from .corba.idl import stub_module
        RTC = stub_module("RTC")
        local = self.manager.components.get(instance)
        if local is not None:
            return rt.component_ref(local)
        ext = self.composition.external(instance)
        if ext is not None:
            return resolve_external(self.manager, ext)
        ior = self._iors.get(instance)
        if ior is not None:
            return rt.orb.string_to_object(ior)._narrow(RTC.RTObject)
        fake = _profile_of(self.manager, self.composition.component(instance))
        rt.ensure_naming()
        for client in rt.naming:
            for path in rt.names_of(fake):
                try:
                    obj = client.resolve(path)._narrow(RTC.RTObject)
                    obj.get_component_profile()
                    return obj
                except Exception:
                    continue
        return None

    def _port(self, ref: str) -> tuple[Any, Any]:
        inst, _, pname = ref.partition(".")
        obj = self._resolve(inst)
        if obj is None:
            raise CompositionError(f"{ref}: component not found in the naming service")
        for port in obj.get_ports():
            prof = port.get_port_profile()
            if prof.name.partition(".")[2] == pname:        # "instance.port"
                return port, prof
        raise CompositionError(f"{ref}: the component has no port {pname!r}")

    def connect_cross(self) -> None:
        from .corba.idl import stub_module
        from .corba.nv import from_nvlist, to_nvlist
        RTC = stub_module("RTC")
        for conn in cross_connections(self.composition):
            a, pa = self._port(conn.source)
            b, pb = self._port(conn.target)
            ta = from_nvlist(pa.properties).get("port.port_type")
            if ta == "DataInPort":
                a, b, pa, pb = b, a, pb, pa
            props = {f"dataport.{k}": v for k, v in conn.properties.items()}
            if from_nvlist(pa.properties).get("port.port_type") != "CorbaPort":
                props.setdefault("dataport.dataflow_type", "push")
                props.setdefault("dataport.interface_type", "corba_cdr")
                props.setdefault("dataport.subscription_type", "flush")
                dt = from_nvlist(pa.properties).get("dataport.data_type")
                if dt:
                    props.setdefault("dataport.data_type", dt)
            cp = RTC.ConnectorProfile(f"{conn.source}_{conn.target}", "", [a, b],
                                      to_nvlist(props))
            code, cp = a.connect(cp)
            if code != RTC.RTC_OK:
                raise CompositionError(f"{conn.where[0] or self.composition.source_file}: "
                                       f"{conn.where[1]}: connecting {conn.source} -> "
                                       f"{conn.target} across processes failed ({code})")
            log.info("connected %s -> %s across processes", conn.source, conn.target)

    def alive(self) -> bool:
        return all(p.poll() is None for p in self.children.values())

    def hand_started(self) -> list[str]:
        """The processes of the composition this launcher did not start (other hosts)."""
        return [p for p in processes(self.composition)[1:] if p not in self.children]

    def exited(self) -> list[str]:
        """``name (exit code N)`` of each child that has ended."""
        return [f"{name} (exit code {p.returncode})" for name, p in self.children.items()
                if p.poll() is not None]

    def stop(self, timeout: float = 10.0) -> None:
        for fd in self._reports.values():
            try:
                os.close(fd)
            except OSError:
                pass
        self._reports.clear()
        for p in self.children.values():
            if p.stdin is not None:
                try:
                    p.stdin.close()       # a child still waiting for "go" gives up
                except OSError:
                    pass
        for p in self.children.values():
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                    os.killpg(p.pid, signal.SIGCONT)    # a stopped child handles it now
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + timeout
        for p in self.children.values():
            try:
                p.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


# -- lockstep: one simulated clock across processes (rtcf.lockstep) ---------------------------

LEADER_ENV = "RTCF_LOCKSTEP_LEADER"     # set for a launched follower: the leader's IOR
JOIN_TIMEOUT = READY_TIMEOUT            # [s] for a follower to find the leader and join


class Lockstep:
    """A process's part in a lockstep simulation across processes: the plan of the whole
    composition's instants (rtcf.lockstep.plan, checked before anything starts), and the
    leader's or a follower's orchestration. The leader (process ``main``) holds simulated
    time from its build until every other process has joined and activated its components;
    a process joins before it reports ready (launched) or right after its build (started by
    hand, finding the leader in the naming service under ``<composition>.lockstep``).
    Runs in: the main thread."""

    def __init__(self, composition: Composition, process: str, conf: Any):
        from . import lockstep, rtcconf
        self.composition = composition
        self.process = process
        self.leader = process == MAIN
        self.parts = lockstep.plan(composition, lambda inst: process_of(composition, inst))
        self.mine = lockstep.parts_of(self.parts, process)
        self.step_timeout = rtcconf.get_float(conf, "rtcf.simulation.step_timeout", 5.0, gt=0)
        from .corba.lockstep import StepMail
        # flush samples between this process and the leader (or a follower) on the steps
        self.mail = StepMail(composition.name, process,
                             rtcconf.get_bool(conf, "rtcf.simulation.step_data", True))
        self.servant: Any = None
        self.controller: Any = None
        self.externals: dict[str, Any] = {}        # leader: "external NAME" -> OpenRTMMember
        self._bound: list[tuple[Any, Any]] = []
        self._checked = 0.0

    @property
    def follower(self) -> bool:
        return not self.leader

    def rank(self, ec_name: str) -> int | None:
        """The rank of this process's part of EC ``ec_name`` (the order at an instant)."""
        for part in self.mine:
            if part.ec == ec_name:
                return part.rank
        return None

    def _name(self) -> list[tuple[str, str]]:
        return [(self.composition.name, "lockstep")]

    # -- leader -------------------------------------------------------------------------------
    def start_leader(self, manager: Any) -> None:
        """After the (held) build: schedule the other processes' parts on the time base,
        serve the Leader interface, bind it as ``<composition>.lockstep``."""
        from .corba.lockstep import LeaderServant
        from .simtime import RemotePart
        tb = manager.time_base
        remote: dict[str, list[Any]] = {}
        expected: dict[str, list[str]] = {}
        self.externals = self._externals(manager)
        for part in self.parts:
            if part.process == MAIN:
                continue
            if part.process.startswith(EXTERNAL):
                tb.add_remote(RemotePart(part.ec, part.rate, part.rank, part.process, 0,
                                         self.externals[part.process]))
                continue
            names = expected.setdefault(part.process, [])
            rp = RemotePart(part.ec, part.rate, part.rank, part.process, len(names))
            names.append(part.ec)
            remote.setdefault(part.process, []).append(rp)
            tb.add_remote(rp)
        rt = manager.corba
        self.mail.tb, self.mail.inports = tb, rt.inports
        self.mail.followers = frozenset(expected)
        self.servant = LeaderServant(tb, expected, remote, self.step_timeout, self.mail)
        self.servant.ref = rt.activate(self.servant)
        rt.ensure_naming()
        for client in rt.naming:
            try:
                client.bind(self._name(), self.servant.ref)
                self._bound.append((client, self.servant.ref))
            except Exception as e:
                log.warning("binding %s.lockstep in %s failed: %s", self.composition.name,
                            client.url, e)
        log.info("lockstep leader of %s: %d part(s) in %d other process(es)",
                 self.composition.name, sum(map(len, remote.values())), len(remote))

    def _externals(self, manager: Any) -> dict[str, Any]:
        """process key -> OpenRTMMember of each external component (rtcf.corba.lockstep):
        found, and its owned ExtTrig EC, before anything runs. CompositionError otherwise."""
        from .corba.lockstep import OpenRTMMember, find_exttrig
        out: dict[str, Any] = {}
        errors: list[str] = []
        for decl in self.composition.externals:
            try:
                rtc = resolve_external(manager, decl)
            except CompositionError as e:
                errors.append(str(e))
                continue
            ec = find_exttrig(rtc)
            if ec is None:
                file, path = decl.where
                errors.append(
                    f"{file}: {path}.external: external component {decl.name!r} owns no "
                    "OpenRTM::ExtTrigExecutionContextService: run it with an EC ticked "
                    "from outside (exec_cxt.periodic.type: SynchExtTriggerEC or "
                    "OpenHRPExecutionContext)")
                continue
            out[EXTERNAL + decl.name] = OpenRTMMember(decl.name, rtc, ec, self.step_timeout)
        if errors:
            raise CompositionError(errors)
        return out

    def child_env(self, manager: Any) -> dict[str, str]:
        return {LEADER_ENV: manager.corba.orb.object_to_string(self.servant.ref)}

    def wait_joined(self, processes: list[str], manager: Any,
                    timeout: float = JOIN_TIMEOUT) -> None:
        missing = self.servant.wait_joined(
            processes, timeout, lambda: getattr(manager, "_stop_flag", False))
        if missing:
            raise CompositionError(
                f"{self.composition.source_file}: lockstep: process"
                f"{'es' if len(missing) > 1 else ''} {', '.join(map(repr, missing))} did not "
                f"join the simulation within {timeout:g} s")

    def start(self, manager: Any) -> None:
        """Every process has joined and activated: activate the external components (at
        the boundary before the first instant), refuse later joins, let time run."""
        for member in self.externals.values():
            member.activate()
        self.servant.close()
        manager.time_base.release()

    def finish(self, reason: str) -> None:
        if self.servant is not None and self.leader:
            self.servant.finish(reason)
            for member in self.externals.values():
                member.deactivate()

    def unbind(self) -> None:
        for client, ref in self._bound:
            try:
                held = client.resolve(self._name())
                if held._is_equivalent(ref):
                    client.unbind(self._name())
            except Exception:
                pass
        self._bound.clear()

    # -- follower -----------------------------------------------------------------------------
    def join(self, manager: Any, timeout: float = JOIN_TIMEOUT) -> None:
        """After the build: serve the Follower interface, find the leader (the launcher's
        environment, else the naming service) and join it with this process's parts.
        CompositionError when refused or not found."""
        from .corba.idl import stub_module
        from .corba.lockstep import FollowerServant, RemoteLeader
        Lockstep_ = stub_module("Lockstep")
        rt = manager.corba
        tb = manager.time_base
        ecs = [manager.ecs[p.ec] for p in self.mine]
        self.mail.tb, self.mail.inports = tb, rt.inports
        self.servant = FollowerServant(tb, ecs, lambda reason: manager.request_stop(),
                                       self.mail)
        self.servant.ref = rt.activate(self.servant)
        leader = self._find_leader(manager, timeout)
        try:
            leader.join(self.process, self.servant.ref, [p.ec for p in self.mine])
        except Lockstep_.Refused as e:
            raise CompositionError(f"process {self.process}: the lockstep simulation refused "
                                   f"it: {e.reason}") from None
        self.controller = RemoteLeader(leader)
        tb.controller = self.controller
        log.info("process %s joined the lockstep simulation of %s", self.process,
                 self.composition.name)

    def _find_leader(self, manager: Any, timeout: float) -> Any:
        from .corba.idl import stub_module
        Lockstep_ = stub_module("Lockstep")
        rt = manager.corba
        ior = os.environ.get(LEADER_ENV, "")
        if ior:
            return rt.orb.string_to_object(ior)._narrow(Lockstep_.Leader)
        rt.ensure_naming()
        deadline = time.monotonic() + timeout
        while True:
            for client in rt.naming:
                try:
                    ref = client.resolve(self._name())._narrow(Lockstep_.Leader)
                    if ref is not None and not ref._non_existent():
                        return ref
                except Exception:
                    continue
            if time.monotonic() > deadline or getattr(manager, "_stop_flag", False):
                raise CompositionError(
                    f"process {self.process}: no lockstep leader of {self.composition.name} "
                    f"({self.composition.name}.lockstep) in the naming service within "
                    f"{timeout:g} s: start the launcher (process main)")
            time.sleep(0.1)

    def leader_alive(self) -> bool:
        """A follower started by hand: False once the leader has gone (checked once a
        second). Runs in: the main thread's run loop."""
        now = time.monotonic()
        if self.controller is None or now - self._checked < 1.0:
            return True
        self._checked = now
        return self.controller.alive()
