"""What was worked out from a value alone, kept for the process: a schema's prompt form
and its YAML, a search index of the same documents, the tokens of the same text.

An agent, chain or extension built per request meets the same tools again and again;
what follows from them alone is made once and shared (between threads too), and the
oldest entries go past a bound, so a process that meets ever new tools does not grow.
A module of its own, small as it is: the toolchain's inputs, syntaxes and discovery
each keep some, and it depends on nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["Kept", "kept_for"]

K = TypeVar("K")  # a dict key: hashable (a class, too, which Hashable does not say)
V = TypeVar("V")
Obj = TypeVar("Obj")


class Kept(Generic[K, V]):
    """A map of what was worked out, holding at most ``size`` entries (the oldest go).

    >>> kept = Kept[str, int](2)
    >>> kept.put("a", 1), kept.put("b", 2), kept.put("c", 3)
    (1, 2, 3)
    >>> kept.get("a"), kept.get("c")
    (None, 3)
    """

    __slots__ = ("_items", "_lock", "_size")

    def __init__(self, size: int) -> None:
        self._items: dict[K, V] = {}
        self._size = size
        self._lock = threading.Lock()

    def get(self, key: K, default: V | None = None) -> V | None:
        """The value kept for ``key``, or ``default``."""
        return self._items.get(key, default)

    def put(self, key: K, value: V) -> V:
        """Keep ``value`` for ``key`` (dropping the oldest entry past the bound)."""
        with self._lock:  # two threads putting at once: each drops a different oldest
            if len(self._items) >= self._size:
                del self._items[next(iter(self._items))]
            self._items[key] = value
        return value


def kept_for(kept: Kept[int, tuple[Obj, V]], obj: Obj, make: Callable[[Obj], V]) -> V:
    """``make(obj)``, made once per object ``obj`` (found by identity, and kept alive
    with its value so its id stays its own): for objects that are read, never changed.

    >>> kept = Kept[int, tuple[list[int], int]](8)
    >>> numbers = [1, 2, 3]
    >>> kept_for(kept, numbers, sum), kept_for(kept, numbers, len)
    (6, 6)
    """
    key = id(obj)
    known = kept.get(key)
    if known is not None and known[0] is obj:
        return known[1]
    return kept.put(key, (obj, make(obj)))[1]
