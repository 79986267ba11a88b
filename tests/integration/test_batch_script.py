"""scripts/batch: trials of a composition at once, a sweep, their logs and summary; bad input
refused before anything runs (docs/simulator.md, "Batches of trials")."""

from __future__ import annotations

import csv
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mujoco")

ROOT = Path(__file__).resolve().parents[2]
ARM = ROOT / "compositions" / "arm_sim.yaml"
HOME = [0, 0, 1.5707963, 0, 1.5707963, 0]
BENT = [0, 0.3, 1.2, 0, 1.5707963, 0]


def batch(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "batch.py"), *args],
                          capture_output=True, text=True, cwd=cwd, timeout=600)


@pytest.mark.slow
def test_a_sweep_runs_every_trial_and_collects_the_logs(tmp_path):
    out = tmp_path / "postures"
    done = batch(str(ARM), "--duration", "0.2", "--trials", "2", "-j", "2", "--out", str(out),
                 "--sweep", f"Simulator0.initial_q=[{HOME}, {BENT}]", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "4/4 trials done" in done.stderr and "4 of 4 trials ran" in done.stderr
    summary = json.loads((out / "summary.json").read_text())
    trials = summary["trials"]
    assert [t["status"] for t in trials] == ["ok"] * 4
    assert [t["params"]["Simulator0.initial_q"] for t in trials] == [HOME, HOME, BENT, BENT]
    digest = {}
    for t in trials:
        folder = out / t["folder"]
        q = folder / "log" / "arm_sim_q.npz"             # the logger's path, in the trial
        with np.load(q) as z:
            assert len(z["t"]) == 200
            first = z["data"][0]
        np.testing.assert_allclose(first, t["params"]["Simulator0.initial_q"], atol=0.01)
        logs = {lg["logger"]: lg for lg in t["logs"]}
        assert logs["qLog"]["samples"] == 200 and len(logs["qLog"]["sha256"]) == 64
        digest.setdefault(json.dumps(t["params"]), set()).add(logs["qLog"]["sha256"])
        ran = (folder / "composition.yaml").read_text()
        assert "initial_q" in ran and str(folder / "log" / "arm_sim_q.npz") in ran
    # the same parameters give the same log, bit for bit; other parameters another
    assert [len(v) for v in digest.values()] == [1, 1]
    assert len(set.union(*digest.values())) == 2
    rows = list(csv.DictReader((out / "summary.csv").open()))
    assert [r["status"] for r in rows] == ["ok"] * 4 and rows[3]["qLog.sha256"]


@pytest.mark.parametrize("args,message", [
    (["--sweep", "Simulator9.initial_q=[[0]]"],
     "the composition has no instance 'Simulator9'"),
    (["--set", "Simulator0.stiffnes=0.5"], "stiffnes"),
    (["--set", "Simulator0.stiffness=5"], "stiffness"),
    (["--sweep", "Simulator0.stiffness=0.5"], "expected a YAML list of values to try"),
    (["--set", "Simulator0=0.5"], "expected INSTANCE.PARAM=VALUE"),
    (["--trials", "0"], "--trials: expected >= 1, got 0"),
    (["--trials", "2", "--set", "qLog.path=/tmp/q.npz"],
     "qLog.path: /tmp/q.npz is an absolute path: every trial would write that one file"),
    (["--sweep", "Simulator0.initial_q=[[0, 0, 0, 0, 0, 0], 1.5]"], "initial_q"),
    (["--duration", "0"], "--duration: expected simulated seconds > 0"),
    (["-j", "0"], "--jobs: expected >= 1, got 0"),
])
def test_bad_input_is_named_and_nothing_runs(tmp_path, args, message):
    out = tmp_path / "out"
    done = batch(str(ARM), "--duration", "0.1", "--out", str(out), *args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert not out.exists()


def test_a_folder_in_use_is_refused(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "trial-000").mkdir()
    done = batch(str(ARM), "--duration", "0.1", "--out", str(out), cwd=tmp_path)
    assert done.returncode == 2 and "is not an empty folder" in done.stderr


def test_a_posture_the_arm_cannot_take_is_refused_before_any_trial(tmp_path):
    # two angles for a six-joint arm: the Simulator's own check, run for every trial's
    # values before the first one starts
    out = tmp_path / "out"
    done = batch(str(ARM), "--duration", "0.2", "--out", str(out),
                 "--sweep", f"Simulator0.initial_q=[{HOME}, [0, 0], {BENT}]", cwd=tmp_path)
    assert done.returncode == 2, done.stderr[-3000:]
    assert "initial_q" in done.stderr and "expected 6" in done.stderr, done.stderr
    assert not out.exists()


@pytest.mark.slow
def test_a_trial_that_fails_is_named_and_the_others_run_on(tmp_path):
    # a log path through the trial's own output.txt: only that trial's folder has the file
    # in the way, so the batch's check cannot know it; the trial's manager refuses it
    out = tmp_path / "out"
    done = batch(str(ARM), "--duration", "0.2", "-j", "2", "--out", str(out),
                 "--sweep", "qLog.path=[log/a.npz, output.txt/q.npz, log/c.npz]",
                 cwd=tmp_path)
    assert done.returncode == 1, done.stderr[-3000:]
    assert "trial 1 failed (exit 2)" in done.stderr
    assert "output.txt is a file, not a folder" in done.stderr
    assert "2 of 3 trials ran" in done.stderr
    trials = json.loads((out / "summary.json").read_text())["trials"]
    assert [t["status"] for t in trials] == ["ok", "failed", "ok"]
    assert "components[4].params.path" in trials[1]["reason"] and not trials[0]["reason"]
    for t, name in ((trials[0], "a"), (trials[2], "c")):
        with np.load(out / t["folder"] / "log" / f"{name}.npz") as z:
            assert len(z["t"]) == 200
    rows = list(csv.DictReader((out / "summary.csv").open()))
    assert "not a folder" in rows[1]["reason"] and rows[2]["status"] == "ok"


@pytest.mark.slow
def test_ctrl_c_stops_the_running_trials_and_writes_the_summary(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, str(ROOT / "scripts" / "batch.py"), str(ARM),
                             "--duration", "1e6", "--trials", "3", "-j", "1",
                             "--out", str(out)],
                            stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        first = out / "trial-000" / "output.txt"
        deadline = time.monotonic() + 300      # the first trial runs (a slow machine: long)
        while not (first.exists() and "running arm_sim" in first.read_text()):
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        rest = proc.stderr.read()
        assert proc.wait(timeout=120) == 130, rest
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    trials = json.loads((out / "summary.json").read_text())["trials"]
    assert [t["status"] for t in trials] == ["stopped", "waiting", "waiting"]
    assert "simulation:" in first.read_text()         # it ended in order: its report
    assert "0 of 3 trials ran" in rest


@pytest.mark.slow
def test_a_trial_that_cannot_start_is_named_with_its_output(tmp_path):
    comp = tmp_path / "fails.yaml"
    comp.write_text("name: fails\n"
                    "components:\n"
                    "  - {type: InitFails, module: faulty}\n"
                    "execution_contexts:\n"
                    "  - {name: main, kind: periodic, rate: 100, members: [InitFails0]}\n")
    testcomps = Path(__file__).resolve().parent / "testcomps"
    out = tmp_path / "out"
    done = batch(str(comp), "--duration", "0.1", "--trials", "2", "--out", str(out),
                 "-o", f"manager.modules.load_path:{ROOT / 'components'},{testcomps}",
                 cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "trial 0 failed" in done.stderr and "trial 1 failed" in done.stderr
    assert "InitFails: on_initialize raises on purpose" in \
        (out / "trial-000" / "output.txt").read_text()
    summary = json.loads((out / "summary.json").read_text())
    assert [t["status"] for t in summary["trials"]] == ["failed", "failed"]


@pytest.mark.parametrize("text,message", [
    (None, "no_such.yaml"),
    ((ROOT / "compositions" / "arm_sim_split.yaml").read_text(),
     "its components run in processes main, planner; a trial of a batch runs in one process"),
    ("name: x\ncomponents:\n  - {type: NoSuchThing, module: nosuch}\n", "nosuch"),
])
def test_an_unknown_composition_is_named_and_nothing_runs(tmp_path, text, message):
    comp = tmp_path / "no_such.yaml"
    if text is not None:
        comp.write_text(text)
    out = tmp_path / "out"
    done = batch(str(comp), "--duration", "0.1", "--out", str(out), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("scripts/batch: ") and message in done.stderr
    assert not out.exists()


STOPS_BADLY = '''
from rtcf import Component, ReturnCode


class StopsBadly(Component):
    """Runs, then cannot finish: its deactivation fails (a file it cannot write, say)."""

    def on_deactivated(self, ec):
        self.log.error("could not write its result")
        return ReturnCode.RTC_ERROR
'''


def test_a_component_failing_while_the_system_stops_fails_its_trial(tmp_path):
    (tmp_path / "mods").mkdir()
    (tmp_path / "mods" / "stops_badly.py").write_text(STOPS_BADLY)
    comp = tmp_path / "c.yaml"
    comp.write_text("name: c\nsimulation: {real_time_factor: 0}\n"
                    "components:\n  - {type: StopsBadly, module: stops_badly, name: sb}\n"
                    "execution_contexts:\n  - {name: e, kind: periodic, rate: 100, "
                    "members: [sb]}\nactivate: all\n")
    out = tmp_path / "out"
    done = batch(str(comp), "--duration", "0.1", "--trials", "2", "-j", "1", "--out",
                 str(out), "-o", f"manager.modules.load_path:{tmp_path / 'mods'}",
                 cwd=tmp_path)
    assert done.returncode == 1, done.stderr[-3000:]
    assert "sb failed while stopping (could not write its result)" in done.stderr, \
        done.stderr[-3000:]
    trials = json.loads((out / "summary.json").read_text())["trials"]
    assert [t["status"] for t in trials] == ["failed", "failed"]


def _batch_module():
    import importlib.util
    spec = importlib.util.spec_from_file_location("rtcf_batch_script",
                                                  ROOT / "scripts" / "batch.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod              # its dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def test_each_trial_gets_its_share_of_the_cores_for_the_numerical_thread_pools(monkeypatch):
    """N trials at once on C cores: OpenMP / OpenBLAS / MKL pools of C // N threads each
    (at least one), so that the trials' pools do not oversubscribe the machine; a value the
    user set is kept."""
    mod = _batch_module()
    monkeypatch.setattr(mod.os, "cpu_count", lambda: 8)
    env = mod.trial_env(2, {"PATH": "/bin"})
    assert env == {"PATH": "/bin", "OMP_NUM_THREADS": "4", "OPENBLAS_NUM_THREADS": "4",
                   "MKL_NUM_THREADS": "4"}
    assert mod.trial_env(16, {})["OPENBLAS_NUM_THREADS"] == "1"
    assert mod.trial_env(1, {})["OMP_NUM_THREADS"] == "8"
    assert mod.trial_env(8, {"OPENBLAS_NUM_THREADS": "3"})["OPENBLAS_NUM_THREADS"] == "3"


def test_the_end_of_a_trial_is_seen_without_waiting_for_the_refresh():
    """The runner waits on the trials' processes (pidfds): a trial that ends wakes it,
    so the next trial starts on the freed core at once."""
    mod = _batch_module()
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.2)"])
    try:
        t = mod.Trial(0, {}, Path("."))
        t.proc = proc
        start = time.monotonic()
        while proc.poll() is None:
            mod.wait_for_an_end([t], refresh=120)
            assert time.monotonic() - start < 60, "the end of the trial did not wake it"
    finally:
        proc.kill()
        proc.wait()
