"""Metrics of SPEC section 3, computed from out_jobs.csv-shaped tables.

Both backends write the same table, so the same code summarises a local run
and a Batsim run.  Killed runs (``COMPLETED_KILLED``) are merged back onto
their job: a rerun is named ``<job>#<n>`` and keeps the job's original
submission time r_j, which is the submission time of its first run.  Wait and
bounded slowdown use r_j and the final (not killed) run.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

KILLED = "COMPLETED_KILLED"
REJECTED = "REJECTED"  # a job the scheduler rejected (it can never run): counted, never in the metrics


def job_table(df: pd.DataFrame) -> pd.DataFrame:
    """One row per job (runs merged): r, q, start/end of the final run, kills, wasted work.

    Columns: job, workload, submit, procs, walltime, start, end, runtime (final
    run's execution time), wait, state, kills, total_run_time, wasted_work.
    Rejected jobs never ran: they are left out (``summarize`` counts them).
    """
    df = df[df["final_state"] != REJECTED] if len(df) else df
    if df.empty:
        return pd.DataFrame(columns=["job", "workload", "submit", "procs", "walltime", "start", "end", "runtime",
                                     "wait", "state", "kills", "total_run_time", "wasted_work"])
    runs = df.copy()
    runs["job"] = runs["job_id"].astype(str).str.split("#", n=1).str[0]
    runs["killed"] = runs["final_state"] == KILLED
    runs["work"] = runs["execution_time"] * runs["requested_number_of_resources"]
    key = ["workload_name", "job"]
    grouped = runs.groupby(key, sort=False)
    first_submit = grouped["submission_time"].min()  # reruns are submitted later
    kills = grouped["killed"].sum()
    total_run = grouped["execution_time"].sum()
    wasted = runs[runs["killed"]].groupby(key, sort=False)["work"].sum()
    final = runs[~runs["killed"]].set_index(key)
    if final.index.has_duplicates:
        dup = final.index[final.index.duplicated()][0]
        raise ValueError(f"job {dup[1]} of workload {dup[0]} has more than one run that was not killed")
    out = pd.DataFrame({
        "submit": first_submit,
        "kills": kills.astype(int),
        "total_run_time": total_run,
    })
    out["wasted_work"] = wasted.reindex(out.index).fillna(0.0)
    out = out.join(final[["requested_number_of_resources", "requested_time", "starting_time", "finish_time",
                          "execution_time", "final_state"]], how="inner")
    out = out.rename(columns={"requested_number_of_resources": "procs", "requested_time": "walltime",
                              "starting_time": "start", "finish_time": "end", "execution_time": "runtime",
                              "final_state": "state"})
    out["wait"] = out["start"] - out["submit"]
    out = out.reset_index().rename(columns={"workload_name": "workload"})
    return out


def bounded_slowdown(jobs: pd.DataFrame, tau: float) -> pd.Series:
    """bsld_j = max((end - r) / max(p, tau), 1)."""
    return np.maximum((jobs["end"] - jobs["submit"]) / np.maximum(jobs["runtime"], tau), 1.0)


def summarize(df: pd.DataFrame, m: int, tau: float = 10.0) -> dict:
    """Every per-run metric of SPEC section 3 that out_jobs.csv supports."""
    jobs = job_table(df)
    n = len(jobs)
    rejected = int((df["final_state"] == REJECTED).sum()) if len(df) else 0
    if n == 0:
        return {"jobs": 0, "runs": int(len(df)), "rejected": rejected, "avg_wait": math.nan, "max_wait": math.nan,
                "avg_bsld": math.nan, "max_bsld": math.nan, "mwbs": math.nan, "utilization": math.nan, "tau": tau}
    bsld = bounded_slowdown(jobs, tau)
    q = jobs["procs"].astype(float)
    span = float(jobs["end"].max() - jobs["submit"].min())
    work = float((jobs["runtime"] * q).sum())
    restarted = jobs[jobs["kills"] > 0]
    killed_runs = df[df["final_state"] == KILLED]
    rtw = ((restarted["total_run_time"] - restarted["runtime"]) / restarted["runtime"].where(restarted["runtime"] > 0))
    return {
        "jobs": int(n),
        "runs": int(len(df)),
        "rejected": rejected,
        "avg_wait": float(jobs["wait"].mean()),
        "max_wait": float(jobs["wait"].max()),
        "avg_bsld": float(bsld.mean()),
        "max_bsld": float(bsld.max()),
        "mwbs": float((bsld * q).sum() / q.sum()),
        "utilization": work / (m * span) if span > 0 else math.nan,
        "makespan": float(jobs["end"].max()),
        "first_submit": float(jobs["submit"].min()),
        "avg_turnaround": float((jobs["end"] - jobs["submit"]).mean()),
        "walltime_reached": int((jobs["state"] == "COMPLETED_WALLTIME_REACHED").sum()),
        "killed_runs": int(len(killed_runs)),
        "restarted_jobs": int(len(restarted)),
        "killed_jobs": int(len(restarted)),  # jobs killed at least once (each was restarted)
        "wasted_work": float(jobs["wasted_work"].sum()),
        "mean_kills_per_restarted_job": float(restarted["kills"].mean()) if len(restarted) else 0.0,
        "mean_rtw": float(rtw.mean()) if len(restarted) else 0.0,
        "tau": tau,
        "m": int(m),
    }


def per_period(df: pd.DataFrame, period: float, tau: float = 10.0, origin: float | None = None) -> pd.DataFrame:
    """AvgWait, MaxWait and AVGbsld of jobs grouped by the period of their submission."""
    jobs = job_table(df)
    if jobs.empty:
        return pd.DataFrame(columns=["period", "start", "jobs", "avg_wait", "max_wait", "avg_bsld"])
    start = jobs["submit"].min() if origin is None else origin
    jobs["period"] = ((jobs["submit"] - start) // period).astype(int)
    jobs["bsld"] = bounded_slowdown(jobs, tau)
    g = jobs.groupby("period")
    out = pd.DataFrame({
        "jobs": g.size(),
        "avg_wait": g["wait"].mean(),
        "max_wait": g["wait"].max(),
        "avg_bsld": g["bsld"].mean(),
    }).reset_index()
    out.insert(1, "start", start + out["period"] * period)
    return out


def cumulative_bsld(df: pd.DataFrame, tau: float = 10.0) -> pd.DataFrame:
    """Cumulative bounded slowdown over time (by job completion): the curve the studies plot."""
    jobs = job_table(df)
    jobs["bsld"] = bounded_slowdown(jobs, tau)
    jobs = jobs.sort_values(["end", "job"])
    return pd.DataFrame({"time": jobs["end"].to_numpy(), "cumulative_bsld": jobs["bsld"].cumsum().to_numpy()})
