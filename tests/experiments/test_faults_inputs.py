"""Fault family 5: inputs that never end or expand without bound are one line, in bounded memory and time.

Issue 32: ``bftune simulate --trace /dev/zero`` grew to 24 GB, ignored
SIGTERM for 48 s and was killed by the kernel; so did ``/dev/urandom``,
``--policy learned:/dev/zero`` and ``campaign /dev/zero``; a 2.6 MB
``.swf.gz`` expanding to one 2.5 GB comment line peaked at 2.65 GB.  Every
reader is tried here through the commands that use it, in a child process
whose peak memory (``ru_maxrss``) is measured by a parent of its own.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

BFTUNE = Path(sys.executable).with_name("bftune")
#: Peak memory of a bftune process that refuses its input: imports and all (a normal start is ~60 MB).
BOUNDED_KB = 300 * 1024
JOB = b"1 0 -1 4 2 -1 -1 2 10 -1 1 1 1 1 1 1 -1 -1\n"

MEASURE = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=600)
sys.stderr.write(done.stderr)
print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def measured(argv: list[str], cwd: Path) -> tuple[int, str, int]:
    """Run bftune ``argv``: its exit status, its standard error and its peak memory in kB."""
    proc = subprocess.run([sys.executable, "-c", MEASURE, str(BFTUNE), *argv], capture_output=True, text=True,
                          cwd=cwd, timeout=900)
    status, peak = proc.stdout.split()
    return int(status), proc.stderr, int(peak)


def gzip_expanding(path: Path, gigabytes: float, filler: bytes, head: bytes = b"; MaxProcs: 10\n") -> Path:
    """A small gzip file that expands to ``head``, ``gigabytes`` of ``filler`` repeated, then a job line.

    Made in a second or two: each MB of filler is deflated after a full flush (which resets the
    compressor's history), so its compressed bytes are the same every time and are written, not
    recomputed; only the CRC runs over the expanded data.
    """
    block = filler * ((1 << 20) // len(filler))
    tail = b"\n" + JOB
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = deflate.compress(head) + deflate.flush(zlib.Z_FULL_FLUSH)
    repeated = deflate.compress(block) + deflate.flush(zlib.Z_FULL_FLUSH)
    assert deflate.compress(block) + deflate.flush(zlib.Z_FULL_FLUSH) == repeated
    last = deflate.compress(tail) + deflate.flush()
    count = int(gigabytes * 1000)
    crc = zlib.crc32(head)
    for _ in range(count):
        crc = zlib.crc32(block, crc)
    crc = zlib.crc32(tail, crc)
    size = len(head) + count * len(block) + len(tail)
    with open(path, "wb") as f:
        f.write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + first)  # gzip header: deflate, no name, no time
        for _ in range(count):
            f.write(repeated)
        f.write(last + crc.to_bytes(4, "little") + (size % 2**32).to_bytes(4, "little"))
    return path


@pytest.fixture(scope="module")
def bombs(tmp_path_factory) -> dict[str, Path]:
    """2.5 GB of one comment line, and of comment lines of 60 kB (2.5 MB on disk each)."""
    folder = tmp_path_factory.mktemp("bombs")
    return {"one line": gzip_expanding(folder / "line.swf.gz", 2.5, b"x", head=b"; MaxProcs: 10\n; "),
            "comment lines": gzip_expanding(folder / "comments.swf.gz", 2.5, b"; " + b"y" * 60_000 + b"\n")}


def campaign_config(folder: Path, trace: str) -> Path:
    config = folder / "c.toml"
    config.write_text(f"[campaign]\nkind = 'offline'\n[workload]\ntrace = '{trace}'\nprocs = 10\n"
                      "[offline]\npolicies = ['FCFS']\nthresholds = ['none']\nweeks = 1\n")
    return config


#: Each command that reads a trace, with the trace's place marked {}.
TRACE_READERS = {
    "simulate": ["simulate", "--procs", "10", "--trace", "{}"],
    "convert": ["convert", "--out", "converted", "--trace", "{}"],
    "campaign trace": ["campaign", "{config}", "--out", "campaign", "--workers", "1"],
    "learn-index": ["learn-index", "--windows", "1", "--trials", "2", "--out", "learned", "--source", "{}"],
}


def command(name: str, trace: Path, folder: Path) -> list[str]:
    argv = TRACE_READERS[name]
    config = campaign_config(folder, str(trace)) if "{config}" in argv else None
    return [str(config) if a == "{config}" else a.replace("{}", str(trace)) for a in argv]


@pytest.mark.slow
@pytest.mark.parametrize("bomb", ["one line", "comment lines"])
@pytest.mark.parametrize("name", list(TRACE_READERS))
def test_an_expanding_gzip_is_refused_in_bounded_memory(bombs, tmp_path, name, bomb):
    status, stderr, peak = measured(command(name, bombs[bomb], tmp_path), tmp_path)
    assert status == 2, stderr
    (line,) = stderr.strip().splitlines()
    assert str(bombs[bomb]) in line
    assert ("a line longer than 64 KiB" if bomb == "one line" else "more than 64 MiB of comment lines") in line
    assert peak < BOUNDED_KB, f"{peak / 1024:.0f} MB"


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["/dev/zero", "/dev/urandom", "fifo"])
@pytest.mark.parametrize("name", [*TRACE_READERS, "learned policy", "campaign config"])
def test_a_file_that_never_ends_is_refused_at_once(tmp_path, name, kind):
    if kind == "fifo":
        path = tmp_path / "fifo"
        os.mkfifo(path)
    else:
        path = Path(kind)
        if not path.exists():
            pytest.skip(f"no {kind}")
    if name == "learned policy":
        argv = ["simulate", "--synthetic", "50", "--procs", "8", "--policy", f"learned:{path}"]
    elif name == "campaign config":
        argv = ["campaign", str(path), "--out", "campaign"]
    else:
        argv = command(name, path, tmp_path)
    status, stderr, peak = measured(argv, tmp_path)
    assert status == 2, stderr
    (line,) = stderr.strip().splitlines()
    assert str(path) in line and ("not a regular file" in line or "is a FIFO" in line), line
    assert peak < BOUNDED_KB
    assert not (tmp_path / "campaign" / "runs").exists() or not any((tmp_path / "campaign" / "runs").iterdir())


@pytest.mark.slow
def test_sigterm_stops_a_long_read_promptly(tmp_path):
    """2.5 GB of blank lines: read (in chunks) for tens of seconds; a SIGTERM ends it like Ctrl-C, at once."""
    trace = gzip_expanding(tmp_path / "blank.swf.gz", 2.5, b"\n")
    proc = subprocess.Popen([str(BFTUNE), "simulate", "--procs", "10", "--trace", str(trace)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(3)  # imports done, reading
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=15)  # it read for tens of seconds before
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143 and stderr.strip() == "bftune: stopped by SIGTERM"


@pytest.mark.slow
def test_a_campaign_trace_is_checked_before_any_run(tmp_path):
    """A truncated gzip or a malformed line: one line and exit 2 before any run, not a failure of every run."""
    good = b"; MaxProcs: 10\n" + b"".join(b"%d %d -1 40 2 -1 -1 2 100 -1 1 1 1 1 1 1 -1 -1\n" % (i, i * 600)
                                            for i in range(1, 3000))
    cases = {"truncated.swf.gz": gzip.compress(good)[:5000], "malformed.swf": good + b"1 2 3\n"}
    for name, data in cases.items():
        trace = tmp_path / name
        trace.write_bytes(data)
        out = tmp_path / f"out-{name}"
        status, stderr, _ = measured(["campaign", str(campaign_config(tmp_path, str(trace))), "--out", str(out),
                                      "--workers", "1", "--no-progress"], tmp_path)
        assert status == 2, stderr
        (line,) = stderr.strip().splitlines()
        assert str(trace) in line and "no run started" in line
        assert ("corrupt gzip data" if name.endswith(".gz") else "malformed.swf:3001: expected 18 fields") in line
        assert not list((out / "runs").glob("*.json")) and not (out / "campaign.json").exists()


@pytest.mark.slow
def test_a_campaign_reads_a_batsim_workload_by_its_content(tmp_path):
    """A [workload] trace naming a Batsim JSON workload without .json: read as JSON (it was parsed as SWF and
    every run failed: "expected 18 fields, found 28028")."""
    jobs = [{"id": str(i), "subtime": i * 600, "res": 2, "walltime": 100, "profile": "d40", "user": i % 3}
            for i in range(1, 3000)]
    trace = tmp_path / "workload"
    trace.write_text(json.dumps({"nb_res": 10, "jobs": jobs, "profiles": {"d40": {"type": "delay", "delay": 40}}}))
    status, stderr, _ = measured(["campaign", str(campaign_config(tmp_path, str(trace))), "--out", "out",
                                  "--workers", "1", "--no-progress"], tmp_path)
    assert status == 0, stderr
    assert len(list((tmp_path / "out" / "runs").glob("*.json"))) == 2  # FCFS on the two halves
