"""Fault family 1: no process outlives the ``bftune batsim`` / ``bftune compare`` that started it.

Real ``bftune`` processes are started and killed the way users and batch
systems kill them (SIGTERM, SIGINT, SIGHUP, and SIGKILL, which no handler
sees); then no process of Batsim's process group may survive (checked in
/proc, within a bounded time).  The stand-in Batsim runs in its "stall_child"
mode: it connects, starts a child of its own (``sleep 300``) and waits, so a
run is killed in the middle.  One test does the same with the real Batsim.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import fake_batsim
import pytest
from processes import LINUX, alive, command, descendants, group_members, interruptible, wait_until

pytestmark = pytest.mark.skipif(not LINUX, reason="reads processes from /proc (Linux)")

BFTUNE = [sys.executable, "-m", "bftune.experiments.cli.main"]
SIGNALS = [(signal.SIGTERM, 143, "bftune: stopped by SIGTERM"), (signal.SIGINT, 130, "bftune: interrupted"),
           (signal.SIGHUP, 129, "bftune: stopped by SIGHUP"), (signal.SIGKILL, -9, None)]
START_TIMEOUT = 120  # a loaded 2-core machine starts Python slowly
GONE_TIMEOUT = 30


def start(tmp_path: Path, argv: list[str], mode: str | None) -> subprocess.Popen:
    env = dict(os.environ, FAKE_BATSIM_PIDS=str(tmp_path / "pids"))
    env.pop("FAKE_BATSIM_MODE", None)
    if mode:
        env["FAKE_BATSIM_MODE"] = mode
    with open(tmp_path / "stderr", "w") as err:
        return subprocess.Popen([*BFTUNE, *argv], stdout=subprocess.DEVNULL, stderr=err, env=env,
                                preexec_fn=interruptible)


def fake_pids(tmp_path: Path) -> list[int] | None:
    """The stand-in's pid and its child's, once it has written both."""
    try:
        pids = [int(p) for p in (tmp_path / "pids").read_text().split()]
    except (OSError, ValueError):
        return None
    return pids if len(pids) == 2 else None


def wait_for_batsim(proc: subprocess.Popen) -> list[int]:
    """The pid of the real Batsim's simulation under ``proc`` (not its ``batsim --version``), once it runs."""
    def batsim() -> list[int]:
        return [p for p in descendants(proc.pid)
                if command(p)[:1] and Path(command(p)[0]).name == "batsim" and "-w" in command(p)]

    return wait_until(lambda: batsim() or proc.poll() is not None, START_TIMEOUT, "batsim did not start")


def assert_group_gone(pgid: int) -> None:
    try:
        wait_until(lambda: not group_members(pgid), GONE_TIMEOUT, f"processes of Batsim's group {pgid} still alive")
    except AssertionError as exc:
        raise AssertionError(f"{exc}: {[(p, command(p)) for p in group_members(pgid)]}") from None


@pytest.mark.slow
@pytest.mark.parametrize("signum, status, message", SIGNALS, ids=[s[0].name for s in SIGNALS])
@pytest.mark.parametrize("command_name", ["batsim", "compare"])
def test_batsim_dies_with_the_launcher(tmp_path, signum, status, message, command_name):
    exe = fake_batsim.write_executable(tmp_path / "bin")
    out = tmp_path / "out"
    proc = start(tmp_path, [command_name, "--synthetic", "40", "--procs", "8", "--batsim", str(exe),
                            "--out", str(out), "--timeout", "5m"], mode="stall_child")
    try:
        pids = wait_until(lambda: fake_pids(tmp_path), START_TIMEOUT, "the stand-in Batsim did not start")
        pgid = os.getpgid(pids[0])
        assert pgid != os.getpgid(proc.pid)  # Batsim has a group of its own: Ctrl-C on a terminal misses it
        proc.send_signal(signum)
        assert proc.wait(GONE_TIMEOUT) == status
    finally:
        if proc.poll() is None:
            proc.kill()
    assert_group_gone(pgid)
    assert not any(alive(p) for p in pids)
    err = (tmp_path / "stderr").read_text()
    assert "Traceback" not in err
    if message is not None:
        assert err.strip().splitlines()[-1] == message
    # Nothing under the final name: the run was killed before its end.
    assert not out.exists()


