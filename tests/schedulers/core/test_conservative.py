"""Backfilling with k reservations and conservative backfilling (docs/semantics/scheduling.md#conservative).

Hand-built cases state their starts, worked out on paper from the semantics
page; random workloads check that k = 1 is EASY, that k as large as the
workload is ``all``, and that ``all`` with the machines model and FCFS is
batsched 1.4.0's conservative_bf, as transcribed literally in
tests/helpers/reference_conservative.py.

Jobs are (id, r, q, p, p~) = (id, submit, procs, runtime, walltime).
"""

from __future__ import annotations

import math
import random

import easy_support as H
import pytest
import reference_conservative as RC
import reference_easy as REF
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.core.conservative import ALL, Conservative
from bftune.schedulers.core.easy import Easy
from bftune.schedulers.core.engine import Core, Hook
from bftune.schedulers.drivers.local.simulator import simulate


def run(jobs, m, **options):
    cfg = SchedulerConfig(**options)
    return simulate(H.to_records(jobs), m, cfg.build(m))


def starts(result) -> dict:
    return {k: v[0] for k, v in H.starts_ends(result).items()}


def details(result) -> dict:
    return {r.seq: (r.start, r.end, r.state, H.machine_ids(r.alloc)) for r in result.runs}


# --- hand-built cases ---------------------------------------------------------------------


def test_an_early_end_compresses_the_plan_in_queue_order():
    # m = 4, FCFS, every job reserved.
    # t=0: 1 (q4, p~100) starts; it will end at 10.
    # t=1: 2 (q2, p~50): reserved [100, 150).
    # t=2: 3 (q4, p~20): 4 processors from 150 (2 holds two until then): [150, 170).
    # t=3: 4 (q2, p~30): 2 processors free over [100, 130) beside 2, before 3: reserved [100, 130).
    # t=10: 1 ends.  Compression in queue order: 2 fits now -> starts at 10 (ends 60).  3 leaves
    #   [150, 170) and takes the earliest place with 4 processors while 4 still holds [100, 130):
    #   [60, 80).  4 leaves [100, 130): 2 processors over [10, 40), ending before 3 -> starts at 10.
    jobs = [(1, 0, 4, 10, 100), (2, 1, 2, 50, 50), (3, 2, 4, 20, 20), (4, 3, 2, 30, 30)]
    for model in ("count", "machines"):
        result = run(jobs, 4, reservations="all", reservation=model)
        assert H.starts_ends(result) == {1: (0, 10), 2: (10, 60), 3: (60, 80), 4: (10, 40)}, model


# m = 4.  1 (q2) runs [0, 100).  2 (q3, p~10) and 3 (q4, p~10) wait for it; 4 (q1, p~200) would fit
# now on one of the 2 free processors, and 5 (q2, p~50) arrives at t=4.
DEPTH_CASE = [(1, 0, 2, 100, 100), (2, 1, 3, 10, 10), (3, 2, 4, 10, 10), (4, 3, 1, 200, 200),
              (5, 4, 2, 50, 50)]


def test_conservative_never_lets_a_backfilled_job_delay_a_later_reservation():
    # Every job reserved: 2 [100, 110), 3 [110, 120).  At t=3, 4 over [3, 203) would hold a
    # processor that 3 needs at 110: its earliest place is [120, 320).  At t=4, 5 fits now over
    # [4, 54) on the two free processors, delaying nobody: it backfills.
    expected = {1: 0, 2: 100, 3: 110, 4: 120, 5: 4}
    assert starts(run(DEPTH_CASE, 4, reservations="all")) == expected
    # Two reservations (2's and 3's) protect the same jobs here; 4 and 5 are tried at each pass.
    assert starts(run(DEPTH_CASE, 4, reservations=2)) == expected


