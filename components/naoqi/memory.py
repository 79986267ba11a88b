"""ALMemory's inserted data: a store of values NAOqi programs share by key.

Pure: imports neither rtcf nor omniORB. Values are what ALMemory's insertData takes from
Python: a number (int or float), a string, a boolean, or a list of these (nested lists
too); anything else, a non-finite number, or a key that is not a non-empty string is refused
(MemoryError_ names it) and changes nothing. Keys are case-sensitive, as NAOqi's.
"""

from __future__ import annotations

import math
import threading
from typing import Any

MAX_DEPTH = 8
MAX_ITEMS = 100_000


class MemoryError_(ValueError):
    """A key or value ALMemory would not take."""


def check_value(value: Any, depth: int = 0) -> Any:
    """A copy of ``value`` if ALMemory takes it (lists become lists), else MemoryError_."""
    if depth > MAX_DEPTH:
        raise MemoryError_(f"value nested deeper than {MAX_DEPTH} lists")
    if isinstance(value, bool) or isinstance(value, str):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise MemoryError_(f"value {value!r}: not a finite number")
        return float(value)
    if isinstance(value, (list, tuple)):
        if len(value) > MAX_ITEMS:
            raise MemoryError_(f"list of {len(value)} items (at most {MAX_ITEMS})")
        return [check_value(v, depth + 1) for v in value]
    raise MemoryError_(f"value {value!r}: expected a number, string, boolean or list of them")


def check_key(key: Any) -> str:
    if not isinstance(key, str) or not key or len(key) > 1024:
        raise MemoryError_(f"key {key!r}: expected a non-empty string (at most 1024 chars)")
    return key


class Memory:
    """Inserted values by key. Runs in: any thread (a lock around the dict)."""

    def __init__(self):
        self._data: dict[str, Any] = {}
        self._lock = threading.Lock()

    def insert(self, key: Any, value: Any) -> None:
        k, v = check_key(key), check_value(value)
        with self._lock:
            self._data[k] = v

    def get(self, key: str) -> Any:
        with self._lock:
            return self._data[key]

    def __contains__(self, key: str) -> bool:
        with self._lock:
            return key in self._data

    def keys(self) -> list[str]:
        with self._lock:
            return list(self._data)
