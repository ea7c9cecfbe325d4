"""What a recommendation is worth on the weeks to come: an interval for a later period, and a check on one.

The testing half's interval is the noise of resampled weeks; an admin decides on what the coming weeks will
bring, which differ from the past ones (the workload drifts, busy and quiet months alternate).  So tune keeps
the last part of the log out of its search (``--holdout``, the last 25 % of the submission span by
default) and, once a candidate is chosen:

- **Validation**: the candidate and the baseline are simulated on the held-out period as it happened (from
  an empty machine) and the realized gain reported.  A recommendation whose held-out gain is not positive
  is not made ("keep your current setting").
- **Later-period interval**: both are simulated on the whole log *as it happened* (one continuous schedule
  each) and each real week's jobs summed (waits, bounded slowdowns, processors, the largest wait).  The
  log's gain is the estimate.  How much a period of L weeks may differ from it, were the coming weeks like
  the past ones, is drawn by a circular block bootstrap of :data:`BLOCK_WEEKS` real weeks (busy and quiet
  stretches stay together) as a *prediction*: the gain of L drawn weeks minus the gain of a whole drawn log,
  so that the uncertainty of the log's own gain counts too (:func:`bootstrap_offsets`).  The coming weeks
  are not like the past ones: on the archive traces the gain of the months after a cut moved further than
  that, so the offsets are widened by the *drift factor* of L measured there (``drift.json``, written by
  ``benchmarks/later_drift.py``, which states the coverage it reached leave-one-trace-out).  The result is
  the interval stated for a later period of L weeks; the plain (unwidened) one is stated beside it as what
  weeks like the past ones would bring.  A recommendation whose later-period interval includes zero is not
  made.

How often the later-period interval holds the realized gain of a later period is measured by
``benchmarks/later_drift.py`` (every cut of the archive traces) and ``benchmarks/tune_coverage.py``
(tune itself on the first 60 % of each trace) (docs/guides/tune.md#validation).
"""

from __future__ import annotations

import dataclasses
import json
import math
from functools import cache
from pathlib import Path

import numpy as np

from bftune.experiments.campaign.workloads import base_trace, held_out, source_key
from bftune.experiments.runs.local import run_local
from bftune.experiments.runs.metrics import bounded_slowdowns, merged_runs
from bftune.experiments.runs.outjobs import runs_columns
from bftune.experiments.tune.candidates import Candidate
from bftune.schedulers.config import SchedulerConfig
from bftune.workloads.model import WEEK, Trace

#: Consecutive real weeks drawn together (a month: a busy stretch is not cut into unrelated weeks).
BLOCK_WEEKS = 4
#: The level of the later-period interval.
LEVEL = 0.90
#: Later periods (weeks) an interval is also stated for: a month, a quarter, half a year, a year.
PERIODS_WEEKS = (4, 13, 26, 52)
#: Periods drawn for the interval.
DRAWS = 4_000
#: The drift factors measured on the archive traces (data, not code: ``benchmarks/later_drift.py --write``).
DRIFT_FILE = Path(__file__).with_name("drift.json")


@cache
def drift() -> dict:
    """The measured drift factors (``drift.json``)."""
    return json.loads(DRIFT_FILE.read_text())


def drift_factor(weeks: int, objective: str) -> float:
    """The drift factor of ``objective`` for a later period of ``weeks`` weeks: the measured ones,
    interpolated in the logarithm of the length between the lengths measured, the nearest one outside them.

    Each objective has its own, measured alike: on the archive traces the gains of the four objectives moved
    from period to period by different amounts (52 weeks: 2.64 for AvgWait, 1.81 for AVGbsld), so one factor
    for all would overstate some intervals and understate others."""
    record = drift()
    lengths = np.log(np.array(record["horizons_weeks"], dtype=float))
    factors = np.array(record["objectives"][objective]["factors"], dtype=float)
    return float(np.interp(math.log(max(weeks, 1)), lengths, factors))


def whole_log(race) -> Trace:
    """The log tune read, validation period included."""
    from bftune.experiments.tune.weeks import spec_of

    spec = spec_of(race.settings.source, "train", 1, race.settings.seed)
    return base_trace(*source_key(dataclasses.replace(spec, holdout=0.0, run_id="x")))


