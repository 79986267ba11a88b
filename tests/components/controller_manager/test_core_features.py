"""The manager core's ros2_control-level features, in the manner of ros2_control's
controller_manager tests: controllers that fail on purpose (init, starting, update,
stopping), claimed command interfaces and strictness, per-controller update rates,
fallback controllers, chained controllers, and what a switch reports.

Ticks are driven by hand on loopback hardware (test_controller.Rig): every placement is
exact, nothing depends on the machine's timing.
"""

from __future__ import annotations

import pytest

from test_core import DT, Rig, Spy

from rtcf_components.controller_manager import (AFTER_ME, ControllerError, ControllerState,
                                                LoopbackHardware, Strictness)

BEST = Strictness.BEST_EFFORT


class Claimer(Spy):
    """A Spy that claims ``claims`` (joint/type strings) and may fail on purpose:
    ``fail_in``: starting / update (from tick ``raise_at``) / stopping."""

    def init(self, robot, params):
        if super().init(robot, params) is False:
            return False
        self.command_interfaces = list(params.get("claims", []))
        self.fail_in = params.get("fail_in")
        return True

    def starting(self, time):
        super().starting(time)
        if self.fail_in == "starting":
            raise RuntimeError("cannot seed")

    def stopping(self, time):
        super().stopping(time)
        if self.fail_in == "stopping":
            raise RuntimeError("brake fault")


def running(r):
    return [n for (n, _, s, _) in r.core.list_controllers() if s == "running"]


# -- claiming ------------------------------------------------------------------------------

def test_strict_refuses_a_second_owner_and_names_the_interface_and_owner():
    r = Rig()
    r.load("a", Claimer, claims=["j0/position", "j1/position"])
    r.load("b", Claimer, claims=["j1/position"])
    r.switch(start=["a"]); r.tick(2)
    with pytest.raises(ControllerError, match=r"\(STRICT\): 'b' claims j1/position \(owned "
                                              r"by 'a'\); stop the owner in the same switch"):
        r.switch(start=["b"])
    assert not r.core.switch_pending and running(r) == ["a"]
    req = r.switch(start=["b"], stop=["a"]); r.tick(2)        # hand-over in one switch
    assert req.ok and running(r) == ["b"]
    assert dict(r.core.list_interfaces())["j1/position"] == "b"
    assert dict(r.core.list_interfaces())["j0/position"] == ""


def test_two_claimers_in_one_start_list_are_refused_under_strict():
    r = Rig()
    r.load("a", Claimer, claims=["j0/position"])
    r.load("b", Claimer, claims=["j0/position"])
    with pytest.raises(ControllerError, match="'b' claims j0/position \\(owned by 'a'\\)"):
        r.switch(start=["a", "b"])


def test_best_effort_starts_the_others_and_reports_the_dropped_one():
    r = Rig()
    r.load("a", Claimer, claims=["j0/position"])
    r.load("b", Claimer, claims=["j0/position"])
    r.load("c", Claimer, claims=["j2/position"])
    r.switch(start=["a"]); r.tick(2)
    req = r.switch(start=["b", "c"], strictness=BEST); r.tick(2)
    assert running(r) == ["a", "c"]
    assert req.refused == (("b", "claims j0/position (owned by 'a')"),)
    assert req.started == ["c"] and req.ok            # BEST_EFFORT: a documented drop
    assert "not started: 'b' claims j0/position (owned by 'a')" in req.summary()
    assert r.events(name="b") == [(0, "b", "init")]   # never started


def test_an_interface_type_the_hardware_does_not_take_is_refused():
    r = Rig()                                          # loopback: position only
    r.load("e", Claimer, claims=["j0/effort"])
    with pytest.raises(ControllerError, match="'e' claims j0/effort, which the hardware "
                                              "does not take \\(it takes position\\)"):
        r.switch(start=["e"])

    class EffortHw(LoopbackHardware):
        command_interfaces = ("position", "effort")
    r2 = Rig()
    r2.core.hardware = r2.hw = EffortHw(["j0", "j1", "j2"])
    r2.load("e", Claimer, claims=["j0/effort"])
    r2.switch(start=["e"]); r2.tick(2)
    assert running(r2) == ["e"]
    assert ("j0/effort", "e") in r2.core.list_interfaces()


