"""Simulation time across processes (rtcf.lockstep): what one instant costs, how fast the
split systems run, and whether the planner still stalls the robot. Everything runs as a
user runs it (``python -m rtcf.manager`` processes, CORBA, a private naming service).

1. ``instant``: per-instant cost of a 100 Hz and a 1 kHz EC with one component in the
   launcher's process and one in another (``split``), against the same two components in
   one process (``one``); and of a 1 kHz system with one sample each way per instant
   (``data``: a writer and a reader in the launcher's process, a relay in the other); each
   against the floor: a bare ``tick()`` round trip from this
   process to a stepped EC in another process (OpenRTM's ExtTrigExecutionContextService,
   timed call by call). Flat out (factor 0), from the time base's report: wall time /
   instants (a mean). ``added`` = split - one, the price of the other process per
   instant; the ratios are added / floor p50 (the target: at most 2) and added /
   floor mean (like for like: on a loaded machine the mean carries the scheduling tail).
2. ``systems``: nao_sim and arm_sim against their split compositions, flat out: the
   real-time factor achieved and the CPU of each process (utime + stime from /proc,
   sampled every 0.1 s until the process ends) over the simulated part (the window as
   long as the simulated run's wall time in which the processes used the most CPU
   together) and over the whole run: a sum above 100 % is the machine's second core at
   work.
3. ``planner``: arm_sim_split (the planner in its own process) against arm_blending
   (planner, no physics, one process) and arm_sim (planner with the physics), paced at real
   time: a client's ``amoveb`` of the 200 mm blended square of
   ``rtcf_components.scenarios.SQUARE`` at 150 mm/s (how long the call takes to return), while another client polls ControllerManager0's getStatistics at 20 Hz; the
   1 kHz (arm_blending: 100 Hz) EC's overruns before, once the call has returned (the
   planning's share) and after the motion (``stats.overruns`` of its EC profile, what
   rtcat -ll shows); then, as a control, the overruns in as long again
   with the poller and no motion (what the machine's load causes without any planning).

Prints medians over ``--rounds`` and the load average; asserts nothing.

    .venv/bin/python bench/bench_lockstep.py --rounds 3
    .venv/bin/python bench/bench_lockstep.py --only instant --rounds 5
    .venv/bin/python bench/bench_lockstep.py --only planner -o manager.realtime.switch_interval_us:200
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from common import machine_line, table  # noqa: E402

PAIR = """
name: pair{rate}
simulation: {{real_time_factor: 0}}
components:
  - {{type: Recorder, module: examples, name: a}}
  - {{type: Recorder, module: examples, name: b{where}}}
execution_contexts:
  - {{name: e, kind: periodic, rate: {rate}, members: [a, b]}}
"""

# data both ways within each instant, as arm_sim_split's qRef out and q back: a writer
# and a reader in the launcher's process, a relay (Gain) in the other; e1 runs sine then
# the relay (one step), e2 the reader, which gets the relay's sample of the same instant
DATA = """
name: data{rate}
simulation: {{real_time_factor: 0}}
components:
  - {{type: SineGenerator, module: examples, name: sine, params: {{channels: 7}}}}
  - {{type: Gain, module: examples, name: relay{where}}}
  - {{type: Recorder, module: examples, name: rec}}
connections:
  - {{from: sine.out, to: relay.in}}
  - {{from: relay.out, to: rec.in}}
execution_contexts:
  - {{name: e1, kind: periodic, rate: {rate}, members: [sine, relay]}}
  - {{name: e2, kind: periodic, rate: {rate}, members: [rec]}}
"""

STEPPED = """
name: floor
components:
  - {type: Recorder, module: examples, name: ticked}
execution_contexts:
  - {name: st, kind: stepped, rate: 1000, members: [ticked]}
