"""Run a simulation composition many times at once: trials, parameter sweeps, their logs.

    scripts/batch compositions/arm_sim.yaml --duration 5 --trials 8
    scripts/batch compositions/arm_sim.yaml --duration 2 --out arm-postures \\
        --sweep 'Simulator0.initial_q=[[0, 0, 1.5708, 0, 1.5708, 0], [0, 0.3, 1.2, 0, 1.5708, 0]]'
    scripts/batch compositions/nao_sim.yaml --duration 3 --trials 2 --out nao-batch

Each trial is its own process running the composition as the manager does (``python -m
rtcf.manager COMPOSITION --no-corba --duration S``) in simulation time, as fast as the
machine allows (``rtcf.simulation.real_time_factor:0``, change it with -o), without CORBA
(trials share no naming service and bind no name), for ``--duration`` simulated seconds.
``--jobs`` trials run at once (default: one per core); a progress bar on stderr counts the
trials done. A trial fails when it cannot start, when a component of it ends in ERROR
(the manager runs on with a component in ERROR, as OpenRTM's does; the trial's logs are not
to be trusted then) or when one fails while the system stops (a logger that cannot write
its file): its last line names the component and its first error. The other trials run on.

Trials: every combination of the ``--sweep`` values (INSTANCE.PARAM=YAML list; several
sweeps multiply), each ``--trials`` times, with the ``--set`` values (INSTANCE.PARAM=YAML
value) on all. Everything is checked before any trial starts (instance and parameter names,
values against the parameters' types and bounds, the composition as the manager checks it);
a mistake is named and nothing runs.

What each trial leaves in ``OUT/trial-NNN/``: ``composition.yaml`` (the composition it ran,
its parameters set), ``params.json`` (what the batch set), ``output.txt`` (the manager's
output), and the files its SampleLoggers wrote (a relative logger ``path`` is put inside
the trial's folder). ``OUT/summary.json`` and ``OUT/summary.csv`` list every trial:
parameters, status, wall time, each log's samples and SHA-256 (of its times and values),
why a failed trial failed. A simulation in simulation time is deterministic: two trials
with the same parameters give bit-identical logs.

Exit status: 0 when every trial ran to its end, 1 when one failed (named, its output kept),
2 for bad input, 130 on Ctrl-C (running trials are stopped; the summary lists what ended).
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import logging
import os
import re
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402

LOGGER_TYPE = "SampleLogger"
_SAVED = re.compile(r"rtcf\.[^:]+: (\S+): (\d+) samples \((\d+) dropped\) -> (.+), sha256 "
                    r"([0-9a-f]+)")


class BatchError(Exception):
    """Bad input: the message names what and where; nothing ran."""


@dataclass
class Trial:
    index: int
    params: dict[str, Any]                 # "INSTANCE.PARAM" -> value
    folder: Path
    status: str = "waiting"                # waiting, running, ok, failed, stopped
    returncode: int | None = None
    wall: float | None = None
    logs: list[dict[str, Any]] = field(default_factory=list)
    reason: str = ""                       # why it failed: its output's last line
    proc: Any = None
    started: float = 0.0
    out: Any = None


def parse_assignment(text: str, what: str) -> tuple[str, str, Any]:
    """'INSTANCE.PARAM=YAML' -> (instance, param, value)."""
    key, sep, raw = text.partition("=")
    inst, dot, param = key.strip().partition(".")
    if not sep or not dot or not inst or not param:
        raise BatchError(f"{what} {text!r}: expected INSTANCE.PARAM=VALUE "
                         f"(e.g. Simulator0.stiffness=0.5)")
    try:
        value = yaml.safe_load(raw)
    except yaml.YAMLError as e:
        raise BatchError(f"{what} {text!r}: the value is not YAML: "
                         f"{str(e).splitlines()[0]}") from None
    return inst, param, value


def trial_params(sets: list[str], sweeps: list[str], trials: int) -> list[dict[str, Any]]:
    """Every combination of the sweeps, ``trials`` times each, with the fixed values."""
    fixed: dict[str, Any] = {}
    for text in sets:
        inst, param, value = parse_assignment(text, "--set")
        fixed[f"{inst}.{param}"] = value
    axes: list[tuple[str, list[Any]]] = []
    for text in sweeps:
        inst, param, values = parse_assignment(text, "--sweep")
        if not isinstance(values, list) or not values:
            raise BatchError(f"--sweep {text!r}: expected a YAML list of values to try, "
                             f"e.g. {inst}.{param}=[0.2, 0.5, 1.0]")
        key = f"{inst}.{param}"
        if key in fixed or key in (k for k, _ in axes):
            raise BatchError(f"--sweep {text!r}: {key} is given twice")
        axes.append((key, values))
    out = []
    for combo in itertools.product(*(values for _, values in axes)):
        for _ in range(trials):
            out.append({**fixed, **{k: v for (k, _), v in zip(axes, combo)}})
    return out


def load(path: Path) -> tuple[dict[str, Any], Any]:
    """(the composition's YAML data, the checked Composition)."""
    from rtcf.composition import load_composition
    from rtcf.errors import RtcfError
    try:
        comp = load_composition(str(path))
        data = yaml.safe_load(path.read_text())
    except (RtcfError, OSError, yaml.YAMLError) as e:
        raise BatchError(str(e) if str(path) in str(e) else f"{path}: {e}") from None
    from rtcf.launcher import processes
    procs = processes(comp)
    if len(procs) > 1:
        raise BatchError(f"{path}: its components run in processes {', '.join(procs)}; a "
                         f"trial of a batch runs in one process (the one-process "
                         f"composition gives the same results, bit for bit)")
    if not isinstance(data, dict) or len(data.get("components") or []) != len(comp.components):
        raise BatchError(f"{path}: the batch needs a composition that declares its "
                         f"components in its own file (no includes)")
    return data, comp


def trial_composition(data: dict[str, Any], comp: Any, params: dict[str, Any],
                      folder: Path, shared: bool = True) -> tuple[dict[str, Any], Any]:
    """The composition of one trial: the YAML data and the Composition, with ``params`` set
    and the loggers' relative paths inside ``folder``. ``shared``: other trials run beside
    this one (a logger's absolute path, which every trial would write, is refused)."""
    from dataclasses import replace
    data = json.loads(json.dumps(data))            # a deep copy of plain YAML data
    names = [d.name for d in comp.components]
    decls = list(comp.components)
    for key, value in params.items():
        inst, param = key.split(".", 1)
        if inst not in names:
            raise BatchError(f"{key}: the composition has no instance {inst!r} (it has "
                             f"{', '.join(names)})")
    for i, d in enumerate(decls):
        new = {k.split(".", 1)[1]: v for k, v in params.items() if k.split(".", 1)[0] == d.name}
        if d.type == LOGGER_TYPE:
            p = new.get("path", d.params.get("path", ""))
            if isinstance(p, str) and p and not os.path.isabs(p):
                new["path"] = str(folder / p)
            elif isinstance(p, str) and p and shared:
                raise BatchError(f"{d.name}.path: {p} is an absolute path: every trial "
                                 f"would write that one file; give a relative path (each "
                                 f"trial's logger then writes in the trial's folder)")
        if not new:
            continue
        entry = data["components"][i]
        entry["params"] = {**(entry.get("params") or {}), **new}
        decls[i] = replace(d, params={**d.params, **new})
    return data, replace(comp, components=decls)


def check(comp: Any, conf: Any) -> None:
    """The manager's own checks before anything starts (types, parameters, names)."""
    from rtcf.errors import RtcfError
    from rtcf.manager import Manager
    m = Manager(conf, corba=False)
    try:
        m.check(comp)
    except RtcfError as e:
        raise BatchError(str(e)) from None
    finally:
        m.shutdown()


def parse_logs(text: str) -> list[dict[str, Any]]:
    return [{"logger": m.group(1), "samples": int(m.group(2)), "dropped": int(m.group(3)),
             "path": m.group(4), "sha256": m.group(5)} for m in _SAVED.finditer(text)]


class Progress:
    """One line on stderr: a bar of the trials done, running, failed, elapsed, ETA."""

    def __init__(self, total: int, stream: Any = sys.stderr):
        self.total = total
        self.stream = stream
        self.tty = stream.isatty()
        self.t0 = time.monotonic()
        self.last = ""

    def show(self, done: int, running: int, failed: int, final: bool = False) -> None:
        elapsed = time.monotonic() - self.t0
        width = 30
        fill = int(width * done / self.total) if self.total else width
        eta = f", about {elapsed / done * (self.total - done):.0f} s left" \
            if done and done < self.total else ""
        line = (f"[{'#' * fill}{'.' * (width - fill)}] {done}/{self.total} trials done, "
                f"{running} running" + (f", {failed} failed" if failed else "")
                + f", {elapsed:.1f} s{eta}")
        if self.tty:
            self.stream.write("\r" + line.ljust(len(self.last)) + ("\n" if final else ""))
        elif line != self.last and (final or done != getattr(self, "_done", -1)):
            self.stream.write(line + "\n")
            self._done = done
        self.stream.flush()
        self.last = line


def run(trials: list[Trial], cmd_for: Any, jobs: int, progress: Progress) -> bool:
    """Run the trials, ``jobs`` at a time; True when interrupted."""
    env = trial_env(min(jobs, len(trials)))
    waiting = list(trials)
    running: list[Trial] = []
    interrupted = False
    try:
        while waiting or running:
            for t in list(running):
                rc = t.proc.poll()
                if rc is not None:
                    finish(t, rc)
                    running.remove(t)
            while waiting and len(running) < jobs:
                t = waiting.pop(0)
                t.out = open(t.folder / "output.txt", "w")
                t.started = time.monotonic()
                t.proc = subprocess.Popen(cmd_for(t), cwd=ROOT, stdout=t.out,
                                          stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                          start_new_session=True, env=env)
                t.status = "running"
                running.append(t)
            progress.show(sum(t.status in ("ok", "failed") for t in trials), len(running),
                          sum(t.status == "failed" for t in trials))
            if running:
                wait_for_an_end(running)
    except KeyboardInterrupt:
        interrupted = True
        for t in running:
            try:
                os.killpg(t.proc.pid, signal.SIGINT)
            except ProcessLookupError:
                pass
        for t in running:
            try:
                rc = t.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(t.proc.pid, signal.SIGKILL)
                rc = t.proc.wait()
            finish(t, rc)
            t.status = "stopped"
    progress.show(sum(t.status in ("ok", "failed") for t in trials), 0,
                  sum(t.status == "failed" for t in trials), final=True)
    return interrupted


def wait_for_an_end(running: list[Trial], refresh: float = 0.2) -> None:
    """Return when a running trial's process ended (at once, through a pidfd where Linux
    has them) or after ``refresh`` s, for the progress bar."""
    fds = []
    try:
        for t in running:
            fds.append(os.pidfd_open(t.proc.pid))
    except (AttributeError, OSError):            # no pidfd here: poll
        time.sleep(0.05)
        return
    finally:
        if len(fds) < len(running):
            for fd in fds:
                os.close(fd)
    try:
        select.select(fds, [], [], refresh)
    finally:
        for fd in fds:
            os.close(fd)


#: the thread pools of numerical libraries (OpenMP, OpenBLAS, MKL) a trial may start, each
#: sized to its share of the cores unless the environment says otherwise: a pool of one
#: thread per core in each of several trials oversubscribes the machine (joblib's workers
#: are sized the same way)
THREAD_POOLS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def trial_env(jobs: int, environ: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of each trial's process when ``jobs`` run at once."""
    env = dict(os.environ if environ is None else environ)
    share = str(max(1, (os.cpu_count() or 1) // max(1, jobs)))
    for key in THREAD_POOLS:
        env.setdefault(key, share)
    return env


def finish(t: Trial, rc: int) -> None:
    t.wall = time.monotonic() - t.started
    t.returncode = rc
    t.out.close()
    t.status = "ok" if rc == 0 else "failed"
    text = (t.folder / "output.txt").read_text(errors="replace")
    t.logs = parse_logs(text)
    if rc != 0:
        tail = text.strip().splitlines()
        t.reason = tail[-1].removeprefix("trial failed: ") if tail else "no output"
    for lg in t.logs:                 # the whole digest (the log line shows its start)
        lg["sha256"] = npz_digest(lg["path"]) or lg["sha256"]


def npz_digest(path: str) -> str | None:
    """SHA-256 of a SampleLogger file's times and values (its digest()), None if unreadable."""
    import hashlib

    import numpy as np
    try:
        with np.load(path if os.path.isabs(path) else ROOT / path) as z:
            h = hashlib.sha256()
            h.update(np.ascontiguousarray(z["t"]).tobytes())
            h.update(np.ascontiguousarray(z["data"]).tobytes())
            return h.hexdigest()
    except (OSError, KeyError, ValueError):
        return None


def write_summary(out: Path, trials: list[Trial], info: dict[str, Any]) -> None:
    rows = [{"trial": t.index, "folder": t.folder.name, "status": t.status,
             "returncode": t.returncode, "wall_s": None if t.wall is None else round(t.wall, 3),
             "params": t.params, "logs": t.logs, "reason": t.reason} for t in trials]
    (out / "summary.json").write_text(json.dumps({**info, "trials": rows}, indent=1) + "\n")
    keys = sorted({k for t in trials for k in t.params})
    loggers = sorted({lg["logger"] for t in trials for lg in t.logs})
    with open(out / "summary.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["trial", "status", "wall_s", *keys,
                    *[f"{lg}.{c}" for lg in loggers for c in ("samples", "sha256")],
                    "reason"])
        for t in trials:
            by = {lg["logger"]: lg for lg in t.logs}
            w.writerow([t.index, t.status, "" if t.wall is None else f"{t.wall:.3f}",
                        *[json.dumps(t.params.get(k)) for k in keys],
                        *[v for lg in loggers
                          for v in (by.get(lg, {}).get("samples", ""),
                                    by.get(lg, {}).get("sha256", ""))], t.reason])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="scripts/batch", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("composition", help="the composition YAML file of the trials.")
    ap.add_argument("--duration", type=float, required=True, metavar="S",
                    help="simulated seconds per trial")
    ap.add_argument("--trials", type=int, default=1, metavar="N",
                    help="runs of each parameter combination (default 1)")
    ap.add_argument("--set", action="append", default=[], metavar="INSTANCE.PARAM=VALUE",
                    help="a parameter of every trial (VALUE in YAML), repeatable")
    ap.add_argument("--sweep", action="append", default=[], metavar="INSTANCE.PARAM=[V1, V2]",
                    help="a parameter to try at each value of the YAML list; several "
                         "sweeps run every combination")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                    help="trials at once (default: the number of cores, %(default)s here)")
    ap.add_argument("--out", default=None, metavar="DIR",
                    help="folder of the trials (default: batch-<composition name>); "
                         "must be empty or not exist")
    ap.add_argument("-o", dest="overrides", action="append", default=[], metavar="KEY:VALUE",
                    help="an rtc.conf key for every trial (as scripts/run -o), repeatable")
    args = ap.parse_args(argv)
    cwd = Path(os.environ.get("RTCF_CWD", os.getcwd()))
    try:
        if not (args.duration > 0 and args.duration < float("inf")):
            raise BatchError(f"--duration: expected simulated seconds > 0, got "
                             f"{args.duration!r}")
        if args.trials < 1:
            raise BatchError(f"--trials: expected >= 1, got {args.trials}")
        if args.jobs < 1:
            raise BatchError(f"--jobs: expected >= 1, got {args.jobs}")
        path = Path(args.composition)
        path = path if path.is_absolute() else cwd / path
        out = Path(args.out) if args.out else Path(f"batch-{path.stem}")
        out = (out if out.is_absolute() else cwd / out).resolve()
        if out.exists() and (not out.is_dir() or any(out.iterdir())):
            raise BatchError(f"--out {out}: exists and is not an empty folder (the trials "
                             f"of another batch would mix with these)")
        from rtcf import rtcconf
        from rtcf.errors import RtcfError
        overrides = ["rtcf.simulation.enable:YES", "rtcf.simulation.real_time_factor:0",
                     *args.overrides]
        try:
            conf = rtcconf.merge_conf(rtcconf.defaults(), rtcconf.load_conf(ROOT / "rtc.conf"))
            conf = rtcconf.apply_overrides(conf, overrides)
        except RtcfError as e:
            raise BatchError(f"-o: {e}") from None
        data, comp = load(path)
        sets = trial_params(args.set, args.sweep, args.trials)
        trials = []
        docs = []
        for i, params in enumerate(sets):
            folder = out / f"trial-{i:03d}"
            tdata, tcomp = trial_composition(data, comp, params, folder, len(sets) > 1)
            if i == 0 or params != sets[i - 1]:
                check(tcomp, conf)
            trials.append(Trial(i, params, folder))
            docs.append(tdata)
    except BatchError as e:
        print(f"scripts/batch: {e}", file=sys.stderr)
        return 2
    for t, tdata in zip(trials, docs):
        t.folder.mkdir(parents=True)
        (t.folder / "composition.yaml").write_text(
            f"# {path.name} as trial {t.index} of a batch ran it (scripts/batch)\n"
            + yaml.safe_dump(tdata, sort_keys=False))
        (t.folder / "params.json").write_text(json.dumps(t.params, indent=1) + "\n")

    def cmd_for(t: Trial) -> list[str]:
        cmd = [sys.executable, str(Path(__file__).resolve()), TRIAL_FLAG,
               str(t.folder / "composition.yaml"), "--duration", repr(args.duration)]
        for o in overrides:
            cmd += ["-o", o]
        return cmd

    print(f"scripts/batch: {len(trials)} trials of {path.name}, {args.duration:g} s "
          f"simulated each, {min(args.jobs, len(trials))} at once, into {out}",
          file=sys.stderr)
    t0 = time.monotonic()
    interrupted = run(trials, cmd_for, args.jobs, Progress(len(trials)))
    wall = time.monotonic() - t0
    write_summary(out, trials, {"composition": str(path), "duration_s": args.duration,
                                "jobs": args.jobs, "wall_s": round(wall, 3),
                                "overrides": overrides})
    failed = [t for t in trials if t.status == "failed"]
    for t in failed:
        print(f"scripts/batch: trial {t.index} failed (exit {t.returncode}): {t.reason} "
              f"(see {t.folder / 'output.txt'})", file=sys.stderr)
    print(f"scripts/batch: {sum(t.status == 'ok' for t in trials)} of {len(trials)} trials "
          f"ran in {wall:.1f} s; summary in {out / 'summary.csv'}", file=sys.stderr)
    if interrupted:
        return 130
    return 1 if failed else 0


TRIAL_FLAG = "--run-one-trial"


class _FirstErrors(logging.Handler):
    """The first error each component logged (the exception's own words when it had one)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.first: dict[str, str] = {}
        self.stopping: dict[str, str] | None = None   # a dict while the system stops

    def emit(self, record: logging.LogRecord) -> None:
        name = record.name.split(".", 1)[1] if record.name.startswith("rtcf.") else ""
        if not name:
            return
        exc = record.exc_info[1] if record.exc_info else None
        lines = [x for x in record.getMessage().splitlines() if x.strip()] or [""]
        last = f"{type(exc).__name__}: {exc}" if exc is not None else \
            lines[-1].strip() if len(lines) > 1 else ""          # a traceback's last line
        text = lines[0] + (f": {last}" if last else "")
        self.first.setdefault(name, text)
        if self.stopping is not None:
            self.stopping.setdefault(name, text)


def run_one_trial(argv: list[str]) -> int:
    """One trial, in its own process (what scripts/batch starts): the manager as
    ``python -m rtcf.manager COMPOSITION --no-corba --quiet --duration S`` runs it, and the
    trial fails (exit status 1, the last line naming it) when a component ended in ERROR:
    a manager runs on with a component in ERROR (as OpenRTM's does), a trial's result is not
    to be trusted then. Bad input: exit status 2."""
    ap = argparse.ArgumentParser(prog=f"scripts/batch {TRIAL_FLAG}")
    ap.add_argument("composition")
    ap.add_argument("--duration", type=float, required=True)
    ap.add_argument("-o", dest="overrides", action="append", default=[])
    a = ap.parse_args(argv)
    from rtcf import log as rlog
    from rtcf import rtcconf
    from rtcf.composition import load_composition
    from rtcf.confcheck import check_conf
    from rtcf.errors import RtcfError
    from rtcf.lifecycle import LifeCycleState
    from rtcf.manager import Manager
    errors = _FirstErrors()
    try:
        conf = rtcconf.merge_conf(rtcconf.defaults(), rtcconf.load_conf(ROOT / "rtc.conf"))
        conf = rtcconf.apply_overrides(conf, a.overrides)
        for text in check_conf(conf):
            print(f"scripts/batch: {text}", file=sys.stderr)
        rlog.configure(conf)
        logging.getLogger(rlog.ROOT).addHandler(errors)
        mgr = Manager(conf, corba=False)
        # a stop asked for while the system is being built ends it in order (rtcf.command)
        signal.signal(signal.SIGINT, mgr.request_stop)
        signal.signal(signal.SIGTERM, mgr.request_stop)
        comp = load_composition(a.composition, default_rate=rtcconf.get_float(
            conf, "exec_cxt.periodic.rate", 1000.0))
        mgr.sim_stop_at = a.duration
        mgr.build(comp)
    except (RtcfError, OSError, LookupError) as e:
        print(f"trial failed: {e}", file=sys.stderr)
        return 2
    mgr.log.info("running %s (%d components) for %g s of simulated time", comp.name,
                 len(mgr.components), a.duration)
    try:
        mgr.run(a.duration, 0)
        bad = [(name, ec.name) for name, c in mgr.components.items() for ec in c.ecs
               if ec.get_component_state(c) is LifeCycleState.ERROR]
    finally:
        report = mgr.final_report()
        errors.stopping = {}
        mgr.shutdown()
        print(report, file=sys.stderr)
    # an error while stopping (a logger that could not write its file at deactivation or
    # finalize): the trial's result is incomplete
    named = {name for name, _ in bad}
    failures = [f"{name} ended in ERROR in {ec}"
                + (f" ({errors.first[name]})" if name in errors.first else "")
                for name, ec in bad]
    failures += [f"{name} failed while stopping ({text})"
                 for name, text in errors.stopping.items() if name not in named]
    if failures:
        print("trial failed: " + "; ".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == [TRIAL_FLAG]:
        sys.exit(run_one_trial(sys.argv[2:]))
    sys.exit(main())
