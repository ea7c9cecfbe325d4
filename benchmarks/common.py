"""What the benchmarks share: the directory of the archive traces (``--data``) and finding a trace in it.

The benchmarks are scripts beside the package, not part of it: they import
``bftune`` (installed, or this checkout with ``uv run``) and this module
from their own folder.  The data directory is ``--data DIR``, else the
environment variable ``BFTUNE_DATA``, else ``../shared/workloads`` beside the
repository (where the traces of the studies are kept in development).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

#: The environment variable naming the data directory (bftune's own setting).
DATA_ENV = "BFTUNE_DATA"
#: The data directory when neither ``--data`` nor ``BFTUNE_DATA`` names one.
DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "workloads"


def data_dir(given: str | os.PathLike[str] | None = None) -> Path:
    """``given`` (``--data``), else ``$BFTUNE_DATA``, else :data:`DEFAULT_DATA`."""
    if given is not None:
        return Path(given)
    env = os.environ.get(DATA_ENV)
    return Path(env) if env else DEFAULT_DATA


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
                        help=f"directory of the archive traces (default: ${DATA_ENV}, else {DEFAULT_DATA})")


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
