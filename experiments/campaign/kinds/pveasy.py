"""``kind = "pv-easy"``: EASY, EASY with predictions and PV-EASY (docs/semantics/scheduling.md#pv-easy) on whole traces, fairness measured.

For every trace of ``[pv-easy] traces`` (each on its machine size: ``procs``,
one per trace, the header's by default), with the job set of ``cleaning``
(``"ran"`` by default: every job that ran, see ``bftune.workloads.swf``):

- ``schedulers``, each run once: ``EASY`` (walltimes), ``EASY-Last`` (EASY
  planning with Last Model predictions, the walltime still the kill time)
  and ``PV-EASY`` (with Last Model);
- ``virtual_errors`` x ``virtual_seeds``: the virtual predictor
  p(1 + U(-x, x)) in ``FCFS-EASY`` (EASY planning with it), ``SJF-EASY``
  (the same, backfilling shortest prediction first) and ``PV-EASY``; seeds
  1..``virtual_seeds`` (x = 0 is exact: one run).

``options`` (a table of scheduler options, see ``bftune options``) go to
every run and win over the strategy's own (``{predictor = "exact"}`` makes
PV-EASY plan with the true runtimes; the ``predictor`` column says what each
run used), so that a campaign can vary one choice at a time.  Every run has
the fairness monitor on (``fairness = false`` turns it off) and its priority
is ``policy`` (FCFS by default).

Per run ``runs.csv`` holds the summary's metrics flattened (``fair_*``: the
monitor's, the predictor's ``prediction_error`` and ``under_predicted``),
``avg_bsld_from_requeue`` / ``mwbs_from_requeue`` (a killed job's wait counted
from its last requeue, as a simulator that resubmits it as a new job reports
it), the trace's own figures (``trace_*``: jobs, load = sum(p q) / (m x
submission span), mean parallelism, mean runtime, records read and how many
the cleaning dropped as never started), and the strict-fairness and
reservation-violation counts kept to delays of at least n = 10, 30 and 60
minutes (``unfair_<n>min_*``, ``rv_<n>min_*``: jobs and their mean delay).
``starts.csv`` holds, per run and per way a run was started (PV-EASY's
venture step, ``Job.info``), how many runs, how many of them were killed and
what they cost.  ``job_tables = true`` keeps in each run's record one row per
job (:mod:`.jobtables`: final run's start, kills, blocked or not and when
first...), for analyses that compare runs job by job.

Section ``[pv-easy]`` (every key but traces optional)::

    traces = ["archive:CTC-SP2", "archive:SDSC-BLUE"]
    procs = [430, 1152]
    cleaning = "ran"
    policy = "FCFS"
    schedulers = ["EASY", "EASY-Last", "PV-EASY"]     # [] for none
    virtual_errors = [0, 0.1, 0.2, 0.4, 0.8]          # [] (the default) for no sweep
    virtual_seeds = 10
    virtual_schedulers = ["FCFS-EASY", "SJF-EASY", "PV-EASY"]
    fairness = true
    options = {}                                      # e.g. {overrun_estimate = "expired"}
    job_tables = false

``[workload]`` may only hold ``walltime_from_runtime`` and ``lenient``.
The report (``bftune.experiments.campaign.report.pveasy``) gives the figures per
trace, the fairness checks and the plots.
"""

from __future__ import annotations

import math

from bftune.experiments.campaign.kinds import jobtables
from bftune.experiments.campaign.kinds import pveasy_jobs as jobs
from bftune.experiments.campaign.kinds.kind import CampaignKind, Expansion, TableSpec, whole_trace_columns
from bftune.experiments.campaign.limits import MAX_PROCS, PROCS_WHY, check_run_count
from bftune.experiments.campaign.section import Section
from bftune.experiments.campaign.specs import RunSpec
from bftune.experiments.campaign.workloads import base_trace, source_key, trace_label, trace_path
from bftune.experiments.runs.local import run_local
from bftune.experiments.campaign.report import pveasy as report
from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.drivers.local.simulator import SimResult
from bftune.workloads.model import Trace
from bftune.schedulers.options import OPTIONS
from bftune.workloads.cleaning import CLEANING_NAMES, check_cleaning
from bftune.workloads.swf import dropped_jobs

