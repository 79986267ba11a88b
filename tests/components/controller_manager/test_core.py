"""The pr2-style controller API and manager core on a manual clock.

Controllers here log every call as (tick, name, event) into one shared list, so the tests see
the exact placement of init / starting / update / stopping relative to the ticks.
"""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

from rtcf_components.controller_manager import (AFTER_ME, BEFORE_ME, Controller,
                                                ControllerError, ControllerManagerCore,
                                                ControllerState, LoopbackHardware, RobotState,
                                                Strictness, register_controller,
                                                resolve_controller, schedule_controllers)

DT = 1e-3
JOINTS = ["j0", "j1", "j2"]


class Rig:
    """A manager core on loopback hardware, ticked by hand; ``log`` records every call."""

    def __init__(self, timer=None):
        self.log: list[tuple[int, str, str]] = []
        self.faults: list[tuple[str, str, str]] = []
        self.tick_no = 0
        self.robot = RobotState(JOINTS)
        self.hw = LoopbackHardware(JOINTS)
        kw = {"timer": timer} if timer is not None else {}
        self.core = ControllerManagerCore(self.robot, self.hw, period=DT,
                                          on_fault=lambda n, w, e: self.faults.append(
                                              (n, w, str(e))), **kw)

    def load(self, name, cls=None, **params):
        params.setdefault("rig", self)
        return self.core.load(name, cls or Spy, params)

    def tick(self, n=1):
        for _ in range(n):
            self.core.update(self.tick_no * DT)
            self.tick_no += 1

    def switch(self, start=(), stop=(), strictness=Strictness.STRICT):
        return self.core.request_switch(list(start), list(stop), strictness)

    def events(self, tick=None, name=None):
        return [(t, n, e) for (t, n, e) in self.log
                if (tick is None or t == tick) and (name is None or n == name)]


class Spy(Controller):
    """Logs its calls; params: before / after (lists of names for get_controller),
    fail_init (False or 'raise'), raise_at (tick of a raising update), joint, target."""

    def init(self, robot, params):
        self.rig = params["rig"]
        self.inits = getattr(self, "inits", 0) + 1
        self.rig.log.append((self.rig.tick_no, self.name, "init"))
        for b in params.get("before", []):
            if self.get_controller(b, BEFORE_ME) is False:      # PR2: false, reason logged
                return False
        for a in params.get("after", []):
            if self.get_controller(a, AFTER_ME) is False:
                return False
        self.periods: list[float] = []
        self.raise_at = params.get("raise_at")
        self.joint = robot.joint(params["joint"]) if "joint" in params else None
        self.target = params.get("target", 0.0)
        fail = params.get("fail_init")
        if fail == "raise":
            raise RuntimeError("no such gain file")
        return fail is not True

    def _log(self, what):
        self.rig.log.append((self.rig.tick_no, self.name, what))

    def starting(self, time):
        self._log("starting")

    def update(self, time, period):
        self._log("update")
        self.periods.append(period)
        if self.raise_at is not None and self.rig.tick_no >= self.raise_at:
            raise ValueError("diverged")
        if self.joint is not None:
            self.joint.command = self.target

    def stopping(self, time):
        self._log("stopping")


class Other(Controller):
    pass


# -- 5.1 init -----------------------------------------------------------------------------

def test_init_runs_once_at_load_and_the_controller_is_initialized():
    r = Rig()
    c = r.load("a")
    assert c.inits == 1 and c.state is ControllerState.INITIALIZED
    assert r.core.list_controllers() == [("a", "Spy", "initialized", 0)]
    with pytest.raises(ControllerError, match="'a' is already loaded"):
        r.load("a")
    assert c.inits == 1 and r.events() == [(0, "a", "init")]
    r.switch(start=["a"]); r.tick(3)
    r.switch(stop=["a"]); r.tick(2)
    r.switch(start=["a"]); r.tick(2)
    assert c.inits == 1                    # restarts never re-init


@pytest.mark.parametrize("how, reason", [(True, "returned false"),
                                         ("raise", "RuntimeError: no such gain file")])
def test_failing_init_discards_the_controller_with_the_reason(how, reason):
    r = Rig()
    r.load("a")
    with pytest.raises(ControllerError, match=reason):
        r.load("b", fail_init=how)
    assert r.core.schedule == ["a"]
    with pytest.raises(ControllerError, match="no controller named 'b'"):
        r.core.slot("b")
    r.load("b")                            # the name is free again


