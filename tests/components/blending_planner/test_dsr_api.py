"""DSR_ROBOT2's calls (components/blending_planner/dsr.py) against a BlendingPlanner in this
process: the servant without an ORB, its 100 Hz EC stepped by a thread at real time. The
call forms, return values and DR_Error types of DSR_ROBOT2
(doosan-robotics/doosan-robot2 at 443f0c587059c7c45aba6d523b0edad87de29fee) and what the
DRL's motions do: sync, async, blending, stop, the state and math calls, user frames, TCPs,
the functions not available, and the ROS 2 boilerplate of the example scripts."""

import threading
import time

import numpy as np
import pytest

pytest.importorskip("rtcf_components.kinematics.algorithms")

from rtcf_components.blending_planner import BlendingPlanner, dsr                  # noqa: E402
from rtcf_components.blending_planner import dsr_motion, dsr_rclpy                  # noqa: E402
from rtcf_components.blending_planner.proxy import BlendingPlannerProxy             # noqa: E402
from rtcf.testing import Harness                                    # noqa: E402

HOME = [0.0, 0.0, 90.0, 0.0, 90.0, 0.0]

# every public module-level function of DSR_ROBOT2.py at the commit above
DSR_ROBOT2_FUNCTIONS = """
wait print_ext_result print_result set_velj set_accj set_velx set_accx set_robot_mode
get_robot_mode set_robot_system get_robot_system get_robot_state set_robot_speed_mode
get_robot_speed_mode set_safe_stop_reset_type get_current_pose get_current_solution_space
get_last_alarm get_control_mode get_control_space get_current_posj get_current_velj
get_desired_posj get_desired_velj get_current_posx get_current_tool_flange_posx
get_current_velx get_desired_posx get_desired_velx get_current_rotm get_joint_torque
get_external_torque get_tool_force get_solution_space get_orientation_error trans fkin ikin
set_ref_coord servoj set_safety_mode movej amovej movejx amovejx movel amovel movec amovec
movesj amovesj movesx amovesx moveb amoveb move_spiral amove_spiral move_periodic
amove_periodic move_home mwait check_motion change_operation_speed enable_alter_motion
alter_motion disable_alter_motion set_singular_handling set_singularity_handling jog
jog_multi get_workpiece_weight reset_workpiece_weight parallel_axis align_axis
is_done_bolt_tightening release_compliance_ctrl task_compliance_ctrl set_stiffnessx
calc_coord set_user_cart_coord overwrite_user_cart_coord get_user_cart_coord
set_desired_force release_force check_position_condition check_force_condition
check_orientation_condition coord_transform get_digital_input get_analog_input
get_tool_digital_input set_digital_output get_digital_output set_analog_output
set_mode_analog_output set_mode_analog_input set_tool_digital_output get_tool_digital_output
add_modbus_signal del_modbus_signal set_modbus_output get_modbus_input set_tcp get_tcp
set_tool get_tool set_tool_shape add_tcp del_tcp add_tool del_tool drl_script_run
drl_script_stop drl_script_pause drl_script_resume get_drl_state
""".split()


@pytest.fixture
def arm(monkeypatch):
    h = Harness(BlendingPlanner, rate=100.0, params={"tcps": "pen: 0, 0, 100, 0, 0, 0"})
    h.activate()
    running = threading.Event()
    running.set()

    def ec():
        next_t = time.monotonic()
        while running.is_set():
            h.step()
            next_t += 0.01
            time.sleep(max(0.0, next_t - time.monotonic()))
    t = threading.Thread(target=ec, daemon=True)
    t.start()
    proxy = BlendingPlannerProxy(service=h.comp.service, wait_chunk=0.5)
    monkeypatch.setattr(dsr_motion, "_proxy", proxy)
    for name, value in (("_g_velj", [0.0] * 6), ("_g_accj", [0.0] * 6),
                        ("_g_velx", [0.0, dsr.DR_COND_NONE]),
                        ("_g_accx", [0.0, dsr.DR_COND_NONE]), ("_g_coord", dsr.DR_BASE)):
        monkeypatch.setattr(dsr_motion, name, value)
    dsr_rclpy.init()
    yield h
    running.clear()
    t.join(2)
    h.close()


