"""Study 001's policy names against the study's own simulator (bftune.experiments.studies.s001.naming)."""

from __future__ import annotations

import json
import subprocess

import pytest
from bftune.experiments.studies.s001 import naming
from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.drivers.local.simulator import simulate
from bftune.workloads.model import JobRecord, Trace
from bftune.workloads.swf_write import write_swf

M = 20
# Job 0 holds the whole machine until t = 5000; jobs 1-8 arrive meanwhile, each needing more than half of
# the machine, so from t = 5000 on they run one at a time in queue order (no backfilling is possible).
# Walltimes, sizes, ratios, areas and expansion factors are all distinct, and the arrivals are spread so
# that the expansion-factor orders differ from the walltime orders: the 12 policies give 12 orders.
QUEUE = [(1, 10, 11, 1000), (2, 4900, 17, 120), (3, 2000, 13, 700), (4, 4500, 19, 50),
         (5, 300, 12, 410), (6, 3200, 16, 230), (7, 1500, 14, 90), (8, 800, 20, 560)]


def tie_free_trace() -> Trace:
    jobs = [JobRecord(0, 0, M, 5000, 5000)] + [JobRecord(i, r, q, p, p, 1) for i, r, q, p in QUEUE]
    return Trace(jobs=jobs, max_procs=M, name="order")


def bftune_order(trace: Trace, policy: str) -> list[int]:
    result = simulate(trace.jobs, trace.max_procs, SchedulerConfig(policy=policy).build(trace.max_procs))
    return [int(r.first_id) for r in sorted(result.runs, key=lambda r: r.start)]


@pytest.mark.skipif(naming.ocs_available() is None, reason="ocs-obps (../shared/tools/build-ocst.sh) not installed")
def test_each_ocst_criterion_runs_the_order_it_is_mapped_to(tmp_path):
    trace = tie_free_trace()
    swf = tmp_path / "order.swf"
    write_swf(trace, swf)
    orders = {policy: bftune_order(trace, policy) for policy in naming.POLICIES}
    assert len({tuple(o) for o in orders.values()}) == len(orders)
    for criterion, policy in naming.OCS_BEHAVES_AS.items():
        out = tmp_path / f"{criterion}.out"
        subprocess.run([naming.ocs_available(), "oneshot", str(swf), criterion, f"--backfill={criterion}",
                        f"--output={out}"], check=True, capture_output=True)
        rows = [line.split() for line in out.read_text().splitlines() if line.strip()]
        starts = sorted((float(f[1]) + float(f[2]), int(f[0])) for f in rows)
        assert [job for _, job in starts] == orders[policy], (criterion, policy)


def test_evidence_rows_from_stored_measurements(tmp_path):
    # two complete resamples of KTH-SP2 with made-up totals; a third, incomplete one is left out
    for r in range(3):
        for i, policy in enumerate(naming.POLICIES):
            (tmp_path / f"KTH-SP2_r{r}_bftune_{policy}.json").write_text(json.dumps(
                {"trace": "KTH-SP2", "resample": r, "simulator": "bftune", "policy": policy,
                 "total_wait": 100.0 + i}))
        for i, criterion in enumerate(naming.OCS_BEHAVES_AS):
            if r == 2 and criterion == "saf":
                continue
            (tmp_path / f"KTH-SP2_r{r}_ocs_{criterion}.json").write_text(json.dumps(
                {"trace": "KTH-SP2", "resample": r, "simulator": "ocs", "policy": criterion,
                 "total_wait": 200.0 + 10 * i}))
    totals = naming.load(tmp_path)
    assert totals[("KTH-SP2", "count", "")] == 2
    rows = {row["column"]: row for row in naming.evidence_rows(totals)}
    assert set(rows) == set(naming.TABLE3_COLUMNS)
    lrf = rows["LRF"]
    assert lrf["published"] == -13 and lrf["resamples"] == 2
    assert lrf["bftune_same_name"] == pytest.approx(100 * (108 - 100) / 100)  # LRF is POLICIES[8]
    assert lrf["bftune_opposite_name"] == pytest.approx(100 * (109 - 100) / 100)
    assert lrf["ocs_criteria"] == "lrf / srf"
    assert lrf["ocs_opposite_name"] == pytest.approx(100 * (280 - 200) / 200)  # srf is the 9th criterion
