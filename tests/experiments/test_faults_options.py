"""Fault families 9 and 10: no option or workload field is silently ignored or mangled.

``--port 70000`` used to wrap to another port, ``--port -1`` to become 65535,
``--timeout 0|-1|nan`` to be accepted, a relative ``--batsim bin/batsim`` not
to be found (Batsim runs in its output directory), ``--synthetic 200 --procs
0`` to run on 256; JSON workloads ignored ``--walltime-from-runtime`` and
``--lenient``; a negative SWF job id became the Batsim id ``-000004``.  Each
is now refused in one line (exit status 2) or honoured.
"""

from __future__ import annotations

import argparse
import json
import os

import fake_batsim
import pytest
from bftune.experiments.runs.batsim import find_batsim
from bftune.experiments.cli.main import check_arguments, main
from bftune.schedulers.options import ConfigError
from bftune.workloads.errors import WorkloadError
from bftune.workloads.swf import _parse_fast, parse_swf

NO_WORK = ["--trace", "missing-workload.swf", "--out", "o"]


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("command", ["batsim", "compare"])
@pytest.mark.parametrize("flag, value, message", [
    ("--port", "70000", "--port: expected an integer <= 65535, got '70000'"),
    ("--port", "-1", "--port: expected an integer >= 1, got '-1'"),
    ("--port", "0", "--port: expected an integer >= 1"),
    ("--port", "http", "--port: expected an integer, got 'http'"),
    ("--timeout", "0", "--timeout: expected a positive duration"),
    ("--timeout", "-1", "--timeout: cannot read '-1'"),
    ("--timeout", "nan", "--timeout: cannot read 'nan'"),
    ("--timeout", "inf", "--timeout: an infinite duration is not allowed here"),
])
def test_launcher_values_are_checked_first(capsys, command, flag, value, message):
    assert main([command, *NO_WORK, flag, value]) == 2
    assert one_error_line(capsys).startswith(f"bftune: error: {message}")


def test_timeouts_take_units():
    args = argparse.Namespace(timeout="5m", port="8080", procs=None, seed="3")
    check_arguments(args)
    assert (args.timeout, args.port, args.seed) == (300.0, 8080, 3)


@pytest.mark.parametrize("argv, message", [
    (["simulate", "--synthetic", "200", "--procs", "0"], "--procs must be a positive integer, not 0"),
    (["simulate", "--synthetic", "20", "--out", ""], "--out: empty path"),
    (["simulate", "--synthetic", "20", "--bogus"], "unrecognized arguments: --bogus"),
    (["simulate", "--synthetic", "20", "--selector", "nope"],
     "--selector: unknown selector 'nope'; choose one of fixed, random, full, noisy, bandit, or your own"),
    (["simulate", "--synthetic", "20", "--decay", "0.5"], "--decay needs --selector"),
    (["simulate", "--synthetic", "20", "--noise", "0.1"], "--noise needs --selector"),
    (["simulate", "--synthetic", "20", "--candidates", "FCFS,SAF"], "--candidates needs --selector"),
    (["simulate", "--synthetic", "20", "--backfill", ""], "--backfill: expected a policy name"),
    (["simulate", "--synthetic", "20", "--policy", " "], "--policy: expected a policy name"),
    (["simulate", "--synthetic", "20", "--kill-after", "0"], "--kill-after: expected a positive duration"),
    (["simulate", "--synthetic", "20", "--divider-window", "inf"], "--divider-window needs --classifier"),
    (["simulate", "--synthetic", "20", "--classifier", "rf", "--learning", "decoupled", "--divider-window", "2w"],
     "--divider-window needs --learning online"),
    (["simulate", "--synthetic", "20", "--tau", "nan"], "--tau: cannot read 'nan'"),
    (["batsim", "--synthetic", "20", "--out", "o", "--batsim", "bin/no-batsim"], "batsim not found at bin/no-batsim"),
])
def test_ignored_or_mangled_options_are_errors(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert message in one_error_line(capsys)
    assert list(tmp_path.iterdir()) == []


def test_a_relative_batsim_path_is_found(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FAKE_BATSIM_PIDS", str(tmp_path / "pids"))
    monkeypatch.delenv("FAKE_BATSIM_MODE", raising=False)
    fake_batsim.write_executable(tmp_path / "bin")
    assert main(["batsim", "--synthetic", "30", "--procs", "8", "--batsim", "bin/batsim", "--out", "o",
                 "--timeout", "60"]) == 0
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["batsim"]["executable"] == str(tmp_path / "bin" / "batsim")
    assert summary["jobs"] == 30


def test_a_bare_batsim_name_is_looked_up_on_path(tmp_path, monkeypatch):
    exe = fake_batsim.write_executable(tmp_path / "bin")
    os.rename(exe, tmp_path / "bin" / "batsim-4.2")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.chdir(tmp_path)
    assert find_batsim("batsim-4.2", check_version=False) == tmp_path / "bin" / "batsim-4.2"


def batsim_json(tmp_path, jobs: list[dict]) -> str:
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"nb_res": 4, "profiles": {"d10": {"type": "delay", "delay": 10}}, "jobs": jobs}))
    return str(path)


