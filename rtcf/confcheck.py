"""Checks of a whole rtc.conf (after -f and -o): typed values refused at once, unknown keys
warned about.

OpenRTM ignores keys it does not know, so a typo (``exec_cxt.perodic.rate``) silently keeps
the default. rtcf reads the same files, and says so: :func:`check_conf` returns one warning
per key that is neither a known OpenRTM or rtcf key nor in a documented key family, naming
where it came from (``rtc.conf:12``, ``-o``) and the closest known key. Values of the keys
rtcf uses are checked before anything starts; a bad one is a :class:`ConfigError` naming its
origin, the key and the value (``-o: exec_cxt.periodic.rate: expected a rate between 1 and
10000 [Hz], got '-5'``).

Known keys: OpenRTM-aist-Python's manager defaults (``OpenRTM_aist/DefaultConfiguration.py``
in OpenRTM/OpenRTM-aist-Python), the manager.components.* and manager.modules.preload keys of
its rtc.conf documentation, and rtcf's own keys. Families accepted by prefix are those whose
members are open-ended in OpenRTM: logger plugins and streams, per-language module settings,
local/SDO service settings, and per-component keys (``<category>.<type or instance>.
config_file``, ``.conf.<set>.<param>``, ``.configuration.*``, ``.exec_cxt.*``).
"""

from __future__ import annotations

import difflib
import math
import os
from typing import Mapping

from .errors import ConfigError, show_value
from .overrun import OVERRUN_POLICIES
from .rtcconf import Conf, defaults, where
from .validate import EC_PRIORITY, RATE_MAX, RATE_MIN, check_allowed, parse_yes_no

__all__ = ["KNOWN_KEYS", "KNOWN_PREFIXES", "check_conf", "unknown_key_warnings"]

KNOWN_KEYS = frozenset({
    # OpenRTM-aist-Python DefaultConfiguration.py
    "config.version", "openrtm.name", "openrtm.version", "manager.instance_name",
    "manager.name", "manager.naming_formats", "manager.pid", "os.name", "os.release",
    "os.version", "os.arch", "os.hostname", "logger.enable", "logger.file_name",
    "logger.date_format", "logger.log_level", "logger.stream_lock", "logger.master_logger",
    "module.conf_path", "module.load_path", "naming.enable", "naming.type", "naming.formats",
    "naming.update.enable", "naming.update.interval", "naming.update.rebind", "timer.enable",
    "timer.tick", "corba.args", "corba.endpoints", "corba.endpoint", "corba.id",
    "corba.nameservers", "corba.master_manager", "corba.nameservice.replace_endpoint",
    "corba.update_master_manager.enable", "corba.update_master_manager.interval",
    "corba.alternate_iiop_addresses", "exec_cxt.periodic.type", "exec_cxt.periodic.rate",
    "exec_cxt.event_driven.type", "exec_cxt.sync_transition", "exec_cxt.sync_activation",
    "exec_cxt.sync_deactivation", "exec_cxt.sync_reset", "exec_cxt.transition_timeout",
    "exec_cxt.activation_timeout", "exec_cxt.deactivation_timeout", "exec_cxt.reset_timeout",
    "exec_cxt.periodic.cpu_affinity", "manager.modules.load_path",
    "manager.modules.abs_path_allowed", "manager.modules.preload",
    "manager.modules.download_allowed", "manager.modules.init_func_suffix",
    "manager.modules.init_func_prefix", "manager.modules.search_auto", "manager.is_master",
    "manager.corba_servant", "manager.shutdown_on_nortcs", "manager.shutdown_auto",
    "manager.auto_shutdown_duration", "manager.termination_waittime", "manager.command",
    "manager.nameservers", "manager.language", "manager.supported_languages",
    "manager.components.naming_policy", "manager.components.precreate",
    "manager.components.preconnect", "manager.components.preactivation",
    "manager.cpu_affinity", "manager.preload.modules",
    # rtcf's own keys (those with a built-in default in rtcconf are known anyway)
    "exec_cxt.periodic.spin_us", "exec_cxt.periodic.sched_fifo", "rtcf.composition",
    "rtcf.simulation.enable", "rtcf.simulation.real_time_factor",
    "rtcf.connector.call_timeout",
})

KNOWN_PREFIXES = (
    "logger.plugins", "logger.logstream.", "logger.escape_",
    "manager.modules.C++.", "manager.modules.Python.", "manager.modules.Java.",
    "manager.local_service.", "sdo.service.", "corba.ssl.", "corba.http.",
    # OpenRTM's per-port settings (allow_dup_connection, fan_in, fan_out, buffer...)
    "port.inport.", "port.outport.", "port.corbaport.",
)

# First key segments that belong to the manager, not to a component category: a key under
# one of these must be known (or in a family above) to pass.
_RESERVED = {"config", "openrtm", "manager", "os", "logger", "module", "naming", "timer",
             "corba", "exec_cxt", "sdo", "rtcf"}
