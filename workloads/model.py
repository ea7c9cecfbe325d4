"""In-memory workload: the one shape every reader produces and every driver consumes.

A ``Trace`` is deliberately a plain list of small frozen records rather than a
DataFrame: the simulator walks it once, in order, and the records are what the
decision core turns into its own mutable ``Job`` state.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace


@dataclass(frozen=True, slots=True)
class JobRecord:
    """One job as the trace describes it (SPEC section 1 notation in comments)."""

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


def records_from_columns(*columns) -> list[JobRecord]:
    """``[JobRecord(*row) for row in zip(*columns)]``, columns in field order, about twice as fast.

    Readers build hundreds of thousands of records at once; a frozen
    dataclass's ``__init__`` goes through ``object.__setattr__`` once per
    field, while this sets the slots directly (the same values, the same
    objects: a record made here equals and hashes like one made by the class).
    """
    if len(columns) != len(_RECORD_SLOTS):
        raise TypeError(f"records_from_columns needs {len(_RECORD_SLOTS)} columns, got {len(columns)}")
    new = object.__new__
    s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10 = _RECORD_SLOTS
    out: list[JobRecord] = []
    append = out.append
    for a, b, c, d, e, f, g, h, i, j, k in zip(*columns, strict=True):
        r = new(JobRecord)
        s0(r, a)
        s1(r, b)
        s2(r, c)
        s3(r, d)
        s4(r, e)
        s5(r, f)
        s6(r, g)
        s7(r, h)
        s8(r, i)
        s9(r, j)
        s10(r, k)
        append(r)
    return out


#: The slot setters of JobRecord's fields, in field order (the class's own member descriptors).
_RECORD_SLOTS = tuple(getattr(JobRecord, f.name).__set__ for f in fields(JobRecord))


@dataclass(slots=True)
class Trace:
    """A cleaned workload on an m-processor machine.

    ``jobs`` is sorted by (submit, id), the order Batsim and batsched use to
    break ties between equal submission times.
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

    def __len__(self) -> int:
        return len(self.jobs)

    def with_jobs(self, jobs: list[JobRecord], **changes) -> "Trace":
        """A copy holding other jobs (sorted), keeping the machine and metadata."""
        jobs = sorted(jobs, key=_order_key)
        changes.setdefault("header", dict(self.header))
        changes.setdefault("cleaning", dict(self.cleaning))
        return replace(self, jobs=jobs, **changes)


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
