"""The ``rtcf`` command (scripts/run, ``python -m rtcf.manager``): OpenRTM rtcd-style options.

rtc.conf (``-f``, ``-o``) is read and checked, the composition loaded and the whole system
checked before the ORB starts; then the process builds its part of the system (one process,
or the launcher and its children, rtcf.launcher), runs until SIGINT / SIGTERM or
``--duration``, and prints the final report. Bad input ends here with one line naming the
place and the value, exit status 2, and nothing started.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from . import log as rlog
from . import rtcconf
from .composition import Composition, from_rtc_conf, load_composition, merge
from .errors import CompositionError, RtcfError
from .manager import Manager
from .paths import user_path

COMPOSITION_KEY = "rtcf.composition"   # rtcf's own rtc.conf key: the default composition
EXIT_BAD_INPUT = 2


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command's arguments (argv without the program name; None: sys.argv)."""
    ap = argparse.ArgumentParser(
        prog="rtcf", description="Run an rtcf system (OpenRTM rtcd-style options).")
    ap.add_argument("composition", nargs="?", help="composition YAML file (default: the "
                    "one named by rtcf.composition in rtc.conf)")
    ap.add_argument("-f", dest="conf_file", default=None,
                    help="configuration file (default: ./rtc.conf if present)")
    ap.add_argument("-o", dest="overrides", action="append", default=[],
                    metavar="key:value", help="override an rtc.conf key (repeatable)")
    ap.add_argument("--duration", type=duration_arg, default=None, metavar="S",
                    help="stop after S seconds (in simulation time: when simulated time "
                    "reaches S; see rtcf.simulation.enable)")
    ap.add_argument("--no-corba", action="store_true",
                    help="run without the ORB (in-process only)")
    ap.add_argument("--quiet", action="store_true", help="no status line")
    ap.add_argument("--web", action="store_true",
                    help="serve the live web view (rtcf.web.port, rtcf.web.address; "
                    "default http://127.0.0.1:8780/)")
    ap.add_argument("--process", default=None, metavar="NAME",
                    help="run only the components of this process of the composition "
                    "(started by the launcher for multi-process systems)")
    return ap.parse_args(argv)


def duration_arg(text: str) -> float:
    """--duration: a finite number of seconds >= 0 (NaN would never end the run)."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of seconds >= 0, got {text!r}")
    return value


def load_conf(args: argparse.Namespace) -> rtcconf.Conf:
    """rtc.conf's defaults, then the -f file (or ./rtc.conf), then the -o overrides."""
    conf = rtcconf.defaults()
    path = user_path(args.conf_file) if args.conf_file else (
        "rtc.conf" if Path("rtc.conf").exists() else None)
    if path:
        conf = rtcconf.merge_conf(conf, rtcconf.load_conf(path))
    return rtcconf.apply_overrides(conf, args.overrides)


def default_composition(conf: rtcconf.Conf) -> Composition | None:
    """The composition of rtc.conf: rtcf.composition plus precreate/preconnect."""
    comp = None
    path = conf.get(COMPOSITION_KEY, "").strip()
    rate = rtcconf.get_float(conf, "exec_cxt.periodic.rate", 1000.0)
    precreate = bool(conf.get("manager.components.precreate", "").strip())
    if path:
        p = Path(path)
        origin = conf.origin.get(COMPOSITION_KEY, ("", None))[0] \
            if isinstance(conf, rtcconf.Conf) else ""
        if origin == "-o":
            p = user_path(p)
        elif not p.is_absolute() and not p.exists() and origin:
            p = Path(origin).parent / p
        comp = load_composition(p, default_rate=rate, allow_empty=precreate)
    if precreate:
        origin = str(conf.origin.get("manager.components.precreate", ("rtc.conf", None))[0])
        if origin in ("-o", "<defaults>"):
            origin = "rtc.conf"   # the keys came from the command line
        pre = from_rtc_conf(conf, origin, check_refs=False)
        comp = merge(pre, comp) if comp is not None else pre
    return comp


