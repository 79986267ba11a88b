"""NAOqi's ALMotion (model and walk), ALRobotPosture and ALMemory proxies over CORBA, with
NAOqi's Python calls and results; ``ALProxy(...)`` (rtcf_components.clients.naoqi) gives
them.

* ``ALMotionProxy``: ALMotion's robot-model calls go to the Kinematics component
  (kinematics.proxy.MotionProxy, unchanged), the locomotion calls (moveInit, moveTo, move,
  moveToward, stopMove, waitUntilMoveIsFinished, moveIsActive, getRobotPosition,
  getRobotVelocity, getMoveConfig) to the NAOqi component (NAO::NAOqiService); ``post``
  starts a long call and returns its id (``wait(id, timeout_ms)``, ``isRunning(id)``).
* ``ALRobotPostureProxy``: goToPosture, applyPosture, getPosture, getPostureList,
  getPostureFamily, getPostureFamilyList (and ``post.goToPosture``).
* ``ALMemoryProxy``: getData, getListData, insertData, getDataList, getDataListName.

Errors raise ``NaoqiError``: a RuntimeError (as NAOqi's proxies raise) and a NAO::NaoqiError.
Blocking calls wait in bounded calls (waitTask, at most 2 s each), so no client call timeout
cuts a long walk, and a stopped or dead component still ends the wait with its error.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

from rtcf.corba.idl import stub_module

from ..kinematics.proxy import MotionError, MotionProxy

NAO = stub_module("NAO")
WAIT_CHUNK = 2.0            # [s] one waitTask call


class NaoqiError(NAO.NaoqiError, RuntimeError):
    """A call NAOqi would refuse or a task that failed: a RuntimeError with the reason."""

    def __str__(self) -> str:
        return self.reason


def _number(x: Any, what: str) -> float:
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise NaoqiError(f"{what}: expected a number, got {x!r}")
    return float(x)


def _config(config: Any) -> list:
    """NAOqi's move config ([["MaxStepX", 0.06], ...] or a dict) as ConfigItems."""
    if config is None:
        return []
    items = config.items() if isinstance(config, dict) else config
    out = []
    try:
        for item in items:
            name, value = item
            out.append(NAO.NAOqiService.ConfigItem(str(name), _number(value, f"move config "
                                                                             f"{name}")))
    except (TypeError, ValueError):
        raise NaoqiError(f"move config: expected [[name, value], ...], got {config!r}") from None
    return out


def _unwrap(fn, *args: Any) -> Any:
    try:
        return fn(*args)
    except NAO.NaoqiError as e:
        if isinstance(e, NaoqiError):
            raise
        raise NaoqiError(e.reason) from None


class _NaoqiService:
    """The NAOqi component's service, found on first use."""

    def __init__(self, name: str, nameserver: str, service: Any = None):
        self.name, self.nameserver, self._svc = name, nameserver, service

    @property
    def svc(self) -> Any:
        if self._svc is None:
            from rtcf.corba.client import get_service
            try:
                self._svc = get_service(self.name, "NAOqiService", stub=NAO.NAOqiService,
                                        nameserver=self.nameserver)
            except Exception as e:
                raise NaoqiError(f"no {self.name} (the NAOqi component) at {self.nameserver}: "
                                 f"{e} (the walk runs in compositions/nao_walk.yaml)") from None
        return self._svc

    def call(self, op: str, *args: Any) -> Any:
        return _unwrap(getattr(self.svc, op), *args)

    def wait(self, tid: int, timeout: float = math.inf) -> bool:
        """Wait for task ``tid``: True done, False still running after ``timeout`` [s]."""
        import time
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            chunk = WAIT_CHUNK if left == math.inf else max(0.0, min(WAIT_CHUNK, left))
            if self.call("waitTask", int(tid), chunk) == 0:
                return True
            if time.monotonic() >= end:
                return False


