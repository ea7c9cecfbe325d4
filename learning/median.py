"""The median of the values seen in a sliding time window: the runtime classifier's divider.

Both the classifier (the divider in force when a job is classified) and the
classification campaign's reference classes (the same rule applied to the
trace replayed without waiting) need "the median runtime of the jobs that
ended in (now - window, now]"; this is that one definition.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections import deque


class RollingMedian:
    """Median of the values added at times in ``(now - window, now]``.

    Values must be added in non-decreasing time order, and ``median`` asked
    at non-decreasing ``now`` (expired values are dropped for good).  Adding
    and expiring cost O(log n) search plus a list shift; the median is O(1).
    The median of an even count is the mean of the two middle values, as
    numpy's.
    """

    __slots__ = ("window", "_window", "_sorted")

    def __init__(self, window: float) -> None:
        if not window > 0:
            raise ValueError(f"window must be > 0, got {window}")
        self.window = float(window)
        self._window: deque[tuple[float, float]] = deque()  # (time, value) in time order
        self._sorted: list[float] = []

    def add(self, time: float, value: float) -> None:
        self._window.append((time, value))
        insort(self._sorted, value)

    def median(self, now: float) -> float | None:
        """The median of the values added in ``(now - window, now]``; None if there is none."""
        win, srt = self._window, self._sorted
        lo = now - self.window
        while win and win[0][0] <= lo:
            _, value = win.popleft()
            del srt[bisect_left(srt, value)]
        n = len(srt)
        if n == 0:
            return None
        m = n >> 1
        return float(srt[m]) if n & 1 else (srt[m - 1] + srt[m]) / 2.0

    def __len__(self) -> int:
        return len(self._sorted)
