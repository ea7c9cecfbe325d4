"""out_jobs tables as pandas DataFrames, for campaigns, reports and comparisons.

The numbers come from :mod:`bftune.experiments.runs.metrics` (numpy, one
definition); this module only reads files and shapes frames, so that the
commands that need no frames (``bftune simulate``) never import pandas.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

import pandas as pd

from bftune.experiments.runs.metrics import JOB_COLUMNS, aggregate, bounded_slowdown, merge_jobs
from bftune.experiments.runs.outjobs import COLUMNS, NUMERIC_COLUMNS, all_columns
from bftune.schedulers.drivers.local.simulator import Run, RunLog


def read_out_jobs(path: str | Path) -> pd.DataFrame:
    """Read an out_jobs.csv of either backend; job ids stay strings."""
    try:
        # Text columns keep "" as text; a rejected job's empty times and energy are NaN (never ran).
        df = pd.read_csv(path, dtype={"job_id": str, "workload_name": str, "allocated_resources": str,
                                      "metadata": str, "profile": str}, keep_default_na=False,
                         na_values={c: [""] for c in NUMERIC_COLUMNS})
    except FileNotFoundError:
        raise
    except Exception as exc:  # pandas' parser errors name no file
        raise ValueError(f"{path}: not a readable out_jobs.csv ({exc})") from None
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: not an out_jobs.csv, missing column(s) {', '.join(missing)}")
    return df


def runs_frame(runs: Iterable[Run] | RunLog, workload: str = "w0") -> pd.DataFrame:
    """The same table as out_jobs.csv, in memory, without the text round trip."""
    if not isinstance(runs, RunLog):  # a local result's columns are read as they are
        runs = list(runs)
    if not len(runs):
        return pd.DataFrame({c: pd.Series(dtype=object) for c in COLUMNS})
    return pd.DataFrame(all_columns(runs, workload))


def job_table(df: pd.DataFrame) -> pd.DataFrame:
    """One row per job (runs merged): see :func:`bftune.experiments.runs.metrics.merge_jobs`."""
    if df.empty:
        return pd.DataFrame(columns=list(JOB_COLUMNS))
    return pd.DataFrame(merge_jobs(df))


def per_period(df: pd.DataFrame, period: float, tau: float = 10.0, origin: float | None = None) -> pd.DataFrame:
    """AvgWait, MaxWait and AVGbsld of jobs grouped by the period of their submission."""
    jobs = job_table(df)
    if jobs.empty:
        return pd.DataFrame(columns=["period", "start", "jobs", "avg_wait", "max_wait", "avg_bsld"])
    start = jobs["submit"].min() if origin is None else origin
    jobs["period"] = ((jobs["submit"] - start) // period).astype(int)
    jobs["bsld"] = bounded_slowdown(jobs, tau)
    rows = []
    for number, group in jobs.groupby("period"):
        agg = aggregate(group["wait"], group["bsld"])
        rows.append({"period": number, "jobs": agg.jobs, "avg_wait": agg.avg_wait, "max_wait": agg.max_wait,
                     "avg_bsld": agg.avg_bsld})
    out = pd.DataFrame(rows)
    out.insert(1, "start", start + out["period"] * period)
    return out


def cumulative_bsld(df: pd.DataFrame, tau: float = 10.0) -> pd.DataFrame:
    """Cumulative bounded slowdown over time (by job completion): the curve classification results are plotted as."""
    jobs = job_table(df)
    jobs["bsld"] = bounded_slowdown(jobs, tau)
    jobs = jobs.sort_values(["end", "job"])
    return pd.DataFrame({"time": jobs["end"].to_numpy(), "cumulative_bsld": jobs["bsld"].cumsum().to_numpy()})
