"""Per-job results in Batsim's out_jobs.csv shape, written by both backends.

Local results use exactly Batsim's columns and number formatting so that one
analysis (ours, or Batsim's own tools such as evalys) reads either backend's
output, and so that ``bftune compare`` can diff them row by row.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

from bftune.schedulers.core import machines as ms
from bftune.schedulers.drivers.local.simulator import REJECTED, Run
from bftune.files import atomic_write_text
from bftune.workloads.batsim_json import profile_name

COLUMNS = [
    "job_id", "workload_name", "profile", "submission_time", "requested_number_of_resources",
    "requested_time", "success", "final_state", "starting_time", "execution_time", "finish_time",
    "waiting_time", "turnaround_time", "stretch", "allocated_resources", "consumed_energy", "metadata",
]


NUMERIC_COLUMNS = ("starting_time", "execution_time", "finish_time", "waiting_time", "turnaround_time", "stretch",
                   "consumed_energy")


def _f(x: float) -> str:
    return f"{x:.6f}"


def run_row(run: Run, workload: str = "w0") -> list[str]:
    if run.state == REJECTED:  # as Batsim writes a rejected job: no times, no machines, no energy
        return [run.id, workload, profile_name(run.runtime), _f(run.subtime), str(run.procs), _f(run.walltime),
                "0", REJECTED, "", "", "", "", "", "", "", "", ""]
    execution = run.end - run.start
    wait = run.start - run.subtime
    turnaround = run.end - run.subtime
    stretch = turnaround / execution if execution > 0 else float("nan")
    if run.attempt:
        metadata = str({"parent_job": f"{workload}!{run.first_id}", "nb_resubmit": run.attempt})
    else:
        metadata = ""
    return [
        run.id, workload, profile_name(run.runtime), _f(run.subtime), str(run.procs), _f(run.walltime),
        "1" if run.state == "COMPLETED_SUCCESSFULLY" else "0", run.state, _f(run.start), _f(execution),
        _f(run.end), _f(wait), _f(turnaround), _f(stretch), ms.to_string(run.alloc or []), _f(-1.0), metadata,
    ]


def format_out_jobs(runs: Iterable[Run], workload: str = "w0") -> str:
    """The file's text; like Batsim, the metadata column is always quoted (``""`` when empty)."""
    lines = [",".join(COLUMNS)]
    for run in runs:
        row = run_row(run, workload)
        row[-1] = '"' + row[-1].replace('"', '""') + '"'
        lines.append(",".join(row))
    return "\n".join(lines) + "\n"


def write_out_jobs(runs: Iterable[Run], path: str | Path, workload: str = "w0") -> Path:
    """Write out_jobs.csv atomically (runs in completion order, as Batsim does)."""
    return atomic_write_text(path, format_out_jobs(runs, workload))


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


def runs_frame(runs: Iterable[Run], workload: str = "w0") -> pd.DataFrame:
    """The same table as out_jobs.csv, in memory, without the text round trip.

    Times are rounded to the file's 6 decimals so that a summary computed from
    this frame equals one computed from the written file (or from Batsim's).
    """
    runs = list(runs)
    if not runs:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in COLUMNS})
    rejected = np.array([r.state == REJECTED for r in runs], dtype=bool)
    sub = np.round(np.fromiter((r.subtime for r in runs), float, len(runs)), 6)
    start = np.where(rejected, np.nan, np.round(np.fromiter((r.start for r in runs), float, len(runs)), 6))
    end = np.where(rejected, np.nan, np.round(np.fromiter((r.end for r in runs), float, len(runs)), 6))
    execution = end - start
    turnaround = end - sub
    with np.errstate(divide="ignore", invalid="ignore"):
        stretch = np.where(execution > 0, turnaround / execution, np.nan)
    states = [r.state for r in runs]
    return pd.DataFrame({
        "job_id": [r.id for r in runs],
        "workload_name": workload,
        "profile": [profile_name(r.runtime) for r in runs],
        "submission_time": sub,
        "requested_number_of_resources": np.fromiter((r.procs for r in runs), np.int64, len(runs)),
        "requested_time": np.round(np.fromiter((r.walltime for r in runs), float, len(runs)), 6),
        "success": np.array([1 if st == "COMPLETED_SUCCESSFULLY" else 0 for st in states], dtype=np.int64),
        "final_state": states,
        "starting_time": start,
        "execution_time": execution,
        "finish_time": end,
        "waiting_time": start - sub,
        "turnaround_time": turnaround,
        "stretch": np.round(stretch, 6),
        "allocated_resources": [ms.to_string(r.alloc or []) for r in runs],
        "consumed_energy": np.where(rejected, np.nan, -1.0),
        "metadata": [str({"parent_job": f"{workload}!{r.first_id}", "nb_resubmit": r.attempt}) if r.attempt else ""
                     for r in runs],
    })
