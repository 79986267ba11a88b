"""Move NAO's head and arms through the SequencePlayer of a running system and print the hand
positions as it goes.

    scripts/run --duration 60 &            # the default system: SequencePlayer0 -> DCM0
    scripts/nao_sequence_demo [--nameserver localhost:2809] [--player SequencePlayer0]

It speaks OpenHRP::SequencePlayerService only (what an hrpsys client sends): a whole-body
pose with setJointAngles, the head as a joint group, a setTargetPose of the left hand (a
target built from the model so that NAO's 5-joint arm can reach it exactly), then back.
Hand positions [m, torso frame] come from Kinematics0 (NAO::KinematicsService.getPosition
of the arm chains, FRAME_TORSO): "cmd" from the commanded angles (DCM0.qCommand, the
player's qRef one cycle later), "meas" from the measured ones (DCM0.q, the simulated body).
With --no-kinematics they are computed locally from the player's getReference instead.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

LARM = ["LShoulderPitch", "LShoulderRoll", "LElbowYaw", "LElbowRoll", "LWristYaw"]


def rpy_of(R: np.ndarray) -> list[float]:
    """Roll, pitch, yaw of R = Rz(y) Ry(p) Rx(r)."""
    return [math.atan2(R[2, 1], R[2, 2]), -math.asin(max(-1.0, min(1.0, R[2, 0]))),
            math.atan2(R[1, 0], R[0, 0])]


def _xyz(p) -> str:
    return f"({p[0]:+.3f}, {p[1]:+.3f}, {p[2]:+.3f})"


class Demo:
    def __init__(self, svc, model, t0: float, kin=None):
        self.svc, self.model, self.t0, self.kin = svc, model, t0, kin

    def hands(self) -> str:
        out = []
        if self.kin is not None:       # Kinematics0: FRAME_TORSO = 0
            for side in ("LArm", "RArm"):
                cmd = self.kin.getPosition(side, 0, False)
                meas = self.kin.getPosition(side, 0, True)
                out.append(f"{side[0]}Hand cmd {_xyz(cmd)} meas {_xyz(meas)}")
            return "  ".join(out)
        from rtcf_components.kinematics.algorithms import chain_fk
        q = np.array(self.svc.getReference()[0])
        for side in ("LArm", "RArm"):
            c = self.model.chain(side)
            out.append(f"{side[0]}Hand ref {_xyz(chain_fk(self.model, c, q[c.index])[:3, 3])}")
        return "  ".join(out)

    def watch(self, what: str, period: float = 0.25) -> None:
        """Print the hands every period until the player is empty."""
        print(f"[{time.monotonic() - self.t0:6.2f} s] {what}")
        while True:
            done = self.svc.isEmpty()
            print(f"[{time.monotonic() - self.t0:6.2f} s]   {self.hands()}")
            if done:
                return
            time.sleep(period)

    def check(self, ok: bool, what: str) -> None:
        if not ok:
            raise SystemExit(f"{what} was refused (see the player's log)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="scripts/nao_sequence_demo", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nameserver", default="localhost:2809", metavar="HOST:PORT",
                    help="naming service of the running system (default localhost:2809)")
    ap.add_argument("--player", default="SequencePlayer0",
                    help="instance name of the SequencePlayer (default SequencePlayer0)")
    ap.add_argument("--kinematics", default="Kinematics0",
                    help="instance name of the Kinematics component (default Kinematics0)")
    ap.add_argument("--no-kinematics", action="store_true",
                    help="compute the hand positions locally from getReference")
    args = ap.parse_args(argv)
    from rtcf_components.kinematics.algorithms import chain_fk
    from rtcf_components.kinematics.model import load_model
    from rtcf.corba.client import get_service
    from rtcf.corba.idl import stub_module
    from rtcf_components.sequence_player.proxy import wait_interpolation

    sps = stub_module("OpenHRP").SequencePlayerService
    svc = get_service(args.player, "SequencePlayerService", instance="service0", stub=sps,
                      nameserver=args.nameserver)
    model = load_model("nao_h25_v5")
    names = list(model.joint_names)
    kin = None
    if not args.no_kinematics:
        from rtcf_components.kinematics.proxy import MotionProxy
        kin = MotionProxy(args.kinematics, nameserver=args.nameserver)
    d = Demo(svc, model, time.monotonic(), kin)
    print(f"{args.player}: {d.hands()}")

    pose = np.zeros(len(names))
    for j, v in (("LShoulderPitch", 0.9), ("LShoulderRoll", 0.3), ("LElbowYaw", -1.0),
                 ("LElbowRoll", -0.8), ("RShoulderPitch", 0.9), ("RShoulderRoll", -0.3),
                 ("RElbowYaw", 1.0), ("RElbowRoll", 0.8)):
        pose[names.index(j)] = v
    d.check(svc.setJointAngles(pose.tolist(), 2.0), "setJointAngles")
    d.watch("arms forward (setJointAngles, 2 s)")

    d.check(svc.addJointGroup("head", ["HeadYaw", "HeadPitch"]), "addJointGroup head")
    d.check(svc.setJointAnglesOfGroup("head", [0.6, -0.25], 1.0), "setJointAnglesOfGroup")
    wait_interpolation(svc, "head")
    print(f"[{time.monotonic() - d.t0:6.2f} s] head turned (group 'head', 1 s)")

    d.check(svc.addJointGroup("larm", LARM), "addJointGroup larm")
    c = model.chain("LArm")
    q_goal = pose[c.index] + np.array([0.4, 0.2, 0.3, -0.4, 0.3])
    T = chain_fk(model, c, q_goal, tip=np.eye(4))   # the LWristYaw frame (target link)
    xyz, rpy = T[:3, 3].tolist(), rpy_of(T[:3, :3])
    print(f"[{time.monotonic() - d.t0:6.2f} s] setTargetPose larm -> xyz "
          f"({xyz[0]:+.3f}, {xyz[1]:+.3f}, {xyz[2]:+.3f}) m, rpy "
          f"({rpy[0]:+.2f}, {rpy[1]:+.2f}, {rpy[2]:+.2f}) rad")
    d.check(svc.setTargetPose("larm", xyz, rpy, 1.5), "setTargetPose")
    d.watch("left hand to its target (setTargetPose, 1.5 s)")
    q = np.array(svc.getReference()[0])
    got = chain_fk(model, c, q[c.index], tip=np.eye(4))[:3, 3]
    print(f"  wrist frame reached within {np.linalg.norm(got - T[:3, 3]) * 1e3:.3f} mm")
    unreachable = svc.setTargetPose("larm", [0.6, 0.1, 0.0], [0.0, 0.0, 0.0], 1.0)
    print(f"  setTargetPose to 60 cm away: {unreachable} (refused, no motion)")

    svc.removeJointGroup("head")
    svc.removeJointGroup("larm")
    d.watch("groups removed: head and left arm blend back to the whole-body pose (2.5 s)",
            period=0.5)
    d.check(svc.setJointAngles([0.0] * len(names), 2.0), "setJointAngles")
    d.watch("back to zero (2 s)", period=0.5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
