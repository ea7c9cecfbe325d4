"""Campaign report: ``report.md`` + PNG plots + summary CSVs, from a campaign directory's tables alone.

Inputs (written by :func:`bftune.experiments.campaign.consolidate`):
``campaign.json`` (the config and the list of runs), ``runs.csv``, and
``weeks.csv`` (offline) or ``periods.csv`` + ``choices.csv`` (online) or
``classes.csv`` + ``months.csv`` + ``curves.csv`` + ``classification.csv``
(classification);
``failures/*.json`` is listed if present.  ``bftune campaign --report-only
DIR`` calls :func:`build_report` only.

Offline tuning: per week, AvgWait and MaxWait of every (Pr, Pb, Theta) are
divided by the baseline's (EASY-FCFS-FCFS, no threshold) of the same half
and week.  A week where the baseline's value is 0 gives 1 if the config's is
0 too, else no ratio (NaN, counted as ``undefined_weeks`` and left out of
the mean and deciles).  ``summary_offline.csv`` holds, per half and config,
the mean and the deciles d1..d9 of both ratios; the *best training pair* is
the config with the lowest mean relative AvgWait on the training half (ties:
lower mean relative MaxWait, then name), reported with its test figures;
so is the best one among those whose mean relative MaxWait is <= 1.

Classification (small/large, SPEC section 5): per trace and policy, every
variant's AVGbsld and its relative improvement over the ``base`` variant of
the same trace and policy, ``(AVGbsld(base) - AVGbsld(v)) / AVGbsld(base)``
(positive = better; every variant runs the same jobs, so this is also the
relative improvement of the final cumulative bsld); the cumulative bsld
curves (one plot per trace and policy, a line per variant); AVGbsld per
reference class and per 30-day month; kills and wasted processor-time; the
classifier's quality (overall table, per-week accuracy plot).

Online selection: per strategy, the relative change of total waiting time
against the baseline (EASY(FCFS, 40 h)) summed over the resamples where
both ran: ``(sum_r W(s, r) - sum_r W(base, r)) / sum_r W(base, r)``; MaxWait
as the mean over resamples of each run's MaxWait, with its relative change
computed the same way.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd

from bftune.files import atomic_write_text

DECILES = [f"d{i}" for i in range(1, 10)]
HOUR = 3600.0


def _read(out: Path, name: str) -> pd.DataFrame | None:
    path = out / f"{name}.csv"
    if not path.exists():
        return None
    return pd.read_csv(path, keep_default_na=False, na_values=[""])


def _failures(out: Path) -> list[dict]:
    recs = []
    for p in sorted((out / "failures").glob("*.json")):
        try:
            recs.append(json.loads(p.read_text()))
        except (OSError, ValueError):
            continue
    return recs


def _ratio(a: pd.Series, b: pd.Series) -> pd.Series:
    a = a.astype(float)
    b = b.astype(float)
    r = a / b.where(b > 0)
    return r.mask((b == 0) & (a == 0), 1.0)


# --- markdown helpers -------------------------------------------------------------------


def _fmt(v, spec: str = "{:.3f}") -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else ""
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return spec.format(float(v))
    return str(v)


def md_table(df: pd.DataFrame, formats: dict[str, str] | None = None) -> str:
    formats = formats or {}
    cols = list(df.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for _, row in df.iterrows():
        lines.append("| " + " | ".join(_fmt(row[c], formats.get(c, "{:.3f}")) for c in cols) + " |")
    return "\n".join(lines)


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp.png")
    fig.savefig(tmp, dpi=110, bbox_inches="tight", metadata={"Software": None})
    os.replace(tmp, path)
    fig.clf()
    _pyplot().close(fig)


# --- offline ------------------------------------------------------------------------------


def offline_relative(weeks: pd.DataFrame) -> pd.DataFrame:
    """``weeks.csv`` with the baseline's AvgWait/MaxWait of the same half and week, and the ratios."""
    base = weeks[weeks["baseline"].astype(bool)][["split", "week", "avg_wait", "max_wait"]]
    base = base.rename(columns={"avg_wait": "base_avg_wait", "max_wait": "base_max_wait"})
    df = weeks.merge(base, on=["split", "week"], how="left")
    df["rel_avg_wait"] = _ratio(df["avg_wait"], df["base_avg_wait"])
    df["rel_max_wait"] = _ratio(df["max_wait"], df["base_max_wait"])
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
    plt = _pyplot()
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
    _save(fig, path)


