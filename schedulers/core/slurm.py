"""Slurm's main scheduler and backfill scheduler over its multifactor priority (docs/semantics/scheduling.md#slurm).

Slurm 22.05's sched/backfill with priority/multifactor, on processors counted as interchangeable (one
processor per node).  What a pass does:

- the **main scheduler** (``_schedule`` in job_scheduler.c) runs at every submission and job end, walks the
  waiting jobs in priority order, starts each one that fits and stops at the first that does not (its
  partition is then blocked); it tries at most default_queue_depth + 1 jobs, except in the full-queue pass
  it makes every sched_interval (which only matters after a pass cut by the depth, or after priorities
  changed);
- a **backfill pass** (``_attempt_backfill`` in backfill.c) runs at least bf_interval after the previous one,
  as soon as there is more work since (a job submitted, started or ended, priorities recalculated, or the
  last pass started a job or pushed one's start past a reservation), as Slurm's backfill agent does
  (``_more_work``).  It walks the waiting jobs in priority order, testing at most
  bf_max_job_test of them; each gets the earliest start at which its processors stay available for its
  time limit, against the running jobs (until start + walltime) and the reservations made earlier in the
  pass.  A job that can start now starts; one that can start within bf_window gets a reservation, rounded
  to bf_resolution as ``_add_reservation`` rounds it; a later one gets none.

Priorities come from :mod:`.slurm_priority`, recomputed at each PriorityCalcPeriod tick (multiples of it
from time 0, when slurmctld is taken to start); ties go to the earlier submission, then the lower job
number (``sort_job_queue2``).  The algorithm learns of submissions and ends through a hook of its own
(:meth:`SlurmBackfill.events`), which the configuration adds to the core.
"""

from __future__ import annotations

import math
from bisect import insort
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bftune.schedulers.core import machines as ms
from bftune.schedulers.core.decisions import Decisions
from bftune.schedulers.core.durations import format_duration
from bftune.schedulers.core.easy import shadow_time
from bftune.schedulers.core.engine import Hook
from bftune.schedulers.core.jobs import EndState, Job
from bftune.schedulers.core.ordering import Order
from bftune.schedulers.core.profile import Profile
from bftune.schedulers.core.slurm_priority import FairShare, PrioritySettings, fresh_priority, ticks_between

if TYPE_CHECKING:  # annotations only: the core's engine drives this algorithm
    from bftune.schedulers.core.engine import Core

#: SchedulerType values: the main scheduler with backfill passes, or the main scheduler alone.
SCHEDULER_TYPES = ("sched/backfill", "sched/builtin")


@dataclass(frozen=True)
class BackfillSettings:
    """SchedulerType and the SchedulerParameters modelled, durations in seconds.

    No defaults: ``SchedulerConfig`` gives each field the value of its option (in the comments), whose
    default, slurm.conf's, is in the option table.
    """

    enabled: bool  # scheduler_type sched/backfill (sched/builtin: the main scheduler alone)
    interval: float  # bf_interval
    max_job_test: int  # bf_max_job_test
    window: float  # bf_window
    resolution: float  # bf_resolution
    queue_depth: int  # default_queue_depth
    sched_interval: float  # sched_interval

    def describe(self) -> str:
        if not self.enabled:
            return "builtin"
        return (f"bf {format_duration(self.interval)}/{self.max_job_test}/{format_duration(self.window)}"
                f"/{format_duration(self.resolution)}")


@dataclass(frozen=True, eq=False)
class SlurmPriority:
    """The policy "Slurm's priority now": the order of the algorithm's current priorities (higher first).

    Dynamic, since priorities change at every tick; an order of it ranks waiting and running jobs (a
    running job keeps the priority it had when it started) for the fairness metrics.
    """

    algorithm: "SlurmBackfill" = field(repr=False)
    name: str = "SLURM"
    dynamic: bool = True

    def key(self, job: Job, now: float) -> float:
        return -self.algorithm.priorities.get(job.id, 0)


