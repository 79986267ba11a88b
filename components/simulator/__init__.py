"""Simulator component: MuJoCo physics as the robot (OpenHRP's simulator role).

Pure core (no rtcf / omniORB import): ``core`` (SimModel, Simulation, Sensors, SimError)
and ``mjcf`` (generates model/sim/*.xml from the project's model files and URDFs).
"""

from .core import Sensors, SimError, SimModel, Simulation

__all__ = ["Sensors", "SimError", "SimModel", "Simulation"]
