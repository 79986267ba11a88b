"""The RTC shells of the example package (the manager looks here)."""

from .components import Gain, Recorder, SineGenerator

__all__ = ["SineGenerator", "Gain", "Recorder"]
