"""The benchmark scripts keep working (their figures are printed, never asserted: see docs/performance.md).

They live in ``benchmarks/``, outside the package; the tests load them by path, as ``run.py`` runs them.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from types import ModuleType

import pytest
from bftune.experiments.cli.main import build_parser, config_from_args
from locations import REPO

BENCHMARKS = REPO / "benchmarks"


def load(name: str) -> ModuleType:
    """``benchmarks/<name>.py`` as a module, its folder on the path for its own imports (``common``)."""
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(f"benchmark_{name}", BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


bench = load("simulate")


@pytest.mark.parametrize("key", list(bench.CONFIGS))
def test_every_benchmarked_configuration_is_a_valid_simulate_command(key):
    _, options, reference = bench.CONFIGS[key]
    args = build_parser().parse_args(["simulate", "--trace", "t.swf", *options, "--out", "o"])
    config_from_args(args)  # raises on an option the table refuses
    if reference is not None:
        assert "{swf}" in reference  # the reference reads the cleaned copy


def test_measure_reports_a_childs_time_and_memory(tmp_path):
    m = bench.measure([sys.executable, "-c", "x = b\"x\" * (40 << 20)"])
    assert m.wall > 0 and m.cpu >= 0 and m.peak_mib >= 40 and m.sim is None
    with pytest.raises(RuntimeError, match="failed"):
        bench.measure([sys.executable, "-c", "raise SystemExit(3)"])


def test_the_phase_benchmark_times_every_phase_of_simulate(tmp_path, capsys):
    from bftune.workloads.swf_write import write_swf
    from bftune.workloads.synthetic import generate

    write_swf(generate(400, 32, 2), tmp_path / "t.swf")
    assert load("phases").main([str(tmp_path / "t.swf"), "--repeat", "1"]) == 0
    printed = capsys.readouterr().out
    for phase in ("imports", "read", "simulate", "columns", "summary", "out_jobs.csv", "garbage collection"):
        assert f"| {phase}" in printed or f"| of which {phase}" in printed, phase
    assert "numpy imported: False" in printed  # a small trace is parsed line by line, with no numpy


@pytest.mark.slow
def test_the_simulate_benchmark_times_bftune_on_a_trace_of_the_data_directory(tmp_path):
    """The whole script in a fresh process, its trace found by name in ``--data``, one configuration."""
    from bftune.workloads.swf_write import write_swf
    from bftune.workloads.synthetic import generate

    write_swf(generate(300, 32, 5), tmp_path / "TOY-1-cln.swf.gz")
    done = subprocess.run([sys.executable, str(BENCHMARKS / "simulate.py"), "--data", str(tmp_path), "--configs",
                           "fcfs", "--repeat", "1", "--no-reference", "TOY"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith("| TOY-1-cln (300) |"))
    assert "| EASY-FCFS |" in row and " MiB |" in row


def test_run_lists_every_benchmark_and_runs_one_in_a_fresh_process():
    scripts = {p.stem for p in BENCHMARKS.glob("*.py")} - {"run", "common"}
    assert set(load("run").BENCHMARKS) == scripts  # every script is listed, every listed one exists
    listed = subprocess.run([sys.executable, str(BENCHMARKS / "run.py")], capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0 and all(f"  {name}" in listed.stdout for name in scripts)
    done = subprocess.run([sys.executable, str(BENCHMARKS / "run.py"), "trials", "--", "--windows", "1",
                           "--trials", "256"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "1 windows x 256 trials" in done.stdout and "trials/s in one process" in done.stdout
    bad = subprocess.run([sys.executable, str(BENCHMARKS / "run.py"), "nosuch"], capture_output=True, text=True,
                         timeout=60)
    assert bad.returncode == 2 and "unknown benchmark(s) nosuch" in bad.stderr


def test_the_data_directory_is_bftunes_one_setting(tmp_path, monkeypatch):
    common = load("common")
    monkeypatch.delenv("BFTUNE_DATA", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert common.data_dir() == tmp_path / "xdg" / "bftune" / "traces"
    (tmp_path / "env").mkdir()
    (tmp_path / "given").mkdir()
    monkeypatch.setenv("BFTUNE_DATA", str(tmp_path / "env"))
    assert common.data_dir() == tmp_path / "env"
    assert common.data_dir(tmp_path / "given") == tmp_path / "given"
    (tmp_path / "KTH-SP2-cln.swf.gz").write_bytes(b"")
    (tmp_path / "KTH-old-cln.swf.gz").write_bytes(b"")
    assert common.find_trace("KTH-S", tmp_path) == tmp_path / "KTH-SP2-cln.swf.gz"
    with pytest.raises(SystemExit, match="2 trace names in .* start with it"):
        common.find_trace("KTH", tmp_path)
    with pytest.raises(SystemExit, match="CTC: no such file, and no trace names"):
        common.find_trace("CTC", tmp_path)
    assert "PYTHONDONTWRITEBYTECODE" not in common.user_env(X="1")


def test_the_benchmarks_are_not_in_the_installed_package():
    from bftune.experiments.cli.main import build_parser as _  # noqa: F401 - the package imports without them

    text = (REPO / "pyproject.toml").read_text()
    assert "bftune.benchmarks" not in text and not (BENCHMARKS / "__init__.py").exists()
    assert not list((REPO / "experiments").glob("bench*.py"))


def test_background_fit_counts_the_instants_between_a_retraining_and_the_next_classified_submission(tmp_path, capsys):
    import pandas as pd

    week = load("background_fit").WEEK
    jobs = pd.DataFrame({
        "job_id": ["1", "2", "2#1", "3", "4"],
        # job 1 opens the weeks at 0; week 1: completions at week+10 and week+20 (job 2 killed, its rerun
        # submitted then, needing no forest) before job 3 at week+30; week 2: job 4 is the first event
        "submission_time": [0.0, 5.0, week + 10, week + 30, 2 * week],
        "finish_time": [week + 10, week + 10, week + 20, week + 40, 2 * week + 1],
    })
    table = load("background_fit").windows(jobs)
    assert table.week.tolist() == [1, 2]
    assert table.first_event_is_submission.tolist() == [False, True]
    # after the trigger at week+10: week+20 only; from the boundary itself: week+10 as well
    assert table.instants_after_trigger.tolist() == [1, 0]
    assert table.instants_after_boundary.tolist() == [2, 0]
    jobs.to_csv(tmp_path / "out_jobs.csv", index=False)
    assert load("background_fit").main([str(tmp_path), "--batsim-seconds", "10", "--messages", "1000"]) == 0
    out = capsys.readouterr().out
    assert "2 week boundaries" in out and "1 instants" in out and "at most 0.020 s" in out
    assert load("background_fit").main([str(tmp_path / "none"), "--batsim-seconds", "1", "--messages", "1"]) == 2


def test_the_classifier_benchmark_profiles_a_forest_fit_on_its_replay():
    from bftune.workloads.synthetic import generate

    classifier = load("classifier")
    report, timings, clf = classifier.replay(generate(600, 64, seed=1), week=20000.0, n_estimators=5)
    assert report["counts"]["retrainings"] >= 2 and timings["jobs"] == 600
    threads = classifier.forest.FIT_THREADS
    line = classifier.profile_fit(clf)
    share = int(line.split("of which ")[1].split("%")[0])
    assert f"({len(clf._train_rows)} rows)" in line and 0 < share <= 100
    assert classifier.forest.FIT_THREADS == threads  # the one-thread fit gives the setting back


def _week_sums(waits: list[float]):
    import numpy as np

    out = np.zeros((len(waits), 6))
    out[:, 0], out[:, 4], out[:, 5] = np.array(waits) * 10, 10, waits
    out[:, 1:4] = 10
    return out


def test_the_drift_benchmark_scores_a_later_period_by_its_distance_in_interval_halves(monkeypatch):
    drift = load("later_drift")
    monkeypatch.setattr(drift, "CANDIDATES", dict(list(drift.CANDIDATES.items())[:1]))  # one is enough here
    rng = __import__("numpy").random.default_rng(3)
    base = _week_sums([100.0] * 140)
    # the candidate gains 20-40 % for 120 weeks, then 70 %: the later periods lie far above the past's interval
    gains = list(rng.uniform(0.2, 0.4, 120)) + [0.7] * 20
    sums = {"EASY-FCFS": base, **{label: _week_sums([100.0 * (1 - g) for g in gains]) for label in drift.CANDIDATES}}
    rows = drift.scores("T", sums, "avg_wait")
    assert rows and {r["horizon"] for r in rows} <= set(drift.HORIZONS)
    late = [r for r in rows if r["cut"] == 120]  # the first cut after the jump (later cuts see some of it)
    assert late and all(r["score"] > 1 and r["realized"] > r["high"] for r in late)
    early = [r for r in rows if r["cut"] + r["horizon"] <= 120]
    assert sum(r["score"] <= 1 for r in early) >= 0.75 * len(early)  # weeks like the past: mostly inside


def test_each_trace_weighs_the_same_in_the_drift_factor():
    drift = load("later_drift")
    rows = [{"trace": "long", "score": 0.5}] * 90 + [{"trace": "short", "score": 3.0}] * 10
    # pooled, the 90 % quantile would be 0.5; with each trace weighing one half it is the short trace's 3.0
    assert drift.trace_quantile(rows, 0.9) == 3.0
    assert drift.trace_quantile(rows, 0.4) == 0.5
