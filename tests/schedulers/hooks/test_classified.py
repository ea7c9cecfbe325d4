"""Small jobs first with the kill-and-requeue safeguard (docs/semantics/learning.md#classification), scheduler side.

A scripted classifier (fixed divider, chosen predictions) isolates the
scheduling rules; the real RuntimeClassifier then shows that a perfect
classifier schedules exactly like the class-clairvoyant baseline.
"""

from __future__ import annotations

import json

import pytest
from bftune.experiments.runs.local import run_local
from bftune.learning.classifier import RuntimeClassifier
from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.core.easy import Easy
from bftune.schedulers.core.engine import Core
from bftune.schedulers.core.ordering import Order
from bftune.schedulers.drivers.local.simulator import simulate
from bftune.schedulers.hooks.classified import SmallFirst
from bftune.workloads.model import JobRecord
from bftune.workloads.synthetic import generate

KILLED, OK = "COMPLETED_KILLED", "COMPLETED_SUCCESSFULLY"


class Scripted:
    """The classifier API (``RuntimeClasses``) with a constant divider and predictions given by job id."""

    needs_runtime = False

    def __init__(self, divider: float | None, small: set[str]) -> None:
        self._divider = divider
        self.small = small
        self.finished_calls: list[tuple[str, float, float]] = []
        self.classified: list[str] = []

    def advance(self, now):
        pass

    def divider(self, now):
        return self._divider

    def classify(self, job_id, user, procs, walltime, submit, now, runtime=None):
        assert runtime is None, "a classifier that does not need runtimes is never handed one"
        self.classified.append(job_id)
        return (job_id in self.small, 1.0 if job_id in self.small else 0.0)

    def finished(self, job_id, runtime, end):
        self.finished_calls.append((job_id, runtime, end))

    def report(self):
        return {"scripted": True}


def core_with(clf, m, policy="FCFS", mode="rf", safeguard=True, threshold=float("inf"), check_period=None):
    order = Order.of(policy, threshold, by_class=mode != "runtime-clairvoyant")
    return Core(m, Easy(order, order), [SmallFirst(mode, clf, safeguard, check_period)])


def runs_of(result):
    return {r.id: (r.start, r.end, r.state, r.subtime) for r in result.runs}


def test_small_queue_goes_first_each_class_in_policy_order():
    # m=1; job 1 occupies the machine until 100.  At 100 the queue holds
    # 2 (large), 3 (small), 4 (large), 5 (small), all submitted at 10..40.
    jobs = [JobRecord(1, 0, 1, 100, 200)] + [JobRecord(i, 10 * (i - 1), 1, 10, 20) for i in (2, 3, 4, 5)]
    clf = Scripted(divider=1000.0, small={"0000003", "0000005"})
    result = simulate(jobs, 1, core_with(clf, 1))
    starts = {r.id: r.start for r in result.runs}
    assert [k for k, _ in sorted(starts.items(), key=lambda kv: kv[1])] == \
        ["0000001", "0000003", "0000005", "0000002", "0000004"]


def test_safeguard_kills_at_the_divider_and_requeues_as_large_with_the_same_r():
    # Job 1 predicted small, really 300 s long, divider 100: killed at 0+100,
    # rerun 1#1 (large, r = 0) restarts from scratch and is never killed again.
    jobs = [JobRecord(1, 0, 2, 300, 1000), JobRecord(2, 50, 2, 500, 1000)]
    clf = Scripted(divider=100.0, small={"0000001"})
    result = simulate(jobs, 2, core_with(clf, 2))
    got = runs_of(result)
    assert got["0000001"] == (0.0, 100.0, KILLED, 0.0)
    # At 100 the rerun (r=0) and job 2 (r=50, large) compete: FCFS keeps r, the rerun wins.
    assert got["0000001#1"] == (100.0, 400.0, OK, 100.0)
    assert got["0000002"] == (400.0, 900.0, OK, 50.0)
    assert [c[0] for c in clf.finished_calls] == ["0000001", "0000002"]  # killed runs are not "finished"
    assert clf.finished_calls[0][1] == 300  # the rerun's full runtime
    assert clf.classified == ["0000001", "0000002"]  # the rerun is not classified again
    hook = result.report
    assert hook["safeguard_kills"] == 1


