"""The local driver: an event-driven simulator with Batsim's semantics (docs/semantics/scheduling.md#batsim-semantics).

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

import hashlib
import heapq
from dataclasses import dataclass, field
from typing import Callable

from bftune.support.gcpause import paused_gc
from bftune.schedulers.core.easy import Easy
from bftune.schedulers.core.engine import Core
from bftune.schedulers.core.jobs import EndState, Job, delay_outcome
from bftune.schedulers.core.ordering import Order
from bftune.schedulers.drivers.local.runs import REJECTED, Run, RunLog, WaitLog
from bftune.workloads.model import JobRecord, name_width

__all__ = ["REJECTED", "Run", "RunLog", "SimResult", "Simulator", "simulate", "PeriodReplay"]


@dataclass
class SimResult:
    """Every run, in completion order (as Batsim writes out_jobs.csv): a sequence of ``Run``."""

    runs: RunLog
    m: int
    workload: str
    algorithm: str
    report: dict = field(default_factory=dict)
    passes: int = 0


class Simulator:
    """Replays a workload through a core; ``run()`` returns a ``SimResult``.

    A job becomes a core ``Job`` when it arrives, not before, and a run
    leaves only a row of columns behind when it ends (``RunLog``): memory
    follows the jobs in the system, plus a few words per finished run.
    """

    def __init__(self, jobs, m: int, core: Core, workload: str = "w0",
                 on_pass: Callable[[float, object], None] | None = None, waits_only: bool = False) -> None:
        self.core = core
        self.m = m
        self.workload = workload
        self.on_pass = on_pass
        records = jobs if isinstance(jobs, list) else list(jobs)
        submits = [float(r.submit) for r in records]
        if not _in_arrival_order(records, submits):
            records = sorted(records, key=_arrival_key)  # a Trace is already sorted
            submits = [float(r.submit) for r in records]
        self.records = records
        self.width = name_width(r.id for r in records)
        # A list, not an array: compiled, reading a list[float] is a C access, an array's item a generic
        # look-up (three per job in the loop); it lives only as long as the simulation.
        self._submits: list[float] = submits
        # Runs submitted and not yet ended: name -> (job, index of its record, submission time of the run).
        self._active: dict[str, tuple[Job, int, float]] = {}
        self._killed_jobs: dict[str, int] = {}  # first run's name -> record index, for reruns' true runtime
        # What a finished run leaves: a full row, or only its wait (``waits_only``: a period replay's needs).
        self.finished: RunLog | WaitLog = WaitLog() if waits_only else RunLog(records, self.width)
        # Planned ends: a heap of their distinct times, and each time's runs in the order they were planned
        # (the order they end in at that time).  A heap of (time, tie, run, state) tuples compared tuples
        # element by element, the generic way: a heap of floats costs a third of that.
        self._end_times: list[float] = []
        self._ends_at: dict[float, list[tuple[str, EndState]]] = {}
        self._wakeups: list[float] = []
        self.passes = 0
        self.true_runtime = core.runtime_oracle = _Oracle(records, self._active, self._killed_jobs)

    def active_jobs(self) -> list[Job]:
        """The runs submitted and not yet ended (waiting or running), for observers checking invariants."""
        return [entry[0] for entry in self._active.values()]

    # --- helpers --------------------------------------------------------------

    def _pass(self, now: float) -> list:
        core = self.core
        decisions = core.decide(now)
        self.passes += 1
        active = self._active
        if decisions.rejects:
            for reject in decisions.rejects:
                job, index, subtime = active.pop(reject.job.id)
                self.finished.add(index, job, subtime, -1.0, REJECTED)
        records = self.records
        ends_at = self._ends_at
        for job in decisions.starts:
            duration, state = delay_outcome(float(records[active[job.id][1]].runtime), job.walltime)
            end = now + duration
            due = ends_at.get(end)
            if due is None:
                ends_at[end] = [(job.id, state)]
                heapq.heappush(self._end_times, end)
            else:
                due.append((job.id, state))
        if decisions.wakeups:
            for t in decisions.wakeups:
                heapq.heappush(self._wakeups, t)
        if self.on_pass is not None:
            self.on_pass(now, decisions)
        return decisions.kills

    def _end(self, run_id: str, now: float, state: EndState) -> Job | None:
        """Apply a run's end; returns the rerun the core queued for it, if any."""
        job, index, subtime = self._active.pop(run_id)
        # ``_value_`` (the member's value, an instance attribute) rather than ``value``, a property
        # written in Python: once per run, it was 2 % of a compiled simulation.
        self.finished.add(index, job, subtime, now, state._value_)
        return self.core.end(run_id, now, state)

    # --- main loop --------------------------------------------------------------

    def run(self) -> SimResult:
        if not isinstance(self.finished, RunLog):
            raise TypeError("a waits_only simulator keeps no runs: call total_wait()")
        self._loop()
        return SimResult(runs=self.finished.seal(), m=self.m, workload=self.workload,
                         algorithm=self.core.describe(), report=self.core.report(), passes=self.passes)

    def total_wait(self) -> float:
        """Run a ``waits_only`` simulation; the summed waits of its runs."""
        if not isinstance(self.finished, WaitLog):
            raise TypeError("total_wait() needs a waits_only simulator")
        self._loop()
        return self.finished.total()

    def _loop(self) -> None:
        records = self.records
        submits = self._submits
        width = self.width
        n = len(records)
        i = 0
        end_times = self._end_times
        ends_at = self._ends_at
        wakeups = self._wakeups
        core = self.core
        active = self._active
        heappop = heapq.heappop
        inf = float("inf")
        killed_runs: set[str] = set()
        while True:
            t = submits[i] if i < n else inf
            if end_times and end_times[0] < t:
                t = end_times[0]
            if wakeups and wakeups[0] < t:
                t = wakeups[0]
            if t == inf:
                break
            # Completions at t (normal ends and walltime kills) free machines first.
            happened = False
            if end_times and end_times[0] == t:
                heappop(end_times)
                for run_id, state in ends_at.pop(t):  # ending the runs plans no new end
                    if killed_runs and run_id in killed_runs:  # the planned end of a run a kill already ended
                        killed_runs.discard(run_id)
                        continue
                    happened = True
                    self._end(run_id, t, state)  # a run that ends by itself or at its walltime: no rerun
            while i < n and submits[i] == t:
                r = records[i]
                job = Job(str(r.id).zfill(width), r.id, t, r.procs, float(r.walltime), r.user)
                active[job.id] = (job, i, t)
                core.submit(job, t)
                i += 1
                happened = True
            while wakeups and wakeups[0] == t:
                heappop(wakeups)
                happened = True
            if not happened:  # only stale ends of killed runs: Batsim would not call the scheduler
                continue
            kills = self._pass(t)
            # Same-timestamp follow-up: the kills' acknowledgement (machines freed,
            # reruns queued with their original r_j), then a pass.
            while kills:
                for kill in kills:
                    run_id = kill.job.id
                    index = active[run_id][1]
                    self._killed_jobs[kill.job.first_id] = index
                    rerun = self._end(run_id, t, EndState.COMPLETED_KILLED)
                    killed_runs.add(run_id)
                    if rerun is not None:
                        active[rerun.id] = (rerun, index, t)
                kills = self._pass(t)
        if active:
            stuck = ", ".join(sorted(active)[:5])
            raise RuntimeError(f"simulation ended with {len(active)} jobs never finished (e.g. {stuck}): "
                               "the scheduler left them waiting with nothing left to wake it")


