"""Checks on the test tree itself."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_test_module_names_are_unique():
    """The test folders are not packages (an __init__.py would make tests/components/
    kinematics a package named like the component), so pytest imports test modules by
    their basename: two test files with one name break collection of the whole suite."""
    seen: dict[str, list[str]] = defaultdict(list)
    for p in TESTS.rglob("test_*.py"):
        seen[p.name].append(str(p.relative_to(TESTS)))
    clashes = {name: paths for name, paths in seen.items() if len(paths) > 1}
    assert not clashes, f"test files sharing a basename: {clashes}"
