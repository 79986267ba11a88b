"""The process-wide omniORB ORB and root POA.

``init_orb(conf)`` reads the OpenRTM keys ``corba.endpoints`` (``IP``, ``IP:port``, several
separated by commas or semicolons, or ``all``; default loopback only) and ``corba.args``
(passed to ORB_init, split like a shell line). Unless ``corba.args`` sets them, a client call
times out after 10 s and a connect after 1 s, so a dead peer never blocks a caller for long.
omniORB runs its own server threads: there is no ORB thread to start.

Shutdown and the end of the process: an omniORB thread that has run Python code (an upcall,
the release of a servant) holds a Python thread state, and gives it back on its way out,
which needs the GIL. ``ORB.destroy()`` returns once its thread pool has counted every
worker out, and a worker counts itself out *before* that last step (in omniORB 4.3
``~omniAsyncWorker`` runs before ``~omni_thread``, whose thread-specific data frees the
Python state: omniORBpy's ``omnipyThreadCache::threadExit``); the thread that carries out
``shutdown(False)`` is not waited for at all. A thread still on its way out when the
interpreter finalises is ended by Python inside that C++ destructor (``PyThread_exit_thread``,
a forced unwind through a destructor that may not throw): ``std::terminate``, "terminate
called without an active exception", SIGABRT, now and then at the exit of a manager or a
tool, more often on a loaded machine. So :func:`shutdown_orb` waits after ``destroy()``
until every omniORB thread that held a Python state has ended (:class:`_OmniThreads`), and
a process that exits with its ORB still up has it shut down that way by an ``atexit``
handler, before the interpreter finalises.
"""

from __future__ import annotations

import atexit
import os
import shlex
import threading
import time
from typing import Any

import omniORB
from omniORB import CORBA  # noqa: F401  (re-exported for the other corba modules)

from ..log import get_logger

__all__ = ["init_orb", "shutdown_orb", "get_orb", "orb_initialised", "root_poa", "object_to_string",
           "string_to_object", "orb_args", "call_timeout"]

DEFAULT_CALL_TIMEOUT_MS = 10000
DEFAULT_CONNECT_TIMEOUT_MS = 1000

_lock = threading.Lock()
_orb: Any = None
_poa: Any = None
_call_timeout_ms = DEFAULT_CALL_TIMEOUT_MS      # what the ORB was given (0: none)
_atexit_registered = False
THREAD_EXIT_TIMEOUT = 10.0    # [s] shutdown_orb waits this long at most for omniORB threads

log = get_logger("corba")


