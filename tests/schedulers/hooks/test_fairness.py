"""Unfair delay and reservation violations (docs/semantics/scheduling.md#metrics), worked out by hand."""

from __future__ import annotations

from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.drivers.local.simulator import simulate
from bftune.workloads.model import JobRecord
from bftune.workloads.synthetic import generate


def fairness(jobs, m, **options):
    cfg = SchedulerConfig.from_options({"fairness": True, **options})
    result = simulate(jobs, m, cfg.build(m))
    return result.report["fairness"], {r.id: r.start for r in result.runs}


def test_spf_head_blocked_by_a_longer_running_job_is_unfairly_delayed():
    # m=2, SPF.  Job 1 (q2, p~100) runs 0..100.  Job 2 (q2, p~10) arrives at 10: it is the
    # head, does not fit, and would fit without job 1, which has lower priority (p~ 100 > 10):
    # unfair from 10 until the next event, 100, when it starts.  Reserved at 100, started at 100.
    jobs = [JobRecord(1, 0, 2, 100, 100), JobRecord(2, 10, 2, 10, 10)]
    f, starts = fairness(jobs, 2, policy="SPF")
    assert starts["0000002"] == 100
    assert f["unfair_delay_total"] == 90 and f["unfair_delay_jobs"] == 1
    assert f["reserved_jobs"] == 1 and f["reservation_violations"] == 0


def test_saf_newcomer_overtakes_a_reserved_job_which_misses_its_reservation_benignly():
    # m=2, SAF.  Job 1 (q2, p~100, area 200) runs 0..100.  Job 2 (q2, p~50, area 100) arrives at 1
    # and is reserved at 100.  Job 3 (q2, p~10, area 20) arrives at 2 and becomes the head: it starts
    # at 100, job 2 at 110 > 100: its reservation is missed by 10 s (the literal count of the metrics), but
    # only a job of higher priority delayed it: the study's benign case, no violation.  Unfair: job 2
    # for 1..2 (job 1 has lower priority), job 3 for 2..100; at 100 job 2 waits behind the
    # higher-priority job 3: fair.
    jobs = [JobRecord(1, 0, 2, 100, 100), JobRecord(2, 1, 2, 50, 50), JobRecord(3, 2, 2, 10, 10)]
    f, starts = fairness(jobs, 2, policy="SAF")
    assert starts == {"0000001": 0, "0000003": 100, "0000002": 110}
    assert f["reservation_missed"] == 1 and f["reservation_missed_max"] == 10
    assert f["reservation_violations"] == 0
    assert f["unfair_delay_total"] == 1 + 98 and f["unfair_delay_jobs"] == 2
    assert f["blocked_jobs"] == 2 and f["backfilled_jobs"] == 0  # jobs 2 (at 1) and 3 (at 2)


def test_each_blocked_job_is_reported_with_its_first_blocked_pass():
    # The SAF scenario above: job 2 is first blocked at 1, job 3 at 2 (and job 2 again at 100: not its first).
    jobs = [JobRecord(1, 0, 2, 100, 100), JobRecord(2, 1, 2, 50, 50), JobRecord(3, 2, 2, 10, 10)]
    cfg = SchedulerConfig.from_options({"fairness": True, "policy": "SAF"})
    per_job = simulate(jobs, 2, cfg.build(2)).report["fairness_jobs"]
    assert per_job["blocked"] == ["0000002", "0000003"]
    assert per_job["blocked_at"] == {"0000002": 1, "0000003": 2}
    assert per_job["blocked_one_pass"] == ["0000002", "0000003"]  # no preemption: every pass is one round
def test_easy_fcfs_never_violates_a_reservation():
    trace = generate(2000, 64, seed=8)
    f, _ = fairness(trace.jobs, trace.max_procs, policy="FCFS")
    assert f["reserved_jobs"] > 50
    assert f["reservation_violations"] == 0
    # Backfilled jobs (later r, lower priority) can still make the head wait unfairly.
    assert f["unfair_delay_total"] > 0


def test_the_monitor_changes_no_decision():
    trace = generate(1500, 64, seed=9)
    for policy in ("SAF", "WFP3"):
        plain = simulate(trace.jobs, 64, SchedulerConfig(policy=policy).build(64))
        watched = simulate(trace.jobs, 64, SchedulerConfig(policy=policy, fairness=True).build(64))
        assert [(r.id, r.start) for r in plain.runs] == [(r.id, r.start) for r in watched.runs]
