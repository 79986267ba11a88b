"""Simulator component: MuJoCo physics as the robot (OpenHRP's simulator role).

Pure core modules (no rtcf / omniORB import): ``core`` (SimModel, Simulation, Sensors,
SimError) and ``mjcf`` (generates model/sim/*.xml from the project's model files and URDFs).
The RT component is ``simulator.component.Simulator`` (service: ``service``).
"""

from .core import Sensors, SimError, SimModel, Simulation, check_push

__all__ = ["Sensors", "SimError", "SimModel", "Simulation", "check_push"]
