"""DcmCore.command_now (the qRef path) is the same as a Merge of [v, now] before step(now)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from rtcf_components.dcm.devices import DeviceTable
from rtcf_components.dcm.timeline import DcmCore

MODEL = {"name": "tiny", "joints": [
    {"name": "A", "chain": "Head", "limits": [-3, 3]},
    {"name": "B", "chain": "Head", "limits": [-3, 3]},
    {"name": "C", "chain": "Head", "limits": [-3, 3]},
]}


def _pair():
    d = DeviceTable.from_model(MODEL)
    return DcmCore(d), DcmCore(d), d


@pytest.mark.parametrize("seed", range(20))
def test_command_now_equals_merge_then_step(seed):
    rnd = random.Random(seed)
    ref, fast, d = _pair()
    keys = [d.actuator_keys[i] for i in d.position_actuators]
    rows = np.asarray(d.position_actuators)
    now = 0
    for core in (ref, fast):
        core.step(now)
    for cycle in range(60):
        now += 10
        # the same random timed commands into both cores
        if rnd.random() < 0.3:
            k = rnd.choice(keys)
            cmds = [[rnd.uniform(-1, 1), now + rnd.choice([-20, 0, 10, 35, 200])]
                    for _ in range(rnd.randint(1, 3))]
            kind = rnd.choice(["Merge", "ClearAll", "ClearAfter", "ClearBefore"])
            for core in (ref, fast):
                core.set([k, kind, [list(c) for c in cmds]])
        q = np.array([rnd.uniform(-1, 1) if rnd.random() < 0.7 else math.nan
                      for _ in keys])
        if rnd.random() < 0.5:
            for k, v in zip(keys, q):
                if not math.isnan(v):
                    ref.set([k, "Merge", [[float(v), now]]])
            ref.step(now)
            fast.step(now)
            fast.command_now(rows, q)
        else:
            ref.step(now)
            fast.step(now)
        np.testing.assert_allclose(fast.values, ref.values, rtol=0, atol=1e-12,
                                   err_msg=f"cycle {cycle}")