def test_json_workloads_honour_walltime_from_runtime(tmp_path, capsys):
    jobs = [{"id": "1", "subtime": 0, "res": 2, "profile": "d10", "walltime": 50},
            {"id": "2", "subtime": 5, "res": 2, "profile": "d10"}]  # no walltime
    path = batsim_json(tmp_path, jobs)
    assert main(["simulate", "--trace", path]) == 2
    line = one_error_line(capsys)
    assert "job #1" in line and "--walltime-from-runtime" in line and "walltime_fallback" in line
    out = tmp_path / "o"
    assert main(["simulate", "--trace", path, "--walltime-from-runtime", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["jobs"] == 2 and summary["cleaning"]["walltime_from_runtime"] == 1


def test_json_workloads_honour_lenient(tmp_path, capsys):
    jobs = [{"id": "1", "subtime": 0, "res": 2, "profile": "d10", "walltime": 50},
            {"id": "2", "subtime": 5, "res": 9, "profile": "d10", "walltime": 50},  # wider than nb_res
            {"id": "x", "subtime": 6, "res": 1, "profile": "d10", "walltime": 50}]  # not a job number
    path = batsim_json(tmp_path, jobs)
    assert main(["simulate", "--trace", path]) == 2
    assert "job #1" in one_error_line(capsys)
    out = tmp_path / "o"
    assert main(["simulate", "--trace", path, "--lenient", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["jobs"] == 1 and summary["cleaning"]["malformed_job"] == 2


SWF = "; MaxProcs: 8\n{}\n"
LINE = "{id} 0 -1 10 1 -1 -1 1 20 -1 1 1 -1 -1 -1 -1 -1 -1"


def test_a_negative_swf_job_id_is_malformed(tmp_path, capsys):
    path = tmp_path / "neg.swf"
    path.write_text(SWF.format("\n".join([LINE.format(id=1), LINE.format(id=-4)])))
    assert main(["simulate", "--trace", str(path)]) == 2
    assert one_error_line(capsys) == (f"bftune: error: {path}:3: field 1 (job id): '-4' is negative; "
                                      "job numbers count from 1")
    out = tmp_path / "o"
    assert main(["convert", "--trace", str(path), "--lenient", "--out", str(out)]) == 0
    ids = [job["id"] for job in json.loads((out / "neg.json").read_text())["jobs"]]
    assert ids == ["0000001"]  # not "-000004"


def test_the_fast_swf_path_leaves_negative_ids_to_the_careful_one():
    text = SWF.format(LINE.format(id=-4))
    assert _parse_fast([text.encode()], "t.swf", None, None, "t") is None  # the fast path reads bytes
    with pytest.raises(WorkloadError, match="t.swf:2: field 1"):
        parse_swf(text, source="t.swf")


def test_pybatsim_options_share_the_checks():
    from bftune.schedulers.config import SchedulerConfig

    with pytest.raises(ConfigError, match="seed: expected an integer >= 0"):
        SchedulerConfig.from_options({"seed": -1})
