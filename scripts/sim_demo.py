"""Pictures of the robots on MuJoCo physics: filmstrips and tracking plots.

    scripts/sim_demo                    # both robots, PNGs into sim_demo/
    scripts/sim_demo --only nao --out /tmp/demo
    scripts/sim_demo --no-film          # plots only (no OpenGL needed)

NAO: compositions/nao_sim.yaml plays the sample wave pattern (model/patterns/nao_wave)
through SequencePlayer0 -> DCM0 (body: mujoco); writes nao_filmstrip.png (frames rendered
by MuJoCo's offscreen renderer) and nao_tracking.png (commanded against measured joint
angles of the joints the pattern moves). M1013: compositions/arm_sim.yaml runs a blended
square of BlendingPlanner0 through the 1 kHz joint effort PID; writes arm_filmstrip.png and
arm_tracking.png (planned against measured TCP path, TCP error and speed, joint torques).
The compositions run in this process in simulation time (rtcf.simtime, deterministic).

Rendering without a GPU uses OSMesa (MUJOCO_GL=osmesa, Debian's libosmesa6). When the
library is missing the script installs it if it runs as root (apt-get update, then
apt-get install libosmesa6); otherwise it says what to install and writes the plots only.
"""

from __future__ import annotations

import argparse
import ctypes.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

NAO_PLOT_JOINTS = ("HeadYaw", "RShoulderPitch", "RShoulderRoll", "RElbowYaw", "RElbowRoll")


def ensure_osmesa() -> str:
    """'' when offscreen rendering can work, else the reason it cannot. Installs
    libosmesa6 with apt-get when missing and running as root. Sets MUJOCO_GL (before mujoco
    is imported) unless the user chose a backend."""
    backend = os.environ.setdefault("MUJOCO_GL", "osmesa")
    if backend != "osmesa":
        return ""
    os.environ.setdefault("PYOPENGL_PLATFORM", "osmesa")
    if ctypes.util.find_library("OSMesa"):
        return ""
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        return ("offscreen rendering needs OSMesa: install Debian's libosmesa6 "
                "(sudo apt-get install libosmesa6), or set MUJOCO_GL=egl on a machine with a "
                "GPU")
    print("sim_demo: installing libosmesa6 (apt-get update; apt-get install libosmesa6)")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in (["apt-get", "update", "-q"],
                ["apt-get", "install", "-y", "-q", "--no-install-recommends", "libosmesa6"]):
        done = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True)
        if done.returncode != 0:
            return f"{' '.join(cmd)} failed: {done.stderr.strip()[-300:]}"
    if not ctypes.util.find_library("OSMesa"):
        return "libosmesa6 was installed but libOSMesa is still not found"
    return ""


class Camera:
    """An offscreen renderer with a free camera that follows a body."""

    def __init__(self, sim, body: str, distance: float, elevation: float, azimuth: float,
                 size=(320, 400), offset=(0.0, 0.0, 0.0), marks=None):
        import mujoco
        self.mujoco = mujoco
        self.sim = sim
        global np
        import numpy as np
        h, w = size
        self.renderer = mujoco.Renderer(sim.mj_model, h, w)
        self.cam = mujoco.MjvCamera()
        self.cam.type = mujoco.mjtCamera.mjCAMERA_FREE
        self.cam.distance, self.cam.elevation, self.cam.azimuth = distance, elevation, azimuth
        self.body = mujoco.mj_name2id(sim.mj_model, mujoco.mjtObj.mjOBJ_BODY, body)
        if self.body < 0:
            raise ValueError(f"no body {body!r} in the model to look at")
        self.offset = offset
        self.marks = [] if marks is None else list(marks)   # world points [m]: small dots

    def __call__(self, sim):
        p = sim.mj_data.xpos[self.body]
        self.cam.lookat[:] = [p[0] + self.offset[0], p[1] + self.offset[1],
                              p[2] + self.offset[2]]
        self.renderer.update_scene(sim.mj_data, self.cam)
        # OSMesa's shadow map is coarse: it draws dark slabs beside the feet
        self.renderer.scene.flags[self.mujoco.mjtRndFlag.mjRND_SHADOW] = False
        scene = self.renderer.scene
        mj = self.mujoco
        for p in self.marks:
            if scene.ngeom >= scene.maxgeom:
                break
            mj.mjv_initGeom(scene.geoms[scene.ngeom], mj.mjtGeom.mjGEOM_SPHERE,
                            [0.006, 0, 0], p, np.eye(3).flatten(), [0.9, 0.2, 0.1, 1.0])
            scene.ngeom += 1
        return self.renderer.render().copy()

    def close(self):
        self.renderer.close()


