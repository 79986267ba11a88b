"""The Controller base class (pr2_controller_interface::Controller).

A real-time controller subclasses :class:`Controller` and implements four methods; the
names are snake_case, the PR2 names are given for each:

========================  ==========================  ====================================
rtcf                      PR2                         runs in
========================  ==========================  ====================================
``init(robot, params)``   ``init(robot, node)``       non-real-time, once, at load
``starting(time)``        ``starting()``              real-time, just before the first update
``update(time, period)``  ``update()``                real-time, every tick while RUNNING
``stopping(time)``        ``stopping()``              real-time, just after the last update
``get_controller(...)``   ``getController(...)``      non-real-time, meant for ``init``; False on failure
========================  ==========================  ====================================

PR2 reads the time from the robot state; here time [s] and the *measured* period [s] since
the previous tick are passed in (house style 4; ros2_control's update(time, period)).

States (PR2's ``state_``): CONSTRUCTED -> INITIALIZED -> RUNNING. The manager drives them
through the ``*_request`` methods (PR2's initRequest / startRequest / stopRequest /
updateRequest); a controller never calls those itself.

Source of the facts: PR2/pr2_mechanism, pr2_controller_interface/include/
pr2_controller_interface/controller.h (states, the request methods, getController with
BEFORE_ME / AFTER_ME and the type check); this is an independent Python rendering.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .robot import RobotState

BEFORE_ME = 0
"""``get_controller(name, BEFORE_ME)``: *name* must update before this controller."""
AFTER_ME = 1
"""``get_controller(name, AFTER_ME)``: *name* must update after this controller."""


class ControllerError(Exception):
    """A controller operation was refused (bad name, bad type, bad schedule, bad state).

    The message names what was wrong and the value. Raised by the manager's non-real-time
    operations and by ``get_controller``; the real-time path never raises it.
    """


INTERFACE_TYPES = ("position", "velocity", "effort")
"""Command interface types, as ros2_control's hardware_interface names them. A controller
claims ``"<joint>/<type>"`` (e.g. ``"HeadYaw/position"``); one running controller at a time
owns a claimed interface."""


def check_interface(name: object) -> str | None:
    """None when ``name`` is a well-formed ``joint/type`` string, else what is wrong."""
    if not isinstance(name, str) or name.count("/") != 1:
        return "expected 'joint/type'"
    joint, kind = name.split("/")
    if not joint:
        return "expected 'joint/type' with a joint name"
    if kind not in INTERFACE_TYPES:
        return f"type: expected one of {', '.join(INTERFACE_TYPES)}"
    return None


class ControllerState(enum.IntEnum):
    """PR2's controller states (controller.h)."""

    CONSTRUCTED = 0
    INITIALIZED = 1
    RUNNING = 2


class ControllerProvider(Protocol):
    """What ``get_controller`` asks (PR2's ControllerProvider): a loaded controller by name."""

    def controller_by_name(self, name: str) -> "Controller | None": ...


