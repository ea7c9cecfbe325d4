"""Report of a ``pv-easy`` campaign: per trace, each strategy's figures, the fairness checks and the plots.

The checks come first, and hold on any trace: PV-EASY's shadow-load
preemption starts the first waiting job as soon as the running jobs of lower
priority would make room, so no PV-EASY run may have a strict-fairness
violation, and since its reservation comes from the sunny load alone (jobs
it never preempts), none may have a reservation violation either; the EASY
family's counts are shown beside.  Then, per trace, the workload, strict
fairness in EASY, reservation violations of EASY-Last, backfilled and
blocked jobs, load and preemption of PV-EASY, and the slowdowns of all jobs
and of blocked jobs by size (a bar plot); last, the virtual-predictor sweep
(mean and spread over seeds per error, a plot, ``summary_pv_easy.csv``).

:func:`figures` names every figure once; a study that sets published values
beside ours reads the same figures (``bftune.experiments.studies``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from bftune.experiments.campaign.report.common import md_table, panels, runs_or_note, save
from bftune.support.files import atomic_write_text

FILES = ("summary_pv_easy.csv",)
#: Delays below these minutes left out, for the counts of strict-fairness and reservation violations.
THRESHOLDS = (10, 30, 60)
MINUTE, HOUR = 60.0, 3600.0


@dataclass(frozen=True)
class Figure:
    """One figure of a table: its label, our value (None: not measured), its format, and ``ref``, the
    (table, key) a published value for it would have (None: nothing to compare it with)."""

    label: str
    value: float | None
    spec: str
    ref: tuple[str, str] | None = None


def one(df: pd.DataFrame, strategy: str) -> pd.Series | None:
    """The run of ``strategy`` in the main comparison (not the virtual sweep), None if absent."""
    sel = df[(df["strategy"] == strategy) & (df["predictor"] != "virtual")]
    return None if sel.empty else sel.iloc[0]


def get(row: pd.Series | None, key: str, scale: float = 1.0) -> float | None:
    if row is None or key not in row or pd.isna(row[key]):
        return None
    return float(row[key]) * scale


def measured(row: pd.Series | None) -> bool:
    """Whether ``row`` is a run with the fairness monitor on."""
    return row is not None and not pd.isna(row.get("fair_blocked_jobs"))


def figures(df: pd.DataFrame) -> dict[str, list[Figure]]:
    """One trace's runs as tables of figures: ``workload`` always, the others where their runs are."""
    easy, last, pv = one(df, "EASY"), one(df, "EASY-Last"), one(df, "PV-EASY")
    any_row = next((r for r in (easy, last, pv) if r is not None), df.iloc[0])
    out = {"workload": [
        Figure("jobs", get(any_row, "trace_jobs"), "{:,.0f}", ("workload", "jobs")),
        Figure("load (sum p q / m x submission span)", get(any_row, "trace_load"), "{:.2%}", ("workload", "load")),
        Figure("mean parallelism", get(any_row, "trace_mean_procs"), "{:.4f}", ("workload", "mean_procs")),
        Figure("mean runtime (s)", get(any_row, "trace_mean_runtime"), "{:,.0f}", ("workload", "mean_runtime")),
    ]}
    if measured(easy):
        out["fairness"] = [
            Figure("delayed jobs", get(easy, "fair_strict_fairness_violations"), "{:,.0f}", ("fairness", "delayed")),
            Figure("blocked jobs", get(easy, "fair_blocked_jobs"), "{:,.0f}", ("fairness", "blocked")),
            Figure("mean delay of delayed jobs (min)", get(easy, "fair_unfair_delay_mean", 1 / MINUTE), "{:,.2f}",
                   ("fairness", "mean_delay_min")),
            Figure("maximum delay (h)", get(easy, "fair_unfair_delay_max", 1 / HOUR), "{:,.2f}",
                   ("fairness", "max_delay_h")),
            *[figure for minutes in THRESHOLDS for figure in (
                Figure(f"delayed jobs, delays >= {minutes} min only", get(easy, f"unfair_{minutes}min_jobs"),
                       "{:,.0f}", ("fairness", "delayed")),
                Figure("  their mean delay (min)", get(easy, f"unfair_{minutes}min_mean", 1 / MINUTE), "{:,.2f}",
                       ("fairness", "mean_delay_min")))]]
    if measured(last):
        out["violations"] = [
            Figure("violations", get(last, "fair_reservation_violations"), "{:,.0f}", ("violations", "count")),
            Figure("mean parallelism of the victims", get(last, "fair_reservation_violation_mean_procs"), "{:,.2f}",
                   ("violations", "mean_procs")),
            Figure("mean delay from reservation (min)", get(last, "fair_reservation_violation_mean", 1 / MINUTE),
                   "{:,.2f}", ("violations", "mean_dtr_min")),
            Figure("mean slowdown increment", get(last, "fair_reservation_violation_si_mean"), "{:,.2f}",
                   ("violations", "mean_si")),
            Figure("maximum delay from reservation (h)", get(last, "fair_reservation_violation_max", 1 / HOUR),
                   "{:,.2f}", ("violations", "max_dtr_h")),
            Figure("maximum slowdown increment", get(last, "fair_reservation_violation_si_max"), "{:,.2f}",
                   ("violations", "max_si")),
            *[figure for minutes in THRESHOLDS for figure in (
                Figure(f"violations, delays >= {minutes} min only", get(last, f"rv_{minutes}min_jobs"), "{:,.0f}",
                       ("violations", "count")),
                Figure("  their mean delay (min)", get(last, f"rv_{minutes}min_mean", 1 / MINUTE), "{:,.2f}",
                       ("violations", "mean_dtr_min")))]]
    if measured(easy) and measured(pv):
        out["starts"] = [
            Figure("EASY backfilled", get(easy, "fair_backfilled_jobs"), "{:,.0f}", ("starts", "easy_backfilled")),
            Figure("PV-EASY backfilled", get(pv, "fair_backfilled_jobs"), "{:,.0f}", ("starts", "pv_backfilled")),
            Figure("EASY blocked", get(easy, "fair_blocked_jobs"), "{:,.0f}", ("starts", "easy_blocked")),
            Figure("PV-EASY blocked", get(pv, "fair_blocked_jobs"), "{:,.0f}", ("starts", "pv_blocked")),
        ]
    if pv is not None:
        out["preemption"] = [
            Figure("total load", get(pv, "total_load"), "{:.2%}", ("load", "total_load")),
            Figure("wasted load", get(pv, "wasted_load"), "{:.2%}", ("load", "wasted_load")),
            Figure("preempted jobs", get(pv, "restarted_jobs"), "{:,.0f}", ("preemption", "preempted")),
            Figure("preempted share", get(pv, "preempted_share"), "{:.2%}", ("preemption", "rate")),
            Figure("MKT (mean kills of a preempted job)", get(pv, "mean_kills_per_restarted_job"), "{:.2f}",
                   ("preemption", "mkt")),
            Figure("mean RTW", get(pv, "mean_rtw"), "{:.2%}", ("preemption", "mean_rtw")),
        ]
    return out


