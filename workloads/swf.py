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

2. **Clean**: the records become jobs by the rules of :mod:`bftune.workloads.cleaning`
   (``cleaning=`` names one of :data:`CLEANINGS`; the default is the filter of
   docs/semantics/workloads.md#cleaning).  The rules check procs against ``m``: the ``max_procs``
   argument, else the header ``MaxProcs``, else ``MaxNodes`` (the leading
   integer, so ``338 (batch partition; 512 total)`` gives 338).  No usable
   value is an error asking for ``--procs``.  Every key of
   :data:`CLEANING_KEYS` is present in ``Trace.cleaning`` (0 when nothing
   matched) so reports have a stable shape.  No job left is an error, as are
   duplicate job ids.

Speed: well-formed files take a vectorised path (numpy's C parser) whose
parsed fields go to the parse cache (:mod:`~bftune.workloads.parsecache`),
from which a later read loads them without numpy (whose import alone would
cost a warm read 60 ms and 20 MiB); any doubt sends the file to the
line-by-line path, which is the one that names ``file:line`` in errors.
Every path then runs the same statement of the rules over columns
(:mod:`~bftune.workloads.cleaning`, with C-speed builtins).  A warm read of
CTC-SP2 takes about 0.1 s, of the 312,826-job Curie trace about half a second.
"""

from __future__ import annotations

import io
import math
import os
import warnings
from array import array
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator, Sequence

from bftune.support import inputs
from bftune.support.gcpause import paused_gc
from bftune.workloads import limits, parsecache
# The cleaning rules live in bftune.workloads.cleaning.  BATSIM_WALLTIME_FACTOR, CLEANINGS, DROP_RULES and
# dropped_jobs are not used here, only re-exported: their importers read them from this module, as before.
from bftune.workloads.cleaning import (  # noqa: F401 - re-exports
    BATSIM_WALLTIME_FACTOR,
    CLEANED_FIELDS,
    CLEANING_KEYS,
    CLEANINGS,
    DROP_RULES,
    FieldColumns,
    WalltimeFallback,
    careful_numbers,
    check_cleaning,
    clean_columns,
    clean_rows,
    dropped_jobs,
)
from bftune.workloads.errors import WorkloadError
from bftune.workloads.swf_header import add_header_line, comment_lines, is_utf8, machine_size, start_time
from bftune.workloads.model import JobRecord, Trace

#: SWF field names, 1-based position = index + 1 (docs/semantics/workloads.md#swf-files).
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
#: 0-based indexes of the times the cleanings read (submit, run and requested time): at most
#: ``limits.MAX_TIME`` in magnitude.
TIME_FIELDS: tuple[int, ...] = (1, 3, 8)

#: A header line "; Key: value" (also what the SWF writer rewrites): the key is one word and the colon
#: must be followed by white space or the end of line, so that continuation lines such as
#: ";              http://www..." are not mistaken for a key "http".


# --------------------------------------------------------------------------
# reading


def read_swf(
    path: str | os.PathLike[str],
    *,
    max_procs: int | None = None,
    lenient: bool = False,
    walltime_fallback: WalltimeFallback = None,
    name: str | None = None,
    cleaning: str = "drop-overruns",
) -> Trace:
    """Read an SWF file (plain or gzip, detected by magic bytes) into a cleaned Trace.

    ``max_procs`` overrides the header's machine size m (and is what jobs are
    checked against).  ``name`` defaults to the file name without ``.swf`` /
    ``.gz``.  ``cleaning`` names one of :data:`CLEANINGS`.  See the module
    docstring for the parsing rules, :mod:`bftune.workloads.cleaning` for the cleaning rules.

    The file is streamed (:mod:`bftune.support.inputs`): only a regular file is read,
    gzip data is decompressed a chunk at a time, and lines, comments and job
    lines are bounded (:mod:`bftune.workloads.limits`), so memory follows the
    job lines, not the file's size.
    """
    cleaning = check_cleaning(cleaning)
    _check_fallback(walltime_fallback)
    path = Path(path)
    name = name if name is not None else trace_name_from_path(path)
    try:
        with inputs.open_regular(path) as f:
            return _read_open_swf(f, path, max_procs, lenient, walltime_fallback, name, cleaning)
    except inputs.InputError as exc:
        raise WorkloadError(str(exc)) from None


def _read_open_swf(f: BinaryIO, path: Path, max_procs: int | None, lenient: bool,
                   walltime_fallback: WalltimeFallback, name: str, cleaning: str) -> Trace:
    """:func:`read_swf` of the open file: the parse cache, else a scan (the fast path), else the careful path."""
    source = str(path)
    size = os.fstat(f.fileno()).st_size
    key = _cache_key(f, path) if size >= parsecache.MIN_BYTES and parsecache.enabled() else None
    cached = _cached_columns(key) if key else None
    with paused_gc():
        if cached is not None:  # only well-formed tables are ever stored (_parse_fast)
            return _trace_from_columns(*cached, source, max_procs, walltime_fallback, name, cleaning)
        scan = _scan(inputs.line_blocks(inputs.text_chunks(f, path), path, limits.MAX_LINE_BYTES), source)
        if scan.chars >= FAST_PATH_MIN_CHARS:
            box = [b"".join(scan.jobs)]
            scan.jobs.clear()  # the fast path frees the job lines as soon as it has parsed them
            fast = _parse_fast(box, source, max_procs, walltime_fallback, name, cleaning, key,
                               header_lines=scan.comments())
            if fast is not None:
                return fast
            del box
        encoding = "utf-8" if scan.utf8 else "latin-1"
        del scan
        blocks = inputs.line_blocks(inputs.text_chunks(f, path), path, limits.MAX_LINE_BYTES)
        return _parse_careful(_decoded_lines(blocks, encoding), source, max_procs, lenient, walltime_fallback,
                              name, cleaning)


def _cache_key(f: BinaryIO, path: Path) -> str:
    """The parse cache's name for the open file's stored bytes, hashed a chunk at a time."""
    digest = parsecache.hasher()
    for chunk in inputs.stored_chunks(f, path):
        digest.update(chunk)
    f.seek(0)
    return parsecache.key_of_digest(digest)


class _Scan:
    """What one pass over a file's lines gathers for the fast path: its job lines, comment lines and size.

    Blank lines are dropped, comment lines kept (as bytes, decoded once the
    file's encoding is known) and job lines joined a chunk at a time, so
    that memory follows the job lines; the bounds of
    :mod:`bftune.workloads.limits` on comments and job lines are checked as
    the lines come, by :class:`_Bounds`.
    """

    def __init__(self, source: str) -> None:
        self.jobs: list[bytes] = []
        self.comment_bytes: list[bytes] = []
        self.chars = 0
        self.utf8 = True
        self.bounds = _Bounds(source)

    def comments(self) -> list[str]:
        """The comment lines, decoded as the careful path decodes the file: UTF-8 if the whole file is, else
        latin-1 (which never fails and keeps every byte: some archive headers hold stray bytes)."""
        encoding = "utf-8" if self.utf8 else "latin-1"
        return [line.decode(encoding).rstrip() for line in self.comment_bytes]


def _scan(blocks: Iterator[tuple[int, list[bytes]]], source: str) -> _Scan:
    scan = _Scan(source)
    for first, block in blocks:
        scan.chars += sum(map(len, block)) + len(block)
        jobs = []
        for lineno, line in enumerate(block, start=first):
            stripped = line.lstrip()
            if not stripped:
                continue
            if stripped[:1] == b";":
                scan.bounds.comment(len(line), lineno)
                scan.comment_bytes.append(line)
            else:
                jobs.append(line)
        if jobs:
            lineno = first + len(block) - 1
            if scan.bounds.jobs + len(jobs) > limits.MAX_JOBS:  # name the first job line over the limit
                numbers = [n for n, line in enumerate(block, first) if line.strip() and line.lstrip()[:1] != b";"]
                lineno = numbers[limits.MAX_JOBS - scan.bounds.jobs]
            scan.bounds.job_lines(len(jobs), lineno)
            jobs.append(b"")
            scan.jobs.append(b"\n".join(jobs))
        if scan.utf8 and not all(map(bytes.isascii, block)):
            scan.utf8 = is_utf8(b"\n".join(block))
    return scan


class _Bounds:
    """The limits on what a file's lines make the reader keep: comment bytes and job lines (``limits``)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.header = 0
        self.jobs = 0

    def comment(self, size: int, lineno: int) -> None:
        self.header += size
        if self.header > limits.MAX_HEADER_BYTES:
            raise WorkloadError(f"{self.source}:{lineno}: more than {limits.MAX_HEADER_BYTES // 2**20} MiB of "
                                "comment lines; not an SWF header (the archive's largest is 2.2 kB)")

    def job_lines(self, count: int, lineno: int) -> None:
        self.jobs += count
        if self.jobs > limits.MAX_JOBS:
            raise WorkloadError(f"{self.source}:{lineno}: more than {limits.MAX_JOBS:,} job lines: more than "
                                "bftune accepts (about 2 KB of memory per job)")


def _decoded_lines(blocks: Iterator[tuple[int, list[bytes]]], encoding: str) -> Iterator[tuple[int, str]]:
    """The numbered lines of ``blocks``, decoded and numbered as ``enumerate(text.splitlines(), 1)`` of the
    whole decoded file would give them (str.splitlines also breaks at \\r, \\v, \\f, \\x1c-\\x1e, \\x85...)."""
    extra = 0  # lines that str.splitlines sees inside the \n-lines so far
    for first, block in blocks:
        for i, piece in enumerate(block):
            parts = (piece.decode(encoding) + "\n").splitlines()  # "\x1c\n" is two breaks, "\r\n" one
            lineno = first + i + extra
            if len(parts) <= 1:
                yield lineno, parts[0] if parts else ""
                continue
            for k, part in enumerate(parts):
                yield lineno + k, part
            extra += len(parts) - 1


def parse_swf(
    text: str,
    *,
    source: str = "<string>",
    max_procs: int | None = None,
    lenient: bool = False,
    walltime_fallback: WalltimeFallback = None,
    name: str = "workload",
    cleaning: str = "drop-overruns",
) -> Trace:
    """Parse and clean SWF ``text`` (``source`` is only used in messages and ``Trace.source``)."""
    _check_fallback(walltime_fallback)
    cleaning = check_cleaning(cleaning)
    if len(text) >= FAST_PATH_MIN_CHARS:
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates: only the careful path can say where
            data = b""
        fast = _parse_fast([data], source, max_procs, walltime_fallback, name, cleaning) if data else None
        if fast is not None:
            return fast
    return _parse_careful(enumerate(text.splitlines(), start=1), source, max_procs, lenient, walltime_fallback, name, cleaning)


def _parse_careful(lines: Iterable[tuple[int, str]], source: str, max_procs: int | None, lenient: bool,
                   walltime_fallback: WalltimeFallback, name: str, cleaning: str = "drop-overruns") -> Trace:
    """The line-by-line path over numbered lines: any input, errors name ``file:line``; comments and job lines
    bounded (:class:`_Bounds`)."""
    header_lines: list[str] = []
    header: dict[str, str] = {}
    rows: list[list[int | float]] = []
    malformed = 0
    bounds = _Bounds(source)
    low, high = -limits.MAX_TIME, limits.MAX_TIME
    for lineno, line in lines:
        parts = line.split()
        if not parts:
            continue
        if parts[0][0] == ";":
            bounds.comment(len(line), lineno)
            header_lines.append(line.rstrip())
            add_header_line(header, line)
            continue
        bounds.job_lines(1, lineno)
        if len(parts) == N_FIELDS:
            try:
                row: list[int | float] = list(map(int, parts))
                if row[0] >= 0 and low <= row[1] <= high and low <= row[3] <= high and low <= row[8] <= high:
                    rows.append(row)
                    continue
            except ValueError:
                pass  # not all plain integers (or a negative id, a time out of range): the careful path below
        try:
            rows.append(_parse_fields(parts))
        except _FieldError as exc:
            if not lenient:
                raise WorkloadError(f"{source}:{lineno}: {exc}") from None
            malformed += 1

    m = machine_size(header, max_procs, source)
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
        unix_start_time=start_time(header, source),
        timezone=header.get("TimeZoneString"),
        cleaning=cleaning,
        source=source,
        header_lines=tuple(header_lines),
    )


#: Below this size the line-by-line path is as fast as the vectorised one.
FAST_PATH_MIN_CHARS = 1_000_000

#: Beyond this magnitude a float64 no longer holds every integer: such a file takes the careful path.
_EXACT_FLOAT_LIMIT = 2.0**53


def _parse_fast(box: list[bytes], source: str, max_procs: int | None, walltime_fallback: WalltimeFallback,
                name: str, cleaning: str = "drop-overruns", cache_key: str | None = None,
                header_lines: list[str] | None = None) -> Trace | None:
    """Vectorised parse of a well-formed file's bytes, then the cleaning; None sends the caller to the careful path.

    ``box`` holds the bytes (and nothing else should): once they are parsed
    and known well-formed, they are dropped, so that a large trace's text
    and its records are never in memory together; on None they are left in
    ``box`` for the careful path.  numpy's C parser reads the 18 columns
    from the bytes (a text ``StringIO`` would hold 4 bytes per character) and
    refuses ragged or non-numeric lines.  Anything unusual (a parse error, a
    non-finite or fractional count field, a time out of range) falls back to
    the line-by-line path, which names the offending file:line.  The fields
    the cleanings read are kept in the parse cache under ``cache_key``
    (:mod:`bftune.workloads.parsecache`), as the compact arrays the cleaning
    then reads.  ``header_lines`` are the file's comment lines when the
    caller has them (a streamed file's job lines come without them);
    otherwise they are found in the bytes.
    """
    import numpy as np  # only a cold read parses: a warm one never imports numpy

    data = box[0]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "input contained no data": the careful path reports it
            a = np.loadtxt(io.BytesIO(data), comments=";", dtype=np.float64, ndmin=2, encoding="latin-1")
    except ValueError:
        return None
    if not _well_formed(a):
        return None
    if header_lines is None:
        header_lines = comment_lines(data)
    del data
    box.clear()  # well-formed: the bytes are no longer needed
    columns = _table_columns(a)
    del a  # 12 compact columns of the 18
    if cache_key is not None:
        parsecache.store(cache_key, dict(zip(CLEANED_FIELDS, columns)), header_lines)
    return _trace_from_columns(columns, header_lines, source, max_procs, walltime_fallback, name, cleaning)


def _well_formed(a) -> bool:
    """Whether numpy's table of a file holds SWF records exactly as the careful path would parse them.

    Finite, integral where the format wants counts, a job id >= 0, every field
    the cleanings read within float64's exact integers (a larger integer is
    parsed exactly only by the careful path) and the times within
    ``limits.MAX_TIME``.
    """
    import numpy as np

    if a.size == 0 or a.shape[1] != N_FIELDS or not np.isfinite(a).all() or (a[:, 0] < 0).any():
        return False
    for field in INTEGRAL_FIELDS | set(CLEANED_FIELDS):  # a column at a time: small temporaries
        values = a[:, field]
        if field in INTEGRAL_FIELDS and not (values == np.floor(values)).all():
            return False  # the careful path names the line
        if field in CLEANED_FIELDS and not (np.abs(values) < _EXACT_FLOAT_LIMIT).all():
            return False
        if field in TIME_FIELDS and not (np.abs(values) <= limits.MAX_TIME).all():
            return False  # the careful path names the line
    return True


def _table_columns(a) -> list[array]:
    """The :data:`CLEANED_FIELDS` of a well-formed numpy table, as the parse cache keeps them.

    An ``array('q')`` (int64) where every value of the field is integral,
    else an ``array('d')`` (float64): 8 bytes a value, with no Python object
    made before the cleaning says which rows are kept.
    """
    import numpy as np

    columns: list[array] = []
    for field in CLEANED_FIELDS:
        values = a[:, field]
        ints = values.astype(np.int64)
        integral = bool((ints == values).all())
        columns.append(array("q", ints.tobytes()) if integral else array("d", values.tobytes()))
    return columns


def _cached_columns(key: str) -> tuple[list[array], list[str]] | None:
    """The parse cache's columns of :data:`CLEANED_FIELDS` and comment lines, or None (a miss)."""
    parsed = parsecache.load(key)
    if parsed is None:
        return None
    stored, header_lines = parsed
    columns = [stored[field] for field in CLEANED_FIELDS if field in stored]
    if len(columns) != len(CLEANED_FIELDS):  # an entry that lacks a field the cleanings read
        return None
    for field in TIME_FIELDS:  # an entry stored before times were bounded: the parse names the line
        column = columns[CLEANED_FIELDS.index(field)]
        if column and not -limits.MAX_TIME <= min(column) <= max(column) <= limits.MAX_TIME:
            return None
    return columns, header_lines


def _trace_from_columns(columns: list[array], header_lines: list[str], source: str, max_procs: int | None,
                        walltime_fallback: WalltimeFallback, name: str, cleaning: str) -> Trace:
    """The cleaned Trace of a well-formed file's :data:`CLEANED_FIELDS` (a cache hit or the fast path)."""
    header: dict[str, str] = {}
    for line in header_lines:
        add_header_line(header, line)
    m = machine_size(header, max_procs, source)
    fields = FieldColumns(*map(_careful_column, columns))  # type: ignore[arg-type]  # (13 columns, in order)
    jobs, counts = clean_columns(fields, m, walltime_fallback, cleaning)
    return _make_trace(jobs, len(fields.id), counts, m, header, header_lines, source, name)


def _careful_column(column: array) -> Sequence[int | float]:
    """A stored column with the values the careful path parses: an int64 array as it is (its items are
    ints), a float64 one (fractional times) as a list holding int where a value is integral."""
    return column if column.typecode == "q" else careful_numbers(column)


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
    where = f"field {index + 1} ({FIELD_NAMES[index]})"
    try:
        number = int(token)
    except ValueError:
        pass
    else:
        if index in TIME_FIELDS and not -limits.MAX_TIME <= number <= limits.MAX_TIME:
            raise _FieldError(f"{where}: {limits.short(token)} is out of range: times are at most 2^32 s (136 years)")
        return number
    try:
        value = float(token)
    except ValueError:
        raise _FieldError(f"{where}: {token!r} is not a number") from None
    if not math.isfinite(value):
        raise _FieldError(f"{where}: {token!r} is not a finite number")
    if index in TIME_FIELDS and not -limits.MAX_TIME <= value <= limits.MAX_TIME:
        raise _FieldError(f"{where}: {limits.short(token)} is out of range: times are at most 2^32 s (136 years)")
    if value.is_integer():
        return int(value)
    if index in INTEGRAL_FIELDS:
        raise _FieldError(f"{where}: {token!r} must be an integer")
    return value


def _check_unique_ids(jobs: list[JobRecord], source: str) -> None:
    ids = [job.id for job in jobs]
    if len(set(ids)) != len(ids):
        seen: set[int] = set()
        dup = next(i for i in ids if i in seen or seen.add(i))  # type: ignore[func-returns-value]
        raise WorkloadError(f"{source}: job id {dup} appears more than once")
