"""Hand-built Slurm schedules, worked out on paper from docs/semantics/scheduling.md#slurm.

Jobs are (id, r, q, p, p~) = (id, submit, procs, runtime, walltime); every weight is 0 unless a test says
otherwise (submission order), bf_interval 30 s, bf_resolution 60 s, slurmctld started at time 0.
"""

from __future__ import annotations

import json

import easy_support as H
import pytest
from bftune.experiments.cli.main import main
from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.core.jobs import Job
from bftune.schedulers.core.slurm import SlurmBackfill
from bftune.schedulers.drivers.local.simulator import simulate
from bftune.schedulers.option import ConfigError
from bftune.schedulers.options import OPTIONS


def starts(jobs, m, **options):
    config = SchedulerConfig(scheduler="slurm", **options)
    result = simulate(H.to_records(jobs), m, config.build(m))
    return {seq: start for seq, (start, _) in H.starts_ends(result).items()}


def easy_starts(jobs, m):
    return {seq: start for seq, (start, _) in H.starts_ends(H.run_ours(jobs, m)).items()}


# --- the main scheduler ----------------------------------------------------------------------


def test_main_scheduler_stops_at_the_first_job_that_does_not_fit():
    # m = 4, no backfill.  t=0: 1 (q3) starts.  t=1: 2 (q2) does not fit (1 free): the partition is blocked.
    # t=2: 3 (q1) would fit, but the pass stops at 2.  t=100: 1 ends: 2 and 3 start in order.
    jobs = [(1, 0, 3, 100, 100), (2, 1, 2, 50, 100), (3, 2, 1, 10, 10)]
    assert starts(jobs, 4, scheduler_type="sched/builtin") == {1: 0, 2: 100, 3: 100}


def test_main_scheduler_tries_default_queue_depth_plus_one_jobs_then_the_full_queue_pass():
    # m = 4, no backfill, default_queue_depth 1: a pass at an event tries 2 jobs.  t=100: 1 ends; 2 and 3
    # start, 4 is not tried; the next full-queue pass (sched_interval 60: at 120) starts it.
    jobs = [(1, 0, 4, 100, 100), (2, 1, 1, 1000, 1000), (3, 2, 1, 1000, 1000), (4, 3, 1, 1000, 1000)]
    assert starts(jobs, 4, scheduler_type="sched/builtin", default_queue_depth=1) == {1: 0, 2: 100, 3: 100, 4: 120}
    assert starts(jobs, 4, scheduler_type="sched/builtin") == {1: 0, 2: 100, 3: 100, 4: 100}


def test_priority_decides_which_job_the_main_scheduler_tries_first():
    # m = 4.  2 (q4) and 3 (q1) wait for 1.  Submission order: 2 at 100, 3 when 2 ends (160).
    # PriorityFavorSmall: 3 has (4-1)/4 -> 750, 2 has 0 -> 1: 3 starts at 100 and 2 waits for it (100 + 30).
    jobs = [(1, 0, 4, 100, 100), (2, 1, 4, 60, 60), (3, 2, 1, 30, 30)]
    assert starts(jobs, 4, scheduler_type="sched/builtin") == {1: 0, 2: 100, 3: 160}
    assert starts(jobs, 4, scheduler_type="sched/builtin", priority_weight_job_size=1000,
                  priority_favor_small=True) == {1: 0, 3: 100, 2: 130}


# --- backfill passes ---------------------------------------------------------------------------


def test_backfill_pass_every_bf_interval_starts_a_job_that_fits_before_the_reservations():
    # m = 4.  t=0: 1 (q3, p~100) starts.  t=1: 2 (q2) blocked.  t=2: 3 (q1, p~10) waits: the main
    # scheduler stopped at 2.  First backfill pass: bf_interval after slurmctld's start, t=30: 2 gets
    # the earliest start 100, reserved from 60 (rounded down); 3 fits in [30, 40) before it: starts at 30.
    jobs = [(1, 0, 3, 100, 100), (2, 1, 2, 50, 100), (3, 2, 1, 10, 10)]
    assert starts(jobs, 4) == {1: 0, 2: 100, 3: 30}
    # EASY backfills 3 at once (t=2): Slurm's pass comes up to bf_interval later
    assert easy_starts(jobs, 4) == {1: 0, 2: 100, 3: 2}
    assert starts(jobs, 4, bf_interval=10) == {1: 0, 2: 100, 3: 10}


