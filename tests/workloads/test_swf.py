"""SWF reading and cleaning (bftune.workloads.swf); writing is tested in test_swf_write.py."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from bftune.workloads.cleaning import check_cleaning, identity_name
from bftune.workloads.errors import WorkloadError
from bftune.workloads.swf import (
    CLEANING_KEYS,
    CLEANINGS,
    DROP_RULES,
    dropped_jobs,
    parse_swf,
    read_swf,
)
from locations import KTH, SHARED_WORKLOADS
from swf_lines import HEADER, job_line


def shared_trace(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"shared trace {path} is not available (the ../shared checkout is missing)")
    return path


def write(tmp_path: Path, text: str, name: str = "t.swf") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_header_parsed_and_fields_mapped(tmp_path):
    text = HEADER + job_line(5, submit=20, runtime=30, alloc=4, req_procs=2, req_time=60, user=9) + "\n"
    trace = read_swf(write(tmp_path, text))
    assert trace.max_procs == 16
    assert trace.unix_start_time == 843480031
    assert trace.timezone == "Europe/Stockholm"
    assert trace.header["Computer"] == "Test box"
    assert trace.header["Note"] == "first note\nsecond note"
    # a continuation line "    http://..." is not a key "http"
    assert "http" not in trace.header
    assert trace.header["Information"] == "http://example.org/"
    assert trace.name == "t"
    assert trace.header_lines[0] == "; Version: 2.2"
    assert len(trace.header_lines) == HEADER.count("\n")
    (job,) = trace.jobs
    # procs = requested (2), not allocated (4)
    assert (job.id, job.submit, job.procs, job.runtime, job.walltime) == (5, 20, 2, 30, 60)
    assert (job.user, job.group, job.executable, job.queue, job.partition, job.status) == (9, 7, 3, 2, 1, 1)
    assert isinstance(job.submit, int) and isinstance(job.runtime, int)


def test_gzip_detected_by_magic_not_name(tmp_path):
    text = HEADER + job_line(1) + "\n"
    path = tmp_path / "no_gz_suffix.swf"
    path.write_bytes(gzip.compress(text.encode()))
    assert len(read_swf(path)) == 1
    plain_named_gz = tmp_path / "plain.swf.gz"
    plain_named_gz.write_text(text)
    assert len(read_swf(plain_named_gz)) == 1
    assert read_swf(plain_named_gz).name == "plain"


def test_each_cleaning_rule_counts_its_drops_once(tmp_path):
    lines = [
        job_line(1),  # kept
        job_line(2, submit=-5, runtime=0),  # negative submit (also runtime 0: counted once)
        job_line(3, alloc=-1, req_procs=-1),  # missing procs
        job_line(4, alloc=0, req_procs=0),  # missing procs
        job_line(5, req_procs=17),  # > m = 16
        job_line(6, alloc=17, req_procs=-1),  # allocated used, > m
        job_line(7, runtime=0),  # runtime <= 0
        job_line(8, runtime=-1, req_time=-1),  # runtime first
        job_line(9, req_time=0),  # walltime <= 0
        job_line(10, runtime=101, req_time=100),  # walltime < runtime
        job_line(11, runtime=100, req_time=100),  # kept: walltime == runtime
        job_line(12, alloc=16, req_procs=0),  # kept: allocated used when requested is 0
    ]
    trace = parse_swf(HEADER + "\n".join(lines) + "\n")
    assert [j.id for j in trace.jobs] == [1, 11, 12]
    assert trace.jobs[2].procs == 16
    assert trace.cleaning == {
        "malformed_line": 0,
        "negative_submit": 1,
        "missing_procs": 2,
        "procs_gt_machine": 2,
        "runtime_le_0": 2,
        "walltime_le_0": 1,
        "walltime_lt_runtime": 1,
        "never_started": 0,
        "walltime_from_runtime": 0,
        "overruns_kept": 0,
        "walltime_raised": 0,
        "runtime_raised": 0,
    }
    assert list(trace.cleaning) == list(CLEANING_KEYS)
    assert dropped_jobs(trace) == len(lines) - len(trace)


# One hand-made trace for the named cleanings: each record exercises one rule.
PRESET_LINES = [
    job_line(1, runtime=10, alloc=2, req_procs=4, req_time=100),  # plain job; request (4) != allocation (2)
    job_line(2, runtime=101, alloc=1, req_procs=1, req_time=100),  # overrun: runtime > requested time
    job_line(3, runtime=0, alloc=1, req_procs=1),  # never ran
    job_line(4, runtime=30, alloc=-1, req_procs=2, req_time=100),  # no allocation, a request
    job_line(5, runtime=40, alloc=1, req_procs=1, req_time=-1),  # no requested time
    job_line(6, runtime=60, alloc=1, req_procs=1, req_time=70),  # request below 2 x runtime
    job_line(7, runtime=12.5, alloc=3, req_procs=3, req_time=1000),  # fractional runtime
]


def test_named_cleanings_on_a_hand_made_trace():
    text = HEADER + "\n".join(PRESET_LINES) + "\n"
    assert CLEANINGS[0] == "drop-overruns"

    spec = parse_swf(text)
    assert [(j.id, j.procs, j.runtime, j.walltime) for j in spec.jobs] == \
        [(1, 4, 10, 100), (4, 2, 30, 100), (6, 1, 60, 70), (7, 3, 12.5, 1000)]
    assert spec == parse_swf(text, cleaning="drop-overruns") == parse_swf(text, cleaning="spec")  # its former name

    keep = parse_swf(text, cleaning="keep-overruns")
    # overrun kept with its (shorter) walltime; the missing request becomes the runtime
    assert [(j.id, j.procs, j.runtime, j.walltime) for j in keep.jobs] == \
        [(1, 4, 10, 100), (2, 1, 101, 100), (4, 2, 30, 100), (5, 1, 40, 40), (6, 1, 60, 70), (7, 3, 12.5, 1000)]
    assert keep.cleaning["overruns_kept"] == 1 and keep.cleaning["walltime_from_runtime"] == 1
    assert keep.cleaning["runtime_le_0"] == 1 and dropped_jobs(keep) == 1

    conv = parse_swf(text, cleaning="batsim-converter")
    # allocated procs only (job 4 has none), walltime = max(request, 2p), runtime = floor(p) + 1
    assert [(j.id, j.procs, j.runtime, j.walltime) for j in conv.jobs] == \
        [(1, 2, 11, 100), (2, 1, 102, 202), (5, 1, 41, 80), (6, 1, 61, 120), (7, 3, 13, 1000)]
    assert conv.cleaning["walltime_raised"] == 3
    assert conv.cleaning["missing_procs"] == 1 and conv.cleaning["runtime_le_0"] == 1
    assert len(conv) + dropped_jobs(conv) == len(PRESET_LINES)
    assert all(j.runtime < j.walltime for j in conv.jobs)  # the converter never lets Batsim kill a job

    ran = parse_swf(text, cleaning="ran")
    # every job with an allocation: the 0 s run becomes 1 s, job 4 (never allocated) is dropped
    assert [(j.id, j.procs, j.runtime, j.walltime) for j in ran.jobs] == \
        [(1, 4, 10, 100), (2, 1, 101, 100), (3, 1, 1, 100), (5, 1, 40, 40), (6, 1, 60, 70), (7, 3, 12.5, 1000)]
    assert ran.cleaning["never_started"] == 1 and ran.cleaning["runtime_raised"] == 1
    assert ran.cleaning["overruns_kept"] == 1 and ran.cleaning["walltime_from_runtime"] == 1
    assert dropped_jobs(ran) == 1

    finish = parse_swf(text, cleaning="ran-overruns-finish")
    # the jobs of ran; job 2's runtime (101 s) over its request (100 s) becomes its walltime: it runs to its end
    assert [(j.id, j.procs, j.runtime, j.walltime) for j in finish.jobs] == \
        [(1, 4, 10, 100), (2, 1, 101, 101), (3, 1, 1, 100), (5, 1, 40, 40), (6, 1, 60, 70), (7, 3, 12.5, 1000)]
    assert finish.cleaning["walltime_raised"] == 1 and finish.cleaning["overruns_kept"] == 0
    assert finish.cleaning["never_started"] == 1 and dropped_jobs(finish) == 1


def test_unknown_cleaning_is_refused(tmp_path):
    with pytest.raises(ValueError, match="cleaning must be one of drop-overruns, keep-overruns, batsim-converter"):
        parse_swf(HEADER + job_line(1) + "\n", cleaning="strong")
    with pytest.raises(ValueError, match="cleaning must be one of"):
        read_swf(write(tmp_path, HEADER + job_line(1) + "\n"), cleaning="")


def test_stored_identities_name_the_default_cleaning_by_its_former_name():
    # runs and weeks stored while the default was called "spec" must keep their identity after the rename
    assert identity_name("drop-overruns") == identity_name("spec") == "spec"
    assert [identity_name(c) for c in CLEANINGS[1:]] == list(CLEANINGS[1:])
    assert check_cleaning("spec") == "drop-overruns"


def test_jobs_sorted_by_submit_then_id(tmp_path):
    lines = [job_line(3, submit=10), job_line(1, submit=10), job_line(2, submit=5), job_line(9, submit=0)]
    trace = parse_swf(HEADER + "\n".join(lines))
    assert [(j.submit, j.id) for j in trace.jobs] == [(0, 9), (5, 2), (10, 1), (10, 3)]


def test_machine_size_fallbacks(tmp_path):
    body = job_line(1, alloc=12) + "\n"
    assert parse_swf("; MaxNodes: 338 (batch partition; 512 total)\n" + body).max_procs == 338
    assert parse_swf("; MaxProcs: 64\n; MaxNodes: 8\n" + body).max_procs == 64
    # explicit size wins over the header, and jobs are checked against it
    trace = parse_swf("; MaxProcs: 64\n" + body + job_line(2, alloc=4) + "\n", max_procs=8)
    assert trace.max_procs == 8 and [j.id for j in trace.jobs] == [2]
    assert trace.cleaning["procs_gt_machine"] == 1
    with pytest.raises(WorkloadError, match="--procs"):
        parse_swf("; Version: 2\n" + body)
    with pytest.raises(WorkloadError, match="--procs"):
        parse_swf("; MaxProcs: -1\n" + body)
    with pytest.raises(WorkloadError, match="max_procs"):
        parse_swf(body, max_procs=0)


@pytest.mark.parametrize(
    "bad_line, field_text",
    [
        ("1 0 -1 10 1 -1 -1 -1 100 -1 1 1 7 3 2 1 -1", "expected 18 fields, found 17"),
        ("1 0 -1 10 1 -1 -1 -1 100 -1 1 1 7 3 2 1 -1 -1 0", "expected 18 fields, found 19"),
        ("1 0 -1 ten 1 -1 -1 -1 100 -1 1 1 7 3 2 1 -1 -1", "field 4 (run time): 'ten' is not a number"),
        ("1 0 -1 10 1.5 -1 -1 -1 100 -1 1 1 7 3 2 1 -1 -1", "field 5 (allocated processors): '1.5' must be an integer"),
        ("1 0 -1 10 1 -1 -1 -1 nan -1 1 1 7 3 2 1 -1 -1", "field 9 (requested time): 'nan' is not a finite number"),
    ],
)
def test_malformed_line_is_an_error_naming_file_line_and_field(tmp_path, bad_line, field_text):
    text = HEADER + job_line(1) + "\n\n" + bad_line + "\n" + job_line(3) + "\n"
    path = write(tmp_path, text, "bad.swf")
    bad_lineno = HEADER.count("\n") + 3
    with pytest.raises(WorkloadError) as info:
        read_swf(path)
    assert str(info.value) == f"{path}:{bad_lineno}: {field_text}"
    assert isinstance(info.value, ValueError)

    trace = read_swf(path, lenient=True)
    assert [j.id for j in trace.jobs] == [1, 3]
    assert trace.cleaning["malformed_line"] == 1
    assert dropped_jobs(trace) == 1


def test_numeric_tokens_in_time_fields_are_accepted(tmp_path):
    # CTC-SP2 writes average cpu time as "142.00"; fractional times are tolerated
    trace = parse_swf(HEADER + job_line(1, avg_cpu="142.00", runtime="10.5", req_time="100.0") + "\n")
    (job,) = trace.jobs
    assert job.runtime == 10.5
    assert job.walltime == 100 and isinstance(job.walltime, int)
    # integral counts written as floats are fine
    assert parse_swf(HEADER + job_line(1, alloc="4.0") + "\n").jobs[0].procs == 4


def test_empty_trace_after_cleaning_is_an_error(tmp_path):
    with pytest.raises(WorkloadError, match="no job left after cleaning.*runtime_le_0=1"):
        parse_swf(HEADER + job_line(1, runtime=0) + "\n")
    with pytest.raises(WorkloadError, match="no job left"):
        parse_swf(HEADER)


def test_duplicate_ids_rejected():
    with pytest.raises(WorkloadError, match="job id 4 appears more than once"):
        parse_swf(HEADER + job_line(4) + "\n" + job_line(4, submit=3) + "\n")


def test_missing_file_is_a_workload_error(tmp_path):
    with pytest.raises(WorkloadError, match="cannot read"):
        read_swf(tmp_path / "nope.swf")
    corrupt = tmp_path / "corrupt.swf.gz"
    corrupt.write_bytes(b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(WorkloadError, match="corrupt gzip"):
        read_swf(corrupt)


def test_walltime_fallback_uses_runtime_and_counts(tmp_path):
    text = "; MaxNodes: 256\n" + job_line(1, runtime=50, req_time=-1) + "\n" + job_line(2, req_time=300) + "\n"
    with pytest.raises(WorkloadError, match="walltime_le_0=1"):
        parse_swf(job_line(1, runtime=50, req_time=-1), max_procs=4)
    trace = parse_swf(text, walltime_fallback="runtime")
    assert [(j.id, j.walltime) for j in trace.jobs] == [(1, 50), (2, 300)]
    assert trace.cleaning["walltime_from_runtime"] == 1
    assert trace.cleaning["walltime_le_0"] == 0
    assert "walltime_from_runtime" not in DROP_RULES
    assert dropped_jobs(trace) == 0
    with pytest.raises(ValueError):
        parse_swf(text, walltime_fallback="walltime")  # type: ignore[arg-type]


def test_kth_sp2_cleaning_matches_batsim_readme():
    trace = read_swf(shared_trace(KTH))
    assert len(trace) == 27_992
    assert trace.max_procs == 100
    assert trace.cleaning["walltime_lt_runtime"] == 475
    assert trace.cleaning["runtime_le_0"] == 8
    assert trace.cleaning["missing_procs"] == 1
    assert dropped_jobs(trace) == 28_476 - 27_992
    assert sum(1 for j in trace.jobs if j.runtime == j.walltime) == 38
    assert (trace.jobs[0].id, trace.jobs[0].submit) == (15, 599850)
    assert trace.unix_start_time == 843480031
    # m = 16 as for small_50.json: 2,611 jobs are too wide
    assert read_swf(KTH, max_procs=16).cleaning["procs_gt_machine"] == 2_611


def test_kth_sp2_study_job_sets():
    """Study 004's job set: its published divider (847 s, the median runtime) is that of these cleanings."""
    import statistics

    keep = read_swf(shared_trace(KTH), cleaning="keep-overruns")
    assert len(keep) == 28_476 - 8 - 1 and keep.cleaning["overruns_kept"] == 475
    assert statistics.median(j.runtime for j in keep.jobs) == 847
    assert statistics.median(j.runtime for j in read_swf(KTH).jobs) == 805  # the default cleaning (drop-overruns): not the study's
    conv = read_swf(KTH, cleaning="batsim-converter")
    assert len(conv) == len(keep) and conv.cleaning["walltime_raised"] == 13_069


