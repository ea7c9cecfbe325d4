"""Read and write the Standard Workload Format (SWF) of the Parallel Workloads Archive.

Reading does two things, in this order:

1. **Parse.**  ``;`` lines are the header: every ``; Key: value`` line goes into
   ``Trace.header`` (a key that repeats, like ``Note`` or ``Queue``, keeps all its
   values joined by newlines) and every comment line is kept verbatim in
   ``Trace.header_lines`` so that :func:`~bftune.workloads.swf_write.write_swf` can preserve provenance.
   Every other non-blank line must hold exactly 18 numeric tokens.
   *Numbers.*  The archive writes integers everywhere except field 6 (average
   CPU time, e.g. ``142.00`` in CTC-SP2).  We therefore accept any finite
   decimal number in every field, but fields whose meaning is a count or an
   identifier (1 job id, 5 allocated procs, 8 requested procs, 11 status,
   12 user, 13 group, 14 executable, 15 queue, 16 partition, 17 preceding job)
   must be integral (``4`` or ``4.0``; ``4.5`` is an error).  Time fields
   (submit, runtime, requested time, ...) may be fractional; integral values
   are stored as ``int`` so that Batsim JSON gets ``3477`` and not ``3477.0``.
   A malformed line (wrong field count, non-numeric or non-finite token,
   fractional count, negative job id) raises :class:`WorkloadError` naming ``file:line`` and the
   field.  With ``lenient=True`` it is skipped and counted under
   ``"malformed_line"`` instead - never silently dropped.

2. **Clean** (SPEC section 1, identical to ``shared/batsim/README.md``,
   "Workload conversion").  ``procs`` = requested procs (field 8), or
   allocated procs (field 5) where the request is ``<= 0``.  Rules are applied
   in the order below and a job is counted under the *first* rule it breaks,
   so the counts add up to the number of dropped jobs:

   =========================  ==============================================
   key                        drops a job when
   =========================  ==============================================
   ``negative_submit``        submit < 0
   ``missing_procs``          requested <= 0 and allocated <= 0
   ``procs_gt_machine``       procs > m
   ``runtime_le_0``           runtime <= 0
   ``walltime_le_0``          requested time <= 0 (see ``walltime_fallback``)
   ``walltime_lt_runtime``    requested time < runtime
   =========================  ==============================================

   This is the order of the Batsim converter's list; on KTH-SP2 it yields the
   README's 475 / 8 / 1 and 27,992 kept jobs.  ``"malformed_line"`` (lenient
   mode) counts lines, which never reach the job rules.

   ``walltime_fallback="runtime"`` is for traces without requested times
   (``lublin_256`` has -1 there): a job whose requested time is ``<= 0`` gets
   walltime = runtime instead of being dropped, and is counted under
   ``"walltime_from_runtime"``.  That key counts *modified*, not dropped, jobs
   (it is not in :data:`DROP_RULES`).  Note that in Batsim a job whose delay
   equals its walltime ends as COMPLETED_WALLTIME_REACHED (SPEC section 8), so
   every such job is reported as walltime-killed although it ran to its end.

   **Other cleanings** (``cleaning=``, :data:`CLEANINGS`) reproduce the job
   sets of studies that did not apply SPEC's filter.  ``"spec"`` is the
   default and is the rule set above.

   - ``"keep-overruns"``: every record with submit >= 0, procs > 0 (chosen as
     above), procs <= m and runtime > 0 is a job.  A job whose requested time
     is below its runtime is *kept* with that walltime (counted under
     ``"overruns_kept"``): both simulators end it at its walltime, as
     COMPLETED_WALLTIME_REACHED, exactly what Batsim does with such a job.  A
     requested time <= 0 becomes the runtime (``"walltime_from_runtime"``).
   - ``"batsim-converter"``: what Batsim's own converter
     (``tools/swf_to_batsim_workload_delay.py``, default options) makes of
     the file: procs = *allocated* processors (field 5; the request is
     ignored), records with procs <= 0 or runtime <= 0 dropped, walltime =
     max(requested time, 2 x runtime) (counted under ``"walltime_raised"``
     where that is more than the request: overruns and missing requests get
     twice their runtime), and the runtime becomes the converter's delay
     profile floor(runtime) + 1.  A raised walltime is far closer to the
     runtime than users' requests are, which helps every walltime-based
     policy and any runtime predictor: see ``experiments/REPRODUCTION.md``
     (study 004), whose published dividers match this job set and not SPEC's.
   - ``"ran"``: every job that ran, as recorded (the PV-EASY study's job sets):
     a record counts when its allocated processors (field 5) are known
     (``> 0``); records of jobs that never started (allocated -1, e.g. jobs
     cancelled in the queue) are dropped under ``"never_started"``.  procs,
     m and the other drops are as in ``spec``.  A runtime <= 0 (0: a run
     under a second, -1: not recorded) becomes 1 s, counted under
     ``"runtime_raised"`` (Batsim refuses a delay of 0); a requested time
     <= 0 becomes the runtime (``"walltime_from_runtime"``); a runtime above
     the requested time is kept (``"overruns_kept"``) and the job ends at
     its walltime, as COMPLETED_WALLTIME_REACHED, as in ``keep-overruns``.
     CTC-SP2 keeps all 77,222 records (the study's count); SDSC-BLUE keeps
     223,790 of 243,306 (the study reports 223,407 jobs, mean parallelism
     41.59 and mean runtime 4,381 s; these 223,790 have 41.62 and 4,386 s).

   ``m`` is the ``max_procs`` argument, else the header ``MaxProcs``, else
   ``MaxNodes`` (the leading integer, so ``338 (batch partition; 512 total)``
   gives 338).  No usable value is an error asking for ``--procs``.

   Kept jobs are sorted by (submit, id); every key of :data:`CLEANING_KEYS` is
   present in ``Trace.cleaning`` (0 when nothing matched) so reports have a
   stable shape.  No job left is an error, as are duplicate job ids.

Speed: well-formed files take a vectorised path (numpy's C parser, cleaning
as boolean masks, records built column-wise); any doubt sends the file to
the line-by-line path, which is the one that names ``file:line`` in errors.
The 312,826-job Curie trace reads and cleans in about half a second.
"""

