"""Process-wide settings for a real-time manager process (what cyclictest and ros2_control's
realtime tools do for a C++ process, carried over to a CPython one).

* ``manager.realtime.mlockall`` (YES): lock the memory mapped at start-up (mlockall
  (MCL_CURRENT): the interpreter, numpy, omniORB, the start-up heap) so that no page of it is
  paged out and faulted back in inside a cycle; only where the memory-lock limit allows it
  (root, or RLIMIT_MEMLOCK unlimited), otherwise skipped with an info line. MCL_FUTURE is
  not used: it would also lock every later thread stack whole (8 MB each for omniORB's
  threads). Cost: the mapped libraries become resident, about 150 MB per manager process
  here instead of about 55 MB.
* ``manager.realtime.gc_freeze`` (YES): when a composition is built, before its ECs start,
  collect once and move every object that exists then into the permanent generation
  (gc.freeze): a full collection then walks only what was allocated since, instead of
  holding the GIL for tens of ms over the whole start-up heap.
* ``manager.realtime.switch_interval_us`` (see rtcconf defaults): the interpreter's switch
  interval; when an EC thread wakes while another thread holds the GIL, it waits up to this
  long for it.
* ``manager.realtime.thread_priority`` (1; with ``exec_cxt.periodic.sched_fifo``): just before
  the ECs start, every thread of the process (the main one, omniORB's, a component's own)
  is put under SCHED_FIFO at this priority, below the EC threads' (50).
  An EC thread under SCHED_FIFO still waits for the GIL whenever another thread of its
  process holds it (an ORB thread answering getStatistics, a service call); a normal thread
  holding it can be preempted by any busy process of the machine, and the EC thread then
  waits until that thread gets a CPU again: a priority inversion that no SCHED_FIFO on the
  EC thread alone removes. At priority 1 no normal process preempts the holder. Threads made
  later inherit the policy of the thread that made them (omniORB makes a connection's
  thread from its listener's; a component's from the main thread); EC threads set their
  own when they start (SCHED_FIFO at 50 while paced, normal flat out). 0 leaves every
  thread normal. Child processes of rtcf (the processes of a split system, the web view,
  the naming service, the naming reaper) are started as normal processes
  (:func:`spawning_normal`); the planning worker resets its own policy first thing.

* ``manager.cpu_affinity`` (OpenRTM-aist's key, not set by default): the manager's process
  bound to these CPUs (``0,1``) as it starts, before the ORB's threads and the ECs exist; the
  child processes rtcf starts (the planning worker, the web view) inherit it, and
  ``rtcf.simulation.cpu`` picks its CPU among them. ``exec_cxt.periodic.cpu_affinity`` (also
  OpenRTM-aist's) binds each periodic EC's thread to its CPUs as the thread starts
  (rtcf.execution.PeriodicEC).

Runs in: the manager's main thread, before the ECs start.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import gc
import logging
import os
import resource
import sys
from typing import Iterator, Mapping

from . import rtcconf
from .errors import ConfigError
from .validate import EC_PRIORITY

MCL_CURRENT, MCL_FUTURE = 1, 2


def lock_memory(log: logging.Logger) -> bool:
    """mlockall where the limit permits it; True when memory is locked."""
    soft, _ = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    if soft != resource.RLIM_INFINITY and os.geteuid() != 0:
        log.info("memory not locked: RLIMIT_MEMLOCK is %d bytes (set it unlimited, or "
                 "manager.realtime.mlockall: NO to silence this)", soft)
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        if libc.mlockall(MCL_CURRENT) != 0:
            log.info("memory not locked: mlockall failed (errno %d)", ctypes.get_errno())
            return False
    except (OSError, AttributeError) as e:
        log.info("memory not locked: %s", e)
        return False
    return True


def before_start(conf: Mapping[str, str], log: logging.Logger) -> dict[str, object]:
    """Settings applied before any EC thread starts; returns what was applied."""
    done: dict[str, object] = {}
    us = rtcconf.get_float(conf, "manager.realtime.switch_interval_us", 5000.0, gt=0)
    sys.setswitchinterval(us * 1e-6)
    done["switch_interval_us"] = us
    if rtcconf.get_bool(conf, "manager.realtime.mlockall", True):
        done["mlockall"] = lock_memory(log)
    return done


def raise_threads(priority: int, log: logging.Logger, skip: set[int] | None = None) -> int:
    """Put every thread of this process that runs under SCHED_OTHER, except the native
    thread ids in ``skip``, under SCHED_FIFO at ``priority``; returns how many were. Threads
    under another policy (an EC thread under SCHED_FIFO, a SCHED_BATCH or SCHED_IDLE one)
    are left as they are. Where it is not permitted, one info line and what was raised so
    far. Runs in: the manager's main thread, before the ECs start."""
    try:
        tids = [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        return 0                                  # not Linux: nothing to raise
    keep = set(skip or ())
    raised = 0
    for tid in tids:
        if tid in keep:
            continue
        try:
            if os.sched_getscheduler(tid) != os.SCHED_OTHER:
                continue
            os.sched_setscheduler(tid, os.SCHED_FIFO, os.sched_param(priority))
            raised += 1
        except ProcessLookupError:
            continue                              # the thread ended meanwhile
        except (PermissionError, OSError) as e:
            log.info("manager.realtime.thread_priority: the process's other threads stay "
                     "normal threads (SCHED_FIFO not permitted: %s)", e)
            return raised
    return raised


def raise_for_ecs(conf: Mapping[str, str], log: logging.Logger) -> int | None:
    """manager.realtime.thread_priority applied (with exec_cxt.periodic.sched_fifo): the
    number of threads raised, None when it does not apply."""
    if not rtcconf.get_bool(conf, "exec_cxt.periodic.sched_fifo", False):
        return None
    priority = thread_priority(conf)
    if priority == 0:
        return None
    return raise_threads(priority, log)


def thread_priority(conf: Mapping[str, str]) -> int:
    """manager.realtime.thread_priority, checked: an integer 0 to EC_PRIORITY - 1
    (ConfigError naming the key and where it was set otherwise)."""
    key = "manager.realtime.thread_priority"
    priority = rtcconf.get_int(conf, key, 1, ge=0)
    if priority >= EC_PRIORITY:
        raise ConfigError(f"{rtcconf.where(conf, key)}: {key}: expected an integer from 0 "
                          f"to {EC_PRIORITY - 1} (below the EC threads' SCHED_FIFO priority "
                          f"{EC_PRIORITY}), got {priority}")
    return priority


def cpu_affinity(conf: Mapping[str, str],
                 key: str = "manager.cpu_affinity") -> set[int] | None:
    """An OpenRTM-aist CPU affinity key: ``manager.cpu_affinity`` (the CPUs the manager's
    process is bound to, OpenRTM's Manager::initCpuAffinity) or
    ``exec_cxt.periodic.cpu_affinity`` (those of each periodic EC's thread,
    PeriodicExecutionContext::setCpuAffinity): CPU numbers from 0 separated by commas; None
    when not set. A value that is not such a list of CPUs the process may run on (for the
    EC's key: among manager.cpu_affinity's, when that is set) is refused (ConfigError naming
    the key, where it was set and the CPUs it may use); OpenRTM would then leave the
    process or thread on every CPU."""
    text = str(conf.get(key) or "").strip()
    if not text:
        return None
    parts = [p.strip() for p in text.split(",") if p.strip()]
    try:
        usable = os.sched_getaffinity(0)
    except (AttributeError, OSError):
        usable = None
    if key != "manager.cpu_affinity":
        usable = cpu_affinity(conf) or usable
    if (not parts or not all(p.isdigit() for p in parts)
            or (usable is not None and not {int(p) for p in parts} <= usable)):
        may = "" if usable is None else f" ({', '.join(map(str, sorted(usable)))})"
        raise ConfigError(f"{rtcconf.where(conf, key)}: {key}: expected CPU numbers "
                          f"separated by commas, each one this process may run on{may}, "
                          f"got {text!r}")
    return {int(p) for p in parts}


def bind_process(cpus: set[int], log: logging.Logger) -> int:
    """Every thread of this process on ``cpus`` (threads made later inherit it from the
    thread that makes them); returns how many threads were bound. Where it is refused, one
    warning and the process stays on every CPU. Runs in: the manager's main thread, before
    the ORB and the ECs start."""
    try:
        tids = [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        tids = [0]                                # not Linux: this thread
    bound = 0
    for tid in tids:
        try:
            os.sched_setaffinity(tid, cpus)
            bound += 1
        except ProcessLookupError:
            continue                              # the thread ended meanwhile
        except (AttributeError, OSError) as e:
            log.warning("manager.cpu_affinity: the process stays on every CPU (%s)", e)
            return bound
    return bound


@contextlib.contextmanager
def spawning_normal() -> Iterator[None]:
    """Around starting a child process: the calling thread under SCHED_OTHER for the
    duration, its real-time policy back after. A child inherits the policy of the thread
    that forks it, so its interpreter's start and its imports would run under SCHED_FIFO
    before any code of its own could reset it: numpy's OpenBLAS pool thread, made at the
    import, busy-waits about 0.1 s as it starts and held a CPU that way
    (measured with perf sched on a split system: a follower's pool thread ran 128 ms on the
    simulation's CPU, every normal thread there waiting, the kernel's rcu thread 133 ms).
    Runs in: any thread (it changes only its own policy)."""
    policy = param = None
    try:
        policy = os.sched_getscheduler(0)
        if policy in (os.SCHED_FIFO, os.SCHED_RR):
            param = os.sched_getparam(0)
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    except (AttributeError, OSError):
        param = None
    try:
        yield
    finally:
        if param is not None:
            try:
                os.sched_setscheduler(0, policy, param)
            except OSError:
                pass


def freeze_heap(conf: Mapping[str, str]) -> bool:
    """Before the ECs start: collect once and freeze what exists (True when done)."""
    if not rtcconf.get_bool(conf, "manager.realtime.gc_freeze", True):
        return False
    gc.collect()
    gc.freeze()
    return True
