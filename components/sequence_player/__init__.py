"""SequencePlayer component (hrpsys-base's SequencePlayer).

Pure core modules (no rtcf / omniORB import): ``interpolator`` (one signal: Hoff-Arbib and
linear, queue and online goals) and ``seqplay`` (the player: eight signals, joint groups,
loadPattern, setTargetPose).
"""

from .interpolator import HOFFARBIB, LINEAR, Interpolator

__all__ = ["HOFFARBIB", "Interpolator", "LINEAR"]
