"""Report of an offline-tuning campaign (``kind = "offline"``).

Per week, AvgWait and MaxWait of every (Pr, Pb, Theta) are divided by the
baseline's (EASY-FCFS-FCFS, no threshold) of the same half and week.  A week
where the baseline's value is 0 gives 1 if the config's is 0 too, else no
ratio (NaN, counted as ``undefined_weeks`` and left out of the mean and
deciles).  ``summary_offline.csv`` holds, per half and config, the mean and
the deciles d1..d9 of both ratios; the *best training pair* is the config
with the lowest mean relative AvgWait on the training half (ties: lower mean
relative MaxWait, then name), reported with its test figures; so is the best
one among those whose mean relative MaxWait is <= 1.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from bftune.experiments.campaign.report.common import DECILES, md_table, pyplot, ratio, runs_or_note, save
from bftune.support.files import atomic_write_text

FILES = ("summary_offline.csv", "summary_best.csv")


def offline_relative(weeks: pd.DataFrame) -> pd.DataFrame:
    """``weeks.csv`` with the baseline's AvgWait/MaxWait of the same half and week, and the ratios."""
    base = weeks[weeks["baseline"].astype(bool)][["split", "week", "avg_wait", "max_wait"]]
    base = base.rename(columns={"avg_wait": "base_avg_wait", "max_wait": "base_max_wait"})
    df = weeks.merge(base, on=["split", "week"], how="left")
    df["rel_avg_wait"] = ratio(df["avg_wait"], df["base_avg_wait"])
    df["rel_max_wait"] = ratio(df["max_wait"], df["base_max_wait"])
    return df


def offline_summary(rel: pd.DataFrame) -> pd.DataFrame:
    """Per half and config: mean and deciles of the relative AvgWait and MaxWait."""
    rows = []
    keys = ["split", "config", "primary", "backfill", "threshold", "baseline"]
    for key, g in rel.groupby(keys, sort=False):
        row = dict(zip(keys, key))
        has_jobs = g["jobs"] > 0
        row["weeks"] = int(has_jobs.sum())
        for metric in ("rel_avg_wait", "rel_max_wait"):
            v = g[metric].to_numpy(dtype=float)
            v = v[~np.isnan(v)]
            row[f"{metric}_mean"] = float(v.mean()) if len(v) else math.nan
            qs = np.quantile(v, np.arange(1, 10) / 10) if len(v) else [math.nan] * 9
            for name, q in zip(DECILES, qs):
                row[f"{metric}_{name}"] = float(q)
        row["undefined_weeks"] = int((has_jobs & g["rel_avg_wait"].isna()).sum())
        row["mean_avg_wait"] = float(g["avg_wait"].mean())
        row["mean_max_wait"] = float(g["max_wait"].mean())
        rows.append(row)
    return pd.DataFrame(rows)


def best_configs(summary: pd.DataFrame) -> pd.DataFrame:
    """The best training configs (overall and with mean relative MaxWait <= 1) and their test figures."""
    splits = list(dict.fromkeys(summary["split"]))
    train_split = "train" if "train" in splits else (splits[0] if splits else None)
    if train_split is None:
        return pd.DataFrame()
    train = summary[summary["split"] == train_split].dropna(subset=["rel_avg_wait_mean"])
    rows = []
    for criterion, pool in (("lowest mean rel. AvgWait", train),
                            ("lowest mean rel. AvgWait with mean rel. MaxWait <= 1",
                             train[train["rel_max_wait_mean"] <= 1.0])):
        if pool.empty:
            continue
        best = pool.sort_values(["rel_avg_wait_mean", "rel_max_wait_mean", "config"]).iloc[0]
        for split in splits:
            match = summary[(summary["split"] == split) & (summary["config"] == best["config"])]
            if match.empty:
                continue
            m = match.iloc[0]
            rows.append({"criterion": criterion, "config": best["config"], "selected_on": train_split,
                         "split": split, "rel_avg_wait_mean": m["rel_avg_wait_mean"],
                         "rel_avg_wait_d1": m["rel_avg_wait_d1"], "rel_avg_wait_d5": m["rel_avg_wait_d5"],
                         "rel_avg_wait_d9": m["rel_avg_wait_d9"], "rel_max_wait_mean": m["rel_max_wait_mean"],
                         "rel_max_wait_d1": m["rel_max_wait_d1"], "rel_max_wait_d5": m["rel_max_wait_d5"],
                         "rel_max_wait_d9": m["rel_max_wait_d9"], "weeks": m["weeks"]})
    return pd.DataFrame(rows)


