"""From the rows of a Slurm dump to a trace: one job per JobID (requeued attempts, repeats), time limits
filled in, the machine size, jobs numbered and cleaned, the header lines (users named as the site names them).

The rules are the reader's (:mod:`bftune.workloads.slurm`, whose docstring states them).
"""

from __future__ import annotations

import datetime as _dt
import os
from pathlib import Path
from typing import Callable
from zoneinfo import ZoneInfo

from bftune.workloads import limits
from bftune.workloads.cleaning import WalltimeFallback, clean_rows
from bftune.workloads.errors import WorkloadError
from bftune.workloads.model import Trace
from bftune.workloads.sacct_records import SLURM_CHANGES, SLURM_CLEANING_KEYS, Options, Row, Tally
from bftune.workloads.sacct_values import Clock

def _one_per_job(path: Path, tally: Tally, lenient: bool) -> list[Row]:
    """The rows with requeued attempts and repeated records taken out (module docstring), counted."""
    groups: dict[tuple[str, int, int], list[Row]] = {}
    for row in tally.rows:
        groups.setdefault(row.key, []).append(row)
    kept = []
    for key, rows in groups.items():
        if len(rows) == 1 and not (key in tally.others and rows[0].state.startswith("REQUEUE")):
            kept.append(rows[0])
            continue
        rows.sort(key=lambda row: (row.submit + row.swf[2], row.lineno))  # by start, then as printed
        first_submit = min(row.submit for row in rows)
        later = key in tally.others  # a record after the last attempt: pending, running or cancelled again
        attempts = [row for i, row in enumerate(rows) if row.state.startswith("REQUEUE") and
                    (i < len(rows) - 1 or later)]
        tally.counts["requeued_attempt"] += len(attempts)
        rest = [row for row in rows if row not in attempts]
        if not rest:
            continue
        job, *again = sorted(rest, key=lambda row: row.lineno)
        for other in again:
            if other.swf[2:] != job.swf[2:] or other.submit != job.submit:
                if not lenient:
                    raise WorkloadError(
                        f"{path}:{other.lineno}: JobID {_key_text(key)} again (first on line {job.lineno}) with "
                        "other values; a dump of several clusters needs the Cluster column (sacct -M ... "
                        "--format=Cluster,...) and --cluster, a dump joined from overlapping ones its repeats removed")
        tally.counts["duplicate_job_id"] += len(again)
        if attempts:  # the job was submitted once, when its first attempt was
            job.swf[2] += job.submit - first_submit
            job.submit = first_submit
        kept.append(job)
    return kept


def _key_text(key: tuple[str, int, int]) -> str:
    cluster, job, index = key
    return f"{job}_{index}" if index >= 0 else str(job)


def build_trace(path: Path, tally: Tally, clock: Clock, opts: Options, walltime_fallback: WalltimeFallback,
           cleaning: str, name: str | None, inform: Callable[[str], None] | None, utc: bool) -> Trace:
    """The cleaned Trace of the rows read: limits filled in, jobs numbered, cleaned, described."""
    counts = tally.counts
    rows = _one_per_job(path, tally, opts.lenient)
    overall = max(tally.limits_seen.values(), default=-1)
    kept = {id(row.swf) for row in rows}
    for swf, case in tally.no_limit:
        if id(swf) in kept:  # not a requeued attempt or a repeat taken out
            swf[8] = tally.limits_seen.get(int(swf[15]), overall)
            counts[case] += 1
    max_alloc = max((row.swf[4] for row in rows), default=0)
    m = _machine_size(path, opts, max_alloc, tally.records, counts, inform)
    if tally.shifted_hour and utc and inform is not None:
        inform(f"{path}: {tally.shifted_hour} jobs' End - Start differs from Elapsed by exactly one hour: sacct "
               "printed local times across a daylight-saving change; give --timezone (the cluster's zone)")
    rows.sort(key=lambda row: (row.submit, row.key[1:]))  # (submit, JobID)
    t0 = rows[0].submit if rows else 0
    for number, row in enumerate(rows, start=1):
        row.swf[0], row.swf[1] = number, row.submit - t0
    jobs, swf_counts = clean_rows([row.swf for row in rows], m, walltime_fallback=walltime_fallback,
                                  cleaning=cleaning)
    swf_counts["malformed_line"] = counts.pop("malformed_line")
    cleaning_counts = {key: swf_counts.get(key, 0) + counts.get(key, 0) for key in SLURM_CLEANING_KEYS}
    if not jobs:
        raise WorkloadError(f"{path}: no job left after cleaning ({tally.records} records; "
                            f"dropped: {_dropped_text(cleaning_counts)})")
    tres = _tres_count(rows, jobs)
    header_lines = _header_lines(path, jobs, m, t0, clock.name, tally, cleaning_counts, opts.procs is None, tres)
    header = {"MaxProcs": str(m), "UnixStartTime": str(t0), "TimeZoneString": clock.name,
              "TRESJobs": str(tres.pop("", 0))}
    return Trace(jobs=jobs, max_procs=m, name=name if name is not None else dump_name(path),
                 header=header, unix_start_time=t0, timezone=clock.name, cleaning=cleaning_counts,
                 source=str(path), header_lines=tuple(header_lines))