def test_a_pass_comes_at_once_after_a_quiet_time():
    # m = 4.  Passes at 30 (after the events at 0 and 1); nothing changes until 500, when 3 comes: it is
    # more than bf_interval since the last pass, so a pass runs at 500 and starts it (2's reservation is
    # from 960 on: floor(1000 / 60) * 60).
    jobs = [(1, 0, 3, 1000, 1000), (2, 1, 4, 50, 100), (3, 500, 1, 10, 10)]
    assert starts(jobs, 4) == {1: 0, 2: 1000, 3: 500}


def test_a_job_that_would_delay_a_reservation_waits():
    # m = 4.  3 (q1, p~1000) would run past 2's start (100): it is reserved after 2, not started at 30.
    jobs = [(1, 0, 3, 100, 100), (2, 1, 4, 50, 100), (3, 2, 1, 10, 1000)]
    assert starts(jobs, 4) == {1: 0, 2: 100, 3: 150}


def test_a_job_ending_exactly_at_a_reservation_start_conflicts_with_it():
    # m = 4, bf_resolution 1.  2 (q4) is reserved at 100.  3 (q1) at 30 with p~70 would end at 100, the
    # reservation's start: backfill.c's slot test is inclusive (begin_time <= end_time), so it waits (EASY
    # allows the equality); with p~69 it starts.
    jobs = [(1, 0, 3, 100, 100), (2, 1, 4, 50, 100), (3, 2, 1, 70, 70)]
    assert starts(jobs, 4, bf_resolution=1) == {1: 0, 2: 100, 3: 150}
    jobs[2] = (3, 2, 1, 69, 69)
    assert starts(jobs, 4, bf_resolution=1) == {1: 0, 2: 100, 3: 30}


def test_bf_resolution_rounds_the_reservation_start_down():
    # m = 4.  2 (q2) starts at 100 at the earliest.  Resolution 60: its reservation holds from 60, so 3
    # (q1, p~40: [30, 70)) cannot start at 30 on the free processor; resolution 1: it holds from 100 and
    # 3 fits before it.
    jobs = [(1, 0, 3, 100, 100), (2, 1, 2, 100, 100), (3, 2, 1, 40, 40)]
    assert starts(jobs, 4) == {1: 0, 2: 100, 3: 100}
    assert starts(jobs, 4, bf_resolution=1) == {1: 0, 2: 100, 3: 30}


def test_a_job_beyond_bf_window_gets_no_reservation():
    # m = 4.  2 (q4) can start at 7200 when 1 ends.  bf_window 1 day: 2 is reserved there, and 3
    # (q1, p~10000) cannot start at 30; it starts when 2 ends.  bf_window 1 hour: 7200 is beyond it,
    # 2 gets no reservation, 3 starts at 30 and 2 waits for it (30 + 10000).
    jobs = [(1, 0, 3, 7200, 7200), (2, 1, 4, 100, 100), (3, 2, 1, 10000, 10000)]
    assert starts(jobs, 4) == {1: 0, 2: 7200, 3: 7300}
    assert starts(jobs, 4, bf_window="1h") == {1: 0, 2: 10030, 3: 30}


def test_bf_max_job_test_one_tests_the_first_waiting_job_only():
    # The backfill pass tests the first job in priority order (2, blocked) and stops: 3 is never backfilled,
    # as with the main scheduler alone.
    jobs = [(1, 0, 3, 100, 100), (2, 1, 2, 50, 100), (3, 2, 1, 10, 10)]
    assert starts(jobs, 4, bf_max_job_test=1) == starts(jobs, 4, scheduler_type="sched/builtin") == {
        1: 0, 2: 100, 3: 100}
    assert starts(jobs, 4, bf_max_job_test=2) == {1: 0, 2: 100, 3: 30}


def test_reservations_for_many_jobs_not_only_the_first():
    # m = 4, bf_resolution 1.  t=0: 1 (q2) starts.  2 (q3), 3 (q4), 4 (q1, p~500) wait.
    # EASY reserves for 2 only (shadow 100, one extra processor) and backfills 4 at 3, so 3 waits for 4 (503).
    # Slurm: at 100, 2 starts; the pass then reserves 3 at 200 (when 2 ends) and 4, which would run into that
    # reservation, waits until 3 has run (300).
    jobs = [(1, 0, 2, 100, 100), (2, 1, 3, 100, 100), (3, 2, 4, 100, 100), (4, 3, 1, 500, 500)]
    assert easy_starts(jobs, 4) == {1: 0, 2: 100, 3: 503, 4: 3}
    assert starts(jobs, 4, bf_resolution=1) == {1: 0, 2: 100, 3: 200, 4: 300}