@pytest.mark.parametrize("claims, match", [
    (["j0"], "command interface 'j0': expected 'joint/type'"),
    (["j0/torque"], "type: expected one of position, velocity, effort"),
    (["elbow/position"], "unknown joint 'elbow'"),
])
def test_bad_claims_refuse_the_load(claims, match):
    r = Rig()
    with pytest.raises(ControllerError, match=match):
        r.load("x", Claimer, claims=claims)
    assert r.core.list_controllers() == []


def test_the_bundled_controllers_claim_their_joints():
    from rtcf_components.controller_manager.controllers import JointPositionController, \
        JointTrajectoryController
    r = Rig()
    pd = r.core.load("pd", JointPositionController, {"joints": ["j0", "j1"]})
    tr = r.core.load("tr", JointTrajectoryController, {"joints": ["j0"], "output": "pd"})
    alone = r.core.load("tr2", JointTrajectoryController, {"joints": ["j1"]})
    assert pd.command_interface_configuration() == ["j0/position", "j1/position"]
    assert tr.command_interface_configuration() == []        # writes pd's setpoint
    assert alone.command_interface_configuration() == ["j1/position"]
    r.switch(start=["pd"]); r.tick(2)
    with pytest.raises(ControllerError, match="'tr2' claims j1/position \\(owned by 'pd'\\)"):
        r.switch(start=["tr2"])


# -- update rates -----------------------------------------------------------------------------

def test_a_divisor_free_update_rate_gets_the_real_period():
    r = Rig()
    c = r.load("slow", update_rate=300)
    f = r.load("fast")
    r.switch(start=["slow", "fast"]); r.tick(2)
    n0 = len(c.periods)
    r.tick(1000)                                          # one second at 1 kHz
    assert len(f.periods) == 1001
    assert 299 <= len(c.periods) - n0 <= 301
    periods = c.periods[1:]
    assert set(round(p / DT) for p in periods) <= {3, 4}    # real periods, in ticks
    assert sum(periods[1:]) / len(periods[1:]) == pytest.approx(1 / 300, rel=0.01)
    st = r.core.slot("slow").stats
    assert st.period_last in periods


def test_update_rate_after_a_stall_updates_once_not_in_a_burst():
    r = Rig()
    c = r.load("slow", update_rate=100)
    r.switch(start=["slow"]); r.tick(30)
    n = len(c.periods)
    r.tick_no += 100                                       # the loop stalled 100 ms
    r.tick(5)
    assert len(c.periods) == n + 1
    assert 0.1 < c.periods[-1] < 0.12                    # the real time since the last one


@pytest.mark.parametrize("rate", [2000, -1, "fast", True])
def test_bad_update_rates_are_refused(rate):
    r = Rig()
    with pytest.raises(ControllerError, match=r"update_rate: expected a rate in \[Hz\] "
                                              r"between 0 \(every tick\) and the manager's "
                                              r"1000"):
        r.load("x", update_rate=rate)


# -- fallbacks ---------------------------------------------------------------------------------

def test_an_update_failure_starts_the_fallbacks_in_the_same_tick():
    r = Rig()
    r.load("safe", Claimer, claims=["j0/position"])           # scheduled before 'main'
    r.load("main", Claimer, claims=["j0/position"], raise_at=5,
           fallback_controllers=["safe"])
    r.switch(start=["main"]); r.tick(2)
    r.tick(5)
    assert r.events(tick=5) == [(5, "main", "update"), (5, "main", "stopping"),
                                (5, "safe", "starting"), (5, "safe", "update")]
    assert running(r) == ["safe"]
    assert dict(r.core.list_interfaces())["j0/position"] == "safe"
    assert r.faults == [("main", "update", "diverged")]


def test_a_starting_failure_starts_the_fallbacks_and_the_switch_says_so():
    r = Rig()
    r.load("hold", Claimer)
    r.load("main", Claimer, fail_in="starting", fallback_controllers=["hold"])
    req = r.switch(start=["main"]); r.tick(2)
    assert r.events(tick=1) == [(1, "main", "starting"), (1, "hold", "starting"),
                                (1, "hold", "update")]
    assert running(r) == ["hold"]
    assert not req.ok and req.started == []
    assert req.failed == [("main", "starting raised RuntimeError: cannot seed")]
    assert "failed: 'main' starting raised RuntimeError: cannot seed" in req.summary()


