"""The metrics (docs/semantics/scheduling.md#metrics), computed from out_jobs.csv-shaped columns in pure Python.

Both backends write the same table, so the same code summarises a local run
and a Batsim run.  The input is any mapping from out_jobs.csv column names to
sequences: the local driver's columns built straight from its runs
(:func:`bftune.experiments.runs.outjobs.runs_columns`, no text round trip, no
pandas on ``bftune simulate``'s path) or a DataFrame read from a file
(:func:`bftune.experiments.runs.tables.read_out_jobs`).  A column may be a list, a
tuple, a numpy array or a pandas Series.

Killed runs (``COMPLETED_KILLED``) are merged back onto their job: a rerun is
named ``<job>#<n>`` and keeps the job's original submission time r_j, which
is the submission time of its first run.  Wait and bounded slowdown use r_j
and the final (not killed) run.  Rejected jobs (``REJECTED``: they can never
run) are counted and left out of every other metric.

No numpy at import, and none in :func:`summarize`: ``bftune simulate`` calls
it on every run, and importing numpy alone would cost it about 60 ms and
20 MiB.  On lists, ``map``/``zip``, comprehensions and builtins are about as
fast as numpy was with its conversions of the lists counted.  The numpy
forms that the tables and campaigns want (:func:`merge_jobs`,
:func:`bounded_slowdown`, :func:`fairness_metrics`) import it inside and are
built on the same pure-Python rules (:func:`merged_runs`,
:func:`bounded_slowdowns`).

Sums and means are ``math.fsum``: correctly rounded, so they do not depend
on the order of the rows.  Until numpy was dropped from this module they were
numpy's pairwise sums, so a mean may differ from one computed then (or with
numpy) in its last bits; maxima, minima, counts and every per-job value are
the same to the bit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import compress, repeat
from operator import mul, ne, sub
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Sequence

from bftune.schedulers.core.durations import DurationError, parse_duration
from bftune.schedulers.option import ConfigError

if TYPE_CHECKING:
    import numpy as np

def check_tau(value: object, what: str = "tau") -> float:
    """The bounded slowdown's threshold tau, in seconds: a positive, finite duration (``10``, ``"10s"``).

    The one check of every entry point (``--tau``, the Python API, :func:`bftune.experiments.runs.local.run_local`):
    ``tau=nan`` or ``-1`` once silently changed AVGbsld, ``inf`` made every slowdown 1, and ``"abc"`` or
    ``10**400`` failed deep inside the metrics.
    """
    try:
        tau = parse_duration(value, what, allow_infinite=False)  # type: ignore[arg-type]
    except DurationError as exc:
        raise ConfigError(str(exc)) from None
    if tau <= 0:
        raise ConfigError(f"{what} must be positive (seconds, e.g. 10 or 10s), got {value!r}")
    return tau


KILLED = "COMPLETED_KILLED"
REJECTED = "REJECTED"  # a job the scheduler rejected (it can never run): counted, never in the metrics
WALLTIME = "COMPLETED_WALLTIME_REACHED"

#: The columns of :func:`merge_jobs` and :func:`merged_runs`, one row per job.
JOB_COLUMNS = ("job", "workload", "submit", "procs", "walltime", "start", "end", "runtime", "wait", "state", "kills",
               "total_run_time", "wasted_work")
#: numpy dtypes of :func:`merge_jobs`' columns that are not float.
_OBJECT_COLUMNS = frozenset({"job", "workload", "state"})
_INT_COLUMNS = frozenset({"procs", "kills"})

#: out_jobs.csv columns read per run (the workload's name aside: it may be one name for all), by short name.
_RUN_COLUMNS = {"job": "job_id", "submit": "submission_time", "procs": "requested_number_of_resources",
                "walltime": "requested_time", "state": "final_state", "start": "starting_time",
                "runtime": "execution_time", "end": "finish_time"}

Columns = Mapping[str, Sequence]
#: A table as columns of Python values, one list per name (a row is one index across them).
Table = dict[str, list]


def _values(column: Sequence | np.ndarray) -> list:
    """A column as a list of Python values.

    numpy arrays and pandas Series go through ``tolist`` (Python floats and
    ints: pure-Python arithmetic on numpy scalars is several times slower); a
    list is used as it is, not copied, since every run's summary reads its
    columns once and changes none; any other sequence is copied into a list.
    """
    if isinstance(column, list):
        return column
    tolist = getattr(column, "tolist", None)
    return tolist() if tolist is not None else list(column)


def _workloads(column: Sequence | np.ndarray | str, n: int) -> list:
    """The workload name of each of ``n`` runs: the column, or one name (a str, a 0-d array) for all."""
    names = column.tolist() if hasattr(column, "tolist") else column  # a 0-d array's tolist() is its one name
    return [names] * n if isinstance(names, str) else _values(names)


def _run_table(cols: Columns, state: list, rejected: bool) -> Table:
    """The runs of ``cols`` that were not rejected, as lists keyed by :data:`_RUN_COLUMNS`' short names.

    ``state`` is ``cols``' final_state as a list, and ``rejected`` whether it
    has a rejected run (the caller knows both already: no second pass).
    """
    runs = {short: _values(cols[name]) for short, name in _RUN_COLUMNS.items() if short != "state"}
    runs["state"] = state
    runs["workload"] = _workloads(cols["workload_name"], len(state))
    if rejected:
        keep = list(map(ne, runs["state"], repeat(REJECTED)))
        runs = {short: list(compress(column, keep)) for short, column in runs.items()}
    return runs


def _job_names(ids: list) -> tuple[list[str], str]:
    """Run names as str (a DataFrame may hold them as numbers) and all of them joined, to look for '#' at once."""
    try:
        return ids, "".join(ids)
    except TypeError:  # not all str: convert (the common case, all str, costs one join)
        ids = list(map(str, ids))
        return ids, "".join(ids)


def merged_runs(cols: Columns) -> Table:
    """One row per job (runs merged), in order of each job's first run, as lists: see :data:`JOB_COLUMNS`.

    ``submit`` is r_j, the earliest submission of the job's runs (reruns are
    submitted later); ``runtime`` is the final run's execution time, ``wait``
    = start of the final run - r_j, ``kills`` the number of killed runs,
    ``total_run_time`` the execution time of all runs, ``wasted_work`` the
    processor-seconds of the killed runs.  A job whose runs were all killed
    has no row.  More than one run of a job not killed is an error.

    Values are the input's (Python floats and ints after ``tolist``).  The
    lists may be ``cols``' own lists and may share one another (no copies on
    every run's path): treat them as read-only.
    """
    state = _values(cols["final_state"])
    return _merged_runs(cols, state, REJECTED in state, KILLED in state)


def _merged_runs(cols: Columns, state: list, rejected: bool, killed: bool) -> Table:
    """:func:`merged_runs` for a caller that has ``cols``' final states as a list and knows whether
    one run was rejected and one killed (:func:`summarize` counts them anyway)."""
    runs = _run_table(cols, state, rejected)
    runs["job"], joined = _job_names(runs["job"])
    if killed or "#" in joined:
        return _merge(runs)
    # One run per job (the common case): nothing to merge.
    n = len(runs["job"])
    runtime = runs["runtime"]
    return {"job": runs["job"], "workload": runs["workload"], "submit": runs["submit"], "procs": runs["procs"],
            "walltime": runs["walltime"], "start": runs["start"], "end": runs["end"], "runtime": runtime,
            "wait": list(map(sub, runs["start"], runs["submit"])), "state": runs["state"], "kills": [0] * n,
            "total_run_time": runtime, "wasted_work": [0.0] * n}


def _merge(runs: Table) -> Table:
    """:func:`merged_runs` of runs with kills or reruns: one pass over the runs, accumulating per job.

    Sums run in row order from 0.0, which is what the numpy version's
    ``bincount`` did, so merged values are the same to the bit.
    """
    group_of: dict[tuple, int] = {}  # (workload, job) -> its index, in order of the job's first run
    group = [group_of.setdefault((w, name.partition("#")[0]), len(group_of))
             for w, name in zip(runs["workload"], runs["job"])]
    n = len(group_of)
    r_j, kills, total, wasted, final_of = [math.inf] * n, [0] * n, [0.0] * n, [0.0] * n, [-1] * n
    for row, (g, submit, execution, procs, state) in enumerate(
            zip(group, runs["submit"], runs["runtime"], runs["procs"], runs["state"])):
        if submit < r_j[g]:
            r_j[g] = submit
        total[g] += execution
        if state == KILLED:
            kills[g] += 1
            wasted[g] += execution * procs
        elif final_of[g] >= 0:
            workload, job = list(group_of)[g]
            raise ValueError(f"job {job} of workload {workload} has more than one run that was not killed")
        else:
            final_of[g] = row
    jobs = [g for g in range(n) if final_of[g] >= 0]  # a job whose runs were all killed has no row
    final = [final_of[g] for g in jobs]
    keys = list(group_of)
    start = _pick(runs["start"], final)
    submit = _pick(r_j, jobs)
    return {"job": [keys[g][1] for g in jobs], "workload": [keys[g][0] for g in jobs], "submit": submit,
            "procs": _pick(runs["procs"], final), "walltime": _pick(runs["walltime"], final), "start": start,
            "end": _pick(runs["end"], final), "runtime": _pick(runs["runtime"], final),
            "wait": list(map(sub, start, submit)), "state": _pick(runs["state"], final),
            "kills": _pick(kills, jobs), "total_run_time": _pick(total, jobs), "wasted_work": _pick(wasted, jobs)}


def _pick(column: list, rows: list[int]) -> list:
    """``column``'s values at ``rows``, in that order."""
    return [column[i] for i in rows]


