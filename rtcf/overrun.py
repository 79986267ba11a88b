"""What follows a late cycle: the overrun policy of every paced schedule in rtcf (the
wall-clock PeriodicEC and the paced simulation time base). Pure: no clock, no thread.

A schedule releases cycles (or simulated instants) at absolute wall-clock deadlines
``d, d + p, d + 2p, ...``. When a cycle due at ``d`` started at ``start`` and ended at
``end`` past the next deadline, :func:`next_deadline` says when the next one runs:

* ``skip`` (the wall-clock EC's default): at the first deadline still ahead and at least
  half a period after this cycle's start; every deadline given up counts as one overrun (and
  as skipped). No cycle ever starts early, so a controller is never handed a burst of
  near-zero periods (ros2_control's loop and PR2's skip missed deadlines the same way).
* ``catch_up`` (the simulation time base's): the next cycle runs at once, and so on until
  the schedule is caught up; a cycle that ends past the next deadline counts one overrun.

Either way, more than :data:`RESYNC_LAG` behind (a suspended process, a debugger), the
schedule starts afresh from the end of the late cycle instead of running a burst: catch_up
counts the deadlines given up as overruns and as skipped.

A schedule that cannot drop a cycle (simulated time: every instant must run, in order) uses
the deadline returned only to place its next instant on the wall clock: under ``skip`` its
wall-clock schedule slips by the periods given up (simulated time falls behind the wall
clock by that much), under ``catch_up`` it runs them back to back.
"""

from __future__ import annotations

OVERRUN_POLICIES = ("skip", "catch_up")
RESYNC_LAG = 1.0   # [s] behind by more than this, a schedule restarts instead of bursting


def check_policy(policy: object) -> str | None:
    """None when ``policy`` is one of OVERRUN_POLICIES, else what is wrong."""
    if policy in OVERRUN_POLICIES:
        return None
    return f"expected one of {', '.join(OVERRUN_POLICIES)}"


def next_deadline(deadline: float, end: float, period: float, policy: str = "skip",
                  start: float | None = None) -> tuple[float, int, int]:
    """The deadline of the next cycle after one that was due at ``deadline``, started at
    ``start`` and ended at ``end`` [s]: (next deadline, overruns to count, deadlines
    skipped). See the module doc for the policies. Under ``skip`` the next cycle also starts
    at least half a period after this one's start: a cycle that started late (a late
    wake-up) is not followed by one a few microseconds later (a controller would see a tiny
    period); the deadline given up counts as skipped. Pure."""
    nxt = deadline + period
    if policy == "catch_up":
        if end <= nxt:
            return nxt, 0, 0
        if end - nxt > RESYNC_LAG:        # hopelessly behind (e.g. suspended): resync
            missed = int((end - nxt) // period)
            return end, 1 + missed, missed + 1
        return nxt, 1, 0
    earliest = start + 0.5 * period if start is not None else end
    if nxt > end and nxt >= earliest:
        return nxt, 0, 0
    m = max(1, int((max(end, earliest) - deadline) // period))
    while deadline + m * period <= end or deadline + m * period < earliest:
        m += 1                                       # float rounding at a grid point
    return deadline + m * period, m - 1, m - 1
