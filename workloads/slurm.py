"""Slurm accounting as a workload: what ``sacct --allusers --parsable2 --format=...`` prints, header included.

Admins have accounting, not SWF files.  A dump is recognised by its content
(:func:`is_slurm_dump`: a first line of ``|``-separated column names holding
``JobID``), so every command that reads a trace reads it.  Columns are found
by their header names (case-insensitive, in any order); the ones a schedule
needs are required: ``JobID``, ``Submit``, ``Start``, ``End``, ``Timelimit``
(or ``TimelimitRaw``, minutes), ``NCPUS`` (or ``AllocCPUS``) and ``State``.
Optional: ``User`` (else every job is user -1), ``Elapsed`` (or
``ElapsedRaw``; the runtime, immune to clock changes, else ``End - Start``),
``ReqCPUS`` (the request; else the allocation), ``Group``, ``Partition``,
``QOS`` and ``NNodes``.  A missing required column, a line with another
number of fields than the header, or an unreadable value is one
:class:`~bftune.workloads.errors.WorkloadError` naming file, line and column
(``lenient``: such lines are skipped and counted under ``malformed_line``).

**Records and rules.**  Each record is counted under the first rule it
meets, in this order (:data:`SLURM_RULES`), and never dropped silently:

==========================  ==================================================================
``job_step``                ``ID.batch``, ``ID.extern``, ``ID.0`` ...: steps run inside their
                            job's allocation; they are not jobs
``heterogeneous_component`` ``ID+N``: a component of a heterogeneous job (one rigid size per
                            job is the model: not modelled)
``pending_at_dump``         ``State`` PENDING, or no start and no end: still queued when
                            sacct ran (array ranges such as ``ID_[4-9]`` are such records)
``never_started``           no ``Start`` (``Unknown``/``None``) but ended: cancelled or
                            failed in the queue
``running_at_dump``         started, no ``End``: its runtime is not known yet
==========================  ==================================================================

Array elements (``ID_N``) are jobs.  What is left becomes the 18 fields of
an SWF record - submit, runtime, allocated processors (``NCPUS``),
requested processors (``ReqCPUS``), requested time (``Timelimit``), status
(COMPLETED 1, CANCELLED 5, any other end 0), user, group, queue (``QOS``),
partition - and goes through the same cleaning as an SWF trace
(:mod:`bftune.workloads.cleaning`, ``cleaning=``; the default filter by
default: ``runtime_le_0``, ``walltime_lt_runtime`` for jobs that ran past
their limit, ...).  Users, groups, QOS and partitions are numbered 1, 2, ...
in order of first appearance; jobs are numbered 1..n in (submit, JobID)
order, as the archive's cleaned files are.

Modified, not dropped (counted in :data:`SLURM_CHANGES`):

- ``time_limit_unlimited`` / ``time_limit_partition``: ``UNLIMITED`` or
  ``Partition_Limit`` becomes the largest finite time limit of the dump in
  the job's partition (else in the whole dump): the most a job there asked
  for.  Without any finite limit the request is unknown (-1), as in SWF,
  and the default filter drops the job (``walltime_le_0``; keep it with
  ``walltime_fallback="runtime"``).
- ``ambiguous_local_time``: with ``timezone``, a time in the repeated hour
  of a daylight-saving change; the occurrence is chosen so that
  Submit <= Start <= End and End - Start = Elapsed, else the first one.
- ``nonexistent_local_time``: with ``timezone``, a time in the skipped hour
  (a correct log has none); read as the zone maps it, an hour apart.

Durations are ``[D-]HH:MM:SS``, ``MM:SS`` or ``MM`` (and Slurm's
``D-HH``, ``D-HH:MM``); fractions of a second are dropped.  **Clock**: sacct
prints local times without a zone.  ``timezone`` (``--timezone``, an IANA
name such as ``Europe/Stockholm``: the cluster's) reads them in that zone,
daylight-saving changes included; without it they are read as UTC, and if
``End - Start`` differs from ``Elapsed`` by exactly one hour for some jobs
the reader says they look like local times across a change.  The trace's
``unix_start_time`` is its first submission, ``timezone`` the zone (UTC by
default).  **Machine size**: ``procs``, else the largest allocation of a job
that ran - said in one line (``inform``), since a dump does not know the
machine.
"""

