"""Faults of the third round on the Batsim side: odd ``--version`` answers, leftovers, bounds.

- a ``--batsim`` printing non-UTF-8 bytes for ``--version`` is one line and exit 2 (CLI), a
  ``BatsimVersionError`` (API), never a traceback;
- a ``--version`` that never answers is stopped with everything it started;
- the IPC socket folders: removed on errors, SIGTERM and SIGINT; a SIGKILLed run's folder is removed
  by the next run, while a live run's is kept;
- Batsim's log is quoted from its last bytes, with lines cut: a stderr flood gives a short error;
- one message from Batsim is bounded: an oversized one ends the run with one error line, unread.

The stand-ins are small scripts written into tmp_path (see tests/helpers/fake_batsim.py for the one that
speaks the protocol).  Runs that need a socket folder get a short private ``TMPDIR``: an IPC path is at
most 107 bytes, and the tests must see only their own folders.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
import tracemalloc
from pathlib import Path
from typing import Iterator

import fake_batsim
import pytest
from processes import LINUX, alive, interruptible, wait_until

import bftune
from bftune.experiments.runs import batsim as batsim_run
from bftune.experiments.runs.batsim import (
    MESSAGE_BYTES_FLOOR,
    SOCKETS_OWNER,
    SOCKETS_PREFIX,
    BatsimRunError,
    BatsimVersionError,
    batsim_version,
    message_bound,
    remove_stale_socket_folders,
    run_batsim,
)
from bftune.schedulers.config import SchedulerConfig
from bftune.workloads.model import JobRecord, Trace

pytestmark = pytest.mark.skipif(not LINUX, reason="reads processes from /proc (Linux)")

BFTUNE = [sys.executable, "-m", "bftune.experiments.cli.main"]
RUN = ["--synthetic", "12", "--procs", "4"]


def script(path: Path, body: str) -> Path:
    """An executable Python script at ``path`` (this interpreter, so that it can import zmq)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!{sys.executable}\n" + textwrap.dedent(body))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def shell(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + textwrap.dedent(body))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def bftune_cli(args: list[str], env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([*BFTUNE, *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL)


def small_trace(n: int = 12, m: int = 4) -> Trace:
    return Trace(jobs=[JobRecord(id=i, submit=3 * i, procs=1 + i % m, runtime=10 + i, walltime=100, user=1)
                       for i in range(1, n + 1)], max_procs=m, name="small")


@pytest.fixture
def short_tmp(monkeypatch) -> Iterator[Path]:
    """A private temporary directory with a short path, used by this process (``tempfile``) and by children
    (``TMPDIR``)."""
    folder = Path(tempfile.mkdtemp(prefix="bt3-", dir="/tmp"))
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def socket_folders(directory: Path) -> list[Path]:
    return sorted(directory.glob(f"{SOCKETS_PREFIX}*"))


def dead_pid() -> int:
    """The pid of a process that has ended (and was reaped)."""
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def stale_folder(directory: Path, pid: int, owner: str | None = None) -> Path:
    """A socket folder as a run of ``pid`` makes it (owner file: pid and pid namespace)."""
    folder = Path(tempfile.mkdtemp(prefix=f"{SOCKETS_PREFIX}{pid}-", dir=directory))
    namespace = os.readlink("/proc/self/ns/pid") if os.path.exists("/proc/self/ns/pid") else ""
    if owner is None:
        owner = f"{pid} {namespace}\n"
    if owner:
        (folder / SOCKETS_OWNER).write_text(owner)
    (folder / "batsim").write_text("")  # where the socket was
    return folder


# --- batsim --version ---------------------------------------------------------------------------------------


@pytest.fixture
def not_utf8(tmp_path) -> Path:
    return shell(tmp_path / "bin" / "batsim", "printf '\\377\\376\\n'\n")


@pytest.mark.slow
@pytest.mark.parametrize("command", ["batsim", "compare"])
def test_version_in_bytes_that_are_not_utf8_is_one_line_and_exit_2(tmp_path, not_utf8, command):
    done = bftune_cli([command, *RUN, "--batsim", str(not_utf8), "--out", str(tmp_path / "out")])
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("bftune: error: ") and f"{not_utf8} --version` gave no version" in lines[0]
    assert "b'\\xff\\xfe' (not UTF-8 text)" in lines[0]
    assert not (tmp_path / "out").exists()


def test_version_in_bytes_that_are_not_utf8_is_a_version_error_in_the_api(tmp_path, not_utf8):
    with pytest.raises(BatsimVersionError, match="gave no version"):
        bftune.compare(small_trace(), batsim=str(not_utf8), out=tmp_path / "out")
    with pytest.raises(BatsimVersionError, match="not UTF-8"):
        batsim_version(not_utf8)


