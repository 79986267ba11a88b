"""Lockstep across processes: one simulated clock for a composition whose components run in
several processes (or on several hosts), OpenHRP's model (openhrp3 Controller_impl::
control(): write the sensors, tick every controller's execution context in a fixed order,
each tick returning once onExecute has run, read the commands, step the physics).

The process that launches the system (process ``main``) is the *leader*: its SimTimeBase
owns simulated time, its pacing and the order of every execution context of the system.
Every other process is a *follower*: its ECs run on a time base driven from outside, and
they cycle only when the leader steps them, at the simulated time the leader gives. The
wire is ``rtcf/idl/Lockstep.idl`` (rtcf/corba/lockstep.py): one ``step(t, parts)`` call per
follower process and instant, however many of its ECs are due then.

This module is the pure part: which *parts* (an EC's members in one process) run in which
order at a shared instant, and the errors. An EC whose members live in several processes
has one part per process; within one process its members must be consecutive in the EC's
member list (otherwise a cycle would have to go back and forth between processes, and is
refused). Parts run in the order of the ECs' declaration (the composition's
``execution_contexts``, the implicit ``default`` EC last), the parts of one EC in the order
of their first members: the data flow the author declared.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .errors import CompositionError, LockstepError

__all__ = ["MAIN", "Part", "plan", "parts_of", "LockstepError"]

MAIN = "main"


@dataclass(frozen=True)
class Part:
    """An EC's members in one process. ``rank``: its place at a shared instant (0 first)."""

    ec: str
    process: str
    rate: float
    rank: int
    members: tuple[str, ...]


def plan(composition: object, process_of: Callable[[str], str]) -> list[Part]:
    """The parts of every EC of ``composition`` in instant order. CompositionError (naming
    the file, the EC and the members) when an EC's members of one process are separated by
    a member of another. Pure."""
    parts: list[Part] = []
    errors: list[str] = []
    source = getattr(composition, "source_file", "")
    for ec in composition.execution_contexts:          # type: ignore[attr-defined]
        runs: list[tuple[str, list[str]]] = []
        for member in ec.members:
            proc = process_of(member) or MAIN
            if runs and runs[-1][0] == proc:
                runs[-1][1].append(member)
            else:
                runs.append((proc, [member]))
        seen: dict[str, list[str]] = {}
        for proc, members in runs:
            if proc in seen:
                other = next(p for p, _ in runs if p != proc)
                file, path = getattr(ec, "where", ("", ""))
                errors.append(
                    f"{file or source}: {path or 'execution_contexts'}: execution context "
                    f"{ec.name!r}: in simulation time the members of one process must be "
                    f"consecutive (one cycle goes through each process once), but "
                    f"{', '.join(seen[proc])} and {', '.join(members)} of process {proc!r} "
                    f"are separated by members of process {other!r}: reorder its members")
                continue
            seen[proc] = members
            parts.append(Part(ec.name, proc, float(ec.rate), len(parts), tuple(members)))
    if errors:
        raise CompositionError(errors)
    return parts


def parts_of(parts: list[Part], process: str) -> list[Part]:
    """The parts that run in ``process``, in instant order."""
    return [p for p in parts if p.process == process]