def test_bad_load_arguments_are_refused_naming_the_value():
    r = Rig()
    with pytest.raises(ControllerError, match="name: expected a non-empty string, got ''"):
        r.core.load("", Spy, {})
    with pytest.raises(ControllerError, match="unknown controller type 'NoSuch'"):
        r.core.load("x", "NoSuch", {})
    with pytest.raises(ControllerError, match="params: expected a mapping"):
        r.core.load("x", Spy, [1, 2])
    assert r.core.schedule == []


# -- 5.2 starting / stopping placement, switch atomicity --------------------------------------

def test_starting_just_before_the_first_update_stopping_just_after_the_last():
    r = Rig()
    r.load("a")
    r.tick(2)                              # ticks 0, 1: nothing runs
    req = r.switch(start=["a"])
    r.tick()                               # tick 2: stop half (nothing to stop)
    assert not req.done and r.events(tick=2) == []
    r.tick()                               # tick 3
    assert req.done and r.events(tick=3) == [(3, "a", "starting"), (3, "a", "update")]
    r.tick(2)
    r.switch(stop=["a"])
    r.tick()                               # tick 6: the last update, then stopping
    assert r.events(tick=6) == [(6, "a", "update"), (6, "a", "stopping")]
    r.tick(3)
    assert r.events(name="a")[-1] == (6, "a", "stopping")
    assert r.core.slot("a").controller.state is ControllerState.INITIALIZED


def test_stop_a_start_b_is_atomic_between_two_ticks():
    r = Rig()
    r.load("a"); r.load("b")
    r.switch(start=["a"]); r.tick(5)
    req = r.switch(start=["b"], stop=["a"])
    n = r.tick_no
    r.tick(4)
    assert r.events(tick=n) == [(n, "a", "update"), (n, "a", "stopping")]
    assert r.events(tick=n + 1) == [(n + 1, "b", "starting"), (n + 1, "b", "update")]
    assert req.stop_time == pytest.approx(n * DT) and req.start_time == pytest.approx(
        (n + 1) * DT)
    for t in range(r.tick_no):             # no tick updates both
        names = {x for (_, x, e) in r.events(tick=t) if e == "update"}
        assert names != {"a", "b"}
    assert r.core.list_controllers() == [("a", "Spy", "initialized", 0),
                                         ("b", "Spy", "running", 1)]


def test_a_start_of_a_running_controller_is_refused_and_a_restart_names_both_lists():
    """ros2_control's rule (SwitchController, Jazzy): STRICT refuses a start of a running
    controller, BEST_EFFORT leaves it running untouched; naming it in both lists restarts
    it (stopping, then starting, no tick between)."""
    r = Rig()
    r.load("a")
    r.switch(start=["a"]); r.tick(3)
    with pytest.raises(ControllerError, match=r"'a' is already running; to restart it, name "
                                              r"it in both the stop and the start list"):
        r.switch(start=["a"])
    n = r.tick_no
    req = r.switch(start=["a"], strictness=Strictness.BEST_EFFORT); r.tick(2)
    assert req.ok and req.refused == (("a", "is already running"),) and req.started == []
    assert [e for (_, _, e) in r.events(tick=n + 1)] == ["update"]    # no starting again
    n = r.tick_no
    r.switch(start=["a"], stop=["a"]); r.tick(2)    # both lists: stop then start
    assert [e for (_, _, e) in r.events(tick=n)] == ["update", "stopping"]
    assert [e for (_, _, e) in r.events(tick=n + 1)] == ["starting", "update"]
    assert r.core.slot("a").controller.state is ControllerState.RUNNING


def test_a_stop_of_a_controller_that_is_not_running_is_refused_and_calls_no_stopping():
    """Stopping a stopped controller used to call stopping() and report
    success. As ros2_control: refused under STRICT (nothing changes), left out under
    BEST_EFFORT (no stopping(), the answer says so); a restart of a stopped one is a stop of
    a controller that is not running."""
    r = Rig()
    r.load("a")
    r.load("b")
    with pytest.raises(ControllerError, match=r"\(STRICT\): cannot stop 'a': it is not "
                                              r"running"):
        r.switch(stop=["a"])
    assert not r.core.switch_pending
    with pytest.raises(ControllerError, match="cannot stop 'a': it is not running"):
        r.switch(start=["a"], stop=["a"])
    req = r.switch(start=["b"], stop=["a"], strictness=Strictness.BEST_EFFORT); r.tick(2)
    assert req.ok and req.stopped == [] and req.started == ["b"]
    assert req.not_stopped == (("a", "it is not running"),)
    assert "not stopped: 'a': it is not running" in req.summary()
    assert [e for (_, n, e) in r.log if n == "a"] == ["init"]      # never stopping()


