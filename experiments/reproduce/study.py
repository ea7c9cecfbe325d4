"""What a reproducible study declares: its campaigns per scale, optional extra steps, its report."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from bftune.experiments.campaign.paths import REPO_ROOT

SHARED_WORKLOADS = (REPO_ROOT.parent / "shared" / "workloads").resolve()


@dataclass(frozen=True)
class CampaignPlan:
    """One campaign of a reproduction: its directory name and its config (TOML text)."""

    name: str
    config: str


@dataclass(frozen=True)
class Execution:
    """Where and how a reproduction runs (the command's --workers, --dask, --no-progress), for extra steps."""

    workers: int | None = None
    dask: object = None
    progress: bool = True


@dataclass(frozen=True)
class Study:
    """A published study bftune reproduces.

    ``plan(scale)`` lists the campaigns; ``extra(scale, out, execution)`` runs resumable
    measurements outside campaigns (may be None); ``report(out, scale)``
    returns the markdown report from what is stored under ``out`` (missing
    results are said, never invented).  ``durations`` says how long each
    scale takes on the project machine (2 cores), for the help and the report.
    """

    number: str
    title: str
    seed_file: str
    plan: Callable[[str], list[CampaignPlan]]
    report: Callable[[Path, str], str]
    durations: dict[str, str] = field(default_factory=dict)
    extra: Callable[[str, Path, Execution], list[str]] | None = None


#: The machine sizes the studies simulated where the shared file says otherwise (processors): CEA-Curie's file
#: says MaxProcs 93,312; studies 000 and 001 (same group, same log) list 80,640 cores in their trace tables, and
#: the campaigns use that (jobs wider than it are dropped, and counted).
STUDY_PROCS = {"CEA-Curie": 80640}


def trace(file: str) -> str:
    """The absolute path of a shared archive trace (generated configs name absolute paths)."""
    return str(SHARED_WORKLOADS / file)


def toml_list(values) -> str:
    return "[" + ", ".join(f'"{v}"' for v in values) + "]"
