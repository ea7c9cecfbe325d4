"""What the pictures of a schedule show, as numbers: the window, each run's rectangles, queue and busy steps, waits.

Kept apart from the drawing (:mod:`bftune.experiments.runs.plots`) so that the tests check values rather
than pixels, and so that a user can draw the same data with another tool.  The input is an out_jobs.csv
table, of either backend, as a DataFrame (:func:`bftune.experiments.runs.tables.read_out_jobs`,
``Result.jobs``) or any mapping of its column names to sequences.  Times stay the table's (seconds of the
trace's clock); the pictures subtract :attr:`Window.origin`, the first submission.

numpy only: no pandas and no matplotlib here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from bftune.experiments.runs.metrics import KILLED, REJECTED, WALLTIME, merged_runs
from bftune.schedulers.core.durations import parse_duration

if TYPE_CHECKING:
    import numpy as np

#: A window's length when no end is given: one week, long enough to see the queue build up and drain on a
#: production trace, short enough that each run is wider than a pixel on KTH-SP2 or CTC-SP2.
DEFAULT_SPAN = 7 * 24 * 3600.0

#: The out_jobs.csv columns the pictures read.
PICTURE_COLUMNS = ("job_id", "submission_time", "requested_number_of_resources", "final_state", "starting_time",
                   "finish_time", "allocated_resources")


class PlotError(ValueError):
    """A table, window or option that gives no picture; the message is one line naming what to change."""


@dataclass(frozen=True)
class Runs:
    """The runs that ran (rejected ones left out), as numpy columns; ``job`` is a run's job (``#n`` dropped)."""

    name: np.ndarray  # run names as str ("0000015", "0000015#1")
    job: np.ndarray  # the job each run belongs to, as str (a rerun shares its job's colour)
    submit: np.ndarray
    start: np.ndarray
    end: np.ndarray
    procs: np.ndarray
    state: np.ndarray
    alloc: np.ndarray  # Batsim's interval text ("0-3 8")
    first_submit: float  # the table's first submission, rejected jobs included: time 0 of the pictures
    user: np.ndarray | None = None  # each run's user (-1 unknown): the table's "user" column, or a workload's

    def __len__(self) -> int:
        return len(self.name)


def runs_of(jobs: Mapping[str, Sequence] | Any) -> Runs:
    """The runs of an out_jobs table that started, in the table's order.

    Rejected runs never held a processor nor waited, so they are not drawn; they still count for the first
    submission, which is where every window's durations start.
    """
    import numpy as np

    missing = [c for c in PICTURE_COLUMNS if c not in jobs]
    if missing:
        raise PlotError(f"not an out_jobs table: missing column(s) {', '.join(missing)}")
    submit_all = np.asarray(jobs["submission_time"], dtype=float)
    if not len(submit_all):
        raise PlotError("the run has no job: nothing to draw")
    state = np.asarray(jobs["final_state"]).astype(str)
    start = np.asarray(jobs["starting_time"], dtype=float)
    ran = (state != REJECTED) & np.isfinite(start) & (start >= 0)
    names = np.array([str(v) for v in np.asarray(jobs["job_id"])[ran]], dtype=object)
    return Runs(name=names, job=np.array([n.partition("#")[0] for n in names], dtype=object),
                submit=submit_all[ran], start=start[ran],
                end=np.asarray(jobs["finish_time"], dtype=float)[ran],
                procs=np.asarray(jobs["requested_number_of_resources"], dtype=np.int64)[ran], state=state[ran],
                alloc=np.asarray(jobs["allocated_resources"]).astype(str)[ran],
                first_submit=float(np.nanmin(submit_all)),
                user=np.asarray(jobs["user"], dtype=np.int64)[ran] if "user" in jobs else None)


