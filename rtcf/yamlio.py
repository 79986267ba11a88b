"""Strict reading of rtcf's YAML input files (compositions).

PyYAML's ``safe_load`` is lenient in ways that hide mistakes in a hand-written system file:

* a key given twice in one mapping: the last one silently wins. Here it is an error naming
  the path of the mapping, the key and both lines;
* it implements YAML 1.1, where ``1e12`` and ``1e-3`` (no dot, or no exponent sign) are
  strings, so ``rate: 1e3`` would be refused as "not a number" although every YAML 1.2
  reader takes it as 1000.0. Here such scalars are read as floats (the YAML 1.2 core
  schema); ``.inf`` and ``.nan`` stay floats and are refused by the checks that use them;
* a binary or non-UTF-8 file gives a UnicodeDecodeError traceback. Here it is an error
  naming the file and the offending byte.
"""

from __future__ import annotations

import os
import re
from typing import Any

import yaml

from .errors import ConfigError, show_value
from .rtcconf import read_text

__all__ = ["load_yaml_file", "load_yaml"]


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader plus YAML 1.2 exponent floats (duplicates are found on the node tree)."""


# YAML 1.2 floats that YAML 1.1 reads as strings: an exponent without a dot in the mantissa
# or without a sign ("1e12", "1.5e3", "-2E-4"), and a mantissa without digits before the dot.
_FLOAT_12 = re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+$")
_StrictLoader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT_12,
                                    list("-+0123456789."))


def _key_text(node: yaml.Node) -> str:
    return str(node.value) if isinstance(node, yaml.ScalarNode) else f"<{node.tag}>"


def _duplicates(root: yaml.Node) -> list[tuple[str, str, int, int]]:
    """(path, key, line, first line) of every key repeated in a mapping, walking the node
    tree without recursion (a deeply nested document must not blow the stack)."""
    found: list[tuple[str, str, int, int]] = []
    seen: set[int] = set()
    stack: list[tuple[yaml.Node, str]] = [(root, "")]
    while stack:
        node, path = stack.pop()
        if id(node) in seen:          # anchors and aliases share nodes
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            first: dict[str, int] = {}
            for key_node, value_node in node.value:
                key = _key_text(key_node)
                line = key_node.start_mark.line + 1
                if key == "<<" and key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                if key in first:
                    found.append((path or "document", key, line, first[key]))
                else:
                    first[key] = line
                child = f"{path}.{key}" if path else key
                stack.append((value_node, child))
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                stack.append((item, f"{path}[{i}]"))
    found.sort(key=lambda f: f[2])
    return found


def load_yaml(text: str, filename: str, error: type[Exception] = ConfigError) -> Any:
    """Parse one YAML document strictly (see the module doc); ``error`` lists every
    duplicate key, or says where the YAML is invalid."""
    loader = _StrictLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        dups = _duplicates(node)
        if dups:
            raise error("\n".join(
                f"{filename}: {path}.{key}: duplicate key (line {line}; first given at line "
                f"{first}), got {show_value(key)}" if path != "document" else
                f"{filename}: {key}: duplicate key (line {line}; first given at line {first})"
                f", got {show_value(key)}" for path, key, line, first in dups))
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        loc = f"line {mark.line + 1}" if mark is not None else "document"
        problem = getattr(exc, "problem", None) or str(exc)
        raise error(f"{filename}: {loc}: invalid YAML: {problem}") from None
    except RecursionError:
        raise error(f"{filename}: document: invalid YAML: nested too deeply") from None
    finally:
        loader.dispose()


def load_yaml_file(path: str | os.PathLike, what: str,
                   error: type[Exception] = ConfigError) -> Any:
    """Read (UTF-8 text only) and parse a YAML file strictly."""
    return load_yaml(read_text(path, what, error), str(path), error)
