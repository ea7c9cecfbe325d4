"""Parsed SWF files, kept so that a trace is decompressed and parsed once, not at every run.

Researchers replay the same archive trace thousands of times; decompressing
and parsing CTC-SP2 takes 0.25 s of every run (numpy's text parser), loading
its parsed numbers 5 ms.  What is kept is the file's raw columns
(every line, before any cleaning, of the fields the cleanings read: the
reader names them) and its comment lines: the cleanings, and any later
change to them, still run on every read.  Entries are named by a hash of the
file's bytes as stored (gzipped or not), so an edited or replaced file is
parsed afresh whatever its name or date.  Only well-formed files of the
vectorised path are kept.

An entry is two files: ``<key>.json`` (the comment lines, the number of rows
and each column's field and type) and ``<key>.bin`` (the columns one after
the other, 8-byte little-endian: ``q``, int64, for a column whose values are
all integral, else ``d``, float64).  They load with the standard library's
:mod:`array` (no numpy: its import alone costs a warm read 60 ms and 20 MiB),
straight from the file into compact arrays: the reader keeps Python numbers
only for the rows a cleaning keeps.  The JSON file is written first, so that a
table is only ever found beside its header.

The cache lives in ``<cache dir>/parsed`` (``bftune.support.cachedir``), holds at most
:data:`MAX_ENTRIES` traces (the least recently read go first; entries of an
older :data:`FORMAT` are never read again, so they go first), and
``BFTUNE_TRACE_CACHE=off`` turns it off.  It is only a cache: any failure to
read or write it is silent, and the trace is parsed as if it did not exist.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from array import array
from pathlib import Path
from typing import Mapping

from bftune.support.cachedir import cache_dir
from bftune.support.files import atomic_write_chunks, atomic_write_text

#: Files smaller than this (as stored) are not looked up (a gzipped file of 1 MB of text, where the
#: vectorised path starts, is about 200 kB); only what the vectorised path parsed is ever stored.
MIN_BYTES = 64 * 1024
MAX_ENTRIES = 32
SWITCH = "BFTUNE_TRACE_CACHE"
#: Part of every entry's name: bump it when what is stored changes meaning.
#: 1: one numpy .npy table of the 18 fields.  2: columns as raw little-endian bytes (module docstring).
FORMAT = 3  # 3: the logged wait (SWF field 3) is kept too
#: The array type codes a column may have: int64 and float64, both 8 bytes.
TYPECODES = ("q", "d")
_ITEM_BYTES = 8
#: The table files of every format, current or not (eviction counts them all).
_TABLE_SUFFIXES = (".bin", ".npy")
#: Stored bytes are little-endian; a big-endian machine swaps them on the way in and out.
_SWAP = sys.byteorder == "big"

Columns = Mapping[int, array]


def enabled() -> bool:
    return os.environ.get(SWITCH, "on") != "off"


def directory() -> Path:
    return cache_dir() / "parsed"


def key_of(raw: bytes) -> str:
    """The entry name of a file whose stored bytes are ``raw``."""
    digest = hasher()
    digest.update(raw)
    return key_of_digest(digest)


def hasher() -> "hashlib.blake2b":
    """A hash to feed a file's stored bytes into a chunk at a time (a large file is never held whole)."""
    return hashlib.blake2b(digest_size=16)


def key_of_digest(digest: "hashlib.blake2b") -> str:
    """The entry name of the file whose stored bytes fed ``digest`` (:func:`hasher`)."""
    return f"v{FORMAT}-{digest.hexdigest()}"


def load(key: str) -> tuple[dict[int, array], list[str]] | None:
    """The columns (by 0-based SWF field) and comment lines stored under ``key``, or None."""
    folder = directory()
    table = folder / f"{key}.bin"
    try:
        meta = json.loads((folder / f"{key}.json").read_text(encoding="utf-8"))
        header_lines, rows, layout = meta["header_lines"], meta["rows"], meta["columns"]
        if not isinstance(header_lines, list) or not all(isinstance(line, str) for line in header_lines):
            return None
        columns = _read_columns(table, rows, layout)
        os.utime(table)  # recently read: kept longest
    except (OSError, ValueError, TypeError, KeyError, EOFError):  # absent, damaged or of another shape
        return None
    return columns, header_lines


def _read_columns(table: Path, rows: int, layout: list) -> dict[int, array]:
    """The columns of ``table``, ``rows`` values each, in ``layout``'s order of ``[field, type code]``.

    The file's size is checked against the layout before anything is
    allocated, so a damaged entry costs nothing; ``fromfile`` reads each
    column straight into its array.
    """
    if type(rows) is not int or rows < 0:
        raise ValueError(f"bad row count {rows!r}")
    columns: dict[int, array] = {}
    with open(table, "rb") as f:
        if os.fstat(f.fileno()).st_size != rows * _ITEM_BYTES * len(layout):
            raise ValueError("the table's size does not match its header")
        for field, typecode in layout:
            if type(field) is not int or typecode not in TYPECODES or field in columns:
                raise ValueError(f"bad column {field!r}: {typecode!r}")
            column = array(typecode)
            column.fromfile(f, rows)
            if _SWAP:
                column.byteswap()
            columns[field] = column
    return columns


def store(key: str, columns: Columns, header_lines: list[str]) -> None:
    """Keep a parsed file's columns (of equal lengths, type codes of :data:`TYPECODES`) and comment lines.

    Comment lines first: a table is only ever found beside its header.
    """
    folder = directory()
    rows = len(next(iter(columns.values()), ()))
    meta = {"header_lines": header_lines, "rows": rows,
            "columns": [[field, column.typecode] for field, column in columns.items()]}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write_text(folder / f"{key}.json", json.dumps(meta))
        atomic_write_chunks(folder / f"{key}.bin", map(_little_endian_bytes, columns.values()))
        _evict(folder)
    except OSError:
        pass  # a read-only or full disk: parse next time


def _little_endian_bytes(column: array) -> memoryview:
    if _SWAP:
        column = array(column.typecode, column)
        column.byteswap()
    return memoryview(column).cast("B")


def _last_read(table: Path) -> float:
    try:
        return table.stat().st_mtime
    except OSError:  # removed meanwhile by another process
        return 0.0


def _evict(folder: Path) -> None:
    tables = sorted((p for p in folder.iterdir() if p.suffix in _TABLE_SUFFIXES), key=_last_read)
    for table in tables[: max(0, len(tables) - MAX_ENTRIES)]:
        table.unlink(missing_ok=True)
        table.with_suffix(".json").unlink(missing_ok=True)
