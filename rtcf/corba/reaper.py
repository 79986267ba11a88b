"""Unbinds a manager's names when the manager dies without doing it (run as a script).

``python reaper.py`` (omniORB only, no rtcf import), started by CorbaRuntime in its own
session the first time it binds a name in a naming service it did not start. It reads JSON
lines on stdin:

* ``{"bind": [corbaloc, path, ior, displaced]}``: the manager bound path to the object
  ior; displaced is the IOR of the live object that held the name before ("" if none);
* ``{"unbind": [corbaloc, path]}``: the manager unbound it (or gave it up);
* ``{"quit": true}``: the manager ended in order: exit without touching anything.

End of input without ``quit`` means the manager died (kill -9 included: the kernel closes
the pipe): every name still recorded is unbound where it still names the manager's object
(``_is_equivalent``), so nobody else's binding is touched; a displaced holder that still
answers gets its name back. Each call waits at most 3 s.
"""

from __future__ import annotations

import json
import os
import signal
import sys


def parse_path(path: str) -> list[tuple[str, str]]:
    """``"a.host_cxt/b.rtc"`` -> [("a", "host_cxt"), ("b", "rtc")] (kind after the last
    dot, as rtcf.corba.naming.parse_path)."""
    out = []
    for seg in path.strip("/").split("/"):
        if seg:
            ident, dot, kind = seg.rpartition(".")
            out.append((ident, kind) if dot else (seg, ""))
    return out


def sweep(entries: dict[tuple[str, str], tuple[str, str]]) -> None:
    from omniORB import CORBA
    import CosNaming
    orb = CORBA.ORB_init(["rtcf-reaper", "-ORBclientCallTimeOutPeriod", "3000",
                          "-ORBclientConnectTimeOutPeriod", "1000"], CORBA.ORB_ID)
    for (url, path), (ior, displaced) in entries.items():
        try:
            root = orb.string_to_object(url)._narrow(CosNaming.NamingContext)
            name = [CosNaming.NameComponent(i, k) for i, k in parse_path(path)]
            held = root.resolve(name)
            if not held._is_equivalent(orb.string_to_object(ior)):
                continue                       # someone else's binding now
            before = orb.string_to_object(displaced) if displaced else None
            if before is not None and _alive(before):
                root.rebind(name, before)
            else:
                root.unbind(name)
        except Exception:      # gone already, service down, ...
            continue
    try:
        orb.destroy()
    except Exception:
        pass


def _alive(obj) -> bool:
    from omniORB import CORBA
    try:
        return not obj._non_existent()
    except (CORBA.TRANSIENT, CORBA.OBJECT_NOT_EXIST, CORBA.COMM_FAILURE):
        return False
    except CORBA.Exception:
        return True


def main() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)    # Ctrl-C is for the manager
    try:    # started by a SCHED_FIFO thread of the manager: run as a normal process
        if os.sched_getscheduler(0) != os.SCHED_OTHER:
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    except (AttributeError, OSError):
        pass
    entries: dict[tuple[str, str], tuple[str, str]] = {}
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("quit"):
            return 0
        if "bind" in msg:
            url, path, ior, displaced = (list(msg["bind"]) + [""])[:4]
            entries[(url, path)] = (ior, displaced)
        elif "unbind" in msg:
            entries.pop(tuple(msg["unbind"]), None)
    if entries:
        sweep(entries)
    return 0


if __name__ == "__main__":
    sys.exit(main())