def test_strictness():
    r = Rig()
    r.load("a")
    with pytest.raises(ControllerError, match=r"\(STRICT\): no controller named 'x'"):
        r.switch(start=["a", "x"])
    assert not r.core.switch_pending
    req = r.switch(start=["a", "x"], strictness=Strictness.BEST_EFFORT)
    assert req.skipped == ("x",) and [s.name for s in req.start] == ["a"]
    r.tick(2)
    assert req.done and r.core.slot("a").controller.is_running
    req = r.switch(stop=["y"], strictness=0)
    assert req.strictness is Strictness.UNSPECIFIED and req.skipped == ("y",)
    r.tick(2)
    with pytest.raises(ControllerError, match="strictness: expected 0, 1 .* got 5"):
        r.core.prepare_switch([], [], 5)
    with pytest.raises(ControllerError, match="start: expected a list"):
        r.core.prepare_switch("a", [], 1)


def test_one_switch_at_a_time():
    r = Rig()
    r.load("a")
    r.load("b")
    r.switch(start=["b"]); r.tick(2)
    r.switch(start=["a"])
    with pytest.raises(ControllerError, match="another switch is in progress"):
        r.switch(stop=["b"])


# -- 5.3 scheduling -----------------------------------------------------------------------

def test_schedule_z_then_a():
    r = Rig()
    r.load("z")
    r.load("a", before=["z"])
    assert r.core.schedule == ["z", "a"]
    r.switch(start=["a", "z"]); r.tick(2)
    assert [n for (_, n, e) in r.events(tick=1) if e == "update"] == ["z", "a"]


def test_schedule_a_c_b_and_alphabetical_ties():
    r = Rig()
    r.load("A")
    r.load("B", before=["A"])
    r.load("C", after=["B"])
    assert r.core.schedule == ["A", "C", "B"]
    assert [p for (*_, p) in r.core.list_controllers()] == [0, 1, 2]
    assert schedule_controllers({"b": ((), ()), "a": ((), ()), "c": ((), ())}) == \
        ["a", "b", "c"]


def test_a_cycle_is_refused_and_the_previous_schedule_kept():
    r = Rig()
    r.load("A")
    r.load("B", before=["A"])
    r.switch(start=["A", "B"]); r.tick(2)
    with pytest.raises(ControllerError, match="cycle among A, B, C"):
        r.load("C", before=["B"], after=["A"])
    assert r.core.schedule == ["A", "B"]
    r.tick()
    assert [n for (t, n, e) in r.events(tick=2) if e == "update"] == ["A", "B"]


def test_missing_after_me_target_is_refused():
    class Dangling(Spy):
        def init(self, robot, params):
            super().init(robot, params)
            self.after_list.append("ghost")
    r = Rig()
    with pytest.raises(ControllerError, match="'x' must run before 'ghost'.*not loaded"):
        r.load("x", Dangling)
    assert r.core.schedule == []
    with pytest.raises(ControllerError, match="'x' must run after 'y'"):
        schedule_controllers({"x": (["y"], [])})


def test_get_controller_failures_return_false_as_pr2s():
    r = Rig()
    r.load("a")
    r.load("o", Other, rig=None)
    with pytest.raises(ControllerError, match=r"init of Spy returned false \(b: "
                                              r"get_controller\('nope'\): no controller of "
                                              r"that name"):
        r.load("b", before=["nope"])
    c = Spy(); c.name = "q"; c._provider = r.core
    assert c.get_controller("nope", BEFORE_ME) is False
    assert "no controller of that name" in c.get_controller_error
    assert c.get_controller("a", 7) is False
    assert "sched: expected BEFORE_ME (0) or AFTER_ME (1), got 7" in c.get_controller_error
    assert c.getController("o", BEFORE_ME, Spy) is False          # PR2 spelling too
    assert c.get_controller_error == "q: get_controller('o'): it is a Other, not a Spy"
    assert c.before_list == [] and c.after_list == []
    assert c.get_controller("a", AFTER_ME, Spy) is r.core.slot("a").controller
    assert c.after_list == ["a"]
    s = Spy()
    assert s.get_controller("a", BEFORE_ME) is False
    assert "no controller provider" in s.get_controller_error


