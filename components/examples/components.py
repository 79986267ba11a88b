"""The example components (shell only: their "cores" are one line of numpy each)."""

from __future__ import annotations

import math

import numpy as np

from rtcf import Component, Param, ReadStatus, TimedDoubleSeq
from rtcf.datatypes import stamp


class SineGenerator(Component):
    """Writes amplitude * sin(2 pi f t + phase_i) for each channel.

    | port | type | unit | meaning |
    |---|---|---|---|
    | out | TimedDoubleSeq | - | one value per channel; tm = planned cycle time |
    """

    category = "example"
    amplitude = Param(float, 1.0, doc="peak value of each channel")
    frequency = Param(float, 0.5, unit="Hz", bounds=(0.0, None), doc="sine frequency")
    channels = Param(int, 3, bounds=(1, 1024), read_only=True, doc="number of channels")

    def on_initialize(self) -> None:
        self.out = self.add_out_port("out", TimedDoubleSeq)
        self._phase = np.linspace(0.0, math.pi, self.channels, endpoint=False)
        self.out.value.data = np.zeros(self.channels)
        self._arg = np.zeros(self.channels)

    def on_activated(self, ec) -> None:
        self._t0 = ec.planned

    def on_execute(self, ec) -> None:
        """Runs in: EC thread."""
        t = ec.planned - self._t0
        np.add(self._phase, 2.0 * math.pi * self.frequency * t, out=self._arg)
        np.sin(self._arg, out=self.out.value.data)
        self.out.value.data *= self.amplitude
        stamp(self.out.value, ec.planned)
        self.out.write()


class Gain(Component):
    """Multiplies its input by ``gain``.

    | port | type | unit | meaning |
    |---|---|---|---|
    | in | TimedDoubleSeq | - | input |
    | out | TimedDoubleSeq | - | gain * input, same timestamp |
    """

    category = "example"
    gain = Param(float, 2.0, doc="factor applied to every element")

    def on_initialize(self) -> None:
        self.inp = self.add_in_port("in", TimedDoubleSeq)
        self.out = self.add_out_port("out", TimedDoubleSeq)

    def on_execute(self, ec) -> None:
        """Runs in: EC thread."""
        if self.inp.read() is ReadStatus.NEW:
            src = self.inp.value
            dst = self.out.value
            if dst.data.shape != src.data.shape:
                dst.data = np.empty_like(src.data)  # size follows the input once
            np.multiply(src.data, self.gain, out=dst.data)
            dst.tm.sec, dst.tm.nsec = src.tm.sec, src.tm.nsec
            self.out.write()


class Recorder(Component):
    """Reads its input every cycle and keeps count, last value, min and max, and counts gaps
    in the stream: a sample stamped more than 1.5 ``stream_period`` after the previous one.
    To keep every sample in a file, use SampleLogger (module: logger) instead.

    | port | type | unit | meaning |
    |---|---|---|---|
    | in | TimedDoubleSeq | - | anything |
    """

    category = "example"
    stream_period = Param(float, 0.0, unit="s", bounds=(0.0, None),
                          doc="period of the writer's stamps; 0 takes this EC's period")

    def on_initialize(self) -> None:
        self.inp = self.add_in_port("in", TimedDoubleSeq)
        self.received = 0
        self.gaps = 0
        self.missing = 0
        self._last_t: float | None = None
        self.last: np.ndarray = np.zeros(0)
        self.minimum = math.inf
        self.maximum = -math.inf

    def on_execute(self, ec) -> None:
        """Runs in: EC thread."""
        period = self.stream_period or ec.period
        while self.inp.read() is ReadStatus.NEW:
            v = self.inp.value
            d = v.data
            self.received += 1
            t = v.tm.sec + v.tm.nsec * 1e-9
            if self._last_t is not None and t - self._last_t > 1.5 * period:
                self.gaps += 1
                self.missing += int(round((t - self._last_t) / period)) - 1
            self._last_t = t
            if d.size:
                self.minimum = min(self.minimum, float(d.min()))
                self.maximum = max(self.maximum, float(d.max()))
            self.last = d

    def summary(self) -> str:
        if not self.received:
            return "no data"
        return (f"{self.received} samples, gaps {self.gaps} ({self.missing} missing), "
                f"last {np.round(self.last, 3).tolist()}")
