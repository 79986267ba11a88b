"""The BlendingPlanner in another process, reached through CORBA with BlendingPlannerProxy:
ASYNC returns at once and the TCP reaches the target, SYNC returns after the motion ended,
refusals come back as False with a reason while the component keeps running, a request while
moving is refused, stop() halts the arm, getLastPlan carries the sampled path.

Setup: the session's private omniNames (conftest ``naming``) and ``python -m rtcf.manager``
on a composition with the BlendingPlanner (M1013 arm model) on a 100 Hz periodic EC; the
process is stopped at teardown (process group SIGTERM, then SIGKILL).
"""

from __future__ import annotations

import time

import pytest

from integration_support import wait_until

pytestmark = pytest.mark.slow    # seconds per test: left out of scripts/test -m "not slow"

COMPOSITION = """\
name: blending_only
components:
  - {type: BlendingPlanner, module: blending_planner}
execution_contexts:
  - {name: arm, kind: periodic, rate: 100, members: [BlendingPlanner0]}
activate: all
"""


@pytest.fixture(scope="module")
def bp(module_launch, naming):
    from rtcf_components.blending_planner.proxy import BlendingPlannerProxy
    mp = module_launch(COMPOSITION, "BlendingPlanner0", "exec_cxt.periodic.sched_fifo:NO")
    proxy = BlendingPlannerProxy("BlendingPlanner0", nameserver=f"localhost:{naming.port}")
    proxy.mp = mp
    return proxy


def rel_line(dx, dy, dz, r=0.0):
    from rtcf_components.blending_planner.proxy import DR_LINE, posb
    return posb(DR_LINE, [dx, dy, dz, 0, 0, 0], radius=r)


def close(a, b, tol=1e-6):
    return all(abs(x - y) <= tol for x, y in zip(a, b))


def test_async_returns_at_once_and_reaches_the_target(bp):
    start = bp.tcp_pose()
    assert bp.amoveb([rel_line(50, 0, 0, 10), rel_line(0, 50, 0)], vel=100, acc=400, mod=1,
                     ref=1), bp.last_error()
    # the motion (about 1 s) is running: a second request is refused with a reason
    assert not bp.amoveb([rel_line(10, 0, 0)], vel=100, acc=400, mod=1)
    assert "already running" in bp.last_error()
    plan = bp.last_plan()
    assert plan.valid and plan.dt == pytest.approx(0.01)
    assert plan.length == pytest.approx(100 - 20 + 10 * 3.141592653589793 / 2, abs=1e-6)
    assert len(plan.samples) == int(plan.duration / 0.01 - 1e-9) + 2
    end = list(plan.samples[-1].pose)
    wait_until(lambda: close(bp.tcp_pose()[:3], end[:3]), timeout=plan.duration + 10,
               what="the TCP at the end of the path")
    assert not close(start[:3], end[:3], 1.0)


def test_sync_returns_after_the_motion_ended(bp):
    assert bp.moveb([rel_line(0, 0, -40)], vel=200, acc=800, mod=1), bp.last_error()
    plan = bp.last_plan()
    # returned only once the motion had ended: the TCP is already at the last sample
    assert close(bp.tcp_pose()[:3], list(plan.samples[-1].pose)[:3])
    assert bp.last_error() == ""


def test_refusals_over_corba_and_the_component_keeps_running(bp):
    before = bp.tcp_pose()
    bad = {
        "radius 0": ([rel_line(50, 0, 0), rel_line(0, 50, 0)], {}),
        "duplicated line": ([rel_line(50, 0, 0, 5), rel_line(50, 0, 0)], {}),
        "rapid direction change": ([rel_line(50, 0, 0, 5), rel_line(-50, 0, 0)], {}),
        "angular": ([rel_line(50, 0, 0)], {"vel": [100, 0]}),
        "user frame 150 is not configured": ([rel_line(50, 0, 0)], {"ref": 150}),
        "posCnt is 3 but 1 segments": ([rel_line(50, 0, 0)], {"pos_cnt": 3}),
    }
    for words, (segs, kw) in bad.items():
        vel = kw.pop("vel", [100, -10000])
        assert bp.move_blending(segs, vel, [400, -10000], mode=1, **kw) is False, words
        assert words in bp.last_error(), (words, bp.last_error())
    assert bp.tcp_pose() == pytest.approx(before)
    assert bp.mp.alive()
    assert bp.moveb([rel_line(0, 0, 10)], vel=100, acc=400, mod=1), bp.last_error()


def test_stop_halts_the_motion(bp):
    z0 = bp.tcp_pose()[2]
    assert bp.amoveb([rel_line(0, 0, -150)], vel=50, acc=200, mod=1), bp.last_error()
    # stopped once it is on its way (20 mm of the 150 mm): early however slow the machine
    wait_until(lambda: z0 - bp.tcp_pose()[2] > 20.0, what="the TCP 20 mm on its way")
    assert bp.stop() is True
    # decelerates within v/a = 0.25 s, then holds
    wait_until(lambda: bp.stop() is False, timeout=5, what="the motion to end")
    held = bp.tcp_pose()
    time.sleep(0.1)
    assert bp.tcp_pose() == pytest.approx(held)
    end = list(bp.last_plan().samples[-1].pose)
    assert abs(held[2] - end[2]) > 10.0              # it did not reach the end
