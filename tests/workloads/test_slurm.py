"""Slurm accounting dumps (sacct --parsable2) as workloads: rules, counts, clocks, errors, and the CLI."""

from __future__ import annotations

import gzip
import json

import pytest
from bftune.experiments.campaign.config import campaign_from_dict
from bftune.experiments.cli.main import main
from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.drivers.local.simulator import simulate
from bftune.workloads.errors import WorkloadError
from bftune.workloads.slurm import (SLURM_CHANGES, SLURM_CLEANING_KEYS, is_slurm_dump, parse_duration,
                                    read_slurm)
from bftune.workloads.swf import read_swf
from locations import KTH, SHARED_WORKLOADS
from slurm_dump import swf_to_slurm

SMALL = """JobID|User|Partition|Submit|Start|End|Elapsed|Timelimit|NCPUS|State
100|alice|batch|2024-03-01T10:00:00|2024-03-01T10:00:05|2024-03-01T11:00:05|01:00:00|02:00:00|4|COMPLETED
100.batch|||2024-03-01T10:00:05|2024-03-01T10:00:05|2024-03-01T11:00:05|01:00:00||4|COMPLETED
100.extern|||2024-03-01T10:00:05|2024-03-01T10:00:05|2024-03-01T11:00:05|01:00:00||4|COMPLETED
101_1|bob|batch|2024-03-01T10:01:00|2024-03-01T10:02:00|2024-03-01T10:12:00|00:10:00|1-00:00:00|8|COMPLETED
101_2|bob|batch|2024-03-01T10:01:00|2024-03-01T10:02:00|2024-03-01T10:22:00|00:20:00|UNLIMITED|8|FAILED
101_[3-5]|bob|batch|2024-03-01T10:01:00|Unknown|Unknown|00:00:00|1-00:00:00|8|PENDING
102|carol|debug|2024-03-01T10:05:00|None|2024-03-01T10:06:00|00:00:00|01:00:00|16|CANCELLED by 1000
103|carol|debug|2024-03-01T10:07:00|2024-03-01T10:08:00|Unknown|00:30:00|01:00:00|16|RUNNING
104|carol|debug|2024-03-01T10:07:00|2024-03-01T10:08:00|2024-03-01T11:09:00|01:01:00|01:00:00|16|TIMEOUT
105|dave|debug|2024-03-01T10:09:00|2024-03-01T10:10:00|2024-03-01T10:15:00|00:05:00|Partition_Limit|2|COMPLETED
106+0|dave|debug|2024-03-01T10:09:00|2024-03-01T10:10:00|2024-03-01T10:15:00|00:05:00|01:00:00|2|COMPLETED
"""


@pytest.fixture
def small(tmp_path):
    path = tmp_path / "sacct.txt"
    path.write_text(SMALL)
    return path


def test_every_record_is_a_job_or_counted_under_one_rule(small):
    notes = []
    trace = read_slurm(small, inform=notes.append)
    assert [(j.id, j.submit, j.procs, j.runtime, j.walltime, j.user, j.status) for j in trace.jobs] == [
        (1, 0, 4, 3600, 7200, 1, 1),     # 100: its steps are not jobs
        (2, 60, 8, 600, 86400, 2, 1),    # array elements are jobs
        (3, 60, 8, 1200, 86400, 2, 0),   # UNLIMITED: the largest finite limit of its partition (batch: 1 day)
        (4, 420, 16, 3600, 3600, 3, 0),  # TIMEOUT 60 s past its limit: killed at it (within the grace)
        (5, 540, 2, 300, 3600, 4, 1)]    # Partition_Limit: the largest of debug (1 h)
    counts = {k: v for k, v in trace.cleaning.items() if v}
    assert counts == {"job_step": 2, "heterogeneous_component": 1, "pending_at_dump": 1, "never_started": 1,
                      "running_at_dump": 1, "runtime_capped_at_limit": 1, "time_limit_unlimited": 1,
                      "time_limit_partition": 1}
    assert list(trace.cleaning) == list(SLURM_CLEANING_KEYS)
    dropped = sum(v for k, v in counts.items() if k not in SLURM_CHANGES)
    assert len(trace.jobs) + dropped == len(SMALL.strip().splitlines()) - 1  # every record accounted for
    assert trace.max_procs == 16 and trace.timezone == "UTC" and trace.unix_start_time == 1709287200
    assert notes == [f"{small}: machine size 16 processors, the largest allocation in the dump "
                     "(give --procs M for the machine's real size)"]
    assert read_slurm(small, procs=64, inform=notes.append).max_procs == 64 and len(notes) == 1


