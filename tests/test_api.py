"""The Python API (``import bftune``): the same options, checks and outputs as the command line."""

from __future__ import annotations

import ast
import dataclasses
import doctest
import inspect
import json
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import bftune
import pandas as pd
import pytest
from bftune import api
from bftune.experiments.cli.main import main
from bftune.workloads.model import JobRecord
from locations import REPO

SMALL = dict(jobs=600, procs=64, seed=3)


def test_the_examples_of_the_api_docstring_run():
    assert doctest.testmod(api, optionflags=doctest.ELLIPSIS, raise_on_error=False).failed == 0


def test_the_namespace_is_curated_and_lazy():
    assert sorted(bftune.__all__) == sorted(api.__all__)
    for name in bftune.__all__:
        assert getattr(bftune, name) is getattr(api, name)
    with pytest.raises(AttributeError, match="no attribute 'simulat'"):
        bftune.simulat  # noqa: B018
    # the command line imports the package at every start: the API (pandas) is imported only when used
    code = "import sys, bftune; print('bftune.api' in sys.modules, 'pandas' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          cwd=REPO.parent).stdout.split() == ["False", "False"]


def test_simulate_equals_the_command_line(tmp_path):
    trace = bftune.synthetic(**SMALL)
    result = bftune.simulate(trace, policy="SAF", backfill_policy="SPF", threshold="2h", seed=3)
    assert main(["simulate", "--synthetic", "600", "--procs", "64", "--seed", "3", "--policy", "SAF", "--backfill",
                 "SPF", "--threshold", "2h", "--out", str(tmp_path / "cli")]) == 0
    written = result.write(tmp_path / "api")
    assert (written / "out_jobs.csv").read_bytes() == (tmp_path / "cli" / "out_jobs.csv").read_bytes()
    cli = json.loads((tmp_path / "cli" / "summary.json").read_text())
    ours = json.loads((written / "summary.json").read_text())
    for key in ("jobs", "avg_wait", "max_wait", "avg_bsld", "utilization", "config"):
        assert ours[key] == cli[key], key
    assert len(result.jobs) == 600 and result.jobs["waiting_time"].mean() == pytest.approx(result.summary["avg_wait"])
    assert result.periods is None


def test_a_selector_logs_its_periods_and_bad_options_fail_as_on_the_command_line():
    trace = bftune.synthetic(**SMALL)
    result = bftune.simulate(trace, selector="full", period="1d", candidates="FCFS,SPF")
    assert list(result.periods.columns[:3]) == ["period", "start", "policy"]
    assert set(result.periods["policy"]) <= {"FCFS", "SPF"}
    with pytest.raises(bftune.ConfigError, match="^epsilon needs selector$"):
        bftune.simulate(trace, epsilon=0.2)
    with pytest.raises(bftune.ConfigError, match="unknown option"):
        bftune.simulate(trace, polcy="SAF")


def test_read_workload_and_policies(tmp_path):
    assert main(["convert", "--synthetic", "300", "--procs", "32", "--out", str(tmp_path)]) == 0
    path = next(tmp_path.glob("*.json"))
    trace = bftune.read_workload(path)
    assert len(trace.jobs) == 300 and trace.max_procs == 32
    assert bftune.simulate(path).summary["jobs"] == 300
    with pytest.raises(bftune.WorkloadError, match="no such file"):
        bftune.read_workload(tmp_path / "missing.swf")
    assert bftune.policies()["SAF"] and "FCFS" in bftune.policies()


@pytest.mark.slow
def test_run_campaign_from_a_dict(tmp_path):
    config = {"campaign": {"kind": "offline", "name": "api", "seed": 1},
              "workload": {"trace": "synthetic:4500:16:3"},
              "offline": {"policies": ["FCFS", "SPF"], "thresholds": ["none"], "weeks": 2, "splits": ["train"]}}
    done = bftune.run_campaign(config, tmp_path / "c", workers=1)
    assert done.ok, done.failures
    assert done.runs == 4 and len(done.tables["runs"]) == 4 and {"EASY-FCFS-FCFS none", "EASY-SPF-SPF none"} <= set(
        done.tables["runs"]["config"])