class SlurmEvents(Hook):
    """Tells the algorithm of submissions and ends, when they happen (usage, priorities, pass timing)."""

    def __init__(self, algorithm: "SlurmBackfill") -> None:
        self.algorithm = algorithm
        self.may_kill = False
        self.kill_reason = ""

    def on_submit(self, core: Core, job: Job, now: float) -> None:
        self.algorithm.submitted(core, job, now)

    def on_end(self, core: Core, job: Job, now: float, state: EndState) -> None:
        self.algorithm.ended(core, job, now)


class SlurmBackfill:
    """Slurm's main scheduler, backfill passes and multifactor priority, in the one decision core."""

    may_kill = False

    def __init__(self, priority: PrioritySettings, backfill: BackfillSettings) -> None:
        self.settings = priority
        self.backfill = backfill
        s = self.settings
        self.fairshare = FairShare(s) if s.weight_fairshare and not s.basic else None
        self.priorities: dict[str, int] = {}  # waiting and running jobs' current priorities, by run id
        self._order: list[tuple] = []  # (-priority, submit, seq, id, job) of waiting jobs, sorted
        self._last_tick = -math.inf  # the last PriorityCalcPeriod tick applied
        self._recompute: float | None = None  # a tick the next pass must apply (priorities, a change)
        self._last_backfill = 0.0  # slurmctld starts at time 0: the first pass comes bf_interval after
        # Slurm's backfill agent passes bf_interval after its last pass when "more work" came since (a job
        # submitted, started or ended, priorities recalculated, a pass that started a job or pushed one's
        # planned start past a reservation: backfill.c ``_more_work``).  A pass over a state that did not
        # change since the last pass computed here, with nothing bound by the window or the map's size,
        # decides what that pass decided: it is timed, not computed (``_dirty``, ``_binding``).
        self._more_work = False
        self._dirty = False
        self._binding = False  # the last computed pass depended on where the window ends or on the map's size
        self._window_until = math.inf  # from then on the window takes in a job the last pass left out
        self._pushed = False  # the last computed pass pushed a job's start past a reservation
        self._event_at = -math.inf  # the time of the last submission or end: a main scheduler pass then
        self._next_full = 0.0  # the next full-queue main pass (every sched_interval from time 0)
        self._full_due = False  # a full-queue main pass may start what an event's pass did not
        self.reservations: dict[str, float] = {}  # job id -> planned start, from the last backfill pass
        self._reserved_at = -math.inf
        self.passes = 0  # backfill passes run (for reports and tests)
        self._priority = Order(SlurmPriority(self))

    def events(self) -> Hook:
        """The hook the core must run for this algorithm (``SchedulerConfig.build`` adds it)."""
        return SlurmEvents(self)

    # --- what the Algorithm protocol asks -------------------------------------------------------

    @property
    def priority(self) -> Order:
        return self._priority

    def use_order(self, order: Order) -> None:
        raise TypeError("Slurm's queue order is its multifactor priority; it takes no other order")

    def describe(self) -> str:
        return f"SLURM({self.settings.describe()}; {self.backfill.describe()})"

    def expected_start(self, core: Core, head: Job, now: float) -> float:
        """The blocked ``head``'s reservation from this instant's backfill pass, else its earliest start."""
        if self._reserved_at == now and head.id in self.reservations:
            return self.reservations[head.id]
        return shadow_time(core.machine.by_end, core.machine.free.size, head.procs)[0]

    # --- events ------------------------------------------------------------------------------------

    def submitted(self, core: Core, job: Job, now: float) -> None:
        self._advance(core, now)
        if self.fairshare is not None:
            self.fairshare.add_user(job.user)
        priority = fresh_priority(self.settings, self.fairshare, job, core.m, now)
        self.priorities[job.id] = priority
        insort(self._order, (-priority, job.submit, job.seq, job.id, job))
        self._more_work = self._dirty = True
        self._event_at = now

    def ended(self, core: Core, job: Job, now: float) -> None:
        self._advance(core, now, job)
        if self.fairshare is not None:
            self.fairshare.charge(job.user, job.procs, now - max(self._last_tick, job.start))
        self.priorities.pop(job.id, None)
        self._more_work = self._dirty = True
        self._event_at = now

    def _advance(self, core: Core, now: float, ending: Job | None = None) -> None:
        """Apply the PriorityCalcPeriod ticks up to ``now`` (a tick at ``now`` included: it comes first)."""
        s = self.settings
        if s.basic:
            return  # priority/basic has no decay thread
        period = s.calc_period
        if self._last_tick == -math.inf:
            self._last_tick = math.floor(now / period) * period  # nothing ran before the first event
            self._recompute = self._last_tick
            return
        if now < self._last_tick + period:
            return
        fairshare = self.fairshare
        for tick in ticks_between(self._last_tick, now, period):
            if fairshare is not None:
                if not fairshare.fair_tree:
                    fairshare.snapshot()  # classic reads the usage of the tick's start
                fairshare.decay(tick - self._last_tick)
                for job in core.machine.running.values():
                    fairshare.charge(job.user, job.procs, tick - max(self._last_tick, job.start))
                if ending is not None:
                    fairshare.charge(ending.user, ending.procs, tick - max(self._last_tick, ending.start))
                if fairshare.fair_tree:
                    fairshare.snapshot()  # Fair Tree ranks the users after the tick's usage
            self._last_tick = tick
        self._recompute = self._last_tick

    # --- the pass ----------------------------------------------------------------------------------

    def schedule(self, core: Core, now: float, decisions: Decisions) -> None:
        self._advance(core, now)
        queue = core.queue
        if not queue.jobs:
            return
        if self._recompute is not None:
            # Slurm's recalculation rewrites every waiting job's priority and so counts as a change for the
            # backfill agent (``decay_apply_weighted_factors`` sets last_job_update), whatever the weights.
            if self.settings.changes_at_ticks:
                self._recompute_priorities(core, self._recompute)
            self._recompute = None
            self._more_work = True
        started = False
        if self._event_at == now or (self._full_due and now >= self._next_full):
            started = self._main(core, now, decisions)
        b = self.backfill
        if b.enabled and self._more_work and now >= self._last_backfill + b.interval:
            bf_started = False
            if self._dirty or self._binding or now >= self._window_until:
                bf_started = self._backfill(core, now, decisions)
                self._dirty = False
                self.passes += 1
            else:
                self._reserved_at = now  # the same reservations as the pass computed last
            started = started or bf_started
            self._last_backfill = now
            self._more_work = bf_started or self._pushed
        if started:
            jobs = queue.jobs
            self._order = [entry for entry in self._order if entry[3] in jobs]
        if queue.jobs:
            self._wakeups(now, decisions)

    def _wakeups(self, now: float, decisions: Decisions) -> None:
        b = self.backfill
        if b.enabled and self._more_work:
            decisions.wakeups.append(self._last_backfill + b.interval)
        if not self.settings.basic:
            decisions.wakeups.append(self._last_tick + self.settings.calc_period)
        if self._full_due:
            decisions.wakeups.append(self._next_full)

    def _recompute_priorities(self, core: Core, tick: float) -> None:
        """Every waiting job's priority at the tick (``decay_apply_weighted_factors``), the queue re-sorted."""
        settings, fairshare, m, priorities = self.settings, self.fairshare, core.m, self.priorities
        order = []
        for job in core.queue.jobs.values():
            priority = fresh_priority(settings, fairshare, job, m, tick)
            priorities[job.id] = priority
            order.append((-priority, job.submit, job.seq, job.id, job))
        order.sort()
        jobs = core.queue.jobs
        before = [entry[3] for entry in self._order if entry[3] in jobs]
        self._order = order
        if before != [entry[3] for entry in order]:
            self._full_due = True  # the main scheduler's periodic pass may start the new first job
            self._dirty = True

    def _main(self, core: Core, now: float, decisions: Decisions) -> bool:
        """The main scheduler: start in priority order until the first job that does not fit."""
        full = False
        if now >= self._next_full:  # a periodic pass's time came: over the full queue when one was due
            full = self._full_due
            si = self.backfill.sched_interval
            self._next_full = (math.floor(now / si) + 1) * si
            self._full_due = False
        limit = math.inf if full else self.backfill.queue_depth + 1
        free = core.machine.free
        tried = 0
        started = False
        for entry in self._order:
            job = entry[4]
            if job.id not in core.queue.jobs:
                continue
            if tried >= limit:
                self._full_due = True  # the rest waits for the full-queue pass
                break
            tried += 1
            if job.procs > free.size:
                break
            core.start(job, ms.lowest(free.intervals, job.procs), now, decisions)
            started = True
        if started:
            self._more_work = self._dirty = True
        return started

    def _backfill(self, core: Core, now: float, decisions: Decisions) -> bool:
        """One backfill pass; returns whether it started a job (sets ``_pushed`` and ``_binding``)."""
        machine = core.machine
        free = machine.free
        queue = core.queue
        self.reservations = {}
        self._reserved_at = now
        b = self.backfill
        res = b.resolution
        profile = Profile.of_running(now, free.size, machine.by_end)
        running = Profile.of_running(now, free.size, machine.by_end)  # without reservations: Slurm's will-run estimate
        begin = math.floor(now / res) * res
        window_end = math.floor((now + b.window) / res) * res
        bounds = {window_end}  # the node space map's record ends
        records = 1
        tested = 0
        started = pushed = binding = False
        clips = clip_procs = 0
        beyond = math.inf  # the earliest start the window's move can change (a job left out, one past a clip)
        order = self._order
        smallest_after, shortest_after = _smallest_after(order)
        avail = profile.counts
        jobs = queue.jobs
        for index, entry in enumerate(order):
            job = entry[4]
            if job.id not in jobs:
                continue
            if tested >= b.max_job_test:
                break
            if pushed and (avail[0] < smallest_after[index]
                           or profile.lowest(now, now + shortest_after[index]) < smallest_after[index]):
                # No job from here on can start now (each needs at least the fewest processors for at least
                # the shortest time), and the pass is known to push a start: the rest would only reserve.
                break
            tested += 1
            procs = job.procs
            limit = job.walltime
            start = profile.fit(procs, limit, inclusive=True)[0]
            if start <= now:
                core.start(job, ms.lowest(free.intervals, procs), now, decisions)
                profile.occupy(now, now + limit, procs, 0)
                running.occupy(now, now + limit, procs, 0)
                started = True
                continue
            if not pushed and start > running.fit(procs, limit, inclusive=True)[0]:
                pushed = True  # backfill.c sets last_job_update when a reservation pushes a start (TRY_LATER)
            if clip_procs and start + limit >= window_end and (
                    profile.lowest(max(start, window_end), start + limit, inclusive=True) < procs + clip_procs):
                # Its place reaches past the window's end, where the clipped reservations will reach as the
                # window moves, with too few processors to spare for them: it holds until the window's end
                # passes its start.
                beyond = min(beyond, start)
            if start > now + b.window:
                beyond = min(beyond, start)
                continue  # too far ahead: no reservation
            if records >= b.max_job_test:  # bf_node_space_size, bf_max_job_test by default
                binding = True
                break
            first = max(math.floor(start / res) * res, begin)
            last = max(math.floor((start + limit) / res) * res, first + res)
            if first not in bounds:
                bounds.add(first)
                records += 1
            if last < window_end and last not in bounds:
                bounds.add(last)
                records += 1
            if last > window_end:
                clips += 1
                clip_procs += procs
                last = window_end
            profile.occupy_free(first, min(start, last), procs)
            profile.occupy(start, last, procs, 0)
            self.reservations[job.id] = start
        self._pushed = pushed
        # A later pass over the same state reaches the same decisions unless the window's end reaches the
        # start of a job it left out or of one that looked past the window's end behind a reservation clipped
        # there, or the map could fill up with the reservations' ends the window's end now takes in.
        self._binding = binding or records + clips >= b.max_job_test
        self._window_until = beyond - b.window
        return started


def _smallest_after(order: list[tuple]) -> tuple[list[int], list[float]]:
    """For each entry of ``order``, the fewest processors and the shortest time limit asked from it on."""
    n = len(order)
    procs_after = [0] * n
    limit_after = [0.0] * n
    procs = 2**62
    limit = math.inf
    for i in range(n - 1, -1, -1):
        job = order[i][4]
        if job.procs < procs:
            procs = job.procs
        if job.walltime < limit:
            limit = job.walltime
        procs_after[i] = procs
        limit_after[i] = limit
    return procs_after, limit_after
