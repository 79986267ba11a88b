"""The controllers in the status parameters and profile properties (profile.py): built from
the core, rebuilt only when the core's generation moved, on a stepped EC (no ORB)."""

from __future__ import annotations

import pytest

from rtcf import SteppedEC

from rtcf_components.controller_manager.component import ControllerManager
from rtcf_components.controller_manager.profile import properties, status_values

CONFIG = """
controllers:
  pd: {type: JointPositionController, joints: [HeadYaw, HeadPitch]}
  traj: {type: JointTrajectoryController, joints: [HeadYaw], output: pd}
  arm: {type: JointPositionController, joints: [LShoulderPitch], update_rate: 50,
        fallback_controllers: [pd]}
load: [pd, traj, arm]
start: [pd, traj]
"""


@pytest.fixture
def cm(tmp_path):
    cfg = tmp_path / "ctl.yaml"
    cfg.write_text(CONFIG)
    cm = ControllerManager("CMP")
    cm.params.load({"hardware": "loopback", "controller_config": str(cfg)})
    cm.initialize()
    ec = SteppedEC(1000, name="ctl")
    ec.add_component(cm)
    ec.start()
    ec.activate_component(cm)
    yield ec, cm
    ec.stop()
    cm.finalize()


def test_the_loaded_controllers_are_visible_before_and_after_the_start(cm):
    ec, c = cm
    assert c.running_controllers == ""                    # loaded at initialize
    assert c.loaded_controllers.startswith("arm (JointPositionController, initialized)")
    ec.step(3)                                            # the configured start
    c.refresh_profile()
    assert c.running_controllers == "traj,pd"
    assert c.claimed_interfaces == ("arm: LShoulderPitch/position,"
                                    "pd: HeadYaw/position HeadPitch/position")
    assert c.properties["controllers.running"] == "traj, pd"
    assert c.properties["controller.arm"] == ("initialized, JointPositionController, "
                                              "position 0, 50 Hz, claims "
                                              "LShoulderPitch/position, fallbacks pd")
    assert c.properties["controller.traj"].endswith("depends on pd")


def test_rebuilt_only_when_something_changed(cm):
    ec, c = cm
    ec.step(3)
    assert c.profile_view.refresh() is True
    ec.step(50)                                           # ticks alone change nothing
    assert c.profile_view.refresh() is False
    c.core.request_switch(["arm"], ["traj"], 2)
    ec.step(2)
    assert c.profile_view.refresh() is True
    assert c.running_controllers == "arm,pd"
    assert "initialized, JointTrajectoryController" in c.properties["controller.traj"]
    ec.step(2)
    c.properties["site"] = "lab"                         # others' properties are kept
    c.service.unloadController("traj")
    c.refresh_profile()
    assert "controller.traj" not in c.properties and c.properties["site"] == "lab"
    assert "traj" not in c.loaded_controllers


def test_the_texts_from_describe_rows():
    rows = [dict(name="a", type="T", state="running", position=0, update_rate=0.0,
                 claims=["j/position"], depends_on=[], fallbacks=[]),
            dict(name="b", type="U", state="initialized", position=1, update_rate=250.0,
                 claims=[], depends_on=["a"], fallbacks=["a"])]
    assert status_values(rows) == {"running_controllers": "a",
                                   "loaded_controllers": "a (T, running),b (U, initialized)",
                                   "claimed_interfaces": "a: j/position"}
    assert properties(rows) == {
        "controllers.running": "a",
        "controller.a": "running, T, position 0, every tick, claims j/position",
        "controller.b": "initialized, U, position 1, 250 Hz, depends on a, fallbacks a"}
    assert properties([])["controllers.running"] == "-"
    assert status_values([]) == dict.fromkeys(status_values(rows), "")