def test_easy_protects_only_the_first_waiting_job():
    # EASY: head 2, shadow 100, extra 4 - 3 = 1.  At t=3, 4 (q1) takes the extra processor and runs to
    # 203; at t=4, 5 finds 1 free processor.  At 100, 2 starts (3 free); at 110, 2 ends: head 3 waits
    # for 4's end (shadow 203), and 5 fits before it: [110, 160).  3 starts at 203.
    expected = {1: 0, 2: 100, 3: 203, 4: 3, 5: 110}
    assert starts(run(DEPTH_CASE, 4)) == expected
    cfg = SchedulerConfig()
    primary, backfill = cfg.orders()
    as_k1 = simulate(H.to_records(DEPTH_CASE), 4, Core(4, Conservative(primary, backfill, depth=1)))
    assert starts(as_k1) == expected


def test_the_machines_model_pins_a_reservation_to_its_machines():
    # m = 3.  1, 2, 3 (q1) start at 0 on machines 0, 1, 2; 2 ends at 1.
    # t=2: 4 (q2, p~10) is reserved [10, 20): machines 0 and 1, the lowest free then (machines model).
    # t=3: 5 (q1, p~20).  Count model: 1 processor free in [3, 10) and in [10, 20) (3 - 2): it starts
    #   now on machine 1, and at 10 job 4 takes machines 0 and 2.  Machines model: machine 1 is 4's from
    #   10 and machine 2 is busy until 10, so no one machine is free over [3, 23); from 10, machine 2
    #   stays free: 5 starts at 10 on machine 2, 4 at 10 on machines 0 and 1.
    jobs = [(1, 0, 1, 10, 10), (2, 0, 1, 1, 100), (3, 0, 1, 10, 10), (4, 2, 2, 10, 10), (5, 3, 1, 20, 20)]
    count = details(run(jobs, 3, reservations="all", reservation="count"))
    machines = details(run(jobs, 3, reservations="all", reservation="machines"))
    assert {k: v[0] for k, v in count.items()} == {1: 0, 2: 0, 3: 0, 4: 10, 5: 3}
    assert count[5][3] == [1] and count[4][3] == [0, 2]
    assert {k: v[0] for k, v in machines.items()} == {1: 0, 2: 0, 3: 0, 4: 10, 5: 10}
    assert machines[5][3] == [2] and machines[4][3] == [0, 1]


class PlanTenSeconds(Hook):
    """A predictor that plans every job for 10 s (the walltime stays the kill time)."""

    def on_submit(self, core, job, now):
        job.estimate = 10.0


def test_a_running_job_past_its_prediction_keeps_its_machines_to_its_walltime():
    # m = 2, every job reserved, every job planned for 10 s.  1 (q2, p 50, p~100) runs from 0, planned
    # to end at 10.  2 (q2) is reserved at [10, 20).  At 10 nothing ends: the next pass (3's arrival at
    # 20) finds 1 past its plan, re-plans it to its walltime (100) and places 2 again after it, 3 after 2.
    # At 50, 1 really ends: 2 starts then (planned [50, 60)), 3 (q1) after it at 60.
    jobs = [(1, 0, 2, 50, 100), (2, 1, 2, 10, 100), (3, 20, 1, 10, 100)]
    primary, backfill = SchedulerConfig().orders()
    core = Core(2, Conservative(primary, backfill, depth=ALL), hooks=[PlanTenSeconds()])
    assert starts(simulate(H.to_records(jobs), 2, core)) == {1: 0, 2: 50, 3: 60}


def test_describe_names_the_depth_and_the_model():
    assert SchedulerConfig(reservations="all").describe() == "CONS(FCFS)"
    assert SchedulerConfig(reservations="conservative", reservation="machines", policy="SPF").describe() \
        == "CONS[machines](SPF)"
    assert SchedulerConfig(reservations=3).describe() == "EASY[k=3](FCFS)"
    assert SchedulerConfig(reservations=3, reservation="machines", backfill_policy="SPF").describe() \
        == "EASY[k=3,machines](FCFS, SPF)"
    assert SchedulerConfig().describe() == "EASY(FCFS)"
    assert isinstance(SchedulerConfig().build_algorithm(), Easy)
    assert SchedulerConfig(reservations="all").build_algorithm().depth == ALL


