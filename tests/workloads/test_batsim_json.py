"""Batsim workload JSON writer and reader (bftune.workloads.batsim_json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bftune.workloads.batsim_json import (
    batsim_job_id,
    batsim_workload_text,
    id_width,
    profile_name,
    read_batsim_workload,
    write_batsim_workload,
)
from bftune.workloads.errors import WorkloadError
from bftune.workloads.model import JobRecord, Trace
from bftune.workloads.swf import read_swf
from locations import SHARED

KTH_SWF = SHARED / "workloads" / "KTH-SP2-1996-2.1-cln.swf.gz"
GOLDEN = SHARED / "batsim" / "workloads"


def need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"shared file {path} is not available (the ../shared checkout is missing)")
    return path


def small_trace() -> Trace:
    jobs = [
        JobRecord(id=3, submit=0, procs=2, runtime=50, walltime=60, user=4),
        JobRecord(id=1, submit=0, procs=1, runtime=7.5, walltime=10.0, user=2),
        JobRecord(id=2, submit=12.0, procs=4, runtime=50, walltime=50, user=-1),
    ]
    return Trace(jobs=[], max_procs=4, name="small").with_jobs(jobs)


def test_writer_layout_numbers_and_profiles(tmp_path):
    text = batsim_workload_text(small_trace())
    assert text == (
        '{"nb_res": 4,\n'
        ' "jobs": [\n'
        '  {"id": "0000001", "subtime": 0, "res": 1, "walltime": 10, "profile": "d7.5", "user": 2},\n'
        '  {"id": "0000003", "subtime": 0, "res": 2, "walltime": 60, "profile": "d50", "user": 4},\n'
        '  {"id": "0000002", "subtime": 12, "res": 4, "walltime": 50, "profile": "d50", "user": -1}\n'
        " ],\n"
        ' "profiles": {\n'
        '  "d7.5": {"type": "delay", "delay": 7.5},\n'
        '  "d50": {"type": "delay", "delay": 50}\n'
        " }\n"
        "}\n"
    )
    doc = json.loads(text)
    assert isinstance(doc["jobs"][2]["subtime"], int)  # 12.0 written as 12


def test_id_width_grows_for_large_ids():
    trace = small_trace()
    assert id_width(trace) == 7
    wide = trace.with_jobs(trace.jobs + [JobRecord(id=123456789, submit=1, procs=1, runtime=1, walltime=1)])
    assert id_width(wide) == 9
    ids = [j["id"] for j in json.loads(batsim_workload_text(wide))["jobs"]]
    assert set(map(len, ids)) == {9}
    assert sorted(ids) == [batsim_job_id(i, 9) for i in sorted(int(x) for x in ids)]
    assert batsim_job_id(15) == "0000015"
    assert profile_name(3477) == "d3477" and profile_name(3477.0) == "d3477"
    with pytest.raises(WorkloadError):
        batsim_job_id(-1)


def test_round_trip_small(tmp_path):
    trace = small_trace()
    path = write_batsim_workload(trace, tmp_path / "w.json")
    back = read_batsim_workload(path)
    assert back.max_procs == 4
    assert back.name == "w"
    assert back.jobs == trace.jobs


def test_reader_errors_name_the_job(tmp_path):
    def write(doc) -> Path:
        path = tmp_path / "bad.json"
        path.write_text(json.dumps(doc))
        return path

    good_job = {"id": "0000001", "subtime": 0, "res": 1, "walltime": 10, "profile": "d5"}
    profiles = {"d5": {"type": "delay", "delay": 5}}
    assert len(read_batsim_workload(write({"nb_res": 2, "jobs": [good_job], "profiles": profiles}))) == 1
    cases = [
        ({"nb_res": 0, "jobs": [good_job], "profiles": profiles}, "nb_res"),
        ({"nb_res": 2, "jobs": [{**good_job, "id": "0000001#1"}], "profiles": profiles}, "'0000001#1'.*digits"),
        ({"nb_res": 2, "jobs": [{**good_job, "res": 3}], "profiles": profiles}, "'res' must be an integer in 1..2"),
        ({"nb_res": 2, "jobs": [{**good_job, "profile": "d9"}], "profiles": profiles}, "'d9' is not defined"),
        ({"nb_res": 2, "jobs": [good_job], "profiles": {"d5": {"type": "parallel"}}}, "only 'delay'"),
        ({"nb_res": 2, "jobs": [{**good_job, "walltime": -1}], "profiles": profiles}, "no positive walltime"),
        ({"nb_res": 2, "jobs": [good_job, good_job], "profiles": profiles}, "more than once"),
        ({"nb_res": 2, "jobs": [], "profiles": profiles}, "no jobs"),
    ]
    for doc, message in cases:
        with pytest.raises(WorkloadError, match=message):
            read_batsim_workload(write(doc))
    no_walltime = {"nb_res": 2, "jobs": [{**good_job, "walltime": -1}], "profiles": profiles}
    trace = read_batsim_workload(write(no_walltime), walltime_fallback="runtime")
    assert trace.jobs[0].walltime == 5 and trace.cleaning == {"walltime_from_runtime": 1}
    (tmp_path / "broken.json").write_text('{"nb_res": 2,\n "jobs": [}')
    with pytest.raises(WorkloadError, match="broken.json:2: invalid JSON"):
        read_batsim_workload(tmp_path / "broken.json")


@pytest.mark.slow
def test_kth_sp2_conversion_equals_golden_workload(tmp_path):
    trace = read_swf(need(KTH_SWF))
    path = write_batsim_workload(trace, tmp_path / "kth_sp2.json")
    golden_path = need(GOLDEN / "kth_sp2.json")
    ours = json.loads(path.read_text())
    golden = json.loads(golden_path.read_text())
    assert ours["nb_res"] == golden["nb_res"] == 100
    assert len(ours["jobs"]) == 27_992
    assert ours["jobs"] == golden["jobs"]
    assert ours["profiles"] == golden["profiles"]
    # the trace's clock follows nb_res (the golden trace had none); the layout is the same otherwise, byte for byte
    assert (ours["unix_start_time"], ours["timezone"]) == (trace.unix_start_time, trace.timezone) != (None, None)
    lines = path.read_text().splitlines(keepends=True)
    assert lines[1:3] == [f' "unix_start_time": {trace.unix_start_time},\n', f' "timezone": "{trace.timezone}",\n']
    assert "".join(lines[:1] + lines[3:]).encode() == golden_path.read_bytes()

    back = read_batsim_workload(path)
    assert back.max_procs == 100 and back.clock == trace.clock
    key = lambda j: (j.id, j.submit, j.procs, j.runtime, j.walltime, j.user)  # noqa: E731
    assert list(map(key, back.jobs)) == list(map(key, trace.jobs))


def test_small_50_is_the_first_50_jobs_with_m_16(tmp_path):
    trace = read_swf(need(KTH_SWF), max_procs=16)
    small = trace.with_jobs(trace.jobs[:50], unix_start_time=None, timezone=None)  # the golden file has no clock
    assert batsim_workload_text(small) == need(GOLDEN / "small_50.json").read_text()


@pytest.mark.parametrize("name", ["walltime_kill", "requeue_10", "call_me_later", "small_50"])
def test_golden_hand_made_workloads_round_trip(name, tmp_path):
    golden = need(GOLDEN / f"{name}.json")
    trace = read_batsim_workload(golden)
    assert trace.max_procs == json.loads(golden.read_text())["nb_res"]
    out = write_batsim_workload(trace, tmp_path / f"{name}.json")
    assert out.read_bytes() == golden.read_bytes()
