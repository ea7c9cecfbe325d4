"""Our local simulator against real Batsim 4.2.1 + batsched 1.4.0 conservative_bf (tests/goldens/).

With every job reserved (``reservations = "all"``), the machines model and
FCFS, start times, end times, final states and allocated resources must
equal batsched conservative_bf's on every job (docs/semantics/scheduling.md#conservative).
The recordings (one folder per run, ``out_jobs.csv.gz`` as Batsim wrote it)
say how they were made in tests/goldens/README.md; a recording made with
``batsched -d 0`` (no planning margin) is compared with ``planning_margin = 0``.

One divergence is expected, and asserted as it is: at t = 4,861,844 of CTC-SP2 Batsim sent job 12921's
submission in a message before job 12916's completion of the same instant; batsched, deciding per
message, placed 12921 (then 12922) on other machines than a pass over the whole instant does (their
times are the same).  bftune's passes see whole instants (docs/semantics/scheduling.md#split-instants).
"""

from __future__ import annotations


import pytest
from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.drivers.local.simulator import simulate
from bftune.workloads.batsim_json import read_batsim_workload
from bftune.workloads.read import read_workload
from golden_runs import mismatches, read_golden
from locations import SHARED_BATSIM, SHARED_WORKLOADS, TESTS

GOLDENS = TESTS / "goldens"

#: recording folder -> (workload: a Batsim JSON of ../shared/batsim/workloads or an archive trace of
#: ../shared/workloads, cleaned as `bftune convert` does; the options besides FCFS, machines, all)
RECORDINGS = {
    "kth_sp2_conservative_bf": (SHARED_BATSIM / "workloads" / "kth_sp2.json", {}),
    "kth_sp2_conservative_bf_d0": (SHARED_BATSIM / "workloads" / "kth_sp2.json", {"planning_margin": 0}),
    "ctc_sp2_conservative_bf": (SHARED_WORKLOADS / "CTC-SP2-1996-3.1-cln.swf.gz", {}),
}
#: recording -> the jobs whose machines differ because Batsim split an instant (their times agree)
SPLIT_INSTANT_MACHINES = {"ctc_sp2_conservative_bf": {"0012921", "0012922"}}


def _trace(path):
    if path.suffix == ".json":
        return read_batsim_workload(path)
    return read_workload(path)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(RECORDINGS))
def test_conservative_machines_fcfs_reproduces_batsched_conservative_bf(name):
    workload, options = RECORDINGS[name]
    if not (GOLDENS / name / "out_jobs.csv.gz").is_file():
        pytest.skip(f"no recording at {GOLDENS / name}/out_jobs.csv.gz (tests/goldens/README.md says how to make one)")
    if not workload.is_file():
        pytest.skip(f"workload {workload} not found (the shared/ folder beside the checkout)")
    trace = _trace(workload)
    cfg = SchedulerConfig(policy="FCFS", reservation="machines", reservations="all", **options)
    result = simulate(trace.jobs, trace.max_procs, cfg.build(trace.max_procs))
    golden = read_golden(GOLDENS / name / "out_jobs.csv.gz")
    bad = mismatches(result, golden, compare_alloc=False)
    assert not bad, f"{len(bad)} of {len(golden)} jobs differ; first (time, job, ours, batsched...): {bad[:3]}"
    other_machines = {row[1] for row in mismatches(result, golden)}
    assert other_machines == SPLIT_INSTANT_MACHINES.get(name, set()), sorted(other_machines)[:5]
