"""A verified, atomic downloader of the archive traces of the catalogue (:mod:`bftune.workloads.catalogue`).

The catalogue names each trace, its URL and its pinned sha256; a trace
without a pinned checksum is accepted with an :class:`UnpinnedChecksumWarning`
that gives the checksum obtained, to be pinned there.

:func:`download` streams to a temporary file next to the destination while
hashing, checks the gzip magic bytes (an HTML error page is not a trace) and
the checksum, and only then renames the file into place, so a partial or
wrong file never carries the trace's name.  A destination that already
exists with the pinned checksum is used as is (no network access).

Bounded, because a server can misbehave in ways a checksum only sees at
the end: every socket operation (connecting, each read) waits at most
``timeout`` seconds; the whole download at most ``deadline`` seconds
(:data:`DOWNLOAD_DEADLINE`), since a server sending a byte now and then never
trips a read timeout; and the body at most the trace's pinned size
(:attr:`~bftune.workloads.catalogue.TraceSource.max_bytes`), refused at once
when the server announces more and stopped as soon as it sends more, so an
endless body cannot fill the disk.  Each ends the download with one
:class:`DownloadError` line and no file left.  On a terminal a progress line
(:mod:`bftune.support.progress`) shows on standard error.

Please credit the archive and the trace contributors when publishing results.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import warnings
from pathlib import Path

from bftune.support.cachedir import cached_sha256, remember_sha256
from bftune.support.files import clean_leftovers, locked_temp_file
from bftune.support.progress import Progress
from bftune.workloads.catalogue import TraceSource, get_source
from bftune.workloads.errors import WorkloadError

log = logging.getLogger(__name__)

_GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 16
#: Seconds one socket operation (connecting, one read) may wait for the server.
READ_TIMEOUT = 60.0
#: Seconds a whole download may take, from connecting to the last byte: the largest pinned trace (4.1 MB)
#: still arrives in time at 2.3 kB/s, a server dripping a byte at a time is given up.
DOWNLOAD_DEADLINE = 30 * 60.0


class DownloadError(WorkloadError):
    """A trace could not be downloaded, or what arrived is not the expected file."""


class UnpinnedChecksumWarning(UserWarning):
    """A trace without a pinned sha256 was downloaded or used without verification."""


def sha256_file(path: str | os.PathLike[str]) -> str:
    """Hex sha256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def download(
    name: str,
    dest_dir: str | os.PathLike[str],
    base_url: str | None = None,
    *,
    timeout: float = READ_TIMEOUT,
    deadline: float = DOWNLOAD_DEADLINE,
    progress: bool | None = None,
) -> Path:
    """Make sure trace ``name`` is in ``dest_dir`` with the right content; return its path.

    Already present with the pinned checksum: returned without any download.
    Present but different: downloaded again (the old file is only replaced
    once the new one is verified).  Unpinned and present: returned as is,
    with an :class:`UnpinnedChecksumWarning`.  Raises :class:`DownloadError`
    on a network error, a non-gzip body, or a checksum mismatch (naming the
    expected and actual sha256), and when a bound (module docstring) is
    passed: ``timeout`` seconds of silence in one socket operation,
    ``deadline`` seconds in all, a body larger than the trace's size; the
    temporary file is always removed.  ``progress``: show a progress line on
    standard error (default: when it is a terminal).
    """
    source = get_source(name)
    dest_dir = Path(dest_dir)
    try:
        dest_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DownloadError(f"{dest_dir}: cannot create the directory: {exc.strerror or exc}") from None
    dest = dest_dir / source.filename
    clean_leftovers(dest_dir, source.filename)  # .part files of downloads that were killed

    if dest.exists():
        if source.sha256 is None:
            warnings.warn(
                f"{dest}: trace {source.name} has no pinned sha256; using the existing file unverified "
                f"(sha256 {_present_sha256(dest)})",
                UnpinnedChecksumWarning,
                stacklevel=2,
            )
            return dest
        actual = _present_sha256(dest)  # cached: a present trace is not hashed again
        if actual == source.sha256:
            log.info("%s: present with the expected sha256, not downloading", dest)
            return dest
        log.warning("%s: sha256 %s differs from the pinned %s; downloading again", dest, actual, source.sha256)

    url = source.url(base_url)
    _check_scheme(url)
    # Locked while we live, so that a concurrent download's clean-up leaves it alone.
    fd, tmp = locked_temp_file(dest_dir, source.filename, ".part")
    try:
        show = sys.stderr.isatty() if progress is None else progress
        actual = _fetch(url, fd, source, timeout=timeout, deadline=deadline, show=show)
        if source.sha256 is not None and actual != source.sha256:
            raise DownloadError(
                f"{url}: sha256 mismatch for trace {source.name}: expected {source.sha256}, got {actual}"
            )
        with open(tmp, "rb") as fh:
            if fh.read(2) != _GZIP_MAGIC:
                raise DownloadError(f"{url}: the body is not a gzip file (an error page?); nothing was saved")
        os.chmod(tmp, 0o644)
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    finally:
        os.close(fd)
    remember_sha256(dest, actual)  # the next read of the trace through archive:NAME does not hash it again
    if source.sha256 is None:
        warnings.warn(
            f"{dest}: trace {source.name} has no pinned sha256; downloaded unverified "
            f"(sha256 {actual}; pin it in bftune.workloads.catalogue.CATALOGUE)",
            UnpinnedChecksumWarning,
            stacklevel=2,
        )
    log.info("downloaded %s to %s (sha256 %s)", url, dest, actual)
    return dest


