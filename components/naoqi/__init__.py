"""NAOqi component: NAOqi's locomotion (ALMotion's move calls), ALRobotPosture and ALMemory
over the walking NAO of the process (SequencePlayer, AutoBalancer, Stabilizer, DCM).

Pure core modules (no rtcf / omniORB import): ``postures`` (NAOqi's predefined postures of
NAO), ``walkconfig`` (ALMotion's move config for NAO), ``memory`` (ALMemory's inserted
data), ``tasks`` (the long requests, stepped in the EC thread). The RT component is
``naoqi.component.NAOqi``; the clients' proxies are in ``naoqi.proxy`` (ALProxy).
"""

from .postures import POSTURES, PostureError
from .walkconfig import MoveConfigError

__all__ = ["MoveConfigError", "POSTURES", "PostureError"]
