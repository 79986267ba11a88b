"""Simulation time end to end: `python -m rtcf.manager` on compositions in simulated time.

* determinism: the same composition (a 1 kHz sine generator and gain feeding a 100 Hz
  SampleLogger through a `new` connector) run twice gives bit-identical logs;
* `--duration S` counts simulated seconds (exact sample counts, the final report);
* the rtc.conf keys switch simulation on and off over the composition's key;
* a multi-process composition in simulation time is refused with a clear error;
* rtshell-style lifecycle through the CORBA ExecutionContextService of a SimulationEC
  (get_rate, get_kind, activate / deactivate, rtact / rtdeact).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.slow    # seconds per test: left out of scripts/test -m "not slow"

ROOT = Path(__file__).resolve().parents[2]

SYSTEM = """
name: simdet
components:
  - {type: SineGenerator, module: examples, name: gen, params: {amplitude: 1.0, frequency: 3.0}}
  - {type: Gain, module: examples, name: gain, params: {gain: 2.5}}
  - {type: SampleLogger, module: logger, name: rec}
connections:
  - {from: gen.out, to: gain.in, subscription_type: flush}
  - {from: gain.out, to: rec.in, subscription_type: new, push_policy: all, buffer.length: 64}
execution_contexts:
  - {name: fast, rate: 1000, members: [gen, gain]}
  - {name: slow, rate: 100, members: [rec]}
%s
"""


def run_manager(tmp: Path, yaml_text: str, *overrides: str, duration: float | None = None,
                args: tuple[str, ...] = ("--no-corba", "--quiet"), timeout: float = 60.0
                ) -> subprocess.CompletedProcess:
    path = tmp / "system.yaml"
    path.write_text(yaml_text)
    cmd = [sys.executable, "-m", "rtcf.manager", str(path), *args,
           "-o", f"manager.modules.load_path:{ROOT / 'components'}",
           "-o", "logger.log_level:INFO"]
    for o in overrides:
        cmd += ["-o", o]
    if duration is not None:
        cmd += ["--duration", str(duration)]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "components"),
                                         env.get("PYTHONPATH", "")])
    return subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=timeout,
                          env=env, stdin=subprocess.DEVNULL)


def recorded(tmp: Path, name: str, yaml_text: str, *overrides: str,
             duration: float = 2.0) -> tuple[dict, str]:
    log = tmp / f"{name}.npz"
    cp = run_manager(tmp, yaml_text, f"simulation.rec.conf.default.path:{log}", *overrides,
                     duration=duration)
    assert cp.returncode == 0, cp.stderr[-3000:]
    with np.load(log) as z:
        return {k: z[k] for k in z.files}, cp.stderr


def test_two_runs_give_identical_logs(tmp_path):
    text = SYSTEM % "simulation: {real_time_factor: 0}"
    a, err_a = recorded(tmp_path, "a", text)
    b, _ = recorded(tmp_path, "b", text)
    assert a["t"].tobytes() == b["t"].tobytes()
    assert a["data"].tobytes() == b["data"].tobytes()
    # 2 s simulated: the recorder's last cycle is at 1.99 s and has read every sample the
    # generator wrote up to then (same instant, the fast EC declared first)
    assert a["t"].size == 1991
    # stamps are RTC::Time (sec, nsec): the instant to the nanosecond
    assert np.allclose(a["t"], np.arange(1991) / 1000.0, rtol=0, atol=1.5e-9)
    phase = np.linspace(0.0, np.pi, 3, endpoint=False)
    want = 2.5 * np.sin(phase[None, :] + 2 * np.pi * 3.0 * a["t"][:, None])
    assert np.allclose(a["data"], want, atol=1e-12)
    assert "simulation time: every execution context runs on one time base" in err_a
    assert "2.000 s of simulated time" in err_a
    assert "fast: 2000 cycles at 1000 Hz of simulated time" in err_a
    assert "slow: 200 cycles at 100 Hz of simulated time" in err_a


def test_duration_counts_simulated_seconds(tmp_path):
    # 30 simulated seconds; at factor 0 that takes a fraction of it (never asserted)
    a, err = recorded(tmp_path, "long", SYSTEM % "", "rtcf.simulation.enable:YES",
                      "rtcf.simulation.real_time_factor:0", duration=30.0)
    assert a["t"].size == 29991 and abs(a["t"][-1] - 29.99) < 2e-9
    assert "30.000 s of simulated time" in err


def test_conf_enable_no_overrides_the_composition(tmp_path):
    cp = run_manager(tmp_path, SYSTEM % "simulation: {real_time_factor: 0}",
                     "rtcf.simulation.enable:NO", duration=0.3)
    assert cp.returncode == 0, cp.stderr[-3000:]
    assert "simulation time" not in cp.stderr
    assert "lateness p50" in cp.stderr          # the wall-clock report


def test_bad_conf_value_is_refused(tmp_path):
    cp = run_manager(tmp_path, SYSTEM % "", "rtcf.simulation.real_time_factor:-3",
                     duration=0.1)
    assert cp.returncode == 2
    assert ("rtcf: -o: rtcf.simulation.real_time_factor: expected a number >= 0 "
            "(0 = as fast as possible, 1 = real time), got '-3'") in cp.stderr


def test_bad_composition_value_is_refused(tmp_path):
    cp = run_manager(tmp_path, SYSTEM % "simulation: {real_time_factor: -1}", duration=0.1)
    assert cp.returncode == 2
    assert "system.yaml: simulation.real_time_factor: expected a number >= 0" in cp.stderr


def test_a_simulation_split_over_processes_runs_on_one_clock(tmp_path, naming):
    """Once refused, now run. Here the launcher's process hosts no component: it only
    keeps simulated time and steps processes a and b (the default EC's two parts, at the
    default 1000 Hz) in order, every instant."""
    text = """