from __future__ import annotations

import gzip
import io
import math
import os
import re
import warnings
from operator import attrgetter
from pathlib import Path
from typing import Iterable, Literal

from bftune.gcpause import paused_gc
from bftune.workloads import limits, parsecache
from bftune.workloads.errors import WorkloadError
from bftune.workloads.model import JobRecord, Trace, records_from_columns

#: SWF field names, 1-based position = index + 1 (SPEC section 1).
FIELD_NAMES: tuple[str, ...] = (
    "job id",
    "submit time",
    "wait time",
    "run time",
    "allocated processors",
    "average cpu time",
    "used memory",
    "requested processors",
    "requested time",
    "requested memory",
    "status",
    "user id",
    "group id",
    "executable",
    "queue",
    "partition",
    "preceding job",
    "think time",
)
N_FIELDS = len(FIELD_NAMES)

#: 0-based indexes of the fields that must hold integral values.
INTEGRAL_FIELDS: frozenset[int] = frozenset({0, 4, 7, 10, 11, 12, 13, 14, 15, 16})

#: Cleaning rules that drop jobs (or lines), in the order they are applied.
DROP_RULES: tuple[str, ...] = (
    "malformed_line",
    "negative_submit",
    "missing_procs",
    "procs_gt_machine",
    "runtime_le_0",
    "walltime_le_0",
    "walltime_lt_runtime",
    "never_started",
)
#: Every key reading puts in ``Trace.cleaning``; the last three count kept but modified jobs.
CLEANING_KEYS: tuple[str, ...] = DROP_RULES + ("walltime_from_runtime", "overruns_kept", "walltime_raised",
                                               "runtime_raised")

WalltimeFallback = Literal["runtime"] | None

