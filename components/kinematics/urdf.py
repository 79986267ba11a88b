"""A URDF file as a Model, through urdf_parser_py (PyPI: urdfdom-py, the ROS parser).

Pure module: imports neither rtcf nor omniORB. Revolute and continuous joints become chain
joints; fixed joints fold into the next constant transform; other joint types (prismatic,
floating, planar) are refused by name.
"""

from __future__ import annotations

import contextlib
import math
from os import PathLike
from pathlib import Path
from typing import Mapping

import numpy as np

from .model import Chain, Frame, Model, ModelError, make_model, rpy, trans

_MOVING = ("revolute", "continuous")


@contextlib.contextmanager
def _quiet_parser():
    """urdf_parser_py prints every tag it does not know (gazebo, transmission) to stderr."""
    from urdf_parser_py.xml_reflection import core
    old = core.on_error
    core.on_error = lambda message: None
    try:
        yield
    finally:
        core.on_error = old


def model_from_urdf(path: str | PathLike,
                    chains: Mapping[str, tuple[str, str]] | None = None) -> Model:
    """``chains`` maps a chain name to (root link, tip link); by default there is one chain
    from the URDF's root to each leaf link that has a moving joint on its way, named after the
    leaf. Every chain must start at the same root link (the model's root frame)."""
    try:
        from urdf_parser_py.urdf import URDF
    except ImportError:  # pragma: no cover - a dependency of rtcf
        raise ModelError("loading a URDF needs urdf_parser_py (pip install urdfdom-py)") from None
    path = Path(path)
    src = path.name
    try:
        with _quiet_parser():
            robot = URDF.from_xml_string(path.read_bytes())
    except Exception as e:  # the parser raises many kinds on malformed XML
        raise ModelError(f"{src}: not a valid URDF: {e}") from None
    root = robot.get_root()
    if chains is None:
        parents = {j.parent for j in robot.joints}
        leaves = sorted(l.name for l in robot.links if l.name not in parents)
        chains = {}
        for leaf in leaves:
            js = robot.get_chain(root, leaf, links=False)
            if any(robot.joint_map[j].type in _MOVING for j in js):
                chains[leaf] = (root, leaf)
    names: list[str] = []
    lo, hi, vel, tq = [], [], [], []
    built: dict[str, Chain] = {}
    roots = set()
    for cname, (base_link, tip_link) in chains.items():
        roots.add(base_link)
        for link in (base_link, tip_link):
            if link not in robot.link_map:
                raise ModelError(f"{src}: chains.{cname}: no link {link!r} in the URDF")
        try:
            path_joints = robot.get_chain(base_link, tip_link, links=False)
        except Exception:
            path_joints = []
        if not path_joints or robot.joint_map[path_joints[0]].parent != base_link:
            raise ModelError(f"{src}: chains.{cname}: {tip_link!r} does not descend from "
                             f"{base_link!r}")
        pending = np.eye(4)
        X, axes, jn = [], [], []
        for jname in path_joints:
            j = robot.joint_map[jname]
            o = j.origin
            origin = (trans(*(o.xyz if o and o.xyz else (0, 0, 0)))
                      @ rpy(*(o.rpy if o and o.rpy else (0, 0, 0))))
            if j.type == "fixed":
                pending = pending @ origin
                continue
            if j.type not in _MOVING:
                raise ModelError(f"{src}: joint {jname!r} is {j.type}: only revolute, "
                                 f"continuous and fixed joints are supported")
            ax = np.asarray(j.axis if j.axis is not None else (1.0, 0.0, 0.0), float)
            X.append(pending @ origin)
            axes.append(ax / np.linalg.norm(ax))
            pending = np.eye(4)
            jn.append(jname)
            if jname not in names:
                names.append(jname)
                lim = j.limit
                if j.type == "continuous" or lim is None:
                    lo.append(-math.inf)
                    hi.append(math.inf)
                else:
                    lo.append(float(lim.lower))
                    hi.append(float(lim.upper))
                vel.append(float(lim.velocity) if lim is not None and lim.velocity else 0.0)
                tq.append(float(lim.effort) if lim is not None and lim.effort else 0.0)
        idx = np.array([names.index(j) for j in jn], dtype=np.intp)
        built[cname] = (jn, idx, np.array(X), np.array(axes), pending)
    if len(roots) > 1:
        raise ModelError(f"{src}: every chain must start at one root link, got {sorted(roots)}")
    lower, upper = np.array(lo), np.array(hi)
    out = {}
    for cname, (jn, idx, X, axes, tip) in built.items():
        arrays = [idx, lower[idx], upper[idx], X, axes, tip]
        for a in arrays:
            a.flags.writeable = False
        out[cname] = Chain(cname, tuple(jn), *arrays, members=tuple(jn))
    frames: dict[str, Frame] = {}
    return make_model(robot.name or src, names, lower, upper, np.array(vel), np.array(tq),
                      out, frames, src)