def merge_jobs(cols: Columns) -> dict[str, np.ndarray]:
    """:func:`merged_runs` as numpy arrays, for the tables and campaigns that compute on them.

    Object arrays for ``job``, ``workload`` and ``state``, int64 for ``procs``
    and ``kills``, float for the rest.
    """
    import numpy as np  # not at module level: summarize, on every run's path, needs none

    jobs = merged_runs(cols)
    return {c: np.asarray(jobs[c], dtype=object if c in _OBJECT_COLUMNS else np.int64 if c in _INT_COLUMNS
                          else float) for c in JOB_COLUMNS}


def bounded_slowdowns(jobs: Table, tau: float) -> list[float]:
    """bsld_j = max((end - r) / max(p, tau), 1) of each job of ``jobs`` (lists, as :func:`merged_runs`').

    Written as comparisons rather than calls to ``max`` (four times faster on
    a run's 70,000 jobs), in the order that makes a NaN time give a NaN
    slowdown, as numpy's ``maximum`` does.
    """
    return [1.0 if (bsld := (end - submit) / (tau if runtime < tau else runtime)) < 1.0 else bsld
            for end, submit, runtime in zip(jobs["end"], jobs["submit"], jobs["runtime"])]


def bounded_slowdown(jobs: Mapping[str, Sequence | np.ndarray], tau: float) -> np.ndarray:
    """:func:`bounded_slowdowns` of any columns (numpy arrays, a DataFrame's) as a numpy array."""
    import numpy as np  # not at module level: see merge_jobs

    columns = {c: _values(jobs[c]) for c in ("end", "submit", "runtime")}
    return np.asarray(bounded_slowdowns(columns, tau), dtype=float)


