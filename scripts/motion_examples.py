"""Run the three robot-model examples of NAOqi's ALMotion documentation (getRobotPosition,
getTransform of the right arm, getPosition of the top camera) against a running Kinematics
component (scripts/run starts one as Kinematics0 in the default system) through MotionProxy.
The example lines are NAOqi's, unchanged but for the line that obtains the proxy and Python
3's print()."""

from __future__ import annotations

import argparse
import sys

from rtcf_components.kinematics.proxy import MotionProxy


def main() -> int:
    ap = argparse.ArgumentParser(prog="scripts/motion_examples", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nameserver", default="localhost:2809", metavar="HOST:PORT",
                    help="naming service host:port (default localhost:2809)")
    ap.add_argument("--component", default="Kinematics0",
                    help="instance name of the Kinematics component (default Kinematics0)")
    args = ap.parse_args()
    try:
        proxy = MotionProxy(args.component, nameserver=args.nameserver)
    except Exception as e:  # naming service absent, component not bound, ...
        print(f"motion_examples: cannot reach {args.component} through the naming service "
              f"at {args.nameserver}: {e}", file=sys.stderr)
        return 1

    # Example showing how to get a simplified robot position in world.
    useSensors = False
    result = proxy.getRobotPosition(useSensors)
    print("Robot Position", result)

    # Example showing how to get the end of the right arm as a transform
    # represented in torso space. The result is a 4 by 4 matrix composed
    # of a 3*3 rotation matrix and a column vector of positions.
    name = 'RArm'
    space = 0
    useSensorValues = True
    result = proxy.getTransform(name, space, useSensorValues)
    for i in range(0, 4):
        print(" ".join(f"{v:10.6f}" for v in result[4 * i:4 * i + 4]))

    # Example showing how to get the position of the top camera
    # The position is a representation containing
    # The x,y and z coordinates in meters
    # The wx, wy, wz euler angles in radians
    name = 'CameraTop'
    space = 1
    useSensorValues = True
    result = proxy.getPosition(name, space, useSensorValues)
    print("CameraTop position in FRAME_WORLD", [round(v, 6) for v in result])
    return 0


if __name__ == "__main__":
    sys.exit(main())
