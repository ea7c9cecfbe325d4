"""The bftune command line, run as a user would (a real subprocess for the entry point)."""

from __future__ import annotations

import argparse
import json
import subprocess

import pytest
from bftune.experiments.cli.main import main
from locations import KTH, SHARED
REQUIRED_SUMMARY_KEYS = {"jobs", "avg_wait", "max_wait", "avg_bsld", "mwbs", "utilization", "tau", "cleaning", "config"}

SWF_HEADER = "; Version: 2.2\n; MaxProcs: 8\n; UnixStartTime: 0\n"


def swf_line(i, submit, runtime, procs, walltime, user=1):
    f = [i, submit, -1, runtime, procs, -1, -1, procs, walltime, -1, 1, user, -1, -1, -1, -1, -1, -1]
    return " ".join(str(x) for x in f)


@pytest.fixture
def small_swf(tmp_path):
    lines = [swf_line(1, 0, 100, 4, 200), swf_line(2, 0, 50, 8, 100), swf_line(3, 10, 20, 2, 30),
             swf_line(4, 10, 0, 2, 30), swf_line(5, 20, 40, 16, 60)]
    p = tmp_path / "small.swf"
    p.write_text(SWF_HEADER + "\n".join(lines) + "\n")
    return p


def test_entry_point_is_installed_and_prints_help():
    out = subprocess.run(["bftune", "--help"], capture_output=True, text=True)
    assert out.returncode == 0
    for cmd in ("demo", "simulate", "convert", "resample", "download", "policies", "batsim", "compare"):
        assert cmd in out.stdout


