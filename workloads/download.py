"""Named Parallel Workloads Archive traces and a verified, atomic downloader.

Why a registry: experiments name traces (``kth_sp2``), not URLs, and a trace
that silently changed would silently change every result.  Each entry pins
the sha256 of the ``.swf.gz`` file where we know it (the six traces of
``shared/workloads``, whose checksums its README records); entries with
``sha256=None`` are *not pinned*: the download is accepted, but a
:class:`UnpinnedChecksumWarning` says so and gives the checksum obtained, to
be pinned.

URLs follow the archive's layout,
``https://www.cs.huji.ac.il/labs/parallel/workload/<dir>/<file>``, e.g.
``l_kth_sp2/KTH-SP2-1996-2.1-cln.swf.gz``; ``base_url`` replaces the part
before ``<dir>`` (a mirror, or a local server in tests).

:func:`download` streams to a temporary file next to the destination while
hashing, checks the gzip magic bytes (an HTML error page is not a trace) and
the checksum, and only then renames the file into place, so a partial or
wrong file never carries the trace's name.  A destination that already
exists with the pinned checksum is used as is (no network access).

Please credit the archive and the trace contributors when publishing results
(see ``shared/workloads/README.md``, "Attribution").
"""

from __future__ import annotations

import hashlib
import logging
import os
import urllib.error
import urllib.parse
import urllib.request
import warnings
from dataclasses import dataclass
from pathlib import Path

from bftune.files import clean_leftovers, locked_temp_file
from bftune.workloads.errors import WorkloadError

log = logging.getLogger(__name__)

PWA_BASE_URL = "https://www.cs.huji.ac.il/labs/parallel/workload/"
_GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 16


class DownloadError(WorkloadError):
    """A trace could not be downloaded, or what arrived is not the expected file."""


class UnpinnedChecksumWarning(UserWarning):
    """A trace without a pinned sha256 was downloaded or used without verification."""


@dataclass(frozen=True)
class TraceSource:
    """Where one archive trace lives and what it must hash to."""

    name: str  # registry key, e.g. "kth_sp2"
    directory: str  # the archive's directory, e.g. "l_kth_sp2"
    filename: str  # e.g. "KTH-SP2-1996-2.1-cln.swf.gz"
    sha256: str | None  # of the .gz file; None = not pinned
    max_procs: int | None = None  # header MaxProcs, for information
    jobs: int | None = None  # records in the file, for information
    note: str = ""

    @property
    def stem(self) -> str:
        """File name without ``.swf.gz``: the trace's name in the archive."""
        return self.filename.removesuffix(".gz").removesuffix(".swf")

    def url(self, base_url: str | None = None) -> str:
        """The download URL, under ``base_url`` (default: the archive)."""
        base = (base_url or PWA_BASE_URL).rstrip("/") + "/"
        return f"{base}{self.directory}/{self.filename}"


#: The known traces, by registry key.
REGISTRY: dict[str, TraceSource] = {
    source.name: source
    for source in (
        TraceSource(
            "kth_sp2", "l_kth_sp2", "KTH-SP2-1996-2.1-cln.swf.gz",
            "3e152f201fd2e96808a735bced6ea6eb0bb07fdc447689cafb0750d87b264c0b", 100, 28_476,
        ),
        TraceSource(
            "sdsc_sp2", "l_sdsc_sp2", "SDSC-SP2-1998-4.2-cln.swf.gz",
            "e03fe48be50c4ab04d6bb2285296d9c3399e9c1f27ee79b754ad32a14abd9bac", 128, 59_715,
        ),
        TraceSource(
            "ctc_sp2", "l_ctc_sp2", "CTC-SP2-1996-3.1-cln.swf.gz",
            "9fa28ac16c4386fb81b72a91d8bd8888281df2948a9d912769d387c5ee285bb4", 338, 77_222,
            note="requested processors are -1 throughout: procs come from allocated processors",
        ),
        TraceSource(
            "hpc2n", "l_hpc2n", "HPC2N-2002-2.2-cln.swf.gz",
            "3c534857d6065cfd9cc35aac8d064c9c17172be7acf336de835006f43a626e64", 240, 202_871,
        ),
        TraceSource(
            "sdsc_blue", "l_sdsc_blue", "SDSC-BLUE-2000-4.2-cln.swf.gz",
            "9aab21f3cfa108f3ecefa52391b384d996dcf4216f920186f47a734646b2c658", 1152, 243_306,
        ),
        TraceSource(
            "cea_curie", "l_cea_curie", "CEA-Curie-2011-2.1-cln.swf.gz",
            "2a0fdbd40837590b491bbbac7d4cfe521de1f0b14c0dc39bbf82c4e49ea75bce", 93_312, 312_826,
            note="MaxProcs 93312 is the whole machine (thin + fat + hybrid nodes)",
        ),
        TraceSource("anl_intrepid", "l_anl_int", "ANL-Intrepid-2009-1.swf.gz", None),
        TraceSource("unilu_gaia", "l_unilu_gaia", "UniLu-Gaia-2014-2.swf.gz", None),
        TraceSource("kit_fh2", "l_kit_fh2", "KIT-FH2-2016-1.swf.gz", None),
        TraceSource("metacentrum_2013", "l_metacentrum2", "METACENTRUM-2013-3.swf.gz", None),
    )
}  # fmt: skip


def trace_names() -> list[str]:
    """Registry keys, in registry order."""
    return list(REGISTRY)


def get_source(name: str) -> TraceSource:
    """The registry entry for ``name``: a key (``kth_sp2``, or ``KTH-SP2`` as the
    archive spells it), an archive name (``KTH-SP2-1996-2.1-cln``) or a file name;
    case-insensitive."""
    wanted = name.strip().lower()
    short = wanted.replace("-", "_")
    for source in REGISTRY.values():
        if wanted in (source.name, source.stem.lower(), source.filename.lower()) or short == source.name:
            return source
    raise WorkloadError(f"unknown trace {name!r}; known traces: {', '.join(REGISTRY)}")


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
            f"(sha256 {actual}; pin it in bftune.workloads.download.REGISTRY)",
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