def test_no_kill_when_the_job_ends_exactly_at_the_divider_or_cannot_exceed_it():
    jobs = [JobRecord(1, 0, 1, 100, 1000),  # ends exactly at the kill time: completion wins
            JobRecord(2, 0, 1, 80, 90)]  # walltime <= divider: never watched
    clf = Scripted(divider=100.0, small={"0000001", "0000002"})
    result = simulate(jobs, 2, core_with(clf, 2))
    assert {r.state for r in result.runs} == {OK}
    assert len(result.runs) == 2


def test_periodic_safeguard_kills_only_at_check_instants_with_the_divider_then():
    # Checks every 1000 s from the first submission (t=0): at 1000, 2000...  Divider 100.
    # Job 1 (small, 1500 s) overruns the divider at 100 but runs on until the check at 1000;
    # job 2 (small, 300 s from 10) overruns it too and ends at 310, before any check: never killed;
    # job 3 (small, 150 s from 900) has run 100 s at the check: not *longer* than the divider, kept.
    jobs = [JobRecord(1, 0, 1, 1500, 5000), JobRecord(2, 10, 1, 300, 5000), JobRecord(3, 900, 1, 150, 5000)]
    clf = Scripted(divider=100.0, small={"0000001", "0000002", "0000003"})
    result = simulate(jobs, 3, core_with(clf, 3, check_period=1000.0))
    got = runs_of(result)
    assert got["0000001"] == (0.0, 1000.0, KILLED, 0.0)
    assert got["0000001#1"] == (1000.0, 2500.0, OK, 1000.0)  # requeued large: the next check leaves it alone
    assert got["0000002"] == (10.0, 310.0, OK, 10.0)
    assert got["0000003"] == (900.0, 1050.0, OK, 900.0)
    assert result.report["safeguard_kills"] == 1


def test_periodic_safeguard_asks_for_no_wakeup_while_no_small_job_runs():
    # Only a large job runs for a long time: no check instant is visited, the run ends at its end.
    jobs = [JobRecord(1, 0, 1, 50_000, 60_000), JobRecord(2, 49_000, 1, 10, 60_000)]
    clf = Scripted(divider=100.0, small={"0000002"})
    core = core_with(clf, 2, check_period=1000.0)
    result = simulate(jobs, 2, core)
    assert {r.state for r in result.runs} == {OK}
    assert result.passes <= 5  # arrivals and ends only; a wake-up per period would make about 50


def test_the_safeguard_period_option_builds_the_periodic_check():
    cfg = SchedulerConfig.from_options({"classifier": "rf", "safeguard_period": "1w"})
    (hook,) = [h for h in cfg.build(8).hooks if isinstance(h, SmallFirst)]
    assert hook.check_period == 7 * 86400.0 and "safeguard every 1w" in cfg.describe()
    assert cfg.to_dict()["safeguard_period"] == "1w"  # durations are written as the user writes them
    with pytest.raises(Exception, match="safeguard_period needs the safeguard"):
        SchedulerConfig.from_options({"classifier": "rf", "safeguard": False, "safeguard_period": "1w"})
    with pytest.raises(Exception, match="safeguard_period needs classifier"):
        SchedulerConfig.from_options({"safeguard_period": "1w"})


def test_no_safeguard_lets_a_misclassified_job_run_to_completion():
    jobs = [JobRecord(1, 0, 2, 300, 1000), JobRecord(2, 50, 2, 500, 1000)]
    clf = Scripted(divider=100.0, small={"0000001"})
    result = simulate(jobs, 2, core_with(clf, 2, safeguard=False))
    assert runs_of(result)["0000001"] == (0.0, 300.0, OK, 0.0)
    assert all("#" not in r.id for r in result.runs)


def test_first_week_without_divider_means_everything_large_and_no_kill():
    jobs = [JobRecord(1, 0, 1, 300, 1000)]
    clf = Scripted(divider=None, small={"0000001"})  # predicted small, but no divider in force
    result = simulate(jobs, 1, core_with(clf, 1))
    assert runs_of(result)["0000001"][2] == OK


