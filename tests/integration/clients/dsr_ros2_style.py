#!/usr/bin/env python
# A task loop in the form of doosan-robot2's Python examples (dsr_example2_py): ROS 2
# boilerplate, DR_init, DSR_ROBOT2's calls, a Ctrl-C handler that publishes RobotStop on the
# 'stop' topic and shuts rclpy down, and a `while rclpy.ok()` loop. Its imports are a ROS 2
# user's, unchanged: run it with rtcf_components.blending_planner.dsr_run.
import rclpy
import os, sys
import time
import signal

from dsr_msgs2.msg import *

import DR_init
g_node = None
rclpy.init()
g_node = rclpy.create_node('dsr_ros2_style_py')
DR_init.__dsr__node = g_node
from DSR_ROBOT2 import *


def signal_handler(sig, frame):
    print("signal_handler")
    publisher = g_node.create_publisher(RobotStop, 'stop', 10)
    msg = RobotStop()
    msg.stop_mode = 1
    publisher.publish(msg)
    rclpy.shutdown()


def main():
    signal.signal(signal.SIGINT, signal_handler)
    set_velx(120, 60)
    set_accx(400, 120)
    home = posj(0.0, 0.0, 90.0, 0.0, 90.0, 0.0)
    a = posx(559, 34.5, 550, 0, 180, 0)
    b = posx(459, 134.5, 550, 0, 180, 0)
    c1 = posx(409, 84.5, 550, 0, 180, 0)
    c2 = posx(459, 34.5, 550, 0, 180, 0)
    passes = 0
    while rclpy.ok():
        movej(home, vel=60, acc=120)
        movel(a, radius=20)
        movel(b)
        movec(c1, c2)
        movesx([posx(509, 84.5, 600, 0, 180, 0), posx(559, 34.5, 651.4, 0, 180, 0)], vel=100,
               acc=300)
        passes += 1
        pos, sol = get_current_posx()
        print("pass", passes, [round(v, 1) for v in pos[:3]], sol, flush=True)
    print("good-bye")


if __name__ == '__main__':
    main()
