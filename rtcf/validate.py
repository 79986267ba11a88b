"""Validators and limits shared by the configuration readers and the runtime.

Dependency-free (the standard library only): the composition and rtc.conf readers check
values with these without importing a runtime module, and the runtime checks the same
values with the same limits and words. Each ``check_*`` returns None for a good value, else
what is wrong, for an error message that adds where and the value. Runs in: any thread.
"""

from __future__ import annotations

import ipaddress
import math
import re
from numbers import Real
from typing import Any

# Sane EC rates [Hz]. Lifecycle requests are applied at cycle boundaries and a synchronous
# one waits up to two periods: below RATE_MIN, activation and shutdown would seem to hang
# (at 0.01 Hz a Ctrl-C took 100 s; at 1e-9 Hz for ever). Above RATE_MAX the period (< 100 us)
# is shorter than the lateness a Python EC sees on a loaded machine (p99 ~270 us measured on
# the development VM), so nearly every cycle would overrun. Slower work runs every n-th
# cycle of a 1 Hz (or faster) EC.
RATE_MIN = 1.0
RATE_MAX = 10_000.0
EC_PRIORITY = 50          # the SCHED_FIFO priority of EC threads (rtcf.execution, rtcf.simtime)

CALL_TIMEOUT_MIN, CALL_TIMEOUT_MAX = 0.001, 60.0   # [s] dataport.call_timeout


def _number(value: object) -> bool:
    """A real number that is not a bool (numpy's scalars count: they register as Real)."""
    return isinstance(value, Real) and not isinstance(value, bool)


def check_rate(rate: object) -> str | None:
    """An execution context's rate [Hz]: a finite number in [RATE_MIN, RATE_MAX]."""
    if not _number(rate):
        return "expected a number [Hz]"
    if not RATE_MIN <= float(rate) <= RATE_MAX:   # False for NaN
        return f"expected a rate between {RATE_MIN:g} and {RATE_MAX:g} [Hz]"
    return None


def check_factor(factor: object) -> str | None:
    """A simulation's real-time factor: a finite number >= 0."""
    if not _number(factor) or not 0.0 <= float(factor) < math.inf:   # False for NaN
        return "expected a number >= 0 (0 = as fast as possible, 1 = real time)"
    return None

# OpenRTM's boolean words (coil::toBool accepts YES/NO; rtc.conf files in the wild also
# write TRUE/FALSE, ON/OFF and 1/0), compared case-insensitively
TRUE_WORDS = frozenset({"yes", "true", "on", "1"})
FALSE_WORDS = frozenset({"no", "false", "off", "0"})


def parse_yes_no(text: object) -> bool | None:
    """True or False for a boolean word (YES NO TRUE FALSE ON OFF 1 0, any case, blanks
    around it ignored), None for anything else (the caller says what was expected and
    where). Runs in: any thread."""
    if not isinstance(text, str):
        return None
    word = text.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    return None


# host names of the web view's rtcf.web.allowed_hosts / --allow-host (rtcf.web.hosts)
_LABEL = r"(?!-)[a-z0-9-]{1,63}(?<!-)"
_NAME = re.compile(rf"^{_LABEL}(\.{_LABEL})*$")


def ip_literal(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The IP address ``text`` is a literal of, else None."""
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def split_host(text: str, default_port: int = 80) -> tuple[str, int] | None:
    """``name[:port]`` / ``[v6]:port`` -> (lower-case name, port); None when malformed."""
    text = text.strip().lower()
    if text.startswith("["):
        name, sep, rest = text[1:].partition("]")
        if not sep or ip_literal(name) is None or ip_literal(name).version != 6:
            return None
        port_text = rest[1:] if rest.startswith(":") else None
        if rest and port_text is None:
            return None
    elif text.count(":") > 1:
        return None
    else:
        name, sep, port_text = text.partition(":")
        port_text = port_text if sep else None
        if not (_NAME.match(name) or ip_literal(name) is not None):
            return None
    if port_text is None:
        return name, default_port
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        return None
    return name, int(port_text)


def check_allowed(entry: str) -> str | None:
    """Why ``entry`` (an item of rtcf.web.allowed_hosts) is not a host name[:port], or
    None."""
    if split_host(entry, 1) is None:
        return (f"expected a host name or address, optionally with :port (robot.local, "
                f"10.0.0.7, robot.local:9000), got {entry!r}")
    return None


def same_value(got: Any, want: Any) -> bool:
    """``got`` (a member read off an IDL struct: a sequence arrives as a list or a tuple)
    equals ``want``: sequences element by element, numbers to a relative 1e-9 (at least 1e-9
    absolute: a double that went through the wire and a unit conversion), anything else by
    ``==``."""
    if isinstance(want, (list, tuple)):
        items = list(got)
        return len(items) == len(want) and all(same_value(x, y) for x, y in zip(items, want))
    if isinstance(want, float) or isinstance(got, float):
        return abs(float(got) - float(want)) <= 1e-9 * max(1.0, abs(float(want)))
    return bool(got == want)