def test_runtime_clairvoyant_plans_with_true_runtimes():
    # m=2.  Job 1 (q2) runs 0..100 with walltime 1000.  Job 2 (q2) waits, job 3
    # (q1, p 50, walltime 5000) arrives at 10.  With walltimes, job 2's shadow
    # time is 1000 and job 3 (ends 10+5000) cannot be backfilled on 0 free;
    # nothing runs until 100 either way, but at 100 both schedulers start job
    # 2 first.  The difference: with true runtimes job 3 is backfilled
    # when it fits before job 2's reservation.
    jobs = [JobRecord(1, 0, 1, 100, 1000), JobRecord(2, 5, 2, 100, 100), JobRecord(3, 10, 1, 50, 5000)]
    base = simulate(jobs, 2, SchedulerConfig().build(2))
    clair = simulate(jobs, 2, core_with(Scripted(None, set()), 2, mode="runtime-clairvoyant"))
    # With walltimes: at 10 job 1 is expected to end at 1000 = s; job 3 (q1) ends at 5010 > s,
    # extra = 0 -> no backfill.  With true runtimes: s = 100, job 3 ends at 60 <= s -> starts at 10.
    assert {r.id: r.start for r in base.runs}["0000003"] == 200.0
    assert {r.id: r.start for r in clair.runs}["0000003"] == 10.0


def test_a_perfect_classifier_schedules_exactly_like_class_clairvoyant():
    trace = generate(1500, 64, seed=11)
    runtime = {f"{j.id:07d}": j.runtime for j in trace.jobs}

    class Perfect(RuntimeClassifier):
        def classify(self, job_id, user, procs, walltime, submit, now, handed=None):
            super().classify(job_id, user, procs, walltime, submit, now, handed)
            d = self.divider(now)
            small = d is not None and runtime[job_id] < d
            return small, float(small)

    def run(mode, clf):
        return simulate(trace.jobs, trace.max_procs, core_with(clf, trace.max_procs, policy="SAF", mode=mode))

    perfect = run("rf", Perfect(trace.unix_start_time, trace.timezone, seed=1))
    oracle = run("class-clairvoyant", RuntimeClassifier(trace.unix_start_time, trace.timezone, seed=1))
    assert runs_of(perfect) == runs_of(oracle)
    killed = [r for r in oracle.runs if r.state == KILLED]
    assert killed, "the divider drifts between submission and start, so even true classes see kills"


def test_summary_of_a_classified_run(tmp_path):
    trace = generate(1200, 64, seed=5)
    cfg = SchedulerConfig.from_options({"policy": "SAF", "classifier": "rf", "seed": 2})
    summary, result = run_local(trace, cfg, tmp_path, tau=60.0)
    stored = json.loads((tmp_path / "summary.json").read_text())
    assert stored["tau"] == 60.0
    assert {"classification", "killed_jobs", "wasted_work", "safeguard_kills"} <= set(stored)
    cls = stored["classification"]
    for key in ("accuracy", "precision", "recall", "false_small_rate", "false_large_rate"):
        assert cls[key] == cls["overall"][key]
    assert 0.0 <= cls["accuracy"] <= 1.0
    assert cls["weeks"] and {"week", "metrics"} <= set(cls["weeks"][-1])
    killed_runs = [r for r in result.runs if r.state == KILLED]
    assert stored["killed_runs"] == len(killed_runs) == stored["safeguard_kills"]
    assert stored["wasted_work"] == pytest.approx(sum((r.end - r.start) * r.procs for r in killed_runs))


def test_clairvoyant_baselines_need_a_driver_with_true_runtimes():
    from bftune.schedulers.core.jobs import Job
    from bftune.schedulers.core.engine import OracleMissingError

    core = core_with(Scripted(100.0, set()), 4, mode="class-clairvoyant")
    with pytest.raises(OracleMissingError):
        core.submit(Job("0000001", 1, 0.0, 1, 10.0), 0.0)