def filmstrip(frames, title: str, path: Path, per_row: int = 6) -> None:
    import matplotlib.pyplot as plt
    n = len(frames)
    rows = (n + per_row - 1) // per_row
    h, w = frames[0][1].shape[:2]
    fig, axes = plt.subplots(rows, per_row, figsize=(2.2 * per_row,
                                                     2.2 * rows * h / w + 0.3 * rows + 0.4),
                             squeeze=False)
    for ax in axes.flat:
        ax.axis("off")
    for ax, (t, img) in zip(axes.flat, frames):
        ax.imshow(img)
        ax.set_title(f"t = {t:.1f} s", fontsize=9)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    print(f"wrote {path}")


def nao(out: Path, film: bool) -> None:
    import matplotlib.pyplot as plt
    import numpy as np
    from rtcf_components.scenarios.metrics import tracking
    from rtcf_components.scenarios.runs import NAO_SIM, WAVE, run_nao

    render = None
    if film:
        from rtcf.testing import SimSystem
        system = SimSystem(NAO_SIM, params={"qLog": {"path": ""}, "sensorLog": {"path": ""}})
        cam = Camera(system["DCM0"].robot_body.sim, "torso", 1.0, -12.0, 150.0,
                     size=(400, 300), offset=(0.0, 0.0, -0.04))
        render = cam
        rec = run_nao(6.0, pattern=WAVE, render=render, frame_every=0.5, system=system)
        cam.close()
        system.close()
        filmstrip(rec.frames, "NAO V5 on MuJoCo: the wave pattern through SequencePlayer -> "
                  "DCM (body: mujoco)", out / "nao_filmstrip.png")
    else:
        rec = run_nao(6.0, pattern=WAVE)
    idx = [rec.joint_names.index(j) for j in NAO_PLOT_JOINTS]
    moved = np.flatnonzero(np.ptp(rec.q_ref, axis=0) > 0.05)
    tr = tracking(rec.q_ref, rec.q, moved)
    fig, axes = plt.subplots(len(idx) + 1, 1, figsize=(9, 2.0 * (len(idx) + 1)), sharex=True)
    for ax, j in zip(axes, idx):
        ax.plot(rec.t, rec.q_ref[:, j], "k--", lw=1, label="qRef (SequencePlayer)")
        ax.plot(rec.t, rec.q_cmd[:, j], "C0", lw=1, label="Position actuator (DCM)")
        ax.plot(rec.t, rec.q[:, j], "C3", lw=1.2, label="measured (physics)")
        ax.set_ylabel(f"{rec.joint_names[j]}\n[rad]", fontsize=8)
    axes[0].legend(fontsize=7, loc="lower left")
    axes[0].set_title(f"NAO wave on MuJoCo: tracking vs qRef over the moved joints: RMS "
                      f"{tr.rms_all:.3f} rad, max {tr.max_all:.3f} rad", fontsize=10)
    ax = axes[-1]
    ax.plot(rec.t, rec.base_pos[:, 2] * 100, "C2")
    ax.set_ylabel("torso height\n[cm]", fontsize=8, color="C2")
    ax2 = ax.twinx()
    ax2.plot(rec.t, rec.fsr_total_kg, "C1")
    ax2.axhline(rec.mass, color="C1", ls=":", lw=1)
    ax2.set_ylabel(f"FSR total [kg]\n(mass {rec.mass:.2f}, dotted)", fontsize=8, color="C1")
    ax.set_xlabel("simulated time [s]")
    fig.tight_layout()
    path = out / "nao_tracking.png"
    fig.savefig(path, dpi=90)
    plt.close(fig)
    print(f"wrote {path}")


