"""Study 004's stored runs, read for its report: the campaigns' tables under ``out/campaigns/<name>/``.

Every part of the report (:mod:`.report`, :mod:`.acceptance`, :mod:`.claims`, :mod:`.table7`,
:mod:`.seeds`) reads what the campaigns stored through these functions, so that a trace is always named by its short name and an
improvement is always the study's measure: ``(base - variant) / base`` of the final cumulative bounded
slowdown.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from bftune.workloads.catalogue import short_name

#: The study's traces that the catalogue has, by catalogue name, in the report's order.
TRACES = ("CTC-SP2", "HPC2N", "KTH-SP2", "SDSC-BLUE", "SDSC-SP2")


#: The study's four policies, each run plain (the base) and with the classifier.
POLICIES = ("FCFS", "WFP3", "SPF", "SAF")


def short(label: str) -> str:
    """A trace's short name from its label in the campaigns' tables (the file name without .swf.gz)."""
    return short_name(label)


def _table(out: Path, name: str, file: str) -> pd.DataFrame | None:
    """Table ``file`` of campaign ``name`` with traces under their short names (None: not stored)."""
    path = out / "campaigns" / name / file
    if not path.exists():
        return None
    df = pd.read_csv(path)
    df["trace"] = df["trace"].map(short)
    return df


def runs(out: Path, name: str) -> pd.DataFrame | None:
    """One row per run (``runs.csv``), the failed ones left out."""
    df = _table(out, name, "runs.csv")
    return df[df["status"] == "ok"].copy() if df is not None and "status" in df.columns else df


def classes(out: Path, name: str) -> pd.DataFrame | None:
    """AVGbsld per reference class (small / large) of campaign ``name``'s runs (its ``classes.csv``)."""
    return _table(out, name, "classes.csv")


def quality(out: Path, name: str) -> pd.DataFrame | None:
    """The classifier's overall quality per rf run (``classification.csv``'s overall rows)."""
    df = _table(out, name, "classification.csv")
    return None if df is None else df[df["scope"] == "overall"].copy()


def value(df: pd.DataFrame | None, trace_: str, policy: str, variant: str, column: str) -> float | None:
    if df is None:
        return None
    sel = df[(df["trace"] == trace_) & (df["policy"] == policy) & (df["variant"] == variant)]
    return float(sel[column].iloc[0]) if len(sel) else None


def improvement(df, trace_: str, policy: str, variant: str, base_policy: str = "FCFS",
                 column: str = "sum_bsld") -> float | None:
    """(base - variant) / base of the final cumulative bsld, in %, base = plain EASY with ``base_policy``."""
    b = value(df, trace_, base_policy, "base", column)
    v = value(df, trace_, policy, variant, column)
    if b is None or v is None or b <= 0:
        return None
    return 100.0 * (b - v) / b


def both(read, out: Path) -> pd.DataFrame | None:
    frames = [f for f in (read(out, "main"), read(out, "main_large")) if f is not None]
    return pd.concat(frames, ignore_index=True) if frames else None


def class_metrics(quality: pd.DataFrame | None, t: str) -> dict | None:
    if quality is None:
        return None
    sel = quality[(quality["trace"] == t) & (quality["policy"] == "FCFS") & (quality["variant"] == "rf")]
    if not len(sel):
        return None
    r = sel.iloc[0]
    n = float(r["n"])
    errors = {key: (float(r[key]) if key in r.index and pd.notna(r[key]) else None)
              for key in ("fl_median_over_divider", "fl_under_60s")}
    return {"accuracy": 100 * r["accuracy"], "precision": 100 * r["precision"], "recall": 100 * r["recall"],
            "false_small_share": 100 * r["fp"] / n, "false_large_share": 100 * r["fn"] / n, **errors}


def span(values) -> str:
    values = list(values)
    if not values:
        return "-"
    low, high = (f"{v:.1f}".replace("-0.0", "0.0") for v in (min(values), max(values)))  # no "-0.0"
    return low if low == high else f"{low} to {high}"

