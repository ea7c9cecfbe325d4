"""The machine as the decision core sees it: free machines and running jobs."""

from __future__ import annotations

from typing import Callable, Hashable

from bftune.schedulers.core.jobs import Job
from bftune.schedulers.core.machines import Interval, MachineSet
from bftune.schedulers.core.ordering import Order, RankKey
from bftune.schedulers.core.sortedindex import IndexKey, SortedIndex


class _EndKey(IndexKey):
    """Expected end order: (expected end, seq, id)."""

    __slots__ = ()

    def of(self, job: Job) -> tuple:
        return (job.expected_end, job.seq, job.id)


def _first(pair: tuple) -> tuple:
    return pair[0]


#: What a running job's planned end becomes once the job outruns its planning estimate (option
#: ``overrun_estimate``): its walltime (:meth:`MachineState.refresh_overdue`), or the expired estimate, kept.
OVERRUN_ESTIMATES = ("walltime", "expired")


class MachineState:
    """Free machines and running jobs, indexed by expected end for reservations."""

    def __init__(self, m: int) -> None:
        if m <= 0:
            raise ValueError(f"a machine needs at least one processor, got {m}")
        self.m = m
        self.free = MachineSet.full(m)
        self.running: dict[str, Job] = {}
        self.by_end: SortedIndex[Job] = SortedIndex(_EndKey())
        self._indexes: dict[Hashable, SortedIndex[Job]] = {}  # running jobs by other static keys

    def running_index(self, ident: Hashable, key: IndexKey | Callable[[Job], tuple]) -> SortedIndex[Job]:
        """The running jobs sorted by ``key`` (unique, never changing), kept up to date from now on.

        Created on first use under ``ident``; an algorithm that needs its
        running jobs in priority order (PV-EASY's shadow load) asks for one
        instead of sorting them at every pass.  Nothing is maintained for
        a core that never asks.
        """
        index = self._indexes.get(ident)
        if index is None:
            index = self._indexes[ident] = SortedIndex(key, self.running.values())
        return index

    def ranked_below(self, order: Order, job: Job, now: float) -> list[Job]:
        """The running jobs that rank below ``job`` in ``order`` at ``now`` (lower priority), highest first.

        PV-EASY's shadow load when ``job`` is the first waiting job, and the
        jobs that make a head's wait unfair.  Static orders keep an index of
        the running jobs by rank; others rank them at every call.
        """
        rank = order.rank(job, now)
        if order.static:
            index = self.running_index(("rank", order), RankKey(order))
            return index.above(rank)
        ranked = sorted(((order.rank(j, now), j) for j in self.running.values()), key=_first)
        return [j for r, j in ranked if r > rank]

    @property
    def free_count(self) -> int:
        return self.free.size

    def start(self, job: Job, alloc: list[Interval], now: float) -> None:
        self.free.remove(alloc, job.procs)
        job.alloc = alloc
        job.start = now
        job.expected_end = now + job.estimate
        self.running[job.id] = job
        self.by_end.add(job)
        for index in self._indexes.values():
            index.add(job)

    def finish(self, job_id: str) -> Job:
        job = self.running.pop(job_id)
        self.by_end.remove(job)
        for index in self._indexes.values():
            index.remove(job)
        assert job.alloc is not None  # set by start()
        self.free.add(job.alloc)
        return job

    def set_expected_end(self, job: Job, end: float) -> None:
        self.by_end.remove(job)
        job.expected_end = end
        self.by_end.add(job)

    def refresh_overdue(self, now: float) -> None:
        """A job still running past its estimate is expected to run to its walltime.

        Only predictions shorter than the walltime can be overrun (a walltime is
        enforced by a kill at that exact time, reported in the same batch).  A
        core built with ``overrun_estimate = "expired"`` never calls it: the
        job keeps its expired end, so its processors count as free from then on.
        """
        running = self.by_end.items  # the list itself: this runs at every pass
        if not running or running[0].expected_end > now:
            return
        overdue = []
        for job in running:
            if job.expected_end > now:
                break
            overdue.append(job)
        for job in overdue:
            self.set_expected_end(job, max(job.start + job.walltime, now))