def test_a_fallback_that_cannot_start_is_reported():
    r = Rig()
    r.load("owner", Claimer, claims=["j1/position"])
    r.load("fb", Claimer, claims=["j1/position"])
    r.load("ghost", Claimer)
    r.load("main", Claimer, raise_at=4, fallback_controllers=["fb", "ghost"])
    r.switch(start=["owner", "main"]); r.tick(2)
    r.core.unload("ghost")                   # allowed: it runs nowhere, nobody chains to it
    r.tick(4)
    assert running(r) == ["owner"]
    errors = [f for f in r.faults if f[1] == "fallback"]
    assert sorted(errors) == [("main", "fallback", "fallback 'fb' not started: j1/position is "
                                                   "owned by 'owner'"),
                              ("main", "fallback", "fallback 'ghost' is not loaded")]


def test_fallback_names_are_checked_at_load():
    r = Rig()
    with pytest.raises(ControllerError, match="fallback_controllers: expected a list"):
        r.load("a", fallback_controllers="b")
    with pytest.raises(ControllerError, match="cannot be its own fallback"):
        r.load("a", fallback_controllers=["a"])


def test_a_start_is_refused_unless_its_fallbacks_are_loaded():
    """ros2_control (fallback controllers: checked when the controller is activated): a
    fallback that is not loaded refuses the start under STRICT and leaves that start out
    under BEST_EFFORT, instead of failing only when it is needed."""
    r = Rig()
    r.load("main", Claimer, fallback_controllers=["ghost"])
    r.load("other", Claimer)
    with pytest.raises(ControllerError, match=r"\(STRICT\): 'main' has the fallback 'ghost', "
                                              r"which is not loaded; load 'ghost' first"):
        r.switch(start=["main"])
    req = r.switch(start=["main", "other"], strictness=BEST); r.tick(2)
    assert req.refused == (("main", "has the fallback 'ghost', which is not loaded"),)
    assert running(r) == ["other"]


def test_a_fallback_obeys_the_chain_rule_at_start_and_when_it_is_needed():
    """A fallback that needs a stopped controller used to start anyway. A
    fallback's get_controller dependencies must run when its controller fails: outside
    that controller's chain (which stops with it), or be fallbacks too."""
    r = Rig()
    r.load("pd", Claimer, claims=["j0/position"])
    r.load("safe", Claimer, after=["pd"])                       # needs pd (chained)
    r.load("main", Claimer, raise_at=6, fallback_controllers=["safe"])
    with pytest.raises(ControllerError, match=r"'main' has the fallback 'safe', which depends "
                                              r"on 'pd' \(chained through get_controller\); "
                                              r"'pd' would not be running when 'main' fails"):
        r.switch(start=["main"])
    r.switch(start=["main", "pd"]); r.tick(2)                  # pd runs: safe may take over
    r.tick(6)
    assert sorted(running(r)) == ["pd", "safe"]
    # pd is stopped after main started: when main fails, safe must not start without it
    r2 = Rig()
    r2.load("pd", Claimer, claims=["j0/position"])
    r2.load("safe", Claimer, after=["pd"])
    r2.load("main", Claimer, raise_at=8, fallback_controllers=["safe"])
    r2.switch(start=["main", "pd"]); r2.tick(2)
    r2.switch(stop=["pd"]); r2.tick(2)
    r2.tick(6)
    assert running(r2) == []
    assert ("main", "fallback", "fallback 'safe' not started: it depends on 'pd' (chained "
                                "through get_controller), which is not running") in r2.faults
    # a dependency that is a fallback too starts with it
    r3 = Rig()
    r3.load("pd", Claimer, claims=["j0/position"])
    r3.load("safe", Claimer, after=["pd"])
    r3.load("main", Claimer, raise_at=6, fallback_controllers=["safe", "pd"])
    r3.switch(start=["main"]); r3.tick(2)
    r3.tick(6)
    assert sorted(running(r3)) == ["pd", "safe"]


def test_a_fallback_in_the_failing_controllers_chain_is_refused_at_start():
    r = Rig()
    r.load("pd", Claimer)
    r.load("traj", Claimer, after=["pd"], fallback_controllers=["pd"])
    with pytest.raises(ControllerError, match="which is chained to it"):
        r.switch(start=["traj", "pd"])


