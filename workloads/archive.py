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

Paths are made absolute and normalised but symbolic links are left alone,
as a campaign's run ids treat trace paths (``experiments/campaign/paths.py``):
``archive:KTH-SP2`` with the data directory ``D`` is the same run as the
file ``D/KTH-SP2-1996-2.1-cln.swf.gz`` named directly.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from bftune.workloads.catalogue import get_source
from bftune.workloads.errors import WorkloadError

#: The environment variable of the data directory.
DATA_ENV = "BFTUNE_DATA"
#: How a campaign config names a trace of the catalogue: ``archive:KTH-SP2``.
PREFIX = "archive:"


class MissingTrace(WorkloadError):
    """An archive trace is neither in the data directory nor downloadable now."""


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

    def path(self, name: str) -> Path:
        """Where the catalogue's trace ``name`` is or would be (not checked)."""
        return self.directory / get_source(name).filename

    def require(self, name: str) -> Path:
        """The path of trace ``name``: present, or downloaded now; else :class:`MissingTrace` (one line)."""
        source = get_source(name)
        path = self.directory / source.filename
        if path.is_file():
            return path
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
        what = "not a directory" if path.exists() else "no such directory"
        raise WorkloadError(f"{origin} {value}: {what} (the directory of the archive traces; "
                            f"`bftune download NAME --dest DIR` fills one)")
    return Archive(path, origin)


def archive_source(name: str) -> str:
    """The source text naming the catalogue's trace ``name`` in a campaign config: ``archive:SHORT``."""
    return PREFIX + get_source(name).short
