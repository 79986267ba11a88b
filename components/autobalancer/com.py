"""The robot's centre of mass from its joint angles: link masses on the kinematic chains.

Pure core: imports neither rtcf nor omniORB (the kinematics core does the forward
kinematics). Metres, kilograms.

The masses and link centres of mass are those the simulator uses: the MJCF model
(model/sim/nao_v5.xml, generated from the public NAO V5 URDF's inertials), read with the
standard library's XML parser. Each MJCF body hangs on one joint, and its frame is the frame
the kinematics core gives that joint (a joint-axis frame, parallel to the torso at q = 0:
the two agree to 1e-15 m, tests/components/autobalancer/test_com.py), so a body's centre of
mass is a fixed point in its joint's frame. Bodies on a joint that is not a kinematic joint
(the hands: 2 mg each) are folded into their parent body at their origin.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SIM_DIR = Path(__file__).resolve().parents[2] / "model" / "sim"


class MassModelError(ValueError):
    """The MJCF file does not give a mass model for the kinematic model."""


@dataclass(frozen=True)
class MassModel:
    """Immutable: the root's mass and CoM (root frame) and, per chain, the mass and CoM
    (joint frame) of each of its joints' links, in chain order."""

    total: float                       # [kg]
    root_mass: float
    root_com: np.ndarray               # (3,) [m], root (torso) frame
    chains: tuple                      # ((chain name, masses (n,), coms (n, 3)), ...)


def _vec(text: str | None, n: int = 3) -> np.ndarray:
    if text is None:
        return np.zeros(n)
    return np.array([float(v) for v in text.split()], dtype=float)


def load_mass_model(kin_model, path: str | Path | None = None) -> MassModel:
    """The mass model of ``kin_model`` (a kinematics Model) from an MJCF file (default: the
    simulator's model/sim/nao_v5.xml). Raises MassModelError when a chain joint has no body
    or a body is rotated against its parent (the frames would not match the kinematics')."""
    p = Path(path) if path is not None else SIM_DIR / "nao_v5.xml"
    try:
        root = ET.parse(p).getroot()
    except (OSError, ET.ParseError) as e:
        raise MassModelError(f"{p}: cannot read the MJCF file: {e}") from None
    world = root.find("worldbody")
    top = world.find("body") if world is not None else None
    if top is None:
        raise MassModelError(f"{p}: no body under <worldbody>")
    joint_of = {}                           # joint name -> (chain name, index)
    for cname, c in kin_model.chains.items():
        for k, j in enumerate(c.joints):
            joint_of[j] = (cname, k)
    per_chain = {cname: [np.zeros(c.dof), np.zeros((c.dof, 3))]
                 for cname, c in kin_model.chains.items()}
    root_acc = [0.0, np.zeros(3)]
    total = 0.0

    def visit(body, owner, offset):
        """owner: (chain, k) or None (root); offset: this body's origin in owner's frame."""
        nonlocal total
        if body.get("quat") or body.get("euler") or body.get("axisangle"):
            raise MassModelError(f"{p}: body {body.get('name')!r} is rotated against its "
                                 f"parent: its frame is not the kinematics' joint frame")
        joints = [j.get("name") for j in body.findall("joint")]
        kin = [j for j in joints if j in joint_of]
        if len(kin) > 1:
            raise MassModelError(f"{p}: body {body.get('name')!r} has several joints {kin}")
        if kin:
            owner, offset = joint_of[kin[0]], np.zeros(3)
        inertial = body.find("inertial")
        if inertial is not None:
            m = float(inertial.get("mass", "0"))
            c = offset + _vec(inertial.get("pos"))
            total += m
            if owner is None:
                root_acc[0] += m
                root_acc[1] += m * c
            else:
                masses, coms = per_chain[owner[0]]
                k = owner[1]
                new = masses[k] + m
                coms[k] = (masses[k] * coms[k] + m * c) / new if new > 0 else c
                masses[k] = new
        for child in body.findall("body"):
            visit(child, owner, offset + _vec(child.get("pos")))

    visit(top, None, np.zeros(3))
    missing = [j for j, (cn, k) in joint_of.items() if per_chain[cn][0][k] <= 0.0]
    if missing:
        raise MassModelError(f"{p}: no mass on the links of {', '.join(missing)}")
    rm = root_acc[0]
    chains = []
    for cname, (masses, coms) in per_chain.items():
        masses.flags.writeable = False
        coms.flags.writeable = False
        chains.append((cname, masses, coms))
    rc = root_acc[1] / rm if rm > 0 else np.zeros(3)
    rc.flags.writeable = False
    return MassModel(total, rm, rc, tuple(chains))


class ComCalculator:
    """CoM of the whole robot in the root (torso) frame from every joint angle (model
    order). Scratch allocated once; ``com(q)`` writes into ``out``. Runs in: owner thread."""

    def __init__(self, kin_model, mass: MassModel):
        from rtcf_components.kinematics.algorithms import chain_frames   # pure core
        self._frames = chain_frames
        self.kin = kin_model
        self.mass = mass
        # per chain: the frames' masses and their first moments m_k c_k (joint frames), and
        # the chain's last angles and first moment (head and arms rarely move while the
        # legs walk: a chain whose angles did not change is not computed again)
        self._chains = [(kin_model.chains[n], m, (m[:, None] * c)[:, :, None])
                        for n, m, c in mass.chains]
        self._last_q = [np.full(len(m), np.nan) for _, m, _ in self._chains]
        self._last_m = [np.zeros(3) for _ in self._chains]
        self.out = np.zeros(3)
        self._acc = np.zeros(3)
        self._root = self.mass.root_com * self.mass.root_mass

    def com(self, q: np.ndarray) -> np.ndarray:
        """The CoM [m] in the root frame for the angles ``q`` (every joint, model order)."""
        acc = self._acc
        np.copyto(acc, self._root)
        for i, (chain, masses, moments) in enumerate(self._chains):
            qc = q[chain.index]
            m = self._last_m[i]
            if not np.array_equal(qc, self._last_q[i]):
                F = self._frames(self.kin, chain, qc)                  # joint frames, tip
                n = len(masses)
                # sum_k m_k (R_k c_k + p_k)
                np.matmul(F[:n, :3, :3], moments).sum(axis=0, out=m[:, None])
                m += masses @ F[:n, :3, 3]
                self._last_q[i][:] = qc
            acc += m
        np.divide(acc, self.mass.total, out=self.out)
        return self.out
