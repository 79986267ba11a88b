"""CosNaming: OpenRTM name formats, a client, a re-registration loop, a private omniNames.

* ``format_name("%h.host_cxt/%n.rtc", instance="seq0")`` -> ``[("myhost", "host_cxt"),
  ("seq0", "rtc")]`` (OpenRTM ``naming.formats``).
* ``ensure_naming_service()`` uses the naming service answering at host:port, or, on a
  loopback host only, starts omniNames on that loopback address (under nsguard.py, so it
  ends with the process that started it, kill -9 included).
* ``NamingClient`` binds (rebinding, creating intermediate contexts), resolves, lists.
* ``Reregistrar`` re-binds every interval (``naming.update.enable``, on by default as in
  OpenRTM-aist), so bindings survive a restarted naming service; it does not take a name
  over from a live object of another process.
"""

from __future__ import annotations

import glob
import importlib.util
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Iterable, Sequence, Union

from omniORB import CORBA
import CosNaming

from rtcf.corba.orb import init_orb
from rtcf.realtime import spawning_normal

__all__ = ["format_name", "format_names", "parse_path", "path_to_str", "NamingClient",
           "Reregistrar", "ensure_naming_service", "NamingServiceHandle", "free_port",
           "naming_service_alive", "DEFAULT_FORMAT", "omninames_command", "has_data_file",
           "object_alive"]

log = logging.getLogger("rtcf.corba.naming")

DEFAULT_FORMAT = "%h.host_cxt/%n.rtc"
CALL_TIMEOUT_MS = 3000       # naming calls: a naming service answers in well under this
NameSeg = tuple[str, str]
PathLike = Union[str, Sequence[NameSeg]]

# format letter -> keyword accepted by format_name
_LETTERS = {"n": "instance", "t": "type", "m": "type", "h": "hostname", "v": "vendor",
            "V": "version", "c": "category", "M": "manager", "p": "pid"}


def parse_path(path: PathLike) -> list[NameSeg]:
    """``"a.host_cxt/b.rtc"`` -> [("a", "host_cxt"), ("b", "rtc")]; a list passes through.
    The kind follows the last dot of a segment (host names may contain dots)."""
    if not isinstance(path, str):
        return [(str(i), str(k)) for i, k in path]
    out = []
    for seg in path.strip("/").split("/"):
        if not seg:
            continue
        ident, dot, kind = seg.rpartition(".")
        out.append((ident, kind) if dot else (seg, ""))
    return out


def path_to_str(path: PathLike) -> str:
    return "/".join(f"{i}.{k}" if k else i for i, k in parse_path(path))


def format_name(fmt: str = DEFAULT_FORMAT, **fields: Any) -> list[NameSeg]:
    """Expand one OpenRTM naming format. Fields by keyword (instance, type, hostname, vendor,
    version, category, manager, pid) or by their letter (n, t, h, ...). hostname and pid
    default to this machine and process; other missing fields expand to ""."""
    values: dict[str, str] = {"hostname": socket.gethostname(), "pid": str(os.getpid())}
    for key, value in fields.items():
        values[_LETTERS.get(key, key)] = str(value)
    unknown = set(fields) - set(_LETTERS) - set(_LETTERS.values())
    if unknown:
        raise TypeError(f"format_name: unknown fields {sorted(unknown)}")
    out, i = [], 0
    while i < len(fmt):
        c = fmt[i]
        if c == "%" and i + 1 < len(fmt):
            letter = fmt[i + 1]
            if letter == "%":
                out.append("%")
            elif letter in _LETTERS:
                out.append(values.get(_LETTERS[letter], ""))
            else:
                raise ValueError(f"naming format {fmt!r}: unknown conversion %{letter}")
            i += 2
        else:
            out.append(c)
            i += 1
    path = parse_path("".join(out))
    if not path or any(not ident for ident, _ in path):
        raise ValueError(f"naming format {fmt!r} gives an empty name component")
    return path


def format_names(formats: str, **fields: Any) -> list[list[NameSeg]]:
    """All names of a comma-separated ``naming.formats`` value."""
    return [format_name(f.strip(), **fields) for f in formats.split(",") if f.strip()]


def _corbaloc(spec: str) -> str:
    if spec.startswith(("corbaloc:", "corbaname:", "IOR:")):
        return spec
    host, _, port = spec.partition(":")
    return f"corbaloc::{host or '127.0.0.1'}:{port or 2809}/NameService"


