"""Planning in the component's worker process (plan_in_worker): the same plans bit for bit
as in the process, the same refusals, a killed worker refused by name and replaced, and no
worker outliving its component's process."""

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from rtcf.testing import Harness
from rtcf_components.blending_planner import BlendingPlanner
from rtcf_components.blending_planner import commands as cm
from rtcf_components.blending_planner.motion import Settings, Start
from rtcf_components.blending_planner.motion_service import (DONE, FAILED, STOPPED, UNTIL_DONE,
                                                              UNTIL_STARTED)
from rtcf_components.blending_planner.planner import DR_COND_NONE, Request
from rtcf_components.blending_planner.worker import (InProcess, PlanTimeout, PlanWorker,
                                                     WorkerDied)
from rtcf_components.scenarios import SQUARE

pytestmark = pytest.mark.slow       # every test starts worker processes

NONE = cm.DR_COND_NONE
PARAMS = {"joint_limits": [360, 360, 160, 360, 360, 360],
          "joint_speeds": [120, 120, 180, 225, 225, 225],
          "user_frames": "101: 559, 34.5, 400, 0, 0, 0"}


def harness(worker: bool, rate: float = 1000.0, **params) -> Harness:
    h = Harness(BlendingPlanner, params={**PARAMS, "plan_in_worker": worker, **params},
                rate=rate)
    h.activate()
    return h


