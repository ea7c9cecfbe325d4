"""PV-EASY's venture backfilling: what fills the processors left idle (``venture_fill``), and the step tags.

A hand-made trace on 4 processors, planning with walltimes.  J1 (3
processors, 100 s) runs from 0; J2 (4 processors) arrives at 1 and is blocked
behind it, with nothing of lower priority running: no preemption, and its
reservation is 100.  At 2, J3 (asks 200 s) and J4 (asks 150 s), 1 processor
each, arrive: both would outlast the reservation, so venture backfilling's
first step takes neither and one processor stays idle.  Its second step
takes J3 in priority order (the default, docs/semantics/scheduling.md#pv-easy), J4 shortest request first,
or nobody (``none``).  At 100 J1 ends and J2 preempts the ventured job (shadow
load) to start; J2 runs 10 s, then the killed job's rerun starts in priority
order.
"""

from __future__ import annotations

import pytest
from bftune.schedulers.config import ConfigError, SchedulerConfig
from bftune.schedulers.core.pveasy import FILLED, PREDICTED, VENTURE
from bftune.schedulers.drivers.local.simulator import simulate
from bftune.workloads.model import JobRecord

TRACE = [
    JobRecord(1, 0, 3, 100, 100),
    JobRecord(2, 1, 4, 10, 10),
    JobRecord(3, 2, 1, 200, 200),
    JobRecord(4, 2, 1, 150, 150),
]


def runs(options: dict, trace=TRACE) -> list[tuple[str, float, str | None]]:
    """(run, start, venture tag) of every run, killed ones included, by start then name."""
    config = SchedulerConfig.from_options({"scheduler": "pv-easy", **options})
    result = simulate(trace, 4, config.build(4))
    return sorted(((r.id, r.start, (r.info or {}).get(VENTURE)) for r in result.runs), key=lambda r: (r[1], r[0]))


def test_idle_processors_go_to_the_next_job_in_priority_order_by_default():
    assert runs({})[:4] == [("0000001", 0, None), ("0000003", 2, FILLED), ("0000002", 100, None),
                            ("0000003#1", 110, None)]  # J3 preempted at 100; its rerun starts in priority order


def test_shortest_prediction_first_or_no_fill():
    assert runs({"venture_fill": "shortest"})[1] == ("0000004", 2, FILLED)
    nothing = runs({"venture_fill": "none"})
    assert [r for r in nothing if r[1] == 2] == [] and ("0000002", 100, None) in nothing


def test_a_job_predicted_to_end_by_the_reservation_is_tagged_so():
    short = JobRecord(5, 2, 1, 50, 50)  # ends by the reservation (100): step 3a takes it, before J3 and J4
    assert runs({}, TRACE + [short])[1] == ("0000005", 2, PREDICTED)


def test_the_option_needs_pv_easy_and_is_described():
    with pytest.raises(ConfigError, match="venture_fill needs scheduler='pv-easy'"):
        SchedulerConfig.from_options({"venture_fill": "none"})
    config = SchedulerConfig.from_options({"scheduler": "pv-easy", "venture_fill": "shortest"})
    assert config.describe() == "PV-EASY(FCFS, venture_fill=shortest)"
    assert SchedulerConfig.from_options({"scheduler": "pv-easy"}).describe() == "PV-EASY(FCFS)"
