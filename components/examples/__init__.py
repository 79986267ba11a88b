"""Small example components that show data flowing through an execution context.

SineGenerator writes a sine per channel; Gain scales its input; Recorder keeps statistics of
what it reads. They are the default composition until the robot components take over.
"""

from .components import Gain, Recorder, SineGenerator

__all__ = ["SineGenerator", "Gain", "Recorder"]