MAIN = ("EASY", "EASY-Last", "PV-EASY")
VIRTUAL = ("FCFS-EASY", "SJF-EASY", "PV-EASY")
KEYS = ("traces", "procs", "cleaning", "policy", "schedulers", "virtual_errors", "virtual_seeds",
        "virtual_schedulers", "fairness", "options", "job_tables")
#: Keys of ``options`` refused: the section's own keys say them.
SECTION_OPTIONS = ("policy", "fairness")
LABELS = ("trace", "strategy", "predictor", "error", "seed")
UNFAIR_ABLATION = (10, 30, 60)  # minutes: the strict-fairness ablation counts delays of at least that
MAX_VIRTUAL_SEEDS = 1_000

#: Summary keys copied into runs.csv (under the same name).
SUMMARY_KEYS = ("jobs", "avg_bsld", "mwbs", "avg_wait", "max_wait", "utilization", "total_load", "wasted_load",
                "restarted_jobs", "preempted_share", "mean_kills_per_restarted_job", "mean_rtw", "killed_runs",
                "wasted_work", "makespan")
#: The fairness monitor's keys, copied as ``fair_<key>``.
FAIRNESS_KEYS = ("blocked_jobs", "blocked_jobs_one_pass", "backfilled_jobs", "strict_fairness_violations", "unfair_delay_mean",
                 "unfair_delay_max", "unfair_delay_total", "reservation_violations", "reservation_violation_mean",
                 "reservation_violation_max", "reservation_violation_mean_procs", "reservation_violation_si_mean",
                 "reservation_violation_si_max", "reservation_missed", "blocked_mbs", "blocked_mwbs",
                 "blocked_big_jobs", "blocked_big_mbs", "blocked_big_mwbs", "blocked_small_jobs", "blocked_small_mbs",
                 "blocked_small_mwbs")


def main_options(strategy: str, policy: str) -> dict:
    """The scheduler options of a strategy of the main comparison."""
    options = {"policy": policy}
    if strategy == "EASY-Last":
        options["predictor"] = "last"
    elif strategy == "PV-EASY":
        options.update(scheduler="pv-easy", predictor="last")
    return options


def virtual_options(strategy: str, policy: str, error: float, seed: int) -> dict:
    """The scheduler options of a strategy of the virtual-predictor sweep."""
    options = {"policy": policy, "predictor": f"virtual:{error:g}", "seed": seed}
    if strategy == "SJF-EASY":
        options["backfill_policy"] = "SPF"  # SPF reads the planning estimate: shortest prediction first
    elif strategy == "PV-EASY":
        options["scheduler"] = "pv-easy"
    return options


def _options(t: Section, virtual: bool) -> dict:
    """``options``: scheduler options for every run (each checked by the option table here, together per run)."""
    raw = t.get("options", {})
    if not isinstance(raw, dict):
        raise t.error("options", f"expected a table of scheduler options, got {raw!r}")
    for key in raw:
        if key in SECTION_OPTIONS:
            raise t.error("options", f"{key}: give it as the section's own key {key!r}")
        if key == "predictor" and virtual:
            raise t.error("options", "predictor: it would replace the virtual predictor of virtual_errors")
        if key not in OPTIONS:
            raise t.error("options", f"{key}: unknown option; see `bftune options`")
    return {key: t.parse(f"options.{key}", value, key) for key, value in raw.items()}


def _errors(t: Section) -> list[float]:
    values = t.get("virtual_errors", [])
    if not isinstance(values, list):
        raise t.error("virtual_errors", f"expected a list of numbers in [0, 1), got {values!r}")
    out: dict[float, None] = {}  # ordered, and a long list is checked in linear time
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v < 1:
            raise t.error("virtual_errors", f"expected numbers in [0, 1) (maximum relative errors), got {v!r}")
        if float(v) in out:
            raise t.error("virtual_errors", f"{v!r} is listed twice")
        out[float(v)] = None
    return list(out)


