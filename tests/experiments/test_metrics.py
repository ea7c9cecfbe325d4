"""The metrics of docs/semantics/scheduling.md#metrics on hand-computed tables."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from bftune.experiments.runs.metrics import (Aggregate, aggregate, bounded_slowdown, merge_jobs, merged_runs,
                                             period_metrics, summarize)
from bftune.experiments.runs.outjobs import COLUMNS, format_out_jobs
from bftune.experiments.runs.tables import cumulative_bsld, job_table, per_period, read_out_jobs, runs_frame
from bftune.schedulers.drivers.local.simulator import Run


def run(id, sub, procs, start, end, state="COMPLETED_SUCCESSFULLY", first=None, attempt=0, walltime=1000.0,
        runtime=None, orig=None):
    r = Run(id=id, first_id=first or id, seq=int(id.split("#")[0]), subtime=sub,
            original_submit=orig if orig is not None else sub, procs=procs, walltime=walltime,
            runtime=runtime if runtime is not None else end - start, user=1)
    r.start, r.end, r.state, r.alloc, r.attempt = start, end, state, [(0, procs - 1)], attempt
    return r


def test_wait_bsld_mwbs_utilisation_by_hand():
    runs = [
        run("0000001", 0, 2, 0, 100),  # wait 0, bsld 1
        run("0000002", 0, 1, 100, 105),  # wait 100, bsld max(105/max(5,10),1) = 10.5
        run("0000003", 50, 4, 150, 250),  # wait 100, bsld 200/100 = 2
    ]
    s = summarize(runs_frame(runs), m=4, tau=10)
    assert s["jobs"] == 3
    assert s["avg_wait"] == pytest.approx(200 / 3)
    assert s["max_wait"] == 100
    assert s["avg_bsld"] == pytest.approx((1 + 10.5 + 2) / 3)
    assert s["mwbs"] == pytest.approx((1 * 2 + 10.5 * 1 + 2 * 4) / 7)
    # work = 100*2 + 5*1 + 100*4 = 605 ; span = 250 - 0
    assert s["utilization"] == pytest.approx(605 / (4 * 250))
    assert summarize(runs_frame(runs), m=4, tau=60)["avg_bsld"] == pytest.approx((1 + 105 / 60 + 2) / 3)


def test_killed_runs_merge_onto_the_original_job():
    runs = [
        run("0000007", 10, 4, 20, 50, state="COMPLETED_KILLED", runtime=200),  # 30 s wasted on 4 procs
        run("0000007#1", 50, 4, 60, 160, first="0000007", attempt=1, runtime=100),
        run("0000008", 10, 1, 10, 30),
    ]
    df = runs_frame(runs)
    jobs = job_table(df).set_index("job")
    assert jobs.loc["0000007", "submit"] == 10  # the original r_j, not the rerun's registration
    assert jobs.loc["0000007", "wait"] == 50
    assert jobs.loc["0000007", "kills"] == 1
    assert jobs.loc["0000007", "wasted_work"] == 120
    s = summarize(df, m=4, tau=10)
    assert s["jobs"] == 2 and s["runs"] == 3
    assert s["killed_runs"] == 1 and s["restarted_jobs"] == 1
    assert s["wasted_work"] == 120
    assert s["mean_rtw"] == pytest.approx(30 / 100)
    assert s["avg_wait"] == pytest.approx((50 + 0) / 2)
    # bsld of job 7 uses r_j and the final run: (160 - 10) / 100
    assert s["max_bsld"] == pytest.approx(1.5)


def test_out_jobs_text_round_trips_and_matches_batsims_shape(tmp_path):
    runs = [run("0000001", 0, 2, 5, 100), run("0000002#1", 30, 1, 40, 45, first="0000002", attempt=1)]
    text = format_out_jobs(runs)
    lines = text.splitlines()
    assert lines[0] == ",".join(COLUMNS)
    assert lines[1] == ('0000001,w0,d95,0.000000,2,1000.000000,1,COMPLETED_SUCCESSFULLY,5.000000,95.000000,'
                        '100.000000,5.000000,100.000000,1.052632,0-1,-1.000000,""')
    assert lines[2].endswith(''',"{'parent_job': 'w0!0000002', 'nb_resubmit': 1}"''')
    path = tmp_path / "out_jobs.csv"
    path.write_text(text)
    df = read_out_jobs(path)
    assert list(df["job_id"]) == ["0000001", "0000002#1"]


def test_read_out_jobs_names_the_file_on_bad_input(tmp_path):
    bad = tmp_path / "x.csv"
    bad.write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="x.csv"):
        read_out_jobs(bad)


def test_per_period_and_cumulative_curves():
    runs = [run("0000001", 0, 1, 0, 10), run("0000002", 0, 1, 10, 20), run("0000003", 100, 1, 130, 140)]
    df = runs_frame(runs)
    pp = per_period(df, period=50, tau=10)
    assert list(pp["period"]) == [0, 2]
    assert list(pp["max_wait"]) == [10, 30]
    cum = cumulative_bsld(df, tau=10)
    assert list(cum["time"]) == [10, 20, 140]
    assert list(cum["cumulative_bsld"]) == pytest.approx([1, 3, 7])


def test_empty_table():
    df = pd.DataFrame(columns=COLUMNS)
    s = summarize(df, m=4)
    assert s["jobs"] == 0 and math.isnan(s["avg_wait"])


# Columns of out_jobs.csv as plain lists: job 1 killed twice (rerun as #1, #2), job 2 rejected, job 4 at its walltime.
NAN = math.nan
KILLS_RERUNS_REJECTED = {
    "job_id": ["0000001", "0000002", "0000003", "0000001#1", "0000001#2", "0000004"],
    "workload_name": ["w0"] * 6,
    "submission_time": [0.0, 1.0, 2.0, 26.0, 41.0, 50.0],
    "requested_number_of_resources": [2, 8, 4, 2, 2, 1],
    "requested_time": [100.0, 100.0, 100.0, 100.0, 100.0, 100.0],
    "final_state": ["COMPLETED_KILLED", "REJECTED", "COMPLETED_SUCCESSFULLY", "COMPLETED_KILLED",
                    "COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED"],
    "starting_time": [5.0, NAN, 10.0, 30.0, 45.0, 95.0],
    "execution_time": [20.0, NAN, 30.0, 10.0, 50.0, 100.0],
    "finish_time": [25.0, NAN, 40.0, 40.0, 95.0, 195.0],
}
_TEXT = ("job_id", "workload_name", "final_state")


def as_arrays(cols: dict) -> dict:
    """The columns as outjobs.runs_columns used to give them: numpy arrays, one workload name repeated."""
    return {k: np.asarray(v, dtype=object if k in _TEXT else None) for k, v in cols.items()}


def test_merged_runs_by_hand_with_kills_reruns_and_a_rejected_job():
    jobs = merged_runs(KILLS_RERUNS_REJECTED)
    assert jobs["job"] == ["0000001", "0000003", "0000004"]  # order of each job's first run; job 2 left out
    assert jobs["submit"] == [0.0, 2.0, 50.0]  # r_j of job 1 is its first run's submission
    assert jobs["wait"] == [45.0, 8.0, 45.0] and jobs["runtime"] == [50.0, 30.0, 100.0]
    assert jobs["kills"] == [2, 0, 0] and jobs["total_run_time"] == [80.0, 30.0, 100.0]
    assert jobs["wasted_work"] == [60.0, 0.0, 0.0]  # (20 + 10) s on 2 processors
    s = summarize(KILLS_RERUNS_REJECTED, m=8, tau=10)
    assert (s["jobs"], s["runs"], s["rejected"], s["killed_runs"], s["restarted_jobs"]) == (3, 6, 1, 2, 1)
    assert s["walltime_reached"] == 1 and s["mean_kills_per_restarted_job"] == 2.0
    assert s["mean_rtw"] == pytest.approx(30 / 50) and s["wasted_work"] == 60.0
    assert s["max_bsld"] == pytest.approx(95 / 50) and s["makespan"] == 195.0 and s["first_submit"] == 0.0


@pytest.mark.parametrize("workload", [["w0"] * 6, "w0", np.asarray("w0"), np.full(6, "w0")])
def test_summarize_is_the_same_for_lists_arrays_and_a_dataframe(workload):
    lists = {**KILLS_RERUNS_REJECTED, "workload_name": workload}
    arrays = {**as_arrays(KILLS_RERUNS_REJECTED), "workload_name": workload}
    frame = pd.DataFrame(as_arrays(KILLS_RERUNS_REJECTED))
    tuples = {k: tuple(v) for k, v in KILLS_RERUNS_REJECTED.items()}
    expected = summarize(lists, m=8, tau=10)
    for cols in (arrays, frame, tuples):
        got = summarize(cols, m=8, tau=10)
        assert got == expected
        assert {k: type(v) for k, v in got.items()} == {k: type(v) for k, v in expected.items()}
    assert all(type(v) in (int, float) for v in expected.values())  # Python numbers, no numpy scalars


def test_merge_jobs_keeps_numpy_arrays_and_their_dtypes():
    for cols in (KILLS_RERUNS_REJECTED, as_arrays(KILLS_RERUNS_REJECTED), pd.DataFrame(KILLS_RERUNS_REJECTED)):
        jobs = merge_jobs(cols)
        assert {c: a.dtype.kind for c, a in jobs.items()} == {
            "job": "O", "workload": "O", "submit": "f", "procs": "i", "walltime": "f", "start": "f", "end": "f",
            "runtime": "f", "wait": "f", "state": "O", "kills": "i", "total_run_time": "f", "wasted_work": "f"}
        assert jobs["procs"].dtype == np.int64 and jobs["kills"].dtype == np.int64
        assert jobs["job"].tolist() == ["0000001", "0000003", "0000004"]
        bsld = bounded_slowdown(jobs, 10.0)
        assert isinstance(bsld, np.ndarray) and bsld.tolist() == pytest.approx([95 / 50, 38 / 30, 145 / 100])


def test_period_metrics_by_hand_and_as_summarize():
    runs = [
        run("0000001", 0, 2, 0, 100),  # wait 0, bsld 1
        run("0000002", 0, 1, 0, 40, state="COMPLETED_KILLED"),  # killed: left out
        run("0000002#1", 60, 1, 100, 105, first="0000002", attempt=1, orig=0),  # wait 100 from r_j, bsld 105/10
        run("0000003", 50, 4, 150, 250),  # wait 100, bsld 200/100 = 2
        run("0000004", 70, 64, 70, 70, state="REJECTED"),  # never ran: left out
    ]
    got = period_metrics(runs, 10.0)
    assert got == {"jobs": 3, "avg_wait": 200 / 3, "max_wait": 100.0, "avg_bsld": (1 + 10.5 + 2) / 3,
                   "total_wait": 200.0}
    s = summarize(runs_frame(runs), m=64, tau=10.0)
    assert {k: s[k] for k in ("jobs", "avg_wait", "max_wait", "avg_bsld")} == {k: got[k] for k in
                                                                               ("jobs", "avg_wait", "max_wait", "avg_bsld")}
    empty = period_metrics([], 10.0)
    assert empty["jobs"] == 0 and empty["total_wait"] == 0.0 and math.isnan(empty["avg_bsld"])


def test_two_runs_of_a_job_not_killed_is_an_error():
    cols = {k: v[:3] for k, v in KILLS_RERUNS_REJECTED.items()}
    cols["job_id"] = ["0000001", "0000002", "0000001#1"]
    cols["final_state"] = ["COMPLETED_SUCCESSFULLY", "REJECTED", "COMPLETED_SUCCESSFULLY"]
    with pytest.raises(ValueError, match="job 0000001 of workload w0 has more than one run that was not killed"):
        summarize(cols, m=8)


def test_bounded_slowdown_propagates_nan_as_numpy_does():
    jobs = {"end": [NAN, 10.0, 10.0], "submit": [0.0, NAN, 0.0], "runtime": [5.0, 5.0, NAN]}
    assert np.isnan(bounded_slowdown(jobs, 10.0)).all()


def test_summarize_imports_no_numpy():
    """``bftune simulate`` must not pay numpy's import: neither bftune nor a summary of lists imports it."""
    code = ("import json, sys\n"
            "import bftune\n"
            "assert 'numpy' not in sys.modules, 'importing bftune imported numpy'\n"
            "from bftune.experiments.runs.metrics import summarize\n"
            "nan = float('nan')\n"
            f"summary = summarize({KILLS_RERUNS_REJECTED!r}, 8, 10.0)\n"
            "assert 'numpy' not in sys.modules, 'summarize imported numpy'\n"
            "print(json.dumps(summary))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout) == summarize(KILLS_RERUNS_REJECTED, 8, 10.0)


# --- the one aggregate ------------------------------------------------------------------------------------------


def test_aggregate_by_hand():
    # waits 0, 10, 50; bsld 1, 2, 6 with 1, 4 and 2 processors: MWBS = (1 + 8 + 12) / 7 = 3
    agg = aggregate(wait=[0.0, 10.0, 50.0], bsld=[1.0, 2.0, 6.0], procs=[1, 4, 2])
    assert agg == Aggregate(jobs=3, total_wait=60.0, avg_wait=20.0, max_wait=50.0, avg_bsld=3.0, max_bsld=6.0,
                            mwbs=3.0)


def test_aggregate_of_only_waits_or_only_slowdowns_leaves_the_others_undefined():
    waits = aggregate(wait=np.array([3.0, 5.0]))
    assert (waits.jobs, waits.avg_wait, waits.max_wait) == (2, 4.0, 5.0)
    assert math.isnan(waits.avg_bsld) and math.isnan(waits.mwbs)
    slowdowns = aggregate(bsld=pd.Series([1.0, 3.0]), procs=pd.Series([2, 2]))
    assert (slowdowns.avg_bsld, slowdowns.mwbs) == (2.0, 2.0) and math.isnan(slowdowns.avg_wait)


def test_aggregate_of_no_job_is_undefined_and_a_nan_maximum_is_nan():
    empty = aggregate(wait=[], bsld=[])
    assert empty.jobs == 0 and empty.total_wait == 0.0
    assert all(math.isnan(v) for v in (empty.avg_wait, empty.max_wait, empty.avg_bsld, empty.max_bsld, empty.mwbs))
    assert math.isnan(aggregate(wait=[float("nan"), 3.0]).max_wait)  # as numpy's max, not Python's


def test_aggregate_means_do_not_depend_on_the_order_of_the_jobs():
    waits = [1e16, 1.0, -1e16, 3.0] * 25  # a naive left-to-right sum loses the small terms
    assert aggregate(wait=waits).avg_wait == aggregate(wait=sorted(waits)).avg_wait == 1.0


def test_every_table_of_a_set_of_jobs_is_the_aggregate():
    jobs = [run("0000001", 0, 2, 0, 100), run("0000002", 10, 1, 100, 130), run("0000003", 20, 4, 130, 400)]
    cols = runs_frame(jobs)
    agg = aggregate(wait=[0.0, 90.0, 110.0], bsld=[1.0, 4.0, 1.0 + 110.0 / 270.0], procs=[2, 1, 4])
    s = summarize(cols, m=4, tau=10.0)
    assert (s["avg_wait"], s["max_wait"], s["avg_bsld"], s["max_bsld"], s["mwbs"]) == \
        (agg.avg_wait, agg.max_wait, agg.avg_bsld, agg.max_bsld, agg.mwbs)
    p = period_metrics(jobs, tau=10.0)
    assert (p["avg_wait"], p["max_wait"], p["avg_bsld"], p["total_wait"]) == \
        (agg.avg_wait, agg.max_wait, agg.avg_bsld, agg.total_wait)
    one = per_period(cols, period=1e9, tau=10.0).iloc[0]
    assert (one["jobs"], one["avg_wait"], one["max_wait"], one["avg_bsld"]) == \
        (3, agg.avg_wait, agg.max_wait, agg.avg_bsld)