def test_every_dsr_robot2_function_is_there_supported_or_saying_why():
    assert set(DSR_ROBOT2_FUNCTIONS) <= set(dsr.SUPPORTED) | set(dsr.UNSUPPORTED)
    assert not set(dsr.SUPPORTED) & set(dsr.UNSUPPORTED)
    for name in DSR_ROBOT2_FUNCTIONS:
        assert callable(getattr(dsr, name)) and name in dsr.__all__
    with pytest.raises(dsr.DR_Error) as e:
        dsr.set_digital_output(1, dsr.ON)
    assert e.value.type == dsr.DR_ERROR_RUNTIME and "no I/O" in e.value.msg


def test_movej_movel_sync_and_the_pose_they_leave(arm):
    assert dsr.movej(dsr.posj(10, 0, 90, 0, 90, 0), vel=60, acc=120) == 0
    assert dsr.get_current_posj() == pytest.approx([10, 0, 90, 0, 90, 0], abs=1e-9)
    pos, sol = dsr.get_current_posx()
    assert isinstance(pos, dsr.posx) and sol == 2
    target = dsr.posx(pos[0], pos[1], pos[2] - 100, pos[3], pos[4], pos[5])
    assert dsr.movel(target, v=100, a=400) == 0
    now, _ = dsr.get_current_posx(dsr.DR_BASE)
    assert now[:3] == pytest.approx(target[:3], abs=1e-6)
    assert dsr.get_desired_posx()[:3] == pytest.approx(target[:3], abs=1e-6)
    assert dsr.check_motion() == dsr.DR_STATE_IDLE
    assert dsr.get_current_velj() == pytest.approx([0.0] * 6)


def stop_when_on_its_way(y_from: float, y_to: float) -> None:
    """Stop the arm once it is 80 mm on its way from y_from to y_to (however slowly the
    machine runs the EC, the stop lands mid-path)."""
    while dsr.check_motion() != dsr.DR_STATE_BUSY:
        time.sleep(0.01)
    while abs(dsr.get_current_posx()[0][1] - y_from) < 80.0:
        time.sleep(0.01)
    assert abs(y_to - y_from) > 160.0
    dsr.stop(dsr.DR_QSTOP)


def test_async_check_motion_mwait_and_stop_from_another_thread(arm):
    pos, _ = dsr.get_current_posx()
    far = dsr.posx(pos[0], pos[1] + 250, pos[2], pos[3], pos[4], pos[5])
    assert dsr.amovel(far, vel=100, acc=400) == 0
    assert dsr.check_motion() == dsr.DR_STATE_BUSY
    deadline = time.monotonic() + 60                 # a few cycles into the motion
    while (v := dsr.get_desired_velx())[1] <= 0:
        assert time.monotonic() < deadline, v
        time.sleep(0.01)
    assert 0 < v[1] <= 100.0 * 1.001 and abs(v[0]) < 1.0
    assert dsr.mwait() == 0
    assert dsr.get_current_posx()[0][:3] == pytest.approx(far[:3], abs=1e-6)
    back = dsr.posx(pos)
    stopper = threading.Thread(target=stop_when_on_its_way, args=(far[1], pos[1]))
    stopper.start()
    assert dsr.movel(back, vel=100, acc=400) == -1          # stopped: the sync call says so
    stopper.join()
    where = dsr.get_current_posx()[0]
    assert pos[1] + 30 < where[1] < far[1] - 30


def test_radius_blends_sync_motions(arm):
    pos, _ = dsr.get_current_posx()
    a = dsr.posx(pos[0], pos[1] + 100, pos[2], *pos[3:])
    b = dsr.posx(pos[0] - 100, pos[1] + 100, pos[2], *pos[3:])
    dsr.set_velx(100)
    dsr.set_accx(400)
    assert dsr.movel(a, r=30) == 0          # returns at the blending sphere
    assert dsr.check_motion() == dsr.DR_STATE_BUSY
    here = dsr.get_desired_posx()
    assert np.linalg.norm(np.array(here[:3]) - a[:3]) == pytest.approx(30, abs=2)
    assert dsr.movel(b) == 0
    assert dsr.get_current_posx()[0][:3] == pytest.approx(b[:3], abs=1e-6)


