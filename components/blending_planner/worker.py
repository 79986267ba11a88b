"""Planning in a worker process of the component's own (parameter ``plan_in_worker``).

Planning a motion is pure Python and numpy work of 0.1 to a few seconds (the IK of every
knot of the path). Done in a thread of the component's process it holds the interpreter's
lock (GIL) for most of that time, and the process's other threads (the EC thread, the
lockstep steps of a split system) wait for it. ``PlanWorker`` runs the same pure functions
(``prepare_moveb``, ``motion.plan_motion``) in a child process: a fresh interpreter
started by exec, never a ``fork`` (the component's process has omniORB threads, which a fork
would copy in an unknown state); the calling thread waits on a socket with the lock
released. The child is started as multiprocessing's ``spawn`` method starts one (the
parent's sys.path, pickled messages on multiprocessing's ``Connection``) but without its
preparation step, which imports the parent's main script again in the child: a script
without an ``if __name__ == "__main__":`` guard (a DRL program, a test's script) would run
a second time there. The child's first module is ``worker_boot`` (the standard library only,
run by its path), which puts the process under SCHED_IDLE before it imports this one and
loads the arm: a start that costs a busy machine nothing (see worker_boot). ``InProcess``
calls them directly (``plan_in_worker`` NO).

The child loads the arm model once (the component's model, chain, limits and speeds) and
gets each call's tool offset and singularity handling with the call, so set_tcp and
set_singularity_handling take effect at the next plan. Same inputs, same code, same numpy:
the plans are bit for bit those planned in the process (tests compare them).

The child never outlives the component's process: it ends on the pipe's end of file, and a
thread of its own ends it when its parent process is gone (a parent killed with SIGKILL
closes no pipe a busy child reads). A child that dies fails the call that waited on it
(``WorkerDied``, naming the instance and the process) and the next call starts a new one.
A child that does not answer within the time limit (the component's ``plan_timeout``: a
hung or stopped process, a plan that never ends) fails the call the same way
(``PlanTimeout``, naming the limit too); it is killed at once, a new one starts at the next
call.
Runs in: ``call`` in any thread but the EC's (one call at a time, the others wait),
``start`` / ``close`` in the manager's thread; ``_serve`` in the child.
"""

from __future__ import annotations

import json
import os
import pickle
import socket
import subprocess
import sys
import threading
import time
import traceback
from multiprocessing.connection import Connection
from typing import Any, Callable

import numpy as np

from .commands import MotionError
from .geometry import posx_from_pose, rot_from_quat
from .motion import plan_motion
from .planner import Request, plan

BOOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "worker_boot.py")

POLL = 0.25          # [s] between two checks of the parent that a busy child still lives
JOIN_TIMEOUT = 2.0   # [s] a closing child has to end before it is terminated


class WorkerDied(Exception):
    """The worker process ended while (or before) it planned a call."""


class PlanTimeout(WorkerDied):
    """The worker process did not answer a call within the time limit (plan_timeout): it
    was killed; the next call starts a new one."""


def prepare_moveb(name: str, req: Request, p0: np.ndarray, r0: np.ndarray,
                  q0: np.ndarray | None, frames: dict, dt: float | None, max_samples: int,
                  arm: Any) -> tuple | str:
    """A moveBlending request planned, sampled at dt and solved through the arm's IK:
    (plan, samples, q or None), or why it is refused. Runs in: any thread but the EC's
    (pure; the worker process or the servant's thread)."""
    res = plan(req, (p0, r0), frames)
    if not res.ok:
        return res.reason
    pl = res.plan
    if dt is None:
        return f"{name} is in no execution context: nothing would move"
    n = pl.n_samples(dt)
    if n > max_samples:
        return (f"the motion lasts {pl.duration:.3f} s = {n} cycles of {dt:g} s, over "
                f"max_samples = {max_samples}")
    samples = pl.sample(dt)
    q = None
    if arm is not None:
        ik = arm.solve_knots(samples.pos, samples.quat, q0, dt)
        if not ik.ok:
            k = ik.index
            seg = pl.segment_at(float(samples.s[k]))
            pose = [round(v, 3) for v in posx_from_pose(samples.pos[k],
                                                        rot_from_quat(samples.quat[k]))]
            return (f"IK fails on segment {seg}, sample {k} of {len(samples)} (t = "
                    f"{samples.t[k]:.3f} s, s = {samples.s[k]:.2f} mm, pose {pose}): "
                    f"{ik.reason}")
        q = ik.q
    return pl, samples, q


