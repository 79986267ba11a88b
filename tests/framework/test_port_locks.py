"""Same-EC connectors: when the writer's and the reader's components are members of one
execution context and of no other, their flush/overwrite buffer puts and takes without the
lock (one thread at a time touches it); any other case keeps the lock. Decided at connect
and again at every membership change, both ways; the lock-free paths give the same results
as the locked ones."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from rtcf.component import Component
from rtcf.datatypes import TimedDoubleSeq
from rtcf.execution import PeriodicEC, SteppedEC
from rtcf.ports import ConnectorProps, InPort, OutPort, ReadStatus, RingBuffer, connect


class Writer(Component):
    def on_initialize(self):
        self.out = self.add_out_port("out", TimedDoubleSeq)
        self.out.value.data = np.zeros(3)
        self.k = 0

    def on_execute(self, ec):
        self.k += 1
        self.out.value.data[...] = self.k
        self.out.write()


class Reader(Component):
    def on_initialize(self):
        self.inp = self.add_in_port("in", TimedDoubleSeq)
        self.got: list[float] = []

    def on_execute(self, ec):
        if self.inp.read_newest() is ReadStatus.NEW:
            self.got.append(float(self.inp.value.data[0]))


def _pair():
    w, r = Writer("w"), Reader("r")
    w.initialize()
    r.initialize()
    return w, r


def _free(c) -> bool:
    return c.buffer.unlocked


def test_connect_decides_and_membership_changes_switch_both_ways():
    w, r = _pair()
    a, b = SteppedEC(100.0, name="a"), SteppedEC(100.0, name="b")
    c = connect(w.out, r.inp, {"subscription_type": "flush"})
    assert not _free(c)                       # members of no EC yet: locked
    a.add_component(w)
    assert not _free(c)                       # the reader in none
    a.add_component(r)
    assert _free(c)                           # both in a, nothing else
    assert "write" in w.out.__dict__ and "read_newest" in r.inp.__dict__
    b.add_component(r)
    assert not _free(c)                       # the reader in a second EC: the lock
    b.remove_component(r)
    assert _free(c)
    a.remove_component(r)
    b.add_component(r)
    assert not _free(c)                       # writer in a, reader in b
    b.remove_component(r)
    a.add_component(r)
    assert _free(c)
    # connected while both are members of one EC: lock-free from the start
    w2, r2 = _pair()
    a.add_component(w2)
    a.add_component(r2)
    c2 = connect(w2.out, r2.inp, {})
    assert _free(c2)


@pytest.mark.parametrize("props", [{"subscription_type": "new"},
                                   {"subscription_type": "periodic"},
                                   {"buffer.write.full_policy": "do_nothing"},
                                   {"buffer.write.full_policy": "block"},
                                   {"buffer.read.empty_policy": "block"}])
def test_other_connectors_keep_the_lock(props):
    w, r = _pair()
    ec = SteppedEC(100.0, name="one")
    ec.add_component(w)
    ec.add_component(r)
    c = connect(w.out, r.inp, props)
    try:
        assert not _free(c)
    finally:
        c.close()


def test_owner_less_ports_keep_the_lock():
    out, inp = OutPort("o", TimedDoubleSeq), InPort("i", TimedDoubleSeq)
    assert not _free(connect(out, inp, {}))


def test_same_results_with_and_without_the_lock():
    runs = []
    for alone in (True, False):
        w, r = _pair()
        a, idle = SteppedEC(100.0, name="a"), SteppedEC(100.0, name="idle")
        a.add_component(w)
        a.add_component(r)
        if not alone:
            idle.add_component(r)             # a member of a second EC (never run): locked
        c = connect(w.out, r.inp, {"buffer.length": 2})
        assert _free(c) is alone
        a.start()
        a.activate_component(w)
        a.activate_component(r)
        for k in range(20):
            a.step(1 + k % 3)
            c.buffer.put(w.out.value)         # a second sample now and then: overwrites
        runs.append((r.got, c.buffer.overwritten, c.buffer.count, w.out.writes))
        a.stop()
    assert runs[0][0]
    assert runs[0] == runs[1]


@pytest.mark.parametrize("length", [1, 3])
def test_lock_free_put_and_take_match_the_locked_ones(length):
    props = ConnectorProps({"buffer.length": length})
    free, locked = RingBuffer(TimedDoubleSeq, props), RingBuffer(TimedDoubleSeq, props)
    assert free.set_unlocked(True) and not free.set_unlocked(True)
    spare_f, spare_l = TimedDoubleSeq(), TimedDoubleSeq()
    for k in range(60):
        if k % 5 < 3:
            s = TimedDoubleSeq(data=np.full(2, float(k)))
            assert free.put(s) is locked.put(s)
        else:
            got_f, got_l = free.take(spare_f), locked.take(spare_l)
            assert (got_f is None) == (got_l is None)
            if got_f is not None:
                assert got_f.data.tolist() == got_l.data.tolist()
                spare_f, spare_l = got_f, got_l
        assert (free._head, free.count, free.overwritten) == (
            locked._head, locked.count, locked.overwritten)
    assert free.set_unlocked(False) and not free.unlocked


def test_switch_while_cycles_run():
    """A running EC writes and reads every cycle while another thread makes the reader
    join and leave a second EC: every sample read is one written, in order."""
    w, r = _pair()
    a = PeriodicEC(1000.0, name="lk_a")
    b = SteppedEC(100.0, name="lk_b")
    a.add_component(w)
    a.add_component(r)
    c = connect(w.out, r.inp, {"buffer.length": 2})
    a.start()
    try:
        a.activate_component(w)
        a.activate_component(r)
        end = time.monotonic() + 0.5
        switches = 0
        while time.monotonic() < end or switches < 20:
            b.add_component(r)
            assert not _free(c)
            b.remove_component(r)
            assert _free(c)
            switches += 1
        a.deactivate_component(r)
        a.deactivate_component(w)
    finally:
        a.stop()
    got = r.got
    assert got and got == sorted(set(got))
    assert got[-1] <= w.k
    assert 0 <= c.buffer.count <= 2
    assert not [t for t in threading.enumerate() if t.name == "rtcf-ec-lk_a" and t.is_alive()]
