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

from dataclasses import dataclass, fields
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

# Rows as Batsim writes them: 6-decimal numbers; the metadata column always quoted ("" when empty).  A
# chunk's columns of integral times are written as "%d.000000" of ints, which is the same text as
# "%.6f" of the floats and half the formatting work.
_FIXED = "%.6f"
_INTEGRAL = "%d.000000"
_REJECTED_ROW = "%s,{w},%s,%.6f,%d,%.6f,0,REJECTED,,,,,,,,,%s"  # no times, machines or energy, as Batsim
_SUCCESS = "COMPLETED_SUCCESSFULLY"
#: Rows formatted and written at a time: the file is streamed, never held whole in memory.
CHUNK_ROWS = 4096
_EXACT_INT = 2.0 ** 53


@dataclass(slots=True)
class RunColumns:
    """What the writer and the metrics need of consecutive runs, as columns (see :func:`run_chunks`)."""

    names: list[str]  # run names ("0000015", "0000015#1")
    firsts: list[str]  # the job's first run's name
    attempts: list[int]
    runtimes: list[float]  # the delay profile
    procs: list[int]
    states: list[str]
    allocs: list[str]  # Batsim's text; "" for a rejected run
    subtime: np.ndarray
    walltime: np.ndarray
    start: np.ndarray  # -1 for a rejected run
    end: np.ndarray


def run_chunks(runs: Iterable[Run] | RunLog | RunColumns, size: int = CHUNK_ROWS) -> Iterator[RunColumns]:
    """Consecutive runs ``size`` at a time, as columns: from a ``RunLog``'s arrays, from ``Run`` objects, or
    slices of columns already built (:func:`whole_columns`: the summary's, written without building them again)."""
    if isinstance(runs, RunColumns):
        columns = [getattr(runs, f.name) for f in fields(RunColumns)]
        for lo in range(0, len(runs.names), size):
            yield RunColumns(*(column[lo:lo + size] for column in columns))
        return
    if isinstance(runs, RunLog):
        records, width = runs.records, runs.width
        for lo in range(0, len(runs), size):
            hi = lo + size
            recs = [records[j] for j in runs.job[lo:hi]]
            firsts = [str(r.id).zfill(width) for r in recs]
            attempts = runs.attempt[lo:hi].tolist()
            names = [f"{f}#{a}" if a else f for f, a in zip(firsts, attempts)] if any(attempts) else firsts
            yield RunColumns(names, firsts, attempts, [float(r.runtime) for r in recs], [r.procs for r in recs],
                             [STATES[code] for code in runs.state[lo:hi]], runs.alloc[lo:hi],
                             np.array(runs.subtime[lo:hi], dtype=float),
                             np.array([float(r.walltime) for r in recs], dtype=float),
                             np.array(runs.start[lo:hi], dtype=float), np.array(runs.end[lo:hi], dtype=float))
        return
    to_string = ms.to_string
    it = iter(runs)
    while True:
        chunk = list(islice(it, size))
        if not chunk:
            return
        yield RunColumns([r.id for r in chunk], [r.first_id for r in chunk], [r.attempt for r in chunk],
                         [r.runtime for r in chunk], [r.procs for r in chunk], [r.state for r in chunk],
                         ["" if r.state == REJECTED else to_string(r.alloc or ()) for r in chunk],
                         np.array([r.subtime for r in chunk], dtype=float),
                         np.array([r.walltime for r in chunk], dtype=float),
                         np.array([r.start for r in chunk], dtype=float), np.array([r.end for r in chunk], dtype=float))


def _metadata(first_id: str, attempt: int, workload: str) -> str:
    """Batsim's resubmission metadata of a rerun, as the CSV cell's quoted text."""
    if not attempt:
        return '""'
    text = str({"parent_job": f"{workload}!{first_id}", "nb_resubmit": attempt})
    return '"' + text.replace('"', '""') + '"'


def _times(column: np.ndarray) -> tuple[str, list]:
    """How to write a column of times, and its values: ints when all are integral (and not -0.0), else floats."""
    if (np.floor(column) == column).all() and (np.abs(column) < _EXACT_INT).all() and \
            not (np.signbit(column) & (column == 0)).any():
        return _INTEGRAL, column.astype(np.int64).tolist()
    return _FIXED, column.tolist()


class _Profiles(dict):
    """Delay profile names by runtime, computed once per distinct runtime."""

    def __missing__(self, runtime: float) -> str:
        name = self[runtime] = profile_name(runtime)
        return name


