"""Simulation time across processes: a composition with
``simulation:`` whose components run in several processes, started as a user starts it
(``python -m rtcf.manager FILE --duration S``), runs on one simulated clock: the order of a
shared instant across processes, simulated stamps and ECInfo.now in every process, one step
call per process and instant, the data between the launcher's process and another on it; a killed and a SIGSTOPped process end the run naming the
process and its execution contexts; a process that joins late is refused; the shipped split
compositions give the logs of the one-process ones, bit for bit."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from integration_support import TESTCOMPS, wait_until

ROOT = Path(__file__).resolve().parents[2]

ORDER = """
name: lockorder
simulation: {{real_time_factor: {factor}}}
components:
  - {{type: StepWriter, module: steplog, name: wA, params: {{path: {d}/wA.npz}}}}
  - {{type: StepReader, module: steplog, name: rB, process: two, params: {{path: {d}/rB.npz}}}}
  - {{type: StepWriter, module: steplog, name: wB, process: two, params: {{path: {d}/wB.npz}}}}
  - {{type: StepReader, module: steplog, name: rA, params: {{path: {d}/rA.npz}}}}
  - {{type: StepReader, module: steplog, name: slow, process: three,
     params: {{path: {d}/slow.npz}}}}
connections:
  - {{from: wA.out, to: rB.in}}
  - {{from: wB.out, to: rA.in}}
  - {{from: wA.out, to: slow.in}}
execution_contexts:
  - {{name: e1, kind: periodic, rate: 100, members: [wA, rB]}}
  - {{name: e2, kind: periodic, rate: 100, members: [wB, rA]}}
  - {{name: e3, kind: periodic, rate: 20, members: [slow]}}
"""


def _cmd(path: Path, ns_port: int, *extra: str) -> list[str]:
    return [sys.executable, "-m", "rtcf.manager", str(path), "--quiet",
            "-o", f"corba.nameservers:localhost:{ns_port}",
            "-o", f"manager.modules.load_path:{TESTCOMPS}",
            "-o", "exec_cxt.periodic.sched_fifo:NO", *extra]


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1")


def _rows(path: Path) -> np.ndarray:
    with np.load(path) as d:
        return d["rows"]


def _ns(x: np.ndarray) -> np.ndarray:
    """Seconds to whole nanoseconds (a stamp is sec + nsec: compare at its resolution)."""
    return np.round(x * 1e9).astype(np.int64)


def _write(tmp_path: Path, factor: float = 0) -> Path:
    path = tmp_path / "lockorder.yaml"
    path.write_text(ORDER.format(factor=factor, d=tmp_path))
    return path


def test_one_clock_across_three_processes_order_stamps_and_one_step_each(naming, tmp_path):
    path = _write(tmp_path)
    done = subprocess.run(_cmd(path, naming.port, "--duration", "1"), cwd=tmp_path,
                          env=_env(), capture_output=True, text=True, timeout=120)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-4000:]
    k = np.arange(100)
    wA, rB, wB, rA = (_rows(tmp_path / f"{n}.npz") for n in ("wA", "rB", "wB", "rA"))
    slow = _rows(tmp_path / "slow.npz")
    leader = int(wA[0, 2])
    assert {int(wB[0, 2]), int(rB[0, 2])} != {leader}              # other processes
    assert int(slow[0, 2]) not in (leader, int(wB[0, 2]))
    # 1 s at 100 Hz, cycle k at k / 100 exactly, in every process
    for rows in (wA, rB, wB, rA):
        assert rows.shape[0] == 100 and np.array_equal(rows[:, 0], k / 100)
    assert np.array_equal(slow[:, 0], np.arange(20) / 20)
    # the stamp clock of every process reads simulated time (data-port stamps, wall_time())
    assert np.array_equal(wA[:, 1], wA[:, 0]) and np.array_equal(wB[:, 1], wB[:, 0])
    # order at a shared instant: wA (main) before rB (two), wB (two) before rA (main):
    # each reader sees the sample of its own instant, through a flush connector across
    # processes, before it runs
    for rows in (rB, rA, slow):
        assert np.array_equal(_ns(rows[:, 1]), _ns(rows[:, 0]))
    # one step call per other process and instant: rB and wB go in one call
    m = re.search(r"lockstep: (\d+) steps to 2 other processes \(three, two\), "
                  r"(\d+) samples carried on the steps", out)
    assert m and int(m.group(1)) == 100 + 20, out[-3000:]
    # the data went on those calls: wA's 100 samples to rB and 100 to slow (each sent
    # with the next step of its process), wB's 100 back to rA; no put of their own
    assert int(m.group(2)) == 300, out[-3000:]


BURST = """
name: lockburst
simulation: {{real_time_factor: 0}}
components:
  - {{type: BurstWriter, module: steplog, name: wA}}
  - {{type: ListenReader, module: steplog, name: rB, process: two, params: {{path: {d}/rB.npz}}}}
  - {{type: BurstWriter, module: steplog, name: wB, process: two}}
  - {{type: ListenReader, module: steplog, name: rA, params: {{path: {d}/rA.npz}}}}