def main(argv: list[str] | None = None) -> int:
    """The `rtcf` command and scripts/run; returns the exit status. Runs in: the main
    thread (it installs the SIGINT / SIGTERM handlers)."""
    args = parse_args(argv)
    try:
        conf, mgr, composition = _prepare(args)
    except (RtcfError, OSError, LookupError) as e:
        print(f"rtcf: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if composition is None:
        print("rtcf: nothing to run: give a composition file or set rtcf.composition "
              "or manager.components.precreate in rtc.conf", file=sys.stderr)
        return EXIT_BAD_INPUT
    from . import launcher
    if threading.current_thread() is threading.main_thread():
        # a stop asked for while the system is being built ends it in order (names unbound)
        signal.signal(signal.SIGINT, mgr.request_stop)
        signal.signal(signal.SIGTERM, mgr.request_stop)
    if args.process:
        launcher.follow_parent(mgr)          # end with the launcher, however it ends
    started: list[Any] = []      # the Launcher, once this process starts child processes
    try:
        _build(args, argv, conf, mgr, composition, started)
    except (RtcfError, OSError, LookupError) as e:
        print(f"rtcf: {e}", file=sys.stderr)
        for launch in started:
            launch.stop()
        if mgr.lockstep is not None:
            mgr.lockstep.unbind()
        mgr.shutdown()
        return EXIT_BAD_INPUT
    return _run(args, conf, mgr, composition, started[0] if started else None)


def _prepare(args: argparse.Namespace) -> tuple[rtcconf.Conf, Manager, Composition | None]:
    """rtc.conf read and checked, logging configured, the manager and the composition."""
    conf = load_conf(args)
    from .confcheck import check_conf
    warnings = check_conf(conf)          # bad values of known keys: refused here
    rlog.configure(conf)
    for text in warnings:
        rlog.get_logger("conf").warning("%s", text)
    from .realtime import bind_process, cpu_affinity
    cpus = cpu_affinity(conf)              # OpenRTM's manager.cpu_affinity: before any thread
    if cpus is not None:
        bind_process(cpus, rlog.get_logger("manager"))
    mgr = Manager(conf, corba=False if args.no_corba else None)
    if args.composition:
        rate = rtcconf.get_float(conf, "exec_cxt.periodic.rate", 1000.0)
        composition = load_composition(user_path(args.composition), default_rate=rate)
    else:
        composition = default_composition(conf)
    return conf, mgr, composition


def _build(args: argparse.Namespace, argv: list[str] | None, conf: rtcconf.Conf,
           mgr: Manager, composition: Composition, started: list[Any]) -> None:
    """Check the whole system, start the ORB and build this process's part of it. A
    launcher of child processes is appended to ``started`` as soon as it exists (the
    caller stops it when the build fails)."""
    from . import launcher
    procs = launcher.processes(composition)
    if args.process and args.process not in procs:
        raise CompositionError(f"--process: no process {args.process!r} in "
                               f"{composition.source_file} (its processes: "
                               f"{', '.join(procs)})")
    # external components (ticked in lockstep) make a system of several processes too
    multi = len(procs) > 1 or args.process or bool(composition.externals)
    if multi and not mgr.corba_enabled:
        raise CompositionError("a composition with several processes needs CORBA "
                               "(drop --no-corba)")
    if multi and mgr.simulation_factor(composition) is not None:
        # one simulated clock across the processes (the plan is checked before anything
        # starts); a follower's --duration is the leader's business
        mgr.lockstep = launcher.Lockstep(composition, args.process or launcher.MAIN, conf)
    lock = mgr.lockstep
    mgr.sim_stop_at = args.duration if lock is None or lock.leader else None
    mgr.check(composition)                 # the whole system, before the ORB
    from . import realtime
    mgr.realtime = realtime.before_start(conf, mgr.log)

    def raise_threads() -> None:
        raised = realtime.raise_for_ecs(conf, mgr.log)
        if raised is not None:
            mgr.realtime["threads_fifo"] = raised
    mgr.before_ecs_start = raise_threads
    if mgr.corba_enabled:
        from .corba.runtime import CorbaRuntime
        mgr.corba = CorbaRuntime(mgr, connect_naming=False)
    if not multi:
        mgr.build(composition)
        return
    # nothing binds a name or activates before every process is ready: the launcher, and
    # each child it started, build on hold and go together
    channel = launcher.ChildChannel.from_env() if args.process else None
    held = not args.process or channel is not None or lock is not None
    try:
        mgr.build(launcher.split(composition, args.process or launcher.MAIN), hold=held)
        if lock is not None and lock.follower:
            lock.join(mgr)                # before ready: the leader waits for every join
    except BaseException as e:
        if channel is not None:
            channel.report({"failed": str(e)})
        raise
    if channel is None and lock is not None and lock.follower:
        mgr.go()                          # started by hand: joined, now bind and activate
        return
    if channel is not None:
        channel.report({"ready": launcher.component_iors(mgr)})
        if not channel.wait_go(mgr):
            raise CompositionError(f"process {args.process}: the launch was abandoned")
        mgr.go()
        channel.report({"running": True})
        return
    if args.process:
        return
    if lock is not None:
        lock.start_leader(mgr)
    launch = launcher.Launcher(mgr, composition, child_args(argv),
                               env=lock.child_env(mgr) if lock is not None else None)
    started.append(launch)
    launch.start_children()
    launch.wait_ready()
    if lock is not None:          # the launched processes joined before they were ready
        lock.wait_joined(launch.hand_started(), mgr)
    launch.connect_cross()
    mgr.corba.ensure_naming()     # this process starts an omniNames if needed
    mgr.go(bind=False)            # first: the children's components may use ours
    launch.go()
    mgr.go(activate=False)
    if lock is not None:
        mgr.time_base.on_fault = lambda fault: mgr.request_stop()
        lock.start(mgr)           # every process joined and activated: time starts


def _run(args: argparse.Namespace, conf: rtcconf.Conf, mgr: Manager,
         composition: Composition, launch: Any) -> int:
    """Run the built system until it is stopped, then shut it down and print the report."""
    from . import launcher
    mgr.log.info("running %s (%d components); Ctrl-C stops", composition.name,
                 len(mgr.components))
    code = 0
    web = None
    if not args.process and (args.web or rtcconf.get_bool(conf, "rtcf.web.enable", False)):
        if mgr.corba_enabled:
            from .web.child import start_web
            web = start_web(conf, mgr.log)
        else:
            mgr.log.warning("web view not started: it needs CORBA (drop --no-corba)")
    lock = mgr.lockstep
    alive = None
    if launch is not None:
        alive = launch.alive
    elif lock is not None and lock.follower and launcher.ChildChannel.from_env() is None:
        alive = lock.leader_alive             # started by hand: it ends with the leader
    elif args.process:
        alive = launcher.parent_alive
    tb = mgr.time_base
    try:
        mgr.run(None if lock is not None and lock.follower else args.duration,
                0 if args.quiet else 1.0, alive=alive)
        if launch is not None and not launch.alive():
            code = 1          # a process of the system ended on its own: the system failed
            mgr.log.error("process %s of the system exited", ", ".join(launch.exited()))
        if tb is not None and tb.fault is not None:
            code = 1          # a lockstep step failed: the message names the process
            print(f"rtcf: {tb.fault}", file=sys.stderr)
    finally:
        if lock is not None:
            lock.finish(str(tb.fault) if tb is not None and tb.fault is not None
                        else "the run ended")
            lock.unbind()
        if web is not None:
            web.stop()
        if launch is not None:
            launch.stop()
        report = mgr.final_report()
        if args.process:
            launcher.sweep_orphaned_names(mgr, composition, args.process)
        mgr.shutdown()
        print(report, file=sys.stderr)
    return code


def child_args(argv: list[str] | None) -> list[str]:
    """The launcher's own arguments, for its children (without --process/--duration)."""
    args = list(sys.argv[1:] if argv is None else argv)
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("--process", "--duration"):
            skip = True
            continue
        if a.startswith(("--process=", "--duration=")) or a in ("--quiet", "--web"):
            continue
        out.append(a)
    return out