def test_the_algorithm_in_words_and_its_protocol():
    algorithm = SchedulerConfig(scheduler="slurm", bf_interval=60, bf_max_job_test=100, bf_window=2 * 86400,
                                bf_resolution=30).build_algorithm()
    assert isinstance(algorithm, SlurmBackfill)
    assert algorithm.describe() == "SLURM(fifo; bf 1m/100/2d/30s)"
    assert algorithm.may_kill is False
    with pytest.raises(TypeError, match="priority"):
        algorithm.use_order(algorithm.priority)
    config = SchedulerConfig(scheduler="slurm", priority_weight_age=1000, priority_flags="small_relative_to_time")
    assert config.describe().startswith("SLURM(age=1000,maxage=1w")


def test_the_settings_are_the_option_tables_defaults_unless_given():
    # The settings classes hold no defaults of their own: SchedulerConfig fills each field from the table.
    algorithm = SchedulerConfig(scheduler="slurm", bf_window="2d").build_algorithm()
    assert isinstance(algorithm, SlurmBackfill)
    b, s = algorithm.backfill, algorithm.settings
    assert (b.enabled, s.basic, s.fair_tree, s.small_relative_to_time) == (True, False, True, False)
    assert b.window == 2 * 86400
    names = ("bf_interval", "bf_max_job_test", "bf_resolution", "default_queue_depth", "sched_interval",
             "priority_weight_age", "priority_weight_job_size", "priority_weight_fairshare",
             "priority_weight_partition", "priority_weight_qos", "priority_max_age", "priority_favor_small",
             "priority_decay_half_life", "priority_calc_period", "node_cpus")
    assert (b.interval, b.max_job_test, b.resolution, b.queue_depth, b.sched_interval, s.weight_age,
            s.weight_job_size, s.weight_fairshare, s.weight_partition, s.weight_qos, s.max_age, s.favor_small,
            s.decay_half_life, s.calc_period, s.node_cpus) == tuple(OPTIONS[name].default for name in names)


def test_expected_start_is_the_reservation_of_the_pass():
    core = SchedulerConfig(scheduler="slurm", bf_resolution=1).build(4)
    core.submit(Job("1", 1, 0, 3, 100), 0)
    core.decide(0)
    core.submit(Job("2", 2, 1, 4, 100), 1)
    core.submit(Job("3", 3, 2, 1, 500), 2)
    core.decide(2)
    core.decide(30)
    head = core.queue.jobs["2"]
    assert core.algorithm.expected_start(core, head, 30) == 100
    assert core.algorithm.reservations == {"2": 100, "3": 200}


# --- options -----------------------------------------------------------------------------------


def test_slurm_options_need_the_slurm_scheduler_and_easy_options_refuse_it():
    with pytest.raises(ConfigError, match="bf_window needs scheduler='slurm'"):
        SchedulerConfig(bf_window="2d")
    for option in ({"policy": "SPF"}, {"threshold": "40h"}, {"predictor": "last"}, {"reservation": "machines"},
                   {"selector": "bandit"}):
        with pytest.raises(ConfigError, match="needs"):
            SchedulerConfig(scheduler="slurm", **option)
    with pytest.raises(ConfigError, match="bf_interval needs scheduler_type"):
        SchedulerConfig(scheduler="slurm", scheduler_type="sched/builtin", bf_interval=10)
    with pytest.raises(ConfigError, match="priority_weight_age needs priority_type"):
        SchedulerConfig(scheduler="slurm", priority_type="priority/basic", priority_weight_age=10)


def test_slurm_values_slurm_cannot_be_given_are_refused():
    with pytest.raises(ConfigError, match="whole minutes"):
        SchedulerConfig(scheduler="slurm", bf_window=90)
    with pytest.raises(ConfigError, match="MAX_TRES is not modelled"):
        SchedulerConfig(scheduler="slurm", priority_flags="MAX_TRES")
    config = SchedulerConfig(scheduler="slurm", priority_favor_small="YES", priority_flags=["no_fair_tree"])
    assert config.priority_favor_small is True and config.priority_flags == ("NO_FAIR_TREE",)