class _Oracle:
    """A job's actual work (its delay), for clairvoyant baselines only (a rerun's is its job's).

    An object of its own rather than a bound method of the simulator: the
    core keeps it, and a core -> simulator -> core cycle would keep every
    replayed period's simulator alive while the garbage collector is paused
    (the full-feedback selector replays 12 policies per period).
    """

    __slots__ = ("records", "active", "killed")

    def __init__(self, records: list, active: dict[str, tuple[Job, int, float]], killed: dict[str, int]) -> None:
        self.records, self.active, self.killed = records, active, killed

    def __call__(self, job: Job) -> float:
        entry = self.active.get(job.id)
        index = entry[1] if entry is not None else self.killed[job.first_id]
        return float(self.records[index].runtime)


def _arrival_key(record) -> tuple:
    return (record.submit, record.id)


def _in_arrival_order(records: list, submits: list[float]) -> bool:
    """Whether ``records`` (with their submission times ``submits``) are in (submit, id) order.

    The times are compared as floats (one attribute read per record, not four per pair: compiled, a read of
    a record's attribute is a generic look-up); ids only where two times are equal."""
    for i in range(1, len(submits)):
        if submits[i] < submits[i - 1] or (submits[i] == submits[i - 1] and records[i].id < records[i - 1].id):
            return False
    return True


def simulate(jobs, m: int, core: Core, workload: str = "w0") -> SimResult:
    """Run ``jobs`` (JobRecords) on an m-processor machine under ``core``."""
    with paused_gc():
        return Simulator(jobs, m, core, workload).run()


@dataclass(frozen=True)
class PeriodReplay:
    """w(t; P) for full/noisy feedback: the summed waits of a period's jobs replayed alone
    under EASY(P, Theta) from an empty machine, in this simulator (docs/semantics/learning.md#online-selection).

    Handed to the policy-selection hook by the configuration, so that the hook
    never reaches for a driver itself; a frozen dataclass so that it pickles.

    ``memo`` (optional) maps :func:`replay_key` to a result: a replay is a pure
    function of its jobs, machine, policy, threshold and reservation model, so
    runs that replay the same periods (full and noisy feedback on one resampled
    trace replay identical ones) can share them; a campaign hands one table to
    the runs of a group (``experiments/campaign/runner.py``).  Results are the
    same floats with or without it.
    """

    threshold: float
    reservation: str = "count"
    memo: dict[str, float] | None = field(default=None, compare=False, repr=False)

    def __call__(self, jobs: list[JobRecord], m: int, policy: str) -> float:
        if not jobs:
            return 0.0
        if self.memo is None:
            return self._replay(jobs, m, policy)
        key = replay_key(jobs, m, policy, self.threshold, self.reservation)
        wait = self.memo.get(key)
        if wait is None:
            wait = self.memo[key] = self._replay(jobs, m, policy)
        return wait

    def _replay(self, jobs: list[JobRecord], m: int, policy: str) -> float:
        order = Order.of(policy, self.threshold)
        with paused_gc():
            return Simulator(jobs, m, Core(m, Easy(order, order, reservation=self.reservation)),
                             waits_only=True).total_wait()


def replay_key(jobs: list[JobRecord], m: int, policy: str, threshold: float, reservation: str) -> str:
    """Everything a period replay's result depends on, hashed (the jobs' ids break ties, so they are in)."""
    text = repr((m, policy, threshold, reservation,
                 [(j.id, j.submit, j.procs, j.runtime, j.walltime) for j in jobs]))
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()
