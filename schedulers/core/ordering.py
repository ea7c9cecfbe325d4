"""Queue orders: a policy, optionally wrapped by a waiting-time threshold and
split into classes, and the waiting queue that serves them quickly.

An ``Order`` is data (picklable, comparable, printable); the ``WaitingQueue``
turns it into a sequence of jobs at a given time.  For policies whose key does
not depend on time the queue keeps a sorted index per order, so a scheduling
pass walks the queue lazily instead of sorting it: this is what makes the
local simulator fast on archive traces with long queues.

Semantics (docs/semantics/scheduling.md#easy):
- ties of the policy key are broken by submission time, then job id;
- with a threshold Theta, jobs with ``now - r > Theta`` go first, by r then id;
- with ``by_class``, jobs of class 0 (e.g. predicted small) precede class 1,
  each class in policy order; the threshold still wraps the result.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator


from bftune.schedulers.core.durations import format_duration
from bftune.schedulers.core.jobs import Job
from bftune.schedulers.core.policies import FCFS, Policy, get_policy, key_function, sort_score
from bftune.schedulers.core.sortedindex import IndexKey, SortedIndex


@dataclass(frozen=True)
class Order:
    """How a queue is sorted: ``policy`` under an optional ``threshold`` (seconds)."""

    policy: Policy
    threshold: float = math.inf
    by_class: bool = False

    @classmethod
    def of(cls, policy: str | Policy, threshold: float = math.inf, by_class: bool = False) -> "Order":
        return cls(get_policy(policy), threshold, by_class)

    @property
    def dynamic(self) -> bool:
        return self.policy.dynamic

    def key(self, job: Job, now: float) -> tuple:
        """The full sort key of a non-promoted job (ties: r, then id)."""
        return self.key_with(job, self.policy.key(job, now))

    def key_with(self, job: Job, score: float) -> tuple:
        """:meth:`key` of a job whose policy key is ``score``."""
        if self.by_class:
            return (job.qclass, score, job.submit, job.seq, job.id)
        return (score, job.submit, job.seq, job.id)

    def promoted(self, job: Job, now: float) -> bool:
        return now - job.submit > self.threshold

    def rank(self, job: Job, now: float) -> tuple:
        """A job's place in this order at ``now``, comparable across jobs (lower goes first).

        The same order as ``WaitingQueue.iterate`` (threshold promotion
        included), for any job, waiting or running: what "higher priority"
        means for PV-EASY's shadow load and for the fairness metrics.
        """
        if now - job.submit > self.threshold:
            return (0, job.submit, job.seq, job.id)  # promoted jobs go first, in FCFS order
        return (1, *self.key(job, now))

    @property
    def static(self) -> bool:
        """Whether ``rank`` never changes with time (no waiting-time term, no threshold)."""
        return not self.policy.dynamic and self.threshold == math.inf

    def describe(self) -> str:
        s = self.policy.name
        if self.by_class:
            s = f"classes({s})"
        if math.isfinite(self.threshold):
            s += f"+threshold({format_duration(self.threshold)})"
        return s


class _FcfsKey(IndexKey):
    """Arrival order: (r, seq, id)."""

    __slots__ = ()

    def of(self, job: Job) -> tuple:
        return (job.submit, job.seq, job.id)


def _procs(job: Job) -> int:
    return job.procs


def _qclass(job: Job) -> int:
    return job.qclass


class RankKey(IndexKey):
    """Picklable index key: a job's rank under a static order (``Order.rank`` at any time)."""

    __slots__ = ("order",)

    def __init__(self, order: Order) -> None:
        self.order = order

    def of(self, job: Job) -> tuple:
        return self.order.rank(job, 0.0)


class _StaticKey(IndexKey):
    """Picklable index key of a static order (no dependency on time): ``order.key(job, 0.0)``.

    The policy's key comes from :func:`policies.key_function` (a formula
    policy's score function itself: a sixth of what adding a waiting job
    cost compiled).
    """

    __slots__ = ("order", "score")

    def __init__(self, order: Order) -> None:
        self.order = order
        self.score: Callable[[Job, float], float] = key_function(order.policy)

    def of(self, job: Job) -> tuple:
        return self.order.key_with(job, self.score(job, 0.0))


