"""What a ``pv-easy`` run keeps of its runs and jobs beyond the summary (see the kind's docstring).

- :func:`from_requeue`: MBS and MWBS with a killed job's wait counted from its
  last requeue (its final run's own submission), as a simulator that
  resubmits a killed job as a new one would report them;
- :func:`starts`: per way a run was started (PV-EASY's venture step, the
  ``Job.info`` tag :data:`~bftune.schedulers.core.pveasy.VENTURE`; ``none``
  for every other start), how many runs, how many of them were killed and
  what the killed ones cost;
- :func:`job_table`: one row per job (its final run), with the fairness
  monitor's findings, for analyses that compare runs job by job.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

import numpy as np

from bftune.experiments.runs.metrics import KILLED, REJECTED, bounded_slowdown
from bftune.schedulers.core.pveasy import VENTURE
from bftune.schedulers.drivers.local.runs import Run

#: ``starts.csv``'s columns after the run's labels.
START_COLUMNS = ("venture_step", "runs", "killed", "killed_work", "killed_median_job_runtime",
                 "killed_median_ran", "killed_mean_procs", "finished_median_runtime")
#: The per-job table's columns (:mod:`.jobtables`): the final run's start, runtime and own submission
#: (``requeue``, r_j unless the job was killed), its venture step, the kills, and whether (and when first)
#: the fairness monitor saw the job blocked (``blocked_one_pass``: as one pass per instant sees it).
JOB_COLUMNS = ("job", "submit", "procs", "runtime", "start", "requeue", "kills", "venture_step", "blocked",
               "blocked_one_pass", "blocked_at")
UNTAGGED = "none"


@dataclass
class Jobs:
    """A run's final runs by job (first id), and how many times each job was killed."""

    final: dict[str, Run]
    kills: dict[str, int]


def final_runs(runs) -> Jobs:
    final: dict[str, Run] = {}
    kills: dict[str, int] = {}
    for run in runs:
        if run.state == KILLED:
            kills[run.first_id] = kills.get(run.first_id, 0) + 1
        elif run.state != REJECTED:
            final[run.first_id] = run
    return Jobs(final, kills)


def step(run: Run) -> str:
    return (run.info or {}).get(VENTURE) or UNTAGGED


def from_requeue(jobs: Jobs, tau: float) -> dict:
    """``avg_bsld_from_requeue`` and ``mwbs_from_requeue`` (module docstring)."""
    final = list(jobs.final.values())
    if not final:
        return {"avg_bsld_from_requeue": None, "mwbs_from_requeue": None}
    bsld = bounded_slowdown({"end": [r.end for r in final], "submit": [r.subtime for r in final],
                             "runtime": [r.end - r.start for r in final]}, tau)
    procs = np.array([r.procs for r in final], dtype=float)
    return {"avg_bsld_from_requeue": float(bsld.mean()), "mwbs_from_requeue": float((bsld * procs).sum() / procs.sum())}


def _median(values: list[float]) -> float | None:
    return float(statistics.median(values)) if values else None


def starts(runs) -> list[dict]:
    """One row per venture step present (``none`` first), in :data:`START_COLUMNS`."""
    groups: dict[str, list[Run]] = {}
    for run in runs:
        if run.state != REJECTED:
            groups.setdefault(step(run), []).append(run)
    rows = []
    for name in sorted(groups, key=lambda g: (g != UNTAGGED, g)):
        killed = [r for r in groups[name] if r.state == KILLED]
        done = [r for r in groups[name] if r.state != KILLED]
        rows.append({"venture_step": name, "runs": len(groups[name]), "killed": len(killed),
                     "killed_work": math.fsum(r.procs * (r.end - r.start) for r in killed),
                     "killed_median_job_runtime": _median([r.runtime for r in killed]),
                     "killed_median_ran": _median([r.end - r.start for r in killed]),
                     "killed_mean_procs": (math.fsum(r.procs for r in killed) / len(killed)) if killed else None,
                     "finished_median_runtime": _median([r.end - r.start for r in done])})
    return rows


def job_table(jobs: Jobs, fairness_jobs: dict | None) -> list[tuple]:
    """The rows of the per-job table (:data:`JOB_COLUMNS`), by job number."""
    per_job = fairness_jobs or {}
    blocked = set(per_job.get("blocked", ()))
    one_pass = set(per_job.get("blocked_one_pass", ()))
    blocked_at = per_job.get("blocked_at", {})
    rows = []
    for first_id, r in jobs.final.items():
        rows.append((r.seq, r.original_submit, r.procs, r.end - r.start, r.start, r.subtime,
                     jobs.kills.get(first_id, 0), step(r), int(first_id in blocked), int(first_id in one_pass),
                     blocked_at.get(first_id)))
    rows.sort(key=lambda row: row[0])
    return rows