@pytest.mark.parametrize("text, seconds", [("1-02:03:04", 93784), ("02:03:04", 7384), ("03:04", 184), ("5", 300),
                                           ("2-03", 183600), ("2-03:04", 183840), ("00:01:02.345", 62),
                                           ("Unknown", None)])
def test_durations_in_every_slurm_form(text, seconds):
    assert parse_duration(text, "Timelimit") == seconds


@pytest.mark.slow
@pytest.mark.parametrize("trace", ["KTH-SP2-1996-2.1-cln.swf.gz", "SDSC-SP2-1998-4.2-cln.swf.gz"])
def test_a_dump_made_from_an_archive_trace_simulates_to_exactly_its_jobs(trace, tmp_path):
    """Steps, arrays, jobs cancelled in the queue, pending, running and heterogeneous records added:
    the dump reads back to the trace's cleaned jobs, every other record counted under its rule,
    and EASY schedules both identically."""
    swf_path = SHARED_WORKLOADS / trace
    if not swf_path.exists():
        pytest.skip(f"{swf_path} is not here (../shared/workloads)")
    dump = tmp_path / "dump.txt"
    added = swf_to_slurm(swf_path, dump)
    swf = read_swf(swf_path)
    slurm = read_slurm(dump, procs=swf.max_procs, overrun_grace=0)  # runtimes as logged, as the SWF has them
    offset = swf.jobs[0].submit - slurm.jobs[0].submit
    assert [(j.submit - offset, j.procs, j.runtime, j.walltime) for j in swf.jobs] == \
           [(j.submit, j.procs, j.runtime, j.walltime) for j in slurm.jobs]
    pairs = {(a.user, b.user) for a, b in zip(swf.jobs, slurm.jobs)}  # users renamed, one to one
    assert len(pairs) == len({a for a, _ in pairs}) == len({b for _, b in pairs})
    for rule in ("job_step", "pending_at_dump", "running_at_dump", "heterogeneous_component"):
        assert slurm.cleaning[rule] == added[rule], rule
    # SDSC-SP2's records without a runtime (jobs that never ran) are written as cancelled in the queue
    never_ran = sum(1 for j in _swf_rows(swf_path) if j[3] < 0)
    assert slurm.cleaning["never_started"] == added["never_started"] == 5 + never_ran
    for rule in ("negative_submit", "missing_procs", "procs_gt_machine", "walltime_le_0", "walltime_lt_runtime"):
        assert slurm.cleaning[rule] == swf.cleaning[rule], rule
    assert slurm.cleaning["runtime_le_0"] == swf.cleaning["runtime_le_0"] - never_ran
    records = len(dump.read_text().splitlines()) - 1
    assert len(slurm.jobs) + sum(slurm.cleaning[k] for k in SLURM_CLEANING_KEYS if k not in SLURM_CHANGES +
                                 ("walltime_from_runtime", "overruns_kept", "walltime_raised",
                                  "runtime_raised")) == records
    jobs = 4000  # EASY on the first jobs of both: the same waits, job by job
    config = SchedulerConfig(policy="FCFS")
    a = simulate(swf.jobs[:jobs], swf.max_procs, config.build(swf.max_procs)).runs
    b = simulate(slurm.jobs[:jobs], slurm.max_procs, config.build(slurm.max_procs)).runs
    wait_a = {r.seq: r.start - r.original_submit for r in a}
    wait_b = {r.seq: r.start - r.original_submit for r in b}
    assert [wait_a[j.id] for j in swf.jobs[:jobs]] == [wait_b[j.id] for j in slurm.jobs[:jobs]]
    assert sum(wait_a.values()) > 0  # queues formed: the schedules had choices to agree on


def _swf_rows(path):
    from slurm_dump import swf_records
    return swf_records(path)[0]


