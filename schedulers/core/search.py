"""Binary searches of the core's sorted lists, fastest whether the core runs compiled or not.

Compiled by ``bftune accelerate`` (mypyc), a loop over a ``list[float]`` or
over intervals' first elements compares C numbers, while the standard
library's ``bisect`` compares Python objects through the generic comparison
(tuples element by element): several times the instructions (the C bisect of
a sorted index's heads took 670 instructions a call, this loop about 300).
Interpreted, the C ``bisect`` is the faster of the two, so each function
hands over to it then.  Both give the same answers (tests/schedulers/core/test_search.py
runs the loops interpreted against ``bisect``).
"""

from __future__ import annotations

from bisect import bisect_left as _c_bisect_left
from bisect import bisect_right as _c_bisect_right
from typing import Final

#: Whether this module runs compiled (then its file is an extension module, not the ``.py``).
COMPILED: Final = not __file__.endswith(".py")
#: Larger than any machine id: ``(a, _BIG)`` sorts after every interval that starts at ``a``.
_BIG: Final = 1 << 62


def bisect_left(a: list[float], x: float) -> int:
    """``bisect.bisect_left(a, x)``: the first position whose value is not below ``x``."""
    if not COMPILED:
        return _c_bisect_left(a, x)
    lo = 0
    hi = len(a)
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


def bisect_right(a: list[float], x: float) -> int:
    """``bisect.bisect_right(a, x)``: the first position whose value is above ``x``.

    :func:`bisect_left`'s loop with the other comparison, as in ``bisect`` itself: one loop for both would test
    which comparison to make at every step of the hot path."""
    if not COMPILED:
        return _c_bisect_right(a, x)
    lo = 0
    hi = len(a)
    while lo < hi:
        mid = (lo + hi) >> 1
        if x < a[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


def first_starting_from(intervals: list[tuple[int, int]], a: int, lo: int = 0) -> int:
    """The first position from ``lo`` on of an interval that starts at ``a`` or above (sorted, disjoint intervals).

    ``bisect.bisect_left(intervals, (a, -1), lo)``: no interval ends below its start."""
    if not COMPILED:
        return _c_bisect_left(intervals, (a, -1), lo)
    hi = len(intervals)
    while lo < hi:
        mid = (lo + hi) >> 1
        if intervals[mid][0] < a:
            lo = mid + 1
        else:
            hi = mid
    return lo


def last_starting_at_most(intervals: list[tuple[int, int]], a: int) -> int:
    """The position of the last interval that starts at ``a`` or below, -1 if none (sorted, disjoint intervals).

    ``bisect.bisect_right(intervals, (a, _BIG)) - 1``."""
    if not COMPILED:
        return _c_bisect_right(intervals, (a, _BIG)) - 1
    lo = 0
    hi = len(intervals)
    while lo < hi:
        mid = (lo + hi) >> 1
        if a < intervals[mid][0]:
            hi = mid
        else:
            lo = mid + 1
    return lo - 1
