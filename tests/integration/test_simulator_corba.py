"""The Simulator in another process (a manager on a 100 Hz wall-clock EC), its
Simulation::SimulatorService called from this one over CORBA: pause / step / resume act on
the physics, push moves the robot, bad calls get SimulatorError with a reason and the
simulation keeps running. No timing assertions: waits poll with generous timeouts.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from integration_support import wait_until

from rtcf.corba.client import get_service
from rtcf.corba.idl import stub_module

pytestmark = pytest.mark.slow    # seconds per test: left out of scripts/test -m "not slow"

Simulation = stub_module("Simulation")
ROOT = Path(__file__).resolve().parents[2]

COMPOSITION = """\
name: simulator_only
components:
  - {type: Simulator, module: simulator, params: {model: nao_v5}}
execution_contexts:
  - {name: sim, kind: periodic, rate: 100, members: [Simulator0]}
activate: all
"""


@pytest.fixture(scope="module")
def svc(module_launch, naming):
    module_launch(COMPOSITION, "Simulator0")
    s = get_service("Simulator0", "SimulatorService", stub=Simulation.SimulatorService,
                    nameserver=f"localhost:{naming.port}")
    wait_until(lambda: s.getTime() > 0.05, 20.0, what="the simulation running")
    return s


def test_pause_step_resume(svc):
    svc.pause()
    assert svc.isPaused()
    t0 = svc.getTime()
    svc.step(5)
    wait_until(lambda: svc.getTime() >= t0 + 0.05 - 1e-9, 10.0, what="five steps")
    assert svc.getTime() == pytest.approx(t0 + 0.05, abs=1e-9)
    svc.resume()
    wait_until(lambda: svc.getTime() > t0 + 0.2, 10.0, what="running again")


def test_push_moves_the_standing_robot(svc):
    x0 = svc.getBodyState("torso").position.x
    assert svc.getBodyState("torso").position.z > 0.3
    svc.push("torso", Simulation.Vector3(40.0, 0.0, 0.0), 0.1)
    wait_until(lambda: svc.getBodyState("torso").position.x > x0 + 0.01, 10.0,
               what="the torso pushed forward")


@pytest.mark.parametrize("call, reason", [
    (lambda s: s.step(-1), "step: expected a number of periods in [1, 10000000], got -1"),
    (lambda s: s.push("Tail", Simulation.Vector3(1, 0, 0), 0.1), "push: unknown body 'Tail'"),
    (lambda s: s.push("torso", Simulation.Vector3(math.nan, 0, 0), 0.1),
     "push force: expected finite numbers"),
    (lambda s: s.getBodyState("nope"), "getBodyState: unknown body 'nope'"),
    (lambda s: s.setRealTimeFactor(2.0), "runs on the wall clock, not in simulation time"),
])
def test_bad_calls_raise_simulator_error_and_it_keeps_running(svc, call, reason):
    with pytest.raises(Simulation.SimulatorError) as info:
        call(svc)
    assert reason in info.value.reason
    t = svc.getTime()
    wait_until(lambda: svc.getTime() > t, 10.0, what="the simulation still running")


def test_reset_puts_it_back_on_its_feet(svc):
    svc.reset()
    assert svc.getTime() < 1.0
    assert svc.getBodyState("torso").position.z > 0.3
    assert "r_ankle" in svc.getBodyNames()


@pytest.mark.parametrize("content, reason", [
    (None, r"nothere.xml: no such model file \(bundled models: nao_v5, m1013\)"),
    ("<mujoco><worldbody><body>", r"broken.xml: MuJoCo cannot load this model: XML parse error"),
])
def test_a_model_that_does_not_load_is_refused_naming_the_file(naming, tmp_path, content,
                                                               reason):
    model = tmp_path / ("nothere.xml" if content is None else "broken.xml")
    if content is not None:
        model.write_text(content)
    yaml_path = tmp_path / "bad.yaml"
    yaml_path.write_text(COMPOSITION.replace("model: nao_v5", f"model: {model}"))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cp = subprocess.run([sys.executable, "-m", "rtcf.manager", str(yaml_path), "--duration", "2",
                         "-o", f"corba.nameservers:localhost:{naming.port}",
                         "-o", f"manager.modules.load_path:{ROOT / 'components'}"],
                        capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
    out = cp.stdout + cp.stderr
    assert cp.returncode != 0, out
    assert re.search(reason, out), out
    assert "Traceback" not in out, out


@pytest.mark.parametrize("component", ["Simulator", "DCM"])
def test_a_model_beside_the_users_composition_is_found(naming, tmp_path, component):
    """scripts/run runs the manager in the project; a relative model path is read against
    the folder the command was typed in first (as the composition and controller_config
    are): a user's MJCF file beside their composition loads, for the Simulator's model and
    the DCM's sim_model. A missing one names both places looked in."""
    folder = tmp_path / "mine"
    folder.mkdir()
    if component == "Simulator":
        (folder / "my_robot.xml").write_text((ROOT / "tests" / "data" /
                                              "unstable_servo.xml").read_text())
        comp = "{type: Simulator, module: simulator, params: {model: my_robot.xml}}"
        ec = "{name: sim, kind: periodic, rate: 500, members: [Simulator0]}"
    else:
        (folder / "my_nao.xml").write_text((ROOT / "model" / "sim" / "nao_v5.xml").read_text())
        comp = "{type: DCM, module: dcm, params: {body: mujoco, sim_model: my_nao.xml}}"
        ec = "{name: dcm, kind: periodic, rate: 100, members: [DCM0]}"
    text = f"components:\n  - {comp}\nexecution_contexts:\n  - {ec}\nactivate: all\n"
    (folder / "c.yaml").write_text(text)
    (folder / "gone.yaml").write_text(text.replace("my_", "gone_"))
    env = dict(os.environ, RTCF_VENV=str(Path(sys.executable).parent.parent))
    for name, rc, expect in (
            ("c.yaml", 0, r"running c \(1 components\)"),
            ("gone.yaml", 2, rf"gone_\w+\.xml: no such model file in {re.escape(str(folder))} "
                             rf"or {re.escape(str(ROOT))} \(bundled models: nao_v5, m1013\)")):
        cp = subprocess.run([str(ROOT / "scripts" / "run"), name, "--duration", "1", "-o",
                             f"corba.nameservers:localhost:{naming.port}", "-o",
                             "exec_cxt.periodic.sched_fifo:NO"], capture_output=True,
                            text=True, timeout=120, env=env, cwd=folder,
                            stdin=subprocess.DEVNULL)
        out = cp.stdout + cp.stderr
        assert cp.returncode == rc, out
        assert re.search(expect, out), out
        assert "Traceback" not in out, out