def test_simulate_writes_out_jobs_and_summary(small_swf, tmp_path, capsys):
    out = tmp_path / "res"
    assert main(["simulate", "--trace", str(small_swf), "--primary", "SAF", "--backfill", "SPF",
                 "--threshold", "40h", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert REQUIRED_SUMMARY_KEYS <= set(summary)
    assert summary["jobs"] == 3
    assert summary["cleaning"]["runtime_le_0"] == 1 and summary["cleaning"]["procs_gt_machine"] == 1
    assert summary["config"]["policy"] == "SAF" and summary["config"]["backfill_policy"] == "SPF"
    assert summary["config"]["threshold"] == "40h"
    rows = (out / "out_jobs.csv").read_text().splitlines()
    assert rows[0].startswith("job_id,workload_name,profile,submission_time")
    assert len(rows) == 4
    printed = capsys.readouterr().out
    assert "AvgWait" in printed and "summary.json" in printed


def test_policy_and_tau_options(small_swf, tmp_path):
    out = tmp_path / "r"
    assert main(["simulate", "--trace", str(small_swf), "--policy", "lcfs", "--tau", "60", "--out", str(out)]) == 0
    s = json.loads((out / "summary.json").read_text())
    assert s["config"]["policy"] == "LCFS" and s["config"]["algorithm"] == "EASY(LCFS)"
    assert s["tau"] == 60


def test_synthetic_workload_and_reservation_models(tmp_path):
    for model in ("count", "machines"):
        out = tmp_path / model
        assert main(["simulate", "--synthetic", "300", "--procs", "32", "--seed", "4", "--reservation", model,
                     "--out", str(out)]) == 0
        s = json.loads((out / "summary.json").read_text())
        assert s["jobs"] == 300 and s["config"]["reservation"] == model


@pytest.mark.parametrize("argv, message", [
    (["simulate", "--trace", "missing.swf"], "missing.swf"),
    (["simulate", "--synthetic", "10", "--policy", "NOPE"], "unknown policy 'NOPE'"),
    (["simulate", "--synthetic", "10", "--threshold", "4x"], "threshold"),
    (["simulate", "--synthetic", "10", "--tau", "-3"], "tau"),
    (["simulate"], "--trace FILE or --synthetic N"),
    (["simulate", "--synthetic", "0"], "positive"),
    # One option table: an option that would be ignored is an error naming the flags.
    (["simulate", "--synthetic", "10", "--epsilon", "0.3"], "--epsilon needs --selector"),
    (["simulate", "--synthetic", "10", "--period", "1d"], "--period needs --selector"),
    (["simulate", "--synthetic", "10", "--features", "live"], "--features needs --classifier"),
    (["simulate", "--synthetic", "10", "--no-safeguard"], "--no-safeguard needs --classifier"),
    (["simulate", "--synthetic", "10", "--no-backfilling", "--backfill", "SPF"], "--backfill needs backfilling"),
    (["simulate", "--synthetic", "10", "--no-backfilling", "--reservation", "machines"],
     "--reservation needs backfilling"),
    (["simulate", "--synthetic", "10", "--policy", ""], "--policy: expected a policy name"),
    (["simulate", "--synthetic", "10", "--selector", "bandit", "--epsilon", "2"], "--epsilon: expected a number in"),
    (["simulate", "--synthetic", "10", "--seed", "-1"], "--seed: expected an integer >= 0"),
    (["simulate", "--synthetic", "10", "--policy", "SAF", "--primary", "SPF"], "given twice"),
])
def test_bad_input_is_one_clear_line(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("bftune: error:") and message in err
    assert "Traceback" not in err


def test_malformed_swf_names_file_and_line(tmp_path, capsys):
    p = tmp_path / "bad.swf"
    p.write_text(SWF_HEADER + swf_line(1, 0, 10, 1, 20) + "\n1 2 3\n")
    assert main(["simulate", "--trace", str(p)]) == 2
    assert f"{p}:5" in capsys.readouterr().err
    assert main(["simulate", "--trace", str(p), "--lenient", "--out", str(tmp_path / "o")]) == 0
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert s["cleaning"]["malformed_line"] == 1


def test_policies_lists_every_spec_policy(capsys):
    assert main(["policies"]) == 0
    out = capsys.readouterr().out
    for name in ("FCFS", "LCFS", "SPF", "LPF", "SQF", "LQF", "LEXP", "SEXP", "LRF", "SRF", "LAF", "SAF",
                 "WFP3", "UNICEF", "F1", "F2", "F3", "F4"):
        assert f"  {name} " in out
    assert "log2(max(q,2))" in out


def test_convert_writes_workload_and_platform(small_swf, tmp_path):
    out = tmp_path / "conv"
    assert main(["convert", "--trace", str(small_swf), "--out", str(out)]) == 0
    wl = json.loads((out / "small.json").read_text())
    assert wl["nb_res"] == 8 and [j["id"] for j in wl["jobs"]] == ["0000001", "0000002", "0000003"]
    assert wl["jobs"][0]["user"] == 1 and wl["profiles"]["d100"] == {"type": "delay", "delay": 100}
    assert (out / "platform_8.xml").read_text().count("<host ") >= 9


@pytest.mark.skipif(not KTH.exists(), reason=f"archive trace not found at {KTH}")
def test_resample_and_split(tmp_path):
    out = tmp_path / "rs.swf"
    assert main(["resample", "--trace", str(KTH), "--weeks", "3", "--seed", "2", "--out", str(out)]) == 0
    again = tmp_path / "rs2.swf"
    assert main(["resample", "--trace", str(KTH), "--weeks", "3", "--seed", "2", "--out", str(again)]) == 0
    assert out.read_bytes() == again.read_bytes()
    test_half = tmp_path / "test.swf"
    assert main(["resample", "--trace", str(KTH), "--weeks", "2", "--split", "test", "--out", str(test_half)]) == 0
    assert test_half.read_text().count("\n") > 10


@pytest.mark.skipif(not KTH.exists(), reason=f"archive trace not found at {KTH}")
def test_resample_says_what_the_cleaning_dropped(tmp_path, capsys):
    """As convert does, on screen; and in the file's header, where the resampled trace's provenance is."""
    out = tmp_path / "rs.swf"
    assert main(["resample", "--trace", str(KTH), "--weeks", "2", "--out", str(out)]) == 0
    counts = "missing_procs=1, runtime_le_0=8, walltime_lt_runtime=475"  # the README's KTH-SP2 figures
    assert f"cleaning: {counts}" in capsys.readouterr().out.splitlines()
    notes = [line for line in out.read_text().splitlines() if line.startswith("; Note:")]
    assert notes[-1] == f"; Note: KTH-SP2-1996-2.1-cln was cleaned (drop-overruns) before resampling: {counts}"


def test_demo_runs_on_the_embedded_workload(capsys):
    assert main(["demo", "--jobs", "400", "--procs", "32"]) == 0
    out = capsys.readouterr().out
    assert "EASY-FCFS" in out and "EASY-SAF + 40h threshold" in out and "AVGbsld" in out


@pytest.mark.slow
@pytest.mark.skipif(not KTH.exists(), reason=f"archive trace not found at {KTH}")
def test_simulate_the_issue_example_on_kth(tmp_path, capsys):
    out = tmp_path / "kth-saf"
    assert main(["simulate", "--trace", str(KTH), "--primary", "SAF", "--backfill", "SPF", "--threshold", "40h",
                 "--out", str(out)]) == 0
    s = json.loads((out / "summary.json").read_text())
    assert s["jobs"] == 27992
    assert s["cleaning"]["walltime_lt_runtime"] == 475
    assert s["config"]["algorithm"] == "EASY(SAF+threshold(40h), SPF+threshold(40h))"


@pytest.mark.slow
def test_batsim_json_workload_with_a_smaller_machine_drops_and_counts_wide_jobs(tmp_path):
    wl = SHARED / "batsim" / "workloads" / "kth_sp2.json"
    if not wl.exists():
        pytest.skip(f"{wl} is not available (the ../shared checkout is missing)")
    out = tmp_path / "o"
    assert main(["simulate", "--trace", str(wl), "--procs", "16", "--out", str(out)]) == 0
    s = json.loads((out / "summary.json").read_text())
    wide = sum(1 for j in json.loads(wl.read_text())["jobs"] if j["res"] > 16)
    assert wide > 2000
    assert s["cleaning"]["procs_gt_machine"] == wide and s["jobs"] == 27992 - wide


def test_simulate_with_a_named_cleaning(tmp_path):
    swf = tmp_path / "t.swf"
    swf.write_text("; MaxProcs: 4\n"
                   "1 0 -1 10 2 -1 -1 2 100 -1 1 1 1 -1 -1 -1 -1 -1\n"
                   "2 5 -1 50 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1\n")  # runtime 50 > requested 20
    out = tmp_path / "o"
    assert main(["simulate", "--trace", str(swf), "--cleaning", "batsim-converter", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["cleaning"]["walltime_raised"] == 1 and summary["workload"]["jobs"] == 2
    assert main(["simulate", "--trace", str(swf), "--out", str(tmp_path / "s")]) == 0
    assert json.loads((tmp_path / "s" / "summary.json").read_text())["cleaning"]["walltime_lt_runtime"] == 1


def test_preset_sets_cleaning_classifier_options_and_tau_unless_given(tmp_path):
    swf = tmp_path / "t.swf"
    swf.write_text("; MaxProcs: 4\n; UnixStartTime: 0\n" + "".join(
        f"{i} {600 * i} -1 {30 + 50 * (i % 9)} 1 -1 -1 1 {20 if i % 5 == 0 else 4000} -1 1 {i % 3} 1 -1 -1 -1 -1 -1\n"
        for i in range(1, 400)))  # every fifth job overruns its 20 s request
    out = tmp_path / "a"
    assert main(["simulate", "--trace", str(swf), "--preset", "study004", "--classifier", "rf", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["cleaning"]["walltime_raised"] > 0 and summary["workload"]["jobs"] == 399
    assert summary["config"]["features"] == "live" and summary["config"]["learning"] == "online"
    assert summary["config"]["divider_window"] == "inf"
    assert summary["tau"] == 60
    # explicit flags win; without --classifier the preset's classifier options are left out
    out = tmp_path / "b"
    assert main(["simulate", "--trace", str(swf), "--preset", "study004", "--cleaning", "spec", "--tau", "10",
                 "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["cleaning"]["walltime_lt_runtime"] == 79 and "features" not in summary["config"]
    assert summary["tau"] == 10
    assert main(["simulate", "--trace", str(swf), "--preset", "study004-text", "--classifier", "rf",
                 "--out", str(tmp_path / "c")]) == 0
    assert json.loads((tmp_path / "c" / "summary.json").read_text())["config"]["learning"] == "decoupled"
    # the divider over every finished job (the ablation of study 004's Table 2 divider)
    assert main(["simulate", "--trace", str(swf), "--preset", "study004", "--classifier", "class-clairvoyant",
                 "--divider-window", "inf", "--out", str(tmp_path / "d")]) == 0
    config = json.loads((tmp_path / "d" / "summary.json").read_text())["config"]
    assert config["divider_window"] == "inf" and config["classifier"] == "class-clairvoyant"


@pytest.mark.slow
def test_pv_easy_and_predictors_on_the_command_line(tmp_path):
    """As a user types it: PV-EASY with Last Model, its metrics in summary.json, bad input as one line."""
    swf = tmp_path / "w.swf"
    lines = [swf_line(1, 0, 10, 8, 100, user=1), swf_line(2, 20, 100, 5, 100, user=2),
             swf_line(3, 21, 50, 8, 50, user=3), swf_line(4, 22, 200, 3, 900, user=1)]
    swf.write_text(SWF_HEADER + "\n".join(lines) + "\n")
    out = tmp_path / "pv"
    proc = subprocess.run(["bftune", "simulate", "--trace", str(swf), "--scheduler", "pv-easy", "--predictor", "last",
                           "--policy", "FCFS", "--fairness", "--out", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "PV-EASY(FCFS) predictor=last" in proc.stdout and "killed runs           1" in proc.stdout
    s = json.loads((out / "summary.json").read_text())
    assert s["config"]["scheduler"] == "pv-easy" and s["config"]["predictor"] == "last"
    assert s["killed_runs"] == 1 and s["preempted_share"] == 0.25 and s["wasted_load"] > 0
    assert s["fairness"]["reservation_violations"] == 0 and s["fairness"]["strict_fairness_violations"] == 0
    assert s["predictor"]["from_history"] >= 1 and "fairness_jobs" not in s
    for argv, message in (
        (["--predictor", "virtual:1.5"], "--predictor: virtual:X needs X in [0, 1)"),
        (["--predictor", "bogus"], "--predictor: unknown predictor 'bogus'"),
        (["--scheduler", "pv-easy", "--backfill", "SPF"], "--backfill needs --scheduler easy"),
        (["--predictor", "last", "--no-backfilling"], "--predictor needs backfilling"),
    ):
        proc = subprocess.run(["bftune", "simulate", "--trace", str(swf), *argv], capture_output=True, text=True)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert proc.stderr.strip() == f"bftune: error: {message}" or message in proc.stderr, proc.stderr


def test_last_model_without_user_ids_falls_back_to_walltimes_and_says_so(tmp_path):
    swf = tmp_path / "nouser.swf"
    swf.write_text(SWF_HEADER + "\n".join(swf_line(i, i, 10, 2, 100, user=-1) for i in range(1, 6)) + "\n")
    out = tmp_path / "o"
    assert main(["simulate", "--trace", str(swf), "--predictor", "last", "--out", str(out)]) == 0
    predictor = json.loads((out / "summary.json").read_text())["predictor"]
    assert predictor["no_user_id"] == 5 and predictor["from_history"] == 0
    assert "no user ids" in predictor["note"]


def test_every_command_is_one_module_of_the_cli_folder_named_after_it():
    from bftune.experiments.cli import main as cli_main

    sub = next(a for a in cli_main.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    modules = {command.__name__.rsplit(".", 1)[1].replace("_", "-"): command for command in cli_main.COMMANDS}
    assert list(sub.choices) == list(modules)  # one module per command, in the order of the help
    for name, parser in sub.choices.items():
        func = parser.get_default("func")
        home = func.__module__.rsplit(".", 1)[1]
        # the command runs code of its own module, or of the shared helpers (batsim/compare: common's lazy runner)
        assert home in (name.replace("-", "_"), "common"), (name, func.__module__)