class NamingClient:
    """A CosNaming client. ``corbaloc`` is a corbaloc URL, an IOR or ``host[:port]``.
    Paths are ``"a.kind/b.kind"`` strings or [(id, kind), ...] lists.
    Runs in: any thread (each call is one CORBA call with a timeout)."""

    def __init__(self, orb: Any, corbaloc: str = "127.0.0.1:2809",
                 timeout_ms: int = CALL_TIMEOUT_MS):
        self.orb = orb
        self.url = _corbaloc(corbaloc)
        obj = orb.string_to_object(self.url)
        self.root = obj._narrow(CosNaming.NamingContext)
        if self.root is None:
            raise ConnectionError(f"{self.url} is not a CosNaming naming context")
        try:   # a naming service that hangs (or is being stopped) must not hold us 10 s
            import omniORB
            omniORB.setClientCallTimeout(self.root, timeout_ms)
        except Exception:
            pass

    @staticmethod
    def _name(path: PathLike) -> list:
        segs = parse_path(path)
        if not segs:
            raise ValueError("empty naming path")
        return [CosNaming.NameComponent(i, k) for i, k in segs]

    def bind(self, path: PathLike, obj: Any) -> None:
        """Rebind ``path`` to obj, creating missing intermediate contexts."""
        name = self._name(path)
        ctx = self.root
        for comp in name[:-1]:
            try:
                ctx = ctx.bind_new_context([comp])
            except CosNaming.NamingContext.AlreadyBound:
                found = ctx.resolve([comp])._narrow(CosNaming.NamingContext)
                if found is None:
                    raise ValueError(f"{path_to_str(path)}: {comp.id}.{comp.kind} is bound "
                                     "to an object, not a naming context") from None
                ctx = found
        ctx.rebind([name[-1]], obj)

    def unbind(self, path: PathLike) -> bool:
        """Remove the binding; False when it was not there."""
        try:
            self.root.unbind(self._name(path))
            return True
        except CosNaming.NamingContext.NotFound:
            return False

    def resolve(self, path: PathLike) -> Any:
        """The object bound at path; LookupError when absent."""
        try:
            return self.root.resolve(self._name(path))
        except CosNaming.NamingContext.NotFound:
            raise LookupError(f"{path_to_str(path)} is not bound in {self.url}") from None

    def list(self, path: PathLike = "") -> list[tuple[str, str, bool]]:
        """(id, kind, is_context) of every binding in the context at path."""
        ctx = self.root
        if parse_path(path):
            ctx = self.resolve(path)._narrow(CosNaming.NamingContext)
            if ctx is None:
                raise ValueError(f"{path_to_str(path)} is not a naming context")
        bindings, it = ctx.list(1000)
        items = list(bindings)
        if it is not None:
            while True:
                more, chunk = it.next_n(1000)
                items += chunk
                if not more:
                    break
            it.destroy()
        return [(b.binding_name[-1].id, b.binding_name[-1].kind,
                 b.binding_type == CosNaming.ncontext) for b in items]


def object_alive(obj: Any, timeout_ms: int = 1000) -> bool:
    """True unless ``obj`` is certainly gone (its process refuses connections or no longer
    has it). A hung object counts as alive. Runs in: any thread; waits at most about
    timeout_ms (plus a connect timeout).

    It calls LightweightRTObject.get_owned_contexts on a reference of its own: omniORB's
    ``_non_existent`` ignores per-reference and per-thread timeouts (it waited the ORB's
    10 s on a stopped process here), a real operation does not. An object that is not an
    RTC answers BAD_OPERATION, which proves it alive just as well."""
    if obj is None:
        return False
    from .idl import stub_module
    RTC = stub_module("RTC")
    try:
        import omniORB
        orb = init_orb({})
        ref = orb.string_to_object(orb.object_to_string(obj))
        omniORB.setClientCallTimeout(ref, timeout_ms)
        ref._obj.invoke("get_owned_contexts", RTC.LightweightRTObject._d_get_owned_contexts,
                        ())
        return True
    except (CORBA.TRANSIENT, CORBA.OBJECT_NOT_EXIST, CORBA.COMM_FAILURE):
        return False
    except CORBA.Exception:
        return True


