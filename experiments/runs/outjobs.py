"""Per-job results in Batsim's out_jobs.csv shape, written by both backends.

Local results use exactly Batsim's columns and number formatting so that one
analysis (ours, or Batsim's own tools such as evalys) reads either backend's
output, and so that ``bftune compare`` can diff them row by row.

This module imports neither pandas nor numpy (``bftune simulate`` imports
it, and numpy alone would cost that command a third of its memory and most
of its start-up): the columns are plain lists, checked and converted with
builtins mapped at C speed (``map`` of ``float.is_integer``,
``float.__trunc__``, ``operator.sub``...), the file is formatted with one
printf-style template per row, and the columns the metrics need come straight
from the runs (:func:`runs_columns`), rounded as the file rounds them, so a
summary computed in memory equals one computed from the written file or from
Batsim's.  Reading a file back into a DataFrame lives in
:mod:`bftune.experiments.runs.tables`; :func:`all_columns`, for tables and
comparisons, imports numpy when it is called.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import islice
from math import copysign, nan
from operator import sub, truediv
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Iterator, Sequence

from bftune.support.files import atomic_write_chunks
from bftune.schedulers.core import machines as ms
from bftune.schedulers.drivers.local.runs import REJECTED, STATES, Run, RunLog
from bftune.workloads.batsim_json import profile_name

if TYPE_CHECKING:
    import numpy as np

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
#: Decimals of the file's times (``%.6f``).
_DECIMALS = 6


@dataclass(slots=True)
class RunColumns:
    """What the writer and the metrics need of consecutive runs, as columns (see :func:`run_chunks`).

    Times are lists of floats (never ints: the checks below are ``float`` methods).  ``whole`` remembers which
    of them hold whole numbers only: the summary's columns (:func:`runs_columns`) and the file both need to know,
    and looking costs a pass over the column (so the lists are not to be changed once built)."""

    names: list[str]  # run names ("0000015", "0000015#1")
    firsts: list[str]  # the job's first run's name
    attempts: list[int]
    runtimes: list[int | float]  # the delay profile, as the trace has it
    procs: list[int]
    states: list[str]
    allocs: list[str]  # Batsim's text; "" for a rejected run
    subtime: list[float]
    walltime: list[float]
    start: list[float]  # -1 for a rejected run
    end: list[float]
    whole: set[str] = field(default_factory=set)  # names of time columns known to hold whole numbers only


#: The time columns of :class:`RunColumns` (what :func:`_whole` may remember).
_TIMES = ("subtime", "walltime", "start", "end")


def run_chunks(runs: Iterable[Run] | RunLog | RunColumns, size: int = CHUNK_ROWS) -> Iterator[RunColumns]:
    """Consecutive runs ``size`` at a time, as columns: from a ``RunLog``'s arrays, from ``Run`` objects, or
    slices of columns already built (:func:`whole_columns`: the summary's, written without building them again)."""
    if isinstance(runs, RunColumns):
        for lo in range(0, len(runs.names), size):
            yield _rows(runs, lo, lo + size)
    elif isinstance(runs, RunLog):
        for lo in range(0, len(runs), size):
            yield _log_chunk(runs, lo, lo + size)
    else:
        it = iter(runs)
        while chunk := list(islice(it, size)):
            yield _objects_chunk(chunk)


def _rows(c: RunColumns, lo: int, hi: int) -> RunColumns:
    """Rows ``lo:hi`` of columns already built; what ``whole`` says of a column holds for its rows (a copy: not the
    other way round)."""
    return RunColumns(c.names[lo:hi], c.firsts[lo:hi], c.attempts[lo:hi], c.runtimes[lo:hi], c.procs[lo:hi],
                      c.states[lo:hi], c.allocs[lo:hi], c.subtime[lo:hi], c.walltime[lo:hi], c.start[lo:hi],
                      c.end[lo:hi], set(c.whole))


def _log_chunk(log: RunLog, lo: int, hi: int) -> RunColumns:
    """Rows ``lo:hi`` of a ``RunLog``: its arrays sliced (``tolist``: floats at C speed), the rest from the trace's
    records (list comprehensions: Python 3.11 specialises their attribute reads, faster than ``map``)."""
    records, width = log.records, log.width
    recs = [records[j] for j in log.seal().job[lo:hi]]
    names = log.run_names[lo:hi]  # the core's names, kept by the log (no second zfill per run)
    attempts = log.attempt[lo:hi].tolist()
    firsts = [str(r.id).zfill(width) for r in recs] if any(attempts) else names
    return RunColumns(names, firsts, attempts, [r.runtime for r in recs], [r.procs for r in recs],
                      [STATES[code] for code in log.state[lo:hi]], log.alloc[lo:hi], log.subtime[lo:hi].tolist(),
                      [float(r.walltime) for r in recs], log.start[lo:hi].tolist(), log.end[lo:hi].tolist())


def _objects_chunk(chunk: list[Run]) -> RunColumns:
    """``Run`` objects as columns; their times made floats (callers may build runs with int times)."""
    to_string = ms.to_string
    return RunColumns([r.id for r in chunk], [r.first_id for r in chunk], [r.attempt for r in chunk],
                      [r.runtime for r in chunk], [r.procs for r in chunk], [r.state for r in chunk],
                      ["" if r.state == REJECTED else to_string(r.alloc or []) for r in chunk],
                      [float(r.subtime) for r in chunk], [float(r.walltime) for r in chunk],
                      [float(r.start) for r in chunk], [float(r.end) for r in chunk])


def _metadata(first_id: str, attempt: int, workload: str) -> str:
    """Batsim's resubmission metadata of a rerun, as the CSV cell's quoted text."""
    if not attempt:
        return '""'
    text = str({"parent_job": f"{workload}!{first_id}", "nb_resubmit": attempt})
    return '"' + text.replace('"', '""') + '"'


def _integral(values: Sequence[float]) -> bool:
    """Whether every value is a whole number (NaN and infinities are not)."""
    return all(map(float.is_integer, values))


def _whole(c: RunColumns, name: str) -> bool:
    """Whether time column ``name`` of ``c`` holds whole numbers only (remembered when it does)."""
    if name in c.whole:
        return True
    if _integral(getattr(c, name)):
        c.whole.add(name)
        return True
    return False


def _negative_zero(values: list[float]) -> bool:
    """Whether a -0.0 is among ``values``: "%.6f" writes it "-0.000000", "%d" of its int would lose the sign.

    ``list.index`` finds the zeros (of either sign) at C speed; only they are looked at one by one."""
    i = -1
    try:
        while True:
            i = values.index(0.0, i + 1)
            if copysign(1.0, values[i]) < 0.0:
                return True
    except ValueError:
        return False


def _times(column: list[float], integral: bool, signed_zeros: bool = True) -> tuple[str, list]:
    """How to write a column of times, and its values: ints when all are integral (and none is -0.0), else floats.

    The text is the same either way ("%d.000000" of the int of an integral float is "%.6f" of it, at any
    magnitude: both are exact), ints are only faster to format.  ``integral``: whether every value is a whole
    number (:func:`_integral`).  ``signed_zeros=False`` says the column cannot hold a -0.0 (see
    :func:`_differences`), which skips looking for one."""
    if integral and not (signed_zeros and _negative_zero(column)):
        return _INTEGRAL, list(map(float.__trunc__, column))
    return _FIXED, column


def _differences(column: list[float], whole_inputs: bool, signed_zeros: bool) -> tuple[str, list]:
    """:func:`_times` of a difference of two time columns.

    ``whole_inputs``: both columns are written as ints (integral, no -0.0).  The difference of two whole numbers is
    one (or an overflow to infinity, which ``__trunc__`` refuses), and x - y is -0.0 only for x = -0.0 and
    y = +0.0 (IEEE, rounding to nearest): nothing is left to check.  ``signed_zeros``: whether a -0.0 is possible
    (one of the columns has one)."""
    if whole_inputs:
        try:
            return _INTEGRAL, list(map(float.__trunc__, column))
        except OverflowError:
            pass
    return _times(column, _integral(column), signed_zeros)


def _stretches(turnaround: list[float], execution: list[float]) -> list[float]:
    """turnaround / execution, NaN where the run took no time (or never ran): Batsim's stretch."""
    # A time <= 0 makes min() fail this test; a NaN makes it fail or divides to NaN, as it should.
    if execution and min(execution) > 0.0:
        return list(map(truediv, turnaround, execution))
    return [t / e if e > 0.0 else nan for t, e in zip(turnaround, execution)]


def _profiles(runtimes: list[int | float]) -> tuple[str, list]:
    """How to write the delay profile column, and its values.

    ``profile_name`` of an int, or of an integral float, is ``"d%d"`` of it: then the row template writes the
    runtimes themselves (tens of thousands of distinct ones in a trace: formatting them in the row costs less
    than naming each one first).  Anything else is named by ``profile_name``."""
    kinds = set(map(type, runtimes))
    if kinds <= {int} or (kinds == {float} and _integral(runtimes)):
        return "d%d", runtimes
    return "%s", list(map(profile_name, runtimes))


def _success_and_state(states: list[str]) -> list[str]:
    """The cells "success,final_state" of each row as one text ("1,COMPLETED_SUCCESSFULLY"): a chunk has a handful
    of distinct states, and one text cell formats faster than a number and a text."""
    cells = {state: "%d,%s" % (state == _SUCCESS, state) for state in set(states)}
    return [cells[state] for state in states]


def _chunk_text(c: RunColumns, workload: str, escaped: str, rejected_template: str) -> str:
    """One chunk's rows, each line ended by a newline."""
    sub_, walltime, start, end = c.subtime, c.walltime, c.start, c.end
    execution, turnaround, wait = (list(map(sub, a, b)) for a, b in ((end, start), (end, sub_), (start, sub_)))
    stretch = _stretches(turnaround, execution)
    (sub_t, sub_v), (wall_t, wall_v), (start_t, start_v), (end_t, end_v) = (
        _times(getattr(c, name), _whole(c, name)) for name in _TIMES)
    whole_inputs = sub_t == start_t == end_t == _INTEGRAL
    # Only a minuend's -0.0 gives a -0.0 (see _differences); a column written as ints was searched for one.
    signed = (start_t == _FIXED and _negative_zero(start)) or (end_t == _FIXED and _negative_zero(end))
    (exec_t, exec_v), (turn_t, turn_v), (wait_t, wait_v) = (_differences(column, whole_inputs, signed)
                                                            for column in (execution, turnaround, wait))
    profile_t, profile = _profiles(c.runtimes)
    metadata = [_metadata(f, a, workload) for f, a in zip(c.firsts, c.attempts)] if any(c.attempts) else None
    # Each cell's format and values, or its text when it is the same on every row (Batsim's metadata is '""' for
    # a job's first run): a constant costs the rows' formatting nothing.
    cells = (("%s", c.names), (escaped, None), (profile_t, profile), (sub_t, sub_v), ("%d", c.procs),
             (wall_t, wall_v), ("%s", _success_and_state(c.states)), (start_t, start_v), (exec_t, exec_v),
             (end_t, end_v), (wait_t, wait_v), (turn_t, turn_v), (_FIXED, stretch), ("%s", c.allocs),
             ("-1.000000", None), ("%s", metadata) if metadata else ('""', None))
    template = ",".join(fmt for fmt, _ in cells)
    lines = list(map(template.__mod__, zip(*(values for _, values in cells if values is not None))))
    if REJECTED in c.states:
        for i, state in enumerate(c.states):
            if state == REJECTED:
                lines[i] = rejected_template % (c.names[i], profile_name(c.runtimes[i]), sub_[i], c.procs[i],
                                                walltime[i], metadata[i] if metadata else '""')
    lines.append("")
    return "\n".join(lines)


def out_jobs_chunks(runs: Iterable[Run] | RunLog | RunColumns, workload: str = "w0") -> Iterator[str]:
    """The file's text in pieces of at most :data:`CHUNK_ROWS` rows, in the runs' (completion) order."""
    escaped = workload.replace("%", "%%")
    rejected_template = _REJECTED_ROW.format(w=escaped)
    yield ",".join(COLUMNS) + "\n"
    for chunk in run_chunks(runs):
        yield _chunk_text(chunk, workload, escaped, rejected_template)


def format_out_jobs(runs: Iterable[Run] | RunLog | RunColumns, workload: str = "w0") -> str:
    """The file's text, rows in the runs' (completion) order."""
    return "".join(out_jobs_chunks(runs, workload))


def write_out_jobs(runs: Iterable[Run] | RunLog | RunColumns, path: str | Path, workload: str = "w0") -> Path:
    """Write out_jobs.csv atomically (runs in completion order, as Batsim does), streamed in chunks."""
    return atomic_write_chunks(path, (chunk.encode() for chunk in out_jobs_chunks(runs, workload)))


def whole_columns(runs: list[Run] | RunLog) -> RunColumns:
    """Every run as one chunk (an empty chunk for no runs): build it once for both the summary
    (:func:`runs_columns`) and the file (:func:`write_out_jobs`)."""
    return next(run_chunks(runs, max(len(runs), 1)), None) or RunColumns([], [], [], [], [], [], [], [], [], [], [])


def _rounded(c: RunColumns, name: str) -> list[float]:
    """Time column ``name`` as the file has it, to 6 decimals: the column itself when all are whole numbers (the
    usual case), else a rounded copy.

    ``round(x, 6)`` is correctly rounded, so it equals ``float("%.6f" % x)``, the value read back from the file
    (numpy's ``round`` scales by 10**6 and may be off by one in the last bit)."""
    times = getattr(c, name)
    if _whole(c, name):
        return times
    return [t if t.is_integer() else round(t, _DECIMALS) for t in times]


def _without_times(states: list[str], times: list[float]) -> list[float]:
    """``times`` with NaN for rejected runs: they never ran, and the file leaves their times empty."""
    return [nan if state == REJECTED else t for state, t in zip(states, times)]


def runs_columns(runs: list[Run] | RunLog | RunColumns, workload: str = "w0") -> dict[str, list]:
    """The columns of out_jobs.csv that the metrics read, straight from the runs, as lists.

    Columns that need no change are ``runs``' own lists, not copies (a copy of five 70,000-row columns was
    4.5 MiB of a CTC-SP2 run's peak, which is reached in the summary): read them, never change them (the
    metrics only read).

    Times are rounded to the file's 6 decimals so that a summary computed from
    these columns equals one computed from the written file (or from
    Batsim's); a rejected job has no times (NaN), as in the file.
    """
    c = runs if isinstance(runs, RunColumns) else whole_columns(runs)
    submit, walltime, start, end = (_rounded(c, name) for name in _TIMES)
    if REJECTED in c.states:
        start, end = _without_times(c.states, start), _without_times(c.states, end)
    return {
        "job_id": c.names,
        "workload_name": [workload] * len(c.names),
        "submission_time": submit,
        "requested_number_of_resources": c.procs,
        "requested_time": walltime,
        "final_state": c.states,
        "starting_time": start,
        "execution_time": list(map(sub, end, start)),
        "finish_time": end,
    }


def all_columns(runs: list[Run] | RunLog, workload: str = "w0") -> dict[str, np.ndarray]:
    """Every column of out_jobs.csv, values as the file has them, as numpy arrays (for tables and comparisons,
    which have numpy loaded anyway: it is imported here, not by the module)."""
    import numpy as np

    chunk = whole_columns(runs)
    lists = runs_columns(chunk, workload)
    cols = {name: np.array(values, dtype=object) for name, values in lists.items()
            if name in ("job_id", "workload_name", "final_state")}
    cols.update({name: np.array(values, dtype=float) for name, values in lists.items() if name not in cols})
    cols["requested_number_of_resources"] = np.array(lists["requested_number_of_resources"], dtype=np.int64)
    rejected = cols["final_state"] == REJECTED
    execution, sub_, start, end = cols["execution_time"], cols["submission_time"], cols["starting_time"], \
        cols["finish_time"]
    turnaround = end - sub_
    with np.errstate(divide="ignore", invalid="ignore"):
        stretch = np.where(execution > 0, turnaround / execution, np.nan)
    cols.update({
        "profile": np.array([profile_name(runtime) for runtime in chunk.runtimes], dtype=object),
        "success": (cols["final_state"] == _SUCCESS).astype(np.int64),
        "waiting_time": start - sub_,
        "turnaround_time": turnaround,
        "stretch": np.round(stretch, 6),
        "allocated_resources": np.array(chunk.allocs, dtype=object),
        "consumed_energy": np.where(rejected, np.nan, -1.0),
        "metadata": np.array([_metadata(f, a, workload)[1:-1].replace('""', '"')
                              for f, a in zip(chunk.firsts, chunk.attempts)], dtype=object),
    })
    return {c: cols[c] for c in COLUMNS}
