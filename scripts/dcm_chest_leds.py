"""Play the ChestLeds examples of the NAOqi DCM documentation (setAlias, time-mixed and
time-separate) against the DCM of a running system, and print the three chest LED values
(red, green, blue) every 250 ms while each example plays (7 s each).

Start the system first, in another terminal: scripts/run (its default composition has the
DCM, instance DCM0). Then: scripts/dcm_chest_leds, or, when the system uses another naming
service: scripts/dcm_chest_leds --nameserver localhost:2810. Exit status: 0 when every
example played, 1 when the DCM could not be reached or refused a call (the reason is printed).
"""

from __future__ import annotations

import argparse
import sys
import time

from rtcf_components.dcm.proxy import NAO, DCMProxy

LEDS = ["ChestBoard/Led/Red/Actuator/Value", "ChestBoard/Led/Green/Actuator/Value",
        "ChestBoard/Led/Blue/Actuator/Value"]


def time_mixed(dcm: DCMProxy) -> float:
    dcm.setAlias(["ChestLeds", "ClearAll", "time-mixed",
                  [[[1.0, dcm.getTime(4000)], [0.0, dcm.getTime(6000)]],
                   [[0.25, dcm.getTime(3000)]],
                   [[0.125, dcm.getTime(2000)]]]])
    return 7.0


def time_separate(dcm: DCMProxy) -> float:
    t = dcm.getTime(0)
    dcm.setAlias(["ChestLeds", "ClearAll", "time-separate", 0,
                  [t, t + 2000, t + 3000, t + 4000, t + 5000, t + 6000],
                  [[1.0, 0.0, 1.0, 0.0, 1.0, 0.0],
                   [1.0, 0.5, 1.0, 0.25, 0.125, 0.0],
                   [0.0625, 0.125, 0.25, 0.50, 0.75, 1.0]]])
    return 7.0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="scripts/dcm_chest_leds", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nameserver", default="localhost:2809", metavar="HOST:PORT",
                    help="naming service of the running system (default: %(default)s, "
                    "the corba.nameservers of rtc.conf)")
    ap.add_argument("--dcm", default="DCM0", metavar="NAME",
                    help="instance name of the DCM component (default: %(default)s)")
    ap.add_argument("--example", choices=("time-mixed", "time-separate", "both"),
                    default="both", help="which example to play (default: %(default)s)")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        return play(args)
    except ConnectionError as e:          # no naming service at --nameserver
        print(f"dcm_chest_leds: {e}", file=sys.stderr)
    except LookupError as e:              # no DCM bound under that name
        print(f"dcm_chest_leds: {e} (is scripts/run running the DCM as {args.dcm}?)",
              file=sys.stderr)
    except NAO.DCMError as e:
        print(f"dcm_chest_leds: the DCM refused a call: {e.reason}", file=sys.stderr)
    except Exception as e:  # CORBA system exceptions: the system went away meanwhile
        print(f"dcm_chest_leds: lost the DCM: {e!r}", file=sys.stderr)
    return 1


def play(args: argparse.Namespace) -> int:
    dcm = DCMProxy(args.dcm, args.nameserver)
    print(dcm.createAlias(["ChestLeds", LEDS]))
    examples = {"time-mixed": time_mixed, "time-separate": time_separate}
    chosen = list(examples) if args.example == "both" else [args.example]
    for name in chosen:
        print(f"--- {name}")
        t0 = dcm.getTime(0)
        duration = examples[name](dcm)
        end = time.monotonic() + duration
        print("  t [ms]    red    green  blue")
        while time.monotonic() < end:
            r, g, b = dcm.getValues(LEDS)
            print(f"  {dcm.getTime(0) - t0:6d}  {r:.4f} {g:.4f} {b:.4f}")
            time.sleep(0.25)
    return 0


if __name__ == "__main__":
    sys.exit(main())
