"""A sorted sequence of items by a unique key: parallel Python lists.

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

    The keys' first elements (``heads``: an expected end, a submission time,
    a score) are kept in a list of their own, and ``add`` and ``remove``
    bisect that: comparing two numbers costs a third of comparing two tuples
    (which first compare their first elements for equality, then for order),
    and a bisection makes a dozen comparisons.  Keys whose first elements are
    equal are told apart by the whole key (``add``) or by identity
    (``remove``), walking only that run of equal heads: the same places as a
    bisection of the keys themselves.
    """

    __slots__ = ("keys", "items", "key", "key_of", "heads")

    def __init__(self, key: Callable[[T], tuple], items=()) -> None:
        self.key = key
        pairs = sorted(((key(it), it) for it in items), key=_first)
        self.keys: list[tuple] = [k for k, _ in pairs]
        self.items: list[T] = [it for _, it in pairs]
        self.key_of: dict[T, tuple] = {it: k for k, it in pairs}
        self.heads: list = [k[0] for k in self.keys]

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
        head = k[0]
        if not keys or k > keys[-1]:  # the usual case: arrivals in order
            keys.append(k)
            self.items.append(item)
            self.heads.append(head)
            return
        heads = self.heads
        i = bisect_right(heads, head)  # after every key of a smaller or equal head...
        while i and heads[i - 1] == head and keys[i - 1] > k:  # ...but before the equal heads' greater keys
            i -= 1
        keys.insert(i, k)
        self.items.insert(i, item)
        heads.insert(i, head)

    def remove(self, item: T) -> None:
        k = self.key_of.pop(item, None)
        items = self.items
        n = len(items)
        i = n
        if k is not None:
            heads = self.heads
            head = k[0]
            i = bisect_left(heads, head)  # the first key of this head: the item is in that run
            while i < n and items[i] is not item and heads[i] == head:
                i += 1
        if i == n or items[i] is not item:
            raise KeyError(f"{item!r} is not in the index (or its key changed)")
        del self.keys[i]
        del items[i]
        del self.heads[i]


def _first(pair):
    return pair[0]