#: The tables' headings in a campaign report, and what each figure means.
HEADINGS = {"workload": "the workload", "fairness": "strict fairness in EASY",
            "violations": "reservation violations of EASY-Last", "starts": "backfilled and blocked jobs",
            "preemption": "load and preemption of PV-EASY"}
NOTES = {
    "workload": "Jobs as simulated (the cleaning's job set); load = sum(p q) / (m x submission span).",
    "fairness": "Delayed jobs: jobs that were ever the first waiting job while they would have fit without the "
                "running jobs of lower priority (their unfair delay), however short; the last rows count only "
                "delays of at least 10, 30 and 60 minutes.",
    "violations": "A reservation is violated when, after it, the job was blocked while it would have fit without "
                  "the running jobs of lower priority (a late start caused only by jobs of higher priority is not "
                  "counted); the last rows count only delays from reservation of at least 10, 30 and 60 minutes.",
    "starts": "Blocked jobs: every job a pass stopped at, including the job each preemption round of PV-EASY is "
              "for; backfilled jobs: jobs whose final run started while a job of higher priority waited.",
    "preemption": "Total load counts every run's work, killed runs included, over m x (last end - first "
                  "submission); wasted load the killed runs' work. Preempted jobs are jobs killed at least once; "
                  "MKT their mean number of kills; RTW = (total run time - final runtime) / final runtime, "
                  "averaged over them.",
}