class WaitingQueue:
    """The waiting jobs, with sorted indexes for static orders and FCFS.

    Jobs are added and removed by the core; a pass asks ``iterate(order, now)``
    for a lazy walk in order.  Callers must not mutate the queue while walking
    (collect, then remove).
    """

    def __init__(self) -> None:
        self.jobs: dict[str, Job] = {}
        self._fcfs: SortedIndex[Job] = SortedIndex(_FcfsKey())
        self._indexes: dict[tuple, SortedIndex[Job]] = {}
        # id(order) -> (order, its index): a pass asks for its orders' indexes twice (primary, backfill), and
        # building and hashing the identifying tuple each time was 3 % of a compiled SAF simulation.  The
        # order itself is kept with its entry, so that a recycled id never finds another order's index.
        self._index_of: dict[int, tuple[Order, SortedIndex[Job]]] = {}
        self._procs: dict[int, int] = {}  # procs -> number of waiting jobs asking that many
        self._min_procs = 0  # 0 = unknown, recompute on demand
        # The last dynamic order sorted, when, and the queue's additions then: a pass walks the same order
        # twice at one instant (primary, then backfill), and only removals (the jobs it started) come between.
        self._added = 0
        self._sorted_order: Order | None = None
        self._sorted_at = math.nan
        self._sorted_added = -1
        self._sorted_jobs: list[Job] = []

    def __len__(self) -> int:
        return len(self.jobs)

    def __contains__(self, job_id: str) -> bool:
        return job_id in self.jobs

    def add(self, job: Job) -> None:
        if job.id in self.jobs:
            raise ValueError(f"job {job.id} is already waiting")
        self.jobs[job.id] = job
        self._fcfs.add(job)
        self._added += 1
        q = job.procs
        self._procs[q] = self._procs.get(q, 0) + 1
        if self._min_procs and q < self._min_procs:
            self._min_procs = q
        for index in self._indexes.values():
            index.add(job)

    def remove(self, job: Job) -> None:
        del self.jobs[job.id]
        self._fcfs.remove(job)
        q = job.procs
        left = self._procs[q] - 1
        if left:
            self._procs[q] = left
        else:
            del self._procs[q]
            if q == self._min_procs:
                self._min_procs = 0
        for index in self._indexes.values():
            index.remove(job)

    @property
    def min_procs(self) -> int:
        """The smallest request among waiting jobs (0 if none): no backfill below it."""
        if not self._min_procs and self._procs:
            self._min_procs = min(self._procs)
        return self._min_procs

    def fcfs(self) -> Iterator[Job]:
        return iter(self._fcfs)

    def _index(self, order: Order) -> SortedIndex[Job]:
        if order.policy is FCFS and not order.by_class:
            return self._fcfs  # the same order: (r, r, id) sorts like (r, id)
        known = self._index_of.get(id(order))
        if known is not None and known[0] is order:
            return known[1]
        ident = (order.policy.name, id(order.policy), order.by_class)
        index = self._indexes.get(ident)
        if index is None:
            index = SortedIndex(_StaticKey(order), self.jobs.values())
            self._indexes[ident] = index
        if len(self._index_of) >= 64:  # orders made and dropped (a selector's switches): forget them
            self._index_of.clear()
        self._index_of[id(order)] = (order, index)
        return index

    def iterate(self, order: Order, now: float) -> Iterator[Job]:
        """Waiting jobs in ``order`` at time ``now`` (lazy where the order allows)."""
        if not self.jobs:
            return iter(())
        # No threshold, or nobody waited past it (the FCFS index's first job waited longest): the order
        # alone, with no generator to resume at every job (the usual pass under a threshold too).
        if order.threshold == math.inf or not now - self._fcfs.items[0].submit > order.threshold:
            if order.policy.dynamic:
                return iter(self._dynamic(order, now))
            return iter(self._index(order).items)
        return self._iterate_threshold(order, now)

    def _iterate_threshold(self, order: Order, now: float) -> Iterator[Job]:
        threshold = order.threshold
        promoted = 0
        for job in self._fcfs:
            if now - job.submit > threshold:
                promoted += 1
                yield job
            else:
                break
        if promoted == len(self.jobs):
            return
        if order.dynamic:
            for job in self._dynamic(order, now):
                if not now - job.submit > threshold:
                    yield job
        elif promoted == 0:
            yield from self._index(order)  # the usual case: nobody waited that long
        else:
            for job in self._index(order):
                if not now - job.submit > threshold:
                    yield job

    def _dynamic(self, order: Order, now: float) -> list[Job]:
        """Every waiting job in ``order``'s policy order at ``now`` (no threshold), sorted once per instant.

        At the same instant and with no job added since, the last sort of the same order still holds
        for the jobs left: removing jobs keeps the others in order.
        """
        last = self._sorted_order
        if (last is not None and now == self._sorted_at and self._added == self._sorted_added
                and (last is order or last == order)):
            jobs = self.jobs
            kept = [job for job in self._sorted_jobs if job.id in jobs]
            if len(kept) != len(self._sorted_jobs):
                self._sorted_jobs = kept
            return kept
        ranked = self._sorted(order, now, self._fcfs.items)
        self._sorted_order, self._sorted_at, self._sorted_added, self._sorted_jobs = order, now, self._added, ranked
        return ranked

    @staticmethod
    def _sorted(order: Order, now: float, jobs: list[Job]) -> list[Job]:
        """``jobs``, given in FCFS order, sorted by ``order.key`` at ``now``.

        A stable sort by the policy's score alone (then by class, stably) leaves equal keys in FCFS
        order, which is the key's tie rule (r, then seq, then id): the same order as sorting by the whole
        key, without a tuple and two method calls per job (the sort was 85 % of an LEXP simulation).
        """
        score, descending = sort_score(order.policy)
        scores = [score(job, now) for job in jobs]
        ranked = [jobs[i] for i in sorted(range(len(jobs)), key=scores.__getitem__, reverse=descending)]
        if order.by_class:
            ranked.sort(key=_qclass)
        return ranked

    def ordered(self, order: Order, now: float) -> list[Job]:
        return list(self.iterate(order, now))


def first_blocked(jobs: Iterable[Job], free: int) -> tuple[list[Job], Job | None, int]:
    """Take ``jobs`` in order while each fits in what is left of ``free`` processors.

    Returns the jobs taken, the first job that does not fit (None if all do)
    and the processors left: step 1 of EASY and PV-EASY, and the fairness
    monitor's "first blocked job of a pass".
    """
    taken: list[Job] = []
    for job in jobs:
        if job.procs > free:
            return taken, job, free
        taken.append(job)
        free -= job.procs
    return taken, None, free
