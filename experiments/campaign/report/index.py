"""Report of an index-policy campaign (``kind = "index"``): how the policies rank, window by window.

From ``windows.csv`` alone: per (scenario, source, backfilling, clock) the
median AVGbsld of every policy (``summary_index.csv``), each policy's rank
by that median, box plots of the per-window AVGbsld
(``plots/index_<scenario>_<easy|nobf>.png``), and, per archive trace, each
policy's gain from backfilling (median without / with EASY backfilling).
A study that makes claims about these policies checks them from
``summary_index.csv`` in its own report (``bftune reproduce 002``).
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from bftune.experiments.campaign.report.common import pyplot, runs_or_note, save
from bftune.support.files import atomic_write_text

FILES = ("summary_index.csv",)
#: The order of the table's columns: classic orders, the F1-F4 functions, the four shipped learned functions.
POLICIES = ("FCFS", "SPF", "SAF", "WFP3", "UNICEF", "F1", "F2", "F3", "F4", "Lin", "Qdr", "Cub", "Qua")


def medians(windows: pd.DataFrame) -> pd.DataFrame:
    """Median AVGbsld per (scenario, source, backfill) x policy, policies in :data:`POLICIES`' order."""
    frame = windows[windows["jobs"] > 0]
    table = frame.pivot_table(index=["scenario", "source", "backfill"], columns="policy", values="avg_bsld",
                              aggfunc="median", sort=False)
    cols = [p for p in POLICIES if p in table.columns] + [p for p in table.columns if p not in POLICIES]
    return table[cols]


def rank_lines(table: pd.DataFrame) -> list[str]:
    """One line per source: the policies from best to worst median (rank 1 = lowest median AVGbsld)."""
    lines = []
    for (scenario, source, backfill), row in table.iterrows():
        if scenario == "archive" and not backfill:
            continue
        ranked = row.dropna().sort_values()
        lines.append(f"- **{source}** ({scenario}): " + ", ".join(f"{i}. {p}" for i, p in enumerate(ranked.index, 1)))
    return lines


def backfilling_gain_series(table: pd.DataFrame) -> dict[str, pd.Series]:
    """Per archive source: each policy's median without / with backfilling (the sources run both ways)."""
    out = {}
    for (scenario, source, backfill), with_bf in table.iterrows():
        if scenario != "archive" or not backfill or (scenario, source, False) not in table.index:
            continue
        out[source] = (table.loc[(scenario, source, False)] / with_bf).dropna()
    return out


def backfilling_gains(table: pd.DataFrame) -> list[str]:
    """Per archive source: each policy's gain from backfilling, largest first."""
    return [f"- **{source}**: " + ", ".join(f"{p} x{g:.2f}" for p, g in gain.sort_values(ascending=False).items())
            for source, gain in backfilling_gain_series(table).items()]


def box_plots(windows: pd.DataFrame, plots: Path) -> list[Path]:
    """One figure per (scenario, backfilling): a panel per source, a box per policy (log AVGbsld)."""
    plt = pyplot()
    written = []
    frame = windows[windows["jobs"] > 0]
    for (scenario, backfill), part in frame.groupby(["scenario", "backfill"], sort=False):
        sources = list(dict.fromkeys(part["source"]))
        fig, axes = plt.subplots(len(sources), 1, figsize=(11, 2.6 * len(sources) + 0.6), squeeze=False,
                                 constrained_layout=True)
        for ax, source in zip(axes[:, 0], sources):
            sel = part[part["source"] == source]
            pols = [p for p in POLICIES if p in set(sel["policy"])] + \
                   [p for p in dict.fromkeys(sel["policy"]) if p not in POLICIES]
            data = [sel.loc[sel["policy"] == p, "avg_bsld"].to_numpy() for p in pols]
            ax.boxplot(data, flierprops={"markersize": 2})
            ax.set_xticks(range(1, len(pols) + 1), [p if len(p) < 12 else p[:11] + "…" for p in pols])
            ax.set_yscale("log")
            ax.set_ylabel("AVGbsld")
            ax.set_title(f"{source}: {len(data[0]) if data else 0} windows", fontsize=9)
        fig.suptitle(f"{scenario}: AVGbsld per window ({'EASY backfilling' if backfill else 'no backfilling'})")
        path = plots / f"index_{scenario}_{'easy' if backfill else 'nobf'}.png"
        save(fig, path)
        written.append(path)
    return written


def _fmt(v: float) -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.1f}"


def write(out: Path, meta: dict, lines: list[str]) -> None:
    """The index sections of ``report.md``, its box plots and ``summary_index.csv``."""
    windows = runs_or_note(out, "windows", lines)
    if windows is None:
        return
    windows["backfill"] = windows["backfill"].astype(str).str.lower() == "true"
    settings = meta.get("settings", {})
    lines.append(f"Index policies on {settings.get('window_days', 15):g}-day windows, each simulated alone from "
                 "an empty machine (tau = 10 s).\n")
    summaries = []
    for clock in [c for c in ("window", "trace") if c in set(windows["clock"])]:
        part = windows[windows["clock"] == clock]
        table = medians(part)
        summaries.append(table.reset_index().assign(clock=clock))
        title = "each window's own clock" if clock == "window" else "the trace's clock (ablation)"
        lines += [f"## Median AVGbsld per window, r in {title}\n",
                  "| scenario | source | backfilling | " + " | ".join(table.columns) + " |",
                  "|---" * (3 + len(table.columns)) + "|"]
        for (scenario, source, backfill), row in table.iterrows():
            lines.append(f"| {scenario} | {source} | {'EASY' if backfill else 'none'} | "
                         + " | ".join(_fmt(v) for v in row) + " |")
        lines += ["", "Policies from best to worst median:", "", *rank_lines(table), ""]
        if clock == "window":
            gains = backfilling_gains(table)
            if gains:
                lines += ["Each policy's gain from backfilling (median without / with EASY):", "", *gains, ""]
            for path in box_plots(part, out / "plots"):
                lines.append(f"![{path.stem}](plots/{path.name})\n")
    atomic_write_text(out / "summary_index.csv", pd.concat(summaries).to_csv(index=False))