# -- unload --------------------------------------------------------------------------------

def test_unload_refusals_and_success():
    r = Rig()
    r.load("a")
    r.load("b", before=["a"])
    with pytest.raises(ControllerError, match="no controller named 'x'"):
        r.core.unload("x")
    with pytest.raises(ControllerError, match="'a' cannot be unloaded, 'b' depends on it"):
        r.core.unload("a")
    r.switch(start=["a", "b"]); r.tick(2)          # b depends on a: they start together
    with pytest.raises(ControllerError, match="'b' is running"):
        r.core.unload("b")
    r.switch(stop=["b", "a"]); r.tick(2)
    r.core.unload("b")
    r.core.unload("a")
    assert r.core.list_controllers() == []
    r.load("a")                            # a fresh instance: init again
    assert len(r.events(name="a")) and r.events(name="a")[-1][2] == "init"


# -- faults, timing ----------------------------------------------------------------------

def test_a_raising_update_stops_that_controller_and_is_reported():
    r = Rig()
    r.load("a")
    r.load("b", raise_at=4)
    r.switch(start=["a", "b"]); r.tick(2)
    r.tick(6)
    assert r.events(tick=4, name="b") == [(4, "b", "update"), (4, "b", "stopping")]
    assert r.events(name="b")[-1] == (4, "b", "stopping")
    assert len(r.events(name="a")) == 1 + 1 + 7     # init, starting, 7 updates
    slot = r.core.slot("b")
    assert slot.controller.state is ControllerState.INITIALIZED
    assert slot.stats.faults == 1 and "ValueError: diverged" in slot.stats.last_error
    assert r.faults == [("b", "update", "diverged")]
    r.core.slot("b").controller.raise_at = None
    r.switch(start=["b"]); r.tick(2)       # restartable
    assert r.core.slot("b").controller.is_running


def test_a_raising_starting_leaves_it_stopped_and_a_raising_stopping_still_stops():
    class BadStart(Spy):
        def starting(self, time):
            raise RuntimeError("no state yet")

    class BadStop(Spy):
        def stopping(self, time):
            raise RuntimeError("late")
    r = Rig()
    r.load("s", BadStart)
    r.load("t", BadStop)
    r.switch(start=["s", "t"]); r.tick(3)
    assert not r.core.slot("s").controller.is_running
    assert r.core.slot("t").controller.is_running
    r.switch(stop=["t"]); r.tick(2)
    assert r.core.slot("t").controller.state is ControllerState.INITIALIZED
    assert [w for (_, w, _) in r.faults] == ["starting", "stopping"]


def test_update_gets_the_measured_period():
    r = Rig()
    c = r.load("a")
    r.core.request_switch(["a"], [])
    times = [0.0, 0.001, 0.0021, 0.0030, 0.0052]
    for t in times:
        r.core.update(t)
    # tick 0 runs the (empty) stop half, tick 1 starts it: four updates, measured periods
    assert c.periods == pytest.approx(np.diff(times).tolist())
    st = r.core.statistics()
    assert st["period_max"] == pytest.approx(0.0022)
    assert st["period_min"] == pytest.approx(0.0009)


def test_overruns_and_per_controller_timing_with_a_fake_timer():
    clock = [0.0]

    class Slow(Spy):
        def update(self, time, period):
            super().update(time, period)
            clock[0] += 0.0015 if self.rig.tick_no % 2 else 0.0002

    r = Rig(timer=lambda: clock[0])
    r.load("s", Slow)
    r.switch(start=["s"]); r.tick(2)        # tick 1: first update (odd: slow)
    r.tick(4)                               # ticks 2..5: 2 fast, 2 slow
    st = r.core.slot("s").stats
    assert st.updates == 5 and st.overruns == 3
    assert st.max == pytest.approx(0.0015) and st.last == pytest.approx(0.0015)
    assert st.last_overrun_time == pytest.approx(5 * DT)
    assert r.core.statistics()["controllers"]["s"]["overruns"] == 3
    assert r.core.overhead_max == pytest.approx(0.0)   # the fake timer moves only in update


# -- the robot interface --------------------------------------------------------------------

def test_commands_are_nan_each_tick_and_reach_the_hardware():
    r = Rig()
    r.load("a", joint="j1", target=0.5)
    r.switch(start=["a"]); r.tick(2)
    assert r.robot.command[1] == 0.5 and math.isnan(r.robot.command[0])
    r.tick()
    assert r.robot.position.tolist() == [0.0, 0.5, 0.0]
    assert r.core.slot("a").controller.joint.position == 0.5
    with pytest.raises(ControllerError, match="unknown joint 'j9' .*j0, j1, j2"):
        r.robot.joint("j9")
    with pytest.raises(ControllerError, match="duplicate joint names"):
        RobotState(["a", "a"])