def value_text(value: float | None, spec: str) -> str:
    return "-" if value is None or value != value else spec.format(value)


def figure_table(rows: list[Figure]) -> str:
    df = pd.DataFrame([{"figure": f.label, "value": value_text(f.value, f.spec)} for f in rows])
    return md_table(df)


def targets(runs: pd.DataFrame) -> list[str]:
    """The checks that hold on any trace (module docstring), as report lines; none without the monitor."""
    pv = runs[runs["strategy"] == "PV-EASY"]
    if pv.empty or "fair_strict_fairness_violations" not in pv or pv["fair_strict_fairness_violations"].isna().all():
        return []
    bad_fair = int((pv["fair_strict_fairness_violations"] > 0).sum())
    bad_rv = int((pv["fair_reservation_violations"] > 0).sum())
    lines = ["## Targets\n",
             f"- PV-EASY runs with a strict-fairness violation: **{bad_fair} of {len(pv)}**; with a "
             f"reservation violation: **{bad_rv} of {len(pv)}** (main comparison and every virtual predictor)."]
    easy = runs[(runs["strategy"] != "PV-EASY") & runs["fair_strict_fairness_violations"].notna()]
    if not easy.empty:
        lines.append(f"- EASY-family runs with strict-fairness violations: "
                     f"{int((easy['fair_strict_fairness_violations'] > 0).sum())} of {len(easy)}; with reservation "
                     f"violations: {int((easy['fair_reservation_violations'] > 0).sum())} of {len(easy)}.")
    lines.append("")
    return lines


#: The slowdowns' groups: (label, MBS column, MWBS column).
GROUPS = (("all jobs", "avg_bsld", "mwbs"), ("blocked, q > m/4", "fair_blocked_big_mbs", "fair_blocked_big_mwbs"),
          ("blocked, q <= m/4", "fair_blocked_small_mbs", "fair_blocked_small_mwbs"))


def slowdowns(df: pd.DataFrame) -> str:
    """MBS and MWBS of all jobs and of the blocked jobs by size, one row per strategy of the main comparison."""
    main = df[df["predictor"] != "virtual"]
    rows = [{"strategy": row["strategy"], **{f"{metric} {label}": get(row, column)
                                            for label, mbs, mwbs in GROUPS
                                            for metric, column in (("MBS", mbs), ("MWBS", mwbs))}}
            for _, row in main.iterrows()]
    return md_table(pd.DataFrame(rows), {c: "{:.2f}" for r in rows for c in r if c != "strategy"}) if rows else ""


def _trace_section(trace: str, df: pd.DataFrame, lines: list[str]) -> None:
    tables = figures(df)
    m = int(df.iloc[0]["trace_m"])
    lines.append(f"## {trace} (m = {m})\n")
    for name, rows in tables.items():
        lines.append(f"### {HEADINGS[name][0].upper()}{HEADINGS[name][1:]}\n")
        lines.append(figure_table(rows))
        lines.append("\n" + NOTES[name] + "\n")
    text = slowdowns(df)
    if text:
        lines.append("### Slowdowns of all jobs and of blocked jobs by size\n")
        lines.append(text + "\n")


