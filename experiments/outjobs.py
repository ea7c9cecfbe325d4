"""Per-job results in Batsim's out_jobs.csv shape, written by both backends.

Local results use exactly Batsim's columns and number formatting so that one
analysis (ours, or Batsim's own tools such as evalys) reads either backend's
output, and so that ``bftune compare`` can diff them row by row.

This module needs no pandas (``bftune simulate`` imports it): the file is
formatted with one printf-style template per row, and the columns the
metrics need come straight from the runs (:func:`runs_columns`), rounded as
the file rounds them, so a summary computed in memory equals one computed
from the written file or from Batsim's.  Reading a file back into a
DataFrame lives in :mod:`bftune.experiments.tables`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

import numpy as np

from bftune.files import atomic_write_text
from bftune.schedulers.core import machines as ms
from bftune.schedulers.drivers.local.simulator import REJECTED, Run
from bftune.workloads.batsim_json import profile_name

COLUMNS = [
    "job_id", "workload_name", "profile", "submission_time", "requested_number_of_resources",
    "requested_time", "success", "final_state", "starting_time", "execution_time", "finish_time",
    "waiting_time", "turnaround_time", "stretch", "allocated_resources", "consumed_energy", "metadata",
]

NUMERIC_COLUMNS = ("starting_time", "execution_time", "finish_time", "waiting_time", "turnaround_time", "stretch",
                   "consumed_energy")

# One template per row: Batsim's 6-decimal numbers; the metadata column always quoted ("" when empty).
_ROW = "%s,%s,%s,%.6f,%d,%.6f,%d,%s,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%s,-1.000000,%s"
_REJECTED_ROW = "%s,%s,%s,%.6f,%d,%.6f,0,REJECTED,,,,,,,,,%s"  # no times, machines or energy, as Batsim
_SUCCESS = "COMPLETED_SUCCESSFULLY"


def _metadata(run: Run, workload: str) -> str:
    """Batsim's resubmission metadata of a rerun, as the CSV cell's quoted text."""
    if not run.attempt:
        return '""'
    text = str({"parent_job": f"{workload}!{run.first_id}", "nb_resubmit": run.attempt})
    return '"' + text.replace('"', '""') + '"'


def format_out_jobs(runs: Iterable[Run], workload: str = "w0") -> str:
    """The file's text, rows in the runs' (completion) order."""
    profiles: dict[float, str] = {}
    to_string = ms.to_string
    lines = [",".join(COLUMNS)]
    append = lines.append
    for run in runs:
        profile = profiles.get(run.runtime)
        if profile is None:
            profile = profiles[run.runtime] = profile_name(run.runtime)
        if run.state == REJECTED:
            append(_REJECTED_ROW % (run.id, workload, profile, run.subtime, run.procs, run.walltime,
                                    _metadata(run, workload)))
            continue
        start, end, sub = run.start, run.end, run.subtime
        execution = end - start
        turnaround = end - sub
        append(_ROW % (run.id, workload, profile, sub, run.procs, run.walltime, run.state == _SUCCESS, run.state,
                       start, execution, end, start - sub, turnaround,
                       turnaround / execution if execution > 0 else float("nan"),
                       to_string(run.alloc or ()), _metadata(run, workload)))
    return "\n".join(lines) + "\n"


def write_out_jobs(runs: Iterable[Run], path: str | Path, workload: str = "w0") -> Path:
    """Write out_jobs.csv atomically (runs in completion order, as Batsim does)."""
    return atomic_write_text(path, format_out_jobs(runs, workload))


def runs_columns(runs: list[Run], workload: str = "w0") -> dict[str, np.ndarray]:
    """The columns of out_jobs.csv that the metrics read, straight from the runs.

    Times are rounded to the file's 6 decimals so that a summary computed from
    these columns equals one computed from the written file (or from
    Batsim's); a rejected job has no times (NaN), as in the file.
    """
    n = len(runs)
    state = np.array([r.state for r in runs], dtype=object)
    rejected = state == REJECTED
    sub = np.round(np.fromiter((r.subtime for r in runs), float, n), 6)
    start = np.round(np.fromiter((r.start for r in runs), float, n), 6)
    end = np.round(np.fromiter((r.end for r in runs), float, n), 6)
    if rejected.any():
        start[rejected] = np.nan
        end[rejected] = np.nan
    return {
        "job_id": np.array([r.id for r in runs], dtype=object),
        "workload_name": np.full(n, workload, dtype=object),
        "submission_time": sub,
        "requested_number_of_resources": np.fromiter((r.procs for r in runs), np.int64, n),
        "requested_time": np.round(np.fromiter((r.walltime for r in runs), float, n), 6),
        "final_state": state,
        "starting_time": start,
        "execution_time": end - start,
        "finish_time": end,
    }


def all_columns(runs: list[Run], workload: str = "w0") -> dict[str, np.ndarray]:
    """Every column of out_jobs.csv, values as the file has them (for tables and comparisons)."""
    cols = runs_columns(runs, workload)
    n = len(runs)
    rejected = cols["final_state"] == REJECTED
    execution, sub, start, end = cols["execution_time"], cols["submission_time"], cols["starting_time"], \
        cols["finish_time"]
    turnaround = end - sub
    with np.errstate(divide="ignore", invalid="ignore"):
        stretch = np.where(execution > 0, turnaround / execution, np.nan)
    cols.update({
        "profile": np.array([profile_name(r.runtime) for r in runs], dtype=object),
        "success": (cols["final_state"] == _SUCCESS).astype(np.int64),
        "waiting_time": start - sub,
        "turnaround_time": turnaround,
        "stretch": np.round(stretch, 6),
        "allocated_resources": np.array(["" if r.state == REJECTED else ms.to_string(r.alloc or ()) for r in runs],
                                        dtype=object),
        "consumed_energy": np.where(rejected, np.nan, -1.0),
        "metadata": np.array([_metadata(r, workload)[1:-1].replace('""', '"') for r in runs], dtype=object),
    })
    return {c: cols[c] for c in COLUMNS}