connections:
  - {{from: wA.out, to: rB.in, buffer.length: 8}}
  - {{from: wB.out, to: rA.in, buffer.length: 8}}
execution_contexts:
  - {{name: e1, kind: periodic, rate: 100, members: [wA, rB]}}
  - {{name: e2, kind: periodic, rate: 100, members: [wB, rA]}}
"""


@pytest.mark.slow
def test_samples_cross_on_the_step_both_ways_in_write_order_heard_by_the_readers(
        naming, tmp_path):
    """Three samples per cycle each way within one instant: each reader gets its instant's
    three in write order before it runs, and its ON_RECEIVED listener (in its own process)
    heard each as it arrived; they travelled on the step calls."""
    path = tmp_path / "lockburst.yaml"
    path.write_text(BURST.format(d=tmp_path))
    done = subprocess.run(_cmd(path, naming.port, "--duration", "0.5"), cwd=tmp_path,
                          env=_env(), capture_output=True, text=True, timeout=120)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-4000:]
    rB, rA = _rows(tmp_path / "rB.npz"), _rows(tmp_path / "rA.npz")
    k = np.repeat(np.arange(50), 3)
    for rows in (rB, rA):
        assert rows.shape[0] == 150, rows
        assert np.array_equal(_ns(rows[:, 0]), _ns(k / 100))     # read at the same instant
        assert np.array_equal(rows[:, 1], 10.0 * k + np.tile([0, 1, 2], 50))
        # each was heard before it was read, all three before the reader's cycle
        assert np.array_equal(rows[:, 2], 3.0 * (k + 1))
    assert len({int(rB[0, 3]), int(rA[0, 3])}) == 2          # in each reader's process
    m = re.search(r"lockstep: (\d+) steps to 1 other process \(two\), (\d+) samples "
                  r"carried on the steps", out)
    assert m and int(m.group(1)) == 50 and int(m.group(2)) == 300, out[-3000:]


def test_the_split_runs_twice_alike(naming, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        d.mkdir()
        done = subprocess.run(_cmd(_write(d), naming.port, "--duration", "0.5"), cwd=d,
                              env=_env(), capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    for n in ("wA", "rB", "wB", "rA", "slow"):
        ra, rb = _rows(a / f"{n}.npz"), _rows(b / f"{n}.npz")
        assert np.array_equal(ra[:, :2], rb[:, :2]), n


def _children(pid: int) -> dict[str, int]:
    """process name -> pid of the child managers of launcher ``pid``."""
    out = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            if int(stat.rsplit(")", 1)[1].split()[1]) != pid:
                continue
            cmd = (d / "cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue
        if b"--process" in cmd:
            out[cmd[cmd.index(b"--process") + 1].decode()] = int(d.name)
    return out


def _start_paced(tmp_path: Path, naming, *extra: str) -> subprocess.Popen:
    path = _write(tmp_path, factor=1.0)
    log = open(tmp_path / "launcher.log", "wb")
    proc = subprocess.Popen(_cmd(path, naming.port, "--duration", "60", *extra),
                            cwd=tmp_path, env=_env(), stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    log.close()
    return proc


def _log(tmp_path: Path) -> str:
    return (tmp_path / "launcher.log").read_text(errors="replace")


def _end(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


@pytest.mark.parametrize("how", ["kill", "stop"])
def test_a_dead_or_hung_process_ends_the_run_naming_it(naming, tmp_path, how):
    proc = _start_paced(tmp_path, naming, "-o", "rtcf.simulation.step_timeout:1")
    try:
        wait_until(lambda: "running lockorder" in _log(tmp_path) or proc.poll() is not None,
                   60, what="the system running")
        assert proc.poll() is None, _log(tmp_path)
        time.sleep(0.5)                         # some simulated time passes
        child = _children(proc.pid)["two"]
        t0 = time.monotonic()
        os.kill(child, signal.SIGKILL if how == "kill" else signal.SIGSTOP)
        code = proc.wait(30)
        took = time.monotonic() - t0
        text = _log(tmp_path)
        assert code == 1, text[-3000:]
        # the step failed: the message names the process and its execution contexts
        assert re.search(r"lockstep: process 'two' \(execution contexts 'e1', 'e2'\) failed "
                         r"the step at simulated time \d+\.\d+ s", text), text[-3000:]
        if how == "stop":
            assert "no answer within 1 s" in text, text[-3000:]
        else:
            assert "does not answer" in text, text[-3000:]
        assert "simulated time is paused there and the run ends" in text
        assert took < 20, took                  # bounded: step timeout, then the stop
    finally:
        try:
            os.kill(_children(proc.pid).get("two", 0) or 0, signal.SIGCONT)
        except (ProcessLookupError, OSError):
            pass
        _end(proc)


def test_a_process_that_joins_late_is_refused(naming, tmp_path):
    proc = _start_paced(tmp_path, naming)
    try:
        wait_until(lambda: "running lockorder" in _log(tmp_path) or proc.poll() is not None,
                   60, what="the system running")
        assert proc.poll() is None, _log(tmp_path)
        late = subprocess.run(_cmd(tmp_path / "lockorder.yaml", naming.port, "--process",
                                   "two"),
                              cwd=tmp_path, env=_env(), capture_output=True, text=True,
                              timeout=60)
        assert late.returncode == 2, late.stderr[-3000:]
        assert "the lockstep simulation refused it: process 'two' joined late: the " \
               "simulation is running" in late.stderr, late.stderr[-3000:]
        assert proc.poll() is None              # the running system is untouched
    finally:
        _end(proc)


def test_members_of_one_process_must_be_consecutive(naming, tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(ORDER.format(factor=0, d=tmp_path).replace(
        "members: [wB, rA]", "members: [wB, rA, rB]").replace(
        "members: [wA, rB]", "members: [wA]"))
    done = subprocess.run(_cmd(path, naming.port, "--duration", "1"), cwd=tmp_path,
                          env=_env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "execution context 'e2': in simulation time the members of one process must be " \
           "consecutive" in done.stderr, done.stderr
    assert "wB and rB of process 'two' are separated by members of process 'main'" \
        in done.stderr, done.stderr


def _npz(path: Path) -> tuple[bytes, bytes, int]:
    with np.load(path) as d:
        return d["t"].tobytes(), d["data"].tobytes(), len(d["t"])


@pytest.mark.parametrize("name, logs, seconds", [
    ("nao_sim", ["q", "sensors"], 2.0),
    ("arm_sim", ["q", "qref"], 0.5),
])
def test_shipped_split_compositions_log_what_one_process_logs(naming, tmp_path, name, logs,
                                                              seconds):
    pytest.importorskip("mujoco")
    runs = {}
    for comp, tag in ((f"{name}.yaml", "one"), (f"{name}_split.yaml", "split1"),
                      (f"{name}_split.yaml", "split2")):
        d = tmp_path / tag
        d.mkdir()
        cmd = [sys.executable, "-m", "rtcf.manager", str(ROOT / "compositions" / comp),
               "--quiet", "--duration", str(seconds),
               "-o", f"corba.nameservers:localhost:{naming.port}",
               "-o", "rtcf.simulation.real_time_factor:0",
               "-o", "exec_cxt.periodic.sched_fifo:NO"]
        done = subprocess.run(cmd, cwd=d, env=_env(), capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
        stem = comp[:-5]
        runs[tag] = {n: _npz(d / "log" / f"{stem}_{n}.npz") for n in logs}
    for n in logs:
        assert runs["one"][n][2] >= 0.99 * seconds * (100 if name == "nao_sim" else 1000)
        assert runs["split1"][n] == runs["split2"][n], f"{n}: the split runs differ"
        assert runs["split1"][n] == runs["one"][n], f"{n}: split differs from one process"


def test_the_picture_of_one_instant_is_drawn(tmp_path):
    """docs/architecture.md's picture comes from scripts/lockstep_instant."""
    out = tmp_path / "instant.png"
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "lockstep_instant.py"),
                           "--out", str(out), "--rtt", "100"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 20_000