def with_users(runs: Runs, users: Mapping[int, int]) -> Runs:
    """``runs`` with each run's user looked up by its job's number (a workload's ``{job id: user}``).

    out_jobs.csv names a job by its trace number, zero-padded (``"0000015"``); a job the mapping lacks
    (a workload read with another cleaning) has the unknown user -1.
    """
    import numpy as np

    def user(job: str) -> int:
        try:
            return int(users.get(int(job), -1))
        except ValueError:  # a name that is not a number (a workload of named jobs)
            return -1

    return replace(runs, user=np.array([user(job) for job in runs.job.tolist()], dtype=np.int64))


@dataclass(frozen=True)
class Window:
    """The part of the schedule a picture shows: ``[start, end)`` in the table's seconds, and time 0."""

    origin: float  # the first submission: the pictures' time 0
    start: float
    end: float  # may be inf: to the end of the run

    def relative(self, times: np.ndarray | float) -> Any:
        """``times`` as seconds since the first submission (what the pictures' time axes show)."""
        return times - self.origin


def window(runs: Runs, start: object = None, end: object = None, names: tuple[str, str] = ("start", "end")) -> Window:
    """The window ``[start, end)``, both durations after the first submission (``"3d"``, ``3600``, ``"1w"``).

    ``start`` defaults to 0 and ``end`` to ``start`` + one week (:data:`DEFAULT_SPAN`); ``end`` may be
    ``"inf"`` (to the last run's end).  ``names`` are what the caller calls them in errors (``--start``
    on the command line).  A window in which no run executes is an error: an empty picture would look
    like a bug, and the likely cause is a window past the run's end.
    """
    lo = parse_duration(0 if start is None else start, names[0], allow_infinite=False)  # type: ignore[arg-type]
    hi = lo + DEFAULT_SPAN if end is None else parse_duration(end, names[1])  # type: ignore[arg-type]
    if hi <= lo:
        raise PlotError(f"{names[1]} must be after {names[0]} (got {names[0]}={start}, {names[1]}={end})")
    w = Window(runs.first_submit, runs.first_submit + lo, runs.first_submit + hi)
    if not in_window(runs, w).any():
        last = (float(runs.end.max()) - runs.first_submit) if len(runs) else 0.0
        raise PlotError(f"no run executes between {names[0]}={_shown(lo)} and {names[1]}={_shown(hi)} after the "
                        f"first submission (the runs end {_shown(last)} after it)")
    return w


def _shown(seconds: float) -> str:
    """A duration as the options are written: exact (``3d``, ``36h``) where it is, else in days (``332.9d``)."""
    from bftune.schedulers.core.durations import format_duration

    if not math.isfinite(seconds):
        return "inf"
    exact = format_duration(round(seconds))
    return exact if not exact.endswith("s") or seconds < 3600 else f"{seconds / 86400:.1f}d"


def in_window(runs: Runs, w: Window) -> np.ndarray:
    """Which runs execute during the window (a run of no duration: if it starts in it)."""
    return (runs.start < w.end) & ((runs.end > w.start) | ((runs.end == runs.start) & (runs.start >= w.start)))


@dataclass(frozen=True)
class Boxes:
    """The rectangles of a Gantt chart, one per interval of processors of a run: ``[x0, x1) x [y0, y1)``.

    ``x`` are the table's times (seconds), ``y`` processor numbers (a run on ``"0-3 8"`` has the boxes
    ``[0, 4)`` and ``[8, 9)``); ``run`` is the box's run, an index into the :class:`Runs` it came from.
    """

    x0: np.ndarray
    x1: np.ndarray
    y0: np.ndarray
    y1: np.ndarray
    run: np.ndarray

    def __len__(self) -> int:
        return len(self.run)


