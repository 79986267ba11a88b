"""Typed exceptions of rtcf, all in one module (house style rule 8).

Expected outcomes are status values (ReadStatus, ReturnCode); these exceptions are for
faults and for bad input, which must be reported at once with a message that names what
was wrong.
"""

from __future__ import annotations

import reprlib
from typing import Any

__all__ = ["RtcfError", "ConfigError", "CompositionError", "ParamError", "ModuleError",
           "PortError", "LifecycleError", "ToolError", "AddressError", "ValueShapeError",
           "RecordingError", "ActionError", "NoNamingService", "IdlBuildError",
           "LockstepError", "show_value", "SHOW_LIMIT"]

#: Longest echo of a bad value in an error message [characters] (a 1 MB key is not echoed).
SHOW_LIMIT = 80

# Bounded repr: nesting, list lengths and strings are cut, so a deeply nested or huge value
# costs neither a RecursionError nor a megabyte of message.
_REPR = reprlib.Repr()
_REPR.maxlevel = 4
_REPR.maxlist = _REPR.maxtuple = _REPR.maxset = _REPR.maxdict = 8
_REPR.maxstring = _REPR.maxother = SHOW_LIMIT


def show_value(value: Any, limit: int = SHOW_LIMIT) -> str:
    """The value as error messages echo it: its repr, cut to about ``limit`` characters
    with ``...`` and the full length, e.g. ``'aaaa...' (1048576 chars)``."""
    size = ""
    try:
        if isinstance(value, (str, bytes, bytearray)):
            text = repr(value[:limit + 1])
            size = f"{len(value)} chars" if isinstance(value, str) else f"{len(value)} bytes"
            cut = len(value) > limit or len(text) > limit
        else:
            text = _REPR.repr(value)
            try:
                size = f"{len(value)} items"
            except TypeError:
                size = ""
            cut = len(text) > limit or "..." in text
    except Exception:  # a repr that fails must not hide the error being reported
        return f"<{type(value).__name__}>"
    if not cut:
        return text
    text = text if len(text) <= limit else text[:limit] + "..."
    return f"{text} ({size})" if size else text


class RtcfError(Exception):
    """Base class of every rtcf exception."""


class ConfigError(RtcfError, ValueError):
    """A configuration value (rtc.conf key, parameter, connector property) is invalid."""


class CompositionError(ConfigError):
    """A composition (YAML file or rtc.conf manager keys) is invalid.

    ``errors`` holds every problem found, each already formatted as
    ``file: path: message, got value``.
    """

    def __init__(self, errors: list[str] | str):
        if isinstance(errors, str):
            errors = [errors]
        self.errors = list(errors)
        super().__init__("\n".join(self.errors))


class ParamError(ConfigError):
    """A parameter value or configuration set operation was rejected."""


class ModuleError(RtcfError, LookupError):
    """A component module that cannot be imported: not found, refused by name, or its own
    code failed while being imported. The composition check reports it at ``.module``
    (an unknown type in a module that imports is a LookupError reported at ``.type``)."""


class PortError(RtcfError):
    """A data port operation was rejected (bad connection, wrong data type, ...)."""


class LifecycleError(RtcfError):
    """A lifecycle request is not allowed in the current state (PRECONDITION_NOT_MET)."""


class ToolError(RtcfError):
    """A user's mistake with an observing tool (rtcf.tools: an address, a port, a value, a
    file) or a system it cannot reach; the message is one line naming it."""


class AddressError(ToolError, ValueError):
    """An address that cannot name a component or a port."""


class ValueShapeError(ToolError, ValueError):
    """A value that does not fit a port's data type."""


class RecordingError(ToolError):
    """An MCAP file that cannot be used: missing, not MCAP, truncated, unknown types."""


class ActionError(ToolError):
    """An operation the web view's page asked for was refused; the message says why (one
    line)."""


class NoNamingService(ToolError, ConnectionError):
    """No CosNaming service answers at the address a client or tool was given (the one
    message: rtcf.corba.client.no_naming_message)."""


class IdlBuildError(RtcfError, RuntimeError):
    """omniidl failed or could not be found; the message carries its output."""


class LockstepError(RtcfError):
    """A simulation across processes (rtcf.lockstep) cannot go on: a process that does not
    answer a step (dead, hung past the step timeout) or answers out of step. The run ends;
    simulated time stays at the instant that could not complete (no cycle is dropped or
    made up)."""

    def __init__(self, process: str, ecs: list[str], t: float, reason: str):
        self.process = process
        self.ecs = list(ecs)
        self.t = t
        self.reason = reason
        what = ", ".join(repr(e) for e in ecs)
        super().__init__(f"lockstep: process {process!r} (execution context"
                         f"{'s' if len(ecs) > 1 else ''} {what}) failed the step at "
                         f"simulated time {t:.6f} s: {reason}; simulated time is paused "
                         f"there and the run ends")
