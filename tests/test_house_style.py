"""House style rules that can be read off the code (docs/house-style.md)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

RTCF = Path(__file__).resolve().parents[1] / "rtcf"

# modules being rewritten on other branches now; they join the check when those land
PENDING: set[str] = set()


def test_every_public_method_says_which_thread_runs_it():
    """Rule 3: a public method of a public class of rtcf/ says "Runs in:" in its docstring,
    or its class (or module) says it once for all its methods."""
    missing = []
    for path in sorted(RTCF.rglob("*.py")):
        rel = path.relative_to(RTCF).as_posix()
        if rel.startswith("_gen/") or rel in PENDING:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module_says = "Runs in" in (ast.get_docstring(tree) or "")
        for cls in tree.body:
            if not isinstance(cls, ast.ClassDef) or cls.name.startswith("_"):
                continue
            class_says = module_says or "Runs in" in (ast.get_docstring(cls) or "")
            for f in cls.body:
                if (isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                        and not f.name.startswith("_") and not class_says
                        and "Runs in" not in (ast.get_docstring(f) or "")):
                    missing.append(f"{rel}:{f.lineno} {cls.name}.{f.name}")
    assert missing == []


# Another module's private attribute may be read only here, each with its reason.
PRIVATE_READS = {
    # execution and component are one mechanism in two files: the EC thread drains the
    # component's command queue at its cycle boundary (lockstep's files, being rewritten)
    ("execution.py", "_commands"), ("execution.py", "_drain_commands"),
    ("simtime.py", "_startup_all"),
    # Param.__get__ is the hot path of every parameter read: no property call there
    ("params.py", "_params"),
    # the EC asks every active member each cycle whether parameters are staged: the dict's
    # truth, not a property call (Params.has_staged's own body)
    ("execution.py", "_staged"),
}
# omniORB's and the standard library's names that start with "_" but are their API
FOREIGN = {"_narrow", "_is_equivalent", "_non_existent", "_is_a", "_this", "_v", "_n",
           "_items", "_obj", "_NP_RepositoryId", "_get_the_POAManager", "_replace",
           "_asdict", "_fields", "_exit", "_getframe", "_current_frames"}


def test_no_module_reads_another_module_s_private_attributes():
    """``x._name`` where ``x`` is not self / cls and no line of the same module defines
    ``_name`` (as a function, class, ``self._name = ...`` or a module global), or
    ``from .module import _name``: a private attribute read across modules (a public view
    belongs on its owner instead). In rtcf/ and in every component package."""
    found = []
    components = RTCF.parent / "components"
    for path in sorted([*RTCF.rglob("*.py"), *components.rglob("*.py")]):
        rel = (path.relative_to(RTCF).as_posix() if path.is_relative_to(RTCF)
               else path.relative_to(RTCF.parent).as_posix())
        if rel.startswith("_gen/"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        own = set()
        for n in ast.walk(tree):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                own.add(n.name)
            elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                own.add(n.id)
            elif isinstance(n, ast.Attribute) and (
                    isinstance(n.ctx, ast.Store)
                    or isinstance(n.value, ast.Name) and n.value.id in ("self", "cls")):
                own.add(n.attr)
        for n in ast.walk(tree):
            if isinstance(n, ast.ImportFrom) and n.level > 0:
                found += [f"{rel}:{n.lineno} import {a.name}" for a in n.names
                          if a.name.startswith("_") and not a.name.startswith("__")]
            if (isinstance(n, ast.Attribute) and n.attr.startswith("_")
                    and not n.attr.startswith(("__", "_d_")) and n.attr not in FOREIGN
                    and n.attr not in own and (rel, n.attr) not in PRIVATE_READS):
                found.append(f"{rel}:{n.lineno} .{n.attr}")
    assert found == []


def test_no_module_imports_a_name_it_does_not_use():
    """A module-level import of rtcf/ or a component package whose name the module never
    uses (packages' ``__init__.py`` re-export, names in ``__all__`` are used, and a star
    import re-exports: the DRL modules give DSR_ROBOT2's surface that way)."""
    unused = []
    components = RTCF.parent / "components"
    for path in sorted([*RTCF.rglob("*.py"), *components.rglob("*.py")]):
        rel = (path.relative_to(RTCF).as_posix() if path.is_relative_to(RTCF)
               else path.relative_to(RTCF.parent).as_posix())
        if rel.startswith("_gen/") or path.name == "__init__.py" or rel in PENDING:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {}
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)) and not (
                    isinstance(node, ast.ImportFrom) and node.module == "__future__"):
                for alias in node.names:
                    name = (alias.asname or alias.name).split(".")[0]
                    imported[name] = node.lineno
        used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        for node in tree.body:
            if (isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)):
                used |= {e.value for e in ast.walk(node.value) if isinstance(e, ast.Constant)}
        unused += [f"{rel}:{line} {name}" for name, line in imported.items()
                   if name not in used and name not in ("*", "__all__")]
    assert unused == []


# Citations of documents that are not in the repository (a section of a specification, an
# issue, the original seed texts): the fact stands in the docstring or comment instead, or a
# public source (repository, path, commit).
CITATION = re.compile(
    r"\bspec(?:ification)?(?:[']s)?\s+(?:section\s+)?\d"
    r"|\b(?:the|this|per)\s+spec(?:[']s)?\b|[#(]\s*spec:(?!\s*str\b)"
    r"|\bissues?\s+#?\d+|\b(?:the|this)\s+issue(?:[']s)?\b"
    r"|\bseed[']s\b|\bthe\s+seeds?\b", re.IGNORECASE)
CITATION_EXEMPT = {
    # the broken-input catalogue stays as it is, its docstring included
    "tests/integration/test_broken_input.py",
}


def test_no_text_cites_a_document_outside_the_repository():
    """Every text file of rtcf/, components/, scripts/, bench/ and tests/ (docstrings,
    comments, messages, READMEs)."""
    root = RTCF.parent
    found = []
    for top in ("rtcf", "components", "scripts", "bench", "tests"):
        for path in sorted((root / top).rglob("*")):
            rel = path.relative_to(root).as_posix()
            if (not path.is_file() or "/_gen/" in f"/{rel}" or "__pycache__" in rel
                    or rel in CITATION_EXEMPT):
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue                          # pictures, recordings, binary data
            found += [f"{rel}:{i}: {line.strip()[:90]}"
                      for i, line in enumerate(text.splitlines(), 1) if CITATION.search(line)]
    assert found == []
