"""What the benchmarks share: the directory of the archive traces (``--data``) and finding a trace in it.

The benchmarks are scripts beside the package, not part of it: they import
``bftune`` (installed, or this checkout with ``uv run``) and this module
from their own folder.  The data directory is bftune's one setting
(:mod:`bftune.workloads.archive`): ``--data DIR``, else the environment
variable ``BFTUNE_DATA``, else the user data directory.  In a development
checkout, ``export BFTUNE_DATA=../shared/workloads``.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from bftune.workloads import archive



def data_dir(given: str | os.PathLike[str] | None = None) -> Path:
    """The directory of the archive traces: ``given`` (``--data``), else bftune's setting."""
    return archive.data_dir(given).directory


def user_env(**extra: str) -> dict[str, str]:
    """This environment as users have it, for the timed children: bytecode caches written and read.

    ``PYTHONDONTWRITEBYTECODE`` (set in some development shells) makes every
    fresh process compile the imports it finds no bytecode for; an installed
    bftune has its bytecode.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(extra)
    return env


def add_data_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", metavar="DIR",
                        help=f"directory of the archive traces (default: ${archive.DATA_ENV}, else "
                             f"{archive.default_data_dir()})")


def archive_traces(directory: Path) -> list[Path]:
    """The archive SWF traces of ``directory`` (the Lublin-Feitelson ones left out), smallest file first."""
    return sorted((p for p in directory.glob("*.swf.gz") if "lublin" not in p.name), key=lambda p: p.stat().st_size)


def find_trace(name: str, directory: Path) -> Path:
    """``name`` if it is a file, else the one trace of ``directory`` whose file name starts with it."""
    path = Path(name)
    if path.exists():
        return path
    matches = sorted(directory.glob(f"{name}*.swf*"))
    if len(matches) != 1:
        found = "no" if not matches else f"{len(matches)}"
        raise SystemExit(f"{name}: no such file, and {found} trace names in {directory} start with it "
                         "(give a path, a unique name prefix such as KTH, or --data DIR)")
    return matches[0]