@pytest.mark.slow
def test_pv_easy_study_job_sets():
    """Study 003 counts every CTC-SP2 record (77,222) and 223,407 SDSC-BLUE jobs of mean parallelism
    41.5910 and mean runtime 4,381 s: the records of jobs that ran are those job sets (BLUE within 0.2 %)."""
    ctc = read_swf(shared_trace(SHARED_WORKLOADS / "CTC-SP2-1996-3.1-cln.swf.gz"), cleaning="ran", max_procs=430)
    assert len(ctc) == 77_222 and dropped_jobs(ctc) == 0
    assert ctc.cleaning["overruns_kept"] == 7_174 and ctc.cleaning["runtime_raised"] == 17
    assert round(sum(j.procs for j in ctc.jobs) / len(ctc), 4) == 10.9853  # the study's Table 3
    blue = read_swf(shared_trace(SHARED_WORKLOADS / "SDSC-BLUE-2000-4.2-cln.swf.gz"), cleaning="ran")
    assert len(blue) == 223_790 and blue.cleaning["never_started"] == 19_516
    assert abs(sum(j.procs for j in blue.jobs) / len(blue) - 41.5910) < 0.05
    assert abs(sum(j.runtime for j in blue.jobs) / len(blue) - 4381) < 10


def test_lublin_needs_walltime_fallback():
    path = shared_trace(SHARED_WORKLOADS / "lublin_256.swf.gz")
    with pytest.raises(WorkloadError, match="walltime_le_0=10000"):
        read_swf(path)
    trace = read_swf(path, walltime_fallback="runtime")
    assert len(trace) == 10_000 and trace.max_procs == 256  # from MaxNodes
    assert trace.cleaning["walltime_from_runtime"] == 10_000
    assert all(j.walltime == j.runtime for j in trace.jobs)


@pytest.mark.slow
@pytest.mark.parametrize(
    "file, records",
    [
        ("SDSC-SP2-1998-4.2-cln.swf.gz", 59_715),
        ("CTC-SP2-1996-3.1-cln.swf.gz", 77_222),
        ("HPC2N-2002-2.2-cln.swf.gz", 202_871),
        ("SDSC-BLUE-2000-4.2-cln.swf.gz", 243_306),
        ("CEA-Curie-2011-2.1-cln.swf.gz", 312_826),
    ],
)
@pytest.mark.slow
def test_archive_traces_parse_and_account_for_every_record(file, records):
    trace = read_swf(shared_trace(SHARED_WORKLOADS / file))
    assert len(trace) + dropped_jobs(trace) == records
    assert trace.cleaning["malformed_line"] == 0
    assert all(1 <= j.procs <= trace.max_procs and 0 < j.runtime <= j.walltime for j in trace.jobs)
    assert all(a.submit <= b.submit for a, b in zip(trace.jobs, trace.jobs[1:]))
