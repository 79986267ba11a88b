"""Real-time process settings (rtcf.realtime) and the status line that reads EC counters."""

from __future__ import annotations

import gc
import logging
import resource
import sys

import pytest

from rtcf import realtime, rtcconf
from rtcf.execution import HISTORY, PeriodicEC
from rtcf.manager import Manager


def conf(**kv):
    return rtcconf.merge_conf(rtcconf.defaults(), {k.replace("__", "."): v
                                                   for k, v in kv.items()})


def test_switch_interval_is_applied_and_refused_when_not_positive():
    old = sys.getswitchinterval()
    try:
        done = realtime.before_start(conf(manager__realtime__switch_interval_us="500",
                                          manager__realtime__mlockall="NO"),
                                     logging.getLogger("t"))
        assert sys.getswitchinterval() == pytest.approx(0.0005)
        assert done == {"switch_interval_us": 500.0}
        with pytest.raises(Exception, match="switch_interval_us"):
            realtime.before_start(conf(manager__realtime__switch_interval_us="0"),
                                  logging.getLogger("t"))
    finally:
        sys.setswitchinterval(old)


def test_mlockall_is_skipped_with_a_reason_where_the_limit_forbids_it(monkeypatch, caplog):
    monkeypatch.setattr(resource, "getrlimit", lambda what: (65536, 65536))
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    with caplog.at_level(logging.INFO):
        assert realtime.lock_memory(logging.getLogger("rt")) is False
    assert "RLIMIT_MEMLOCK is 65536 bytes" in caplog.text


def test_freeze_heap_moves_objects_to_the_permanent_generation():
    gc.unfreeze()
    try:
        assert realtime.freeze_heap(conf(manager__realtime__gc_freeze="NO")) is False
        assert gc.get_freeze_count() == 0
        assert realtime.freeze_heap(conf()) is True
        assert gc.get_freeze_count() > 1000
    finally:
        gc.unfreeze()


def test_interval_stats_reads_the_ring_since_a_mark():
    ec = PeriodicEC(100.0, name="x")
    ec._lateness[:5] = [1e-6, 2e-6, 9e-3, 3e-6, 1e-6]
    ec.cycles, ec.overruns = 5, 1
    first = ec.interval_stats(None)
    assert first["cycles"] == 5 and first["overruns"] == 1
    assert first["late_max"] == pytest.approx(9e-3)
    ec._lateness[5:7] = [4e-6, 5e-6]
    ec.cycles, ec.overruns = 7, 1
    nxt = ec.interval_stats(first["mark"])
    assert nxt["cycles"] == 2 and nxt["overruns"] == 0
    assert nxt["late_max"] == pytest.approx(5e-6)
    # more cycles than the ring holds: the whole ring
    ec.cycles = 7 + 2 * HISTORY
    assert ec.interval_stats(nxt["mark"])["late_max"] == pytest.approx(9e-3)
    assert ec.interval_stats(ec.interval_stats(None)["mark"])["cycles"] == 0


def test_status_line_shows_interval_overruns_and_worst_lateness():
    m = Manager(conf(), corba=False)
    ec = PeriodicEC(100.0, name="main")
    m.ecs["main"] = ec
    ec._lateness[:3] = [1e-5, 2.5e-3, 1e-5]
    ec.cycles, ec.overruns = 3, 2
    line = m.status_line()
    assert "late max 2.50 ms" in line and "overruns +2 (2 total)" in line
    ec._lateness[3] = 4e-5
    ec.cycles = 4
    line = m.status_line()
    assert "late max 0.04 ms" in line and "overruns +0 (2 total)" in line
