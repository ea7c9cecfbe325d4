"""``overrun_estimate``: a job running past its prediction is planned to its walltime, or keeps its expired end.

One hand-made trace on 4 processors, EASY-FCFS with Last Model, where the two
choices decide differently.  User 1's first job runs 10 s of its 100 s
request, so Last Model predicts user 1's second job (J2, 2 processors, runs
80 s) at 10 s: started at 20, it is expected to end at 30 and outruns that.
At 40, J3 (4 processors) is blocked behind J2 and J4 (2 processors, 60 s)
asks to backfill:

- ``walltime`` (default): J2 is planned to end at 20 + 100 = 120, J3's
  reservation is 120, and J4 (40 + 60 = 100 <= 120) is backfilled at once;
- ``expired``: J2 keeps its end at 30, J3's reservation stays in the past, J4
  would outlast it and there are no spare processors: J4 waits until J3 has
  run (J2 really ends at 100, J3 runs 100-150, J4 starts at 150).
"""

from __future__ import annotations

import pytest
from bftune.schedulers.config import ConfigError, SchedulerConfig
from bftune.schedulers.drivers.local.simulator import simulate
from bftune.workloads.model import JobRecord

TRACE = [
    JobRecord(1, 0, 1, 10, 100, user=1),
    JobRecord(2, 20, 2, 80, 100, user=1),
    JobRecord(3, 40, 4, 50, 50, user=2),
    JobRecord(4, 40, 2, 60, 60, user=3),
]


def starts(options: dict) -> dict[int, float]:
    config = SchedulerConfig.from_options({"predictor": "last", **options})
    result = simulate(TRACE, 4, config.build(4))
    return {run.seq: run.start for run in result.runs}


def test_an_overrun_is_planned_to_its_walltime_by_default():
    assert starts({}) == {1: 0, 2: 20, 3: 100, 4: 40}


def test_an_expired_prediction_kept_plans_the_overrunning_job_as_ended():
    assert starts({"overrun_estimate": "expired"}) == {1: 0, 2: 20, 3: 100, 4: 150}


def test_the_option_needs_a_prediction_and_is_described():
    with pytest.raises(ConfigError, match="overrun_estimate needs a predictor other than walltime"):
        SchedulerConfig.from_options({"overrun_estimate": "expired"})
    config = SchedulerConfig.from_options({"predictor": "last", "overrun_estimate": "expired"})
    assert config.describe() == "EASY(FCFS) predictor=last overrun_estimate=expired"
    assert config.to_dict()["overrun_estimate"] == "expired"
    assert not config.build(4).revise_overruns and SchedulerConfig().build(4).revise_overruns
