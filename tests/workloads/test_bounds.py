"""What a workload reader accepts: times within 2^32 s, lines and headers of bounded size, only regular files.

Issue 32: a submit time of 1e17 gave a 4 s job an execution time of 0 (and
Batsim aborted on 1e300); integers too large for a float in a Batsim JSON
workload raised ``OverflowError``; ``/dev/zero`` and a gzip expanding to one
2.5 GB line were read into memory whole.  Each reader (SWF's careful path,
its vectorised path, the parse cache, Batsim JSON) is tried with each field.
The memory of the large cases is measured in ``tests/experiments/test_faults_inputs.py``.
"""

from __future__ import annotations

import gzip
import json
import os
import zlib

import pytest
from bftune.support import inputs
from bftune.workloads import limits, parsecache
from bftune.workloads.batsim_json import read_batsim_workload, write_batsim_workload
from bftune.workloads.errors import WorkloadError
from bftune.workloads.model import JobRecord, Trace
from bftune.workloads.read import read_workload
from bftune.workloads.swf import FAST_PATH_MIN_CHARS, parse_swf, read_swf

HEADER = "; MaxProcs: 8\n"
#: An SWF job line with its submit, run and requested times as placeholders.
LINE = "{id} {submit} -1 {run} 2 -1 -1 2 {req} -1 1 1 1 1 1 1 -1 -1"
HUGE = {"1e17": "100000000000000000", "1e300": "1e300", "10^400": "1" + "0" * 400, "-1e17": "-100000000000000000"}
FIELDS = {"submit": "field 2 (submit time)", "run": "field 4 (run time)", "req": "field 9 (requested time)"}


def swf_text(bad_field: str | None = None, value: str = "", jobs: int = 3) -> str:
    """``jobs`` well-formed lines; the second has ``value`` in ``bad_field``."""
    lines = []
    for i in range(1, jobs + 1):
        times = {"submit": str(i * 10), "run": "4", "req": "10"}
        if i == 2 and bad_field is not None:
            times[bad_field] = value
        lines.append(LINE.format(id=i, **times))
    return HEADER + "\n".join(lines) + "\n"


