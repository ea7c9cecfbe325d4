"""Report of a classification campaign (``kind = "classification"``, docs/semantics/learning.md#classification).

Per trace and policy, every variant's AVGbsld and its relative improvement
over the ``base`` variant of the same trace and policy,
``(AVGbsld(base) - AVGbsld(v)) / AVGbsld(base)`` (positive = better; every
variant runs the same jobs, so this is also the relative improvement of the
final cumulative bsld); the cumulative bsld curves (one plot per trace and
policy, a line per variant); AVGbsld per reference class and per 30-day
month; kills and wasted processor-time; the classifier's quality (overall
table, per-week accuracy plot).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from bftune.experiments.campaign.report.common import HOUR, md_table, panels, pyplot, runs_or_note, save, section, slug
from bftune.support.files import atomic_write_text

FILES = ("summary_classification.csv",)

_VARIANT_STYLES = {"base": ("black", "--"), "rf": ("#d62728", "-"), "rf-no-safeguard": ("#ff7f0e", "-"),
                   "class-clairvoyant": ("#1f77b4", "-"), "runtime-clairvoyant": ("#2ca02c", "-")}


def classification_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Per run: AVGbsld, final cumulative bsld, relative improvement over ``base`` of the same trace and policy."""
    base = runs[runs["variant"] == "base"][["trace", "policy", "avg_bsld", "sum_bsld"]]
    base = base.rename(columns={"avg_bsld": "base_avg_bsld", "sum_bsld": "base_sum_bsld"})
    df = runs.merge(base, on=["trace", "policy"], how="left")
    b = df["base_avg_bsld"].astype(float)
    df["rel_improvement"] = (b - df["avg_bsld"].astype(float)) / b.where(b > 0)
    cols = ["trace", "policy", "variant", "jobs", "avg_bsld", "sum_bsld", "base_avg_bsld", "rel_improvement",
            "avg_wait", "max_wait", "killed_jobs", "killed_runs", "safeguard_kills", "wasted_work", "wasted_share",
            "label_agreement"]
    return df[[c for c in cols if c in df.columns]]


def _plot_cumulative_bsld(curves: pd.DataFrame, variants: list[str], title: str, path: Path) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.8))
    for v in variants:
        g = curves[curves["variant"] == v]
        if g.empty:
            continue
        colour, ls = _VARIANT_STYLES.get(v, (None, "-"))
        final = g["cumulative_bsld"].iloc[-1]
        ax.plot(g["day"], g["cumulative_bsld"], color=colour, ls=ls, lw=1.4, label=f"{v} (final {final:,.0f})")
    ax.set_xlabel("days since the first submission (jobs counted at completion)")
    ax.set_ylabel("cumulative bounded slowdown")
    ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.set_title(title)
    ax.legend(fontsize=8)
    save(fig, path)


def _plot_monthly(months: pd.DataFrame, variants: list[str], policies: list[str], title: str, path: Path) -> None:
    plt, fig, axes = panels(len(policies), 2, 6.5, 3.4, 0.6)
    for ax, policy in zip(axes, policies):
        for v in variants:
            g = months[(months["policy"] == policy) & (months["variant"] == v)]
            if g.empty:
                continue
            colour, ls = _VARIANT_STYLES.get(v, (None, "-"))
            ax.plot(g["month"], g["avg_bsld"], color=colour, ls=ls, lw=1.2, marker="o", ms=2.5, label=v)
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(plt.NullFormatter())
        ax.xaxis.set_major_locator(plt.MaxNLocator(integer=True))
        ax.set_title(policy, fontsize=9)
        ax.set_xlabel("30-day month since the first submission", fontsize=7)
        ax.set_ylabel("AVGbsld (log)", fontsize=7)
        ax.tick_params(labelsize=7)
    drawn = [ax for ax in axes if ax.lines]  # a trace run with only some policies leaves panels empty
    if drawn:
        drawn[0].legend(fontsize=7)
    fig.suptitle(title)
    save(fig, path)


def _plot_weekly_accuracy(quality: pd.DataFrame, title: str, path: Path) -> bool:
    weeks = quality[(quality["scope"] == "week") & quality["accuracy"].notna()]
    if weeks.empty:
        return False
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.2))
    for (policy, variant), g in weeks.groupby(["policy", "variant"], sort=False):
        ax.plot(g["week"], g["accuracy"], lw=1.0, ls="-" if variant == "rf" else ":", label=f"{policy}, {variant}")
    ax.set_ylim(0, 1)
    ax.xaxis.set_major_locator(plt.MaxNLocator(integer=True))
    ax.set_xlabel("week of submission")
    ax.set_ylabel("accuracy (labelled finished jobs of the week)")
    ax.set_title(title)
    ax.legend(fontsize=7, ncol=2)
    save(fig, path)
    return True


