"""The local driver: an event-driven simulator with Batsim's semantics (SPEC section 8).

It feeds a decision ``Core`` exactly what the Batsim driver would feed it, in
the same grouping:

1. at each timestamp t, every completion at t (normal end or walltime kill)
   frees its machines, then every submission at t joins the queue in
   (submit, id) order, requested calls at t are due, and one pass runs;
2. kills decided by a pass take effect at t: their acknowledgement is a
   second batch at t (Batsim's JOB_COMPLETED(KILLED) + JOB_KILLED message)
   in which the killed runs free their machines *and* the core queues their
   reruns (``Core.end`` returns each, keeping the job's r_j); then one pass.
   So a rerun competes for the machines its kill freed with its original
   priority (the Batsim driver registers the rerun and may start it in the
   same reply, which Batsim 4.2 accepts; the JOB_SUBMITTED that acknowledges
   the registration later is not a scheduling event);
3. a job the core rejects (it can never run on this machine) becomes a
   REJECTED row at the pass that rejects it, as Batsim writes one after a
   REJECT_JOB.

A job of delay d and walltime w ends at start + min(d, w); when d >= w it ends
as COMPLETED_WALLTIME_REACHED (Batsim does the same for d == w).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Callable

from bftune.gcpause import paused_gc
from bftune.schedulers.core.easy import Easy
from bftune.schedulers.core.engine import Core
from bftune.schedulers.core.jobs import EndState, Job, delay_outcome
from bftune.schedulers.core.machines import Interval
from bftune.schedulers.core.ordering import Order
from bftune.workloads.model import JobRecord, name_width

REJECTED = "REJECTED"


@dataclass(slots=True)
class Run:
    """One execution attempt of a job: a row of out_jobs.csv."""

    id: str  # run name: "0000015", or "0000015#1" for a rerun
    first_id: str  # the job this run belongs to
    seq: int
    subtime: float  # when this run was submitted (a rerun: its registration time)
    original_submit: float  # r_j of the job
    procs: int
    walltime: float
    runtime: float  # the delay profile (actual work)
    user: int
    start: float = -1.0
    end: float = -1.0
    state: str = ""
    alloc: list[Interval] | None = None
    attempt: int = 0
    info: dict | None = None


@dataclass
class SimResult:
    """Every run, in completion order (as Batsim writes out_jobs.csv)."""

    runs: list[Run]
    m: int
    workload: str
    algorithm: str
    report: dict = field(default_factory=dict)
    passes: int = 0


class Simulator:
    """Replays a workload through a core; ``run()`` returns a ``SimResult``."""

    def __init__(self, jobs, m: int, core: Core, workload: str = "w0",
                 on_pass: Callable[[float, object], None] | None = None) -> None:
        self.core = core
        self.m = m
        self.workload = workload
        self.on_pass = on_pass
        records = list(jobs)
        if any(b.submit < a.submit or (b.submit == a.submit and b.id < a.id) for a, b in zip(records, records[1:])):
            records.sort(key=lambda r: (r.submit, r.id))  # noqa: E731 - local; a Trace is already sorted
        width = name_width(r.id for r in records)
        self._arrivals: list[tuple[float, Job, float]] = [
            (float(r.submit), Job(str(r.id).zfill(width), r.id, float(r.submit), r.procs, float(r.walltime), r.user),
             float(r.runtime))
            for r in records
        ]
        self.runs: dict[str, Run] = {}
        self.finished: list[Run] = []
        self._ends: list[tuple[float, int, str]] = []  # (time, tie, run id)
        self._wakeups: list[float] = []
        self._tie = 0
        self.passes = 0
        core.runtime_oracle = self.true_runtime

    def true_runtime(self, job: Job) -> float:
        """The job's actual work (its delay), for clairvoyant baselines only."""
        return self.runs[job.id].runtime

    # --- helpers --------------------------------------------------------------

    def _register(self, job: Job, runtime: float, now: float) -> None:
        self.runs[job.id] = Run(
            id=job.id, first_id=job.first_id, seq=job.seq, subtime=now, original_submit=job.submit,
            procs=job.procs, walltime=job.walltime, runtime=runtime, user=job.user, attempt=job.attempt,
        )

    def _pass(self, now: float) -> list:
        core = self.core
        decisions = core.decide(now)
        self.passes += 1
        runs = self.runs
        for reject in decisions.rejects:
            run = runs.pop(reject.job.id)
            run.state = REJECTED
            self.finished.append(run)
        for job in decisions.starts:
            run = runs[job.id]
            run.start = now
            run.alloc = job.alloc
            run.info = job.info  # tags are set at submission and start (classes, divider)
            duration = delay_outcome(run.runtime, run.walltime)[0]
            self._tie += 1
            heapq.heappush(self._ends, (now + duration, self._tie, job.id))
        for t in decisions.wakeups:
            heapq.heappush(self._wakeups, t)
        if self.on_pass is not None:
            self.on_pass(now, decisions)
        return decisions.kills

    def _end(self, run_id: str, now: float, state: EndState) -> Job | None:
        """Apply a run's end; returns the rerun the core queued for it, if any."""
        run = self.runs.pop(run_id)
        run.end = now
        run.state = state.value
        self.finished.append(run)
        return self.core.end(run_id, now, state)

    # --- main loop --------------------------------------------------------------

    def run(self) -> SimResult:
        arrivals = self._arrivals
        n = len(arrivals)
        i = 0
        ends = self._ends
        wakeups = self._wakeups
        core = self.core
        runs = self.runs
        inf = float("inf")
        killed_runs: set[str] = set()
        while True:
            t = arrivals[i][0] if i < n else inf
            if ends and ends[0][0] < t:
                t = ends[0][0]
            if wakeups and wakeups[0] < t:
                t = wakeups[0]
            if t == inf:
                break
            # Completions at t (normal ends and walltime kills) free machines first.
            happened = False
            while ends and ends[0][0] == t:
                _, _, run_id = heapq.heappop(ends)
                if run_id in killed_runs:  # the planned end of a run a scheduler kill already ended
                    killed_runs.discard(run_id)
                    continue
                happened = True
                run = runs[run_id]
                state = delay_outcome(run.runtime, run.walltime)[1]
                self._end(run_id, t, state)
            while i < n and arrivals[i][0] == t:
                _, job, runtime = arrivals[i]
                self._register(job, runtime, t)
                core.submit(job, t)
                i += 1
                happened = True
            while wakeups and wakeups[0] == t:
                heapq.heappop(wakeups)
                happened = True
            if not happened:  # only stale ends of killed runs: Batsim would not call the scheduler
                continue
            kills = self._pass(t)
            # Same-timestamp follow-up: the kills' acknowledgement (machines freed,
            # reruns queued with their original r_j), then a pass.
            while kills:
                for kill in kills:
                    run_id = kill.job.id
                    runtime = runs[run_id].runtime
                    rerun = self._end(run_id, t, EndState.COMPLETED_KILLED)
                    killed_runs.add(run_id)
                    if rerun is not None:
                        self._register(rerun, runtime, t)
                kills = self._pass(t)
        if runs:
            stuck = ", ".join(sorted(runs)[:5])
            raise RuntimeError(f"simulation ended with {len(runs)} jobs never finished (e.g. {stuck}): "
                               "the scheduler left them waiting with nothing left to wake it")
        return SimResult(runs=self.finished, m=self.m, workload=self.workload,
                         algorithm=core.describe(), report=core.report(), passes=self.passes)


def simulate(jobs, m: int, core: Core, workload: str = "w0") -> SimResult:
    """Run ``jobs`` (JobRecords) on an m-processor machine under ``core``."""
    with paused_gc():
        return Simulator(jobs, m, core, workload).run()


@dataclass(frozen=True)
class PeriodReplay:
    """w(t; P) for full/noisy feedback: the summed waits of a period's jobs replayed alone
    under EASY(P, Theta) from an empty machine, in this simulator (SPEC section 4).

    Handed to the policy-selection hook by the configuration, so that the hook
    never reaches for a driver itself; a frozen dataclass so that it pickles.
    """

    threshold: float
    reservation: str = "count"

    def __call__(self, jobs: list[JobRecord], m: int, policy: str) -> float:
        if not jobs:
            return 0.0
        order = Order.of(policy, self.threshold)
        result = simulate(jobs, m, Core(m, Easy(order, order, reservation=self.reservation)))
        return float(sum(run.start - run.subtime for run in result.runs))
