"""Slurm accounting as a workload: what ``sacct --allusers --parsable2 --format=...`` prints.

Admins have accounting, not SWF files.  A dump is recognised by its content
(:func:`is_slurm_dump`: a first line of column names holding ``JobID``,
separated by one delimiter, whichever it is: ``|``, ``--delimiter=,`` or
``☃``; a UTF-8 byte-order mark before it is ignored), so every command
that reads a trace reads it.  A dump without its header line
(``--noheader``) is read when its columns are given (``sacct_format``:
the list given to ``sacct --format``, widths such as ``JobName%30``
dropped, any case) and its delimiter if not ``|`` (``delimiter``); a file
that looks like one but comes without them is refused with a line saying
so (:func:`looks_like_headerless_dump`, :func:`headerless_dump_error`).

How lines become records of fields - decoding (UTF-8, else Latin-1, per
line), CRLF, ``--parsable``'s trailing delimiter, records spanning several
lines (a submit line with newlines), and values holding the delimiter
(sacct does not escape: the shaped columns anchor the record and the
surplus fields are joined back into the free-text columns, when every
reading that fits gives the same values to the columns bftune reads; else
the record is ambiguous: one line naming file, line and candidate columns,
``lenient``: counted under ``ambiguous_line``) - is
:mod:`bftune.workloads.sacct_lines`; which columns are shaped, free text or
opaque is :mod:`bftune.workloads.sacct_columns`.

Columns are found by their names (case-insensitive, in any order); the ones
a schedule needs are required: ``JobID``, ``Submit``, ``Start``, ``End``,
``Timelimit`` (or ``TimelimitRaw``, minutes), ``NCPUS`` (or ``AllocCPUS``)
and ``State``.  Optional: ``User`` (else every job is user -1), ``Elapsed``
(or ``ElapsedRaw``; the runtime, immune to clock changes, else ``End -
Start``), ``ReqCPUS`` (the request; else the allocation), ``Group``,
``Partition``, ``QOS``, ``NNodes``, ``Cluster`` and ``AllocTRES`` /
``ReqTRES`` (``AllocGRES`` / ``ReqGRES`` in old dumps).  A missing required
column, a record with fewer fields than the header, or an unreadable value
is one :class:`~bftune.workloads.errors.WorkloadError` naming file, line
and column, the value cut to 40 characters (``lenient``: skipped and
counted under ``malformed_line``).  **Limits** (those of every workload,
:mod:`bftune.workloads.limits`): times are Unix times from 1970 to 2106
(2^32 s: a ``Submit`` in year 0001 is refused), durations at most 2^32 s
(a ``Timelimit`` of ``99999999-00:00:00`` is refused), integers at most 18
digits, a record at most 1 MiB, at most 10 million records.

**Records and rules.**  Each record is counted under the first rule it
meets, in this order (:data:`SLURM_RULES`), and never dropped silently:

==========================  ==================================================================
``ambiguous_line``          (``lenient`` only) a record whose surplus fields can be read in
                            several ways that differ in a column bftune reads
``other_cluster``           with ``cluster``: a record of another cluster (``sacct -M``)
``job_step``                ``ID.batch``, ``ID.extern``, ``ID.0`` ...: steps run inside their
                            job's allocation; they are not jobs
``heterogeneous_component`` ``ID+N``: a component of a heterogeneous job (one rigid size per
                            job is the model: not modelled)
``other_partition``         with ``partitions``: a record of another partition
``pending_at_dump``         ``State`` PENDING, or no start and no end: still queued when
                            sacct ran (array ranges such as ``ID_[4-9]`` are such records)
``never_started``           no ``Start`` (``Unknown``/``None``) but ended: cancelled or
                            failed in the queue
``running_at_dump``         started, no ``End``: its runtime is not known yet
``requeued_attempt``        an attempt of a requeued job (``sacct -D``: State REQUEUED, and a
                            later record of the same JobID): the job is its last attempt,
                            submitted when the first attempt was (the submission the user
                            made; Slurm versions differ in which Submit they print)
``duplicate_job_id``        the same JobID again with the same values (dumps of overlapping
                            periods joined); with other values it is an error naming both
                            lines (``lenient``: the later record is counted here)
==========================  ==================================================================

**Clusters.**  A dump of several clusters (a ``Cluster`` column holding
several names, ``sacct -M all``) is refused in one line listing them, unless
``cluster`` names the one to read.  **Partitions.**  ``partitions`` keeps the
jobs of those partitions (their machine, when ``procs`` is not given: the
largest allocation among them).  **Whole nodes.**  ``cores_per_node`` C makes
a job take ``NNodes x C`` processors (sites that allocate whole nodes, or
``--exclusive`` jobs); it needs the ``NNodes`` column.  **TRES.**  Jobs that
asked for GPUs or another TRES beyond processors and memory (``gres/gpu=1``
in ``AllocTRES``, else ``ReqTRES``) are kept and counted: the trace's header
line ``; Note: N jobs asked for ...`` and ``Trace.header["TRESJobs"]``
(bftune schedules processors only).

Array elements (``ID_N``) are jobs.  What is left becomes the 18 fields of
an SWF record - submit, runtime, allocated processors (``NCPUS``),
requested processors (``ReqCPUS``), requested time (``Timelimit``), status
(COMPLETED 1, CANCELLED 5, any other end 0), user, group, queue (``QOS``),
partition - and goes through the same cleaning as an SWF trace
(:mod:`bftune.workloads.cleaning`, ``cleaning=``; the default filter by
default: ``runtime_le_0``, ``walltime_lt_runtime`` for jobs that ran past
their limit by more than the grace below, ...).  Users, groups, QOS and
partitions are numbered 1, 2, ... in order of first appearance; jobs are
numbered 1..n in (submit, JobID) order, as the archive's cleaned files are.

Modified, not dropped (counted in :data:`SLURM_CHANGES`):

- ``runtime_capped_at_limit``: a job that ran past its time limit by at
  most ``overrun_grace`` seconds (default :data:`DEFAULT_OVERRUN_GRACE`,
  300 s) gets its limit as runtime.  Slurm kills a job at its limit, but
  the kill is late: the controller checks limits about every 30 s, then
  sends SIGTERM and waits ``KillWait`` (30 s by default) before SIGKILL,
  and a step that does not die waits ``UnkillableStepTimeout`` (60 s);
  so a TIMEOUT job ends up to a few minutes after its limit.  Five minutes
  cover these defaults with a margin; a site with ``OverTimeLimit`` (minutes
  a job may overrun) adds it.  ``overrun_grace=0`` reads runtimes as logged.
  A job over its limit by more than the grace goes through the cleaning as
  any overrun (the default drops it as ``walltime_lt_runtime``).
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

import os
import re
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Callable, Iterator, Sequence

from bftune.support import inputs
from bftune.workloads import limits
from bftune.workloads.cleaning import WalltimeFallback, check_cleaning
from bftune.workloads.errors import WorkloadError
from bftune.workloads.model import Trace
from bftune.workloads.sacct_columns import cut, names_text, parse_format
from bftune.workloads.sacct_jobs import USER_LINE, build_trace, dump_name, user_names  # noqa: F401 - re-exported
from bftune.workloads.sacct_records import (  # noqa: F401 - the rules: re-exported
    _LISTED,
    DEFAULT_OVERRUN_GRACE,
    SLURM_CHANGES,
    SLURM_CLEANING_KEYS,
    SLURM_RULES,
    Options,
    Row,
    Tally,
)
from bftune.workloads.sacct_header import (  # noqa: F401 - is_slurm_dump ...: re-exported
    header_of,
    headerless_dump_error,
    is_slurm_dump,
    looks_like_headerless_dump,
)
from bftune.workloads.sacct_lines import AmbiguousRecord, Layout, LineError, physical_lines, records, split_record
from bftune.workloads.sacct_values import (  # noqa: F401 - check_timezone and parse_duration: re-exported
    MISSING,
    Clock,
    check_timezone,
    integer,
    parse_duration,
    resolve_times,
    seconds,
)


#: Required columns -> the header names that serve (the first one present wins).
REQUIRED: dict[str, tuple[str, ...]] = {
    "JobID": ("jobid",), "Submit": ("submit",), "Start": ("start",), "End": ("end",),
    "Timelimit": ("timelimit", "timelimitraw"), "NCPUS": ("ncpus", "alloccpus"), "State": ("state",)}
OPTIONAL: dict[str, tuple[str, ...]] = {
    "User": ("user", "uid"), "Elapsed": ("elapsed", "elapsedraw"), "ReqCPUS": ("reqcpus",),
    "Group": ("group", "gid"), "Partition": ("partition",), "QOS": ("qos",), "NNodes": ("nnodes", "allocnodes"),
    "Cluster": ("cluster",), "AllocTRES": ("alloctres",), "ReqTRES": ("reqtres",), "AllocGRES": ("allocgres",),
    "ReqGRES": ("reqgres",)}
#: The ``--format`` that gives every column the reader uses.
SACCT_FORMAT = "JobID,User,Group,Partition,QOS,Submit,Start,End,Elapsed,Timelimit,NCPUS,ReqCPUS,NNodes,State"

_NO_LIMIT = {"unlimited": "time_limit_unlimited", "partition_limit": "time_limit_partition"}
_STATUS = {"COMPLETED": 1, "CANCELLED": 5}
_JOBID = re.compile(r"^(\d+)(?:_(\d+))?$")
#: TRES every job has: processors and what comes with them; any other (gres/gpu, license/...) is counted.
_PLAIN_TRES = frozenset({"cpu", "mem", "node", "billing", "energy", "fs/disk", "vmem", "pages"})


# --------------------------------------------------------------------------
# reading




@dataclass
class _Columns:
    """Index of each column the reader uses in a record (None: absent), and how to read it."""

    index: dict[str, int | None]
    raw: dict[str, bool]  # Timelimit/Elapsed given as a raw number (TimelimitRaw minutes, ElapsedRaw seconds)

    def used(self) -> dict[int, Callable[[str], object]]:
        """The columns read, each with what the reader makes of a value (for TRES: the kinds beyond processors)."""
        tres = ("AllocTRES", "ReqTRES", "AllocGRES", "ReqGRES")
        return {i: _tres_kinds if column in tres else str.strip for column, i in self.index.items() if i is not None}






def read_slurm(path: str | os.PathLike[str], *, procs: int | None = None, timezone: str | None = None,
               lenient: bool = False, walltime_fallback: WalltimeFallback = None, cleaning: str = "drop-overruns",
               name: str | None = None, inform: Callable[[str], None] | None = None,
               sacct_format: str | None = None, delimiter: str | None = None,
               partitions: Sequence[str] | None = None, cores_per_node: int | None = None,
               cluster: str | None = None, overrun_grace: int = DEFAULT_OVERRUN_GRACE) -> Trace:
    """Read a sacct dump (plain or gzip) into a cleaned Trace (module docstring).

    ``procs``: the machine size (default: the largest allocation, said through ``inform``);
    ``timezone``: the zone sacct's local times are in; ``cleaning``: the SWF cleaning of
    :mod:`bftune.workloads.cleaning` applied to the jobs; ``inform``: where notes go (one line each);
    ``sacct_format``/``delimiter``: the columns and delimiter of a dump without header line;
    ``partitions``: keep only these partitions' jobs; ``cores_per_node``: a job takes NNodes x C processors;
    ``cluster``: the cluster to read in a dump of several; ``overrun_grace``: seconds past its limit a job is
    still read as killed at its limit.
    """
    cleaning = check_cleaning(cleaning)
    opts = _options(procs, lenient, partitions, cores_per_node, cluster, overrun_grace, sacct_format, delimiter)
    path = Path(path)
    clock = Clock(timezone, str(path))
    try:
        with inputs.open_regular(path) as f:
            blocks = inputs.line_blocks(inputs.text_chunks(f, path), path, limits.MAX_LINE_BYTES)
            tally = _collect(path, physical_lines(blocks), clock, opts)
    except inputs.InputError as exc:
        raise WorkloadError(str(exc)) from None
    return build_trace(path, tally, clock, opts, walltime_fallback, cleaning, name, inform, timezone is None)


def _options(procs: int | None, lenient: bool, partitions: Sequence[str] | None, cores_per_node: int | None,
             cluster: str | None, overrun_grace: int, sacct_format: str | None, delimiter: str | None) -> Options:
    if procs is not None:
        procs = limits.procs(procs, "--procs")
    if cores_per_node is not None:
        cores_per_node = limits.procs(cores_per_node, "--cores-per-node")
    if isinstance(overrun_grace, bool) or not isinstance(overrun_grace, int) or \
            not 0 <= overrun_grace <= limits.MAX_TIME:
        raise WorkloadError(f"--overrun-grace must be a number of seconds in 0..2^32, not {cut(str(overrun_grace))}")
    if isinstance(partitions, str):
        partitions = partitions.split(",")
    chosen = None if partitions is None else frozenset(p.strip() for p in partitions if p.strip())
    if chosen is not None and not chosen:
        raise WorkloadError("--partition: name at least one partition")
    if cluster is not None and not cluster.strip():
        raise WorkloadError("--cluster: name a cluster")
    if delimiter is not None and (not delimiter or "\n" in delimiter or "\r" in delimiter or
                                  any(c.isalnum() for c in delimiter)):
        raise WorkloadError(f"--sacct-delimiter {cut(delimiter)}: a delimiter is one or more characters that are "
                            "neither letters, digits nor line ends")
    if sacct_format is not None:
        parse_format(sacct_format)
    return Options(procs, lenient, chosen, cores_per_node, None if cluster is None else cluster.strip(),
                    overrun_grace, sacct_format, delimiter)


def _layout(path: Path, lines: Iterator[tuple[int, str]],
            opts: Options) -> tuple[_Columns, Layout, Iterator[tuple[int, str]]]:
    """The dump's columns (its header's, else ``sacct_format``'s) and the lines of its records."""
    found = next(((number, line) for number, line in lines if line.strip()), None)
    if found is None:
        raise WorkloadError(f"{path}: empty: no sacct header line (sacct --allusers --parsable2 --format=...)")
    first, line = found
    header = header_of(line, opts.delimiter)
    given = None if opts.sacct_format is None else parse_format(opts.sacct_format)
    if header is not None:
        names, delimiter, parsable = header
        if given is not None and [n.lower() for n in given] != [n.lower() for n in names]:
            raise WorkloadError(f"{path}:{first}: the dump's header ({names_text(names)}) is not the sacct format "
                                f"given ({names_text(given)}); leave the format out, the header says it")
        cols = _columns(names, f"{path}:{first}", "the sacct header", opts)
        return cols, Layout.of(names, delimiter, parsable, cols.used()), lines
    if given is None:
        if looks_like_headerless_dump(path):
            raise headerless_dump_error(path)
        raise WorkloadError(f"{path}:{first}: {cut(line)} is not a sacct header line (column names, JobID among "
                            "them, separated by a delimiter: sacct --allusers --parsable2 --format=...)")
    delimiter = opts.delimiter or "|"
    parsable = line.endswith(delimiter) and line.count(delimiter) == len(given)
    cols = _columns(given, str(path), "the sacct format given", opts)
    return cols, Layout.of(given, delimiter, parsable, cols.used()), chain([(first, line)], lines)


