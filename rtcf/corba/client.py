"""The client side of CORBA, for client scripts, proxies and the tools (rtcf.tools.session):
the naming service reached with one error when it is missing, components resolved and
narrowed, and one call from a component name to its provided service object.

    from rtcf.corba.client import get_service
    dcm = get_service("DCM0", "DCMService", stub=DCMService)     # narrowed object reference

The component is looked up in the naming service (``<host>.host_cxt/<name>.rtc`` by default,
or any full path with ``/``); the provided interface is found on its service ports and its
IOR read the way hrpsys's rtm.py does it: connect the port to itself, read
``port.<type>.<instance>`` from the returned profile, disconnect.

When nothing answers at ``nameserver`` the error is a :class:`~rtcf.errors.NoNamingService`
(a ConnectionError, and a ToolError for the tools) that says so and how to point at another
one (:func:`no_naming_message`, the one sentence for every client and tool), not a bare
CORBA.TRANSIENT.

Waiting for a motion of any length: the ORB gives every client call a timeout (10 s, see
rtcf.corba.orb), so a proxy never waits for a motion in one call. It calls the service's
bounded wait (``waitMotion(timeout)``, ``waitInterpolationFor(gname, timeout)``) in chunks
well under the call timeout through :func:`wait_in_chunks`; a dead or hung server ends the loop with
the CORBA exception of the first call that fails, after at most one call timeout.
"""

from __future__ import annotations

import socket
from typing import Any, Callable, TypeVar

from omniORB import CORBA

from ..errors import NoNamingService
from .idl import ensure_stubs, stub_module
from .naming import CALL_TIMEOUT_MS, NamingClient
from .nv import from_nvlist
from .orb import init_orb


T = TypeVar("T")

# [s] one bounded wait call: far below the ORB's client call timeout (10 s by default),
# few enough calls to cost nothing; a quarter of a shorter call timeout
WAIT_CHUNK = 2.0


def wait_chunk() -> float:
    """[s] the bounded wait per call for this process's ORB (its call timeout / 4, at most
    WAIT_CHUNK). Runs in: any thread."""
    from .orb import call_timeout
    limit = call_timeout()
    return WAIT_CHUNK if limit <= 0 else min(WAIT_CHUNK, limit / 4)


def wait_in_chunks(wait_for: Callable[[float], T], running: Callable[[T], bool],
                   chunk: float | None = None) -> T:
    """Call ``wait_for(chunk)`` (a service call that blocks at most ``chunk`` [s], default
    :func:`wait_chunk`) until ``running(result)`` is false, and return that result. The
    server's own limits (a motion that outlives its plan, a component that stops executing)
    end the wait; a CORBA exception of any call propagates. Runs in: the caller's thread."""
    chunk = wait_chunk() if chunk is None else chunk
    while True:
        got = wait_for(chunk)
        if not running(got):
            return got


# What a dead address looks like to omniORB: nothing listens (TRANSIENT), the connection
# breaks (COMM_FAILURE), or something else answers (OBJECT_NOT_EXIST, BAD_PARAM for a
# malformed corbaloc).
UNREACHABLE = (CORBA.TRANSIENT, CORBA.COMM_FAILURE, CORBA.OBJECT_NOT_EXIST, CORBA.BAD_PARAM,
               CORBA.TIMEOUT)


def no_naming_message(nameserver: str, detail: str = "") -> str:
    """The one sentence every client and tool gives when the naming service is missing.
    Runs in: any thread."""
    why = f" ({detail})" if detail else ""
    return (f"no naming service answers at {nameserver}{why}: start the system with "
            f"scripts/run (it starts one on loopback), or point at the one it uses "
            f"(--nameserver host:port or RTCTREE_NAMESERVERS for the tools and scripts, "
            f"nameserver=\"host:port\" in Python, the corba.nameservers key of rtc.conf)")


