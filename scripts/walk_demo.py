"""Pictures of the NAO walking on MuJoCo physics: a filmstrip and plots.

    scripts/walk_demo                       # PNGs into walk_demo/
    scripts/walk_demo --out /tmp/walk --no-film --side 0.5

compositions/nao_walk.yaml runs in this process in simulation time (deterministic), driven
through the NAOqi component as a NAOqi program drives it: goToPosture("StandInit"), then a
square with moveTo, a side of ``--side`` metres forward then a quarter turn, four times.
Writes:

* walk_filmstrip.png: frames rendered by MuJoCo's offscreen renderer every ``--frame-every``
  seconds;
* walk_top.png: the square from above: the soles where they stood (ground truth), the ZMP
  reference of the AutoBalancer against the ZMP measured from the contact forces, the CoM;
* walk_torso.png: the torso's height and tilt (roll, pitch), ZMP error along the walk;
* walk_tracking.png: the leg joints commanded (the DCM's Position actuators) against measured;
* walk_structure.png: the control structure (a drawing, no simulation).

Rendering without a GPU uses OSMesa, as scripts/sim_demo (which says what to install when it
is missing); --no-film writes the plots only.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

LEG_JOINTS = ("LHipRoll", "LHipPitch", "LKneePitch", "LAnklePitch", "LAnkleRoll")


def walk(side: float, film: bool, frame_every: float):
    """The square walk; returns (trace, frames, rig facts)."""
    import numpy as np
    from rtcf_components.scenarios.walking import WalkRig

    frames = []
    with WalkRig() as rig:
        cam = None
        if film:
            from sim_demo import Camera
            cam = Camera(rig.sim, "torso", 1.1, -20.0, 140.0, size=(300, 320),
                         offset=(0.0, 0.0, -0.1))
        nq = rig.system["NAOqi0"]
        svc = nq.service
        tr = rig.record()
        next_frame = [0.0]

        def each():
            if cam is not None and rig.system.now + 1e-9 >= next_frame[0]:
                frames.append((rig.system.now, cam(rig.sim)))
                next_frame[0] += frame_every

        def run(tid: int, limit: float = 120.0) -> None:
            t0 = rig.system.now
            while nq.task_state(tid)[0] == "running" and rig.system.now - t0 < limit:
                rig.advance(0.1, each)
            state, why = nq.task_state(tid)
            if state != "done":
                raise SystemExit(f"walk_demo: the walk stopped: {why or state}")

        run(svc.goToPosture("StandInit", 0.5))
        for _ in range(4):
            run(svc.moveTo(side, 0.0, 0.0, []))
            run(svc.moveTo(0.0, 0.0, math.pi / 2, []))
        rig.advance(1.0, each)
        if cam is not None:
            cam.close()
        facts = {"moved": rig.moved(), "fell": rig.fell, "origin": rig.balancer_origin,
                 "mass": float(np.sum(rig.sim.mj_model.body_mass)),
                 "joints": tuple(rig.abc.kin.joint_names), "to_world": rig.to_world}
        return tr.arrays(), frames, facts


def plots(tr, facts: dict, out: Path, side: float) -> None:
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.patches import Polygon

    t = tr.t
    zx, zy = facts["to_world"](tr.zmp_ref[:, 0], tr.zmp_ref[:, 1])
    # -- top view --------------------------------------------------------------------------
    fig, ax = plt.subplots(figsize=(8, 8))
    # each sole where it stood: 0.15 s after it touched down (ground truth)
    for k, colour, left in ((0, "C0", True), (1, "C3", False)):
        c = tr.contact[:, k].astype(bool)
        downs = np.flatnonzero(c[1:] & ~c[:-1]) + 1
        for i in np.r_[0, downs]:
            j = min(i + 15, len(t) - 1)
            if c[i:j + 1].all():
                x, y, yaw = tr.soles[j, 3 * k: 3 * k + 3]
                ax.add_patch(Polygon(sole_outline((x, y), yaw, left), closed=True,
                                     fill=False, ec=colour, lw=0.7))
    ax.plot(zx, zy, "k-", lw=0.8, label="ZMP reference (AutoBalancer)")
    ax.plot(tr.zmp[:, 0], tr.zmp[:, 1], "C2-", lw=0.3, alpha=0.6,
            label="ZMP measured (contact forces, every 10 ms)")
    ax.plot(tr.com[:, 0], tr.com[:, 1], "C1-", lw=1.2, label="CoM (physics)")
    ax.plot([], [], "C0-", lw=0.6, label="left sole (where it stood)")
    ax.plot([], [], "C3-", lw=0.6, label="right sole")
    ax.set_aspect("equal")
    ax.set(xlabel="x [m]", ylabel="y [m]",
           title=f"moveTo({side:g}, 0, 0) and moveTo(0, 0, pi/2), four times: from above\n"
                 f"back at the start within {math.hypot(*facts['moved'][:2]) * 1e3:.0f} mm, "
                 f"{math.degrees(facts['moved'][2]):.1f} deg (ground truth); fell: "
                 f"{facts['fell']}")
    ax.legend(fontsize=8, loc="center")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    save(fig, out / "walk_top.png")
    # -- torso -----------------------------------------------------------------------------
    fig, axes = plt.subplots(3, 1, figsize=(10, 7), sharex=True)
    axes[0].plot(t, tr.base_pos[:, 2] * 100, "C2")
    axes[0].set_ylabel("torso height [cm]")
    axes[0].set_title("the torso along the walk (ground truth)")
    axes[1].plot(t, np.degrees(tr.base_rpy[:, 0]), "C0", label="roll")
    axes[1].plot(t, np.degrees(tr.base_rpy[:, 1]), "C3", label="pitch")
    axes[1].set_ylabel("tilt [deg]")
    axes[1].legend(fontsize=8)
    err = np.hypot(tr.zmp[:, 0] - zx, tr.zmp[:, 1] - zy)
    axes[2].plot(t, err * 1e3, "k", lw=0.6)
    axes[2].set_ylabel("|ZMP measured - ref| [mm]")
    axes[2].set_xlabel("simulated time [s]")
    axes[2].set_title(f"ZMP error: RMS {np.sqrt(np.mean(err ** 2)) * 1e3:.1f} mm "
                      f"(the Stabilizer's feedback acts on it)", fontsize=9)
    fig.tight_layout()
    save(fig, out / "walk_torso.png")
    # -- joint tracking --------------------------------------------------------------------
    names = facts["joints"]
    idx = [names.index(j) for j in LEG_JOINTS]
    fig, axes = plt.subplots(len(idx), 1, figsize=(10, 1.9 * len(idx)), sharex=True)
    window = (t >= t[-1] / 2) & (t <= t[-1] / 2 + 4.0)
    for ax, j in zip(axes, idx):
        ax.plot(t[window], tr.q_cmd[window, j], "C0", lw=1, label="command (DCM)")
        ax.plot(t[window], tr.q[window, j], "C3", lw=1, label="measured")
        rms = float(np.sqrt(np.mean((tr.q_cmd[:, j] - tr.q[:, j]) ** 2)))
        ax.set_ylabel(f"{names[j]}\n[rad]", fontsize=8)
        ax.text(0.01, 0.85, f"RMS over the walk {rms:.4f} rad", transform=ax.transAxes,
                fontsize=8)
    axes[0].legend(fontsize=7, loc="upper right")
    axes[0].set_title("left leg joints, 4 s of the walk: commanded (AutoBalancer + Stabilizer)"
                      " vs measured", fontsize=10)
    axes[-1].set_xlabel("simulated time [s]")
    fig.tight_layout()
    save(fig, out / "walk_tracking.png")


def structure(out: Path) -> None:
    """The control structure as a block diagram (no simulation needed)."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    fig, ax = plt.subplots(figsize=(13, 6.6))
    ax.set_xlim(0, 13)
    ax.set_ylim(0, 6.6)
    ax.axis("off")

    def box(x, y, w, h, title, body, colour):
        ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.04", fc=colour,
                                    ec="0.3", lw=1))
        ax.text(x + w / 2, y + h - 0.2, title, ha="center", va="top", fontsize=10,
                weight="bold")
        ax.text(x + w / 2, y + h - 0.5, body, ha="center", va="top", fontsize=7.5,
                linespacing=1.35)

    def arrow(a, b, text="", dy=0.12, style="-|>", colour="0.2"):
        ax.add_patch(FancyArrowPatch(a, b, arrowstyle=style, mutation_scale=12, lw=1.1,
                                     color=colour))
        if text:
            ax.text((a[0] + b[0]) / 2, (a[1] + b[1]) / 2 + dy, text, ha="center",
                    fontsize=7.5, color=colour)

    box(0.2, 2.4, 2.1, 1.6, "SequencePlayer", "joint reference\n(postures, arms, head)",
        "#e8eef7")
    box(2.9, 1.6, 3.2, 3.2, "AutoBalancer",
        "footsteps (goPos, setFootSteps,\ngoVelocity) within stride limits\n"
        "-> ZMP reference\n-> preview control of the LIPM\n(Kajita 2003): the CoM\n"
        "swing feet (minimum-jerk lift, travel,\nset-down) -> whole-body CoM over\nthe plan, "
        "both legs' IK (one hip yaw-pitch)", "#e3f1e3")
    box(6.7, 1.6, 3.0, 3.2, "Stabilizer",
        "capture point error -> ZMP command\n(Englsberger 2011)\n"
        "ankle damping: each sole's CoP\nfoot force difference (DS)\n"
        "torso attitude (hip)\n(Kajita 2010) -> leg IK", "#f7ece3")
    box(10.3, 1.6, 2.5, 3.2, "DCM (body: mujoco)",
        "Position / Hardness\n-> MuJoCo NAO V5\n(servos, contacts, 1 ms)\n"
        "-> joints, IMU, FSRs\n(NAOqi's keys)", "#eeeeee")
    box(4.0, 5.35, 5.0, 1.05, "NAOqi",
        "ALMotion moveTo / move / stopMove, ALRobotPosture, ALMemory:\n"
        "tasks driving the player, the balancer and the stabilizer", "#f4f0f8")
    box(2.9, 0.1, 6.8, 0.95, "clients",
        "hrpsys_config.py / rtm.py: abc_svc, st_svc (OpenHRP::AutoBalancerService, "
        "StabilizerService)\nNAOqi scripts: ALProxy(\"ALMotion\" | \"ALRobotPosture\" | "
        "\"ALMemory\") (NAO::NAOqiService)", "#fffbe6")
    arrow((2.3, 3.2), (2.9, 3.2), "qRef")
    arrow((6.1, 3.4), (6.7, 3.4), "q", dy=0.1)
    arrow((6.1, 2.9), (6.7, 2.9), "zmpOut,\ncontacts", dy=-0.45)
    arrow((9.7, 3.2), (10.3, 3.2), "qRef")
    arrow((11.55, 1.6), (8.2, 1.6), "", style="-|>", colour="C3")
    ax.text(10.0, 1.25, "q, sensors (IMU, FSRs): feedback", color="C3", fontsize=7.5,
            ha="center")
    arrow((4.5, 4.8), (4.5, 5.35), "", style="<|-|>", colour="C4")
    arrow((8.2, 4.8), (8.2, 5.35), "", style="<|-|>", colour="C4")
    arrow((4.0, 5.8), (1.25, 4.0), "", style="-|>", colour="C4")
    arrow((4.5, 1.05), (4.5, 1.6), "", style="<|-|>", colour="C5")
    arrow((8.2, 1.05), (8.2, 1.6), "", style="<|-|>", colour="C5")
    arrow((6.3, 1.05), (6.3, 5.35), "", style="<|-|>", colour="C5")
    ax.text(0.2, 6.3, "compositions/nao_walk.yaml:\none 100 Hz execution context,\n"
            "members in this order,\nsimulation time", fontsize=9, va="top")
    fig.tight_layout()
    save(fig, out / "walk_structure.png")