#: The named cleanings (module docstring): SPEC section 1's filter first (the default).
CLEANINGS: tuple[str, ...] = ("spec", "keep-overruns", "batsim-converter", "ran")
#: The walltime the Batsim converter gives a job: max(requested, BATSIM_WALLTIME_FACTOR x runtime).
BATSIM_WALLTIME_FACTOR = 2


def check_cleaning(cleaning: str) -> str:
    """``cleaning`` if it names a cleaning, else ValueError listing them."""
    if cleaning not in CLEANINGS:
        raise ValueError(f"cleaning must be one of {', '.join(CLEANINGS)}, not {cleaning!r}")
    return cleaning


_GZIP_MAGIC = b"\x1f\x8b"
#: A header line "; Key: value" (also what the SWF writer rewrites): the key is one word and the colon
#: must be followed by white space or the end of line, so that continuation lines such as
#: ";              http://www..." are not mistaken for a key "http".
HEADER_RE = re.compile(r"^;\s*([A-Za-z][A-Za-z0-9_-]*)\s*:(?:\s+(.*?))?\s*$")
_LEADING_INT_RE = re.compile(r"^\s*([+-]?\d+)")


# --------------------------------------------------------------------------
# reading


def read_swf(
    path: str | os.PathLike[str],
    *,
    max_procs: int | None = None,
    lenient: bool = False,
    walltime_fallback: WalltimeFallback = None,
    name: str | None = None,
    cleaning: str = "spec",
) -> Trace:
    """Read an SWF file (plain or gzip, detected by magic bytes) into a cleaned Trace.

    ``max_procs`` overrides the header's machine size m (and is what jobs are
    checked against).  ``name`` defaults to the file name without ``.swf`` /
    ``.gz``.  ``cleaning`` names one of :data:`CLEANINGS`.  See the module
    docstring for the parsing and cleaning rules.
    """
    check_cleaning(cleaning)
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise WorkloadError(f"{path}: cannot read workload: {exc.strerror or exc}") from exc
    _check_fallback(walltime_fallback)
    name = name if name is not None else trace_name_from_path(path)
    key = parsecache.key_of(raw) if len(raw) >= parsecache.MIN_BYTES and parsecache.enabled() else None
    parsed = parsecache.load(key) if key else None
    with paused_gc():
        if parsed is not None:  # only well-formed tables are ever stored (_parse_fast)
            del raw
            table, header_lines = [parsed[0]], parsed[1]
            del parsed  # the table's one reference is then the list, which the cleaning empties
            return _trace_from_table(table, header_lines, str(path), max_procs, walltime_fallback, name, cleaning)
        if raw[:2] == _GZIP_MAGIC:
            try:
                raw = gzip.decompress(raw)
            except (OSError, EOFError, gzip.BadGzipFile) as exc:
                raise WorkloadError(f"{path}: corrupt gzip data: {exc}") from exc
        if len(raw) >= FAST_PATH_MIN_CHARS:
            box = [raw]
            del raw  # the fast path frees the file's bytes as soon as it has parsed them
            fast = _parse_fast(box, str(path), max_procs, walltime_fallback, name, cleaning, key)
            if fast is not None:
                return fast
            raw = box.pop()
        text = _decode(raw)
        del raw
        return _parse_careful(text, str(path), max_procs, lenient, walltime_fallback, name, cleaning)


def parse_swf(
    text: str,
    *,
    source: str = "<string>",
    max_procs: int | None = None,
    lenient: bool = False,
    walltime_fallback: WalltimeFallback = None,
    name: str = "workload",
    cleaning: str = "spec",
) -> Trace:
    """Parse and clean SWF ``text`` (``source`` is only used in messages and ``Trace.source``)."""
    _check_fallback(walltime_fallback)
    check_cleaning(cleaning)
    if len(text) >= FAST_PATH_MIN_CHARS:
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates: only the careful path can say where
            data = b""
        fast = _parse_fast([data], source, max_procs, walltime_fallback, name, cleaning) if data else None
        if fast is not None:
            return fast
    return _parse_careful(text, source, max_procs, lenient, walltime_fallback, name, cleaning)


