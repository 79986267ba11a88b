"""The worked numbers of test_interpolator.py through the component: service calls on a stepped EC
(Harness, 200 Hz, dt = 5 ms), qRef read from the port, checked to 1e-9. Joint 0 (HeadYaw)
carries the motion; setJointAngle / playPattern / loadPattern are the paths that add no
held sample, so sample k of qRef is at tau = k * dt."""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pytest

from rtcf import TimedDoubleSeq
from rtcf.corba.idl import stub_module
from rtcf.testing import Harness

from rtcf_components.sequence_player.component import SequencePlayer

SPS = stub_module("OpenHRP").SequencePlayerService
DT = 0.005
EPS = 1e-9
N = 26


@pytest.fixture
def h():
    hh = Harness(SequencePlayer, params={"dt": DT}, rate=1 / DT)
    hh.activate()
    yield hh
    hh.close()


def joint0(h, steps: int) -> np.ndarray:
    h.step(steps)
    return np.array([s.data[0] for s in h.read_all("qRef")])


def at(x: np.ndarray, tau: float) -> float:
    return float(x[round(tau / DT) - 1])


def test_hoffarbib_and_linear_tables(h):
    s = h.comp.service
    assert s.setJointAngle("HeadYaw", 1.0, 1.0)
    x = joint0(h, 210)
    assert len(x) == 200
    for k in (1, 50, 100, 150, 200):
        t = F(k, 200)
        assert x[k - 1] == pytest.approx(float(10 * t**3 - 15 * t**4 + 6 * t**5), abs=EPS)
    assert at(x, 0.25) == pytest.approx(0.103515625, abs=EPS)
    assert at(x, 0.75) == pytest.approx(0.896484375, abs=EPS)
    assert x[-1] == 1.0
    h.write("qInit", TimedDoubleSeq(data=np.zeros(N)))
    assert s.setInterpolationMode(SPS.LINEAR)
    assert s.setJointAngle("HeadYaw", 1.0, 1.0)
    x = joint0(h, 210)
    assert len(x) == 200
    assert at(x, 0.25) == pytest.approx(0.25, abs=EPS)
    assert at(x, 0.5) == pytest.approx(0.5, abs=EPS) and x[-1] == 1.0


def test_interruptions(h):
    s = h.comp.service
    assert s.setJointAngle("HeadYaw", 1.0, 1.0)
    joint0(h, 100)                                   # tau = 0.5
    assert s.setJointAngle("HeadYaw", 0.0, 1.0)      # online: keeps x, v, a
    x = joint0(h, 210)
    assert len(x) == 200
    for tau, want in ((0.25, 0.7943115234), (0.5, 0.54296875), (0.75, 0.1231689453)):
        assert at(x, tau) == pytest.approx(want, abs=1e-10)
    assert x[-1] == 0.0 and round(x.max(), 5) == 0.79451
    assert s.setJointAngle("HeadYaw", 1.0, 1.0)      # from 0 again (qInit: zeros)
    joint0(h, 50)                                    # tau = 0.25, a = 5.625
    assert s.setJointAngle("HeadYaw", 1.0, 0.5)
    x = joint0(h, 110)
    assert len(x) == 100
    assert at(x, 0.125) == pytest.approx(0.3121871948, abs=1e-10)
    assert at(x, 0.25) == pytest.approx(0.6561279297, abs=1e-10)
    assert x[-1] == 1.0


def test_keyframes_through_play_pattern(h):
    rows = [[0.0] * N, [0.0] * N]
    rows[0][0], rows[1][0] = 1.0, 3.0
    h.comp.service.playPattern(rows, [], [], [1.0, 1.0])
    x = joint0(h, 410)
    assert len(x) == 400
    assert at(x, 0.5) == pytest.approx(0.265625, abs=EPS)
    assert at(x, 1.0) == pytest.approx(1.0, abs=EPS)
    assert at(x, 1.5) == pytest.approx(2.234375, abs=EPS) and x[-1] == 3.0
    assert (x[200] - x[198]) / (2 * DT) == pytest.approx(1.5, abs=1e-3)   # v1 = 1.5


def test_load_pattern_timing(h, tmp_path):
    q0 = np.zeros(N)
    q0[0] = 0.2
    h.write("qInit", TimedDoubleSeq(data=q0))
    rows = [(0.0, 0.0), (1.0, 1.0), (1.5, 0.5)]
    (tmp_path / "m.pos").write_text("\n".join(f"{t} {v} " + " ".join(["0"] * (N - 1))
                                              for t, v in rows))
    h.comp.service.loadPattern(str(tmp_path / "m"), 2.0)
    x = joint0(h, 710)
    assert len(x) == 700
    for tau, want in ((1.0, 0.1), (2.0, 0.0), (2.5, 0.5), (3.0, 1.0), (3.25, 0.75),
                      (3.5, 0.5)):
        assert at(x, tau) == pytest.approx(want, abs=EPS), tau
    (tmp_path / "d.pos").write_text("\n".join(f"{k * DT} {v} " + " ".join(["0"] * (N - 1))
                                              for k, v in enumerate((0.1, 0.2, 0.15))))
    h.comp.service.loadPattern(str(tmp_path / "d"), DT)
    assert list(joint0(h, 5)) == [0.1, 0.2, 0.15]
