"""hrpsys-base's python/rtm.py as a client process: the CORBA calls its findRTC, RTcomponent,
isActive, stop, start and serializeComponents make, in their order. It imports no rtcf (and
not OpenRTM_aist, which rtm.py imports only for its names): omniORB and the standard RTC
stubs compiled into STUBS (argv[1]).

Restated from fkanehiro/hrpsys-base python/rtm.py (@ 01e8021):

* ``findRTC(name)``: resolve ``name`` (kind ``rtc``) in the root context, narrow to
  RTC.RTObject, ``RTcomponent(ref)``, then ``cxts = ref.get_participating_contexts()`` and
  ``rtc.ec = cxts[0]`` when there is one.
* ``RTcomponent.__init__``: ``self.owned_ecs = ref.get_owned_contexts()``,
  ``self.ec = self.owned_ecs[0]`` (an IndexError there makes findRTC return None), then
  ``get_ports()`` and each port's ``get_port_profile().name``.
* ``isActive(ec)`` / ``isInactive(ec)``: ``ec.get_component_state(ref)`` against
  ACTIVE_STATE / INACTIVE_STATE.
* ``stop()``: ``ec.deactivate_component(ref)``, then poll isActive every 10 ms;
  ``start()``: ``ec.activate_component(ref)``, then poll isInactive every 10 ms (rtm.py
  polls for ever; here 5 s, then the call counts as failed).
* ``serializeComponents(rtcs)``: ``ec = rtcs[0].ec``; for each later rtc whose ec is not
  ``_is_equivalent`` to it: ``rtc.ec.stop()``, ``ec.add_component(rtc.ref)``.

Usage: rtm_calls.py STUBS NAMESERVER_PORT HOST NAME [NAME ...]
(HOST "": names at the naming root, as hrpsys's rtc.conf binds them). Prints one JSON
object: per name what findRTC found and what each call returned.
"""

import json
import sys
import time

sys.path.insert(0, sys.argv[1])

from omniORB import CORBA  # noqa: E402
import CosNaming  # noqa: E402
import RTC  # noqa: E402

ns_port, host, names = sys.argv[2], sys.argv[3], sys.argv[4:]
orb = CORBA.ORB_init([sys.argv[0], "-ORBInitRef",
                      f"NameService=corbaloc:iiop:127.0.0.1:{ns_port}/NameService"],
                     CORBA.ORB_ID)
rootnc = orb.resolve_initial_references("NameService")._narrow(CosNaming.NamingContext)
POLL_LIMIT = 5.0


class RTcomponent:
    def __init__(self, ref):
        self.ref = ref
        self.owned_ecs = ref.get_owned_contexts()
        self.ec = self.owned_ecs[0]
        self.ports = {}
        for p in self.ref.get_ports():
            self.ports[p.get_port_profile().name.split(".")[1]] = p

    def state(self, ec=None):
        return (ec or self.ec).get_component_state(self.ref)

    def isActive(self, ec=None):
        return RTC.ACTIVE_STATE == self.state(ec)

    def isInactive(self, ec=None):
        return RTC.INACTIVE_STATE == self.state(ec)

    def _poll(self, still) -> bool:
        deadline = time.monotonic() + POLL_LIMIT
        while still():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)
        return True

    def start(self):
        rc = self.ec.activate_component(self.ref)
        return str(rc), self._poll(self.isInactive)

    def stop(self):
        rc = self.ec.deactivate_component(self.ref)
        return str(rc), self._poll(self.isActive)


def findRTC(name):
    path = ([CosNaming.NameComponent(host, "host_cxt")] if host else []) + \
        [CosNaming.NameComponent(name, "rtc")]
    try:
        obj = rootnc.resolve(path)
        rtc = RTcomponent(obj._narrow(RTC.RTObject))
        cxts = rtc.ref.get_participating_contexts()
        if len(cxts) > 0:
            rtc.ec = cxts[0]
        return rtc
    except Exception:
        return None


out = {}
rtcs = []
for name in names:
    rtc = findRTC(name)
    row = {"found": rtc is not None}
    out[name] = row
    if rtc is None:
        continue
    rtcs.append(rtc)
    row["owned"] = len(rtc.owned_ecs)
    row["participating"] = len(rtc.ref.get_participating_contexts())
    row["ec_is_owned"] = rtc.ec._is_equivalent(rtc.owned_ecs[0])
    row["ports"] = sorted(rtc.ports)
    row["active_at_start"] = rtc.isActive()
    row["stop"] = rtc.stop()
    row["inactive_after_stop"] = rtc.isInactive()
    row["start"] = rtc.start()
    row["active_after_start"] = rtc.isActive()
    # the owned context reports the same state (what rtshell's rtact/rtcat read)
    row["owned_state"] = str(rtc.owned_ecs[0].get_component_state(rtc.ref))

# hrpsys_config.activateComps: serializeComponents(rtcList), then start() each
serialized = []
if len(rtcs) >= 2:
    ec = rtcs[0].ec
    for rtc in rtcs[1:]:
        if not ec._is_equivalent(rtc.ec):
            rtc.ec.stop()
            serialized.append(str(ec.add_component(rtc.ref)))
            rtc.ec = ec
        else:
            serialized.append("already serialized")
out["_serialize"] = serialized
out["_all_active"] = all(r.isActive() for r in rtcs)
print(json.dumps(out))
