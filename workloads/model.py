"""In-memory workload: the one shape every reader produces and every driver consumes.

A ``Trace`` is deliberately a plain list of small frozen records rather than a
DataFrame: the simulator walks it once, in order, and the records are what the
decision core turns into its own mutable ``Job`` state.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime
from html import escape
from numbers import Integral
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Sequence, cast

from bftune.workloads import limits
from bftune.workloads.errors import WorkloadError

if TYPE_CHECKING:
    import pandas as pd

#: Seconds in a week: the unit traces are resampled, learned and judged by (the one definition; the duration
#: parser's ``w`` unit is the core's own, which imports no other layer).
WEEK = 7 * 24 * 3600


@dataclass(frozen=True, slots=True)
class JobRecord:
    """One job as the trace describes it (the notation of docs/semantics/workloads.md#jobs-and-the-machine in comments)."""

    id: int  # SWF job number (field 1); unique within a trace
    submit: float  # r_j, seconds, as in the trace (no shift)
    procs: int  # q_j
    runtime: float  # p_j, actual runtime (only the simulator may look at it)
    walltime: float  # p~_j, the user's requested time: the kill time
    user: int = -1  # u_j, -1 when unknown
    group: int = -1
    executable: int = -1
    queue: int = -1
    partition: int = -1
    status: int = -1
    # the wait the log records (SWF field 3; Start - Submit of a Slurm dump), -1 when unknown: what the machine
    # really did, which only ``bftune replay`` reads (the simulators compute their own waits)
    wait: float = -1


def records_from_columns(*columns: Sequence) -> list[JobRecord]:
    """``[JobRecord(*row) for row in zip(*columns)]``, columns in field order, about 2.5 times as fast.

    Readers build hundreds of thousands of records at once (CTC-SP2's
    70,025 took 39 ms, a twentieth of a whole ``bftune simulate``).  A
    frozen dataclass's ``__init__`` stores each field through
    ``object.__setattr__``, a call per field; :class:`_RecordTwin` stores
    them as a plain slotted class does (one specialised bytecode each) and
    then gives the record its class, which the interpreter allows because
    both lay out the same slots.  The result is a JobRecord like any other:
    equal, hashing, pickling and frozen as one made by the class.
    """
    if len(columns) != len(_FIELDS):
        raise TypeError(f"records_from_columns needs {len(_FIELDS)} columns, got {len(columns)}")
    if len(set(map(len, columns))) > 1:
        raise ValueError(f"records_from_columns needs columns of one length, got {[len(c) for c in columns]}")
    return cast("list[JobRecord]", list(map(_RecordTwin, *columns)))  # each twin made itself a JobRecord


class _RecordTwin:
    """JobRecord's slots without its frozen ``__setattr__``: what :func:`records_from_columns` fills in."""

    __slots__ = JobRecord.__slots__

    def __init__(self, id, submit, procs, runtime, walltime, user, group, executable, queue, partition,
                 status, wait) -> None:
        self.id = id
        self.submit = submit
        self.procs = procs
        self.runtime = runtime
        self.walltime = walltime
        self.user = user
        self.group = group
        self.executable = executable
        self.queue = queue
        self.partition = partition
        self.status = status
        self.wait = wait
        self.__class__ = JobRecord  # type: ignore[assignment]  # same slots: allowed, and now frozen


#: JobRecord's field names, in order.
_FIELDS = tuple(f.name for f in fields(JobRecord))
if _RecordTwin.__init__.__code__.co_varnames[1:len(_FIELDS) + 1] != _FIELDS:  # a field added to one, not the other
    raise TypeError("_RecordTwin.__init__ must take JobRecord's fields, in order")


@dataclass(frozen=True, slots=True)
class TraceClock:
    """Where a workload's clock starts and in which zone (SWF's UnixStartTime and TimeZoneString).

    Submission times are seconds after ``unix_start_time``; only components
    that read the calendar (the classifier's hour and weekday features) need
    it.  It is workload data: a driver hands it to the scheduler with the
    machine size when a run starts, never as a scheduler option.
    """

    unix_start_time: int | None = None
    timezone: str | None = None


#: A workload that says nothing of its calendar: times read as seconds after the Unix epoch, in UTC.
NO_CLOCK = TraceClock()


@dataclass(slots=True)
class Trace:
    """A cleaned workload on an m-processor machine: what every reader makes and both simulators run.

    ``jobs`` is sorted by (submit, id), the order Batsim and batsched use to
    break ties between equal submission times.  A trace is checked when it is
    made (ids unique, processors whole numbers from 1 to ``max_procs``, times
    finite), so a trace built in Python fails here, naming the job, rather
    than inside a simulation.  Two traces are equal when all their fields are.

    Parameters
    ----------
    jobs : list of JobRecord
        The jobs, sorted by (submit, id).
    max_procs : int
        The machine size m, in processors.
    name : str, default "workload"
        The workload's name (the file's, for a file).
    header : dict of str to str, optional
        The SWF header's fields (``MaxProcs``, ``UnixStartTime``...).
    unix_start_time : int, optional
        The Unix time that submission time 0 is; None: unknown.
    timezone : str, optional
        The zone of the workload's clock (an IANA name); None: UTC.
    cleaning : dict of str to int, optional
        How many records each cleaning rule dropped.
    source : str, optional
        Where the trace was read from.
    header_lines : tuple of str, optional
        The source file's comment lines, verbatim.

    Raises
    ------
    WorkloadError
        A job the simulators cannot run, named (``job 2: runtime -2.0 is negative``).

    Examples
    --------
    >>> trace = Trace(jobs=[JobRecord(id=1, submit=0.0, procs=2, runtime=60.0, walltime=120.0),
    ...                     JobRecord(id=2, submit=30.0, procs=4, runtime=10.0, walltime=60.0)], max_procs=8)
    >>> trace
    <Trace 'workload': 2 jobs, m=8, span 30 s>
    >>> len(trace), trace.to_dataframe()["procs"].tolist()
    (2, [2, 4])
    """

    jobs: list[JobRecord]
    max_procs: int  # m
    name: str = "workload"
    header: dict[str, str] = field(default_factory=dict)
    unix_start_time: int | None = None
    timezone: str | None = None
    cleaning: dict[str, int] = field(default_factory=dict)  # rule -> jobs dropped
    source: str | None = None
    # The ';' comment lines of the source file, verbatim and in order, so that
    # a trace written back (cleaned or resampled) keeps its provenance and the
    # archive's acknowledgement lines.  Parsed values live in ``header``.
    header_lines: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        check_jobs(self.jobs, self.max_procs)

    def __len__(self) -> int:
        return len(self.jobs)

    @property
    def clock(self) -> TraceClock:
        return TraceClock(self.unix_start_time, self.timezone)

    def with_jobs(self, jobs: list[JobRecord], **changes: Any) -> "Trace":
        """A copy holding other jobs (sorted), keeping the machine and metadata.

        Parameters
        ----------
        jobs : list of JobRecord
            The copy's jobs, in any order.
        **changes
            Other fields to change (``name="week 3"``).

        Returns
        -------
        Trace
            The copy.
        """
        jobs = sorted(jobs, key=_order_key)
        changes.setdefault("header", dict(self.header))
        changes.setdefault("cleaning", dict(self.cleaning))
        return replace(self, jobs=jobs, **changes)

    # --- as a notebook shows it: a line, not the 4 million characters of KTH-SP2's jobs ------------------

    def __repr__(self) -> str:
        return f"<Trace {self.name!r}: {len(self.jobs):,} jobs, m={self.max_procs}, span {_span(self.jobs)}>"

    def _repr_html_(self) -> str:
        """A small table for notebooks: what the trace is, not its jobs (``to_dataframe()`` has those)."""
        users = len({job.user for job in self.jobs} - {-1})
        rows = [("jobs", f"{len(self.jobs):,}"), ("machine", f"{self.max_procs:,} processors"),
                ("submissions over", _span(self.jobs)), ("users", f"{users:,}" if users else "unknown")]
        if self.unix_start_time is not None:
            start = datetime.fromtimestamp(self.unix_start_time, UTC).strftime("%Y-%m-%d %H:%M UTC")
            rows.append(("starts", start + (f" ({self.timezone})" if self.timezone else "")))
        if self.cleaning:
            rows.append(("dropped by cleaning", f"{sum(self.cleaning.values()):,} records"))
        if self.source:
            rows.append(("source", self.source))
        cells = "".join(f"<tr><th style='text-align:left'>{escape(k)}</th><td style='text-align:left'>{escape(v)}"
                        "</td></tr>" for k, v in rows)
        return f"<table><caption>Trace {escape(self.name)}</caption>{cells}</table>"

    # --- to and from pandas (imported here only: readers and simulators never need it) --------------------

    def to_dataframe(self) -> "pd.DataFrame":
        """The jobs as a DataFrame: one row per job, one column per field of :class:`JobRecord`.

        The machine size, name and clock travel in ``DataFrame.attrs``, which
        :meth:`from_dataframe` reads back when not given.

        Returns
        -------
        pandas.DataFrame
            Columns ``id``, ``submit``, ``procs``, ``runtime``, ``walltime``, ``user``, ``group``,
            ``executable``, ``queue``, ``partition``, ``status``, ``wait`` (-1: unknown), in the
            trace's order.

        Examples
        --------
        >>> from bftune.workloads.synthetic import generate
        >>> frame = generate(100, 16, 1).to_dataframe()
        >>> frame.shape, frame.attrs["max_procs"]
        ((100, 12), 16)
        """
        import pandas as pd

        columns = {name: [getattr(job, name) for job in self.jobs] for name in _FIELDS}
        frame = pd.DataFrame({name: pd.Series(values, dtype="int64" if name in _INT_FIELDS else "float64")
                              for name, values in columns.items()})
        frame.attrs.update(name=self.name, max_procs=self.max_procs, unix_start_time=self.unix_start_time,
                           timezone=self.timezone)
        return frame

    @classmethod
    def from_dataframe(cls, frame: "pd.DataFrame", *, max_procs: int | None = None,
                       name: str | None = None) -> "Trace":
        """A trace from a DataFrame with a row per job (:meth:`to_dataframe`'s columns).

        Parameters
        ----------
        frame : pandas.DataFrame
            Columns ``id``, ``submit``, ``procs``, ``runtime`` and ``walltime`` (seconds) are needed;
            ``user``, ``group``, ``executable``, ``queue``, ``partition``, ``status`` and ``wait`` are
            read when present (-1, unknown, where absent or empty); other columns are ignored.  Rows
            in any order.
        max_procs : int, optional
            The machine size m (default: ``frame.attrs["max_procs"]``, which :meth:`to_dataframe` sets).
        name : str, optional
            The trace's name (default: ``frame.attrs["name"]``, else "workload").

        Returns
        -------
        Trace
            The jobs, sorted by (submit, id), checked as any trace is.

        Raises
        ------
        WorkloadError
            A needed column missing, no machine size, a value that is not a number, or a job the
            simulators cannot run (named).

        Examples
        --------
        >>> import pandas as pd
        >>> frame = pd.DataFrame({"id": [2, 1], "submit": [60, 0], "procs": [4, 2], "runtime": [30, 10],
        ...                       "walltime": [60, 60], "user": [7, 3]})
        >>> trace = Trace.from_dataframe(frame, max_procs=8, name="mine")
        >>> [(job.id, job.user) for job in trace.jobs]
        [(1, 3), (2, 7)]
        """
        missing = [column for column in _FIELDS[:5] if column not in frame.columns]
        if missing:
            raise WorkloadError(f"the DataFrame has no column {', '.join(missing)}: a trace's jobs need id, submit, "
                                "procs, runtime and walltime")
        if max_procs is None:
            max_procs = frame.attrs.get("max_procs")
            if max_procs is None:
                raise WorkloadError("give max_procs, the machine size: the DataFrame does not say it")
        attrs = frame.attrs
        columns = [_column(frame, column) for column in _FIELDS]
        return cls(jobs=sort_jobs(records_from_columns(*columns)), max_procs=max_procs,
                   name=name if name is not None else attrs.get("name", "workload"),
                   unix_start_time=attrs.get("unix_start_time"), timezone=attrs.get("timezone"))


#: JobRecord's fields that hold integers (ids, processors, and the SWF's numbered categories).
_INT_FIELDS = ("id", "procs", "user", "group", "executable", "queue", "partition", "status")


def _column(frame: "pd.DataFrame", name: str) -> list:
    """Column ``name`` as Python numbers: -1 (unknown) where an optional one is absent or empty; a whole-number
    float column (what a CSV with gaps gives) as integers; what is not a number refused, naming the column."""
    if name not in frame.columns:
        return [-1 if name in _INT_FIELDS else -1.0] * len(frame)
    series = frame[name]
    try:
        series = series.astype("float64")
    except (TypeError, ValueError):
        raise WorkloadError(f"column {name}: not a number in every row (first: {_shown(series.iloc[0])})") from None
    if name not in _FIELDS[:5]:
        series = series.fillna(-1)
    values = series.tolist()
    if name in _INT_FIELDS and all(v.is_integer() for v in values):
        return [int(v) for v in values]
    return values


def _span(jobs: Sequence[JobRecord]) -> str:
    """How long the submissions last, in a unit a person reads at a glance (days, hours, seconds)."""
    if not jobs:
        return "0 s"
    submits = list(map(attrgetter("submit"), jobs))
    seconds = max(submits) - min(submits)
    if seconds >= 86400:
        return f"{seconds / 86400:,.1f} days"
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds:g} s"


