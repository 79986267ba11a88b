"""The manager's web view: ``scripts/run --web`` (or ``rtcf.web.enable: YES``) starts
``python -m rtcf.web`` as a child process against the manager's own naming service, so the
server shares no interpreter (no GIL) with the execution contexts. The child ends with the
manager: stopped at shutdown, and through PR_SET_PDEATHSIG plus a parent-pid poll when the
manager is killed (kill -9 included). Runs in: the manager's main thread.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from typing import Any, Mapping

from .. import rtcconf
from ..errors import ConfigError
from ..realtime import spawning_normal

DEFAULT_PORT = 8780
STOP_TIMEOUT = 3.0      # [s] after SIGTERM, then SIGKILL


def web_settings(conf: Mapping[str, str]) -> tuple[str, int]:
    """(address, port) from rtcf.web.address / rtcf.web.port (ConfigError when bad)."""
    address = str(conf.get("rtcf.web.address", "127.0.0.1")).strip() or "127.0.0.1"
    port = rtcconf.get_int(conf, "rtcf.web.port", DEFAULT_PORT)
    if not 0 <= port < 65536:
        raise ConfigError(f"{rtcconf.where(conf, 'rtcf.web.port')}: rtcf.web.port: "
                          f"expected a TCP port 0-65535, got {port}")
    return address, port


def _free_port(address: str) -> int:
    """A TCP port free at ``address`` now (0 when the address cannot be bound: the check
    after this says why)."""
    import socket
    try:
        infos = socket.getaddrinfo(address, 0, type=socket.SOCK_STREAM)
        with socket.socket(infos[0][0], socket.SOCK_STREAM) as s:
            s.bind(infos[0][4])
            return s.getsockname()[1]
    except OSError:
        return 0


def allowed_hosts(conf: Mapping[str, str]) -> list[str]:
    """The names of rtcf.web.allowed_hosts (comma-separated host[:port]; ConfigError naming
    the bad one): the host names the web view answers to besides its address, localhost
    and the loopback addresses (see rtcf.web.hosts: DNS rebinding)."""
    from .hosts import check_allowed
    text = str(conf.get("rtcf.web.allowed_hosts", "")).strip()
    names = [n.strip() for n in text.split(",") if n.strip()]
    for name in names:
        problem = check_allowed(name)
        if problem:
            raise ConfigError(f"{rtcconf.where(conf, 'rtcf.web.allowed_hosts')}: "
                              f"rtcf.web.allowed_hosts: {problem}")
    return names


def naming_address(conf: Mapping[str, str]) -> str:
    """The manager's first naming service, as host:port (rtcf.tools.address reads it as
    rtshell does: the default port 2809)."""
    from ..tools.address import normalise_server
    first = str(conf.get("corba.nameservers", "localhost:2809")).split(",")[0].strip()
    return normalise_server(first or "localhost")


class WebChild:
    """The running web server process."""

    def __init__(self, proc: subprocess.Popen, url: str):
        self.proc = proc
        self.url = url

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(STOP_TIMEOUT)


def start_web(conf: Mapping[str, str], log: Any) -> WebChild | None:
    """Start the web server child; None (and a warning naming why) when it cannot listen:
    the system runs on without its web view."""
    from .server import check_address
    address, port = web_settings(conf)
    allowed = allowed_hosts(conf)
    if port == 0:          # any free port: chosen here, so the URL logged is the real one
        port = _free_port(address)
    problem = check_address(address, port)
    if problem:
        log.warning("web view not started: %s (set rtcf.web.port / rtcf.web.address)",
                    problem)
        return None
    cmd = [sys.executable, "-m", "rtcf.web", "-n", naming_address(conf),
           "--address", address, "--port", str(port), "--parent-pid", str(os.getpid()),
           "--push-rate", str(conf.get("rtcf.web.push_rate", "50")).strip() or "50"]
    for name in allowed:
        cmd += ["--allow-host", name]
    fox = str(conf.get("rtcf.web.foxglove_port", "")).strip()
    if fox:
        cmd += ["--foxglove-port", fox]
    with spawning_normal():
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, start_new_session=True)
    url = f"http://[{address}]:{port}/" if ":" in address else f"http://{address}:{port}/"
    log.info("web view at %s (a separate process, pid %d)", url, proc.pid)
    return WebChild(proc, url)