from __future__ import annotations

import datetime as _dt
import gzip
import os
import re
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import Callable, Iterator
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bftune.support import inputs
from bftune.workloads import limits
from bftune.workloads.cleaning import CLEANING_KEYS, WalltimeFallback, check_cleaning, clean_rows
from bftune.workloads.errors import WorkloadError
from bftune.workloads.model import Trace

#: Records that are not jobs, in the order they are tested (module docstring).
SLURM_RULES: tuple[str, ...] = ("job_step", "heterogeneous_component", "pending_at_dump", "never_started",
                                "running_at_dump")
#: Jobs kept but changed by the reading (module docstring).
SLURM_CHANGES: tuple[str, ...] = ("time_limit_unlimited", "time_limit_partition", "ambiguous_local_time",
                                  "nonexistent_local_time")
#: Every key of a Slurm trace's ``cleaning``: the Slurm rules, then the SWF cleaning's keys, then the changes
#: (``never_started`` is both a Slurm rule and the ``ran`` cleaning's: one key, the records of both).
SLURM_CLEANING_KEYS: tuple[str, ...] = tuple(dict.fromkeys(SLURM_RULES + CLEANING_KEYS + SLURM_CHANGES))

#: Required columns -> the header names that serve (the first one present wins).
REQUIRED: dict[str, tuple[str, ...]] = {
    "JobID": ("jobid",), "Submit": ("submit",), "Start": ("start",), "End": ("end",),
    "Timelimit": ("timelimit", "timelimitraw"), "NCPUS": ("ncpus", "alloccpus"), "State": ("state",)}
OPTIONAL: dict[str, tuple[str, ...]] = {
    "User": ("user", "uid"), "Elapsed": ("elapsed", "elapsedraw"), "ReqCPUS": ("reqcpus",),
    "Group": ("group", "gid"), "Partition": ("partition",), "QOS": ("qos",), "NNodes": ("nnodes", "allocnodes")}
#: The ``--format`` that gives every column the reader uses.
SACCT_FORMAT = "JobID,User,Group,Partition,QOS,Submit,Start,End,Elapsed,Timelimit,NCPUS,ReqCPUS,NNodes,State"

_MISSING = {"", "unknown", "none", "n/a"}
_NO_LIMIT = {"unlimited": "time_limit_unlimited", "partition_limit": "time_limit_partition"}
_STATUS = {"COMPLETED": 1, "CANCELLED": 5}
_JOBID = re.compile(r"^(\d+)(?:_(\d+))?$")
_DURATION = re.compile(r"^(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?(?:\.\d+)?$")
_SNIFF_BYTES = 4096
_GZIP_MAGIC = b"\x1f\x8b"