#: The largest job id: ids are stored as 64-bit integers (the parse cache, pandas columns of out_jobs.csv).
MAX_JOB_ID = 2**63 - 1


def check_jobs(jobs: Sequence[JobRecord], max_procs: int) -> None:
    """What the simulator and both backends rely on, checked where a trace is made, in one message naming the job.

    The file readers refuse bad values line by line; a trace built in Python (``bftune.Trace``, a notebook)
    comes here, where a duplicate id once failed deep inside the simulator (``KeyError``), ``jobs=None`` or
    a list of dicts with a bare ``TypeError``/``AttributeError``, and a float ``procs`` ran as if it were a
    whole number of processors.  Each check runs at C speed over the whole list (``set(map(type, ...))``,
    ``min``); only a failing trace is searched job by job: about 80 ms for CEA-Curie's 290,124 jobs.
    """
    if not isinstance(jobs, (list, tuple)):
        raise WorkloadError(f"a trace's jobs must be a list of JobRecord, not {type(jobs).__name__}")
    if set(map(type, jobs)) - {JobRecord}:
        index, job = next((i, j) for i, j in enumerate(jobs) if type(j) is not JobRecord)
        raise WorkloadError(f"jobs[{index}] is a {type(job).__name__}, not a JobRecord")
    limits.procs(max_procs, "the trace's max_procs")
    ids = list(map(attrgetter("id"), jobs))
    _whole_numbers(jobs, "id", ids, 0, MAX_JOB_ID, "a whole number from 0")
    if len(set(ids)) != len(ids):
        seen: set[int] = set()
        twice = next(i for i in ids if i in seen or seen.add(i))  # type: ignore[func-returns-value]
        raise WorkloadError(f"job id {twice} is given twice: ids name the jobs (out_jobs.csv, Batsim's workload) "
                            "and must be unique")
    _whole_numbers(jobs, "procs", list(map(attrgetter("procs"), jobs)), 1, limits.MAX_PROCS,
                   "a whole number of processors from 1")
    check_times(jobs)
    if jobs and min(map(attrgetter("runtime"), jobs)) < 0:
        job = next(j for j in jobs if j.runtime < 0)
        raise WorkloadError(f"job {job.id}: runtime {job.runtime!r} is negative")


