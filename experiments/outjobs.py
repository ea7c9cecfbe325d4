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

from itertools import islice
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

from bftune.files import atomic_write_chunks
from bftune.schedulers.core import machines as ms
from bftune.schedulers.drivers.local.runs import REJECTED, STATES, Run, RunLog
from bftune.workloads.batsim_json import profile_name

COLUMNS = [
    "job_id", "workload_name", "profile", "submission_time", "requested_number_of_resources",
    "requested_time", "success", "final_state", "starting_time", "execution_time", "finish_time",
    "waiting_time", "turnaround_time", "stretch", "allocated_resources", "consumed_energy", "metadata",
]

NUMERIC_COLUMNS = ("starting_time", "execution_time", "finish_time", "waiting_time", "turnaround_time", "stretch",
                   "consumed_energy")

# One template per row: Batsim's 6-decimal numbers; the metadata column always quoted ("" when empty).
_ROW = "%s,{w},%s,%.6f,%d,%.6f,%d,%s,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%s,-1.000000,%s"
_REJECTED_ROW = "%s,{w},%s,%.6f,%d,%.6f,0,REJECTED,,,,,,,,,%s"  # no times, machines or energy, as Batsim
_SUCCESS = "COMPLETED_SUCCESSFULLY"
_NAN = float("nan")
#: Rows formatted and written at a time: the file is streamed, never held whole in memory.
CHUNK_ROWS = 4096

#: What the writer needs of a run: (name, first run's name, attempt, delay, submission time, procs, walltime,
#: final state, start, end, allocation text).
Row = tuple[str, str, int, float, float, int, float, str, float, float, str]


def _metadata(first_id: str, attempt: int, workload: str) -> str:
    """Batsim's resubmission metadata of a rerun, as the CSV cell's quoted text."""
    if not attempt:
        return '""'
    text = str({"parent_job": f"{workload}!{first_id}", "nb_resubmit": attempt})
    return '"' + text.replace('"', '""') + '"'


def run_rows(runs: Iterable[Run] | RunLog) -> Iterator[Row]:
    """The writer's view of each run: from a ``RunLog``'s columns, or from ``Run`` objects."""
    if isinstance(runs, RunLog):
        records, width = runs.records, runs.width
        for j, attempt, sub, start, end, code, alloc in zip(runs.job, runs.attempt, runs.subtime, runs.start,
                                                             runs.end, runs.state, runs.alloc):
            r = records[j]
            first = str(r.id).zfill(width)
            yield (f"{first}#{attempt}" if attempt else first, first, attempt, float(r.runtime), sub, r.procs,
                   float(r.walltime), STATES[code], start, end, alloc)
        return
    to_string = ms.to_string
    for run in runs:
        alloc = "" if run.state == REJECTED else to_string(run.alloc or ())
        yield (run.id, run.first_id, run.attempt, run.runtime, run.subtime, run.procs, run.walltime, run.state,
               run.start, run.end, alloc)


def out_jobs_chunks(runs: Iterable[Run] | RunLog, workload: str = "w0") -> Iterator[str]:
    """The file's text in pieces of at most :data:`CHUNK_ROWS` rows, in the runs' (completion) order."""
    escaped = workload.replace("%", "%%")
    row_template, rejected_template = _ROW.format(w=escaped), _REJECTED_ROW.format(w=escaped)
    profiles: dict[float, str] = {}
    rows = run_rows(runs)
    yield ",".join(COLUMNS) + "\n"
    while True:
        lines = []
        append = lines.append
        for name, first, attempt, runtime, sub, procs, walltime, state, start, end, alloc in islice(rows, CHUNK_ROWS):
            profile = profiles.get(runtime)
            if profile is None:
                profile = profiles[runtime] = profile_name(runtime)
            metadata = _metadata(first, attempt, workload) if attempt else '""'
            if state == REJECTED:
                append(rejected_template % (name, profile, sub, procs, walltime, metadata))
                continue
            execution = end - start
            turnaround = end - sub
            append(row_template % (name, profile, sub, procs, walltime, state == _SUCCESS, state, start, execution,
                                   end, start - sub, turnaround, turnaround / execution if execution > 0 else _NAN,
                                   alloc, metadata))
        if not lines:
            return
        lines.append("")
        yield "\n".join(lines)


