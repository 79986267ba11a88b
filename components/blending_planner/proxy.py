"""BlendingPlannerProxy: Doosan's moveb / amoveb / posb front end over CORBA.

    bp = BlendingPlannerProxy("BlendingPlanner0", nameserver="localhost:2809")
    seg = [posb(DR_LINE, [559, 234, 651, 0, 180, 0], radius=20),
           posb(DR_CIRCLE, [659, 334, 651, 0, 180, 0], [759, 234, 651, 0, 180, 0])]
    bp.moveb(seg, vel=100, acc=200)          # SYNC; amoveb returns at once

As in doosan-robot2's DSR_ROBOT2.py, a scalar vel / acc is sent as [value, DR_COND_NONE]
(angular "proportional to the linear motion"), a pair is sent as given, and posb rejects a
LINE with a pos2 or a CIRCLE without one and a negative radius (DR_common2.py). Everything
else is checked by the component, whose refusal is ``False`` plus ``last_error()``.

A SYNC move is sent as an ASYNC one followed by bounded waits (``waitMotion`` in chunks of
``wait_chunk`` [s], rtcf.corba.client.wait_in_chunks), so a motion of any length outlasts
no client call timeout; the answer is the same as the service's SYNC (False and the reason
when the motion was stopped).
"""

from __future__ import annotations

from typing import Any, Sequence

from rtcf.corba.client import wait_in_chunks
from rtcf.corba.idl import stub_module

from .planner import CIRCLE as DR_CIRCLE
from .planner import DR_COND_NONE
from .planner import LINE as DR_LINE
from .planner import ASYNC, DR_STATE_IDLE, SYNC, WAIT_FAILED, WAIT_RUNNING

__all__ = ["BlendingPlannerProxy", "posb", "DR_LINE", "DR_CIRCLE", "DR_COND_NONE"]

Doosan = stub_module("Doosan")


def posb(seg_type: int, posx1: Sequence[float], posx2: Sequence[float] | None = None,
         radius: float = 0.0) -> list[float]:
    """One MoveBlending segment, 14 numbers: pos1, pos2 (zeros for a LINE), type, radius."""
    if seg_type not in (DR_LINE, DR_CIRCLE):
        raise ValueError(f"posb: seg_type must be DR_LINE (0) or DR_CIRCLE (1), got {seg_type!r}")
    if len(posx1) != 6:
        raise ValueError(f"posb: posx1 needs 6 values (x, y, z, A, B, C), got {len(posx1)}")
    if seg_type == DR_LINE and posx2 is not None:
        raise ValueError("posb: a DR_LINE segment takes no posx2")
    if seg_type == DR_CIRCLE and (posx2 is None or len(posx2) != 6):
        raise ValueError("posb: a DR_CIRCLE segment needs posx2 (6 values)")
    if radius < 0:
        raise ValueError(f"posb: radius must be >= 0, got {radius}")
    return [float(v) for v in posx1] + [float(v) for v in (posx2 or [0.0] * 6)] + \
        [float(seg_type), float(radius)]


def _pair(x: float | Sequence[float] | None, name: str) -> list[float]:
    """None (only meaningful with a time) is sent as 0: the component refuses it when
    time = 0, with the reason."""
    if x is None:
        x = 0.0
    if isinstance(x, (int, float)):
        return [float(x), DR_COND_NONE]
    if len(x) != 2:
        raise ValueError(f"{name}: expected a number or 2 numbers, got {x!r}")
    return [float(v) for v in x]


class BlendingPlannerProxy:
    """Client of Doosan::BlendingPlannerService. ``service`` may be given directly;
    otherwise the component ``name`` is found in the naming service ``nameserver``."""

    def __init__(self, name: str = "BlendingPlanner0", nameserver: str = "localhost:2809",
                 service: Any = None, wait_chunk: float | None = None):
        if service is None:
            from rtcf.corba.client import get_service
            service = get_service(name, "BlendingPlannerService",
                                  stub=Doosan.BlendingPlannerService, nameserver=nameserver)
        self.service = service
        self.wait_chunk = wait_chunk      # [s] one waitMotion call (None: from the ORB)

    def move_blending(self, segments: Sequence[Sequence[float]], vel: Sequence[float],
                      acc: Sequence[float], time: float = 0.0, ref: int = 0, mode: int = 0,
                      sync_type: int = 0, pos_cnt: int | None = None) -> bool:
        """MoveBlending.srv field by field (pos_cnt defaults to len(segments))."""
        segs = [[float(v) for v in s] for s in segments]
        n = len(segs) if pos_cnt is None else pos_cnt
        # SYNC is waited for here in bounded calls; other values go as given (refused there)
        started = self.service.moveBlending(segs, n, [float(v) for v in vel],
                                            [float(v) for v in acc], float(time), ref, mode,
                                            ASYNC if sync_type == SYNC else sync_type)
        return started and (sync_type != SYNC or self._wait_newest())

    def move_wait(self) -> bool:
        """Doosan's mwait (the service's moveWait): True at once when no motion runs, else
        once the running one has completed; False (reason in last_error) when it was
        stopped or outlived its plan. Runs in: the caller's thread."""
        return self.service.checkMotion() == DR_STATE_IDLE or self._wait_newest()

    def _wait_newest(self) -> bool:
        """The newest accepted motion's end, in bounded waitMotion calls."""
        got = wait_in_chunks(self.service.waitMotion, lambda r: r == WAIT_RUNNING,
                             self.wait_chunk)
        return got != WAIT_FAILED

    def moveb(self, seg_list: Sequence[Sequence[float]], vel: Any = None, acc: Any = None,
              ref: int = 0, time: float = 0.0, mod: int = 0) -> bool:
        return self.move_blending(seg_list, _pair(vel, "vel"), _pair(acc, "acc"), time, ref,
                                  mod, 0)

    def amoveb(self, seg_list: Sequence[Sequence[float]], vel: Any = None, acc: Any = None,
               ref: int = 0, time: float = 0.0, mod: int = 0) -> bool:
        return self.move_blending(seg_list, _pair(vel, "vel"), _pair(acc, "acc"), time, ref,
                                  mod, 1)

    def last_error(self) -> str:
        return self.service.getLastError()

    def last_plan(self) -> Any:
        return self.service.getLastPlan()

    def tcp_pose(self) -> list[float]:
        return list(self.service.getTcpPose())

    def stop(self) -> bool:
        return self.service.stop()
