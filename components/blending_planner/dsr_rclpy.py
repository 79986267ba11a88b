"""The ROS 2 boilerplate of doosan-robot2's example scripts, without ROS: ``rclpy`` (init,
create_node, ok, shutdown), a node's publisher of the ``stop`` topic, ``RobotStop`` and
``DR_init``, so that such a script runs with its import lines changed:

    import rclpy                 ->  from rtcf_components.clients.dsr import rclpy
    from dsr_msgs2.msg import *  ->  from rtcf_components.clients.dsr import RobotStop
    import DR_init               ->  from rtcf_components.clients.dsr import DR_init
    from DSR_ROBOT2 import *     ->  from rtcf_components.clients.dsr import *

What they do here: ``rclpy.ok()`` is true until ``rclpy.shutdown()``; after it, every DSR
call raises DR_Error(DR_ERROR_STOP) (a ROS 2 call after shutdown fails too). A RobotStop
published on the node's ``stop`` topic stops the arm with its stop_mode, as the dsr_control2
node does with that topic (doosan-robotics/doosan-robot2 at
a694f8a0334ff3c2476106f8e86e9e111974d249: dsr_hw_interface2 subscribes RobotStop on "stop",
dsr_msgs2/msg/RobotStop.msg is ``int32 stop_mode``). Node names, namespaces and QoS are
accepted and unused. Runs in: the caller's thread (and a signal handler's).
"""

from __future__ import annotations

import logging as _logging
import types
from typing import Any

_state = {"alive": True}


class RobotStop:
    """dsr_msgs2/msg/RobotStop: stop_mode 0 quick (STO), 1 quick, 2 slow (soft), 3 hold."""

    def __init__(self, stop_mode: int = 0):
        self.stop_mode = stop_mode


class _Publisher:
    def __init__(self, msg_type: Any, topic: str):
        self.msg_type, self.topic = msg_type, topic

    def publish(self, msg: Any) -> None:
        """A RobotStop on ``stop`` stops the arm (dsr_control2's subscriber); other topics
        have no subscriber here."""
        if isinstance(msg, RobotStop) and self.topic.rstrip("/").split("/")[-1] == "stop":
            from .dsr_motion import call_planner, planner_proxy
            p = planner_proxy() if _state["alive"] else _planner_unchecked()
            call_planner("stop", p.service.stopMotion, int(msg.stop_mode))


def _planner_unchecked() -> Any:
    from . import dsr_motion
    proxy = dsr_motion.connected()
    return proxy if proxy is not None else dsr_motion.connect()


class _Node:
    def __init__(self, name: str, namespace: str | None = None):
        self.name, self.namespace = name, namespace or ""
        self._log = _logging.getLogger(f"dsr.{name}")

    def create_publisher(self, msg_type: Any, topic: str, qos: Any = 10) -> _Publisher:
        return _Publisher(msg_type, topic)

    def get_logger(self) -> Any:
        log = self._log
        return types.SimpleNamespace(info=log.info, warn=log.warning, warning=log.warning,
                                     error=log.error, debug=log.debug, fatal=log.critical)

    def destroy_node(self) -> None:
        pass


def init(args: Any = None) -> None:
    _state["alive"] = True


def create_node(name: str, namespace: str | None = None, **kw: Any) -> _Node:
    return _Node(name, namespace)


def ok() -> bool:
    return _state["alive"]


def shutdown() -> None:
    _state["alive"] = False


def check_alive() -> None:
    """Raise DR_Error(DR_ERROR_STOP) after rclpy.shutdown(). Runs in: the caller's thread."""
    if not _state["alive"]:
        from .dsr_common import DR_ERROR_STOP, DR_Error
        raise DR_Error(DR_ERROR_STOP, "rclpy.shutdown() was called: the program is stopped",
                       True)


def _get_logger(name: str = "dsr") -> Any:
    return _Node(name).get_logger()


# rclpy.logging (get_logger)
logging = types.ModuleType("rclpy.logging")
logging.get_logger = _get_logger

# DR_init: the robot id, model and node a script sets before importing DSR_ROBOT2
DR_init = types.SimpleNamespace(__dsr__id="dsr01", __dsr__model="m1013", __dsr__node=None)