def same(a, b) -> None:
    """Bit for bit: the same dtype, shape and bytes."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes()


def moveb(h, segs, v=150.0, a=600.0, ref=1, sync=1):          # ASYNC: amoveb
    core = h.comp.service.core
    ok = core.move_blending(segs, len(segs), [v, DR_COND_NONE], [a, DR_COND_NONE], 0.0, ref,
                            0, sync)
    return ok, core.last_error()


def run_out(h, limit=100000):
    n = 0
    while h.comp.stream.busy:
        h.step()
        n += 1
        assert n < limit


def drl(h, cmd):
    """Submit ``cmd``, run it to its end: (state, DR_Error type, reason, its trajectory)."""
    m = h.comp.service.motions
    tid = m.submit(cmd)
    state, etype, reason = m.wait(tid, UNTIL_STARTED, 60.0)
    n = 0
    while state not in (DONE, FAILED, STOPPED):
        h.step()
        state, etype, reason = m.status(tid)[:3]
        n += 1
        assert n < 100000
    return state, etype, reason, m._tickets[tid].traj


@pytest.fixture
def pair():
    hs = [harness(True), harness(False)]
    yield hs
    for h in hs:
        h.close()


def test_the_worker_plans_bit_for_bit_as_the_process(pair):
    w, p = pair
    assert isinstance(w.comp.planning, PlanWorker) and isinstance(p.comp.planning, InProcess)
    # moveBlending of the square (TOOL frame, blended corners)
    for h in pair:
        ok, why = moveb(h, SQUARE)
        assert ok, why
    (pw, sw), (pp, sp) = w.comp.last_plan, p.comp.last_plan
    for f in ("t", "s", "speed", "pos", "quat"):
        same(getattr(sw, f), getattr(sp, f))
    same(w.comp.motion.q, p.comp.motion.q)
    assert (pw.length, pw.duration, pw.t_acc, pw.v_peak) == \
        (pp.length, pp.duration, pp.t_acc, pp.v_peak)
    for h in pair:
        run_out(h)
    same(w.comp.stream.q, p.comp.stream.q)
    # movej, movel (in a user frame), movesx: the trajectories the planning thread got
    cmds = [cm.MoveJ([10, -20, 100, 5, 60, 15], [60] * 6, [120] * 6, 0.0, 0.0,
                     cm.ABS, 0),
            cm.MoveL([100, 50, 120, 0, 180, 0], [200, NONE], [400, NONE], 0.0, 0.0, 101, cm.ABS, 0),
            cm.MoveSX([[500, 100, 500, 0, 180, 0], [550, -50, 450, 0, 180, 0]],
                      [150, NONE], [300, NONE], 0.0, 0, cm.ABS, 0)]
    for cmd in cmds:
        got = [drl(h, cmd) for h in pair]
        (sw_, ew, rw, tw), (sp_, ep, rp, tp) = got
        assert (sw_, ew, rw) == (sp_, ep, rp) and sw_ == DONE, rw
        for f in ("q", "pos", "quat"):
            same(getattr(tw, f), getattr(tp, f))
        assert (tw.duration, tw.t_acc, tw.blend_k, tw.note) == \
            (tp.duration, tp.t_acc, tp.blend_k, tp.note)
        same(w.comp.stream.q, p.comp.stream.q)


def test_refusals_keep_their_text(pair):
    w, p = pair
    far = [[3000, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]]          # out of reach: IK fails
    bad = [[100, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]]
    for segs, kw in ((far, {}), (bad, {"v": -1.0})):
        (okw, why_w), (okp, why_p) = (moveb(h, segs, **kw) for h in pair)
        assert not okw and not okp and why_w == why_p and why_w
    cmd = cm.MoveL([5000, 0, 0, 0, 0, 0], [200, NONE], [400, NONE], 0.0, 0.0, 0, cm.REL, 0)
    (sw, ew, rw, _), (sp, ep, rp, _) = (drl(h, cmd) for h in pair)
    assert (sw, ew, rw) == (sp, ep, rp) and sw == FAILED and rw


def test_an_exception_in_the_worker_reads_as_in_the_process():
    worker = PlanWorker("bp", None)
    worker.start()
    try:
        start = Start(None, np.zeros(3), np.eye(3))
        cmd = cm.MoveL([0, 0, 100, 0, 0, 0], [100, NONE], [200, NONE], 0.0, 0.0, 0, cm.REL, 0)
        for fn in (worker.motion, InProcess().motion):
            with pytest.raises(AttributeError) as got:
                fn(cmd, start, None, None)           # no settings: a bug in the caller
            if fn == worker.motion:
                in_worker = repr(got.value)
        assert repr(got.value) == in_worker
        # a MotionError keeps its DR_Error type and reason
        st = Settings(0.01)
        errs = []
        for fn in (worker.motion, InProcess().motion):
            with pytest.raises(cm.MotionError) as got:
                fn(cm.MoveJ([0] * 6, [10] * 6, [10] * 6, 0, 0, 0, 0), start, st,
                   None)
            errs.append((got.value.type, got.value.reason))
        assert errs[0] == errs[1] and errs[0][0] == cm.DR_ERROR_RUNTIME
    finally:
        worker.close()
    assert worker._proc.poll() is not None


def _kill_while_planning(h, start_call):
    """Freeze the worker, start a call, kill the worker -9 once the call waits on it."""
    planning = h.comp.planning
    pid = planning.pid
    os.kill(pid, signal.SIGSTOP)
    got = {}
    th = threading.Thread(target=lambda: got.setdefault("r", start_call()))
    th.start()
    deadline = time.monotonic() + 30
    while planning.waiting_on != pid:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    th.join(30)
    assert not th.is_alive()
    return pid, got["r"]


def test_a_killed_worker_fails_the_call_by_name_and_the_next_one_gets_a_new_worker():
    h = harness(True, rate=100.0)
    try:
        name = h.comp.instance_name
        pid, (ok, why) = _kill_while_planning(h, lambda: moveb(h, SQUARE))
        assert not ok
        assert name in why and "planning worker process" in why and str(pid) in why
        assert "signal 9" in why
        assert not h.comp.stream.busy                  # nothing moved
        ok, why = moveb(h, SQUARE)
        assert ok, why
        assert h.comp.planning.pid != pid
        run_out(h)
        # the same for a DRL motion, refused with DR_ERROR_RUNTIME
        cmd = cm.MoveL([0, 0, 50, 0, 0, 0], [100, NONE], [200, NONE], 0.0, 0.0, 0, cm.REL, 0)
        m = h.comp.service.motions

        def submit_and_wait():
            tid = m.submit(cmd)
            return m.wait(tid, UNTIL_DONE, 60.0)
        pid, (state, etype, reason) = _kill_while_planning(h, submit_and_wait)
        assert state == FAILED and etype == cm.DR_ERROR_RUNTIME
        assert name in reason and "planning worker process" in reason and str(pid) in reason
        state, etype, reason, _ = drl(h, cmd)
        assert state == DONE, reason
    finally:
        h.close()
    assert h.comp.planning._proc.poll() is not None


def _stopped_worker(h):
    """SIGSTOP the component's worker (started and idle): its pid."""
    planning = h.comp.planning
    planning.start()
    pid = planning.pid
    os.kill(pid, signal.SIGSTOP)
    return pid


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def limit(h, seconds: float) -> None:
    """plan_timeout set as a client sets it, applied at the next cycle."""
    h.comp.params.set("plan_timeout", seconds)
    h.step()
    assert h.comp.plan_timeout == seconds


