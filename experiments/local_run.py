"""Run one configuration in the local simulator and store its results."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

from bftune.experiments.outjobs import runs_columns, write_out_jobs
from bftune.experiments.results import build_summary, write_summary
from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.drivers.local.simulator import SimResult, simulate
from bftune.workloads.model import Trace


def workload_info(trace: Trace) -> dict:
    return {"name": trace.name, "source": trace.source, "jobs": len(trace.jobs), "m": trace.max_procs}


def run_local(trace: Trace, config: SchedulerConfig, out_dir: str | Path | None = None,
              tau: float = 10.0) -> tuple[dict, SimResult]:
    """Simulate ``trace`` under ``config``; write out_jobs.csv and summary.json if ``out_dir``."""
    m = trace.max_procs
    if config.classifier is not None and config.unix_start_time is None and trace.unix_start_time is not None:
        config = replace(config, unix_start_time=trace.unix_start_time, timezone=config.timezone or trace.timezone)
    t0 = time.perf_counter()
    result = simulate(trace.jobs, m, config.build(m))
    elapsed = time.perf_counter() - t0
    columns = runs_columns(result.runs)
    extra = {"backend": "local", "simulation_seconds": round(elapsed, 3)}
    extra.update(result.report)
    summary = build_summary(columns, m, tau, config.to_dict(), trace.cleaning, workload_info(trace), extra)
    if out_dir is not None:
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        write_out_jobs(result.runs, out_dir / "out_jobs.csv")
        write_summary(summary, out_dir)
    return summary, result
