"""``kind = "online"``: online policy selection on resampled traces (docs/semantics/learning.md#online-selection).

On ``resamples`` (60 by default) resampled traces of ``weeks`` weeks (104 =
two years), run the fixed policies (12 by default, EASY(P, Theta) with no
selector: a plain scheduler, independent of Delta) and the selectors
(random, full, noisy, bandit) for each period Delta (1d, 1w), all with
Theta = 40 h.  The baseline is the fixed EASY(FCFS, 40 h).  One run = one
strategy on one resampled trace.  Selectors are seeded with the resample's
seed (common random numbers across strategies).

Section ``[online]`` (every key optional)::

    resamples = 60
    weeks = 104
    threshold = "40h"
    fixed = ["FCFS", "LCFS", ..., "SAF"]   # the 12 default candidates (docs/semantics/learning.md#online-selection)
    selectors = ["random", "full", "noisy", "bandit"]
    periods = ["1d", "1w"]
    candidates = [... the 12 ...]
    epsilon = 0.1
    noise = 0.2
    decay = 1.0
    reservation = "count"
    baseline = "FCFS"          # EASY(FCFS, threshold); added to the runs if not in `fixed`

Tables: ``periods.csv`` (per run and week of the trace: jobs, summed and
maximum wait) and ``choices.csv`` (the selectors' choice per period).
"""

from __future__ import annotations

import math

import numpy as np

from bftune.experiments.campaign.kinds.kind import (SHARED_REPLAYS, CampaignKind, Expansion, TableSpec,
                                                    resampled_columns)
from bftune.experiments.campaign.limits import MAX_RESAMPLES, MAX_RUNS, MAX_WEEKS, RESAMPLES_WHY, WEEKS_WHY
from bftune.experiments.campaign.section import Section
from bftune.experiments.campaign.specs import RunSpec, derive_seed
from bftune.experiments.campaign.workloads import prepared_trace
from bftune.workloads.model import WEEK
from bftune.experiments.runs.local import run_local
from bftune.experiments.campaign.report import online as report
from bftune.learning.selectors import SELECTOR_KINDS, make_selector
from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.core.durations import format_duration
from bftune.schedulers.core.policies import SELECTION_DEFAULT
from bftune.schedulers.options import OPTIONS, ConfigError

KILLED = "COMPLETED_KILLED"
#: Every registered selector but "fixed" (fixed policies are listed in `fixed`, each a baseline of its own).
SELECTORS = tuple(name for name in SELECTOR_KINDS if name != "fixed")
PERIODS = ("1d", "1w")
KEYS = ("resamples", "weeks", "threshold", "fixed", "selectors", "periods", "candidates", "epsilon",
        "noise", "decay", "reservation", "baseline")
LABELS = ("resample", "strategy", "family", "selector", "period", "baseline")
#: The options each selector takes beyond the common ones.
SELECTOR_KEYS = {"random": ("decay",), "full": ("decay",), "noisy": ("decay", "noise"),
                 "bandit": ("decay", "epsilon")}
#: A user's selector (``selectors = ["mymod:make_selector"]``) is given every setting: it takes what it needs.
USER_SELECTOR_KEYS = ("decay", "epsilon", "noise")