# -- chains ------------------------------------------------------------------------------------

def test_a_failing_member_stops_its_whole_chain_and_the_others_go_on():
    r = Rig()
    r.load("pd")
    r.load("traj", after=["pd"], raise_at=6)                  # chained: traj -> pd
    r.load("ref", before=["traj"])                            # chained: traj -> ref
    r.load("other")
    r.switch(start=["pd", "traj", "ref", "other"]); r.tick(2)
    r.tick(6)
    assert running(r) == ["other"]
    chain = {d["name"]: d["chain"] for d in r.core.describe()}
    assert chain["traj"] == ["pd", "ref"] and chain["other"] == []
    assert sorted(w for (_, w, _) in r.faults) == ["chain", "chain", "update"]
    assert ("pd", "chain", "stopped with 'traj' (chained), whose update failed") in r.faults
    assert r.events(tick=6, name="pd")[-1] == (6, "pd", "stopping")


def chain_rig():
    """pd (claims j0), traj -> pd (traj got pd with get_controller: it writes pd's
    setpoint), other (claims j2); all three running."""
    r = Rig()
    r.load("pd", Claimer, claims=["j0/position"])
    r.load("traj", Claimer, after=["pd"])
    r.load("other", Claimer, claims=["j2/position"])
    r.switch(start=["pd", "traj", "other"]); r.tick(2)
    return r


def test_strict_refuses_stopping_the_inner_controller_of_a_running_chain():
    r = chain_rig()
    n = len(r.log)
    with pytest.raises(ControllerError, match=r"^switchController \(STRICT\): cannot stop "
                                              r"'pd': 'traj' depends on it \(chained through "
                                              r"get_controller\) and stays running; stop "
                                              r"'traj' in the same switch"):
        r.switch(stop=["pd", "other"])
    r.tick(3)
    assert not r.core.switch_pending and sorted(running(r)) == ["other", "pd", "traj"]
    assert [e for e in r.log[n:] if e[2] != "update"] == []        # nothing changed
    req = r.switch(stop=["traj"]); r.tick(2)          # the outer one alone: fine
    assert req.ok and sorted(running(r)) == ["other", "pd"]
    req = r.switch(start=["traj"]); r.tick(2)
    req = r.switch(stop=["pd", "traj"]); r.tick(2)    # the whole chain: fine
    assert req.ok and req.stopped == ["pd", "traj"] and running(r) == ["other"]


def test_best_effort_keeps_the_inner_controller_running_and_says_why():
    r = chain_rig()
    req = r.switch(stop=["pd", "other"], strictness=BEST); r.tick(2)
    assert sorted(running(r)) == ["pd", "traj"]
    assert req.stopped == ["other"] and req.ok
    assert req.not_stopped == (("pd", "'traj' depends on it (chained through get_controller) "
                                      "and stays running"),)
    assert "not stopped: 'pd': 'traj' depends on it" in req.summary()
    assert r.events(name="pd")[-1][2] == "update"     # never stopped


def test_strict_refuses_starting_a_controller_without_the_one_it_depends_on():
    r = Rig()
    r.load("pd", Claimer, claims=["j0/position"])
    r.load("traj", Claimer, after=["pd"])
    with pytest.raises(ControllerError, match=r"\(STRICT\): 'traj' depends on 'pd' \(chained "
                                              r"through get_controller\), which is not "
                                              r"running and not started in this switch; "
                                              r"start 'pd' with it"):
        r.switch(start=["traj"])
    assert not r.core.switch_pending and running(r) == []
    req = r.switch(start=["traj", "pd"]); r.tick(2)   # together, in any order
    assert req.ok and running(r) == ["traj", "pd"]


def test_best_effort_skips_a_start_whose_dependency_will_not_run():
    r = Rig()
    r.load("pd", Claimer, claims=["j0/position"])
    r.load("traj", Claimer, after=["pd"])
    r.load("other", Claimer)
    req = r.switch(start=["traj", "other"], strictness=BEST); r.tick(2)
    assert running(r) == ["other"] and req.started == ["other"]
    assert req.refused == (("traj", "depends on 'pd' (chained through get_controller), "
                                    "which is not running and not started in this switch"),)


