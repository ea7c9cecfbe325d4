"""EASY(Pr, Pb, Theta) with two reservation models (docs/semantics/scheduling.md#easy).

One pass:
1. walk the queue in primary order, starting every job that fits, until the
   first job h that does not fit;
2. reserve h: shadow time s from the expected ends of running jobs (the
   ones just started included) and the spare processors at s;
3. walk the other waiting jobs in backfill order and start those that cannot
   delay h; then stop (no further primary starts in this pass).

The "count" model treats processors as interchangeable (extra = processors
free at s minus q_h).  The "machines" model is batsched easy_bf's rule: the
reservation is a concrete machine set R (the lowest-numbered q_h machines
available at s) and a job that runs past s may only use free machines outside
R.  Both give every job the lowest-numbered free machines.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Container, Iterable

from bftune.schedulers.core import machines as ms
from bftune.schedulers.core.decisions import Decisions
from bftune.schedulers.core.jobs import Job
from bftune.schedulers.core.ordering import Order, first_blocked

if TYPE_CHECKING:  # annotations only: the core's engine drives this algorithm
    from bftune.schedulers.core.engine import Core

RESERVATION_MODELS = ("count", "machines")


def check_reservation_model(reservation: str) -> None:
    """Refuse a reservation model that is none of :data:`RESERVATION_MODELS` (EASY's and the plan's of k)."""
    if reservation not in RESERVATION_MODELS:
        raise ValueError(f"unknown reservation model {reservation!r}; choose one of {', '.join(RESERVATION_MODELS)}")


def shadow_time(by_end: Iterable[Job], avail: int, q: int,
                skip: Container[str] | None = None) -> tuple[float, int, list[Job]]:
    """The earliest expected time at which a job of ``q`` processors can start (``avail < q``).

    ``avail`` processors are available now; running jobs (``by_end``: in
    order of expected end) add theirs when they are expected to end, except
    those whose id is in ``skip`` (PV-EASY counts its shadow load as
    available already).  Returns the shadow time (inf if never), the
    processors available then (every job expected to end at or before it
    counted) and the jobs released by then.
    """
    shadow = math.inf
    released: list[Job] = []
    it = iter(by_end)
    for job in it:
        if skip is not None and job.id in skip:
            continue
        avail += job.procs
        released.append(job)
        if avail >= q:
            shadow = job.expected_end
            break
    for job in it:  # jobs ending at the shadow time too
        if job.expected_end > shadow:
            break
        if skip is not None and job.id in skip:
            continue
        avail += job.procs
        released.append(job)
    return shadow, avail, released


class QueueOrders:
    """The primary order and the backfilling order of a pass, switched together by a selector.

    Shared by EASY and the plan of k reservations (``conservative.py``): a selector sees one interface.
    """

    primary: Order
    backfill: Order

    @property
    def priority(self) -> Order:
        return self.primary

    def use_order(self, order: Order) -> None:
        """Both queues by ``order`` (a selector's per-period switch); the next pass re-reads the ranks."""
        self.primary = order
        self.backfill = order


class Easy(QueueOrders):
    """EASY backfilling with a primary and a backfilling order."""

    may_kill = False  # EASY never kills: only hooks (safeguards) or preemptive algorithms do

    def __init__(self, primary: Order, backfill: Order | None = None, reservation: str = "count",
                 backfill_enabled: bool = True) -> None:
        check_reservation_model(reservation)
        self.primary = primary
        self.backfill = backfill if backfill is not None else primary
        self.reservation = reservation
        self.backfill_enabled = backfill_enabled

    def describe(self) -> str:
        if not self.backfill_enabled:
            return f"NOBF({self.primary.describe()})"
        name = "EASY" if self.reservation == "count" else "EASY[machines]"
        if self.backfill == self.primary:
            return f"{name}({self.primary.describe()})"
        return f"{name}({self.primary.describe()}, {self.backfill.describe()})"

    def schedule(self, core: Core, now: float, decisions: Decisions) -> None:
        queue = core.queue
        machine = core.machine
        if not queue.jobs:
            return
        free = machine.free
        if free.size < queue.min_procs:
            return  # no waiting job fits: the walk below would start nothing and reserve nothing
        # 1. Primary starts, in order, until the first job that does not fit.
        fitting, head, _ = first_blocked(queue.iterate(self.primary, now), free.size)
        for job in fitting:
            core.start(job, ms.lowest(free.intervals, job.procs), now, decisions)
        if head is None or not self.backfill_enabled:
            return
        nfree = free.size
        if nfree == 0 or nfree < queue.min_procs:
            # Nothing can be backfilled; the reservation is still worth knowing
            # only for metrics, which compute it themselves when they need it.
            return
        # 2. Reservation of the head.
        shadow, avail, released = shadow_time(machine.by_end, nfree, head.procs)
        # 3. Backfilling in Pb order.
        if self.reservation == "count":
            self._backfill_count(core, head, now, shadow, avail - head.procs, decisions)
        else:
            self._backfill_machines(core, head, now, shadow, released, decisions)

    def expected_start(self, core: Core, head: Job, now: float) -> float:
        """When the blocked ``head`` is expected to start: EASY's shadow time from every running job."""
        return shadow_time(core.machine.by_end, core.machine.free.size, head.procs)[0]

    def _backfill_count(self, core: Core, head: Job, now: float, shadow: float, extra: int,
                        decisions: Decisions) -> None:
        free = core.machine.free.size
        chosen: list[Job] = []
        for job in core.queue.iterate(self.backfill, now):
            q = job.procs
            if q > free or job is head:
                continue
            if now + job.estimate <= shadow:
                chosen.append(job)
                free -= q
            elif q <= extra:
                chosen.append(job)
                free -= q
                extra -= q
            else:
                continue
            if free == 0:
                break
        machine_free = core.machine.free
        for job in chosen:
            core.start(job, ms.lowest(machine_free.intervals, job.procs), now, decisions)

    def _backfill_machines(self, core: Core, head: Job, now: float, shadow: float, released: list,
                           decisions: Decisions) -> None:
        free = core.machine.free
        available = list(free.intervals)
        for job in released:
            available = ms.union(available, job.alloc)
        reserved = ms.lowest(available, head.procs) if ms.count(available) >= head.procs else available
        # Walk in order; allocation depends on the machines left, so work on a copy.
        free_now = ms.MachineSet(list(free.intervals))
        outside = ms.MachineSet(ms.difference(free_now.intervals, reserved))
        chosen: list[tuple[Job, list]] = []
        for job in core.queue.iterate(self.backfill, now):
            q = job.procs
            if q > free_now.size or job is head:
                continue
            if now + job.estimate <= shadow:
                alloc = free_now.take_lowest(q)
                outside = ms.MachineSet(ms.difference(outside.intervals, alloc))
            elif q <= outside.size:
                alloc = outside.take_lowest(q)
                free_now.remove(alloc)
            else:
                continue
            chosen.append((job, alloc))
            if free_now.size == 0:
                break
        for job, alloc in chosen:
            core.start(job, alloc, now, decisions)
