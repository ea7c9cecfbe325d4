"""PV-EASY (docs/semantics/scheduling.md#pv-easy) on hand-built scenarios worked out on paper, and its option rules."""

from __future__ import annotations

import re

import pytest
from bftune.schedulers.config import ConfigError, SchedulerConfig
from bftune.schedulers.core.engine import Core
from bftune.schedulers.core.jobs import EndState, Job
from bftune.schedulers.core.ordering import Order
from bftune.schedulers.core.pveasy import PREEMPTION, PvEasy
from bftune.schedulers.drivers.local.simulator import simulate
from bftune.schedulers.hooks.fairness import FairnessMonitor
from bftune.workloads.model import JobRecord


def J(i, r, q, p, w=None, user=-1):
    return JobRecord(id=i, submit=r, procs=q, runtime=p, walltime=p if w is None else w, user=user)


def run(jobs, m, **options):
    cfg = SchedulerConfig.from_options({"scheduler": "pv-easy", "fairness": True, **options})
    return simulate(jobs, m, cfg.build(m))


KILLED = "COMPLETED_KILLED"
OK = "ran"  # ended by itself (a job whose runtime equals its walltime ends as COMPLETED_WALLTIME_REACHED)


def runs(result) -> dict:
    """{run id: (start, end, KILLED or OK, machines)}."""
    return {r.id: (r.start, r.end, KILLED if r.state == KILLED else OK,
                   [i for a, b in r.alloc for i in range(a, b + 1)]) for r in result.runs}


def test_preemption_kills_lowest_priority_first_and_stops_as_soon_as_the_head_fits():
    # m=10, FCFS.  Job 1 (q6) runs 0..100.  Job 2 (q8) is blocked at 1, reserved at 100 (job 1, sunny).
    # Jobs 3, 4, 5 (q2, q1, q1, long) cannot end by 100: the venture step starts them on the idle
    # processors (shadow load: job 2 waits with higher priority).  At 100 job 1 ends: 6 free, job 2
    # needs 8, the shadow load holds 4: kill 5 (7 free), then 4 (8 free) and stop - job 3 survives.
    # The acknowledgement (same instant) starts job 2 on the freed machines; the reruns 4#1 and 5#1
    # keep r = 3 and 4 and wait behind nothing of lower priority until job 2 ends at 150.
    jobs = [J(1, 0, 6, 100), J(2, 1, 8, 50), J(3, 2, 2, 1000), J(4, 3, 1, 1000), J(5, 4, 1, 1000)]
    got = runs(run(jobs, 10))
    assert got == {
        "0000001": (0, 100, OK, [0, 1, 2, 3, 4, 5]),
        "0000003": (2, 1002, OK, [6, 7]),
        "0000004": (3, 100, KILLED, [8]),
        "0000005": (4, 100, KILLED, [9]),
        "0000002": (100, 150, OK, [0, 1, 2, 3, 4, 5, 8, 9]),
        "0000004#1": (150, 1150, OK, [0]),
        "0000005#1": (150, 1150, OK, [1]),
    }


def test_no_kill_while_killing_cannot_make_the_head_fit():
    # m=10.  Job 1 (q6) runs 0..1000.  Job 2 needs all 10.  Job 3 (q2, long) is ventured at 2; at 3,
    # job 4 (q1, 10 s) fits and ends (predicted) before job 2's reservation (1000): backfilled.
    # The shadow load (job 3: 2) never makes job 2 fit while job 1 runs: no kill before 1000.
    # At 1000: 8 free + job 3's 2 = 10: job 3 is killed and job 2 starts at once.
    jobs = [J(1, 0, 6, 1000), J(2, 1, 10, 50), J(3, 2, 2, 5000), J(4, 3, 1, 10)]
    result = run(jobs, 10)
    got = runs(result)
    assert got["0000004"][:3] == (3, 13, OK)
    assert got["0000003"][:3] == (2, 1000, KILLED)
    assert got["0000002"][:3] == (1000, 1050, OK)
    assert got["0000003#1"][:3] == (1050, 6050, OK)
    f = result.report["fairness"]
    assert f["strict_fairness_violations"] == 0 and f["reservation_violations"] == 0
    assert f["blocked_jobs"] == 2  # job 2, then the rerun of job 3 (blocked behind job 2 at 1000)


def test_a_backfilled_job_turns_sunny_once_nothing_of_higher_priority_waits():
    # m=10.  Job 1 (q6) 0..100.  Job 2 (q5) blocked at 1 (4 free).  Job 3 (q4, 1000 s) is ventured at 2:
    # shadow, job 2 waits with higher priority.  At 100 job 2 fits in job 1's 6 processors and starts:
    # nothing of higher priority than job 3 waits any more, job 3 is sunny.  Job 4 (q10, r=150) has
    # lower priority than everything running: it cannot preempt job 3 and starts when it ends at 1002.
    jobs = [J(1, 0, 6, 100), J(2, 1, 5, 100), J(3, 2, 4, 1000), J(4, 150, 10, 10)]
    got = runs(run(jobs, 10))
    assert got["0000003"][:3] == (2, 1002, OK)
    assert got["0000002"][:3] == (100, 200, OK)
    assert got["0000004"][:3] == (1002, 1012, OK)
    assert len(got) == 4  # no kill at all