@pytest.mark.slow
@pytest.mark.skipif(not KTH.exists(), reason=f"{KTH} is not available (the ../shared checkout is missing)")
def test_local_times_across_daylight_saving_changes(tmp_path):
    """A dump in Stockholm's local time: read in its zone, every runtime and submission is right (the
    repeated hour's times resolved by order and Elapsed, and counted); read as UTC, the reader says
    that some End - Start differ from Elapsed by an hour."""
    dump = tmp_path / "stockholm.txt"
    swf_to_slurm(KTH, dump, zone="Europe/Stockholm", extras=False)
    swf = read_swf(KTH)
    local = read_slurm(dump, procs=100, timezone="Europe/Stockholm", overrun_grace=0)  # as the SWF: overruns out
    offset = swf.jobs[0].submit - local.jobs[0].submit
    assert [(j.submit - offset, j.runtime) for j in swf.jobs] == [(j.submit, j.runtime) for j in local.jobs]
    assert local.cleaning["ambiguous_local_time"] > 0 and local.timezone == "Europe/Stockholm"
    notes = []
    utc = read_slurm(dump, procs=100, inform=notes.append, overrun_grace=0)
    assert [j.runtime for j in utc.jobs] == [j.runtime for j in local.jobs]  # Elapsed: no clock involved
    assert any("differs from Elapsed by exactly one hour" in n and "--timezone" in n for n in notes)
    with pytest.raises(WorkloadError, match="not a time zone name"):
        read_slurm(dump, timezone="Mars/Olympus")


def test_a_nonexistent_local_time_is_counted(tmp_path):
    dump = tmp_path / "gap.txt"
    dump.write_text("JobID|Submit|Start|End|Timelimit|NCPUS|State\n"
                    "1|2024-03-31T02:30:00|2024-03-31T03:10:00|2024-03-31T03:20:00|01:00:00|1|COMPLETED\n"
                    "2|2024-03-31T01:00:00|2024-03-31T01:00:00|2024-03-31T01:30:00|01:00:00|1|COMPLETED\n")
    trace = read_slurm(dump, timezone="Europe/Paris")
    assert trace.cleaning["nonexistent_local_time"] == 1
    assert [(j.submit, j.runtime) for j in trace.jobs] == [(0, 1800), (5400, 600)]


def test_the_sniffer_tells_dumps_from_other_workloads(small, tmp_path):
    gz = tmp_path / "sacct.txt.gz"
    gz.write_bytes(gzip.compress(small.read_bytes()))
    assert is_slurm_dump(small) and is_slurm_dump(gz)
    assert not is_slurm_dump(KTH)
    js = tmp_path / "w.json"
    js.write_text('{"nb_res": 4, "jobs": [], "profiles": {}}')
    assert not is_slurm_dump(js) and not is_slurm_dump(tmp_path / "absent.txt")
    assert [j.runtime for j in read_slurm(gz).jobs] == [j.runtime for j in read_slurm(small).jobs]


