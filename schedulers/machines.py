"""Sets of machine ids as sorted, disjoint, inclusive intervals.

Why intervals and not Python sets: CEA-Curie has 93,312 processors and jobs of
80,000 of them; the free set and every allocation stay a handful of intervals,
so taking the lowest-numbered free machines costs O(intervals), not O(procs).
The textual form is Batsim's (``"0-3 7 9-12"``), the same as procset's.
"""

from __future__ import annotations

from typing import Iterable

Interval = tuple[int, int]  # inclusive bounds


def count(intervals: Iterable[Interval]) -> int:
    return sum(b - a + 1 for a, b in intervals)


def to_string(intervals: Iterable[Interval]) -> str:
    """Batsim/procset notation: ``0-3 7``."""
    return " ".join(f"{a}-{b}" if b > a else str(a) for a, b in intervals)


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
    out: list[Interval] = []
    for a, b in intervals:
        size = b - a + 1
        if size >= n:
            out.append((a, a + n - 1))
            return out
        out.append((a, b))
        n -= size
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
    """A mutable set of machine ids kept as normalised intervals, with its size."""

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

    def remove(self, alloc: list[Interval]) -> None:
        # Fast path: the allocation is a prefix of the first interval (the usual
        # lowest-first case).
        iv = self.intervals
        if len(alloc) == 1 and iv and iv[0][0] == alloc[0][0] and alloc[0][1] <= iv[0][1]:
            a, b = alloc[0]
            if b == iv[0][1]:
                del iv[0]
            else:
                iv[0] = (b + 1, iv[0][1])
        else:
            self.intervals = difference(iv, alloc)
        self.size -= count(alloc)

    def add(self, alloc: list[Interval]) -> None:
        self.intervals = union(self.intervals, alloc)
        self.size += count(alloc)

    def __str__(self) -> str:
        return to_string(self.intervals)