_COMPONENT_SUBKEYS = ("conf.", "configuration.", "exec_cxt.", "port.")
_DEFAULT_KEYS = frozenset(defaults())


def _is_known(key: str) -> bool:
    # every key with a built-in default (rtcconf's table) is one rtcf reads: known too
    if key in KNOWN_KEYS or key in _DEFAULT_KEYS or key.startswith(KNOWN_PREFIXES):
        return True
    parts = key.split(".")
    if parts[0] in _RESERVED or len(parts) < 3 or not all(parts):
        return False
    rest = ".".join(parts[2:])   # <category>.<type or instance>.<rest>
    return rest == "config_file" or rest.startswith(_COMPONENT_SUBKEYS)


def unknown_key_warnings(conf: Mapping[str, str]) -> list[str]:
    """One warning per key read from a file or -o that rtcf and OpenRTM do not know."""
    out = []
    for key in conf:
        origin = conf.origin.get(key, (None, None))[0] if isinstance(conf, Conf) else None
        if origin == "<defaults>" or _is_known(key):
            continue
        close = difflib.get_close_matches(key, sorted(KNOWN_KEYS | _DEFAULT_KEYS), n=1,
                                          cutoff=0.8)
        hint = f"; did you mean {close[0]}?" if close else ""
        out.append(f"{where(conf, key)}: unknown key {show_value(key)} is ignored{hint}")
    return out


# -- typed values of the keys rtcf reads ---------------------------------------------------------

_BOOL_KEYS = ("logger.enable", "naming.enable", "naming.update.enable",
              "exec_cxt.sync_transition", "exec_cxt.periodic.sched_fifo",
              "manager.corba_servant", "manager.shutdown_on_nortcs", "manager.is_master",
              "rtcf.simulation.enable", "rtcf.web.enable")
