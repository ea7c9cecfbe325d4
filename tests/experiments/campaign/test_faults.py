"""Campaign faults (issue 12): real ``bftune campaign`` processes killed as a hostile user would.

Every test starts the command in its own process group, kills the
coordinator or a worker, and checks that no process of the group outlives
it (within a bounded time), that what is stored is whole (every run file a
complete record; the tables exactly those of the manifest, or no manifest),
and that the same command resumes.  Bad paths, sizes and files give one line
and exit status 2 before any work.
"""

from __future__ import annotations

import shutil
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bftune.experiments.campaign.config import load_config
from bftune.experiments.campaign.specs import CampaignError
from processes import interruptible

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process groups from /proc")

BFTUNE = Path(sys.executable).with_name("bftune")
# 12 runs of about 2 s each (a resampled 20-week synthetic trace): long enough to be killed mid-run.
SLOW = """
[campaign]
kind = "online"
name = "faults"
seed = 1
[workload]
trace = "synthetic:6000:32:5"
[online]
resamples = 4
weeks = 20
fixed = ["FCFS", "SPF", "SAF"]
selectors = []
"""
# Per resample a fast run (FCFS, ~2 s) and a slow one (the full-feedback selector re-simulates 12
# candidates every day, ~15 s): the two fast runs are stored while both workers are deep in slow ones.
MIXED = """
[campaign]
kind = "online"
name = "faults_mixed"
seed = 1
[workload]
trace = "synthetic:6000:32:5"
[online]
resamples = 2
weeks = 10
fixed = ["FCFS"]
selectors = ["full"]
periods = ["1d"]
"""
TINY = """
[campaign]
kind = "online"
seed = 1
[workload]
trace = "synthetic:300:8:5"
[online]
resamples = 1
weeks = 1
fixed = ["FCFS"]
selectors = []
"""


# --- helpers ---------------------------------------------------------------------------------


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, pgrp) of a process, None if it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return fields[0], int(fields[1]), int(fields[2])


def group(pgid: int) -> list[int]:
    """The live (not zombie) processes of a process group."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = _stat(int(entry))
            if st is not None and st[2] == pgid and st[0] != "Z":
                out.append(int(entry))
    return out


def workers(coordinator: int) -> list[int]:
    """The coordinator's worker processes (not the resource tracker)."""
    out = []
    for pid in group(coordinator):
        st = _stat(pid)
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if st is not None and st[1] == coordinator and b"spawn_main" in cmd:
            out.append(pid)
    return out


def wait_for(condition, timeout: float, what: str):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")


