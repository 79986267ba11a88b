"""rtcf: a Python RT-component framework modeled on OpenRTM-aist and OpenHRP.

The public API; see docs/architecture.md for the architecture.
"""

from .clock import ManualClock, MonotonicClock
from .component import CheckContext, Component, ECInfo, ECPlace
from .datatypes import (DataType, TimedBoolean, TimedDouble, TimedDoubleSeq, TimedLong,
                        TimedLongSeq, TimedOrientation3D, TimedPoint3D, TimedPose3D,
                        TimedAcceleration3D, TimedString, TimedVector3D, Time, type_by_name)
from .errors import (CompositionError, ConfigError, LifecycleError, ParamError, PortError,
                     RtcfError)
from .execution import ExecutionContext, PeriodicEC, SteppedEC
from .lifecycle import LifeCycleState, ReturnCode
from .log import Throttled, get_logger
from .params import Param
from .ports import (InPort, OutPort, PortEvent, PortStatus, ReadStatus, connect,
                    disconnect)
from .waiters import CycleWaiters

__all__ = [
    "Component", "ECInfo", "CheckContext", "ECPlace", "Param", "InPort", "OutPort", "ReadStatus", "PortStatus",
    "PortEvent", "connect", "disconnect", "ExecutionContext", "PeriodicEC", "SteppedEC",
    "LifeCycleState", "ReturnCode", "ManualClock", "MonotonicClock", "DataType", "Time",
    "TimedDoubleSeq", "TimedDouble", "TimedLong", "TimedLongSeq", "TimedBoolean",
    "TimedString", "TimedPoint3D", "TimedOrientation3D", "TimedPose3D",
    "TimedAcceleration3D", "TimedVector3D", "type_by_name", "RtcfError", "ConfigError",
    "CompositionError", "ParamError", "PortError", "LifecycleError", "Throttled",
    "get_logger", "CycleWaiters",
]