@pytest.mark.batsim
def test_compare_runs_both_backends(tmp_path):
    if shutil.which("batsim") is None:
        pytest.skip("needs the real batsim binary on PATH (../shared/tools/build-batsim.sh)")
    comparison = bftune.compare(bftune.synthetic(300, procs=16, seed=2), out=tmp_path / "cmp", policy="SPF",
                                kill_after="1h")
    assert comparison.agree and comparison.report["jobs"] == len(comparison.local) == len(comparison.batsim)
    assert (comparison.local["final_state"] == "COMPLETED_KILLED").any()
    assert (tmp_path / "cmp" / "compare.json").exists()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("field, value", [("submit", math.nan), ("submit", math.inf), ("runtime", math.nan),
                                          ("runtime", math.inf), ("runtime", "10"), ("walltime", math.nan)])
def test_a_trace_with_a_time_that_is_not_a_number_is_refused_naming_the_job(field, value):
    # a NaN submission time once made the simulator loop for good (100 % CPU, SIGINT ignored when compiled)
    fields = {"id": 2, "submit": 5.0, "procs": 2, "runtime": 10.0, "walltime": 20.0, "user": 1, field: value}
    with pytest.raises(bftune.WorkloadError, match=f"job 2: {field} .* (is not a finite number|is not a number)"):
        bftune.simulate(bftune.Trace(jobs=[JobRecord(1, 0.0, 2, 10.0, 20.0, 1), JobRecord(**fields)], max_procs=8))


def test_an_infinite_walltime_is_no_limit():
    trace = bftune.Trace(jobs=[JobRecord(1, 0.0, 2, 10.0, math.inf, 1)], max_procs=8)
    assert bftune.simulate(trace).summary["jobs"] == 1


def _job(**changes) -> JobRecord:
    return JobRecord(**{"id": 1, "submit": 0.0, "procs": 2, "runtime": 10.0, "walltime": 20.0, **changes})


@pytest.mark.parametrize("jobs, max_procs, message", [
    ([_job(), _job(submit=5.0)], 8, "job id 1 is given twice"),  # was a KeyError inside the simulator
    (None, 8, "a trace's jobs must be a list of JobRecord, not NoneType"),
    ([{"id": 1}], 8, r"jobs\[0\] is a dict, not a JobRecord"),
    ([_job(procs=1.5)], 8, "job 1: procs 1.5 is not a whole number of processors"),  # was run as if whole
    ([_job(procs=0)], 8, "job 1: procs 0 is not a whole number of processors from 1"),
    ([_job(id="a")], 8, r"jobs\[0\]: id 'a' is not a whole number"),
    ([_job(id=-3)], 8, r"jobs\[0\]: id -3 is not a whole number from 0"),
    ([_job(id=10**5000)], 8, r"id \(an integer of about 5,001 digits\)"),
    ([_job(runtime=-2.0)], 8, "job 1: runtime -2.0 is negative"),
    ([_job()], 8.5, "the trace's max_procs must be a positive integer, not 8.5"),
])
def test_a_trace_the_simulator_cannot_run_is_refused_by_the_type(jobs, max_procs, message):
    with pytest.raises(bftune.WorkloadError, match=message) as err:
        bftune.Trace(jobs=jobs, max_procs=max_procs)
    assert len(str(err.value)) < 200


def test_numpy_integers_are_whole_numbers():
    np = pytest.importorskip("numpy")
    trace = bftune.Trace(jobs=[_job(id=np.int64(4), procs=np.int32(2))], max_procs=8)
    assert bftune.simulate(trace).summary["jobs"] == 1