def test_baselines_train_no_forest_but_rf_does():
    trace = generate(1500, 64, seed=5)
    kinds = {}
    for mode in ("rf", "class-clairvoyant"):
        cfg = SchedulerConfig.from_options({"policy": "FCFS", "classifier": mode, "seed": 2})
        summary, _ = run_local(trace, cfg)
        kinds[mode] = {w["model"]["kind"] for w in summary["classification"]["weeks"] if w.get("model")}
    assert "forest" in kinds["rf"]
    assert kinds["class-clairvoyant"] <= {"none"}


@pytest.mark.parametrize("mode, expected", [
    # m=1, divider 100.  Job 1 (large, truly large) runs 0..100.  Waiting at 100: job 2 (r 10, p 300), which
    # the forest calls small - a false small - and job 3 (r 20, p 50), which it calls large - a false large.
    ("rf", {"0000002": (100.0, 200.0, KILLED, 10.0), "0000002#1": (200.0, 500.0, OK, 200.0),
            "0000003": (500.0, 550.0, OK, 20.0)}),
    # the false large corrected: job 3 joins job 2 in the small queue (FCFS inside it), job 2 is still killed
    ("rf-no-false-large", {"0000002": (100.0, 200.0, KILLED, 10.0), "0000003": (200.0, 250.0, OK, 20.0),
                           "0000002#1": (250.0, 550.0, OK, 200.0)}),
    # the false small corrected: both large, FCFS, nothing killed
    ("rf-no-false-small", {"0000002": (100.0, 400.0, OK, 10.0), "0000003": (400.0, 450.0, OK, 20.0)}),
    # both corrected: the true classes
    ("class-clairvoyant", {"0000003": (100.0, 150.0, OK, 20.0), "0000002": (150.0, 450.0, OK, 10.0)}),
])
def test_corrected_modes_fix_one_kind_of_error_each(mode, expected):
    jobs = [JobRecord(1, 0, 1, 100, 1000), JobRecord(2, 10, 1, 300, 1000), JobRecord(3, 20, 1, 50, 1000)]
    clf = Scripted(divider=100.0, small={"0000002"})
    got = runs_of(simulate(jobs, 1, core_with(clf, 1, mode=mode)))
    del got["0000001"]
    assert got == expected


def test_corrected_modes_use_two_queues_and_train_the_forest():
    trace = generate(1500, 64, seed=5)
    for mode in ("rf-no-false-large", "rf-no-false-small"):
        cfg = SchedulerConfig.from_options({"policy": "FCFS", "classifier": mode, "seed": 2})
        assert cfg.by_class
        summary, _ = run_local(trace, cfg)
        assert "forest" in {w["model"]["kind"] for w in summary["classification"]["weeks"] if w.get("model")}
        assert "one kind of error corrected" in summary["classification"]["note"]


# --- the kill against the divider in force at each instant (safeguard_divider = "current") ----------------------


class Moving(Scripted):
    """A scripted classifier whose divider changes at given instants: ``steps`` = [(from time, divider)...]."""

    def __init__(self, steps: list[tuple[float, float]], small: set[str]) -> None:
        super().__init__(steps[0][1], small)
        self.steps = steps

    def divider(self, now):
        return [d for t, d in self.steps if t <= now][-1]


def moving_core(clf, m, divider_now):
    order = Order.of("FCFS", float("inf"), by_class=True)
    return Core(m, Easy(order, order), [SmallFirst("rf", clf, True, None, divider_now=divider_now)])


@pytest.mark.parametrize("divider_now, killed_at", [(False, 100.0), (True, 200.0)])
def test_a_growing_divider_kills_later_only_against_the_current_divider(divider_now, killed_at):
    # m=2.  Job 1 (small, 300 s) starts at 0 under divider 100; job 2 (large) ends at 50, when the divider becomes
    # 200.  At the start's divider job 1 dies at 100; against the divider in force, when it has run 200 s.
    jobs = [JobRecord(1, 0, 1, 300, 1000), JobRecord(2, 0, 1, 50, 1000)]
    clf = Moving([(0.0, 100.0), (50.0, 200.0)], small={"0000001"})
    got = runs_of(simulate(jobs, 2, moving_core(clf, 2, divider_now)))
    assert got["0000001"] == (0.0, killed_at, KILLED, 0.0)
    assert got["0000001#1"] == (killed_at, killed_at + 300.0, OK, killed_at)


