"""The out_jobs.csv writer and the summary's columns without numpy.

`bftune simulate` must not import numpy (60 ms and 20 MiB of a 90 MiB run):
the writer and :func:`runs_columns` work on plain lists.  Their fast paths
(integral columns written as ints, profile names formatted in the row,
rounding skipped for whole numbers) must write exactly what ``"%.6f"`` of
every value writes, and give the values read back from the file: checked
here against a plain row-by-row reference, on the awkward values (-0.0,
huge, infinite and NaN times, decimal ties, zero execution times, rejected
runs, reruns).
"""

from __future__ import annotations

import math
import random
import subprocess
import sys

import pytest
from bftune.experiments.runs.metrics import summarize
from bftune.experiments.runs.outjobs import COLUMNS, RunColumns, format_out_jobs, runs_columns, whole_columns
from bftune.schedulers.drivers.local.runs import REJECTED, STATES, Run
from bftune.workloads.batsim_json import profile_name

SUCCESS = "COMPLETED_SUCCESSFULLY"


def run(i: int, sub: float, start: float, end: float, *, state: str = SUCCESS, walltime: float = 1000.0,
        runtime: int | float = 5, attempt: int = 0, procs: int = 2) -> Run:
    first = str(i).zfill(7)
    rejected = state == REJECTED
    return Run(id=f"{first}#{attempt}" if attempt else first, first_id=first, seq=i, subtime=sub, original_submit=sub,
               procs=procs, walltime=walltime, runtime=runtime, user=1, start=-1.0 if rejected else start,
               end=-1.0 if rejected else end, state=state, alloc=None if rejected else [(0, procs - 1)],
               attempt=attempt)


def reference_row(r: Run, workload: str = "w0") -> str:
    """Batsim's row, the plain way: every time "%.6f" of the float."""
    meta = '""'
    if r.attempt:
        meta = '"' + str({"parent_job": f"{workload}!{r.first_id}", "nb_resubmit": r.attempt}).replace('"', '""') + '"'
    head = [r.id, workload, profile_name(r.runtime), "%.6f" % r.subtime, str(r.procs), "%.6f" % r.walltime]
    if r.state == REJECTED:
        return ",".join(head + ["0", REJECTED] + [""] * 8 + [meta])
    start, end, sub = float(r.start), float(r.end), float(r.subtime)
    execution, turnaround = end - start, end - sub
    stretch = turnaround / execution if execution > 0 else math.nan
    alloc = " ".join(f"{a}-{b}" if a != b else str(a) for a, b in r.alloc or ())
    return ",".join(head + [str(int(r.state == SUCCESS)), r.state] +
                    ["%.6f" % v for v in (start, execution, end, start - sub, turnaround, stretch)] +
                    [alloc, "-1.000000", meta])


def reference(runs: list[Run], workload: str = "w0") -> str:
    return "".join(line + "\n" for line in [",".join(COLUMNS)] + [reference_row(r, workload) for r in runs])


AWKWARD = [0.0, -0.0, 1.0, -1.0, 2.0 ** 53, 2.0 ** 53 + 2, 2.0 ** 60, -2.0 ** 60, 1e300, -1e300, 1e308, -1e308,
           math.inf, -math.inf, math.nan, 0.5, 1e-7, -1e-7, 5e-7, 2.5e-6, 123456.0000005, 1e15 + 0.5, 0.1]


def test_integral_times_written_as_ints_keep_the_text_of_percent_f():
    runs = [run(1, 0.0, 0.0, 10.0), run(2, 3.0, 10.0, 10.0),  # zero execution: stretch nan
            run(3, 2.0 ** 60, 2.0 ** 60 + 256, 2.0 ** 61, walltime=1e300), run(4, 5.0, 7.0, 9.0, state=REJECTED),
            run(5, 1.0, 2.0, 3.0, attempt=2, state="COMPLETED_KILLED", runtime=7.0)]
    assert format_out_jobs(runs) == reference(runs)
    assert "nan" in format_out_jobs(runs).splitlines()[2].split(",")


@pytest.mark.parametrize("column", ["subtime", "walltime", "start", "end"])
def test_negative_zero_is_not_written_as_an_int(column):
    runs = [run(1, 0.0, 0.0, 10.0), run(2, 1.0, 2.0, 3.0)]
    setattr(runs[0], column, -0.0)
    text = format_out_jobs(runs)
    assert text == reference(runs)
    assert "-0.000000" in text


def test_fractional_infinite_and_nan_times():
    runs = [run(1, 0.25, 1.5, 2.0, runtime=0.5), run(2, math.inf, math.nan, 3.0), run(3, 1.0, 2.0, -math.inf),
            run(4, 2.5e-6, 3.0000005, 1e15 + 0.5)]
    assert format_out_jobs(runs) == reference(runs)


