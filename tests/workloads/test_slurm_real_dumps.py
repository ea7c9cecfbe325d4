"""Slurm dumps as admins have them: each idiom of real sacct output, hand-written, read as an admin expects.

sacct does not quote or escape (``--parsable2``: ``|`` between fields, ``--parsable``: one more at the end of
each line, ``--delimiter``: another string, ``--noheader``: no header line), so free text holding the delimiter
or newlines, TRES lists, memory requests, CRLF and Latin-1 user names all reach the reader as they are.
"""

from __future__ import annotations

import gzip
import json
import random

import pytest
from bftune.experiments.cli.main import main
from bftune.workloads.errors import WorkloadError
from bftune.workloads.read import read_workload
from bftune.workloads.slurm import is_slurm_dump, looks_like_headerless_dump, read_slurm
from bftune.workloads.swf import read_swf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from locations import KTH
from slurm_dump import swf_records, swf_to_slurm

COLUMNS = ["JobID", "JobName", "User", "Partition", "Submit", "Start", "End", "Elapsed", "Timelimit", "NCPUS",
           "NNodes", "State", "AllocTRES", "ReqMem", "NodeList", "Constraints", "Comment"]
ROWS = [
    {"JobID": "7001", "JobName": "relax", "User": "alice", "Partition": "batch", "Submit": "2024-05-02T08:00:00",
     "Start": "2024-05-02T08:00:30", "End": "2024-05-02T09:00:30", "Elapsed": "01:00:00", "Timelimit": "02:00:00",
     "NCPUS": "48", "NNodes": "2", "State": "COMPLETED", "AllocTRES": "billing=48,cpu=48,mem=180G,node=2",
     "ReqMem": "90Gn", "NodeList": "c[101-102]", "Constraints": "", "Comment": ""},
    {"JobID": "7002_3", "JobName": "train", "User": "bob", "Partition": "gpu", "Submit": "2024-05-02T08:05:00",
     "Start": "2024-05-02T08:06:00", "End": "2024-05-02T10:06:00", "Elapsed": "02:00:00", "Timelimit": "1-00:00:00",
     "NCPUS": "8", "NNodes": "1", "State": "COMPLETED", "AllocTRES": "billing=24,cpu=8,gres/gpu=1,mem=199G,node=1",
     "ReqMem": "4000Mc", "NodeList": "g07", "Constraints": "", "Comment": ""},
    {"JobID": "7003", "JobName": "md", "User": "carol", "Partition": "batch", "Submit": "2024-05-02T08:10:00",
     "Start": "2024-05-02T08:20:00", "End": "2024-05-02T08:50:00", "Elapsed": "00:30:00", "Timelimit": "00:30:00",
     "NCPUS": "16", "NNodes": "1", "State": "NODE_FAIL", "AllocTRES": "cpu=16,mem=60G,node=1", "ReqMem": "4G",
     "NodeList": "c117", "Constraints": "", "Comment": ""},
    {"JobID": "7004", "JobName": "late", "User": "dave", "Partition": "batch", "Submit": "2024-05-02T08:30:00",
     "Start": "None", "End": "2024-05-02T08:31:00", "Elapsed": "00:00:00", "Timelimit": "01:00:00",
     "NCPUS": "4", "NNodes": "1", "State": "CANCELLED by 10304007", "AllocTRES": "", "ReqMem": "4G",
     "NodeList": "None assigned", "Constraints": "", "Comment": ""},
]
EXPECTED = [(0, 48, 3600, 7200), (300, 8, 7200, 86400), (600, 16, 1800, 1800)]


def dump_text(rows=ROWS, columns=COLUMNS, delimiter="|", header=True, end="", newline="\n") -> str:
    lines = [delimiter.join(columns) + end] if header else []
    lines += [delimiter.join(row[c] for c in columns) + end for row in rows]
    return newline.join(lines) + newline


def jobs(trace) -> list[tuple]:
    return [(j.submit, j.procs, j.runtime, j.walltime) for j in trace.jobs]


def with_values(**values) -> list[dict]:
    """ROWS with the first job's values changed."""
    return [{**ROWS[0], **values}] + ROWS[1:]


@pytest.fixture
def write(tmp_path):
    def write_dump(text: str | bytes, name: str = "sacct.txt"):
        path = tmp_path / name
        (path.write_bytes if isinstance(text, bytes) else path.write_text)(text)
        return path
    return write_dump