def write(out: Path, meta: dict, lines: list[str]) -> None:
    """The classification sections of ``report.md``, its plots and ``summary_classification.csv``."""
    runs = runs_or_note(out, "runs", lines)
    if runs is None:
        return
    settings = meta.get("settings", {})
    traces = [t for t in settings.get("traces", []) if (runs["trace"] == t).any()]
    policies = [p for p in settings.get("policies", []) if (runs["policy"] == p).any()]
    variants = [v for v in settings.get("variants", []) if (runs["variant"] == v).any()]
    summary = classification_summary(runs)
    atomic_write_text(out / "summary_classification.csv", summary.to_csv(index=False))
    lines.append(f"Small/large runtime classification with kill-and-requeue on whole traces (no resampling): "
                 f"{len(traces)} trace(s), policies {', '.join(policies)}, variants {', '.join(variants)}; "
                 f"features {settings.get('features')}, threshold {settings.get('threshold')}, "
                 f"forest seed {settings.get('forest_seed')}, tau = {meta.get('tau')} s. "
                 "Relative improvement = (AVGbsld(base) - AVGbsld(variant)) / AVGbsld(base) for the same trace and "
                 "policy: positive = better than plain EASY with that policy.\n")
    if summary["base_avg_bsld"].isna().any():
        lines.append("**Some runs have no stored `base` run of their trace and policy: no improvement for them.**\n")
    if "calendar_warning" in runs.columns:
        warned = runs[runs["calendar_warning"].notna() & (runs["calendar_warning"].astype(str) != "")]
        for (trace, warning), g in warned.groupby(["trace", "calendar_warning"], sort=False):
            lines.append(f"**Calendar features of {len(g)} run(s) on {trace}: {warning}** (learning/features.py, "
                         "\"Clock\")\n")

    lines.append("## Final AVGbsld and relative improvement over base\n")
    lines.append("AVGbsld (relative improvement over base; the final cumulative bsld is AVGbsld x jobs).\n")
    wide = []
    for trace in traces:
        for policy in policies:
            g = summary[(summary["trace"] == trace) & (summary["policy"] == policy)].set_index("variant")
            if g.empty:
                continue
            row = {"trace": trace, "policy": policy, "jobs": int(g["jobs"].iloc[0])}
            for v in variants:
                if v not in g.index:
                    row[v] = "-"
                    continue
                r = g.loc[v]
                rel = r["rel_improvement"]
                row[v] = f"{r['avg_bsld']:.2f}" + ("" if v == "base" or pd.isna(rel) else f" ({100 * rel:+.1f}%)")
            wide.append(row)
    lines.append(md_table(pd.DataFrame(wide)) + "\n")

    view = _View(summary, traces, policies, variants)
    for table, heading, intro, write_section in _SECTIONS:
        df = section(out, table, lines, heading, intro.format(curve_points=settings.get("curve_points", 500)))
        if df is not None:
            write_section(out, df, view, lines)


@dataclass
class _View:
    """What every section shows: the summary, and the traces, policies and variants that have runs."""

    summary: pd.DataFrame
    traces: list[str]
    policies: list[str]
    variants: list[str]


def _curves_section(out: Path, curves: pd.DataFrame, view: _View, lines: list[str]) -> None:
    variants = view.variants
    for trace in view.traces:
        for policy in view.policies:
            g = curves[(curves["trace"] == trace) & (curves["policy"] == policy)]
            if g.empty:
                continue
            name = f"cumbsld_{slug(trace)}_{slug(policy)}.png"
            _plot_cumulative_bsld(g, variants, f"{trace}, EASY-{policy}: cumulative bsld", out / "plots" / name)
            lines.append(f"![cumulative bsld, {trace}, {policy}](plots/{name})\n")


def _classes_section(out: Path, classes: pd.DataFrame, view: _View, lines: list[str]) -> None:
    summary = view.summary
    counts = classes[classes["class"] != "all"].drop_duplicates(["trace", "class"])
    for trace in view.traces:
        c = counts[counts["trace"] == trace].set_index("class")["jobs"]
        lines.append(f"- {trace}: " + ", ".join(f"{k} {int(c.get(k, 0))} jobs"
                                               for k in ("small", "large", "unlabelled")))
    lines.append("")
    piv = classes.pivot_table(index=["trace", "policy", "variant"], columns="class", values="avg_bsld",
                              aggfunc="first", sort=False)
    kil = classes.pivot_table(index=["trace", "policy", "variant"], columns="class", values="killed_jobs",
                              aggfunc="first", sort=False)
    rows = []
    for (trace, policy, variant), r in piv.iterrows():
        agree = summary[(summary["trace"] == trace) & (summary["policy"] == policy)
                        & (summary["variant"] == variant)]["label_agreement"]
        rows.append({"trace": trace, "policy": policy, "variant": variant,
                     "small": r.get("small"), "large": r.get("large"), "unlabelled": r.get("unlabelled"),
                     "all": r.get("all"),
                     "killed small": kil.loc[(trace, policy, variant)].get("small"),
                     "killed large": kil.loc[(trace, policy, variant)].get("large"),
                     "label_agreement": agree.iloc[0] if len(agree) else math.nan})
    lines.append(md_table(pd.DataFrame(rows), {"small": "{:.2f}", "large": "{:.2f}", "unlabelled": "{:.2f}",
                                               "all": "{:.2f}", "killed small": "{:.0f}",
                                               "killed large": "{:.0f}"}) + "\n")


