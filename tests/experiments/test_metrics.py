"""Metrics of SPEC section 3 on hand-computed tables."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from bftune.experiments.metrics import summarize
from bftune.experiments.outjobs import COLUMNS, format_out_jobs
from bftune.experiments.tables import cumulative_bsld, job_table, per_period, read_out_jobs, runs_frame
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
