"""DCMProxy: the NAOqi DCM API with its nested-list (ALValue) arguments, over CORBA.

The Python examples of NAOqi's DCM documentation run unchanged once the proxy is obtained::

    dcm = DCMProxy("DCM0")                 # instead of ALProxy("DCM", "127.0.0.1", 9559)
    dcm.createAlias(["ChestLeds", ["ChestBoard/Led/Red/Actuator/Value", ...]])
    dcm.setAlias(["ChestLeds", "ClearAll", "time-mixed", [[[1.0, dcm.getTime(4000)]], ...]])

The proxy maps the lists onto the typed operations of idl/DCMService.idl. Errors raise
``DCMError`` with the reason (``.reason``): a RuntimeError, as every NAOqi proxy's errors
are in NAOqi's Python SDK (so ``except RuntimeError`` catches it), and a NAO::DCMError (so
code catching the IDL type keeps working); the DCM's own refusals, which arrive as
NAO::DCMError, are raised as a DCMError too. Arguments that cannot be what the DCM
documents, or cannot travel in the IDL types, are refused here before anything is sent: lists of the wrong shape (at any nesting depth),
strings that are not Latin-1 (a CORBA string; lone surrogates included), keys that are not a
list of strings, times outside [-2^31, 2^32-1] ms, values that are not finite numbers.
Everything else is validated by the DCM itself (a rejected call changes nothing). A DCM that
cannot be reached raises the CORBA system exception (TRANSIENT, COMM_FAILURE) unchanged;
no naming service at ``nameserver`` is a ConnectionError saying so.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Iterator

from omniORB import CORBA

from rtcf.corba.idl import stub_module

from .timeline import (TIME_MAX, TIME_MIN, DcmError, check_importance, check_time,
                       check_value, is_int, is_seq, parse_timed_list, show)

NAO = stub_module("NAO")
OFFSET_SPAN = TIME_MAX - TIME_MIN   # a getTime offset can at most span the time range [ms]


class DCMError(NAO.DCMError, RuntimeError):
    """A call the DCM refuses: a RuntimeError with the reason (``.reason``), as NAOqi's
    proxies raise, and the service's NAO::DCMError."""

    def __str__(self) -> str:
        return self.reason


@contextmanager
def _checked() -> Iterator[None]:
    """The core's shape checks, raised as the proxy's DCMError."""
    try:
        yield
    except DcmError as e:
        raise DCMError(str(e)) from None


def _list(x: Any, where: str) -> list:
    if not is_seq(x):
        raise DcmError(f"{where}: expected a list, got {show(x)}")
    return list(x)


def _timed(cmds: Any, api: str, where: str) -> list:
    # importance is validated and ignored (NAOqi never implemented it), so 0 goes on the wire
    return [NAO.TimedCommand(v, t, 0) for t, v in parse_timed_list(cmds, api, where)]


def _str(x: Any, where: str) -> str:
    """A string that a CORBA string can carry: Latin-1 text (no lone surrogates)."""
    if not isinstance(x, str):
        raise DcmError(f"{where}: expected a string, got {show(x)}")
    try:
        x.encode("latin-1")
    except UnicodeEncodeError as e:
        raise DcmError(f"{where}: expected Latin-1 text (a CORBA string), character "
                       f"{ascii(x[e.start])} at index {e.start} is not, got {show(x)}") from None
    return x


def _send(call: Callable[..., Any], *args: Any) -> Any:
    """Make the remote call; the DCM's refusal and a marshalling refusal of the ORB become
    a DCMError (the checks above should have caught the latter first). Transport failures
    pass unchanged."""
    try:
        return call(*args)
    except NAO.DCMError as e:
        if isinstance(e, DCMError):
            raise
        raise DCMError(e.reason) from None
    except (CORBA.BAD_PARAM, CORBA.DATA_CONVERSION, CORBA.MARSHAL) as e:
        raise DCMError(f"the arguments cannot be sent in the IDL types: "
                       f"{type(e).__name__}") from None


class DCMProxy:
    """NAOqi-style DCM client. ``service`` may be given directly (an object reference or an
    in-process servant); otherwise the DCM component ``name`` is found in the naming
    service ``nameserver``."""

    def __init__(self, name: str = "DCM0", nameserver: str = "localhost:2809",
                 service: Any = None):
        if service is None:
            from rtcf.corba.client import get_service
            service = get_service(name, "DCMService", stub=NAO.DCMService,
                                  nameserver=nameserver)
        self.service = service

    def getTime(self, offset: int = 0) -> int:
        if not is_int(offset) or not -OFFSET_SPAN <= offset <= OFFSET_SPAN:
            raise DCMError(f"getTime: offset must be an int [ms] within +-{OFFSET_SPAN},"
                           f" got {show(offset)}")
        return _send(self.service.getTime, int(offset))

    def set(self, commands: Any) -> None:
        with _checked():
            c = _list(commands, "set")
            if len(c) != 3:
                raise DcmError(f"set: expected [name, updateKind, [[value, time], ...]], "
                               f"got {len(c)} elements")
            args = (_str(c[0], "set: [0]"), _str(c[1], "set: [1]"), _timed(c[2], "set", "[2]"))
        _send(self.service.set, *args)

    def createAlias(self, alias: Any) -> list:
        with _checked():
            a = _list(alias, "createAlias")
            if len(a) != 2:
                raise DcmError(f"createAlias: expected [aliasName, [actuatorName, ...]], "
                               f"got {len(a)} elements")
            name = _str(a[0], "createAlias: [0]")
            names = [_str(n, f"createAlias: [1][{i}]")
                     for i, n in enumerate(_list(a[1], "createAlias: [1]"))]
        return [name, list(_send(self.service.createAlias, name, names))]

    def setAlias(self, commands: Any) -> None:
        api = "setAlias"
        with _checked():
            c = _list(commands, api)
            mode = c[2] if len(c) > 2 else None
            if mode not in ("time-mixed", "time-separate"):
                raise DcmError(f"{api}: [2] must be 'time-mixed' or 'time-separate', "
                               f"got {show(mode)}")
            size = 4 if mode == "time-mixed" else 6
            if len(c) != size:
                raise DcmError(f"{api}: {mode} takes {size} elements, got {len(c)}")
            name, kind = _str(c[0], f"{api}: [0]"), _str(c[1], f"{api}: [1]")
            if mode == "time-mixed":
                members = [_timed(m, api, f"[3][{x}]")
                           for x, m in enumerate(_list(c[3], f"{api}: [3]"))]
            else:
                check_importance(c[3], api, "[3]")
                times = [check_time(t, api, f"[4][{k}]")
                         for k, t in enumerate(_list(c[4], f"{api}: [4]"))]
                values = [[check_value(v, api, f"[5][{x}][{k}]")
                           for k, v in enumerate(_list(row, f"{api}: [5][{x}]"))]
                          for x, row in enumerate(_list(c[5], f"{api}: [5]"))]
        if mode == "time-mixed":
            _send(self.service.setAliasTimeMixed, name, kind, members)
        else:   # importance is validated and ignored (never implemented): 0 fits the IDL long
            _send(self.service.setAliasTimeSeparate, name, kind, 0, times, values)

    # ALMemory-style reads
    def getValue(self, key: str) -> float:
        with _checked():
            key = _str(key, "getValue")
        return _send(self.service.getValue, key)

    def getValues(self, keys: list[str]) -> list[float]:
        with _checked():
            keys = [_str(k, f"getValues: [{i}]")
                    for i, k in enumerate(_list(keys, "getValues"))]
        return list(_send(self.service.getValues, keys))