def test_a_plan_refuses_what_easy_refuses():
    # The reservation models and the depth are checked when the algorithm is built, not at its first pass.
    primary, backfill = SchedulerConfig().orders()
    for algorithm in (Easy, Conservative):
        with pytest.raises(ValueError, match="unknown reservation model 'slots'; choose one of count, machines"):
            algorithm(primary, backfill, "slots")
    with pytest.raises(ValueError, match="at least 1, got 0"):
        Conservative(primary, backfill, "count", depth=0)


# --- random workloads ---------------------------------------------------------------------


@st.composite
def workloads(draw, max_jobs=30):
    """(m, jobs) with integer times, many same-time arrivals, runtimes below, at and above walltimes."""
    m = draw(st.integers(1, 16))
    n = draw(st.integers(1, max_jobs))
    horizon = draw(st.sampled_from([0, 5, 30, 200]))
    jobs = []
    for k in range(n):
        walltime = draw(st.integers(1, 60))
        runtime = draw(st.sampled_from([draw(st.integers(1, walltime)), walltime, walltime + 7]))
        jobs.append((k + 1, draw(st.integers(0, horizon)), draw(st.integers(1, m)), runtime, walltime))
    return m, jobs


POLICIES = st.sampled_from(REF.POLICIES)
MODELS = st.sampled_from(["count", "machines"])


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(w=workloads(), policy=POLICIES, backfill_policy=st.one_of(st.none(), POLICIES), model=MODELS,
       theta=st.sampled_from([math.inf, 0.0, 10.0]))
def test_one_reservation_kept_in_a_plan_is_easy(w, policy, backfill_policy, model, theta):
    # The plan's single reservation is EASY's shadow time (count) or reserved machines (machines),
    # kept between passes instead of recomputed: every job must start at the same time on the same machines.
    m, jobs = w
    cfg = SchedulerConfig(policy=policy, backfill_policy=backfill_policy, reservation=model, threshold=theta)
    easy = details(simulate(H.to_records(jobs), m, cfg.build(m)))
    primary, backfill = cfg.orders()
    planned = details(simulate(H.to_records(jobs), m, Core(m, Conservative(primary, backfill, model, depth=1))))
    assert planned == easy, H.first_difference(planned, easy, jobs)


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(w=workloads(), policy=POLICIES, model=MODELS)
def test_as_many_reservations_as_jobs_is_all(w, policy, model):
    m, jobs = w
    every = details(run(jobs, m, policy=policy, reservation=model, reservations="all"))
    as_many = details(run(jobs, m, policy=policy, reservation=model, reservations=len(jobs)))
    assert as_many == every, H.first_difference(as_many, every, jobs)


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(w=workloads(max_jobs=40))
def test_machines_model_fcfs_is_batsched_conservative_bf(w):
    m, jobs = w
    ours = details(run(jobs, m, policy="FCFS", reservation="machines", reservations="all"))
    ref = {k: (float(v[0]), float(v[1]), v[2], v[3]) for k, v in RC.simulate_conservative_bf(jobs, m).items()}
    assert ours == ref, H.first_difference(ours, ref, jobs)


def test_a_few_random_workloads_match_batsched_quickly():
    # The fast loop's share of the test above: 40 fixed workloads.
    rng = random.Random(11)
    for _ in range(40):
        m = rng.randint(1, 10)
        jobs = []
        for k in range(rng.randint(1, 25)):
            walltime = rng.randint(1, 40)
            runtime = rng.choice([rng.randint(1, walltime), walltime, walltime + 3])
            jobs.append((k + 1, rng.randint(0, 30), rng.randint(1, m), runtime, walltime))
        ours = details(run(jobs, m, policy="FCFS", reservation="machines", reservations="all"))
        ref = {k: (float(v[0]), float(v[1]), v[2], v[3]) for k, v in RC.simulate_conservative_bf(jobs, m).items()}
        assert ours == ref, H.first_difference(ours, ref, jobs)
