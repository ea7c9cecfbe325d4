"""The Batsim launcher (bftune.experiments.runs.batsim) with fake ``batsim`` executables.

The fakes are small scripts written into tmp_path that run tests/fake_batsim.py:
a protocol-speaking stand-in for Batsim (normal mode), or one that misbehaves
(``FAKE_BATSIM_MODE``): dies, exits early, stalls, never connects, closes its
socket, sends garbage, or reports a wrong version.  After every failure no
process of the fake (nor a child it started) may be left.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import tempfile
import time
from pathlib import Path

import fake_batsim
import pytest
import zmq
from bftune.experiments.runs import batsim as batsim_run
from bftune.experiments.cli.backends import cmd_batsim, cmd_compare
from bftune.experiments.runs.batsim import (
    BatsimNotFoundError,
    BatsimRunError,
    BatsimVersionError,
    batsim_version,
    find_batsim,
    run_batsim,
)
from bftune.experiments.runs.local import run_local
from bftune.schedulers.config import SchedulerConfig
from bftune.workloads.model import JobRecord, Trace

DOCS = "https://batsim.readthedocs.io"


def small_trace(n: int = 60, m: int = 8, seed: int = 4) -> Trace:
    rng = random.Random(seed)
    jobs, t = [], 0
    for i in range(1, n + 1):
        t += rng.choice([0, 3, 20, 100])
        runtime = rng.choice([5, 30, 90, 400])
        jobs.append(JobRecord(id=i, submit=t, procs=rng.randint(1, m), runtime=runtime,
                              walltime=rng.choice([runtime, 2 * runtime, 1000]), user=rng.randint(1, 3)))
    return Trace(jobs=jobs, max_procs=m, name="small")


@pytest.fixture
def fake(tmp_path, monkeypatch) -> Path:
    """A fake ``batsim`` executable; ``FAKE_BATSIM_PIDS`` records its pid (and its child's)."""
    exe = fake_batsim.write_executable(tmp_path / "bin")
    monkeypatch.setenv("FAKE_BATSIM_PIDS", str(tmp_path / "pids"))
    monkeypatch.delenv("FAKE_BATSIM_MODE", raising=False)
    monkeypatch.delenv("FAKE_BATSIM_VERSION", raising=False)
    return exe


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:  # a zombie nobody reaped yet is dead too
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except OSError:
        return True


def assert_no_orphans(tmp_path: Path) -> None:
    pids = [int(p) for p in (tmp_path / "pids").read_text().split()]
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not all(gone(p) for p in pids):
        time.sleep(0.05)
    assert all(gone(p) for p in pids), f"processes left behind: {[p for p in pids if not gone(p)]}"


# --- finding batsim --------------------------------------------------------------------------------


def test_missing_on_path(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(BatsimNotFoundError) as info:
        find_batsim()
    assert "batsim is not on PATH" in str(info.value) and DOCS in str(info.value) and "--batsim" in str(info.value)


def test_missing_given_path(tmp_path):
    with pytest.raises(BatsimNotFoundError, match=f"batsim not found at {tmp_path / 'nope'}.*{DOCS}"):
        find_batsim(tmp_path / "nope")


def test_not_executable(tmp_path):
    exe = tmp_path / "batsim"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o644)
    with pytest.raises(BatsimNotFoundError, match="is not executable"):
        find_batsim(exe)


def test_found_on_path_and_version(fake, monkeypatch):
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    assert find_batsim() == fake
    assert find_batsim(fake.parent) == fake  # a directory holding batsim
    assert batsim_version(fake) == "4.2.1"


@pytest.mark.parametrize("version, expected", [("3.1.0", "is Batsim 3.1.0; bftune speaks the protocol of Batsim 4.x"),
                                               ("", "gave no version")])
def test_wrong_version(fake, monkeypatch, version, expected):
    monkeypatch.setenv("FAKE_BATSIM_VERSION", version)
    with pytest.raises(BatsimVersionError) as info:
        find_batsim(fake)
    assert expected in str(info.value) and DOCS in str(info.value)


def test_cmd_batsim_reports_missing_batsim_without_traceback(tmp_path, capsys):
    args = argparse.Namespace(out=str(tmp_path / "out"), batsim=str(tmp_path / "nope"), port=None, timeout=10.0,
                              tau="10")
    assert cmd_batsim(small_trace(), SchedulerConfig(), args) == 2  # a bad path, as every bad input
    err = capsys.readouterr().err
    assert err.startswith("bftune: error: batsim not found at") and DOCS in err


# --- a full run against the stand-in ------------------------------------------------------------------


@pytest.mark.slow
def test_run_against_the_stand_in_matches_local(fake, tmp_path):
    trace = small_trace()
    for options in ({"policy": "SAF", "threshold": "200s"}, {"kill_after": 40}):
        config = SchedulerConfig.from_options(options)
        out = tmp_path / f"run{len(options)}"
        summary = run_batsim(trace, config, out, batsim=fake, timeout=20)
        local, _ = run_local(trace, config)
        for key in ("jobs", "avg_wait", "max_wait", "avg_bsld", "makespan", "killed_runs", "wasted_work"):
            assert summary[key] == local[key], key
        assert summary["backend"] == "batsim" and 0 < summary["scheduler_share"] < 1
        assert summary["batsim"]["dynamic_jobs"] == ("kill_after" in options)
        written = json.loads((out / "summary.json").read_text())
        assert written["backend"] == "batsim" and written["config"]["policy"] == config.policy
        for name in ("out_jobs.csv", "workload.json", "platform.xml", "batsim.log"):
            assert (out / name).exists(), name
    assert summary["killed_runs"] > 0
    assert_no_orphans(tmp_path)


def test_compare_against_the_stand_in(fake, tmp_path, capsys):
    trace = small_trace()
    args = argparse.Namespace(out=str(tmp_path / "cmp"), batsim=str(fake), port=None, timeout=20.0, tau="10")
    assert cmd_compare(trace, SchedulerConfig.from_options({"kill_after": 40}), args) == 0
    report = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    assert report["mismatches"] == 0 and report["kills"]["local"] == report["kills"]["batsim"] > 0
    assert "all runs agree" in capsys.readouterr().out


def test_compare_exits_non_zero_on_a_mismatch(fake, tmp_path, monkeypatch, capsys):
    def other_local(trace, config, out_dir=None, tau=10.0):  # a different scheduler on the local side
        return run_local(trace, SchedulerConfig(backfill=False), out_dir, tau=tau)

    monkeypatch.setattr(batsim_run, "run_local", other_local)
    args = argparse.Namespace(out=str(tmp_path / "cmp"), batsim=str(fake), port=None, timeout=20.0, tau="10")
    assert cmd_compare(small_trace(), SchedulerConfig(), args) == 1
    out = capsys.readouterr().out
    assert "MISMATCH" in out and "first differing run" in out
    assert json.loads((tmp_path / "cmp" / "compare.json").read_text())["mismatches"] > 0


def test_requeue_without_dynamic_jobs_names_the_flags(fake, tmp_path):
    with pytest.raises(BatsimRunError) as info:
        run_batsim(small_trace(), SchedulerConfig.from_options({"kill_after": 40}), tmp_path / "o", batsim=fake,
                   timeout=20, dynamic_jobs=False)
    assert "--enable-dynamic-jobs --acknowledge-dynamic-jobs --enable-profile-reuse" in str(info.value)
    assert_no_orphans(tmp_path)


# --- failures: the other side is stopped, nothing is left behind ---------------------------------------


@pytest.mark.parametrize("mode, expected", [
    ("die_child", "batsim exited with code 3 before the end of the simulation"),
    ("exit0", "batsim exited with code 0 before the end of the simulation"),
    ("stall_child", "no message from Batsim for 1.5 s"),
    ("never_connect_child", "Batsim did not connect to ipc:///"),
    ("close_child", "Batsim closed the connection in the middle of the simulation"),
    ("bad_event_child", "unknown event type 'BOGUS_EVENT'"),
])
@pytest.mark.slow
def test_failures_stop_everything_and_say_what_happened(fake, tmp_path, monkeypatch, mode, expected):
    monkeypatch.setenv("FAKE_BATSIM_MODE", mode)
    t0 = time.monotonic()
    with pytest.raises(BatsimRunError) as info:
        run_batsim(small_trace(), SchedulerConfig(), tmp_path / "o", batsim=fake, timeout=1.5)
    assert time.monotonic() - t0 < 15
    text = str(info.value)
    assert expected in text
    assert f"mode={mode}" in text  # the end of Batsim's log is quoted
    if mode.startswith("die"):
        assert "crashing on purpose" in text
    assert_no_orphans(tmp_path)


def test_port_in_use(fake, tmp_path):
    holder = zmq.Context.instance().socket(zmq.REP)
    holder.setsockopt(zmq.LINGER, 0)
    port = holder.bind_to_random_port("tcp://127.0.0.1")
    try:
        with pytest.raises(BatsimRunError, match=f"cannot listen on tcp://127.0.0.1:{port}.*choose another --port"):
            run_batsim(small_trace(), SchedulerConfig(), tmp_path / "o", batsim=fake, port=port, timeout=5)
    finally:
        holder.close(0)


def test_cmd_batsim_prints_failures_as_one_error(fake, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FAKE_BATSIM_MODE", "die")
    args = argparse.Namespace(out=str(tmp_path / "o"), batsim=str(fake), port=None, timeout=5.0, tau="10")
    assert cmd_batsim(small_trace(), SchedulerConfig(), args) == 1
    err = capsys.readouterr().err
    assert "bftune: error: the run failed" in err and "Traceback" not in err
    assert_no_orphans(tmp_path)


@pytest.mark.slow
def test_batsim_talks_over_a_private_ipc_socket_unless_a_port_is_given(tmp_path, fake):
    """The default endpoint is a Unix socket in a folder of its own, removed after the run; --port: TCP."""
    trace = small_trace(40, 8, 4)
    before = set(Path(tempfile.gettempdir()).glob("bftune-*"))
    run_batsim(trace, SchedulerConfig(), tmp_path / "ipc", batsim=fake)
    assert "-s ipc:///" in (tmp_path / "ipc" / "batsim.log").read_text()
    assert set(Path(tempfile.gettempdir()).glob("bftune-*")) <= before  # no socket folder left
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    run_batsim(trace, SchedulerConfig(), tmp_path / "tcp", batsim=fake, port=port)
    assert f"-s tcp://127.0.0.1:{port}" in (tmp_path / "tcp" / "batsim.log").read_text()