@dataclass(frozen=True)
class Aggregate:
    """The metrics of one set of jobs (docs/semantics/scheduling.md#metrics): what every table reports per set.

    NaN where the set is empty (and ``mwbs`` where no processor count is given or they sum to 0).
    """

    jobs: int
    total_wait: float
    avg_wait: float
    max_wait: float
    avg_bsld: float
    max_bsld: float
    mwbs: float


def aggregate(wait: Sequence[float] | None = None, bsld: Sequence[float] | None = None,
              procs: Sequence[float] | None = None) -> Aggregate:
    """AvgWait, MaxWait, AVGbsld, MaxBsld and MWBS of one set of jobs, given per job (the one definition).

    Every table of a set of jobs calls this: a run's summary (:func:`summarize`), a week or window of an
    offline or index campaign (:func:`period_metrics`), a period or a job class of a classification campaign,
    a judged week of ``bftune tune``, the reproductions' tables.  Which jobs form the set (which runs count) is the
    caller's explicit choice, made when it builds the per-job values: every caller so far takes each job's
    final run (killed runs merged onto their job, their waiting time from the job's first submission) and
    leaves rejected jobs out (:func:`merged_runs`).  A caller that has only waits, or only slowdowns, gives
    those: the others are NaN.  Sums are ``math.fsum`` (correctly rounded: a mean does not depend on the order
    of the rows); a maximum is NaN when a value is, as numpy's.  MWBS = sum(bsld x q) / sum(q).
    """
    waits = [] if wait is None else _values(wait)
    slowdowns = [] if bsld is None else _values(bsld)
    n = max(len(waits), len(slowdowns))
    if n == 0:
        return Aggregate(0, 0.0, math.nan, math.nan, math.nan, math.nan, math.nan)
    total_wait = _sum(waits) if waits else math.nan
    avg_wait = total_wait / n if waits else math.nan
    max_wait = _extreme(max, waits, total_wait) if waits else math.nan
    total_bsld = _sum(slowdowns) if slowdowns else math.nan
    avg_bsld = total_bsld / n if slowdowns else math.nan
    max_bsld = _extreme(max, slowdowns, total_bsld) if slowdowns else math.nan
    mwbs = math.nan
    if procs is not None and slowdowns:
        q = _values(procs)
        weight = _procs_sum(q)
        if weight:
            mwbs = _sum(map(mul, slowdowns, q)) / weight
    return Aggregate(n, total_wait, avg_wait, max_wait, avg_bsld, max_bsld, mwbs)


