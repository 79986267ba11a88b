"""rtcf-controllers: the controller manager from the command line (as pr2_controller_manager
and ``ros2 control``).

The manager is addressed by its rtshell path (``localhost:2809/host.host_cxt/
ControllerManager0.rtc``; without a naming server part, ``--nameserver`` or localhost:2809;
a bare instance name is looked up under this host's context)::

    rtcf-controllers list localhost:2809/$(hostname).host_cxt/ControllerManager0.rtc
    rtcf-controllers load MANAGER head_pd JointPositionController -p joints=[HeadYaw] -p kp=0.5
    rtcf-controllers switch MANAGER --start head_pd --stop old_pd --strict
    rtcf-controllers spawn MANAGER head_pd --timeout 20

Verbs: list, list-types, list-joints, load, unload, start, stop, switch, reload-modules,
spawn, statistics. Exit status: 0 done; 1 the manager refused (its message, which names
what was wrong, on stderr); 2 bad command line; 3 no manager at that path (or no naming
service) within the timeout. Output on stdout is one item per line, for scripts.

``spawn`` is ros2_control's spawner: a controller already loaded is not loaded again
(controller_manager/spawner.py: "Controller already loaded, skipping load_controller") and
is started; one already running is left running.

The controller manager's package brings this command (setup.cfg's console_scripts entry
point ``rtcf-controllers``); the framework knows nothing of it.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any, Callable, Sequence

import yaml

from rtcf.errors import AddressError
from rtcf.tools.address import parse_address

from .switching import Strictness

EXIT_OK, EXIT_REFUSED, EXIT_USAGE, EXIT_NO_MANAGER = 0, 1, 2, 3
DEFAULT_NS = "localhost:2809"


class Refused(Exception):
    """The manager answered false; the message is its reason."""


class NoManager(Exception):
    """No manager at that path (or no naming service)."""


def split_path(path: str, nameserver: str | None) -> tuple[str, str]:
    """(naming server host:port, component path or name) of the manager's address, read by
    rtcf.tools.address.parse_address (rtshell's forms, ``$RTCSH_CWD`` included). Two
    additions of this command: a path starting at a naming context or component
    (``host.host_cxt/ControllerManager0.rtc``) is below ``--nameserver`` (rtshell would read
    its first segment as a server), and a bare instance name is looked up under this host's
    context there. ``--nameserver`` defaults to localhost:2809. Runs in: the caller's
    thread. AddressError (a ValueError: exit 2) names what was wrong."""
    server = nameserver or DEFAULT_NS
    text = path.strip()
    if not text:
        raise AddressError("manager: expected an rtshell path such as "
                           "localhost:2809/host.host_cxt/ControllerManager0.rtc, got ''")
    first = text.split("/", 1)[0]
    if "/" in text and first.endswith(("_cxt", ".rtc")):
        text = f"/{server}/{text}"
    address = parse_address(text, want_port=False)
    if address.server is None:                     # the short form: a bare instance name
        return server, address.component
    return address.server, address.naming_path


def connect(path: str, nameserver: str | None, timeout: float = 0.0) -> Any:
    """The RTController::ControllerManagerService of the manager at ``path``; waits up to
    ``timeout`` seconds for it to appear. NoManager names the path and the reason."""
    from rtcf.corba.client import get_service
    from rtcf.corba.idl import stub_module
    server, name = split_path(path, nameserver)
    RTController = stub_module("RTController")
    deadline = time.monotonic() + timeout
    while True:
        try:
            return get_service(name, "ControllerManagerService",
                               stub=RTController.ControllerManagerService, nameserver=server)
        except (LookupError, ConnectionError, OSError) as e:
            reason = str(e)
        except Exception as e:               # CORBA system exceptions: not up yet
            reason = f"{type(e).__name__}: {e}"
        if time.monotonic() >= deadline:
            raise NoManager(f"no controller manager at {server}/{name}: {reason}")
        time.sleep(0.2)


def parse_params(items: Sequence[str]) -> list:
    """-p key=value (value in YAML: 0.5, [a, b], true) as an RTController::ParamSeq."""
    from rtcf.corba.idl import stub_module
    from rtcf.corba.nv import to_any
    RTController = stub_module("RTController")
    out = []
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"-p: expected key=value, got {item!r}")
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError as e:
            raise ValueError(f"-p {key}: not a YAML value: {text!r} ({e})") from None
        out.append(RTController.Param(key.strip(), to_any(value)))
    return out


def _answer(result: tuple[bool, str]) -> str:
    ok, message = result
    if not ok:
        raise Refused(message)
    return message


def _switch(svc: Any, start: list[str], stop: list[str], strict: bool,
            timeout: float) -> str:
    level = Strictness.STRICT if strict else Strictness.BEST_EFFORT
    return _answer(svc.switchController(start, stop, int(level), timeout))


# -- verbs ------------------------------------------------------------------------------------
def do_list(svc: Any, a: argparse.Namespace, out: Any) -> None:
    for d in svc.describeControllers():
        line = f"{d.name} {d.type} {d.state}"
        if a.verbose:
            rate = f"{d.update_rate:g}Hz" if d.update_rate else "every-tick"
            line += (f" position={d.position} rate={rate} "
                     f"claims={','.join(d.claimed_interfaces) or '-'} "
                     f"fallbacks={','.join(d.fallback_controllers) or '-'} "
                     f"chain={','.join(d.chain) or '-'}")
        print(line, file=out)


def do_list_types(svc: Any, a: argparse.Namespace, out: Any) -> None:
    for t in svc.listControllerTypes():
        print(t, file=out)


def do_list_joints(svc: Any, a: argparse.Namespace, out: Any) -> None:
    for i in svc.listInterfaces():
        if a.claimed and not i.claimed_by:
            continue
        print(f"{i.name} {'claimed by ' + i.claimed_by if i.claimed_by else 'free'}",
              file=out)


def do_load(svc: Any, a: argparse.Namespace, out: Any) -> None:
    print(_answer(svc.loadController(a.name, a.type or "", parse_params(a.param))), file=out)


def do_unload(svc: Any, a: argparse.Namespace, out: Any) -> None:
    for name in a.names:
        print(_answer(svc.unloadController(name)), file=out)


def do_start(svc: Any, a: argparse.Namespace, out: Any) -> None:
    print(_switch(svc, a.names, [], not a.best_effort, a.timeout), file=out)


def do_stop(svc: Any, a: argparse.Namespace, out: Any) -> None:
    print(_switch(svc, [], a.names, not a.best_effort, a.timeout), file=out)


def do_switch(svc: Any, a: argparse.Namespace, out: Any) -> None:
    if not a.start and not a.stop:
        raise ValueError("switch: expected --start and/or --stop names")
    print(_switch(svc, a.start, a.stop, not a.best_effort, a.timeout), file=out)


def do_reload(svc: Any, a: argparse.Namespace, out: Any) -> None:
    print(_answer(svc.reloadControllerModules(a.restore)), file=out)


def do_spawn(svc: Any, a: argparse.Namespace, out: Any) -> None:
    params = parse_params(a.param)
    if params and len(a.names) != 1:
        raise ValueError("spawn: -p applies to one controller; give one name")
    if a.type and len(a.names) != 1:
        raise ValueError("spawn: --type applies to one controller; give one name")
    states = {c.name: c.state for c in svc.listControllers()}
    for name in a.names:
        if name in states:           # ros2_control's spawner: load once, start it anyway
            print(f"{name!r} is already loaded ({states[name]}): not loaded again", file=out)
            continue
        print(_answer(svc.loadController(name, a.type or "", params)), file=out)
    if a.inactive:
        return
    start = [n for n in a.names if states.get(n) != "running"]
    for name in a.names:
        if name not in start:
            print(f"{name!r} is already running", file=out)
    if not start:
        return
    deadline = time.monotonic() + a.timeout
    while True:                      # the manager may exist before it is active
        try:
            print(_switch(svc, start, [], True, min(2.0, max(0.1, a.timeout))), file=out)
            return
        except Refused as e:
            if "is not active" not in str(e) or time.monotonic() >= deadline:
                raise
        time.sleep(0.2)


def do_statistics(svc: Any, a: argparse.Namespace, out: Any) -> None:
    st = svc.getStatistics()
    us = 1e6
    print(f"ticks {st.ticks} period nominal {st.period_nominal * us:.1f} us mean "
          f"{st.period_mean * us:.1f} us min {st.period_min * us:.1f} us max "
          f"{st.period_max * us:.1f} us", file=out)
    print(f"lateness p50 {st.lateness_p50 * us:.1f} us p99 {st.lateness_p99 * us:.1f} us max "
          f"{st.lateness_max * us:.1f} us; EC overruns {st.ec_overruns}; overhead mean "
          f"{st.overhead_mean * us:.1f} us max {st.overhead_max * us:.1f} us; switches "
          f"{st.switches}", file=out)
    for d in svc.describeControllers():
        print(f"{d.name} {d.state} updates {d.updates} period {d.period_last * us:.1f} us "
              f"exec mean {d.exec_mean * us:.1f} us max {d.exec_max * us:.1f} us overruns "
              f"{d.overruns} faults {d.faults}"
              + (f" last_error {d.last_error}" if d.last_error else ""), file=out)


VERBS: dict[str, tuple[Callable[..., None], str]] = {
    "list": (do_list, "loaded controllers: name type state (-v: rate, claims, fallbacks)"),
    "list-types": (do_list_types, "registered controller types"),
    "list-joints": (do_list_joints, "command interfaces and the controller owning each"),
    "load": (do_load, "load a controller (type and params, or from controller_config)"),
    "unload": (do_unload, "unload stopped controllers"),
    "start": (do_start, "start controllers (one switch)"),
    "stop": (do_stop, "stop controllers (one switch)"),
    "switch": (do_switch, "stop and start controllers in one switch"),
    "reload-modules": (do_reload, "re-import the controller modules"),
    "spawn": (do_spawn, "wait for the manager, load and start controllers"),
    "statistics": (do_statistics, "timing of the loop and of each controller"),
}


def _seconds(text: str) -> float:
    """A --timeout / --wait value: seconds >= 0 (a bad one is a bad command line, exit 2)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds >= 0, got {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected seconds >= 0, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="rtcf-controllers", description=__doc__.split("\n\n")[0],
                                 epilog="exit status: 0 done, 1 refused by the manager, "
                                        "2 bad command line, 3 no manager")
    sub = ap.add_subparsers(dest="verb", metavar="VERB", required=True)
    for verb, (_, help_text) in VERBS.items():
        p = sub.add_parser(verb, help=help_text, description=help_text)
        p.add_argument("manager", help="rtshell path of the manager, e.g. localhost:2809/"
                                       "host.host_cxt/ControllerManager0.rtc")
        p.add_argument("--nameserver", default=None,
                       help="naming service when the path has none (default localhost:2809)")
        p.add_argument("--wait", type=_seconds, default=0.0, metavar="S",
                       help="wait up to S seconds for the manager to exist (default 0)")
        if verb == "list":
            p.add_argument("-v", "--verbose", action="store_true")
        if verb == "list-joints":
            p.add_argument("--claimed", action="store_true", help="only claimed interfaces")
        if verb == "load":
            p.add_argument("name")
            p.add_argument("type", nargs="?", default="",
                           help="type name or module.Class (omit: from controller_config)")
        if verb in ("load", "spawn"):
            p.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE",
                           help="a parameter, value in YAML (repeatable)")
        if verb in ("unload", "start", "stop", "spawn"):
            p.add_argument("names", nargs="+", metavar="NAME")
        if verb == "spawn":
            p.add_argument("--type", default="", help="type of the (single) controller")
            p.add_argument("--timeout", type=_seconds, default=10.0, metavar="S",
                           help="wait up to S seconds for the manager (default 10)")
            p.add_argument("--inactive", action="store_true", help="load only")
        if verb == "switch":
            p.add_argument("--start", nargs="+", default=[], metavar="NAME")
            p.add_argument("--stop", nargs="+", default=[], metavar="NAME")
        if verb in ("start", "stop", "switch"):
            g = p.add_mutually_exclusive_group()
            g.add_argument("--strict", action="store_true",
                           help="refuse the whole switch on any problem (the default)")
            g.add_argument("--best-effort", action="store_true",
                           help="skip unknown names and controllers whose interfaces are "
                                "taken")
            p.add_argument("--timeout", type=_seconds, default=1.0, metavar="S",
                           help="for the real-time loop to perform it (default 1)")
        if verb == "reload-modules":
            p.add_argument("--restore", action="store_true",
                           help="unload the loaded controllers, re-import, load them back "
                                "and restart the running ones")
    return ap


def main(argv: list[str] | None = None, out: Any = None, err: Any = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        a = build_parser().parse_args(argv)
    except SystemExit as e:
        return EXIT_USAGE if e.code else EXIT_OK
    fn = VERBS[a.verb][0]
    wait = a.timeout if a.verb == "spawn" else a.wait
    try:
        svc = connect(a.manager, a.nameserver, wait)
        fn(svc, a, out)
    except ValueError as e:
        print(f"rtcf-controllers {a.verb}: {e}", file=err)
        return EXIT_USAGE
    except Refused as e:
        print(f"rtcf-controllers {a.verb}: {e}", file=err)
        return EXIT_REFUSED
    except NoManager as e:
        print(f"rtcf-controllers {a.verb}: {e}", file=err)
        return EXIT_NO_MANAGER
    except Exception as e:           # the manager vanished mid-call (CORBA errors)
        print(f"rtcf-controllers {a.verb}: the manager did not answer: "
              f"{type(e).__name__}: {e}", file=err)
        return EXIT_NO_MANAGER
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