name: split
components:
  - {type: SineGenerator, module: examples, name: gen, process: a}
  - {type: Recorder, module: examples, name: rec, process: b}
connections:
  - {from: gen.out, to: rec.in}
simulation: {real_time_factor: 0}
"""
    cp = run_manager(tmp_path, text, f"corba.nameservers:localhost:{naming.port}",
                     "exec_cxt.periodic.sched_fifo:NO", duration=0.5, args=("--quiet",))
    assert cp.returncode == 0, cp.stderr[-3000:]
    assert "simulation: 0.500 s of simulated time" in cp.stderr
    assert "lockstep: 1000 steps to 2 other processes (a, b)" in cp.stderr, cp.stderr[-3000:]
    assert re.search(r"rec: 500 samples, gaps 0 \(0 missing\)", cp.stderr), cp.stderr[-3000:]


def test_help_says_duration_is_simulated_in_simulation_time(tmp_path):
    cp = subprocess.run([sys.executable, "-m", "rtcf.manager", "--help"], cwd=ROOT,
                        capture_output=True, text=True, timeout=30)
    assert "in simulation time: when simulated time reaches S" in " ".join(cp.stdout.split())


# -- the CORBA ExecutionContextService of a SimulationEC -------------------------------------------

CORBA_SYSTEM = """
name: simcorba
components:
  - {type: SineGenerator, module: examples, name: simgen}
  - {type: Recorder, module: examples, name: simrec}
  - {type: Recorder, module: examples, name: simidle}
connections:
  - {from: simgen.out, to: simrec.in, subscription_type: new}
execution_contexts:
  - {name: main, rate: 100, members: [simgen, simrec]}
  - {name: idle, rate: 50, members: [simidle]}
activate: [simgen, simrec]
simulation: {real_time_factor: 1}
"""


def test_corba_ec_service_on_a_simulation_ec(launch, it):
    mp = launch(CORBA_SYSTEM, ["simgen", "simrec", "simidle"])
    RTC = it.stubs("RTC")
    gen, idle = mp.ref("simgen"), mp.ref("simidle")
    it.wait_state(gen, "ACTIVE")
    ec = it.component_ec(gen)
    assert ec.get_rate() == 100.0
    assert ec.get_kind() == RTC.PERIODIC
    assert ec.is_running()
    from rtcf.corba.nv import from_nvlist
    svc = ec._narrow(it.stubs("RTC").ExecutionContextService)
    props = from_nvlist(svc.get_profile().properties)
    assert props["type"] == "SimulationEC"
    # synchronous transitions through the EC service
    assert ec.deactivate_component(gen) == RTC.RTC_OK
    assert it.component_state(gen) == "INACTIVE"
    assert ec.activate_component(gen) == RTC.RTC_OK
    assert it.component_state(gen) == "ACTIVE"
    # rtshell
    it.wait_state(idle, "INACTIVE")
    it.rtsh("rtact", mp.path("simidle"))
    it.wait_state(idle, "ACTIVE")
    assert it.component_ec(idle).get_rate() == 50.0
    it.rtsh("rtdeact", mp.path("simidle"))
    it.wait_state(idle, "INACTIVE")
    # stop and start the EC itself (it leaves and rejoins the time base)
    idle_ec = it.component_ec(idle)
    assert idle_ec.stop() == RTC.RTC_OK and not idle_ec.is_running()
    assert idle_ec.start() == RTC.RTC_OK and idle_ec.is_running()
    assert idle_ec.activate_component(idle) == RTC.RTC_OK
    assert it.component_state(idle) == "ACTIVE"
    assert mp.alive()
    assert "simulation time: every execution context runs on one time base" in mp.log()
