"""``kind = "classification"``: small/large runtime classification with kill-and-requeue (docs/semantics/learning.md#classification).

For every trace of ``[classification] traces`` (several traces in one
campaign; no ``[workload] trace``), every policy (FCFS, WFP3, SPF, SAF by
default) and every variant: ``base`` (plain EASY(P)), ``rf`` (the online
random forest, small queue first, with the safeguard), ``rf-no-safeguard``,
``class-clairvoyant`` (true class known, same safeguard) and
``runtime-clairvoyant`` (p~ := p, one queue); and, on request only,
``rf-no-false-large`` and ``rf-no-false-small`` (the forest's classes with
one kind of its errors corrected from the true runtimes: what each kind of
error costs, between ``rf`` and ``class-clairvoyant``), and
``easy++`` (no classifier: Tsafrir et al.'s EASY++, the policy's EASY
planning with EASY++'s runtime predictor - the mean of the user's last two
runtimes - and backfilling the shortest prediction first: the classic
prediction-based baseline) and ``avg2`` (the same predictor, backfilling in the
policy's own order: EASY++ without its shortest-first backfilling).  One run = one (trace, policy,
variant) on the **whole trace, not resampled**, on its header's machine
size; tau = 60 s by default (the usual tau for job-level slowdowns).  Every classified
run's forest uses ``[campaign] seed`` itself as its seed (common random
numbers across variants and policies).  Per run the campaign stores:

- summary metrics (AVGbsld, AvgWait, MaxWait, the sum of bsld, killed jobs,
  killed runs, safeguard kills, wasted work = processor-seconds of killed
  runs, and its share of the useful work), and two row-by-row readings of
  the sum of bsld (:func:`run_row_bsld`: every run a job of its own, a rerun
  submitted at its kill - with or without the killed runs' rows);
- AVGbsld per **reference class** (small / large / unlabelled; see
  :func:`reference_classes`).  The classifier's own label (actual runtime <
  the divider in force at the job's classification) depends on the run's
  schedule - the divider is the median runtime of the jobs that *finished*
  in the last week, and when they finish depends on the variant - so two
  variants would label different sets of jobs small, and the base variant
  has no classifier at all.  The per-class table therefore uses one
  schedule-independent labelling per trace, the same definition applied to
  the zero-wait replay of the trace (every job ends at r_j + p_j): small iff
  p_j < median runtime of the jobs ending in (r_j - 7 d, r_j]; no such job =
  ``unlabelled`` (the first jobs of a trace).  Every variant of a trace is
  thus split into the same job sets.  ``label_agreement`` in ``runs.csv``
  is, for a classified run, the share of jobs labelled by both on which the
  reference class equals the run's classifier label;
- AVGbsld per month: 30-day periods from the trace's first submission, a
  job counted in the period of its submission (r_j);
- the cumulative bsld curve (by completion time, as
  :func:`bftune.experiments.runs.metrics.cumulative_bsld`) sampled at
  :data:`CURVE_POINTS` (500) evenly spaced instants from the first submission
  to the last completion (the step function's value at each instant; the
  last point is the total);
- for ``rf`` and ``rf-no-safeguard``: the classification quality
  (docs/semantics/scheduling.md#metrics; the classifier's report: accuracy, precision and recall of the
  small class, false small and false large rates, confusion counts), overall
  and per week of submission.

Section ``[classification]`` (every key but traces optional)::

    traces = ["archive:KTH-SP2", "synthetic:4500:64:1"]   # required
    policies = ["FCFS", "WFP3", "SPF", "SAF"]
    variants = ["base", "rf", "rf-no-safeguard", "class-clairvoyant", "runtime-clairvoyant"]
                               # on request also "easy++", "avg2", "rf-no-false-large", "rf-no-false-small"
    features = "weekly"        # or "live" (docs/semantics/learning.md#classification)
    learning = "online"        # or "decoupled" (weekly batch learning: bftune.learning.decoupled)
    threshold = "inf"          # Theta of EASY, wrapping the small-first queue (none by default)
    divider_window = "1w"      # the classifier's divider: median runtime of the jobs finished in the
                               # last 1w (the default) or "inf" (every job finished so far);
                               # online learning only.  The reference classes below keep 1w.
    safeguard_period = "1w"    # the safeguard checks the small jobs every 1w instead of killing each at
                               # its start + the divider (the default); the variants with a safeguard only
    safeguard_divider = "current"  # kill when the execution time reaches the divider in force then
                               # (default "start": the divider at the job's start); likewise
    aggregate_classes = "predicted"    # the forest's options (the variants that train it: rf,
    categorical_features = "request"   # rf-no-safeguard, rf-no-false-*), each as the option of the
    relabel = "last-week-median"       # same name (`bftune options`); defaults: true, none, none,
    calendar = "relative"              # absolute
    trace_policies = {"SDSC-BLUE-2000-4.2-cln" = ["SPF"]}   # a trace (by its name in the tables) run
                               # with these policies instead of `policies`
    reservation = "count"
    preset = "default"         # named defaults for cleaning, features and learning
                               # (bftune.experiments.runs.presets: default and those the command
                               # line adds, see `bftune simulate --help`); keys given explicitly win

``[workload]`` is optional and may only hold ``walltime_from_runtime``,
``lenient`` and ``cleaning`` (``spec``, ``keep-overruns`` or
``batsim-converter``: bftune.workloads.swf; default the preset's), applied
to every trace.  A trace's name in the tables is its
file name without ``.swf``/``.swf.gz`` (or the ``synthetic:...`` text).

Tables: ``classes.csv`` (per run and reference class), ``months.csv`` (per
run and 30-day month), ``curves.csv`` (per run and curve point) and
``classification.csv`` (per rf run: an ``overall`` row and one row per week).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np

from bftune.experiments.campaign.kinds.kind import CampaignKind, Expansion, TableSpec, whole_trace_columns
from bftune.experiments.campaign.limits import check_run_count
from bftune.experiments.campaign.section import Section
from bftune.experiments.campaign.specs import RunSpec
from bftune.experiments.campaign.workloads import base_trace, source_key, trace_label, trace_path
from bftune.workloads.model import WEEK
from bftune.experiments.runs.metrics import aggregate, bounded_slowdown, summarize
from bftune.experiments.campaign.report import classification as report
from bftune.experiments.runs.tables import cumulative_bsld, job_table, per_period, runs_frame
from bftune.learning.median import RollingMedian
from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.core.durations import format_duration
from bftune.schedulers.drivers.local.simulator import simulate
from bftune.schedulers.hooks.classified import MODES, SmallFirst
from bftune.experiments.runs.presets import ALIASES, DEFAULT, PRESETS, Preset, get_preset
from bftune.schedulers.options import OPTIONS
from bftune.workloads.model import job_name, name_width
from bftune.workloads.cleaning import CLEANINGS

POLICIES = ("FCFS", "WFP3", "SPF", "SAF")
#: The variants with a classifier hook (the ``variants`` default is the base and these).
CLASSIFIED = ("rf", "rf-no-safeguard", "class-clairvoyant", "runtime-clairvoyant")
#: On request: rf with one kind of error corrected by the oracle (the hook's modes of the same names).
ERROR_ANALYSES = tuple(name for name, mode in MODES.items() if mode.corrects_to is not None)
DEFAULT_VARIANTS = ("base", *CLASSIFIED)
#: EASY++ (Tsafrir, Etsion and Feitelson 2007) as scheduler options: predictions, shortest one backfilled first.
EASY_PLUS_PLUS = {"predictor": "avg2", "backfill_policy": "SPF"}
#: Variants without a classifier that plan with a runtime predictor: EASY++ and its predictor alone.
PREDICTED = {"easy++": EASY_PLUS_PLUS, "avg2": {"predictor": "avg2"}}
#: The forest's options a section may set (the classifier hook's options of the same names), each left out of a
#: run's options at its default so that run ids stored before it existed hold.
VARIANTS = ("base", *CLASSIFIED, *ERROR_ANALYSES, *PREDICTED)
FOREST_KEYS = ("aggregate_classes", "categorical_features", "relabel", "calendar")
KEYS = ("traces", "policies", "variants", "features", "learning", "threshold", "reservation", "preset",
        "divider_window", "safeguard_period", "safeguard_divider", *FOREST_KEYS, "trace_policies")
LABELS = ("trace", "policy", "variant", "baseline")
MONTH = 30 * 86400  # the "months": 30-day periods from the first submission
CURVE_POINTS = 500  # samples of each stored cumulative bsld curve
CLASSES = ("small", "large", "unlabelled")
QUALITY_KEYS = ("n", "tp", "fp", "tn", "fn", "accuracy", "precision", "recall", "false_small_rate",
                "false_large_rate")


#: The variants a classifier key of the section means something to: every variant but the base, and only
#: those with a safeguard for its period.  A section that sets a key none of its variants takes is refused.
SAFEGUARDED = ("rf", "class-clairvoyant", *ERROR_ANALYSES)
#: The variants that train the forest (the others need only its divider).
FOREST = ("rf", "rf-no-safeguard", *ERROR_ANALYSES)
KEY_VARIANTS = {"features": CLASSIFIED + ERROR_ANALYSES, "learning": CLASSIFIED + ERROR_ANALYSES,
                "divider_window": CLASSIFIED + ERROR_ANALYSES, "safeguard_period": SAFEGUARDED,
                "safeguard_divider": SAFEGUARDED, **dict.fromkeys(FOREST_KEYS, FOREST)}


def variant_options(variant: str, policy: str, *, features: str, seed: int, threshold: str,
                    reservation: str, learning: str = "online", divider_window: str | None = None,
                    safeguard_period: str | None = None, safeguard_divider: str | None = None,
                    forest: dict | None = None) -> dict:
    """The :class:`SchedulerConfig` options of one variant (``divider_window``, ``safeguard_period``,
    ``safeguard_divider`` None and ``forest`` (the forest's options not at their defaults) empty: the defaults,
    left out, so that run ids stored before they existed hold)."""
    options: dict[str, Any] = {"policy": policy, "threshold": threshold, "reservation": reservation}
    if variant == "base":
        return options
    if variant in PREDICTED:
        return {**options, **PREDICTED[variant]}
    classifier = {"rf": "rf", "rf-no-safeguard": "rf"}.get(variant, variant)
    options.update(classifier=classifier, safeguard=variant != "rf-no-safeguard", features=features, seed=seed)
    if learning != "online":  # the default stays out of the options, so that run ids stored before it hold
        options["learning"] = learning
    if divider_window is not None:  # likewise
        options["divider_window"] = divider_window
    if safeguard_period is not None and variant in SAFEGUARDED:
        options["safeguard_period"] = safeguard_period
    if safeguard_divider is not None and variant in SAFEGUARDED:
        options["safeguard_divider"] = safeguard_divider
    if variant in FOREST:
        options.update(forest or {})
    return options


def expand(t: Section, workload: dict, seed: int, tau: float) -> Expansion:
    """Every (trace, policy, variant) of the config, each on a whole trace."""
    traces = t.strings("traces")
    labels_seen: dict[str, str] = {}
    sources = []
    for trace in traces:
        path = trace_path(t, "traces", trace)
        label = trace_label(trace)
        if label in labels_seen:
            raise t.error("traces", f"{trace!r} and {labels_seen[label]!r} have the same name {label!r} "
                                    "in the tables")
        labels_seen[label] = trace
        sources.append((trace, path, label))
    policies = t.option_list("policies", list(POLICIES), "policy")
    variants = t.strings("variants", list(DEFAULT_VARIANTS), choices=VARIANTS)
    for key, takers in KEY_VARIANTS.items():
        if key in t.data and not set(variants) & set(takers):
            raise t.error(key, f"applies to the variants {', '.join(takers)}; this section runs only "
                               f"{', '.join(variants)}")
    preset = _preset(t)
    features = t.option("features", preset.options.get("features", OPTIONS["features"].default))
    learning = t.option("learning", preset.options.get("learning", OPTIONS["learning"].default))
    threshold = format_duration(t.option("threshold", "inf"))
    default_window = OPTIONS["divider_window"].default
    if learning == "online":  # a preset's window applies to online learning only
        default_window = preset.options.get("divider_window", default_window)
    window = t.option("divider_window", default_window)
    divider_window = None if window == OPTIONS["divider_window"].default else format_duration(window)
    period = t.option("safeguard_period", None)
    safeguard_period = None if period is None else format_duration(period)
    divider = t.option("safeguard_divider", OPTIONS["safeguard_divider"].default)
    safeguard_divider = None if divider == OPTIONS["safeguard_divider"].default else divider
    forest = {key: value for key in FOREST_KEYS if (value := t.option(key, OPTIONS[key].default))
              != OPTIONS[key].default}
    by_trace = _trace_policies(t, [label for _, _, label in sources])
    runs = sum(len(by_trace.get(label, policies)) for _, _, label in sources) * len(variants)
    if why := check_run_count(runs):
        raise t.error("policies", f"{len(sources)} traces x {len(policies)} policies x {len(variants)} variants: {why}")
    reservation = t.option("reservation", OPTIONS["reservation"].default)
    cleaning = workload["cleaning"] or preset.cleaning  # [workload] cleaning wins over the preset's
    if cleaning != CLEANINGS[0] and any(path is None for _, path, _ in sources):
        raise t.error("traces", f"cleaning {cleaning!r} applies to SWF traces, not to synthetic ones")
    workload = {**workload, "cleaning": cleaning}
    specs = []
    for trace, path, label in sources:
        for policy in by_trace.get(label, policies):
            for variant in variants:
                options = t.scheduler("variants", variant_options(variant, policy, features=features, seed=seed,
                                                                  threshold=threshold, reservation=reservation,
                                                                  learning=learning,
                                                                  divider_window=divider_window,
                                                                  safeguard_period=safeguard_period,
                                                                  safeguard_divider=safeguard_divider,
                                                                  forest=forest))
                labels = {"trace": label, "policy": policy, "variant": variant, "baseline": variant == "base"}
                specs.append(RunSpec(kind="classification", trace=trace, split=None, weeks=0, resample_seed=seed,
                                     options=options, tau=tau, labels=labels, trace_path=path, procs=None,
                                     walltime_from_runtime=workload["walltime_from_runtime"],
                                     lenient=workload["lenient"], cleaning=cleaning))
    settings = {"traces": [label for _, _, label in sources], "trace_sources": traces, "policies": policies,
                "variants": variants, "preset": preset.stored_name, "cleaning": cleaning, "features": features,
                "learning": learning, "threshold": "none" if threshold == "inf" else threshold,
                "divider_window": format_duration(window),
                "safeguard_period": safeguard_period or "none (at the divider)", "safeguard_divider": divider,
                **{key: t.option(key, OPTIONS[key].default) for key in FOREST_KEYS},
                "trace_policies": by_trace,
                "reservation": reservation, "curve_points": CURVE_POINTS, "month_days": MONTH // 86400,
                "baseline": "base", "forest_seed": seed}
    return Expansion(settings, specs, {"traces": settings["traces"], "procs": None, **workload})


def _trace_policies(t: Section, labels: list[str]) -> dict[str, list[str]]:
    """``trace_policies``: per trace (its name in the tables), the policies it runs instead of ``policies``."""
    given = t.get("trace_policies", {})
    if not isinstance(given, dict):
        raise t.error("trace_policies", f"expected a table of trace name = [policies], got {given!r}")
    unknown = sorted(set(given) - set(labels))
    if unknown:
        raise t.error("trace_policies", f"{', '.join(unknown)} is not one of this section's traces "
                                        f"({', '.join(labels)})")
    out = {}
    for label in labels:
        if label in given:
            policies = given[label]
            if not isinstance(policies, list) or not policies:
                raise t.error("trace_policies", f"{label}: expected a non-empty list of policies, got {policies!r}")
            out[label] = [t.parse("trace_policies", p, "policy") for p in policies]
    return out


def _preset(t: Section) -> Preset:
    """``preset``: named defaults for cleaning, features and learning (``default`` when not given)."""
    name = t.string("preset", DEFAULT.name, choices=(*PRESETS, *ALIASES))
    return get_preset(name)


def reference_classes(jobs, window: float = WEEK) -> list[str | None]:
    """The schedule-independent true class of every job (module docstring), in the order of ``jobs``.

    Replays the trace with every job ending at r_j + p_j (p_j = its runtime,
    capped by its walltime, as the simulator runs it); the divider at r_j is
    the median runtime of the jobs ending in (r_j - window, r_j], the
    classifier's own rule (:class:`~bftune.learning.median.RollingMedian`).
    A job is ``"small"`` iff p_j < divider, ``"large"`` otherwise, ``None``
    (unlabelled) when no job ended in the window.
    """
    runtimes = [min(float(j.runtime), float(j.walltime)) for j in jobs]
    ends = sorted((float(j.submit) + p, p) for j, p in zip(jobs, runtimes))
    order = sorted(range(len(jobs)), key=lambda i: float(jobs[i].submit))
    out: list[str | None] = [None] * len(jobs)
    ended = RollingMedian(window)
    k = 0
    for i in order:
        r = float(jobs[i].submit)
        while k < len(ends) and ends[k][0] <= r:
            ended.add(*ends[k])
            k += 1
        divider = ended.median(r)
        if divider is not None:
            out[i] = "small" if runtimes[i] < divider else "large"
    return out


@lru_cache(maxsize=2)
def _reference_classes(key: tuple) -> dict[str, str | None]:
    """Reference class per job name (the name the simulator gives it), per trace, cached in the worker."""
    trace = base_trace(*key)
    width = name_width(j.id for j in trace.jobs)
    classes = reference_classes(trace.jobs)
    return {job_name(j.id, width): c for j, c in zip(trace.jobs, classes)}


def curve(times, values, origin: float, points: int) -> list[dict]:
    """A step function (value after each time) sampled at ``points`` instants from ``origin`` to the last time."""
    times = np.asarray(times, dtype=float)
    values = np.asarray(values, dtype=float)
    if len(times) == 0:
        return []
    grid = np.linspace(origin, float(times[-1]), points)
    idx = np.searchsorted(times, grid, side="right") - 1
    sampled = np.where(idx >= 0, values[np.maximum(idx, 0)], 0.0)
    sampled[-1] = values[-1]
    return [{"point": k, "day": float((t - origin) / 86400.0), "cumulative_bsld": float(v)}
            for k, (t, v) in enumerate(zip(grid.tolist(), sampled.tolist()))]


def run(spec: RunSpec) -> dict:
    """One (trace, policy, variant) on the whole trace: the tables of the module docstring."""
    config = SchedulerConfig.from_options(spec.options)
    trace = base_trace(*source_key(spec))
    m = trace.max_procs
    core = config.build(m, trace.clock)
    result = simulate(trace.jobs, m, core)
    df = runs_frame(result.runs)
    tau = spec.tau
    summary = summarize(df, m, tau)
    jobs = job_table(df)
    jobs["bsld"] = bounded_slowdown(jobs, tau)
    ref = _reference_classes(source_key(spec))
    jobs["class"] = [ref.get(j) or "unlabelled" for j in jobs["job"]]
    origin = float(min(j.submit for j in trace.jobs))
    useful = float((jobs["runtime"] * jobs["procs"]).sum())
    row: dict[str, Any] = {key: summary.get(key) for key in ("jobs", "avg_bsld", "avg_wait", "max_wait", "max_bsld", "mwbs",
                                             "utilization", "killed_jobs", "killed_runs", "wasted_work")}
    row["sum_bsld"] = float(math.fsum(jobs["bsld"].tolist()))
    row.update(run_row_bsld(df, tau))
    row["useful_work"] = useful
    row["wasted_share"] = row["wasted_work"] / useful if useful > 0 else math.nan
    row["safeguard_kills"] = int(result.report.get("safeguard_kills", 0))
    for c in CLASSES:
        row[f"{c}_jobs"] = int((jobs["class"] == c).sum())
    row["label_agreement"] = _label_agreement(core, ref)
    row["algorithm"] = config.describe()

    per = per_period(df, MONTH, tau, origin=origin)
    months = [{"month": int(r.period), "start_day": float((r.start - origin) / 86400.0), "jobs": int(r.jobs),
               "avg_bsld": float(r.avg_bsld), "avg_wait": float(r.avg_wait), "max_wait": float(r.max_wait)}
              for r in per.itertuples(index=False)]
    cum = cumulative_bsld(df, tau)
    quality = _quality(result.report.get("classification"), config, row)
    return {"summary": row, "classes": _per_class(jobs), "months": months,
            "curve": curve(cum["time"].to_numpy(), cum["cumulative_bsld"].to_numpy(), origin, CURVE_POINTS),
            "classification": quality}


def run_row_bsld(df, tau: float) -> dict:
    """The sum of bsld if every run were a job of its own, as a row-by-row reading of Batsim's out_jobs.csv.

    The metrics (docs/semantics/scheduling.md#metrics; ``sum_bsld``) merge a killed job's runs: its r_j and its
    final run.  Read row by row, Batsim's output has instead one row per run,
    a rerun submitted when it was registered (at the kill).  ``sum_bsld_rows``
    counts every row (killed runs included), ``sum_bsld_resubmitted`` only the
    runs that were not killed; both use each row's own submission time.  A
    published total may have been counted any of these ways: the report sets the three side by side.
    """
    bsld = bounded_slowdown({"end": df["finish_time"].to_numpy(dtype=float),
                             "submit": df["submission_time"].to_numpy(dtype=float),
                             "runtime": df["execution_time"].to_numpy(dtype=float)}, tau)
    done = (df["final_state"] != "COMPLETED_KILLED").to_numpy()
    return {"sum_bsld_rows": float(math.fsum(bsld.tolist())), "sum_bsld_resubmitted": float(math.fsum(bsld[done].tolist()))}


def _label_agreement(core, ref: dict[str, str | None]) -> float:
    """Share of the jobs labelled by both on which the run's classifier label equals the reference class."""
    hook = next((h for h in core.hooks if isinstance(h, SmallFirst)), None)
    if hook is None:
        return math.nan
    both = agree = 0
    for job_id, cls in ref.items():
        if cls is None:
            continue
        label = hook.clf.job(job_id)["label"]
        if label is None:
            continue
        both += 1
        agree += (label == 1) == (cls == "small")
    return agree / both if both else math.nan


def _per_class(jobs) -> list[dict]:
    classes = []
    for c in ("all", *CLASSES):
        sel = jobs if c == "all" else jobs[jobs["class"] == c]
        agg = aggregate(sel["wait"], sel["bsld"])
        classes.append({"class": c, "jobs": agg.jobs, "avg_bsld": agg.avg_bsld, "avg_wait": agg.avg_wait,
                        "max_wait": agg.max_wait,
                        "killed_jobs": int((sel["kills"] > 0).sum()),
                        "wasted_work": float(sel["wasted_work"].sum())})
    return classes


def _quality(cls_report: dict | None, config: SchedulerConfig, row: dict) -> list[dict]:
    """The rf classifier's quality rows (overall, then per week); its overall accuracy into ``row``."""
    if cls_report is None or config.classifier != "rf":
        return []
    overall = cls_report["overall"]
    counts = cls_report["counts"]
    quality = [{"scope": "overall", "week": None, "submitted": counts["classified"],
                "evaluated": counts["evaluated"], "unlabelled": counts["unlabelled"],
                "predicted_small": counts["predicted_small"], **{k: overall[k] for k in QUALITY_KEYS},
                "model": "", "train_size": None, **_error_columns(cls_report.get("errors"))}]
    for w in cls_report["weeks"]:
        quality.append({"scope": "week", "week": w["week"], "submitted": w["submitted"],
                        "evaluated": w["evaluated"], "unlabelled": w["unlabelled"],
                        "predicted_small": w["predicted_small"],
                        **{k: w["metrics"][k] for k in QUALITY_KEYS}, "model": w["model"]["kind"],
                        "train_size": w["model"]["train_size"]})
    row["accuracy"] = overall["accuracy"]
    # the zone the calendar features used, and why if it is not the trace's (a machine without it: UTC)
    row["calendar_zone"] = cls_report["config"]["timezone"]
    row["calendar_warning"] = "; ".join(cls_report.get("calendar_warnings", []))
    return quality


def _error_columns(errors: dict | None) -> dict:
    """Which jobs were misclassified (overall rows only): the median runtime of the false large and false small
    jobs, as a share of the divider at their classification, and the share of false large jobs under 60 s
    (``RuntimeClassifier``'s ``errors``; the decoupled classifier reports none)."""
    cells = dict.fromkeys(ERROR_COLUMNS)
    errors = errors or {}
    for kind, prefix in (("false_large", "fl"), ("false_small", "fs")):
        part = errors.get(kind) or {}
        if part.get("runtime_quartiles"):
            cells[f"{prefix}_median_runtime"] = part["runtime_quartiles"][1]
            cells[f"{prefix}_median_over_divider"] = part["runtime_over_divider_quartiles"][1]
    cells["fl_under_60s"] = (errors.get("false_large") or {}).get("shorter_than_60s")
    return cells


ERROR_COLUMNS = ("fl_median_runtime", "fl_median_over_divider", "fl_under_60s", "fs_median_runtime",
                 "fs_median_over_divider")
_SHORT = ("trace", "policy", "variant")
_QUALITY_COLUMNS = ("scope", "week", "submitted", "evaluated", "unlabelled", "predicted_small", *QUALITY_KEYS,
                    "model", "train_size", *ERROR_COLUMNS)
KIND = CampaignKind(
    name="classification", help="small/large runtime classification on whole traces", keys=KEYS, expand=expand,
    run=run, labels=LABELS, run_columns=whole_trace_columns,
    tables=(TableSpec("classes", "classes", _SHORT, ("run_id", *_SHORT, "class", "jobs", "avg_bsld", "avg_wait",
                                                     "max_wait", "killed_jobs", "wasted_work")),
            TableSpec("months", "months", _SHORT, ("run_id", *_SHORT, "month", "start_day", "jobs", "avg_bsld",
                                                   "avg_wait", "max_wait")),
            TableSpec("curves", "curve", _SHORT, ("run_id", *_SHORT, "point", "day", "cumulative_bsld")),
            TableSpec("classification", "classification", _SHORT, ("run_id", *_SHORT, *_QUALITY_COLUMNS),
                      integers=("week", "train_size"))),
    report=report.write, report_files=report.FILES, single_trace=False, default_tau=60.0)
