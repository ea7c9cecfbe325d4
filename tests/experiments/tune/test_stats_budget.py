"""The racing test, the bootstrap intervals and the budget plan of ``bftune tune``, on numbers worked by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from bftune.experiments.tune import budget as bud
from bftune.experiments.tune.stats import bootstrap_ci, one_sided_p, race, ratio


def test_ratios_follow_study_000s_rule_for_empty_weeks():
    r = ratio(np.array([5.0, 0.0, 3.0, 2.0]), np.array([10.0, 0.0, 0.0, 4.0]))
    assert r[0] == 0.5 and r[1] == 1.0 and math.isnan(r[2]) and r[3] == 0.5


def test_the_one_sided_t_test_by_hand():
    d = np.array([1.0, 2.0, 3.0, 4.0])  # mean 2.5, sd 1.291, t = 3.873 on 3 degrees of freedom
    assert one_sided_p(d) == pytest.approx(0.015225, abs=2e-5)
    assert one_sided_p(-d) == pytest.approx(1 - 0.015225, abs=2e-5)
    assert one_sided_p(np.zeros(5)) == 1.0 and one_sided_p(np.full(5, 0.1)) == 0.0  # no variance
    assert one_sided_p(np.array([1.0])) == 1.0


def test_race_drops_the_clearly_worse_keeps_the_close_and_honours_the_limit():
    rng = np.random.default_rng(3)
    week = rng.uniform(0.6, 1.2, 16)  # a week's own difficulty, shared by every candidate (paired)
    ratios = {"best": week * 0.80, "close": week * 0.80 + rng.normal(0, 0.01, 16),
              "worse": week * 0.95, "wild": week * 0.70}
    max_ratios = {"best": np.full(16, 1.0), "close": np.full(16, 1.0), "worse": np.full(16, 1.0),
                  "wild": np.full(16, 2.0)}
    leader, dropped = race(ratios, max_ratios, None)
    assert leader == "wild" and set(dropped) == {"best", "close", "worse"}  # without a limit, the lowest leads
    leader, dropped = race(ratios, max_ratios, 0.10)
    assert leader == "best"
    assert set(dropped) == {"worse", "wild"} and "close" not in dropped
    assert dropped["worse"].reason == "worse" and dropped["wild"].reason == "max_wait"
    assert dropped["worse"].level == pytest.approx(0.05 / 3) and dropped["worse"].p < dropped["worse"].level


def test_bootstrap_interval_covers_the_mean_and_narrows_with_weeks():
    rng = np.random.default_rng(0)
    few, many = rng.normal(0.8, 0.1, 10), rng.normal(0.8, 0.1, 400)
    lo, hi = bootstrap_ci(few, seed=1)
    assert lo < few.mean() < hi
    lo2, hi2 = bootstrap_ci(many, seed=1)
    assert hi2 - lo2 < (hi - lo) / 3  # about 1/sqrt(40) as wide
    assert bootstrap_ci(few, seed=1) == bootstrap_ci(few, seed=1)  # seeded
    assert bootstrap_ci(np.array([0.7, math.nan]), seed=1) == (0.7, 0.7)


def model(per_week: float = 0.01) -> bud.CostModel:
    # 100 jobs a week at per_week / 100 s a job: per_week seconds per candidate-week, one worker, no start-up
    return bud.CostModel({"pairs": per_week / 100, "baseline": per_week / 100}, {"train": 100.0, "test": 100.0},
                         workers=1, read_s=0.0, resample_s_per_week=0.0)


def test_stages_double_from_eight_weeks():
    assert bud.stages_for(250) == [8, 16, 32, 64, 128, 250]
    assert bud.stages_for(8) == [8] and bud.stages_for(5) == [5] and bud.stages_for(9) == [8, 9]


def test_a_large_budget_runs_every_candidate_every_week():
    plan = bud.make_plan(model(), [0.01] * 49, [0.01] * 49, 0.01, 0.01, budget_s=3600, max_weeks=250, finalists=3)
    assert plan.weeks == 250 and not plan.halving
    # by hand: 49 candidates + the baseline on 250 training weeks, 3 finalists + the baseline on 250 testing
    work = (49 + 1) * 250 * 0.01 + (3 + 1) * 250 * 0.01
    assert plan.estimate_s == pytest.approx(model().wall(work, 250, len(plan.stages) + 1))


def test_a_smaller_budget_halves_the_candidates_and_the_weeks_fit_it():
    # every candidate on every week would take 135 s; halving after each stage, 250 weeks take 37 s
    plan = bud.make_plan(model(), [0.01] * 49, [0.01] * 49, 0.01, 0.01, budget_s=20, max_weeks=250, finalists=3)
    assert plan.halving and 8 <= plan.weeks < 250 and plan.estimate_s <= 20
    wider = bud.make_plan(model(), [0.01] * 49, [0.01] * 49, 0.01, 0.01, budget_s=28, max_weeks=250, finalists=3)
    assert wider.weeks > plan.weeks


def test_a_budget_too_small_to_judge_anything_says_what_would_do():
    with pytest.raises(bud.BudgetError, match="too small to judge anything: all 49 candidates on 8 training weeks"):
        bud.make_plan(model(1.0), [1.0] * 49, [1.0] * 49, 1.0, 1.0, budget_s=30, max_weeks=250, finalists=3)
    plan = bud.make_plan(model(1.0), [1.0] * 49, [1.0] * 49, 1.0, 1.0, budget_s=30, max_weeks=250, finalists=3,
                         at_least=True)
    assert plan.weeks == 8 and plan.notes


def test_without_halving_every_survivor_goes_on_while_the_rest_fits():
    plan = bud.make_plan(model(), [0.01] * 20, [0.01] * 20, 0.01, 0.01, budget_s=3600, max_weeks=64, finalists=3)
    assert not plan.halving
    assert bud.next_stage(model(), plan, 8, [0.01] * 12, spent_s=2.0) == (12, 64)


def test_with_halving_the_better_half_goes_on_and_saved_budget_buys_weeks():
    plan = bud.make_plan(model(), [0.01] * 40, [0.01] * 40, 0.01, 0.01, budget_s=12, max_weeks=250, finalists=3)
    assert plan.halving and plan.weeks < 250
    spent = plan.setup_s + model().wall((40 + 1) * 8 * 0.01, plan.weeks, 1)  # the first stage, as estimated
    keep, weeks = bud.next_stage(model(), plan, 8, [0.01] * 20, spent)  # the racing test kept 20 of 40
    assert keep == 10 and weeks >= plan.weeks  # half go on; the candidates the test dropped buy weeks
    keep_few, weeks_few = bud.next_stage(model(), plan, 8, [0.01] * 4, spent)  # the test kept only 4
    assert keep_few == 3 and weeks_few > weeks
    assert bud.next_stage(model(), plan, 8, [0.01] * 20, spent_s=12.0) == (3, 8)  # nothing left: stop training


def test_our_student_tail_is_scipys():
    stats = pytest.importorskip("scipy.stats")
    from bftune.experiments.tune.stats import student_sf

    for df in (1, 2, 7, 15, 63, 249, 1000):
        for t in (-4.0, -0.5, 0.0, 0.3, 1.7, 3.873, 9.0, 30.0):
            assert student_sf(t, df) == pytest.approx(float(stats.t.sf(t, df)), rel=1e-9, abs=1e-300)


def test_when_every_survivor_fits_every_week_none_is_dropped_by_the_budget():
    plan = bud.make_plan(model(), [0.01] * 40, [0.01] * 40, 0.01, 0.01, budget_s=30, max_weeks=250, finalists=3)
    assert plan.halving
    spent = plan.setup_s + model().wall((40 + 1) * 8 * 0.01, plan.weeks, 1)
    # the racing test left 4: all four to --weeks fit what is left, so the planned halving is not needed
    assert bud.next_stage(model(), plan, 8, [0.001] * 4, spent) == (4, 250)


def test_when_more_than_half_fit_every_week_the_most_that_fit_go_on():
    """HPC2N at 1 min halved 24 to 12 where 22 fitted, then ended with 41 % of the budget unspent."""
    plan = bud.make_plan(model(), [0.01] * 40, [0.01] * 40, 0.01, 0.01, budget_s=60, max_weeks=250, finalists=3)
    assert plan.halving  # not all 40 fit
    spent = plan.setup_s + model().wall((40 + 1) * 8 * 0.01, plan.weeks, 1)
    left = plan.budget_s - plan.finish_s - spent

    def rest(m: int) -> float:  # what next_stage estimates for m survivors to the cap, no halving
        return (bud._estimate(model(), 250, m, 3, False, 0.01, 0.01, 0.01, 0.01, done=8) - model().read_s
                - model().resample_s_per_week * 250)

    survivors = next(n for n in range(4, 41) if rest(n) > left)  # the fewest survivors that no longer all fit
    assert rest(bud.halving(survivors, 3, 1)) <= left  # half of them would fit: room between half and all
    keep, weeks = bud.next_stage(model(), plan, 8, [0.01] * survivors, spent)
    assert weeks == 250 and bud.halving(survivors, 3, 1) < keep < survivors
    assert rest(keep) <= left < rest(keep + 1)  # the most that fit, not half


def test_a_slower_pace_than_estimated_buys_fewer_weeks():
    plan = bud.make_plan(model(), [0.01] * 40, [0.01] * 40, 0.01, 0.01, budget_s=12, max_weeks=250, finalists=3)
    spent = plan.setup_s + model().wall((40 + 1) * 8 * 0.01, plan.weeks, 1)
    keep, weeks = bud.next_stage(model(), plan, 8, [0.01] * 20, spent, pace_now=1.0)
    keep_slow, weeks_slow = bud.next_stage(model(), plan, 8, [0.01] * 20, spent, pace_now=2.0)
    assert keep_slow <= keep and weeks_slow < weeks
    assert bud.pace(30.0, 10.0) == 3.0 and bud.pace(100.0, 1.0) == bud.PACE_BOUNDS[1]
    assert bud.pace(1.0, 10.0) == bud.PACE_BOUNDS[0] and bud.pace(5.0, 0.0) == 1.0


def test_what_runs_after_the_race_is_kept_aside_from_the_budget():
    plain = bud.make_plan(model(), [0.01] * 49, [0.01] * 49, 0.01, 0.01, budget_s=20, max_weeks=250, finalists=3)
    kept = bud.make_plan(model(), [0.01] * 49, [0.01] * 49, 0.01, 0.01, budget_s=20, max_weeks=250, finalists=3,
                         finish_s=5.0)
    assert kept.weeks < plain.weeks and kept.estimate_s <= 20 and kept.finish_s == 5.0
    spent = kept.setup_s + model().wall((49 + 1) * 8 * 0.01, kept.weeks, 1)
    assert bud.next_stage(model(), kept, 8, [0.01] * 20, spent)[1] > 8  # as planned: training goes on
    # 15.5 s spent: what is left before the 5 s kept aside holds no further stage, though the budget would
    assert bud.next_stage(model(), kept, 8, [0.01] * 20, spent_s=15.5) == (3, 8)
    assert bud.next_stage(model(), plain, 8, [0.01] * 20, spent_s=15.5)[1] > 8
