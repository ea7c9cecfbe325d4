"""A Slurm accounting dump made from an SWF trace, for tests: what sacct would print for the same jobs, and more.

``swf_to_slurm`` writes every SWF record as the record sacct prints for such a job
(``--parsable2``, header line first), then adds what real dumps hold and an SWF file
does not: job steps (``ID.batch``, ``ID.extern``, ``ID.0``), array elements
(``ID_N``: runs of consecutive jobs renamed as one array), jobs cancelled before
they started, jobs still pending or running when sacct ran, an array range still
pending (``ID_[1-4]``) and the components of a heterogeneous job.  It returns how many
records of each kind it added, so that a test can check that the reader counts
every one of them under its rule.

Mapping of an SWF record: Submit = UnixStartTime + submit (local time of ``zone``, UTC
by default), Start = Submit + wait, End = Start + runtime, Elapsed = runtime,
Timelimit = requested time (``00:00:00`` where the SWF has none, which reads as 0,
as dropped as the SWF's -1), NCPUS = allocated processors, ReqCPUS = requested
processors (empty when unknown), State from the status (1 COMPLETED, 5 CANCELLED,
else FAILED), User/Group/Partition/QOS as names.  A record with an unknown runtime
(-1: the job never ran) becomes a job cancelled in the queue (Start None); an unknown
wait starts the job at its submission.
"""

from __future__ import annotations

import datetime as dt
import gzip
from pathlib import Path
from zoneinfo import ZoneInfo

HEADER = "JobID|User|Group|Partition|QOS|Submit|Start|End|Elapsed|Timelimit|NCPUS|ReqCPUS|NNodes|State"
STATES = {1: "COMPLETED", 5: "CANCELLED"}


def swf_records(path: str | Path) -> tuple[list[list[int]], int]:
    """Every job line of an SWF file as 18 integers, and its UnixStartTime (0 when absent)."""
    raw = Path(path).read_bytes()
    text = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("latin-1")
    rows, start = [], 0
    for line in text.splitlines():
        if line.startswith(";"):
            if line.replace(" ", "").startswith(";UnixStartTime:"):
                start = int(line.split(":", 1)[1].split()[0])
            continue
        if line.strip():
            rows.append([int(float(x)) for x in line.split()])
    return rows, start


def duration(seconds: int) -> str:
    """sacct's ``[D-]HH:MM:SS``."""
    days, rest = divmod(int(seconds), 86400)
    h, rest = divmod(rest, 3600)
    m, s = divmod(rest, 60)
    return f"{days}-{h:02d}:{m:02d}:{s:02d}" if days else f"{h:02d}:{m:02d}:{s:02d}"


class _Clock:
    def __init__(self, zone: str | None) -> None:
        self.zone = ZoneInfo(zone) if zone else dt.timezone.utc

    def __call__(self, epoch: int) -> str:
        return dt.datetime.fromtimestamp(epoch, self.zone).replace(tzinfo=None).isoformat(timespec="seconds")


def swf_to_slurm(swf: str | Path, out: str | Path, *, zone: str | None = None, steps_every: int = 3,
                 array_every: int = 50, array_size: int = 3, extras: bool = True) -> dict[str, int]:
    """Write the dump of ``swf`` to ``out``; the counts of the records added (by the reader's rule names)."""
    rows, unix_start = swf_records(swf)
    local = _Clock(zone)
    base = unix_start or 1_000_000_000
    added = {"job_step": 0, "never_started": 0, "pending_at_dump": 0, "running_at_dump": 0,
             "heterogeneous_component": 0, "array_elements": 0, "ran": 0}
    ran = [r[3] >= 0 for r in rows]
    names = [str(r[0]) for r in rows]
    i = 0
    while i + array_size <= len(rows):  # runs of consecutive job numbers that all ran become arrays
        run = range(i, i + array_size)
        if all(ran[k] for k in run) and all(rows[k][0] == rows[i][0] + (k - i) for k in run):
            for n, k in enumerate(run):
                names[k] = f"{rows[i][0]}_{n}"
            added["array_elements"] += array_size
        i += array_every
    lines = [HEADER]
    for k, r in enumerate(rows):
        submit = base + r[1]
        user = f"u{r[11]}" if r[11] >= 0 else ""
        group = f"g{r[12]}" if r[12] >= 0 else ""
        part = f"p{r[15]}" if r[15] >= 0 else "batch"
        qos = f"q{r[14]}" if r[14] >= 0 else "normal"
        limit = duration(r[8]) if r[8] > 0 else "00:00:00"
        req = str(r[7]) if r[7] > 0 else ""
        ncpus = str(max(r[4], 0))
        if not ran[k]:
            lines.append(f"{names[k]}|{user}|{group}|{part}|{qos}|{local(submit)}|None|{local(submit + 60)}|00:00:00|"
                         f"{limit}|{ncpus}|{req}|0|CANCELLED by 0")
            added["never_started"] += 1
            continue
        wait = max(r[2], 0)  # an unknown wait (a file bftune wrote): started at its submission
        start, end = submit + wait, submit + wait + r[3]
        state = STATES.get(r[10], "FAILED")
        fields = f"{local(submit)}|{local(start)}|{local(end)}|{duration(r[3])}"
        lines.append(f"{names[k]}|{user}|{group}|{part}|{qos}|{fields}|{limit}|{ncpus}|{req}|1|{state}")
        added["ran"] += 1
        if steps_every and k % steps_every == 0:
            for step in ("batch", "extern", "0"):
                lines.append(f"{names[k]}.{step}|||||{fields}||{ncpus}||1|{state}")
                added["job_step"] += 1
    if extras:
        first, last = base + rows[0][1], base + rows[-1][1]
        mid = (first + last) // 2
        for n in range(5):  # cancelled in the queue, spread over the trace
            t = first + (last - first) * n // 5 + 17
            lines.append(f"{90_000_000 + n}|u1|g1|batch|normal|{local(t)}|None|{local(t + 300)}|00:00:00|01:00:00|"
                         f"4||0|CANCELLED by 1")
            added["never_started"] += 1
        lines.append(f"91000000_[1-4]|u2|g1|batch|normal|{local(last)}|Unknown|Unknown|00:00:00|01:00:00|8||0|PENDING")
        lines.append(f"91000001|u2|g1|batch|normal|{local(last)}|Unknown|Unknown|00:00:00|01:00:00|8||0|PENDING")
        added["pending_at_dump"] += 2
        lines.append(f"92000000|u3|g1|batch|normal|{local(last - 600)}|{local(last - 500)}|Unknown|00:08:20|"
                     f"10:00:00|2|2|1|RUNNING")
        lines.append(f"92000000.batch|||||{local(last - 600)}|{local(last - 500)}|Unknown|00:08:20||2||1|RUNNING")
        added["running_at_dump"] += 1
        added["job_step"] += 1
        for component in (0, 1):
            lines.append(f"93000000+{component}|u4|g1|batch|normal|{local(mid)}|{local(mid + 10)}|{local(mid + 70)}|"
                         f"00:01:00|01:00:00|2|2|1|COMPLETED")
            added["heterogeneous_component"] += 1
    Path(out).write_text("\n".join(lines) + "\n")
    return added
