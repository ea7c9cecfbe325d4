"""Where archive traces are found on disk: the one data-directory setting, and ``archive:NAME`` sources.

One setting says where the catalogue's traces (:mod:`bftune.workloads.catalogue`)
live, so that a campaign or a reproduction names a trace (``archive:KTH-SP2``)
and runs wherever the files are:

1. ``--data DIR`` on the command that needs traces (``bftune reproduce``,
   ``bftune campaign``);
2. else the environment variable ``BFTUNE_DATA``;
3. else the user's data directory, ``$XDG_DATA_HOME/bftune/traces`` (with
   ``XDG_DATA_HOME`` unset: ``~/.local/share/bftune/traces``).

A directory named by 1 or 2 must exist (a typo is an error, not an empty
directory); the default one is created when a download first needs it.

A trace missing from the directory is fetched with the checksum-verified
downloader (:mod:`bftune.workloads.download`) when the network allows;
otherwise :class:`MissingTrace` says, in one line, which file is missing
and the command that gets it.

A trace present in the directory is checked against the sha256 the catalogue
pins for it before its path is handed out: a file saved under a trace's
name is not trusted to be that trace (another trace copied over it, a
recompressed or edited copy would otherwise be simulated, and published,
under the archive's name).  A mismatch is :class:`ChecksumMismatch`, one line
saying how to get the archive's file or how to use the variant on purpose
(name its path instead of ``archive:NAME``: a path is never checked).
Hashing runs at about 1 GB/s (the six pinned traces, 13.8 MB: 11 ms; the
first check also imports the downloader, 20 ms), little beside a run but paid
by every command that names a trace, so the result is kept in a small cache file
(:func:`bftune.support.cachedir.cached_sha256`) keyed by the file's path,
size, mtime, ctime and inode: the second read of an unchanged file hashes
nothing.  The cache is only a cache: unreadable, unwritable or garbled, the
file is simply hashed.

Paths are made absolute and normalised but symbolic links are left alone,
as a campaign's run ids treat trace paths (``experiments/campaign/paths.py``):
``archive:KTH-SP2`` with the data directory ``D`` is the same run as the
file ``D/KTH-SP2-1996-2.1-cln.swf.gz`` named directly.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

from bftune.support.cachedir import cached_sha256
from bftune.workloads.catalogue import TraceSource, get_source
from bftune.workloads.errors import WorkloadError

#: The environment variable of the data directory.
DATA_ENV = "BFTUNE_DATA"
#: How a campaign config names a trace of the catalogue: ``archive:KTH-SP2``.
PREFIX = "archive:"


#: How many leading hex digits of a sha256 the mismatch line shows (enough to tell files apart).
_SHOWN_DIGITS = 12


class MissingTrace(WorkloadError):
    """An archive trace is neither in the data directory nor downloadable now."""


class ChecksumMismatch(WorkloadError):
    """A file under an archive trace's name does not have the trace's pinned sha256: it is not that trace."""


def default_data_dir() -> Path:
    """``$XDG_DATA_HOME/bftune/traces``, or ``~/.local/share/bftune/traces`` when XDG_DATA_HOME is unset."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "bftune" / "traces"


def _absolute(path: str | os.PathLike[str]) -> Path:
    return Path(os.path.normpath(Path(path).expanduser().absolute()))


@dataclass(frozen=True)
class Archive:
    """A data directory of archive traces (:func:`data_dir` picks it)."""

    directory: Path
    #: Who chose the directory, for messages: ``--data``, ``BFTUNE_DATA`` or ``default``.
    origin: str = "default"
    #: Whether present traces are checked against their pinned sha256 (False: for stand-ins in tests only).
    verify: bool = True

    def path(self, name: str) -> Path:
        """Where the catalogue's trace ``name`` is or would be (not checked)."""
        return self.directory / get_source(name).filename

    def require(self, name: str) -> Path:
        """The path of trace ``name``: present with its pinned sha256, or downloaded now.

        :class:`ChecksumMismatch` (one line) when the file present is another one; :class:`MissingTrace` when
        it is absent and cannot be downloaded; :class:`WorkloadError` when something else is in its place.
        """
        source = get_source(name)
        path = self.directory / source.filename
        if path.is_file():
            if self.verify:
                check_checksum(path, source)
            return path
        if path.exists() or path.is_symlink():
            raise WorkloadError(f"trace {source.short}: {path} is {_not_a_file(path)}, not the trace's file; "
                                f"move it away, then `bftune download {source.short} --dest {self.directory}`")
        from bftune.workloads.download import DownloadError, download  # urllib/ssl: only when a trace is missing

        sys.stderr.write(f"bftune: {source.filename} is not in {self.directory}: downloading it from the archive\n")
        try:
            return download(source.short, self.directory)
        except DownloadError as exc:
            raise MissingTrace(f"trace {source.short}: {source.filename} is not in {self.directory} ({self.origin}) "
                               f"and could not be downloaded ({exc}); get it with `bftune download {source.short} "
                               f"--dest {self.directory}`, or name the directory that holds it with --data DIR "
                               f"or {DATA_ENV}") from None

    def resolve(self, source: str) -> str:
        """A trace source with ``archive:NAME`` replaced by the trace's absolute path (made present); others as is."""
        if not source.startswith(PREFIX):
            return source
        return str(self.require(source[len(PREFIX):]))