def boxes(runs: Runs, w: Window) -> Boxes:
    """The boxes of the runs that execute during ``w``, whole (the axes clip them).

    Only the window's runs are parsed, so a week of a 200,000-job trace costs a week's runs.
    """
    import numpy as np
    from procset import ProcSet

    x0: list[float] = []
    x1: list[float] = []
    y0: list[int] = []
    y1: list[int] = []
    index: list[int] = []
    for i in np.flatnonzero(in_window(runs, w)).tolist():
        try:
            intervals = ProcSet.from_str(runs.alloc[i]).intervals()
        except (ValueError, TypeError):
            raise PlotError(f"run {runs.name[i]}: cannot read its allocated_resources {runs.alloc[i]!r}") from None
        for interval in intervals:
            x0.append(runs.start[i])
            x1.append(runs.end[i])
            y0.append(interval.inf)
            y1.append(interval.sup + 1)
            index.append(i)
    return Boxes(np.array(x0, dtype=float), np.array(x1, dtype=float), np.array(y0, dtype=np.int64),
                 np.array(y1, dtype=np.int64), np.array(index, dtype=np.int64))


def machine_size(runs: Runs) -> int:
    """The machine size a table shows: its highest allocated processor + 1 (when no summary says m)."""
    from procset import ProcSet

    highest = -1
    for text in runs.alloc.tolist():
        if text:
            highest = max(highest, ProcSet.from_str(text).max)
    return highest + 1


@dataclass(frozen=True)
class Steps:
    """Jobs waiting and processors busy over time, as step functions.

    ``waiting[i]`` and ``busy[i]`` hold from ``times[i]`` until ``times[i + 1]`` (0 before ``times[0]``): a
    matplotlib ``step(where="post")``.  A run waits from its submission (a rerun's: its resubmission) to
    its start and holds its processors from its start to its end.
    """

    times: np.ndarray
    waiting: np.ndarray
    busy: np.ndarray
    m: int

    def at(self, t: float) -> tuple[int, int]:
        """``(waiting, busy)`` at time ``t`` (events at ``t`` counted: a run starting at ``t`` is busy)."""
        import numpy as np

        i = int(np.searchsorted(self.times, t, side="right")) - 1
        return (0, 0) if i < 0 else (int(self.waiting[i]), int(self.busy[i]))

    @property
    def utilisation(self) -> np.ndarray:
        """Busy processors as a share of the machine's m."""
        return self.busy / self.m


def steps(runs: Runs, m: int) -> Steps:
    """The queue length and busy processors of the whole run (one sweep over its starts and ends)."""
    import numpy as np

    if m <= 0:
        raise PlotError(f"m must be a positive number of processors, got {m}")
    n = len(runs)
    times = np.concatenate([runs.submit, runs.start, runs.start, runs.end])
    waiting = np.concatenate([np.ones(n), -np.ones(n), np.zeros(2 * n)]).astype(np.int64)
    busy = np.concatenate([np.zeros(2 * n, dtype=np.int64), runs.procs, -runs.procs])
    order = np.argsort(times, kind="stable")
    times = times[order]
    waiting = np.cumsum(waiting[order])
    busy = np.cumsum(busy[order])
    last = np.r_[times[1:] != times[:-1], True]  # the value after every event at one time is what holds
    return Steps(times[last], waiting[last], busy[last], int(m))


def waits(jobs: Mapping[str, Sequence] | Any, w: Window | None = None) -> np.ndarray:
    """The wait of every job (its final run's start - its first submission, as the metrics count it).

    With a window: the jobs first submitted in it.  Jobs whose runs were all killed have none, and
    rejected jobs none (:func:`bftune.experiments.runs.metrics.merged_runs`).
    """
    import numpy as np

    merged = merged_runs(jobs)
    wait = np.asarray(merged["wait"], dtype=float)
    if w is not None:
        submit = np.asarray(merged["submit"], dtype=float)
        wait = wait[(submit >= w.start) & (submit < w.end)]
    return wait


#: The states that mean a run was stopped before it finished, and what the pictures call them.
STOPPED = {KILLED: "killed and requeued", WALLTIME: "killed at its walltime"}