def test_venture_backfilling_nearest_predicted_completion_first_then_priority_order():
    # m=10, exact predictions.  Job 1 (q6) 0..100; job 2 (q8) blocked at 1, reserved at 100.
    # At 2 come job 3 (q3, 90 s), job 4 (q2, 50 s) and job 5 (q2, 500 s); 4 processors are idle.
    # Step 3a (predicted to end by 100, nearest first): job 4 (ends 52) starts; job 3 (92) no
    # longer fits in the 2 left.  Step 3b (priority order, whatever the prediction): job 3 does not
    # fit, job 5 does: it starts.  At 100 job 2 fits without any kill; job 3 waits for job 2.
    jobs = [J(1, 0, 6, 100), J(2, 1, 8, 100), J(3, 2, 3, 90), J(4, 2, 2, 50), J(5, 2, 2, 500)]
    result = run(jobs, 10, predictor="exact")
    got = runs(result)
    assert got["0000004"][:3] == (2, 52, OK)
    assert got["0000005"][:3] == (2, 502, OK)
    assert got["0000002"][:3] == (100, 200, OK)
    assert got["0000003"][:3] == (200, 290, OK)
    assert result.report["fairness"]["backfilled_jobs"] == 2  # jobs 4 and 5


def last_model_scenario():
    # m=10, FCFS, Last Model.  Job 1 (user 1) asks 100 s, runs 10: user 1's ratio is 0.1.
    # Job 2 (user 2, q6, 100 s) runs 20..120.  Job 3 (user 3, q8) is blocked at 21, reserved at 120.
    # Job 4 (user 1, q4, asks 900 s, runs 200) is predicted 0.1 x 900 = 90 s: ends by 112 <= 120, so
    # both schedulers backfill it at 22 - an under-prediction.
    return [J(1, 0, 10, 10, 100, user=1), J(2, 20, 6, 100, user=2), J(3, 21, 8, 50, user=3),
            J(4, 22, 4, 200, 900, user=1)]


def test_easy_with_an_underestimating_predictor_violates_a_reservation():
    # EASY-Last: at 120 job 2 ends (6 free) but job 4 still holds 4 processors past its prediction
    # (it would fit without job 4, of lower priority): job 3 starts only at 222 when job 4 ends.
    # Violation: 222 - 120 = 102 s, slowdown increment 102 / 50.
    cfg = SchedulerConfig.from_options({"predictor": "last", "fairness": True})
    result = simulate(last_model_scenario(), 10, cfg.build(10))
    got = runs(result)
    assert got["0000004"][:2] == (22, 222) and got["0000003"][:2] == (222, 272)
    f = result.report["fairness"]
    assert f["reservation_violations"] == 1 and f["reservation_violation_max"] == 102
    assert result.report["fairness_jobs"]["violations"] == {"0000003": 102}
    assert f["strict_fairness_violations"] == 1 and f["unfair_delay_max"] == 102


def test_pv_easy_with_the_same_prediction_keeps_the_reservation():
    # PV-EASY-Last: the same backfill at 22, but at 120 job 4 is shadow load: it is killed and job 3
    # starts at 120, its reservation.  The rerun 4#1 (r = 22) waits for job 3 and runs 170..370.
    result = run(last_model_scenario(), 10, predictor="last")
    got = runs(result)
    assert got["0000004"][:3] == (22, 120, KILLED)
    assert got["0000003"][:2] == (120, 170)
    assert got["0000004#1"][:2] == (170, 370)
    f = result.report["fairness"]
    assert f["reservation_violations"] == 0 and f["reservation_missed"] == 0
    assert f["strict_fairness_violations"] == 0


def test_a_pass_that_preempts_starts_nothing_and_a_pass_with_kills_in_flight_decides_nothing():
    order = Order.of("FCFS")
    core = Core(4, PvEasy(order))
    a, b, c = Job("0000001", 1, 0.0, 2, 100.0), Job("0000002", 2, 1.0, 2, 100.0), Job("0000003", 3, 2.0, 2, 100.0)
    core.submit(a, 0.0)
    assert [j.id for j in core.decide(0.0).starts] == ["0000001"]
    core.submit(b, 1.0)
    core.submit(c, 1.0)
    d = core.decide(1.0)
    assert [j.id for j in d.starts] == ["0000002"]
    # Job 1 ends; a higher-priority job 0 (r=-1) arrives needing all 4 processors; job 3 waits.
    core.end("0000001", 5.0, EndState.COMPLETED_SUCCESSFULLY)
    head = Job("0000000", 0, -1.0, 4, 100.0)
    core.submit(head, 5.0)
    d = core.decide(5.0)
    assert [k.job.id for k in d.kills] == ["0000002"] and d.kills[0].reason == PREEMPTION
    assert not d.starts  # job 3 fits in the 2 free processors, but they are the head's
    assert not core.decide(5.0)  # kill in flight: nothing more
    rerun = core.end("0000002", 5.0, EndState.COMPLETED_KILLED)
    assert rerun.id == "0000002#1" and rerun.submit == 1.0
    d = core.decide(5.0)
    assert [j.id for j in d.starts] == ["0000000"] and not d.kills


