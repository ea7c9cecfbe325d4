"""PV-EASY: shadow-load preemption and venture backfilling (docs/semantics/scheduling.md#pv-easy).

Priority is an ``Order`` (FCFS by default).  A running job is
*shadow* while some waiting job has higher priority - equivalently, while it
ranks below the first waiting job h, since step 1 leaves no waiting job
ahead of h - and *sunny* otherwise; a backfilled job turns sunny by itself
once nothing of higher priority waits (nothing is recorded: the rank decides
at every pass).

One pass:

1. walk the queue in priority order, taking every job that fits, until the
   first job h that does not;
2. shadow-load preemption: if h would fit with the processors of the shadow
   load, kill shadow jobs from the lowest priority upward until it does
   (killing stops as soon as h fits; nothing is killed when even the whole
   shadow load would not make room).  Killed runs restart from scratch with
   their original r_j and priority (``Job.rerun``);
3. venture backfilling: h's reservation s comes from the sunny load only
   (shadow processors count as available, they can be preempted), with the
   jobs' planning estimates (a predictor's, else walltimes); first the
   waiting jobs that fit now and are predicted to end by s, nearest
   predicted completion first (ties: r, then id); then, while processors
   stay idle, further waiting jobs that fit, in priority order, whatever
   their prediction (docs/semantics/scheduling.md#pv-easy; option ``venture_fill``: ``shortest`` walks
   them shortest planning estimate first instead, ``none`` leaves the
   processors idle).

Each run venture backfilling starts is tagged in ``Job.info`` under
:data:`VENTURE` with the step that started it, :data:`PREDICTED` (predicted to
end by s) or :data:`FILLED` (filling idle processors); a run started in
priority order (step 1) has no such tag.  The tag costs one small dict per
venture start and lets an analysis of stored runs say which step started
each run (and which of them preemption later killed).

Kills and the two backends.  A killed job keeps its machines until the
driver reports the kill done (the local simulator: a second batch at the
same instant; Batsim: JOB_COMPLETED(KILLED) + JOB_KILLED in a later message
of the same instant).  So a pass that preempts decides its kills *and
nothing else*: the starts of step 1 and h itself are left to the pass that
follows the acknowledgement, at the same simulated time, when the freed
machines are really free and the reruns wait in the queue with their
original priority (so "requeue the killed jobs and go back to 1" happens
literally).  That pass finds the same jobs fitting plus h, may preempt again
for the next blocked job (another round at the same instant), and ends with
venture backfilling.  While any kill is in flight a pass decides nothing, so
an acknowledgement split over several messages cannot change a decision.
Both backends therefore make the same decisions, kills and reruns included,
and no processor is ever promised twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Iterator

from bftune.schedulers.core import machines as ms
from bftune.schedulers.core.decisions import Decisions
from bftune.schedulers.core.easy import shadow_time
from bftune.schedulers.core.jobs import Job
from bftune.schedulers.core.ordering import Order, first_blocked
from bftune.schedulers.core.policies import SPF

if TYPE_CHECKING:  # annotations only: the core's engine drives this algorithm
    from bftune.schedulers.core.engine import Core

PREEMPTION = "shadow-load preemption"
#: Venture backfilling's first step walks waiting jobs by planning estimate (SPF on the
#: estimate), so that the queue keeps that index for it.
_BY_ESTIMATE = Order(SPF)
#: What venture backfilling starts on processors still idle after the jobs predicted to end by the
#: reservation (option ``venture_fill``): further jobs that fit in priority order (docs/semantics/scheduling.md#pv-easy),
#: shortest planning estimate first, or none.
VENTURE_FILLS = ("priority", "shortest", "none")
#: ``Job.info`` key of the venture step that started a run, and its two values (module docstring).
VENTURE = "venture"
PREDICTED = "predicted"
FILLED = "fill"


def _untag(job: Job) -> None:
    """A run started in priority order: no venture tag (a rerun copies its killed run's tags)."""
    info = job.info
    if info is not None and VENTURE in info:
        del info[VENTURE]


def _ending_within(by_estimate: Iterable[Job], horizon: float) -> Iterator[Job]:
    """The jobs (in order of planning estimate) predicted to run at most ``horizon`` seconds."""
    for job in by_estimate:
        if job.estimate > horizon:
            return
        yield job


def _take_fitting(jobs: Iterable[Job], free: int, taken: set[str], chosen: list[Job]) -> int:
    """Take, in order, every job of ``jobs`` not yet taken that fits in what is left of ``free``."""
    for job in jobs:
        if job.procs <= free and job.id not in taken:
            chosen.append(job)
            taken.add(job.id)
            free -= job.procs
            if free == 0:
                break
    return free


class PvEasy:
    """Preemptive venture EASY backfilling over a priority order."""

    may_kill = True

    def __init__(self, priority: Order, fill: str = "priority") -> None:
        if fill not in VENTURE_FILLS:
            raise ValueError(f"venture fill must be one of {', '.join(VENTURE_FILLS)}, not {fill!r}")
        self._priority = priority
        self._fill = fill

    @property
    def priority(self) -> Order:
        return self._priority

    def use_order(self, order: Order) -> None:
        self._priority = order

    def describe(self) -> str:
        fill = "" if self._fill == "priority" else f", venture_fill={self._fill}"
        return f"PV-EASY({self._priority.describe()}{fill})"

    # --- the pass ---------------------------------------------------------------------------

    def schedule(self, core: Core, now: float, decisions: Decisions) -> None:
        if core.killing:
            return  # machines in flux: the pass after the acknowledgement decides
        queue = core.queue
        if not queue.jobs:
            return
        order = self._priority
        free = core.machine.free.size
        # 1. Priority starts while they fit (taken now, applied below unless step 2 preempts).
        fitting, head, free = first_blocked(queue.iterate(order, now), free)
        shadow: list[Job] = []
        if head is not None:
            shadow = self.shadow_load(core, head, now)
            shadow_procs = sum(job.procs for job in shadow)
            # 2. Shadow-load preemption, only when it makes the head fit.
            if free + shadow_procs >= head.procs:
                missing = head.procs - free
                for job in reversed(shadow):  # lowest priority first
                    core.kill(job, PREEMPTION, decisions, requeue=job.rerun())
                    missing -= job.procs
                    if missing <= 0:
                        break
                return
        machine_free = core.machine.free
        for job in fitting:
            _untag(job)
            core.start(job, ms.lowest(machine_free.intervals, job.procs), now, decisions)
        if head is not None and free > 0 and free >= queue.min_procs:
            self._venture(core, head, now, shadow, decisions)

    def shadow_load(self, core: Core, head: Job, now: float) -> list[Job]:
        """The running jobs ranked below ``head`` (the first waiting job), highest priority first."""
        return core.machine.ranked_below(self._priority, head, now)

    def expected_start(self, core: Core, head: Job, now: float) -> float:
        """When the blocked ``head`` is expected to start: from the sunny load only."""
        shadow = self.shadow_load(core, head, now)
        avail = core.machine.free.size + sum(job.procs for job in shadow)
        if avail >= head.procs:
            return now  # preemption makes room now
        return shadow_time(core.machine.by_end, avail, head.procs, {job.id for job in shadow})[0]

    def _venture(self, core: Core, head: Job, now: float, shadow: list[Job], decisions: Decisions) -> None:
        queue = core.queue
        machine = core.machine
        free = machine.free.size
        avail = free + sum(job.procs for job in shadow)
        reserve, _, _ = shadow_time(machine.by_end, avail, head.procs, {job.id for job in shadow})
        chosen: list[Job] = []
        taken: set[str] = {head.id}
        # 3a. Jobs predicted to end by the reservation, nearest predicted completion first.
        horizon = reserve - now
        free = _take_fitting(_ending_within(queue.iterate(_BY_ESTIMATE, now), horizon), free, taken, chosen)
        predicted = len(chosen)
        # 3b. Idle processors left: further jobs that fit, in priority order (or as venture_fill says),
        # whatever their prediction.
        if self._fill != "none" and free > 0 and free >= queue.min_procs:
            rest = _BY_ESTIMATE if self._fill == "shortest" else self._priority
            _take_fitting(queue.iterate(rest, now), free, taken, chosen)
        machine_free = machine.free
        for i, job in enumerate(chosen):
            job.tag(VENTURE, PREDICTED if i < predicted else FILLED)
            core.start(job, ms.lowest(machine_free.intervals, job.procs), now, decisions)
