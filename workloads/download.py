"""A verified, atomic downloader of the archive traces of the catalogue (:mod:`bftune.workloads.catalogue`).

The catalogue names each trace, its URL and its pinned sha256; a trace
without a pinned checksum is accepted with an :class:`UnpinnedChecksumWarning`
that gives the checksum obtained, to be pinned there.

:func:`download` streams to a temporary file next to the destination while
hashing, checks the gzip magic bytes (an HTML error page is not a trace) and
the checksum, and only then renames the file into place, so a partial or
wrong file never carries the trace's name.  A destination that already
exists with the pinned checksum is used as is (no network access).

Please credit the archive and the trace contributors when publishing results.
"""

from __future__ import annotations

import hashlib
import logging
import os
import urllib.error
import urllib.parse
import urllib.request
import warnings
from pathlib import Path

from bftune.support.files import clean_leftovers, locked_temp_file
from bftune.workloads.catalogue import get_source
from bftune.workloads.errors import WorkloadError

log = logging.getLogger(__name__)

_GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 16


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
    timeout: float = 60.0,
) -> Path:
    """Make sure trace ``name`` is in ``dest_dir`` with the right content; return its path.

    Already present with the pinned checksum: returned without any download.
    Present but different: downloaded again (the old file is only replaced
    once the new one is verified).  Unpinned and present: returned as is,
    with an :class:`UnpinnedChecksumWarning`.  Raises :class:`DownloadError`
    on a network error, a non-gzip body, or a checksum mismatch (naming the
    expected and actual sha256); the temporary file is always removed.
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
                f"(sha256 {sha256_file(dest)})",
                UnpinnedChecksumWarning,
                stacklevel=2,
            )
            return dest
        actual = sha256_file(dest)
        if actual == source.sha256:
            log.info("%s: present with the expected sha256, not downloading", dest)
            return dest
        log.warning("%s: sha256 %s differs from the pinned %s; downloading again", dest, actual, source.sha256)

    url = source.url(base_url)
    _check_scheme(url)
    # Locked while we live, so that a concurrent download's clean-up leaves it alone.
    fd, tmp = locked_temp_file(dest_dir, source.filename, ".part")
    try:
        actual = _fetch(url, fd, timeout)
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
    if source.sha256 is None:
        warnings.warn(
            f"{dest}: trace {source.name} has no pinned sha256; downloaded unverified "
            f"(sha256 {actual}; pin it in bftune.workloads.catalogue.CATALOGUE)",
            UnpinnedChecksumWarning,
            stacklevel=2,
        )
    log.info("downloaded %s to %s (sha256 %s)", url, dest, actual)
    return dest


def _fetch(url: str, fd: int, timeout: float) -> str:
    """Stream ``url`` into the open file ``fd`` (left open: it holds the lock); return the sha256."""
    digest = hashlib.sha256()
    with os.fdopen(fd, "wb", closefd=False) as out:
        try:
            request = urllib.request.Request(url, headers={"User-Agent": "bftune-workload-download"})
            with urllib.request.urlopen(request, timeout=timeout) as response:
                for chunk in iter(lambda: response.read(_CHUNK), b""):
                    digest.update(chunk)
                    out.write(chunk)
        except urllib.error.HTTPError as exc:
            raise DownloadError(f"{url}: HTTP {exc.code} {exc.reason}") from exc
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise DownloadError(f"{url}: download failed: {reason}") from exc
        out.flush()
        os.fsync(out.fileno())
    return digest.hexdigest()


def _check_scheme(url: str) -> None:
    scheme = urllib.parse.urlsplit(url).scheme
    if scheme not in ("http", "https", "file"):
        raise DownloadError(f"{url}: unsupported URL scheme {scheme!r} (http, https or file)")