class Reregistrar:
    """Re-binds ``bindings`` (path -> object) every ``interval`` seconds in a daemon thread
    until stop(), in each naming client, where the name is missing (a restarted naming
    service) or held by a dead object. A name that a live object of another process holds
    is left to it, with one warning. Errors (naming service down) are logged once per
    outage and retried next round.

    Runs in: its own thread."""

    def __init__(self, client: NamingClient | list[NamingClient],
                 bindings: dict[str, Any] | Iterable[tuple], interval: float = 10.0):
        self.clients = list(client) if isinstance(client, (list, tuple)) else [client]
        self.client = self.clients[0]
        self.bindings = dict(bindings)
        self.interval = interval
        self.rebound = 0                      # bindings restored (for tests and reports)
        self._yielded: set[tuple[str, str]] = set()
        self._failing: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rtcf-naming-update",
                                        daemon=True)

    def start(self) -> "Reregistrar":
        self._thread.start()
        return self

    def _run(self) -> None:
        """Rounds on absolute deadlines; while a naming service is failing, every
        interval / 5 (a restarted one is seen soon, at the cost of one connect attempt)."""
        next_t = time.monotonic() + self.interval
        while not self._stop.wait(max(0.0, next_t - time.monotonic())):
            if self.refresh():
                next_t = max(next_t + self.interval, time.monotonic() + 0.05)
            else:
                next_t = time.monotonic() + self.interval / 5

    def refresh(self) -> bool:
        """One round (see the class doc); False when some binding could not be checked. A
        call that fails on a connection the restarted naming service no longer has
        (COMM_FAILURE / TRANSIENT) is tried once more at once."""
        ok = True
        for client in self.clients:
            for path, obj in list(self.bindings.items()):
                key = (client.url, path_to_str(path))
                for attempt in (1, 2):
                    try:
                        self._refresh_one(client, path, obj, key)
                        break
                    except (CORBA.COMM_FAILURE, CORBA.TRANSIENT) as exc:
                        if attempt == 2:
                            ok = False
                            self._failed(client, key, exc)
                    except (CORBA.Exception, ValueError) as exc:
                        ok = False
                        self._failed(client, key, exc)
                        break
        return ok

    def _refresh_one(self, client: NamingClient, path: str, obj: Any,
                     key: tuple[str, str]) -> None:
        try:
            held = client.resolve(path)
        except LookupError:
            held = None
        if held is not None:
            if held._is_equivalent(obj):
                self._failing.discard(client.url)
                return
            if object_alive(held):
                if key not in self._yielded:
                    self._yielded.add(key)
                    log.warning("naming update: %s in %s is held by a live object of "
                                "another process; leaving it", key[1], client.url)
                return
        client.bind(path, obj)
        self.rebound += 1
        self._yielded.discard(key)
        self._failing.discard(client.url)
        log.info("naming update: bound %s again in %s", key[1], client.url)

    def _failed(self, client: NamingClient, key: tuple[str, str], exc: Exception) -> None:
        if client.url not in self._failing:
            self._failing.add(client.url)
            log.warning("naming update of %s in %s failed (retrying every %g s): %s",
                        key[1], client.url, self.interval, exc)

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on host right now (for tests)."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _is_loopback(host: str) -> bool:
    return host in ("localhost", "::1") or host.startswith("127.")


def naming_service_alive(host: str = "127.0.0.1", port: int = 2809) -> bool:
    """True when a CosNaming service answers at corbaloc::host:port/NameService."""
    try:
        with socket.create_connection((host, port), timeout=1.0):
            pass
    except OSError:
        return False
    orb = init_orb({})
    try:
        obj = orb.string_to_object(f"corbaloc::{host}:{port}/NameService")
        return bool(obj._is_a("IDL:omg.org/CosNaming/NamingContext:1.0"))
    except CORBA.Exception:
        return False


def _omninames_command() -> list[str]:
    """The omniNames binary itself (jeteve-omniorb's console script is a Python wrapper
    around it; running the binary directly keeps a single process to stop)."""
    spec = importlib.util.find_spec("jeteve_omniorb")
    if spec and spec.submodule_search_locations:
        exe = Path(list(spec.submodule_search_locations)[0]) / "bin" / "omniNames"
        if exe.is_file():
            return [str(exe)]
    found = shutil.which("omniNames")
    if not found:
        raise FileNotFoundError("omniNames not found: install jeteve-omniorb")
    return [found]


