"""A process with an ORB ends without "terminate called without an active exception"
(a manager or a launcher used to die of SIGABRT at exit, now and then).

The cause (rtcf/corba/orb.py's module doc): an omniORB thread that ran Python code gives its
Python thread state back on its way out, which needs the GIL; ``ORB.destroy()`` returns
before its workers have done that, and a thread still doing it when the interpreter
finalises is ended by Python inside a C++ destructor: std::terminate. On a loaded machine the
scheduler makes such a thread late; here a worker-thread hook (omniORBpy's
``addWThreadHook``, which runs on the leaving thread inside that clean-up) holds the thread
that ran the upcalls until the interpreter finalises (at most 2 s), and an object that only
the finalising interpreter's garbage collection frees keeps it finalising until that thread
is done, so the abort happens on every run of the unfixed code.

Two ways out are checked: ``shutdown_orb`` as CorbaRuntime.shutdown calls it, and a process
that exits with its ORB still up while a pool worker leaves (idle for
``-ORBidleThreadTimeout 1``).
"""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PEER = '''
import atexit, gc, sys, threading, time
import omniORB
from rtcf.corba import orb as orbmod          # first: its thread hook runs before ours
from rtcf.corba.idl import stub_module

mode = sys.argv[1]
OpenRTM, OpenRTM__POA = stub_module("OpenRTM"), stub_module("OpenRTM__POA")
upcall_threads = set()             # idents of the omniORB threads that ran put()
holding = set()                    # of those, the ones that still hold a Python state
leaving = threading.Event()        # set when such a thread starts giving its state back
finalising = threading.Event()     # set by the interpreter's finalisation (below)


def late_leaver(kind, wt):
    """A thread that ran put() and now gives its Python state back waits for the
    interpreter to finalise (2 s at most): what a descheduled thread does on a loaded
    machine. Runs in: the omniORB thread, inside omniORBpy's clean-up."""
    if kind == omniORB.WTHREAD_DELETED and wt.ident in upcall_threads:
        leaving.set()
        finalising.wait(2.0)
        holding.discard(wt.ident)


omniORB.addWThreadHook(late_leaver)


class Finaliser:
    """Garbage collected once the interpreter finalises: it lets a thread that still has
    to give its Python state back try now (5 s at most)."""

    def __del__(self):
        finalising.set()
        end = time.monotonic() + 5.0
        while holding and time.monotonic() < end:
            time.sleep(0.01)       # the GIL is free meanwhile


def leave_garbage():
    """The first atexit handler, so the last to run: a cycle that only the collection of
    the finalising interpreter frees (automatic collection off)."""
    gc.disable()
    f = Finaliser()
    f.cycle = f


atexit.register(leave_garbage)


class Sink(OpenRTM__POA.InPortCdr):
    def put(self, data):
        upcall_threads.add(threading.get_ident())
        holding.add(threading.get_ident())
        return OpenRTM.PORT_OK


# exit_with_orb_up: the upcalls run in pool workers, which leave after 1 s idle
args = ("-ORBthreadPerConnectionPolicy 0 -ORBidleThreadTimeout 1" if mode != "shutdown"
        else "")
orb = orbmod.init_orb({"corba.args": args})
ref = orbmod.root_poa().servant_to_reference(Sink())
print(orb.object_to_string(ref), flush=True)
sys.stdin.readline()               # the test called put(): a worker holds a Python state
if mode == "shutdown":
    orbmod.shutdown_orb(wait=False)        # as CorbaRuntime.shutdown does
elif not leaving.wait(60):         # the idle worker leaves; the ORB is still up
    sys.exit("the worker that ran put() did not leave the pool")
print("exiting", flush=True)
'''


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["shutdown", "exit_with_orb_up"])
def test_exit_after_upcalls_does_not_abort(tmp_path, mode):
    from rtcf.corba.idl import stub_module
    from rtcf.corba.orb import init_orb
    script = tmp_path / "peer.py"
    script.write_text(PEER)
    proc = subprocess.Popen([sys.executable, str(script), mode], cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        reading = threading.Thread(target=lambda: setattr(proc, "ior",
                                                          proc.stdout.readline().strip()))
        reading.start()
        reading.join(60)
        assert getattr(proc, "ior", "").startswith("IOR:"), proc.stderr.read()
        OpenRTM = stub_module("OpenRTM")
        ref = init_orb({}).string_to_object(proc.ior)._narrow(OpenRTM.InPortCdr)
        for _ in range(3):
            assert ref.put(b"\0\0\0\0") == OpenRTM.PORT_OK   # upcalls in its worker
        out, err = proc.communicate("\n", timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "exiting" in out, err
    assert "terminate called" not in err, err
    assert proc.returncode == 0, (proc.returncode, err)
