"""The plan of conservative backfilling: what stays free, from now on (docs/semantics/scheduling.md#conservative).

A profile is a list of segments ``[times[i], times[i+1])`` (the last one
runs forever) holding the processors free then (``counts``) and, in the
machines model, which machines (``sets``, bit sets).  Running
jobs and reservations occupy rectangles of it; a job's reservation is the
earliest segment start from which it fits for its whole planned duration.

Why breakpoints and not a rebuild per pass: conservative backfilling re-places
every waiting job when a job ends, so each placement must cost a walk over the
segments, not a replay of every running job and reservation.  Neighbouring
segments that hold the same free machines are merged, so the list stays as
short as the number of distinct planned ends.  A segment boundary where
nothing changes would decide nothing either (a job that fits from there fits
from the segment's start, on the same machines), so merging changes no
placement.

A Slurm backfill pass (docs/semantics/scheduling.md#slurm) plans on the same
step function, count model only, built afresh from the running jobs at each
pass (:meth:`Profile.of_running`); its windows are closed at the end
(``inclusive``), as backfill.c's slot test: a job ending exactly when a
reservation starts does not fit before it.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Final, Iterable

from bftune.schedulers.core.jobs import Job
from bftune.schedulers.core.machines import Interval

INF: Final = float("inf")


def mask_of(intervals: list[Interval]) -> int:
    """A machine set as the bits of an integer (machine i is bit i)."""
    mask = 0
    for a, b in intervals:
        mask |= ((1 << (b - a + 1)) - 1) << a
    return mask


def intervals_of(mask: int) -> list[Interval]:
    """The normalised intervals of a bit set (the inverse of :func:`mask_of`)."""
    out: list[Interval] = []
    base = 0
    while mask:
        low = (mask & -mask).bit_length() - 1  # first machine of the next run
        mask >>= low
        base += low
        run = (~mask & (mask + 1)).bit_length() - 1  # length of the run of ones at the bottom
        out.append((base, base + run - 1))
        mask >>= run
        base += run
    return out


def lowest_bits(mask: int, n: int) -> int:
    """The ``n`` lowest set bits of ``mask`` (the caller checks there are enough)."""
    excess = mask.bit_count() - n
    if excess <= 8:  # usually none or a few: drop the highest ones
        for _ in range(excess):
            mask ^= 1 << (mask.bit_length() - 1)
        return mask
    lo = n  # the answer is the bits below some width w: at least n bits wide, at most the mask's length
    hi = mask.bit_length()
    while lo < hi:
        mid = (lo + hi) >> 1
        if (mask & ((1 << mid) - 1)).bit_count() >= n:
            hi = mid
        else:
            lo = mid + 1
    return mask & ((1 << lo) - 1)


class Profile:
    """Free processors (and, in the machines model, free machines as bit sets) from ``times[0]`` (now) on.

    Every rectangle is half-open in time, ``[start, end)``: a job planned to
    end at t leaves its machines to a job starting at t (but in a Slurm pass:
    ``fit(..., inclusive=True)``).  Machine sets are
    integers (bit i: machine i): intersecting the free sets of a window is
    then one C-level ``&`` per segment, even on CEA-Curie's 93,312 machines.
    """

    __slots__ = ("times", "counts", "sets", "machines")

    def __init__(self, m: int, now: float, machines: bool) -> None:
        self.times: list[float] = [now]
        self.counts: list[int] = [m]
        self.machines = machines
        self.sets: list[int] = [(1 << m) - 1] if machines else []

    @classmethod
    def of_running(cls, now: float, free: int, running: Iterable[Job]) -> "Profile":
        """Count model: ``free`` processors now, and each running job's processors from its expected end on.

        ``running`` in order of expected end (the machine's ``by_end``).
        """
        profile = cls(free, now, False)
        times = profile.times
        counts = profile.counts
        for job in running:
            end = job.expected_end
            if end <= now or end == times[-1]:  # (a run ends by its walltime: never before now)
                counts[-1] += job.procs
            else:
                times.append(end)
                counts.append(counts[-1] + job.procs)
        return profile

    def __len__(self) -> int:
        return len(self.times)

    def advance(self, now: float) -> None:
        """Forget what lies before ``now`` (every segment that ended by then)."""
        times = self.times
        if now <= times[0]:
            return
        k = bisect_right(times, now) - 1  # the segment holding now
        if k > 0:
            del times[:k]
            del self.counts[:k]
            if self.machines:
                del self.sets[:k]
        times[0] = now

    def _split(self, t: float) -> int:
        """The index of the segment starting at ``t`` (``t`` >= now), splitting the one holding it if needed."""
        times = self.times
        k = bisect_right(times, t) - 1
        if times[k] == t:
            return k
        times.insert(k + 1, t)
        self.counts.insert(k + 1, self.counts[k])
        if self.machines:
            self.sets.insert(k + 1, self.sets[k])
        return k + 1

    def _span(self, start: float, end: float) -> tuple[int, int]:
        """The segments ``i`` to ``j - 1`` that make up ``[start, end)`` from now on, split at both ends.

        ``end`` may be inf (to the last segment); an empty span (``end`` not after ``start`` or now) is
        ``i == j``.
        """
        times = self.times
        if start < times[0]:
            start = times[0]
        if end <= start:
            return 0, 0
        i = self._split(start)
        j = self._split(end) if end < INF else len(times)
        return i, j

    def occupy(self, start: float, end: float, procs: int, mask: int) -> None:
        """Take ``procs`` processors (the machines of ``mask`` in the machines model) over ``[start, end)``."""
        i, j = self._span(start, end)
        counts = self.counts
        for x in range(i, j):
            counts[x] -= procs
        if self.machines:
            sets = self.sets
            keep = ~mask
            for x in range(i, j):
                sets[x] &= keep

    def occupy_free(self, start: float, end: float, procs: int) -> None:
        """Count model: up to ``procs`` of the processors still free over ``[start, end)``, never below 0.

        What a Slurm reservation holds before its job's start: bf_resolution rounds the start down, and over
        those seconds the job's processors are those already free (the others are still running a job).
        """
        i, j = self._span(start, end)
        counts = self.counts
        for x in range(i, j):
            if counts[x] > 0:
                counts[x] -= min(procs, counts[x])

    def release(self, start: float, end: float, procs: int, mask: int) -> None:
        """Give back what :meth:`occupy` took (only the part from now on still matters)."""
        i, j = self._span(start, end)
        if i == j:
            return
        counts = self.counts
        for x in range(i, j):
            counts[x] += procs
        if self.machines:
            sets = self.sets
            for x in range(i, j):
                sets[x] |= mask
        # Only the two boundaries can have become redundant (the same change inside keeps neighbours distinct).
        if j < len(self.times):
            self._merge(j)
        if i > 0:
            self._merge(i)

    def _merge(self, k: int) -> None:
        """Drop the boundary at ``times[k]`` if segments k-1 and k hold the same free machines."""
        if self.counts[k - 1] != self.counts[k]:
            return
        if self.machines:
            if self.sets[k - 1] != self.sets[k]:
                return
            del self.sets[k]
        del self.times[k]
        del self.counts[k]

    def fit(self, procs: int, duration: float, first_only: bool = False,
            before: float = INF, inclusive: bool = False) -> tuple[float, int]:
        """The earliest start from which ``procs`` processors stay free for ``duration``, and the machines.

        The count model returns no machines (0: the caller takes the lowest
        free ones when the job starts); the machines model returns the lowest
        ``procs`` machines free over the whole window (batsched's rule), as a
        bit set.  ``first_only``: only a start now counts (inf otherwise).
        ``before``: only windows that end by then count.  ``inclusive``
        (count model): the window is closed at its end, so a segment that
        starts exactly when the job would end must hold the processors too
        (Slurm's backfill pass).
        """
        times = self.times
        n = len(times)
        last = 1 if first_only else n
        if self.machines:
            start, common = self._slide(0, last, procs, duration, before, n, 0)
            return (start, lowest_bits(common, procs)) if start < INF else (INF, 0)
        counts = self.counts
        i = 0
        while i < last:
            if counts[i] < procs:
                i += 1
                continue
            end = times[i] + duration
            if end > before:
                break
            j = i + 1
            if inclusive:  # a segment that starts at end is in the window too
                while j < n and times[j] <= end and counts[j] >= procs:
                    j += 1
                if j == n or times[j] > end:
                    return times[i], 0
            else:
                while j < n and times[j] < end and counts[j] >= procs:
                    j += 1
                if j == n or times[j] >= end:
                    return times[i], 0
            i = j + 1  # segment j is short of processors: no window starting before it can hold the job
        return INF, 0

    def _slide(self, i: int, last: int, procs: int, duration: float, before: float, given: int,
               mask: int) -> tuple[float, int]:
        """Machines model: the first window of ``duration`` from a segment start ``i`` .. ``last - 1``, ending
        by ``before``, that holds ``procs`` machines, and the machines free throughout it (else inf, 0).

        From segment ``given`` on, the machines of ``mask`` count as free (a job given back).  The window
        [i, j) slides forward (both ends only grow): its intersection is kept as a two-stack queue, ``front``
        (intersections of [k, mid) for the first segments, the current one last) and ``back`` (the
        intersection of [mid, j)), so each segment is intersected a bounded number of times.
        """
        times = self.times
        counts = self.counts
        sets = self.sets
        n = len(times)
        j = 0
        front: list[int] = []
        back = -1  # every machine
        while i < last:
            if counts[i] < procs:
                i += 1  # the window is empty here: it only spans segments with enough processors
                continue
            if j <= i:
                j = i
                front.clear()
                back = -1
            end = times[i] + duration
            if end > before:
                break
            while j < n and times[j] < end:
                if j >= given:
                    back &= sets[j] | mask  # the job's machines are free again: enough processors
                elif counts[j] < procs:
                    break
                else:
                    back &= sets[j]
                j += 1
            if j < n and times[j] < end:
                i = j + 1  # as in the count model: too few processors in segment j
                continue
            common = front[-1] & back if front else back
            if common.bit_count() >= procs:
                return times[i], common
            if front:  # drop segment i from the window
                front.pop()
            else:
                agg = -1
                for x in range(j - 1, i, -1):
                    agg &= sets[x] | mask if x >= given else sets[x]
                    front.append(agg)
                back = -1
            i += 1
        return INF, 0

    def lowest(self, start: float, end: float, inclusive: bool = False) -> int:
        """Count model: the fewest processors free at any time in ``[start, end)`` (``[start, end]`` if
        ``inclusive``; ``start`` >= now)."""
        times = self.times
        counts = self.counts
        i = bisect_right(times, start) - 1 if start > times[0] else 0
        low = counts[i]
        i += 1
        n = len(times)
        while i < n and (times[i] < end or inclusive and times[i] == end):
            if counts[i] < low:
                low = counts[i]
            i += 1
        return low

    def may_move(self, start: float, end: float, procs: int, mask: int) -> bool:
        """Whether the job holding ``[start, end)`` (``procs``, ``mask``) would take another place if placed again.

        Answered without giving the place up: most jobs keep theirs when a plan
        is compressed, and this is cheaper than taking them out and in.  A
        window starting before ``start`` ends before ``end``, so with the job
        given back it has the job's processors free from ``start`` on: in the
        count model it fits if ``procs`` processors are free until ``start``.
        If the last segment before ``start`` has them, a start there fits;
        otherwise only windows that end by that segment's start can.  In the
        machines model a window ending by ``start`` is an ordinary fit, and one
        crossing ``start`` is checked by :meth:`_fits_before`.  At ``start``
        itself the machines model may pick lower machines freed since: the
        machines free throughout the window, the job's own given back, must
        still give ``mask``.
        """
        times = self.times
        duration = end - start
        k = bisect_left(times, start)  # the segments before start: 0 .. k-1
        if k > 0:
            if self.counts[k - 1] < procs:
                # Every window that reaches segment k-1 fails: only those that end by its start remain.
                if self.fit(procs, duration, before=times[k - 1])[0] < INF:
                    return True
            elif not self.machines:
                return True  # a start at times[k-1] has enough processors until start, the job's own after
            elif self.fit(procs, duration, before=start)[0] < INF:
                return True  # a window that ends by start, where the job is absent
            else:
                # A window that crosses start holds segment k-1 and the one at start, the job's machines given
                # back there: a quick necessary test before the whole check.
                at = bisect_right(times, start) - 1
                both = self.sets[k - 1] & (self.sets[at] | mask) if at != k - 1 else self.sets[k - 1]
                if both.bit_count() >= procs and self._fits_before(start, duration, procs, mask):
                    return True
        if not self.machines:
            return False
        times = self.times
        sets = self.sets
        n = len(times)
        k = bisect_right(times, start) - 1
        common = -1
        while k < n and times[k] < end:
            common &= sets[k] | mask
            k += 1
        return lowest_bits(common, procs) != mask

    def _fits_before(self, start: float, duration: float, procs: int, mask: int) -> bool:
        """Machines model: whether a window of ``duration`` that starts before ``start`` and crosses it holds
        ``procs`` machines once the job on ``mask`` from ``start`` is given back."""
        times = self.times
        first = bisect_right(times, start - duration)  # the first start whose window crosses start
        last = bisect_left(times, start)
        return self._slide(first, last, procs, duration, INF, last, mask)[0] < INF
