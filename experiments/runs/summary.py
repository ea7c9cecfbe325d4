"""Where a run's results go, for both backends: out_jobs.csv + summary.json.

``summary.json`` is computed from the out_jobs.csv columns by ``metrics`` only,
whichever backend produced them, so the two backends' summaries are
comparable by construction.  No pandas here: ``bftune simulate`` imports it.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

from bftune.experiments.runs.metrics import Columns, fairness_metrics, summarize
from bftune.support.files import atomic_write_text


def jsonable(value):
    """``value`` made strict JSON: the one rule of every JSON file we write.

    JSON has no NaN or infinity.  NaN - an undefined value, such as a mean
    over no job - becomes ``null`` (pandas reads it back as NaN); +/-infinity
    becomes the string ``"inf"``/``"-inf"``, the spelling of an infinite
    duration in our options (``threshold = "inf"``), which ``float()`` and
    pandas' CSV reader both read back.  numpy scalars become Python numbers;
    dictionary keys become strings.  Used for ``summary.json``,
    ``compare.json`` and campaign files (``campaign.json``, ``runs/*.json``,
    ``failures/*.json``).
    """
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    numpy = sys.modules.get("numpy")  # a numpy scalar exists only if numpy was imported: no import here
    if numpy is not None and isinstance(value, numpy.generic):
        return jsonable(value.item())
    return value


def write_json(path: str | Path, data, indent: int = 2) -> Path:
    """Write ``data`` atomically as strict JSON (:func:`jsonable`) ending with a newline."""
    return atomic_write_text(path, json.dumps(jsonable(data), indent=indent, allow_nan=False) + "\n")


def build_summary(df: Columns, m: int, tau: float, config: dict, cleaning: dict | None = None,
                  workload: dict | None = None, extra: dict | None = None) -> dict:
    summary = summarize(df, m, tau)
    summary["cleaning"] = dict(cleaning or {})
    summary["config"] = dict(config)
    if workload:
        summary["workload"] = dict(workload)
    if extra:
        extra = dict(extra)
        per_job = extra.pop("fairness_jobs", None)  # the fairness monitor's per-job findings
        summary.update(extra)
        if per_job is not None and isinstance(summary.get("fairness"), dict):
            summary["fairness"] = {**summary["fairness"], **fairness_metrics(df, per_job, m, tau)}
    return summary


def write_summary(summary: dict, out_dir: str | Path) -> Path:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    return write_json(out_dir / "summary.json", summary)


def format_summary(summary: dict) -> str:
    """A short human-readable view for the terminal."""
    lines = []
    cfg = summary.get("config", {})
    if cfg.get("algorithm"):
        lines.append(f"scheduler     {cfg['algorithm']}")
    wl = summary.get("workload") or {}
    if wl:
        lines.append(f"workload      {wl.get('name', '?')} ({wl.get('jobs', '?')} jobs, m={summary.get('m')})")
        if wl.get("tres_jobs"):
            lines.append(f"TRES          {wl['tres_jobs']} jobs asked for GPUs or other TRES: bftune schedules "
                         "processors only")
    for key, label, fmt in (
        ("jobs", "jobs", "{:d}"),
        ("avg_wait", "AvgWait (s)", "{:.1f}"),
        ("max_wait", "MaxWait (s)", "{:.0f}"),
        ("avg_bsld", f"AVGbsld (tau={summary.get('tau')})", "{:.3f}"),
        ("mwbs", "MWBS", "{:.3f}"),
        ("utilization", "utilisation", "{:.4f}"),
        ("makespan", "makespan (s)", "{:.0f}"),
        ("killed_runs", "killed runs", "{:d}"),
        ("wasted_work", "wasted work (proc.s)", "{:.0f}"),
    ):
        if key in summary:
            v = summary[key]
            try:
                lines.append(f"{label:<22}{fmt.format(v)}")
            except (ValueError, TypeError):
                lines.append(f"{label:<22}{v}")
    cleaning = summary.get("cleaning") or {}
    dropped = {k: v for k, v in cleaning.items() if v}
    if dropped:
        lines.append("cleaning      " + ", ".join(f"{k}={v}" for k, v in dropped.items()))
    return "\n".join(lines)
