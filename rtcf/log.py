"""Logging configured from OpenRTM's logger.* keys; one logger per component.

``logger.enable`` (YES/NO), ``logger.log_level`` (SILENT, FATAL, ERROR, WARN, INFO, DEBUG,
TRACE, VERBOSE, PARANOID), ``logger.file_name`` (empty: stderr; ``%p`` is replaced by the pid),
``logger.date_format`` (strftime). Cycle code must not log at info level; it uses
``Throttled`` to log at most once per interval.
"""

from __future__ import annotations

import logging
import os
import sys
import time

from .validate import parse_yes_no

ROOT = "rtcf"

_monotonic = time.monotonic   # Throttled's clock (a module global: tests may replace it)

# OpenRTM level names -> logging levels. TRACE and below map to DEBUG-ish numbers.
LEVELS = {
    "SILENT": logging.CRITICAL + 10,
    "FATAL": logging.CRITICAL,
    "ERROR": logging.ERROR,
    "WARN": logging.WARNING,
    "WARNING": logging.WARNING,
    "INFO": logging.INFO,
    "DEBUG": logging.DEBUG,
    "TRACE": 5,
    "VERBOSE": 4,
    "PARANOID": 3,
}

_handler: logging.Handler | None = None


def get_logger(name: str | None = None) -> logging.Logger:
    """The framework logger, or the one of component instance ``name``."""
    return logging.getLogger(ROOT if not name else f"{ROOT}.{name}")


def configure(conf: dict[str, str]) -> None:
    """Apply logger.* keys. Safe to call again (replaces the previous handler)."""
    global _handler
    root = logging.getLogger(ROOT)
    if _handler is not None:
        root.removeHandler(_handler)
        _handler.close()
        _handler = None
    # An empty value means the default, as for every other key (rtcconf._raw): a bare
    # "logger.enable" line must not silence the warning that reports it.
    enabled = parse_yes_no(str(conf.get("logger.enable") or "").strip() or "YES") is True
    level_name = str(conf.get("logger.log_level") or "").strip().upper() or "INFO"
    if level_name not in LEVELS:
        from .errors import ConfigError
        raise ConfigError(f"logger.log_level: expected one of {', '.join(LEVELS)}, "
                          f"got {level_name!r}")
    if not enabled:
        root.setLevel(LEVELS["SILENT"])
        return
    root.setLevel(LEVELS[level_name])
    file_name = str(conf.get("logger.file_name", "")).strip()
    if file_name and file_name not in ("-", "stderr"):
        file_name = file_name.replace("%p", str(os.getpid()))
        _handler = logging.FileHandler(file_name)
    else:
        _handler = logging.StreamHandler(sys.stderr)
    datefmt = str(conf.get("logger.date_format", "%H:%M:%S")).strip() or None
    _handler.setFormatter(logging.Formatter(
        "%(asctime)s %(levelname)s %(name)s: %(message)s", datefmt=datefmt))
    root.addHandler(_handler)
    root.propagate = False


class Throttled:
    """Log at most once per ``interval`` seconds; counts what it suppressed.

    For code that runs every cycle (Runs in: any thread; not thread-safe per instance).
    """

    __slots__ = ("_log", "_interval", "_next", "_suppressed")

    def __init__(self, logger: logging.Logger, interval: float = 1.0):
        self._log = logger
        self._interval = interval
        self._next = 0.0
        self._suppressed = 0

    def log(self, level: int, msg: str, *args: object) -> bool:
        now = _monotonic()
        if now < self._next:
            self._suppressed += 1
            return False
        return self._emit(now, level, msg, args)

    def _emit(self, now: float, level: int, msg: str, args: tuple) -> bool:
        self._next = now + self._interval
        if self._suppressed:
            msg = f"{msg} ({self._suppressed} similar messages suppressed)"
            self._suppressed = 0
        self._log.log(level, msg, *args)
        return True

    # warning / error: log's suppressed path written out (a call less for what cycle code
    # calls nearly every period while a condition lasts); the same steps, the same text
    def warning(self, msg: str, *args: object) -> bool:
        now = _monotonic()
        if now < self._next:
            self._suppressed += 1
            return False
        return self._emit(now, logging.WARNING, msg, args)

    def error(self, msg: str, *args: object) -> bool:
        now = _monotonic()
        if now < self._next:
            self._suppressed += 1
            return False
        return self._emit(now, logging.ERROR, msg, args)