def period_metrics(runs: Iterable, tau: float) -> dict:
    """jobs, AvgWait, MaxWait, AVGbsld and total wait of one simulation's runs (the local driver's ``Run``s).

    The rules of :func:`summarize` (wait from r_j to the final run's start,
    :func:`bounded_slowdowns` with the final run's execution time; killed and
    rejected runs left out) applied straight to the runs, without building
    out_jobs columns: the offline and index campaigns evaluate hundreds of
    thousands of small weeks and windows.  No job: NaN metrics, total wait 0.
    """
    done = [run for run in runs if run.state != KILLED and run.state != REJECTED]
    n = len(done)
    if n == 0:
        return {"jobs": 0, "avg_wait": math.nan, "max_wait": math.nan, "avg_bsld": math.nan, "total_wait": 0.0}
    submit = [run.original_submit for run in done]
    start = [run.start for run in done]
    end = [run.end for run in done]
    wait = list(map(sub, start, submit))
    bsld = bounded_slowdowns({"end": end, "submit": submit, "runtime": list(map(sub, end, start))}, tau)
    agg = aggregate(wait, bsld)
    return {"jobs": n, "avg_wait": agg.avg_wait, "max_wait": agg.max_wait, "avg_bsld": agg.avg_bsld,
            "total_wait": agg.total_wait}


