"""The header of an SWF file: its comment lines, the fields they hold, and the machine size they give.

The archive's files start with ``;`` lines such as ``; MaxProcs: 128`` or
``; UnixStartTime: 843480031``; a field may repeat (its values are joined by
newlines), and only the leading integer of a numeric field counts (``;
MaxNodes: 100 (IBM SP2)``).  Every parse path (line by line, vectorised, the
parse cache) reads the header through these functions.
"""

from __future__ import annotations

import re

from bftune.workloads import limits
from bftune.workloads.errors import WorkloadError

HEADER_RE = re.compile(r"^;\s*([A-Za-z][A-Za-z0-9_-]*)\s*:(?:\s+(.*?))?\s*$")
_LEADING_INT_RE = re.compile(r"^\s*([+-]?\d+)")
_COMMENT_RE = re.compile(rb"^[ \t]*;.*$", re.MULTILINE)


def comment_lines(data: bytes) -> list[str]:
    """The ``;`` lines of an SWF file's bytes, decoded as the careful path decodes the file.

    Only the part up to the last ``;`` is scanned (the archive's comments
    are a header): a regular expression over 30 MB of job lines is slow.
    """
    last = data.rfind(b";")
    if last < 0:
        return []
    end = data.find(b"\n", last)
    encoding = "utf-8" if data.isascii() or is_utf8(data) else "latin-1"
    return [line.decode(encoding).rstrip() for line in _COMMENT_RE.findall(data, 0, end if end >= 0 else len(data))]


def is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def add_header_line(header: dict[str, str], line: str) -> None:
    match = HEADER_RE.match(line.strip())
    if match is None:
        return
    key, value = match.group(1), match.group(2) or ""
    if key in header:
        header[key] = f"{header[key]}\n{value}"
    else:
        header[key] = value


def start_time(header: dict[str, str], source: str) -> int | None:
    """The header's UnixStartTime, a time within ``limits.MAX_TIME`` (None if absent)."""
    start = _header_int(header, "UnixStartTime")
    return None if start is None else int(limits.time(start, f"{source}: header UnixStartTime"))


def _header_int(header: dict[str, str], key: str) -> int | None:
    value = header.get(key)
    if value is None:
        return None
    match = _LEADING_INT_RE.match(value.split("\n", 1)[0])
    # 40 digits are out of every range already; more would meet int()'s limit of 4300 digits.
    return int(match.group(1)[:40]) if match else None


def machine_size(header: dict[str, str], max_procs: int | None, source: str) -> int:
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
