"""Client helper for OpenHRP::SequencePlayerService callers whose ORB has a call timeout.

    from rtcf_components.sequence_player.proxy import wait_interpolation
    svc.setJointAngles(q, 30.0)
    wait_interpolation(svc)                  # any motion length; hrpsys: svc.waitInterpolation()
    wait_interpolation(svc, "larm")          # waitInterpolationOfGroup("larm")

hrpsys's waitInterpolation blocks for the whole motion in one call, which an rtcf client
(10 s call timeout, rtcf.corba.orb) cannot outwait. These wait in bounded calls of the
rtcf extension ``waitInterpolationFor`` (rtcf.corba.client.wait_in_chunks). hrpsys's own
clients, without a call timeout, keep calling waitInterpolation unchanged.
"""

from __future__ import annotations

from typing import Any

from rtcf.corba.client import wait_in_chunks

from .service import WAIT_DONE, WAIT_RUNNING

__all__ = ["wait_interpolation"]


def wait_interpolation(svc: Any, gname: str = "", chunk: float | None = None) -> bool:
    """Wait until every signal and group (``gname`` "") or group ``gname`` has played its
    last sample: True, or False when the component is not executing. Runs in: the caller's
    thread."""
    got = wait_in_chunks(lambda t: svc.waitInterpolationFor(gname, t),
                         lambda r: r == WAIT_RUNNING, chunk)
    return got == WAIT_DONE
