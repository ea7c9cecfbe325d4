"""One simulated week: the unit ``bftune tune`` runs, stores and judges (worker side).

Weeks are the offline campaign's (``kinds/offline.py``): each
half of the trace (split at its temporal midpoint) is resampled per user and
week (docs/semantics/workloads.md#resampling) with the seed ``derive_seed(seed, "offline", half)``, and week w
of that resampled trace is simulated alone, from an empty machine, until its
jobs finish.  Resampling draws week after week from one generator, so the first
n weeks of a resampled trace do not depend on how long it is: week w is the
same week whatever number of weeks a run plans, and a stored week stays valid
when a later run plans more (``tests/experiments/tune`` checks it).  So the
same seed gives the offline campaign's very weeks.

A candidate with ``warmup`` k is simulated on weeks w-k..w together and judged
on the jobs of week w only (its learned part needs history).

Metrics of a week (docs/semantics/scheduling.md#metrics, the final run of every job): AvgWait, MaxWait,
AVGbsld (tau), MWBS; the testing half also keeps every job's wait and user
(wait CDFs and fairness against EASY-FCFS).
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from functools import lru_cache

from bftune.experiments.campaign.specs import RunSpec, derive_seed
from bftune.experiments.campaign.workloads import prepared_trace, weekly_jobs
from bftune.experiments.runs.metrics import aggregate, bounded_slowdowns
from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.drivers.local.runs import REJECTED, STATE_CODE
from bftune.schedulers.drivers.local.simulator import simulate
from bftune.workloads.model import TraceClock

#: The objectives ``--objective`` accepts: name -> what it is (all lower is better).
OBJECTIVES = {
    "avg_wait": "AvgWait, the mean waiting time",
    "avg_bsld": "AVGbsld, the mean bounded slowdown (tau)",
    "mwbs": "MWBS, the bounded slowdown weighted by processors",
    "max_wait": "MaxWait, the largest waiting time",
}
METRICS = ("avg_wait", "max_wait", "avg_bsld", "mwbs")
_SKIPPED = {STATE_CODE["COMPLETED_KILLED"], STATE_CODE[REJECTED]}


@dataclass(frozen=True)
class Source:
    """Where the workers read the trace (``trace``: a file path or ``synthetic:N:M:SEED``) and how."""

    trace: str
    path: str | None = None
    procs: int | None = None
    walltime_from_runtime: bool = False
    lenient: bool = False
    cleaning: str = "drop-overruns"
    timezone: str | None = None
    dump: tuple = ()  # a Slurm dump's reading options (bftune.workloads.read.dump_reading pairs)
    holdout: float = 0.0  # the last share of the log kept out of the search: the validation period


def half_seed(seed: int, split: str) -> int:
    """The resampling seed of a half: the offline campaign's (``kinds/offline.py``), so weeks are the same."""
    return derive_seed(seed, "offline", split)


def spec_of(source: Source, split: str, pool: int, seed: int) -> RunSpec:
    """The offline campaign's run spec whose resampled trace holds these weeks (its workload preparation)."""
    return RunSpec(kind="offline", trace=source.trace, split=split, weeks=pool, resample_seed=half_seed(seed, split),
                   options={}, trace_path=source.path, procs=source.procs,
                   walltime_from_runtime=source.walltime_from_runtime, lenient=source.lenient,
                   cleaning=source.cleaning, timezone=source.timezone, dump=dict(source.dump),
                   holdout=source.holdout)


@lru_cache(maxsize=2)
def pool(source: Source, split: str, weeks: int, seed: int) -> tuple[int, list[list], TraceClock]:
    """``(m, weeks, clock)``: the half's resampled trace cut into ``weeks`` weeks, once per process and half."""
    spec = spec_of(source, split, weeks, seed)
    m, cut = weekly_jobs(spec)
    return m, cut, prepared_trace(spec).clock