@pytest.mark.parametrize("options, message", [
    ({"scheduler": "pv-easy", "reservation": "machines"}, "reservation needs scheduler='easy'"),
    ({"scheduler": "pv-easy", "backfill_policy": "SPF"}, "backfill_policy needs scheduler='easy'"),
    ({"scheduler": "pv-easy", "backfill": False}, "backfill needs scheduler='easy'"),
    ({"scheduler": "pv-easy", "selector": "full"}, "selector needs scheduler='easy'"),
    ({"scheduler": "pv-easy", "classifier": "rf"}, "classifier needs scheduler='easy'"),
    ({"scheduler": "pveasy"}, "scheduler: expected one of easy, pv-easy"),
    ({"predictor": "virtual:1"}, "X in [0, 1)"),
    ({"predictor": "virtual:-0.1"}, "X in [0, 1)"),
    ({"predictor": "virtual:abc"}, "needs a number X"),
    ({"predictor": "virtual"}, "needs a number X"),
    ({"predictor": "last:2"}, "takes no parameter"),
    ({"predictor": "oracle"}, "unknown predictor 'oracle'"),
    ({"predictor": "last", "backfill": False}, "predictor needs backfilling"),
    ({"predictor": "last", "classifier": "rf"}, "predictor needs no classifier"),
])
def test_misuse_is_an_error_naming_the_option(options, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        SchedulerConfig.from_options(options)


def test_options_build_the_algorithm_and_its_predictor():
    cfg = SchedulerConfig.from_options({"scheduler": "pv-easy", "predictor": "Virtual:0.20", "policy": "spf"})
    assert cfg.predictor == "virtual:0.2" and cfg.describe() == "PV-EASY(SPF) predictor=virtual:0.2"
    assert cfg.needs_dynamic_jobs  # PV-EASY preempts: Batsim needs dynamic jobs
    assert not SchedulerConfig.from_options({"predictor": "last"}).needs_dynamic_jobs
    round_trip = {k: v for k, v in cfg.to_dict().items() if k != "algorithm"}
    assert SchedulerConfig.from_options(round_trip) == cfg


def test_preemption_rounds_at_one_instant_start_every_head_once_all_kills_are_done():
    # m=10, FCFS.  Running: A (r=0, q2), then S1 (r=10, q4), S2 (r=11, q2), S3 (r=12, q2).  At t=5
    # come h (r=1, q3) and h2 (r=2, q4).  Round 1: h needs 3, the shadow load is S1..S3: kill S3 then
    # S2 (4 free >= 3) - nothing starts.  After that acknowledgement h fits (1 left) and h2 is blocked:
    # round 2 kills S1 for it, and still starts nothing.  After the second acknowledgement h and h2
    # both start, at t=5; the reruns wait.  The monitor counts h and h2 as blocked jobs.
    monitor = FairnessMonitor()
    core = Core(10, PvEasy(Order.of("FCFS")), [monitor])
    jobs = {name: Job(f"00000{i:02d}", i, r, q, 100.0) for i, (name, r, q) in
            enumerate([("A", 0.0, 2), ("S1", 10.0, 4), ("S2", 11.0, 2), ("S3", 12.0, 2), ("h", 1.0, 3),
                       ("h2", 2.0, 4)], start=1)}
    ids = {job.id: name for name, job in jobs.items()}
    for name in ("A", "S1", "S2", "S3"):
        core.submit(jobs[name], 0.0)
    assert len(core.decide(0.0).starts) == 4
    core.submit(jobs["h"], 5.0)
    core.submit(jobs["h2"], 5.0)
    d = core.decide(5.0)
    assert [ids[k.job.id] for k in d.kills] == ["S3", "S2"] and not d.starts
    for name in ("S3", "S2"):
        core.end(jobs[name].id, 5.0, EndState.COMPLETED_KILLED)
    d = core.decide(5.0)
    assert [ids[k.job.id] for k in d.kills] == ["S1"] and not d.starts
    core.end(jobs["S1"].id, 5.0, EndState.COMPLETED_KILLED)
    d = core.decide(5.0)
    assert [ids.get(j.id, j.id) for j in d.starts] == ["h", "h2"] and not d.kills
    assert sorted(core.queue.jobs) == ["0000002#1", "0000003#1", "0000004#1"]
    assert {ids[j] for j in monitor.reserved} >= {"h", "h2"}
    # Seen as one pass per instant (the study's), h2 never was the first blocked job.
    assert "h" in {ids[j] for j in monitor.blocked_one_pass} and "h2" not in {ids[j] for j in monitor.blocked_one_pass}
    per_job = monitor.report()["fairness_jobs"]
    assert {ids[j] for j in per_job["blocked_one_pass"]} >= {"h"} and jobs["h2"].id not in per_job["blocked_one_pass"]
    assert per_job["blocked_at"][jobs["h"].id] == per_job["blocked_at"][jobs["h2"].id] == 5.0
