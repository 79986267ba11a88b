"""The ControllerManager component's ros2_control-level additions without an ORB transport,
on a stepped 1 kHz EC with loopback hardware: switch answers that report failures and
interface conflicts, the controllerState port, status line and final report, statistics,
re-import of an edited controller module on unload + load, reloadControllerModules, and
user paths read against the directory the command was typed in (RTCF_CWD)."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from test_controller_manager_component import in_thread, step_until_done

from rtcf import SteppedEC
from rtcf.corba.idl import stub_module

from rtcf_components.controller_manager.component import (STATE_HEADER, STATE_PER_CONTROLLER,
                                          ControllerManager)

R = stub_module("RTController")

MODULE_V1 = '''
from rtcf_components.controller_manager import Controller

class Wave(Controller):
    """Commands its joint to ``level``; fails on purpose where told (fail_in)."""
    def init(self, robot, params):
        self.j = robot.joint(params.get("joint", "HeadYaw"))
        self.fail_in = params.get("fail_in", "")
        self.claim([self.j.name], "position")
        self.version = 1
        return True

    def starting(self, time):
        if self.fail_in == "starting":
            raise RuntimeError("cannot seed")

    def update(self, time, period):
        if self.fail_in == "update":
            raise ValueError("diverged")
        self.j.command = 0.1 * self.version
'''


@pytest.fixture
def rig(tmp_path, monkeypatch):
    """A ControllerManager (loopback hardware) whose controller_path is a folder given
    relative to RTCF_CWD; the controller module 'mywave' lives there."""
    user = tmp_path / "user"
    (user / "ctrl").mkdir(parents=True)
    (user / "ctrl" / "mywave.py").write_text(MODULE_V1)
    (user / "c.yaml").write_text(textwrap.dedent("""
        controllers:
          hold: {type: JointPositionController, joints: [HeadYaw]}
          wave: {type: mywave.Wave, joint: HeadYaw, fail_in: update,
                 fallback_controllers: [hold]}
        load: [hold, wave]
    """))
    monkeypatch.setenv("RTCF_CWD", str(user))
    cm = ControllerManager("CMx")
    cm.params.load({"hardware": "loopback", "controller_config": "c.yaml",
                    "controller_path": ["ctrl"], "state_rate": 100.0})
    cm.initialize()
    ec = SteppedEC(1000, name="ctlx")
    ec.add_component(cm)
    ec.start()
    ec.activate_component(cm)
    ec.step(2)
    yield ec, cm, user
    ec.stop()
    cm.finalize()


def switch(ec, cm, start=(), stop=(), strictness=R.STRICT):
    t, box = in_thread(cm.service.switchController, list(start), list(stop), strictness, 60.0)
    step_until_done(ec, t)
    return box[0]


def call(ec, fn, *args):
    t, box = in_thread(fn, *args)
    step_until_done(ec, t)
    return box[0]


def test_user_paths_are_read_against_rtcf_cwd(rig):
    ec, cm, user = rig
    assert cm.load_path == [str(user / "ctrl")]
    assert [n for (n, *_) in cm.core.list_controllers()] == ["hold", "wave"]


def test_bad_controller_path_names_the_entry(monkeypatch, tmp_path):
    monkeypatch.setenv("RTCF_CWD", str(tmp_path))
    cm = ControllerManager("CMbad")
    cm.params.load({"hardware": "loopback", "controller_path": ["nowhere"]})
    with pytest.raises(Exception, match="controller_path entry 'nowhere' is not a folder"):
        cm.initialize()


def test_an_update_failure_falls_back_and_everything_is_visible(rig):
    ec, cm, user = rig
    ok, msg = switch(ec, cm, start=["wave"])
    assert ok, msg
    ec.step(5)
    rows = {d["name"]: d for d in cm.core.describe()}
    assert rows["wave"]["state"] == "initialized" and rows["hold"]["state"] == "running"
    assert "ValueError: diverged" in rows["wave"]["last_error"]
    assert "1/2 controllers running (hold)" in cm.status()
    report = cm.summary()
    assert "wave (mywave.Wave, every tick): initialized" in report and "1 faults" in report
    details = {d.name: d for d in cm.service.describeControllers()}
    assert details["wave"].fallback_controllers == ["hold"]
    assert details["hold"].claimed_interfaces == ["HeadYaw/position"]
    owners = {i.name: i.claimed_by for i in cm.service.listInterfaces()}
    assert owners["HeadYaw/position"] == "hold" and owners["HeadPitch/position"] == ""


def test_switch_answers_report_conflicts_and_failing_starts(rig):
    ec, cm, user = rig
    assert switch(ec, cm, start=["hold"])[0]
    ok, msg = switch(ec, cm, start=["wave"])
    assert not ok and msg == ("switchController (STRICT): 'wave' claims HeadYaw/position "
                              "(owned by 'hold'); stop the owner in the same switch, or use "
                              "BEST_EFFORT to start the others")
    ok, msg = switch(ec, cm, start=["wave"], strictness=R.BEST_EFFORT)
    assert ok and "not started: 'wave' claims HeadYaw/position (owned by 'hold')" in msg
    ok, msg = call(ec, cm.service.loadController, "bad", "mywave.Wave",
                   [R.Param("fail_in", __import__("omniORB").any.to_any("starting")),
                    R.Param("joint", __import__("omniORB").any.to_any("HeadPitch"))])
    assert ok, msg
    ok, msg = switch(ec, cm, start=["bad"])
    assert not ok
    assert msg.startswith("switchController: not everything went as asked: started []")
    assert "failed: 'bad' starting raised RuntimeError: cannot seed" in msg


def test_controller_state_port_layout(rig):
    ec, cm, user = rig
    switch(ec, cm, start=["hold"])
    ec.step(30)
    v = cm.state_out.value.data
    h, k = len(STATE_HEADER), len(STATE_PER_CONTROLLER)
    assert v.size == h + 2 * k
    assert v[1] == 1 and v[5] == 2 and v[0] > 10
    hold = v[h:h + k]                          # schedule order: hold, wave
    assert hold[0] == 1.0 and hold[2] == pytest.approx(1e-3)
    assert v[h + k] == 0.0


def test_statistics_in_a_running_manager(rig):
    ec, cm, user = rig
    switch(ec, cm, start=["hold"])
    ec.step(50)
    st = cm.service.getStatistics()
    assert st.ticks >= 50 and st.lateness_max >= st.lateness_p99 >= st.lateness_p50 >= 0
    assert [c.name for c in st.controllers] == ["hold", "wave"]
    fig = cm.loop_figures()
    assert fig["mean_period"] == pytest.approx(1e-3)


def test_unload_edit_load_runs_the_new_code(rig):
    ec, cm, user = rig
    core = cm.core
    assert core.slot("wave").controller.version == 1
    assert call(ec, cm.service.unloadController, "wave")[0]
    src = (user / "ctrl" / "mywave.py")
    src.write_text(MODULE_V1.replace("self.version = 1", "self.version = 2"))
    ok, msg = call(ec, cm.service.loadController, "wave", "", [])
    assert ok, msg
    assert core.slot("wave").controller.version == 2


def test_reload_modules_refused_while_loaded_then_restored(rig):
    ec, cm, user = rig
    ok, msg = call(ec, cm.service.reloadControllerModules, False)
    assert not ok and msg.startswith("reloadControllerModules: 2 controllers are loaded "
                                     "(hold, wave); unload them first")
    switch(ec, cm, start=["hold"])
    (user / "ctrl" / "mywave.py").write_text(
        MODULE_V1.replace("self.version = 1", "self.version = 3"))
    ok, msg = call(ec, cm.service.reloadControllerModules, True)
    assert ok, msg
    assert "mywave" in msg and "restarted ['hold']" in msg
    assert cm.core.slot("wave").controller.version == 3
    assert [s for (_, _, s, _) in cm.core.list_controllers()] == ["running", "initialized"]
    assert np.isfinite(cm.core.slot("hold").stats.period_last)


def test_statistics_polled_fast_get_one_snapshot(rig, monkeypatch):
    import rtcf_components.controller_manager.service as service
    ec, cm, user = rig
    first = cm.service.getStatistics()
    assert cm.service.getStatistics() is first             # within STATS_MAX_AGE
    ec.step(10)
    monkeypatch.setattr(service, "STATS_MAX_AGE", 0.0)
    fresh = cm.service.getStatistics()
    assert fresh is not first and fresh.ticks == first.ticks + 10


def test_controller_overruns_are_logged_rate_limited(rig, caplog):
    ec, cm, user = rig
    # no limit first: on a busy machine an update preempted for longer than the period
    # would count (the limit is the period), and the figures below would be off by it
    cm.core.overrun_limit = float("inf")
    switch(ec, cm, start=["hold"])
    ec.step(3)
    cm.core.overrun_limit = 1e-12                 # every update now counts as an overrun
    ec.step(5)
    with caplog.at_level("WARNING"):
        cm.log_warnings(100.0)
        ec.step(5)
        cm.log_warnings(101.0)                 # within 5 s: nothing
        cm.log_warnings(106.0)
    msgs = [r.getMessage() for r in caplog.records if "controller overruns" in r.getMessage()]
    assert len(msgs) == 2
    assert msgs[0].startswith("controller overruns (an update longer than 0.000 ms): 5 new; "
                              "so far hold 5")
    assert "5 new; so far hold 10" in msgs[1]


def test_a_class_removed_from_an_edited_module_no_longer_loads(rig):
    """The module used to be re-imported with importlib.reload, which keeps the
    old attributes, so a class deleted from the file still loaded."""
    ec, cm, user = rig
    assert call(ec, cm.service.unloadController, "wave")[0]
    (user / "ctrl" / "mywave.py").write_text(MODULE_V1.replace("class Wave(", "class Swell("))
    ok, msg = call(ec, cm.service.loadController, "wave", "", [])
    assert not ok and "module 'mywave' has no Controller subclass 'Wave'" in msg
    ok, msg = call(ec, cm.service.loadController, "swell", "mywave.Swell", [])
    assert ok, msg
