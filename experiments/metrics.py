"""Metrics of SPEC section 3, computed from out_jobs.csv-shaped columns with numpy alone.

Both backends write the same table, so the same code summarises a local run
and a Batsim run.  The input is any mapping from out_jobs.csv column names to
sequences: the local driver's columns built straight from its runs
(:func:`bftune.experiments.outjobs.runs_columns`, no text round trip, no
pandas on ``bftune simulate``'s path) or a DataFrame read from a file
(:func:`bftune.experiments.tables.read_out_jobs`).

Killed runs (``COMPLETED_KILLED``) are merged back onto their job: a rerun is
named ``<job>#<n>`` and keeps the job's original submission time r_j, which
is the submission time of its first run.  Wait and bounded slowdown use r_j
and the final (not killed) run.  Rejected jobs (``REJECTED``: they can never
run) are counted and left out of every other metric.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np

KILLED = "COMPLETED_KILLED"
REJECTED = "REJECTED"  # a job the scheduler rejected (it can never run): counted, never in the metrics
WALLTIME = "COMPLETED_WALLTIME_REACHED"

#: The columns of :func:`merge_jobs`, one row per job.
JOB_COLUMNS = ("job", "workload", "submit", "procs", "walltime", "start", "end", "runtime", "wait", "state", "kills",
               "total_run_time", "wasted_work")

Columns = Mapping[str, Sequence]


def _floats(cols: Columns, name: str) -> np.ndarray:
    return np.asarray(cols[name], dtype=float)


def merge_jobs(cols: Columns) -> dict[str, np.ndarray]:
    """One row per job (runs merged), in order of each job's first run: see :data:`JOB_COLUMNS`.

    ``runtime`` is the final run's execution time, ``wait`` = start of the
    final run - r_j, ``kills`` the number of killed runs, ``total_run_time``
    the execution time of all runs, ``wasted_work`` the processor-seconds of
    the killed runs.
    """
    ids = [str(i) for i in cols["job_id"]]
    state = np.asarray(cols["final_state"], dtype=object)
    keep = state != REJECTED
    if not keep.all():
        ids = [i for i, k in zip(ids, keep) if k]
        state = state[keep]
    workload = np.asarray(cols["workload_name"], dtype=object)
    if workload.shape == ():  # one name for every row
        workload = np.full(len(keep), workload.item(), dtype=object)
    workload = workload[keep]
    submit = _floats(cols, "submission_time")[keep]
    procs = np.asarray(cols["requested_number_of_resources"], dtype=np.int64)[keep]
    walltime = _floats(cols, "requested_time")[keep]
    start = _floats(cols, "starting_time")[keep]
    end = _floats(cols, "finish_time")[keep]
    execution = _floats(cols, "execution_time")[keep]
    killed = state == KILLED
    if not killed.any() and not any("#" in i for i in ids):  # one run per job: nothing to merge
        jobs = np.asarray(ids, dtype=object)
        zeros = np.zeros(len(ids))
        return {"job": jobs, "workload": workload, "submit": submit, "procs": procs, "walltime": walltime,
                "start": start, "end": end, "runtime": execution, "wait": start - submit, "state": state,
                "kills": np.zeros(len(ids), dtype=np.int64), "total_run_time": execution.copy(),
                "wasted_work": zeros}
    base = [i.partition("#")[0] for i in ids]
    keys = np.asarray([f"{w}!{b}" for w, b in zip(workload, base)], dtype=object)
    uniq, first, group = np.unique(keys, return_index=True, return_inverse=True)
    n = len(uniq)
    final = np.flatnonzero(~killed)
    counts = np.bincount(group[final], minlength=n)
    if (counts > 1).any():
        g = int(np.flatnonzero(counts > 1)[0])
        raise ValueError(f"job {uniq[g].split('!', 1)[1]} of workload {uniq[g].split('!', 1)[0]} has more than one "
                         "run that was not killed")
    r_j = np.full(n, np.inf)
    np.minimum.at(r_j, group, submit)  # reruns are submitted later
    kills = np.bincount(group, weights=killed, minlength=n).astype(np.int64)
    total = np.bincount(group, weights=execution, minlength=n)
    wasted = np.bincount(group, weights=np.where(killed, execution * procs, 0.0), minlength=n)
    # Jobs with a final run, in order of their first run (as they appear in the table).
    has_final = np.zeros(n, dtype=bool)
    has_final[group[final]] = True
    order = np.argsort(first, kind="stable")
    order = order[has_final[order]]
    final_of = np.empty(n, dtype=np.int64)
    final_of[group[final]] = final
    f = final_of[order]
    return {"job": np.asarray(base, dtype=object)[f], "workload": workload[f], "submit": r_j[order],
            "procs": procs[f], "walltime": walltime[f], "start": start[f], "end": end[f], "runtime": execution[f],
            "wait": start[f] - r_j[order], "state": state[f], "kills": kills[order], "total_run_time": total[order],
            "wasted_work": wasted[order]}


def bounded_slowdown(jobs: Mapping[str, Sequence], tau: float) -> np.ndarray:
    """bsld_j = max((end - r) / max(p, tau), 1)."""
    end, submit, runtime = (np.asarray(jobs[c], dtype=float) for c in ("end", "submit", "runtime"))
    return np.maximum((end - submit) / np.maximum(runtime, tau), 1.0)


def summarize(cols: Columns, m: int, tau: float = 10.0) -> dict:
    """Every per-run metric of SPEC section 3 that out_jobs.csv supports."""
    state = np.asarray(cols["final_state"], dtype=object)
    runs = len(state)
    rejected = int((state == REJECTED).sum())
    jobs = merge_jobs(cols) if runs else {c: np.zeros(0) for c in JOB_COLUMNS}
    n = len(jobs["job"])
    if n == 0:
        return {"jobs": 0, "runs": runs, "rejected": rejected, "avg_wait": math.nan, "max_wait": math.nan,
                "avg_bsld": math.nan, "max_bsld": math.nan, "mwbs": math.nan, "utilization": math.nan, "tau": tau}
    bsld = bounded_slowdown(jobs, tau)
    q = jobs["procs"].astype(float)
    end, submit, wait, runtime = jobs["end"], jobs["submit"], jobs["wait"], jobs["runtime"]
    span = float(end.max() - submit.min())
    work = float((runtime * q).sum())
    wasted = float(jobs["wasted_work"].sum())
    kills = jobs["kills"]
    restarted = kills > 0
    n_restarted = int(restarted.sum())
    if n_restarted:
        final = runtime[restarted]
        with np.errstate(divide="ignore", invalid="ignore"):
            rtw = np.where(final > 0, (jobs["total_run_time"][restarted] - final) / final, np.nan)
        mean_rtw = float(np.nanmean(rtw)) if np.isfinite(rtw).any() else math.nan
        mean_kills = float(kills[restarted].mean())
    else:
        mean_rtw = mean_kills = 0.0
    return {
        "jobs": int(n),
        "runs": int(runs),
        "rejected": rejected,
        "avg_wait": float(wait.mean()),
        "max_wait": float(wait.max()),
        "avg_bsld": float(bsld.mean()),
        "max_bsld": float(bsld.max()),
        "mwbs": float((bsld * q).sum() / q.sum()),
        "utilization": work / (m * span) if span > 0 else math.nan,
        # The PV-EASY study's Table 5: all work done, killed runs included, and the killed runs'
        # work alone, over m x (last end - first submission) - the capacity of "utilization".
        "total_load": (work + wasted) / (m * span) if span > 0 else math.nan,
        "wasted_load": wasted / (m * span) if span > 0 else math.nan,
        "makespan": float(end.max()),
        "first_submit": float(submit.min()),
        "avg_turnaround": float((end - submit).mean()),
        "walltime_reached": int((jobs["state"] == WALLTIME).sum()),
        "killed_runs": int((state == KILLED).sum()),
        "restarted_jobs": n_restarted,
        "killed_jobs": n_restarted,  # jobs killed at least once (each was restarted)
        "preempted_share": n_restarted / n,  # the PV-EASY study's "# JobPreempted / # Total Job"
        "wasted_work": wasted,
        "mean_kills_per_restarted_job": mean_kills,
        "mean_rtw": mean_rtw,
        "tau": tau,
        "m": int(m),
    }


def _member(ids: np.ndarray, members: set) -> np.ndarray:
    """Which ``ids`` are in ``members`` (hashing: numpy's isin compares object arrays pairwise)."""
    return np.fromiter((i in members for i in ids), dtype=bool, count=len(ids))


def _slowdowns(bsld: np.ndarray, q: np.ndarray, mask: np.ndarray, prefix: str) -> dict:
    n = int(mask.sum())
    return {f"{prefix}_jobs": n,
            f"{prefix}_mbs": float(bsld[mask].mean()) if n else math.nan,
            f"{prefix}_mwbs": float((bsld[mask] * q[mask]).sum() / q[mask].sum()) if n else math.nan}


def fairness_metrics(cols: Columns, per_job: dict, m: int, tau: float = 10.0) -> dict:
    """The fairness monitor's per-job findings joined with the out_jobs table (the PV-EASY study).

    ``per_job`` is ``FairnessMonitor``'s ``fairness_jobs`` report (blocked and
    backfilled job ids, reservation violations as id -> delay from
    reservation).  Returns the slowdowns of blocked jobs (MBS, MWBS), all and
    grouped by size: big when q > m/4 (the study's Figures 2-3), and for the
    reservation violations the mean parallelism of the victims and the
    slowdown increment delay / max(p, tau) of each (its Table 2).
    """
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
