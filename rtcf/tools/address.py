"""Addresses of components and ports, read the way rtshell reads them (no ORB here).

rtshell (rtshell/path.py, rtctree/path.py of the installed rtshell-aist / rtctree-aist)
turns what the user typed into a full path: an address starting with ``/`` is used as it
is; otherwise ``$RTCSH_CWD`` (rtcwd's current directory) is put in front, or ``/`` when that
is unset. The segment after the leading ``/`` is the naming service (``host`` or
``host:port``, default port 2809), the rest are naming contexts and the component
(``id.kind``), and ``:port`` after the last segment names a port:

    localhost:2809/host.host_cxt/DCM0.rtc:q     -> server localhost:2809, port q
    /localhost/host.host_cxt/DCM0.rtc:q         -> server localhost:2809
    DCM0.rtc:q  or  DCM0:q                      -> (rtcf's short form) found by name on
                                                   every naming service in use

The short form is rtcf's addition for a single segment with no ``RTCSH_CWD``: the component
is searched by instance name under any context of the naming services that rtshell would use
(``RTCTREE_NAMESERVERS``, ``;``-separated, or those given with ``-n``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from rtcf.errors import AddressError

__all__ = ["Address", "AddressError", "parse_address", "normalise_server",
           "nameservers_from_env", "DEFAULT_NS_PORT"]

DEFAULT_NS_PORT = 2809
NAMESERVERS_ENV = "RTCTREE_NAMESERVERS"
CWD_ENV = "RTCSH_CWD"



@dataclass(frozen=True)
class Address:
    """A parsed address. ``server`` is ``host:port`` or None for the short form (search by
    name); ``path`` the naming path below the server (``["h.host_cxt", "DCM0.rtc"]``; for the
    short form just the component, kind ``rtc`` added); ``port`` the port name or None.
    Runs in: any thread (plain data)."""

    text: str
    server: str | None
    path: tuple[str, ...] = field(default_factory=tuple)
    port: str | None = None

    @property
    def component(self) -> str:
        """The component's instance name (the last path segment without ``.rtc``)."""
        last = self.path[-1] if self.path else ""
        return last[:-4] if last.endswith(".rtc") else last

    @property
    def naming_path(self) -> str:
        return "/".join(self.path)

    def __str__(self) -> str:
        base = f"{self.server}/{self.naming_path}" if self.server else self.naming_path
        return f"{base}:{self.port}" if self.port else base


def normalise_server(spec: str) -> str:
    """``host`` -> ``host:2809``; ``host:port`` checked; AddressError when malformed."""
    s = spec.strip()
    if not s:
        raise AddressError("empty naming service address")
    host, sep, port = s.rpartition(":") if ":" in s else (s, "", "")
    if sep and (not port.isdigit() or not 0 < int(port) < 65536):
        raise AddressError(f"bad naming service port in {spec!r} (expected host:port)")
    if not host:
        raise AddressError(f"no host in naming service address {spec!r}")
    return f"{host}:{int(port) if sep else DEFAULT_NS_PORT}"


def nameservers_from_env(environ: dict[str, str] | None = None) -> list[str]:
    """The naming services of ``RTCTREE_NAMESERVERS`` (as rtctree splits it), normalised."""
    env = os.environ if environ is None else environ
    return [normalise_server(s) for s in env.get(NAMESERVERS_ENV, "").split(";") if s.strip()]


def _split_port(last: str, text: str) -> tuple[str, str | None]:
    bits = last.split(":")
    if len(bits) == 1:
        return bits[0], None
    if len(bits) == 2:
        return bits[0], (bits[1] or None)
    raise AddressError(f"bad address {text!r}: more than one ':' in {last!r}")


def parse_address(text: str, want_port: bool | None = None,
                  environ: dict[str, str] | None = None) -> Address:
    """Parse a component or port address (see the module doc). ``want_port`` True: a port
    must be named; False: none may be. Raises AddressError with a one-line reason."""
    env = os.environ if environ is None else environ
    raw = (text or "").strip()
    if not raw:
        raise AddressError("empty address")
    cwd = env.get(CWD_ENV, "")
    if not raw.startswith("/") and "/" not in raw and not cwd:
        name, port = _split_port(raw, text)
        if not name:
            raise AddressError(f"bad address {text!r}: no component name")
        seg = name if "." in name else f"{name}.rtc"
        addr = Address(text, None, (seg,), port)
    else:
        full = raw if raw.startswith("/") else (cwd.rstrip("/") + "/" + raw if cwd
                                                else "/" + raw)
        bits = full.lstrip("/").split("/")
        if bits and bits[-1]:
            bits[-1], port = _split_port(bits[-1], text)
        else:
            port = None
        kept: list[str] = []
        for b in bits:              # rtctree: '.' dropped, '..' removes the previous one
            if b in ("", "."):
                continue
            if b == "..":
                kept = kept[:-1]
                continue
            kept.append(b)
        if len(kept) < 2:
            raise AddressError(f"bad address {text!r}: expected "
                               f"host[:port]/context.../component.rtc[:port]")
        addr = Address(text, normalise_server(kept[0]), tuple(kept[1:]), port)
    if want_port is True and not addr.port:
        raise AddressError(f"{text!r} names no port (add :PORT, e.g. {text}:out)")
    if want_port is False and addr.port:
        raise AddressError(f"{text!r} names a port; a component was expected")
    return addr
