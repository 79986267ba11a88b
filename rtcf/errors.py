"""Typed exceptions of rtcf, all in one module (house style rule 8).

Expected outcomes are status values (ReadStatus, ReturnCode); these exceptions are for
faults and for bad input, which must be reported at once with a message that names what
was wrong.
"""

from __future__ import annotations


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


class PortError(RtcfError):
    """A data port operation was rejected (bad connection, wrong data type, ...)."""


class LifecycleError(RtcfError):
    """A lifecycle request is not allowed in the current state (PRECONDITION_NOT_MET)."""


class TransitionTimeout(LifecycleError):
    """A synchronous state transition did not complete within the transition timeout."""


class ComponentFault(RtcfError):
    """A component hook returned an error code instead of raising."""