def data_dir(given: str | os.PathLike[str] | None = None) -> Archive:
    """The data directory: ``given`` (``--data``), else ``BFTUNE_DATA``, else :func:`default_data_dir`.

    A directory named explicitly must exist: :class:`WorkloadError` (one line) otherwise.
    """
    if given is not None:
        origin, value = "--data", str(given)
    elif os.environ.get(DATA_ENV):
        origin, value = DATA_ENV, os.environ[DATA_ENV]
    else:
        return Archive(_absolute(default_data_dir()))
    path = _absolute(value)
    if not path.is_dir():
        raise WorkloadError(f"{origin} {value}: {_not_a_directory(path)} (the directory of the archive traces; "
                            f"`bftune download NAME --dest DIR` fills one)")
    return Archive(path, origin)


def _not_a_directory(path: Path) -> str:
    """What ``path``, which is not a usable directory, is instead: the reason ``stat`` gives, said as it is.

    ``Path.exists()`` is False for a symbolic link loop and for a path it may not look into: "no such
    directory" would send the user looking for a typo that is not there.
    """
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a symbolic link loop (it cannot be resolved to a directory)"
        if exc.errno == errno.ENOENT and path.is_symlink():
            return f"a symbolic link to {os.readlink(path)}, which does not exist"
        if exc.errno == errno.ENOENT:
            return "no such directory"
        if exc.errno == errno.ENOTDIR:
            return "not a directory (a path under a file)"
        return f"cannot be reached ({exc.strerror or exc})"
    return "not a directory"


def _not_a_file(path: Path) -> str:
    """What is at ``path`` instead of a regular file, for one line."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a symbolic link loop"
        if exc.errno == errno.ENOENT:
            return f"a symbolic link to {os.readlink(path)}, which does not exist"
        return f"unreadable ({exc.strerror or exc})"
    return "a directory" if stat.S_ISDIR(mode) else "not a regular file"


# --- checksums ------------------------------------------------------------------------------------------------


def check_checksum(path: Path, source: TraceSource) -> None:
    """Raise :class:`ChecksumMismatch` unless ``path`` has ``source``'s pinned sha256 (unpinned: nothing to check).

    The line names the file, the two checksums' first digits and both ways out: the archive's file
    (``bftune download``, which replaces a wrong one) or the variant on purpose, named by its path.
    """
    if source.sha256 is None:
        return
    found = file_sha256(path)
    if found == source.sha256:
        return
    raise ChecksumMismatch(
        f"archive:{source.short}: {path} is not the archive's {source.short} (sha256 {found[:_SHOWN_DIGITS]}..., "
        f"expected {source.sha256[:_SHOWN_DIGITS]}...: another trace, or a recompressed or edited copy); get the "
        f"archive's file with `bftune download {source.short} --dest {path.parent}` (it replaces this one), or, to "
        f"use this variant on purpose, name it by its path (--trace PATH, or the path in the config) instead of "
        f"archive:{source.short}: a path is never checksum-checked")


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The hex sha256 of ``path``, hashed only when it changed since it was last hashed
    (:func:`~bftune.support.cachedir.cached_sha256`); :class:`WorkloadError` (one line) when it cannot be read."""
    from bftune.workloads.download import sha256_file  # urllib/ssl: only when something must be hashed

    try:
        return cached_sha256(path, sha256_file)
    except OSError as exc:
        raise WorkloadError(f"{os.path.abspath(path)}: cannot read: {exc.strerror or exc}") from None


def archive_source(name: str) -> str:
    """The source text naming the catalogue's trace ``name`` in a campaign config: ``archive:SHORT``."""
    return PREFIX + get_source(name).short
