"""The PV-EASY ablations swap parts of a built core (its machine state, its algorithm) and still run."""

from __future__ import annotations

import pytest
from bftune.experiments import ablations_pveasy as ablations
from bftune.workloads.synthetic import generate

PV_LAST = {"scheduler": "pv-easy", "predictor": "last"}


@pytest.fixture(scope="module")
def trace():
    return generate(600, 32, seed=4)


def test_each_swapped_part_runs_and_is_the_one_used(trace):
    plain, _ = ablations.row("plain", trace, PV_LAST)
    never, _ = ablations.row("never revised", trace, PV_LAST, machine=ablations.NeverRevised)
    assert plain["jobs"] == never["jobs"] == len(trace.jobs)
    rest = ablations.VentureRestAdapter("priority", extra=True)
    ventured, _ = ablations.row("venture rest", trace, PV_LAST, adapt=rest)
    assert [type(a) for a in rest.built] == [ablations.VentureRest]  # the algorithm that ran
    assert ventured["jobs"] == len(trace.jobs)
    by_request, _ = ablations.row("by request", trace, {"policy": "FCFS", "predictor": "last"},
                                  adapt=ablations._backfill_by_request)
    fcfs, _ = ablations.row("fcfs", trace, {"policy": "FCFS", "predictor": "last"})
    assert by_request["backfilled"] != fcfs["backfilled"]  # the backfilling order did change