def test_the_clean_dump_reads_as_its_jobs(write):
    trace = read_slurm(write(dump_text()))
    assert jobs(trace) == EXPECTED and trace.cleaning["never_started"] == 1


@pytest.mark.parametrize("column, value", [("JobName", "a|b"), ("JobName", "||x||"), ("Comment", "see|me"),
                                           ("Constraints", "[skylake|cascadelake]"), ("Comment", "|")])
def test_the_delimiter_inside_one_free_text_column_is_joined_back(write, column, value):
    trace = read_slurm(write(dump_text(with_values(**{column: value}))))
    assert jobs(trace) == EXPECTED


def test_the_delimiter_in_several_free_text_columns_is_resolved_by_the_shaped_ones(write):
    """JobName, then a dozen shaped columns, then Constraints and Comment: only one distribution of the surplus
    fields reads every shaped column; the two adjacent free-text columns may share theirs any way, which
    changes nothing bftune reads."""
    rows = with_values(JobName="x|y|z", Constraints="[a|b]", Comment="c|d")
    assert jobs(read_slurm(write(dump_text(rows)))) == EXPECTED


def test_an_ambiguous_record_is_one_line_naming_file_line_and_columns(write):
    columns = ["JobID", "JobName", "User", "Comment", "Submit", "Start", "End", "Timelimit", "NCPUS", "State"]
    rows = [{**ROWS[0], "JobName": "a|b"}, ROWS[1]]  # JobName 'a|b' and User alice, or JobName 'a', User 'b'...
    path = write(dump_text(rows, columns))
    with pytest.raises(WorkloadError) as caught:
        read_slurm(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:2: ") and "JobName, Comment" in message and "User" in message
    assert "ambiguous" in message and "\n" not in message
    trace = read_slurm(path, lenient=True)
    assert trace.cleaning["ambiguous_line"] == 1 and jobs(trace) == [(0, 8, 7200, 86400)]


def test_a_delimiter_with_no_free_text_column_to_hold_it_is_refused(write):
    columns = ["JobID", "User", "Submit", "Start", "End", "Timelimit", "NCPUS", "State"]
    path = write(dump_text(with_values(User="al|ice"), columns))
    with pytest.raises(WorkloadError, match=r":2: expected 8 fields \(the header's\), found 9: .*no free-text"):
        read_slurm(path)


@pytest.mark.parametrize("column", ["Comment", "JobName"])
def test_a_record_over_several_lines_is_joined(write, column):
    """A submit line or comment with newlines: the record goes on over the next physical lines."""
    rows = with_values(**{column: "sbatch --wrap 'a\nb|c'\n\n   d"})
    path = write(dump_text(rows))
    assert jobs(read_slurm(path)) == EXPECTED
    bad = with_values(**{column: "x\ny"}, Timelimit="1h")
    with pytest.raises(WorkloadError, match=r"sacct.txt:2: column Timelimit: '1h'"):  # the record's first line
        read_slurm(write(dump_text(bad)))


def test_a_short_record_does_not_swallow_the_next_one(write):
    text = dump_text().splitlines()
    text[1] = text[1].rsplit("|", 3)[0]  # three fields short
    with pytest.raises(WorkloadError, match=r"sacct.txt:2: expected 17 fields \(the header's\), found 14"):
        read_slurm(write("\n".join(text) + "\n"))
    trace = read_slurm(write("\n".join(text) + "\n"), lenient=True)
    assert trace.cleaning["malformed_line"] == 1 and jobs(trace) == [(0, 8, 7200, 86400), (300, 16, 1800, 1800)]


def test_parsable_with_its_trailing_delimiter(write):
    path = write(dump_text(end="|"))
    assert is_slurm_dump(path) and jobs(read_slurm(path)) == EXPECTED
    rows = with_values(JobName="a|b", Comment="last|")
    assert jobs(read_slurm(write(dump_text(rows, end="|")))) == EXPECTED


@pytest.mark.parametrize("delimiter", [",", ";", "\t", "☃", "::", "#"])
def test_any_delimiter_is_found_from_the_header(write, delimiter):
    """``--delimiter=,`` puts the delimiter inside TRES lists, node lists and memory-free text: the shaped
    TRES and node-list columns take their pieces back."""
    rows = with_values(JobName=f"a{delimiter}b", NodeList="c[101-102],c200")
    path = write(dump_text(rows, delimiter=delimiter))
    assert is_slurm_dump(path)
    trace = read_slurm(path)
    assert jobs(trace) == EXPECTED and trace.header["TRESJobs"] == "1"


def test_a_delimiter_given_for_a_header_that_has_another(write):
    path = write(dump_text(delimiter=","))
    with pytest.raises(WorkloadError, match="is not a sacct header line"):
        read_slurm(path, delimiter="|")
    assert jobs(read_slurm(path, delimiter=",")) == EXPECTED


def test_a_dump_without_header_is_read_with_its_format(write):
    path = write(dump_text(header=False))
    fmt = ",".join(f"{c.lower()}%20" if i % 2 else c for i, c in enumerate(COLUMNS))  # widths, any case
    assert not is_slurm_dump(path) and looks_like_headerless_dump(path) and is_slurm_dump(path, sacct_format=fmt)
    assert jobs(read_slurm(path, sacct_format=fmt)) == EXPECTED
    assert jobs(read_workload(path, sacct_format=fmt)) == EXPECTED
    semi = write(dump_text(header=False, delimiter=";", end=";"), "semi.txt")
    assert jobs(read_workload(semi, sacct_format=fmt, sacct_delimiter=";")) == EXPECTED
    with pytest.raises(WorkloadError, match="looks like sacct output without its header line .*--sacct-format"):
        read_workload(path)
    with pytest.raises(WorkloadError, match="column State is missing from the sacct format given"):
        read_slurm(path, sacct_format=",".join(c for c in COLUMNS if c != "State"))
    with pytest.raises(WorkloadError, match="is not the sacct format given"):
        read_slurm(write(dump_text(), "h.txt"), sacct_format="JobID,Submit")


def test_crlf_a_byte_order_mark_and_gzip(write):
    text = "\ufeff" + dump_text(newline="\r\n")
    plain = write(text)
    packed = write(gzip.compress(text.encode()), "sacct.txt.gz")
    for path in (plain, packed):
        assert is_slurm_dump(path) and jobs(read_workload(path)) == EXPECTED


def test_utf8_and_latin1_user_names_and_stray_bytes(write):
    utf8 = dump_text(with_values(User="josé", JobName="ünï|code"))
    assert jobs(read_slurm(write(utf8.encode("utf-8")))) == EXPECTED
    latin1 = dump_text(with_values(User="josé")).encode("latin-1")
    trace = read_slurm(write(latin1))
    assert jobs(trace) == EXPECTED and trace.jobs[0].user == 1
    stray = dump_text().encode().replace(b"relax", b"re\xff\xfe\x80lax")
    assert jobs(read_slurm(write(stray))) == EXPECTED


def test_what_sacct_format_all_prints(write):
    """100+ columns, most unknown to bftune or empty: found by name, the rest ignored."""
    extra = [f"TRESUsageOutMax{i}" for i in range(90)] + ["WorkDir", "SubmitLine", "ExitCode", "DerivedExitCode"]
    columns = COLUMNS + extra
    rows = [{**row, **{c: "" for c in extra}, "ExitCode": "0:15", "DerivedExitCode": "0:0",
             "WorkDir": "/home/a|b", "SubmitLine": "sbatch -C 'x|y' run.sh"} for row in ROWS]
    assert jobs(read_slurm(write(dump_text(rows, columns)))) == EXPECTED


def test_timeout_jobs_are_kept_at_their_limit_within_the_grace(write):
    """Slurm kills a job at its limit a little late: 90 s over (TIMEOUT) is read as killed at the limit;
    20 minutes over is an overrun the cleaning drops; ``overrun_grace`` sets the grace, 0 turns it off."""
    rows = [{**ROWS[0], "State": "TIMEOUT", "Timelimit": "00:58:30"},
            {**ROWS[1], "Timelimit": "01:40:00"}, ROWS[2]]
    path = write(dump_text(rows))
    trace = read_slurm(path)
    assert jobs(trace) == [(0, 48, 3510, 3510), (600, 16, 1800, 1800)]
    assert trace.cleaning["runtime_capped_at_limit"] == 1 and trace.cleaning["walltime_lt_runtime"] == 1
    assert jobs(read_slurm(path, overrun_grace=1200)) == [(0, 48, 3510, 3510), (300, 8, 6000, 6000),
                                                            (600, 16, 1800, 1800)]
    none = read_slurm(path, overrun_grace=0)
    assert none.cleaning["runtime_capped_at_limit"] == 0 and none.cleaning["walltime_lt_runtime"] == 2
    with pytest.raises(WorkloadError, match="overrun-grace must be a number of seconds"):
        read_slurm(path, overrun_grace=-1)


def test_partitions_select_jobs_and_machine(write):
    path = write(dump_text())
    notes = []
    gpu = read_slurm(path, partitions=["gpu"], inform=notes.append)
    assert jobs(gpu) == [(0, 8, 7200, 86400)] and gpu.max_procs == 8
    assert gpu.cleaning["other_partition"] == 3 and "largest allocation of partition gpu" in notes[0]
    both = read_workload(path, partitions=["gpu", "batch"], procs=64)
    assert jobs(both) == EXPECTED and both.cleaning["other_partition"] == 0
    with pytest.raises(WorkloadError, match=r"no record of partition debug \(the dump holds batch, gpu\)"):
        read_slurm(path, partitions=["debug"])
    with pytest.raises(WorkloadError, match="--partition needs the Partition column"):
        read_slurm(write(dump_text(columns=[c for c in COLUMNS if c != "Partition"]), "np.txt"), partitions=["gpu"])


def test_whole_node_allocation(write):
    path = write(dump_text())
    trace = read_slurm(path, cores_per_node=64)
    assert [j.procs for j in trace.jobs] == [128, 64, 64] and trace.max_procs == 128
    with pytest.raises(WorkloadError, match="--cores-per-node needs the NNodes column"):
        read_slurm(write(dump_text(columns=[c for c in COLUMNS if c != "NNodes"]), "nn.txt"), cores_per_node=64)


def test_jobs_asking_for_gpus_are_counted(write):
    trace = read_slurm(write(dump_text()))
    assert trace.header["TRESJobs"] == "1"
    assert "; Note: 1 job asked for TRES beyond processors (gres/gpu 1); bftune schedules processors only" \
        in trace.header_lines


def test_options_for_slurm_dumps_only(tmp_path):
    from bftune.workloads.model import JobRecord, Trace
    from bftune.workloads.swf_write import write_swf
    swf = tmp_path / "t.swf"
    write_swf(Trace(jobs=[], max_procs=4).with_jobs([JobRecord(1, 0, 1, 10, 20)]), swf)
    for option in ({"partitions": ["a"]}, {"cluster": "c"}, {"cores_per_node": 4}, {"overrun_grace": 5}):
        with pytest.raises(WorkloadError, match="applies to Slurm accounting dumps only"):
            read_workload(swf, **option)


def test_the_cli_gives_the_same_jobs_with_pipes_in_job_names(write, tmp_path):
    clean = write(dump_text(), "clean.txt")
    piped = write(dump_text([{**row, "JobName": f"{row['JobName']}|x|y"} for row in ROWS]), "piped.txt")
    summaries = []
    for path in (clean, piped):
        out = tmp_path / f"out-{path.stem}"
        assert main(["simulate", "--trace", str(path), "--procs", "64", "--out", str(out)]) == 0
        summaries.append(json.loads((out / "summary.json").read_text()))
    assert summaries[0]["jobs"] == summaries[1]["jobs"] == 3
    assert summaries[0]["cleaning"] == summaries[1]["cleaning"]


@pytest.mark.slow
@pytest.mark.skipif(not KTH.exists(), reason=f"{KTH} is not available (the ../shared checkout is missing)")
def test_a_dump_of_an_archive_trace_keeps_its_jobs_killed_at_their_limit(tmp_path):
    """KTH-SP2's jobs that ran up to five minutes past their limit are what Slurm logs for TIMEOUT jobs: kept
    at their limit and counted, where the SWF cleaning drops them; longer overruns are dropped as before."""
    dump = tmp_path / "kth.sacct"
    swf_to_slurm(KTH, dump, extras=False)
    swf = read_swf(KTH)
    late = [r for r in swf_records(KTH)[0] if 0 < r[8] < r[3] <= r[8] + 300]
    assert len(late) > 100
    slurm = read_slurm(dump, procs=swf.max_procs)
    assert slurm.cleaning["runtime_capped_at_limit"] == len(late)
    assert slurm.cleaning["walltime_lt_runtime"] == swf.cleaning["walltime_lt_runtime"] - len(late)
    assert len(slurm.jobs) == len(swf.jobs) + len(late)
    assert all(j.runtime <= j.walltime for j in slurm.jobs)


# --------------------------------------------------------------------------
# property: a dump made messy reads back to the jobs of the clean dump

FREE = ["JobName", "Comment", "SubmitLine"]
WEAK = ["User", "Partition", "QOS", "AllocTRES"]  # any name, or empty: they do not tell where free text ends
SHAPED = ["JobID", "Submit", "Start", "End", "Elapsed", "Timelimit", "NCPUS", "State", "ExitCode"]
DELIMITERS = ["|", ",", ";", "\t", "☃", "#", "::"]


def synthetic_rows(rng: random.Random, n: int) -> list[dict]:
    rows, t = [], 1_700_000_000
    for i in range(n):
        t += rng.randrange(0, 900)
        wait, limit = rng.randrange(0, 3600), rng.choice([3600, 7200, 86400])
        run = rng.randrange(1, limit + 900 if i else limit)  # some past their limit: capped, or dropped
        cpus = rng.choice([1, 2, 4, 16, 64])
        stamp = _stamp
        rows.append({"JobID": f"{1000 + i}" if i % 5 else f"{900 + i}_{i % 3}", "Submit": stamp(t),
                     "Start": stamp(t + wait), "End": stamp(t + wait + run), "Elapsed": _duration(run),
                     "Timelimit": _duration(limit), "NCPUS": str(cpus), "State": rng.choice(["COMPLETED", "FAILED"]),
                     "AllocTRES": f"cpu={cpus},mem={cpus * 4}G,node=1", "ExitCode": "0:0",
                     "User": f"u{rng.randrange(5)}", "Partition": rng.choice(["batch", "long"]), "QOS": "normal",
                     "JobName": "job", "Comment": "", "SubmitLine": "sbatch run.sh"})
    return rows


def _stamp(t: int) -> str:
    import datetime as dt
    return dt.datetime.fromtimestamp(t, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")


def _duration(seconds: int) -> str:
    days, rest = divmod(seconds, 86400)
    text = f"{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"
    return f"{days}-{text}" if days else text


def messy_columns(rng: random.Random) -> list[str]:
    """A random order in which two free-text columns are never side by side with only identifiers or TRES lists
    between them (those orders are ambiguous by nature: 'a|b' + 'alice' reads as 'a' + 'b|alice' as well, and
    an identifier or a TRES list may be empty)."""
    shaped = SHAPED[:]
    rng.shuffle(shaped)
    gaps: list[list[str]] = [[] for _ in range(len(shaped) + 1)]
    for column, where in zip(FREE, rng.sample(range(len(gaps)), len(FREE))):
        gaps[where].append(column)
    for column in WEAK:
        gaps[rng.randrange(len(gaps))].append(column)
    order: list[str] = []
    for i, members in enumerate(gaps):
        rng.shuffle(members)
        order += members + ([shaped[i]] if i < len(shaped) else [])
    return order


def messy_text(rng: random.Random, delimiter: str, newlines: bool) -> str:
    words = ["run", "a b", delimiter, delimiter * 2, "x" + delimiter + "y", "[a" + delimiter + "b]", "--wrap"]
    if newlines:
        words += ["\n", "\n  cd dir", "\n\n"]
    return "".join(rng.choice(words) for _ in range(rng.randrange(1, 6))).strip("\n") or "z"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1))