def _tres_count(rows: list[Row], jobs: list) -> dict[str, int]:
    """Kept jobs per TRES beyond processors they asked for (``gres/gpu`` -> 12), and under '' how many asked
    for any."""
    kinds: dict[str, int] = {"": 0}
    for job in jobs:
        asked = rows[job.id - 1].tres
        kinds[""] += bool(asked)
        for kind in asked:
            kinds[kind] = kinds.get(kind, 0) + 1
    return kinds


def _machine_size(path: Path, opts: Options, max_alloc: int, records: int, counts: dict[str, int],
                  inform: Callable[[str], None] | None) -> int:
    """m: ``--procs`` when given, else the largest allocation in the dump (said, since a dump rarely shows the
    whole machine busy); no job that ran is an error naming what the records were."""
    if opts.procs is not None:
        return opts.procs
    if max_alloc > 0:
        m = limits.procs(max_alloc, f"{path}: the largest allocation")
        if inform is not None:
            among = "" if opts.partitions is None else f" of partition {', '.join(sorted(opts.partitions))}"
            inform(f"{path}: machine size {m} processors, the largest allocation{among} in the dump "
                   "(give --procs M for the machine's real size)")
        return m
    raise WorkloadError(f"{path}: no job of the dump ran ({records} records; "
                        f"{_dropped_text(counts)}): nothing to schedule")


def dump_name(path: str | os.PathLike[str]) -> str:
    """``/x/sacct-2024.txt.gz`` -> ``sacct-2024``: the trace's name (its output files are named after it)."""
    name = Path(path).name
    for suffix in (".gz", ".txt", ".log", ".csv", ".psv", ".sacct"):
        name = name[: -len(suffix)] if name.endswith(suffix) and len(name) > len(suffix) else name
    return name


def _dropped_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in counts.items() if v) or "none"


def _header_lines(path: Path, jobs: list, m: int, t0: int, zone: str, tally: Tally, counts: dict[str, int],
                  m_from_dump: bool, tres: dict[str, int]) -> list[str]:
    """The archive's SWF header fields for a trace read from a dump (``bftune convert`` writes them)."""
    from bftune import __version__  # the package root: no cycle, a plain string

    tz = ZoneInfo(zone) if zone != "UTC" else _dt.timezone.utc
    last = max(j.submit for j in jobs)

    def stamp(t: float) -> str:
        return _dt.datetime.fromtimestamp(t0 + t, tz).strftime("%a %b %d %H:%M:%S %Z %Y")

    lines = ["; Version: 2.2", f"; Computer: Slurm cluster (accounting dump {path.name})",
             "; Installation: unknown (a Slurm accounting dump)",
             f"; Conversion: bftune {__version__} from sacct output, "
             f"{_dt.date.today().isoformat()}",
             f"; MaxJobs: {len(jobs)}", f"; MaxRecords: {len(jobs)}", "; Preemption: No",
             f"; UnixStartTime: {t0}", f"; TimeZoneString: {zone}",
             f"; StartTime: {stamp(0)}", f"; EndTime: {stamp(last)}"]
    if tally.max_nodes > 0:
        lines.append(f"; MaxNodes: {tally.max_nodes}")
    lines.append(f"; MaxProcs: {m}")
    finite = [v for v in tally.limits_seen.values() if v > 0]
    users, groups, qos, partitions = tally.names
    if finite:
        lines.append(f"; MaxRuntime: {max(finite)}")
    overuse = counts.get('walltime_lt_runtime') or counts.get('overruns_kept')
    lines.append(f"; AllowOveruse: {'Yes' if overuse else 'No'}")
    if qos:
        lines.append(f"; MaxQueues: {len(qos)}")
        lines.extend(f"; Queue: {n} {name} (Slurm QOS)" for name, n in qos.items())
    if partitions:
        lines.append(f"; MaxPartitions: {len(partitions)}")
        lines.extend(f"; Partition: {n} {name}" for name, n in partitions.items())
    lines.extend(f"{USER_LINE}{n} {name}" for name, n in users.items())  # reports name users as the site does
    if m_from_dump:
        lines.append("; Note: MaxProcs is the largest allocation in the dump (the machine's size was not given)")
    dropped = ", ".join(f"{k}={v}" for k, v in counts.items() if v and k not in SLURM_CHANGES)
    lines.append(f"; Note: records of the dump not in this file (bftune's Slurm cleaning): {dropped or 'none'}")
    changed = ", ".join(f"{k}={v}" for k, v in counts.items() if v and k in SLURM_CHANGES)
    if changed:
        lines.append(f"; Note: jobs changed by the reading: {changed}")
    if tres.get(""):
        kinds = sorted(((v, k) for k, v in tres.items() if k), key=lambda vk: (-vk[0], vk[1]))
        listed = ", ".join(f"{k} {v}" for v, k in kinds[:8]) + (", ..." if len(kinds) > 8 else "")
        jobs_text = "1 job" if tres[""] == 1 else f"{tres['']} jobs"
        lines.append(f"; Note: {jobs_text} asked for TRES beyond processors ({listed}); bftune schedules "
                     "processors only")
    return lines


#: The header line that names a user number (``; User: 62 user64``): SWF keeps numbers, admins know names.
USER_LINE = "; User: "


def user_names(trace: Trace) -> dict[int, str]:
    """The user names a Slurm dump's trace carries in its header lines (empty for an SWF trace)."""
    out: dict[int, str] = {}
    for line in trace.header_lines:
        if line.startswith(USER_LINE):
            number, _, name = line[len(USER_LINE):].partition(" ")
            if number.isdigit() and name:
                out[int(number)] = name
    return out
