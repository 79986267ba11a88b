"""The seqlock hand-over of hardware.py and the in-process component lookup it relies on."""

from __future__ import annotations

import numpy as np

from rtcf import Component
from rtcf.component import find_component

from rtcf_components.controller_manager.hardware import SeqBuffer


def test_seqbuffer_hands_over_the_newest_rows_once():
    buf = SeqBuffer(2, 3)
    out = np.zeros((2, 3))
    assert buf.read(out, -1) == 0                  # the initial (zero) content, seq 0
    buf.write(np.array([1.0, 2, 3]), np.array([4.0, 5, 6]))
    seq = buf.read(out, 0)
    assert seq == 2 and out.tolist() == [[1, 2, 3], [4, 5, 6]]
    out[:] = -1
    assert buf.read(out, seq) == seq and out[0, 0] == -1     # nothing new: untouched


def test_seqbuffer_keeps_the_old_values_when_the_writer_is_mid_copy():
    buf = SeqBuffer(1, 2)
    out = np.full((1, 2), 7.0)
    buf.seq = 5                                    # odd: a write in progress
    assert buf.read(out, 4) == 4 and out.tolist() == [[7.0, 7.0]]


def test_find_component_sees_live_components_only():
    class Probe(Component):
        pass
    c = Probe("probe_lookup")
    assert find_component("probe_lookup") is None  # not initialised yet
    c.initialize()
    assert find_component("probe_lookup") is c
    c.finalize()
    assert find_component("probe_lookup") is None
