"""The report's plots, as PNG bytes (matplotlib's Agg backend), to be embedded in the HTML as base64.

Each function draws one figure from the race's stored weeks; none reads a file.
"""

from __future__ import annotations

import base64
import io
import math

import numpy as np

from bftune.experiments.campaign.report.common import pyplot
from bftune.experiments.tune import analysis
from bftune.experiments.tune.engine import Race

#: Candidates shown in the ranking plot (the rest are in the table).
RANKING_SHOWN = 30


def png(fig) -> str:
    """``fig`` as a base64 PNG (no timestamp in it), closed."""
    plt = pyplot()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def ranking_plot(race: Race, rows: list[dict]) -> str:
    """Training gain with its interval per candidate (best first), and the finalists' testing gain."""
    plt = pyplot()
    shown = [r for r in rows if "train_gain" in r][:RANKING_SHOWN]
    fig, ax = plt.subplots(figsize=(9, 0.28 * len(shown) + 1.4))
    y = np.arange(len(shown))[::-1]
    for yi, row in zip(y, shown):
        lo, hi = row["train_interval"]
        colour = "#1f77b4" if row["state"] in ("survived",) else "#999999"
        ax.plot([100 * lo, 100 * hi], [yi, yi], color=colour, lw=2, alpha=0.6)
        ax.plot(100 * row["train_gain"], yi, "o", color=colour, ms=5)
        if row.get("finalist"):
            tlo, thi = row["test_interval"]
            ax.plot([100 * tlo, 100 * thi], [yi - 0.3, yi - 0.3], color="#d62728", lw=2, alpha=0.7)
            ax.plot(100 * row["test_gain"], yi - 0.3, "D", color="#d62728", ms=5)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(y, [f"{r['rank']}. {r['label']} ({r['train_weeks']} w)" for r in shown], fontsize=7)
    ax.set_xlabel(f"gain in {race.settings.objective} against {race.base_label} (%), mean over weeks, 95 % interval")
    ax.plot([], [], "o", color="#1f77b4", label="training half, still in the race")
    ax.plot([], [], "o", color="#999999", label="training half, dropped (on the weeks it ran)")
    ax.plot([], [], "D", color="#d62728", label="testing half (finalists)")
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(axis="x", alpha=0.3)
    return png(fig)


def distributions_plot(race: Race, rows: list[dict]) -> str:
    """Per-week ratios of the finalists (training and testing half) and of the best dropped candidates."""
    plt = pyplot()
    s = race.settings
    by_key = race.by_key()
    finalists = [r for r in rows if r.get("finalist")]
    others = [r for r in rows if not r.get("finalist") and "train_gain" in r][:4]
    data, labels, colours = [], [], []
    for row in finalists + others:
        c = by_key[row["key"]]
        r = race.ratios("train", c, row["train_weeks"], s.objective)
        data.append(r[~np.isnan(r)])
        labels.append(f"{row['label']}\ntraining, {row['train_weeks']} w")
        colours.append("#1f77b4" if row.get("finalist") else "#bbbbbb")
        if row.get("finalist"):
            t = race.ratios("test", c, race.test_weeks, s.objective)
            data.append(t[~np.isnan(t)])
            labels.append(f"{row['label']}\ntesting, {race.test_weeks} w")
            colours.append("#d62728")
    fig, ax = plt.subplots(figsize=(9, 0.45 * max(len(data), 1) + 1.2))
    if data:
        parts = ax.boxplot(data[::-1], orientation="horizontal", widths=0.6, showmeans=True, patch_artist=True,
                           flierprops={"markersize": 2, "alpha": 0.4})
        for patch, colour in zip(parts["boxes"], colours[::-1]):
            patch.set_facecolor(colour)
            patch.set_alpha(0.5)
        ax.set_yticks(range(1, len(data) + 1), labels[::-1], fontsize=7)
    ax.axvline(1.0, color="black", lw=0.8, ls="--")
    ax.set_xlabel(f"{s.objective} / {s.objective}({race.base_label}), one value per resampled week (triangle: mean)")
    ax.set_xscale("log")
    ax.grid(axis="x", alpha=0.3)
    return png(fig)


def cdf_plot(race: Race, rec: dict) -> str | None:
    """Wait CDFs over the testing weeks: the recommendation against EASY-FCFS-FCFS."""
    if rec["keep_baseline"]:
        return None
    plt = pyplot()
    c = rec["candidate"]
    fig, (ax, tail) = plt.subplots(1, 2, figsize=(11, 4.2))
    for cand, label, colour in ((race.baselines[c.warmup], race.base_label, "#555555"),
                                (c, f"recommended: {c.label}", "#d62728")):
        w = np.sort(analysis.waits(race, cand))
        if not len(w):
            continue
        hours = np.maximum(w, 1.0) / 3600
        ax.step(hours, np.arange(1, len(w) + 1) / len(w), where="post", color=colour, label=label)
        # the tail the CDF squeezes into its top: the share of jobs waiting longer than x, on a log scale
        longer = 1.0 - np.arange(1, len(w) + 1) / len(w)
        keep = longer > 0
        tail.step(hours[keep], longer[keep], where="post", color=colour, label=label)
    ax.set_xscale("log")
    ax.set_xlabel("waiting time (hours, log scale; waits under 1 s drawn at 1 s)")
    ax.set_ylabel("share of jobs waiting at most that long")
    ax.set_title(f"every job of the {race.test_weeks} testing weeks", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    tail.set_xscale("log")
    tail.set_yscale("log")
    tail.set_xlabel("waiting time (hours, log scale)")
    tail.set_ylabel("share of jobs waiting longer (log scale)")
    tail.set_title("the tail: the longest waits", fontsize=9)
    tail.grid(alpha=0.3, which="both")
    fig.tight_layout()
    return png(fig)


def budget_plot(race: Race) -> str:
    """Candidates in the race at each stage, and the estimated against the elapsed time."""
    plt = pyplot()
    stages = race.stages
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
    weeks = [st["weeks"] for st in stages]
    left.step(weeks, [st["candidates"] for st in stages], where="post", color="#1f77b4", label="in the stage")
    left.bar(weeks, [st["dropped_by_test"] for st in stages], width=[max(1, w * 0.15) for w in weeks],
             color="#2ca02c", alpha=0.6, label="dropped by the racing test")
    left.bar(weeks, [st["dropped_by_budget"] for st in stages], width=[max(1, w * 0.15) for w in weeks],
             bottom=[st["dropped_by_test"] for st in stages], color="#ff7f0e", alpha=0.6, label="dropped by the budget")
    left.set_xscale("log", base=2)
    left.set_xlabel("training weeks per candidate (stage end)")
    left.set_ylabel("candidates")
    left.legend(fontsize=7)
    left.grid(alpha=0.3)
    est = [st.get("estimated_s", math.nan) for st in stages]
    real = [st.get("elapsed_s", math.nan) for st in stages]
    right.plot(weeks, est, "o-", label="estimated (cost model)")
    right.plot(weeks, real, "s-", label="elapsed")
    right.axhline(race.settings.budget_s, color="black", ls="--", lw=0.8, label="budget")
    right.set_xscale("log", base=2)
    right.set_xlabel("training weeks per candidate (stage end)")
    right.set_ylabel("seconds since the start")
    right.legend(fontsize=7)
    right.grid(alpha=0.3)
    return png(fig)
