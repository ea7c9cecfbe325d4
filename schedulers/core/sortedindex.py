"""A sorted sequence of items by a unique key: two parallel Python lists.

Why not ``sortedcontainers``: the simulator's indexes hold at most tens of
thousands of items, where ``bisect`` plus a C-level ``list.insert``/``del``
beats a B-tree-ish structure written in Python, and iteration is a plain list
iterator.  Keys must be unique (they end with the job's seq and id) and must
not change while the item is indexed (remove, change, add).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Callable, Generic, Iterator, TypeVar

T = TypeVar("T")


class SortedIndex(Generic[T]):
    """Items sorted by ``key(item)``; each item's key is computed once, when it is added.

    Keys must not change while an item is indexed, so ``remove`` finds an
    item by the key it was added with (kept in ``key_of``) instead of calling
    ``key`` again: compiled, a call through the stored function and a new
    tuple were half of what removing a running job from the index cost.
    """

    __slots__ = ("keys", "items", "key", "key_of")

    def __init__(self, key: Callable[[T], tuple], items=()) -> None:
        self.key = key
        pairs = sorted(((key(it), it) for it in items), key=_first)
        self.keys: list[tuple] = [k for k, _ in pairs]
        self.items: list[T] = [it for _, it in pairs]
        self.key_of: dict[T, tuple] = {it: k for k, it in pairs}

    def __len__(self) -> int:
        return len(self.items)

    def __bool__(self) -> bool:
        return bool(self.items)

    def __iter__(self) -> Iterator[T]:
        return iter(self.items)

    def __getitem__(self, i: int) -> T:
        return self.items[i]

    def add(self, item: T) -> None:
        k = self.key(item)
        self.key_of[item] = k
        keys = self.keys
        if not keys or k > keys[-1]:  # the usual case: arrivals in order
            keys.append(k)
            self.items.append(item)
            return
        i = bisect_right(keys, k)
        keys.insert(i, k)
        self.items.insert(i, item)

    def remove(self, item: T) -> None:
        k = self.key_of.pop(item, None)
        i = bisect_left(self.keys, k) if k is not None else len(self.items)
        if i == len(self.items) or self.items[i] is not item:
            raise KeyError(f"{item!r} is not in the index (or its key changed)")
        del self.keys[i]
        del self.items[i]


def _first(pair):
    return pair[0]
