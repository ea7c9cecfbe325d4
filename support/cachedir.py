"""Where bftune keeps what it can rebuild: compiled core builds, parsed traces, checksums of files.

``$BFTUNE_CACHE_DIR``, else ``$XDG_CACHE_HOME/bftune``, else ``~/.cache/bftune``.
Everything under it may be deleted at any time; bftune then rebuilds,
re-parses or re-hashes what it needs (a compiled core only by ``bftune accelerate``).

``import bftune`` imports this module: nothing here may raise because the
cache directory is missing, unreadable or not a directory (a ``sudo`` run
leaves ``~/.cache/bftune`` owned by root); the cache is then simply not used.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Callable

#: The checksums of files already hashed (archive traces checked against their pinned sha256), under
#: :func:`cache_dir`: ``{"format": 1, "files": {path: [size, mtime_ns, ctime_ns, inode, device, sha256]}}``.
CHECKSUMS = Path("checksums") / "files.json"
#: Files remembered at most (the catalogue has ten traces; a few data directories of them each).
MAX_CHECKSUM_ENTRIES = 256
#: A checksum file larger than this is not read (a full one is about 50 kB).
_MAX_CHECKSUMS_BYTES = 1 << 20
#: Bumped when what an entry holds changes meaning; a file of another format is not read.
_CHECKSUMS_FORMAT = 1


def cache_dir() -> Path:
    explicit = os.environ.get("BFTUNE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "bftune"


def cached_sha256(path: str | os.PathLike[str], compute: Callable[[str], str]) -> str:
    """The sha256 of ``path``: remembered when the file is unchanged since it was hashed, else ``compute(path)``
    (and remembered).

    Unchanged means the same size, mtime, ctime, inode and device: any write, a replacement (a new inode) or a
    ``touch`` changes one of them, and ctime cannot be set back, so restoring the mtime does not fool it.
    A file that changed while it was hashed is not remembered.  ``OSError`` when ``path`` cannot be read;
    never because of the cache.
    """
    key = os.path.abspath(path)
    identity = _identity(os.stat(key))
    entries = _read_checksums()
    entry = entries.get(key)
    if isinstance(entry, list) and len(entry) == len(identity) + 1 and entry[:-1] == identity \
            and isinstance(entry[-1], str):
        return entry[-1]
    digest = compute(key)
    if _identity(os.stat(key)) == identity:
        _remember(entries, key, identity, digest)
    return digest


def remember_sha256(path: str | os.PathLike[str], digest: str) -> None:
    """Record that ``path``, as it is now, hashes to ``digest`` (a download that just verified what it wrote)."""
    key = os.path.abspath(path)
    try:
        identity = _identity(os.stat(key))
    except OSError:
        return
    _remember(_read_checksums(), key, identity, digest)


def _identity(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


def _read_checksums() -> dict[str, list]:
    """The remembered checksums; empty when the file is missing, unreadable, not a regular file, too large or
    garbled (it is only a cache)."""
    try:
        fd = os.open(cache_dir() / CHECKSUMS, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO put there does not block
    except (OSError, ValueError):
        return {}
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > _MAX_CHECKSUMS_BYTES:
            return {}
        with os.fdopen(os.dup(fd), "rb") as fh:
            data = json.loads(fh.read(_MAX_CHECKSUMS_BYTES + 1))
    except (OSError, ValueError, RecursionError):
        return {}
    finally:
        os.close(fd)
    if not isinstance(data, dict) or data.get("format") != _CHECKSUMS_FORMAT or \
            not isinstance(data.get("files"), dict):
        return {}
    return data["files"]


def _remember(entries: dict[str, list], key: str, identity: list[int], digest: str) -> None:
    """Write ``entries`` plus ``key`` (the newest last; the oldest dropped beyond :data:`MAX_CHECKSUM_ENTRIES`)
    atomically; silently nothing when the cache directory cannot be written."""
    from bftune.support.files import atomic_write_text, clean_leftovers  # tempfile, fcntl: only when writing

    entries.pop(key, None)
    entries[key] = [*identity, digest]
    kept = dict(list(entries.items())[-MAX_CHECKSUM_ENTRIES:])
    path = cache_dir() / CHECKSUMS
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        clean_leftovers(path.parent, path.name)  # the temporary of a write that was killed
        atomic_write_text(path, json.dumps({"format": _CHECKSUMS_FORMAT, "files": kept}, separators=(",", ":")))
    except (OSError, ValueError):
        pass