def test_a_stopped_worker_is_refused_after_plan_timeout_killed_and_replaced():
    h = harness(True, rate=100.0, plan_timeout=1.0)
    pids = []
    try:
        name = h.comp.instance_name
        pid = _stopped_worker(h)
        pids.append(pid)
        t0 = time.monotonic()
        ok, why = moveb(h, SQUARE)
        assert time.monotonic() - t0 < 20
        assert not ok
        assert name in why and str(pid) in why and "plan_timeout = 1 s" in why, why
        assert _gone(pid)                                # killed, not left stopped
        assert not h.comp.stream.busy                    # nothing moved
        assert h.comp.service.core._not_planning.is_set()    # not left planning
        # a new worker plans it (it loads the arm first: on a busy machine that and the plan
        # may take longer than 1 s, so a generous limit while a live worker plans)
        limit(h, 120.0)
        ok, why = moveb(h, SQUARE)
        assert ok, why
        assert h.comp.planning.pid not in (None, pid)
        run_out(h)
        limit(h, 1.0)
        # a DRL motion: refused with DR_ERROR_RUNTIME, the same text
        cmd = cm.MoveL([0, 0, 50, 0, 0, 0], [100, NONE], [200, NONE], 0.0, 0.0, 0, cm.REL, 0)
        m = h.comp.service.motions
        pid = _stopped_worker(h)
        pids.append(pid)
        state, etype, reason = m.wait(m.submit(cmd), UNTIL_DONE, 60.0)
        assert state == FAILED and etype == cm.DR_ERROR_RUNTIME
        assert name in reason and str(pid) in reason and "plan_timeout = 1 s" in reason
        assert _gone(pid)
        limit(h, 120.0)
        state, etype, reason, _ = drl(h, cmd)
        assert state == DONE, reason
    finally:
        for pid in pids:                                 # never leave a stopped process
            if not _gone(pid):
                os.kill(pid, signal.SIGKILL)
        h.close()


def test_plan_timeout_0_waits_for_a_slow_worker():
    w = PlanWorker("bp", None, timeout=0.0)
    w.start()
    pid = w.pid
    os.kill(pid, signal.SIGSTOP)
    got = {}

    def call():
        try:
            w.motion(cm.MoveJ([0] * 6, [10] * 6, [10] * 6),
                     Start(None, np.zeros(3), np.eye(3)), Settings(0.01), None)
        except Exception as e:                           # noqa: BLE001 (the answer)
            got["e"] = e
    th = threading.Thread(target=call)
    try:
        th.start()
        deadline = time.monotonic() + 30
        while w.waiting_on != pid:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        th.join(1.5)
        assert th.is_alive()                             # still waiting: no limit
        os.kill(pid, signal.SIGCONT)
        th.join(30)
        assert not th.is_alive()
        assert isinstance(got["e"], cm.MotionError)      # answered (no arm in this worker)
        assert not isinstance(got["e"], PlanTimeout)
        assert w.pid == pid
    finally:
        if not _gone(pid):
            os.kill(pid, signal.SIGCONT)
        w.close()
    assert _gone(pid)