def virtual_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Per trace, strategy and maximum error x, the mean and spread of MBS and MWBS over seeds."""
    v = runs[runs["predictor"] == "virtual"]
    if v.empty:
        return pd.DataFrame()
    g = v.groupby(["trace", "strategy", "error"], sort=True)
    return g.agg(runs=("avg_bsld", "size"), mbs=("avg_bsld", "mean"), mbs_std=("avg_bsld", "std"),
                 mwbs=("mwbs", "mean"), mwbs_std=("mwbs", "std"),
                 prediction_error=("prediction_error", "mean")).reset_index()


VIRTUAL_FORMATS = {"error": "{:.2f}", "mbs": "{:.2f}", "mbs_std": "{:.2f}", "mwbs": "{:.2f}", "mwbs_std": "{:.2f}",
                   "prediction_error": "{:.3f}"}


def virtual_plot(out: Path, summary: pd.DataFrame) -> str:
    """MBS and MWBS against the maximum prediction error, per trace (``plots/virtual_predictor.png``)."""
    traces = list(dict.fromkeys(summary["trace"]))
    plt, fig, axes = panels(2 * len(traces), 2, 5.2, 3.4, 0.4)
    for i, trace in enumerate(traces):
        for j, metric in enumerate(("mbs", "mwbs")):
            ax = axes[2 * i + j]
            for strategy, g in summary[summary["trace"] == trace].groupby("strategy"):
                ax.errorbar(100 * g["error"], g[metric], yerr=g[f"{metric}_std"].fillna(0.0), marker="o", ms=3,
                            capsize=2, lw=1.2, label=strategy)
            ax.set_xlabel("maximum prediction error x (%)", fontsize=8)
            ax.set_ylabel(metric.upper(), fontsize=8)
            ax.set_title(f"{trace}: {metric.upper()}", fontsize=9)
            ax.tick_params(labelsize=7)
    axes[0].legend(fontsize=7)
    save(fig, out / "plots" / "virtual_predictor.png")
    return "![virtual predictor](plots/virtual_predictor.png)\n"


def bars(out: Path, runs: pd.DataFrame) -> str | None:
    """MBS and MWBS of all jobs and of blocked big / small jobs, per strategy (``plots/slowdowns.png``)."""
    main = runs[runs["predictor"] != "virtual"]
    if main.empty:
        return None
    traces = list(dict.fromkeys(main["trace"]))
    plt, fig, axes = panels(2 * len(traces), 2, 5.2, 3.2, 0.4)
    for i, trace in enumerate(traces):
        t = main[main["trace"] == trace]
        for j, metric in enumerate(("MBS", "MWBS")):
            ax = axes[2 * i + j]
            width = 0.8 / max(len(t), 1)
            for k, (_, row) in enumerate(t.iterrows()):
                values = [row.get(g[1 + j], np.nan) for g in GROUPS]
                ax.bar(np.arange(len(GROUPS)) + k * width, values, width, label=row["strategy"])
            ax.set_xticks(np.arange(len(GROUPS)) + 0.4 - width / 2, [g[0] for g in GROUPS], fontsize=7)
            ax.set_title(f"{trace}: {metric}", fontsize=9)
            ax.tick_params(labelsize=7)
    axes[0].legend(fontsize=7)
    save(fig, out / "plots" / "slowdowns.png")
    return "![slowdowns](plots/slowdowns.png)\n"


def write(out: Path, meta: dict, lines: list[str]) -> None:
    """The kind's sections of report.md, its plots and ``summary_pv_easy.csv`` (the virtual sweep's means)."""
    runs = runs_or_note(out, "runs", lines)
    if runs is None:
        return
    settings = meta.get("settings", {})
    extra = settings.get("options") or {}
    options = f"; every run also with {', '.join(f'{k} = {v}' for k, v in extra.items())}" if extra else ""
    lines.append(f"Priority {settings.get('policy')}, cleaning `{settings.get('cleaning')}`{options}.\n")
    lines.extend(targets(runs))
    for trace in dict.fromkeys(runs["trace"]):
        _trace_section(trace, runs[runs["trace"] == trace], lines)
    plot = bars(out, runs)
    if plot:
        lines.append("## Slowdowns\n")
        lines.append(plot)
    summary = virtual_summary(runs)
    if not summary.empty:
        lines.append("## The virtual predictor p(1 + U(-x, x))\n")
        lines.append("Mean over seeds (x = 0 is exact: one run). `prediction_error` is the mean absolute relative "
                     "error of the finished runs' estimates (about x/2, minus the walltime cap).\n")
        lines.append(md_table(summary, VIRTUAL_FORMATS))
        lines.append("")
        lines.append(virtual_plot(out, summary))
    atomic_write_text(out / "summary_pv_easy.csv", summary.to_csv(index=False))
