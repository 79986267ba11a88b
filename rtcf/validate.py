"""Validators and limits shared by the configuration readers and the runtime.

Dependency-free (the standard library only): the composition and rtc.conf readers check
values with these before any runtime module is imported, and the runtime checks the same
values with the same words.
"""

from __future__ import annotations

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