"""

REPORT = re.compile(r"simulation: ([\d.]+) s of simulated time in ([\d.]+) s wall, "
                    r"real-time factor ([\d.]+) \([^)]*\), (\d+) instants")


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1")


OPTIONS: list[str] = []          # --option KEY:VALUE, given to every manager process


def _manager(path: Path, ns: int, *extra: str) -> list[str]:
    """The command of a manager process; ``extra`` before the --option ones (which win)."""
    opts = [x for o in OPTIONS for x in ("-o", o)]
    return [sys.executable, "-m", "rtcf.manager", str(path), "--quiet",
            "-o", f"corba.nameservers:localhost:{ns}", *extra, *opts]


class CpuWatch:
    """Samples utime + stime of a process and of its child managers from /proc until they
    end: {label: cpu seconds}; ``samples``: (monotonic time, {label: cpu seconds}) every
    0.1 s, for the CPU over a part of the run (``busiest``)."""

    def __init__(self, pid: int):
        self.pid = pid
        self.cpu: dict[str, float] = {}
        self.samples: list[tuple[float, dict[str, float]]] = []
        self.tick = os.sysconf("SC_CLK_TCK")
        self._stop = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _read(self, pid: int) -> tuple[int, float] | None:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return None
        f = stat.rsplit(")", 1)[1].split()
        return int(f[1]), (int(f[11]) + int(f[12])) / self.tick

    def _label(self, pid: int) -> str:
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            return str(pid)
        if b"--process" in cmd:
            return cmd[cmd.index(b"--process") + 1].decode()
        return "main"

    def _run(self) -> None:
        while not self._stop:
            me = self._read(self.pid)
            if me is None:
                return
            self.cpu["main"] = me[1]
            for d in Path("/proc").iterdir():
                if d.name.isdigit():
                    r = self._read(int(d.name))
                    if r is not None and r[0] == self.pid:
                        label = self._label(int(d.name))
                        if label != "main":
                            self.cpu[label] = r[1]
            self.samples.append((time.monotonic(), dict(self.cpu)))
            time.sleep(0.1)

    def busiest(self, span: float) -> dict[str, float]:
        """CPU of each process [% of one core] over the window of about ``span`` seconds
        (the simulated run's wall time) in which they used the most CPU together: the
        simulated part, without the start-up and the shutdown."""
        best, out = -1.0, {}
        s = self.samples
        j = 0
        for i in range(len(s)):
            while j < len(s) - 1 and s[j][0] - s[i][0] < span:
                j += 1
            dt = s[j][0] - s[i][0]
            if dt <= 0 or dt < 0.5 * span:
                continue
            d = {k: v - s[i][1].get(k, 0.0) for k, v in s[j][1].items()}
            total = sum(d.values())
            if total > best:
                best, out = total, {k: 100.0 * v / dt for k, v in d.items()}
        return out

    def stop(self) -> None:
        self._stop = True
        self.thread.join(2)


def run_report(path: Path, ns: int, seconds: float, cwd: Path, *extra: str
               ) -> tuple[float, float, int, CpuWatch, float]:
    """(simulated s, wall s, instants, the CPU samples, wall of the whole run)."""
    t0 = time.monotonic()
    proc = subprocess.Popen(_manager(path, ns, "--duration", str(seconds),
                                     "-o", "exec_cxt.periodic.sched_fifo:NO", *extra),
                            cwd=cwd, env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    watch = CpuWatch(proc.pid)
    out, _ = proc.communicate(timeout=600)
    watch.stop()
    whole = time.monotonic() - t0
    if proc.returncode != 0:
        raise RuntimeError(out[-3000:])
    m = None
    for m in REPORT.finditer(out):
        if "lockstep: stepped" not in out[m.end():m.end() + 40]:
            break                        # the leader's line (a follower's says so)
    assert m is not None, out[-2000:]
    return float(m.group(1)), float(m.group(2)), int(m.group(4)), watch, whole


def tick_floor(ns: int, cwd: Path, n: int = 5000) -> np.ndarray:
    """Round trips of OpenRTM::ExtTrigExecutionContextService::tick() to a stepped EC in a
    manager process, timed one by one [s]."""
    from rtcf.corba.idl import stub_module
    from rtcf.corba.naming import NamingClient
    from rtcf.corba.orb import init_orb
    import socket
    path = cwd / "floor.yaml"
    path.write_text(STEPPED)
    proc = subprocess.Popen(_manager(path, ns), cwd=cwd, env=_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        orb = init_orb({})
        RTC, OpenRTM = stub_module("RTC"), stub_module("OpenRTM")
        client = NamingClient(orb, f"127.0.0.1:{ns}")
        deadline = time.monotonic() + 30
        while True:
            try:
                ref = client.resolve(f"{socket.gethostname()}.host_cxt/ticked.rtc")._narrow(
                    RTC.RTObject)
                ec = ref.get_owned_contexts()[0]._narrow(OpenRTM.ExtTrigExecutionContextService)
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        for _ in range(200):
            ec.tick()
        out = np.empty(n)
        perf = time.perf_counter
        for i in range(n):
            t0 = perf()
            ec.tick()
            out[i] = perf() - t0
        return out
    finally:
        proc.terminate()
        proc.wait(20)


def bench_instant(ns: int, rounds: int, work: Path) -> None:
    print("\n## One instant: one process against two (flat out), and the tick() floor")
    print("(pair: no data between the processes; data: one 7-double sample each way per "
          "instant on flush connectors)")
    rows = []
    for what, text, rate, seconds in (("pair", PAIR, 100, 20.0), ("pair", PAIR, 1000, 5.0),
                                      ("data", DATA, 1000, 5.0)):
        one, split, floor50, floor99, floor_mean = [], [], [], [], []
        for r in range(rounds):
            d = work / f"instant{what}{rate}_{r}"
            d.mkdir()
            for where, bucket in (("", one), (", process: two", split)):
                path = d / f"{what}{len(where)}.yaml"
                path.write_text(text.format(rate=rate, where=where))
                sim, wall, instants, _, _ = run_report(path, ns, seconds, d)
                bucket.append(wall / instants)
            f = tick_floor(ns, d)
            floor50.append(float(np.percentile(f, 50)))
            floor99.append(float(np.percentile(f, 99)))
            floor_mean.append(float(np.mean(f)))
        o, s = float(np.median(one)), float(np.median(split))
        f50, f99 = float(np.median(floor50)), float(np.median(floor99))
        fm = float(np.median(floor_mean))
        rows.append([f"{what} {rate} Hz", o * 1e6, s * 1e6, (s - o) * 1e6, f50 * 1e6,
                     f99 * 1e6, fm * 1e6, (s - o) / f50, (s - o) / fm])
    print(table(["EC", "one process us/instant", "split us/instant", "added us",
                 "tick() floor p50 us", "floor p99 us", "floor mean us", "added / floor p50",
                 "added / floor mean"], rows, 2))


def bench_systems(ns: int, rounds: int, seconds: float, work: Path) -> None:
    print("\n## The shipped systems flat out: one process against split (CPU per process)")
    rows = []
    for name in ("nao_sim", "arm_sim"):
        for comp in (name, f"{name}_split"):
            rtf, cpus, busy, walls = [], {}, {}, []
            for r in range(rounds):
                d = work / f"{comp}_{r}"
                d.mkdir()
                sim, wall, instants, watch, whole = run_report(
                    ROOT / "compositions" / f"{comp}.yaml", ns, seconds, d,
                    "-o", "rtcf.simulation.real_time_factor:0")
                rtf.append(sim / wall)
                walls.append(whole)
                for k, v in watch.cpu.items():
                    cpus.setdefault(k, []).append(100.0 * v / whole)
                for k, v in watch.busiest(wall).items():
                    busy.setdefault(k, []).append(v)
            cpu_text = ", ".join(f"{k} {np.median(v):.0f} %" for k, v in sorted(cpus.items()))
            busy_text = ", ".join(f"{k} {np.median(v):.0f} %" for k, v in sorted(busy.items()))
            total = sum(float(np.median(v)) for v in busy.values())
            rows.append([comp, float(np.median(rtf)), busy_text, total, cpu_text])
    print(table(["composition", "real-time factor", "CPU per process (simulated part)",
                 "CPU sum % (simulated part)", "CPU per process (whole run)"], rows, 2))


PLANNER_COMPOSITIONS = ("arm_blending", "arm_sim", "arm_sim_split")


CAUSES = ("cpu", "gil", "timer", "remote", "members")     # rtcf.simtime.OVERRUN_CAUSES


def _overruns(ref: object) -> np.ndarray:
    """The overruns of ``ref``'s first EC: [total, then by cause (CAUSES; a paced
    simulation's EC reports them as stats.overruns.<cause>, others 0)]."""
    from rtcf.corba.idl import stub_module
    from rtcf.corba.nv import from_nvlist
    RTC = stub_module("RTC")
    out = np.zeros(1 + len(CAUSES))
    ecs = list(ref.get_owned_contexts()) + list(ref.get_participating_contexts())
    for ec in ecs[:1]:
        props = from_nvlist(ec._narrow(RTC.ExecutionContextService).get_profile().properties)
        out[0] += int(props.get("stats.overruns", "0"))
        for i, c in enumerate(CAUSES):
            out[1 + i] += int(props.get(f"stats.overruns.{c}", "0"))
    return out


def _by_cause(rows: list[np.ndarray]) -> str:
    """Medians of the causes of a list of counts: ``cpu 1 gil 0.5`` (nonzero only)."""
    med = np.median(np.array(rows), axis=0) if rows else np.zeros(1 + len(CAUSES))
    text = " ".join(f"{c} {med[1 + i]:g}" for i, c in enumerate(CAUSES) if med[1 + i])
    return text or "-"


def bench_planner(ns: int, rounds: int, work: Path,
                  comps: tuple[str, ...] = PLANNER_COMPOSITIONS) -> None:
    """amoveb of the blended square with a statistics poller; the EC's overruns."""
    print("\n## amoveb of a 200 mm blended square, getStatistics polled at 20 Hz, paced at "
          "real time")
    import socket
    from rtcf.corba.idl import stub_module
    from rtcf.corba.naming import NamingClient
    from rtcf.corba.orb import init_orb
    from rtcf_components.blending_planner.proxy import BlendingPlannerProxy
    from rtcf_components.scenarios import SQUARE     # 200 mm, TOOL frame, corners r 30
    RTC = stub_module("RTC")
    rows = []
    for comp in comps:
        calls, added, idle, planning = [], [], [], []
        for r in range(rounds):
            d = work / f"planner_{comp}_{r}"
            d.mkdir()
            proc = subprocess.Popen(_manager(ROOT / "compositions" / f"{comp}.yaml", ns,
                                             "-o", "exec_cxt.periodic.sched_fifo:NO"),
                                    cwd=d, env=_env(), stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, start_new_session=True)
            try:
                client = NamingClient(init_orb({}), f"127.0.0.1:{ns}")
                host = socket.gethostname()
                deadline = time.monotonic() + 60
                while True:       # every process binds its own names: wait for both
                    try:
                        bp_ref = client.resolve(f"{host}.host_cxt/BlendingPlanner0.rtc")
                        bp_ref = bp_ref._narrow(RTC.RTObject)
                        bp_ref.get_component_profile()
                        if comp != "arm_blending":
                            client.resolve(f"{host}.host_cxt/ControllerManager0.rtc")
                        break
                    except Exception:
                        if time.monotonic() > deadline or proc.poll() is not None:
                            raise RuntimeError(f"{comp} did not start")
                        time.sleep(0.2)
                bp = BlendingPlannerProxy("BlendingPlanner0", f"localhost:{ns}")
                cm = None
                if comp != "arm_blending":
                    cm_ref = client.resolve(f"{host}.host_cxt/ControllerManager0.rtc")
                    cm_ref = cm_ref._narrow(RTC.RTObject)
                    from rtcf.corba.client import get_service
                    CM = stub_module("RTController")
                    cm = get_service("ControllerManager0", "ControllerManagerService",
                                     stub=CM.ControllerManagerService,
                                     nameserver=f"localhost:{ns}")
                watched = cm_ref if cm is not None else bp_ref
                time.sleep(2.0)                          # settled
                stop = threading.Event()

                def poll() -> None:
                    while not stop.is_set():
                        try:
                            if cm is not None:
                                cm.getStatistics()
                            else:
                                bp.service.getTcpPose()
                        except Exception:
                            pass
                        stop.wait(0.05)
                poller = threading.Thread(target=poll, daemon=True)
                before = _overruns(watched)
                poller.start()
                t0 = time.perf_counter()
                ok = bp.move_blending(SQUARE, [150.0, -10000.0], [600.0, -10000.0], 0.0,
                                      1, 0, 1)          # TOOL frame, ASYNC: amoveb
                calls.append(time.perf_counter() - t0)
                planning.append((_overruns(watched) - before)[0])    # until amoveb returned
                if not ok:
                    raise RuntimeError(f"{comp}: amoveb refused: {bp.last_error()}")
                bp.move_wait()
                took = time.perf_counter() - t0
                added.append(_overruns(watched) - before)
                # the control: as long again with the poller and no motion (the load's share)
                before = _overruns(watched)
                time.sleep(took)
                idle.append(_overruns(watched) - before)
                print(f"# {comp} round {r + 1}: amoveb returned after {calls[-1] * 1e3:.1f} "
                      f"ms; overruns added {int(added[-1][0])} ({_by_cause([added[-1]])}), "
                      f"as long with no motion {int(idle[-1][0])} "
                      f"({_by_cause([idle[-1]])})", flush=True)
                stop.set()
                poller.join(2)
            finally:
                os.killpg(proc.pid, 15)
                proc.wait(30)
        rows.append([comp, float(np.median(calls)) * 1e3, float(np.median(planning)),
                     float(np.median([a[0] for a in added])), max(a[0] for a in added),
                     _by_cause(added), float(np.median([a[0] for a in idle])),
                     _by_cause(idle)])
    print(table(["composition", "amoveb returns after [ms]", "overruns until it returns",
                 "overruns added (median)", "(max)", "added by cause (median)",
                 "as long, no motion (median)", "no motion by cause"], rows, 1))
    print("(causes, rtcf.simtime.OVERRUN_CAUSES: the time base thread released late while "
          "it waited for a CPU (cpu), for the GIL (gil), neither (timer: a late timer or "
          "the hypervisor); remote = the step calls to the other process; members = its "
          "own cycles)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=10.0,
                    help="simulated seconds of each system run (systems)")
    ap.add_argument("--only", choices=("instant", "systems", "planner"), default=None)
    ap.add_argument("--compositions", default=",".join(PLANNER_COMPOSITIONS),
                    help="planner: the compositions to run, comma-separated (default: %(default)s)")
    ap.add_argument("-o", "--option", action="append", default=[], metavar="KEY:VALUE",
                    help="an rtc.conf option for every manager process started (e.g. "
                         "manager.realtime.switch_interval_us:200)")
    args = ap.parse_args()
    OPTIONS[:] = args.option
    comps = tuple(c for c in args.compositions.split(",") if c)
    bad = [c for c in comps if c not in PLANNER_COMPOSITIONS]
    if bad or not comps:
        ap.error(f"--compositions: {', '.join(bad) or 'none given'}: not one of "
                 f"{', '.join(PLANNER_COMPOSITIONS)}")
    if OPTIONS:
        print(f"# manager options: {' '.join(OPTIONS)}")
    from rtcf.corba.naming import ensure_naming_service, free_port
    names = ensure_naming_service("127.0.0.1", free_port(), timeout=15)
    print(machine_line())
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            if args.only in (None, "instant"):
                bench_instant(names.port, args.rounds, work)
            if args.only in (None, "systems"):
                bench_systems(names.port, args.rounds, args.seconds, work)
            if args.only in (None, "planner"):
                bench_planner(names.port, args.rounds, work, comps)
    finally:
        names.stop()
    print(machine_line())


if __name__ == "__main__":
    main()