def test_plan_nice_lowers_the_workers_priority():
    w = PlanWorker("bp", None, nice=5)
    try:
        with pytest.raises(cm.MotionError):             # answered: os.nice has run
            w.motion(cm.MoveJ([0] * 6, [10] * 6, [10] * 6),
                     Start(None, np.zeros(3), np.eye(3)), Settings(0.01), None)
        with open(f"/proc/{w.pid}/stat") as f:
            nice = int(f.read().rsplit(")", 1)[1].split()[16])
        assert nice == min(19, os.nice(0) + 5)
    finally:
        w.close()


def test_a_negative_plan_timeout_is_refused_by_name():
    with pytest.raises(Exception, match="plan_timeout"):
        Harness(BlendingPlanner, params={**PARAMS, "plan_timeout": -1.0}, rate=100.0)


def test_no_worker_without_the_parameter_and_a_refusal_after_finalize():
    h = harness(False, rate=100.0)
    try:
        assert isinstance(h.comp.planning, InProcess)
    finally:
        h.close()
    w = PlanWorker("bp", None)
    w.start()
    w.close()
    with pytest.raises(WorkerDied, match="bp: its planning worker process is stopped"):
        w.motion(None, None, None, None)


def _alive(pid: int) -> bool:
    """A process that runs (a zombie waiting for its parent's wait() counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


SCRIPT = textwrap.dedent("""
    import sys, time
    import numpy as np
    from rtcf.testing import Harness
    from rtcf_components.blending_planner import BlendingPlanner
    from rtcf_components.blending_planner import commands as cm
    from rtcf_components.blending_planner.motion import Settings, Start
    # no main guard: the worker must not run this script again
    h = Harness(BlendingPlanner, params={"use_arm": False}, rate=100.0)
    h.activate()
    try:                                   # the worker answers: it runs
        h.comp.planning.motion(cm.MoveJ([0] * 6, [10] * 6, [10] * 6),
                               Start(None, np.zeros(3), np.eye(3)), Settings(0.01), None)
    except cm.MotionError as e:
        assert "needs the arm model" in e.reason
    print(h.comp.planning.pid, flush=True)
    if sys.argv[1] == "close":
        h.close()
        assert h.comp.planning._proc.returncode is not None    # waited for
    elif sys.argv[1] == "wait":
        time.sleep(600)
