"""Fault family 7: outputs are replaced as a set; a failed or killed run leaves the old set whole.

``bftune simulate`` is killed (SIGKILL) at moments spread over its run while
an older result is in place: every time, the directory holds the old pair
(out_jobs.csv, summary.json) or the new pair, never a mix.  ``bftune batsim``
and ``bftune compare`` that fail or are killed leave the old result (no
partial out_jobs.csv under its name; the failed attempt is in DIR.failed).
Temporaries of killed runs are removed by the next run.
"""

from __future__ import annotations

import shutil

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import fake_batsim
import pytest
from bftune.experiments.cli import demo as cli
from bftune.experiments.cli.main import main
from bftune.support.files import MARKER
from locations import KTH
from processes import LINUX, interruptible, wait_until

BFTUNE = [sys.executable, "-m", "bftune.experiments.cli.main"]
PAIR = ("out_jobs.csv", "summary.json")


def bftune(*argv: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([*BFTUNE, *argv], capture_output=True, text=True, env=env, timeout=timeout)


def result(out: Path) -> tuple[str, bytes] | None:
    """(workload name in summary.json, out_jobs.csv bytes), or None when absent; a mix fails."""
    names = sorted(p.name for p in out.iterdir()) if out.exists() else []
    if not names:
        return None
    assert names == sorted([MARKER, *PAIR]), names
    summary = json.loads((out / "summary.json").read_text())
    table = (out / "out_jobs.csv").read_bytes()
    assert summary["jobs"] == table.count(b"\n") - 1  # the two files belong together
    return summary["workload"]["name"], table


def leftovers(directory: Path) -> list[str]:
    return [name for name in os.listdir(directory) if name.startswith(".")]


@pytest.mark.slow
@pytest.mark.skipif(not LINUX, reason="reads processes from /proc (Linux)")
def test_simulate_killed_at_any_moment_leaves_old_or_new(tmp_path):
    sim = ["simulate", "--synthetic", "1500", "--procs", "64", "--policy", "SAF"]
    out = tmp_path / "runs" / "out"
    assert bftune(*sim, "--seed", "1", "--out", str(out)).returncode == 0
    t0 = time.monotonic()
    assert bftune(*sim, "--seed", "2", "--out", str(tmp_path / "new")).returncode == 0
    duration = time.monotonic() - t0
    old, new = result(out), result(tmp_path / "new")
    assert old != new
    outcomes = []
    for fraction in (0.4, 0.7, 0.9, 1.05):
        proc = subprocess.Popen([*BFTUNE, *sim, "--seed", "2", "--out", str(out)], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        try:
            proc.wait(fraction * duration)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.wait(60)
        now = result(out)
        assert now in (old, new), "the directory mixes two runs"
        outcomes.append("new" if now == new else "old")
        if now == new:  # go back to the old set for the next try
            assert bftune(*sim, "--seed", "1", "--out", str(out)).returncode == 0
    assert "old" in outcomes  # at least one kill landed in the middle of a run
    # A run to its end replaces the old set and removes what killed runs left behind.
    assert bftune(*sim, "--seed", "2", "--out", str(out)).returncode == 0
    assert result(out) == new
    assert leftovers(out.parent) == []


@pytest.fixture
def fake(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_BATSIM_PIDS", str(tmp_path / "pids"))
    monkeypatch.delenv("FAKE_BATSIM_MODE", raising=False)
    return fake_batsim.write_executable(tmp_path / "bin")


@pytest.mark.slow
@pytest.mark.parametrize("command_name", ["batsim", "compare"])
def test_a_failed_batsim_run_keeps_the_old_result(tmp_path, fake, monkeypatch, capsys, command_name):
    out = tmp_path / "out"
    argv = [command_name, "--synthetic", "40", "--procs", "8", "--batsim", str(fake), "--out", str(out),
            "--timeout", "60"]
    assert main(argv) == 0
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    monkeypatch.setenv("FAKE_BATSIM_MODE", "die")
    assert main(argv) == 1
    err = capsys.readouterr().err
    failed = tmp_path / "out.failed"
    log = failed / "batsim.log" if command_name == "batsim" else failed / "batsim" / "batsim.log"
    assert str(log) in err and "crashing on purpose" in log.read_text()  # the message names where it is
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before
    monkeypatch.delenv("FAKE_BATSIM_MODE")
    assert main(argv) == 0
    assert not failed.exists()  # a success drops the failed attempt


@pytest.mark.slow
@pytest.mark.skipif(not LINUX, reason="reads processes from /proc (Linux)")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
def test_a_killed_batsim_run_keeps_the_old_result_and_its_leftovers_go(tmp_path, fake, signum):
    out = tmp_path / "out"
    argv = ["batsim", "--synthetic", "40", "--procs", "8", "--batsim", str(fake), "--out", str(out), "--timeout", "5m"]
    assert bftune(*argv).returncode == 0
    old = result_without_timing(out)
    env = dict(os.environ, FAKE_BATSIM_MODE="stall", FAKE_BATSIM_PIDS=str(tmp_path / "pids"))
    (tmp_path / "pids").unlink()
    proc = subprocess.Popen([*BFTUNE, *argv], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            preexec_fn=interruptible)
    try:
        wait_until(lambda: (tmp_path / "pids").exists() and (tmp_path / "pids").read_text().strip(), 120,
                   "the stand-in Batsim did not start")
        proc.send_signal(signum)
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert result_without_timing(out) == old  # not a 0-byte out_jobs.csv: the old one
    if signum == signal.SIGKILL:
        assert [n for n in leftovers(tmp_path) if n.startswith(".out.part-")]  # a dead run's staging directory
    assert bftune(*argv).returncode == 0
    assert leftovers(tmp_path) == []


def result_without_timing(out: Path) -> tuple:
    summary = json.loads((out / "summary.json").read_text())
    return (out / "out_jobs.csv").read_bytes(), summary["jobs"], summary["avg_wait"]


def test_convert_writes_the_workload_only_with_its_platform(tmp_path, monkeypatch, capsys):
    from bftune.platforms import generator

    def out_of_memory(m, **kwargs):
        raise MemoryError("platform of a billion hosts")

    monkeypatch.setattr(generator, "platform_xml", out_of_memory)
    with pytest.raises(MemoryError):
        main(["convert", "--synthetic", "30", "--procs", "8", "--out", str(tmp_path / "c")])
    assert not (tmp_path / "c").exists() or os.listdir(tmp_path / "c") == []


def test_demo_variants_are_replaced_together(tmp_path, monkeypatch, capsys):
    out = tmp_path / "demo"
    assert main(["demo", "--jobs", "60", "--procs", "16", "--out", str(out)]) == 0
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*.csv")}
    assert len(before) == len(cli.DEMO_VARIANTS)
    real = cli.SchedulerConfig.from_options
    calls = []

    def fail_third(options, *args, **kwargs):
        calls.append(options)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(options, *args, **kwargs)

    monkeypatch.setattr(cli.SchedulerConfig, "from_options", fail_third)
    assert main(["demo", "--jobs", "60", "--procs", "16", "--seed", "2", "--out", str(out)]) == 130
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*.csv")} == before
    assert leftovers(tmp_path) == []


@pytest.mark.skipif(not KTH.exists(), reason=f"{KTH} is not available (the ../shared checkout is missing)")
def test_temporaries_of_killed_runs_are_removed_by_the_next_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    dead = {
        ".sim.part-k1ll3d00": "dir",  # simulate's staging directory
        ".w.swf.a1b2c3d4.tmp": "file",  # resample's output
        ".platform_8.xml.e5f6g7h8.tmp": "file",  # convert's platform
        f".{KTH.name}.i9j0k1l2.part": "file",  # a download
    }
    (tmp_path / "conv").mkdir()
    (tmp_path / "traces").mkdir()
    where = {".platform_8.xml.e5f6g7h8.tmp": tmp_path / "conv", f".{KTH.name}.i9j0k1l2.part": tmp_path / "traces"}
    for name, kind in dead.items():
        path = where.get(name, tmp_path) / name
        path.mkdir() if kind == "dir" else path.write_text("half")
    # The archive trace is linked, not copied: download finds it with its checksum and stays offline.
    (tmp_path / "traces" / KTH.name).symlink_to(KTH)
    assert main(["simulate", "--synthetic", "30", "--procs", "8", "--out", "sim"]) == 0
    assert main(["resample", "--synthetic", "3000", "--procs", "8", "--weeks", "1", "--out", "w.swf"]) == 0
    assert main(["convert", "--synthetic", "30", "--procs", "8", "--out", "conv"]) == 0
    assert main(["download", "KTH-SP2", "--dest", "traces"]) == 0
    for directory in (tmp_path, tmp_path / "conv", tmp_path / "traces"):
        assert leftovers(directory) == [], directory


@pytest.mark.slow
def test_simulate_over_a_campaign_that_once_held_a_simulate_result_refuses_and_keeps_every_run(tmp_path, capsys):
    out = tmp_path / "D"
    assert main(["simulate", "--synthetic", "200", "--out", str(out)]) == 0
    # today a campaign refuses a directory that holds another command's result...
    assert main(["campaign", "tiny_synthetic_offline", "--out", str(out), "--workers", "1", "--no-progress"]) == 2
    assert "and no campaign.json: not a campaign directory" in capsys.readouterr().err
    # ...but an earlier bftune wrote one there: its stored runs beside the simulate result and its marker
    elsewhere = tmp_path / "C"
    assert main(["campaign", "tiny_synthetic_offline", "--out", str(elsewhere), "--workers", "1",
                 "--no-progress"]) == 0
    shutil.copytree(elsewhere, out, dirs_exist_ok=True)
    runs = sorted((out / "runs").glob("*.json"))
    assert len(runs) == 16
    capsys.readouterr()
    assert main(["simulate", "--synthetic", "300", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not part of an earlier result of this command" in err
    assert sorted((out / "runs").glob("*.json")) == runs and (out / "campaign.json").is_file()
    # the same for demo, whose result is a set of directories
    assert main(["demo", "--jobs", "200", "--procs", "16", "--out", str(out)]) == 2
    assert sorted((out / "runs").glob("*.json")) == runs


@pytest.mark.slow
def test_campaign_and_tune_write_only_into_a_new_empty_or_their_own_directory(tmp_path, capsys):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "report.md").write_text("my own notes")
    assert main(["campaign", "tiny_synthetic_offline", "--out", str(mine), "--workers", "1", "--no-progress"]) == 2
    assert "holds 'report.md' and no campaign.json" in capsys.readouterr().err
    assert main(["tune", "--synthetic", "2000", "--procs", "32", "--budget", "10s", "--holdout", "0", "--out", str(mine)]) == 2
    assert "holds 'report.md' and no tune.json" in capsys.readouterr().err
    assert sorted(p.name for p in mine.iterdir()) == ["report.md"] and (mine / "report.md").read_text() == "my own notes"
    # the runs of shards, copied into a new directory to be merged, are the campaign's own: accepted
    parts = tmp_path / "parts"
    assert main(["campaign", "tiny_synthetic_offline", "--out", str(parts), "--workers", "1", "--no-progress"]) == 0
    merged = tmp_path / "merged"
    shutil.copytree(parts / "runs", merged / "runs")
    capsys.readouterr()
    assert main(["campaign", "tiny_synthetic_offline", "--out", str(merged), "--workers", "1", "--no-progress"]) == 0
    assert "0 runs done, 16 reused" in capsys.readouterr().out


def _log(tmp_path):
    """A small log with logged waits, for replay."""
    import dataclasses

    from bftune.workloads.swf_write import write_swf
    from bftune.workloads.synthetic import generate

    path = tmp_path / "log.swf"
    trace = generate(200, 16, seed=1)
    write_swf(trace.with_jobs([dataclasses.replace(j, wait=60.0) for j in trace.jobs]), path)
    return str(path)


def test_a_result_is_replaced_only_by_the_command_that_wrote_it(tmp_path, capsys):
    """Issue 42, item 1: a directory is replaced only when it holds one result of the same command (its
    marker records which); a simulate result was replaced by any other command's."""
    log = _log(tmp_path)
    commands = {"simulate": ["simulate", "--synthetic", "100", "--procs", "16"],
                "replay": ["replay", "--trace", log],
                "demo": ["demo", "--jobs", "60", "--procs", "16"]}
    for first, second in [(a, b) for a in commands for b in commands]:
        out = tmp_path / f"{first}-then-{second}"
        assert main([*commands[first], "--out", str(out)]) == 0
        before = sorted(p.name for p in out.iterdir())
        capsys.readouterr()
        code = main([*commands[second], "--out", str(out)])
        if first == second:
            assert code == 0, (first, second)
        else:
            assert code == 2, (first, second)
            assert "which is not part of an earlier result of this command" in capsys.readouterr().err
            assert sorted(p.name for p in out.iterdir()) == before


def test_a_marker_written_before_kinds_keeps_its_old_meaning(tmp_path):
    out = tmp_path / "old"
    assert main(["simulate", "--synthetic", "100", "--out", str(out)]) == 0
    marker = out / ".bftune-result"
    marker.write_text("\n".join(line for line in marker.read_text().splitlines() if not line.startswith("#kind")))
    assert main(["simulate", "--synthetic", "120", "--out", str(out)]) == 0
    assert "#kind out_jobs.csv,summary.json" in marker.read_text()
