# -*- encoding: UTF-8 -*-
"""A walk written as NAOqi's documentation writes its locomotion examples (argparse --ip /
--port, ALProxy, postures, moveInit, moveTo, ALMemory, except RuntimeError). Only the import
line marked NAOqi differs from the script a NAO user runs against the robot."""

import argparse
import math
import sys

from rtcf_components.clients.naoqi import ALProxy       # NAOqi: from naoqi import ALProxy


def main(robotIP, PORT=9559):
    motionProxy = ALProxy("ALMotion", robotIP, PORT)
    postureProxy = ALProxy("ALRobotPosture", robotIP, PORT)
    memoryProxy = ALProxy("ALMemory", robotIP, PORT)

    # Send NAO to Pose Init
    postureProxy.goToPosture("StandInit", 0.5)
    print("Posture", postureProxy.getPosture())

    # Initialize the move process: check the robot pose and take a right posture
    motionProxy.moveInit()

    # The foot sensors, read as on the robot
    left = memoryProxy.getData("Device/SubDeviceList/LFoot/FSR/TotalWeight/Sensor/Value")
    right = memoryProxy.getData("Device/SubDeviceList/RFoot/FSR/TotalWeight/Sensor/Value")
    print("FSR", "%.3f" % left, "%.3f" % right)

    initRobotPosition = motionProxy.getRobotPosition(False)
    X, Y, Theta = 0.2, 0.0, math.pi / 4
    motionProxy.moveTo(X, Y, Theta, [["MaxStepFrequency", 1.0]])
    # wait is useful because with post moveTo is not blocking function
    motionProxy.waitUntilMoveIsFinished()
    endRobotPosition = motionProxy.getRobotPosition(False)
    print("Moved", " ".join("%.4f" % (b - a) for a, b in zip(initRobotPosition,
                                                           endRobotPosition)))

    # the same through post: an id to wait on
    taskId = motionProxy.post.moveTo(0.1, 0.0, 0.0)
    motionProxy.wait(taskId, 0)
    print("Velocity", " ".join("%.3f" % v for v in motionProxy.getRobotVelocity()))
    print("Fallen", memoryProxy.getData("robotHasFallen"))

    # What NAOqi refuses raises RuntimeError
    refused = 0
    for call in (lambda: postureProxy.goToPosture("Cartwheel", 0.5),
                 lambda: motionProxy.moveTo(float("nan"), 0.0, 0.0),
                 lambda: memoryProxy.getData("NoSuchKey")):
        try:
            call()
        except RuntimeError as e:
            print("RuntimeError", e)
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