def _columns(names: list[str], where: str, what: str, opts: Options) -> _Columns:
    lower = [n.strip().lower() for n in names]
    index: dict[str, int | None] = {}
    raw: dict[str, bool] = {}
    for table, required in ((REQUIRED, True), (OPTIONAL, False)):
        for column, accepted in table.items():
            found = next((name for name in accepted if name in lower), None)
            if found is None and required:
                raise WorkloadError(
                    f"{where}: column {column} is missing from {what} (it has {names_text(names)}); "
                    f"dump with sacct --allusers --parsable2 --format={SACCT_FORMAT}")
            index[column] = lower.index(found) if found is not None else None
            raw[column] = found is not None and found.endswith("raw")
    for option, column, flag in ((opts.partitions, "Partition", "--partition"),
                                 (opts.cores_per_node, "NNodes", "--cores-per-node"),
                                 (opts.cluster, "Cluster", "--cluster")):
        if option is not None and index[column] is None:
            raise WorkloadError(f"{where}: {flag} needs the {column} column, which {what} does not have "
                                f"(add {column} to sacct --format)")
    return _Columns(index, raw)


def _collect(path: Path, lines: Iterator[tuple[int, str]], clock: Clock, opts: Options) -> Tally:
    """Every record of the dump read: the jobs as rows, the rest counted."""
    cols, layout, rest = _layout(path, lines, opts)
    tally = Tally(counts={key: 0 for key in SLURM_RULES + SLURM_CHANGES + ("malformed_line",)})
    for lineno, text in records(rest, layout, str(path)):
        tally.records += 1
        try:
            values = split_record(text, layout)
            rule = _record(values, cols, clock, tally, opts, lineno)
        except LineError as exc:
            if not opts.lenient:
                raise WorkloadError(f"{path}:{lineno}: {exc}") from None
            tally.counts["ambiguous_line" if isinstance(exc, AmbiguousRecord) else "malformed_line"] += 1
            continue
        if rule is not None:
            tally.counts[rule] += 1
    if not tally.records:
        raise WorkloadError(f"{path}: no job record after the header line")
    _check_clusters(path, tally, opts)
    return tally