@pytest.mark.parametrize("tau, message", [
    (math.nan, "tau: expected a finite duration, got nan"), (math.inf, "tau: expected a finite duration"),
    (-1, "tau: expected a non-negative duration, got -1"), (0, "tau must be positive"),
    ("abc", "tau: cannot read 'abc'"), (10**400, "tau: 401 digits is not a duration"),
    (True, "tau: expected a duration, got True"),
])
def test_tau_is_checked_as_the_command_line_checks_it(tau, message):
    """``tau=nan|-1|0`` silently changed AVGbsld, ``"abc"`` and ``10**400`` failed inside the metrics."""
    trace = bftune.synthetic(30, procs=8)
    with pytest.raises(bftune.ConfigError, match=message):
        bftune.simulate(trace, tau=tau)
    with pytest.raises(bftune.ConfigError, match=message):
        bftune.compare(trace, tau=tau, batsim="/nonexistent/batsim")  # refused before Batsim is looked for
    assert bftune.simulate(trace, tau="1m").summary["tau"] == 60.0


def test_a_workload_that_is_neither_a_trace_nor_a_path_is_one_line():
    with pytest.raises(bftune.WorkloadError, match="a workload is a Trace or the path of a workload file, not int"):
        bftune.simulate(5)


# --- one behaviour: the command line's and the API's ----------------------------------------------------


@pytest.mark.parametrize("options, message", [
    ({"backfill": False, "reservation": "machines"}, "reservation needs backfilling (drop backfill=False)"),
    ({"scheduler": "pv-easy", "reservation": "machines"}, "reservation needs scheduler='easy'"),
    ({"classifier": "rf", "learning": "decoupled", "relabel": "last-week-median"}, "relabel needs learning='online'"),
    ({"predictor": "last", "classifier": "rf"}, "predictor needs no classifier"),
    ({"overrun_estimate": "expired"}, "overrun_estimate needs a predictor other than walltime"),
])
def test_an_api_error_names_options_as_the_caller_wrote_them(options, message):
    """The API once said "drop --no-backfilling" to a caller who wrote ``backfill=False``."""
    with pytest.raises(bftune.ConfigError) as error:
        bftune.simulate(bftune.synthetic(20, procs=8), **options)
    assert str(error.value) == message and "--" not in str(error.value)


def test_the_command_line_names_the_same_rule_with_its_flags(tmp_path, capsys):
    code = main(["simulate", "--synthetic", "20", "--procs", "8", "--no-backfilling", "--reservation", "machines",
                 "--out", str(tmp_path / "x")])
    assert code == 2 and "--reservation needs backfilling (drop --no-backfilling)" in capsys.readouterr().err


def test_one_seed_default_gives_the_api_the_command_lines_run(tmp_path):
    """The seed defaulted to 1 on the command line and to 0 in the API: the same run gave other numbers."""
    from bftune.experiments.cli.main import build_parser
    from bftune.schedulers.options import OPTIONS

    parsed = build_parser().parse_args(["simulate", "--synthetic", "10"])
    assert OPTIONS["seed"].default == parsed.seed == inspect.signature(bftune.synthetic).parameters["seed"].default
    options = {"selector": "random", "period": "1d", "candidates": "FCFS,SPF,LPF,SAF"}
    written = bftune.simulate(bftune.synthetic(600, procs=64), **options).write(tmp_path / "api")
    assert main(["simulate", "--synthetic", "600", "--procs", "64", "--selector", "random", "--period", "1d",
                 "--candidates", "FCFS,SPF,LPF,SAF", "--out", str(tmp_path / "cli")]) == 0
    assert (written / "out_jobs.csv").read_bytes() == (tmp_path / "cli" / "out_jobs.csv").read_bytes()


def test_the_simulate_docstring_lists_every_option_of_the_table():
    """help(bftune.simulate) did not list the options: it lists each, with its default, from the table."""
    from bftune.schedulers.options import OPTIONS

    doc = bftune.simulate.__doc__ or ""
    entries = re.findall(r"^    (\w+) : ([^\n]+)\n((?:        [^\n]*\n)+)", doc, re.MULTILINE)
    listed = {name: (kind, " ".join(text.split())) for name, kind, text in entries if name in OPTIONS}
    assert list(listed) == list(OPTIONS)  # every option, in the table's order
    for name, (kind, text) in listed.items():
        option = OPTIONS[name]
        if option.default is None:
            assert kind.endswith(", optional") and "Default:" not in text, name
        else:
            shown = repr(option.default) if isinstance(option.default, bool) else option.doc_default()
            assert text.endswith(f"Default: {shown}."), (name, text)
        assert all(choice in text for choice in option.choices or ()), name
    assert "<options>" not in doc


