"""Run a doosan-robot2 Python script unchanged against an rtcf BlendingPlanner.

    .venv/bin/python -m rtcf_components.blending_planner.dsr_run [--nameserver HOST:PORT]
        [--planner NAME] SCRIPT [ARGS...]

The script's imports of ROS 2 and DSR_ROBOT2 resolve to rtcf's: ``rclpy`` and
``rclpy.logging`` (dsr_rclpy), ``DR_init``, ``DSR_ROBOT2``, ``DR_common2``, ``DRFC`` (the
DSR calls and constants, rtcf_components.clients.dsr) and ``dsr_msgs2.msg`` (RobotStop), as
if its import lines had been changed to ``from rtcf_components.clients.dsr import ...``.
Nothing else of ROS is there: a script that needs other ROS packages fails at that import,
naming it. The script runs as ``__main__`` with its own folder first on sys.path; after
``rclpy.shutdown()`` (the examples' Ctrl-C handler calls it) the next DSR call ends the
program: "stopped" and exit status 0, as a DRL program ends on a stop. Runs in: the main
thread of its own process.
"""

from __future__ import annotations

import argparse
import os
import runpy
import sys
import types


def install() -> None:
    """Make the ROS / DSR module names import rtcf's stand-ins (sys.modules)."""
    from . import dsr, dsr_rclpy
    rclpy_logging = dsr_rclpy.logging
    dr_init = types.ModuleType("DR_init")
    for k, v in vars(dsr.DR_init).items():
        setattr(dr_init, k, v)
    msgs = types.ModuleType("dsr_msgs2.msg")
    msgs.RobotStop = dsr.RobotStop
    msgs.__all__ = ["RobotStop"]
    pkg = types.ModuleType("dsr_msgs2")
    pkg.msg = msgs
    pkg.__path__ = []
    sys.modules.update({"rclpy": dsr_rclpy, "rclpy.logging": rclpy_logging,
                        "DR_init": dr_init, "DSR_ROBOT2": dsr, "DR_common2": dsr, "DRFC": dsr,
                        "dsr_msgs2": pkg, "dsr_msgs2.msg": msgs})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="dsr_run", description=__doc__.split("\n\n")[0])
    ap.add_argument("--nameserver", help="naming service host:port (RTCF_NAMESERVER, "
                                         "default localhost:2809)")
    ap.add_argument("--planner", help="the BlendingPlanner's name (RTCF_DSR_PLANNER, default "
                                      "BlendingPlanner0)")
    ap.add_argument("script")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    opts = ap.parse_args(argv)
    if not os.path.isfile(opts.script):
        print(f"dsr_run: no such script: {opts.script}", file=sys.stderr)
        return 2
    if opts.nameserver:
        os.environ["RTCF_NAMESERVER"] = opts.nameserver
    if opts.planner:
        os.environ["RTCF_DSR_PLANNER"] = opts.planner
    install()
    from .dsr_common import DR_ERROR_STOP, DR_Error
    sys.argv = [opts.script, *opts.args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(opts.script)))
    try:
        runpy.run_path(opts.script, run_name="__main__")
    except DR_Error as e:
        if e.type != DR_ERROR_STOP:
            raise
        print(f"dsr_run: stopped ({e.msg})")
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