def _check_clusters(path: Path, tally: Tally, opts: Options) -> None:
    """One cluster per machine: several without ``cluster`` chosen, or the chosen one absent, is an error; and
    the partitions chosen must be in the dump."""
    clusters = [c for c in tally.clusters if c.lower() not in MISSING]
    listed = names_text(clusters, 8, "named") or "no cluster name"
    if opts.cluster is None and len(clusters) > 1:
        many = f"{len(clusters):,}" + (" or more" if len(tally.clusters) >= _LISTED else "")
        raise WorkloadError(f"{path}: the dump holds the jobs of {many} clusters ({listed}): one machine is "
                            "simulated; choose one with --cluster NAME")
    if opts.cluster is not None and opts.cluster not in tally.clusters:
        raise WorkloadError(f"{path}: no record of cluster {cut(opts.cluster)} (the dump holds {listed})")
    if opts.partitions is not None and not opts.partitions & set(tally.partitions):
        known = names_text([p for p in tally.partitions if p.lower() not in MISSING], 8, "named")
        raise WorkloadError(f"{path}: no record of partition {', '.join(sorted(opts.partitions))} (the dump holds "
                            f"{known or 'no partition name'})")


def _record(values: list[str], cols: _Columns, clock: Clock, tally: Tally, opts: Options,
            lineno: int) -> str | None:
    """One record: the rule it meets, or None when it is a job (then added to ``tally.rows``)."""
    ix = cols.index

    def value(column: str) -> str:
        i = ix[column]
        return "" if i is None else values[i].strip()

    cluster = value("Cluster")
    if ix["Cluster"] is not None:
        tally.seen(tally.clusters, cluster)
    if opts.cluster is not None and cluster != opts.cluster:
        return "other_cluster"
    jobid = value("JobID")
    if "." in jobid:
        return "job_step"
    if "+" in jobid:
        return "heterogeneous_component"
    partition = value("Partition")
    tally.seen(tally.partitions, partition)
    if opts.partitions is not None and opts.partitions.isdisjoint(partition.split(",")):
        return "other_partition"
    state = value("State").split(" ")[0].upper()
    submit, start, end = (clock.epochs(value(c), c) for c in ("Submit", "Start", "End"))
    rule = ("pending_at_dump" if state == "PENDING" or (start is None and end is None) else
            "never_started" if start is None else "running_at_dump" if end is None or state == "RUNNING" else None)
    key = _jobid_key(jobid, cluster)
    if rule is not None:
        if key is not None:
            tally.others.add(key)
        return rule
    if key is None:
        raise LineError(f"column JobID: {cut(jobid)} is not a job number (ID, ID_N, ID.step, ID+N)")
    if submit is None:
        raise LineError("column Submit: missing for a job that ran")
    tally.rows.append(_job(value, cols, clock, tally, opts, (key, lineno, state), (submit, start, end)))
    return None


