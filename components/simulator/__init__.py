"""Simulator component: MuJoCo physics as the robot (OpenHRP's simulator role).

Pure core modules (no rtcf / omniORB import): ``core`` (SimModel, Simulation, Sensors,
SimError, SimDiverged) and ``mjcf`` (generates model/sim/*.xml from the project's model
files and URDFs). The RT component is ``simulator.component.Simulator`` (service:
``service``). The package knows no other component: the DCM's body on this physics lives
in the DCM package (``dcm.mujoco_body``), the scenarios, figures and the sample logger of
the simulation runs in ``rtcf_components.scenarios`` and ``rtcf_components.logger``.
"""

from .core import Sensors, SimDiverged, SimError, SimModel, Simulation, check_push

__all__ = ["Sensors", "SimDiverged", "SimError", "SimModel", "Simulation", "check_push"]
