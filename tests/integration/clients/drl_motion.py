# A pick-and-place style task program in the form of doosan-robot2's Python examples
# (dsr_example2: the ROS 2 boilerplate, a node, DR_init, then the DSR_ROBOT2 calls): global
# speeds, joint and task motions, a blended path, an arc, splines, an asynchronous move that
# is stopped, the state calls and the DR_Error a wrong argument raises. Only the import lines
# differ from what a DSR user writes; they are marked.
import sys

from rtcf_components.clients.dsr import rclpy       # DSR: import rclpy
from rtcf_components.clients.dsr import DR_init     # DSR: import DR_init

ROBOT_ID = "dsr01"
ROBOT_MODEL = "m1013"
DR_init.__dsr__id = ROBOT_ID
DR_init.__dsr__model = ROBOT_MODEL


def main(args=None):
    rclpy.init(args=args)
    node = rclpy.create_node("drl_motion_py", namespace=ROBOT_ID)
    DR_init.__dsr__node = node
    from rtcf_components.clients.dsr import (    # DSR: from DSR_ROBOT2 import (...)
        DR_BASE, DR_LINE, DR_QSTOP, DR_STATE_BUSY, DR_STATE_IDLE, DR_TOOL, DR_MV_MOD_REL,
        DR_Error, amovel, check_motion, get_current_posj, get_current_posx, mwait, movec,
        movej, movejx, movel, moveb, movesj, movesx, posb, posj, posx, set_accj, set_accx,
        set_velj, set_velx, stop, wait)

    set_velj(60)
    set_accj(120)
    set_velx(150, 60)
    set_accx(400, 120)

    home = posj(0, 0, 90, 0, 90, 0)
    print("home", movej(home))

    # approach, pick, lift: lines blended at the corners
    above = posx(500, 200, 500, 0, 180, 0)
    pick = posx(500, 200, 400, 0, 180, 0)
    print("approach", movejx(above, vel=60, acc=120, sol=2))
    print("down", movel(pick, v=100, a=300))
    print("up", movel(above, v=100, a=300, r=30))
    print("over", movel(posx(500, -100, 500, 0, 180, 0), r=30))
    print("arc", movec(posx(600, -200, 500, 0, 180, 0), posx(500, -300, 500, 0, 180, 0)))
    print("place", movel(posx(0, 0, 100, 0, 0, 0), mod=DR_MV_MOD_REL, ref=DR_TOOL))  # down
    pos, sol = get_current_posx()
    print("at", [round(v, 3) for v in pos[:3]], sol)

    # through waypoints
    print("spline", movesx([posx(450, -250, 450, 0, 180, 0), posx(400, 0, 500, 0, 180, 0),
                            posx(500, 200, 500, 0, 180, 0)], vel=120, acc=300))
    print("joints", movesj([posj(10, 10, 80, 0, 90, 0), posj(0, 0, 90, 0, 90, 0)], vel=40,
                           acc=80))
    q = get_current_posj()
    print("home again", [round(v, 6) for v in q])

    # a blended square in the base frame, then stopped halfway along a long line
    seg = [posb(DR_LINE, posx(600, 34.5, 651.4, 0, 180, 0), radius=20),
           posb(DR_LINE, posx(600, 134.5, 651.4, 0, 180, 0))]
    print("moveb", moveb(seg, vel=100, acc=300, ref=DR_BASE))
    print("amovel", amovel(posx(600, 134.5, 351.4, 0, 180, 0), vel=100, acc=300))
    print("busy", check_motion() == DR_STATE_BUSY)
    wait(1.0)
    stop(DR_QSTOP)
    print("mwait", mwait(), check_motion() == DR_STATE_IDLE)
    z = get_current_posx()[0][2]
    print("stopped between", 351.4 < z < 651.4)

    try:
        movel([500, 0, 500, 0, 180], vel=100, acc=100)
    except DR_Error as e:
        print("DR_Error", e.type, e.msg)
    try:
        movej(posj(0, 0, 170, 0, 90, 0), vel=30, acc=60)      # joint3: +-160 deg
    except DR_Error as e:
        print("DR_Error", e.type, e.msg.split(":")[0])
    rclpy.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