def sole_outline(p, yaw: float, left: bool):
    """The 160 x 80 mm sole box (model/sim/nao_v5.xml) around a sole origin."""
    c, s = math.cos(yaw), math.sin(yaw)
    oy = 0.0034 if left else -0.0034
    pts = [(-0.055, oy - 0.04), (0.105, oy - 0.04), (0.105, oy + 0.04), (-0.055, oy + 0.04)]
    return [(p[0] + c * x - s * y, p[1] + s * x + c * y) for x, y in pts]


def save(fig, path: Path) -> None:
    import matplotlib.pyplot as plt
    fig.savefig(path, dpi=90)
    plt.close(fig)
    print(f"wrote {path}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="scripts/walk_demo", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="walk_demo", help="folder for the PNGs")
    ap.add_argument("--side", type=float, default=1.0, help="side of the square [m]")
    ap.add_argument("--frame-every", type=float, default=4.0, help="filmstrip period [s]")
    ap.add_argument("--no-film", action="store_true", help="plots only (no OpenGL)")
    a = ap.parse_args(argv)
    if not (0.05 <= a.side <= 5.0) or not (0.5 <= a.frame_every <= 60.0):
        ap.error("--side must be 0.05 .. 5 m and --frame-every 0.5 .. 60 s")
    out = Path(os.environ.get("RTCF_CWD", ".")) / a.out      # where the user typed it
    out.mkdir(parents=True, exist_ok=True)
    structure(out)
    film = not a.no_film
    if film:
        from sim_demo import ensure_osmesa
        why = ensure_osmesa()
        if why:
            print(f"walk_demo: no filmstrip: {why}")
            film = False
    tr, frames, facts = walk(a.side, film, a.frame_every)
    if frames:
        from sim_demo import filmstrip
        filmstrip(frames, f"NAO V5 on MuJoCo walking a {a.side:g} m square with moveTo "
                  f"(AutoBalancer + Stabilizer)", out / "walk_filmstrip.png", per_row=6)
    plots(tr, facts, out, a.side)
    dx, dy, dth = facts["moved"]
    print(f"walked {tr.t[-1] - tr.t[0]:.1f} s; back at the start within "
          f"{math.hypot(dx, dy) * 1e3:.0f} mm, {math.degrees(dth):.1f} deg; fell: {facts['fell']}")
    return 1 if facts["fell"] else 0


if __name__ == "__main__":
    sys.exit(main())