def _plot_offline_scatter(summary: pd.DataFrame, best: pd.DataFrame, path: Path) -> None:
    plt = pyplot()
    splits = list(dict.fromkeys(summary["split"]))
    thresholds = list(dict.fromkeys(summary["threshold"]))
    cmap = plt.get_cmap("viridis", max(len(thresholds), 2))
    fig, axes = plt.subplots(1, len(splits), figsize=(6.2 * len(splits), 5.2), squeeze=False)
    best_name = best.iloc[0]["config"] if not best.empty else None
    for ax, split in zip(axes[0], splits):
        s = summary[summary["split"] == split]
        for i, th in enumerate(thresholds):
            g = s[s["threshold"] == th]
            x, y = g["rel_avg_wait_mean"], g["rel_max_wait_mean"]
            xerr = np.vstack([(x - g["rel_avg_wait_d1"]).clip(lower=0), (g["rel_avg_wait_d9"] - x).clip(lower=0)])
            yerr = np.vstack([(y - g["rel_max_wait_d1"]).clip(lower=0), (g["rel_max_wait_d9"] - y).clip(lower=0)])
            ax.errorbar(x, y, xerr=xerr, yerr=yerr, fmt="none", ecolor=cmap(i), alpha=0.25, elinewidth=0.6,
                        capsize=0)
            ax.plot(x, y, "o", ms=4, color=cmap(i), mec="white", mew=0.4, label=f"threshold {th}", zorder=3)
        ax.axvline(1.0, color="grey", lw=0.8, ls="--")
        ax.axhline(1.0, color="grey", lw=0.8, ls="--")
        base = s[s["baseline"].astype(bool)]
        if not base.empty:
            ax.plot(base["rel_avg_wait_mean"], base["rel_max_wait_mean"], "k*", ms=12, label="EASY-FCFS-FCFS",
                    zorder=4)
        if best_name is not None:
            b = s[s["config"] == best_name]
            if not b.empty:
                ax.plot(b["rel_avg_wait_mean"], b["rel_max_wait_mean"], "rs", ms=9, mfc="none", mew=1.5,
                        label=f"best on training: {best_name}", zorder=5)
        ax.set_xlabel("AvgWait / AvgWait(EASY-FCFS-FCFS), mean over weeks (bars: d1-d9)")
        ax.set_ylabel("MaxWait / MaxWait(EASY-FCFS-FCFS), mean over weeks (bars: d1-d9)")
        ax.set_title(f"{split} half: {s['weeks'].max()} resampled weeks")
        ax.legend(fontsize=7, loc="best")
    save(fig, path)


