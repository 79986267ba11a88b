"""NAO::DCMService servant. Runs in: ORB threads.

Reads answer from the values of the last completed cycle. set / createAlias / setAlias are
handed to the EC thread (Component.call) and applied at the start of the next cycle, where
DcmCore validates them completely before changing anything; its DcmError becomes the IDL
exception NAO::DCMError with the same reason.
"""

from __future__ import annotations

from typing import Any, Callable

from rtcf.corba.idl import stub_module

from .timeline import TIME_MAX, TIME_MIN, DcmError

NAO = stub_module("NAO")
NAO__POA = stub_module("NAO__POA")
CALL_TIMEOUT = 2.0   # [s] the DCM applies a call at its next cycle (10-12 ms)


def _commands(seq: Any) -> list:
    return [[c.value, c.time, c.importance] for c in seq]


def reason(exc: BaseException) -> str:
    """The message of an exception as the client should read it.

    ``str(KeyError("x"))`` is ``"'x'"`` (KeyError quotes its argument); stripping quotes off
    the whole string instead also ate the closing quote of an echoed value ("unknown alias
    'NoSuchAlias") and the whole value "''". The first argument is the message itself.
    """
    if exc.args and isinstance(exc.args[0], str):
        text = exc.args[0]
    else:
        text = str(exc) or type(exc).__name__
    # A CORBA string is Latin-1: an echoed non-Latin-1 value must not make the reply fail.
    return text.encode("latin-1", "backslashreplace").decode("latin-1")


class DCMServiceImpl(NAO__POA.DCMService):
    def __init__(self, comp: Any):
        self.comp = comp

    def _apply(self, fn: Callable[[], Any]) -> Any:
        try:
            return self.comp.call(fn, timeout=CALL_TIMEOUT)
        except (DcmError, KeyError, ValueError, TypeError) as e:
            raise NAO.DCMError(reason(e)) from None
        except TimeoutError:
            raise NAO.DCMError(f"{self.comp.instance_name} ran no cycle within "
                               f"{CALL_TIMEOUT} s: is its execution context running?")

    def getTime(self, offset: int) -> int:
        now = self.comp.now_ms
        if now is None:
            raise NAO.DCMError("getTime: no DCM cycle has run yet (activate the DCM)")
        t = now + int(offset)
        if not TIME_MIN <= t <= TIME_MAX:
            raise NAO.DCMError(f"getTime: {now} + {offset} = {t} is outside the DCM time "
                               f"range [{TIME_MIN}, {TIME_MAX}] [ms]")
        return t

    def set(self, name: str, kind: str, commands: Any) -> None:
        args = [name, kind, _commands(commands)]
        self._apply(lambda: self.comp.core.set(args))

    def createAlias(self, alias: str, names: Any) -> list:
        args = [alias, list(names)]
        return self._apply(lambda: self.comp.core.create_alias(args))[1]

    def setAliasTimeMixed(self, alias: str, kind: str, commands: Any) -> None:
        args = [alias, kind, "time-mixed", [_commands(m) for m in commands]]
        self._apply(lambda: self.comp.core.set_alias(args))

    def setAliasTimeSeparate(self, alias: str, kind: str, importance: int, times: Any,
                             values: Any) -> None:
        args = [alias, kind, "time-separate", int(importance), list(times),
                [list(v) for v in values]]
        self._apply(lambda: self.comp.core.set_alias(args))

    def getValue(self, key: str) -> float:
        try:
            return self.comp.read_value(key)
        except DcmError as e:
            raise NAO.DCMError(reason(e)) from None

    def getValues(self, keys: Any) -> list:
        return [self.getValue(k) for k in keys]

    def getActuatorKeys(self) -> list:
        return list(self.comp.devices.actuator_keys)

    def getSensorKeys(self) -> list:
        return list(self.comp.sensor_keys)
