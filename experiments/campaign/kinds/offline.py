"""``kind = "offline"``: offline tuning of EASY-Pr-Pb on resampled weeks (docs/semantics/workloads.md#resampling).

Every pair (Pr, Pb) of the policies (7 x 7 = 49 by default) under every
threshold (none, 10h, 20h, 40h, 80h) on resampled weeks of a training half
and a testing half of the trace (split at the temporal midpoint).  *How the
weeks are made* (the choice the issue leaves open): each half is resampled
**once** into a trace of ``weeks`` weeks (250 by default) with a seed derived
from the campaign seed and the half's name; that trace is cut into its weeks
(:func:`~bftune.experiments.campaign.workloads.weekly_jobs`) and **every week
is simulated separately, from an empty machine**, until its jobs all finish.
Metrics (AvgWait, MaxWait, AVGbsld) are per week.  One run = one
(Pr, Pb, Theta, half) over all weeks of the half.  A resampled week with no
job has no metrics (NaN; skipped by the statistics).  The baseline is
EASY-FCFS-FCFS without threshold (a threshold cannot change FCFS order, so
it equals FCFS-FCFS under every threshold); the report divides every week's
AvgWait/MaxWait by the baseline's of the same week.

Section ``[offline]`` (every key optional)::

    policies = ["FCFS", "LCFS", "SPF", "LPF", "SQF", "LQF", "LEXP"]
    thresholds = ["none", "10h", "20h", "40h", "80h"]
    weeks = 250
    splits = ["train", "test"]
    reservation = "count"
    baseline = ["FCFS", "FCFS"]  # [Pr, Pb], no threshold

Tables: ``weeks.csv`` (one row per run and week).
"""

from __future__ import annotations

import math

from bftune.experiments.campaign.kinds.kind import CampaignKind, Expansion, TableSpec, resampled_columns
from bftune.experiments.campaign.limits import MAX_WEEKS, WEEKS_WHY, check_run_count
from bftune.experiments.campaign.section import Section
from bftune.experiments.campaign.specs import RunSpec, derive_seed
from bftune.experiments.campaign.workloads import weekly_jobs
from bftune.experiments.runs.metrics import period_metrics
from bftune.experiments.campaign.report import offline as report
from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.drivers.local.simulator import simulate
from bftune.schedulers.options import OPTIONS

POLICIES = ("FCFS", "LCFS", "SPF", "LPF", "SQF", "LQF", "LEXP")
THRESHOLDS = ("none", "10h", "20h", "40h", "80h")
SPLITS = ("train", "test")
KEYS = ("policies", "thresholds", "weeks", "splits", "reservation", "baseline")
LABELS = ("split", "primary", "backfill", "threshold", "config", "baseline")


def expand(t: Section, workload: dict, seed: int, tau: float) -> Expansion:
    """Every (Pr, Pb, Theta) of the config on each half; the baseline added if not among them."""
    policies = t.option_list("policies", list(POLICIES), "policy")
    thresholds = t.durations("thresholds", list(THRESHOLDS), "threshold")
    weeks = t.integer("weeks", 250, minimum=1, maximum=MAX_WEEKS, why=WEEKS_WHY)
    splits = t.strings("splits", list(SPLITS), choices=SPLITS)
    reservation = t.option("reservation", OPTIONS["reservation"].default)
    baseline = t.get("baseline", ["FCFS", "FCFS"])
    if not isinstance(baseline, list) or len(baseline) != 2:
        raise t.error("baseline", f"expected [primary, backfill], got {baseline!r}")
    baseline = [t.parse("baseline", p, "policy") for p in baseline]
    base_listed = baseline[0] in policies and baseline[1] in policies and "inf" in thresholds
    if why := check_run_count(len(splits) * (len(thresholds) * len(policies) ** 2 + (not base_listed))):
        raise t.error("policies", f"{len(splits)} halves x {len(thresholds)} thresholds x {len(policies)}^2 "
                                  f"policy pairs: {why}")
    configs = [(pr, pb, th) for th in thresholds for pr in policies for pb in policies]
    base = (baseline[0], baseline[1], "inf")
    if base not in configs:
        configs.append(base)
    specs = []
    for split in splits:
        half_seed = derive_seed(seed, "offline", split)
        for pr, pb, th in configs:
            options = t.scheduler("policies", {"policy": pr, "backfill_policy": pb, "threshold": th,
                                               "reservation": reservation})
            th_label = "none" if th == "inf" else th
            labels = {"split": split, "primary": pr, "backfill": pb, "threshold": th_label,
                      "config": f"EASY-{pr}-{pb} {th_label}", "baseline": (pr, pb, th) == base}
            specs.append(RunSpec(kind="offline", trace=workload["trace"], split=split, weeks=weeks,
                                 resample_seed=half_seed, options=options, tau=tau, labels=labels,
                                 trace_path=workload["trace_path"], procs=workload["procs"],
                                 walltime_from_runtime=workload["walltime_from_runtime"],
                                 lenient=workload["lenient"], cleaning=workload["cleaning"]))
    settings = {"policies": policies, "thresholds": ["none" if x == "inf" else x for x in thresholds],
                "weeks": weeks, "splits": splits, "reservation": reservation,
                "baseline": f"EASY-{baseline[0]}-{baseline[1]} none",
                "half_seeds": {s: derive_seed(seed, "offline", s) for s in splits}}
    return Expansion(settings, specs, {k: v for k, v in workload.items() if k != "trace_path"})


def run(spec: RunSpec) -> dict:
    """Every week of the half, each simulated alone from an empty machine."""
    config = SchedulerConfig.from_options(spec.options)
    m, weeks = weekly_jobs(spec)
    rows = []
    for w, jobs in enumerate(weeks):
        if jobs:
            result = simulate(jobs, m, config.build(m))
            rows.append({"week": w, **period_metrics(result.runs, spec.tau)})
        else:
            rows.append({"week": w, **period_metrics([], spec.tau)})
    filled = [r for r in rows if r["jobs"]]
    summary = {
        "algorithm": config.describe(),
        "jobs": sum(r["jobs"] for r in rows),
        "weeks_with_jobs": len(filled),
        "mean_avg_wait": math.fsum(r["avg_wait"] for r in filled) / len(filled) if filled else math.nan,
        "mean_max_wait": math.fsum(r["max_wait"] for r in filled) / len(filled) if filled else math.nan,
        "mean_avg_bsld": math.fsum(r["avg_bsld"] for r in filled) / len(filled) if filled else math.nan,
        "total_wait": math.fsum(r["total_wait"] for r in rows),
    }
    return {"summary": summary, "weeks": rows}


KIND = CampaignKind(
    name="offline", help="offline EASY-Pr-Pb tuning on resampled weeks", keys=KEYS, expand=expand, run=run,
    labels=LABELS, run_columns=resampled_columns,
    tables=(TableSpec("weeks", "weeks", LABELS,
                      ("run_id", *LABELS, "week", "jobs", "avg_wait", "max_wait", "avg_bsld", "total_wait")),),
    report=report.write, report_files=report.FILES)
