"""Motions longer than the client's call timeout: the proxies wait in bounded calls
(BlendingPlanner waitMotion, SequencePlayer waitInterpolationFor) so moveb, mwait and
wait_interpolation work for any motion length, while a hung or dead server still ends the
wait with a CORBA exception instead of hanging the client.

The client call timeout is made small (2.5 s) on the test's own references, and the motions
last about 6 s: a single blocking call (the old SYNC moveBlending, hrpsys's
waitInterpolation) times out, the chunked waits (0.2 s per call) do not. The other calls
(planning a motion takes a few calls into the EC thread) and the answer of each wait get
the rest of the 2.5 s, which a loaded machine needs (1 s was not always enough at load 17). Setup: the session's
private omniNames and ``python -m rtcf.manager`` with a BlendingPlanner and a SequencePlayer
on 100 Hz periodic ECs, stopped at teardown.
"""

from __future__ import annotations

import math
import os
import signal
import threading

import omniORB
import pytest
from omniORB import CORBA

from integration_support import wait_until
from rtcf_components.blending_planner.planner import DR_STATE_BUSY

pytestmark = pytest.mark.slow    # seconds per test: left out of scripts/test -m "not slow"

COMPOSITION = """\
name: long_waits
components:
  - {type: BlendingPlanner, module: blending_planner}
  - {type: SequencePlayer, module: sequence_player, name: seq, params: {dt: 0.01}}
execution_contexts:
  - {name: arm, kind: periodic, rate: 100, members: [BlendingPlanner0]}
  - {name: e, kind: periodic, rate: 100, members: [seq]}
activate: all
"""
SHORT_MS = 2500         # the test's client call timeout [ms]
CHUNK = 0.2             # [s] one bounded wait call
V = 10.0                # [mm/s] the arm's speed: 60 mm take 6 s
N = 26                  # NAO joints


@pytest.fixture(scope="module")
def system(module_launch, naming):
    return module_launch(COMPOSITION, ["BlendingPlanner0", "seq"],
                         "exec_cxt.periodic.sched_fifo:NO")


@pytest.fixture(scope="module")
def bp(system, naming):
    from rtcf_components.blending_planner.proxy import BlendingPlannerProxy
    proxy = BlendingPlannerProxy("BlendingPlanner0", nameserver=f"localhost:{naming.port}",
                                 wait_chunk=CHUNK)
    omniORB.setClientCallTimeout(proxy.service, SHORT_MS)
    return proxy


@pytest.fixture(scope="module")
def seq(system, naming):
    from rtcf.corba.client import get_service
    from rtcf.corba.idl import stub_module
    svc = get_service("seq", "SequencePlayerService", instance="service0",
                      stub=stub_module("OpenHRP").SequencePlayerService,
                      nameserver=f"localhost:{naming.port}")
    omniORB.setClientCallTimeout(svc, SHORT_MS)
    return svc


def down(dz):
    from rtcf_components.blending_planner.proxy import DR_LINE, posb
    return [posb(DR_LINE, [0, 0, dz, 0, 0, 0])]


def close(a, b, tol=1e-6):
    return all(abs(x - y) <= tol for x, y in zip(a, b))


def test_a_single_sync_call_times_out_where_moveb_does_not(bp):
    # the old way, one blocking call: longer than the call timeout
    with pytest.raises(CORBA.TIMEOUT):
        bp.service.moveBlending(down(-60), 1, [V, -10000.0], [400.0, -10000.0], 0.0, 0,
                                1, 0)
    # the call timed out on our side; the planner goes on (on a loaded machine it may still
    # be planning): once the motion runs, mwait across several bounded calls sees it end
    wait_until(lambda: bp.service.checkMotion() == DR_STATE_BUSY, what="the motion running")
    assert bp.move_wait(), bp.last_error()
    # moveb (SYNC) of the same length returns True once the motion has ended
    assert bp.moveb(down(60), vel=V, acc=400, mod=1), bp.last_error()
    plan = bp.last_plan()
    assert plan.duration > 2 * SHORT_MS / 1000
    assert close(bp.tcp_pose()[:3], list(plan.samples[-1].pose)[:3])
    assert bp.service.waitMotion(0.0) == 0          # nothing runs: done at once


