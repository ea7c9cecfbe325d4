"""Reading a workload file by its type (bftune.workloads.read): one function for every entry point."""

from __future__ import annotations

import gzip

import pytest
from bftune.workloads.batsim_json import write_batsim_workload
from bftune.workloads.errors import WorkloadError
from bftune.workloads.model import JobRecord, Trace
from bftune.workloads.read import read_workload
from bftune.workloads.swf_write import write_swf


def small_trace() -> Trace:
    jobs = [JobRecord(id=1, submit=0, procs=1, runtime=10, walltime=20, user=1),
            JobRecord(id=2, submit=5, procs=8, runtime=30, walltime=40, user=2),
            JobRecord(id=3, submit=9, procs=2, runtime=5, walltime=0, user=1)]  # no requested time
    return Trace(jobs=[], max_procs=8, name="small").with_jobs(jobs)


def test_swf_plain_gzip_and_json_give_the_same_jobs(tmp_path):
    write_swf(small_trace(), tmp_path / "t.swf")
    (tmp_path / "t.swf.gz").write_bytes(gzip.compress((tmp_path / "t.swf").read_bytes()))
    write_batsim_workload(small_trace().with_jobs(small_trace().jobs[:2]), tmp_path / "t.json")
    swf, gz = read_workload(tmp_path / "t.swf"), read_workload(str(tmp_path / "t.swf.gz"))
    ids = [(j.id, j.submit, j.procs, j.runtime, j.walltime) for j in swf.jobs]
    assert ids == [(j.id, j.submit, j.procs, j.runtime, j.walltime) for j in gz.jobs] == [(1, 0, 1, 10, 20),
                                                                                           (2, 5, 8, 30, 40)]
    assert swf.cleaning.get("walltime_le_0") == 1  # job 3 has no requested time: cleaned out (docs/semantics/workloads.md#cleaning)
    json_jobs = read_workload(tmp_path / "t.json").jobs
    assert [(j.id, j.procs, j.runtime, j.walltime) for j in json_jobs] == [(1, 1, 10, 20), (2, 8, 30, 40)]


def test_options_reach_either_reader(tmp_path):
    write_swf(small_trace(), tmp_path / "t.swf")
    kept = read_workload(tmp_path / "t.swf", walltime_from_runtime=True, procs=4)
    assert [j.id for j in kept.jobs] == [1, 3] and kept.max_procs == 4 and kept.cleaning["procs_gt_machine"] == 1
    write_batsim_workload(small_trace().with_jobs(small_trace().jobs[:2]), tmp_path / "t.json")
    narrow = read_workload(tmp_path / "t.json", procs=4)  # a Batsim workload on a smaller machine
    assert [j.id for j in narrow.jobs] == [1] and narrow.max_procs == 4 and narrow.cleaning["procs_gt_machine"] == 1
    assert read_workload(tmp_path / "t.json", cleaning="spec").max_procs == 8


@pytest.mark.parametrize("call, message", [
    ({"path": "missing.swf"}, "missing.swf: no such file"),
    ({"path": "t.json", "cleaning": "ran"}, "t.json: cleaning ran applies to SWF traces only"),
    ({"path": "t.json", "procs": 0}, "procs must be a positive integer"),
    ({"path": "big.json", "procs": 1}, "big.json: no job fits on 1 processors"),
    ({"path": "t.swf", "cleaning": "nosuch"}, "t.swf: cleaning must be one of drop-overruns, keep-overruns"),
])
def test_errors_are_one_line_naming_the_file_or_the_value(tmp_path, call, message):
    write_swf(small_trace(), tmp_path / "t.swf")
    write_batsim_workload(small_trace(), tmp_path / "t.json")
    write_batsim_workload(small_trace().with_jobs(small_trace().jobs[1:2]), tmp_path / "big.json")
    call = dict(call)
    with pytest.raises(WorkloadError) as caught:
        read_workload(tmp_path / call.pop("path"), **call)
    assert message in str(caught.value) and "\n" not in str(caught.value)
