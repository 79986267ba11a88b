"""The per-cycle trace (rtcf.trace) and honest overrun counting.

No timing assertions: the periodic EC runs on a ManualClock (virtual time: it sets the clock
to each deadline instead of sleeping) and a component stalls by moving that clock on, so the
number of deadlines that pass is known exactly, however loaded the machine."""

from __future__ import annotations

import time

import numpy as np
import pytest

from rtcf import Component
from rtcf.clock import ManualClock
from rtcf.execution import PeriodicEC, SteppedEC
from rtcf.trace import CycleTrace, analyse, main, report


class Staller(Component):
    """Takes ``stall`` seconds of the (manual) clock in cycle ``at``."""

    def __init__(self, clock: ManualClock, at: int, stall: float, name: str = "stall"):
        super().__init__(name)
        self.clock, self.at, self.stall, self.n = clock, at, stall, 0

    def on_execute(self, ec) -> None:
        self.n += 1
        if self.n == self.at:
            self.clock.advance(self.stall)


def run_until(ec: PeriodicEC, comp: Staller, cycles: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while comp.n < cycles and time.monotonic() < deadline:
        time.sleep(0.01)
    assert comp.n >= cycles, f"only {comp.n} cycles ran"


@pytest.mark.parametrize("policy", ["skip", "catch_up"])
@pytest.mark.parametrize("stall,passed", [
    (0.255, 25),      # the deadlines inside the stall: skipped, or run late back to back
    (1.555, 155),     # more than RESYNC_LAG behind: the schedule restarts
])
def test_overruns_after_a_stall_equal_the_deadlines_that_passed(stall, passed, policy):
    clock = ManualClock(100.0)
    ec = PeriodicEC(100.0, name="stall", clock=clock, spin=0.0, overrun_policy=policy)
    comp = Staller(clock, at=5, stall=stall)
    comp.initialize()
    ec.add_component(comp)
    ec.start()
    try:
        ec.activate_component(comp)
        run_until(ec, comp, 5 + passed + 10)
    finally:
        ec.stop()
        comp.finalize()
    assert ec.overruns == passed


def test_stepped_trace_records_each_cycle():
    clock = ManualClock(10.0)

    class Busy(Component):
        def on_execute(self, ec) -> None:
            clock.advance(0.003)             # 3 ms of "work" on the manual clock

    ec = SteppedEC(100.0, name="st", clock=clock)
    comp = Busy("busy")
    comp.initialize()
    ec.add_component(comp)
    ec.enable_trace(capacity=16)
    ec.start()
    ec.activate_component(comp)
    ec.step(20)                             # more cycles than the ring holds
    trace = ec.trace
    data = trace.arrays()
    ec.stop()
    assert ec.last_trace is trace and ec.trace is None
    assert len(data["start"]) == 16 and int(data["first_cycle"]) == 4
    np.testing.assert_allclose(np.diff(data["start"])[1:], 0.013)    # period + work
    np.testing.assert_allclose((data["end"] - data["start"])[1:], 0.003)
    assert np.all((data["work"][:, 0] >= 0) & (data["work"][:, 0] < 0.1))  # real CPU time
    np.testing.assert_array_equal(data["deadline"], data["start"])
    assert list(data["members"]) == ["busy"]


def _synthetic() -> dict:
    """Four cycles at 100 Hz: on time; late because the previous cycle overran; late after a
    wake-up with 1 ms in the run queue and 3 ms blocked, 2 of them in a GC pause; on time."""
    p = 0.01
    dl = np.array([0.0, p, 2 * p, 3 * p])
    ex = dl - 0.0002
    wk = np.array([-0.0001, np.nan, 2 * p + 0.0038, 3 * p - 0.0001])
    st = np.array([0.0, p + 0.002, 2 * p + 0.0038, 3 * p])
    en = np.array([p + 0.002, p + 0.004, 2 * p + 0.0040, 3 * p + 0.0002])
    ex[1] = np.nan                             # it did not sleep before cycle 1
    wk[1] = en[0]
    return {"period": np.array(p), "name": np.array("syn"), "deadline": dl, "expected": ex,
            "woke": wk, "start": st, "end": en, "runq": np.array([0, 0, 0.001, 0]),
            "oncpu": np.zeros(4), "work": (en - st).reshape(-1, 1),
            "members": np.array(["m"]), "first_cycle": np.array(0),
            "gc": np.array([[2 * p + 0.0005, 2 * p + 0.0025]]), "gc_gen": np.array([2])}


def test_attribution_of_late_cycles():
    a = analyse(_synthetic(), late_threshold=0.0005)
    assert a["late"] == 2 and a["overruns"] == 1
    t = a["totals"]
    assert t["previous_cycle"] == pytest.approx(0.002)
    assert t["os_wakeup"] == pytest.approx(0.001)
    assert t["gc_overlap"] == pytest.approx(0.002)
    # 1 ms blocked, less the 0.2 ms spin window before the deadline (slack, no delay)
    assert t["gil_or_blocked"] == pytest.approx(0.0008)
    assert t["spin_shortfall"] == pytest.approx(0.0, abs=1e-12)
    assert sum(t.values()) == pytest.approx(0.002 + 0.0038)      # = the two latenesses


def test_report_and_cli(tmp_path, capsys):
    path = tmp_path / "t.npz"
    np.savez(path, **_synthetic())
    text = report(path, late_threshold=0.0005)
    assert "garbage collection holding the GIL" in text and "late cycles (> 500 us): 2" in text
    assert main([str(path), "--late-us", "500"]) == 0
    assert "previous cycle still running" in capsys.readouterr().out
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a trace")
    assert main([str(bad)]) == 1
    assert "not an rtcf trace file" in capsys.readouterr().err


def test_ring_keeps_the_newest_cycles_and_gc_log_detaches():
    import gc
    t = CycleTrace(16, ["a", "b"])
    assert any(cb.__class__.__name__ == "_GcLog" for cb in gc.callbacks)
    for i in range(40):
        t.record(float(i), float(i), float(i), float(i), i + 0.5, [0.1, 0.2])
    d = t.arrays()
    assert d["start"][0] == 24.0 and d["start"][-1] == 39.0
    assert d["work"].shape == (16, 2)
    t.close()
    assert not any(cb.__class__.__name__ == "_GcLog" for cb in gc.callbacks)
    with pytest.raises(ValueError):
        CycleTrace(4)


def test_a_single_slice_wake_up_is_a_late_timer_not_the_gil():
    """The blocked part of a wait with one scheduling slice (the timer's wake-up only) is
    the timer firing late (a host stall, as cyclictest sees it), not a GIL wait."""
    d = _synthetic()
    d["gc"] = np.zeros((0, 2))
    d["slices"] = np.array([1, 0, 1, 1])
    t = analyse(d, late_threshold=0.0005)["totals"]
    assert t["gil_or_blocked"] == 0.0 and t["gc_overlap"] == 0.0
    assert t["timer_late"] == pytest.approx(0.0028)     # 3 ms blocked less 0.2 ms of slack
    d["slices"] = np.array([1, 0, 3, 1])
    t = analyse(d, late_threshold=0.0005)["totals"]
    assert t["timer_late"] == 0.0 and t["gil_or_blocked"] == pytest.approx(0.0028)
