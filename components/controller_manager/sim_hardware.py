"""The controller manager's hardware on the physics simulation: an effort interface.

``hardware: simulator`` binds the ControllerManager to a ``Simulator`` component of the same
process, declared in the composition (a connection of the manager's ``hardware`` service
port to the Simulator's ``SimulatorService`` port: the Simulator provides its local
``SimulatorLocal`` interface there): each tick :meth:`SimulatorHardware.read` copies the
simulated joint position, velocity and torque into the robot state, and
:meth:`SimulatorHardware.write` hands the controllers' effort commands
(``robot.effort_command``, the ``joint/effort`` interface they claim) to the simulation as
joint torques (``Simulation.set_torques``, saturated at the model's effort limits, the
saturations counted by the core). The hardware takes effort commands only: the robot
state's position and velocity command arrays are read-only, so a controller that writes
``joint.command`` fails at its first update instead of leaving the arm without torque. A
joint that no running controller commands (NaN) gets no torque, as PR2's zeroed commands.
The torques act in the Simulator's next step: put the manager before the Simulator in the
same execution context (one tick = read, controllers, write, then one physics period).

The robot state is a :class:`ReferenceRobotState`: ``reference`` / ``reference_velocity``
carry the newest sample of the manager's ``qRef`` in-port (a streamed joint reference such
as BlendingPlanner's qRef, [rad]; velocity per joint over the time since its reference last
changed, see ``_take_reference``), for controllers that follow it (JointEffortController
``reference: true``).
"""

from __future__ import annotations

import math
import struct
from typing import Any, Iterable, Sequence

import numpy as np

from rtcf import ReadStatus
from .controller import ControllerError
from .robot import RobotState

__all__ = ["ReferenceRobotState", "SimulatorHardware", "simulation_of"]

_NEW = ReadStatus.NEW          # looked up once (an enum member through its class costs more)


class ReferenceRobotState(RobotState):
    """A RobotState with a streamed joint reference (``reference`` [rad],
    ``reference_velocity`` [rad/s], NaN until a sample came)."""

    def __init__(self, joint_names: Sequence[str], lower: Iterable[float] | None = None,
                 upper: Iterable[float] | None = None):
        super().__init__(joint_names, lower, upper)
        n = self.n_joints
        # one buffer, [reference | reference_velocity], so that the hardware stores both with
        # one write and a controller reads both with one tolist()
        self.references = np.zeros(2 * n)
        self.reference = self.references[:n]            # [rad], NaN until a sample came
        self.reference_velocity = self.references[n:]   # [rad/s]
        self.reference.fill(math.nan)


def simulation_of(comp: Any) -> Any:
    """The core ``Simulation`` of a Simulator component (its ``sim``, made at activation), or
    a Simulation itself; None while the component has none yet."""
    if hasattr(comp, "set_torques") and hasattr(comp, "sensors"):
        return comp
    return getattr(comp, "sim", None)


def _model_of(comp: Any) -> Any:
    model = getattr(comp, "sim_model", None)           # a Simulator component
    if model is None and hasattr(comp, "set_torques"):
        model = comp.model                              # a Simulation
    if model is None or not hasattr(model, "joint_names"):
        raise ControllerError(f"{getattr(comp, 'instance_name', comp)!r} is not a Simulator "
                              f"(no simulated model)")
    return model


