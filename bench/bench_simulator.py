"""Simulator cost per EC period, next to the bare MuJoCo physics of the same model.

    PYTHONPATH=.:components python bench/bench_simulator.py [--cycles 2000]

Per model and EC period (NAO V5 at 100 Hz: 10 substeps of 1 ms; M1013 at 1 kHz: 1 substep),
each row timed one period at a time with perf_counter_ns (median and p99 in us, the median
as a ratio to row (a)):

* (a) bare physics: ``mujoco.mj_step(m, d, substeps)`` on the same model, from the same
  standing state, holding the servos' targets (the floor the simulator is judged against);
* (b) the core: ``Simulation.step()`` (substeps, push bookkeeping, sensor read-out: joint
  states, IMU, foot wrenches, CoPs, FSRs, ZMP) after ``set_position_targets`` with a new
  target every period;
* (c) the Simulator component on a stepped EC (rtcf.testing.Harness): a new qRef sample
  every cycle, every output port written to its probe: the whole EC tick.

Target (issue 15): (c) at most 1.5x (a). Prints, never asserts: the host is a shared VM
(see bench/README.md).
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "components"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import mujoco  # noqa: E402

from common import machine_line, percentiles, table  # noqa: E402

from rtcf import TimedDoubleSeq  # noqa: E402
from rtcf.testing import Harness  # noqa: E402
from simulator import SimModel, Simulation  # noqa: E402
from simulator.component import Simulator  # noqa: E402


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


def wave(q0: np.ndarray, k: int, out: np.ndarray) -> np.ndarray:
    """A small head / arm motion so the command changes every period."""
    np.copyto(out, q0)
    out[0] += 0.2 * np.sin(0.01 * k)
    return out


def rows_for(model_name: str, rate: float, cycles: int) -> list[list]:
    model = SimModel.load(model_name)
    period = 1.0 / rate
    # (a) bare physics from the same standing state
    bare = Simulation(model, period)
    m, d, n = bare.mj_model, bare.mj_data, bare.substeps
    a = timed(lambda k: mujoco.mj_step(m, d, n), cycles)
    # (b) the core
    sim = Simulation(model, period)
    q0 = sim.sensors.q.copy()
    buf = np.empty_like(q0)

    def core_step(k: int) -> None:
        sim.set_position_targets(wave(q0, k, buf))        # the model's default stiffness
        sim.step()
    b = timed(core_step, cycles)
    # (c) the component on a stepped EC
    h = Harness(Simulator, params={"model": model_name}, rate=rate)
    h.activate()
    sample = TimedDoubleSeq(data=q0.copy())

    def tick(k: int) -> None:
        wave(q0, k, sample.data)
        h.write("qRef", sample)
        h.step()
    c = timed(tick, cycles)
    h.close()
    base = percentiles(a, [50])[0]
    out = []
    for label, v in (("(a) bare mj_step", a), ("(b) core Simulation.step", b),
                     ("(c) Simulator component, EC tick", c)):
        med, p99 = percentiles(v, [50, 99])
        out.append([f"{model_name} {rate:g} Hz ({n} substeps): {label}", med, p99,
                    med / base, 100.0 * med / (period * 1e6)])
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