@pytest.mark.parametrize("call,kind,words", [
    (lambda: dsr.movej([0, 0, 90, 0, 90], vel=10, acc=10), 1000, "Invalid type : pos"),
    (lambda: dsr.movej(dsr.posx(0, 0, 90, 0, 90, 0), v=10, a=10), 1000, "Invalid type : pos"),
    (lambda: dsr.movej([0, 0, float("nan"), 0, 90, 0], v=10, a=10), 1001, "Invalid value"),
    (lambda: dsr.movej(HOME, v=10, a=10, r=-1), 1001, "radius, r"),
    (lambda: dsr.movej(HOME, v=10, a=10, t=-1), 1001, "time, t"),
    (lambda: dsr.movej(HOME), 1001, "vel, v (0.0, when time = 0.0)"),
    (lambda: dsr.movej([0, 0, 90, 0, 170, 0], v=10, a=10), 1001, "outside joint5's limits"),
    (lambda: dsr.movel([2000, 0, 500, 0, 180, 0], v=100, a=100), 1001, "cannot follow"),
    (lambda: dsr.movel([500, 0, 500, 0, 180], v=100, a=100), 1000, "Invalid type : pos"),
    (lambda: dsr.movel([500, 0, 500, 0, 180, 0], v=100, a=100, ra=5), 1001,
     "Invalid value : ra"),
    (lambda: dsr.movejx([500, 0, 500, 0, 180, 0], v=10, a=10, sol=9), 1001,
     "Invalid value : sol"),
    (lambda: dsr.movec([1, 2, 3, 0, 0, 0], dsr.posj(), v=10, a=10), 1000, "pos1, ps2"),
    (lambda: dsr.movesj([dsr.posx()], v=10, a=10), 1000, "pos_list [item]"),
    (lambda: dsr.stop(7), 1001, "st_mode"),
    (lambda: dsr.change_operation_speed(0), 1001, "speed(0)"),
    (lambda: dsr.ikin([2000, 0, 500, 0, 180, 0], 2), 1001, "no IK solution"),
    (lambda: dsr.set_robot_mode(0), 1002, "ROBOT_MODE_AUTONOMOUS"),
])
def test_bad_input_raises_dr_error_and_nothing_moves(arm, call, kind, words):
    with pytest.raises(dsr.DR_Error) as e:
        call()
    assert e.value.type == kind and words in e.value.msg, e.value.msg
    assert dsr.get_current_posj() == pytest.approx(HOME, abs=1e-9)
    assert dsr.check_motion() == dsr.DR_STATE_IDLE


def test_math_calls(arm):
    x = dsr.fkin(dsr.posj(HOME))
    assert x == pytest.approx(list(dsr.get_current_posx()[0]), abs=1e-9)
    q = dsr.ikin(x, 2)
    assert q == pytest.approx(HOME, abs=1e-6)
    assert dsr.get_solution_space(q) == 2
    moved = dsr.trans(x, dsr.posx(10, 0, 0, 0, 0, 0), dsr.DR_TOOL)
    # the tool's x axis at the home pose points along the base -x (A = 0, B = 180, C = 0)
    assert np.linalg.norm(np.array(moved[:3]) - x[:3]) == pytest.approx(10.0)
    up = dsr.trans(x, [0, 0, 10, 0, 0, 0], dsr.DR_BASE)
    assert up[2] == pytest.approx(x[2] + 10.0)
    assert dsr.coord_transform(x, dsr.DR_BASE, dsr.DR_TOOL)[:3] == pytest.approx([0, 0, 0],
                                                                                 abs=1e-6)