class _Post:
    """``proxy.post.<call>(...)``: start a long call and return its task id."""

    def __init__(self, owner: Any, calls: dict):
        self._owner, self._calls = owner, calls

    def __getattr__(self, name: str) -> Any:
        start = self._calls.get(name)
        if start is None:
            raise AttributeError(f"post.{name}: not a long call (post works with "
                                 f"{', '.join(self._calls)})")
        return lambda *a, **kw: start(*a, **kw)


class _Tasks:
    """NAOqi's task handling on a proxy: wait(id, timeout_ms), isRunning(id)."""

    _naoqi: _NaoqiService

    def wait(self, task_id: int, timeout: int = 0) -> bool:
        """ALProxy.wait: until the task ends (timeout 0) or ``timeout`` ms; True if it
        ended."""
        t = _number(timeout, "wait: timeout")
        return self._naoqi.wait(int(task_id), math.inf if t <= 0 else t / 1000.0)

    def isRunning(self, task_id: int) -> bool:
        return bool(self._naoqi.call("isRunning", int(task_id)))

    def stop(self, task_id: int) -> None:
        """ALProxy.stop: the walk stops at its next double support."""
        self._naoqi.call("stopMove")


class ALMotionProxy(MotionProxy, _Tasks):
    """ALMotion: the robot model on Kinematics0 (MotionProxy), the walk on NAOqi0."""

    def __init__(self, name: str = "Kinematics0", nameserver: str = "localhost:2809",
                 service: Any = None, naoqi: str = "NAOqi0", naoqi_service: Any = None):
        super().__init__(name, nameserver, service)
        self._naoqi = _NaoqiService(naoqi, nameserver, naoqi_service)
        self.post = _Post(self, {"moveTo": self._start_move_to, "moveInit": self._start_init})

    # -- long calls --------------------------------------------------------------------------
    def _start_init(self) -> int:
        return int(self._naoqi.call("moveInit"))

    def _start_move_to(self, *args: Any) -> int:
        """moveTo(x, y, theta[, config]) or moveTo(controlPoints[, config])."""
        if args and isinstance(args[0], (list, tuple)):
            if len(args) > 2:
                raise NaoqiError(f"moveTo(controlPoints, config): got {len(args)} arguments")
            pts = []
            for i, p in enumerate(args[0]):
                try:
                    pts.append([_number(v, f"moveTo: control point {i}") for v in p])
                except TypeError:
                    raise NaoqiError(f"moveTo: control point {i}: expected [x, y, theta], "
                                     f"got {p!r}") from None
            return int(self._naoqi.call("moveToPath", pts,
                                        _config(args[1] if len(args) > 1 else None)))
        if len(args) not in (3, 4):
            raise NaoqiError(f"moveTo: expected (x, y, theta[, config]) or "
                             f"(controlPoints[, config]), got {len(args)} arguments")
        x, y, th = (_number(v, k) for v, k in zip(args[:3], ("moveTo: x", "moveTo: y",
                                                               "moveTo: theta")))
        return int(self._naoqi.call("moveTo", x, y, th,
                                    _config(args[3] if len(args) > 3 else None)))

    def moveInit(self) -> None:
        self._naoqi.wait(self._start_init())

    def moveTo(self, *args: Any) -> bool:
        """Blocks until the robot stands at the goal; True (a failure raises NaoqiError)."""
        return self._naoqi.wait(self._start_move_to(*args))

    def move(self, x: float, y: float, theta: float, config: Any = None) -> None:
        self._naoqi.call("move", _number(x, "move: x"), _number(y, "move: y"),
                         _number(theta, "move: theta"), _config(config))

    def moveToward(self, x: float, y: float, theta: float, config: Any = None) -> None:
        self._naoqi.call("moveToward", _number(x, "moveToward: x"),
                         _number(y, "moveToward: y"), _number(theta, "moveToward: theta"),
                         _config(config))

    def stopMove(self) -> None:
        self._naoqi.call("stopMove")

    def waitUntilMoveIsFinished(self) -> None:
        """Until no step is left (a moveTo task under way included)."""
        import time
        tid = int(self._naoqi.call("moveTask"))
        if tid:
            self._naoqi.wait(tid)
        while self._naoqi.call("moveIsActive"):
            time.sleep(0.05)

    def moveIsActive(self) -> bool:
        return bool(self._naoqi.call("moveIsActive"))

    def getRobotPosition(self, useSensors: bool) -> list[float]:
        return [float(v) for v in self._naoqi.call("getRobotPosition", bool(useSensors))]

    def getRobotVelocity(self) -> list[float]:
        return [float(v) for v in self._naoqi.call("getRobotVelocity")]

    def getMoveConfig(self, config: str) -> list:
        return [[c.name, c.value] for c in self._naoqi.call("getMoveConfig", str(config))]


