"""A job that can never run is a reject decision of the core, applied by the local driver as Batsim does."""

from __future__ import annotations

import json

from bftune.experiments.runs.local import run_local
from bftune.experiments.runs.tables import read_out_jobs
from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.drivers.local.simulator import simulate
from bftune.workloads.model import JobRecord, Trace


def records():
    return [JobRecord(1, 0.0, 2, 10.0, 20.0), JobRecord(2, 0.0, 9, 10.0, 20.0), JobRecord(3, 5.0, 4, 10.0, 20.0)]


def test_a_rejected_job_is_a_rejected_row_at_its_submission_and_never_runs():
    result = simulate(records(), 4, SchedulerConfig().build(4))
    states = {run.id: run.state for run in result.runs}
    assert states == {"0000001": "COMPLETED_SUCCESSFULLY", "0000002": "REJECTED", "0000003": "COMPLETED_SUCCESSFULLY"}
    assert [run.id for run in result.runs][0] == "0000002"  # written when rejected (t = 0), as Batsim does


def test_rejected_rows_in_out_jobs_and_the_summary(tmp_path):
    trace = Trace(records(), max_procs=4, name="t")
    summary, _ = run_local(trace, SchedulerConfig(), tmp_path)
    assert summary["rejected"] == 1 and summary["jobs"] == 2
    row = [line for line in (tmp_path / "out_jobs.csv").read_text().splitlines() if line.startswith("0000002,")][0]
    # Batsim's JobsTracer: success 0, state REJECTED, no times, no machines, no energy.
    assert row == '0000002,w0,d10,0.000000,9,20.000000,0,REJECTED,,,,,,,,,""'
    df = read_out_jobs(tmp_path / "out_jobs.csv")
    assert list(df["final_state"]).count("REJECTED") == 1
    assert json.loads((tmp_path / "summary.json").read_text())["rejected"] == 1