def arm(out: Path, film: bool) -> None:
    import matplotlib.pyplot as plt
    import numpy as np
    from rtcf_components.scenarios.metrics import speed_profile
    from rtcf_components.scenarios.runs import run_arm

    render = None
    cams = []
    if film:
        path = run_arm().tcp_plan[::40] / 1000.0     # the planned TCP path, drawn as dots

        def render(sim):           # the renderer needs the simulation: made at first call
            if not cams:
                cams.append(Camera(sim, "base_0", 1.6, -28.0, 135.0, size=(360, 400),
                                   offset=(0.35, 0.1, 0.55), marks=path))
            return cams[0](sim)
    rec = run_arm(render=render, frame_every=0.5)
    for c in cams:
        c.close()
    if film:
        filmstrip(rec.frames, "Doosan M1013 on MuJoCo: a blended square through the 1 kHz "
                  "joint effort PID", out / "arm_filmstrip.png")
    dev = np.linalg.norm(rec.tcp_meas - rec.tcp_plan, axis=1)
    t_mid, v_meas = speed_profile(rec.t, rec.tcp_meas)
    _, v_plan = speed_profile(rec.t, rec.tcp_plan)
    fig, axes = plt.subplots(2, 2, figsize=(12, 8))
    ax = axes[0, 0]
    ax.plot(rec.tcp_plan[:, 0], rec.tcp_plan[:, 1], "k--", lw=1, label="planned")
    ax.plot(rec.tcp_meas[:, 0], rec.tcp_meas[:, 1], "C3", lw=1, label="measured (FK of q)")
    ax.set(title="TCP path, top view (base frame)", xlabel="x [mm]", ylabel="y [mm]")
    ax.set_aspect("equal", adjustable="datalim")
    ax.legend(fontsize=8)
    ax = axes[0, 1]
    ax.plot(rec.t, dev, "C3")
    ax.set(title=f"TCP error: RMS {np.sqrt(np.mean(dev ** 2)):.3f} mm, max {dev.max():.3f} mm",
           xlabel="t [s]", ylabel="|measured - planned| [mm]")
    ax = axes[1, 0]
    ax.plot(t_mid, v_plan, "k--", lw=1, label="planned")
    ax.plot(t_mid, v_meas, "C3", lw=1, label="measured")
    ax.set(title="TCP speed", xlabel="t [s]", ylabel="[mm/s]")
    ax.legend(fontsize=8)
    ax = axes[1, 1]
    for j in range(rec.tau.shape[1]):
        ax.plot(rec.t, rec.tau[:, j], lw=1, label=f"joint{j + 1}")
    ax.set(title="joint torques from the effort PID", xlabel="t [s]", ylabel="[N m]")
    ax.legend(fontsize=7, ncol=3)
    fig.tight_layout()
    path = out / "arm_tracking.png"
    fig.savefig(path, dpi=90)
    plt.close(fig)
    print(f"wrote {path}")


def main() -> int:
    ap = argparse.ArgumentParser(prog="scripts/sim_demo", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="sim_demo", help="folder for the PNGs (default sim_demo)")
    ap.add_argument("--only", choices=("nao", "arm"), help="one robot only")
    ap.add_argument("--no-film", action="store_true", help="plots only, no rendering")
    args = ap.parse_args()
    out = Path(os.environ.get("RTCF_CWD", ".")) / args.out
    out.mkdir(parents=True, exist_ok=True)
    film = not args.no_film
    if film:
        why = ensure_osmesa()
        if why:
            print(f"sim_demo: no filmstrips: {why}", file=sys.stderr)
            film = False
    try:
        import matplotlib
        matplotlib.use("Agg")
    except ImportError:
        print("sim_demo: matplotlib is not installed (.venv/bin/pip install -e '.[demo]' in "
              "the repository)", file=sys.stderr)
        return 2
    if args.only in (None, "nao"):
        nao(out, film)
    if args.only in (None, "arm"):
        arm(out, film)
    return 0


if __name__ == "__main__":
    sys.exit(main())
