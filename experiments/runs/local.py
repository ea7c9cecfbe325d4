"""Run one configuration in the local simulator and store its results."""

from __future__ import annotations

import time
from pathlib import Path

from bftune.experiments.runs.metrics import check_tau
from bftune.experiments.runs.outjobs import runs_columns, whole_columns, write_out_jobs
from bftune.experiments.runs.summary import build_summary, write_summary
from bftune.support.files import result_dir
from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.drivers.local.simulator import SimResult, simulate
from bftune.workloads.model import Trace


#: What a local result directory holds (so that one written before the result marker is replaced too).
LOCAL_RESULT = ("out_jobs.csv", "summary.json")


def workload_info(trace: Trace) -> dict:
    info = {"name": trace.name, "source": trace.source, "jobs": len(trace.jobs), "m": trace.max_procs}
    tres = int(trace.header.get("TRESJobs", "0") or 0)
    if tres:  # a Slurm dump's jobs that asked for GPUs or other TRES: scheduled on processors only, said so
        info["tres_jobs"] = tres
    return info


def run_local(trace: Trace, config: SchedulerConfig, out_dir: str | Path | None = None,
              tau: float = 10.0, replay_memo: dict[str, float] | None = None) -> tuple[dict, SimResult]:
    """Simulate ``trace`` under ``config``; write out_jobs.csv and summary.json if ``out_dir``.

    ``out_dir`` is checked before the simulation and replaced as a whole after
    it (``bftune.support.files.result_dir``): it holds the old pair or the new pair.
    """
    tau = check_tau(tau)
    target = result_dir(out_dir, replaces=LOCAL_RESULT) if out_dir is not None else None
    m = trace.max_procs
    t0 = time.perf_counter()
    result = simulate(trace.jobs, m, config.build(m, trace.clock, replay_memo))
    elapsed = time.perf_counter() - t0
    extra = {"backend": "local", "simulation_seconds": round(elapsed, 3)}
    extra.update(result.report)
    runs = whole_columns(result.runs)  # once, for the summary and the file
    summary = build_summary(runs_columns(runs), m, tau, config.to_dict(), trace.cleaning, workload_info(trace), extra)
    if target is not None:
        with target as stage:
            write_out_jobs(runs, stage / "out_jobs.csv")
            write_summary(summary, stage)
    return summary, result
