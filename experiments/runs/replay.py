"""How far the simulator reproduces a machine: the log's waits beside the waits of the same jobs simulated.

A recommendation is a gain between two simulations; it says something about a site only if the simulator,
run with the policy the site ran, waits about as the machine did.  A log records each job's wait (SWF
field 3; ``Start - Submit`` of a Slurm dump, :attr:`~bftune.workloads.model.JobRecord.wait`), so
``bftune replay`` simulates the log under the site's baseline (EASY-FCFS unless told otherwise: a Slurm
site gives its slurm.conf, ``--slurm-conf``) and sets the two side by side (docs/semantics/replay.md): AvgWait, median, 90th percentile and MaxWait, per week,
the per-job rank correlation, utilisation, and the share of jobs within 10 minutes and within a factor 2
of their logged wait, with a verdict line whose thresholds the docs explain.

Only jobs with a logged wait are compared, and only the jobs the cleaning kept are simulated (the report
says how many records the cleaning dropped: a machine that also ran them was busier than the simulated
one).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from bftune.experiments.runs.local import run_local
from bftune.experiments.runs.metrics import merged_runs
from bftune.experiments.runs.outjobs import runs_columns
from bftune.schedulers.config import SchedulerConfig
from bftune.workloads.cleaning import dropped_jobs
from bftune.workloads.model import WEEK, Trace

#: A simulated wait "within 10 minutes" of the logged one: |simulated - logged| <= this.
NEAR_S = 600.0
#: "Within a factor 2": both waits floored at a minute (a job started at once waits 0 s on one side and
#: a few seconds on the other: no factor describes that), then a ratio in [1/2, 2].
FACTOR = 2.0
FLOOR_S = 60.0
#: The verdict (docs/semantics/replay.md#verdict): (name, AvgWait ratio range, least per-job rank
#: correlation, least weekly AvgWait correlation), first match wins, else "far".
VERDICTS = (("close", (2 / 3, 3 / 2), 0.5, 0.7), ("rough", (1 / 2, 2.0), 0.3, 0.5))
#: Fewer jobs compared than this: no verdict ("unknown"), the correlations of a handful of jobs say nothing.
MIN_JOBS = 200


@dataclass
class Replay:
    """The comparison of one log and its simulation (module docstring); ``weeks`` one row per week."""

    trace: str
    config: str
    jobs: int  # jobs compared (simulated, with a logged wait)
    without_logged_wait: int
    dropped_by_cleaning: int
    logged: dict[str, float]  # avg_wait, median_wait, p90_wait, max_wait, utilization
    simulated: dict[str, float]
    rank_correlation: float  # Spearman's, per job
    weekly_correlation: float  # Pearson's, of the weeks' AvgWait
    within_10_min: float  # shares of the jobs compared
    within_2x: float
    verdict: str
    weeks: list[dict] = field(default_factory=list)

    def as_dict(self) -> dict:
        """A JSON object (a correlation that cannot be computed, NaN, is null)."""
        return _no_nan({"trace": self.trace, "config": self.config, "jobs": self.jobs,
                "without_logged_wait": self.without_logged_wait, "dropped_by_cleaning": self.dropped_by_cleaning,
                "logged": self.logged, "simulated": self.simulated, "rank_correlation": self.rank_correlation,
                "weekly_correlation": self.weekly_correlation, "within_10_min": self.within_10_min,
                "within_2x": self.within_2x, "verdict": self.verdict, "verdict_line": verdict_line(self)})


def _no_nan(value):
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _no_nan(v) for k, v in value.items()}
    return value


def replay(trace: Trace, config: SchedulerConfig, tau: float = 10.0) -> Replay:
    """Simulate ``trace`` under ``config`` (the site's baseline) and compare each job's wait with its log's."""
    _, result = run_local(trace, config, tau=tau)
    jobs = merged_runs(runs_columns(result.runs))
    simulated = {int(name): (wait, end) for name, wait, end in zip(jobs["job"], jobs["wait"], jobs["end"])}
    pairs = []  # (submit, runtime x procs, logged wait, simulated wait, logged end, simulated end)
    for job in trace.jobs:
        if job.wait < 0 or job.id not in simulated:
            continue
        wait, end = simulated[job.id]
        pairs.append((job.submit, job.runtime * job.procs, float(job.wait), wait,
                      job.submit + job.wait + job.runtime, end))
    logged_known = sum(1 for job in trace.jobs if job.wait >= 0)
    if not pairs:
        raise ValueError(f"{trace.name}: no job has a logged wait (SWF field 3, or Start - Submit of a dump): "
                         "there is nothing to compare the simulation with")
    logged = [p[2] for p in pairs]
    sim = [p[3] for p in pairs]
    first = min(p[0] for p in pairs)
    work = math.fsum(p[1] for p in pairs)
    out = Replay(
        trace=trace.name, config=config.describe(), jobs=len(pairs),
        without_logged_wait=len(trace.jobs) - logged_known, dropped_by_cleaning=dropped_jobs(trace),
        logged={**_waits(logged), "utilization": work / (trace.max_procs * (max(p[4] for p in pairs) - first))},
        simulated={**_waits(sim), "utilization": work / (trace.max_procs * (max(p[5] for p in pairs) - first))},
        rank_correlation=_spearman(logged, sim),
        weekly_correlation=math.nan, within_10_min=sum(abs(s - g) <= NEAR_S for g, s in zip(logged, sim)) / len(pairs),
        within_2x=sum(_within_factor(g, s) for g, s in zip(logged, sim)) / len(pairs), verdict="far",
        weeks=_weeks(pairs, first))
    filled = [w for w in out.weeks if w["jobs"]]
    out.weekly_correlation = _pearson([w["logged_avg_wait"] for w in filled], [w["simulated_avg_wait"] for w in filled])
    out.verdict = verdict(out)
    return out


def verdict(r: Replay) -> str:
    """``close``, ``rough`` or ``far`` (:data:`VERDICTS`); ``unknown`` under :data:`MIN_JOBS` jobs."""
    if r.jobs < MIN_JOBS:
        return "unknown"
    ratio = r.simulated["avg_wait"] / r.logged["avg_wait"] if r.logged["avg_wait"] > 0 else math.inf
    for name, (low, high), rank, weekly in VERDICTS:
        if low <= ratio <= high and r.rank_correlation >= rank and not r.weekly_correlation < weekly:
            return name
    return "far"


def verdict_line(r: Replay) -> str:
    """The plain sentence the command and tune's report lead with."""
    ratio = r.simulated["avg_wait"] / r.logged["avg_wait"] if r.logged["avg_wait"] > 0 else math.inf
    if r.verdict == "unknown":
        return (f"too few jobs with a logged wait to judge how far the simulator reproduces this machine "
                f"({r.jobs:,} < {MIN_JOBS}; {r.config})")
    how = {"close": "reproduces this machine closely", "rough": "reproduces this machine roughly",
           "far": "does NOT reproduce this machine"}[r.verdict]
    return (f"the simulator {how}: simulated AvgWait {ratio:.2f} x the logged one, per-job rank correlation "
            f"{r.rank_correlation:.2f}, weekly AvgWait correlation {r.weekly_correlation:.2f}, "
            f"{r.within_2x:.0%} of the jobs within 2x of their logged wait ({r.jobs:,} jobs, {r.config})")


def _waits(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"avg_wait": math.fsum(values) / len(values), "median_wait": _quantile(ordered, 0.5),
            "p90_wait": _quantile(ordered, 0.9), "max_wait": ordered[-1]}


def _quantile(ordered: list[float], q: float) -> float:
    """numpy's default (linear) quantile of sorted values."""
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _within_factor(logged: float, simulated: float) -> bool:
    a, b = max(logged, FLOOR_S), max(simulated, FLOOR_S)
    return max(a, b) / min(a, b) <= FACTOR


def _weeks(pairs: list[tuple], first: float) -> list[dict]:
    by_week: dict[int, list[tuple]] = {}
    for p in pairs:
        by_week.setdefault(int((p[0] - first) // WEEK), []).append(p)
    rows = []
    for week in range(max(by_week) + 1):
        members = by_week.get(week, [])
        n = len(members)
        rows.append({"week": week, "jobs": n,
                     "logged_avg_wait": math.fsum(p[2] for p in members) / n if n else math.nan,
                     "simulated_avg_wait": math.fsum(p[3] for p in members) / n if n else math.nan,
                     "logged_max_wait": max((p[2] for p in members), default=math.nan),
                     "simulated_max_wait": max((p[3] for p in members), default=math.nan)})
    return rows


def _ranks(values: list[float]) -> list[float]:
    """Ranks 1..n, ties given their mean rank (as Spearman's coefficient wants)."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def _spearman(a: list[float], b: list[float]) -> float:
    return _pearson(_ranks(a), _ranks(b))


def _pearson(a: list[float], b: list[float]) -> float:
    """Pearson's correlation; NaN when either side does not vary (or has fewer than two values)."""
    n = len(a)
    if n < 2:
        return math.nan
    ma, mb = math.fsum(a) / n, math.fsum(b) / n
    cov = math.fsum((x - ma) * (y - mb) for x, y in zip(a, b))
    va = math.fsum((x - ma) ** 2 for x in a)
    vb = math.fsum((y - mb) ** 2 for y in b)
    return cov / math.sqrt(va * vb) if va > 0 and vb > 0 else math.nan


def format_replay(r: Replay) -> str:
    """The table ``bftune replay`` prints."""
    def hours(x: float) -> str:
        return f"{x / 3600:10.2f} h"

    lines = [f"replay of {r.trace}: {r.jobs:,} jobs with a logged wait, simulated with {r.config}",
             f"{'':22s}{'logged':>13s}{'simulated':>13s}"]
    for key, label in (("avg_wait", "AvgWait"), ("median_wait", "median wait"), ("p90_wait", "90th percentile"),
                       ("max_wait", "MaxWait")):
        lines.append(f"{label:22s}{hours(r.logged[key])}{hours(r.simulated[key])}")
    lines.append(f"{'utilization':22s}{r.logged['utilization']:13.1%}{r.simulated['utilization']:13.1%}")
    lines += [f"per-job rank correlation (Spearman)  {r.rank_correlation:.3f}",
              f"weekly AvgWait correlation ({sum(1 for w in r.weeks if w['jobs'])} weeks)  {r.weekly_correlation:.3f}",
              f"jobs within 10 min of their logged wait  {r.within_10_min:.1%}",
              f"jobs within 2x of their logged wait      {r.within_2x:.1%}"]
    if r.without_logged_wait or r.dropped_by_cleaning:
        lines.append(f"not compared: {r.without_logged_wait:,} jobs without a logged wait; the cleaning dropped "
                     f"{r.dropped_by_cleaning:,} records the real machine may also have run")
    lines.append(f"verdict: {verdict_line(r)}")
    return "\n".join(lines)
