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


class FakeThreads:
    """/proc/self/task and the scheduler calls of rtcf.realtime on a table of threads."""

    def __init__(self, monkeypatch, policies: dict[int, int], refuse: int | None = None):
        self.policies = dict(policies)
        self.set: list[tuple[int, int, int]] = []
        os_ = realtime.os
        monkeypatch.setattr(os_, "listdir", lambda path: [str(t) for t in self.policies]
                            if path == "/proc/self/task" else [])

        def get(tid: int) -> int:
            if tid not in self.policies:
                raise ProcessLookupError(tid)
            return self.policies[tid]

        def put(tid: int, policy: int, param) -> None:
            if tid == refuse:
                raise PermissionError(1, "Operation not permitted")
            self.set.append((tid, policy, param.sched_priority))
            self.policies[tid] = policy
        monkeypatch.setattr(os_, "sched_getscheduler", get)
        monkeypatch.setattr(os_, "sched_setscheduler", put)


def test_raise_threads_puts_the_normal_threads_under_fifo_and_leaves_the_others(monkeypatch):
    os_ = realtime.os
    fake = FakeThreads(monkeypatch, {10: os_.SCHED_OTHER, 11: os_.SCHED_FIFO,
                                     12: os_.SCHED_OTHER, 13: os_.SCHED_IDLE,
                                     14: os_.SCHED_OTHER})
    n = realtime.raise_threads(1, logging.getLogger("rt"), skip={14})
    assert n == 2
    assert fake.set == [(10, os_.SCHED_FIFO, 1), (12, os_.SCHED_FIFO, 1)]
    assert fake.policies[11] == os_.SCHED_FIFO and fake.policies[13] == os_.SCHED_IDLE
    assert fake.policies[14] == os_.SCHED_OTHER


def test_raise_threads_where_not_permitted_says_so_once_and_stops(monkeypatch, caplog):
    os_ = realtime.os
    fake = FakeThreads(monkeypatch, {10: os_.SCHED_OTHER, 11: os_.SCHED_OTHER,
                                     12: os_.SCHED_OTHER}, refuse=11)
    with caplog.at_level(logging.INFO):
        assert realtime.raise_threads(1, logging.getLogger("rt")) == 1
    assert fake.set == [(10, os_.SCHED_FIFO, 1)]
    assert caplog.text.count("thread_priority") == 1
    assert "not permitted" in caplog.text


def test_raise_for_ecs_applies_only_with_sched_fifo_and_a_priority(monkeypatch):
    os_ = realtime.os
    fake = FakeThreads(monkeypatch, {10: os_.SCHED_OTHER})
    log = logging.getLogger("rt")
    assert realtime.raise_for_ecs(conf(), log) is None                 # sched_fifo NO
    assert realtime.raise_for_ecs(conf(exec_cxt__periodic__sched_fifo="YES",
                                       manager__realtime__thread_priority="0"), log) is None
    assert fake.set == []
    assert realtime.raise_for_ecs(conf(exec_cxt__periodic__sched_fifo="YES",
                                       manager__realtime__thread_priority="7"), log) == 1
    assert fake.set == [(10, os_.SCHED_FIFO, 7)]


@pytest.mark.parametrize("value", ["50", "99", "-1", "1.5", "one", ""])
def test_a_thread_priority_at_or_above_the_ecs_or_not_an_integer_is_refused(value):
    from rtcf.confcheck import check_conf
    c = conf(exec_cxt__periodic__sched_fifo="YES", manager__realtime__thread_priority=value)
    if value:                         # empty: the default when read, refused by the check
        with pytest.raises(Exception, match="manager.realtime.thread_priority"):
            realtime.thread_priority(c)
    with pytest.raises(Exception, match="manager.realtime.thread_priority: expected an "
                       "integer from 0 to 49"):
        check_conf(c)                           # before anything starts


def _child_policy_from_a_fifo_thread(normal: bool) -> tuple[int, tuple[int, int]]:
    """A thread under SCHED_FIFO 7 starts ``python -c`` that prints its own policy as it
    starts (with or without spawning_normal); (the child's policy, the thread's (policy,
    priority) after)."""
    import os
    import subprocess
    import threading
    out: dict = {}

    def run():
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(7))
        except OSError:
            out["skip"] = True
            return
        cmd = [sys.executable, "-c", "import os; print(os.sched_getscheduler(0))"]
        try:
            if normal:
                with realtime.spawning_normal():
                    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
            else:
                proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
            out["child"] = int(proc.communicate(timeout=60)[0])
            out["after"] = (os.sched_getscheduler(0), os.sched_getparam(0).sched_priority)
        except BaseException as e:     # noqa: BLE001 - reported by the test
            out["error"] = e
    t = threading.Thread(target=run)
    t.start()
    t.join(90)
    if out.get("skip"):
        pytest.skip("SCHED_FIFO is not permitted here")
    if "error" in out:
        raise out["error"]
    return out["child"], out["after"]


def test_a_child_started_by_a_fifo_thread_starts_normal_and_the_thread_stays_fifo():
    """A process started by a SCHED_FIFO thread inherits the policy (the control); through
    spawning_normal it starts under SCHED_OTHER (its imports and numpy's spinning BLAS pool
    thread then hold no CPU above the machine's normal threads), and the thread is back
    under SCHED_FIFO at its priority."""
    import os
    child, after = _child_policy_from_a_fifo_thread(normal=False)
    assert child == os.SCHED_FIFO
    child, after = _child_policy_from_a_fifo_thread(normal=True)
    assert child == os.SCHED_OTHER
    assert after == (os.SCHED_FIFO, 7)


def test_spawning_normal_changes_nothing_for_a_normal_thread():
    import os
    before = os.sched_getscheduler(0)
    with realtime.spawning_normal():
        assert os.sched_getscheduler(0) == before
    assert os.sched_getscheduler(0) == before
