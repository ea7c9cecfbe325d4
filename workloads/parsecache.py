"""Parsed SWF files, kept so that a trace is decompressed and parsed once, not at every run.

Researchers replay the same archive trace thousands of times; decompressing
and parsing CTC-SP2 takes 0.25 s of every run (numpy's text parser), loading
its parsed numbers 0.01 s.  What is kept is the file's raw table (every line,
every one of the 18 fields, as numpy parsed it) and its comment lines, before
any cleaning: the cleanings, and any later change to them, still run on every
read.  Entries are named by a hash of the file's bytes as stored (gzipped or
not), so an edited or replaced file is parsed afresh whatever its name or
date.  Only well-formed files of the vectorised path are kept.

The cache lives in ``<cache dir>/parsed`` (``bftune.cachedir``), holds at most
:data:`MAX_ENTRIES` traces (the least recently read go first), and
``BFTUNE_TRACE_CACHE=off`` turns it off.  It is only a cache: any failure to
read or write it is silent, and the trace is parsed as if it did not exist.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path

import numpy as np

from bftune.cachedir import cache_dir
from bftune.files import atomic_write_bytes, atomic_write_text

#: Files smaller than this (as stored) are not looked up (a gzipped file of 1 MB of text, where the
#: vectorised path starts, is about 200 kB); only what the vectorised path parsed is ever stored.
MIN_BYTES = 64 * 1024
MAX_ENTRIES = 32
SWITCH = "BFTUNE_TRACE_CACHE"
#: Part of every entry's name: bump it when what is stored changes meaning.
FORMAT = 1


def enabled() -> bool:
    return os.environ.get(SWITCH, "on") != "off"


def directory() -> Path:
    return cache_dir() / "parsed"


def key_of(raw: bytes) -> str:
    """The entry name of a file whose stored bytes are ``raw``."""
    return f"v{FORMAT}-{hashlib.blake2b(raw, digest_size=16).hexdigest()}"


def load(key: str) -> tuple[np.ndarray, list[str]] | None:
    """The table and comment lines stored under ``key``, or None."""
    table = directory() / f"{key}.npy"
    try:
        header = json.loads((directory() / f"{key}.json").read_text(encoding="utf-8"))
        a = np.load(table, allow_pickle=False)
        os.utime(table)  # recently read: kept longest
    except (OSError, ValueError):
        return None
    if a.ndim != 2 or a.dtype != np.float64 or not isinstance(header, list):
        return None
    return a, header


def store(key: str, a: np.ndarray, header_lines: list[str]) -> None:
    """Keep a parsed file (comment lines first: a table is only ever found beside its header)."""
    folder = directory()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write_text(folder / f"{key}.json", json.dumps(header_lines))
        buffer = _npy_bytes(a)
        atomic_write_bytes(folder / f"{key}.npy", buffer)
        _evict(folder)
    except OSError:
        pass  # a read-only or full disk: parse next time


def _npy_bytes(a: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.save(out, np.ascontiguousarray(a), allow_pickle=False)
    return out.getvalue()


def _last_read(table: Path) -> float:
    try:
        return table.stat().st_mtime
    except OSError:  # removed meanwhile by another process
        return 0.0


def _evict(folder: Path) -> None:
    tables = sorted(folder.glob("*.npy"), key=_last_read)
    for table in tables[: max(0, len(tables) - MAX_ENTRIES)]:
        table.unlink(missing_ok=True)
        table.with_suffix(".json").unlink(missing_ok=True)