def _present_sha256(dest: Path) -> str:
    """The sha256 of the file already at ``dest`` (remembered in the cache while it is unchanged)."""
    try:
        return cached_sha256(dest, sha256_file)
    except OSError as exc:
        raise DownloadError(f"{dest}: cannot read the file present: {exc.strerror or exc}") from None


def _fetch(url: str, fd: int, source: TraceSource, *, timeout: float, deadline: float, show: bool) -> str:
    """Stream ``url`` into the open file ``fd`` (left open: it holds the lock) within the bounds of the module
    docstring; return the sha256."""
    if not (math.isfinite(timeout) and timeout > 0 and math.isfinite(deadline) and deadline > 0):
        raise DownloadError(f"timeout {timeout!r} and deadline {deadline!r} must be positive, finite seconds")
    digest = hashlib.sha256()
    limit = source.max_bytes
    start = time.monotonic()
    received = 0
    meter: Progress | None = None
    with os.fdopen(fd, "wb", closefd=False) as out:
        try:
            request = urllib.request.Request(url, headers={"User-Agent": "bftune-workload-download"})
            with urllib.request.urlopen(request, timeout=timeout) as response:
                announced = _content_length(response)
                if announced is not None and announced > limit:
                    raise DownloadError(f"{url}: the server announces {announced:,} bytes, more than the "
                                        f"{limit:,} of trace {source.short}; nothing was saved")
                expected = announced if announced is not None else source.size
                if show and expected:
                    meter = Progress(_kib(expected), label=f"downloading {source.short} (KiB)")
                # read1: whatever has arrived, so that the bounds are checked between small reads too
                read = getattr(response, "read1", response.read)
                while chunk := read(_CHUNK):
                    received += len(chunk)
                    if received > limit:
                        raise DownloadError(f"{url}: the body is larger than the {limit:,} bytes of trace "
                                            f"{source.short}; stopped reading, nothing was saved")
                    digest.update(chunk)
                    out.write(chunk)
                    if time.monotonic() - start > deadline:
                        raise DownloadError(f"{url}: not finished after {deadline:g} s ({received:,} bytes "
                                            f"arrived; the deadline of a whole download); nothing was saved")
                    if meter is not None:
                        meter.set(min(_kib(received), meter.total))
        except urllib.error.HTTPError as exc:
            raise DownloadError(f"{url}: HTTP {exc.code} {exc.reason}") from exc
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, TimeoutError):
                reason = f"no answer from the server for {timeout:g} s (the timeout of each connect and read)"
            raise DownloadError(f"{url}: download failed: {reason}; nothing was saved") from exc
        finally:
            if meter is not None:
                meter.close()
        out.flush()
        os.fsync(out.fileno())
    return digest.hexdigest()


def _content_length(response: object) -> int | None:
    """The body's size the server announces (``Content-Length``), or None when it announces none or nonsense."""
    headers = getattr(response, "headers", None)
    value = headers.get("Content-Length") if headers is not None else None
    try:
        length = int(str(value).strip()[:20]) if value is not None else None
    except ValueError:
        return None
    return length if length is not None and length >= 0 else None


def _kib(size: int) -> int:
    return -(-size // 1024)


def _check_scheme(url: str) -> None:
    scheme = urllib.parse.urlsplit(url).scheme
    if scheme not in ("http", "https", "file"):
        raise DownloadError(f"{url}: unsupported URL scheme {scheme!r} (http, https or file)")