def _parse_careful(text: str, source: str, max_procs: int | None, lenient: bool,
                   walltime_fallback: WalltimeFallback, name: str, cleaning: str = "spec") -> Trace:
    """The line-by-line path: any input, errors name ``file:line``."""
    header_lines: list[str] = []
    header: dict[str, str] = {}
    rows: list[list[int | float]] = []
    malformed = 0
    for lineno, line in enumerate(text.splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        if parts[0][0] == ";":
            header_lines.append(line.rstrip())
            _add_header_line(header, line)
            continue
        if len(parts) == N_FIELDS:
            try:
                row = list(map(int, parts))
                if row[0] >= 0:
                    rows.append(row)
                    continue
            except ValueError:
                pass  # not all plain integers (or a negative id): take the careful path below
        try:
            rows.append(_parse_fields(parts))
        except _FieldError as exc:
            if not lenient:
                raise WorkloadError(f"{source}:{lineno}: {exc}") from None
            malformed += 1

    m = _machine_size(header, max_procs, source)
    jobs, counts = clean_rows(rows, m, walltime_fallback=walltime_fallback, cleaning=cleaning)
    counts["malformed_line"] = malformed
    return _make_trace(jobs, len(rows), counts, m, header, header_lines, source, name)


def _check_fallback(walltime_fallback: WalltimeFallback) -> None:
    if walltime_fallback not in (None, "runtime"):
        raise ValueError(f"walltime_fallback must be None or 'runtime', not {walltime_fallback!r}")


def _make_trace(jobs: list[JobRecord], n_lines: int, counts: dict[str, int], m: int, header: dict[str, str],
                header_lines: list[str], source: str, name: str) -> Trace:
    """The cleaned Trace, whichever path parsed it; no job left or duplicate ids are errors."""
    cleaning = {key: counts.get(key, 0) for key in CLEANING_KEYS}
    if not jobs:
        dropped = ", ".join(f"{k}={v}" for k, v in cleaning.items() if v)
        raise WorkloadError(
            f"{source}: no job left after cleaning ({n_lines} job lines; dropped: {dropped or 'none'})"
        )
    _check_unique_ids(jobs, source)
    return Trace(
        jobs=jobs,
        max_procs=m,
        name=name,
        header=header,
        unix_start_time=_header_int(header, "UnixStartTime"),
        timezone=header.get("TimeZoneString"),
        cleaning=cleaning,
        source=source,
        header_lines=tuple(header_lines),
    )


#: Below this size the line-by-line path is as fast as the vectorised one.
FAST_PATH_MIN_CHARS = 1_000_000

_COMMENT_RE = re.compile(rb"^[ \t]*;.*$", re.MULTILINE)
#: Records are built this many at a time, so that only one slice of the columns exists as Python objects.
_RECORDS_PER_SLICE = 1 << 15


def _parse_fast(box: list[bytes], source: str, max_procs: int | None, walltime_fallback: WalltimeFallback,
                name: str, cleaning: str = "spec", cache_key: str | None = None) -> Trace | None:
    """Vectorised parse + clean of a well-formed file's bytes; None sends the caller to the careful path.

    ``box`` holds the bytes (and nothing else should): once they are parsed
    and known well-formed, they are dropped, so that a large trace's text
    and its records are never in memory together; on None they are left in
    ``box`` for the careful path.  numpy's C parser reads the 18 columns
    from the bytes (a text ``StringIO`` would hold 4 bytes per character) and
    refuses ragged or non-numeric lines.  Anything unusual (a parse error, a
    non-finite or fractional count field) falls back to the line-by-line path,
    which names the offending file:line.  A well-formed table is kept in the
    parse cache under ``cache_key`` (:mod:`bftune.workloads.parsecache`).
    """
    import numpy as np

    data = box[0]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "input contained no data": the careful path reports it
            a = np.loadtxt(io.BytesIO(data), comments=";", dtype=np.float64, ndmin=2, encoding="latin-1")
    except ValueError:
        return None
    if not _well_formed(a):
        return None
    header_lines = _comment_lines(data)
    del data
    box.clear()  # well-formed: the bytes are no longer needed
    if cache_key is not None:
        parsecache.store(cache_key, a, header_lines)
    table = [a]
    del a  # the table's one reference is then the list, which the cleaning empties
    return _trace_from_table(table, header_lines, source, max_procs, walltime_fallback, name, cleaning)


def _well_formed(a) -> bool:
    """Whether numpy's table of a file holds SWF records the vectorised cleaning can take as they are."""
    import numpy as np

    if a.size == 0 or a.shape[1] != N_FIELDS or not np.isfinite(a).all() or (a[:, 0] < 0).any():
        return False
    v = a[:, sorted(INTEGRAL_FIELDS)]
    return bool((v == np.floor(v)).all())  # else the careful path names the line


def _trace_from_table(table: list, header_lines: list[str], source: str, max_procs: int | None,
                      walltime_fallback: WalltimeFallback, name: str, cleaning: str) -> Trace:
    """The cleaned Trace of a well-formed table (:func:`_well_formed`): the cleaning rules as boolean
    masks applied in the documented order, so that counts are those of :func:`clean_rows`.

    ``table`` is a list holding the table, emptied once its columns are copied, so that the whole
    table and the records are never in memory together.
    """
    import numpy as np

    a = table.pop()
    header: dict[str, str] = {}
    for line in header_lines:
        _add_header_line(header, line)
    m = _machine_size(header, max_procs, source)
    v = a[:, sorted(INTEGRAL_FIELDS)].astype(np.int64)  # columns in INTEGRAL_FIELDS order: 0 id, 4, 7, 10, 11..16
    n_lines = len(a)
    submit, runtime, wall = a[:, 1].copy(), a[:, 3].copy(), a[:, 8].copy()
    del a
    ids, alloc, req, status, user, group, exe, queue, part = (v[:, i] for i in range(9))
    procs = alloc if cleaning == "batsim-converter" else np.where(req > 0, req, alloc)
    alive = np.ones(n_lines, dtype=bool)
    counts: dict[str, int] = {key: 0 for key in CLEANING_KEYS}

    def drop(key: str, mask) -> None:
        nonlocal alive
        hit = alive & mask
        counts[key] = int(hit.sum())
        alive &= ~hit

    drop("negative_submit", submit < 0)
    drop("missing_procs", procs <= 0)
    drop("procs_gt_machine", procs > m)
    if cleaning == "ran":
        drop("never_started", alloc <= 0)
        short = alive & (runtime <= 0)
        counts["runtime_raised"] = int(short.sum())
        runtime = np.where(short, 1.0, runtime)
    drop("runtime_le_0", runtime <= 0)
    if cleaning == "batsim-converter":
        raised = runtime * BATSIM_WALLTIME_FACTOR
        counts["walltime_raised"] = int((alive & (wall < raised)).sum())
        wall = np.maximum(wall, raised)
        runtime = np.floor(runtime) + 1
    elif walltime_fallback == "runtime" or cleaning in ("keep-overruns", "ran"):
        fix = alive & (wall <= 0)
        counts["walltime_from_runtime"] = int(fix.sum())
        wall = np.where(fix, runtime, wall)
    else:
        drop("walltime_le_0", wall <= 0)
    if cleaning in ("keep-overruns", "ran"):
        counts["overruns_kept"] = int((alive & (wall < runtime)).sum())
    else:
        drop("walltime_lt_runtime", wall < runtime)
    kept = np.flatnonzero(alive)
    kept = kept[np.lexsort((ids[kept], submit[kept]))]
    columns = [_Column(c, kept, t, share) for c, t, share in (
        (ids, False, False), (submit, True, False), (procs, False, False), (runtime, True, True), (wall, True, True),
        (user, False, True), (group, False, False), (exe, False, True), (queue, False, False), (part, False, False),
        (status, False, False))]
    del ids, submit, procs, runtime, wall, user, group, exe, queue, part, status, alloc, req, v
    jobs: list[JobRecord] = []
    for lo in range(0, len(kept), _RECORDS_PER_SLICE):
        jobs += records_from_columns(*(c.values(lo, lo + _RECORDS_PER_SLICE) for c in columns))
    return _make_trace(jobs, n_lines, counts, m, header, header_lines, source, name)


class _Column:
    """One field of the kept jobs (``column[kept]``), turned into Python numbers a slice at a time.

    With ``share`` (fields that repeat: runtimes, requested times, users,
    executables), every row gets the same Python object for the same value
    (a dictionary of the values seen, ``setdefault`` mapped over a slice in
    C): CEA-Curie's records then hold about 30 MB fewer int objects.  Values
    are those of the careful path either way (``times``: int when integral,
    float otherwise; an integral value is never a float, so no int and float
    of equal value meet in one dictionary).
    """

    __slots__ = ("column", "times", "shared")

    def __init__(self, column, kept, times: bool, share: bool) -> None:
        self.column, self.times = column[kept], times
        self.shared: dict | None = {} if share else None

    def values(self, lo: int, hi: int) -> list:
        part = self.column[lo:hi]
        values = _times(part) if self.times else part.tolist()
        if self.shared is not None:
            values = list(map(self.shared.setdefault, values, values))
        return values


def _comment_lines(data: bytes) -> list[str]:
    """The ``;`` lines of an SWF file's bytes, decoded as :func:`_decode` decodes the whole file.

    Only the part up to the last ``;`` is scanned (the archive's comments
    are a header): a regular expression over 30 MB of job lines is slow.
    """
    last = data.rfind(b";")
    if last < 0:
        return []
    end = data.find(b"\n", last)
    encoding = "utf-8" if data.isascii() or _is_utf8(data) else "latin-1"
    return [line.decode(encoding).rstrip() for line in _COMMENT_RE.findall(data, 0, end if end >= 0 else len(data))]


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _times(col) -> list:
    """Time values as the careful path stores them: int when integral, float otherwise."""
    import numpy as np

    if (col == np.floor(col)).all():
        return col.astype(np.int64).tolist()
    return [int(x) if x.is_integer() else x for x in col.tolist()]


def clean_rows(
    rows: Iterable[list[int | float]],
    max_procs: int,
    *,
    walltime_fallback: WalltimeFallback = None,
    cleaning: str = "spec",
) -> tuple[list[JobRecord], dict[str, int]]:
    """Apply a named cleaning (SPEC section 1 by default) to parsed 18-field rows.

    Returns the kept jobs sorted by (submit, id) and the per-rule counts (all
    of :data:`CLEANING_KEYS` but ``malformed_line``).  Separate from parsing
    so that other readers can reuse the exact same rules.
    """
    check_cleaning(cleaning)
    m = max_procs
    converter = cleaning == "batsim-converter"
    ran = cleaning == "ran"
    keep_overruns = cleaning == "keep-overruns" or ran
    from_runtime = walltime_fallback == "runtime" or keep_overruns
    counts = {key: 0 for key in CLEANING_KEYS if key != "malformed_line"}
    jobs: list[JobRecord] = []
    append = jobs.append
    for v in rows:
        submit = v[1]
        if submit < 0:
            counts["negative_submit"] += 1
            continue
        procs = v[4] if converter else v[7]
        if procs <= 0:
            procs = -1 if converter else v[4]
            if procs <= 0:
                counts["missing_procs"] += 1
                continue
        if procs > m:
            counts["procs_gt_machine"] += 1
            continue
        runtime = v[3]
        if ran:
            if v[4] <= 0:
                counts["never_started"] += 1
                continue
            if runtime <= 0:
                runtime = 1
                counts["runtime_raised"] += 1
        if runtime <= 0:
            counts["runtime_le_0"] += 1
            continue
        walltime = v[8]
        if converter:
            raised = runtime * BATSIM_WALLTIME_FACTOR
            if walltime < raised:
                walltime = raised
                counts["walltime_raised"] += 1
            runtime = math.floor(runtime) + 1
        elif walltime <= 0:
            if from_runtime:
                walltime = runtime
                counts["walltime_from_runtime"] += 1
            else:
                counts["walltime_le_0"] += 1
                continue
        elif walltime < runtime:
            if not keep_overruns:
                counts["walltime_lt_runtime"] += 1
                continue
            counts["overruns_kept"] += 1
        append(JobRecord(v[0], submit, procs, runtime, walltime, v[11], v[12], v[13], v[14], v[15], v[10]))
    jobs.sort(key=attrgetter("submit", "id"))
    return jobs, counts


def dropped_jobs(trace: Trace) -> int:
    """How many jobs (and malformed lines) cleaning removed: the sum over :data:`DROP_RULES`."""
    return sum(trace.cleaning.get(key, 0) for key in DROP_RULES)


def trace_name_from_path(path: str | os.PathLike[str]) -> str:
    """``.../KTH-SP2-1996-2.1-cln.swf.gz`` -> ``KTH-SP2-1996-2.1-cln``."""
    name = Path(path).name
    for suffix in (".gz", ".swf", ".json"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name


class _FieldError(Exception):
    """A job line is malformed; the message names the field, the caller adds file:line."""


def _parse_fields(parts: list[str]) -> list[int | float]:
    if len(parts) != N_FIELDS:
        raise _FieldError(f"expected {N_FIELDS} fields, found {len(parts)}")
    values: list[int | float] = []
    for index, token in enumerate(parts):
        values.append(_parse_number(token, index))
    if values[0] < 0:  # it would become a Batsim id such as "-000004"
        raise _FieldError(f"field 1 (job id): {parts[0]!r} is negative; job numbers count from 1")
    return values


def _parse_number(token: str, index: int) -> int | float:
    try:
        return int(token)
    except ValueError:
        pass
    where = f"field {index + 1} ({FIELD_NAMES[index]})"
    try:
        value = float(token)
    except ValueError:
        raise _FieldError(f"{where}: {token!r} is not a number") from None
    if not math.isfinite(value):
        raise _FieldError(f"{where}: {token!r} is not a finite number")
    if value.is_integer():
        return int(value)
    if index in INTEGRAL_FIELDS:
        raise _FieldError(f"{where}: {token!r} must be an integer")
    return value


def _add_header_line(header: dict[str, str], line: str) -> None:
    match = HEADER_RE.match(line.strip())
    if match is None:
        return
    key, value = match.group(1), match.group(2) or ""
    if key in header:
        header[key] = f"{header[key]}\n{value}"
    else:
        header[key] = value


def _header_int(header: dict[str, str], key: str) -> int | None:
    value = header.get(key)
    if value is None:
        return None
    match = _LEADING_INT_RE.match(value.split("\n", 1)[0])
    return int(match.group(1)) if match else None


def _machine_size(header: dict[str, str], max_procs: int | None, source: str) -> int:
    if max_procs is not None:
        return limits.procs(max_procs, f"{source}: max_procs")
    for key in ("MaxProcs", "MaxNodes"):
        value = _header_int(header, key)
        if value is not None and value > 0:
            return limits.procs(value, f"{source}: header {key}")
    raise WorkloadError(
        f"{source}: the header has no usable MaxProcs or MaxNodes; "
        "give the machine size explicitly (--procs / max_procs=)"
    )


def _check_unique_ids(jobs: list[JobRecord], source: str) -> None:
    ids = [job.id for job in jobs]
    if len(set(ids)) != len(ids):
        seen: set[int] = set()
        dup = next(i for i in ids if i in seen or seen.add(i))  # type: ignore[func-returns-value]
        raise WorkloadError(f"{source}: job id {dup} appears more than once")


def _decode(raw: bytes) -> str:
    # The archive is ASCII, but some headers (Curie's partition names) hold
    # stray bytes; latin-1 never fails and round-trips bytes exactly.
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")