def test_starting_the_outer_while_stopping_the_inner_is_refused_or_the_start_dropped():
    """ros2_control checks activations first: under BEST_EFFORT the start of the outer
    controller is dropped, and the stop of the inner one then goes through."""
    r = Rig()
    r.load("pd", Claimer, claims=["j0/position"])
    r.load("traj", Claimer, after=["pd"])
    r.switch(start=["pd"]); r.tick(2)
    with pytest.raises(ControllerError, match="'traj' depends on 'pd' .*which this switch "
                                              "stops; keep 'pd' running"):
        r.switch(start=["traj"], stop=["pd"])
    assert running(r) == ["pd"]
    req = r.switch(start=["traj"], stop=["pd"], strictness=BEST); r.tick(2)
    assert running(r) == [] and req.stopped == ["pd"] and req.started == []
    assert [n for n, _ in req.refused] == ["traj"] and req.not_stopped == ()


def test_restarting_the_inner_controller_keeps_the_chain():
    """A restart (stop and start in one switch) runs no tick between its halves, so the
    outer controller never updates without the inner one."""
    r = chain_rig()
    req = r.switch(start=["pd"], stop=["pd"]); r.tick(2)
    assert req.ok and sorted(running(r)) == ["other", "pd", "traj"]
    assert r.events(tick=2, name="pd") == [(2, "pd", "update"), (2, "pd", "stopping")]
    assert r.events(tick=3, name="pd") == [(3, "pd", "starting"), (3, "pd", "update")]


def test_best_effort_drops_cascade_along_a_chain():
    """ref -> traj -> pd: stopping pd and traj while ref stays keeps both (traj is needed by
    ref, then pd by traj); a start dropped for its claims drops its dependents too."""
    r = Rig()
    r.load("pd", Claimer, claims=["j0/position"])
    r.load("traj", Claimer, after=["pd"])
    r.load("ref", Claimer, before=["traj"])
    r.switch(start=["pd", "traj", "ref"]); r.tick(2)
    req = r.switch(stop=["pd", "traj"], strictness=BEST); r.tick(2)
    assert sorted(running(r)) == ["pd", "ref", "traj"] and req.stopped == []
    assert [n for n, _ in req.not_stopped] == ["traj", "pd"]
    with pytest.raises(ControllerError, match="cannot stop 'traj': 'ref' depends on it"):
        r.switch(stop=["pd", "traj"])
    r.switch(stop=["pd", "traj", "ref"]); r.tick(2)
    r.load("owner", Claimer, claims=["j0/position"])
    r.switch(start=["owner"]); r.tick(2)
    req = r.switch(start=["pd", "traj", "ref"], strictness=BEST); r.tick(2)
    assert running(r) == ["owner"]
    assert [n for n, _ in req.refused] == ["pd", "traj", "ref"]
    assert req.refused[0] == ("pd", "claims j0/position (owned by 'owner')")


# -- switch results -----------------------------------------------------------------------------

def test_switch_results_report_stopping_failures():
    r = Rig()
    r.load("t", Claimer, fail_in="stopping", claims=["j0/position"])
    r.switch(start=["t"]); r.tick(2)
    req = r.switch(stop=["t"]); r.tick(2)
    assert req.stopped == ["t"] and not req.ok
    assert req.failed == [("t", "stopping raised: stopping at t=0.002000: RuntimeError: "
                                "brake fault")]
    assert r.core.slot("t").controller.state is ControllerState.INITIALIZED
    assert dict(r.core.list_interfaces())["j0/position"] == ""     # released anyway


def test_an_init_failure_on_purpose_changes_nothing():
    r = Rig()
    r.load("a", Claimer, claims=["j0/position"])
    for how in (True, "raise"):
        with pytest.raises(ControllerError, match="loadController\\('b'\\): init of"):
            r.load("b", Claimer, fail_init=how, claims=["j0/position"])
    assert [n for (n, *_) in r.core.list_controllers()] == ["a"]
    assert r.core.list_interfaces()[0] == ("j0/position", "")


def test_chained_get_controller_uses_after_me():
    """get_controller's link is what makes a chain (the AFTER_ME import is the API)."""
    r = Rig()
    r.load("pd")
    t = r.load("traj", after=["pd"])
    assert t.after_list == ["pd"] and AFTER_ME == 1