def _plot_offline_heatmaps(summary: pd.DataFrame, path: Path) -> None:
    plt = _pyplot()
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
    _save(fig, path)


def _offline_report(out: Path, meta: dict, lines: list[str]) -> None:
    weeks = _read(out, "weeks")
    if weeks is None or weeks.empty:
        lines.append("No finished run yet: nothing to report.")
        return
    rel = offline_relative(weeks)
    if rel["base_avg_wait"].isna().all():
        lines.append("**The baseline (EASY-FCFS-FCFS) has no stored run: relative metrics are undefined.**\n")
    summary = offline_summary(rel)
    best = best_configs(summary)
    atomic_write_text(out / "summary_offline.csv", summary.to_csv(index=False))
    atomic_write_text(out / "summary_best.csv", best.to_csv(index=False))
    settings = meta.get("settings", {})
    lines.append(f"Offline tuning of EASY-Pr-Pb: {len(settings.get('policies', []))} policies "
                 f"({', '.join(settings.get('policies', []))}), thresholds {', '.join(settings.get('thresholds', []))}, "
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


# --- online -------------------------------------------------------------------------------


def online_summary(runs: pd.DataFrame, choices: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per strategy: relative change of total wait and of mean MaxWait against the baseline."""
    base = runs[runs["baseline"].astype(bool)][["resample", "total_wait", "max_wait", "avg_wait"]]
    base = base.rename(columns={"total_wait": "base_total_wait", "max_wait": "base_max_wait",
                                "avg_wait": "base_avg_wait"})
    rows = []
    for strategy, g in runs.groupby("strategy", sort=False):
        m = g.merge(base, on="resample", how="inner")
        bw = m["base_total_wait"].sum()
        bm = m["base_max_wait"].mean()
        row = {"strategy": strategy, "family": g["family"].iloc[0], "baseline": bool(g["baseline"].iloc[0]),
               "resamples": int(len(g)), "paired_resamples": int(len(m)),
               "total_wait": float(g["total_wait"].sum()),
               "rel_total_wait": float((m["total_wait"].sum() - bw) / bw) if len(m) and bw > 0 else math.nan,
               "mean_avg_wait": float(g["avg_wait"].mean()), "mean_max_wait": float(g["max_wait"].mean()),
               "max_max_wait": float(g["max_wait"].max()),
               "rel_max_wait": float(m["max_wait"].mean() / bm - 1) if len(m) and bm > 0 else math.nan}
        if choices is not None and not choices.empty:
            c = choices[choices["strategy"] == strategy]
            if len(c):
                share = c["policy"].value_counts(normalize=True, sort=False)
                share = share.sort_values(ascending=False, kind="stable")
                row["top_policy"] = f"{share.index[0]} ({100 * share.iloc[0]:.0f}%)"
        rows.append(row)
    df = pd.DataFrame(rows)
    if "top_policy" not in df.columns:
        df["top_policy"] = ""
    return df


_FAMILY_COLOURS = {"fixed": "#9e9e9e", "random": "#8c564b", "full": "#1f77b4", "noisy": "#2ca02c",
                   "bandit": "#d62728"}


def _plot_online_bars(summary: pd.DataFrame, path: Path) -> None:
    plt = _pyplot()
    s = summary.dropna(subset=["rel_total_wait"]).sort_values("rel_total_wait", ascending=False)
    fig, ax = plt.subplots(figsize=(7.5, 0.32 * len(s) + 1.5))
    colours = [("black" if b else _FAMILY_COLOURS.get(f, "#444")) for f, b in zip(s["family"], s["baseline"])]
    ax.barh(s["strategy"].astype(str), 100 * s["rel_total_wait"], color=colours)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_xlabel("change of total waiting time vs the baseline, summed over resamples (%)")
    ax.set_title("Online selection: relative total wait per strategy (lower is better)")
    _save(fig, path)


def _plot_online_shares(choices: pd.DataFrame, runs: pd.DataFrame, candidates: list[str], path: Path) -> bool:
    plt = _pyplot()
    sel = runs[runs["family"] != "fixed"]
    strategies = list(dict.fromkeys(sel["strategy"]))
    strategies = [s for s in strategies if (choices["strategy"] == s).any()]
    if not strategies:
        return False
    policies = list(dict.fromkeys(list(candidates) + sorted(set(choices["policy"]) - set(candidates))))
    cmap = plt.get_cmap("tab20", max(len(policies), 2))
    colours = {p: cmap(i) for i, p in enumerate(policies)}
    ncol = min(4, len(strategies))
    nrow = math.ceil(len(strategies) / ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.2 * nrow + 0.8), squeeze=False,
                             constrained_layout=True)
    for ax in axes.flat[len(strategies):]:
        ax.axis("off")
    for ax, strategy in zip(axes.flat, strategies):
        c = choices[choices["strategy"] == strategy]
        counts = c.groupby(["start", "policy"]).size().unstack(fill_value=0).reindex(columns=policies, fill_value=0)
        share = counts.div(counts.sum(axis=1), axis=0)
        days = share.index.to_numpy(dtype=float) / 86400
        ax.stackplot(days, share.to_numpy().T, colors=[colours[p] for p in policies], step="post")
        ax.set_xlim(days.min(), days.max() if len(days) > 1 else days.min() + 1)
        ax.set_ylim(0, 1)
        ax.set_title(strategy, fontsize=9)
        ax.set_xlabel("days since start", fontsize=7)
        ax.set_ylabel("share of resamples", fontsize=7)
        ax.tick_params(labelsize=7)
    handles = [plt.Rectangle((0, 0), 1, 1, color=colours[p]) for p in policies]
    fig.legend(handles, policies, loc="outside lower center", ncol=min(len(policies), 12), fontsize=7)
    fig.suptitle("Share of each policy chosen per period, over resamples")
    _save(fig, path)
    return True


def _plot_online_cumulative(periods: pd.DataFrame, runs: pd.DataFrame, path: Path) -> None:
    plt = _pyplot()
    fams = runs.drop_duplicates("strategy").set_index("strategy")[["family", "baseline"]]
    tot = periods.groupby(["strategy", "week"], sort=False)["sum_wait"].sum().unstack(0).sort_index().fillna(0.0)
    cum = tot.cumsum() / HOUR
    cum.index = cum.index + 1  # value at the end of each week
    cum.loc[0] = 0.0
    cum = cum.sort_index()
    fig, ax = plt.subplots(figsize=(8, 5))
    for strategy in dict.fromkeys(runs["strategy"]):
        if strategy not in cum.columns:
            continue
        fam, is_base = fams.loc[strategy, "family"], bool(fams.loc[strategy, "baseline"])
        if is_base:
            ax.plot(cum.index, cum[strategy], color="black", lw=2, ls="--", label=f"{strategy} (baseline)")
        elif fam == "fixed":
            ax.plot(cum.index, cum[strategy], color="#bdbdbd", lw=0.8)
        else:
            period = str(strategy).split("/")[-1]
            ax.plot(cum.index, cum[strategy], color=_FAMILY_COLOURS.get(fam, "#444"), lw=1.4,
                    ls="-" if period.endswith("d") else ":",
                    label=strategy)
    ax.plot([], [], color="#bdbdbd", lw=0.8, label="fixed policies")
    ax.set_xlabel("weeks since the start of the resampled trace (jobs counted by submission week)")
    ax.set_ylabel("cumulative waiting time, summed over resamples (hours)")
    ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.set_title("Cumulative waiting time over time")
    ax.legend(fontsize=7)
    _save(fig, path)


def _online_report(out: Path, meta: dict, lines: list[str]) -> None:
    runs = _read(out, "runs")
    if runs is None or runs.empty:
        lines.append("No finished run yet: nothing to report.")
        return
    choices = _read(out, "choices")
    periods = _read(out, "periods")
    summary = online_summary(runs, choices)
    atomic_write_text(out / "summary_online.csv", summary.to_csv(index=False))
    settings = meta.get("settings", {})
    lines.append(f"Online policy selection on {settings.get('resamples')} resampled traces of "
                 f"{settings.get('weeks')} weeks, threshold {settings.get('threshold')}, periods "
                 f"{', '.join(settings.get('periods', []))}; baseline {settings.get('baseline')}. "
                 "Relative change of the total waiting time summed over resamples (negative = less waiting); "
                 "MaxWait: mean over resamples of each run's maximum wait.\n")
    table = summary.copy()
    table["rel_total_wait_%"] = 100 * table["rel_total_wait"]
    table["rel_max_wait_%"] = 100 * table["rel_max_wait"]
    table["total_wait_h"] = table["total_wait"] / HOUR
    table["mean_avg_wait_h"] = table["mean_avg_wait"] / HOUR
    table["mean_max_wait_h"] = table["mean_max_wait"] / HOUR
    table["max_max_wait_h"] = table["max_max_wait"] / HOUR
    cols = ["strategy", "family", "resamples", "rel_total_wait_%", "total_wait_h", "mean_avg_wait_h",
            "mean_max_wait_h", "rel_max_wait_%", "max_max_wait_h", "top_policy"]
    fmt = {"rel_total_wait_%": "{:+.2f}", "rel_max_wait_%": "{:+.2f}", "total_wait_h": "{:.0f}",
           "mean_avg_wait_h": "{:.3f}", "mean_max_wait_h": "{:.1f}", "max_max_wait_h": "{:.1f}"}
    lines.append("## Strategies\n")
    lines.append(md_table(table[cols], fmt) + "\n")
    lines.append("![Relative total wait per strategy](plots/relative_wait.png)\n")
    _plot_online_bars(summary, out / "plots" / "relative_wait.png")
    if choices is not None and not choices.empty:
        if _plot_online_shares(choices, runs, settings.get("candidates", []), out / "plots" / "policy_share.png"):
            lines.append("## Policies chosen over time\n")
            lines.append("![Share of chosen policies over time](plots/policy_share.png)\n")
    if periods is not None and not periods.empty:
        lines.append("## Cumulative waiting time\n")
        lines.append("![Cumulative wait over time](plots/cumulative_wait.png)\n")
        _plot_online_cumulative(periods, runs, out / "plots" / "cumulative_wait.png")


# --- classification -----------------------------------------------------------------------

_VARIANT_STYLES = {"base": ("black", "--"), "rf": ("#d62728", "-"), "rf-no-safeguard": ("#ff7f0e", "-"),
                   "class-clairvoyant": ("#1f77b4", "-"), "runtime-clairvoyant": ("#2ca02c", "-")}


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in str(text))


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
    plt = _pyplot()
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
    _save(fig, path)


def _plot_monthly(months: pd.DataFrame, variants: list[str], policies: list[str], title: str, path: Path) -> None:
    plt = _pyplot()
    ncol = min(2, len(policies))
    nrow = math.ceil(len(policies) / ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(6.5 * ncol, 3.4 * nrow + 0.6), squeeze=False,
                             constrained_layout=True)
    for ax in axes.flat[len(policies):]:
        ax.axis("off")
    for ax, policy in zip(axes.flat, policies):
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
    axes.flat[0].legend(fontsize=7)
    fig.suptitle(title)
    _save(fig, path)


def _plot_weekly_accuracy(quality: pd.DataFrame, title: str, path: Path) -> bool:
    weeks = quality[(quality["scope"] == "week") & quality["accuracy"].notna()]
    if weeks.empty:
        return False
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.2))
    for (policy, variant), g in weeks.groupby(["policy", "variant"], sort=False):
        ax.plot(g["week"], g["accuracy"], lw=1.0, ls="-" if variant == "rf" else ":", label=f"{policy}, {variant}")
    ax.set_ylim(0, 1)
    ax.xaxis.set_major_locator(plt.MaxNLocator(integer=True))
    ax.set_xlabel("week of submission")
    ax.set_ylabel("accuracy (labelled finished jobs of the week)")
    ax.set_title(title)
    ax.legend(fontsize=7, ncol=2)
    _save(fig, path)
    return True


def _classification_report(out: Path, meta: dict, lines: list[str]) -> None:
    runs = _read(out, "runs")
    if runs is None or runs.empty:
        lines.append("No finished run yet: nothing to report.")
        return
    settings = meta.get("settings", {})
    traces = [t for t in settings.get("traces", []) if (runs["trace"] == t).any()]
    policies = [p for p in settings.get("policies", []) if (runs["policy"] == p).any()]
    variants = [v for v in settings.get("variants", []) if (runs["variant"] == v).any()]
    summary = classification_summary(runs)
    atomic_write_text(out / "summary_classification.csv", summary.to_csv(index=False))
    lines.append(f"Small/large runtime classification (SPEC section 5) on whole traces (no resampling): "
                 f"{len(traces)} trace(s), policies {', '.join(policies)}, variants {', '.join(variants)}; "
                 f"features {settings.get('features')}, threshold {settings.get('threshold')}, "
                 f"forest seed {settings.get('forest_seed')}, tau = {meta.get('tau')} s. "
                 "Relative improvement = (AVGbsld(base) - AVGbsld(variant)) / AVGbsld(base) for the same trace and "
                 "policy: positive = better than plain EASY with that policy.\n")
    if summary["base_avg_bsld"].isna().any():
        lines.append("**Some runs have no stored `base` run of their trace and policy: no improvement for them.**\n")

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

    curves = _read(out, "curves")
    if curves is not None and not curves.empty:
        lines.append("## Cumulative bounded slowdown over time\n")
        lines.append("Sum of bsld of the jobs completed by each instant (sampled at "
                     f"{settings.get('curve_points', 500)} instants per run; the last point is the total).\n")
        for trace in traces:
            for policy in policies:
                g = curves[(curves["trace"] == trace) & (curves["policy"] == policy)]
                if g.empty:
                    continue
                name = f"cumbsld_{_slug(trace)}_{_slug(policy)}.png"
                _plot_cumulative_bsld(g, variants, f"{trace}, EASY-{policy}: cumulative bsld", out / "plots" / name)
                lines.append(f"![cumulative bsld, {trace}, {policy}](plots/{name})\n")

    classes = _read(out, "classes")
    if classes is not None and not classes.empty:
        lines.append("## AVGbsld per class\n")
        lines.append("Reference classes, the same jobs in every variant of a trace: small iff the runtime is below "
                     "the median runtime of the jobs that ended in the previous 7 days of the trace replayed without "
                     "waiting (every job ending at r_j + p_j); unlabelled: no such job (the trace's first jobs). "
                     "`label_agreement`: share of jobs where this class equals the run's own classifier label.\n")
        counts = classes[classes["class"] != "all"].drop_duplicates(["trace", "class"])
        for trace in traces:
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

    lines.append("## Killed jobs and wasted processor-time\n")
    lines.append("Killed jobs: jobs killed at least once (each was requeued and rerun); killed runs: kills; wasted: "
                 "processor-time of the killed runs, in processor-hours and as a share of the useful work "
                 "(processor-time of the final runs).\n")
    k = summary.copy()
    k["wasted_proc_h"] = k["wasted_work"] / HOUR
    k["wasted_%"] = 100 * k["wasted_share"]
    cols = ["trace", "policy", "variant", "killed_jobs", "killed_runs", "safeguard_kills", "wasted_proc_h", "wasted_%"]
    lines.append(md_table(k[cols], {"killed_jobs": "{:.0f}", "killed_runs": "{:.0f}", "safeguard_kills": "{:.0f}",
                                    "wasted_proc_h": "{:.1f}", "wasted_%": "{:.2f}"}) + "\n")

    months = _read(out, "months")
    if months is not None and not months.empty:
        lines.append("## Monthly AVGbsld\n")
        lines.append(f"30-day months from the trace's first submission; a job counts in the month of its "
                     f"submission. Columns: AVGbsld per variant.\n")
        for trace in traces:
            g = months[months["trace"] == trace]
            if g.empty:
                continue
            name = f"monthly_{_slug(trace)}.png"
            _plot_monthly(g, variants, policies, f"{trace}: AVGbsld per 30-day month", out / "plots" / name)
            lines.append(f"### {trace}\n")
            lines.append(f"![monthly AVGbsld, {trace}](plots/{name})\n")
            piv = g.pivot_table(index=["policy", "month"], columns="variant", values="avg_bsld", aggfunc="first",
                                sort=False).reindex(columns=variants)
            jobs = g.drop_duplicates(["policy", "month"]).set_index(["policy", "month"])[["start_day", "jobs"]]
            table = jobs.join(piv).reset_index()
            lines.append(md_table(table, {"start_day": "{:.0f}", **{v: "{:.2f}" for v in variants}}) + "\n")

    quality = _read(out, "classification")
    if quality is not None and not quality.empty:
        lines.append("## Classification quality\n")
        lines.append("The classifier's own report (SPEC section 3) for the rf variants: labelled finished jobs, "
                     "small = positive class; its labels use the divider of the run's own schedule. "
                     "false small = share of truly large jobs classified small (the ones the safeguard kills); "
                     "false large = share of truly small jobs classified large. Per-week rows in "
                     "`classification.csv`.\n")
        ov = quality[quality["scope"] == "overall"]
        cols = ["trace", "policy", "variant", "n", "accuracy", "precision", "recall", "false_small_rate",
                "false_large_rate", "predicted_small"]
        lines.append(md_table(ov[cols], {"n": "{:.0f}", "predicted_small": "{:.0f}"}) + "\n")
        for trace in traces:
            name = f"weekly_accuracy_{_slug(trace)}.png"
            if _plot_weekly_accuracy(quality[quality["trace"] == trace], f"{trace}: classifier accuracy per week",
                                     out / "plots" / name):
                lines.append(f"![weekly accuracy, {trace}](plots/{name})\n")


# --- entry point --------------------------------------------------------------------------


def build_report(out_dir: str | os.PathLike[str], meta: dict) -> Path:
    """Write ``report.md`` (+ plots and summary CSVs) of a campaign directory; return its path.

    ``meta`` is the directory's ``campaign.json`` (read by the campaign's store).
    """
    out = Path(out_dir)
    runs = _read(out, "runs")
    n_done = 0 if runs is None else len(runs)
    n_total = len(meta.get("specs", []))
    failures = _failures(out)
    wl = meta.get("workload", {})
    kind = meta.get("kind")
    if kind == "classification":
        workload = "- workloads: " + ", ".join(f"`{t}`" for t in meta.get("settings", {}).get("trace_sources", []))
    else:
        workload = f"- workload: `{wl.get('trace')}`" + (f", m = {wl['procs']}" if wl.get("procs") else "")
    tables = {"offline": "`weeks.csv`, `summary_offline.csv`, `summary_best.csv`",
              "online": "`periods.csv`, `choices.csv`, `summary_online.csv`",
              "classification": "`classes.csv`, `months.csv`, `curves.csv`, `classification.csv`, "
                                "`summary_classification.csv`"}
    lines = [f"# Campaign report: {meta.get('name')} ({kind})\n",
             f"- config: `{meta.get('source')}`; seed {meta.get('seed')}; tau = {meta.get('tau')} s",
             workload,
             f"- runs: {n_done} of {n_total} stored" + (f", **{len(failures)} failed**" if failures else ""),
             "- tables: `runs.csv`, " + tables.get(kind, "") + "\n"]
    if n_done < n_total:
        lines.append(f"**Incomplete campaign: {n_total - n_done} runs missing** (re-run the same command to "
                     "resume); the figures below use the stored runs only.\n")
    if kind == "offline":
        _offline_report(out, meta, lines)
    elif kind == "classification":
        _classification_report(out, meta, lines)
    else:
        _online_report(out, meta, lines)
    if failures:
        lines.append("## Failed runs\n")
        for f in failures:
            spec = f.get("spec", {})
            lines.append(f"- `{f.get('run_id')}` {json.dumps(spec.get('labels', {}))}, resample seed "
                         f"{spec.get('resample_seed')}, options `{json.dumps(spec.get('options', {}))}`: "
                         f"{f.get('error')}")
        lines.append("")
    path = out / "report.md"
    atomic_write_text(path, "\n".join(lines) + "\n")
    return path