class Controller:
    """Base of every real-time controller. Subclass and override the four hooks.

    ``type_name`` (class attribute, default: the class name) is what loadController's
    ``type`` argument names. ``name`` is the instance name given at load.
    Attributes set by the manager: ``name``, ``state``, ``before_list``, ``after_list``.

    Command interfaces (ros2_control's ``command_interface_configuration``): the joint
    interfaces this controller writes, ``["HeadYaw/position", ...]``. Fill
    ``self.command_interfaces`` in ``init`` (or call ``self.claim(joints, "position")``), or
    override ``command_interface_configuration``. The manager refuses to run two
    controllers that claim the same interface (switchController strictness decides how);
    the default claims nothing (a controller that only computes, or writes another
    controller's setpoint).
    """

    type_name: str = ""

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if "type_name" not in cls.__dict__:
            cls.type_name = cls.__name__

    def __init__(self) -> None:
        self.name = ""
        self.state = ControllerState.CONSTRUCTED
        self.before_list: list[str] = []     # controllers that must update before me
        self.after_list: list[str] = []      # controllers that must update after me
        self._provider: ControllerProvider | None = None
        self.command_interfaces: list[str] = []
        self.get_controller_error = ""       # why the last get_controller returned False

    # -- the four hooks (override) ---------------------------------------------------------
    def init(self, robot: "RobotState", params: dict[str, Any]) -> bool:
        """Look up joint handles, read params, preallocate. Return False (or raise) to
        refuse the load; the reason should be in the exception or logged.
        Runs in: the caller's (non-real-time) thread, once."""
        return True

    def starting(self, time: float) -> None:
        """Seed the command from the current state (a started controller must give a valid
        command on its very first update). Runs in: EC thread, in the tick of the first
        update, just before it."""

    def update(self, time: float, period: float) -> None:
        """One control step: read the robot state, write commands. Must not allocate, block
        or log. Runs in: EC thread, every tick while RUNNING."""

    def stopping(self, time: float) -> None:
        """Runs in: EC thread, in the tick of the last update, just after it. Must not fail
        (an exception is logged and ignored)."""

    # -- optional: commands and state for clients (the manager's commandController) --------
    def prepare_command(self, params: dict[str, Any]) -> Any:
        """Validate a client command (e.g. a new trajectory) and build everything it needs,
        preallocated; ControllerError on bad input (nothing changes). The result is handed
        to ``apply_command``. Runs in: a non-real-time thread."""
        raise ControllerError(f"{self.name}: a {type(self).__name__} takes no commands")

    def apply_command(self, prepared: Any) -> None:
        """Take a prepared command (a reference swap; no heavy work). Runs in: EC thread,
        between two ticks."""

    def state_values(self) -> dict[str, Any]:
        """A snapshot of numbers for clients (errors, setpoints). Runs in: any thread."""
        return {}

    def command_interface_configuration(self) -> list[str]:
        """The command interfaces this controller claims (``joint/type`` strings). Read by
        the manager once, after ``init``. Runs in: the loading (non-real-time) thread."""
        return list(self.command_interfaces)

    # -- what a controller may call --------------------------------------------------------
    def claim(self, joints: "list[str] | tuple[str, ...]", kind: str = "position") -> None:
        """Claim the ``kind`` command interface of each joint (call from ``init``)."""
        for j in joints:
            name = f"{j}/{kind}"
            if name not in self.command_interfaces:
                self.command_interfaces.append(name)

    def get_controller(self, name: str, sched: int, kind: type | None = None
                       ) -> "Controller | bool":
        """PR2's ``getController(name, sched, c)``: another loaded controller, for chaining.

        sched: BEFORE_ME (it updates before me) or AFTER_ME (after me); the manager orders
        the schedule accordingly (see scheduler.py). kind: the required class (PR2's template
        type check); None accepts any Controller.

        As PR2's, it returns False on failure (no provider, no controller of that name
        loaded earlier, wrong type, bad sched); the reason is in ``get_controller_error``,
        and the manager adds it to the load failure when ``init`` then returns False.
        Runs in: the non-real-time thread, during ``init``.
        """
        problem = None
        other = None
        if self._provider is None:
            problem = "no controller provider (call it from init)"
        elif sched not in (BEFORE_ME, AFTER_ME):
            problem = f"sched: expected BEFORE_ME (0) or AFTER_ME (1), got {sched!r}"
        else:
            other = self._provider.controller_by_name(name)
            want = kind if kind is not None else Controller
            if other is None:
                problem = ("no controller of that name is loaded (only controllers loaded "
                           "earlier are visible)")
            elif not isinstance(other, want):
                problem = f"it is a {type(other).__name__}, not a {want.__name__}"
        if problem is not None or other is None:
            self.get_controller_error = (f"{self.name or type(self).__name__}: "
                                         f"get_controller({name!r}): {problem}")
            return False
        target = self.before_list if sched == BEFORE_ME else self.after_list
        if name not in target:
            target.append(name)
        return other

    # PR2 spelling, for readers coming from pr2_controller_interface
    getController = get_controller

    @property
    def is_running(self) -> bool:
        return self.state is ControllerState.RUNNING

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} {self.state.name}>"