@pytest.mark.batsim
@pytest.mark.skipif(shutil.which("batsim") is None, reason="the real batsim is not on PATH")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_real_batsim_dies_with_the_launcher(tmp_path, signum):
    out = tmp_path / "out"
    # 3000 jobs keep Batsim busy for seconds: it is killed in the middle of the simulation.
    proc = start(tmp_path, ["batsim", "--synthetic", "3000", "--procs", "64", "--out", str(out)], mode=None)
    try:
        found = wait_for_batsim(proc)
        assert proc.poll() is None, "the run ended before it could be killed"
        pgid = os.getpgid(found[0])
        proc.send_signal(signum)
        proc.wait(GONE_TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert_group_gone(pgid)
    assert not out.exists()


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGSEGV, signal.SIGTERM], ids=["SIGKILL", "SIGSEGV", "SIGTERM"])
def test_the_watchdog_dies_as_its_child_did(tmp_path, signum):
    """The guard re-raises its child's signal: SIGKILL (the OOM killer's) crashed it ('signal.signal(SIGKILL)'
    is invalid) and the launcher read 'exited with code 1'.  No core file is left by the guard."""
    from bftune.support.children import how_it_ended, run_guarded

    status, output = run_guarded(["sh", "-c", f"kill -{signum.name[3:]} $$"], tmp_path)
    assert status == -signum, output
    assert "Traceback" not in output and "OSError" not in output
    assert how_it_ended(status) == f"was killed by signal {int(signum)} ({signum.name})"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.batsim
@pytest.mark.skipif(shutil.which("batsim") is None, reason="the real batsim is not on PATH")
def test_real_batsim_killed_by_sigkill_is_reported_as_such(tmp_path):
    """Batsim killed by SIGKILL under `bftune batsim` (the OOM killer): status 1, 'killed by signal 9 (SIGKILL)'."""
    out = tmp_path / "out"
    proc = start(tmp_path, ["batsim", "--synthetic", "20000", "--procs", "64", "--out", str(out)], mode=None)
    try:
        found = wait_for_batsim(proc)
        assert proc.poll() is None, "the run ended before Batsim could be killed"
        os.kill(found[0], signal.SIGKILL)
        proc.wait(GONE_TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
    stderr = (tmp_path / "stderr").read_text()
    assert proc.returncode == 1, stderr
    assert "batsim was killed by signal 9 (SIGKILL)" in stderr and "exited with code" not in stderr
    log = (tmp_path / "out.failed" / "batsim.log").read_text()
    assert "Traceback" not in log and "OSError" not in log  # the watchdog did not crash
    assert not out.exists()


@pytest.mark.slow
def test_a_killed_coordinator_leaves_no_process_and_no_leaked_semaphore_line(tmp_path):
    """multiprocessing's tracker said "There appear to be 10 leaked semaphore objects" after a SIGKILL of the
    coordinator (issue 42, item 10), while it removed them: nothing leaked, the line only alarmed."""
    config = tmp_path / "c.toml"
    config.write_text('[campaign]\nkind = "online"\n[workload]\ntrace = "synthetic:3000:64:1"\n'
                      '[online]\nresamples = 6\nweeks = 4\n')
    err = tmp_path / "stderr.txt"
    with open(err, "w") as stream:
        proc = subprocess.Popen([sys.executable, "-c", "import sys; from bftune.experiments.cli.main import main; "
                                 "sys.exit(main(sys.argv[1:]))", "campaign", str(config), "--out", str(tmp_path / "o"),
                                 "--workers", "2", "--no-progress"], stderr=stream, stdout=subprocess.DEVNULL)
        wait_until(lambda: len([p for p in descendants(proc.pid) if "spawn_main" in " ".join(command(p))]) >= 2,
                   60, "two workers")
        wait_until(lambda: any((tmp_path / "o" / "runs").glob("*.json")), 60, "a first stored run")
        family = descendants(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        wait_until(lambda: not any(alive(p) for p in family), 30, "the workers and the tracker to end")
    text = err.read_text()
    assert "leaked semaphore" not in text, text
