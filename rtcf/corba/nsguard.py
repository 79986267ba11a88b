"""Keeps a private omniNames tied to the process that started it (run as a script).

``python nsguard.py --parent PID --logdir DIR [--remove] -- omniNames ARGS...``

omniNames is a C++ binary: it cannot notice that the rtcf process that started it died by
kill -9. This guard (standard library only, one thread, so ``preexec_fn`` is safe here)
starts omniNames with PR_SET_PDEATHSIG=SIGKILL towards itself, polls its own parent pid
every 0.2 s (PR_SET_PDEATHSIG on the guard itself would fire when the starting *thread*
ends, not the process), and when its parent is gone or it is told to stop
(SIGTERM/SIGINT/SIGHUP) it terminates omniNames and, with ``--remove``, deletes the private
log folder. When omniNames ends on its own before it wrote a data file (it could not start),
the guard exits at once with its exit code; after (it was killed or crashed), the guard keeps
the folder until its parent ends, so that omniNames can be restarted by hand from it.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess
import sys
import time

PR_SET_PDEATHSIG = 1


def set_parent_death_signal(sig: int) -> bool:
    """prctl(PR_SET_PDEATHSIG, sig) for the calling process (Linux); False elsewhere."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _has_data_file(logdir: str) -> bool:
    """omniNames has written its data file (omninames-<host>.dat) in logdir."""
    try:
        return any(n.startswith("omninames-") and n.endswith(".dat")
                   for n in os.listdir(logdir))
    except OSError:
        return False


def main(argv: list[str]) -> int:
    if "--" not in argv:
        print("usage: nsguard.py --parent PID --logdir DIR [--remove] -- CMD...",
              file=sys.stderr)
        return 2
    sep = argv.index("--")
    opts, cmd = argv[:sep], argv[sep + 1:]
    parent = int(opts[opts.index("--parent") + 1])
    logdir = opts[opts.index("--logdir") + 1]
    remove = "--remove" in opts
    stop = []

    def on_signal(signum: int, _frame: object) -> None:
        stop.append(signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)
    libc = ctypes.CDLL(None, use_errno=True)

    def child_setup() -> None:          # runs between fork and exec: no Python locks taken
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)

    with open(os.path.join(logdir, "omniNames.out"), "ab") as out:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, preexec_fn=child_setup)
    code = None
    while code is None:
        if stop or os.getppid() != parent:
            break
        try:
            code = proc.wait(0.2)
        except subprocess.TimeoutExpired:
            pass
    if code is not None and remove and _has_data_file(logdir):
        # omniNames died (killed, crashed) after it got going: keep its data folder while
        # the process that started it runs, so that the restart command rtcf printed works
        # (it restarts from the data file); remove the folder once that process ends
        while not stop and os.getppid() == parent:
            time.sleep(0.2)
    if code is None:
        proc.terminate()
        try:
            code = proc.wait(3.0)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
    if remove:
        shutil.rmtree(logdir, ignore_errors=True)
    return 0 if stop else code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
