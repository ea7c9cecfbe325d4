"""What a recommendation is worth on the weeks to come: an interval for a later period, and a check on one.

The testing half's interval is the noise of resampled weeks; an admin decides on what the coming weeks will
bring, which differ from the past ones (the workload drifts, busy and quiet months alternate).  So tune keeps
the last part of the log out of its search (``--holdout``, the last 25 % of the submission span by
default) and, once a candidate is chosen:

- **Later-period interval**: the candidate and EASY-FCFS are simulated on the searched part *as it
  happened* (one continuous schedule each), and each real week's jobs summed (waits, bounded slowdowns,
  processors, the largest wait).  A period as long as the held-out one is drawn many times as consecutive
  blocks of :data:`BLOCK_WEEKS` real weeks (a circular block bootstrap: busy and quiet stretches stay
  together), and its gain computed from the drawn weeks' sums.  The central :data:`LEVEL` of those gains
  is the interval stated for a later period of that length.
- **Validation**: both are simulated on the held-out period as it happened (from an empty machine) and
  the realized gain reported beside the interval.  A recommendation whose later-period interval includes
  zero, or whose held-out gain is not positive, is not made ("keep your current setting").

How often the later-period interval holds the realized gain of a later period is measured by
``benchmarks/tune_coverage.py`` on the archive traces (docs/guides/tune.md#validation).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from bftune.experiments.campaign.workloads import base_trace, held_out, searched_part, source_key
from bftune.experiments.runs.local import run_local
from bftune.experiments.runs.metrics import bounded_slowdowns, merged_runs
from bftune.experiments.runs.outjobs import runs_columns
from bftune.experiments.tune.candidates import Candidate
from bftune.schedulers.config import SchedulerConfig
from bftune.workloads.model import WEEK, Trace

#: Consecutive real weeks drawn together (a month: a busy stretch is not cut into unrelated weeks).
BLOCK_WEEKS = 4
#: The level of the later-period interval (its central share of the drawn gains).
LEVEL = 0.90
#: Later periods (weeks) an interval is also stated for: a month, a quarter, half a year.
PERIODS_WEEKS = (4, 13, 26)
#: Periods drawn for the interval.
DRAWS = 4_000


def whole_log(race) -> Trace:
    """The log tune read, validation period included."""
    from bftune.experiments.tune.weeks import spec_of

    spec = spec_of(race.settings.source, "train", 1, race.settings.seed)
    return base_trace(*source_key(dataclasses.replace(spec, holdout=0.0, run_id="x")))


def validate(race, c: Candidate) -> dict | None:
    """The later-period interval and the held-out gain of ``c`` (module docstring); None without a holdout."""
    s = race.settings
    if not s.source.holdout:
        return None
    full = whole_log(race)
    search, held = searched_part(full, s.source.holdout), held_out(full, s.source.holdout)
    base = SchedulerConfig.from_options(race.baselines[0].options)
    config = c.config()
    first = min(j.submit for j in search.jobs)
    weeks = int((max(j.submit for j in search.jobs) - first) // WEEK) + 1
    stats_c = week_sums(search, config, s.tau, first, weeks)
    stats_b = week_sums(search, base, s.tau, first, weeks)
    span = max(j.submit for j in held.jobs) - min(j.submit for j in held.jobs)
    held_weeks = max(1, round(span / WEEK))
    gains = block_gains(stats_c, stats_b, s.objective, held_weeks, _seed(s.seed))
    low, high = (float(np.quantile(gains, (1 - LEVEL) / 2)), float(np.quantile(gains, (1 + LEVEL) / 2))) \
        if len(gains) else (math.nan, math.nan)
    realized = period_gain(held, config, base, s.tau, s.objective)
    by_length = {}
    for length in sorted({*PERIODS_WEEKS, held_weeks}):
        drawn = block_gains(stats_c, stats_b, s.objective, length, _seed(s.seed))
        if len(drawn):
            by_length[str(length)] = [float(np.quantile(drawn, (1 - LEVEL) / 2)),
                                      float(np.quantile(drawn, (1 + LEVEL) / 2))]
    return {"candidate": c.label, "holdout": s.source.holdout, "intervals_by_weeks": by_length, "held_out_weeks": held_weeks, "held_out_jobs": len(held.jobs),
            "searched_weeks": weeks, "block_weeks": min(BLOCK_WEEKS, weeks), "level": LEVEL,
            "later_period_interval": [low, high], "held_out_gain": realized,
            "inside": bool(low <= realized <= high) if not math.isnan(realized) else None,
            "meaning": f"the central {LEVEL:.0%} of the gains of {DRAWS:,} periods of {held_weeks} week(s) drawn as "
                       f"blocks of {min(BLOCK_WEEKS, weeks)} consecutive real weeks of the searched part (each "
                       "simulated as it happened): what a later period of that length may bring if the coming "
                       "weeks are like the past ones; held_out_gain is the gain on the log's last "
                       f"{s.source.holdout:.0%} as it happened, never seen by the search"}


def _seed(seed: int) -> int:
    return (seed * 7919 + 17) % (2**32)


def job_values(trace: Trace, config: SchedulerConfig, tau: float) -> dict[int, tuple[float, float, int]]:
    """Each job's (wait, bounded slowdown, processors) when ``trace`` is simulated as it happened."""
    _, result = run_local(trace, config, tau=tau)
    jobs = merged_runs(runs_columns(result.runs))
    bsld = bounded_slowdowns(jobs, tau)
    return {int(name): (wait, b, procs) for name, wait, b, procs in zip(jobs["job"], jobs["wait"], bsld, jobs["procs"])}


