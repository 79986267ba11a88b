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


def test_bundled_components_are_imported_only_by_their_namespaced_path():
    """The bundled components are the package rtcf_components: a bare
    ``import kinematics`` anywhere in the project would load a second copy of the module
    under another name (and would find a user's own package of that name first)."""
    import ast

    root = TESTS.parent
    bundled = {p.name for p in (root / "components").iterdir() if (p / "__init__.py").is_file()}
    offenders = []
    for folder in ("rtcf", "components", "scripts", "bench", "tests"):
        for path in (root / folder).rglob("*.py"):
            if "_gen" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                for name in names:
                    if name.split(".")[0] in bundled:
                        offenders.append(f"{path.relative_to(root)}:{node.lineno}: {name}")
    assert not offenders, "bare imports of bundled components:\n" + "\n".join(offenders)
