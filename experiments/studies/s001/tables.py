"""Study 001's Tables 3 and 4, ours beside theirs, from the campaigns' ``summary_online.csv``."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from bftune.experiments.reproduce.markdown import diff, num, table
from bftune.experiments.reproduce.study import published
from bftune.experiments.studies.s001 import naming

_TABLE4 = published(__file__)["table4"]
#: Table 4: best fixed policy (hindsight), then random, full, noisy, bandit with weekly and daily periods (%).
TABLE4_COLUMNS: tuple[str, ...] = tuple(_TABLE4["columns"])
TABLE4: dict[str, tuple[int, ...]] = {t: tuple(v) for t, v in _TABLE4["values"].items()}
#: Cells of Table 4 stored differently from the print: (trace, column) -> (as printed, why).
TABLE4_CHANGED: dict[tuple[str, str], tuple[str, str]] = {
    (t, col): (cell["printed"], cell["why"]) for t, cells in _TABLE4.get("changed", {}).items()
    for col, cell in cells.items()}
#: The study's column name -> the bftune order that produced it (settled by :mod:`.naming`).
STUDY_NAMING = {"LEXP": "SEXP", "SEXP": "LEXP", "LRF": "SRF", "SRF": "LRF"}


def summary(out: Path, name: str) -> pd.DataFrame | None:
    path = out / "campaigns" / name / "summary_online.csv"
    return pd.read_csv(path) if path.exists() else None


def _rel(summary: pd.DataFrame | None, strategy: str) -> float | None:
    if summary is None:
        return None
    sel = summary[summary["strategy"] == strategy]
    return 100.0 * float(sel["rel_total_wait"].iloc[0]) if len(sel) else None


def table3(summaries: dict, done: list[str]) -> str:
    rows = []
    agree = total = 0
    misses, zeros, diffs = [], [], []
    for name in done:
        s = summaries[name]
        for col, theirs in zip(naming.TABLE3_COLUMNS, naming.TABLE3[name]):
            ours = _rel(s, STUDY_NAMING.get(col, col))
            if ours is not None and theirs != 0:
                total += 1
                same = (ours < 0) == (theirs < 0)
                agree += same
                if not same:
                    misses.append(f"{name} {col} ({ours:+.1f} against {theirs:+d})")
            elif ours is not None:
                zeros.append(f"{name} {col}, published 0, ours {ours:+.1f}")
            if ours is not None:
                diffs.append((name, ours - theirs))
            count = resamples(s).get(STUDY_NAMING.get(col, col))
            rows.append([name, col, STUDY_NAMING.get(col, col), num(ours), theirs, diff(ours, theirs),
                         "-" if count is None else count])
    text = (f"Signs agree on {agree} of the {total} columns with a non-zero published value"
            + (f" ({'; '.join(zeros)})" if zeros else "")
            + (f"; they differ on {', '.join(misses)}" if misses else "") + ". " + _bias(diffs))
    return ("## Fixed policies (Table 3)\n\n"
            "\"run as\": the bftune order that produced the study's column (previous section); \"resamples\": how "
            f"many of our resampled traces the value rests on (the study: 60). {text}\n\n"
            + table(["trace", "study's column", "run as", "ours (%)", "theirs (%)", "diff", "resamples"], rows))


def _bias(diffs: list[tuple[str, float]]) -> str:
    """How ours lies against the study's over a table's cells (diff = ours - theirs, in points): the count above
    (less reduction than the study's), and the range of the differences per trace."""
    if not diffs:
        return ""
    above = sum(d > 0 for _, d in diffs)
    per_trace: dict[str, list[float]] = {}
    for name, d in diffs:
        per_trace.setdefault(name, []).append(d)
    ranges = "; ".join(f"{name} {min(v):+.1f} to {max(v):+.1f}" for name, v in per_trace.items())
    return (f"Ours is above the study's value (less reduction of the waiting time) in {above} of {len(diffs)} cells "
            f"(differences in points: {ranges}).")


def table4(summaries: dict, done: list[str]) -> str:
    rows, notes = [], []
    diffs: list[tuple[str, float]] = []
    for name in done:
        s = summaries[name]
        fixed = s[s["family"] == "fixed"] if s is not None else None
        best_name = "" if fixed is None or fixed.empty else fixed.loc[fixed["rel_total_wait"].idxmin(), "strategy"]
        values = table4_values(s)
        counts = resamples(s)
        for col, theirs in zip(TABLE4_COLUMNS, TABLE4[name]):
            label = f"best ({best_name})" if col == "best" else col
            shown: object = theirs
            if (name, col) in TABLE4_CHANGED:
                printed, why = TABLE4_CHANGED[name, col]
                shown = f"{theirs} (printed \"{printed}\")"
                notes.append(f"{name} {col}: the study prints \"{printed}\"; we changed it to {theirs}: {why}.")
            count = counts.get(best_name if col == "best" else col)
            rows.append([name, label, num(values[col]), shown, diff(values[col], theirs),
                         "-" if count is None else count])
            value = values[col]
            if value is not None:
                diffs.append((name, value - theirs))
    return ("## Policy selection (Table 4)\n\n"
            + (_bias(diffs) + "\n\n" if diffs else "")
            + table(["trace", "strategy", "ours (%)", "theirs (%)", "diff", "resamples"], rows)
            + "".join(f"\n\n{note}" for note in notes))


def resamples(summary: pd.DataFrame | None) -> dict[str, int]:
    """How many resamples each strategy's value rests on: those with both its run and EASY-FCFS's (the campaign's
    ``paired_resamples``, else ``resamples``; none stored: empty)."""
    if summary is None:
        return {}
    column = next((c for c in ("paired_resamples", "resamples") if c in summary.columns), None)
    if column is None:
        return {}
    return {str(k): int(v) for k, v in zip(summary["strategy"], summary[column])}


def table4_values(summary: pd.DataFrame | None) -> dict[str, float | None]:
    """Ours, by Table 4's column names (``best``: the best fixed policy in hindsight)."""
    fixed = summary[summary["family"] == "fixed"] if summary is not None else None
    best = None if fixed is None or fixed.empty else 100.0 * float(fixed["rel_total_wait"].min())
    return {col: best if col == "best" else _rel(summary, col) for col in TABLE4_COLUMNS}