def _procs(t: Section, n: int) -> list[int | None]:
    value = t.get("procs", None)
    if value is None:
        return [None] * n
    if not isinstance(value, list) or len(value) != n:
        raise t.error("procs", f"expected one machine size per trace ({n}), got {value!r}")
    for v in value:
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= MAX_PROCS:
            raise t.error("procs", f"expected integers in [1, {MAX_PROCS:,}] ({PROCS_WHY}), got {v!r}")
    return list(value)


def expand(t: Section, workload: dict, seed: int, tau: float) -> Expansion:
    traces = t.strings("traces")
    procs = _procs(t, len(traces))
    sources: list = []
    labels_seen: dict[str, str] = {}
    for trace, m in zip(traces, procs):
        label = trace_label(trace)
        if label in labels_seen:
            raise t.error("traces", f"{trace!r} and {labels_seen[label]!r} have the same name {label!r} in the tables")
        labels_seen[label] = trace
        path = trace_path(t, "traces", trace, m)
        sources.append((trace, path, label, m))
    cleaning = check_cleaning(t.string("cleaning", "ran", choices=CLEANING_NAMES))
    policy = t.option("policy", "FCFS")
    main = t.get("schedulers", list(MAIN))
    main = [] if main == [] else t.strings("schedulers", list(MAIN), choices=MAIN)
    errors = _errors(t)
    n_seeds = t.integer("virtual_seeds", 10, minimum=1, maximum=MAX_VIRTUAL_SEEDS, why="seeds per error")
    virtual = t.strings("virtual_schedulers", list(VIRTUAL), choices=VIRTUAL)
    fairness = t.boolean("fairness", True)
    if not main and not errors:
        raise t.error("schedulers", "nothing to run: give schedulers or virtual_errors")
    extra = _options(t, bool(errors))
    per_trace = len(main) + len(errors) * n_seeds * len(virtual)
    if why := check_run_count(len(traces) * per_trace):
        raise t.error("traces", f"{len(traces)} traces x {per_trace:,} runs each: {why}")
    outputs = [jobtables.FIELD] if t.boolean("job_tables", False) else []
    specs = []

    def add(trace, path, label, m, options, strategy, predictor, error, run_seed):
        options = t.scheduler("options" if extra else "schedulers", {**options, **extra, "fairness": fairness})
        labels = {"trace": label, "strategy": strategy, "predictor": predictor, "error": error, "seed": run_seed}
        specs.append(RunSpec(kind="pv-easy", trace=trace, split=None, weeks=0, resample_seed=seed, options=options,
                             tau=tau, labels=labels, trace_path=path, procs=m,
                             walltime_from_runtime=workload["walltime_from_runtime"], lenient=workload["lenient"],
                             cleaning=cleaning, outputs=list(outputs)))

    for trace, path, label, m in sources:
        for strategy in main:
            options = main_options(strategy, policy)
            predictor = extra.get("predictor", options.get("predictor", "walltime"))
            add(trace, path, label, m, options, strategy, predictor, None, None)
        # Seed by seed, every error in each (x = 0 is exact and seed-free: once, first), so that a
        # campaign cut short still has every error for its first seeds.
        sweep = [(error, 1) for error in errors if error == 0]
        sweep += [(error, s) for s in range(1, n_seeds + 1) for error in errors if error != 0]
        for error, run_seed in sweep:
            for strategy in virtual:
                add(trace, path, label, m, virtual_options(strategy, policy, error, run_seed), strategy,
                    "virtual", error, run_seed)
    settings = {"traces": [label for *_, label, _ in sources], "trace_sources": traces, "procs": procs,
                "cleaning": cleaning, "policy": policy, "schedulers": main, "virtual_errors": errors,
                "virtual_seeds": n_seeds, "virtual_schedulers": virtual if errors else [], "fairness": fairness,
                "options": extra, "job_tables": bool(outputs), "unfair_ablation_min": list(UNFAIR_ABLATION)}
    return Expansion(settings, specs, {"traces": settings["traces"], "procs": procs, "cleaning": cleaning,
                                       **workload})