# -- pushes are bounded; a blown-up simulation is a fault, reported ---------

def test_the_issues_push_of_1e5_newton_is_refused_over_corba(svc):
    with pytest.raises(Simulation.SimulatorError) as info:
        svc.push("torso", Simulation.Vector3(1e5, 0.0, 0.0), 0.01)
    assert re.search(r"push force: \|f\| = 100000 N is beyond the limit of 1041 N \(20 x "
                     r"nao_v5's weight", info.value.reason), info.value.reason
    z = svc.getBodyState("torso").position.z
    assert z > 0.3                                     # still standing, never reset


UNSTABLE = ROOT / "tests" / "data" / "unstable_servo.xml"
DIVERGING = f"""\
name: diverging
components:
  - {{type: Simulator, module: simulator, name: Sim, params: {{model: {UNSTABLE}}}}}
  - {{type: SineGenerator, module: examples, name: sine}}
execution_contexts:
  - {{name: sim, kind: periodic, rate: 100, members: [Sim, sine]}}
activate: all
"""


def test_a_blow_up_is_reported_and_the_component_goes_to_error_alone(launch, naming, rtsh_cmd):
    """A push on a model whose servo is too stiff for its timestep: the Simulator logs what
    MuJoCo found and goes to ERROR (rtcat shows it), its neighbour in the same EC runs on,
    the service names the fault, and rtreset + rtact start the physics afresh."""
    mp = launch(DIVERGING, ["Sim", "sine"])
    s = get_service("Sim", "SimulatorService", stub=Simulation.SimulatorService,
                    nameserver=f"localhost:{naming.port}")
    wait_until(lambda: s.getTime() > 0.05, 20.0, what="the simulation running")
    ref = mp.ref("Sim")
    ec = ref.get_owned_contexts()[0]
    RTC = stub_module("RTC")
    s.push("link", Simulation.Vector3(1.0, 0.0, 0.0), 0.01)
    wait_until(lambda: ec.get_component_state(ref) == RTC.ERROR_STATE, 20.0,
               what="the Simulator in ERROR")
    wait_until(lambda: "physics diverged" in mp.log(), 10.0, what="the log line")
    assert re.search(r"physics diverged in the period ending at t = [\d.]+ s: MuJoCo found "
                     r"NaN, infinite or huge values of the .*joint j1.*Sim goes to ERROR "
                     r"\(the other components run on\)", mp.log()), mp.log()
    sine = mp.ref("sine")
    assert ec.get_component_state(sine) == RTC.ACTIVE_STATE
    with pytest.raises(Simulation.SimulatorError) as info:
        s.getBodyState("link")
    assert "physics diverged" in info.value.reason and "Sim is in ERROR" in info.value.reason
    assert mp.alive()
    for cmd in ("rtreset", "rtact"):
        cp = rtsh_cmd(cmd, mp.path("Sim"))
        assert cp.returncode == 0, cp.stdout + cp.stderr
    wait_until(lambda: ec.get_component_state(ref) == RTC.ACTIVE_STATE, 20.0,
               what="the Simulator active again")
    link = s.getBodyState("link")
    assert (link.position.x, link.position.z) == (0.0, 0.5)       # the link upright again
