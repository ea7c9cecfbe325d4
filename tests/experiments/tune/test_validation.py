"""tune's validation period (issue 39): an interval for a later period from real weeks, the gain on the
held-out part of the log as it happened, and no change recommended when either does not support one."""

from __future__ import annotations

import json

import numpy as np
import pytest
from bftune.experiments.cli.main import main
from bftune.experiments.tune import validation
from bftune.experiments.tune.weeks import OBJECTIVES
from bftune.schedulers.config import SchedulerConfig
from bftune.workloads.synthetic import generate


def _weeks(waits: list[float], jobs: int = 10) -> np.ndarray:
    out = np.zeros((len(waits), 6))
    out[:, 0], out[:, 4], out[:, 5] = np.array(waits) * jobs, jobs, waits
    out[:, 1], out[:, 2], out[:, 3] = jobs, jobs, jobs
    return out


def _period_gains(c: np.ndarray, b: np.ndarray, objective: str, length: int, seed: int) -> np.ndarray:
    """The gains of validation.DRAWS periods of ``length`` weeks drawn as tune draws them."""
    index = validation.draw_weeks(len(c), length, validation.DRAWS, np.random.default_rng(seed))
    return validation.drawn_gains(c, b, objective, index)


def test_weeks_with_one_gain_give_that_gain_whatever_is_drawn():
    c, b = _weeks([50, 100, 20, 80, 40]), _weeks([100, 200, 40, 160, 80])
    gains = _period_gains(c, b, "avg_wait", 3, seed=1)
    assert len(gains) == validation.DRAWS and np.allclose(gains, 0.5)


def test_the_interval_spreads_with_the_weeks_and_blocks_keep_neighbours_together():
    c = _weeks([100, 100, 100, 100, 10, 10, 10, 10])  # a good month, then a very good one
    b = _weeks([100] * 8)
    one_week = _period_gains(c, b, "avg_wait", 1, seed=2)
    assert set(np.round(one_week, 6)) == {0.0, 0.9}
    four = _period_gains(c, b, "avg_wait", 4, seed=2)
    assert four.min() == pytest.approx(0.0) and four.max() == pytest.approx(0.9)  # whole blocks: 0 and 0.9 occur
    assert _period_gains(c, b, "max_wait", 2, seed=3).max() == pytest.approx(0.9)


def test_a_log_of_one_gain_predicts_that_gain_and_nothing_around_it():
    c, b = _weeks([50, 100, 20, 80, 40, 60]), _weeks([100, 200, 40, 160, 80, 120])
    assert validation.bootstrap_offsets(c, b, "avg_wait", 4, seed=1) == (0.0, 0.0)


def test_the_prediction_counts_the_logs_own_uncertainty():
    rng = np.random.default_rng(5)
    b = _weeks([100.0] * 12)
    c = _weeks(list(rng.uniform(40, 100, 12)))
    low, high = validation.bootstrap_offsets(c, b, "avg_wait", 12, seed=2)
    plain = _period_gains(c, b, "avg_wait", 12, seed=2)
    estimate = float(validation.period_objective_gain(c.sum(axis=0), b.sum(axis=0), "avg_wait"))
    plain_low, plain_high = np.quantile(plain, (0.05, 0.95))
    # a later period as long as the log: the spread of the difference of two draws, wider than one draw's
    assert low < 0 < high and high - low > (plain_high - plain_low) * 1.2
    assert plain_low < estimate < plain_high


@pytest.mark.parametrize("objective", list(OBJECTIVES))
def test_the_drift_factors_are_the_measured_ones_between_lengths_interpolated(objective):
    record = validation.drift()
    assert record["command"].startswith("uv run python benchmarks/later_drift.py")
    lengths, factors = record["horizons_weeks"], record["objectives"][objective]["factors"]
    for length, factor in zip(lengths, factors):
        assert validation.drift_factor(length, objective) == pytest.approx(factor)
    assert validation.drift_factor(1, objective) == pytest.approx(factors[0])  # outside: the nearest measured
    assert validation.drift_factor(10 * lengths[-1], objective) == pytest.approx(factors[-1])
    middle = validation.drift_factor(int(round((lengths[1] * lengths[2]) ** 0.5)), objective)
    assert min(factors[1], factors[2]) <= middle <= max(factors[1], factors[2])
    assert record["objectives"][objective]["scores"] > 100  # every objective measured, not copied


