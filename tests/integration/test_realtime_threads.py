"""manager.realtime.thread_priority in a running manager (rtcf.realtime): with
exec_cxt.periodic.sched_fifo, every thread of the process runs under SCHED_FIFO, the EC
threads at 50 and all the others (the main thread, omniORB's, those made later for a new
client connection) at the priority asked for, so that no busy process preempts a thread
holding the GIL an EC thread waits for; 0 leaves them normal threads. Read from
/proc/<pid>/task while the manager runs."""

from __future__ import annotations

import os
import time

import pytest

from integration_support import wait_until

pytestmark = pytest.mark.slow    # starts manager processes

SYSTEM = """
name: rtthreads
components:
  - {type: StepWriter, module: steplog, name: w}
  - {type: StepReader, module: steplog, name: r}
connections:
  - {from: w.out, to: r.in}
execution_contexts:
  - {name: fast, kind: periodic, rate: 200, members: [w, r]}
"""


def _fifo_permitted() -> bool:
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
    except (AttributeError, OSError):
        return False
    os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    return True


def _threads(pid: int) -> dict[int, tuple[int, int]]:
    """tid -> (policy, SCHED_FIFO priority) of each thread of pid."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            out[int(tid)] = (os.sched_getscheduler(int(tid)),
                             os.sched_getparam(int(tid)).sched_priority)
        except ProcessLookupError:
            pass
    return out


@pytest.fixture
def fifo_permitted() -> None:
    if not _fifo_permitted():
        pytest.skip("SCHED_FIFO is not permitted here")


def test_every_thread_of_a_sched_fifo_manager_runs_under_fifo_below_its_ec(
        launch, fifo_permitted):
    m = launch(SYSTEM, ["w", "r"], "exec_cxt.periodic.sched_fifo:YES",
               "manager.realtime.thread_priority:3")
    ec = wait_until(lambda: any(p == (os.SCHED_FIFO, 50)
                                for p in _threads(m.pid).values()), timeout=10)
    assert ec, _threads(m.pid)
    m.ref("w").get_component_profile()     # a new client connection: a thread made now
    time.sleep(0.2)
    threads = _threads(m.pid)
    assert threads[m.pid] == (os.SCHED_FIFO, 3)                  # the main thread
    ecs = [t for t, p in threads.items() if p == (os.SCHED_FIFO, 50)]
    others = {t: p for t, p in threads.items() if t not in ecs}
    assert len(ecs) == 1 and len(others) >= 3, threads          # omniORB's are there
    assert set(others.values()) == {(os.SCHED_FIFO, 3)}, threads


def test_thread_priority_0_leaves_the_other_threads_normal(launch, fifo_permitted):
    m = launch(SYSTEM, ["w", "r"], "exec_cxt.periodic.sched_fifo:YES",
               "manager.realtime.thread_priority:0")
    assert wait_until(lambda: any(p == (os.SCHED_FIFO, 50)
                                  for p in _threads(m.pid).values()), timeout=10)
    threads = _threads(m.pid)
    normal = [t for t, p in threads.items() if p[0] == os.SCHED_OTHER]
    assert len(normal) == len(threads) - 1, threads


def test_without_sched_fifo_no_thread_is_raised(launch):
    m = launch(SYSTEM, ["w", "r"], "exec_cxt.periodic.sched_fifo:NO")
    time.sleep(0.3)
    assert {p[0] for p in _threads(m.pid).values()} == {os.SCHED_OTHER}


def _cpus(pid: int) -> dict[int, set[int]]:
    """tid -> the CPUs each thread of pid may run on."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            out[int(tid)] = os.sched_getaffinity(int(tid))
        except ProcessLookupError:
            pass
    return out


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to choose from")
def test_manager_cpu_affinity_binds_every_thread_of_the_process(launch):
    """OpenRTM-aist's manager.cpu_affinity: the main thread, omniORB's, the EC's and a
    thread made later for a new client connection all run on the CPUs named."""
    cpu = max(os.sched_getaffinity(0))
    m = launch(SYSTEM, ["w", "r"], f"manager.cpu_affinity:{cpu}")
    m.ref("w").get_component_profile()     # a new client connection: a thread made now
    threads = _cpus(m.pid)
    assert len(threads) >= 4, threads      # main, omniORB's, the EC's
    assert all(c == {cpu} for c in threads.values()), threads


def test_manager_cpu_affinity_is_checked_before_anything_starts():
    from rtcf.confcheck import check_conf
    from rtcf.errors import ConfigError
    from rtcf.rtcconf import apply_overrides, defaults

    def conf(*o):
        return apply_overrides(defaults(), list(o))
    usable = sorted(os.sched_getaffinity(0))
    assert check_conf(conf(f"manager.cpu_affinity:{usable[0]}")) == []
    for bad in ("first", f"{usable[-1] + 1}", ",", "0;1"):
        with pytest.raises(ConfigError, match=r"-o: manager.cpu_affinity: expected CPU "
                           r"numbers separated by commas, each one this process may run on"):
            check_conf(conf(f"manager.cpu_affinity:{bad}"))
    with pytest.raises(ConfigError) as bad_both:     # said once, not again for the EC's key
        check_conf(conf("manager.cpu_affinity:first", "exec_cxt.periodic.cpu_affinity:0"))
    assert str(bad_both.value).count("manager.cpu_affinity") == 1, str(bad_both.value)
    if len(usable) > 1:                    # the lockstep threads' CPU must be among them
        with pytest.raises(ConfigError, match="rtcf.simulation.cpu"):
            check_conf(conf(f"manager.cpu_affinity:{usable[0]}",
                            f"rtcf.simulation.cpu:{usable[1]}"))


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to choose from")
def test_exec_cxt_periodic_cpu_affinity_binds_the_ec_thread_only(launch):
    """OpenRTM-aist's exec_cxt.periodic.cpu_affinity: the periodic EC's thread runs on the
    CPUs named (bound as it starts), the process's other threads everywhere."""
    usable = os.sched_getaffinity(0)
    cpu = max(usable)
    m = launch(SYSTEM, ["w", "r"], f"exec_cxt.periodic.cpu_affinity:{cpu}")
    wait_until(lambda: {cpu} in _cpus(m.pid).values(), timeout=10)   # the EC has started
    threads = _cpus(m.pid)
    pinned = [t for t, c in threads.items() if c == {cpu}]
    assert len(pinned) == 1, threads                 # the EC's thread (one periodic EC)
    assert all(c == usable for t, c in threads.items() if t not in pinned), threads


def test_exec_cxt_periodic_cpu_affinity_is_checked_before_anything_starts():
    from rtcf.confcheck import check_conf
    from rtcf.errors import ConfigError
    from rtcf.rtcconf import apply_overrides, defaults
    usable = sorted(os.sched_getaffinity(0))
    conf = apply_overrides(defaults(), [f"exec_cxt.periodic.cpu_affinity:{usable[-1] + 1}"])
    with pytest.raises(ConfigError, match=r"-o: exec_cxt.periodic.cpu_affinity: expected "
                       r"CPU numbers separated by commas, each one this process may run on"):
        check_conf(conf)
    if len(usable) > 1:                  # within manager.cpu_affinity's CPUs when it is set
        conf = apply_overrides(defaults(), [f"manager.cpu_affinity:{usable[0]}",
                                            f"exec_cxt.periodic.cpu_affinity:{usable[1]}"])
        with pytest.raises(ConfigError, match=r"exec_cxt.periodic.cpu_affinity: .* may run "
                           rf"on \({usable[0]}\)"):
            check_conf(conf)
