"""Execution order of the controllers from their BEFORE_ME / AFTER_ME lists.

The facts follow PR2/pr2_mechanism pr2_controller_manager/src/scheduler.cpp: pred(X) is X's
before list; every name Y in X's after list gets X in pred(Y); then repeatedly the controller
with an empty pred set is taken, the lexicographically smallest first (the C++ code walks a
std::map), appended to the schedule and removed from every pred set. No candidate left means
a cycle. Written anew for Python; the error messages name the controllers involved.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from .controller import ControllerError

__all__ = ["schedule_controllers"]


def schedule_controllers(links: Mapping[str, tuple[Iterable[str], Iterable[str]]]
                         ) -> list[str]:
    """The update order of the controllers ``links`` = {name: (before_list, after_list)}.

    Raises ControllerError when a list names a controller that is not in ``links`` or when
    the links form a cycle (naming the controllers on it). Pure; runs in any thread.
    """
    pred: dict[str, set[str]] = {name: set() for name in links}
    for name, (before, after) in links.items():
        for b in before:
            if b not in pred:
                raise ControllerError(f"scheduling: {name!r} must run after {b!r} "
                                      f"(BEFORE_ME), which is not loaded")
            pred[name].add(b)
        for a in after:
            if a not in pred:
                raise ControllerError(f"scheduling: {name!r} must run before {a!r} "
                                      f"(AFTER_ME), which is not loaded")
            pred[a].add(name)
    order: list[str] = []
    while pred:
        ready = [n for n, p in pred.items() if not p]
        if not ready:
            stuck = ", ".join(sorted(pred))
            raise ControllerError(f"scheduling: the BEFORE_ME/AFTER_ME links form a cycle "
                                  f"among {stuck}")
        pick = min(ready)
        order.append(pick)
        del pred[pick]
        for p in pred.values():
            p.discard(pick)
    return order
