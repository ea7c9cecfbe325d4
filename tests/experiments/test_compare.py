"""Job-by-job comparison of two out_jobs tables (bftune.experiments.runs.compare)."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from bftune.experiments.runs.compare import diff_out_jobs, format_report
from bftune.experiments.runs.outjobs import COLUMNS

HEADER = ",".join(COLUMNS)


def row(job_id, start, finish, state="COMPLETED_SUCCESSFULLY", alloc="0-3", submit=0.0, procs=4):
    return (f"{job_id},w0,d1,{submit:.6f},{procs},100.000000,{1 if state == 'COMPLETED_SUCCESSFULLY' else 0},{state},"
            f"{start:.6f},{finish - start:.6f},{finish:.6f},{start - submit:.6f},{finish - submit:.6f},1.000000,"
            f"{alloc},-1.000000,\"\"")


def table(*rows) -> pd.DataFrame:
    return pd.read_csv(io.StringIO("\n".join([HEADER, *rows]) + "\n"), dtype={"job_id": str, "allocated_resources": str},
                       keep_default_na=False)


BASE = [row("0000001", 0, 10), row("0000002", 0, 20, alloc="4-7"), row("0000003", 10, 30, alloc="0-3")]


def test_identical_tables_agree():
    report = diff_out_jobs(table(*BASE), table(*reversed(BASE)))  # row order does not matter
    assert report["mismatches"] == 0 and report["matching"] == 3 and report["compared"] == 3
    assert report["first"] is None and report["largest_difference"] is None
    assert "all runs agree" in format_report(report)


def test_first_mismatch_is_the_earliest_start_and_largest_is_reported():
    b = [row("0000001", 0, 10), row("0000002", 5, 25, alloc="4-7"), row("0000003", 40, 60, alloc="0-3")]
    report = diff_out_jobs(table(*BASE), table(*b))
    assert report["mismatches"] == 2
    assert report["fields"] == {"starting_time": 2, "finish_time": 2, "final_state": 0, "allocated_resources": 0}
    first = report["first"]
    assert first["job_id"] == "0000002" and first["fields"] == ["starting_time", "finish_time"]
    assert first["local"]["start"] == 0 and first["batsim"]["start"] == 5
    big = report["largest_difference"]
    assert big["job_id"] == "0000003" and big["difference"] == 30 and big["local"] == 10 and big["batsim"] == 40
    text = format_report(report)
    assert "MISMATCH: 2 runs differ" in text and "first differing run: 0000002" in text
    assert "largest difference: 30 s" in text


def test_allocations_compared_as_machine_sets():
    b = [row("0000001", 0, 10, alloc="0 1 2 3"), BASE[1], BASE[2]]
    assert diff_out_jobs(table(*BASE), table(*b))["mismatches"] == 0
    c = [row("0000001", 0, 10, alloc="4-7"), BASE[1], BASE[2]]
    report = diff_out_jobs(table(*BASE), table(*c))
    assert report["fields"]["allocated_resources"] == 1 and report["first"]["fields"] == ["allocated_resources"]
    assert diff_out_jobs(table(*BASE), table(*c), compare_alloc=False)["mismatches"] == 0


def test_missing_rows_and_kills():
    a = BASE + [row("0000004", 30, 40, state="COMPLETED_KILLED"), row("0000004#1", 40, 90)]
    b = BASE + [row("0000004", 30, 90)]
    report = diff_out_jobs(table(*a), table(*b))
    assert report["only_in"] == {"local": 1, "batsim": 0}
    assert report["only_in_examples"]["local"] == ["0000004#1"]
    assert report["kills"] == {"local": 1, "batsim": 0} and report["kill_differences"] == 1
    assert report["fields"]["final_state"] == 1
    assert report["mismatches"] == 2
    assert report["first"]["job_id"] == "0000004"
    assert "only in local=1" in format_report(report)


def test_state_difference():
    b = [row("0000001", 0, 10, state="COMPLETED_WALLTIME_REACHED"), BASE[1], BASE[2]]
    report = diff_out_jobs(table(*BASE), table(*b))
    assert report["first"]["fields"] == ["final_state"]


def test_tolerance():
    b = [row("0000001", 0.0004, 10.0004), BASE[1], BASE[2]]
    assert diff_out_jobs(table(*BASE), table(*b))["mismatches"] == 1
    assert diff_out_jobs(table(*BASE), table(*b), tolerance=0.001)["mismatches"] == 0


def test_names_and_duplicates():
    report = diff_out_jobs(table(*BASE), table(*BASE), names=("left", "right"))
    assert report["rows"] == {"left": 3, "right": 3}
    with pytest.raises(ValueError, match="job id '0000001' appears on more than one row"):
        diff_out_jobs(table(*BASE, BASE[0]), table(*BASE))
    with pytest.raises(ValueError, match="missing column"):
        diff_out_jobs(pd.DataFrame({"job_id": ["1"]}), table(*BASE))


def test_empty_tables():
    report = diff_out_jobs(table(), table())
    assert report["mismatches"] == 0 and report["jobs"] == 0