class ALRobotPostureProxy(_Tasks):
    """ALRobotPosture on NAOqi0."""

    def __init__(self, name: str = "NAOqi0", nameserver: str = "localhost:2809",
                 service: Any = None):
        self._naoqi = _NaoqiService(name, nameserver, service)
        self.post = _Post(self, {"goToPosture": self._start, "applyPosture": self._start})

    def _start(self, postureName: str, maxSpeedFraction: float) -> int:
        if not isinstance(postureName, str):
            raise NaoqiError(f"goToPosture: postureName: expected a string, got "
                             f"{postureName!r}")
        return int(self._naoqi.call("goToPosture", postureName,
                                    _number(maxSpeedFraction, "goToPosture: speed")))

    def goToPosture(self, postureName: str, maxSpeedFraction: float) -> bool:
        return self._naoqi.wait(self._start(postureName, maxSpeedFraction))

    def applyPosture(self, postureName: str, maxSpeedFraction: float) -> bool:
        return self.goToPosture(postureName, maxSpeedFraction)

    def getPosture(self) -> str:
        return str(self._naoqi.call("getPosture"))

    def getPostureList(self) -> list[str]:
        return list(self._naoqi.call("getPostureList"))

    def getPostureFamily(self) -> str:
        return str(self._naoqi.call("getPostureFamily"))

    def getPostureFamilyList(self) -> list[str]:
        return list(self._naoqi.call("getPostureFamilyList"))


class ALMemoryProxy:
    """ALMemory on NAOqi0: the DCM's keys, robotHasFallen, inserted data."""

    def __init__(self, name: str = "NAOqi0", nameserver: str = "localhost:2809",
                 service: Any = None):
        self._naoqi = _NaoqiService(name, nameserver, service)

    def getData(self, key: str) -> Any:
        from omniORB import any as orb_any
        return orb_any.from_any(self._naoqi.call("getData", str(key)))

    def getListData(self, keys: Any) -> list:
        from omniORB import any as orb_any
        return [orb_any.from_any(v) for v in self._naoqi.call("getListData",
                                                              [str(k) for k in keys])]

    def insertData(self, key: str, value: Any) -> None:
        from omniORB import any as orb_any
        if isinstance(value, float) and not math.isfinite(value):
            raise NaoqiError(f"ALMemory.insertData: value {value!r}: not a finite number")
        try:
            a = orb_any.to_any(value)
        except Exception:
            raise NaoqiError(f"ALMemory.insertData: value {value!r}: expected a number, string, "
                             f"boolean or list of them") from None
        self._naoqi.call("insertData", str(key), a)

    def getDataList(self, filterName: str) -> list[str]:
        return list(self._naoqi.call("getDataList", str(filterName)))

    def getDataListName(self) -> list[str]:
        return list(self._naoqi.call("getDataListName"))


__all__ = ["ALMemoryProxy", "ALMotionProxy", "ALRobotPostureProxy", "MotionError",
           "NaoqiError"]
