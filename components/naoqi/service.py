"""NAO::NAOqiService servant. Runs in: ORB threads.

Arguments are checked here completely (postures, move configs, numbers) before anything is
handed to the EC thread; the tasks then run there (tasks.py). A refusal raises
NAO::NaoqiError with the reason; the proxies raise it as a RuntimeError, as NAOqi does.
"""

from __future__ import annotations

import math
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Callable

from omniORB import any as orb_any

from rtcf.corba.idl import stub_module

from .memory import MemoryError_
from .postures import (FAMILIES, POSTURES, UNKNOWN, PostureError, check_speed, posture,
                       recognise)
from .tasks import FAILED, RUNNING, go_to_posture, move_init
from .walkconfig import MAX, MIN, MoveConfigError, as_list, gait, parse

NAO = stub_module("NAO")
NAO__POA = stub_module("NAO__POA")
NS = NAO.NAOqiService
CALL_TIMEOUT = 5.0
MAX_WAIT = 60.0
DEVICE_PREFIX = "Device/SubDeviceList/"


def _config(items: Any) -> dict:
    try:
        return parse([(str(c.name), float(c.value)) for c in items])
    except MoveConfigError as e:
        raise NAO.NaoqiError(str(e)) from None


def _finite(op: str, **kw: Any) -> None:
    for k, v in kw.items():
        if not math.isfinite(v):
            raise NAO.NaoqiError(f"{op}: {k}: expected a finite number, got {v!r}")