def test_a_flood_for_version_is_read_and_dropped(tmp_path):
    """100 MB of answer: only the first 64 KiB are kept (the error quotes 200 characters)."""
    exe = script(tmp_path / "bin" / "batsim", """\
        import sys
        block = b"no version here " * 4096
        for _ in range(1600):
            sys.stdout.buffer.write(block)
        """)
    tracemalloc.start()
    try:
        with pytest.raises(BatsimVersionError) as info:
            batsim_version(exe, timeout=60)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * 2**20
    assert len(str(info.value)) < 2000


def hanging_version(tmp_path: Path) -> tuple[Path, Path]:
    """A ``batsim`` whose ``--version`` never answers: a shell waiting on a child of its own (the shell's pid
    and the child's go to a file)."""
    pids = tmp_path / "pids"
    exe = shell(tmp_path / "bin" / "batsim", f"""\
        sleep 300 &
        echo "$$ $!" > {pids}
        wait
        """)
    return exe, pids


def read_pids(path: Path) -> list[int]:
    return [int(p) for p in wait_until(lambda: path.exists() and path.read_text().split(), 30,
                                       "the stand-in did not write its pids")]


@pytest.mark.slow
def test_a_version_that_hangs_is_stopped_with_its_children(tmp_path):
    exe, pids = hanging_version(tmp_path)
    t0 = time.monotonic()
    with pytest.raises(BatsimVersionError, match=r"did not answer within 1 s; it was stopped"):
        batsim_version(exe, timeout=1.0)
    assert time.monotonic() - t0 < 10
    shell_pid, child = read_pids(pids)
    wait_until(lambda: not alive(shell_pid) and not alive(child), 10, "the --version processes are still alive")


@pytest.mark.slow
def test_a_version_that_hangs_leaves_no_process_after_the_command(tmp_path):
    """The CLI waits 20 s for ``--version``, then says so in one line, exit 2, and nothing it started lives."""
    exe, pids = hanging_version(tmp_path)
    done = bftune_cli(["batsim", *RUN, "--batsim", str(exe), "--out", str(tmp_path / "out")])
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "did not answer within 20 s" in done.stderr
    shell_pid, child = read_pids(pids)
    assert not alive(shell_pid) and not alive(child)


# --- socket folders -----------------------------------------------------------------------------------------


def test_only_the_folders_of_dead_runs_are_removed(tmp_path):
    dead = dead_pid()
    gone = stale_folder(tmp_path, dead)
    live = stale_folder(tmp_path, os.getpid())
    no_owner = stale_folder(tmp_path, dead, owner="")  # its run was making it: not certainly dead
    other_pid = stale_folder(tmp_path, dead, owner=f"{os.getpid()} x\n")  # owner file disagrees with the name
    other_container = stale_folder(tmp_path, dead, owner=f"{dead} pid:[1]\n")
    old_style = tmp_path / "bftune-abc123"  # an earlier version's folder: no owner recorded
    old_style.mkdir()
    target = tmp_path / "target"
    target.mkdir()
    (target / "keep").write_text("x")
    link = tmp_path / f"{SOCKETS_PREFIX}{dead}-link"
    link.symlink_to(target)
    plain_file = tmp_path / f"{SOCKETS_PREFIX}{dead}-file"
    plain_file.write_text("x")

    assert remove_stale_socket_folders(tmp_path) == [gone]
    assert not gone.exists()
    for kept in (live, no_owner, other_pid, other_container, old_style, link, plain_file, target / "keep"):
        assert kept.exists(), kept


def test_a_folder_of_another_user_is_kept(tmp_path, monkeypatch):
    folder = stale_folder(tmp_path, dead_pid())
    monkeypatch.setattr(os, "getuid", lambda: os.stat(folder).st_uid + 1)
    assert remove_stale_socket_folders(tmp_path) == []
    assert folder.exists()


def test_an_error_before_batsim_starts_removes_the_folder(tmp_path, short_tmp, monkeypatch):
    """The scheduler's connection failing right after the socket was bound: the folder goes too (it was made
    before the run's clean-up was in place)."""
    exe = fake_batsim.write_executable(tmp_path / "bin")

    def broken(*args, **kwargs):
        raise RuntimeError("no connection today")

    monkeypatch.setattr(batsim_run, "Connection", broken)
    with pytest.raises(RuntimeError, match="no connection today"):
        run_batsim(small_trace(), SchedulerConfig(), tmp_path / "out", batsim=exe)
    assert socket_folders(short_tmp) == []