def validate(race, c: Candidate) -> dict | None:
    """The later-period intervals and the held-out gain of ``c`` (module docstring); None without a holdout."""
    s = race.settings
    if not s.source.holdout:
        return None
    full = whole_log(race)
    held = held_out(full, s.source.holdout)
    base = SchedulerConfig.from_options(race.baselines[0].options)
    config = c.config()
    first = min(j.submit for j in full.jobs)
    weeks = int((max(j.submit for j in full.jobs) - first) // WEEK) + 1
    sums_c = week_sums(full, config, s.tau, first, weeks)
    sums_b = week_sums(full, base, s.tau, first, weeks)
    estimate = float(period_objective_gain(period_total(sums_c), period_total(sums_b), s.objective))
    span = max(j.submit for j in held.jobs) - min(j.submit for j in held.jobs)
    held_weeks = max(1, round(span / WEEK))
    later_weeks = s.later_weeks or held_weeks
    seed = _seed(s.seed)
    by_length, alike = {}, {}
    for length in sorted({*PERIODS_WEEKS, held_weeks, later_weeks}):
        by_length[str(length)], alike[str(length)] = later_interval(sums_c, sums_b, s.objective, length, seed)
    low, high = by_length[str(later_weeks)]
    # The check on the held-out part judges an interval stated without it: from the whole weeks before it only
    # (their jobs were simulated with the later ones queued behind them, as the log ran).
    searched = min(int((min(j.submit for j in held.jobs) - first) // WEEK), weeks)
    held_low, held_high = (later_interval(sums_c[:searched], sums_b[:searched], s.objective, held_weeks, seed)[0]
                           if searched else (math.nan, math.nan))
    realized = period_gain(held, config, base, s.tau, s.objective)
    return {"candidate": c.label, "holdout": s.source.holdout, "log_weeks": weeks, "log_gain": estimate,
            "intervals_by_weeks": by_length, "like_the_past_by_weeks": alike,
            "drift_factors": {key: drift_factor(int(key), s.objective) for key in by_length},
            "held_out_weeks": held_weeks, "held_out_jobs": len(held.jobs), "later_weeks": later_weeks,
            "block_weeks": min(BLOCK_WEEKS, weeks), "level": LEVEL, "searched_weeks": searched,
            "later_period_interval": [low, high], "held_out_interval": [held_low, held_high],
            "held_out_gain": realized,
            "inside": (bool(held_low <= realized <= held_high)
                       if not (math.isnan(realized) or math.isnan(held_low)) else None),
            "meaning": f"later_period_interval: the {s.objective} gain a later period of {later_weeks} week(s) may "
                       f"bring, at {LEVEL:.0%}: the log's gain plus the spread of {DRAWS:,} periods drawn as "
                       f"blocks of {min(BLOCK_WEEKS, weeks)} consecutive real weeks of the whole log (each "
                       "simulated as it happened) minus the drawn logs' gains, widened by the drift factor "
                       f"measured on the archive traces for {s.objective} (benchmarks/later_drift.py, drift.json); "
                       "like_the_past_by_weeks: the same without "
                       "the widening, if the coming weeks are like the past ones; held_out_gain: the gain on "
                       f"the log's last {s.source.holdout:.0%} as it happened, never seen by the search, and "
                       "inside: whether held_out_interval holds it - the interval for the held-out length "
                       f"stated from the {searched} whole week(s) before the held-out part only, as the log would "
                       "have stated it before those weeks came"}


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


def later_interval(c: np.ndarray, b: np.ndarray, objective: str, length: int,
                   seed: int) -> tuple[list[float], list[float]]:
    """The interval for a later period of ``length`` weeks from the week sums ``c`` and ``b`` (module
    docstring): widened by the drift factor, and plain (if the coming weeks are like these)."""
    estimate = float(period_objective_gain(period_total(c), period_total(b), objective))
    low, high = bootstrap_offsets(c, b, objective, length, seed)
    factor = drift_factor(length, objective)
    return [estimate + factor * low, estimate + factor * high], [estimate + low, estimate + high]


def period_total(sums: np.ndarray, axis: int = 0) -> np.ndarray:
    """The columns of a period from those of its weeks (along ``axis``): sums, but the largest wait's maximum."""
    total = sums.sum(axis=axis)
    total[..., 5] = sums[..., 5].max(axis=axis)
    return total


def draw_weeks(n: int, length: int, draws: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of ``draws`` periods of ``length`` weeks among ``n``, as circular blocks of consecutive weeks."""
    block = min(BLOCK_WEEKS, n)
    starts = rng.integers(0, n, size=(draws, math.ceil(length / block)))
    return ((starts[:, :, None] + np.arange(block)) % n).reshape(draws, -1)[:, :length]


def drawn_gains(c: np.ndarray, b: np.ndarray, objective: str, index: np.ndarray) -> np.ndarray:
    """The gain of each drawn period (rows of ``index``) from the week sums ``c`` (candidate), ``b`` (baseline)."""
    return period_objective_gain(period_total(c[index], axis=1), period_total(b[index], axis=1), objective)


def bootstrap_offsets(c: np.ndarray, b: np.ndarray, objective: str, length: int, seed: int) -> tuple[float, float]:
    """How far the gain of a later period of ``length`` weeks may lie from the log's gain, at :data:`LEVEL`,
    were the coming weeks like the log's (module docstring): the central quantiles of a drawn period's gain
    minus a drawn log's gain (both drawn as blocks of real weeks).  The log's gain is itself one draw of the
    weeks: leaving that out would state an interval too narrow for a short log."""
    rng = np.random.default_rng(seed)
    later = drawn_gains(c, b, objective, draw_weeks(len(c), length, DRAWS, rng))
    logs = drawn_gains(c, b, objective, draw_weeks(len(c), len(c), DRAWS, rng))
    moved = later - logs
    moved = moved[np.isfinite(moved)]
    if not len(moved):
        return math.nan, math.nan
    low, high = np.quantile(moved, ((1 - LEVEL) / 2, (1 + LEVEL) / 2))
    return float(low), float(high)


def period_objective_gain(c: np.ndarray, b: np.ndarray, objective: str) -> np.ndarray:
    """The gain of a period (or of periods, along the leading axes) from its summed columns."""
    oc, ob = objective_of(c, objective), objective_of(b, objective)
    with np.errstate(invalid="ignore", divide="ignore"):
        return 1.0 - oc / ob


def period_gain(trace: Trace, config: SchedulerConfig, base: SchedulerConfig, tau: float, objective: str) -> float:
    """The gain over the whole of ``trace`` simulated as it happened (from an empty machine)."""
    first = min(j.submit for j in trace.jobs)
    c = week_sums(trace, config, tau, first, 1)[0]  # one "week": the whole period
    b = week_sums(trace, base, tau, first, 1)[0]
    gain = float(period_objective_gain(c, b, objective))
    return gain if math.isfinite(gain) else math.nan
