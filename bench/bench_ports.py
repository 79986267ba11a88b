"""In-process data port cost, side by side with its floors, in one run.

    python bench/bench_ports.py [--batches 200] [--per-batch 2000] [--seconds 1]
                                [--profile]

1. OutPort.write + InPort.read of a TimedDoubleSeq of 30 doubles over a ``flush`` connector
   (the writer's thread delivers into the reader's ring buffer), next to a bare deque
   append + popleft, a function call + deque append/popleft (the in-process floor of docs/architecture.md)
   and a numpy copy of 30 doubles (the copy a port must make). Time per operation: median
   and p90 over batches (timeit-style). Also write alone and read alone.
2. ``new`` subscription (a publisher thread per connector): writes/s from a tight loop and
   samples delivered/s, for push_policy new and all.

--profile adds a cProfile of write+read and a manual breakdown of the flush path.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import threading
import time
from collections import deque
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import US, machine_line, table, time_batches  # noqa: E402

from rtcf import InPort, OutPort, ReadStatus, TimedDoubleSeq, connect, disconnect  # noqa: E402

N_DOUBLES = 30
TARGET_US = 3.0
OPENRTM_DIRECT_US = 10.9   # OpenRTM-aist-Python direct port write+read, docs/architecture.md


def make_pair(props: dict | None = None) -> tuple[OutPort, InPort, object]:
    out = OutPort("out", TimedDoubleSeq)
    inp = InPort("in", TimedDoubleSeq)
    out.value.data = np.arange(N_DOUBLES, dtype=float)
    c = connect(out, inp, props or {"subscription_type": "flush"})
    return out, inp, c


# -- 1. flush write -> read and floors --------------------------------------------------------

def cases() -> list[tuple[str, object]]:
    out, inp, _ = make_pair()
    write, read = out.write, inp.read
    # sanity: the data arrives
    out.value.data[0] = 42.0
    write()
    assert read() is ReadStatus.NEW and inp.value.data[0] == 42.0
    out.value.data[0] = 0.0

    def port_write_read(k: int) -> None:
        for _ in range(k):
            write()
            read()

    out_w, inp_w, c_w = make_pair({"subscription_type": "flush", "buffer.length": 8})
    ww = out_w.write

    def port_write_only(k: int) -> None:    # buffer full -> overwrite policy path
        for _ in range(k):
            ww()

    out_r, inp_r, _ = make_pair()
    r_only = inp_r.read

    def port_read_empty(k: int) -> None:    # nothing new: readback path
        for _ in range(k):
            r_only()

    d: deque = deque()
    append, popleft = d.append, d.popleft
    obj = object()

    def bare_deque(k: int) -> None:
        for _ in range(k):
            append(obj)
            popleft()

    def put(x: object) -> None:
        append(x)

    def get() -> object:
        return popleft()

    def call_deque(k: int) -> None:
        for _ in range(k):
            put(obj)
            get()

    src = np.arange(N_DOUBLES, dtype=float)
    dst = np.zeros(N_DOUBLES)
    copyto = np.copyto

    def np_copy(k: int) -> None:
        for _ in range(k):
            copyto(dst, src)

    lock = threading.Lock()

    def deque_locked_copy(k: int) -> None:   # a plausible lower bound for a port
        for _ in range(k):
            with lock:
                copyto(dst, src)
                append(dst)
            with lock:
                popleft()

    return [
        ("OutPort.write + InPort.read, flush, 30 doubles", port_write_read),
        ("  OutPort.write alone (buffer full, overwrite)", port_write_only),
        ("  InPort.read alone (nothing new, readback)", port_read_empty),
        ("bare deque append + popleft", bare_deque),
        ("function call + deque append/popleft", call_deque),
        ("numpy copyto, 30 doubles", np_copy),
        ("lock + copyto + append, lock + popleft", deque_locked_copy),
    ]


def bench_flush(batches: int, per_batch: int) -> None:
    rows = []
    base = None
    floor = None
    for name, fn in cases():
        t = time_batches(fn, per_batch, batches)
        med, p90 = float(np.median(t)) * US, float(np.percentile(t, 90)) * US
        if base is None:
            base = med
        if name.startswith("bare deque"):
            floor = med
        rows.append([name, med, p90, med / base])
    for r in rows:
        r.append(r[1] / floor if floor else None)
    print(f"# per operation, median and p90 of {batches} batches of {per_batch:,}")
    print(table(["", "median [us]", "p90 [us]", "/ port", "/ bare deque"], rows, digits=3))
    print(f"  port write+read: {base:.2f} us; target < {TARGET_US} us "
          f"({'met' if base < TARGET_US else 'NOT met'}); OpenRTM-aist-Python direct port "
          f"{OPENRTM_DIRECT_US} us (docs/architecture.md) -> {OPENRTM_DIRECT_US / base:.1f}x faster")


# -- 2. `new` subscription throughput ----------------------------------------------------------

def bench_new(seconds: float) -> None:
    rows = []
    for policy in ("new", "all"):
        out, inp, c = make_pair({"subscription_type": "new", "publisher.push_policy": policy,
                                 "buffer.length": 8})
        pub = c.publisher
        write = out.write
        n = 0
        t0 = time.perf_counter()
        end = t0 + seconds
        perf = time.perf_counter
        while True:
            for _ in range(200):
                write()
            n += 200
            if perf() >= end:
                break
        t_write = perf() - t0
        sent_at_end = pub.sent
        # let the publisher drain what is queued, then count
        deadline = perf() + 2.0
        last = -1
        while perf() < deadline and pub.sent != last:
            last = pub.sent
            time.sleep(0.05)
        received = c.buffer.overwritten + len(c.buffer)
        rows.append([f"subscription new, push_policy {policy}", n, n / t_write,
                     sent_at_end, sent_at_end / t_write, pub.sent, received,
                     t_write / n * US])
        disconnect(c.id, out)
    print(f"# writes from one thread in a tight loop for {seconds:g} s; a publisher thread "
          "delivers (buffer length 8, overwrite, nobody reads)")
    print(table(["", "writes", "writes/s", "delivered", "delivered/s",
                 "delivered total", "in buffer+overwritten", "us/write"], rows))
    print("  a tight writer holds the GIL; the publisher thread runs at GIL hand-offs "
          "(sys.getswitchinterval() = %g ms), so push_policy new delivers about one sample "
          "per hand-off" % (sys.getswitchinterval() * 1e3))


def bench_new_paced(seconds: float, rate: float = 1000.0) -> None:
    """A writer at ``rate`` Hz on absolute deadlines (sleeping in between, as an EC does):
    fraction delivered and write -> delivery latency."""
    out, inp, c = make_pair({"subscription_type": "new", "publisher.push_policy": "new",
                             "buffer.length": 8})
    n = int(seconds * rate)
    t_write = np.zeros(n)
    t_recv = np.full(n, np.nan)
    perf = time.perf_counter

    def on_received(port, cid, sample) -> None:   # runs in the publisher thread
        t_recv[int(sample.data[0])] = perf()
    from rtcf import PortEvent
    inp.add_listener(PortEvent.ON_RECEIVED, on_received)
    period = 1.0 / rate
    data = out.value.data
    deadline = perf()
    for i in range(n):
        deadline += period
        left = deadline - perf()
        if left > 0:
            time.sleep(left)
        data[0] = i
        t_write[i] = perf()
        out.write()
    time.sleep(0.1)
    got = ~np.isnan(t_recv)
    lat = (t_recv[got] - t_write[got]) * US
    p = np.percentile(lat, (50, 99, 99.9)) if len(lat) else [np.nan] * 3
    print(f"# subscription new, push_policy new, writer paced at {rate:g} Hz for "
          f"{seconds:g} s (sleeps between writes; ON_RECEIVED listener timestamps)")
    print(table(["", "writes", "delivered [%]", "latency p50 [us]", "p99 [us]", "p99.9 [us]",
                 "max [us]"],
                [["write -> in the reader's buffer", n, 100.0 * got.sum() / n, p[0], p[1],
                  p[2], lat.max() if len(lat) else None]]))
    disconnect(c.id, out)


# -- profile ------------------------------------------------------------------------------

def profile(per: int = 200000) -> None:
    out, inp, c = make_pair()
    write, read = out.write, inp.read

    def loop() -> None:
        for _ in range(per):
            write()
            read()
    pr = cProfile.Profile()
    pr.enable()
    loop()
    pr.disable()
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(12)
    print("# cProfile of write+read (tottime; cProfile inflates call-heavy code)")
    print("\n".join(s.getvalue().splitlines()[:30]))

    # manual breakdown: time each layer of the flush path alone
    buf = c.buffer
    pub = c.publisher
    sample = out.value
    deliver = pub.deliver
    slot = TimedDoubleSeq()
    slot.data = np.zeros(N_DOUBLES)
    spare = TimedDoubleSeq()
    spare.data = np.zeros(N_DOUBLES)
    cond = buf._cond

    def f_assign(k):
        a = slot.assign
        for _ in range(k):
            a(sample)

    def f_cond(k):
        for _ in range(k):
            with cond:
                cond.notify_all()

    def f_put_take(k):
        put, take = buf.put, buf.take
        box = [spare]
        for _ in range(k):
            put(sample)
            box[0] = take(box[0])

    def f_deliver_take(k):
        take = buf.take
        box = [spare]
        for _ in range(k):
            deliver(sample)
            box[0] = take(box[0])

    def f_pub_take(k):
        pw, take = pub.write, buf.take
        box = [spare]
        for _ in range(k):
            pw(sample)
            box[0] = take(box[0])

    def f_write_read(k):
        for _ in range(k):
            write()
            read()

    rows = []
    for name, fn in (("DataType.assign (30 doubles, generated copyto)", f_assign),
                     ("Condition enter + notify_all + exit", f_cond),
                     ("RingBuffer.put + take", f_put_take),
                     ("deliver closure + take", f_deliver_take),
                     ("Publisher.write + take", f_pub_take),
                     ("OutPort.write + InPort.read", f_write_read)):
        t = time_batches(fn, 2000, 100)
        rows.append([name, float(np.median(t)) * US])
    print()
    print("# manual breakdown of the flush path (each layer includes the layers it calls; "
          "medians)")
    print(table(["layer", "median [us]"], rows, digits=3))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batches", type=int, default=200)
    ap.add_argument("--per-batch", type=int, default=2000)
    ap.add_argument("--seconds", type=float, default=1.0, help="per `new` row [s]")
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args(argv)
    print(machine_line())
    bench_flush(args.batches, args.per_batch)
    print()
    bench_new(args.seconds)
    print()
    bench_new_paced(max(args.seconds, 1.0))
    if args.profile:
        print()
        profile()


if __name__ == "__main__":
    main()
