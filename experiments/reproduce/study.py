"""What a reproducible study declares: its campaigns per scale, the archive traces it reads, extra steps, its report.

A study names archive traces by their catalogue names (``KTH-SP2``,
:mod:`bftune.workloads.catalogue`), never by a path: its campaign configs say
``trace = "archive:KTH-SP2"`` (:func:`trace`), which the campaign machinery
finds in the data directory (``--data``, ``BFTUNE_DATA``:
:mod:`bftune.workloads.archive`), and its extra steps and report get that
directory as an :class:`~bftune.workloads.archive.Archive`.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from bftune.workloads.archive import Archive, archive_source


@dataclass(frozen=True)
class CampaignPlan:
    """One campaign of a reproduction: its directory name and its config (TOML text)."""

    name: str
    config: str


@dataclass(frozen=True)
class Execution:
    """Where and how a reproduction runs (the command's --workers, --dask, --no-progress, --data), for extra
    steps."""

    archive: Archive
    workers: int | None = None
    dask: object = None
    progress: bool = True


def no_traces(scale: str) -> tuple[str, ...]:
    """A study whose extra steps and report read no archive trace (its campaigns' traces are in their configs)."""
    return ()


@dataclass(frozen=True)
class Study:
    """A published study bftune reproduces.

    ``plan(scale)`` lists the campaigns; ``extra(scale, out, execution)`` runs resumable
    measurements outside campaigns (may be None); ``report(out, scale, archive)``
    returns the markdown report from what is stored under ``out`` (missing
    results are said, never invented; a trace it reads, it asks ``archive``
    for with ``require``).  ``traces(scale)`` names the archive traces the
    extra steps and the report read (catalogue names), which the command
    makes present before anything runs, as it does the traces of the plan's
    configs.  ``durations`` says how long each scale takes on the
    project machine (2 cores), for the help and the report.
    """

    number: str
    title: str
    seed_file: str
    plan: Callable[[str], list[CampaignPlan]]
    report: Callable[[Path, str, Archive], str]
    durations: dict[str, str] = field(default_factory=dict)
    extra: Callable[[str, Path, Execution], list[str]] | None = None
    traces: Callable[[str], tuple[str, ...]] = no_traces


def trace(name: str) -> str:
    """How a generated config names the catalogue's trace ``name`` (``archive:KTH-SP2``): found through the data
    directory when the campaign is read, so the config runs wherever the traces are."""
    return archive_source(name)


def toml_list(values: Iterable[Any]) -> str:
    return "[" + ", ".join(f'"{v}"' for v in values) + "]"


def published(folder: str | Path) -> dict[str, Any]:
    """A study's published figures: ``published.toml`` of its folder (``folder``: the folder, or any file in it,
    such as the study module's ``__file__``)."""
    path = Path(folder)
    if path.is_file():
        path = path.parent
    with open(path / "published.toml", "rb") as fh:
        return tomllib.load(fh)
