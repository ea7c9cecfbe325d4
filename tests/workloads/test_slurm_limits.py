"""Slurm dumps under the limits every workload has: times, durations, integers, sizes; and one job per JobID.

A dump is read within the bounds of :mod:`bftune.workloads.limits` as an SWF trace is: out-of-range times and
durations, integers of thousands of digits and headers of thousands of columns are one short line naming the
file, line and column, not a traceback or a 90 KB message; requeued attempts (``sacct -D``), repeated records
and dumps of several clusters (``sacct -M``) follow explicit rules.
"""

from __future__ import annotations

import re

import pytest
from bftune.experiments.cli.main import main
from bftune.workloads.errors import WorkloadError
from bftune.workloads.read import read_workload
from bftune.workloads.slurm import read_slurm

HEADER = "JobID|JobName|User|Submit|Start|End|Elapsed|Timelimit|NCPUS|State"
JOB = {"JobID": "41", "JobName": "sim", "User": "ana", "Submit": "2024-02-01T09:00:00",
       "Start": "2024-02-01T09:10:00", "End": "2024-02-01T10:10:00", "Elapsed": "01:00:00",
       "Timelimit": "02:00:00", "NCPUS": "8", "State": "COMPLETED"}
OTHER = {**JOB, "JobID": "42", "User": "ben", "Submit": "2024-02-01T09:30:00", "Start": "2024-02-01T09:40:00",
         "End": "2024-02-01T09:50:00", "Elapsed": "00:10:00", "NCPUS": "4"}


def line(job: dict, header: str = HEADER) -> str:
    return "|".join(job[c] for c in header.split("|"))


def dump(tmp_path, *jobs: dict, header: str = HEADER, name: str = "sacct.txt"):
    path = tmp_path / name
    path.write_text("\n".join([header] + [line(j, header) for j in jobs]) + "\n")
    return path


def refused(path, match: str, **options) -> str:
    with pytest.raises(WorkloadError) as caught:
        read_slurm(path, **options)
    message = str(caught.value)
    assert re.search(match, message), message
    assert "\n" not in message and len(message) < 400, message
    return message



@pytest.mark.parametrize("column, value, match", [
    ("Submit", "0001-01-01T00:00:00", r":2: column Submit: '0001-01-01T00:00:00' is out of range: .*1970 to 2106"),
    ("End", "2500-01-01T00:00:00", r":2: column End: .* is out of range"),
    ("Timelimit", "99999999-00:00:00", r":2: column Timelimit: '99999999-00:00:00' is out of range: durations are "
                                       r"at most 2\^32 s"),
    ("Elapsed", "60000000:00:00", r":2: column Elapsed: .* is out of range"),
    ("JobID", "9" * 5000, r":2: column JobID: a 5,000-digit number \('9{20}'\.\.\.\(5,000 characters\)\)"),
    ("JobID", "41_" + "7" * 5000, r":2: column JobID: a 5,000-digit number"),
    ("Elapsed", "1" * 5000, r":2: column Elapsed: a 5,000-digit number"),
    ("Timelimit", "4" * 5000 + "-00:00:00", r":2: column Timelimit: a 5,000-digit number"),
    ("NCPUS", "8" * 5000, r":2: column NCPUS: a 5,000-digit number"),
    ("Submit", "x" * 5000, r":2: column Submit: 'x{40}'\.\.\.\(5,000 characters\) is not a date and time"),
])
def test_values_out_of_bounds_are_one_short_line(tmp_path, column, value, match):
    path = dump(tmp_path, {**JOB, column: value}, OTHER)
    refused(path, match)
    trace = read_slurm(path, lenient=True)
    assert trace.cleaning["malformed_line"] == 1 and len(trace.jobs) == 1


@pytest.mark.parametrize("header, value", [("TimelimitRaw", "9" * 12), ("ElapsedRaw", "9" * 12)])
def test_raw_durations_are_under_the_same_limit(tmp_path, header, value):
    columns = HEADER.replace("Timelimit" if header == "TimelimitRaw" else "Elapsed", header)
    job = {**JOB, header: value, "TimelimitRaw": "120", "ElapsedRaw": "3600"}
    job[header] = value
    refused(dump(tmp_path, job, header=columns), rf"column {header[:-3]}: '9{{12}}' is out of range")


