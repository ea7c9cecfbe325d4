"""``bftune replay``: a log's waits beside the same jobs simulated under the site's baseline."""

from __future__ import annotations

import dataclasses
import json

import pytest
from bftune.experiments.cli.main import main
from bftune.experiments.runs.local import run_local
from bftune.experiments.runs.metrics import merged_runs
from bftune.experiments.runs.outjobs import runs_columns
from bftune.experiments.runs.replay import _quantile, _ranks, _within_factor, replay
from bftune.schedulers.config import SchedulerConfig
from bftune.workloads.swf_write import write_swf
from bftune.workloads.synthetic import generate

EASY = SchedulerConfig.from_options({})


def logged_as_simulated(trace, config=EASY, scale: float = 1.0):
    """The trace with each job's logged wait set to its simulated wait (times ``scale``)."""
    _, result = run_local(trace, config)
    jobs = merged_runs(runs_columns(result.runs))
    waits = {int(name): wait for name, wait in zip(jobs["job"], jobs["wait"])}
    return trace.with_jobs([dataclasses.replace(j, wait=waits[j.id] * scale) for j in trace.jobs])


def test_a_log_that_the_simulator_reproduces_is_called_close():
    trace = logged_as_simulated(generate(3000, 64, seed=5))
    r = replay(trace, EASY)
    assert r.jobs == 3000 and r.without_logged_wait == 0
    for key in ("avg_wait", "median_wait", "p90_wait", "max_wait", "utilization"):
        assert r.logged[key] == pytest.approx(r.simulated[key]), key
    assert r.rank_correlation == pytest.approx(1.0) and r.within_10_min == r.within_2x == 1.0
    assert r.verdict == "close" and "reproduces this machine closely" in r.as_dict()["verdict_line"]


def test_a_machine_that_waited_five_times_longer_is_called_far():
    trace = logged_as_simulated(generate(3000, 64, seed=5), scale=5.0)
    r = replay(trace, EASY)
    assert r.logged["avg_wait"] == pytest.approx(5 * r.simulated["avg_wait"])
    assert r.rank_correlation == pytest.approx(1.0)  # the same order: only the scale is wrong
    assert r.verdict == "far" and "does NOT reproduce" in r.as_dict()["verdict_line"]


def test_another_policy_than_the_sites_shows_in_the_numbers():
    trace = logged_as_simulated(generate(3000, 64, seed=5), SchedulerConfig.from_options({"policy": "LCFS"}))
    assert replay(trace, EASY).rank_correlation < 0.9


def test_jobs_without_a_logged_wait_are_counted_not_compared():
    trace = logged_as_simulated(generate(500, 32, seed=2))
    trace = trace.with_jobs([dataclasses.replace(j, wait=-1) if j.id % 2 else j for j in trace.jobs])
    r = replay(trace, EASY)
    assert r.jobs + r.without_logged_wait == 500 and r.without_logged_wait == 250


def test_the_pieces():
    assert _quantile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5 and _quantile([5.0], 0.9) == 5.0
    assert _ranks([10.0, 20.0, 10.0]) == [1.5, 3.0, 1.5]
    assert _within_factor(0.0, 50.0) and _within_factor(100.0, 200.0) and not _within_factor(100.0, 201.0)


def test_the_command_prints_the_table_and_writes_its_files(tmp_path, capsys):
    path = tmp_path / "log.swf"
    write_swf(logged_as_simulated(generate(800, 32, seed=3)), path)  # field 3 carries the logged wait
    assert main(["replay", "--trace", str(path), "--out", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert "AvgWait" in out and "verdict: the simulator reproduces this machine closely" in out
    record = json.loads((tmp_path / "r" / "replay.json").read_text())
    assert record["verdict"] == "close" and record["jobs"] == 800
    assert (tmp_path / "r" / "replay_weeks.csv").read_text().startswith("week,jobs,logged_avg_wait")


@pytest.mark.parametrize("argv, message", [
    (["--synthetic", "100"], "a synthetic workload has no logged waits"),
])
def test_bad_requests_are_one_line(argv, message, capsys):
    assert main(["replay", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err


def test_a_log_without_any_logged_wait_is_one_line(tmp_path, capsys):
    path = tmp_path / "nowait.swf"
    write_swf(generate(100, 16, seed=1), path)  # synthetic jobs have no logged wait: field 3 is -1
    assert main(["replay", "--trace", str(path)]) == 2
    assert "no job has a logged wait" in capsys.readouterr().err


def test_a_handful_of_jobs_gets_no_verdict():
    trace = logged_as_simulated(generate(50, 8, seed=1))
    r = replay(trace, EASY)
    assert r.verdict == "unknown" and "too few jobs with a logged wait" in r.as_dict()["verdict_line"]