def test_a_period_of_weeks_keeps_its_largest_wait_not_the_sum_of_the_weekly_ones():
    weeks = _weeks([50, 100, 20])
    total = validation.period_total(weeks)
    assert total[5] == weeks[:, 5].max() and total[0] == weeks[:, 0].sum() and total[4] == weeks[:, 4].sum()
    b = _weeks([100, 200, 40])
    # MaxWait: the period's largest waits (100 against 200), not the sums of the weekly largest
    assert validation.period_objective_gain(total, validation.period_total(b), "max_wait") == pytest.approx(0.5)


def test_a_period_against_itself_gains_nothing():
    trace = generate(600, 16, seed=4)
    easy = SchedulerConfig.from_options({})
    assert validation.period_gain(trace, easy, easy, 10.0, "avg_wait") == 0.0
    spf = SchedulerConfig.from_options({"policy": "SPF"})
    assert validation.period_gain(trace, spf, easy, 10.0, "avg_wait") > 0  # SPF shortens the mean wait here


@pytest.mark.slow
def test_tune_states_the_later_period_and_decides_on_it(tmp_path):
    out = tmp_path / "o"
    assert main(["tune", "--synthetic", "16000", "--procs", "16", "--policies", "FCFS,SPF,SAF", "--weeks", "12",
                 "--budget", "5m", "--workers", "1", "--no-progress", "--out", str(out)]) == 0
    record = json.loads((out / "recommendation.json").read_text())
    later = record["later_period"]
    lo, hi = later["later_period_interval"]
    assert later["holdout"] == 0.25 and later["held_out_weeks"] >= 4 and lo <= hi
    assert later["later_weeks"] == later["held_out_weeks"]  # no --later-weeks: the held-out length
    plain_lo, plain_hi = later["like_the_past_by_weeks"][str(later["later_weeks"])]
    assert lo <= plain_lo <= later["log_gain"] <= plain_hi <= hi  # widened by the drift factor (>= 1)
    # the check on the held-out part judges an interval stated without it: from the weeks before it only
    assert 0 < later["searched_weeks"] < later["log_weeks"]
    held_lo, held_hi = later["held_out_interval"]
    assert later["held_out_interval"] != later["intervals_by_weeks"][str(later["held_out_weeks"])]
    assert isinstance(later["held_out_gain"], float)
    assert later["inside"] == (held_lo <= later["held_out_gain"] <= held_hi)
    if record["keep_easy_fcfs"]:
        assert "keep your current setting" in record["why"]
    else:
        assert lo > 0 and later["held_out_gain"] > 0  # a change only when both support it
    html = (out / "report.html").read_text()
    assert "For a later period of" in html and "which the search never saw" in html
    assert "</b> in AvgWait (" in html  # the objective as sentences name it, not as the option spells it
    # judged for another later period: the stored race is reused, only the judgement changes
    assert main(["tune", "--synthetic", "16000", "--procs", "16", "--policies", "FCFS,SPF,SAF", "--weeks", "12",
                 "--budget", "5m", "--workers", "1", "--no-progress", "--later-weeks", "26", "--out", str(out)]) == 0
    again = json.loads((out / "recommendation.json").read_text())
    assert again["budget"]["weeks_simulated"] == 0 and again["later_period"]["later_weeks"] == 26
    assert again["later_period"]["later_period_interval"] == later["intervals_by_weeks"]["26"]


def test_later_weeks_must_be_a_number_of_weeks(tmp_path, capsys):
    assert main(["tune", "--synthetic", "2000", "--later-weeks", "0", "--out", str(tmp_path / "o")]) == 2
    assert "--later-weeks 0: give a number of weeks" in capsys.readouterr().err
