"""tune's validation period (issue 39): an interval for a later period from real weeks, the gain on the
held-out part of the log as it happened, and no change recommended when either does not support one."""

from __future__ import annotations

import json

import numpy as np
import pytest
from bftune.experiments.cli.main import main
from bftune.experiments.tune import validation
from bftune.schedulers.config import SchedulerConfig
from bftune.workloads.synthetic import generate


def _weeks(waits: list[float], jobs: int = 10) -> np.ndarray:
    out = np.zeros((len(waits), 6))
    out[:, 0], out[:, 4], out[:, 5] = np.array(waits) * jobs, jobs, waits
    out[:, 1], out[:, 2], out[:, 3] = jobs, jobs, jobs
    return out


def test_weeks_with_one_gain_give_that_gain_whatever_is_drawn():
    c, b = _weeks([50, 100, 20, 80, 40]), _weeks([100, 200, 40, 160, 80])
    gains = validation.block_gains(c, b, "avg_wait", 3, seed=1)
    assert len(gains) == validation.DRAWS and np.allclose(gains, 0.5)


def test_the_interval_spreads_with_the_weeks_and_blocks_keep_neighbours_together():
    c = _weeks([100, 100, 100, 100, 10, 10, 10, 10])  # a good month, then a very good one
    b = _weeks([100] * 8)
    one_week = validation.block_gains(c, b, "avg_wait", 1, seed=2)
    assert set(np.round(one_week, 6)) == {0.0, 0.9}
    four = validation.block_gains(c, b, "avg_wait", 4, seed=2)
    assert four.min() == pytest.approx(0.0) and four.max() == pytest.approx(0.9)  # whole blocks: 0 and 0.9 occur
    assert validation.block_gains(c, b, "max_wait", 2, seed=3).max() == pytest.approx(0.9)


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
    assert isinstance(later["held_out_gain"], float) and later["inside"] == (lo <= later["held_out_gain"] <= hi)
    if record["keep_easy_fcfs"]:
        assert "keep your current setting" in record["why"]
    else:
        assert lo > 0 and later["held_out_gain"] > 0  # a change only when both support it
    html = (out / "report.html").read_text()
    assert "For a later period of" in html and "which the search never saw" in html
