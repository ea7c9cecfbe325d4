"""The local driver's results: one row per run, kept as columns.

Why columns and not one ``Run`` object per run: a simulation of CEA-Curie
finishes about 300,000 runs, and an object per run (with its floats, its
name and its allocation as a list of tuples) kept ~700 bytes per job alive
until the end - most of the simulator's memory.  A finished run here costs
a few machine words in typed arrays plus its allocation text and its name
(which out_jobs.csv needs anyway: the core's name is kept rather than made
again); everything the trace already knows (size, walltime, delay, user) is
read from the trace's records when needed.

``RunLog`` is still a sequence of :class:`Run` (``result.runs``): iterating
or indexing it builds each ``Run`` on the fly, so code that wants objects
gets them, and code that wants columns (the out_jobs writer, the metrics)
reads the arrays without building any.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from typing import Iterator, Sequence

from bftune.schedulers.core import machines as ms
from bftune.schedulers.core.jobs import Job
from bftune.schedulers.core.machines import Interval

REJECTED = "REJECTED"

#: Final states, by their one-byte code in ``RunLog.state`` (Batsim's names, plus REJECTED).
STATES = ("COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED", "COMPLETED_KILLED", REJECTED)
STATE_CODE = {name: code for code, name in enumerate(STATES)}


@dataclass(slots=True)
class Run:
    """One execution attempt of a job: a row of out_jobs.csv."""

    id: str  # run name: "0000015", or "0000015#1" for a rerun
    first_id: str  # the job this run belongs to
    seq: int
    subtime: float  # when this run was submitted (a rerun: its registration time)
    original_submit: float  # r_j of the job
    procs: int
    walltime: float
    runtime: float  # the delay profile (actual work)
    user: int
    start: float = -1.0
    end: float = -1.0
    state: str = ""
    alloc: list[Interval] | None = None
    attempt: int = 0
    info: dict | None = None


class RunLog(Sequence[Run]):
    """Finished runs in completion order (the order of out_jobs.csv), as columns.

    ``records`` are the workload's job records in arrival order (what the
    simulator was given); ``job[i]`` is the index in ``records`` of row i's
    job.  Rows are appended by :meth:`add` when a run ends or is rejected.
    """

    __slots__ = ("records", "width", "job", "attempt", "subtime", "start", "end", "state", "run_names", "alloc",
                 "info", "_job", "_attempt", "_subtime", "_start", "_end", "_state")

    def __init__(self, records: Sequence, width: int) -> None:
        self.records = records
        self.width = width  # zero-padded width of job names
        self.job = array("q")
        self.attempt = array("l")
        self.subtime = array("d")
        self.start = array("d")  # -1 for a rejected job (it never ran)
        self.end = array("d")
        self.state = array("B")  # STATE_CODE
        # Rows being added go to Python lists first: compiled, an append to a list is one C call, to an
        # array a method looked up by name (a third of what a finished run cost the simulation).  The
        # first read moves them into the arrays (:meth:`seal`), 8 bytes a value instead of a pointer
        # to a boxed float.
        self._job: list[int] = []
        self._attempt: list[int] = []
        self._subtime: list[float] = []
        self._start: list[float] = []
        self._end: list[float] = []
        self._state: list[int] = []
        self.run_names: list[str] = []  # the runs' names (the core's, kept: out_jobs.csv writes them)
        self.alloc: list[str] = []  # Batsim's text ("0-3 7"); "" for a rejected job
        self.info: list[dict | None] = []

    def add(self, index: int, job: Job, subtime: float, end: float, state: str) -> None:
        """Row for ``job`` (a run of ``records[index]``), ended at ``end`` in ``state``."""
        self._job.append(index)
        self._attempt.append(job.attempt)
        self._subtime.append(subtime)
        self._end.append(end)
        self._state.append(STATE_CODE[state])
        self.run_names.append(job.id)
        if state == REJECTED:
            self._start.append(-1.0)
            self.alloc.append("")
            self.info.append(None)
        else:
            self._start.append(job.start)
            self.alloc.append(ms.to_string(job.alloc or []))
            self.info.append(job.info)

    def seal(self) -> RunLog:
        """The rows added since the last read, moved into the typed arrays (every reader calls it; cheap when
        nothing is pending).  Returns the log."""
        if self._job:
            self.job.fromlist(self._job)  # fromlist, not extend: sized once, half the time
            self.attempt.fromlist(self._attempt)
            self.subtime.fromlist(self._subtime)
            self.start.fromlist(self._start)
            self.end.fromlist(self._end)
            self.state.fromlist(self._state)
            for pending in (self._job, self._attempt, self._subtime, self._start, self._end, self._state):
                pending.clear()
        return self

    def __len__(self) -> int:
        return len(self.seal().job)

    def __getitem__(self, i):  # type: ignore[override]
        self.seal()
        if isinstance(i, slice):
            return [self._run(k) for k in range(*i.indices(len(self)))]
        n = len(self.job)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("run index out of range")
        return self._run(i)

    def __iter__(self) -> Iterator[Run]:
        self.seal()
        records, width, rejected = self.records, self.width, STATE_CODE[REJECTED]
        for j, name, attempt, sub, start, end, code, alloc, info in zip(
                self.job, self.run_names, self.attempt, self.subtime, self.start, self.end, self.state, self.alloc,
                self.info):
            r = records[j]
            yield Run(name, str(r.id).zfill(width) if attempt else name, r.id, sub, float(r.submit), r.procs,
                      float(r.walltime), float(r.runtime), r.user, start, end, STATES[code],
                      None if code == rejected else _intervals(alloc), attempt, info)

    def names(self) -> list[str]:
        """Every row's run name (``job_id`` of out_jobs.csv)."""
        return list(self.run_names)

    def column(self, field: str) -> list:
        """A field of the rows' job records (``procs``, ``walltime``, ``runtime``...), row by row."""
        self.seal()
        records = self.records
        return [getattr(records[j], field) for j in self.job]

    def _run(self, i: int) -> Run:
        r = self.records[self.job[i]]
        attempt = self.attempt[i]
        name = self.run_names[i]
        state = STATES[self.state[i]]
        alloc = None if state == REJECTED else _intervals(self.alloc[i])
        return Run(id=name, first_id=str(r.id).zfill(self.width) if attempt else name, seq=r.id,
                   subtime=self.subtime[i],
                   original_submit=float(r.submit), procs=r.procs, walltime=float(r.walltime),
                   runtime=float(r.runtime), user=r.user, start=self.start[i], end=self.end[i], state=state,
                   alloc=alloc, attempt=attempt, info=self.info[i])


class WaitLog:
    """Only what a period replay needs of its runs: each run's wait, in completion order.

    The full and noisy feedback selectors replay every period once per
    candidate policy (12 replays per period) and keep nothing but the summed
    waits; a :class:`RunLog` row (allocation text, info) per replayed run was
    the largest cost outside the core.  The waits are ``start - subtime`` in
    completion order, as a :class:`RunLog`'s columns give them, added up as
    they come (the same additions, in the same order, as ``sum`` of them
    would make; compiled, one float addition instead of an array's append
    looked up by name); a rejected run never started and waited for nothing
    (a replay's jobs fit the machine, so none is rejected in practice).
    """

    __slots__ = ("_total",)

    def __init__(self) -> None:
        self._total = 0.0

    def add(self, index: int, job: Job, subtime: float, end: float, state: str) -> None:
        if state != REJECTED:
            self._total += job.start - subtime

    def total(self) -> float:
        return self._total


def _intervals(text: str) -> list[Interval]:
    """Back from the text ``RunLog.add`` wrote (already normalised, so no sorting): ``"0-3 7"`` -> intervals."""
    out: list[Interval] = []
    for token in text.split():
        a, _, b = token.partition("-")
        out.append((int(a), int(b)) if b else (int(a), int(a)))
    return out
