"""Write files atomically: a reader never sees a half-written file.

Experiments run in parallel and are often interrupted; a workload, platform or
downloaded trace that exists must therefore be complete.  We write to a
temporary file in the destination directory (same file system, so the final
``os.replace`` is an atomic rename) and only then move it into place.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically and return the path.

    The parent directory must exist.  On any error the temporary file is
    removed and the previous content of ``path`` (if any) is left untouched.
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        # mkstemp creates 0600; give the file the usual permissions instead.
        os.chmod(tmp, 0o666 & ~_UMASK)
        os.replace(tmp, path)
    except BaseException:
        _unlink_quietly(tmp)
        raise
    return path


def atomic_write_text(path: str | os.PathLike[str], text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically (see :func:`atomic_write_bytes`)."""
    return atomic_write_bytes(path, text.encode(encoding))


def _read_umask() -> int:
    # os.umask can only be read by setting it; do it once, at import time,
    # rather than racing other threads on every write.
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def _unlink_quietly(path: str | os.PathLike[str]) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