def _sum(values: Iterable[float]) -> float:
    """The correctly rounded sum (``math.fsum``) of ``values``, streamed (a ``map`` needs no list).

    Where fsum refuses, the answer is numpy's: +inf plus -inf is NaN, and a
    sum past the largest float is +inf (every sum here is of non-negative
    quantities: times, slowdowns, work).
    """
    try:
        return math.fsum(values)
    except ValueError:  # +inf and -inf
        return math.nan
    except OverflowError:  # finite values summing past the largest float
        return math.inf


def _procs_sum(procs: list) -> float:
    """Sum of processor counts: ints (the usual case) summed exactly by ``sum``, twice as fast as fsum."""
    total = sum(procs)
    return float(total) if isinstance(total, int) else _sum(procs)


def _extreme(pick: Callable[[list], float], values: list, total: float) -> float:
    """``max``/``min`` of ``values`` NaN if one is NaN, as numpy's (Python's skips a NaN unless it comes first).

    ``total`` is a sum already taken over these values or over values
    computed from them: only where it is NaN can one of them be NaN, so the
    common case costs no extra pass.
    """
    if math.isnan(total) and any(map(math.isnan, values)):
        return math.nan
    return float(pick(values))


def _empty_summary(runs: int, rejected: int, tau: float) -> dict:
    """The summary of a table with no job that ran (empty, or every job rejected): no metric is defined."""
    return {"jobs": 0, "runs": runs, "rejected": rejected, "avg_wait": math.nan, "max_wait": math.nan,
            "avg_bsld": math.nan, "max_bsld": math.nan, "mwbs": math.nan, "utilization": math.nan, "tau": tau}


def _restarts(jobs: Table) -> tuple[int, float, float]:
    """Jobs restarted (killed at least once), their mean kills, and the mean rtw = (all run time - final) / final.

    rtw is undefined (left out) for a final run of no time; the mean is NaN
    when no job has one.  Means are 0 when no job was restarted.
    """
    kills = jobs["kills"]
    restarted = [j for j, k in enumerate(kills) if k > 0]
    if not restarted:
        return 0, 0.0, 0.0
    runtime, total = jobs["runtime"], jobs["total_run_time"]
    rtw = [(total[j] - runtime[j]) / runtime[j] for j in restarted if runtime[j] > 0]
    rtw = [r for r in rtw if not math.isnan(r)]  # left out, as numpy's nanmean does
    mean_rtw = _sum(rtw) / len(rtw) if any(map(math.isfinite, rtw)) else math.nan
    return len(restarted), sum(kills[j] for j in restarted) / len(restarted), mean_rtw  # int sum: exact


def summarize(cols: Columns, m: int, tau: float = 10.0) -> dict:
    """Every per-run metric (docs/semantics/scheduling.md#metrics) that out_jobs.csv supports (pure Python)."""
    state = _values(cols["final_state"])
    runs = len(state)
    rejected, killed_runs = state.count(REJECTED), state.count(KILLED)
    if runs == rejected:  # no run, or only rejected ones
        return _empty_summary(runs, rejected, tau)
    jobs = _merged_runs(cols, state, rejected > 0, killed_runs > 0)
    n = len(jobs["job"])
    if n == 0:  # every job's runs were all killed
        return _empty_summary(runs, rejected, tau)
    bsld = bounded_slowdowns(jobs, tau)
    q = jobs["procs"]
    end, submit, wait, runtime = jobs["end"], jobs["submit"], jobs["wait"], jobs["runtime"]
    agg = aggregate(wait, bsld, q)
    total_turnaround = _sum(map(sub, end, submit))
    makespan = _extreme(max, end, total_turnaround)
    first_submit = _extreme(min, submit, total_turnaround)
    span = makespan - first_submit
    work = _sum(map(mul, runtime, q))
    if killed_runs:
        wasted = _sum(jobs["wasted_work"])
        n_restarted, mean_kills, mean_rtw = _restarts(jobs)
    else:  # no kills, no waste (and two passes over the jobs saved)
        wasted, n_restarted, mean_kills, mean_rtw = 0.0, 0, 0.0, 0.0
    return {
        "jobs": n,
        "runs": runs,
        "rejected": rejected,
        "avg_wait": agg.avg_wait,
        "max_wait": agg.max_wait,
        "avg_bsld": agg.avg_bsld,
        "max_bsld": agg.max_bsld,
        "mwbs": agg.mwbs,
        "utilization": work / (m * span) if span > 0 else math.nan,
        # PV-EASY's load figures: all work done, killed runs included, and the killed runs'
        # work alone, over m x (last end - first submission) - the capacity of "utilization".
        "total_load": (work + wasted) / (m * span) if span > 0 else math.nan,
        "wasted_load": wasted / (m * span) if span > 0 else math.nan,
        "makespan": makespan,
        "first_submit": first_submit,
        "avg_turnaround": total_turnaround / n,
        "walltime_reached": jobs["state"].count(WALLTIME),
        "killed_runs": killed_runs,
        "restarted_jobs": n_restarted,
        "killed_jobs": n_restarted,  # jobs killed at least once (each was restarted)
        "preempted_share": n_restarted / n,  # preempted jobs over all jobs (PV-EASY's measure of preemption)
        "wasted_work": wasted,
        "mean_kills_per_restarted_job": mean_kills,
        "mean_rtw": mean_rtw,
        "tau": tau,
        "m": int(m),
    }