def test_the_cli_says_it_in_one_line_and_exits_2(tmp_path, capsys):
    path = dump(tmp_path, {**JOB, "JobID": "9" * 5000}, OTHER)
    assert main(["simulate", "--trace", str(path), "--procs", "8"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("bftune: error:") and len(err) < 400


def test_a_huge_header_missing_a_column_names_it_in_a_short_line(tmp_path):
    path = tmp_path / "wide.txt"
    path.write_text("|".join(["JobID"] + ["X"] * 30_000) + "\n1|" + "|".join(["y"] * 30_000) + "\n")
    message = refused(path, r"wide.txt:1: column Submit is missing from the sacct header \(it has JobID, X, .*"
                            r"\(30,001 columns\)\)")
    assert len(message) < 400


def test_a_record_joined_from_lines_is_bounded(tmp_path):
    path = tmp_path / "long.txt"
    chunk = "x" * 60_000
    path.write_text(HEADER.replace("JobName|", "") + "|Comment\n41|ana|" + "\n".join([chunk] * 20) + "\n")
    refused(path, r"long.txt:2: a record longer than 1024 KiB")


def test_identical_repeats_are_counted_and_differing_ones_refused(tmp_path):
    """Dumps of overlapping periods joined repeat records: the repeat is counted, not simulated twice; a
    repeat with other values (two clusters' jobs, say) is an error naming both lines."""
    trace = read_slurm(dump(tmp_path, JOB, OTHER, JOB, OTHER, JOB))
    assert len(trace.jobs) == 2 and trace.cleaning["duplicate_job_id"] == 3
    path = dump(tmp_path, JOB, OTHER, {**JOB, "NCPUS": "16"}, name="clash.txt")
    refused(path, r"clash.txt:4: JobID 41 again \(first on line 2\) with other values; .*--cluster")
    lenient = read_slurm(path, lenient=True)
    assert [j.procs for j in lenient.jobs] == [8, 4] and lenient.cleaning["duplicate_job_id"] == 1
    array = read_slurm(dump(tmp_path, {**JOB, "JobID": "41_1"}, {**JOB, "JobID": "41_2"}, name="array.txt"))
    assert len(array.jobs) == 2 and array.cleaning["duplicate_job_id"] == 0  # array elements are other jobs


def test_requeued_attempts_become_one_job(tmp_path):
    """``sacct -D``: each attempt of a requeued job is a record, the earlier ones in state REQUEUED.  The job is
    its last attempt, submitted when the first one was; the earlier attempts are counted."""
    first = {**JOB, "End": "2024-02-01T09:40:00", "Elapsed": "00:30:00", "State": "REQUEUED"}
    last = {**JOB, "Submit": "2024-02-01T09:40:00", "Start": "2024-02-01T09:45:00", "End": "2024-02-01T10:15:00",
            "Elapsed": "00:30:00"}
    trace = read_slurm(dump(tmp_path, last, OTHER, first))  # in any order
    assert [(j.submit, j.procs, j.runtime) for j in trace.jobs] == [(0, 8, 1800), (1800, 4, 600)]
    assert trace.cleaning["requeued_attempt"] == 1 and trace.cleaning["duplicate_job_id"] == 0
    waiting = {**JOB, "Start": "Unknown", "End": "Unknown", "Elapsed": "00:00:00", "State": "PENDING"}
    again = read_slurm(dump(tmp_path, first, waiting, OTHER, name="pending.txt"))  # requeued, queued again
    assert len(again.jobs) == 1 and again.cleaning["requeued_attempt"] == 1
    assert again.cleaning["pending_at_dump"] == 1
    alone = read_slurm(dump(tmp_path, first, OTHER, name="alone.txt"))  # no later record: the attempt ran
    assert len(alone.jobs) == 2 and alone.cleaning["requeued_attempt"] == 0


def test_several_clusters_are_refused_unless_one_is_chosen(tmp_path):
    header = "Cluster|" + HEADER
    rows = [{**JOB, "Cluster": "alpha"}, {**OTHER, "Cluster": "alpha"}, {**JOB, "Cluster": "beta"}]
    path = dump(tmp_path, *rows, header=header)
    refused(path, r"sacct.txt: the dump holds the jobs of 2 clusters \(alpha, beta\): one machine is simulated; "
                  r"choose one with --cluster NAME")
    beta = read_workload(path, cluster="beta")
    assert len(beta.jobs) == 1 and beta.cleaning["other_cluster"] == 2 and beta.cleaning["duplicate_job_id"] == 0
    alpha = read_slurm(path, cluster="alpha")
    assert len(alpha.jobs) == 2 and alpha.cleaning["other_cluster"] == 1
    refused(path, r"no record of cluster 'gamma' \(the dump holds alpha, beta\)", cluster="gamma")
    refused(dump(tmp_path, JOB, name="plain.txt"), "--cluster needs the Cluster column", cluster="alpha")
    one = read_slurm(dump(tmp_path, {**JOB, "Cluster": "alpha"}, header=header, name="one.txt"))
    assert len(one.jobs) == 1  # one cluster: nothing to choose


def test_many_clusters_are_listed_in_a_short_line(tmp_path):
    header = "Cluster|" + HEADER
    rows = [{**JOB, "JobID": str(100 + i), "Cluster": f"cluster-{i:04d}"} for i in range(3000)]
    message = refused(dump(tmp_path, *rows, header=header),
                      r"the dump holds the jobs of 1,000 or more clusters \(cluster-0000, .*\(1,000 named\)")
    assert len(message) < 400