class NAOqiServiceImpl(NAO__POA.NAOqiService):
    def __init__(self, comp: Any):
        self.comp = comp
        self.log = comp.log

    # -- helpers -----------------------------------------------------------------------------
    def _call(self, op: str, fn: Callable[[], Any]) -> Any:
        try:
            return self.comp.call(fn, timeout=CALL_TIMEOUT)
        except FutureTimeout:
            raise NAO.NaoqiError(f"{op}: {self.comp.instance_name} ran no cycle within "
                                 f"{CALL_TIMEOUT} s: is its execution context running?")
        except NAO.NaoqiError:
            raise
        except (ValueError, RuntimeError) as e:
            raise NAO.NaoqiError(f"{op}: {e}") from None

    def _ready(self, op: str) -> None:
        comp = self.comp
        if comp.robot is None:
            raise NAO.NaoqiError(f"{op}: {comp.instance_name} is not active")
        if comp.fallen:
            raise NAO.NaoqiError(f"{op}: the robot has fallen (robotHasFallen): getting up "
                                 f"from the floor is not supported; reset the simulation")

    def _start(self, op: str, make: Callable[[], Any], move: bool = False) -> int:
        self._ready(op)
        comp = self.comp

        def submit() -> int:
            self._ready(op)
            return comp.submit(make(), move=move)
        return int(self._call(op, submit))

    # -- tasks -------------------------------------------------------------------------------
    def waitTask(self, tid: int, timeout: float) -> int:
        if not (0.0 <= timeout <= MAX_WAIT):              # NaN fails too
            raise NAO.NaoqiError(f"waitTask: timeout {timeout!r}: expected 0 .. {MAX_WAIT} s")
        comp = self.comp
        status, why = comp.task_state(tid)
        if status == RUNNING and comp.waiters.executing():
            comp.waiters.wait(lambda: comp.task_state(tid)[0] != RUNNING, timeout)
            status, why = comp.task_state(tid)
        if status == RUNNING:
            if not comp.waiters.executing():
                raise NAO.NaoqiError(f"task {tid}: {comp.instance_name} is not executing")
            return 1
        if status == FAILED:
            raise NAO.NaoqiError(why)
        return 0

    def isRunning(self, tid: int) -> bool:
        return self.comp.task_state(tid)[0] == RUNNING

    # -- ALMotion ----------------------------------------------------------------------------
    def moveInit(self) -> int:
        comp = self.comp
        return self._start("moveInit", lambda: move_init(comp.robot))

    def _gait(self, cfg: dict):
        g = gait(cfg)
        core = self.comp.abc.core
        from rtcf_components.autobalancer.footsteps import StrideLimits
        from dataclasses import replace
        half = core.limits.half_width
        lim = StrideLimits(g.forward, g.outside, g.theta, g.forward, 0.012, g.theta / 3.0, half)
        params = replace(core.params, step_time=g.step_time, step_height=g.step_height)
        return g, lim, params

    def moveTo(self, x: float, y: float, theta: float, config: Any) -> int:
        op = "moveTo"
        _finite(op, x=x, y=y, theta=theta)
        if math.hypot(x, y) > 100.0 or abs(theta) > 100.0 * math.pi:
            raise NAO.NaoqiError(f"{op}: ({x:g}, {y:g}, {theta:g}) is too far for one walk "
                                 f"(at most 100 m and 50 turns)")
        cfg = _config(config)
        return self._move_path(op, [(x, y, theta)], cfg)

    def moveToPath(self, points: Any, config: Any) -> int:
        op = "moveTo"
        pts = [tuple(float(v) for v in p) for p in points]
        if not pts:
            raise NAO.NaoqiError(f"{op}: expected at least one control point [x, y, theta]")
        for i, p in enumerate(pts):
            if len(p) != 3 or not all(math.isfinite(v) for v in p):
                raise NAO.NaoqiError(f"{op}: control point {i}: expected 3 finite numbers "
                                     f"[x, y, theta], got {list(p)!r}")
            if math.hypot(p[0], p[1]) > 100.0 or abs(p[2]) > 100.0 * math.pi:
                raise NAO.NaoqiError(f"{op}: control point {i} is too far for one walk")
        return self._move_path(op, pts, _config(config))

    def _move_path(self, op: str, pts: list, cfg: dict) -> int:
        comp = self.comp

        def make():
            g, lim, params = self._gait(cfg)
            core = comp.abc.core
            t = move_init(comp.robot, op)

            def setup():
                core.set_params(params, core.limits)
                comp.naoqi_limits = lim
            t.act(setup)
            for (x, y, th) in pts:
                t.act(lambda x=x, y=y, th=th: core.walk_to(x, y, th, limits=lim))
                t.until(lambda: not core.walking)
            return t
        return self._start(op, make, move=True)

    def _velocity(self, op: str, vx: float, vy: float, vth: float, cfg: dict,
                  normalised: bool) -> int:
        _finite(op, x=vx, y=vy, theta=vth)
        comp = self.comp
        g, lim, params = self._gait(cfg)
        mx, my, mth = g.max_velocity
        if normalised:
            for k, v in (("x", vx), ("y", vy), ("theta", vth)):
                if abs(v) > 1.0:
                    raise NAO.NaoqiError(f"{op}: {k} {v!r}: expected a normalised velocity "
                                         f"in [-1, 1]")
            vx, vy, vth = vx * mx, vy * my, vth * mth
        else:                                             # ALMotion clips move's velocity
            vx = max(-mx, min(mx, vx))
            vy = max(-my, min(my, vy))
            vth = max(-mth, min(mth, vth))
        stop = vx == 0.0 and vy == 0.0 and vth == 0.0

        def make():
            core = comp.abc.core
            if stop:
                from .tasks import Task
                t = Task(comp.robot, op)
                t.act(lambda: core.go_stop() if core.walking else None)
                return t
            t = move_init(comp.robot, op)

            def go():
                core.set_params(params, lim)
                core.go_velocity(vx, vy, vth)
            t.act(go)
            return t
        tid = self._start(op, make, move=True)
        self.waitTask(tid, MAX_WAIT)        # returns once walking (moveInit: a few seconds)
        return tid

    def move(self, x: float, y: float, theta: float, config: Any) -> int:
        return self._velocity("move", x, y, theta, _config(config), False)

    def moveToward(self, x: float, y: float, theta: float, config: Any) -> int:
        return self._velocity("moveToward", x, y, theta, _config(config), True)

    def stopMove(self) -> None:
        comp = self.comp
        if comp.robot is None:
            return

        def stop():
            core = comp.abc.core
            for t in comp.tasks.values():
                if t.status == RUNNING:
                    t.cancel()
            if core is not None and core.gait is not None and core.walking:
                core.go_stop()
        self._call("stopMove", stop)

    def moveIsActive(self) -> bool:
        core = self.comp.abc.core if self.comp.robot is not None else None
        return bool(core is not None and core.walking)

    def moveTask(self) -> int:
        tid = self.comp.move_task
        return tid if self.comp.task_state(tid)[0] == RUNNING else 0

    def getRobotPosition(self, use_sensors: bool) -> list:
        if self.comp.robot is None:
            return [0.0, 0.0, 0.0]
        return [float(v) for v in self._call("getRobotPosition",
                                             lambda: self.comp.robot_position(use_sensors))]

    def getRobotVelocity(self) -> list:
        return [float(v) for v in self.comp.velocity]

    def getMoveConfig(self, name: str) -> list:
        from .walkconfig import DEFAULT
        table = {"Max": MAX, "Min": MIN, "Default": DEFAULT}.get(name)
        if table is None:
            raise NAO.NaoqiError(f"getMoveConfig: {name!r}: expected \"Max\", \"Min\" or "
                                 f"\"Default\"")
        return [NS.ConfigItem(k, v) for k, v in as_list(table)]

    # -- ALRobotPosture ----------------------------------------------------------------------
    def goToPosture(self, name: str, speed: float) -> int:
        op = f"goToPosture({name!r})"
        try:
            posture(name)
            check_speed(speed)
        except PostureError as e:
            raise NAO.NaoqiError(f"ALRobotPosture.goToPosture: {e}") from None
        comp = self.comp
        return self._start(op, lambda: go_to_posture(comp.robot, name, speed))

    def applyPosture(self, name: str, speed: float) -> int:
        return self.goToPosture(name, speed)

    def getPosture(self) -> str:
        comp = self.comp
        if comp.robot is None:
            return UNKNOWN
        if comp.fallen:
            return UNKNOWN
        return recognise(comp.dcm_comp.sensor_values)

    def getPostureList(self) -> list:
        return list(POSTURES)

    def getPostureFamily(self) -> str:
        name = self.getPosture()
        return FAMILIES.get(name, UNKNOWN)

    def getPostureFamilyList(self) -> list:
        return sorted(set(FAMILIES.values()))

    # -- ALMemory ----------------------------------------------------------------------------
    def _value(self, key: str) -> Any:
        comp = self.comp
        if key == "robotHasFallen":
            return bool(comp.fallen)
        if key in comp.memory:
            return comp.memory.get(key)
        if comp.robot is not None:
            try:
                return float(comp.dcm_comp.read_value(key))
            except Exception:
                pass
        raise NAO.NaoqiError(f"ALMemory.getData: no data for key {key!r} (DCM keys: "
                             f"getDataList(\"Device/SubDeviceList\"))")

    def getData(self, key: str) -> Any:
        return orb_any.to_any(self._value(str(key)))

    def getListData(self, keys: Any) -> list:
        return [orb_any.to_any(self._value(str(k))) for k in keys]

    def insertData(self, key: str, value: Any) -> None:
        v = orb_any.from_any(value, keep_structs=False)
        if key == "robotHasFallen" or (self.comp.robot is not None and self._is_dcm(key)):
            raise NAO.NaoqiError(f"ALMemory.insertData: {key!r} is a sensor or system key "
                                 f"(read only)")
        try:
            self.comp.memory.insert(key, v)
        except MemoryError_ as e:
            raise NAO.NaoqiError(f"ALMemory.insertData: {e}") from None

    def _is_dcm(self, key: str) -> bool:
        try:
            self.comp.dcm_comp.read_value(key)
            return True
        except Exception:
            return False

    def getDataListName(self) -> list:
        comp = self.comp
        keys = ["robotHasFallen"] + comp.memory.keys()
        if comp.robot is not None:
            d = comp.dcm_comp
            keys += [DEVICE_PREFIX + k for k in d.devices.actuator_keys]
            keys += [DEVICE_PREFIX + k for k in d.sensor_keys]
        return keys

    def getDataList(self, filt: str) -> list:
        return [k for k in self.getDataListName() if str(filt) in k]
