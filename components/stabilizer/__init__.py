"""Stabilizer component: ZMP / CoM feedback from the feet's force sensors and the IMU
(hrpsys-base's Stabilizer role; Kajita et al. 2010 with capture-point feedback).

Pure core module (no rtcf / omniORB import): ``core`` (StabilizerCore). The RT component
is ``stabilizer.component.Stabilizer``.
"""

from .core import StabilizerCore, StabilizerError, StabilizerParams

__all__ = ["StabilizerCore", "StabilizerError", "StabilizerParams"]