def test_random_runs_match_the_reference():
    rng = random.Random(7)
    for trial in range(60):
        mode = rng.choice(["int", "frac", "awkward"])

        def value() -> float:
            if mode == "int":
                return float(rng.randrange(0, 10 ** 7))
            if mode == "frac":
                return rng.choice([float(rng.randrange(0, 10 ** 7)), rng.uniform(0, 1e7)])
            return rng.choice(AWKWARD + [float(rng.randrange(-10 ** 6, 10 ** 7))])

        runs = []
        for i in range(rng.choice([1, 3, 40, 300])):
            sub = value()
            start = sub + value() if mode != "awkward" else value()
            runs.append(run(i, sub, start, start + value() if mode != "awkward" else value(), walltime=value(),
                            state=rng.choice(STATES), attempt=rng.choice([0, 0, 1]),
                            runtime=rng.choice([rng.randrange(0, 10 ** 5), float(rng.randrange(0, 99)),
                                                rng.uniform(0, 1e4), -0.0])))
        workload = rng.choice(["w0", "w%1"])
        assert format_out_jobs(runs, workload) == reference(runs, workload), (trial, mode)


def test_summary_columns_are_lists_of_the_files_values():
    runs = [run(1, 2.5e-6, 1.0000005, 7.123456789), run(2, 3.0, 4.0, 9.0), run(3, 4.0, 0, 0, state=REJECTED),
            run(4, 0.1, 0.30000000000000004, 1e15 + 0.5, walltime=3600.0000005)]
    cols = runs_columns(runs, "w1")
    assert all(type(values) is list and len(values) == len(runs) for values in cols.values())
    assert cols["job_id"] == ["0000001", "0000002", "0000003", "0000004"]
    assert cols["workload_name"] == ["w1"] * 4
    assert cols["requested_number_of_resources"] == [2] * 4
    assert cols["final_state"] == [SUCCESS, SUCCESS, REJECTED, SUCCESS]
    file_value = {"submission_time": "subtime", "requested_time": "walltime", "starting_time": "start",
                  "finish_time": "end"}
    for column, field in file_value.items():
        expected = [float("%.6f" % getattr(r, field)) for r in runs]
        if column in ("starting_time", "finish_time"):
            expected[2] = math.nan  # a rejected job never ran: no times in the file
        got = cols[column]
        assert all(type(v) is float for v in got)
        assert all(a == b or (math.isnan(a) and math.isnan(b)) for a, b in zip(got, expected)), column
    assert cols["submission_time"][0] == 3e-06  # a decimal tie: numpy's round gives 2e-06, the file 0.000003
    assert math.isnan(cols["execution_time"][2])
    assert cols["execution_time"][1] == 5.0


def test_the_summary_reads_the_columns_it_shares_with_the_file_and_changes_none():
    # runs_columns hands the metrics the writer's own lists where no change is needed: summarize must only read.
    made = [run(1, 0.0, 1.0, 2.0), run(2, 1.0, 2.0, 4.0), run(3, 1.0, 4.0, 9.0)]
    runs = whole_columns(made)
    cols = runs_columns(runs)
    assert cols["job_id"] is runs.names and cols["submission_time"] is runs.subtime  # shared, not copied
    before = {name: list(values) for name, values in cols.items()}
    summary = summarize(cols, 4)
    assert cols == before and summary["jobs"] == 3 and summary["max_wait"] == 3.0
    assert format_out_jobs(runs) == reference(made)


def test_whole_columns_of_no_runs():
    empty = whole_columns([])
    assert isinstance(empty, RunColumns) and empty.names == []
    assert format_out_jobs(empty) == ",".join(COLUMNS) + "\n"
    assert runs_columns(empty) == {name: [] for name in runs_columns(empty)}


def test_a_slice_of_integral_columns_is_written_as_the_whole_says():
    # runs_columns remembers which whole columns are integral; the writer's slices reuse that (and only that).
    runs = [run(i, float(i), float(i) + 0.5 * (i >= 5000), float(i + 10)) for i in range(6000)]
    columns = whole_columns(runs)
    runs_columns(columns)
    assert columns.whole == {"subtime", "walltime", "end"}
    assert format_out_jobs(columns) == reference(runs)


PROBE = """
import sys
from bftune.experiments.runs.outjobs import format_out_jobs, runs_columns, whole_columns, write_out_jobs
from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.drivers.local.runs import Run
from bftune.schedulers.drivers.local.simulator import simulate
from bftune.workloads.model import JobRecord

jobs = [JobRecord(i, 3 * i, 1 + i % 3, 10 + i, 20 + i) for i in range(1, 40)] + [JobRecord(40, 50, 9, 10, 20)]
config = SchedulerConfig.from_options({"kill_after": "25"})
log = simulate(jobs, 4, config.build(4)).runs
objects = [Run("0000001", "0000001", 1, 0.5, 0.5, 2, 60.0, 10.0, 1, 1.25, 11.25, "COMPLETED_SUCCESSFULLY", [(0, 1)])]
for runs in (log, objects):
    columns = whole_columns(runs)
    summary = runs_columns(columns)
    write_out_jobs(columns, sys.argv[1])
    write_out_jobs(runs, sys.argv[1])
    text = format_out_jobs(runs)
assert any(r.state == "REJECTED" for r in log) and any(r.attempt for r in log)
print("NUMPY" if "numpy" in sys.modules else "NO NUMPY")
"""


def test_writer_and_summary_columns_import_no_numpy(tmp_path):
    proc = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path / "out_jobs.csv")], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1] == "NO NUMPY"