def big_swf_text(bad_field: str | None = None, value: str = "") -> str:
    """Large enough for the vectorised path (and the parse cache), the bad value on line 3 (job 2)."""
    text = swf_text(bad_field, value, jobs=FAST_PATH_MIN_CHARS // 40)
    assert len(text) >= FAST_PATH_MIN_CHARS
    return text


@pytest.mark.parametrize("value", list(HUGE), ids=list(HUGE))
@pytest.mark.parametrize("field", list(FIELDS))
@pytest.mark.parametrize("size", ["small", "large"])
def test_a_time_out_of_range_is_an_error_naming_file_line_and_field(tmp_path, field, value, size):
    path = tmp_path / "t.swf"
    path.write_text((swf_text if size == "small" else big_swf_text)(field, HUGE[value]))
    with pytest.raises(WorkloadError) as err:
        read_swf(path)
    message = str(err.value)
    assert message.startswith(f"{path}:3: {FIELDS[field]}") and "out of range" in message and "2^32" in message
    assert len(message) < 200  # a 400-digit number is not printed whole
    with pytest.raises(WorkloadError, match="out of range"):
        parse_swf((swf_text if size == "small" else big_swf_text)(field, HUGE[value]))


def test_a_time_out_of_range_is_a_malformed_line_when_lenient(tmp_path):
    path = tmp_path / "t.swf"
    path.write_text(swf_text("submit", HUGE["1e17"]))
    trace = read_swf(path, lenient=True)
    assert [job.id for job in trace.jobs] == [1, 3] and trace.cleaning["malformed_line"] == 1


def test_the_time_limit_itself_is_accepted(tmp_path):
    path = tmp_path / "t.swf"
    path.write_text(swf_text("submit", str(limits.MAX_TIME)))
    trace = read_swf(path)
    assert max(job.submit for job in trace.jobs) == 2**32
    path.write_text(swf_text("submit", str(limits.MAX_TIME + 1)))
    with pytest.raises(WorkloadError, match="out of range"):
        read_swf(path)


@pytest.mark.parametrize("start", ["100000000000000000000", "9" * 5000])
def test_a_huge_unix_start_time_is_an_error(tmp_path, start):
    path = tmp_path / "t.swf"
    path.write_text(f"; UnixStartTime: {start}\n" + swf_text())
    with pytest.raises(WorkloadError, match="header UnixStartTime = .* is out of range"):
        read_swf(path)


def test_a_parse_cache_entry_with_huge_times_is_not_used(tmp_path):
    """An entry stored before times were bounded (or tampered with) is a miss: the parse names the line."""
    path = tmp_path / "t.swf"
    text = big_swf_text()
    path.write_text(text)
    assert read_swf(path).jobs[1].submit == 20  # parsed once: now in the cache
    key = parsecache.key_of(path.read_bytes())
    columns, header = parsecache.load(key)
    columns[1][1] = 10**17  # job 2's submit time
    parsecache.store(key, columns, header)
    path.write_text(big_swf_text("submit", HUGE["1e17"]))  # the file as the entry now describes it...
    parsecache.store(parsecache.key_of(path.read_bytes()), columns, header)  # ...and stored under its key
    with pytest.raises(WorkloadError, match=f"{path}:3: field 2 .*out of range"):
        read_swf(path)


def json_workload(**changes) -> dict:
    doc: dict = {"nb_res": 4,
                 "jobs": [{"id": "1", "subtime": 0, "res": 1, "walltime": 10, "profile": "d4", "user": 1}],
                 "profiles": {"d4": {"type": "delay", "delay": 4}}}
    for where, value in changes.items():
        if where == "delay":
            doc["profiles"]["d4"]["delay"] = value
        elif where == "unix_start_time":
            doc["unix_start_time"] = value
        else:
            doc["jobs"][0][where] = value
    return doc


@pytest.mark.parametrize("value", [10**17, 10**400, 1e300, -(10**17)], ids=["1e17", "10^400", "1e300", "-1e17"])
@pytest.mark.parametrize("field", ["subtime", "walltime", "delay", "unix_start_time"])
def test_a_batsim_json_time_out_of_range_is_one_error(tmp_path, field, value):
    path = tmp_path / "w.json"
    path.write_text(json.dumps(json_workload(**{field: value})))
    with pytest.raises(WorkloadError) as err:
        read_batsim_workload(path)
    message = str(err.value)
    refused = "must be an integer" if field == "unix_start_time" and isinstance(value, float) else "out of range"
    assert refused in message and field in message and len(message) < 250


@pytest.mark.parametrize("content, message", [
    (b'{"nb_res": 4, "jobs": [], "note": "\xe9"}', "not UTF-8 text (byte 0xe9"),
    (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    (b'{"nb_res": 4, "jobs": [{"id": "' + b"9" * 5000 + b'"}]}', "job ids must be job numbers"),
    (b'{"nb_res": 1' + b"0" * 5000 + b"}", "invalid JSON"),
])
def test_a_malformed_batsim_json_file_is_one_error(tmp_path, content, message):
    path = tmp_path / "w.json"
    path.write_bytes(content)
    with pytest.raises(WorkloadError) as err:
        read_batsim_workload(path)
    assert message in str(err.value) and len(str(err.value)) < 300


def test_more_jobs_than_bftune_accepts(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "MAX_JOBS", 2)
    swf = tmp_path / "t.swf"
    swf.write_text(swf_text(jobs=3))
    with pytest.raises(WorkloadError, match=f"{swf}:4: more than 2 job lines"):  # the third job line
        read_swf(swf)
    path = tmp_path / "w.json"
    doc = json_workload()
    doc["jobs"] = [dict(doc["jobs"][0], id=str(i)) for i in range(1, 4)]
    path.write_text(json.dumps(doc))
    with pytest.raises(WorkloadError, match="3 jobs: more than bftune accepts"):
        read_batsim_workload(path)


@pytest.mark.parametrize("reader", ["swf", "json", "any"])
@pytest.mark.parametrize("kind", ["device", "fifo", "directory"])
def test_only_regular_files_are_read(tmp_path, reader, kind):
    """A FIFO with no writer would block a plain open(); /dev/zero never ends: both refused before reading."""
    if kind == "device":
        path = "/dev/zero"
        if not os.path.exists(path):
            pytest.skip("no /dev/zero")
    elif kind == "fifo":
        path = str(tmp_path / "fifo.json")
        os.mkfifo(path)
    else:
        path = str(tmp_path)
    read = {"swf": read_swf, "json": read_batsim_workload, "any": read_workload}[reader]
    with pytest.raises(WorkloadError, match="not a regular file"):
        read(path)


def test_a_line_longer_than_the_bound_is_refused_after_reading_that_much(tmp_path, monkeypatch):
    """Streamed: the reader stops at the bound (64 KiB), whatever follows; here the bound is lowered."""
    monkeypatch.setattr(limits, "MAX_LINE_BYTES", 1000)
    path = tmp_path / "t.swf.gz"
    path.write_bytes(gzip.compress((HEADER + "; " + "x" * 5000 + "\n" + swf_text()).encode()))
    with pytest.raises(WorkloadError, match=f"{path}:2: a line longer than"):
        read_swf(path)


def test_comment_lines_are_bounded_in_all(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "MAX_HEADER_BYTES", 10_000)
    path = tmp_path / "t.swf"
    path.write_text(HEADER + "".join(f"; note {i} " + "x" * 100 + "\n" for i in range(200)) + swf_text())
    with pytest.raises(WorkloadError, match="more than 0 MiB of comment lines"):
        read_swf(path)


def test_a_truncated_gzip_is_one_error(tmp_path):
    data = gzip.compress(big_swf_text().encode())
    path = tmp_path / "t.swf.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(WorkloadError, match=f"{path}: corrupt gzip data"):
        read_swf(path)


def test_streamed_lines_are_numbered_as_the_whole_text_would_be():
    """The careful path used to number ``text.splitlines()``; streamed chunk by chunk (blank chunks only
    counted), every non-blank line keeps its number, whatever the line breaks and the chunk size."""
    import random

    from bftune.workloads.swf import _decoded_lines

    rng = random.Random(3)
    pieces = [b"a", b" ", b"\n", b"\r", b"\r\n", b"\x0b", b"\t", b";", b"\xc3\xa9", b"\x1c", b"\n\n\n", b"  \n "]
    for _ in range(3000):
        data = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 60)))
        size = rng.randint(1, 8)
        chunks = [data[i:i + size] for i in range(0, len(data), size)]
        streamed = [x for x in _decoded_lines(inputs.line_blocks(chunks, "x", 10**6), "utf-8") if x[1].strip()]
        whole = [x for x in enumerate(data.decode("utf-8").splitlines(), 1) if x[1].strip()]
        assert streamed == whole, (data, size)


@pytest.mark.slow
def test_a_gzip_stream_is_decompressed_a_chunk_at_a_time(tmp_path):
    """100 MB of zeros expand from 100 kB; no chunk given is larger than inputs.CHUNK."""
    path = tmp_path / "zeros.gz"
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    with open(path, "wb") as f:
        for _ in range(100):
            f.write(compressor.compress(bytes(1 << 20)))
        f.write(compressor.flush())
    with inputs.open_regular(path) as f:
        sizes = [len(chunk) for chunk in inputs.text_chunks(f, path)]
    assert sum(sizes) == 100 << 20 and max(sizes) <= inputs.CHUNK


def test_a_json_workload_is_read_as_such_whatever_its_name(tmp_path):
    jobs = [JobRecord(id=1, submit=0, procs=1, runtime=10, walltime=20, user=1)]
    path = tmp_path / "workload-without-suffix"
    write_batsim_workload(Trace(jobs=jobs, max_procs=4, name="w"), path)
    trace = read_workload(path)
    assert trace.max_procs == 4 and [job.id for job in trace.jobs] == [1]