def is_slurm_dump(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` holds sacct ``--parsable2`` output: its first non-blank line is ``|``-separated
    column names, one of them ``JobID``.  (SWF lines hold no ``|``, Batsim JSON starts with ``{``.)"""
    try:
        with inputs.open_regular(path) as fh:  # not a regular file (a FIFO, /dev/zero): not a dump; the reader says
            head = fh.read(_SNIFF_BYTES)
            if head[:2] == _GZIP_MAGIC:
                fh.seek(0)
                with gzip.GzipFile(fileobj=fh) as gz:
                    head = gz.read(_SNIFF_BYTES)
    except (OSError, EOFError, inputs.InputError):
        return False
    for line in head.decode("utf-8", "replace").splitlines():
        if line.strip():
            names = [name.strip().lower() for name in line.split("|")]
            return "|" in line and "jobid" in names
    return False


@dataclass
class _Columns:
    """Index of each column the reader uses in a record (None: absent), and how to read it."""

    index: dict[str, int | None]
    raw: dict[str, bool]  # Timelimit/Elapsed given as a raw number (TimelimitRaw minutes, ElapsedRaw seconds)
    width: int


def _columns(names: list[str], source: str) -> _Columns:
    lower = [n.strip().lower() for n in names]
    index: dict[str, int | None] = {}
    raw: dict[str, bool] = {}
    for table, required in ((REQUIRED, True), (OPTIONAL, False)):
        for column, accepted in table.items():
            found = next((name for name in accepted if name in lower), None)
            if found is None and required:
                raise WorkloadError(
                    f"{source}:1: column {column} is missing from the sacct header (it has {', '.join(names)}); "
                    f"dump with sacct --allusers --parsable2 --format={SACCT_FORMAT}")
            index[column] = lower.index(found) if found is not None else None
            raw[column] = found is not None and found.endswith("raw")
    return _Columns(index, raw, len(names))


class _LineError(Exception):
    """A value of one record cannot be read; the caller adds file and line."""


def parse_duration(text: str, column: str) -> int | None:
    """A Slurm duration in seconds (``1-02:03:04``, ``02:03:04``, ``03:04``, ``5``); None if missing.

    Slurm's limits read ``MM``, ``MM:SS``, ``HH:MM:SS``, ``D-HH``, ``D-HH:MM``, ``D-HH:MM:SS``.
    """
    text = text.strip()
    if text.lower() in _MISSING:
        return None
    match = _DURATION.match(text)
    if match is None:
        raise _LineError(f"column {column}: {text!r} is not a duration ([D-]HH:MM:SS)")
    days, a, b, c = match.groups()
    parts = [int(x) for x in (a, b, c) if x is not None]
    if days is not None:
        h, m, s = (parts + [0, 0])[:3]
    elif len(parts) == 3:
        h, m, s = parts
    elif len(parts) == 2:
        h, m, s = 0, parts[0], parts[1]
    else:
        h, m, s = 0, parts[0], 0
    return (int(days or 0) * 24 + h) * 3600 + m * 60 + s


def check_timezone(zone: str) -> str:
    """``zone`` if it names a time zone (IANA: ``Europe/Stockholm``), else a WorkloadError saying so."""
    try:
        ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        raise WorkloadError(f"timezone {zone!r}: not a time zone name (an IANA name such as Europe/Stockholm "
                            "or America/New_York)") from None
    return zone


class _Clock:
    """Local times of the dump -> Unix seconds, in ``zone`` (UTC without one), and their daylight-saving cases."""

    def __init__(self, zone: str | None, source: str) -> None:
        if zone is None:
            self.zone: _dt.tzinfo = _dt.timezone.utc
            self.dst = False
        else:
            try:
                self.zone = ZoneInfo(zone)
            except (ZoneInfoNotFoundError, ValueError):
                raise WorkloadError(f"{source}: --timezone {zone!r}: not a time zone name (an IANA name such as "
                                    "Europe/Stockholm or America/New_York)") from None
            self.dst = True
        self.name = zone or "UTC"

    def epochs(self, text: str, column: str) -> tuple[int, int, str] | None:
        """``(first, second, case)``: the instant(s) a wall-clock time can be; case '' | 'ambiguous' | 'nonexistent'."""
        text = text.strip()
        if text.lower() in _MISSING:
            return None
        try:
            naive = _dt.datetime.fromisoformat(text)
        except ValueError:
            raise _LineError(f"column {column}: {text!r} is not a date and time (YYYY-MM-DDTHH:MM:SS)") from None
        if naive.tzinfo is not None:  # a zone written in the value: it says which instant
            t = int(naive.timestamp())
            return t, t, ""
        first = naive.replace(tzinfo=self.zone, fold=0)
        t0 = int(first.timestamp())
        if not self.dst:
            return t0, t0, ""
        t1 = int(naive.replace(tzinfo=self.zone, fold=1).timestamp())
        if t0 == t1:
            return t0, t0, ""
        back = _dt.datetime.fromtimestamp(t0, self.zone).replace(tzinfo=None)
        return (min(t0, t1), max(t0, t1), "ambiguous") if back == naive else (t0, t0, "nonexistent")


def _resolve(times: list[tuple[int, int, str] | None], elapsed: int | None) -> tuple[list[int | None], set[str]]:
    """One instant per time (Submit, Start, End): the occurrences that keep their order and Elapsed."""
    cases = {t[2] for t in times if t is not None and t[2]}
    if "ambiguous" not in cases:
        return [t[0] if t is not None else None for t in times], cases
    # The earlier occurrence first: the rule's default when both keep the order.
    choices: list[tuple] = [(None,) if t is None else (t[0],) if t[0] == t[1] else (t[0], t[1]) for t in times]
    for sub in choices[0]:
        for start in choices[1]:
            for end in choices[2]:
                ordered = [x for x in (sub, start, end) if x is not None]
                if ordered != sorted(ordered):
                    continue
                if elapsed is not None and start is not None and end is not None and end - start != elapsed:
                    continue
                return [sub, start, end], cases
    return [t[0] if t is not None else None for t in times], cases


def _numbered(names: dict[str, int], text: str) -> int:
    """1, 2, ... in order of first appearance; -1 for a missing value."""
    text = text.strip()
    if text.lower() in _MISSING:
        return -1
    return names.setdefault(text, len(names) + 1)


def _integer(text: str, column: str) -> int:
    text = text.strip()
    if text.lower() in _MISSING:
        return -1
    try:
        return int(text)
    except ValueError:
        raise _LineError(f"column {column}: {text!r} is not an integer") from None


def _jobid_key(jobid: str) -> tuple[int, int] | None:
    """``123`` -> (123, -1), ``123_4`` -> (123, 4); anything else (steps, het, ranges) None."""
    match = _JOBID.match(jobid)
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2)) if match.group(2) is not None else -1


def read_slurm(path: str | os.PathLike[str], *, procs: int | None = None, timezone: str | None = None,
               lenient: bool = False, walltime_fallback: WalltimeFallback = None, cleaning: str = "drop-overruns",
               name: str | None = None, inform: Callable[[str], None] | None = None) -> Trace:
    """Read a sacct ``--parsable2`` dump (plain or gzip) into a cleaned Trace (module docstring).

    ``procs``: the machine size (default: the largest allocation, said through ``inform``);
    ``timezone``: the zone sacct's local times are in; ``cleaning``: the SWF cleaning of
    :mod:`bftune.workloads.cleaning` applied to the jobs; ``inform``: where notes go (one line each).
    """
    cleaning = check_cleaning(cleaning)
    path = Path(path)
    source = str(path)
    try:
        with inputs.open_regular(path) as f:
            return _read(path, source, _lines(f, path), procs, timezone, lenient, walltime_fallback, cleaning,
                         name, inform)
    except inputs.InputError as exc:
        raise WorkloadError(str(exc)) from None


def _lines(f, path: Path) -> Iterator[tuple[int, str]]:
    """The dump's lines with their numbers, read a chunk at a time (gunzipped on the fly), each bounded."""
    for start, block in inputs.line_blocks(inputs.text_chunks(f, path), path, limits.MAX_LINE_BYTES):
        for i, raw in enumerate(block):
            if start + i > limits.MAX_JOBS + 1:
                raise WorkloadError(f"{path}:{start + i}: more than {limits.MAX_JOBS:,} records: more than bftune "
                                    "accepts (about 2 KB of memory per job)")
            yield start + i, raw.decode("utf-8", "replace").rstrip("\r")


def _read(path: Path, source: str, lines: Iterator[tuple[int, str]], procs: int | None, timezone: str | None,
          lenient: bool, walltime_fallback: WalltimeFallback, cleaning: str, name: str | None,
          inform: Callable[[str], None] | None) -> Trace:
    clock = _Clock(timezone, source)
    found = next(((number, line) for number, line in lines if line.strip()), None)
    if found is None:
        raise WorkloadError(f"{path}: empty: no sacct header line (sacct --allusers --parsable2 --format=...)")
    first, head = found
    names = head.split("|")
    if names and names[-1] == "":  # --parsable (not 2) ends every line with '|'
        names = names[:-1]
    cols = _columns(names, f"{path}:{first}" if first > 1 else source)
    counts = {key: 0 for key in SLURM_RULES + SLURM_CHANGES}
    counts["malformed_line"] = 0
    users: dict[str, int] = {}
    groups: dict[str, int] = {}
    qos: dict[str, int] = {}
    partitions: dict[str, int] = {}
    pending: list[tuple[tuple[int, int], int, list]] = []  # (JobID key, Unix submit, record fields)
    limits_seen: dict[int, int] = {}  # partition -> largest finite time limit
    no_limit: list[tuple[list, str]] = []
    shifted_hour = 0
    records = 0
    max_alloc = 0
    max_nodes = 0
    ix = cols.index
    for lineno, line in lines:
        if not line.strip():
            continue
        records += 1
        fields = line.split("|")
        if len(fields) == cols.width + 1 and fields[-1] == "":
            fields.pop()
        try:
            if len(fields) != cols.width:
                raise _LineError(f"expected {cols.width} fields (the header's), found {len(fields)}")
            rule, row = _record(fields, ix, cols, clock, (users, groups, qos, partitions), counts)
        except _LineError as exc:
            if not lenient:
                raise WorkloadError(f"{path}:{lineno}: {exc}") from None
            counts["malformed_line"] += 1
            continue
        if rule is not None:
            counts[rule] += 1
            continue
        key, submit, swf, limit_case, elapsed_gap, nodes = row
        if elapsed_gap:
            shifted_hour += 1
        max_alloc = max(max_alloc, swf[4])
        max_nodes = max(max_nodes, nodes)
        if limit_case:
            no_limit.append((swf, limit_case))
        elif swf[8] > 0:
            limits_seen[swf[15]] = max(limits_seen.get(swf[15], 0), swf[8])
        pending.append((key, submit, swf))
    if not records:
        raise WorkloadError(f"{path}: no job record after the header line")
    overall = max(limits_seen.values(), default=-1)
    for swf, case in no_limit:
        swf[8] = limits_seen.get(swf[15], overall)
        counts[case] += 1
    m = _machine_size(path, procs, max_alloc, records, counts, inform)
    if shifted_hour and timezone is None and inform is not None:
        inform(f"{path}: {shifted_hour} jobs' End - Start differs from Elapsed by exactly one hour: sacct printed "
               "local times across a daylight-saving change; give --timezone (the cluster's zone)")
    pending.sort(key=itemgetter(1, 0))  # (submit, JobID)
    t0 = pending[0][1] if pending else 0
    rows = []
    for number, (_, submit, swf) in enumerate(pending, start=1):
        swf[0], swf[1] = number, submit - t0
        rows.append(swf)
    jobs, swf_counts = clean_rows(rows, m, walltime_fallback=walltime_fallback, cleaning=cleaning)
    swf_counts["malformed_line"] = counts.pop("malformed_line")
    cleaning_counts = {key: swf_counts.get(key, 0) + counts.get(key, 0) for key in SLURM_CLEANING_KEYS}
    if not jobs:
        raise WorkloadError(f"{path}: no job left after cleaning ({records} records; "
                            f"dropped: {_dropped_text(cleaning_counts)})")
    header_lines = _header_lines(path, jobs, m, t0, clock.name, max_nodes, limits_seen, partitions, qos,
                                 cleaning_counts, procs is None)
    header = {"MaxProcs": str(m), "UnixStartTime": str(t0), "TimeZoneString": clock.name}
    return Trace(jobs=jobs, max_procs=m, name=name if name is not None else dump_name(path),
                 header=header, unix_start_time=t0, timezone=clock.name, cleaning=cleaning_counts, source=source,
                 header_lines=tuple(header_lines))


def _machine_size(path: Path, procs: int | None, max_alloc: int, records: int, counts: dict[str, int],
                  inform: Callable[[str], None] | None) -> int:
    """m: ``--procs`` when given, else the largest allocation in the dump (said, since a dump rarely shows the
    whole machine busy); no job that ran is an error naming what the records were."""
    if procs is not None:
        return limits.procs(procs, "--procs")
    if max_alloc > 0:
        m = limits.procs(max_alloc, f"{path}: the largest allocation")
        if inform is not None:
            inform(f"{path}: machine size {m} processors, the largest allocation in the dump "
                   "(give --procs M for the machine's real size)")
        return m
    raise WorkloadError(f"{path}: no job of the dump ran ({records} records; "
                        f"{_dropped_text(counts)}): nothing to schedule")


def _record(fields: list[str], ix: dict[str, int | None], cols: _Columns, clock: _Clock, names: tuple,
            counts: dict[str, int]) -> tuple[str | None, tuple]:
    """One record: ``(rule, ())`` if it is not a job, else ``(None, (key, submit, swf row, limit case,
    End - Start off Elapsed by an hour, nodes))``."""
    users, groups, qos, partitions = names
    jobid = fields[ix["JobID"]].strip()  # type: ignore[index]
    if "." in jobid:
        return "job_step", ()
    if "+" in jobid:
        return "heterogeneous_component", ()
    state = fields[ix["State"]].strip().split(" ")[0].upper()  # type: ignore[index]
    submit = clock.epochs(fields[ix["Submit"]], "Submit")  # type: ignore[index]
    start = clock.epochs(fields[ix["Start"]], "Start")  # type: ignore[index]
    end = clock.epochs(fields[ix["End"]], "End")  # type: ignore[index]
    if state == "PENDING" or (start is None and end is None):
        return "pending_at_dump", ()
    if start is None:
        return "never_started", ()
    if end is None or state == "RUNNING":
        return "running_at_dump", ()
    key = _jobid_key(jobid)
    if key is None:
        raise _LineError(f"column JobID: {jobid!r} is not a job number (ID, ID_N, ID.step, ID+N)")
    if submit is None:
        raise _LineError("column Submit: missing for a job that ran")
    elapsed = None
    if ix["Elapsed"] is not None:
        text = fields[ix["Elapsed"]]
        elapsed = _integer(text, "Elapsed") if cols.raw["Elapsed"] else parse_duration(text, "Elapsed")
    (t_sub, t_start, t_end), cases = _resolve([submit, start, end], elapsed)
    for case in cases:
        counts[f"{case}_local_time"] += 1
    assert t_sub is not None and t_start is not None and t_end is not None
    runtime = elapsed if elapsed is not None else t_end - t_start
    limit_text = fields[ix["Timelimit"]].strip()  # type: ignore[index]
    limit_case = _NO_LIMIT.get(limit_text.lower(), "")
    if limit_case:
        walltime = -1
    elif cols.raw["Timelimit"]:
        minutes = _integer(limit_text, "Timelimit")
        walltime = minutes * 60 if minutes >= 0 else -1
    else:
        seconds = parse_duration(limit_text, "Timelimit")
        walltime = seconds if seconds is not None else -1
    alloc = _integer(fields[ix["NCPUS"]], "NCPUS")  # type: ignore[index]
    req = _integer(fields[ix["ReqCPUS"]], "ReqCPUS") if ix["ReqCPUS"] is not None else -1
    nodes = _integer(fields[ix["NNodes"]], "NNodes") if ix["NNodes"] is not None else -1

    def named(column: str, table: dict[str, int]) -> int:
        i = ix[column]
        return -1 if i is None else _numbered(table, fields[i])

    swf: list[int | float] = [0, 0, t_start - t_sub, runtime, alloc, -1, -1, req, walltime, -1,
                              _STATUS.get(state, 0), named("User", users), named("Group", groups), -1,
                              named("QOS", qos), named("Partition", partitions), -1, -1]
    off_by_hour = elapsed is not None and abs((t_end - t_start) - elapsed) == 3600
    return None, (key, t_sub, swf, limit_case, off_by_hour, nodes)


def dump_name(path: str | os.PathLike[str]) -> str:
    """``/x/sacct-2024.txt.gz`` -> ``sacct-2024``: the trace's name (its output files are named after it)."""
    name = Path(path).name
    for suffix in (".gz", ".txt", ".log", ".csv", ".psv", ".sacct"):
        name = name[: -len(suffix)] if name.endswith(suffix) and len(name) > len(suffix) else name
    return name


def _dropped_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in counts.items() if v) or "none"


def _header_lines(path: Path, jobs: list, m: int, t0: int, zone: str, max_nodes: int, limits_seen: dict[int, int],
                  partitions: dict[str, int], qos: dict[str, int], counts: dict[str, int],
                  m_from_dump: bool) -> list[str]:
    """The archive's SWF header fields for a trace read from a dump (``bftune convert`` writes them)."""
    from bftune import __version__  # the package root: no cycle, a plain string

    tz = ZoneInfo(zone) if zone != "UTC" else _dt.timezone.utc
    last = max(j.submit for j in jobs)

    def stamp(t: float) -> str:
        return _dt.datetime.fromtimestamp(t0 + t, tz).strftime("%a %b %d %H:%M:%S %Z %Y")

    lines = ["; Version: 2.2", f"; Computer: Slurm cluster (accounting dump {path.name})",
             "; Installation: unknown (a Slurm accounting dump)",
             f"; Conversion: bftune {__version__} from sacct --parsable2 output, "
             f"{_dt.date.today().isoformat()}",
             f"; MaxJobs: {len(jobs)}", f"; MaxRecords: {len(jobs)}", "; Preemption: No",
             f"; UnixStartTime: {t0}", f"; TimeZoneString: {zone}",
             f"; StartTime: {stamp(0)}", f"; EndTime: {stamp(last)}"]
    if max_nodes > 0:
        lines.append(f"; MaxNodes: {max_nodes}")
    lines.append(f"; MaxProcs: {m}")
    finite = [v for v in limits_seen.values() if v > 0]
    if finite:
        lines.append(f"; MaxRuntime: {max(finite)}")
    lines.append(f"; AllowOveruse: {'Yes' if counts.get('walltime_lt_runtime') or counts.get('overruns_kept') else 'No'}")
    if qos:
        lines.append(f"; MaxQueues: {len(qos)}")
        lines.extend(f"; Queue: {n} {name} (Slurm QOS)" for name, n in qos.items())
    if partitions:
        lines.append(f"; MaxPartitions: {len(partitions)}")
        lines.extend(f"; Partition: {n} {name}" for name, n in partitions.items())
    if m_from_dump:
        lines.append("; Note: MaxProcs is the largest allocation in the dump (the machine's size was not given)")
    dropped = ", ".join(f"{k}={v}" for k, v in counts.items() if v and k not in SLURM_CHANGES)
    lines.append(f"; Note: records of the dump not in this file (bftune's Slurm cleaning): {dropped or 'none'}")
    changed = ", ".join(f"{k}={v}" for k, v in counts.items() if v and k in SLURM_CHANGES)
    if changed:
        lines.append(f"; Note: jobs changed by the reading: {changed}")
    return lines
