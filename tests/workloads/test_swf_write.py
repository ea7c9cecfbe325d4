"""Writing SWF: a written trace reads back to the same jobs, its provenance kept and its header made true."""

from __future__ import annotations

from bftune.workloads.swf import parse_swf, read_swf
from bftune.workloads.swf_write import write_swf
from swf_lines import HEADER, job_line


def test_write_then_read_round_trip(tmp_path):
    lines = [job_line(i, submit=10 * i, runtime=5 + i, alloc=1 + i % 4, req_time=100 + i, user=i % 3) for i in (1, 2, 3)]
    original = parse_swf(HEADER + "; MaxJobs: 99\n" + "\n".join(lines) + "\n", name="orig")
    for name in ("out.swf", "out.swf.gz"):
        path = write_swf(original, tmp_path / name, notes=["resampled by a test"])
        again = read_swf(path)
        assert again.jobs == original.jobs
        assert again.max_procs == original.max_procs
        assert again.header["Acknowledge"] == "Someone"
        assert again.header["MaxJobs"] == "3"
        assert again.header["Note"].endswith("resampled by a test")
        assert again.header_lines[: 3] == original.header_lines[:3]
    assert (tmp_path / "out.swf.gz").read_bytes()[:2] == b"\x1f\x8b"
    # deterministic bytes (gzip without timestamp)
    first = (tmp_path / "out.swf.gz").read_bytes()
    write_swf(original, tmp_path / "out.swf.gz", notes=["resampled by a test"])
    assert (tmp_path / "out.swf.gz").read_bytes() == first


def test_write_sets_maxprocs_when_overridden_or_absent(tmp_path):
    trace = parse_swf("; Version: 2\n" + job_line(1, alloc=3) + "\n", max_procs=4)
    path = write_swf(trace, tmp_path / "o.swf")
    assert read_swf(path).max_procs == 4
    trace = parse_swf("; MaxProcs: 100\n" + job_line(1, alloc=3) + "\n", max_procs=4)
    text = write_swf(trace, tmp_path / "o2.swf").read_text()
    assert text.startswith("; MaxProcs: 4\n") and "MaxProcs: 100" not in text
