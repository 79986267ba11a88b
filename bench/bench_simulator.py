"""Simulator cost per EC period, next to the bare MuJoCo physics of the same model.

    PYTHONPATH=.:components python bench/bench_simulator.py [--cycles 2000]

Per model and EC period (NAO V5 at 100 Hz: 10 substeps of 1 ms; M1013 at 1 kHz: 1 substep),
each row timed one period at a time with perf_counter_ns (median and p99 in us, the median
as a ratio to row (a)):

* (a) bare physics: ``mujoco.mj_step(m, d, substeps)`` on the same model, from the same
  standing state, holding the servos' targets (the floor the simulator is judged against);
* (b) the core: ``Simulation.step()`` (substeps, push bookkeeping, sensor read-out: joint
  states, IMU, foot wrenches, CoPs, FSRs, ZMP) after ``set_position_targets`` with a new
  target every period (the targets are computed before timing);
* (c) the Simulator component on a stepped EC (rtcf.testing.Harness): a new qRef sample
  written every cycle, every output port connected to a probe: the whole EC tick;
* (d) the same with only ``q`` connected (as in compositions/arm_sim.yaml, where the other
  sensor ports have no reader);
* (e) - (g) the floor under (c) that is not the Simulator's code: the EC tick of a component
  whose on_execute does nothing, on the same kind of stepped EC; the bench's qRef write
  (feeder -> in-port buffer) and its read_newest; one out-port write to one reader ((c)
  writes 3 such ports on the M1013, 10 on the NAO). The floor of (c) is (a) + (e) + (f) +
  that many (g); (c) minus the floor is what the Simulator's own code costs.

Target: (c) at most 1.5x (a). Prints, never asserts: the host is a shared VM
(see bench/README.md).
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import mujoco  # noqa: E402

from common import machine_line, percentiles, table  # noqa: E402

from rtcf import Component, InPort, OutPort, TimedDoubleSeq, connect  # noqa: E402
from rtcf.testing import Harness  # noqa: E402
from rtcf_components.simulator import SimModel, Simulation  # noqa: E402
from rtcf_components.simulator.component import Simulator  # noqa: E402


def timed(fn, cycles: int) -> np.ndarray:
    """ns per call of fn(k), k = 0..cycles-1, GC off while timing."""
    out = np.empty(cycles)
    perf = time.perf_counter_ns
    gc.disable()
    try:
        for k in range(cycles):
            t0 = perf()
            fn(k)
            out[k] = perf() - t0
    finally:
        gc.enable()
    return out / 1e3


def targets(q0: np.ndarray, cycles: int) -> np.ndarray:
    """One servo target per period, computed before timing: a small motion of the first
    joint (head yaw / joint1) so that the command changes every period."""
    out = np.tile(q0, (cycles, 1))
    out[:, 0] += 0.2 * np.sin(0.01 * np.arange(cycles))
    return out


class Empty(Component):
    """The floor of an EC tick: a component whose on_execute does nothing."""

    type_name = "BenchEmpty"

    def on_execute(self, ec_id: Any) -> None:
        pass


def component_rows(model_name: str, rate: float, cycles: int, q_ref: np.ndarray,
                   only_q: bool) -> tuple[np.ndarray, int]:
    """(c) / (d): the Simulator on a stepped EC, a new qRef sample written every cycle; the
    times and the number of out ports."""
    h = Harness(Simulator, params={"model": model_name}, rate=rate)
    if only_q:                     # as in arm_sim: only q has readers
        for name, port in h.comp.ports.items():
            if name != "q" and not isinstance(port, InPort):
                port.disconnect_all()
    h.activate()
    sample = TimedDoubleSeq(data=q_ref[0].copy())

    def tick(k: int) -> None:
        sample.data = q_ref[k]
        h.write("qRef", sample)
        h.step()
    out = timed(tick, cycles)
    h.close()
    return out, len(h.probes)


def rows_for(model_name: str, rate: float, cycles: int) -> list[list]:
    model = SimModel.load(model_name)
    period = 1.0 / rate
    # (a) bare physics from the same standing state
    bare = Simulation(model, period)
    m, d, n = bare.mj_model, bare.mj_data, bare.substeps
    a = timed(lambda k: mujoco.mj_step(m, d, n), cycles)
    # (b) the core
    sim = Simulation(model, period)
    q_ref = targets(sim.sensors.q.copy(), cycles)

    def core_step(k: int) -> None:
        sim.set_position_targets(q_ref[k])        # the model's default stiffness
        sim.step()
    b = timed(core_step, cycles)
    c, n_out = component_rows(model_name, rate, cycles, q_ref, only_q=False)
    dd, _ = component_rows(model_name, rate, cycles, q_ref, only_q=True)
    # the floor under (c) that is not the Simulator's: the EC tick of a component that
    # does nothing, the qRef write of the bench (feeder -> in-port buffer), one out-port
    # write to one reader
    h = Harness(Empty, rate=rate)
    h.activate()
    e = timed(lambda k: h.step(), cycles)
    h.close()
    feeder, reader = OutPort("f", TimedDoubleSeq), InPort("qRef", TimedDoubleSeq)
    connect(feeder, reader, {"subscription_type": "flush"})
    sample = TimedDoubleSeq(data=q_ref[0].copy())

    def write_read(k: int) -> None:
        sample.data = q_ref[k]
        feeder.write(sample)
        reader.read_newest()
    f = timed(write_read, cycles)
    out_port, probe = OutPort("q", TimedDoubleSeq), InPort("p", TimedDoubleSeq)
    connect(out_port, probe, {"subscription_type": "flush", "buffer.length": 1000})
    out_port.value.data = q_ref[0].copy()
    g = timed(lambda k: out_port.write(), cycles)   # as (c): its probes are not read
    base = percentiles(a, [50])[0]
    out = []
    for label, v in (("(a) bare mj_step", a), ("(b) core Simulation.step", b),
                     ("(c) Simulator component, EC tick", c),
                     ("(d) the same, only q connected (as arm_sim)", dd),
                     ("(e) floor: empty component, EC tick", e),
                     ("(f) floor: qRef write + read_newest", f),
                     ("(g) floor: one out-port write", g)):
        med, p99 = percentiles(v, [50, 99])
        out.append([f"{model_name} {rate:g} Hz ({n} substeps): {label}", med, p99,
                    med / base, 100.0 * med / (period * 1e6)])
    meds = {row[0].split(": ", 1)[1][:3]: row[1] for row in out}
    floor = meds["(a)"] + meds["(e)"] + meds["(f)"] + n_out * meds["(g)"]
    out.append([f"{model_name} {rate:g} Hz: floor of (c) = (a) + (e) + (f) + {n_out} x (g)",
                floor, None, floor / base, 100.0 * floor / (period * 1e6)])
    own = meds["(c)"] - floor
    out.append([f"{model_name} {rate:g} Hz: the Simulator's own code, (c) - floor", own, None,
                own / base, 100.0 * own / (period * 1e6)])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cycles", type=int, default=2000, help="periods timed per row")
    args = ap.parse_args(argv)
    print(machine_line())
    print(f"# mujoco {mujoco.__version__}, {args.cycles} periods per row")
    rows = rows_for("nao_v5", 100.0, args.cycles) + rows_for("m1013", 1000.0, args.cycles)
    print(table(["row", "p50 [us]", "p99 [us]", "x (a)", "% of period"], rows, digits=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