def test_user_frame_and_tcp(arm):
    x, _ = dsr.get_current_posx()
    fid = dsr.set_user_cart_coord(dsr.posx(x[0], x[1], x[2] - 50, 0, 0, 0), ref=dsr.DR_BASE)
    assert fid == 101 or fid > 101
    frame, ref = dsr.get_user_cart_coord(fid)
    assert frame[:3] == pytest.approx([x[0], x[1], x[2] - 50]) and ref == dsr.DR_BASE
    assert dsr.movel(dsr.posx(20, 0, 50, *x[3:]), v=100, a=400, ref=fid) == 0
    assert dsr.get_current_posx()[0][:3] == pytest.approx([x[0] + 20, x[1], x[2]], abs=1e-6)
    assert dsr.get_current_posx(fid)[0][:3] == pytest.approx([20, 0, 50], abs=1e-6)
    # a three-point frame: x along x1 -> x2, y towards x3
    fid2 = dsr.set_user_cart_coord(dsr.posx(0, 0, 0, 0, 0, 0), dsr.posx(0, 10, 0, 0, 0, 0),
                                   dsr.posx(-10, 0, 0, 0, 0, 0), dsr.posx(1, 2, 3, 0, 0, 0))
    f2, _ = dsr.get_user_cart_coord(fid2)
    assert f2 == pytest.approx([1, 2, 3, 90, 0, 0], abs=1e-9)
    before = dsr.get_current_posx()[0]
    assert dsr.set_tcp("pen") == 0 and dsr.get_tcp() == "pen"
    after = dsr.get_current_posx()[0]          # 100 mm further along the tool's z (down)
    assert after[2] == pytest.approx(before[2] - 100, abs=0.1)
    assert dsr.get_current_tool_flange_posx()[:3] == pytest.approx(before[:3], abs=1e-6)
    assert dsr.set_tcp("") == 0
    with pytest.raises(dsr.DR_Error):
        dsr.set_tcp("nosuch")


def test_operation_speed_and_move_home(arm):
    assert dsr.change_operation_speed(50) == 0
    t0 = time.monotonic()
    assert dsr.movej([20, 0, 90, 0, 90, 0], vel=40, acc=400) == 0
    assert dsr.change_operation_speed(100) == 0
    assert dsr.move_home(dsr.DR_HOME_TARGET_USER) == 0
    assert dsr.get_current_posj() == pytest.approx(HOME, abs=1e-9)
    assert time.monotonic() > t0


def test_rclpy_stand_in_stops_the_arm_and_ends_the_program(arm):
    node = dsr.rclpy.create_node("test", namespace="dsr01")
    pub = node.create_publisher(dsr.RobotStop, "stop", 10)
    pos, _ = dsr.get_current_posx()
    assert dsr.amovel(dsr.posx(pos[0], pos[1] + 200, *pos[2:]), v=50, a=400) == 0
    time.sleep(0.3)
    msg = dsr.RobotStop()
    msg.stop_mode = 1
    pub.publish(msg)
    assert dsr.mwait() == -1
    assert dsr.rclpy.ok()
    dsr.rclpy.shutdown()
    try:
        assert not dsr.rclpy.ok()
        with pytest.raises(dsr.DR_Error) as e:
            dsr.movej(HOME, v=10, a=10)
        assert e.value.type == dsr.DR_ERROR_STOP
    finally:
        dsr.rclpy.init()        # as a new program would: the module is shared in this process
    assert dsr.movej(HOME, v=60, a=120) == 0


def test_the_docs_table_lists_every_function_as_the_module_has_it():
    """docs/doosan.md's table: every DSR_ROBOT2 function, "yes" where the module does it,
    "no" where it raises saying why."""
    import re
    from pathlib import Path
    doc = (Path(__file__).resolve().parents[3] / "docs" / "doosan.md").read_text()
    table = doc.split("## Every DSR_ROBOT2 function")[1].split("\n## ")[0]
    seen = set()
    for row in table.splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if len(cells) < 3 or cells[1] not in ("yes", "no"):
            continue
        for name in re.findall(r"`([a-z_0-9]+)`", cells[0]):
            seen.add(name)
            assert name in (dsr.SUPPORTED if cells[1] == "yes" else dsr.UNSUPPORTED), name
    assert set(DSR_ROBOT2_FUNCTIONS) <= seen
    assert f"All {len(DSR_ROBOT2_FUNCTIONS)} public functions" in doc