@pytest.mark.parametrize("divider_now, killed_at", [(False, 100.0), (True, 50.0)])
def test_a_shrinking_divider_kills_at_once_a_job_already_past_it(divider_now, killed_at):
    # The divider falls from 100 to 40 at 50 (job 2's end): job 1 has run 50 s > 40, so it dies at that pass.
    jobs = [JobRecord(1, 0, 1, 300, 1000), JobRecord(2, 0, 1, 50, 1000)]
    clf = Moving([(0.0, 100.0), (50.0, 40.0)], small={"0000001"})
    got = runs_of(simulate(jobs, 2, moving_core(clf, 2, divider_now)))
    assert got["0000001"] == (0.0, killed_at, KILLED, 0.0)


def test_against_the_current_divider_a_job_ending_at_it_completes_and_reruns_are_never_killed():
    jobs = [JobRecord(1, 0, 1, 100, 1000),  # ends exactly when it reaches the divider: completion wins
            JobRecord(2, 0, 1, 150, 1000)]  # killed at 100, its rerun (large) runs 150 s past any divider
    clf = Moving([(0.0, 100.0)], small={"0000001", "0000002"})
    result = simulate(jobs, 2, moving_core(clf, 2, True))
    got = runs_of(result)
    assert got["0000001"] == (0.0, 100.0, OK, 0.0)
    assert got["0000002"] == (0.0, 100.0, KILLED, 0.0) and got["0000002#1"] == (100.0, 250.0, OK, 100.0)
    assert result.report["safeguard_kills"] == 1


def test_the_safeguard_divider_option():
    cfg = SchedulerConfig.from_options({"classifier": "rf", "safeguard_divider": "current"})
    (hook,) = [h for h in cfg.build(8).hooks if isinstance(h, SmallFirst)]
    assert hook.divider_now and "killed at the current divider" in cfg.describe()
    (hook,) = [h for h in SchedulerConfig.from_options({"classifier": "rf"}).build(8).hooks
               if isinstance(h, SmallFirst)]
    assert not hook.divider_now  # the contract's kill at start + the divider stays the default
    with pytest.raises(Exception, match="safeguard_divider: a periodic check"):
        SchedulerConfig.from_options({"classifier": "rf", "safeguard_divider": "current", "safeguard_period": "1w"})
    with pytest.raises(Exception, match="safeguard_divider needs the safeguard"):
        SchedulerConfig.from_options({"classifier": "rf", "safeguard": False, "safeguard_divider": "current"})


def test_the_learning_options_reach_the_classifier():
    from bftune.workloads.model import TraceClock

    clock = TraceClock(835823160, "US/Eastern")  # CTC-SP2's header: 1996-06-26 21:06 UTC, 17:06 EDT
    options = {"classifier": "rf", "aggregate_classes": "predicted", "categorical_features": "request",
               "relabel": "last-week-median", "calendar": "relative"}
    (hook,) = [h for h in SchedulerConfig.from_options(options).build(8, clock).hooks if isinstance(h, SmallFirst)]
    clf = hook.clf
    assert (clf.aggregate_classes, clf.categorical, clf.relabel) == ("predicted", "request", "last-week-median")
    assert (clf.calendar.unix_start_time, clf.calendar.tz_name) == (0, "UTC")  # trace time 0 = 1970-01-01 UTC
    (hook,) = [h for h in SchedulerConfig.from_options({"classifier": "rf"}).build(8, clock).hooks
               if isinstance(h, SmallFirst)]
    assert (hook.clf.calendar.unix_start_time, hook.clf.calendar.tz_name) == (835823160, "US/Eastern")
    assert (hook.clf.aggregate_classes, hook.clf.categorical, hook.clf.relabel) == ("true", "none", "none")
    with pytest.raises(Exception, match="relabel needs learning='online'"):
        SchedulerConfig.from_options({"classifier": "rf", "learning": "decoupled", "relabel": "last-week-median"})