def worker_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The worker's environment: the parent's, with the numerical libraries' thread pools
    (OpenMP, OpenBLAS, MKL) at one thread unless it sets them. Planning works on 6x6
    matrices and gains nothing from a pool (bench_blending's plan rows are the same with
    one thread or two), while a pool's threads spin on the cores the execution contexts
    need."""
    env = dict(os.environ if environ is None else environ)
    for key in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(key, "1")
    return env


class InProcess:
    """plan_in_worker NO: the planning functions run in the calling thread."""

    def start(self) -> None:
        pass

    def moveb(self, name, req, p0, r0, q0, frames, dt, max_samples, arm) -> tuple | str:
        return prepare_moveb(name, req, p0, r0, q0, frames, dt, max_samples, arm)

    def motion(self, cmd, start, settings, arm) -> Any:
        return plan_motion(cmd, start, settings, arm)

    def close(self) -> None:
        pass


class PlanWorker:
    """The planning functions in a child process (see the module's docstring).

    ``arm_spec`` (model, chain, joint_limits, joint_speeds) is what the child loads its arm
    from, None without an arm. ``timeout`` [s] (or a function returning it, read at each
    call: the component's plan_timeout): a call the child has not answered in this time is
    refused (PlanTimeout) and the child killed; 0 waits without a limit. ``nice``: the
    child lowers its scheduling priority by this much (os.nice) before it loads anything,
    so that on a busy machine the threads of the execution contexts get the CPU first."""

    def __init__(self, name: str, arm_spec: tuple | None,
                 timeout: float | Callable[[], float] = 0.0, nice: int = 0):
        self.name = name
        self.arm_spec = arm_spec
        self.timeout = timeout
        self.nice = int(nice)
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._conn: Connection | None = None
        self._closed = False
        self.waiting_on: int | None = None    # pid of the child a call waits on

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid

    def start(self) -> None:
        """Start the child (it loads its modules and the arm meanwhile: the first call does
        not wait for that unless it comes at once). Runs in: the manager's thread."""
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self._spawn()

    def _spawn(self) -> None:
        if self._conn is not None:
            self._conn.close()
        mine, theirs = socket.socketpair()
        try:
            proc = subprocess.Popen(
                [sys.executable, BOOT, json.dumps(sys.path), __name__, str(theirs.fileno()),
                 str(os.getpid()), json.dumps(self.arm_spec), str(self.nice)],
                pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, env=worker_env())
        except BaseException:
            mine.close()
            raise
        finally:
            theirs.close()      # the child's end only in the child: its death is our EOF
        self._proc, self._conn = proc, Connection(mine.detach())

    def moveb(self, name, req, p0, r0, q0, frames, dt, max_samples, arm) -> tuple | str:
        return self.call("moveb", (name, req, p0, r0, q0, frames, dt, max_samples),
                         arm)

    def motion(self, cmd, start, settings, arm) -> Any:
        return self.call("motion", (cmd, start, settings), arm)

    def call(self, kind: str, args: tuple, arm: Any) -> Any:
        """Run ``kind`` in the child and return its result, raising what it raised (a
        MotionError with its type and reason). Raises WorkerDied when the child ends before
        it answers, PlanTimeout when it has not answered within the time limit (the child
        is killed then). The limit counts from the request's sending: a call waiting for
        another to end is not limited. Runs in: any thread but the EC's; waits without the
        GIL."""
        arm_state = None if arm is None else (arm.tool, bool(arm.avoid))
        limit = self.timeout() if callable(self.timeout) else self.timeout
        with self._lock:
            if self._closed:
                raise WorkerDied(f"{self.name}: its planning worker process is stopped (the "
                                 "component is finalized)")
            if self._proc is None or self._proc.poll() is not None:
                self._spawn()
            proc, conn = self._proc, self._conn
            try:
                conn.send((kind, args, arm_state))
                self.waiting_on = proc.pid
                end = time.monotonic() + limit if limit > 0 else None
                while not conn.poll(POLL if end is None else
                                    max(0.0, min(POLL, end - time.monotonic()))):
                    if proc.poll() is not None:
                        break
                    if end is not None and time.monotonic() >= end:
                        self._give_up(proc, conn)
                        raise PlanTimeout(
                            f"{self.name}: its planning worker process (pid {proc.pid}) did "
                            f"not answer within plan_timeout = {limit:g} s: the command is "
                            "refused and the process killed; the next command starts a "
                            "new one")
                answer = conn.recv()
            except (EOFError, OSError):
                self.waiting_on = None
                try:
                    proc.wait(1.0)
                except subprocess.TimeoutExpired:
                    pass
                code = proc.returncode
                how = (f"was killed by signal {-code}" if code is not None and code < 0 else
                       f"exited with code {code}" if code is not None else "stopped answering")
                self._conn = None
                conn.close()
                raise WorkerDied(f"{self.name}: its planning worker process (pid {proc.pid}) "
                                 f"{how} while planning this command; the next command "
                                 "starts a new one") from None
            self.waiting_on = None
        tag = answer[0]
        if tag == "ok":
            return answer[1]
        if tag == "motion_error":
            raise MotionError(answer[1], answer[2])
        if tag == "raised":
            exc = answer[1]
        else:
            exc = RemoteError(answer[1])
        exc.add_note(f"raised in {self.name}'s planning worker process:\n{answer[-1]}")
        raise exc

    def _give_up(self, proc: subprocess.Popen, conn: Connection) -> None:
        """Kill a child that did not answer in time (SIGKILL also ends a stopped one) and
        forget it: the next call starts a new one. Runs in: the calling thread, lock held."""
        self.waiting_on = None
        proc.kill()
        try:
            proc.wait(JOIN_TIMEOUT)
        except subprocess.TimeoutExpired:
            pass
        conn.close()
        self._conn = None
        self._proc = None

    def close(self) -> None:
        """End the child and wait for it (terminated, then killed after JOIN_TIMEOUT s). No
        command runs in it when the lock is ours, and it keeps nothing worth saving, so it
        is not asked and waited for: one still loading its arm or kernel (in idle time, see
        worker_boot.IdleStart) would answer only once done. Runs in: the manager's thread
        (on_finalize)."""
        got = self._lock.acquire(timeout=JOIN_TIMEOUT)
        try:
            self._closed = True
            proc, conn = self._proc, self._conn
            if proc is None:
                return
            for end in (proc.terminate, proc.kill):
                end()
                try:
                    proc.wait(JOIN_TIMEOUT)
                    break
                except subprocess.TimeoutExpired:
                    pass
            if conn is not None:
                conn.close()
            self._conn = None
        finally:
            if got:
                self._lock.release()


class RemoteError(Exception):
    """An exception of the child that does not cross processes intact: its repr is the
    original's, so a refusal quoting it reads the same."""

    def __init__(self, text: str):
        super().__init__(text)
        self.text = text

    def __repr__(self) -> str:
        return self.text

    def __str__(self) -> str:
        return self.text


# -- the child ------------------------------------------------------------------------------
def serve(fd: int, spec: list | None, start: Any) -> None:
    """The child's entry, called by worker_boot.main once the process went idle (``start``,
    an IdleStart): the socket's fd, the arm spec (JSON)."""
    _serve(Connection(fd), None if spec is None else tuple(spec), start)


def _serve(conn: Any, arm_spec: tuple | None, start: Any) -> None:
    """The worker process's main loop: one call at a time until None or end of file. The
    arm and the kernel are loaded first, while ``start`` keeps the process idle."""
    base, why = None, ""
    try:
        if arm_spec is not None:
            from .arm import load_arm
            model, chain, limits, speeds = arm_spec
            got = load_arm(model, chain, np.eye(4), limits, speeds)
            if isinstance(got, str):
                why = got
            else:
                base = got
                try:      # the batched FK's compiled kernel (numba) loaded now, while no
                    base.fk_batch(np.zeros((1, base.n)))   # command waits, not in the
                except Exception:                           # first plan (~0.4 s CPU cached)
                    pass
    finally:
        start.done()
    arms: dict[bytes, Any] = {}
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        kind, args, arm_state = msg
        try:
            arm = None
            if arm_state is not None:
                if base is None:
                    raise RuntimeError(f"the worker has no arm: {why or 'no model given'}")
                tool, avoid = arm_state
                key = np.asarray(tool, dtype=float).tobytes()
                arm = arms.get(key)
                if arm is None:
                    arm = arms[key] = base.with_tool(tool)
                arm.avoid = avoid
            if kind == "moveb":
                out = ("ok", prepare_moveb(*args, arm))
            elif kind == "motion":
                out = ("ok", plan_motion(*args, arm))
            else:
                raise ValueError(f"unknown call {kind!r}")
        except MotionError as e:
            out = ("motion_error", e.reason, e.type)
        except Exception as e:
            tb = traceback.format_exc()
            out = ("raised", e, tb) if _crosses(e) else ("text", repr(e), tb)
        try:
            conn.send(out)
        except (OSError, ValueError):
            return
        except Exception:        # a result that does not pickle: say so, keep serving
            conn.send(("text", f"RuntimeError('the plan did not pickle: "
                       f"{traceback.format_exc(limit=1)!r}')", ""))


def _crosses(e: Exception) -> bool:
    """``e`` survives pickling with its type and repr."""
    try:
        back = pickle.loads(pickle.dumps(e))
    except Exception:
        return False
    return type(back) is type(e) and repr(back) == repr(e)
