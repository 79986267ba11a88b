"""The DRL motion API on the simulated M1013: what the measured arm does, in numbers and PNGs.

    scripts/dsr_figures [--out DIR] [--keep]

Starts compositions/arm_sim.yaml (the MuJoCo M1013 moved by the 1 kHz joint effort PID) with
``scripts/run`` on a free naming port, in simulation time paced at real time (at most: a busy
machine runs it slower),
runs a DRL program through ``rtcf_components.clients.dsr`` (CORBA, as any script), stops
the system, then reads the logs the composition writes (here into DIR/log: arm_sim_q.npz
the measured joints, arm_sim_qref.npz the reference, every millisecond of simulated time) and
measures the TCP of the measured joints (FK) against the geometry each call asked for:

* movej: every joint's progress against the leading joint's (they start and end together),
  the leading joint's peak speed against vel, the measured joints against the target;
* movel: the measured TCP's distance from the line, its cruise speed against v;
* movec: its distance from the circle through the three points;
* amovel + stop(DR_QSTOP): the distance from the stop to rest against speed x
  quick_stop_time / 2;
* a sync movel with a radius blended into the next one.

Writes DIR/dsr_movel.png, dsr_movec.png, dsr_movej.png, dsr_stop.png, the numbers in
DIR/metrics.json, and prints them.
Needs matplotlib (the demo extra). Takes about a minute of wall clock.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
NONE = -10000

# the program: (label, call) in order; rests between them separate the motions in the logs
HOME = [0.0, 0.0, 90.0, 0.0, 90.0, 0.0]
J_TARGET = [30.0, -20.0, 110.0, 15.0, 60.0, -40.0]
V_LINE = 100.0
QUICK = 0.2          # the component's quick_stop_time [s]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def program(dsr) -> dict:
    """The DRL calls; returns what the analysis needs (targets, the geometry asked for)."""
    out = {}
    rest = 0.3
    dsr.movej(dsr.posj(HOME), vel=60, acc=120)                  # at home already: no motion
    dsr.wait(rest)
    dsr.movej(dsr.posj(J_TARGET), vel=60, acc=120)              # 1: movej
    dsr.wait(rest)
    dsr.movej(dsr.posj(HOME), vel=60, acc=120)                  # 2: back
    dsr.wait(rest)
    x0 = dsr.get_current_posx()[0]
    a = dsr.posx(x0[0] - 150, x0[1] + 250, x0[2] - 150, *x0[3:])
    out["line"] = (list(x0[:3]), list(a[:3]))
    dsr.movel(a, vel=V_LINE, acc=400)                           # 3: movel
    dsr.wait(rest)
    s = dsr.get_current_posx()[0]
    via = dsr.posx(s[0] + 100, s[1] + 100, s[2], *s[3:])
    end = dsr.posx(s[0] + 200, s[1], s[2], *s[3:])
    out["circle"] = (list(s[:3]), list(via[:3]), list(end[:3]))
    dsr.movec(via, end, vel=80, acc=300)                        # 4: movec
    dsr.wait(rest)
    e = dsr.get_current_posx()[0]
    far = dsr.posx(e[0], e[1] - 500, e[2], *e[3:])
    dsr.amovel(far, vel=V_LINE, acc=400)                        # 5: amovel, stopped
    while dsr.check_motion() != dsr.DR_STATE_BUSY:
        time.sleep(0.01)
    dsr.wait(1.5)
    dsr.stop(dsr.DR_QSTOP)
    dsr.mwait()
    dsr.wait(rest)
    b = dsr.get_current_posx()[0]
    c1 = dsr.posx(b[0] - 150, b[1], b[2], *b[3:])
    c2 = dsr.posx(b[0] - 150, b[1] + 150, b[2], *b[3:])
    out["blend"] = (list(b[:3]), list(c1[:3]), list(c2[:3]))
    dsr.movel(c1, v=V_LINE, a=400, r=40)                        # 6: blended pair
    dsr.movel(c2, v=V_LINE, a=400)
    dsr.wait(rest)
    out["final_posj"] = list(dsr.get_current_posj())
    out["final_desired"] = list(dsr.get_desired_posj())
    return out


def segments(qref: np.ndarray) -> list[tuple[int, int]]:
    """(first, last) sample of each stretch where the reference moves."""
    moving = np.any(np.abs(np.diff(qref, axis=0)) > 1e-12, axis=1)
    edges = np.flatnonzero(np.diff(moving.astype(int)))
    starts = list(edges[moving[edges + 1]] + 1) if len(edges) else []
    if moving[0]:
        starts = [0] + starts
    out = []
    for s in starts:
        e = s
        while e < len(moving) and moving[e]:
            e += 1
        out.append((int(s), int(e)))
    return out


def analyse(out_dir: Path, facts: dict) -> tuple[list[str], dict]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rtcf_components.blending_planner.arm import load_arm
    q_log = np.load(out_dir / "log" / "arm_sim_q.npz")
    r_log = np.load(out_dir / "log" / "arm_sim_qref.npz")
    n = min(len(q_log["t"]), len(r_log["t"]))
    t, q, qr = r_log["t"][:n], q_log["data"][:n], r_log["data"][:n]
    dt = float(np.median(np.diff(t)))
    arm = load_arm("doosan_m1013", "arm", np.eye(4))
    p_meas, _ = arm.fk_batch(q)
    p_ref, _ = arm.fk_batch(qr)
    seg = segments(qr)
    if len(seg) != 6:
        raise SystemExit(f"dsr_figures: expected 6 motions in the log, found {len(seg)}")
    rows = []
    m = {}
    settle = int(0.25 / dt)

    # 1: movej HOME -> J_TARGET
    s, e = seg[0]
    d = np.array(J_TARGET) - np.array(HOME)
    prog = (np.degrees(qr[s - 1:e + 1]) - HOME) / d
    sync = float(np.abs(prog - prog[:, [0]]).max())
    vel = np.abs(np.diff(np.degrees(qr[s - 1:e + 1]), axis=0)) / dt
    lead = int(np.argmax(np.abs(d)))
    arrive_ref = float(np.abs(np.degrees(qr[e]) - J_TARGET).max())
    arrive_meas = float(np.abs(np.degrees(q[min(e + settle, n - 1)]) - J_TARGET).max())
    m["movej"] = {"sync": sync, "lead_peak": float(vel[:, lead].max()),
                  "arrive_ref_deg": arrive_ref, "arrive_meas_deg": arrive_meas}
    rows.append(f"movej: joints' progress differs by at most {sync:.2e} (same start, same "
                f"end); leading joint{lead + 1} peaks at {vel[:, lead].max():.3f} deg/s "
                f"(vel 60); reference on target within {arrive_ref:.2e} deg, measured "
                f"within {arrive_meas:.4f} deg 0.25 s after the end")
    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    tt = t[s - 1:e + 1] - t[s - 1]
    for j in range(6):
        ax[0].plot(tt, prog[:, j], lw=1, label=f"joint{j + 1}")
        ax[1].plot(tt[1:], vel[:, j], lw=1)
    ax[0].set(title="movej: each joint's progress (reference)", xlabel="t [s]",
              ylabel="fraction of its move")
    ax[0].legend(fontsize=7)
    ax[1].axhline(60, color="k", ls=":", lw=1)
    ax[1].set(title="joint speeds (reference); vel = 60 deg/s dotted", xlabel="t [s]",
              ylabel="[deg/s]")
    fig.tight_layout()
    fig.savefig(out_dir / "dsr_movej.png", dpi=90)
    plt.close(fig)

    # 3: movel
    s, e = seg[2]
    a0, a1 = (np.array(v) for v in facts["line"])
    u = (a1 - a0) / np.linalg.norm(a1 - a0)
    rel = p_meas[s:e + settle] - a0
    off = np.linalg.norm(rel - np.outer(rel @ u, u), axis=1)
    rel_r = p_ref[s:e] - a0
    off_r = np.linalg.norm(rel_r - np.outer(rel_r @ u, u), axis=1)
    sp = np.linalg.norm(np.diff(p_meas[s:e], axis=0), axis=1) / dt
    ramp = int(0.3 / dt)
    cruise = sp[ramp:-ramp]
    m["movel"] = {"off_line_mm": float(off.max()), "cruise_min": float(cruise.min()),
                  "cruise_max": float(cruise.max())}
    rows.append(f"movel: measured TCP within {off.max():.3f} mm of the line (reference "
                f"{off_r.max():.2e} mm); measured cruise speed {cruise.mean():.2f} mm/s, "
                f"{cruise.min():.2f}..{cruise.max():.2f} (v = {V_LINE:g}, +-"
                f"{100 * np.abs(cruise - V_LINE).max() / V_LINE:.2f} %)")
    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    tt = t[s:e + settle] - t[s]
    ax[0].plot(tt, off, "C3")
    ax[0].set(title=f"movel: measured TCP distance from the line (max {off.max():.3f} mm)",
              xlabel="t [s]", ylabel="[mm]")
    ax[1].plot(t[s + 1:e] - t[s], sp, "C3", lw=1, label="measured")
    ax[1].plot(t[s + 1:e] - t[s], np.linalg.norm(np.diff(p_ref[s:e], axis=0), axis=1) / dt,
               "k--", lw=1, label="reference")
    ax[1].set(title=f"TCP speed (v = {V_LINE:g} mm/s)", xlabel="t [s]", ylabel="[mm/s]")
    ax[1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out_dir / "dsr_movel.png", dpi=90)
    plt.close(fig)

    # 4: movec
    s, e = seg[3]
    c0, cv, c1 = (np.array(v) for v in facts["circle"])
    centre = (c0 + c1) / 2.0                 # via is on the perpendicular bisector: 100 mm
    radius = np.linalg.norm(c0 - centre)
    pm = p_meas[s:e + settle]
    dev = np.linalg.norm(pm - centre, axis=1) - radius
    plane = pm[:, 2] - c0[2]
    m["movec"] = {"radial_mm": float(np.abs(dev).max()), "plane_mm": float(np.abs(plane).max())}
    rows.append(f"movec: measured TCP within {np.abs(dev).max():.3f} mm of the circle "
                f"(radius {radius:.1f} mm), {np.abs(plane).max():.3f} mm of its plane")
    fig, ax = plt.subplots(1, 2, figsize=(11, 4.5))
    ang = np.linspace(0, 2 * np.pi, 200)
    ax[0].plot(centre[0] + radius * np.cos(ang), centre[1] + radius * np.sin(ang), "k:", lw=1)
    ax[0].plot(pm[:, 0], pm[:, 1], "C3", lw=1.5, label="measured TCP")
    ax[0].plot(*zip(c0[:2], cv[:2], c1[:2]), "ko")
    ax[0].set_aspect("equal", adjustable="datalim")
    ax[0].set(title="movec: top view, the circle dotted", xlabel="x [mm]", ylabel="y [mm]")
    ax[1].plot(t[s:e + settle] - t[s], dev, "C3", label="radial")
    ax[1].plot(t[s:e + settle] - t[s], plane, "C0", label="out of plane")
    ax[1].set(title="measured distance from the circle", xlabel="t [s]", ylabel="[mm]")
    ax[1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out_dir / "dsr_movec.png", dpi=90)
    plt.close(fig)

    # 5: amovel stopped by stop(DR_QSTOP)
    s, e = seg[4]
    sp_r = np.linalg.norm(np.diff(p_ref[s:e + 1], axis=0), axis=1) / dt
    k0 = int(np.flatnonzero(sp_r >= V_LINE * 0.999)[-1])      # the last sample at cruise
    stop_ref = float(np.linalg.norm(p_ref[e] - p_ref[s + k0 + 1]))
    stop_meas = float(np.linalg.norm(p_meas[min(e + settle, n - 1)] - p_meas[s + k0 + 1]))
    doc = V_LINE * QUICK / 2
    m["stop"] = {"ref_mm": stop_ref, "meas_mm": stop_meas, "documented_mm": doc}
    rows.append(f"stop(DR_QSTOP) at {V_LINE:g} mm/s: reference comes to rest "
                f"{stop_ref:.3f} mm after the stop (documented: v x quick_stop_time / 2 = "
                f"{doc:.1f} mm) in {(e - s - k0 - 1) * dt:.3f} s; measured TCP "
                f"{stop_meas:.3f} mm")
    fig, ax = plt.subplots(figsize=(7, 4))
    tt = t[s + 1:e + 1] - t[s]
    ax.plot(tt, sp_r, "k--", lw=1, label="reference")
    ax.plot(t[s + 1:e + settle] - t[s],
            np.linalg.norm(np.diff(p_meas[s:e + settle], axis=0), axis=1) / dt, "C3", lw=1,
            label="measured")
    ax.axvline(tt[k0], color="C0", ls=":", lw=1)
    ax.set(title=f"amovel + stop(DR_QSTOP): {stop_ref:.2f} mm to rest (documented "
                 f"{doc:.1f} mm)", xlabel="t [s]", ylabel="TCP speed [mm/s]")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out_dir / "dsr_stop.png", dpi=90)
    plt.close(fig)

    # 6: the blended pair (one stretch: no stop between)
    s, e = seg[5]
    b0, c1, c2 = (np.array(v) for v in facts["blend"])
    corner = float(np.linalg.norm(p_ref[s:e] - c1, axis=1).min())
    sp = np.linalg.norm(np.diff(p_ref[s:e], axis=0), axis=1) / dt
    mid = np.argmin(np.linalg.norm(p_ref[s:e] - c1, axis=1))
    rows.append(f"movel r=40 then movel: one motion without a stop (slowest "
                f"{sp[mid - 5:mid + 5].min():.1f} mm/s at the corner), the corner cut "
                f"{corner:.2f} mm from it; ends {np.linalg.norm(p_ref[e] - c2):.2e} mm "
                f"from the target")
    fin = np.abs(np.array(facts["final_posj"]) - facts["final_desired"]).max()
    m["blend"] = {"corner_mm": corner, "end_mm": float(np.linalg.norm(p_ref[e] - c2))}
    m["current_minus_desired_deg"] = float(fin)
    rows.append(f"get_current_posj (measured) - get_desired_posj at rest: {fin:.4f} deg")
    return rows, m


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="scripts/dsr_figures", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="dsr_figures", help="folder for the PNGs and logs")
    ap.add_argument("--keep", action="store_true", help="leave the system running at the end")
    opts = ap.parse_args(argv)
    out = Path(opts.out).resolve()
    (out / "log").mkdir(parents=True, exist_ok=True)
    port = free_port()
    # arm_sim.yaml with its loggers writing into DIR/log
    import yaml
    comp = yaml.safe_load((ROOT / "compositions" / "arm_sim.yaml").read_text())
    for c in comp["components"]:
        if c.get("name") in ("qLog", "qRefLog"):
            name = "arm_sim_q.npz" if c["name"] == "qLog" else "arm_sim_qref.npz"
            c["params"] = {**c.get("params", {}), "path": str(out / "log" / name)}
    (out / "arm_sim.yaml").write_text(yaml.safe_dump(comp, sort_keys=False))
    proc = subprocess.Popen(
        [str(ROOT / "scripts" / "run"), str(out / "arm_sim.yaml"),
         "-o", f"corba.nameservers:localhost:{port}", "-o", "exec_cxt.periodic.sched_fifo:NO",
         "-o", "rtcf.simulation.real_time_factor:1"],
        cwd=out, stdout=open(out / "system.log", "w"), stderr=subprocess.STDOUT,
        start_new_session=True)
    try:
        from rtcf_components.clients import dsr
        deadline = time.monotonic() + 120
        while True:
            try:
                dsr.connect("BlendingPlanner0", f"localhost:{port}")
                dsr.get_current_posj()
                break
            except dsr.DR_Error:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise SystemExit(f"dsr_figures: arm_sim did not come up (see "
                                     f"{out / 'system.log'})")
                time.sleep(1.0)
        facts = program(dsr)
    finally:
        if not opts.keep:
            os.killpg(proc.pid, signal.SIGINT)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    if opts.keep:
        print(f"arm_sim runs on localhost:{port} (process group {proc.pid}); the logs are "
              "written when it stops")
        return 0
    rows, metrics = analyse(out, facts)
    for row in rows:
        print(row)
    import json
    (out / "metrics.json").write_text(json.dumps(metrics, indent=1))
    print(f"wrote {out}/dsr_movej.png, dsr_movel.png, dsr_movec.png, dsr_stop.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