#: Per-week sums kept for each objective: sum of waits, of bounded slowdowns, of bsld x procs, of procs,
#: the count and the largest wait.
_COLUMNS = ("wait", "bsld", "bsld_procs", "procs", "jobs", "max_wait")


def week_sums(trace: Trace, config: SchedulerConfig, tau: float, first: float, weeks: int) -> np.ndarray:
    """The sums of :data:`_COLUMNS` for the jobs submitted in each real week, shape (weeks, 6)."""
    values = job_values(trace, config, tau)
    out = np.zeros((weeks, len(_COLUMNS)))
    for job in trace.jobs:
        if job.id not in values:
            continue
        wait, b, procs = values[job.id]
        w = min(int((job.submit - first) // WEEK), weeks - 1)
        out[w, :5] += (wait, b, b * procs, procs, 1)
        out[w, 5] = max(out[w, 5], wait)
    return out


def objective_of(sums: np.ndarray, objective: str) -> np.ndarray:
    """The objective of sets of weeks from their summed columns (last axis: :data:`_COLUMNS`)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        if objective == "avg_wait":
            return sums[..., 0] / sums[..., 4]
        if objective == "avg_bsld":
            return sums[..., 1] / sums[..., 4]
        if objective == "mwbs":
            return sums[..., 2] / sums[..., 3]
        return sums[..., 5]


def block_gains(c: np.ndarray, b: np.ndarray, objective: str, length: int, seed: int) -> np.ndarray:
    """Gains of :data:`DRAWS` periods of ``length`` weeks drawn as circular blocks of consecutive weeks."""
    n = len(c)
    block = min(BLOCK_WEEKS, n)
    blocks = math.ceil(length / block)
    rng = np.random.default_rng(seed)
    starts = rng.integers(0, n, size=(DRAWS, blocks))
    index = ((starts[:, :, None] + np.arange(block)) % n).reshape(DRAWS, -1)[:, :length]
    if objective == "max_wait":
        cs, bs = c[index].max(axis=1), b[index].max(axis=1)
    else:
        cs, bs = c[index].sum(axis=1), b[index].sum(axis=1)
    oc, ob = objective_of(cs, objective), objective_of(bs, objective)
    with np.errstate(invalid="ignore", divide="ignore"):
        gains = 1.0 - oc / ob
    return gains[np.isfinite(gains)]


def period_gain(trace: Trace, config: SchedulerConfig, base: SchedulerConfig, tau: float, objective: str) -> float:
    """The gain over the whole of ``trace`` simulated as it happened (from an empty machine)."""
    first = min(j.submit for j in trace.jobs)
    c = week_sums(trace, config, tau, first, 1)[0]  # one "week": the whole period
    b = week_sums(trace, base, tau, first, 1)[0]
    oc, ob = objective_of(c, objective), objective_of(b, objective)
    return float(1.0 - oc / ob) if ob > 0 else math.nan
