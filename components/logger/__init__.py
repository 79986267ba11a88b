"""SampleLogger component: every sample of a TimedDoubleSeq stream, kept and written to a
.npz (hrpsys DataLogger's role, one stream per instance), for simulation runs and tests.

Core (no rtcf / omniORB import): ``buffer`` (SampleBuffer: the preallocated samples, their
digest and the .npz). The RT component is ``logger.component.SampleLogger``
(``module: logger`` in a composition). The package knows no other component.
"""

from .buffer import SampleBuffer

__all__ = ["SampleBuffer"]
