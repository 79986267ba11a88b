"""The NAOqi layer's long requests (moveInit, moveTo, goToPosture, ...) as step-by-step tasks
the NAOqi component advances once per cycle, in its execution context thread, over the
components it drives in the same process (the SequencePlayer, AutoBalancer, Stabilizer).

Pure: imports neither rtcf nor omniORB; the components are reached through the small
``Robot`` facade the component builds (so the tasks can be tested on stand-ins). No task
blocks: each ``step()`` looks at the state, acts, and says whether it is done.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .postures import WALK_POSTURE, duration, posture

RUNNING, DONE, FAILED = "running", "done", "failed"
WALK_TOL = 0.08             # [rad] legs this close to StandInit start walking from there


class TaskError(RuntimeError):
    """Why a task failed (the NAOqi side raises it as a RuntimeError)."""


class Robot:
    """What the tasks need of the components (the NAOqi component fills it in).

    Attributes and callables: ``q_ref()`` the reference joint angles (the AutoBalancer's
    held reference), ``q_cmd()`` the joint angles sent, ``max_velocity`` (n,) [rad/s],
    ``play(q, seconds)`` a SequencePlayer move, ``playing()``, ``balancer`` (the
    AutoBalancer's core), ``stabilizer`` (the Stabilizer's core, or None), ``fallen()``.
    """

    def __init__(self, **kw: Any):
        for k, v in kw.items():
            setattr(self, k, v)


class Task:
    """Steps through a list of stages; ``status`` RUNNING / DONE / FAILED, ``error``."""

    def __init__(self, robot: Robot, name: str):
        self.robot = robot
        self.name = name
        self.status = RUNNING
        self.error = ""
        self.stages: list[Callable[[], bool]] = []

    def step(self) -> str:
        """Run the current stage; a stage returns True when done. Runs in: EC thread."""
        try:
            while self.status == RUNNING and self.stages:
                if not self.stages[0]():
                    return self.status
                self.stages.pop(0)
            if self.status == RUNNING:
                self.status = DONE
        except TaskError as e:
            self.fail(str(e))
        return self.status

    def fail(self, why: str) -> None:
        self.status, self.error = FAILED, why
        self.stages = []

    def cancel(self) -> None:
        if self.status == RUNNING:
            self.fail(f"{self.name}: interrupted by another request")

    # -- building blocks -------------------------------------------------------------------
    def watch_fall(self) -> bool:
        if self.robot.fallen():
            raise TaskError(f"{self.name}: the robot has fallen (robotHasFallen)")
        return True

    def stop_walking(self) -> None:
        b = self.robot.balancer
        started = [False]

        def stage() -> bool:
            self.watch_fall()
            if not started[0]:
                if b.walking:
                    b.go_stop()
                started[0] = True
            return not b.walking
        self.stages.append(stage)

    def release_legs(self) -> None:
        """stopAutoBalancer (the legs back to the reference), waiting for the transition."""
        b = self.robot.balancer
        started = [False]

        def stage() -> bool:
            if not started[0]:
                if b.mode in ("MODE_ABC", "MODE_SYNC_TO_ABC"):
                    b.stop()
                started[0] = True
            return b.mode == "MODE_IDLE"
        self.stages.append(stage)

    def play(self, target: np.ndarray, speed: float) -> None:
        started = [False]

        def stage() -> bool:
            self.watch_fall()
            r = self.robot
            if not started[0]:
                q0 = r.q_ref()
                r.play(target, duration(q0, target, r.max_velocity, speed))
                started[0] = True
                return False
            return not r.playing()
        self.stages.append(stage)

    def take_legs(self) -> None:
        """startAutoBalancer and startStabilizer, waiting for both transitions."""
        started = [False]

        def stage() -> bool:
            self.watch_fall()
            r = self.robot
            b, s = r.balancer, r.stabilizer
            if not started[0]:
                if b.mode == "MODE_IDLE":
                    b.start(r.q_ref())
                elif b.mode == "MODE_SYNC_TO_IDLE":
                    raise TaskError(f"{self.name}: the AutoBalancer is stopping; try again")
                if s is not None and s.mode in ("MODE_IDLE", "MODE_SYNC_TO_IDLE") and \
                        not s.fallen:
                    if s.mode == "MODE_IDLE":
                        s.start()
                started[0] = True
            return b.mode == "MODE_ABC" and (s is None or s.mode in ("MODE_ST", "MODE_IDLE"))
        self.stages.append(stage)

    def act(self, fn: Callable[[], Any]) -> None:
        def stage() -> bool:
            self.watch_fall()
            fn()
            return True
        self.stages.append(stage)

    def until(self, pred: Callable[[], bool]) -> None:
        def stage() -> bool:
            self.watch_fall()
            return pred()
        self.stages.append(stage)


def move_init(robot: Robot, name: str = "moveInit", speed: float = 0.5) -> Task:
    """NAOqi's moveInit: to StandInit unless the legs are there, then take the legs."""
    t = Task(robot, name)
    b = robot.balancer

    def needs_posture() -> bool:
        if b.mode != "MODE_IDLE":
            return False
        q = robot.q_ref()
        target = posture(WALK_POSTURE)
        legs = robot.leg_index
        return float(np.max(np.abs(q[legs] - target[legs]))) > WALK_TOL
    first = [True]

    def to_stand_init() -> bool:
        if first[0]:
            first[0] = False
            if needs_posture():
                t.stages[1:1] = _play_stages(t, posture(WALK_POSTURE), speed)
        return True
    t.stages.append(lambda: (t.watch_fall(), True)[1])
    t.stages.append(to_stand_init)
    t.take_legs()
    return t


def _play_stages(t: Task, target: np.ndarray, speed: float) -> list:
    tmp = Task(t.robot, t.name)
    tmp.play(target, speed)
    return tmp.stages


def go_to_posture(robot: Robot, name: str, speed: float) -> Task:
    """ALRobotPosture's goToPosture: stop walking, give the legs back, move the joints."""
    target = posture(name)
    t = Task(robot, f"goToPosture({name!r})")
    t.stages.append(lambda: (t.watch_fall(), True)[1])
    t.stop_walking()
    t.release_legs()
    t.play(target, speed)
    return t


def walk(robot: Robot, name: str, request: Callable[[], Any], wait: bool = True) -> Task:
    """moveInit, then ``request()`` (queue steps, set a velocity) in the EC thread; with
    ``wait``, done when no step is left."""
    t = move_init(robot, name)
    t.act(request)
    if wait:
        t.until(lambda: not robot.balancer.walking)
    return t