class NamingServiceHandle:
    """A naming service at host:port; ``started`` is True when this process launched it,
    and only then does stop() terminate it.
    Runs in: the thread that started the naming service (usually the main thread)."""

    def __init__(self, host: str, port: int, proc: subprocess.Popen | None = None,
                 log_dir: Path | None = None, own_log_dir: bool = False):
        self.host, self.port = host, port
        self.proc = proc
        self.log_dir = log_dir
        self._own_log_dir = own_log_dir

    @property
    def started(self) -> bool:
        return self.proc is not None

    @property
    def corbaloc(self) -> str:
        return f"corbaloc::{self.host}:{self.port}/NameService"

    def restart_command(self) -> list[str]:
        """The command that restarts this omniNames from its data file, by hand, after it
        died: without ``-start`` (omniNames refuses it once a data file exists, and the
        running one wrote its file at start). A private folder is kept until the process
        that started omniNames ends, even when omniNames dies first (nsguard.py)."""
        if self.log_dir is None:
            raise ValueError(f"{self!r}: not started by rtcf, no data folder known")
        return omninames_command(self.host, self.port, self.log_dir, restart=True)

    def stop(self, timeout: float = 5.0) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)  # the group we created for it
            except ProcessLookupError:
                pass
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout)
        if self._own_log_dir and self.log_dir is not None:
            shutil.rmtree(self.log_dir, ignore_errors=True)

    def __enter__(self) -> "NamingServiceHandle":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"NamingServiceHandle({self.host}:{self.port}, started={self.started})"


def _bind_host(host: str) -> str:
    """The loopback address to serve on: the one asked for (127.0.0.2 stays 127.0.0.2),
    127.0.0.1 for localhost or an empty host."""
    return host if host.startswith("127.") else "127.0.0.1"


def has_data_file(log_dir: str | os.PathLike) -> bool:
    """True when omniNames has written its data file (omninames-<host>.dat) in log_dir."""
    return bool(glob.glob(str(Path(log_dir) / "omninames-*.dat")))


def omninames_command(host: str, port: int, log_dir: str | os.PathLike,
                      restart: bool = False) -> list[str]:
    """The omniNames command line serving host:port with its data in log_dir. ``-start``
    only when there is no data file yet: omniNames refuses it once one exists, and restarts
    from the file (with every binding it held) without it. ``restart``: never ``-start``
    (a command for later, when the file will exist)."""
    cmd = _omninames_command()
    if not restart and not has_data_file(log_dir):
        cmd += ["-start", str(port)]
    return cmd + ["-logdir", str(log_dir), "-ORBendPoint", f"giop:tcp:{host}:{port}"]


def ensure_naming_service(host: str = "127.0.0.1", port: int = 2809, start: bool = True,
                          log_dir: str | os.PathLike | None = None,
                          timeout: float = 10.0) -> NamingServiceHandle:
    """Use the naming service at host:port, or start omniNames there (loopback only: on the
    loopback address asked for, e.g. 127.0.0.2). A ``log_dir`` holding a data file restarts
    omniNames from it; without log_dir a private folder is used and removed at stop().

    omniNames runs under nsguard.py, so it ends (and the private folder goes) when this
    process dies by any means, kill -9 included."""
    if not _is_loopback(host) and naming_service_alive(host, port):
        return NamingServiceHandle(host, port)
    bind = _bind_host(host) if _is_loopback(host) else host
    if _is_loopback(host) and naming_service_alive(bind, port):
        return NamingServiceHandle(bind, port)
    if not start:
        raise ConnectionError(f"no naming service answers at {host}:{port}")
    if not _is_loopback(host):
        raise ConnectionError(f"no naming service answers at {host}:{port}; rtcf starts one "
                              "only on a loopback address")
    own = log_dir is None
    logdir = Path(tempfile.mkdtemp(prefix=f"rtcf-omninames-{port}-")) if own else Path(log_dir)
    logdir.mkdir(parents=True, exist_ok=True)
    guard = [sys.executable, str(Path(__file__).with_name("nsguard.py")),
             "--parent", str(os.getpid()), "--logdir", str(logdir),
             *(["--remove"] if own else []), "--"]
    cmd = omninames_command(bind, port, logdir)
    with spawning_normal():
        proc = subprocess.Popen(guard + cmd, stdin=subprocess.DEVNULL, start_new_session=True)
    handle = NamingServiceHandle(bind, port, proc, logdir, own)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            try:
                text = (logdir / "omniNames.out").read_text(errors="replace")[-2000:]
            except OSError:
                text = ""
            handle.stop()
            raise RuntimeError(f"omniNames exited with {proc.returncode}: {text}")
        if naming_service_alive(bind, port):
            return handle
        time.sleep(0.05)
    handle.stop()
    raise TimeoutError(f"omniNames did not answer on {bind}:{port} within {timeout} s")
