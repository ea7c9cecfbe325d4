"""The frame of a campaign's ``report.md``: what was run, what is stored, what failed; the kind fills the rest.

Inputs: ``campaign.json`` (given as ``meta``), ``runs.csv`` and the kind's
tables, and ``failures/*.json`` if present.  ``bftune campaign --report-only
DIR`` rebuilds the report from them alone.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Sequence

from bftune.experiments.campaign.report.common import read_table
from bftune.support.files import atomic_write_text


def failures(out: Path) -> list[dict]:
    """The failure records of a campaign directory (unreadable ones skipped), in file-name order."""
    recs = []
    for p in sorted((out / "failures").glob("*.json")):
        try:
            recs.append(json.loads(p.read_text()))
        except (OSError, ValueError):
            continue
    return recs


def write_report(out: Path, meta: dict, *, tables: Sequence[str],
                 section: Callable[[Path, dict, list[str]], None] | None) -> Path:
    """Write ``out/report.md`` (the kind's ``section`` adds its parts, plots and summaries); return its path.

    ``tables`` names the kind's files listed in the report besides ``runs.csv``.
    """
    runs = read_table(out, "runs")
    n_done = 0 if runs is None else len(runs)
    n_total = len(meta.get("specs", []))
    failed = failures(out)
    wl = meta.get("workload", {})
    sources = meta.get("settings", {}).get("trace_sources")
    if sources is not None:  # a kind with several traces
        workload = "- workloads: " + ", ".join(f"`{t}`" for t in sources)
    else:
        workload = f"- workload: `{wl.get('trace')}`" + (f", m = {wl['procs']}" if wl.get("procs") else "")
    lines = [f"# Campaign report: {meta.get('name')} ({meta.get('kind')})\n",
             f"- config: `{meta.get('source')}`; seed {meta.get('seed')}; tau = {meta.get('tau')} s",
             workload,
             f"- runs: {n_done} of {n_total} stored" + (f", **{len(failed)} failed**" if failed else ""),
             "- tables: " + ", ".join(f"`{name}`" for name in ["runs.csv", *tables]) + "\n"]
    if n_done < n_total:
        lines.append(f"**Incomplete campaign: {n_total - n_done} runs missing** (re-run the same command to "
                     "resume); the figures below use the stored runs only.\n")
    if section is not None:
        section(out, meta, lines)
    if failed:
        lines.append("## Failed runs\n")
        for f in failed:
            spec = f.get("spec", {})
            lines.append(f"- `{f.get('run_id')}` {json.dumps(spec.get('labels', {}))}, resample seed "
                         f"{spec.get('resample_seed')}, options `{json.dumps(spec.get('options', {}))}`: "
                         f"{f.get('error')}")
        lines.append("")
    path = out / "report.md"
    atomic_write_text(path, "\n".join(lines) + "\n")
    return path