def connect_naming(orb: Any, nameserver: str, timeout_ms: int = CALL_TIMEOUT_MS,
                   probe: bool = False) -> NamingClient:
    """The naming client of ``nameserver`` (``host:port``); ``probe``: list its root once
    to be sure it answers now. NoNamingService when nothing (or something else) answers.
    Runs in: any thread."""
    try:
        client = NamingClient(orb, nameserver, timeout_ms=timeout_ms)
        if probe:
            client.list("")
    except CORBA.Exception as e:
        raise NoNamingService(no_naming_message(nameserver, type(e).__name__)) from None
    except ConnectionError as e:      # something answers, but not a naming context
        raise NoNamingService(no_naming_message(nameserver, str(e))) from None
    return client


def narrow_component(obj: Any, what: str, where: str = "the naming service") -> Any:
    """``obj`` (bound at ``what`` in ``where``) as an RTC::RTObject; LookupError naming it
    when it does not answer (a stale entry) or is not an RT component. Runs in: any
    thread."""
    RTC = stub_module("RTC")
    try:
        rto = obj._narrow(RTC.RTObject)
    except UNREACHABLE as e:
        raise LookupError(f"{what}: bound in {where} but does not answer "
                          f"({type(e).__name__}): a component that stopped?") from None
    if rto is None:
        raise LookupError(f"{what}: not an RT component")
    return rto


def resolve_component(name: str, nameserver: str = "localhost:2809", orb: Any = None) -> Any:
    """The RTC::RTObject reference of component ``name`` (``<host>.host_cxt/<name>.rtc``,
    or a full naming path with ``/``): LookupError if not bound or stale, NoNamingService
    if no naming service answers at ``nameserver``. Runs in: any thread."""
    ensure_stubs()
    orb = orb or init_orb({})
    client = connect_naming(orb, nameserver)
    path = name if "/" in name else f"{socket.gethostname()}.host_cxt/{name}.rtc"
    try:
        obj = client.resolve(path)
    except UNREACHABLE as e:
        raise NoNamingService(no_naming_message(nameserver, type(e).__name__)) from None
    except LookupError:
        raise LookupError(f"{path} is not bound in the naming service at {nameserver}: is "
                          f"the system running (scripts/run), and under that name?") from None
    return narrow_component(obj, path, f"the naming service at {nameserver}")


def provided_ior(port: Any, key: str, what: str) -> str | None:
    """The IOR a service port publishes as ``key`` (``port.<type>.<instance>``): connect
    the port to itself, read the profile, disconnect (hrpsys rtm.py's way). LookupError
    when the port refuses; ``what`` names the port in it."""
    RTC = stub_module("RTC")
    cp = RTC.ConnectorProfile("rtcf-client", "", [port], [])
    code, cp = port.connect(cp)
    if code != RTC.RTC_OK:
        raise LookupError(f"{what}: connecting the port to read its IOR failed ({code})")
    try:
        return from_nvlist(cp.properties).get(key)
    finally:
        port.disconnect(cp.connector_id)


def get_service(name: str, type_name: str | None = None, *, instance: str | None = None,
                stub: Any = None, nameserver: str = "localhost:2809", orb: Any = None) -> Any:
    """The provided service ``type_name`` (optionally instance ``instance``) of component
    ``name``, narrowed to ``stub`` when given. LookupError names what was not found."""
    RTC = stub_module("RTC")
    orb = orb or init_orb({})
    rto = resolve_component(name, nameserver, orb)
    seen = []
    for port in rto.get_ports():
        prof = port.get_port_profile()
        for iface in prof.interfaces:
            if iface.polarity != RTC.PROVIDED:
                continue
            seen.append(f"{iface.type_name}.{iface.instance_name}")
            if type_name and iface.type_name != type_name:
                continue
            if instance and iface.instance_name != instance:
                continue
            key = f"port.{iface.type_name}.{iface.instance_name}"
            ior = provided_ior(port, key, f"{name}: {prof.name}")
            if not ior:
                raise LookupError(f"{name}: {prof.name} published no {key}")
            obj = orb.string_to_object(ior)
            if stub is not None:
                narrowed = obj._narrow(stub)
                if narrowed is None:
                    raise LookupError(f"{name}: {key} is not a {stub._NP_RepositoryId}")
                return narrowed
            return obj
    raise LookupError(f"{name}: no provided interface "
                      f"{type_name or ''}{'.' + instance if instance else ''} "
                      f"(provided: {', '.join(seen) or 'none'})")
