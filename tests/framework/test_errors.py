"""Tests of rtcf.errors.show_value: how error messages echo a bad value (a 1 MB key
was once echoed whole; deep nesting must not raise)."""

from __future__ import annotations

import builtins

from rtcf.errors import SHOW_LIMIT, show_value


def test_short_values_are_their_repr():
    assert show_value("abc") == "'abc'"
    assert show_value("") == "''"
    assert show_value([1, 2.5]) == "[1, 2.5]"
    assert show_value(float("nan")) == "nan"


def test_long_strings_are_cut_with_their_length():
    text = show_value("k" * 1_000_000)
    assert text.endswith("... (1000000 chars)") and text.startswith("'kkk")
    assert len(text) < SHOW_LIMIT + 30


def test_long_and_deep_lists_are_bounded():
    assert show_value(list(range(1000))) == "[0, 1, 2, 3, 4, 5, 6, 7, ...] (1000 items)"
    deep: list = []
    x = deep
    for _ in range(100_000):
        x.append([])
        x = x[0]
    assert len(show_value(deep)) < SHOW_LIMIT + 30


def test_a_failing_repr_is_named_by_type():
    class Bad:
        def __repr__(self):
            raise RuntimeError("no")
    assert show_value(Bad()).startswith("<Bad")


def test_every_exception_type_of_the_framework_is_in_errors():
    """House style 8: rtcf's own exception types live in rtcf/errors.py (a component's are
    in its package). Found by reading every module of rtcf/ (not rtcf/_gen, the stubs)."""
    import ast
    from pathlib import Path

    import rtcf.errors as errors
    root = Path(errors.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith("_gen/") or rel == "errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and any(
                    (b.id if isinstance(b, ast.Name) else getattr(b, "attr", "")).endswith(
                        ("Error", "Exception", "Timeout", "Fault", "Warning"))
                    or (isinstance(b, ast.Name) and b.id in _BUILTIN_EXCEPTIONS)
                    for b in node.bases):
                found.append(f"{rel}:{node.lineno} {node.name}")
    assert found == []
    for name in errors.__all__:
        obj = getattr(errors, name)
        assert not isinstance(obj, type) or issubclass(obj, errors.RtcfError), name


_BUILTIN_EXCEPTIONS = {name for name, obj in vars(builtins).items()
                       if isinstance(obj, type) and issubclass(obj, BaseException)}
