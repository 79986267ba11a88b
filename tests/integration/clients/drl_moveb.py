# A task program in the style of Doosan's DRL manual examples for moveb: global velocity and
# acceleration, blended lines and a circle in the tool frame, the short keyword forms, an
# asynchronous move with check_motion and mwait, return codes, and the DR_Error a wrong
# argument (or a path the arm cannot follow) raises. Only the import line differs from what a DSR user writes (ROS 2:
# from DSR_ROBOT2 import *; on the teach pendant the DRL names need no import).
from rtcf_components.clients.dsr import *          # DSR: from DSR_ROBOT2 import *

set_velx(100, 30)
set_accx(200, 60)
set_ref_coord(DR_TOOL)

# a square in the tool's x-y plane, blended at the corners, back to where the tool started
seg11 = posb(DR_LINE, posx(100, 0, 0, 0, 0, 0), radius=20)
seg12 = posb(DR_LINE, posx(100, 100, 0, 0, 0, 0), radius=20)
seg13 = posb(DR_LINE, posx(0, 100, 0, 0, 0, 0), radius=20)
seg14 = posb(DR_LINE, posx(0, 0, 0, 0, 0, 0))
b_list1 = [seg11, seg12, seg13, seg14]
ret = moveb(b_list1)
print("square", ret)

# relative moves with the short keywords: a line then an arc, blended
seg21 = posb(DR_LINE, posx(0, 0, -50, 0, 0, 0), radius=10)
seg22 = posb(DR_CIRCLE, posx(50, 50, 0, 0, 0, 0), posx(100, 0, 0, 0, 0, 0))
b_list2 = [seg21, seg22]
ret = moveb(b_list2, v=50, a=100, mod=DR_MV_MOD_REL)
print("arc", ret)

# asynchronous: the script goes on while the arm moves
ret = amoveb([posb(DR_LINE, posx(-100, 0, 50, 0, 0, 0))], vel=80, acc=160,
             mod=DR_MV_MOD_REL)
state = check_motion()
print("amoveb", ret, "busy" if state == DR_STATE_BUSY else "idle")
ret = mwait()
print("mwait", ret, "busy" if check_motion() == DR_STATE_BUSY else "idle")

# a path the arm cannot follow: the controller refuses it, nothing moves
try:
    moveb([posb(DR_LINE, posx(3000, 0, 0, 0, 0, 0))], ref=DR_BASE, mod=DR_MV_MOD_REL)
except DR_Error as e:
    print("refused", e.type)

# a wrong argument
try:
    moveb([posb(DR_LINE, posx(10, 0, 0, 0, 0, 0))], vel="fast")
except DR_Error as e:
    print("DR_Error", e.type, e.msg)
try:
    posb(DR_LINE, posx(10, 0, 0, 0, 0, 0), posx(20, 0, 0, 0, 0, 0))
except DR_Error as e:
    print("DR_Error", e.type, e.msg)