def _job(value: Callable[[str], str], cols: _Columns, clock: Clock, tally: Tally, opts: Options,
         ident: tuple, times: tuple) -> Row:
    """The SWF row of a record that is a job."""
    key, lineno, state = ident
    elapsed = None
    if cols.index["Elapsed"] is not None:
        text = value("Elapsed")
        elapsed = _raw_seconds(text, "Elapsed") if cols.raw["Elapsed"] else parse_duration(text, "Elapsed")
    (t_sub, t_start, t_end), cases = resolve_times(list(times), elapsed)
    for case in cases:
        tally.counts[f"{case}_local_time"] += 1
    assert t_sub is not None and t_start is not None and t_end is not None
    runtime = elapsed if elapsed is not None else t_end - t_start
    walltime, limit_case = _walltime(value("Timelimit"), cols.raw["Timelimit"])
    if 0 < walltime < runtime <= walltime + opts.overrun_grace:
        runtime = walltime
        tally.counts["runtime_capped_at_limit"] += 1
    alloc, req, nodes = _processors(value, cols, opts)
    users, groups, qos, partitions = tally.names
    partition = _numbered(partitions, value("Partition"))
    swf: list[int | float] = [0, 0, t_start - t_sub, runtime, alloc, -1, -1, req, walltime, -1,
                              _STATUS.get(state, 0), _numbered(users, value("User")),
                              _numbered(groups, value("Group")), -1, _numbered(qos, value("QOS")), partition, -1, -1]
    if elapsed is not None and abs((t_end - t_start) - elapsed) == 3600:
        tally.shifted_hour += 1
    tally.max_nodes = max(tally.max_nodes, nodes)
    if limit_case:
        tally.no_limit.append((swf, limit_case))
    elif walltime > 0:
        tally.limits_seen[partition] = max(tally.limits_seen.get(partition, 0), walltime)
    tres = value("AllocTRES") or value("ReqTRES") or value("AllocGRES") or value("ReqGRES")
    return Row(key, t_sub, swf, lineno, state, _tres_kinds(tres))