def _kills_section(out: Path, runs: pd.DataFrame, view: _View, lines: list[str]) -> None:
    k = view.summary.copy()
    k["wasted_proc_h"] = k["wasted_work"] / HOUR
    k["wasted_%"] = 100 * k["wasted_share"]
    cols = ["trace", "policy", "variant", "killed_jobs", "killed_runs", "safeguard_kills", "wasted_proc_h", "wasted_%"]
    lines.append(md_table(k[cols], {"killed_jobs": "{:.0f}", "killed_runs": "{:.0f}", "safeguard_kills": "{:.0f}",
                                    "wasted_proc_h": "{:.1f}", "wasted_%": "{:.2f}"}) + "\n")


def _months_section(out: Path, months: pd.DataFrame, view: _View, lines: list[str]) -> None:
    variants = view.variants
    for trace in view.traces:
        g = months[months["trace"] == trace]
        if g.empty:
            continue
        name = f"monthly_{slug(trace)}.png"
        _plot_monthly(g, variants, view.policies, f"{trace}: AVGbsld per 30-day month", out / "plots" / name)
        lines.append(f"### {trace}\n")
        lines.append(f"![monthly AVGbsld, {trace}](plots/{name})\n")
        piv = g.pivot_table(index=["policy", "month"], columns="variant", values="avg_bsld", aggfunc="first",
                            sort=False).reindex(columns=variants)
        jobs = g.drop_duplicates(["policy", "month"]).set_index(["policy", "month"])[["start_day", "jobs"]]
        table = jobs.join(piv).reset_index()
        lines.append(md_table(table, {"start_day": "{:.0f}", **{v: "{:.2f}" for v in variants}}) + "\n")


def _quality_section(out: Path, quality: pd.DataFrame, view: _View, lines: list[str]) -> None:
    ov = quality[quality["scope"] == "overall"]
    cols = ["trace", "policy", "variant", "n", "accuracy", "precision", "recall", "false_small_rate",
            "false_large_rate", "predicted_small"]
    lines.append(md_table(ov[cols], {"n": "{:.0f}", "predicted_small": "{:.0f}"}) + "\n")
    for trace in view.traces:
        name = f"weekly_accuracy_{slug(trace)}.png"
        if _plot_weekly_accuracy(quality[quality["trace"] == trace], f"{trace}: classifier accuracy per week",
                                 out / "plots" / name):
            lines.append(f"![weekly accuracy, {trace}](plots/{name})\n")


#: The sections after the final AVGbsld table, in order: (table, heading, introduction, writer).
_SECTIONS = (
    ("curves", "Cumulative bounded slowdown over time",
     "Sum of bsld of the jobs completed by each instant (sampled at {curve_points} instants per run; the last "
     "point is the total).", _curves_section),
    ("classes", "AVGbsld per class",
     "Reference classes, the same jobs in every variant of a trace: small iff the runtime is below "
     "the median runtime of the jobs that ended in the previous 7 days of the trace replayed without "
     "waiting (every job ending at r_j + p_j); unlabelled: no such job (the trace's first jobs). "
     "`label_agreement`: share of jobs where this class equals the run's own classifier label.", _classes_section),
    ("runs", "Killed jobs and wasted processor-time",
     "Killed jobs: jobs killed at least once (each was requeued and rerun); killed runs: kills; wasted: "
     "processor-time of the killed runs, in processor-hours and as a share of the useful work "
     "(processor-time of the final runs).", _kills_section),
    ("months", "Monthly AVGbsld",
     "30-day months from the trace's first submission; a job counts in the month of its "
     "submission. Columns: AVGbsld per variant.", _months_section),
    ("classification", "Classification quality",
     "The classifier's own report for the rf variants: labelled finished jobs, "
     "small = positive class; its labels use the divider of the run's own schedule. "
     "false small = share of truly large jobs classified small (the ones the safeguard kills); "
     "false large = share of truly small jobs classified large. Per-week rows in "
     "`classification.csv`.", _quality_section),
)
