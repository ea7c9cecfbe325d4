"""Study 004's decoupled learning (bftune.learning.decoupled): data from the trace, week by week."""

from __future__ import annotations

import pytest
from bftune.learning.decoupled import DecoupledClassifier
from bftune.schedulers.config import ConfigError, SchedulerConfig
from bftune.schedulers.drivers.local.simulator import simulate
from bftune.workloads.model import WEEK, JobRecord
from bftune.workloads.synthetic import generate



def submit(clf, job_id, t, runtime, user=1, procs=1, walltime=3600):
    return clf.classify(job_id, user, procs, walltime, t, t, runtime=runtime)


def test_weekly_divider_and_labels_come_from_the_previous_weeks_submissions():
    clf = DecoupledClassifier(None, None, seed=0, n_estimators=5)
    # week 0: runtimes 10, 20, 30 (median 20); none of them ever finishes
    for i, p in enumerate((10, 20, 30)):
        assert submit(clf, f"a{i}", i, p) == (False, 0.0)  # first week (from t = 0): every job large
    assert clf.divider(WEEK - 1) is None
    # week 1: the divider is week 0's median; week 0's jobs were labelled with their own median
    assert clf.divider(WEEK + 1) == 20.0
    assert [clf.job(f"a{i}")["label"] for i in range(3)] == [1, 0, 0]
    for i, p in enumerate((5, 50)):
        submit(clf, f"b{i}", WEEK + 200 + i, p)
    assert [clf.job(f"b{i}")["divider"] for i in range(2)] == [20.0, 20.0]
    # week 2: labelled against the divider in force at their submission (20), divider = median(5, 50)
    assert clf.divider(2 * WEEK + 1) == 27.5
    assert [clf.job(f"b{i}")["label"] for i in range(2)] == [1, 0]
    models = clf.report()["weeks"]
    assert [m["model"]["train_size"] for m in models] == [0, 3, 5]


def test_data_arrive_at_the_week_end_whether_or_not_the_jobs_finished():
    clf = DecoupledClassifier(None, None, seed=0, n_estimators=5)
    submit(clf, "x", 0, 100, user=7, walltime=1000)
    submit(clf, "y", 10, 1, user=7, walltime=1000)
    # same (user, walltime) category: the history is empty until the boundary...
    submit(clf, "z", 20, 50, user=7, walltime=1000)  # week 0's median: 50
    assert clf.job("z")["features"]["uw_last1"] == -1
    # ...and holds both week-0 jobs (in submission order) after it, none of which finished
    submit(clf, "w", WEEK + 5, 1, user=7, walltime=1000)
    f = clf.job("w")["features"]
    assert (f["uw_last1"], f["uw_last2"], f["uw_last3"]) == (0.0, 1.0, 0.0)  # z large, y small, x large
    report = clf.report()
    assert report["counts"]["finished"] == 0 and report["config"]["learning"] == "decoupled"
    assert report["counts"]["evaluated"] == 4  # the last week is labelled for the metrics


def test_finished_is_checked_but_not_learned_from():
    clf = DecoupledClassifier(None, None, seed=0, n_estimators=5)
    submit(clf, "x", 0, 100)
    clf.finished("x#1", 100, 300)  # a rerun's name is accepted for its job
    with pytest.raises(ValueError, match="twice"):
        clf.finished("x", 100, 400)
    with pytest.raises(ValueError, match="never classified"):
        clf.finished("nope", 1, 500)
    assert clf.divider(600) is None  # finishing does not make a divider: only week ends do


def test_needs_the_trace_runtime_and_weekly_features():
    clf = DecoupledClassifier(None, None)
    assert clf.needs_runtime
    with pytest.raises(ValueError, match="trace runtime"):
        clf.classify("x", 1, 1, 10, 0, 0)
    with pytest.raises(ValueError, match="weekly features"):
        DecoupledClassifier(None, None, features="live")
    with pytest.raises(ConfigError, match="learning"):
        SchedulerConfig.from_options({"classifier": "rf", "learning": "decoupled", "features": "live"})
    with pytest.raises(ConfigError, match="learning"):
        SchedulerConfig.from_options({"classifier": "rf", "learning": "trace"})


def test_class_clairvoyant_with_weekly_dividers_kills_only_jobs_started_in_a_later_week():
    trace = generate(1500, 32, 4)
    cfg = SchedulerConfig.from_options({"policy": "FCFS", "classifier": "class-clairvoyant", "learning": "decoupled"})
    core = cfg.build(trace.max_procs)
    result = simulate(trace.jobs, trace.max_procs, core)
    clf = core.hooks[0].clf
    origin = min(j.submit for j in trace.jobs)
    killed = [r for r in result.runs if r.state == "COMPLETED_KILLED"]
    for run in killed:
        # the class was right at submission (runtime < divider then); only a later week's lower divider kills
        assert (run.start - origin) // WEEK > (run.original_submit - origin) // WEEK
        assert clf.job(run.first_id)["label"] == 1
    assert "decoupled learning" in cfg.describe()
    # the forest-free baseline reports every job's label from the trace
    assert clf.report()["counts"]["evaluated"] == len(trace.jobs)


def test_rf_with_decoupled_learning_runs_in_the_local_simulator():
    jobs = [JobRecord(i, 3600 * i, 1 + i % 4, 60 + (i % 7) * 400, 4000, i % 5) for i in range(400)]
    cfg = SchedulerConfig.from_options({"policy": "SAF", "classifier": "rf", "learning": "decoupled", "seed": 3})
    result = simulate(jobs, 8, cfg.build(8))
    rep = result.report["classification"]
    assert rep["config"]["learning"] == "decoupled"
    assert rep["counts"]["classified"] == 400 and rep["counts"]["retrainings"] >= 2
    assert rep["overall"]["n"] == 400
