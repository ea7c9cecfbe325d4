"""Job-by-job comparison of two out_jobs.csv tables (local simulator vs Batsim).

``diff_out_jobs(a, b)`` is a pure function over two tables as read by
``bftune.experiments.runs.tables.read_out_jobs``.  Rows are keyed by the
``job_id`` string, so a rerun (``0000003#1``) is compared with the same
rerun of the other side and a killed run (``COMPLETED_KILLED``) with the
same killed run.  Per row it compares ``starting_time`` and ``finish_time``
(as numbers, within ``tolerance`` seconds; 0 = exactly), ``final_state`` and
``allocated_resources`` (as machine sets, so ``"0-3"`` equals ``"0 1 2 3"``).

The report gives the counts, the first mismatch in order of the earlier of
the two start times (one early difference changes everything after it),
and the largest time difference.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from bftune.schedulers.core import machines as ms

KILLED = "COMPLETED_KILLED"
TIME_FIELDS = ("starting_time", "finish_time")


def _norm_alloc(text) -> str:
    text = "" if text is None or (isinstance(text, float) and math.isnan(text)) else str(text)
    try:
        return ms.to_string(ms.parse(text))
    except ValueError:
        return text.strip()


def _prepare(df: pd.DataFrame, name: str) -> pd.DataFrame:
    missing = [c for c in ("job_id", "starting_time", "finish_time", "final_state") if c not in df.columns]
    if missing:
        raise ValueError(f"{name}: not an out_jobs table, missing column(s) {', '.join(missing)}")
    out = pd.DataFrame({
        "job_id": df["job_id"].astype(str),
        "starting_time": pd.to_numeric(df["starting_time"], errors="coerce").astype(float),
        "finish_time": pd.to_numeric(df["finish_time"], errors="coerce").astype(float),
        "final_state": df["final_state"].astype(str),
        "allocated_resources": (df["allocated_resources"] if "allocated_resources" in df.columns
                                else pd.Series([""] * len(df), index=df.index)).map(_norm_alloc),
    })
    dup = out["job_id"][out["job_id"].duplicated()]
    if not dup.empty:
        raise ValueError(f"{name}: job id {dup.iloc[0]!r} appears on more than one row")
    return out.set_index("job_id")


def _row(frame: pd.DataFrame, job_id: str) -> dict | None:
    if job_id not in frame.index:
        return None
    r = frame.loc[job_id]
    return {"start": float(r["starting_time"]), "finish": float(r["finish_time"]),
            "state": str(r["final_state"]), "alloc": str(r["allocated_resources"])}


def diff_out_jobs(a: pd.DataFrame, b: pd.DataFrame, names: tuple[str, str] = ("local", "batsim"),
                  tolerance: float = 0.0, compare_alloc: bool = True, examples: int = 10) -> dict:
    """Compare two out_jobs tables row by row; see the module docstring."""
    na, nb = names
    fa, fb = _prepare(a, na), _prepare(b, nb)
    common = fa.index.intersection(fb.index, sort=False)
    only_a = [j for j in fa.index if j not in fb.index]
    only_b = [j for j in fb.index if j not in fa.index]
    x, y = fa.loc[common], fb.loc[common]
    diffs = pd.DataFrame(index=common)
    for f in TIME_FIELDS:
        d = (x[f] - y[f]).abs()
        diffs[f] = (d > tolerance) | (x[f].isna() != y[f].isna())  # no time on both sides (rejected) is equal
        diffs[f + "_delta"] = d
    diffs["final_state"] = x["final_state"] != y["final_state"]
    diffs["allocated_resources"] = (x["allocated_resources"] != y["allocated_resources"]) if compare_alloc else False
    fields = list(TIME_FIELDS) + ["final_state"] + (["allocated_resources"] if compare_alloc else [])
    bad = diffs[fields].any(axis=1)
    mismatched = list(common[bad.to_numpy()]) if len(common) else []

    # Order every mismatch (missing rows included) by the earlier of its two start times.
    def earliest(job_id: str) -> float:
        starts = [frame.at[job_id, "starting_time"] for frame in (fa, fb) if job_id in frame.index]
        starts = [s for s in starts if not math.isnan(s)]
        return min(starts) if starts else math.inf

    ordered = sorted(mismatched + only_a + only_b, key=lambda j: (earliest(j), j))

    def describe(job_id: str) -> dict:
        entry: dict[str, Any] = {"job_id": job_id, na: _row(fa, job_id), nb: _row(fb, job_id)}
        if job_id in diffs.index:
            entry["fields"] = [f for f in fields if bool(diffs.at[job_id, f])]
        else:
            entry["fields"] = [f"missing in {nb if job_id in fa.index else na}"]
        return entry

    largest = None
    if len(common):
        deltas = diffs[[f + "_delta" for f in TIME_FIELDS]].fillna(math.inf)
        flat = deltas.stack()
        if not flat.empty and float(flat.max()) > 0:
            (job_id, col) = flat.idxmax()
            f = col[: -len("_delta")]
            largest = {"job_id": job_id, "field": f, "difference": float(flat.max()),
                       na: float(fa.at[job_id, f]), nb: float(fb.at[job_id, f])}

    field_counts = {f: int(diffs[f].sum()) for f in fields} if len(common) else {f: 0 for f in fields}
    kills = {na: int((fa["final_state"] == KILLED).sum()), nb: int((fb["final_state"] == KILLED).sum())}
    kill_diff = 0
    if len(common):
        kill_diff = int(((x["final_state"] == KILLED) != (y["final_state"] == KILLED)).sum())
    kill_diff += sum(1 for j in only_a if fa.at[j, "final_state"] == KILLED)
    kill_diff += sum(1 for j in only_b if fb.at[j, "final_state"] == KILLED)
    return {
        "names": [na, nb],
        "rows": {na: int(len(fa)), nb: int(len(fb))},
        "jobs": int(len(fa.index.union(fb.index))),
        "compared": int(len(common)),
        "matching": int(len(common) - len(mismatched)),
        "mismatches": int(len(ordered)),
        "fields": field_counts,
        "only_in": {na: len(only_a), nb: len(only_b)},
        "only_in_examples": {na: only_a[:examples], nb: only_b[:examples]},
        "kills": kills,
        "kill_differences": kill_diff,
        "tolerance": tolerance,
        "first": describe(ordered[0]) if ordered else None,
        "largest_difference": largest,
        "examples": [describe(j) for j in ordered[:examples]],
    }


def format_report(report: dict) -> str:
    """A short human-readable view of :func:`diff_out_jobs`'s report."""
    na, nb = report["names"]
    lines = [f"compared {report['compared']} runs ({report['rows'][na]} {na}, {report['rows'][nb]} {nb})"]
    if report["mismatches"] == 0:
        lines.append(f"all runs agree: same start and finish times, final states"
                     f"{' and allocations' if 'allocated_resources' in report['fields'] else ''}"
                     f"; kills {report['kills'][na]} {na} / {report['kills'][nb]} {nb}")
        return "\n".join(lines)
    lines.append(f"MISMATCH: {report['mismatches']} runs differ "
                 + ", ".join(f"{k}={v}" for k, v in report["fields"].items() if v)
                 + "".join(f", only in {k}={v}" for k, v in report["only_in"].items() if v))
    lines.append(f"kills: {report['kills'][na]} {na}, {report['kills'][nb]} {nb} "
                 f"({report['kill_differences']} runs killed on one side only)")
    first = report["first"]
    if first:
        lines.append(f"first differing run: {first['job_id']} ({', '.join(first['fields'])})")
        for side in (na, nb):
            lines.append(f"  {side:>7}: {first[side]}")
    big = report["largest_difference"]
    if big:
        lines.append(f"largest difference: {big['difference']:g} s in {big['field']} of run {big['job_id']} "
                     f"({na} {big[na]:g}, {nb} {big[nb]:g})")
    return "\n".join(lines)
