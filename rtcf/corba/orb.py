"""The process-wide omniORB ORB and root POA.

``init_orb(conf)`` reads the OpenRTM keys ``corba.endpoints`` (``IP``, ``IP:port``, several
separated by commas or semicolons, or ``all``; default loopback only) and ``corba.args``
(passed to ORB_init, split like a shell line). Unless ``corba.args`` sets them, a client call
times out after 10 s and a connect after 1 s, so a dead peer never blocks a caller for long.
omniORB runs its own server threads: there is no ORB thread to start.
"""

from __future__ import annotations

import shlex
import threading
from typing import Any

from omniORB import CORBA  # noqa: F401  (re-exported for the other corba modules)

__all__ = ["init_orb", "shutdown_orb", "get_orb", "root_poa", "object_to_string",
           "string_to_object", "orb_args", "call_timeout"]

DEFAULT_CALL_TIMEOUT_MS = 10000
DEFAULT_CONNECT_TIMEOUT_MS = 1000

_lock = threading.Lock()
_orb: Any = None
_poa: Any = None
_call_timeout_ms = DEFAULT_CALL_TIMEOUT_MS      # what the ORB was given (0: none)


def _endpoint_args(spec: str) -> list[str]:
    spec = spec.strip()
    if not spec:
        return ["-ORBendPoint", "giop:tcp:127.0.0.1:"]
    out: list[str] = []
    for item in spec.replace(";", ",").split(","):
        item = item.strip()
        if not item:
            continue
        if item.lower() == "all":
            out += ["-ORBendPoint", "giop:tcp::"]
            continue
        host, _, port = item.rpartition(":") if ":" in item else (item, "", "")
        if port and not port.isdigit():
            raise ValueError(f"corba.endpoints: bad port in {item!r}")
        out += ["-ORBendPoint", f"giop:tcp:{host}:{port}"]
    return out


def orb_args(conf: dict[str, str]) -> list[str]:
    """The ORB_init argument list built from rtc.conf keys."""
    extra = shlex.split(conf.get("corba.args", ""))
    args = ["rtcf"]
    if not any(a.startswith("-ORBendPoint") for a in extra):
        args += _endpoint_args(conf.get("corba.endpoints", conf.get("corba.endpoint", "")))
    if "-ORBclientCallTimeOutPeriod" not in extra:
        args += ["-ORBclientCallTimeOutPeriod", str(DEFAULT_CALL_TIMEOUT_MS)]
    if "-ORBclientConnectTimeOutPeriod" not in extra:
        args += ["-ORBclientConnectTimeOutPeriod", str(DEFAULT_CONNECT_TIMEOUT_MS)]
    return args + extra


def init_orb(conf: dict[str, str] | None = None) -> Any:
    """The process's ORB, created on the first call (later calls return it and ignore conf);
    the root POA is activated."""
    global _orb, _poa, _call_timeout_ms
    with _lock:
        if _orb is None:
            args = orb_args(conf or {})
            timeout_ms = _option(args, "-ORBclientCallTimeOutPeriod", _call_timeout_ms)
            try:
                orb = CORBA.ORB_init(args, CORBA.ORB_ID)      # removes the options it took
                poa = orb.resolve_initial_references("RootPOA")   # opens the endpoints
                poa._get_the_POAManager().activate()
            except CORBA.INITIALIZE:
                from ..errors import ConfigError
                raise ConfigError(
                    "the ORB cannot start: cannot listen on corba.endpoints "
                    f"{(conf or {}).get('corba.endpoints', '')!r} (an address of this host "
                    "and a free port, or all) with corba.args "
                    f"{(conf or {}).get('corba.args', '')!r}") from None
            _orb, _poa, _call_timeout_ms = orb, poa, timeout_ms
        return _orb


def _option(args: list[str], name: str, default: int) -> int:
    """The integer value of the last ``name`` in an ORB_init argument list."""
    try:
        k = len(args) - 1 - args[::-1].index(name)
        return int(args[k + 1])
    except (ValueError, IndexError):
        return default


def call_timeout() -> float:
    """[s] the client call timeout the process's ORB was given (0: none). Runs in: any
    thread."""
    return _call_timeout_ms / 1000.0


def get_orb() -> Any:
    """The ORB created by init_orb; RuntimeError before."""
    if _orb is None:
        raise RuntimeError("the ORB is not initialised: call rtcf.corba.orb.init_orb first")
    return _orb


def root_poa() -> Any:
    get_orb()
    return _poa


def shutdown_orb(wait: bool = True) -> None:
    """Shut the ORB down and destroy it; init_orb may then create a new one."""
    global _orb, _poa
    with _lock:
        orb, _orb, _poa = _orb, None, None
    if orb is not None:
        try:
            orb.shutdown(wait)
            orb.destroy()
        except CORBA.Exception:
            pass


def object_to_string(obj: Any) -> str:
    return get_orb().object_to_string(obj)


def string_to_object(ior: str) -> Any:
    return get_orb().string_to_object(ior)