def trace_figures(trace: Trace) -> dict:
    """One trace's own figures: jobs, load (sum p q over m x the submission span), mean q and p, the records
    read (jobs + every record the cleaning dropped) and those dropped as never started."""
    records = trace.jobs
    submits = [j.submit for j in records]
    span = max(submits) - min(submits)
    work = math.fsum(j.runtime * j.procs for j in records)
    return {"trace_jobs": len(records), "trace_m": trace.max_procs,
            "trace_load": work / (trace.max_procs * span) if span > 0 else math.nan,
            "trace_mean_procs": math.fsum(j.procs for j in records) / len(records),
            "trace_mean_runtime": math.fsum(j.runtime for j in records) / len(records),
            "trace_records": len(records) + dropped_jobs(trace),
            "trace_never_started": trace.cleaning.get("never_started", 0)}


def _ablation(result: SimResult | None) -> dict:
    """Strict-fairness and reservation violations whose delay is at least n minutes (None: no monitor).

    ``unfair_<n>min_jobs`` / ``_mean``: the jobs whose unfair delay reaches n minutes and their mean
    delay; ``rv_<n>min_jobs`` / ``_mean``: the same for the delays from reservation.
    """
    out: dict = {}
    per_job = {} if result is None else (result.report.get("fairness_jobs") or {})
    for name, key in (("unfair", "unfair"), ("rv", "violations")):
        delays = list(per_job.get(key, {}).values())
        for minutes in UNFAIR_ABLATION:
            kept = [d for d in delays if d >= 60.0 * minutes]
            out[f"{name}_{minutes}min_jobs"] = None if result is None else len(kept)
            out[f"{name}_{minutes}min_mean"] = math.fsum(kept) / len(kept) if kept else None
    return out


def run(spec: RunSpec) -> dict:
    """One strategy on one whole trace: the summary's figures, flattened (module docstring)."""
    trace = base_trace(*source_key(spec))
    config = SchedulerConfig.from_options(spec.options)
    summary, result = run_local(trace, config, None, tau=spec.tau)
    row = {key: summary.get(key) for key in SUMMARY_KEYS}
    fairness = summary.get("fairness") or {}
    row.update({f"fair_{key}": fairness.get(key) for key in FAIRNESS_KEYS})
    predictor = summary.get("predictor") or {}
    row["prediction_error"] = predictor.get("mean_abs_relative_error")
    row["under_predicted"] = predictor.get("under_predicted_share")
    row.update(_ablation(result if fairness else None))
    row.update(trace_figures(trace))
    row["algorithm"] = config.describe()
    final = jobs.final_runs(result.runs)
    row.update(jobs.from_requeue(final, spec.tau))
    out = {"summary": row, "starts": jobs.starts(result.runs)}
    if jobtables.FIELD in spec.outputs:
        out[jobtables.FIELD] = jobtables.encode(jobs.JOB_COLUMNS,
                                                jobs.job_table(final, result.report.get("fairness_jobs")))
    return out


def run_columns(spec: dict) -> dict:
    return {**whole_trace_columns(spec), "cleaning": spec["cleaning"]}


STARTS = TableSpec("starts", "starts", LABELS, ("run_id", *LABELS, *jobs.START_COLUMNS), ("runs", "killed"))

KIND = CampaignKind(
    name="pv-easy", help="EASY, EASY with predictions and PV-EASY on whole traces, fairness measured; the "
                         "virtual-predictor sweep",
    keys=KEYS, expand=expand, run=run, labels=LABELS, run_columns=run_columns, tables=(STARTS,),
    report=report.write, report_files=report.FILES, single_trace=False, default_tau=10.0)