def week_metrics(result, judged_from: float, tau: float, keep_jobs: bool) -> dict:
    """The metrics of the jobs submitted at or after ``judged_from`` (the judged week), from the run log's columns."""
    log = result.runs.seal()
    records = log.records
    judged = [(records[index], start, end) for index, state, start, end in zip(log.job, log.state, log.start, log.end)
              if state not in _SKIPPED and records[index].submit >= judged_from]
    n = len(judged)
    if not n:
        return empty_week(keep_jobs)
    submits = [record.submit for record, _, _ in judged]
    starts = [start for _, start, _ in judged]
    ends = [end for _, _, end in judged]
    procs = [record.procs for record, _, _ in judged]
    waits = [start - submit for start, submit in zip(starts, submits)]
    bsld = bounded_slowdowns({"end": ends, "submit": submits, "runtime": [e - b for e, b in zip(ends, starts)]}, tau)
    agg = aggregate(waits, bsld, procs)
    row: dict = {"jobs": n, "avg_wait": agg.avg_wait, "max_wait": agg.max_wait, "avg_bsld": agg.avg_bsld,
                 "mwbs": agg.mwbs}
    if keep_jobs:  # in job order: the same jobs line up, job by job, across candidates of one week
        ids = [record.id for record, _, _ in judged]
        order = sorted(range(n), key=ids.__getitem__)
        row["waits"] = [_number(waits[i]) for i in order]
        row["users"] = [judged[i][0].user for i in order]
        row["procs"] = [judged[i][0].procs for i in order]  # who loses, by job size (rows stored before: none)
    return row


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def empty_week(keep_jobs: bool) -> dict:
    """A resampled week without jobs: no metric (NaN), skipped by the statistics."""
    row: dict = {"jobs": 0, **{metric: math.nan for metric in METRICS}}
    if keep_jobs:
        row["waits"], row["users"] = [], []
    return row


def run_task(task: dict) -> dict:
    """A worker's task: some candidates on some weeks of one half; the rows and what each candidate cost.

    ``task``: ``source`` (a :class:`Source` as a dict), ``split``, ``pool`` (weeks of the resampled
    half), ``seed``, ``tau``, ``weeks`` (indices), ``candidates`` (``key``, ``family``, ``options``,
    ``warmup``) and ``keep_jobs`` (keep each job's wait and user).  Module-level: executors pickle it.
    """
    source = Source(**task["source"])
    m, weeks, clock = pool(source, task["split"], task["pool"], task["seed"])
    rows, costs = [], []
    for candidate in task["candidates"]:
        config = SchedulerConfig.from_options(candidate["options"])
        t0, c0 = time.perf_counter(), time.process_time()
        simulated = 0
        for w in task["weeks"]:
            judged = weeks[w]
            if not judged:
                rows.append({"candidate": candidate["key"], "week": w, **empty_week(task["keep_jobs"])})
                continue
            first = max(0, w - candidate["warmup"])
            jobs = [job for k in range(first, w + 1) for job in weeks[k]]
            result = simulate(jobs, m, config.build(m, clock))
            simulated += len(jobs)
            start = min(job.submit for job in judged)
            rows.append({"candidate": candidate["key"], "week": w,
                         **week_metrics(result, start, task["tau"], task["keep_jobs"])})
        costs.append({"candidate": candidate["key"], "family": candidate["family"],
                      "seconds": time.perf_counter() - t0, "cpu_s": time.process_time() - c0, "jobs": simulated,
                      "weeks": len(task["weeks"])})
    return {"split": task["split"], "rows": rows, "costs": costs}


def task_source(source: Source) -> dict:
    """A :class:`Source` as a task carries it."""
    return asdict(source)


def n_weeks(n: int | None) -> str:
    """``n`` with "week" or "weeks", as the terminal and the report say it ("1 week", "8 weeks")."""
    return f"{n} week" if n == 1 else f"{n} weeks"


def objective_name(objective: str) -> str:
    """The objective as sentences name it ("AvgWait"), not as the option spells it ("avg_wait")."""
    return OBJECTIVES[objective].split(",")[0]
