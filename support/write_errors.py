"""One line for a write that failed: the file the user knows (not its hidden temporary) and what to fix first.

A campaign's table that cannot be written once named ``.weeks.csv.x1y2z3w4.tmp`` and advised a rerun that
failed the same way (a directory stood where the table goes).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from bftune.support.files import _SHORTENED_RE, LEFTOVER


def shown_path(path: str | os.PathLike[str]) -> Path:
    """The file a temporary of this module stands for (``DIR/.weeks.csv.abcd1234.tmp`` -> ``DIR/weeks.csv``).

    An error while writing names the temporary; the user knows, and can fix, only the file it becomes.
    A temporary of a shortened long name is shown as it is.
    """
    p = Path(path)
    match = LEFTOVER.match(p.name)
    if match is None or _SHORTENED_RE.search(match.group("name")):
        return p
    return p.with_name(match.group("name"))


#: What to do before running again, by the error that stopped a write: a rerun alone would fail the same way.
_FIX_FIRST = {errno.EISDIR: "a directory stands where the file goes: move it away",
              errno.ENOTDIR: "a file stands where a folder goes: move it away",
              errno.ENOSPC: "free some space", errno.EDQUOT: "free some space (the disk quota is reached)",
              errno.EACCES: "make it writable", errno.EPERM: "make it writable",
              errno.EROFS: "the file system is read-only: choose another --out"}


def write_failure(exc: OSError, fallback: str | os.PathLike[str], done: str) -> str:
    """One line for a failed write: the file (not its temporary), why, what is kept (``done``), what to do."""
    where = shown_path(exc.filename) if exc.filename else Path(fallback)
    fix = _FIX_FIRST.get(exc.errno or 0)
    then = f"{fix}, then run the same command again" if fix else "run the same command again"
    return f"{where}: cannot write it ({exc.strerror or exc}); {done}: {then}"
