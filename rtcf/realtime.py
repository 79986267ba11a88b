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

Runs in: the manager's main thread, before the ECs start.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging
import os
import resource
import sys
from typing import Mapping

from . import rtcconf

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


def freeze_heap(conf: Mapping[str, str]) -> bool:
    """Before the ECs start: collect once and freeze what exists (True when done)."""
    if not rtcconf.get_bool(conf, "manager.realtime.gc_freeze", True):
        return False
    gc.collect()
    gc.freeze()
    return True
