"""Which ``Host`` a request may name, and which ``Origin`` it may come from: the web view's
defence against DNS rebinding and against pages of other sites.

A page of another site cannot read or drive the view through the user's browser as long as
(a) every request names in its ``Host`` header a name this server was configured for, and
(b) a request that carries an ``Origin`` comes from the view's own origin, scheme included.
(a) stops DNS rebinding: an attacker's name (``evil.example``) made to resolve to 127.0.0.1
turns the attacker's page into a same-origin page of the view, but its requests still say
``Host: evil.example:PORT``. Accepted are the server's own address, ``localhost`` and the
loopback literals (``127.0.0.1``, ``[::1]``), each with the server's port, and the names
listed in ``rtcf.web.allowed_hosts`` / ``--allow-host`` (``name`` with the server's port, or
``name:port`` as a browser sends it through a tunnel or proxy). On a wildcard address
(``0.0.0.0``) any IP address literal is accepted too: a browser sends ``Host: 10.0.0.7``
only to 10.0.0.7, so a literal cannot be rebound; a name (``robot.local``) can, and must be
listed. Runs in: any thread (immutable after construction).
"""

from __future__ import annotations

from typing import Iterable

from ..validate import check_allowed, ip_literal as _ip, split_host

__all__ = ["HostPolicy", "LOOPBACK", "WILDCARD", "check_allowed", "split_host"]

LOOPBACK = ("localhost", "127.0.0.1", "::1")
WILDCARD = ("", "0.0.0.0", "::")


class HostPolicy:
    """The Host headers a server listening at ``address:port`` answers (see the module's
    docstring)."""

    def __init__(self, address: str, port: int, allowed: Iterable[str] = ()):
        self.address = address.strip().lower().strip("[]")
        self.port = port
        self.wildcard = self.address in WILDCARD
        self.pairs: set[tuple[str, int]] = set()
        names = list(LOOPBACK) + ([] if self.wildcard else [self.address])
        for name in names:
            self.pairs.add((self._norm(name), port))
        for entry in allowed:
            parsed = split_host(entry, port)
            if parsed is None:
                raise ValueError(check_allowed(entry))
            self.pairs.add((self._norm(parsed[0]), parsed[1]))

    @staticmethod
    def _norm(name: str) -> str:
        ip = _ip(name)
        return str(ip) if ip is not None else name

    def accepts(self, host: str | None) -> bool:
        """Whether a request with this ``Host`` header is for this server."""
        parsed = split_host(host or "")
        if parsed is None:
            return False
        name, port = self._norm(parsed[0]), parsed[1]
        if (name, port) in self.pairs:
            return True
        return self.wildcard and port == self.port and _ip(name) is not None

    def origin_ok(self, origin: str, host: str) -> bool:
        """Whether a browser's ``Origin`` is the view's own: ``http://`` + the Host the
        request names (already accepted), scheme and port included."""
        return origin.strip().lower() == f"http://{host.strip().lower()}"

    def app_origin_ok(self, origin: str, host: str) -> bool:
        """The Foxglove bridge's rule: a web site's origin (``http``/``https``, and
        ``null``, which a sandboxed frame of any site sends) only when it is the server's
        own; an application's own scheme (``file://`` of a desktop app's page, an Electron
        ``app://``) is no web site and passes."""
        o = origin.strip().lower()
        scheme = o.split("://", 1)[0] if "://" in o else ""
        if o == "null" or scheme in ("http", "https", "ws", "wss", ""):
            return self.origin_ok(origin, host)
        return True

    def names(self) -> list[str]:
        """The accepted names as ``name:port``, for messages and the start-up line."""
        out = [f"[{n}]:{p}" if ":" in n else f"{n}:{p}" for n, p in sorted(self.pairs)]
        if self.wildcard:
            out.append(f"any IP address:{self.port}")
        return out
