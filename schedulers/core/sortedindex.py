"""A sorted sequence of items by a unique key: parallel Python lists.

Why not ``sortedcontainers``: the simulator's indexes hold at most tens of
thousands of items, where a bisection plus a C-level ``list.insert``/``pop``
beats a B-tree-ish structure written in Python, and iteration is a plain list
iterator.  Keys must be unique (they end with the job's seq and id) and must
not change while the item is indexed (remove, change, add).
"""

from __future__ import annotations

from typing import Callable, Generic, Iterator, TypeVar

from bftune.schedulers.core.search import bisect_left, bisect_right

T = TypeVar("T")


class IndexKey:
    """The key of an index's items: ``of(item)``, a tuple whose first element is a number.

    A class rather than any callable so that, compiled, the index calls it
    directly (a generic call through a stored function, with its arguments
    and result boxed, was a third of what adding a job cost).  Any function
    still serves, wrapped in :class:`FunctionKey`.
    """

    __slots__ = ()

    def of(self, item) -> tuple:
        raise NotImplementedError


class FunctionKey(IndexKey):
    """A plain function as an index key."""

    __slots__ = ("function",)

    def __init__(self, function: Callable[..., tuple]) -> None:
        self.function = function

    def of(self, item) -> tuple:
        return self.function(item)


class SortedIndex(Generic[T]):
    """Items sorted by ``key.of(item)``; each item's key is computed once, when it is added.

    Keys must not change while an item is indexed, so ``remove`` finds an
    item by the key it was added with (kept in ``key_of``) instead of
    computing it again.

    The keys' first elements (``heads``: an expected end, a submission time,
    a score), as floats, are kept in a list of their own, and ``add`` and
    ``remove`` bisect that: comparing two numbers costs a third of comparing
    two tuples (which first compare their first elements for equality, then
    for order), and a bisection makes a dozen comparisons.  Keys whose first
    elements are equal are told apart by the whole key (``add``) or by
    identity (``remove``), walking only that run of equal heads: the same
    places as a bisection of the keys themselves.  A head made a float keeps
    the keys' order (an int beyond 2**53 may round to its neighbour's float:
    the whole keys then tell them apart, as for any equal heads).
    """

    __slots__ = ("items", "key", "key_of", "heads")

    def __init__(self, key: IndexKey | Callable[[T], tuple], items=()) -> None:
        self.key: IndexKey = key if isinstance(key, IndexKey) else FunctionKey(key)
        of = self.key.of
        pairs = sorted(((of(it), it) for it in items), key=_first)
        self.items: list[T] = [it for _, it in pairs]
        self.key_of: dict[T, tuple] = {it: k for k, it in pairs}
        self.heads: list[float] = [float(k[0]) for k, _ in pairs]

    def __len__(self) -> int:
        return len(self.items)

    def __bool__(self) -> bool:
        return bool(self.items)

    def __iter__(self) -> Iterator[T]:
        return iter(self.items)

    def __getitem__(self, i: int) -> T:
        return self.items[i]

    @property
    def keys(self) -> list[tuple]:
        """Every item's key, in order."""
        key_of = self.key_of
        return [key_of[it] for it in self.items]

    def add(self, item: T) -> None:
        k = self.key.of(item)
        head = float(k[0])
        key_of = self.key_of
        key_of[item] = k
        items = self.items
        heads = self.heads
        n = len(heads)
        if n == 0 or head > heads[n - 1] or (head == heads[n - 1] and k > key_of[items[n - 1]]):
            items.append(item)  # the usual case: arrivals in order
            heads.append(head)
            return
        i = self._after(head, k)
        items.insert(i, item)
        heads.insert(i, head)

    def remove(self, item: T) -> None:
        k = self.key_of.pop(item, None)
        items = self.items
        n = len(items)
        i = n
        if k is not None:
            heads = self.heads
            head = float(k[0])
            i = bisect_left(heads, head)  # the first key of this head: the item is in that run
            while i < n and items[i] is not item and heads[i] == head:
                i += 1
        if i == n or items[i] is not item:
            raise KeyError(f"{item!r} is not in the index (or its key changed)")
        items.pop(i)
        self.heads.pop(i)

    def above(self, key: tuple) -> list[T]:
        """The items whose keys are greater than ``key``, in order (a copy)."""
        return self.items[self._after(float(key[0]), key):]

    def _after(self, head: float, key: tuple) -> int:
        """Where ``key`` (of first element ``head``) goes: after every key of a smaller head and every equal key."""
        heads = self.heads
        i = bisect_right(heads, head)  # after every key of a smaller or equal head...
        if i and heads[i - 1] == head:
            key_of, items = self.key_of, self.items
            while i and heads[i - 1] == head and key_of[items[i - 1]] > key:  # ...but before greater equal heads
                i -= 1
        return i


def _first(pair):
    return pair[0]
