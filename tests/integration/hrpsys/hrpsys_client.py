"""An hrpsys-style SequencePlayer client, run as its own process by
test_sequence_player_corba.py. It imports no rtcf: only omniORB and the stubs compiled into
STUBS (argv[1]) from hrpsys's SequencePlayerService declarations and the standard RTC IDL.

Discovery follows hrpsys-base's python/rtm.py (fkanehiro/hrpsys-base; findRTC, findService,
narrow) and hrpsys_config.py's version check, restated: resolve the RTC by name in naming,
parse get_component_profile().version as a dotted number (>= 315.2.6), find the port whose
provided interface has instance name "service0", connect that lone port with
ConnectorProfile("noname", "", [port], []), take the stringified IOR from the first
connector property and narrow it to OpenHRP.SequencePlayerService.

Usage: hrpsys_client.py STUBS NAMESERVER_PORT HOST RTC_NAME PATTERN_BASENAME
(HOST "": the RTC is bound at the naming root, as rtm.findRTC("seq") expects)
Prints one JSON object with what it saw.
"""

import json
import sys

sys.path.insert(0, sys.argv[1])

from omniORB import CORBA, any as orb_any  # noqa: E402
import CosNaming  # noqa: E402
import OpenHRP  # noqa: E402
import RTC  # noqa: E402

ns_port, host, name, pattern = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
out = {}

orb = CORBA.ORB_init([sys.argv[0], "-ORBInitRef",
                      f"NameService=corbaloc:iiop:127.0.0.1:{ns_port}/NameService"],
                     CORBA.ORB_ID)
ns = orb.resolve_initial_references("NameService")._narrow(CosNaming.NamingContext)

# rtm.findRTC: at the naming root (hrpsys's rtc.conf: naming.formats %n.rtc) when HOST is
# "", else under HOST.host_cxt (OpenRTM's default format)
path = [CosNaming.NameComponent(host, "host_cxt")] if host else []
obj = ns.resolve(path + [CosNaming.NameComponent(name, "rtc")])
rtc = obj._narrow(RTC.RTObject)
prof = rtc.get_component_profile()
out["instance_name"] = prof.instance_name
out["version"] = prof.version
# hrpsys_config: the version must parse and be >= 315.2.6 for the zmpRefInit wiring
out["version_ok"] = [int(x) for x in prof.version.split(".")] >= [315, 2, 6]

# rtm.findService(rtc, "", "SequencePlayerService", "service0")
port = None
for pp in prof.port_profiles:
    for aif in pp.interfaces:
        if (aif.instance_name == "service0" and aif.type_name == "SequencePlayerService"
                and aif.polarity == RTC.PROVIDED):
            port = pp.port_ref
out["found_port"] = port is not None
con_prof = RTC.ConnectorProfile("noname", "", [port], [])
ret, con_prof = port.connect(con_prof)
out["connect"] = str(ret)
ior = orb_any.from_any(con_prof.properties[0].value)
svc = orb.string_to_object(ior)._narrow(OpenHRP.SequencePlayerService)   # rtm.narrow
out["narrowed"] = svc is not None

N = 26
SPS = OpenHRP.SequencePlayerService
pose = [0.0] * N
pose[0] = 0.5                    # HeadYaw
pose[2] = 1.2                    # LShoulderPitch
out["setJointAngles"] = svc.setJointAngles(pose, 0.3)
out["isEmpty_moving"] = svc.isEmpty()
svc.waitInterpolation()
out["isEmpty_after_wait"] = svc.isEmpty()
out["bad_length"] = svc.setJointAngles([0.0] * 3, 1.0)
out["negative_tm"] = svc.setJointAngles(pose, -1.0)
out["unknown_joint"] = svc.setJointAngle("NoSuchJoint", 0.0, 1.0)
out["setJointAngle"] = svc.setJointAngle("HeadPitch", 0.2, 0.1)
svc.waitInterpolation()
out["addJointGroup"] = svc.addJointGroup("head", ["HeadYaw", "HeadPitch"])
out["addJointGroup_again"] = svc.addJointGroup("HEAD", ["HeadYaw"])
out["setJointAnglesOfGroup"] = svc.setJointAnglesOfGroup("HEAD", [-0.4, 0.1], 0.2)
out["waitInterpolationOfGroup"] = svc.waitInterpolationOfGroup("head")
out["group_isEmpty"] = svc.isEmpty()
out["setInterpolationMode"] = svc.setInterpolationMode(SPS.LINEAR)
out["setBasePos"] = svc.setBasePos([0.0, 0.0, 0.3], 0.1)
out["setZmp_bad"] = svc.setZmp([0.0], 0.1)
svc.playPattern([pose, pose], [[0.0, 0.0, 0.1]], [[0.01, 0.0, 0.0]], [0.1, 0.1])
svc.waitInterpolation()
svc.setMaxIKError(1e-4, 1e-3)
svc.setMaxIKIteration(50)
out["setTargetPose_unreachable"] = svc.setTargetPose("head", [5.0, 0.0, 0.0], [0, 0, 0], 1.0)
out["setJointAnglesSequence"] = svc.setJointAnglesSequence([pose, pose], [0.05, 0.05])
out["setJointAnglesSequenceFull_bad"] = svc.setJointAnglesSequenceFull(
    [pose], [], [], [], [], [], [], [], [], [0.1])
svc.waitInterpolation()
svc.loadPattern(pattern, 0.1)
out["isEmpty_pattern"] = svc.isEmpty()
svc.waitInterpolation()
out["setInitialState"] = svc.setInitialState()
svc.clearNoWait()
svc.clear()
out["removeJointGroup"] = svc.removeJointGroup("head")
out["setInterpolationMode_back"] = svc.setInterpolationMode(SPS.HOFFARBIB)
print(json.dumps(out))
orb.destroy()
