"""Drive the ControllerManager of a running compositions/nao_controllers.yaml: send the head a
quintic trajectory, switch the left arm from nothing to a PD + cubic trajectory pair, print
the tracking error while they move, then the loop's statistics. Run it with
scripts/controllers_demo while scripts/run runs that composition."""

from __future__ import annotations

import argparse
import sys
import time

from rtcf_components.controller_manager.proxy import ControllerManagerProxy
from rtcf_components.controller_manager import ControllerError


def watch(cm: ControllerManagerProxy, names: list[str], seconds: float) -> None:
    """Print each controller's max |desired - measured| every 100 ms."""
    print("  t [s]  " + "  ".join(f"{n + ' err [rad]':>20}" for n in names))
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        errs = [cm.state(n)["max_abs_error"] for n in names]
        print(f"  {time.monotonic() - t0:5.2f}  " + "  ".join(f"{e:20.5f}" for e in errs))
        time.sleep(0.1)


def play(args: argparse.Namespace) -> int:
    cm = ControllerManagerProxy(args.manager, args.nameserver)
    print("types:", cm.types())
    print("loaded:", cm.list())
    print("--- head: a quintic trajectory through three waypoints (chained head_traj -> "
          "head_pd)")
    print(cm.command("head_traj", {"times": [0.5, 1.0, 1.5],
                                   "positions": [[0.6, -0.3], [-0.6, 0.2], [0.0, 0.0]]}))
    watch(cm, ["head_traj"], 1.0)
    print("--- a new head trajectory while the first is running (no jump)")
    print(cm.command("head_traj", {"times": [0.8], "positions": [[0.3, 0.1]]}))
    watch(cm, ["head_traj"], 1.0)
    print("--- left arm: load larm_pd and larm_traj from the config, start them in one switch")
    for name in ("larm_pd", "larm_traj"):
        if name not in [c[0] for c in cm.list()]:
            print(cm.load(name))
    print(cm.switch(start=["larm_traj"], stop=[]))
    print(cm.command("larm_traj", {"times": [0.6, 1.2],
                                   "positions": [[0.5, 0.6, -1.0, -0.8],
                                                 [1.2, 0.2, -0.5, -0.4]]}))
    watch(cm, ["head_traj", "larm_traj"], 1.5)
    print("--- switch the arm from the trajectory to the PD holding its position (atomic)")
    print(cm.switch(start=["larm_pd"], stop=["larm_traj"]))
    print(cm.list())
    print(cm.switch(start=[], stop=["larm_pd"]))
    for name in ("larm_traj", "larm_pd"):
        print(cm.unload(name))
    st = cm.statistics()
    print(f"--- statistics: {st.ticks} ticks, mean period {st.period_mean * 1e6:.2f} us, "
          f"lateness p50/p99/max {st.lateness_p50 * 1e6:.0f}/{st.lateness_p99 * 1e6:.0f}/"
          f"{st.lateness_max * 1e6:.0f} us, EC overruns {st.ec_overruns}, manager overhead "
          f"mean {st.overhead_mean * 1e6:.1f} us, {st.switches} switches")
    for c in st.controllers:
        print(f"  {c.name:10s} {c.state:12s} {c.updates:8d} updates, mean "
              f"{c.mean_time * 1e6:6.1f} us, max {c.max_time * 1e6:7.1f} us, "
              f"overruns {c.overruns}, faults {c.faults}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(prog="scripts/controllers_demo", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nameserver", default="localhost:2809", metavar="HOST:PORT",
                    help="naming service of the running system (default localhost:2809)")
    ap.add_argument("--manager", default="ControllerManager0",
                    help="instance name of the ControllerManager component")
    args = ap.parse_args()
    try:
        return play(args)
    except LookupError as e:
        print(f"controllers_demo: {e} (is scripts/run running?)", file=sys.stderr)
    except ControllerError as e:
        print(f"controllers_demo: refused: {e}", file=sys.stderr)
    except Exception as e:  # CORBA system exceptions: the system went away
        print(f"controllers_demo: lost the manager: {e!r}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