def test_a_messy_dump_reads_back_to_the_clean_dumps_jobs(tmp_path, seed):
    rng = random.Random(seed)
    rows = synthetic_rows(rng, rng.randrange(2, 12))
    columns = messy_columns(rng)
    delimiter = rng.choice(DELIMITERS)
    clean = tmp_path / f"clean-{seed}.txt"
    clean.write_text(dump_text(rows, columns, delimiter=delimiter))
    expected = read_slurm(clean)
    # newlines: a record's first line is told by its first field's shape, or its end by its last field's;
    # with neither (a name or free text first and last) no reader can cut for sure
    multiline = columns[0] in SHAPED or columns[-1] in SHAPED
    messy_rows = [{**row, **{c: messy_text(rng, delimiter, multiline and c == "SubmitLine") for c in FREE}}
                  for row in rows]
    parsable = rng.random() < 0.3
    messy = tmp_path / f"messy-{seed}.txt"
    messy.write_text(dump_text(messy_rows, columns, delimiter=delimiter, end=delimiter if parsable else "",
                               newline=rng.choice(["\n", "\r\n"])))
    got = read_slurm(messy)
    assert [(j.id, j.submit, j.procs, j.runtime, j.walltime, j.user, j.partition) for j in got.jobs] == \
        [(j.id, j.submit, j.procs, j.runtime, j.walltime, j.user, j.partition) for j in expected.jobs]
    assert got.cleaning == expected.cleaning
