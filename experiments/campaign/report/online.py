"""Report of an online-selection campaign (``kind = "online"``).

Per strategy, the relative change of total waiting time against the baseline
(EASY(FCFS, 40 h)) summed over the resamples where both ran:
``(sum_r W(s, r) - sum_r W(base, r)) / sum_r W(base, r)``; MaxWait as the mean
over resamples of each run's MaxWait, with its relative change computed the
same way.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from bftune.experiments.campaign.report.common import HOUR, md_table, panels, pyplot, read_table, runs_or_note, save
from bftune.support.files import atomic_write_text

FILES = ("summary_online.csv",)


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
    plt = pyplot()
    s = summary.dropna(subset=["rel_total_wait"]).sort_values("rel_total_wait", ascending=False)
    fig, ax = plt.subplots(figsize=(7.5, 0.32 * len(s) + 1.5))
    colours = [("black" if b else _FAMILY_COLOURS.get(f, "#444")) for f, b in zip(s["family"], s["baseline"])]
    ax.barh(s["strategy"].astype(str), 100 * s["rel_total_wait"], color=colours)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_xlabel("change of total waiting time vs the baseline, summed over resamples (%)")
    ax.set_title("Online selection: relative total wait per strategy (lower is better)")
    save(fig, path)


def _plot_online_shares(choices: pd.DataFrame, runs: pd.DataFrame, candidates: list[str], path: Path) -> bool:
    plt = pyplot()
    sel = runs[runs["family"] != "fixed"]
    strategies = list(dict.fromkeys(sel["strategy"]))
    strategies = [s for s in strategies if (choices["strategy"] == s).any()]
    if not strategies:
        return False
    policies = list(dict.fromkeys(list(candidates) + sorted(set(choices["policy"]) - set(candidates))))
    cmap = plt.get_cmap("tab20", max(len(policies), 2))
    colours = {p: cmap(i) for i, p in enumerate(policies)}
    _, fig, axes = panels(len(strategies), 4, 4.2, 3.2, 0.8)
    for ax, strategy in zip(axes, strategies):
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
    save(fig, path)
    return True


def _plot_online_cumulative(periods: pd.DataFrame, runs: pd.DataFrame, path: Path) -> None:
    plt = pyplot()
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
    save(fig, path)


def write(out: Path, meta: dict, lines: list[str]) -> None:
    """The online sections of ``report.md``, its plots and ``summary_online.csv``."""
    runs = runs_or_note(out, "runs", lines)
    if runs is None:
        return
    choices = read_table(out, "choices")
    periods = read_table(out, "periods")
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
