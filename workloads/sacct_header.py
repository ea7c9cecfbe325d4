"""Which file is a sacct dump, and what its first line says: the header's columns and delimiter.

A header is column names (letters and digits) separated by one delimiter,
whichever it is (``|``, ``,``, ``☃``, several characters), ``JobID`` among
them; ``--parsable`` ends it with the delimiter too; a UTF-8 byte-order mark
before it is ignored.  A file whose first line is a record instead (a job
id first, a sacct time or a job state further on: ``sacct --noheader``) is
told apart, so that the reader can ask for its columns rather than call it
a broken SWF file.  Only the first 64 KiB are read.
"""

from __future__ import annotations

import gzip
import os
import re

from bftune.support import inputs
from bftune.workloads import limits
from bftune.workloads.errors import WorkloadError
from bftune.workloads.sacct_columns import SHAPES, split_header

_STATE_WORDS = frozenset({"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "PENDING", "RUNNING", "NODE_FAIL",
                          "OUT_OF_MEMORY", "PREEMPTED", "REQUEUED", "BOOT_FAIL", "DEADLINE", "SUSPENDED",
                          "RESIZING", "REVOKED"})
_SNIFF_BYTES = limits.MAX_LINE_BYTES


def _head_line(path: str | os.PathLike[str]) -> str | None:
    """The first non-blank line of ``path`` (gunzipped), as far as the first 64 KiB hold it; None if unreadable."""
    try:
        with inputs.open_regular(path) as fh:  # not a regular file (a FIFO, /dev/zero): not a dump; the reader says
            head = fh.read(_SNIFF_BYTES)
            if head[:2] == inputs.GZIP_MAGIC:
                fh.seek(0)
                with gzip.GzipFile(fileobj=fh) as gz:
                    head = gz.read(_SNIFF_BYTES)
    except (OSError, EOFError, inputs.InputError):
        return None
    text = head.decode("utf-8", "replace").lstrip("\ufeff")
    for line in text.split("\n"):
        if line.strip():
            complete = len(head) < _SNIFF_BYTES or "\n" in text[text.index(line):]
            return line.rstrip("\r") if complete else re.sub(r"[A-Za-z0-9]*[^A-Za-z0-9]*$", "", line)
    return None


def header_of(line: str, delimiter: str | None) -> tuple[list[str], str, bool] | None:
    """``(names, delimiter, parsable)`` if ``line`` is a sacct header (with ``delimiter`` if given)."""
    if delimiter is None:
        return split_header(line)
    names = line.lstrip("\ufeff").split(delimiter)
    parsable = len(names) > 1 and names[-1] == ""
    names = names[:-1] if parsable else names
    if len(names) < 2 or not all(re.fullmatch(r"[A-Za-z0-9]+", n) for n in names):
        return None
    return (names, delimiter, parsable) if "jobid" in (n.lower() for n in names) else None


def is_slurm_dump(path: str | os.PathLike[str], *, sacct_format: str | None = None,
                  delimiter: str | None = None) -> bool:
    """Whether ``path`` holds sacct ``--parsable``/``--parsable2`` output: its first non-blank line is column
    names, one of them ``JobID``, separated by one delimiter (``delimiter`` if given, else whichever).  With
    ``sacct_format`` (a dump without header) the caller says so: any readable file is one.  (SWF lines are
    numbers, Batsim JSON starts with ``{``.)"""
    line = _head_line(path)
    if line is None:
        return False
    return sacct_format is not None or header_of(line, delimiter) is not None


def looks_like_headerless_dump(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` looks like sacct output without its header line (``--noheader``): a first line whose
    first field is a job id and that holds a sacct time or a job state, split by some delimiter."""
    line = _head_line(path)
    if line is None or header_of(line, None) is not None:
        return False
    jobid = SHAPES["jobid"]
    time = SHAPES["submit"]
    for delimiter in dict.fromkeys(c for c in line if not c.isalnum() and c not in "-:._/+[]%=() "):
        fields = [f.strip() for f in line.split(delimiter)]
        if len(fields) >= 3 and jobid.matches(fields[0]) and any(
                f.split(" ")[0] in _STATE_WORDS or (f[:1].isdigit() and time.matches(f)) for f in fields[1:]):
            return True
    return False


def headerless_dump_error(path: str | os.PathLike[str]) -> WorkloadError:
    """The one line for a dump without header read without its columns."""
    return WorkloadError(f"{path}: looks like sacct output without its header line (--noheader): give its columns, "
                         "in order, with --sacct-format JobID,User,... (the list given to sacct --format), and "
                         "--sacct-delimiter if it is not '|'")
