"""Fault family 3: a bad output path is one line naming it, exit status 2, before any work.

Every command that writes is tried with every kind of bad destination: an
existing file where a directory must go (and the reverse), a path under a
file, an empty path, a directory holding someone else's files, a place
nobody can write.  The workload given is missing (or its generator
explodes): if the error names the output and not the workload, the output
was checked first - ``simulate`` no longer fails only after simulating.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from bftune.experiments.cli.main import main
from bftune.workloads import synthetic

MISSING = ["--trace", "missing-workload.swf"]
#: command line before the destination, the destination flag, whether it names a result directory
DIRECTORY_COMMANDS = {
    "simulate": (["simulate", *MISSING], "--out", True),
    "batsim": (["batsim", *MISSING, "--batsim", "no-batsim-here"], "--out", True),
    "compare": (["compare", *MISSING, "--batsim", "no-batsim-here"], "--out", True),
    "demo": (["demo"], "--out", True),
    "replay": (["replay", *MISSING], "--out", True),
    "convert": (["convert", *MISSING], "--out", False),
    "download": (["download", "KTH-SP2"], "--dest", False),
}


@pytest.fixture
def places(tmp_path, monkeypatch):
    """Bad destinations, by kind; the generator must not run (demo would otherwise start working)."""

    def explode(*args, **kwargs):
        raise AssertionError("work started before the destination was checked")

    monkeypatch.setattr(synthetic, "generate", explode)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a-file").write_text("not a directory")
    (tmp_path / "a-dir").mkdir()
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "thesis.tex").write_text("years of work")
    return {
        "file": ("a-file", "exists and is not a directory"),
        "under a file": ("a-file/sub", "a-file is not a directory"),
        "empty": ("", "empty path"),
        "nowhere writable": ("/proc/bftune-nowhere/out", "cannot write in /proc"),
        "someone's directory": ("home", "holds 'thesis.tex', which is not part of an earlier result"),
    }


def one_error_line(capsys) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bftune: error: "), captured.err
    return lines[0]


@pytest.mark.parametrize("kind", ["file", "under a file", "empty", "nowhere writable", "someone's directory"])
@pytest.mark.parametrize("name", list(DIRECTORY_COMMANDS))
def test_directory_destinations(places, capsys, name, kind):
    argv, flag, result = DIRECTORY_COMMANDS[name]
    path, message = places[kind]
    if kind == "someone's directory" and not result:
        pytest.skip("convert and download add files to a directory: other files there are fine")
    if kind == "nowhere writable" and not os.path.isdir("/proc"):
        pytest.skip("no /proc")
    assert main([*argv, flag, path]) == 2
    line = one_error_line(capsys)
    assert line.startswith(f"bftune: error: {flag}") and message in line
    assert "missing-workload" not in line


@pytest.mark.parametrize("kind, path, message", [
    ("directory", "a-dir", "is a directory"),
    ("under a file", "a-file/new.swf", "a-file is not a directory"),
    ("empty", "", "empty path"),
])
def test_file_destination_of_resample(places, capsys, kind, path, message):
    assert main(["resample", *MISSING, "--weeks", "2", "--out", path]) == 2
    line = one_error_line(capsys)
    assert line.startswith("bftune: error: --out") and message in line


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes in read-only directories")
def test_read_only_directory(places, capsys, tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        assert main(["simulate", *MISSING, "--out", str(ro / "out")]) == 2
        assert "cannot write in" in one_error_line(capsys)
    finally:
        ro.chmod(0o700)


#: Every command that writes, with what it needs besides its destination (the work never starts).
EMPTY_DESTINATION = {
    **{name: (argv, flag) for name, (argv, flag, _) in DIRECTORY_COMMANDS.items()},
    "resample": (["resample", *MISSING, "--weeks", "2"], "--out"),
    "campaign": (["campaign", "missing-config.toml"], "--out"),
    "learn-index": (["learn-index", "--source", "synthetic", "--windows", "1", "--trials", "2"], "--out"),
    "reproduce": (["reproduce", "000"], "--out"),
    "tune": (["tune", *MISSING], "--out"),
    "plot": (["plot", "missing-run"], "--out"),
}


@pytest.mark.parametrize("name", list(EMPTY_DESTINATION))
def test_an_empty_destination_is_refused_by_every_command(places, capsys, tmp_path, name):
    """One check for every command (``--out ''`` wrote into the current directory for reproduce and learn-index)."""
    argv, flag = EMPTY_DESTINATION[name]
    before = sorted(os.listdir(tmp_path))
    assert main([*argv, flag, ""]) == 2
    line = one_error_line(capsys)
    assert line == f"bftune: error: {flag}: empty path; name a directory or file to write"
    assert sorted(os.listdir(tmp_path)) == before


def test_every_command_with_a_destination_is_in_the_list():
    """A new command that writes is checked by the test above as soon as it exists."""
    from bftune.experiments.cli.main import build_parser

    commands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    writing = {name for name, parser in commands.items()
               if {"--out", "--dest"} & set(parser._option_string_actions)}
    assert writing == set(EMPTY_DESTINATION)


def test_a_destination_name_of_255_characters(tmp_path, monkeypatch):
    """The longest name a file system takes: its temporaries (.NAME.part-XXXXXXXX...) get a shortened stem."""
    monkeypatch.chdir(tmp_path)
    name = "r" * 255
    for _ in range(2):  # written, then replaced
        assert main(["simulate", "--synthetic", "60", "--procs", "8", "--out", name]) == 0
    assert (tmp_path / name / "out_jobs.csv").is_file()
    assert main(["resample", "--synthetic", "800", "--procs", "8", "--weeks", "1", "--out", "s" * 251 + ".swf"]) == 0
    assert sorted(os.listdir(tmp_path)) == sorted([name, "s" * 251 + ".swf"])  # no temporary left


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("argv", [["policies"], ["options"], ["options", "--markdown"], ["--help"], ["--version"],
                                  ["simulate", "--help"]])
def test_a_full_standard_output(argv, tmp_path):
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "bftune.experiments.cli.main", *argv], stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == ["bftune: error: standard output: No space left on device"]

