"""The evaluation of index policies on 15-day windows: windows, scenarios, medians and the report's checks."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from bftune.experiments import index_evaluation as ev
from bftune.experiments.campaign import week_metrics
from bftune.workloads.model import JobRecord

DAY = 86400.0


def job(i, submit, runtime=100.0, procs=1):
    return JobRecord(id=i, submit=submit, procs=procs, runtime=runtime, walltime=2 * runtime)


def test_windows_are_full_non_overlapping_and_rebased():
    jobs = [job(1, 1000.0), job(2, 1000.0 + 3 * DAY), job(3, 1000.0 + 15 * DAY), job(4, 1000.0 + 29 * DAY),
            job(5, 1000.0 + 31 * DAY)]
    windows = ev.cut_windows(jobs)
    assert [[j.id for j in w] for w in windows] == [[1, 2], [3, 4]]  # the partial third window is dropped
    assert [j.submit for j in windows[1]] == [0.0, 14 * DAY]  # each window's own clock
    trace_clock = ev.cut_windows(jobs, clock="trace", limit=1)
    assert [j.submit for j in trace_clock[0]] == [1000.0, 1000.0 + 3 * DAY]
    assert ev.cut_windows([]) == []


def test_lublin_sequences_use_actual_runtimes_and_no_backfilling():
    trace = ev.lublin_trace(3, 64, 5)
    assert all(j.walltime == j.runtime for j in trace.jobs)
    assert len(ev.cut_windows(trace.jobs, limit=3)) == 3
    assert ev.scenario_options("lublin", "SAF") == {"policy": "SAF", "backfill": False}
    assert ev.scenario_options("archive", "Lin") == {"policy": "Lin"}
    m, windows = ev.source_windows("lublin", "lublin-64", "window", 2, 64, 5)
    rows = ev.window_rows(m, windows, {"policy": "FCFS", "backfill": False}, 10.0, week_metrics)
    assert [r["window"] for r in rows] == [0, 1] and all(r["jobs"] > 0 and r["avg_bsld"] >= 1 for r in rows)
    assert ev.summarise(rows)["windows"] == 2


def test_run_item_and_report_pieces(tmp_path):
    rows = []
    for policy in ("FCFS", "SAF", "F2", "Lin", "Qdr"):
        rec = ev.run_item({"scenario": "lublin", "source": "lublin-256", "policy": policy, "backfill": False,
                           "clock": "window", "sequences": 2})
        rows += [{"scenario": "lublin", "source": "lublin-256", "policy": policy, "backfill": False, **r}
                 for r in rec["windows"]]
    frame = pd.DataFrame(rows)
    table = ev.medians(frame)
    assert list(table.columns) == ["FCFS", "SAF", "F2", "Lin", "Qdr"]
    lines = ev.claim_checks(table)
    assert len(lines) == 1 and "Lin ranks" in lines[0] and "Qdr/FCFS" in lines[0]
    plots = ev.box_plots(frame, Path(tmp_path))
    assert [p.name for p in plots] == ["index_lublin_nobf.png"] and plots[0].stat().st_size > 0


def test_backfilling_gains_compare_the_same_source():
    idx = pd.MultiIndex.from_tuples([("archive", "KTH", True), ("archive", "KTH", False)],
                                    names=["scenario", "source", "backfill"])
    table = pd.DataFrame({"FCFS": [10.0, 80.0], "SAF": [5.0, 6.0]}, index=idx)
    assert ev.backfilling_gains(table) == ["- **KTH**: FCFS x8.00, SAF x1.20"]
    with pytest.raises(KeyError):
        table.loc[("archive", "SDSC", True)]
