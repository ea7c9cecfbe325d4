"""Backfilling with k reservations, up to conservative backfilling (docs/semantics/scheduling.md#conservative).

The plan (a :class:`~bftune.schedulers.core.profile.Profile`) holds the
running jobs until their planned ends and the reservations of the first k
waiting jobs in primary order; it is kept from pass to pass, as batsched
1.4.0's ``conservative_bf`` keeps its schedule.  One pass:

1. forget the jobs that ended; if one did (or a running job outran its plan),
   the pass *compresses*: every reserved job, in primary order, gives up its
   place and takes the earliest one that fits now (never later than before),
   unless the plan shows it would take the same place again
   (:meth:`~bftune.schedulers.core.profile.Profile.may_move`, the usual case);
2. walk the waiting jobs in primary order: a job among the first k that do
   not start now keeps its reservation, or takes the earliest place in the
   plan; one whose place is now starts there;
3. the others, in backfilling order, start now if they fit in the plan now
   for their whole planned duration: they delay no reservation.

``depth`` 1 is EASY (one reservation, the first waiting job's, recomputed
whenever a job ends; :class:`~bftune.schedulers.core.easy.Easy` is the same
algorithm without a plan), ``ALL`` is conservative backfilling.
"""

from __future__ import annotations

import heapq
import math
from typing import TYPE_CHECKING, Final

from bftune.schedulers.core import machines as ms
from bftune.schedulers.core.decisions import Decisions
from bftune.schedulers.core.easy import QueueOrders, check_reservation_model
from bftune.schedulers.core.jobs import Job
from bftune.schedulers.core.ordering import Order
from bftune.schedulers.core.profile import Profile, intervals_of

if TYPE_CHECKING:  # annotations only: the core's engine drives this algorithm
    from bftune.schedulers.core.engine import Core

#: Every waiting job holds a reservation: conservative backfilling.
ALL: Final = 1 << 62
#: What batsched 1.4.0 adds to every walltime it plans with (its RJMS delay, ``-d``, 5 s by default): the machines
#: model's default planning margin.
BATSCHED_MARGIN: Final = 5.0


class Placed:
    """A rectangle of the plan: a running job until its planned end, or a reservation."""

    __slots__ = ("start", "end", "procs", "mask")

    def __init__(self, start: float, end: float, procs: int, mask: int) -> None:
        self.start = start
        self.end = end
        self.procs = procs
        self.mask = mask  # its machines as a bit set (machines model; 0 in the count model)