# (key, lower bound, bound excluded): numbers rtcf reads; an empty value is refused too
_NUMBER_KEYS = (("exec_cxt.periodic.spin_us", 0.0, False),
                ("exec_cxt.transition_timeout", 0.0, False),
                ("naming.update.interval", 1e-3, False),
                ("rtcf.connector.check_interval", 0.0, True),
                ("rtcf.connector.suspect_timeout", 0.0, True),
                ("rtcf.connector.call_timeout", 0.0, True),
                ("rtcf.simulation.step_timeout", 0.0, True),
                ("exec_cxt.periodic.trace_cycles", 16.0, False),
                ("manager.realtime.switch_interval_us", 0.0, True))


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _usable_cpus() -> set[int] | None:
    """The CPUs this process may run on (its affinity), None where that is not known."""
    try:
        return set(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None


def _check_values(conf: Mapping[str, str]) -> list[str]:
    errors: list[str] = []

    def bad(key: str, message: str) -> None:
        errors.append(f"{where(conf, key)}: {key}: {message}, got {show_value(conf[key])}")

    def present(key: str) -> str | None:
        value = conf.get(key)
        return None if value is None or not str(value).strip() else str(value).strip()

    def given(key: str) -> str | None:
        """The stripped value of a key a file or -o set, even when empty ("" is not a
        number: OpenRTM would read it as 0 or fail later); None when absent or a default."""
        if key not in conf:
            return None
        if isinstance(conf, Conf) and conf.origin.get(key, ("",))[0] == "<defaults>":
            return None
        return str(conf[key]).strip()

    text = given("exec_cxt.periodic.rate")
    if text is not None:
        rate = _number(text)
        if rate is None or not RATE_MIN <= rate <= RATE_MAX:
            bad("exec_cxt.periodic.rate",
                f"expected a rate between {RATE_MIN:g} and {RATE_MAX:g} [Hz]")
    for key, lo, strict in _NUMBER_KEYS:
        text = given(key)
        if text is not None:
            value = _number(text)
            if value is None or value < lo or (strict and value == lo):
                bad(key, f"expected a number {'>' if strict else '>='} {lo:g}")
    text = present("rtcf.simulation.real_time_factor")
    if text is not None:
        value = _number(text)
        if value is None or value < 0:
            bad("rtcf.simulation.real_time_factor",
                "expected a number >= 0 (0 = as fast as possible, 1 = real time)")
    text = given("manager.realtime.thread_priority")
    if text is not None and (not text.isdigit() or int(text) >= EC_PRIORITY):
        bad("manager.realtime.thread_priority",
            f"expected an integer from 0 to {EC_PRIORITY - 1} (below the EC threads' "
            f"SCHED_FIFO priority {EC_PRIORITY}; 0 = normal threads)")
    bound = None
    from .realtime import cpu_affinity
    for key in ("manager.cpu_affinity", "exec_cxt.periodic.cpu_affinity"):
        if present(key) is not None:
            try:
                cpus = cpu_affinity(conf, key)
            except ConfigError as e:
                errors.append(str(e))
                break                 # the EC's key is read against the manager's
            bound = cpus if key == "manager.cpu_affinity" else bound
    text = present("rtcf.simulation.cpu")
    if text is not None and text.lower() not in ("auto", "no"):
        cpus = bound or _usable_cpus()
        if not text.isdigit():
            bad("rtcf.simulation.cpu", "expected auto, NO or a CPU number (0, 1, ...)")
        elif cpus is not None and int(text) not in cpus:
            bad("rtcf.simulation.cpu", "expected auto, NO or a CPU this process may run on "
                f"({', '.join(map(str, sorted(cpus)))})")
    text = present("exec_cxt.periodic.overrun_policy")
    if text is not None and text not in OVERRUN_POLICIES:
        bad("exec_cxt.periodic.overrun_policy",
            f"expected {' or '.join(OVERRUN_POLICIES)}")
    for key in _BOOL_KEYS:
        text = present(key)
        if text is not None and parse_yes_no(text) is None:
            bad(key, "expected YES or NO")
    for key in ("rtcf.web.port", "rtcf.web.foxglove_port"):
        text = present(key)
        if text is not None and (not text.isdigit() or int(text) > 65535):
            bad(key, "expected a TCP port 0-65535")
    text = present("rtcf.web.allowed_hosts")
    if text is not None:
        problem = next(filter(None, (check_allowed(n.strip()) for n in text.split(",")
                                     if n.strip())), None)
        if problem:
            bad("rtcf.web.allowed_hosts", problem.split(", got ")[0])
    web, fox = present("rtcf.web.port"), present("rtcf.web.foxglove_port")
    if web is not None and fox is not None and web.isdigit() and fox.isdigit() \
            and int(web) == int(fox) != 0:
        # two servers cannot listen on one port: the Foxglove bridge would fail at start
        bad("rtcf.web.foxglove_port", f"expected a port other than rtcf.web.port's "
            f"({where(conf, 'rtcf.web.port')}: {web}; 0 picks a free one)")
    text = present("rtcf.web.push_rate")
    if text is not None:
        rate = _number(text)
        if rate is None or not 1.0 <= rate <= 1000.0:
            bad("rtcf.web.push_rate", "expected a rate between 1 and 1000 [Hz]")
    text = present("corba.nameservers")
    if text is not None:
        for item in (i.strip() for i in text.split(",")):
            if not item or item.startswith(("corbaloc:", "corbaname:", "IOR:")):
                continue
            host, sep, port = item.rpartition(":") if ":" in item else (item, "", "")
            if sep and (not port.isdigit() or not 0 < int(port) < 65536 or not host):
                bad("corba.nameservers", "expected host:port items (port 1-65535)")
                break
    text = present("naming.formats")
    if text is None and given("naming.formats") is not None and parse_yes_no(
            str(conf.get("naming.enable", "YES"))) is not False:
        # OpenRTM would bind nothing without a word; naming.enable: NO says that on purpose
        bad("naming.formats", "expected at least one name format (e.g. %h.host_cxt/%n.rtc; "
            "naming.enable: NO registers no name)")
    text = present("corba.endpoints")
    if text is not None:
        problem = _endpoint_problem(text)
        if problem:
            bad("corba.endpoints", problem)
    return errors


def _endpoint_problem(spec: str) -> str | None:
    """Why the ORB could not listen on ``corba.endpoints`` (an address of another host, a
    name that does not resolve, a bad port); None when every item can be listened on."""
    import socket
    for item in spec.replace(";", ",").split(","):
        item = item.strip()
        if not item or item.lower() == "all":
            continue
        host, sep, port = item.rpartition(":") if ":" in item else (item, "", "")
        if sep and port and (not port.isdigit() or not 0 <= int(port) < 65536):
            return f"expected IP[:port] items (port 0-65535) or all, in {item!r}"
        host = host.strip("[]")
        if not host:
            continue
        try:
            infos = socket.getaddrinfo(host, 0, type=socket.SOCK_STREAM)
        except OSError as e:
            return f"cannot resolve {host!r} ({e.strerror or e})"
        family, _, _, _, addr = infos[0]
        with socket.socket(family, socket.SOCK_STREAM) as s:
            try:
                s.bind((addr[0], 0))
            except OSError as e:
                return (f"{host!r} is not an address of this host ({e.strerror or e}): give "
                        "one of its own addresses, or all")
    return None


def check_conf(conf: Mapping[str, str]) -> list[str]:
    """Refuse bad values of the keys rtcf reads (one ConfigError listing each, naming its
    origin); return the warnings: lines without a separator and unknown keys."""
    errors = _check_values(conf)
    if errors:
        raise ConfigError("\n".join(errors))
    warnings = list(conf.warnings) if isinstance(conf, Conf) else []
    return warnings + unknown_key_warnings(conf)
