"""Lifecycle states, return codes and the transition table of an RT component (pure).

Numbering follows the OMG RTC IDL (RTC::LifeCycleState, RTC::ReturnCode_t) so the CORBA layer
maps them one to one. The state machine is per execution context, as in OpenRTM: a component
taking part in two ECs has one state in each.
"""

from __future__ import annotations

import enum


class LifeCycleState(enum.IntEnum):
    CREATED = 0
    INACTIVE = 1
    ACTIVE = 2
    ERROR = 3


class ReturnCode(enum.IntEnum):
    RTC_OK = 0
    RTC_ERROR = 1
    BAD_PARAMETER = 2
    UNSUPPORTED = 3
    OUT_OF_RESOURCES = 4
    PRECONDITION_NOT_MET = 5


class Request(enum.Enum):
    """Lifecycle requests made from outside the EC thread and applied at a cycle start."""

    ACTIVATE = "activate"
    DEACTIVATE = "deactivate"
    RESET = "reset"


# (state the request is valid in, state it leads to)
TRANSITIONS: dict[Request, tuple[LifeCycleState, LifeCycleState]] = {
    Request.ACTIVATE: (LifeCycleState.INACTIVE, LifeCycleState.ACTIVE),
    Request.DEACTIVATE: (LifeCycleState.ACTIVE, LifeCycleState.INACTIVE),
    Request.RESET: (LifeCycleState.ERROR, LifeCycleState.INACTIVE),
}

# Hook names, in the snake_case of the RTC actions.
HOOKS = (
    "on_initialize", "on_finalize", "on_startup", "on_shutdown", "on_activated",
    "on_deactivated", "on_execute", "on_state_update", "on_aborting", "on_error",
    "on_reset", "on_rate_changed",
)


def is_failure(result: object) -> bool:
    """True when a hook's return value means failure.

    Hooks return None (success) or raise; returning False or a ReturnCode other than RTC_OK
    is accepted as an error return, as OpenRTM components return RTC_ERROR.
    """
    if result is None or result is True:
        return False
    if result is False:
        return True
    if isinstance(result, int):
        return int(result) != ReturnCode.RTC_OK
    return False
