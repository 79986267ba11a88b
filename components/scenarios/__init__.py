"""The shipped simulation systems as test harnesses and tools use them (not a component).

``runs`` drives compositions/nao_sim.yaml and arm_sim.yaml in process in simulation time
(:class:`rtcf.testing.SimSystem`) as a user would and records every cycle (``run_nao``,
``run_arm``); ``metrics`` (pure numpy) computes their figures: tracking errors, support
polygon and ZMP margin, TCP speed. Used by tests/integration/test_sim_acceptance.py,
scripts/sim_demo and bench/bench_sim_system.py. ``walking`` drives compositions/nao_walk.yaml
(the AutoBalancer, Stabilizer and NAOqi components) for scripts/walk_demo,
bench/bench_walk.py and the walking tests (``WalkRig``). It looks at the components of a built
system (their attributes), so it sits above the component packages: none of them imports it.
"""

from .metrics import speed_constancy, speed_profile, tracking
from .runs import SQUARE, WAVE, ArmRecord, NaoRecord, run_arm, run_nao

__all__ = ["ArmRecord", "NaoRecord", "SQUARE", "WAVE", "run_arm", "run_nao",
           "speed_constancy", "speed_profile", "tracking"]