@pytest.mark.slow
def test_a_failed_run_removes_its_folder_and_those_of_dead_runs(tmp_path, short_tmp, monkeypatch):
    exe = fake_batsim.write_executable(tmp_path / "bin")
    monkeypatch.setenv("FAKE_BATSIM_MODE", "die")
    stale = stale_folder(short_tmp, dead_pid())
    live = stale_folder(short_tmp, os.getpid())
    with pytest.raises(BatsimRunError, match="crashing on purpose"):
        run_batsim(small_trace(), SchedulerConfig(), tmp_path / "out", batsim=exe, timeout=5)
    assert socket_folders(short_tmp) == [live]
    assert not stale.exists()


def start_stalled_run(tmp_path: Path, short_tmp: Path) -> subprocess.Popen:
    """``bftune batsim`` against a stand-in that connects and stalls; returns once the stand-in runs."""
    exe = fake_batsim.write_executable(tmp_path / "bin")
    env = {**os.environ, "TMPDIR": str(short_tmp), "FAKE_BATSIM_MODE": "stall", "FAKE_BATSIM_PIDS": str(tmp_path / "pids")}
    proc = subprocess.Popen([*BFTUNE, "batsim", *RUN, "--batsim", str(exe), "--out", str(tmp_path / "out"),
                             "--timeout", "5m"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                            preexec_fn=interruptible)
    try:
        wait_until(lambda: (tmp_path / "pids").exists() or proc.poll() is not None, 120, "the stand-in did not start")
    except BaseException:
        proc.kill()
        raise
    assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
    return proc


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stopped_run_removes_its_folder(tmp_path, short_tmp, signum):
    proc = start_stalled_run(tmp_path, short_tmp)
    try:
        assert len(socket_folders(short_tmp)) == 1
        proc.send_signal(signum)
        assert proc.wait(30) == 128 + signum
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    assert socket_folders(short_tmp) == []


@pytest.mark.slow
def test_the_folder_of_a_killed_run_is_removed_by_the_next_run(tmp_path, short_tmp, monkeypatch):
    proc = start_stalled_run(tmp_path, short_tmp)
    try:
        [left] = socket_folders(short_tmp)
        assert left.name.startswith(f"{SOCKETS_PREFIX}{proc.pid}-")
        proc.kill()  # no clean-up can run
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    assert left.exists()
    fake_pid = int((tmp_path / "pids").read_text().split()[0])
    wait_until(lambda: not alive(fake_pid), 30, "the stand-in outlived its launcher")
    live = stale_folder(short_tmp, os.getpid())  # a run still going on (this process) keeps its own
    monkeypatch.delenv("FAKE_BATSIM_MODE", raising=False)
    exe = fake_batsim.write_executable(tmp_path / "bin")
    done = bftune_cli(["batsim", *RUN, "--batsim", str(exe), "--out", str(tmp_path / "next")],
                      env={"TMPDIR": str(short_tmp), "FAKE_BATSIM_MODE": ""})
    assert done.returncode == 0, done.stderr
    assert socket_folders(short_tmp) == [live]


# --- Batsim's log ---------------------------------------------------------------------------------------------


def flooding(tmp_path: Path, megabytes: int, line: int | None) -> Path:
    """A ``batsim`` that writes ``megabytes`` MiB to stderr (in lines of ``line`` bytes; None: one line), then
    its last words, and fails."""
    return script(tmp_path / "bin" / "batsim", f"""\
        import sys
        if "--version" in sys.argv:
            print("4.2.1")
            sys.exit(0)
        line = {line!r}
        chunk = (b"x" * (line - 1) + b"\\n") * (2**20 // line) if line else b"x" * 2**20
        for _ in range({megabytes}):
            sys.stderr.buffer.write(chunk)
        sys.stderr.buffer.write(b"\\nthe last words\\n")
        sys.exit(1)
        """)


@pytest.mark.parametrize("line", [2000, None], ids=["long-lines", "one-line"])
def test_a_stderr_flood_gives_a_short_error(tmp_path, short_tmp, line):
    exe = flooding(tmp_path, 50, line)
    with pytest.raises(BatsimRunError) as info:
        run_batsim(small_trace(), SchedulerConfig(), tmp_path / "out", batsim=exe, timeout=30)
    text = str(info.value)
    assert len(text) < 10_000, len(text)
    assert "batsim exited with code 1 before the end of the simulation" in text
    assert text.rstrip().endswith("the last words")
    assert (tmp_path / "out.failed" / "batsim.log").stat().st_size > 50 * 10**6  # the log itself is kept whole


def test_the_tail_reads_only_the_end_of_the_log(tmp_path):
    log = tmp_path / "batsim.log"
    with open(log, "wb") as fh:
        fh.write((b"y" * 999 + b"\n") * 50_000)  # 50 MB
        fh.write(b"z" * 5000 + b"\nend\n")
    tracemalloc.start()
    try:
        tail = batsim_run._tail(log)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * 2**20
    lines = tail.splitlines()
    assert len(lines) == 15 and lines[-1] == "    end"
    assert lines[-2] == "    " + "z" * 300 + " [... 4700 more characters]"
    assert all(len(line) < 400 for line in lines)


# --- one message's size -----------------------------------------------------------------------------------------


def oversized(tmp_path: Path, size: int) -> Path:
    """A ``batsim`` that connects and sends one message of ``size`` bytes, then waits for the reply."""
    return script(tmp_path / "bin" / "batsim", f"""\
        import sys, time
        if "--version" in sys.argv:
            print("4.2.1")
            sys.exit(0)
        import zmq
        sock = zmq.Context().socket(zmq.REQ)
        sock.connect(sys.argv[sys.argv.index("-s") + 1])
        sock.send(b'{{"now": 0.0, "events": []}}' + b" " * {size})
        print("sent", flush=True)
        sock.recv()
        time.sleep(300)
        """)


@pytest.mark.slow
def test_an_oversized_message_is_refused_unread(tmp_path, short_tmp, monkeypatch):
    monkeypatch.setattr(batsim_run, "MESSAGE_BYTES_FLOOR", 2**20)
    exe = oversized(tmp_path, 2 * 2**20)
    t0 = time.monotonic()
    with pytest.raises(BatsimRunError) as info:
        run_batsim(small_trace(), SchedulerConfig(), tmp_path / "out", batsim=exe, timeout=60)
    assert time.monotonic() - t0 < 20  # not the 60 s timeout
    first = str(info.value).splitlines()[0]
    assert "before the simulation began" in first
    assert "Batsim's message #0 was larger than 1,048,576 bytes, the bound on one message of this run" in first
    assert "docs/reference/limits.md" in first


@pytest.mark.slow
def test_an_oversized_message_ends_the_command_with_one_error_line(tmp_path):
    exe = oversized(tmp_path, MESSAGE_BYTES_FLOOR + 1)
    done = bftune_cli(["batsim", *RUN, "--batsim", str(exe), "--out", str(tmp_path / "out")], timeout=120)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("bftune: error:")]
    assert len(errors) == 1 and f"larger than {MESSAGE_BYTES_FLOOR:,} bytes" in errors[0]