def out_jobs_chunks(runs: Iterable[Run] | RunLog | RunColumns, workload: str = "w0") -> Iterator[str]:
    """The file's text in pieces of at most :data:`CHUNK_ROWS` rows, in the runs' (completion) order."""
    escaped = workload.replace("%", "%%")
    rejected_template = _REJECTED_ROW.format(w=escaped)
    profiles = _Profiles()
    yield ",".join(COLUMNS) + "\n"
    for c in run_chunks(runs):
        execution = c.end - c.start
        turnaround = c.end - c.subtime
        with np.errstate(divide="ignore", invalid="ignore"):
            stretch = np.where(execution > 0, turnaround / execution, np.nan)
        sub, walltime, start, execution, end, wait, turnaround = (
            _times(col) for col in (c.subtime, c.walltime, c.start, execution, c.end, c.start - c.subtime, turnaround))
        template = ",".join(("%s", escaped, "%s", sub[0], "%d", walltime[0], "%d", "%s", start[0], execution[0],
                             end[0], wait[0], turnaround[0], _FIXED, "%s", "-1.000000", "%s"))
        profile = [profiles[rt] for rt in c.runtimes]
        metadata = [_metadata(f, a, workload) for f, a in zip(c.firsts, c.attempts)] if any(c.attempts) else \
            ['""'] * len(c.names)
        lines = list(map(template.__mod__, zip(
            c.names, profile, sub[1], c.procs, walltime[1], [state == _SUCCESS for state in c.states], c.states,
            start[1], execution[1], end[1], wait[1], turnaround[1], stretch.tolist(), c.allocs, metadata)))
        if REJECTED in c.states:
            for i, state in enumerate(c.states):
                if state == REJECTED:
                    lines[i] = rejected_template % (c.names[i], profile[i], c.subtime[i], c.procs[i], c.walltime[i],
                                                    metadata[i])
        lines.append("")
        yield "\n".join(lines)


def format_out_jobs(runs: Iterable[Run] | RunLog, workload: str = "w0") -> str:
    """The file's text, rows in the runs' (completion) order."""
    return "".join(out_jobs_chunks(runs, workload))


def write_out_jobs(runs: Iterable[Run] | RunLog | RunColumns, path: str | Path, workload: str = "w0") -> Path:
    """Write out_jobs.csv atomically (runs in completion order, as Batsim does), streamed in chunks."""
    return atomic_write_chunks(path, (chunk.encode() for chunk in out_jobs_chunks(runs, workload)))


def runs_columns(runs: list[Run] | RunLog | RunColumns, workload: str = "w0") -> dict[str, np.ndarray]:
    """The columns of out_jobs.csv that the metrics read, straight from the runs.

    Times are rounded to the file's 6 decimals so that a summary computed from
    these columns equals one computed from the written file (or from
    Batsim's); a rejected job has no times (NaN), as in the file.
    """
    return _columns(runs if isinstance(runs, RunColumns) else whole_columns(runs), workload)


def whole_columns(runs: list[Run] | RunLog) -> RunColumns:
    """Every run as one chunk (an empty chunk for no runs): build it once for both the summary
    (:func:`runs_columns`) and the file (:func:`write_out_jobs`)."""
    return next(run_chunks(runs, max(len(runs), 1)), None) or RunColumns(
        [], [], [], [], [], [], [], *(np.zeros(0) for _ in range(4)))


def _columns(c: RunColumns, workload: str) -> dict[str, np.ndarray]:
    n = len(c.names)
    state = np.array(c.states, dtype=object)
    rejected = state == REJECTED
    sub, start, end = np.round(c.subtime, 6), np.round(c.start, 6), np.round(c.end, 6)
    if rejected.any():
        start[rejected] = np.nan
        end[rejected] = np.nan
    return {
        "job_id": np.array(c.names, dtype=object),
        "workload_name": np.full(n, workload, dtype=object),
        "submission_time": sub,
        "requested_number_of_resources": np.array(c.procs, dtype=np.int64),
        "requested_time": np.round(c.walltime, 6),
        "final_state": state,
        "starting_time": start,
        "execution_time": end - start,
        "finish_time": end,
    }


def all_columns(runs: list[Run] | RunLog, workload: str = "w0") -> dict[str, np.ndarray]:
    """Every column of out_jobs.csv, values as the file has them (for tables and comparisons)."""
    chunk = whole_columns(runs)
    cols = _columns(chunk, workload)
    rejected = cols["final_state"] == REJECTED
    execution, sub, start, end = cols["execution_time"], cols["submission_time"], cols["starting_time"], \
        cols["finish_time"]
    turnaround = end - sub
    with np.errstate(divide="ignore", invalid="ignore"):
        stretch = np.where(execution > 0, turnaround / execution, np.nan)
    cols.update({
        "profile": np.array([profile_name(rt) for rt in chunk.runtimes], dtype=object),
        "success": (cols["final_state"] == _SUCCESS).astype(np.int64),
        "waiting_time": start - sub,
        "turnaround_time": turnaround,
        "stretch": np.round(stretch, 6),
        "allocated_resources": np.array(chunk.allocs, dtype=object),
        "consumed_energy": np.where(rejected, np.nan, -1.0),
        "metadata": np.array([_metadata(f, a, workload)[1:-1].replace('""', '"')
                              for f, a in zip(chunk.firsts, chunk.attempts)], dtype=object),
    })
    return {c: cols[c] for c in COLUMNS}
