"""OpenRTM-style configuration files: rtc.conf, ``-o key:value`` overrides, component conf files.

The syntax is the one OpenRTM-aist's Properties loader reads (a Java-properties dialect):

* one ``key: value`` or ``key = value`` per line; the first unescaped ``:`` or ``=`` splits,
  so ``corba.nameservers: localhost:2809`` keeps the port in the value. A line with neither
  splits at its first unescaped space; a bare word is a key with an empty value.
* a line whose first non-blank character is ``#`` or ``!`` is a comment (whole lines only:
  ``#`` inside a value is kept, as in OpenRTM).
* a trailing unescaped backslash continues the logical line; blanks before the backslash and
  at the start of the next line are dropped.
* ``\\:``, ``\\=``, ``\\#``, ``\\ `` and ``\\\\`` are escapes; ``\\t``/``\\n``/``\\r`` too.
* keys stay dotted as written (``exec_cxt.periodic.rate``); keys and values are stripped.

:func:`parse_conf` returns a :class:`Conf`: a plain ``dict[str, str]`` that also remembers
where each key came from (file and line, ``-o`` or the built-in defaults), so the typed
getters (:func:`get_bool`, :func:`get_float`, ...) report ``rtc.conf:12: key: expected ...,
got 'value'``.

The manager keys ``manager.components.precreate``, ``.preconnect`` and ``.preactivation`` are
parsed into small records here (:func:`parse_precreate`, :func:`parse_preconnect`,
:func:`parse_preactivation`); :mod:`rtcf.composition` turns them into a composition.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

from rtcf.errors import ConfigError, show_value
from rtcf.validate import parse_yes_no

__all__ = [
    "Conf", "ComponentConf", "PrecreateSpec", "PreconnectSpec",
    "parse_conf", "load_conf", "apply_overrides", "defaults", "merge_conf",
    "get_bool", "get_float", "get_int", "get_list", "where",
    "parse_component_conf", "load_component_conf", "component_conf_from",
    "component_conf_files",
    "parse_precreate", "parse_preconnect", "parse_preactivation", "parse_url_params",
]

#: Where a key came from: (file or "-o" or "<defaults>", line number or None).
Origin = tuple[str, "int | None"]


class Conf(dict):
    """A ``dict[str, str]`` of configuration keys that remembers each key's origin.

    ``origin[key]`` is ``(source, line)``; keys set through ordinary dict operations simply
    have no recorded origin and are reported under ``fallback`` (the conf's file name).
    Runs in: the main thread (read once at start, then only read).
    """

    def __init__(self, items: Mapping[str, str] | None = None, *, fallback: str = "<conf>",
                 origin: Mapping[str, Origin] | None = None):
        super().__init__(items or {})
        self.fallback = fallback
        self.origin: dict[str, Origin] = dict(origin or {})
        #: Problems worth a warning but not a refusal (a line without a separator), each
        #: naming its file and line; see also :func:`check_conf`.
        self.warnings: list[str] = []

    def copy(self) -> "Conf":
        out = Conf(self, fallback=self.fallback, origin=self.origin)
        out.warnings = list(self.warnings)
        return out

    def set(self, key: str, value: str, source: str, line: int | None = None) -> None:
        """Set ``key`` and record where the value came from."""
        self[key] = value
        self.origin[key] = (source, line)


def where(conf: Mapping[str, str], key: str, filename: str | None = None) -> str:
    """Describe the origin of ``key`` for an error message: ``rtc.conf:12``, ``-o``, ..."""
    if isinstance(conf, Conf) and key in conf.origin:
        source, line = conf.origin[key]
        return f"{source}:{line}" if line is not None else source
    if filename is not None:
        return filename
    return conf.fallback if isinstance(conf, Conf) else "<conf>"


# --------------------------------------------------------------------------- parsing

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _is_escaped(text: str, i: int) -> bool:
    """True when the character at ``i`` is preceded by an odd number of backslashes."""
    n = 0
    while i - n - 1 >= 0 and text[i - n - 1] == "\\":
        n += 1
    return n % 2 == 1


def _unescape(text: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _split_key_value(line: str) -> tuple[str, str]:
    for seps in ((":", "="), (" ", "\t")):
        for i, c in enumerate(line):
            if c in seps and not _is_escaped(line, i):
                return line[:i], line[i + 1:]
    return line, ""


def _logical_lines(text: str) -> Iterable[tuple[int, str]]:
    """Yield (first line number, logical line) with comments dropped and continuations joined.

    As in OpenRTM, blank and comment lines are skipped even in the middle of a continuation.
    """
    pending = ""
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.lstrip(" \t\f").rstrip("\r\n")
        if not line or line[0] in "#!":
            continue
        if not pending:
            start = number
        if line.endswith("\\") and not _is_escaped(line, len(line) - 1):
            pending += line[:-1].rstrip(" \t\f")
            continue
        yield start, pending + line
        pending = ""
    if pending.strip():
        yield start, pending


def parse_conf(text: str, filename: str = "<string>") -> Conf:
    """Parse OpenRTM properties text into a :class:`Conf`; later keys override earlier ones."""
    conf = Conf(fallback=filename)
    for number, line in _logical_lines(text):
        key, value = _split_key_value(line)
        key = _unescape(key).strip()
        if not key:
            raise ConfigError(f"{filename}:{number}: line has no key, got {show_value(line)}")
        if not _has_separator(line):
            # OpenRTM reads a bare word as a key with an empty value; usually a typo.
            conf.warnings.append(f"{filename}:{number}: no ':' or '=' in the line, read as "
                                 f"key {show_value(key)} with an empty value")
        conf.set(key, _unescape(value).strip(), filename, number)
    return conf


def _has_separator(line: str) -> bool:
    line = line.strip()
    return any(c in ":= \t" and not _is_escaped(line, i) for i, c in enumerate(line))


MAX_TEXT_BYTES = 8 * 1024 * 1024   # a composition or rtc.conf is kilobytes; refuse more
_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _read_regular(path: str | os.PathLike, what: str, error: type[Exception]) -> bytes:
    """The bytes of a regular file of at most MAX_TEXT_BYTES. Opened without blocking, so a
    FIFO with no writer is refused at once instead of waiting for ever; /dev/zero and other
    devices are refused instead of read until memory runs out."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise error(f"{path}: cannot read {what}: {exc.strerror}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise error(f"{path}: cannot read {what}: Is a directory")
        kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
        raise error(f"{path}: cannot read {what}: it is {kind}, not a regular file")
    with os.fdopen(fd, "rb") as f:
        try:
            raw = f.read(MAX_TEXT_BYTES + 1)
        except OSError as exc:
            raise error(f"{path}: cannot read {what}: {exc.strerror}") from None
    if len(raw) > MAX_TEXT_BYTES:
        raise error(f"{path}: cannot read {what}: larger than the "
                    f"{MAX_TEXT_BYTES // (1024 * 1024)} MiB limit")
    return raw


def read_text(path: str | os.PathLike, what: str, error: type[Exception] = ConfigError) -> str:
    """The text of a UTF-8 file (a BOM is allowed); ``error`` naming the file when it cannot
    be read or is not text (a binary file, NUL bytes), e.g. ``x.conf: not a UTF-8 text file
    (byte 0xff at offset 0)``."""
    raw = _read_regular(path, what, error)
    nul = raw.find(b"\0")
    if nul >= 0:
        line = raw.count(b"\n", 0, nul) + 1
        raise error(f"{path}: not a text file: NUL byte at line {line}, offset {nul} "
                    f"(is it a {what}?)")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise error(f"{path}: not a UTF-8 text file: byte 0x{raw[exc.start]:02x} at line "
                    f"{line}, offset {exc.start} (is it a {what}?)") from None


def load_conf(path: str | os.PathLike) -> Conf:
    """Read and parse an rtc.conf-style file; a missing or binary file is a
    :class:`ConfigError` naming it."""
    return parse_conf(read_text(path, "configuration file"), str(path))


def apply_overrides(conf: Mapping[str, str], overrides: Iterable[str]) -> Conf:
    """Return a copy of ``conf`` with rtcd-style ``-o key:value`` items applied.

    The first ``:`` splits (so ``corba.nameservers:host:2809`` works); an item without ``:``
    or with an empty key is a :class:`ConfigError` naming the item.
    """
    out = conf.copy() if isinstance(conf, Conf) else Conf(conf)
    for item in overrides:
        key, sep, value = item.partition(":")
        if not sep:
            raise ConfigError(f"-o: expected \"key:value\", got {show_value(item)}")
        if not key.strip():
            raise ConfigError(f"-o: empty key, got {show_value(item)}")
        out.set(key.strip(), value.strip(), "-o")
    return out


def merge_conf(base: Mapping[str, str], *overlays: Mapping[str, str]) -> Conf:
    """Merge confs left to right (later wins), keeping recorded origins."""
    out = base.copy() if isinstance(base, Conf) else Conf(base)
    for overlay in overlays:
        if isinstance(overlay, Conf):
            out.warnings.extend(overlay.warnings)
        for key, value in overlay.items():
            out[key] = value
            if isinstance(overlay, Conf) and key in overlay.origin:
                out.origin[key] = overlay.origin[key]
            else:
                out.origin.pop(key, None)
    return out


_DEFAULTS: dict[str, str] = {
    "corba.nameservers": "localhost:2809",
    # Loopback by default (a project decision): OpenRTM listens on every interface unless told
    # otherwise; set "all" or an address to expose components to other hosts.
    "corba.endpoints": "127.0.0.1",
    "corba.args": "-ORBclientCallTimeOutPeriod 10000",
    "corba.master_manager": "localhost:2810",
    "naming.enable": "YES",
    "naming.formats": "%h.host_cxt/%n.rtc",
    "naming.update.enable": "YES",
    "naming.update.interval": "10.0",
    "exec_cxt.periodic.type": "PeriodicExecutionContext",
    # rtcf keys: how often connections to remote peers are checked [s], and how long a
    # peer that stopped answering keeps its connection before it is removed on both ends
    "rtcf.connector.check_interval": "1",
    "rtcf.connector.suspect_timeout": "5",
    # rtcf keys: the live web view (scripts/run --web, or enable here), served by a child
    # process of the manager at address:port (loopback by default; 0: any free port)
    "rtcf.web.enable": "NO",
    "rtcf.web.port": "8780",
    "rtcf.web.address": "127.0.0.1",
    # host names (comma-separated, name or name:port) the web view answers to besides its
    # address, localhost and the loopback addresses (all others refused: DNS rebinding)
    "rtcf.web.allowed_hosts": "",
    # how often a plotted port sends its newest sample [Hz]; the Foxglove WebSocket protocol
    # on this port too (empty: off)
    "rtcf.web.push_rate": "50",
    "rtcf.web.foxglove_port": "",
    "exec_cxt.periodic.rate": "1000",
    "exec_cxt.sync_transition": "YES",
    "exec_cxt.transition_timeout": "0.5",
    # rtcf keys: busy-wait this long before each deadline (0 disables spinning), and run the
    # EC thread under SCHED_FIFO (also the paced simulation time base's thread).
    "exec_cxt.periodic.spin_us": "200",
    "exec_cxt.periodic.sched_fifo": "NO",
    # release the GIL while spinning (time.sleep(0)); measured: it delays the EC itself
    # (p50 lateness 0 -> 11 us, p99 2 -> 55 us at 100 Hz), so off by default
    "exec_cxt.periodic.spin_yield": "NO",
    # after a cycle that ended past deadlines: skip them (run at the next deadline ahead,
    # each missed one counted as an overrun) or catch_up (run the missed cycles at once)
    "exec_cxt.periodic.overrun_policy": "skip",
    # per-cycle timing trace (rtcf.trace): off by default; saved at stop to trace_file
    # (%n: EC name, %p: process id); python -m rtcf.trace FILE explains the late cycles
    "exec_cxt.periodic.trace": "NO",
    "exec_cxt.periodic.trace_cycles": "65536",
    "exec_cxt.periodic.trace_file": "rtcf-trace-%n-%p.npz",
    # simulation time (rtcf.simtime): YES runs every EC of the process in simulated time,
    # NO in wall-clock time, empty follows the composition's `simulation` key; the factor
    # (0 = as fast as possible, 1 = real time) overrides the composition's when set
    "rtcf.simulation.enable": "",
    "rtcf.simulation.real_time_factor": "",
    # a simulation across processes (rtcf.lockstep): how long the leader waits for a process
    # to answer one step [s] before it ends the run naming that process
    "rtcf.simulation.step_timeout": "5",
    # YES: data this process writes on flush connectors to the leader (or, in the leader, to
    # a follower) during an instant travels on the step call, one round trip per process and
    # instant; NO: each sample is a put of its own
    "rtcf.simulation.step_data": "YES",
    # a simulation across processes paced under SCHED_FIFO: the CPU that the leader's time
    # base thread and every follower's step thread run on (an instant passes from one to
    # the next and back, never two at once; on one CPU each hand-over is a switch there, not
    # a wake-up of another CPU); auto: the process's last CPU, NO: any CPU
    "rtcf.simulation.cpu": "auto",
    # real-time process settings (rtcf.realtime): lock memory where permitted, freeze the
    # start-up heap after activation, the interpreter's switch interval [us]
    "manager.realtime.mlockall": "YES",
    "manager.realtime.gc_freeze": "YES",
    "manager.realtime.switch_interval_us": "5000",
    # with exec_cxt.periodic.sched_fifo: the process's other threads (the ORB's) under
    # SCHED_FIFO at this priority, below the EC threads' 50, so that no busy process
    # preempts a thread holding the GIL an EC thread waits for (0: normal threads)
    "manager.realtime.thread_priority": "1",
    "manager.name": "manager",
    "manager.is_master": "NO",
    "manager.corba_servant": "YES",
    "manager.components.naming_policy": "process_unique",
    "manager.components.precreate": "",
    "manager.components.preconnect": "",
    "manager.components.preactivation": "",
    "manager.shutdown_on_nortcs": "YES",
    "manager.modules.load_path": "",
    "manager.modules.preload": "",
    "logger.enable": "YES",
    "logger.log_level": "INFO",
    # Empty means stderr (a project decision; OpenRTM writes ./rtc<pid>.log).
    "logger.file_name": "",
    "logger.date_format": "%b %d %H:%M:%S",
}


def defaults() -> Conf:
    """The built-in defaults (a fresh copy), each with origin ``<defaults>``."""
    conf = Conf(fallback="<defaults>")
    for key, value in _DEFAULTS.items():
        conf.set(key, value, "<defaults>")
    return conf


# --------------------------------------------------------------------------- typed getters

_MISSING = object()


def _raw(conf: Mapping[str, str], key: str, default: object, filename: str | None) -> object:
    """The stripped string value, or ``default`` when the key is absent or empty."""
    value = conf.get(key)
    if value is None or str(value).strip() == "":
        if default is _MISSING:
            raise ConfigError(f"{where(conf, key, filename)}: {key}: required key is missing")
        return default
    return str(value).strip()


def get_bool(conf: Mapping[str, str], key: str, default: object = _MISSING, *,
             filename: str | None = None) -> bool:
    """Read YES/NO/TRUE/FALSE/ON/OFF/1/0 (case-insensitive)."""
    value = _raw(conf, key, default, filename)
    if not isinstance(value, str):
        return bool(value)
    word = parse_yes_no(value)
    if word is not None:
        return word
    raise ConfigError(f"{where(conf, key, filename)}: {key}: expected YES or NO"
                      f", got {show_value(value)}")


def _check_bounds(conf: Mapping[str, str], key: str, value: float, gt: float | None,
                  ge: float | None, filename: str | None, text: str) -> None:
    if gt is not None and not value > gt:
        raise ConfigError(f"{where(conf, key, filename)}: {key}: expected > {gt:g}"
                          f", got {show_value(text)}")
    if ge is not None and not value >= ge:
        raise ConfigError(f"{where(conf, key, filename)}: {key}: expected >= {ge:g}"
                          f", got {show_value(text)}")


def get_float(conf: Mapping[str, str], key: str, default: object = _MISSING, *,
              gt: float | None = None, ge: float | None = None,
              filename: str | None = None) -> float:
    """Read a finite float, optionally bounded (``gt``: strictly greater, ``ge``: at least)."""
    value = _raw(conf, key, default, filename)
    if not isinstance(value, str):
        return value  # the caller's default, returned as given
    try:
        number = float(value)
    except ValueError:
        number = float("nan")
    if number != number or number in (float("inf"), float("-inf")):
        raise ConfigError(f"{where(conf, key, filename)}: {key}: expected a number"
                          f", got {show_value(value)}")
    _check_bounds(conf, key, number, gt, ge, filename, value)
    return number


def get_int(conf: Mapping[str, str], key: str, default: object = _MISSING, *,
            gt: int | None = None, ge: int | None = None, filename: str | None = None) -> int:
    """Read a decimal integer, optionally bounded."""
    value = _raw(conf, key, default, filename)
    if not isinstance(value, str):
        return value
    try:
        number = int(value, 10)
    except ValueError:
        raise ConfigError(
            f"{where(conf, key, filename)}: {key}: expected an integer"
            f", got {show_value(value)}") from None
    _check_bounds(conf, key, number, gt, ge, filename, value)
    return number


def get_list(conf: Mapping[str, str], key: str, default: Iterable[str] = (), *,
             filename: str | None = None) -> list[str]:
    """Read a comma separated list: items stripped, empty items dropped."""
    value = conf.get(key)
    if value is None or not str(value).strip():
        return list(default)
    return [item.strip() for item in str(value).split(",") if item.strip()]


# --------------------------------------------------------------------------- component conf


@dataclass
class ComponentConf:
    """A per-component configuration file (``<category>.<type|instance>.config_file``).

    ``sets`` maps set name to ``{param: value}`` from ``conf.<set>.<param>``; ``active_set``
    comes from ``configuration.active_config``; ``widgets`` and ``constraints`` from
    ``conf.__widget__.<param>`` and ``conf.__constraints__.<param>``; every other key (profile
    overrides, ``exec_cxt.*``, other ``conf.__x__`` sections) is kept in ``other``.
    """

    source: str
    sets: dict[str, dict[str, str]] = field(default_factory=dict)
    active_set: str | None = None
    widgets: dict[str, str] = field(default_factory=dict)
    constraints: dict[str, str] = field(default_factory=dict)
    other: dict[str, str] = field(default_factory=dict)


def component_conf_from(conf: Mapping[str, str], filename: str) -> ComponentConf:
    """Sort already-parsed keys into a :class:`ComponentConf`."""
    out = ComponentConf(source=filename)
    for key, value in conf.items():
        if key == "configuration.active_config":
            out.active_set = value or None
            continue
        parts = key.split(".", 2)
        if parts[0] != "conf" or len(parts) < 3:
            out.other[key] = value
            continue
        section, param = parts[1], parts[2]
        if not section or not param:
            raise ConfigError(f"{where(conf, key, filename)}: {key}: expected "
                              f"conf.<set>.<param>, got {show_value(key)}")
        if section == "__widget__":
            out.widgets[param] = value
        elif section == "__constraints__":
            out.constraints[param] = value
        elif section.startswith("__") and section.endswith("__"):
            out.other[key] = value
        else:
            out.sets.setdefault(section, {})[param] = value
    return out


def parse_component_conf(text: str, filename: str = "<string>") -> ComponentConf:
    """Parse a component conf file's text into a :class:`ComponentConf`."""
    return component_conf_from(parse_conf(text, filename), filename)


def load_component_conf(path: str | os.PathLike) -> ComponentConf:
    """Read and parse a component conf file."""
    conf = load_conf(path)
    return component_conf_from(conf, str(path))


def component_conf_files(conf: Mapping[str, str], category: str, type_name: str,
                         instance_name: str) -> list[Path]:
    """Paths of the conf files that apply to one component, type-level first.

    OpenRTM reads ``<category>.<type_name>.config_file`` and then
    ``<category>.<instance_name>.config_file`` (the instance file wins). A relative path is
    taken relative to the directory of the conf file that named it, when that is known.
    """
    paths: list[Path] = []
    for name in (type_name, instance_name):
        key = f"{category}.{name}.config_file"
        value = conf.get(key, "").strip()
        if not value:
            continue
        path = Path(value)
        if not path.is_absolute() and isinstance(conf, Conf) and key in conf.origin:
            source = conf.origin[key][0]
            if source not in ("-o", "<defaults>"):
                path = Path(source).parent / path
        if path not in paths:
            paths.append(path)
    return paths


# --------------------------------------------------------------------------- manager keys


@dataclass(frozen=True)
class PrecreateSpec:
    """One ``manager.components.precreate`` item.

    Written ``TypeName``, ``TypeName?instance_name=foo&key=value`` or OpenRTM's full id
    ``RTC:vendor:category:TypeName:language:version?...``. ``params`` holds every other
    ``key=value`` of the query (OpenRTM merges them into the component's properties).
    """

    type_name: str
    instance_name: str | None = None
    vendor: str = ""
    category: str = ""
    language: str = ""
    version: str = ""
    params: dict[str, str] = field(default_factory=dict)
    text: str = ""


@dataclass(frozen=True)
class PreconnectSpec:
    """One ``manager.components.preconnect`` item.

    OpenRTM 1.2+/2.0 syntax: ``comp0.port?port=comp1.port&dataflow_type=push&...``; the
    targets are given by ``port`` or numbered ``port0``, ``port1``... keys (several allowed;
    none at all is legal in OpenRTM for broker transports). The older
    ``comp0.port^comp1.port(key=value&...)`` form is accepted too. ``properties`` keys are
    without the ``dataport.`` prefix; nothing is defaulted here (OpenRTM's connector defaults,
    push and corba_cdr, belong to the port layer).
    """

    source: str
    targets: tuple[str, ...]
    properties: dict[str, str] = field(default_factory=dict)
    text: str = ""


def parse_url_params(query: str, context: str) -> list[tuple[str, str]]:
    """Split ``a=b&c=d`` into pairs in order (repeated keys kept); ``context`` prefixes errors."""
    pairs: list[tuple[str, str]] = []
    for item in query.split("&"):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{context}: expected key=value, got {show_value(item)}")
        pairs.append((key.strip(), value.strip()))
    return pairs


def _items(conf: Mapping[str, str], key: str) -> list[str]:
    return get_list(conf, key)


def parse_precreate(conf: Mapping[str, str], filename: str | None = None) -> list[PrecreateSpec]:
    """Parse ``manager.components.precreate`` (comma list) into :class:`PrecreateSpec` items."""
    key = "manager.components.precreate"
    specs: list[PrecreateSpec] = []
    for i, text in enumerate(_items(conf, key)):
        ctx = f"{where(conf, key, filename)}: {key}[{i}]"
        head, _, query = text.partition("?")
        head = head.strip()
        vendor = category = language = version = ""
        if head.startswith("RTC:"):
            fields = head[4:].split(":")
            if len(fields) != 5 or not fields[2]:
                raise ConfigError(f"{ctx}: expected RTC:vendor:category:type:language:version"
                                  f", got {show_value(text)}")
            vendor, category, head, language, version = fields
        if not head or any(c in head for c in "./: "):
            raise ConfigError(f"{ctx}: expected a component type name, got {show_value(text)}")
        params = dict(parse_url_params(query, ctx))
        instance = params.pop("instance_name", None) or None
        specs.append(PrecreateSpec(head, instance, vendor, category, language, version,
                                   params, text))
    return specs


def _is_port_key(key: str) -> bool:
    return key == "port" or (key.startswith("port") and key[4:].isdigit())


def parse_preconnect(conf: Mapping[str, str], filename: str | None = None) -> list[PreconnectSpec]:
    """Parse ``manager.components.preconnect`` (comma list) into :class:`PreconnectSpec` items."""
    key = "manager.components.preconnect"
    specs: list[PreconnectSpec] = []
    for i, text in enumerate(_items(conf, key)):
        ctx = f"{where(conf, key, filename)}: {key}[{i}]"
        targets: list[str] = []
        if "?" not in text and "(" in text:  # legacy: a^b(key=value&...)
            head, _, rest = text.partition("(")
            query = rest.rstrip().removesuffix(")")
            source, sep, target = head.partition("^")
            if not sep:
                raise ConfigError(f"{ctx}: expected comp0.port?port=comp1.port"
                                  f", got {show_value(text)}")
            targets.append(target.strip())
            pairs = parse_url_params(query, ctx)
        else:
            source, _, query = text.partition("?")
            pairs = parse_url_params(query, ctx)
        props: dict[str, str] = {}
        for k, v in pairs:
            if _is_port_key(k):
                targets.append(v)
            else:
                props[k.removeprefix("dataport.")] = v
        for port in [source.strip(), *targets]:
            inst, dot, name = port.rpartition(".")
            if not dot or not inst or not name:
                raise ConfigError(f"{ctx}: expected \"instance.port\", got {show_value(port)}")
        specs.append(PreconnectSpec(source.strip(), tuple(t.strip() for t in targets),
                                    props, text))
    return specs


def parse_preactivation(conf: Mapping[str, str], filename: str | None = None) -> list[str]:
    """Parse ``manager.components.preactivation``: a comma list of instance names."""
    return _items(conf, "manager.components.preactivation")
