"""Tests of rtcf.yamlio: duplicate keys (with their path and lines), YAML 1.2 exponent floats,
non-text files, deep nesting."""

from __future__ import annotations

import pytest

from rtcf.errors import CompositionError, ConfigError
from rtcf.yamlio import load_yaml, load_yaml_file


def test_duplicate_keys_are_errors_with_path_and_lines():
    text = "a: 1\nb:\n  - {x: 1, x: 2}\n  - y: 1\n    y: 2\na: 3\n"
    with pytest.raises(ConfigError) as info:
        load_yaml(text, "f.yaml")
    lines = str(info.value).splitlines()
    assert lines == [
        "f.yaml: b[0].x: duplicate key (line 3; first given at line 3), got 'x'",
        "f.yaml: b[1].y: duplicate key (line 5; first given at line 4), got 'y'",
        "f.yaml: a: duplicate key (line 6; first given at line 1), got 'a'",
    ]


def test_error_class_is_the_callers():
    with pytest.raises(CompositionError):
        load_yaml("a: 1\na: 2\n", "c.yaml", CompositionError)


def test_merge_keys_and_aliases_are_not_duplicates():
    text = "base: &b {x: 1}\nuse:\n  <<: *b\n  y: 2\nagain: *b\n"
    assert load_yaml(text, "f.yaml") == {"base": {"x": 1}, "use": {"x": 1, "y": 2},
                                         "again": {"x": 1}}


@pytest.mark.parametrize("text, value", [
    ("1e12", 1e12), ("1e-9", 1e-9), ("1.5e3", 1500.0), ("-2E-4", -2e-4), ("+3e2", 300.0),
    (".5e1", 5.0), ("1.0e+3", 1000.0), ("12", 12), ("1.5", 1.5), (".inf", float("inf")),
    ("'1e3'", "1e3"), ("1e", "1e"), ("e5", "e5"), ("1_000", 1000),
])
def test_yaml_12_exponent_floats(text, value):
    assert load_yaml(f"v: {text}\n", "f.yaml") == {"v": value}


def test_binary_and_non_utf8_files_name_the_file_and_byte(tmp_path):
    (tmp_path / "bin.yaml").write_bytes(b"a: 1\n\x00\x01")
    (tmp_path / "latin.yaml").write_bytes(b"name: caf\xe9\n")
    (tmp_path / "bom.yaml").write_bytes(b"\xef\xbb\xbfa: 1\n")
    with pytest.raises(ConfigError, match=r"bin\.yaml: not a text file: NUL byte at line 2, "
                                          r"offset 5 \(is it a composition\?\)"):
        load_yaml_file(tmp_path / "bin.yaml", "composition")
    with pytest.raises(ConfigError, match=r"latin\.yaml: not a UTF-8 text file: byte 0xe9 at "
                                          r"line 1, offset 9"):
        load_yaml_file(tmp_path / "latin.yaml", "composition")
    assert load_yaml_file(tmp_path / "bom.yaml", "composition") == {"a": 1}


@pytest.mark.slow
def test_deep_nesting_is_an_error_not_a_crash():
    text = "a: " + "[" * 5000 + "]" * 5000 + "\n"
    try:
        load_yaml(text, "deep.yaml")
    except ConfigError as e:
        assert "deep.yaml" in str(e)