def test_a_tick_allocates_nothing_that_stays():
    r = Rig()
    for i in range(10):
        r.load(f"c{i}", joint=JOINTS[i % 3], target=0.1 * i)
    for i in range(10):
        r.core.slot(f"c{i}").controller.periods = _NoList()
        r.core.slot(f"c{i}").controller.rig = _NoLog(r)
    r.switch(start=[f"c{i}" for i in range(10)]); r.tick(50)
    before = sys.getallocatedblocks()
    r.tick(2000)
    assert sys.getallocatedblocks() - before < 50


class _NoList:
    def append(self, x):
        pass


class _NoLog:
    def __init__(self, rig):
        self.tick_no = 0
        self.log = _NoList()


def test_registry_and_dotted_type_names(tmp_path):
    register_controller(Other, "OtherAlias")
    assert resolve_controller("OtherAlias") is Other
    (tmp_path / "my_ctrls.py").write_text(
        "from rtcf_components.controller_manager import Controller\nclass Hold(Controller):\n    pass\n")
    cls = resolve_controller("my_ctrls.Hold", load_path=[tmp_path])
    assert cls.__name__ == "Hold"
    with pytest.raises(ControllerError, match="has no Controller subclass 'Nope'"):
        resolve_controller("my_ctrls:Nope", load_path=[tmp_path])


def test_motors_enabled_again_restart_every_running_controller():
    r = Rig()
    r.load("a"); r.load("b")
    r.switch(start=["a"]); r.tick(2)
    r.hw.halted = True
    r.tick(2)                             # halted: nothing special, updates go on
    assert [e for (_, _, e) in r.events(name="a")][-2:] == ["update", "update"]
    r.hw.halted = False
    n = r.tick_no
    r.tick()
    assert r.events(tick=n) == [(n, "a", "stopping"), (n, "a", "starting"), (n, "a", "update")]
    assert r.events(name="b") == [(0, "b", "init")]      # not running: untouched
    assert r.core.statistics()["restarts"] == 1


def test_unload_reschedules():
    r = Rig()
    r.load("b"); r.load("c"); r.load("a", after=["c"])
    assert r.core.schedule == ["a", "b", "c"]
    r.core.unload("b")
    assert r.core.list_controllers() == [("a", "Spy", "initialized", 0),
                                         ("c", "Spy", "initialized", 1)]


def test_describe_from_another_thread_between_an_unloads_two_assignments():
    """An unload publishes the new ``_loaded`` and then the new ``_order``; a reader in
    another thread (the status line, rtcat) between the two must not fail on the name that
    is gone."""
    r = Rig()
    r.load("a")
    r.load("b")
    r.core._loaded = {n: s for n, s in r.core._loaded.items() if n != "b"}   # order still has b
    assert [d["name"] for d in r.core.describe()] == ["a"]


def test_a_registered_type_removed_from_its_edited_module_is_gone(tmp_path):
    """A type registered from a module (controller_modules) whose file was edited to
    remove it is refused after the re-import, and reload_modules forgets it."""
    import os

    from rtcf_components.controller_manager import (import_controllers, registered_types,
                                                    reload_modules)
    mod = tmp_path / "gone_ctl.py"
    mod.write_text("from rtcf_components.controller_manager import Controller\n"
                   "class GoneCtl(Controller):\n    pass\n"
                   "class StaysCtl(Controller):\n    pass\n")
    assert import_controllers("gone_ctl", [str(tmp_path)]) == ["GoneCtl", "StaysCtl"]
    mod.write_text("from rtcf_components.controller_manager import Controller\n"
                   "class StaysCtl(Controller):\n    version = 2\n")
    st = os.stat(mod)                          # a new mtime even within the same second
    os.utime(mod, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    with pytest.raises(ControllerError, match=r"module 'gone_ctl' was edited and defines it "
                                              r"no more"):
        resolve_controller("GoneCtl")
    assert resolve_controller("StaysCtl").version == 2
    assert "gone_ctl" in reload_modules()
    assert "GoneCtl" not in registered_types() and "StaysCtl" in registered_types()
    sys.modules.pop("gone_ctl", None)