class Campaign:
    """``bftune campaign CONFIG --out OUT`` started in its own process group; stdout/stderr kept in files."""

    def __init__(self, config: Path, out: Path | str, *args: str) -> None:
        self.out = Path(out)
        self.log = config.parent / f"campaign.{time.monotonic_ns()}.log"
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen([str(BFTUNE), "campaign", str(config), "--out", str(out), "--no-progress",
                                          *args], stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                         preexec_fn=interruptible)  # SIGINT tests must not inherit SIG_IGN
        self.pgid = self.proc.pid

    def stored(self) -> int:
        return len(list((self.out / "runs").glob("*.json"))) if (self.out / "runs").is_dir() else 0

    def finish(self, timeout: float = 120.0) -> tuple[int, str]:
        code = self.proc.wait(timeout)
        return code, self.log.read_text()

    def kill_all(self) -> None:
        try:
            os.killpg(self.pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(10)


@pytest.fixture
def start(tmp_path):
    started: list[Campaign] = []

    def run(text: str, out: Path | str, *args: str) -> Campaign:
        config = tmp_path / "config.toml"
        config.write_text(text)
        c = Campaign(config, out, *args)
        started.append(c)
        return c

    yield run
    for c in started:  # whatever happened, nothing of ours survives the test
        c.kill_all()


def assert_group_gone(c: Campaign, timeout: float = 10.0) -> None:
    c.proc.wait(timeout)  # the coordinator itself, reaped
    wait_for(lambda: not group(c.pgid), timeout, f"every process of group {c.pgid} to end: {group(c.pgid)}")


def assert_outputs_whole(out: Path) -> None:
    """Every stored run is a complete record; the manifest, if any, matches every file it lists."""
    for p in (out / "runs").glob("*.json"):
        rec = json.loads(p.read_text())
        assert rec["status"] == "ok" and rec["run_id"] == p.stem and "summary" in rec
    manifest = out / "outputs.json"
    if manifest.exists():
        for name, digest in json.loads(manifest.read_text())["files"].items():
            assert hashlib.sha256((out / name).read_bytes()).hexdigest() == digest, name


# --- the coordinator killed -----------------------------------------------------------------------


@pytest.mark.slow
def test_sigkill_of_the_coordinator_leaves_no_process_and_resumes(start, tmp_path):
    out = tmp_path / "out"
    c = start(SLOW, out)
    wait_for(lambda: c.stored() >= 1 and len(workers(c.pgid)) == 2, 60, "a stored run and 2 busy workers")
    os.kill(c.proc.pid, signal.SIGKILL)
    assert_group_gone(c)  # workers and the resource tracker noticed the dead coordinator
    kept = c.stored()
    assert 1 <= kept < 12
    assert_outputs_whole(out)
    assert not (out / "outputs.json").exists()  # the tables were never published
    again = start(SLOW, out, "--workers", "2")
    code, log = again.finish()
    assert code == 0, log
    assert f"{12 - kept} runs done, {kept} reused" in log
    assert_outputs_whole(out)
    assert (out / "outputs.json").exists()


@pytest.mark.slow
@pytest.mark.parametrize("how,code", [("SIGTERM", 143), ("SIGINT", 130)])
def test_sigterm_behaves_like_sigint(start, tmp_path, how, code):
    """SIGTERM to the coordinator, or Ctrl-C (SIGINT to the whole group): workers stopped at once, runs kept."""
    out = tmp_path / "out"
    c = start(MIXED, out)
    wait_for(lambda: c.stored() >= 2, 90, "the two fast runs to be stored")
    t0 = time.monotonic()
    if how == "SIGTERM":
        os.kill(c.proc.pid, signal.SIGTERM)
    else:
        os.killpg(c.pgid, signal.SIGINT)
    status, log = c.finish(timeout=60)
    assert status == code, log
    assert_group_gone(c)
    # both workers were more than 5 s away from the end of their slow run: abandoned, not waited for
    assert time.monotonic() - t0 < 5, time.monotonic() - t0
    assert c.stored() == 2
    assert "interrupted: 2 of 4 runs are stored" in log
    assert "Traceback" not in log
    assert not list((out / "failures").glob("*.json"))  # interrupted runs are not failures
    assert_outputs_whole(out)


# --- a worker killed --------------------------------------------------------------------------------


@pytest.mark.slow
def test_one_dead_worker_fails_only_its_run(start, tmp_path):
    out = tmp_path / "out"
    c = start(SLOW, out)
    busy = wait_for(lambda: c.stored() >= 2 and workers(c.pgid), 60, "2 stored runs and busy workers")
    os.kill(busy[0], signal.SIGKILL)
    code, log = c.finish()
    assert code == 1, log  # one failure
    assert_group_gone(c)
    assert c.stored() == 11
    failures = [json.loads(p.read_text()) for p in (out / "failures").glob("*.json")]
    assert len(failures) == 1
    assert "BrokenProcessPool" in failures[0]["error"] and "worker running it died" in failures[0]["error"]
    assert "11 runs done, 0 reused, 1 failed, of 12" in log
    assert failures[0]["run_id"] in log  # the failed run is listed with its spec
    # the same command retries the one failed run
    again = start(SLOW, out)
    code, log = again.finish()
    assert code == 0 and "1 runs done, 11 reused, 0 failed" in log, log
    assert not list((out / "failures").glob("*.json"))
    assert_outputs_whole(out)


# --- the directory ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_locked_directory_stops_a_second_campaign(start, tmp_path):
    out = tmp_path / "out"
    first = start(SLOW, out)
    wait_for(lambda: (out / ".campaign.lock").exists() and workers(first.pgid), 60, "the first campaign to start")
    second = start(SLOW, out)
    code, log = second.finish(timeout=30)
    assert code == 2
    lines = log.strip().splitlines()
    assert len(lines) == 1 and "in use by another campaign" in lines[0] and f"pid {first.proc.pid}" in lines[0]
    assert first.proc.poll() is None  # the first one goes on
    os.kill(first.proc.pid, signal.SIGTERM)
    assert first.finish(timeout=20)[0] == 143
    assert_group_gone(first)
    # the lock went with its holder: the directory is usable again (report-only takes the lock too)
    assert start(SLOW, out, "--report-only").finish(timeout=60)[0] == 0


def bad_out_paths(tmp_path: Path) -> list[tuple[str, str]]:
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    return [(str(a_file), "not a directory"), (str(a_file / "below"), "cannot use it"), ("", "empty path")]


@pytest.mark.slow
def test_bad_out_paths_give_one_line_before_any_work(start, tmp_path):
    for path, expected in bad_out_paths(tmp_path):
        c = start(SLOW, path, "--workers", "2")  # a string: Path("") would be "."
        t0 = time.monotonic()
        code, log = c.finish(timeout=30)
        assert code == 2, (path, log)
        lines = log.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("bftune: error:") and expected in lines[0], (path, log)
        assert time.monotonic() - t0 < 15  # nothing was simulated


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_read_only_out_directory(start, tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        code, log = start(SLOW, ro / "out").finish(timeout=30)
    finally:
        ro.chmod(0o755)
    assert code == 2 and len(log.strip().splitlines()) == 1 and "Permission denied" in log


@pytest.mark.slow
def test_workers_option_is_checked_before_any_work(start, tmp_path):
    for n in ("0", "100000"):
        c = start(TINY, tmp_path / f"out{n}", "--workers", n)
        code, log = c.finish(timeout=30)
        assert code == 2 and len(log.strip().splitlines()) == 1 and "--workers" in log, log
        assert not (tmp_path / f"out{n}").exists()


# --- sizes and files --------------------------------------------------------------------------------

HEAD = "[campaign]\nkind = 'online'\n[workload]\ntrace = 'synthetic:100:8'\n"
ABSURD = [
    (HEAD + "[online]\nresamples = 99999999999\n", "[online] resamples: 99999999999 is too large: at most 10000"),
    (HEAD + "[online]\nweeks = 100000000\n", "[online] weeks: 100000000 is too large"),
    (HEAD.replace("synthetic:100:8", "synthetic:100000000000:8"), "[workload] trace: 'synthetic:100000000000:8': "
                                                                  "too large"),
    (HEAD.replace("synthetic:100:8", "synthetic:100:8000000000"), "[workload] trace"),
    (HEAD.replace("kind = 'online'", "kind = 'online'\nseed = 99999999999"), "[campaign] seed: 99999999999 is too"),
    ("[campaign]\nkind = 'offline'\n[workload]\ntrace = 'synthetic:100:8'\n[offline]\nweeks = 5000\n",
     "[offline] weeks: 5000 is too large"),
    # the 12 default fixed policies on 10,000 resamples: each size is allowed, their product is not
    (HEAD + "[online]\nresamples = 10000\nselectors = []\n", "120,000 runs: at most 100,000"),
]


@pytest.mark.parametrize("text,expected", ABSURD, ids=[e for _, e in ABSURD])
def test_absurd_sizes_are_refused_with_the_key_named(tmp_path, text, expected):
    path = tmp_path / "big.toml"
    path.write_text(text)
    t0 = time.monotonic()
    with pytest.raises(CampaignError) as info:
        load_config(path)
    assert str(path) in str(info.value) and expected in str(info.value)
    assert time.monotonic() - t0 < 5  # refused before expanding anything


@pytest.mark.slow
def test_absurd_size_and_binary_config_from_the_command_line(start, tmp_path):
    big = tmp_path / "big.toml"
    big.write_text(HEAD + "[online]\nresamples = 99999999999\n")
    binary = tmp_path / "binary.toml"
    binary.write_bytes(bytes(range(256)) * 8)
    for config, expected in ((big, "is too large"), (binary, "not UTF-8 text"), (tmp_path, "is a directory")):
        proc = subprocess.run([str(BFTUNE), "campaign", str(config), "--out", str(tmp_path / "out")],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and str(config) in lines[0] and expected in lines[0], proc.stderr
        assert not (tmp_path / "out").exists()


def test_a_table_that_cannot_be_written_is_named_with_what_to_fix_first(tmp_path, capsys):
    """Issue 42, item 12: the line named the hidden temporary (``.weeks.csv.x1y2z3w4.tmp``) and advised a rerun
    that failed the same way; it names the table and what to fix before running again."""
    from bftune.experiments.cli.main import main

    out = tmp_path / "c"
    argv = ["campaign", "tiny_synthetic_offline", "--out", str(out), "--workers", "1", "--no-progress"]
    assert main(argv) == 0
    runs = sorted(p.name for p in (out / "runs").iterdir())
    (out / "weeks.csv").unlink()
    (out / "weeks.csv").mkdir()
    (out / "weeks.csv" / "notes.txt").write_text("someone's")
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"bftune: error: {out}/weeks.csv: cannot write it (Is a directory); every run is stored (the "
                   "tables and the report are rebuilt from them): a directory stands where the file goes: move it "
                   "away, then run the same command again")
    assert sorted(p.name for p in (out / "runs").iterdir()) == runs
    shutil.rmtree(out / "weeks.csv")
    assert main(argv) == 0 and (out / "weeks.csv").is_file()