def _plot_offline_heatmaps(summary: pd.DataFrame, path: Path) -> None:
    plt = pyplot()
    splits = list(dict.fromkeys(summary["split"]))
    thresholds = list(dict.fromkeys(summary["threshold"]))
    policies = list(dict.fromkeys(summary["primary"]))
    fig, axes = plt.subplots(len(splits), len(thresholds), figsize=(3.0 * len(thresholds), 3.0 * len(splits)),
                             squeeze=False)
    values = summary["rel_avg_wait_mean"].to_numpy(dtype=float)
    finite = values[np.isfinite(values)]
    vmin, vmax = (float(finite.min()), float(finite.max())) if len(finite) else (0.0, 2.0)
    im = None
    for i, split in enumerate(splits):
        for j, th in enumerate(thresholds):
            ax = axes[i][j]
            g = summary[(summary["split"] == split) & (summary["threshold"] == th)]
            grid = g.pivot_table(index="primary", columns="backfill", values="rel_avg_wait_mean", aggfunc="first")
            grid = grid.reindex(index=policies, columns=policies)
            im = ax.imshow(grid.to_numpy(dtype=float), cmap="RdYlGn_r", vmin=vmin, vmax=vmax)
            for a in range(len(policies)):
                for b in range(len(policies)):
                    v = grid.iat[a, b]
                    if np.isfinite(v):
                        ax.text(b, a, f"{v:.2f}", ha="center", va="center", fontsize=5.5)
            ax.set_xticks(range(len(policies)), policies, rotation=90, fontsize=6)
            ax.set_yticks(range(len(policies)), policies, fontsize=6)
            ax.set_title(f"{split}, threshold {th}", fontsize=8)
            if j == 0:
                ax.set_ylabel("primary Pr", fontsize=7)
            if i == len(splits) - 1:
                ax.set_xlabel("backfill Pb", fontsize=7)
    if im is not None:
        fig.colorbar(im, ax=axes, shrink=0.6, label="mean AvgWait / AvgWait(EASY-FCFS-FCFS)")
    save(fig, path)


def write(out: Path, meta: dict, lines: list[str]) -> None:
    """The offline sections of ``report.md``, its plots, ``summary_offline.csv`` and ``summary_best.csv``."""
    weeks = runs_or_note(out, "weeks", lines)
    if weeks is None:
        return
    rel = offline_relative(weeks)
    if rel["base_avg_wait"].isna().all():
        lines.append("**The baseline (EASY-FCFS-FCFS) has no stored run: relative metrics are undefined.**\n")
    summary = offline_summary(rel)
    best = best_configs(summary)
    atomic_write_text(out / "summary_offline.csv", summary.to_csv(index=False))
    atomic_write_text(out / "summary_best.csv", best.to_csv(index=False))
    settings = meta.get("settings", {})
    policies, thresholds = settings.get("policies", []), settings.get("thresholds", [])
    lines.append(f"Offline tuning of EASY-Pr-Pb: {len(policies)} policies "
                 f"({', '.join(policies)}), thresholds {', '.join(thresholds)}, "
                 f"{settings.get('weeks')} resampled weeks per half, each week simulated alone from an empty machine. "
                 f"Ratios are per week against {settings.get('baseline')} of the same week (mean and deciles over "
                 "weeks; lower is better).\n")
    lines.append("## Best training configuration and its test performance\n")
    if best.empty:
        lines.append("No configuration has defined ratios on the training half.\n")
    else:
        lines.append(md_table(best, {"weeks": "{:.0f}"}) + "\n")
    lines.append("![AvgWait vs MaxWait](plots/avgwait_maxwait.png)\n")
    lines.append("![Mean relative AvgWait per pair](plots/pairs_heatmap.png)\n")
    cols = ["config", "weeks", "rel_avg_wait_mean", "rel_avg_wait_d1", "rel_avg_wait_d5", "rel_avg_wait_d9",
            "rel_max_wait_mean", "rel_max_wait_d1", "rel_max_wait_d5", "rel_max_wait_d9", "undefined_weeks"]
    splits = list(dict.fromkeys(summary["split"]))
    for split in splits:
        s = summary[summary["split"] == split].sort_values(["rel_avg_wait_mean", "rel_max_wait_mean", "config"])
        top = s.head(15)
        base = s[s["baseline"].astype(bool)]
        table = pd.concat([top, base[~base["config"].isin(top["config"])]])
        lines.append(f"## {split} half: the 15 best configurations by mean relative AvgWait\n")
        lines.append(f"(all {len(s)} in `summary_offline.csv`; the baseline row last)\n")
        lines.append(md_table(table[cols], {"weeks": "{:.0f}", "undefined_weeks": "{:.0f}"}) + "\n")
    _plot_offline_scatter(summary, best, out / "plots" / "avgwait_maxwait.png")
    _plot_offline_heatmaps(summary, out / "plots" / "pairs_heatmap.png")