@pytest.mark.parametrize("text, message", [
    ("", "empty: no sacct header line"),
    ("JobID|Submit|Start|End|NCPUS|State\n1|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|1|COMPLETED\n",
     ":1: column Timelimit is missing from the sacct header"),
    ("JobID|Submit|Start|End|Timelimit|NCPUS|State\n",
     "no job record after the header line"),
    ("JobID|Submit|Start|End|Timelimit|NCPUS|State\n1|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-13-01T01:00:00|"
     "01:00:00|1|COMPLETED\n", ":2: column End: '2024-13-01T01:00:00' is not a date and time"),
    ("JobID|Submit|Start|End|Timelimit|NCPUS|State\n1|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|"
     "1h|1|COMPLETED\n", ":2: column Timelimit: '1h' is not a duration"),
    ("JobID|Submit|Start|End|Timelimit|NCPUS|State\n1|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|"
     "01:00:00|1\n", r":2: expected 7 fields \(the header's\), found 6"),
    ("JobID|Submit|Start|End|Timelimit|NCPUS|State\n1|2024-01-01T00:00:00|None|2024-01-01T01:00:00|01:00:00|1|"
     "CANCELLED\n", "no job of the dump ran"),
    ("JobID|Submit|Start|End|Timelimit|NCPUS|State\n1|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:00:00|"
     "01:00:00|1|COMPLETED\n", "no job left after cleaning .*runtime_le_0=1"),
])
def test_bad_dumps_are_one_line_naming_file_line_and_column(tmp_path, capsys, text, message):
    dump = tmp_path / "bad.txt"
    dump.write_text(text or "\n\n")
    with pytest.raises(WorkloadError, match=message):
        read_slurm(dump)
    assert main(["simulate", "--trace", str(dump), "--procs", "4"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("bftune: error:")


def test_lenient_skips_and_counts_malformed_lines(tmp_path):
    dump = tmp_path / "l.txt"
    dump.write_text("JobID|Submit|Start|End|Timelimit|NCPUS|State\n"
                    "1|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|02:00:00|1|COMPLETED\n"
                    "2|yesterday|2024-01-01T00:00:00|2024-01-01T01:00:00|02:00:00|1|COMPLETED\n")
    assert read_slurm(dump, lenient=True).cleaning["malformed_line"] == 1


def test_the_cli_simulates_a_dump_and_convert_writes_an_archive_swf(small, tmp_path, capsys):
    out = tmp_path / "sim"
    assert main(["simulate", "--trace", str(small), "--procs", "16", "--timezone", "Europe/Paris",
                 "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["jobs"] == 5 and summary["cleaning"]["job_step"] == 2
    conv = tmp_path / "conv"
    assert main(["convert", "--trace", str(small), "--out", str(conv)]) == 0
    swf_file = conv / "sacct.swf"
    text = swf_file.read_text()
    for field in ("Version", "Computer", "Conversion", "MaxJobs", "MaxRecords", "UnixStartTime", "TimeZoneString",
                  "StartTime", "EndTime", "MaxProcs", "MaxPartitions"):
        assert f"; {field}: " in text, field
    assert "the largest allocation" in capsys.readouterr().err
    back = read_swf(swf_file)
    assert [(j.submit, j.procs, j.runtime, j.walltime) for j in back.jobs] == \
           [(j.submit, j.procs, j.runtime, j.walltime) for j in read_slurm(small).jobs]
    assert back.unix_start_time == 1709287200 and back.timezone == "UTC"
    assert main(["simulate", "--trace", str(KTH), "--timezone", "UTC"]) == 2  # an SWF trace has its own clock


@pytest.mark.skipif(not KTH.exists(), reason=f"{KTH} is not available (the ../shared checkout is missing)")
def test_a_campaign_reads_a_dump_in_its_zone(small, tmp_path):
    config = {"campaign": {"kind": "offline"}, "workload": {"trace": str(small), "timezone": "Europe/Paris"},
              "offline": {"policies": ["FCFS"], "thresholds": ["none"], "weeks": 1}}
    campaign = campaign_from_dict(config)
    assert {s.timezone for s in campaign.specs} == {"Europe/Paris"}
    utc = campaign_from_dict({**config, "workload": {"trace": str(small)}})
    assert {s.run_id for s in utc.specs}.isdisjoint({s.run_id for s in campaign.specs})
    with pytest.raises(ValueError, match=r"\[workload\] timezone: only for a Slurm accounting dump"):
        campaign_from_dict({**config, "workload": {"trace": str(KTH), "timezone": "UTC"}})


def test_a_dump_is_read_within_bounds(tmp_path):
    """Streamed as every input is (bftune.support.inputs): an endless line is refused at the limit, gzip a chunk at a time,
    and a path that is not a regular file is not taken for a dump."""
    header = "JobID|User|Submit|Start|End|Timelimit|NCPUS|State|Elapsed\n"
    endless = tmp_path / "endless.sacct.gz"
    with gzip.open(endless, "wb") as f:
        f.write(header.encode())
        for _ in range(64):
            f.write(b"x" * 4096)  # one line of 256 KiB, over the 64 KiB line bound
    with pytest.raises(WorkloadError, match=r"endless.sacct.gz:2: a line longer than 64 KiB"):
        read_slurm(endless)
    assert not is_slurm_dump("/dev/zero")