def format_out_jobs(runs: Iterable[Run] | RunLog, workload: str = "w0") -> str:
    """The file's text, rows in the runs' (completion) order."""
    return "".join(out_jobs_chunks(runs, workload))


def write_out_jobs(runs: Iterable[Run] | RunLog, path: str | Path, workload: str = "w0") -> Path:
    """Write out_jobs.csv atomically (runs in completion order, as Batsim does), streamed in chunks."""
    return atomic_write_chunks(path, (chunk.encode() for chunk in out_jobs_chunks(runs, workload)))


def runs_columns(runs: list[Run] | RunLog, workload: str = "w0") -> dict[str, np.ndarray]:
    """The columns of out_jobs.csv that the metrics read, straight from the runs.

    Times are rounded to the file's 6 decimals so that a summary computed from
    these columns equals one computed from the written file (or from
    Batsim's); a rejected job has no times (NaN), as in the file.
    """
    n = len(runs)
    if isinstance(runs, RunLog):
        state = np.asarray(STATES, dtype=object)[np.frombuffer(runs.state, dtype=np.uint8)] if n else \
            np.zeros(0, dtype=object)
        ids = np.array(runs.names(), dtype=object)
        sub = np.frombuffer(runs.subtime, dtype=float) if n else np.zeros(0)
        start = np.frombuffer(runs.start, dtype=float) if n else np.zeros(0)
        end = np.frombuffer(runs.end, dtype=float) if n else np.zeros(0)
        procs = np.fromiter(runs.column("procs"), np.int64, n)
        walltime = np.fromiter(runs.column("walltime"), float, n)
    else:
        state = np.array([r.state for r in runs], dtype=object)
        ids = np.array([r.id for r in runs], dtype=object)
        sub = np.fromiter((r.subtime for r in runs), float, n)
        start = np.fromiter((r.start for r in runs), float, n)
        end = np.fromiter((r.end for r in runs), float, n)
        procs = np.fromiter((r.procs for r in runs), np.int64, n)
        walltime = np.fromiter((r.walltime for r in runs), float, n)
    sub, start, end = np.round(sub, 6), np.round(start, 6), np.round(end, 6)
    rejected = state == REJECTED
    if rejected.any():
        start[rejected] = np.nan
        end[rejected] = np.nan
    return {
        "job_id": ids,
        "workload_name": np.full(n, workload, dtype=object),
        "submission_time": sub,
        "requested_number_of_resources": procs,
        "requested_time": np.round(walltime, 6),
        "final_state": state,
        "starting_time": start,
        "execution_time": end - start,
        "finish_time": end,
    }


def all_columns(runs: list[Run] | RunLog, workload: str = "w0") -> dict[str, np.ndarray]:
    """Every column of out_jobs.csv, values as the file has them (for tables and comparisons)."""
    cols = runs_columns(runs, workload)
    rejected = cols["final_state"] == REJECTED
    execution, sub, start, end = cols["execution_time"], cols["submission_time"], cols["starting_time"], \
        cols["finish_time"]
    turnaround = end - sub
    with np.errstate(divide="ignore", invalid="ignore"):
        stretch = np.where(execution > 0, turnaround / execution, np.nan)
    rows = list(run_rows(runs))
    cols.update({
        "profile": np.array([profile_name(row[3]) for row in rows], dtype=object),
        "success": (cols["final_state"] == _SUCCESS).astype(np.int64),
        "waiting_time": start - sub,
        "turnaround_time": turnaround,
        "stretch": np.round(stretch, 6),
        "allocated_resources": np.array([row[10] for row in rows], dtype=object),
        "consumed_energy": np.where(rejected, np.nan, -1.0),
        "metadata": np.array([_metadata(row[1], row[2], workload)[1:-1].replace('""', '"') for row in rows],
                             dtype=object),
    })
    return {c: cols[c] for c in COLUMNS}