# --- end to end ----------------------------------------------------------------------------------


def test_simulate_scheduler_slurm_end_to_end(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["simulate", "--synthetic", "300", "--scheduler", "slurm", "--priority-weight-age", "1000",
                 "--priority-weight-fairshare", "5000", "--priority-weight-job-size", "500",
                 "--priority-favor-small", "--bf-window", "2d", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["jobs"] == 300
    assert summary["config"]["algorithm"].startswith("SLURM(age=1000,size=500,fs=5000")
    assert summary["config"]["bf_window"] == "2d" and "policy" not in summary["config"]
    assert "SLURM(" in capsys.readouterr().out


# --- variants on a synthetic workload ----------------------------------------------------------------


def _synthetic(n=400, m=64):
    from bftune.workloads.synthetic import generate
    return generate(n, m, 3).jobs, m


def _schedule(jobs, m, **options):
    config = SchedulerConfig(scheduler="slurm", **options)
    result = simulate(jobs, m, config.build(m))
    return H.starts_ends(result), result


def test_priority_basic_orders_as_multifactor_with_every_weight_zero_without_its_ticks():
    # Both order by submission.  multifactor's recalculation every PriorityCalcPeriod counts as a change for
    # the backfill agent, so it passes at the ticks too; basic has no decay thread and passes after events only.
    jobs = [(1, 0, 3, 100, 100), (2, 1, 2, 50, 100), (3, 2, 1, 10, 10)]
    assert starts(jobs, 4, priority_type="priority/basic") == starts(jobs, 4) == {1: 0, 2: 100, 3: 30}
    # m = 4: 2 (q4) is reserved at 1000 by the pass at 30, which neither starts a job nor pushes one past a
    # reservation: no more work.  The tick at 300 is more work for multifactor: it passes at 300, so 3 (q1,
    # p~10), arriving at 310, waits for the pass at 330; basic's last pass is at 30 and 3 starts at once.
    jobs = [(1, 0, 3, 1000, 1000), (2, 1, 4, 100, 100), (3, 310, 1, 10, 10)]
    assert starts(jobs, 4, priority_type="priority/basic") == {1: 0, 2: 1000, 3: 310}
    assert starts(jobs, 4) == {1: 0, 2: 1000, 3: 330}


def test_a_pass_that_pushes_a_start_past_a_reservation_is_followed_by_another():
    # m = 4.  The pass at 290 (3's arrival) reserves 2 at 1000 and 3 (q1, p~2000) after 2: a start pushed
    # past a reservation, more work for Slurm's agent: the next pass comes at 320, and 4 (q1, p~10), arriving
    # at 325, waits for the one at 350.
    jobs = [(1, 0, 3, 1000, 1000), (2, 1, 4, 100, 100), (3, 290, 1, 2000, 2000), (4, 325, 1, 10, 10)]
    assert starts(jobs, 4, priority_type="priority/basic") == {1: 0, 2: 1000, 3: 1100, 4: 350}


def test_weights_change_the_schedule_and_every_job_runs_once():
    jobs, m = _synthetic()
    plain, _ = _schedule(jobs, m)
    for options in ({"priority_weight_fairshare": 10000},
                    {"priority_weight_fairshare": 10000, "priority_flags": "NO_FAIR_TREE"},
                    {"priority_weight_age": 1000, "priority_weight_job_size": 1000, "priority_favor_small": True},
                    {"priority_weight_job_size": 1000, "priority_flags": "SMALL_RELATIVE_TO_TIME"}):
        weighted, _ = _schedule(jobs, m, **options)
        assert len(weighted) == len(jobs), options
        assert weighted != plain, options
    # age alone keeps submission order (the older, the higher; capped ones tie and go by submission)
    assert _schedule(jobs, m, priority_weight_age=1000, priority_max_age="1h")[0] == plain


def test_fairness_metrics_read_slurms_priority_and_reservations():
    jobs, m = _synthetic()
    _, result = _schedule(jobs, m, priority_weight_job_size=1000, fairness=True)
    fairness = result.report["fairness"]
    assert fairness["blocked_jobs"] > 0