def _raw_seconds(text: str, column: str) -> int | None:
    """ElapsedRaw: seconds as an integer (None when missing), within the limit on durations."""
    if text.strip().lower() in MISSING:
        return None
    return seconds(integer(text, column), text, column)


def _walltime(text: str, raw: bool) -> tuple[int, str]:
    """The requested time in seconds (-1: unknown) and its no-limit case ('' when finite)."""
    limit_case = _NO_LIMIT.get(text.lower(), "")
    if limit_case:
        return -1, limit_case
    if raw:
        minutes = integer(text, "Timelimit")
        return (seconds(minutes * 60, text, "Timelimit") if minutes >= 0 else -1), ""
    limit = parse_duration(text, "Timelimit")
    return (limit if limit is not None else -1), ""


def _processors(value: Callable[[str], str], cols: _Columns, opts: Options) -> tuple[int, int, int]:
    """Allocated and requested processors, and nodes (-1: unknown); whole nodes with ``cores_per_node``."""
    nodes = integer(value("NNodes"), "NNodes") if cols.index["NNodes"] is not None else -1
    if opts.cores_per_node is not None:
        if nodes < 1:
            raise LineError(f"column NNodes: {cut(value('NNodes'))} for a job that ran: --cores-per-node counts "
                            "its processors from its nodes")
        return nodes * opts.cores_per_node, nodes * opts.cores_per_node, nodes
    alloc = integer(value("NCPUS"), "NCPUS")
    req = integer(value("ReqCPUS"), "ReqCPUS") if cols.index["ReqCPUS"] is not None else -1
    return alloc, req, nodes