def begins_bytes(trace: Trace) -> int:
    """The size of Batsim 4's SIMULATION_BEGINS for ``trace`` (its resources and profiles, compact JSON)."""
    profiles = {f"d{job.runtime:g}": {"type": "delay", "delay": job.runtime} for job in trace.jobs}
    begins = fake_batsim.begins(trace.max_procs, True, profiles, {"w0": "/" + "w" * 200})
    for resource in begins["data"]["compute_resources"]:
        resource["properties"] = {"role": ""}  # as Batsim 4.2 sends them
    return len(json.dumps({"now": 0.0, "events": [begins]}, separators=(",", ":")))


@pytest.mark.parametrize("m, n", [(4, 12), pytest.param(93_312, 60_000, marks=pytest.mark.slow),
                                  pytest.param(400_000, 100_000, marks=pytest.mark.slow)])
def test_the_bound_holds_the_largest_real_messages_twice(m, n):
    """SIMULATION_BEGINS of a machine like CEA-Curie's (93,312 processors, the largest archive trace) and larger,
    every job with a runtime of its own, all submitted at once: the bound is at least twice the message."""
    trace = Trace(jobs=[JobRecord(id=i, submit=0, procs=1, runtime=i, walltime=n + 1, user=1) for i in range(1, n + 1)],
                  max_procs=m, name="big")
    bound = message_bound(trace)
    assert bound >= MESSAGE_BYTES_FLOOR
    assert bound >= 2 * begins_bytes(trace)
    submissions = len(json.dumps([{"timestamp": 0.0, "type": "JOB_SUBMITTED", "data": {
        "job_id": f"w0!{i:07d}", "job": {"id": f"w0!{i:07d}", "subtime": 0.0, "res": m, "walltime": 1e9,
                                          "profile": f"d{i}", "user": 1}}} for i in range(n)]))
    assert bound >= 2 * submissions
