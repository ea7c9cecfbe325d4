"""Slurm's multifactor priority against values worked out by hand from the formulas of
docs/semantics/scheduling.md#slurm (priority/multifactor of Slurm 22.05)."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.core.jobs import Job
from bftune.schedulers.core.slurm import SlurmBackfill
from bftune.schedulers.core.slurm_priority import (MAX_PRIORITY, FairShare, PrioritySettings, age_factor,
                                                   classic_fs_factor, fresh_priority, job_priority, job_size_factor,
                                                   ticks_between, time_limit_minutes)


def settings(**options) -> PrioritySettings:
    """slurm.conf's priority keys with these options (``priority_weight_age=...``), the others the table's."""
    algorithm = SchedulerConfig(scheduler="slurm", **options).build_algorithm()
    assert isinstance(algorithm, SlurmBackfill)
    return algorithm.settings


# --- age ---------------------------------------------------------------------------------------


def test_age_grows_linearly_up_to_max_age_then_stays_one():
    assert age_factor(3600, 7200) == 0.5
    assert age_factor(7199, 7200) == 7199 / 7200
    assert age_factor(7200, 7200) == 1.0
    assert age_factor(10 * 86400, 7200) == 1.0


def test_age_counts_whole_seconds_and_never_below_zero():
    assert age_factor(0.9, 100) == 0.0  # Slurm's times are integers: 0 whole seconds waited
    assert age_factor(10.7, 100) == 0.1
    assert age_factor(-5, 100) == 0.0


def test_age_with_max_age_zero_is_one():
    assert age_factor(0, 0) == 1.0  # diff < max_age never holds


# --- job size ----------------------------------------------------------------------------------


def test_job_size_favouring_large_is_the_share_of_the_machine():
    # (nodes share + cpus share) / 2 with one processor per node: 32/128
    assert job_size_factor(32, 128, 3600, favor_small=False, relative=False) == 0.25
    assert job_size_factor(128, 128, 3600, favor_small=False, relative=False) == 1.0


def test_job_size_favouring_small_is_the_share_left():
    # ((128 - 32) / 128 + (128 - 32) / 128) / 2 = 0.75: (m - q) / m, not (m - q + 1) / m
    assert job_size_factor(32, 128, 3600, favor_small=True, relative=False) == 0.75
    assert job_size_factor(128, 128, 3600, favor_small=True, relative=False) == 0.0
    assert job_size_factor(1, 4, 60, favor_small=True, relative=False) == 0.75


def test_small_relative_to_time_divides_by_the_limit_in_minutes():
    # q / minutes / m: 32 / 60 / 128
    assert job_size_factor(32, 128, 3600, favor_small=False, relative=True) == pytest.approx(32 / 60 / 128)
    assert job_size_factor(32, 128, 3600, favor_small=True, relative=True) == pytest.approx(1 - 32 / 60 / 128)
    # a limit of 61 s is 2 minutes for Slurm; of 1 s, 1 minute: a whole-machine minute job has factor 1
    assert job_size_factor(128, 128, 61, favor_small=False, relative=True) == 0.5
    assert job_size_factor(128, 128, 1, favor_small=False, relative=True) == 1.0


def test_time_limits_are_whole_minutes_rounded_up():
    assert [time_limit_minutes(w) for w in (1, 60, 61, 3600)] == [1, 1, 2, 60]


# --- the sum, truncated ------------------------------------------------------------------------


def test_priority_is_the_weighted_sum_truncated():
    s = settings(priority_weight_age=1000, priority_weight_fairshare=2000, priority_weight_job_size=500)
    # 0.9999 * 1000 + 0.5 * 2000 + 0.25 * 500 = 999.9 + 1000 + 125 = 2124.9 -> 2124
    assert job_priority(s, 0.9999, 0.5, 0.25) == 2124


def test_priority_is_at_least_one_and_at_most_32_bits():
    assert job_priority(settings(), 1.0, 1.0, 1.0) == 1  # every weight 0: 0, raised to 1
    big = settings(priority_weight_age=2**32 - 1, priority_weight_fairshare=2**32 - 1)
    assert job_priority(big, 1.0, 1.0, 0.0) == MAX_PRIORITY


def test_partition_weight_adds_a_constant_and_qos_nothing():
    s = settings(priority_weight_age=100, priority_weight_partition=1000, priority_weight_qos=5000)
    assert job_priority(s, 0.5, 0.0, 0.0) == 1050


def test_fresh_priority_of_a_job():
    s = replace(settings(priority_weight_age=1000, priority_weight_job_size=1000), max_age=1000)  # not whole minutes
    job = Job("1", 1, submit=100, procs=2, walltime=600)
    # age (400 - 100) / 1000 = 0.3 -> 300; size 2/8 = 0.25 -> 250
    assert fresh_priority(s, None, job, 8, 400) == 550


# --- fair-share --------------------------------------------------------------------------------


def test_usage_decays_by_half_over_the_half_life():
    fs = FairShare(replace(settings(), decay_half_life=100))  # not whole minutes: past the table's check
    fs.add_user(7)
    fs.charge(7, 4, 10)
    df = 1 - 0.693 / 100  # Slurm's decay factor per second
    assert fs.usage(7) == pytest.approx(4 * 10 * df**10)
    fs.decay(100)
    assert fs.usage(7) == pytest.approx(4 * 10 * df**10 * df**100)
    assert df**100 == pytest.approx(0.5, abs=0.002)  # 1 - 0.693/h is the first-order e^(ln(1/2)/h)


def test_no_decay_with_half_life_zero():
    fs = FairShare(settings(priority_decay_half_life=0))
    fs.add_user(1)
    fs.charge(1, 2, 50)
    fs.decay(10**7)
    assert fs.usage(1) == 100


def test_usage_stays_exact_through_long_decays():
    fs = FairShare(settings(priority_decay_half_life=60))
    fs.add_user(1)
    fs.add_user(2)
    fs.charge(1, 1, 1)
    fs.charge(2, 3, 1)
    for _ in range(800):
        fs.decay(60)  # 800 half-lives (2^-800, 1e-241): the scale is renormalised on the way
    assert fs.usage(2) / fs.usage(1) == pytest.approx(3)
    fs.charge(1, 1, 1)  # new usage dwarfs the old
    fs.snapshot()
    assert (fs.factor(1), fs.factor(2)) == (0.5, 1.0)


def test_fair_tree_ranks_users_by_usage_ties_sharing_the_best_rank():
    fs = FairShare(settings(priority_decay_half_life=0))
    for user in (1, 2, 3, 4):
        fs.add_user(user)
    fs.charge(3, 1, 10)
    fs.charge(4, 1, 100)
    fs.snapshot()
    # 4 users: 1 and 2 (no usage) tie at rank 4 -> 4/4; 3 is next: rank 2 (two ranked before) -> 2/4; 4: 1/4
    assert [fs.factor(u) for u in (1, 2, 3, 4)] == [1.0, 1.0, 0.5, 0.25]


def test_fair_tree_reads_the_last_tick_snapshot():
    fs = FairShare(settings(priority_decay_half_life=0))
    fs.add_user(1)
    fs.add_user(2)
    fs.snapshot()
    fs.charge(1, 1, 10)  # a job ended between ticks: counted at the next tick only
    assert fs.factor(1) == fs.factor(2) == 1.0
    fs.snapshot()
    assert (fs.factor(1), fs.factor(2)) == (0.5, 1.0)


def test_classic_fair_share_formula():
    # two users, equal shares (1/2): the one with all usage: norm 1, efctv 1 + 0 -> 2^-(1 / 0.5) = 0.25
    assert classic_fs_factor(10, 10, 2) == 0.25
    # the other: norm 0, efctv 0 + 1 * 1/2 -> 2^-(0.5 / 0.5) = 0.5; and nobody's usage: 0.5 too
    assert classic_fs_factor(0, 10, 2) == 0.5
    assert classic_fs_factor(0, 0, 2) == 0.5
    # a quarter of the usage among 4: efctv 0.25 + 0.75/4 = 0.4375 -> 2^-(0.4375 * 4) = 2^-1.75
    assert classic_fs_factor(1, 4, 4) == 2**-1.75


def test_ticks_fall_on_multiples_of_the_period():
    assert list(ticks_between(299, 900, 300)) == [300, 600, 900]
    assert list(ticks_between(300, 599, 300)) == []


# --- in the core: recomputed at ticks, ties by submission then job number ------------------------


def _core(**options):
    return SchedulerConfig(scheduler="slurm", **options).build(8)


def test_priorities_change_at_priority_calc_period_ticks_only():
    core = _core(priority_weight_age=1000, priority_max_age="1000m", scheduler_type="sched/builtin")
    core.submit(Job("1", 1, submit=0, procs=8, walltime=10**6), 0)
    core.decide(0)
    core.submit(Job("2", 2, submit=10, procs=8, walltime=100), 10)
    core.decide(10)
    prio = core.algorithm.priorities
    assert prio["2"] == 1  # at submission: age 0, raised to 1
    core.decide(299)
    assert prio["2"] == 1  # no tick since
    core.decide(300)
    # tick at 300: waited 290 s of 60000 -> 1000 * 290 / 60000 = 4.83 -> 4
    assert prio["2"] == 4
    core.decide(650)
    assert prio["2"] == int(1000 * 590 / 60000)  # the tick at 600, not 650


def test_equal_priorities_go_by_submission_then_job_number():
    core = _core(priority_weight_job_size=1000, scheduler_type="sched/builtin")
    core.submit(Job("0", 0, submit=0, procs=8, walltime=100), 0)
    core.decide(0)  # the machine is full until 100
    for seq, submit in ((9, 5), (3, 5), (1, 7)):
        core.submit(Job(str(seq), seq, submit=submit, procs=4, walltime=50), submit)
    order = core.queue.ordered(core.algorithm.priority, 10)
    assert [job.seq for job in order] == [3, 9, 1]
    assert len({core.algorithm.priorities[j.id] for j in order}) == 1


def test_higher_priority_first_whatever_the_submission():
    core = _core(priority_weight_job_size=1000, scheduler_type="sched/builtin")
    core.submit(Job("0", 0, submit=0, procs=8, walltime=100), 0)
    core.decide(0)
    core.submit(Job("1", 1, submit=1, procs=2, walltime=50), 1)
    core.submit(Job("2", 2, submit=2, procs=6, walltime=50), 2)
    order = core.queue.ordered(core.algorithm.priority, 2)
    assert [job.seq for job in order] == [2, 1]  # favouring large: 6/8 -> 750 before 2/8 -> 250
    assert math.isclose(core.algorithm.priorities["2"], 750)


def test_job_size_on_nodes_of_several_cpus():
    # one node of 16 CPUs (a job of q <= 16 asks for 1 node): favouring large (1/1 + q/16) / 2
    assert job_size_factor(4, 16, 60, favor_small=False, relative=False, node_cpus=16) == (1 + 4 / 16) / 2
    # 4 nodes of 4: a job of 6 takes 2 nodes: (2/4 + 6/16) / 2; favouring small ((4-2)/4 + (16-6)/16) / 2
    assert job_size_factor(6, 16, 60, favor_small=False, relative=False, node_cpus=4) == (2 / 4 + 6 / 16) / 2
    assert job_size_factor(6, 16, 60, favor_small=True, relative=False, node_cpus=4) == (2 / 4 + 10 / 16) / 2
    # relative to time: max(nodes x average CPUs per node, q) = max(2 x 4, 6) = 8 CPUs over 1 minute, / 16
    assert job_size_factor(6, 16, 60, favor_small=False, relative=True, node_cpus=4) == 8 / 16
