"""Study 002's claims about its Figures 1 and 2, each beside what the stored index campaign shows.

The figures are box plots without numbers, so the claims are checked on the
medians of the campaign's ``summary_index.csv`` (each window's own clock),
and every verdict states its criterion and the figures it rests on:

- "Lin among the best, comparable to SAF and F2" (Lublin-Feitelson): Lin's
  rank among the policies, and the ratios of its median to SAF's and F2's;
- "Qdr, Cub and Qua ... as inefficient as FCFS": their ranks, and their
  medians against FCFS's;
- "SAF, F2 and Lin consistently best" (archive traces, EASY): their ranks on
  each trace, and on how many traces they are the three best;
- "backfilling helps poorly performing heuristics such as FCFS" (archive
  traces): FCFS's gain from backfilling (median without / with) and its rank
  among the policies' gains.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from bftune.experiments.campaign.report.index import backfilling_gain_series
from bftune.experiments.reproduce.study import published

CLAIMS: dict[str, dict[str, str]] = published(__file__)["claims"]


def load(campaign: Path) -> pd.DataFrame | None:
    """The campaign's medians per (scenario, source, backfill), each window's own clock; None before it ran."""
    path = campaign / "summary_index.csv"
    if not path.exists():
        return None
    frame = pd.read_csv(path)
    frame = frame[frame["clock"] == "window"].drop(columns="clock")
    frame["backfill"] = frame["backfill"].astype(str).str.lower() == "true"
    return frame.set_index(["scenario", "source", "backfill"])


def _ranks(row: pd.Series) -> pd.Series:
    return row.dropna().rank(method="min").astype(int)


def lin_best(table: pd.DataFrame) -> list[str]:
    rows = []
    for (_, source, _), row in table.xs("lublin", drop_level=False).iterrows():
        ranks = _ranks(row)
        rows.append(f"{source}: Lin ranks {ranks['Lin']} of {len(ranks)}; Lin/SAF = {row['Lin'] / row['SAF']:.2f}, "
                    f"Lin/F2 = {row['Lin'] / row['F2']:.2f}")
    return rows


def complex_like_fcfs(table: pd.DataFrame) -> list[str]:
    rows = []
    for (_, source, _), row in table.xs("lublin", drop_level=False).iterrows():
        ranks = _ranks(row)
        parts = [f"{p} ranks {ranks[p]} of {len(ranks)} ({p}/FCFS = {row[p] / row['FCFS']:.2f}, "
                 f"{p}/Lin = {row[p] / row['Lin']:.1f})" for p in ("Qdr", "Cub", "Qua")]
        rows.append(f"{source}: " + "; ".join(parts))
    return rows


def saf_f2_lin_best(table: pd.DataFrame) -> list[str]:
    easy = table[[b for (_, _, b) in table.index]].xs("archive", drop_level=False)
    rows, top = [], 0
    for (_, source, _), row in easy.iterrows():
        ranks = _ranks(row)
        best = set(ranks.sort_values().index[:3])
        top += best == {"SAF", "F2", "Lin"}
        better = [p for p in ranks.index if ranks[p] < ranks["Lin"] and p not in ("SAF", "F2")]
        rows.append(f"{source}: SAF {ranks['SAF']}, F2 {ranks['F2']}, Lin {ranks['Lin']} of {len(ranks)}"
                    + (f" (ahead of Lin: {', '.join(better)})" if better else ""))
    rows.append(f"the three best on {top} of {len(easy)} traces")
    return rows


def backfilling_helps_fcfs(table: pd.DataFrame) -> list[str]:
    rows = []
    for source, gains in backfilling_gain_series(table).items():
        order = gains.rank(ascending=False, method="min").astype(int)
        rows.append(f"{source}: FCFS x{gains['FCFS']:.1f} (the {order['FCFS']}. largest gain of {len(gains)}; "
                    f"median gain x{gains.median():.1f})")
    return rows


CHECKS = {"lin_best": lin_best, "complex_like_fcfs": complex_like_fcfs, "saf_f2_lin_best": saf_f2_lin_best,
          "backfilling_helps_fcfs": backfilling_helps_fcfs}


def markdown(campaign: Path) -> str:
    table = load(campaign)
    head = "## The study's claims about Figures 1 and 2\n\n"
    if table is None:
        return head + "Not run yet (no `summary_index.csv` in the index campaign)."
    lines = [head + "Ranks are by median AVGbsld per 15-day window (1 = best), from the index campaign's "
             "`summary_index.csv` (each window's own clock); the study's figures are box plots without numbers.\n",
             "| claim (the study's words) | what our runs show |", "|---|---|"]
    scenarios = set(table.index.get_level_values("scenario"))
    for name, claim in CLAIMS.items():
        shown = "<br>".join(CHECKS[name](table)) if claim["scenario"] in scenarios else "not in this campaign"
        lines.append(f"| {claim['figure']}: \"{claim['text']}\" | {shown} |")
    return "\n".join(lines)
