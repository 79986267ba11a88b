"""Walk the simulated NAO the hrpsys way: find the AutoBalancer ``abc`` and the Stabilizer
``st`` at the naming root as hrpsys's rtm.findRTC does, narrow their ``service0`` as
rtm.narrow does, then call them as hrpsys_config.py's wrappers do
(fkanehiro/hrpsys-base python/hrpsys_config.py @ 2ffbf13ff41826145bc9ac6cfa01b1a947a10fce):

    abcp = abc_svc.getAutoBalancerParam()[1]         # a robot's setStAbcParameters():
    abcp.default_zmp_offsets = [[0.02, 0.0, 0.0], [0.02, 0.0, 0.0], [0, 0, 0], [0, 0, 0]]
    abcp.move_base_gain = 0.8
    abc_svc.setAutoBalancerParam(abcp)
    abc_svc.startAutoBalancer(["rleg", "lleg"])     # HrpsysConfigurator.startAutoBalancer()
    st_svc.startStabilizer()                        # HrpsysConfigurator.startStabilizer()
    abc_svc.goPos(0.5, 0, 0)
    abc_svc.waitFootSteps()

The client is plain omniORB: no rtcf in the calls, and no call timeout (as rtm.py). With
``--stubs DIR`` it imports hrpsys's own compiled Python stubs (the ``OpenHRP`` package of an
hrpsys installation, or any built from hrpsys's IDL); without, rtcf's, which are
wire-compatible (idl/AutoBalancerService.idl, idl/StabilizerService.idl).

Start the system first: scripts/run -f compositions/hrpsys_walk.conf (names at the naming
root, port 15005). Prints what it did, and one JSON line at the end. Exit status 0 when the
walk was accepted and ended, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="scripts/hrpsys_walk", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nameserver", default="localhost:15005", metavar="HOST:PORT",
                    help="naming service of the running system (default: %(default)s, "
                    "hrpsys's port)")
    ap.add_argument("--stubs", metavar="DIR", help="a folder holding hrpsys's compiled "
                    "OpenHRP stubs (default: rtcf's)")
    ap.add_argument("--x", type=float, default=0.5, help="goPos x [m] (default 0.5)")
    ap.add_argument("--y", type=float, default=0.0, help="goPos y [m]")
    ap.add_argument("--th", type=float, default=0.0, help="goPos th [deg]")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    if a.stubs:
        sys.path.insert(0, a.stubs)
        import OpenHRP
        import RTC
    else:
        from rtcf.corba.idl import stub_module
        OpenHRP = stub_module("OpenHRP")
        RTC = stub_module("RTC")
    import CosNaming
    from omniORB import CORBA, any as orb_any
    host, _, port = a.nameserver.rpartition(":")
    orb = CORBA.ORB_init([sys.argv[0], "-ORBInitRef",
                          f"NameService=corbaloc:iiop:{host}:{port}/NameService"], CORBA.ORB_ID)
    ns = orb.resolve_initial_references("NameService")._narrow(CosNaming.NamingContext)

    def find_rtc(name: str):
        """rtm.findRTC: the RTC bound at the naming root as <name>.rtc."""
        return ns.resolve([CosNaming.NameComponent(name, "rtc")])._narrow(RTC.RTObject)

    def narrow_service0(rtc, type_name: str, interface):
        """rtm.findService + rtm.narrow: connect the port providing service0, take the
        object reference from the connector profile, narrow it."""
        for pp in rtc.get_component_profile().port_profiles:
            for itf in pp.interfaces:
                if itf.instance_name == "service0" and itf.type_name == type_name:
                    prof = RTC.ConnectorProfile("noname", "", [pp.port_ref], [])
                    ret, prof = pp.port_ref.connect(prof)
                    ior = orb_any.from_any(prof.properties[0].value)
                    return orb.string_to_object(ior)._narrow(interface)
        raise LookupError(f"{rtc.get_component_profile().instance_name}: no service0 of "
                          f"type {type_name}")

    out: dict = {}
    try:
        abc = find_rtc("abc")
        st = find_rtc("st")
        abc_svc = narrow_service0(abc, "AutoBalancerService", OpenHRP.AutoBalancerService)
        st_svc = narrow_service0(st, "StabilizerService", OpenHRP.StabilizerService)
    except Exception as e:
        print(f"hrpsys_walk: cannot find abc and st at {a.nameserver}: {e} (start the "
              f"system with scripts/run -f compositions/hrpsys_walk.conf)", file=sys.stderr)
        return 1
    print(f"abc: {abc.get_component_profile().type_name} "
          f"{abc.get_component_profile().version}, st: "
          f"{st.get_component_profile().type_name}")
    # as a robot's setStAbcParameters() does at start-up (e.g. start-jsk/rtmros_tutorials
    # hrpsys_ros_bridge_tutorials/src/hrpsys_ros_bridge_tutorials/hrp2_hrpsys_config.py, a
    # HrpsysConfigurator subclass): get, change, set
    abcp = abc_svc.getAutoBalancerParam()[1]
    abcp.default_zmp_offsets = [[0.02, 0.0, 0.0], [0.02, 0.0, 0.0], [0, 0, 0], [0, 0, 0]]
    abcp.move_base_gain = 0.8
    out["setAutoBalancerParam"] = abc_svc.setAutoBalancerParam(abcp)
    out["abc_mode"] = str(abc_svc.getAutoBalancerParam()[1].controller_mode)
    print("abc_svc.setAutoBalancerParam(default_zmp_offsets 2 cm ahead, move_base_gain 0.8) "
          "->", out["setAutoBalancerParam"], "; controller_mode", out["abc_mode"])
    out["startAutoBalancer"] = abc_svc.startAutoBalancer(["rleg", "lleg"])
    print("abc_svc.startAutoBalancer(['rleg', 'lleg']) ->", out["startAutoBalancer"])
    st_svc.startStabilizer()
    p = st_svc.getParameter()
    out["st_mode"] = str(p.controller_mode)
    print("st_svc.startStabilizer(); controller_mode", out["st_mode"])
    ok, ggp = abc_svc.getGaitGeneratorParam()
    out["stride_parameter"] = list(ggp.stride_parameter)
    out["default_step_time"] = ggp.default_step_time
    print(f"getGaitGeneratorParam: step time {ggp.default_step_time} s, stride_parameter "
          f"{list(ggp.stride_parameter)}")
    ok, steps = abc_svc.getGoPosFootstepsSequence(a.x, a.y, a.th)
    out["planned_steps"] = len(steps) - 1
    t0 = time.monotonic()
    out["goPos"] = abc_svc.goPos(a.x, a.y, a.th)
    print(f"abc_svc.goPos({a.x}, {a.y}, {a.th}) -> {out['goPos']} ({len(steps) - 1} steps)")
    abc_svc.waitFootSteps()
    out["wall_s"] = round(time.monotonic() - t0, 3)
    ok, fp = abc_svc.getFootstepParam()
    mid = [0.5 * (fp.support_leg_coords.pos[k] + fp.swing_leg_coords.pos[k]) for k in range(2)]
    out["feet_middle"] = mid
    ok, left, idx = abc_svc.getRemainingFootstepSequence()
    out["remaining"] = len(left)
    out["act_capture_point"] = list(st_svc.getParameter().act_capture_point)
    print(f"abc_svc.waitFootSteps() returned after {out['wall_s']} s; the feet's middle at "
          f"({mid[0]:.3f}, {mid[1]:.3f}) m in the balancer's frame, {len(left)} steps left")
    print(json.dumps(out))
    return 0 if out["goPos"] and out["startAutoBalancer"] and out["setAutoBalancerParam"] \
        and not left and \
        math.hypot(mid[0] - a.x, mid[1] - a.y) < 0.01 else 1


if __name__ == "__main__":
    sys.exit(main())
