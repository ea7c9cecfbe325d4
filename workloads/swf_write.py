"""Writing SWF files: what a :class:`~bftune.workloads.model.Trace` holds, with its provenance kept.

Apart from :mod:`bftune.workloads.swf` (reading and cleaning) because the two
share only the header syntax, and reading is the hot path of every command.
"""

from __future__ import annotations

import gzip
import io
import os
from pathlib import Path
from typing import Iterable

from bftune.support.files import atomic_write_bytes
from bftune.workloads.model import Trace
from bftune.workloads.swf_header import HEADER_RE



def write_swf(
    trace: Trace,
    path: str | os.PathLike[str],
    *,
    notes: Iterable[str] = (),
) -> Path:
    """Write ``trace`` as SWF (gzip if ``path`` ends with ``.gz``), atomically.

    The trace's original comment lines are kept in order (acknowledgements,
    provenance), except that ``MaxProcs`` is set to ``trace.max_procs`` (added
    if absent) and ``MaxJobs`` / ``MaxRecords``, where present, to the number
    of jobs written: they describe this file.  Each of ``notes`` becomes a
    ``; Note: ...`` line (e.g. how a resampled trace was made).

    Only what a :class:`JobRecord` holds is written: procs go to both
    allocated (5) and requested (8) processors, the walltime to field 9, the
    logged wait to field 3 (-1 when unknown), the other fields a JobRecord does not keep (cpu, memory,
    preceding job, think time) are -1.  Reading the file back gives the same jobs.
    """
    path = Path(path)
    data = swf_text(trace, notes=notes).encode("utf-8")
    if path.name.endswith(".gz"):
        buf = io.BytesIO()
        # mtime=0 and no file name: the same trace always gives the same bytes.
        with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0) as gz:
            gz.write(data)
        data = buf.getvalue()
    return atomic_write_bytes(path, data)


def swf_text(trace: Trace, *, notes: Iterable[str] = ()) -> str:
    """The SWF file :func:`write_swf` writes, as text."""
    lines = _header_for_writing(trace, list(notes))
    for job in trace.jobs:
        lines.append(
            f"{job.id} {_fmt(job.submit)} {_fmt(job.wait) if job.wait >= 0 else -1} {_fmt(job.runtime)} {job.procs} -1 -1 {job.procs} "
            f"{_fmt(job.walltime)} -1 {job.status} {job.user} {job.group} {job.executable} "
            f"{job.queue} {job.partition} -1 -1"
        )
    return "\n".join(lines) + "\n"


def _header_for_writing(trace: Trace, notes: list[str]) -> list[str]:
    n = str(len(trace.jobs))
    replacements = {"MaxProcs": str(trace.max_procs), "MaxJobs": n, "MaxRecords": n}
    out: list[str] = []
    seen_maxprocs = False
    for line in trace.header_lines:
        match = HEADER_RE.match(line.strip())
        key = match.group(1) if match else None
        if key in replacements:
            if key == "MaxProcs":
                if seen_maxprocs:
                    continue
                seen_maxprocs = True
            out.append(f"; {key}: {replacements[key]}")
        else:
            out.append(line)
    if not seen_maxprocs:
        out.append(f"; MaxProcs: {trace.max_procs}")
    out.extend(f"; Note: {note}" for note in notes)
    return out


def _fmt(value: int | float) -> str:
    """Integral numbers without a decimal point; others with Python's shortest repr."""
    if isinstance(value, int):
        return str(value)
    if float(value).is_integer():
        return str(int(value))
    return repr(float(value))