class Conservative(QueueOrders):
    """Backfilling that reserves the first ``depth`` waiting jobs in primary order."""

    may_kill = False

    def __init__(self, primary: Order, backfill: Order | None = None, reservation: str = "count",
                 depth: int = ALL, margin: float = 0.0) -> None:
        check_reservation_model(reservation)
        if depth < 1:
            raise ValueError(f"the number of reservations must be at least 1, got {depth}")
        self.primary = primary
        self.backfill = backfill if backfill is not None else primary
        self.reservation = reservation
        self.depth = depth
        self.margin = margin  # added to every planned duration (batsched's RJMS delay)
        self.plan: Profile | None = None
        self.running: dict[str, Placed] = {}  # by job id: what the plan holds for each running job
        self.reserved: dict[str, Placed] = {}  # by job id: the reservations
        self._ends: list[tuple[float, int, str]] = []  # planned ends of running jobs (a heap; stale entries skipped)
        self._count = 0

    def describe(self) -> str:
        machines = self.reservation == "machines"
        if self.depth >= ALL:
            name = "CONS[machines]" if machines else "CONS"
            return f"{name}({self.primary.describe()})"
        name = f"EASY[k={self.depth},machines]" if machines else f"EASY[k={self.depth}]"
        if self.backfill == self.primary:
            return f"{name}({self.primary.describe()})"
        return f"{name}({self.primary.describe()}, {self.backfill.describe()})"

    def expected_start(self, core: Core, head: Job, now: float) -> float:
        """When the blocked ``head`` is expected to start: its reservation, else its earliest place in the plan."""
        held = self.reserved.get(head.id)
        if held is not None:
            return held.start
        if self.plan is None:
            return now
        return max(now, self.plan.fit(head.procs, head.estimate + self.margin)[0])

    # --- the pass ------------------------------------------------------------------------

    def schedule(self, core: Core, now: float, decisions: Decisions) -> None:
        plan = self.plan
        if plan is None:
            plan = self.plan = Profile(core.m, now, self.reservation == "machines")
        plan.advance(now)
        compress = self._forget_ended(core, now)
        if self._replan_overruns(core, now):
            compress = True
        queue = core.queue
        if not queue.jobs:
            return
        for job_id in [job_id for job_id, held in self.reserved.items() if held.start < now]:
            self._drop(job_id)  # its place went by unused (a running job outran its plan): placed again below
        waiting = list(queue.iterate(self.primary, now))
        depth = self.depth
        holders = 0
        later = len(self.reserved)  # reservations of jobs not walked yet
        ranked: list[Job] = [job for job in waiting if job.id in self.reserved] if depth < ALL else []
        others: list[Job] = []
        for job in waiting:
            held = self.reserved.get(job.id)
            if held is not None:
                later -= 1
            if holders >= depth:
                if held is not None:
                    self._drop(job.id)
                others.append(job)
                continue
            if held is None:
                # A new holder: give up the lowest-ranked reservations that would exceed the depth.
                while holders + 1 + later > depth:
                    self._drop(ranked.pop().id)
                    later -= 1
                held = self._place(job, now)
            elif compress and plan.may_move(held.start, held.end, held.procs, held.mask):
                self._drop(job.id)  # batsched: out of the plan, then first fit (src/algo/conservative_bf.cpp)
                held = self._place(job, now)
            if held.start <= now:
                self._start(core, job, held, now, decisions)
            else:
                holders += 1
        if others:
            self._backfill(core, others, now, decisions)

    def _backfill(self, core: Core, others: list[Job], now: float, decisions: Decisions) -> None:
        """Start the jobs without a reservation, in backfilling order, where they fit now."""
        plan = self.plan
        assert plan is not None
        if self.backfill != self.primary:
            chosen = {job.id for job in others}
            others = [job for job in core.queue.iterate(self.backfill, now) if job.id in chosen]
        for job in others:
            if plan.counts[0] == 0:
                break
            if job.procs > plan.counts[0]:
                continue
            duration = job.estimate + self.margin
            start, mask = plan.fit(job.procs, duration, first_only=True)
            if start <= now:
                held = Placed(now, now + duration, job.procs, mask)
                plan.occupy(now, held.end, job.procs, mask)
                self._start(core, job, held, now, decisions)

    # --- keeping the plan ----------------------------------------------------------------

    def _place(self, job: Job, now: float) -> Placed:
        """Reserve ``job``'s earliest place in the plan (now included)."""
        plan = self.plan
        assert plan is not None
        duration = job.estimate + self.margin
        start, mask = plan.fit(job.procs, duration)
        held = Placed(start, start + duration, job.procs, mask)
        plan.occupy(start, held.end, job.procs, mask)
        self.reserved[job.id] = held
        return held

    def _drop(self, job_id: str) -> None:
        held = self.reserved.pop(job_id)
        assert self.plan is not None
        self.plan.release(held.start, held.end, held.procs, held.mask)

    def _start(self, core: Core, job: Job, held: Placed, now: float, decisions: Decisions) -> None:
        """Start ``job`` now on its place: the machines model's machines, else the lowest free ones."""
        self.reserved.pop(job.id, None)
        if self.reservation == "machines":
            alloc = intervals_of(held.mask)
        else:
            alloc = ms.lowest(core.machine.free.intervals, job.procs)
        core.start(job, alloc, now, decisions)
        self.running[job.id] = held
        self._count += 1
        heapq.heappush(self._ends, (held.end, self._count, job.id))

    def _forget_ended(self, core: Core, now: float) -> bool:
        """Give back the rest of the planned time of every job that ended; whether one did."""
        running = core.machine.running
        if len(running) == len(self.running):
            return False  # this algorithm starts every job, so no count changed means no job ended
        plan = self.plan
        assert plan is not None
        for job_id in [job_id for job_id in self.running if job_id not in running]:
            held = self.running.pop(job_id)
            plan.release(now, held.end, held.procs, held.mask)
        return True

    def _replan_overruns(self, core: Core, now: float) -> bool:
        """A running job past its planned end (only with predictions) holds its machines to its walltime.

        The reservations may lie on those machines: all are given up, to be
        placed again in primary order by this pass.  Returns whether one ran over.
        """
        ends = self._ends
        overrun: list[Job] = []
        while ends and ends[0][0] <= now:
            end, _, job_id = heapq.heappop(ends)
            held = self.running.get(job_id)
            if held is not None and held.end == end:
                overrun.append(core.machine.running[job_id])
        if not overrun:
            return False
        for job_id in list(self.reserved):
            self._drop(job_id)
        plan = self.plan
        assert plan is not None
        for job in overrun:
            held = self.running[job.id]
            end = job.expected_end
            if end <= now:
                end = max(job.start + job.walltime, math.nextafter(now, math.inf))
            end += self.margin
            held.end = end
            plan.occupy(now, end, held.procs, held.mask)
            self._count += 1
            heapq.heappush(ends, (end, self._count, job.id))
        return True