def expand(t: Section, workload: dict, seed: int, tau: float) -> Expansion:
    """The strategies (baseline, fixed policies, selectors x periods) on every resampled trace."""
    resamples = t.integer("resamples", 60, minimum=1, maximum=MAX_RESAMPLES, why=RESAMPLES_WHY)
    weeks = t.integer("weeks", 104, minimum=1, maximum=MAX_WEEKS, why=WEEKS_WHY)
    threshold = format_duration(t.option("threshold", "40h"))
    fixed = t.option_list("fixed", list(SELECTION_DEFAULT), "policy") if t.data.get("fixed", None) != [] else []
    selectors = t.option_list("selectors", list(SELECTORS), "selector") \
        if t.data.get("selectors", None) != [] else []
    if "fixed" in selectors:
        raise t.error("selectors", f"'fixed' is not one of {', '.join(SELECTORS)}: list fixed policies in fixed")
    periods = t.durations("periods", list(PERIODS), "period")
    candidates = t.option("candidates", list(SELECTION_DEFAULT))
    values = {key: t.option(key, OPTIONS[key].default) for key in ("epsilon", "noise", "decay")}
    reservation = t.option("reservation", OPTIONS["reservation"].default)
    baseline = t.option("baseline", "FCFS", name="policy")
    strategies: list[tuple[str, dict, dict]] = []  # (family, options without seed, labels)
    for p in ([baseline] if baseline not in fixed else []) + fixed:
        options = t.scheduler("fixed", {"policy": p, "threshold": threshold, "reservation": reservation})
        strategies.append(("fixed", options, {"strategy": p, "family": "fixed", "selector": "", "period": "",
                                              "baseline": p == baseline}))
    for sel in selectors:
        for period in periods:
            options = {"selector": sel, "period": period, "threshold": threshold, "reservation": reservation,
                       "candidates": list(candidates)}
            options.update({k: values[k] for k in SELECTOR_KEYS.get(sel, USER_SELECTOR_KEYS)})
            t.scheduler("selectors", options)
            strategies.append(("selector", options, {"strategy": f"{sel}/{period}", "family": sel, "selector": sel,
                                                     "period": period, "baseline": False}))
    if resamples * len(strategies) > MAX_RUNS:
        raise t.error("resamples", f"{resamples} resamples x {len(strategies)} strategies = "
                                   f"{resamples * len(strategies):,} runs: at most {MAX_RUNS:,} in one campaign")
    specs = []
    for r in range(resamples):
        rseed = derive_seed(seed, "online", r)
        for family, options, labels in strategies:
            opts = dict(options)
            if family == "selector":
                opts["seed"] = rseed
            specs.append(RunSpec(kind="online", trace=workload["trace"], split=None, weeks=weeks, resample_seed=rseed,
                                 options=opts, tau=tau, labels={"resample": r, **labels},
                                 trace_path=workload["trace_path"], procs=workload["procs"],
                                 walltime_from_runtime=workload["walltime_from_runtime"],
                                 lenient=workload["lenient"], cleaning=workload["cleaning"]))
    settings = {"resamples": resamples, "weeks": weeks, "threshold": threshold, "fixed": fixed,
                "selectors": selectors, "periods": periods, "candidates": candidates, **values,
                "reservation": reservation, "baseline": f"EASY({baseline}, {threshold})",
                "baseline_strategy": baseline, "strategies": [lab["strategy"] for _, _, lab in strategies]}
    return Expansion(settings, specs, {k: v for k, v in workload.items() if k != "trace_path"})


def run(spec: RunSpec, replays: dict[str, float] | None = None) -> dict:
    """One strategy on one resampled trace: summary, per-week waits, the selector's choices.

    ``replays``: the period replays of its group so far (:func:`replay_group`); returned, grown.
    """
    config = SchedulerConfig.from_options(spec.options)
    trace = prepared_trace(spec)
    summary, result = run_local(trace, config, None, tau=spec.tau, replay_memo=replays)
    origin = min(job.submit for job in trace.jobs)
    final = [run for run in result.runs if run.state != KILLED]
    submit = np.array([run.original_submit for run in final], dtype=float)
    wait = np.array([run.start - run.original_submit for run in final], dtype=float)
    week = ((submit - origin) // WEEK).astype(int)
    n_weeks = int(week.max()) + 1 if len(week) else 0
    periods = []
    for w in range(n_weeks):
        sel = wait[week == w]
        periods.append({"week": w, "start": w * WEEK, "jobs": int(len(sel)),
                        "sum_wait": float(math.fsum(sel.tolist())),
                        "max_wait": float(sel.max()) if len(sel) else math.nan})
    choices = [{"period": int(e["period"]), "start": float(e["start"] - origin), "policy": e["policy"]}
               for e in summary.get("periods", [])]
    row = {key: summary.get(key) for key in ("jobs", "avg_wait", "max_wait", "avg_bsld", "mwbs", "utilization",
                                             "makespan")}
    row["total_wait"] = float(math.fsum(wait.tolist()))
    row["algorithm"] = config.describe()
    row["simulated_weeks"] = n_weeks
    out = {"summary": row, "periods": periods, "choices": choices}
    if replays is not None:
        out[SHARED_REPLAYS] = replays
    return out


def replay_group(spec: RunSpec) -> tuple | None:
    """Runs that replay the same periods: full and noisy feedback on one resampled trace and period."""
    try:
        config = SchedulerConfig.from_options(spec.options)
    except ConfigError:
        return None  # the run itself reports it, as a failed run
    if config.selector is None or not make_selector(config.selector, config.candidates, config.policy).needs_simulation:
        return None
    replay = ("period", "threshold", "reservation")
    return (spec.trace, spec.procs, spec.cleaning, spec.walltime_from_runtime, spec.lenient, spec.split, spec.weeks,
            spec.resample_seed) + tuple(repr(spec.options.get(k)) for k in replay)


_SHORT = ("resample", "strategy")
KIND = CampaignKind(
    name="online", help="online policy selection on resampled traces", keys=KEYS, expand=expand, run=run,
    labels=LABELS, run_columns=resampled_columns,
    tables=(TableSpec("periods", "periods", _SHORT,
                      ("run_id", *_SHORT, "week", "start", "jobs", "sum_wait", "max_wait")),
            TableSpec("choices", "choices", _SHORT, ("run_id", *_SHORT, "period", "start", "policy"))),
    report=report.write, report_files=report.FILES, replay_group=replay_group)
