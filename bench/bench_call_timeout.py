"""A flush connection to a reader that hangs: what the call timeout costs the writer's EC,
and how long a healthy reader's put takes (the floor a timeout must stay above).

    .venv/bin/python bench/bench_call_timeout.py [--n 20000] [--stop 2] [--timeouts 1 0.1]

A reader (a Gain at 100 Hz) runs in another process, started with ``scripts/run`` against a
private omniNames on a free port. The writer is a Component in this process with an OutPort
of 30 doubles, flush-connected to the reader through PortService.connect.

1. **healthy put**: N flush writes in a tight loop, each a put() round trip to the reader:
   p50 / p99 / p99.9 / p99.99 / max of one write().
2. **hung reader**: for each timeout (``dataport.call_timeout``, seconds) the writer runs on a
   100 Hz PeriodicEC; the reader is stopped (SIGSTOP) for ``--stop`` seconds and continued:
   the writer's largest cycle gap and its overruns. The first put blocks for the timeout,
   then the connector is skipped until the reader answers a probe.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rtcf import Component, TimedDoubleSeq                     # noqa: E402
from rtcf.corba import naming as nm                            # noqa: E402
from rtcf.corba.idl import stub_module                         # noqa: E402
from rtcf.corba.nv import to_nvlist                            # noqa: E402
from rtcf.corba.runtime import CorbaRuntime                    # noqa: E402
from rtcf.execution import PeriodicEC                          # noqa: E402

READER = """
components:
  - {type: Gain, module: examples, name: bench_reader}
execution_contexts:
  - {name: main, kind: periodic, rate: 100, members: [bench_reader]}
"""


class Writer(Component):
    """Writes 30 doubles every cycle; records when each cycle ran."""

    category = "bench"

    def on_initialize(self) -> None:
        self.out = self.add_out_port("out", TimedDoubleSeq)
        self.out.value.data = np.zeros(30)
        self.times: list[float] = []

    def on_execute(self, ec) -> None:
        """Runs in: EC thread."""
        self.times.append(time.monotonic())
        self.out.write()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--stop", type=float, default=2.0)
    ap.add_argument("--timeouts", type=float, nargs="+", default=[1.0, 0.1])
    args = ap.parse_args()
    port = nm.free_port()
    ns = nm.ensure_naming_service(port=port, timeout=15)
    folder = Path(tempfile.mkdtemp(prefix="bench-call-timeout-"))
    (folder / "r.yaml").write_text(READER)
    reader = subprocess.Popen([str(ROOT / "scripts" / "run"), str(folder / "r.yaml"), "--quiet",
                               "-o", f"corba.nameservers:localhost:{port}", "-o",
                               f"manager.modules.load_path:{ROOT / 'components'}"],
                              start_new_session=True, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    rt = CorbaRuntime(None, {"naming.enable": "NO"})
    RTC = stub_module("RTC")
    try:
        client = nm.NamingClient(rt.orb, f"127.0.0.1:{port}")
        path = f"{socket.gethostname()}.host_cxt/bench_reader.rtc"
        for _ in range(300):
            try:
                ref = client.resolve(path)._narrow(RTC.RTObject)
                ref.get_component_profile()
                break
            except Exception:
                time.sleep(0.1)
        rin = next(p for p in ref.get_ports() if p.get_port_profile().name.endswith(".in"))
        comp = Writer("bench_writer")
        comp.initialize()
        rt.register_component(comp)
        wout = rt.port_servant(comp.out).ref

        def connect(timeout: float | None = None) -> str:
            props = {"dataport.dataflow_type": "push", "dataport.interface_type": "corba_cdr",
                     "dataport.subscription_type": "flush",
                     "dataport.data_type": "IDL:RTC/TimedDoubleSeq:1.0"}
            if timeout is not None:
                props["dataport.call_timeout"] = str(timeout)
            code, cp = wout.connect(RTC.ConnectorProfile("b", "", [wout, rin],
                                                         to_nvlist(props)))
            assert code == RTC.RTC_OK, code
            return cp.connector_id

        cid = connect()
        dts = np.empty(args.n)
        for i in range(args.n):
            t0 = time.perf_counter()
            comp.out.write()
            dts[i] = time.perf_counter() - t0
        q = np.percentile(dts, [50, 99, 99.9, 99.99]) * 1e3
        print(f"healthy flush write (put round trip), {args.n} writes: p50 {q[0]:.3f} ms "
              f"p99 {q[1]:.3f} ms p99.9 {q[2]:.3f} ms p99.99 {q[3]:.3f} ms "
              f"max {dts.max() * 1e3:.3f} ms")
        wout.disconnect(cid)
        for timeout in args.timeouts:
            cid = connect(timeout)
            ec = PeriodicEC(100.0, name="bench_writer", spin=0.0)
            ec.add_component(comp)
            ec.start()
            ec.activate_component(comp)
            time.sleep(0.5)
            o0 = ec.overruns
            comp.times.clear()
            os.killpg(reader.pid, signal.SIGSTOP)
            t_stop = time.monotonic()
            time.sleep(args.stop)
            os.killpg(reader.pid, signal.SIGCONT)
            time.sleep(0.5)
            ts = np.array(comp.times)
            gap = float(np.diff(ts).max()) if len(ts) > 1 else 0.0
            print(f"call_timeout {timeout * 1e3:.0f} ms, reader stopped {args.stop:g} s: "
                  f"writer's largest cycle gap {gap * 1e3:.0f} ms, overruns "
                  f"{ec.overruns - o0} (100 Hz), cycles while stopped "
                  f"{int(np.sum((ts >= t_stop) & (ts < t_stop + args.stop)))}")
            ec.stop()
            ec.remove_component(comp)
            try:
                wout.disconnect(cid)
            except Exception:
                pass
            time.sleep(1.5)            # the liveness thread lets the reader go
    finally:
        os.killpg(reader.pid, signal.SIGTERM)
        reader.wait(15)
        ns.stop()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
