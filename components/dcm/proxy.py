"""DCMProxy: the NAOqi DCM API with its nested-list (ALValue) arguments, over CORBA.

The seed's Python examples run unchanged once the proxy is obtained::

    dcm = DCMProxy("DCM0")                 # instead of ALProxy("DCM", "127.0.0.1", 9559)
    dcm.createAlias(["ChestLeds", ["ChestBoard/Led/Red/Actuator/Value", ...]])
    dcm.setAlias(["ChestLeds", "ClearAll", "time-mixed", [[[1.0, dcm.getTime(4000)]], ...]])

The proxy maps the lists onto the typed operations of idl/DCMService.idl. Lists that do not
have the documented shape raise NAO::DCMError here, with the same kind of reason the DCM
gives; everything else is validated by the DCM itself (a rejected call changes nothing).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

from rtcf.corba.idl import stub_module

from .timeline import (DcmError, _check_importance, _check_time, _check_value, _is_int,
                       _is_seq, _parse_timed_list)

NAO = stub_module("NAO")


@contextmanager
def _checked() -> Iterator[None]:
    """The core's shape checks, raised as the service's own exception type."""
    try:
        yield
    except DcmError as e:
        raise NAO.DCMError(str(e)) from None


def _list(x: Any, where: str) -> list:
    if not _is_seq(x):
        raise DcmError(f"{where}: expected a list, got {x!r}")
    return list(x)


def _timed(cmds: Any, api: str, where: str) -> list:
    # importance is validated and ignored (spec 1.6), so 0 goes on the wire
    return [NAO.TimedCommand(v, t, 0) for t, v in _parse_timed_list(cmds, api, where)]


def _str(x: Any, where: str) -> str:
    if not isinstance(x, str):
        raise DcmError(f"{where}: expected a string, got {x!r}")
    return x


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
        if not _is_int(offset):
            raise NAO.DCMError(f"getTime: offset must be an int [ms], got {offset!r}")
        return self.service.getTime(int(offset))

    def set(self, commands: Any) -> None:
        with _checked():
            c = _list(commands, "set")
            if len(c) != 3:
                raise DcmError(f"set: expected [name, updateKind, [[value, time], ...]], "
                               f"got {len(c)} elements")
            args = (_str(c[0], "set: [0]"), _str(c[1], "set: [1]"), _timed(c[2], "set", "[2]"))
        self.service.set(*args)

    def createAlias(self, alias: Any) -> list:
        with _checked():
            a = _list(alias, "createAlias")
            if len(a) != 2:
                raise DcmError(f"createAlias: expected [aliasName, [actuatorName, ...]], "
                               f"got {len(a)} elements")
            name = _str(a[0], "createAlias: [0]")
            names = [_str(n, f"createAlias: [1][{i}]")
                     for i, n in enumerate(_list(a[1], "createAlias: [1]"))]
        return [name, list(self.service.createAlias(name, names))]

    def setAlias(self, commands: Any) -> None:
        api = "setAlias"
        with _checked():
            c = _list(commands, api)
            mode = c[2] if len(c) > 2 else None
            if mode not in ("time-mixed", "time-separate"):
                raise DcmError(f"{api}: [2] must be 'time-mixed' or 'time-separate', "
                               f"got {mode!r}")
            size = 4 if mode == "time-mixed" else 6
            if len(c) != size:
                raise DcmError(f"{api}: {mode} takes {size} elements, got {len(c)}")
            name, kind = _str(c[0], f"{api}: [0]"), _str(c[1], f"{api}: [1]")
            if mode == "time-mixed":
                members = [_timed(m, api, f"[3][{x}]")
                           for x, m in enumerate(_list(c[3], f"{api}: [3]"))]
            else:
                _check_importance(c[3], api, "[3]")
                times = [_check_time(t, api, f"[4][{k}]")
                         for k, t in enumerate(_list(c[4], f"{api}: [4]"))]
                values = [[_check_value(v, api, f"[5][{x}][{k}]")
                           for k, v in enumerate(_list(row, f"{api}: [5][{x}]"))]
                          for x, row in enumerate(_list(c[5], f"{api}: [5]"))]
        if mode == "time-mixed":
            self.service.setAliasTimeMixed(name, kind, members)
        else:
            self.service.setAliasTimeSeparate(name, kind, int(c[3]), times, values)

    # ALMemory-style reads
    def getValue(self, key: str) -> float:
        return self.service.getValue(key)

    def getValues(self, keys: list[str]) -> list[float]:
        return list(self.service.getValues(list(keys)))