def test_the_exported_names_carry_numpydoc_sections():
    """help() and the API page show each name's parameters, what it returns and raises, and an example."""
    for name in bftune.__all__:
        value = getattr(bftune, name)
        doc = inspect.getdoc(value) or ""
        if name == "OPTIONS":  # a dict: its docstring is the one under its assignment (the API page shows it)
            doc = _assigned_docstring(REPO / "schedulers" / "options.py", "OPTIONS")
        sections = {"Examples"}
        if inspect.isfunction(value):
            sections |= {"Returns"} | ({"Parameters"} if inspect.signature(value).parameters else set())
            sections |= set() if name == "policies" else {"Raises"}  # policies() raises nothing
        elif inspect.isclass(value):
            sections |= {"Attributes" if dataclasses.is_dataclass(value) and name != "Trace" else "Parameters"}
        for section in sections:
            assert f"\n{section}\n{'-' * len(section)}\n" in doc, (name, section)


def _assigned_docstring(path, name: str) -> str:
    tree = ast.parse(path.read_text())
    for before, after in zip(tree.body, tree.body[1:]):
        if isinstance(before, (ast.Assign, ast.AnnAssign)) and name in ast.unparse(before).split(":")[0] \
                and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant) \
                and isinstance(after.value.value, str):
            return inspect.cleandoc(after.value.value)
    return ""


def test_the_options_docstring_examples_run():
    doc = _assigned_docstring(REPO / "schedulers" / "options.py", "OPTIONS")
    from bftune.schedulers import options

    test = doctest.DocTestParser().get_doctest(doc, vars(options), "OPTIONS", None, 0)
    assert doctest.DocTestRunner().run(test).failed == 0


def _fake_backends(trace, config, directory, **_):
    """compare_backends without Batsim: both runs are the local simulator's (what the API does around it)."""
    result = bftune.simulate(trace)
    for side in ("local", "batsim"):
        result.write(Path(directory) / side)
    (Path(directory) / "compare.json").write_text("{}")
    return {"mismatches": 0, "jobs": len(trace.jobs)}


def test_compare_without_out_returns_no_directory(monkeypatch, tmp_path):
    """It returned the path of a temporary directory it had already removed."""
    monkeypatch.setattr(api, "compare_backends", _fake_backends)
    trace = bftune.synthetic(50, procs=8)
    comparison = bftune.compare(trace)
    assert comparison.directory is None and comparison.agree and len(comparison.local) == 50
    kept = bftune.compare(trace, out=tmp_path / "cmp")
    assert kept.directory == tmp_path / "cmp" and (kept.directory / "compare.json").is_file()
    assert kept.batsim["job_id"].dtype == "int64"


def test_the_jobs_table_has_integer_ids_attempts_and_the_traces_users(tmp_path):
    trace = bftune.synthetic(300, procs=16, seed=2)
    result = bftune.simulate(trace, policy="SPF", kill_after="1h")
    jobs = result.jobs
    assert list(jobs.columns[-4:]) == ["attempt", "user", "group", "partition"]
    assert jobs["job_id"].dtype == "int64" and jobs["attempt"].max() >= 1
    users = {job.id: job.user for job in trace.jobs}
    assert (jobs["user"] == jobs["job_id"].map(users)).all() and jobs["user"].nunique() > 1
    reruns = jobs[jobs["attempt"] > 0]
    assert set(reruns["job_id"]) <= set(jobs.loc[jobs["final_state"] == "COMPLETED_KILLED", "job_id"])
    # the file keeps Batsim's names
    written = pd.read_csv(result.write(tmp_path / "x") / "out_jobs.csv", dtype={"job_id": str})
    assert written["job_id"].iloc[0] == f"{jobs['job_id'].iloc[0]:07d}" and written["job_id"].str.contains("#").any()