def _tres_kinds(text: str) -> tuple[str, ...]:
    """The TRES beyond processors a job asked for: ``gres/gpu=2,cpu=8`` -> ('gres/gpu',); old GRES ``gpu:2`` too."""
    if not text:
        return ()
    kinds = []
    for item in text.split(","):
        name, sep, amount = item.partition("=")
        if not sep:  # AllocGRES/ReqGRES of old dumps: gpu:2, gpu:tesla:2(IDX:0-1)
            name, amount = "gres/" + item.split(":")[0], item.rpartition(":")[2].split("(")[0]
        name = name.strip().lower().split(":")[0]
        if name not in _PLAIN_TRES and name not in ("", "gres/", "gres/(null)") and amount.strip() not in ("", "0"):
            kinds.append(name)
    return tuple(dict.fromkeys(kinds))


def _numbered(names: dict[str, int], text: str) -> int:
    """1, 2, ... in order of first appearance; -1 for a missing value."""
    text = text.strip()
    if text.lower() in MISSING:
        return -1
    return names.setdefault(text, len(names) + 1)


def _jobid_key(jobid: str, cluster: str) -> tuple[str, int, int] | None:
    """``123`` -> (cluster, 123, -1), ``123_4`` -> (cluster, 123, 4); anything else (steps, het, ranges) None."""
    match = _JOBID.match(jobid)
    if match is None:
        return None
    job, index = (integer(g, "JobID") if g is not None else -1 for g in match.groups())
    return cluster, job, index
