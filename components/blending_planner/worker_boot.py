"""The planning worker process's first module, run by its path (``python worker_boot.py``):
the standard library only, so that it runs before the worker imports anything heavy.

Starting the worker costs about 0.2 s of CPU in imports (numpy, the package and its
component's modules) and 0.4 s in loading the arm and the compiled batched FK kernel. On a
machine whose cores are busy (a batch of simulation trials from ``scripts/batch``, a loaded
host) that CPU would be taken from the execution contexts. So the whole start runs under
SCHED_IDLE (``IdleStart``): it takes only CPU time nothing else wants, and a trial that
ends before any plan never paid for it. A command arriving meanwhile puts every thread of
the process back to SCHED_OTHER at once (a thread started before the process went idle,
so it is not idle itself, watches the socket), so the first command never waits on idle
time. Idle time is waited for at most IDLE_LIMIT seconds: on a machine busy for good the
start then goes on at the normal policy, so that a command coming later does not wait for
all of it (a batch trial is over long before). Where the process could not come back from
SCHED_IDLE (no CAP_SYS_NICE, an RLIMIT_NICE too low) it starts at its normal policy.

Being run by path, this module does not import the component's package (whose
``__init__`` imports the shell and rtcf): the worker module is imported after the process
went idle.

argv: the parent's sys.path (JSON), the worker module's name, the socket's fd, the parent's
pid, the arm spec (JSON), the nice increment.
Runs in: the worker process's main thread (the watchers in threads of their own).
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import threading
import time
from typing import Any

PARENT_CHECK = 0.2   # [s] between two checks that the parent process still lives
IDLE_LIMIT = 5.0     # [s] the start waits for idle time at most this long


def may_leave_sched_idle() -> bool:
    """This thread may go from SCHED_IDLE back to SCHED_OTHER at its nice value (Linux asks
    for CAP_SYS_NICE or an RLIMIT_NICE that admits the nice value, sched(7))."""
    try:
        with open("/proc/self/status") as f:
            caps = next((ln.split()[1] for ln in f if ln.startswith("CapEff:")), "0")
        if int(caps, 16) & (1 << 23):                    # CAP_SYS_NICE
            return True
        import resource
        soft = resource.getrlimit(resource.RLIMIT_NICE)[0]
        return soft == resource.RLIM_INFINITY or soft >= 20 - os.nice(0)
    except (OSError, ValueError, AttributeError):
        return False


def all_threads_normal() -> None:
    """Every thread of this process under SCHED_IDLE back to SCHED_OTHER (threads made by an
    idle thread, such as numpy's BLAS pool, inherited its policy)."""
    try:
        tids = [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        tids = [threading.get_native_id()]
    for tid in tids:
        try:
            if os.sched_getscheduler(tid) == os.SCHED_IDLE:
                os.sched_setscheduler(tid, os.SCHED_OTHER, os.sched_param(0))
        except OSError:
            pass                                          # ended meanwhile


class IdleStart:
    """The process's start (imports, the arm, the kernel) under SCHED_IDLE until ``done()``,
    a command arriving on ``fd`` or ``limit`` seconds, whichever comes first (see the
    module's docstring). ``idle`` says whether the process is still idle. Runs in: the main
    thread (``normal`` in either thread)."""

    def __init__(self, fd: int, limit: float = IDLE_LIMIT):
        self.fd = fd
        self.limit = limit
        self.idle = False
        self._lock = threading.Lock()
        self._wake_r = self._wake_w = -1
        self._watcher: threading.Thread | None = None

    def begin(self) -> "IdleStart":
        """Go idle, the socket's watcher started first (it keeps the normal policy)."""
        if not hasattr(os, "SCHED_IDLE") or not may_leave_sched_idle():
            return self
        self._wake_r, self._wake_w = os.pipe()
        self._watcher = threading.Thread(target=self._watch, daemon=True,
                                         name="idle-loading")
        self._watcher.start()
        with self._lock:
            try:
                os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
                self.idle = True
            except OSError:
                pass
        # a command that came before the process went idle may have woken the watcher
        # already (its normal() then found nothing to undo): look once more
        if select.select([self.fd], [], [], 0)[0]:
            self.normal()
        return self

    def normal(self) -> None:
        """Every thread back to SCHED_OTHER (once). Runs in: either thread."""
        with self._lock:
            if self.idle:
                self.idle = False
                all_threads_normal()

    def _watch(self) -> None:
        try:
            select.select([self.fd, self._wake_r], [], [], self.limit)
        except (OSError, ValueError):
            pass
        self.normal()           # a command (or the parent's end of file) is waiting, the
                                # start is over, or it waited long enough for idle time
        os.close(self._wake_r)

    def done(self) -> None:
        """The start is over: the normal policy for good, the watcher ended."""
        self.normal()
        if self._watcher is not None:
            try:
                os.write(self._wake_w, b"x")    # the watcher may be gone already (a
            except OSError:                       # command woke it)
                pass
            self._watcher.join()
            os.close(self._wake_w)
            self._watcher = None


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK)
    os._exit(0)


def main(argv: list[str]) -> None:
    path, module, fd, parent, spec, nice = argv
    # a terminal's Ctrl-C (sent to the manager's process group) is ignored: the manager
    # ends the worker. A normal process first, as a SCHED_FIFO thread of the manager
    # (manager.realtime.thread_priority) may start it; then the nice increment, which the
    # threads started from here on inherit
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        if os.sched_getscheduler(0) in (os.SCHED_FIFO, os.SCHED_RR):
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    except OSError:
        pass                  # a policy it may not leave (a SCHED_IDLE parent): kept
    if int(nice) > 0:
        os.nice(int(nice))
    threading.Thread(target=_watch_parent, args=(int(parent),), daemon=True).start()
    start = IdleStart(int(fd)).begin()
    sys.path[:] = json.loads(path)
    import importlib
    worker: Any = importlib.import_module(module)
    worker.serve(int(fd), json.loads(spec), start)


if __name__ == "__main__":
    main(sys.argv[1:])