def _thread_start(tid: int) -> str | None:
    """The start time of thread ``tid`` of this process (field 22 of its /proc stat, in
    clock ticks since boot), None when it does not exist or /proc is not there. Together
    with the id it names one thread: ids are reused (pid_max may be 32768)."""
    try:
        with open(f"/proc/self/task/{tid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: count from its end
    return stat[stat.rindex(b")") + 2:].split()[19].decode()


class _OmniThreads:
    """The omniORB threads that hold (or held) a Python thread state: registered with
    omniORBpy's worker-thread hook (``omniORB.addWThreadHook``), whose CREATED and DELETED
    events run on the thread itself with the GIL held. A thread is *holding* from CREATED
    to DELETED (the start of its Python clean-up) and *leaving* after that until the OS
    thread has ended. Runs in: any thread (the hook in omniORB's threads)."""

    def __init__(self) -> None:
        self.holding: dict[int, tuple[int, str | None]] = {}   # ident -> (tid, start)
        self.leaving: dict[int, tuple[int, str | None]] = {}
        self.proc = os.path.isdir("/proc/self/task")

    def hook(self, kind: int, wt: Any) -> None:
        """omniORB's WorkerThread hook. Runs in: the omniORB thread, GIL held."""
        if kind == omniORB.WTHREAD_CREATED:
            tid = threading.get_native_id()
            self.holding[wt.ident] = (tid, _thread_start(tid) if self.proc else None)
        else:
            entry = self.holding.pop(wt.ident, None)
            if entry is not None and self.proc:
                self.leaving[wt.ident] = entry
            self._prune()

    def _prune(self) -> None:
        for ident, (tid, start) in list(self.leaving.items()):
            if start is None or _thread_start(tid) != start:
                self.leaving.pop(ident, None)      # ended (or the id is another's now)

    def wait_ended(self, timeout: float) -> int:
        """Wait (the GIL released) until no omniORB thread holds a Python state or is on
        its way out; the number still there after ``timeout`` seconds (0: all ended)."""
        deadline = time.monotonic() + timeout
        while True:
            self._prune()
            left = len(self.holding) + len(self.leaving)
            if not left or time.monotonic() >= deadline:
                return left
            time.sleep(0.001)


_omni_threads = _OmniThreads()
omniORB.addWThreadHook(_omni_threads.hook)   # before any ORB exists (omniORBpy's rule)


def _endpoint_args(spec: str) -> list[str]:
    spec = spec.strip()
    if not spec:
        return ["-ORBendPoint", "giop:tcp:127.0.0.1:"]
    out: list[str] = []
    for item in spec.replace(";", ",").split(","):
        item = item.strip()
        if not item:
            continue
        if item.lower() == "all":
            out += ["-ORBendPoint", "giop:tcp::"]
            continue
        host, _, port = item.rpartition(":") if ":" in item else (item, "", "")
        if port and not port.isdigit():
            raise ValueError(f"corba.endpoints: bad port in {item!r}")
        out += ["-ORBendPoint", f"giop:tcp:{host}:{port}"]
    return out


def orb_args(conf: dict[str, str]) -> list[str]:
    """The ORB_init argument list built from rtc.conf keys."""
    extra = shlex.split(conf.get("corba.args", ""))
    args = ["rtcf"]
    if not any(a.startswith("-ORBendPoint") for a in extra):
        args += _endpoint_args(conf.get("corba.endpoints", conf.get("corba.endpoint", "")))
    if "-ORBclientCallTimeOutPeriod" not in extra:
        args += ["-ORBclientCallTimeOutPeriod", str(DEFAULT_CALL_TIMEOUT_MS)]
    if "-ORBclientConnectTimeOutPeriod" not in extra:
        args += ["-ORBclientConnectTimeOutPeriod", str(DEFAULT_CONNECT_TIMEOUT_MS)]
    return args + extra


def init_orb(conf: dict[str, str] | None = None) -> Any:
    """The process's ORB, created on the first call (later calls return it and ignore conf);
    the root POA is activated."""
    global _orb, _poa, _call_timeout_ms
    with _lock:
        if _orb is None:
            args = orb_args(conf or {})
            timeout_ms = _option(args, "-ORBclientCallTimeOutPeriod", _call_timeout_ms)
            try:
                orb = CORBA.ORB_init(args, CORBA.ORB_ID)      # removes the options it took
                poa = orb.resolve_initial_references("RootPOA")   # opens the endpoints
                poa._get_the_POAManager().activate()
            except CORBA.INITIALIZE:
                from ..errors import ConfigError
                raise ConfigError(
                    "the ORB cannot start: cannot listen on corba.endpoints "
                    f"{(conf or {}).get('corba.endpoints', '')!r} (an address of this host "
                    "and a free port, or all) with corba.args "
                    f"{(conf or {}).get('corba.args', '')!r}") from None
            _orb, _poa, _call_timeout_ms = orb, poa, timeout_ms
            global _atexit_registered
            if not _atexit_registered:
                atexit.register(_shutdown_at_exit)
                _atexit_registered = True
        return _orb


def _option(args: list[str], name: str, default: int) -> int:
    """The integer value of the last ``name`` in an ORB_init argument list."""
    try:
        k = len(args) - 1 - args[::-1].index(name)
        return int(args[k + 1])
    except (ValueError, IndexError):
        return default


def call_timeout() -> float:
    """[s] the client call timeout the process's ORB was given (0: none). Runs in: any
    thread."""
    return _call_timeout_ms / 1000.0


def get_orb() -> Any:
    """The ORB created by init_orb; RuntimeError before."""
    if _orb is None:
        raise RuntimeError("the ORB is not initialised: call rtcf.corba.orb.init_orb first")
    return _orb


def orb_initialised() -> bool:
    """True once init_orb made the process's ORB (until shutdown_orb). Runs in: any thread."""
    return _orb is not None


def root_poa() -> Any:
    get_orb()
    return _poa


def shutdown_orb(wait: bool = True) -> None:
    """Shut the ORB down and destroy it, then wait until every omniORB thread that held a
    Python thread state has ended (see the module doc: one that ends while the interpreter
    finalises aborts the process); init_orb may then create a new one. ``wait`` False: the
    requests in progress are not waited for before the ORB starts shutting down (from an
    upcall); ``destroy()`` still waits for the shutdown to complete. Runs in: any thread
    but an upcall (ORB.destroy refuses those)."""
    global _orb, _poa
    with _lock:
        orb, _orb, _poa = _orb, None, None
    if orb is None:
        return
    try:
        orb.shutdown(wait)
        orb.destroy()
    except CORBA.Exception:
        return      # from an upcall, or destroyed meanwhile: its threads are not ended here
    left = _omni_threads.wait_ended(THREAD_EXIT_TIMEOUT)
    if left:
        log.warning("%d omniORB thread(s) still running %.0f s after the ORB was destroyed "
                    "(an upcall that does not return?)", left, THREAD_EXIT_TIMEOUT)


def _shutdown_at_exit() -> None:
    """atexit: a process that ends with its ORB up shuts it down before the interpreter
    finalises (after threading joined the non-daemon threads). Runs in: the main thread."""
    shutdown_orb(wait=False)


def object_to_string(obj: Any) -> str:
    return get_orb().object_to_string(obj)


def string_to_object(ior: str) -> Any:
    return get_orb().string_to_object(ior)
