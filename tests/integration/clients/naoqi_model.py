# -*- encoding: UTF-8 -*-
"""ALMotion robot-model calls written as NAOqi's documentation writes its examples (argparse
--ip / --port, ALProxy, the motion module's constants, except RuntimeError). Only the two
import lines marked NAOqi differ from the script a NAO user runs against the robot."""

import argparse
import sys

import numpy as np

from rtcf_components.clients import motion              # NAOqi: import motion
from rtcf_components.clients.naoqi import ALProxy       # NAOqi: from naoqi import ALProxy


def main(robotIP, PORT=9559):
    motionProxy = ALProxy("ALMotion", robotIP, PORT)

    # Effectors, a hand and the torso, in FRAME_TORSO
    for name in ["Head", "LArm", "LHand", "RArm", "RHand", "Torso"]:
        result = motionProxy.getPosition(name, motion.FRAME_TORSO, True)
        print(name, " ".join("%.6f" % v for v in result))

    # The sensors the model knows, and where they are
    sensors = motionProxy.getSensorNames()
    print("Sensors", " ".join(sensors))
    for name in sensors:
        result = motionProxy.getTransform(name, motion.FRAME_ROBOT, False)
        print(name, "z", "%.6f" % result[11])

    # Arguments computed with numpy
    space = np.int64(motion.FRAME_WORLD)
    useSensorValues = np.bool_(True)
    result = motionProxy.getPosition("RArm", space, useSensorValues)
    print("numpy", " ".join("%.6f" % v for v in result))

    # ALMotion raises RuntimeError for what it refuses
    refused = 0
    try:
        motionProxy.getPosition("Tail", motion.FRAME_TORSO, True)
    except RuntimeError as e:
        print("RuntimeError", e)
        refused += 1

    # The DCM too: a key it does not have, and a command of the wrong shape
    dcm = ALProxy("DCM", robotIP, PORT)
    dcm.set(["ChestBoard/Led/Red/Actuator/Value", "Merge", [[1.0, dcm.getTime(100)]]])
    try:
        dcm.set(["ChestBoard/Led/Purple/Actuator/Value", "Merge", [[1.0, dcm.getTime(0)]]])
    except RuntimeError as e:
        print("DCMRuntimeError", e)
        refused += 1
    try:
        dcm.set(["ChestBoard/Led/Red/Actuator/Value", "Merge"])
    except RuntimeError as e:
        print("DCMRuntimeError", e)
        refused += 1
    return 0 if refused == 3 else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--ip", type=str, default="127.0.0.1",
                        help="Robot ip address")
    parser.add_argument("--port", type=int, default=9559,
                        help="Robot port number")
    args = parser.parse_args()
    sys.exit(main(args.ip, args.port))