def _member(ids: np.ndarray, members: set) -> np.ndarray:
    """Which ``ids`` are in ``members`` (hashing: numpy's isin compares object arrays pairwise)."""
    import numpy as np

    return np.fromiter((i in members for i in ids), dtype=bool, count=len(ids))


def _slowdowns(bsld: np.ndarray, q: np.ndarray, mask: np.ndarray, prefix: str) -> dict:
    n = int(mask.sum())
    return {f"{prefix}_jobs": n,
            f"{prefix}_mbs": float(bsld[mask].mean()) if n else math.nan,
            f"{prefix}_mwbs": float((bsld[mask] * q[mask]).sum() / q[mask].sum()) if n else math.nan}


def fairness_metrics(cols: Columns, per_job: dict, m: int, tau: float = 10.0) -> dict:
    """The fairness monitor's per-job findings joined with the out_jobs table (docs/semantics/scheduling.md#pv-easy).

    ``per_job`` is ``FairnessMonitor``'s ``fairness_jobs`` report (blocked and
    backfilled job ids, reservation violations as id -> delay from
    reservation).  Returns the slowdowns of blocked jobs (MBS, MWBS), all and
    grouped by size: big when q > m/4, and for the reservation violations the
    mean parallelism of the victims and the slowdown increment
    delay / max(p, tau) of each.  numpy,
    imported here: this runs only with ``--fairness``.
    """
    import numpy as np

    jobs = merge_jobs(cols)
    bsld = bounded_slowdown(jobs, tau)
    q = jobs["procs"].astype(float)
    ids = jobs["job"]
    blocked = _member(ids, set(per_job.get("blocked", ())))
    big = q > m / 4
    out: dict = {}
    for prefix, mask in (("blocked", blocked), ("blocked_big", blocked & big), ("blocked_small", blocked & ~big)):
        out.update(_slowdowns(bsld, q, mask, prefix))
    violations = per_job.get("violations") or {}
    victim = _member(ids, set(violations))
    if victim.any():
        delay = np.asarray([violations[j] for j in ids[victim]], dtype=float)
        increment = delay / np.maximum(jobs["runtime"][victim], tau)
        out.update({"reservation_violation_mean_procs": float(q[victim].mean()),
                    "reservation_violation_si_mean": float(increment.mean()),
                    "reservation_violation_si_max": float(increment.max())})
    else:
        out.update({"reservation_violation_mean_procs": 0.0, "reservation_violation_si_mean": 0.0,
                    "reservation_violation_si_max": 0.0})
    return out
