"""The processors a Slurm backfill pass sees over time: running jobs and the pass's reservations.

A step function of available processors (docs/semantics/scheduling.md#slurm): ``times[i]`` is where
segment i starts, ``avail[i]`` the processors free on it until ``times[i + 1]`` (the last segment lasts
forever).  Running jobs hold their processors until start + walltime, to the second; a reservation holds
its processors over the slots bf_resolution rounds it to, inside the backfill window.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from typing import Iterable

from bftune.schedulers.core.jobs import Job


class Profile:
    """Available processors from ``now`` on, as a step function."""

    __slots__ = ("times", "avail")

    def __init__(self, now: float, free: int, running: Iterable[Job]) -> None:
        """``free`` processors now, and each running job's processors from its expected end on.

        ``running`` in order of expected end (the machine's ``by_end``).
        """
        times = [now]
        avail = [free]
        for job in running:
            end = job.expected_end
            if end <= now:
                avail[-1] += job.procs  # (cannot happen: a run ends by its walltime)
            elif end == times[-1]:
                avail[-1] += job.procs
            else:
                times.append(end)
                avail.append(avail[-1] + job.procs)
        self.times = times
        self.avail = avail

    def earliest(self, procs: int, duration: float) -> float:
        """The earliest time from ``now`` at which ``procs`` processors stay available for ``duration``.

        The end is inclusive, as backfill.c's slot loop (``begin_time <= end_time``): a reservation that
        starts exactly when the job would end conflicts with it.  (Availability only drops where a
        reservation starts; a running job's end only adds.)
        """
        times = self.times
        avail = self.avail
        n = len(times)
        i = 0
        while i < n:
            if avail[i] < procs:
                i += 1
                continue
            start = times[i]
            end = start + duration
            j = i + 1
            while j < n and times[j] <= end:
                if avail[j] < procs:
                    break
                j += 1
            else:
                return start
            i = j + 1  # segment j is short: no start before its end works
        return math.inf

    def lowest_until(self, end: float) -> int:
        """The fewest processors available at any time in [now, end)."""
        times = self.times
        avail = self.avail
        low = avail[0]
        i = 1
        n = len(times)
        while i < n and times[i] < end:
            if avail[i] < low:
                low = avail[i]
            i += 1
        return low

    def lowest_between(self, start: float, end: float) -> int:
        """The fewest processors available at any time in [start, end] (``start`` >= now)."""
        times = self.times
        avail = self.avail
        i = bisect_right(times, start) - 1
        low = avail[i]
        i += 1
        n = len(times)
        while i < n and times[i] <= end:
            if avail[i] < low:
                low = avail[i]
            i += 1
        return low

    def _split(self, t: float) -> int:
        """The index of the segment starting at ``t`` (split there if needed; ``t`` >= now)."""
        i = bisect_right(self.times, t) - 1
        if self.times[i] == t:
            return i
        self.times.insert(i + 1, t)
        self.avail.insert(i + 1, self.avail[i])
        return i + 1

    def take(self, procs: int, start: float, end: float) -> None:
        """``procs`` processors held over [start, end) (``end`` may be inf)."""
        start = max(start, self.times[0])
        if end <= start:
            return
        i = self._split(start)
        j = self._split(end) if math.isfinite(end) else len(self.times)
        avail = self.avail
        for k in range(i, j):
            avail[k] -= procs

    def take_free(self, procs: int, start: float, end: float) -> None:
        """Up to ``procs`` of the processors still available over [start, end), never below 0.

        What a reservation holds before its job's start: bf_resolution rounds the start down, and over
        those seconds the job's processors are those already free (the others are still running a job).
        """
        start = max(start, self.times[0])
        if end <= start:
            return
        i = self._split(start)
        j = self._split(end)
        avail = self.avail
        for k in range(i, j):
            if avail[k] > 0:
                avail[k] -= min(procs, avail[k])