def _whole_numbers(jobs: Sequence[JobRecord], name: str, values: list, low: int, high: int, what: str) -> None:
    """Every value an integer (numpy's too, not a bool or a float) in ``low..high``, else the first job that is not."""
    if set(map(type, values)) - {int} and not all(isinstance(v, Integral) and not isinstance(v, bool)
                                                  for v in values):
        index = next(i for i, v in enumerate(values) if not isinstance(v, Integral) or isinstance(v, bool))
        raise WorkloadError(f"{_who(jobs, index, name)}: {name} {_shown(values[index])} is not {what}")
    if values and (min(values) < low or max(values) > high):
        index = next(i for i, v in enumerate(values) if not low <= v <= high)
        raise WorkloadError(f"{_who(jobs, index, name)}: {name} {_shown(values[index])} is not {what} "
                            f"to {high:,}")


def _who(jobs: Sequence[JobRecord], index: int, name: str) -> str:
    """The job of an error line: by its id, or by its position when the id is what is wrong."""
    return f"jobs[{index}]" if name == "id" else f"job {_shown(jobs[index].id)}"


def _shown(value: object) -> str:
    """A value for an error line, cut: a 400-digit id is not echoed whole."""
    if isinstance(value, int) and value.bit_length() > 128:  # str() of 5,000 digits is itself an error
        return f"(an integer of about {math.ceil(value.bit_length() * math.log10(2)):,} digits)"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_times(jobs: Sequence[JobRecord]) -> None:
    """Every submission time and runtime a finite number, no walltime NaN (an infinite walltime: no limit).

    The file readers refuse such values line by line; a trace built in Python (``bftune.Trace``, a notebook)
    comes here.  A NaN submission time made the simulator loop for good and an infinite runtime failed deep
    inside it, so the trace type itself refuses them, in one message naming the job.  The sums run at C speed
    (a NaN or an infinity anywhere makes the sum so): about 10 ms for 300,000 jobs; only a failing trace is
    searched job by job.
    """
    for name in ("submit", "runtime"):
        get = attrgetter(name)
        try:
            fine = math.isfinite(math.fsum(map(get, jobs)))
        except (OverflowError, ValueError):  # inf + -inf, or a finite sum past the largest float
            fine = False
        except TypeError:  # not a number at all
            fine = False
        if not fine:
            for job in jobs:
                value = get(job)
                if not isinstance(value, (int, float)) or not math.isfinite(value):
                    raise WorkloadError(f"job {job.id}: {name} {value!r} is not a finite number of seconds")
    if any(map(math.isnan, map(attrgetter("walltime"), jobs))):
        job = next(j for j in jobs if math.isnan(j.walltime))
        raise WorkloadError(f"job {job.id}: walltime nan is not a number of seconds (inf: no limit)")


#: Minimum width of zero-padded job names (what Batsim's golden files use).
MIN_NAME_WIDTH = 7


def name_width(ids) -> int:
    """The one zero-padded width of every job name of a workload: 7, or the digits of its largest id.

    Zero-padding to one width makes string order numeric order, which
    batsched's tie-break between equal submission times relies on; the Batsim
    workload converter and the local simulator both name jobs with it.
    """
    return max(MIN_NAME_WIDTH, len(str(max(ids, default=0))))


def job_name(job_id: int, width: int = MIN_NAME_WIDTH) -> str:
    """``15`` -> ``"0000015"`` (the job's name inside its workload, without the ``w0!`` prefix)."""
    return str(job_id).zfill(width)


def _order_key(job: JobRecord) -> tuple[float, int]:
    return (job.submit, job.id)


def sort_jobs(jobs: list[JobRecord]) -> list[JobRecord]:
    """Jobs in (submit, id) order, the canonical trace order."""
    return sorted(jobs, key=_order_key)
