"""A learned index function (docs/semantics/learning.md#learned-index-policies) schedules identically in both
backends (real Batsim on PATH)."""

from __future__ import annotations

import json
import shutil

import pytest
from bftune.experiments.runs.batsim import compare_backends
from bftune.schedulers.config import SchedulerConfig
from locations import KTH

pytestmark = [pytest.mark.batsim,
              pytest.mark.skipif(shutil.which("batsim") is None,
                                 reason="batsim is not on PATH: install Batsim 4.x to compare both backends")]

#: A made-up fit with every kind of term, so that p~, q and r all matter in the order.
FIT = {"features": ["1", "p", "q", "r", "p*q", "r^2"],
       "coefficients": {"1": 0.03, "p": 2e-7, "q": 3e-5, "r": -1e-7, "p*q": 1e-10, "r^2": 1e-15}}


@pytest.fixture(scope="module")
def kth_head():
    if not KTH.exists():
        pytest.skip(f"{KTH} is not available (the ../shared checkout is missing)")
    from bftune.workloads.swf import read_swf

    trace = read_swf(KTH)
    return trace.with_jobs(trace.jobs[:400])


@pytest.mark.parametrize("threshold", ["inf", "20h"])
def test_compare_clean_with_a_learned_policy_file(kth_head, tmp_path, threshold):
    fit = tmp_path / "fit.json"
    fit.write_text(json.dumps(FIT))
    config = SchedulerConfig.from_options({"policy": f"learned:{fit}", "threshold": threshold})
    report = compare_backends(kth_head, config, tmp_path / "cmp", timeout=60)
    assert report["mismatches"] == 0, report["first"]
    assert report["compared"] == 400


def test_compare_clean_with_a_shipped_fit_as_backfilling_order(kth_head, tmp_path):
    config = SchedulerConfig.from_options({"policy": "FCFS", "backfill_policy": "Lin"})
    report = compare_backends(kth_head, config, tmp_path / "cmp", timeout=60)
    assert report["mismatches"] == 0, report["first"]
