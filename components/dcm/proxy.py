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

import math
import numbers
from typing import Any

from rtcf.corba.idl import stub_module

NAO = stub_module("NAO")


def _err(msg: str) -> Exception:
    return NAO.DCMError(msg)


def _is_int(x: Any) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def _is_number(x: Any) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def _list(x: Any, where: str) -> list:
    if not isinstance(x, (list, tuple)):
        raise _err(f"{where}: expected a list, got {x!r}")
    return list(x)


def _timed(cmds: Any, where: str) -> list:
    out = []
    for k, c in enumerate(_list(cmds, where)):
        c = _list(c, f"{where}[{k}]")
        if len(c) not in (2, 3):
            raise _err(f"{where}[{k}]: expected [value, time(, importance)], got {c!r}")
        value, time = c[0], c[1]
        imp = c[2] if len(c) == 3 else 0
        if not _is_number(value):
            raise _err(f"{where}[{k}][0]: expected a number, got {value!r}")
        if not _is_int(time):
            what = "NaN" if isinstance(time, float) and math.isnan(time) else repr(time)
            raise _err(f"{where}[{k}][1]: expected an int DCM time [ms], got {what}")
        if not _is_int(imp) or imp < 0:
            raise _err(f"{where}[{k}][2]: expected an int importance >= 0, got {imp!r}")
        if not -2**31 <= time < 2**31:
            raise _err(f"{where}[{k}][1]: time {time} does not fit 32 bits")
        out.append(NAO.TimedCommand(float(value), int(time), int(imp)))
    return out


def _str(x: Any, where: str) -> str:
    if not isinstance(x, str):
        raise _err(f"{where}: expected a string, got {x!r}")
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
            raise _err(f"getTime: offset must be an int [ms], got {offset!r}")
        return self.service.getTime(int(offset))

    def set(self, commands: Any) -> None:
        c = _list(commands, "set")
        if len(c) != 3:
            raise _err(f"set: expected [name, updateKind, [[value, time], ...]], got "
                       f"{len(c)} elements")
        self.service.set(_str(c[0], "set: [0]"), _str(c[1], "set: [1]"),
                         _timed(c[2], "set: [2]"))

    def createAlias(self, alias: Any) -> list:
        a = _list(alias, "createAlias")
        if len(a) != 2:
            raise _err(f"createAlias: expected [aliasName, [actuatorName, ...]], got "
                       f"{len(a)} elements")
        name = _str(a[0], "createAlias: [0]")
        names = [_str(n, f"createAlias: [1][{i}]")
                 for i, n in enumerate(_list(a[1], "createAlias: [1]"))]
        return [name, list(self.service.createAlias(name, names))]

    def setAlias(self, commands: Any) -> None:
        c = _list(commands, "setAlias")
        mode = c[2] if len(c) > 2 else None
        if mode == "time-mixed":
            if len(c) != 4:
                raise _err(f"setAlias: time-mixed takes 4 elements, got {len(c)}")
            members = [_timed(m, f"setAlias: [3][{x}]")
                       for x, m in enumerate(_list(c[3], "setAlias: [3]"))]
            self.service.setAliasTimeMixed(_str(c[0], "setAlias: [0]"),
                                           _str(c[1], "setAlias: [1]"), members)
        elif mode == "time-separate":
            if len(c) != 6:
                raise _err(f"setAlias: time-separate takes 6 elements, got {len(c)}")
            imp = c[3]
            if not _is_int(imp) or imp < 0:
                raise _err(f"setAlias: [3]: expected an int importance >= 0, got {imp!r}")
            times = []
            for k, t in enumerate(_list(c[4], "setAlias: [4]")):
                if not _is_int(t) or not -2**31 <= t < 2**31:
                    raise _err(f"setAlias: [4][{k}]: expected an int DCM time [ms], got {t!r}")
                times.append(int(t))
            values = []
            for x, row in enumerate(_list(c[5], "setAlias: [5]")):
                vals = _list(row, f"setAlias: [5][{x}]")
                for k, v in enumerate(vals):
                    if not _is_number(v):
                        raise _err(f"setAlias: [5][{x}][{k}]: expected a number, got {v!r}")
                values.append([float(v) for v in vals])
            self.service.setAliasTimeSeparate(_str(c[0], "setAlias: [0]"),
                                              _str(c[1], "setAlias: [1]"), int(imp),
                                              times, values)
        else:
            raise _err(f"setAlias: [2] must be 'time-mixed' or 'time-separate', got {mode!r}")

    # ALMemory-style reads
    def getValue(self, key: str) -> float:
        return self.service.getValue(key)

    def getValues(self, keys: list[str]) -> list[float]:
        return list(self.service.getValues(list(keys)))