""")


@pytest.mark.parametrize("how", ["kill", "close", "exit"])
def test_the_worker_never_outlives_its_component(how, tmp_path):
    script = tmp_path / "comp.py"
    script.write_text(SCRIPT)
    proc = subprocess.Popen([sys.executable, str(script), "wait" if how == "kill" else how],
                            stdout=subprocess.PIPE, text=True)
    try:
        pid = int(proc.stdout.readline())
        if how == "kill":
            assert _alive(pid)
            proc.kill()
        assert proc.wait(60) in ((-signal.SIGKILL,) if how == "kill" else (0,))
        deadline = time.monotonic() + 30
        while _alive(pid):
            assert time.monotonic() < deadline, f"worker {pid} outlived its component"
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _fifo_permitted() -> bool:
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
    except (AttributeError, OSError):
        return False
    os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    return True


def test_a_worker_started_by_a_sched_fifo_thread_plans_as_a_normal_process():
    """A manager's ORB threads run under SCHED_FIFO (manager.realtime.thread_priority): a
    worker one of them starts must not inherit it, nor its BLAS threads made at import."""
    if not _fifo_permitted():
        pytest.skip("SCHED_FIFO is not permitted here")
    w = PlanWorker("bp", None)
    made: list[BaseException] = []

    def start_from_a_fifo_thread() -> None:
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
            w.start()
        except BaseException as e:          # noqa: BLE001 (reported below)
            made.append(e)
    t = threading.Thread(target=start_from_a_fifo_thread)
    t.start()
    t.join()
    try:
        assert not made
        with pytest.raises(cm.MotionError):             # answered: its imports are done
            w.motion(cm.MoveJ([0] * 6, [10] * 6, [10] * 6),
                     Start(None, np.zeros(3), np.eye(3)), Settings(0.01), None)
        policies = {int(tid): os.sched_getscheduler(int(tid))
                    for tid in os.listdir(f"/proc/{w.pid}/task")}
        assert policies and set(policies.values()) == {os.SCHED_OTHER}, policies
    finally:
        w.close()


def test_the_worker_loads_the_batched_fk_kernel_before_the_first_command():
    """The compiled batched FK (numba, about half a second of CPU to load in a new process)
    is loaded by the worker as it starts, not by the first motion a client asks for."""
    pytest.importorskip("numba")
    h = harness(True)
    try:
        pid = h.comp.planning.pid

        def loaded() -> bool:
            with open(f"/proc/{pid}/maps") as f:
                return "llvmlite" in f.read()
        deadline = time.monotonic() + 120
        while not loaded():
            assert time.monotonic() < deadline, "the worker never loaded the FK kernel"
            time.sleep(0.1)
    finally:
        h.close()


def test_a_ctrl_c_to_the_process_group_does_not_end_the_worker():
    """A terminal's Ctrl-C reaches every process of the manager's group; the worker, still
    importing its modules on a loaded machine, must neither die nor print a traceback: the
    manager ends it."""
    w = PlanWorker("bp", None)
    w.start()
    pid = w.pid

    def sigint_ignored() -> bool:
        with open(f"/proc/{pid}/status") as f:
            mask = next(ln for ln in f if ln.startswith("SigIgn:")).split()[1]
        return bool(int(mask, 16) & (1 << (signal.SIGINT - 1)))
    try:
        deadline = time.monotonic() + 60
        while not sigint_ignored():                  # its first statement has run
            assert time.monotonic() < deadline and _alive(pid)
            time.sleep(0.005)
        for _ in range(20):                          # while it imports, and after
            os.kill(pid, signal.SIGINT)
            time.sleep(0.01)
        with pytest.raises(cm.MotionError):          # alive, and it answers
            w.motion(cm.MoveJ([0] * 6, [10] * 6, [10] * 6),
                     Start(None, np.zeros(3), np.eye(3)), Settings(0.01), None)
        assert w.pid == pid
    finally:
        w.close()


def _idle_permitted() -> bool:
    from rtcf_components.blending_planner.worker_boot import may_leave_sched_idle
    return hasattr(os, "SCHED_IDLE") and may_leave_sched_idle()


def _in_loading(body):
    """Run ``body(start, policy, peer, seen)`` between IdleStart's begin and done in a
    thread of its own (the test's thread keeps its policy); ``policy()`` reads that
    thread's policy."""
    from rtcf_components.blending_planner.worker_boot import IdleStart
    mine, theirs = __import__("socket").socketpair()
    seen: dict = {}

    def run():
        try:
            start = IdleStart(mine.fileno()).begin()
            try:
                body(start, lambda: os.sched_getscheduler(0), theirs, seen)
            finally:
                start.done()
            seen["after"] = os.sched_getscheduler(0)
        except BaseException as e:      # noqa: BLE001 - reported by the test
            seen["error"] = e
    t = threading.Thread(target=run)
    t.start()
    t.join(60)
    mine.close()
    theirs.close()
    assert not t.is_alive()
    if "error" in seen:
        raise seen["error"]
    return seen


@pytest.mark.skipif(not _idle_permitted(), reason="SCHED_IDLE could not be left here")
def test_the_worker_loads_in_idle_time_and_a_command_ends_that_at_once():
    """The start runs under SCHED_IDLE; a command arriving puts the loading thread back to
    SCHED_OTHER while it still loads (nothing is read from the socket); the end of the
    loading does too when no command came."""
    def body(start, policy, peer, seen):
        seen["loading"] = policy()
        peer.sendall(b"a command")
        deadline = time.monotonic() + 30
        while policy() != os.SCHED_OTHER:
            assert time.monotonic() < deadline, "a command left the loading idle"
            time.sleep(0.002)
        seen["still_idle"] = start.idle
    seen = _in_loading(body)
    assert seen["loading"] == os.SCHED_IDLE
    assert seen["still_idle"] is False and seen["after"] == os.SCHED_OTHER

    def quiet(start, policy, peer, seen):
        seen["loading"] = policy()
    seen = _in_loading(quiet)
    assert seen["loading"] == os.SCHED_IDLE and seen["after"] == os.SCHED_OTHER
    assert not [t for t in threading.enumerate() if t.name == "idle-loading"], \
        "the watcher outlived the loading"


@pytest.mark.skipif(not _idle_permitted(), reason="SCHED_IDLE could not be left here")
def test_a_command_waiting_before_the_start_goes_idle_keeps_it_normal():
    """The first command may arrive before the process goes idle; the watcher, started
    first, may then have seen it already: the start does not stay idle either way."""
    from rtcf_components.blending_planner.worker_boot import IdleStart
    for _ in range(20):                      # the two threads' order differs run to run
        mine, theirs = __import__("socket").socketpair()
        seen: dict = {}

        def run():
            start = IdleStart(mine.fileno()).begin()
            seen["policy"] = os.sched_getscheduler(0)
            seen["idle"] = start.idle
            start.done()
        theirs.sendall(b"a command")
        t = threading.Thread(target=run)
        t.start()
        t.join(30)
        mine.close()
        theirs.close()
        assert seen == {"policy": os.SCHED_OTHER, "idle": False}


@pytest.mark.skipif(not _idle_permitted(), reason="SCHED_IDLE could not be left here")
def test_threads_started_while_idle_come_back_to_the_normal_policy():
    """A thread the idle thread starts (numpy's BLAS pool at its import) inherits
    SCHED_IDLE; the end of the start puts it back too, not only the loading thread."""
    def body(start, policy, peer, seen):
        ready, leave = threading.Event(), threading.Event()

        def child():
            seen["child_tid"] = threading.get_native_id()
            seen["child_while"] = os.sched_getscheduler(0)
            ready.set()
            leave.wait(30)
            seen["child_after"] = os.sched_getscheduler(0)
        seen["thread"] = t = threading.Thread(target=child)
        seen["leave"] = leave
        t.start()
        ready.wait(30)
    seen = _in_loading(body)
    seen["leave"].set()
    seen["thread"].join(30)
    assert seen["child_while"] == os.SCHED_IDLE
    assert seen["child_after"] == os.SCHED_OTHER


def _policies(pid: int) -> dict[int, int]:
    """The scheduling policy of every thread of process ``pid`` (/proc's stat, field 41)."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                out[int(tid)] = int(f.read().rsplit(")", 1)[1].split()[38])
        except (OSError, IndexError):
            pass
    return out


@pytest.mark.skipif(not _idle_permitted(), reason="SCHED_IDLE could not be left here")
def test_the_whole_start_of_a_worker_process_is_idle_and_a_command_makes_it_normal():
    """From its first module on (before numpy, the package and rtcf are imported) the
    worker process runs under SCHED_IDLE; once a command is answered every thread of it
    (the BLAS pool made at numpy's import included) is SCHED_OTHER again."""
    w = PlanWorker("bp", ("doosan_m1013", "arm", PARAMS["joint_limits"],
                          PARAMS["joint_speeds"]))
    w.start()
    try:
        seen = set()
        deadline = time.monotonic() + 10
        while os.SCHED_IDLE not in seen and time.monotonic() < deadline:
            seen |= set(_policies(w.pid).values())
            time.sleep(0.001)
        assert os.SCHED_IDLE in seen, seen
        with pytest.raises(cm.MotionError):             # answered
            w.motion(cm.MoveJ([0] * 6, [10] * 6, [10] * 6),
                     Start(None, np.zeros(3), np.eye(3)), Settings(0.01), None)
        after = _policies(w.pid)
        assert set(after.values()) == {os.SCHED_OTHER}, after
    finally:
        w.close()


@pytest.mark.skipif(not _idle_permitted(), reason="SCHED_IDLE could not be left here")
def test_a_start_that_finds_no_idle_time_goes_on_at_the_normal_policy_after_the_limit():
    """On a machine busy for good the start would never end in idle time: after its limit
    it goes on as a normal process, with no command."""
    from rtcf_components.blending_planner.worker_boot import IdleStart
    mine, theirs = __import__("socket").socketpair()
    seen: dict = {}

    def run():
        start = IdleStart(mine.fileno(), limit=0.2).begin()
        seen["first"] = os.sched_getscheduler(0)
        deadline = time.monotonic() + 60
        while os.sched_getscheduler(0) != os.SCHED_OTHER and time.monotonic() < deadline:
            time.sleep(0.01)
        seen["later"] = os.sched_getscheduler(0)
        seen["idle"] = start.idle
        start.done()
    try:
        t = threading.Thread(target=run)
        t.start()
        t.join(90)
    finally:
        mine.close()
        theirs.close()
    assert seen == {"first": os.SCHED_IDLE, "later": os.SCHED_OTHER, "idle": False}


def test_without_the_right_to_leave_sched_idle_the_loading_keeps_its_policy(monkeypatch):
    from rtcf_components.blending_planner import worker_boot
    monkeypatch.setattr(worker_boot, "may_leave_sched_idle", lambda: False)

    def body(start, policy, peer, seen):
        seen["loading"] = policy()
    seen = _in_loading(body)
    assert seen["loading"] == os.SCHED_OTHER == seen["after"]


def test_close_ends_a_worker_still_loading_without_waiting_for_it():
    """A trial that ends before any command: the worker, still loading its arm and kernel,
    is ended at once (SIGTERM), not asked to end and waited for: it would read the request
    only once loaded, and end by itself (status 0)."""
    w = PlanWorker("bp", ("doosan_m1013", "arm", PARAMS["joint_limits"],
                          PARAMS["joint_speeds"]))
    w.start()
    proc = w._proc
    w.close()
    assert proc.returncode == -signal.SIGTERM


def test_the_workers_numerical_thread_pools_have_one_thread_unless_set(monkeypatch):
    """Planning works on 6x6 matrices: the worker's OpenBLAS / OpenMP / MKL pools get one
    thread (no threads spinning on the cores the ECs need); a value the user set is kept."""
    from rtcf_components.blending_planner.worker import worker_env
    assert worker_env({"OPENBLAS_NUM_THREADS": "4"}) == {
        "OPENBLAS_NUM_THREADS": "4", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    w = PlanWorker("bp", None)
    try:
        with pytest.raises(cm.MotionError):             # answered: the process is up
            w.motion(cm.MoveJ([0] * 6, [10] * 6, [10] * 6),
                     Start(None, np.zeros(3), np.eye(3)), Settings(0.01), None)
        with open(f"/proc/{w.pid}/environ", "rb") as f:
            env = dict(kv.split(b"=", 1) for kv in f.read().split(b"\0") if b"=" in kv)
        assert env[b"OPENBLAS_NUM_THREADS"] == b"1"
    finally:
        w.close()


def test_no_module_of_the_package_shadows_the_standard_library_for_worker_boot():
    """worker_boot.py runs by its path, so its folder comes first on sys.path while it
    imports json, os, select, ...: a module of the package named as a standard one would
    be imported in its place."""
    import sys
    from pathlib import Path
    from rtcf_components.blending_planner import worker_boot
    folder = Path(worker_boot.__file__).parent
    names = {p.stem for p in folder.glob("*.py")} | {p.name for p in folder.iterdir()
                                                     if p.is_dir()}
    assert not names & set(sys.stdlib_module_names)