class SimulatorHardware:
    """Effort interface on an in-process simulation (see the module doc).

    joint_names: the manager's joints (the model file's order); they must all be joints of
    the simulation (matched by name). q_ref: the manager's qRef InPort or None.
    """

    def __init__(self, joint_names: Sequence[str], q_ref: Any = None):
        self.joint_names = tuple(joint_names)
        n = len(self.joint_names)
        self.q_ref = q_ref
        self.owner: Any = None          # the Simulator component (or a Simulation)
        self.sim: Any = None            # its Simulation, looked up each tick
        self._owner_is_sim = False
        self._idx = np.arange(n, dtype=np.intp)
        self._tau = np.zeros(0)
        self._cmd = np.zeros(n)
        self._identity = False
        # the reference's last value and the time it last changed, per joint: Python lists
        # (scalar math on a handful of joints costs less than a numpy call per step)
        self._prev_ref = [0.0] * n
        self._prev_ref_t: float | None = None
        self._t_change = [0.0] * n
        self._still = False            # every reference velocity computed last was 0
        self._views: tuple = ()
        self._views_of: Any = None      # the Simulation and the robot state _views are of
        self._views_robot: Any = None
        self._both_size = 2 * n
        self._pack_both = struct.Struct(f"{2 * n}d").pack_into
        self.hold = 0.02               # [s] unchanged reference this long: velocity 0
        self.halted = False            # torque-controlled joints are never "not stiff"
        self.command_interfaces = ("effort",)   # what controllers may claim here
        self.bad_samples = 0
        self.writes = 0

    # -- binding (non-real-time) ----------------------------------------------------------
    def bind(self, simulator: Any) -> None:
        """Attach to a Simulator component (or a Simulation). ControllerError if a joint of
        the manager is not in the simulated model. The component's Simulation is looked up
        every tick (it is made when the Simulator is activated, maybe after the manager);
        while there is none the hardware is ``halted``. Runs in: any thread, before ticks."""
        model = _model_of(simulator)
        names = tuple(model.joint_names)
        missing = [j for j in self.joint_names if j not in names]
        if missing:
            raise ControllerError(f"hardware simulator: joints {missing} are not in the "
                                  f"simulated model {model.name!r} (joints: "
                                  f"{', '.join(names)})")
        self._idx = np.array([names.index(j) for j in self.joint_names], dtype=np.intp)
        self._tau = np.zeros(len(names))
        self._identity = len(names) == len(self.joint_names) and \
            bool(np.array_equal(self._idx, np.arange(len(names))))
        self.owner = simulator
        self._owner_is_sim = simulation_of(simulator) is simulator    # a Simulation itself

    # -- manager thread (robot.Hardware) ---------------------------------------------------
    def read(self, robot: RobotState, time: float) -> None:
        """Measured state, and the newest qRef sample. Runs in: EC thread."""
        owner = self.owner
        # the Simulator's Simulation (made at its activation, may come after ours)
        sim = self.sim = owner if self._owner_is_sim else getattr(owner, "sim", None)
        self.halted = sim is None
        if sim is None:
            return
        s = sim.sensors
        if self._identity:                  # the model's joints in the manager's order
            if sim is not self._views_of or robot is not self._views_robot:
                self._bind_views(sim, robot)
            # memoryview to memoryview: the same bytes as robot.position[...] = s.q, a
            # fraction of numpy's cost per call
            pos, vel, eff, q, dq, tau = self._views
            pos[:] = q
            vel[:] = dq
            eff[:] = tau
        else:
            np.take(s.q, self._idx, out=robot.position)
            np.take(s.dq, self._idx, out=robot.velocity)
            np.take(s.tau, self._idx, out=robot.effort)
        if self.q_ref is not None and self.q_ref.read_newest() is _NEW:
            self._take_reference(robot, self.q_ref.value.data, time)

    def _bind_views(self, sim: Any, robot: RobotState) -> None:
        """Memoryviews of the robot's measured arrays and of the Simulation's joint
        sensors (fixed for the life of each), for read(). Runs in: EC thread, when the
        Simulation or the robot state changed."""
        s = sim.sensors
        self._views = tuple(memoryview(a) for a in (robot.position, robot.velocity,
                                                    robot.effort, s.q, s.dq, s.tau))
        self._views_of, self._views_robot = sim, robot

    def _take_reference(self, robot: Any, q: np.ndarray, time: float) -> None:
        """The reference and its velocity, per joint over the time since that joint's
        reference last changed (a stream that repeats a value for a few samples, e.g. a
        warm-started IK path at low speed, would otherwise give velocity spikes); a joint
        whose reference has not changed for ``hold`` seconds has velocity 0."""
        ref = getattr(robot, "reference", None)
        if ref is None:
            return
        if q.shape != ref.shape:
            self.bad_samples += 1                     # counted; the old reference stays
            return
        prev, t_chg = self._prev_ref, self._t_change
        values = q.tolist()
        if self._still and values == prev and self._prev_ref_t is not None:
            # no joint changed (a NaN never compares equal) and every velocity is 0 already:
            # they stay 0 (held or not); the copy keeps the sample's bits (-0.0 == 0.0);
            # [...] =: np.copyto's copy (same shape, float64), a third of its cost
            ref[...] = q
            self._prev_ref_t = time
            return
        both = getattr(robot, "references", None)    # [reference | reference_velocity]
        if self._prev_ref_t is None:
            prev[:] = values
            t_chg[:] = [time] * len(values)
            robot.reference_velocity.fill(0.0)
            np.copyto(ref, q)
        else:
            vel = robot.reference_velocity.tolist()
            hold = self.hold
            for j, v in enumerate(values):
                if v != prev[j]:                       # changed (NaN: always)
                    dt = time - t_chg[j]
                    if dt > 0.0:
                        vel[j] = (v - prev[j]) / dt
                    t_chg[j] = time
                    prev[j] = v
                w = vel[j]
                if time - t_chg[j] > hold or w - w != 0.0:   # held, or NaN / +-inf: 0
                    vel[j] = 0.0
            self._still = not any(vel)
            if both is not None and both.size == 2 * len(values) == self._both_size:
                # one store, the doubles as they are: the same bits as copyto (a list
                # stored with [...] = is first made into an array, several times dearer)
                self._pack_both(both, 0, *values, *vel)
            elif both is not None and both.size == 2 * len(values):
                both[...] = values + vel
            else:
                robot.reference_velocity[:] = vel
                np.copyto(ref, q)
        self._prev_ref_t = time

    def write(self, robot: RobotState, time: float) -> None:
        """The effort commands as joint torques (NaN: 0). Runs in: EC thread."""
        if self.sim is None:
            return
        cmd = robot.effort_command
        total = sum(cmd.tolist())
        if total - total != 0.0:            # a NaN or inf shows in the sum (else: passed as is,
            cmd = self._cmd                 # the simulation copies it)
            np.copyto(cmd, robot.effort_command)   # NaN: 0 (no controller); +-inf: the
            np.nan_to_num(cmd, copy=False, nan=0.0)    # largest float
        if self._identity:
            self.sim.set_torques(cmd)
        else:
            self._tau[self._idx] = cmd
            self.sim.set_torques(self._tau)
        self.writes += 1
