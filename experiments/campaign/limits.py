"""Size limits of a campaign config, so that an absurd value is refused with one line, not a MemoryError.

Each limit is far beyond the published studies (250 weeks per half offline,
104 weeks x 60 resamples online, 80 runs of whole traces) and below what
stops fitting in memory: a resampled trace holds about ``weeks`` x (jobs per
week of the source) jobs, about 3,300 a week for the densest archive trace
(CEA-Curie), at about 2 KB per job while it is simulated.
"""

from __future__ import annotations

import os

from bftune.workloads.limits import MAX_PROCS, MAX_SEED  # noqa: F401 - re-exported: one definition for every entry point

#: Weeks of one resampled trace (or half).
MAX_WEEKS = 1_000
WEEKS_WHY = "about 19 years; a few hundred weeks already make a trace of several years"
#: Resampled traces of an online campaign.
MAX_RESAMPLES = 10_000
RESAMPLES_WHY = "tens of resampled traces already bound the noise of a mean"
#: Runs of one campaign (campaign.json lists them all; one file per run).
MAX_RUNS = 100_000


def check_run_count(count: int) -> str | None:
    """Why a plan of ``count`` runs is refused, or None.

    Every kind counts its runs from the sizes of its lists *before* it builds
    them: a plan of millions of runs once took gigabytes and minutes before
    the refusal (each run is about a kilobyte while the plan is made).
    """
    if count > MAX_RUNS:
        return f"{count:,} runs: at most {MAX_RUNS:,} in one campaign (split it into several)"
    return None


#: ``synthetic:N:M``: ten times the largest archive trace (CEA-Curie: 290,124 jobs); machines up to
#: ``bftune.workloads.limits.MAX_PROCS`` (ANL Intrepid, 163,840 cores, is the largest archive machine).
MAX_SYNTHETIC_JOBS = 3_000_000
PROCS_WHY = "six times the largest archive machine"


def default_workers() -> int:
    """Local worker processes by default: the cores, at most 2 (the project machine's)."""
    return max(1, min(2, os.cpu_count() or 1))


def max_workers() -> int:
    """More local processes than this only thrash: 4 per core, at least 8."""
    return max(8, 4 * (os.cpu_count() or 1))