def test_a_stopped_motion_is_reported_by_the_chunked_wait(bp):
    assert bp.amoveb(down(-60), vel=V, acc=400, mod=1), bp.last_error()
    stopper = threading.Timer(0.5, bp.stop)
    stopper.start()
    assert not bp.move_wait()
    stopper.join()
    assert "stopped" in bp.last_error()
    assert bp.move_wait()                   # mwait with nothing running: at once, True
    assert bp.moveb(down(60), vel=V, acc=400, mod=1), bp.last_error()


@pytest.mark.parametrize("timeout", [-1.0, math.nan, math.inf, 61.0])
def test_wait_motion_refuses_a_bad_timeout(bp, timeout):
    assert bp.service.waitMotion(timeout) == -1
    assert "waitMotion: timeout must be 0..60 s" in bp.last_error()


def test_dsr_moveb_and_mwait_outlast_the_call_timeout(bp, naming):
    import rtcf_components.blending_planner.dsr as dsr
    p = dsr.connect("BlendingPlanner0", f"localhost:{naming.port}")
    try:
        omniORB.setClientCallTimeout(p.service, SHORT_MS)
        p.wait_chunk = CHUNK
        seg = [dsr.posb(dsr.DR_LINE, dsr.posx(0, 0, -60, 0, 0, 0))]
        assert dsr.moveb(seg, v=V, a=400, mod=dsr.DR_MV_MOD_REL) == 0, dsr.get_last_error()
        assert dsr.amoveb([dsr.posb(dsr.DR_LINE, dsr.posx(0, 0, 60, 0, 0, 0))], v=V, a=400,
                          mod=dsr.DR_MV_MOD_REL) == 0
        assert dsr.check_motion() == dsr.DR_STATE_BUSY
        assert dsr.mwait() == 0
        assert dsr.check_motion() == dsr.DR_STATE_IDLE
    finally:
        dsr._proxy = None


def test_sequence_player_waits_longer_than_the_call_timeout(seq):
    from rtcf_components.sequence_player.proxy import wait_interpolation
    assert seq.setJointAngles([0.1] * N, 6.0)
    with pytest.raises(CORBA.TIMEOUT):
        seq.waitInterpolation()                    # hrpsys's single call: too long here
    assert wait_interpolation(seq, chunk=CHUNK)
    assert seq.isEmpty()
    assert seq.addJointGroup("head", ["HeadYaw", "HeadPitch"])
    assert seq.setJointAnglesOfGroup("head", [0.3, -0.2], 6.0)
    assert seq.waitInterpolationFor("head", 0.1) == 1     # still playing
    assert wait_interpolation(seq, "head", chunk=CHUNK)
    assert seq.waitInterpolationFor("nogroup", 0.0) == 0
    assert seq.waitInterpolationFor("", math.nan) == -1
    assert seq.removeJointGroup("head")


def test_a_hung_then_dead_server_ends_the_wait(bp, seq, system):
    """Last in the module: it stops the system."""
    from rtcf_components.sequence_player.proxy import wait_interpolation
    assert bp.amoveb(down(-60), vel=V, acc=400, mod=1), bp.last_error()
    assert seq.setJointAngles([0.0] * N, 12.0)
    os.killpg(system.pid, signal.SIGSTOP)          # hung: every call times out
    try:
        with pytest.raises(CORBA.TIMEOUT):
            bp.move_wait()
        with pytest.raises(CORBA.TIMEOUT):
            wait_interpolation(seq, chunk=CHUNK)
    finally:
        system.kill()                              # SIGKILL ends a stopped group too
    errors = []

    def waiter():
        try:
            bp.move_wait()
        except CORBA.SystemException as e:
            errors.append(e)
    t = threading.Thread(target=waiter, daemon=True)
    t.start()
    wait_until(lambda: not t.is_alive(), timeout=30, what="the wait on a dead server to end")
    assert errors and isinstance(errors[0], (CORBA.TRANSIENT, CORBA.COMM_FAILURE,
                                             CORBA.OBJECT_NOT_EXIST, CORBA.TIMEOUT))
