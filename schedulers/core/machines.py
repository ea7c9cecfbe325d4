"""Sets of machine ids as sorted, disjoint, inclusive intervals.

Why intervals and not Python sets: CEA-Curie has 93,312 processors and jobs of
80,000 of them; the free set and every allocation stay a handful of intervals,
so taking the lowest-numbered free machines costs O(intervals), not O(procs).
The textual form is Batsim's (``"0-3 7 9-12"``), the same as procset's.
"""

from __future__ import annotations

from typing import Iterable

from bftune.schedulers.core.search import first_starting_from, last_starting_at_most

Interval = tuple[int, int]  # inclusive bounds


def count(intervals: Iterable[Interval]) -> int:
    return sum(b - a + 1 for a, b in intervals)


def to_string(intervals: list[Interval]) -> str:
    """Batsim/procset notation: ``0-3 7``.

    A list, not any iterable: compiled, the loop is then native (half the instructions of a join over a
    generator; every finished run is written this way)."""
    if len(intervals) == 1:  # most allocations
        a, b = intervals[0]
        return f"{a}-{b}" if b > a else str(a)
    parts: list[str] = []
    for a, b in intervals:
        parts.append(f"{a}-{b}" if b > a else str(a))
    return " ".join(parts)


def parse(text: str) -> list[Interval]:
    """Parse Batsim's allocation notation (``"43-50 67"``) into normalised intervals."""
    out: list[Interval] = []
    for token in text.split():
        if "-" in token:
            a, b = token.split("-", 1)
            out.append((int(a), int(b)))
        else:
            v = int(token)
            out.append((v, v))
    return normalise(out)


def normalise(intervals: Iterable[Interval]) -> list[Interval]:
    """Sort and merge overlapping or adjacent intervals."""
    out: list[Interval] = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1] + 1:
            if b > out[-1][1]:
                out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


def lowest(intervals: list[Interval], n: int) -> list[Interval]:
    """The ``n`` lowest ids of a normalised interval list (caller checks there are enough)."""
    k = 0
    for a, b in intervals:
        size = b - a + 1
        if size >= n:
            out = intervals[:k]  # whole intervals before this one: one C-level copy
            out.append((a, a + n - 1))
            return out
        n -= size
        k += 1
    raise ValueError("not enough machines")


def union(x: list[Interval], y: list[Interval]) -> list[Interval]:
    if not x:
        return list(y)
    if not y:
        return list(x)
    return normalise(x + y)


def difference(x: list[Interval], y: list[Interval]) -> list[Interval]:
    """x minus y, both normalised."""
    out: list[Interval] = []
    j = 0
    ny = len(y)
    for a, b in x:
        cur = a
        while j < ny and y[j][1] < cur:
            j += 1
        k = j
        while k < ny and y[k][0] <= b:
            ya, yb = y[k]
            if ya > cur:
                out.append((cur, ya - 1))
            cur = max(cur, yb + 1)
            if cur > b:
                break
            k += 1
        if cur <= b:
            out.append((cur, b))
    return out


class MachineSet:
    """A mutable set of machine ids kept as normalised intervals, with its size.

    Adding and removing an allocation touches only the intervals around it
    (binary search), so a fragmented free set of a large machine stays cheap.
    """

    __slots__ = ("intervals", "size")

    def __init__(self, intervals: list[Interval] | None = None) -> None:
        self.intervals: list[Interval] = normalise(intervals or [])
        self.size = count(self.intervals)

    @classmethod
    def full(cls, m: int) -> "MachineSet":
        return cls([(0, m - 1)] if m > 0 else [])

    def take_lowest(self, n: int) -> list[Interval]:
        """Remove and return the ``n`` lowest-numbered ids."""
        taken = lowest(self.intervals, n)
        self.remove(taken)
        return taken

    def remove(self, alloc: list[Interval], size: int = -1) -> None:
        """Remove ids that are all present (each interval lies inside one free interval).

        ``size``, the number of ids in ``alloc``, saves counting when the caller knows it.
        """
        iv = self.intervals
        k = len(alloc)
        # Fast path: the allocation is the lowest part of the set (how jobs are placed).
        if k and iv and iv[0][0] == alloc[0][0] and k <= len(iv) and (k == 1 or iv[: k - 1] == alloc[: k - 1]):
            a, b = alloc[-1]
            x, y = iv[k - 1]
            if x == a and b <= y:
                if b == y:
                    del iv[:k]
                else:
                    del iv[: k - 1]
                    iv[0] = (b + 1, y)
                self.size -= size if size >= 0 else count(alloc)
                return
        removed = 0
        for a, b in alloc:
            i = last_starting_at_most(iv, a)
            if i < 0 or a < iv[i][0] or b > iv[i][1]:
                raise ValueError(f"machines {a}-{b} are not all in the set")
            x, y = iv[i]
            removed += b - a + 1
            if x == a:
                if y == b:
                    del iv[i]
                else:
                    iv[i] = (b + 1, y)
            elif y == b:
                iv[i] = (x, a - 1)
            else:
                iv[i] = (x, a - 1)
                iv.insert(i + 1, (b + 1, y))
        self.size -= removed

    def add(self, alloc: list[Interval]) -> None:
        """Add ids that are all absent, merging with adjacent intervals."""
        iv = self.intervals
        added = 0
        lo = 0
        for a, b in alloc:
            added += b - a + 1
            i = lo = first_starting_from(iv, a, lo)
            merge_left = i > 0 and iv[i - 1][1] == a - 1
            merge_right = i < len(iv) and iv[i][0] == b + 1
            if merge_left and merge_right:
                iv[i - 1] = (iv[i - 1][0], iv[i][1])
                del iv[i]
            elif merge_left:
                iv[i - 1] = (iv[i - 1][0], b)
            elif merge_right:
                iv[i] = (a, iv[i][1])
            else:
                iv.insert(i, (a, b))
        self.size += added

    def __str__(self) -> str:
        return to_string(self.intervals)
