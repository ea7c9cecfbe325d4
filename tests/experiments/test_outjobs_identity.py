"""out_jobs.csv stays byte-identical whatever the speed work does (issue 13).

- Against real Batsim: `bftune simulate` with the machines reservation on the
  KTH-SP2 Batsim workload writes exactly the bytes of Batsim 4.2.1 +
  batsched easy_bf's own out_jobs.csv (../shared/batsim/golden).
- Pinned digests of whole-trace outputs of `bftune simulate` as of the
  commit before the columnar results: EASY-FCFS on KTH-SP2, and the same
  with ``--kill-after 1h`` (10,227 reruns with Batsim's resubmission
  metadata, walltime kills).  A change of decisions that is meant must
  update these digests, saying why in its commit.
- The two ways results reach the writer and the metrics (the local driver's
  columns, or ``Run`` objects as other code builds them) give the same text
  and the same columns.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from bftune.experiments.cli.main import main
from bftune.experiments.runs.outjobs import all_columns, format_out_jobs, runs_columns
from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.drivers.local.runs import Run, RunLog
from bftune.schedulers.drivers.local.simulator import simulate
from bftune.workloads.swf import read_swf
from locations import KTH, SHARED_BATSIM

GOLDEN = SHARED_BATSIM / "golden" / "kth_sp2_easy_bf" / "out_jobs.csv"
KTH_JSON = SHARED_BATSIM / "workloads" / "kth_sp2.json"

#: sha256 of out_jobs.csv of `bftune simulate --trace KTH-SP2-1996-2.1-cln.swf.gz [options]`.
DIGESTS = {
    (): "cf9e5083c7927eebd8d1eb0f34e9e0605114fcc01873fc1fcec635b9dd8b9afb",
    ("--kill-after", "1h"): "4ddc6115811e8220f6c9030a94a88aee9ff6df4891e0c682a62a9fb0f34af985",
}


@pytest.mark.slow
@pytest.mark.skipif(not (GOLDEN.exists() and KTH_JSON.exists()), reason=f"no Batsim golden data at {SHARED_BATSIM}")
def test_simulate_writes_batsims_own_bytes(tmp_path, capsys):
    assert main(["simulate", "--trace", str(KTH_JSON), "--reservation", "machines", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "out_jobs.csv").read_bytes() == GOLDEN.read_bytes()


@pytest.mark.slow
@pytest.mark.skipif(not KTH.exists(), reason=f"no archive trace at {KTH}")
@pytest.mark.parametrize("options", list(DIGESTS), ids=lambda o: " ".join(o) or "EASY-FCFS")
def test_whole_trace_output_digest(tmp_path, capsys, options):
    assert main(["simulate", "--trace", str(KTH), *options, "--out", str(tmp_path)]) == 0
    digest = hashlib.sha256((tmp_path / "out_jobs.csv").read_bytes()).hexdigest()
    assert digest == DIGESTS[options]


def _objects(log: RunLog) -> list[Run]:
    runs = list(log)
    assert len(runs) == len(log) and runs[0] == log[0] and runs[-1] == log[-1] and log[1:3] == runs[1:3]
    return runs


@pytest.mark.skipif(not KTH.exists(), reason=f"no archive trace at {KTH}")
def test_columns_and_objects_give_the_same_file_and_columns():
    trace = read_swf(KTH)
    jobs = trace.jobs[:3000]
    config = SchedulerConfig.from_options({"policy": "SAF", "kill_after": "2h"})
    result = simulate(jobs, trace.max_procs, config.build(trace.max_procs))
    log = result.runs
    assert isinstance(log, RunLog)
    runs = _objects(log)
    assert any(r.attempt for r in runs) and any(r.state == "COMPLETED_WALLTIME_REACHED" for r in runs)
    assert format_out_jobs(log) == format_out_jobs(runs)
    a, b = runs_columns(log), runs_columns(runs)
    assert list(a) == list(b)
    for column in a:  # plain lists, the same values of the same types
        assert type(a[column]) is list and type(b[column]) is list, column
        assert [type(v) for v in a[column]] == [type(v) for v in b[column]], column
        np.testing.assert_array_equal(a[column], b[column], err_msg=f"metrics: {column}")
    a, b = all_columns(log), all_columns(runs)
    assert list(a) == list(b)
    for column in a:
        assert a[column].dtype == b[column].dtype, column
        np.testing.assert_array_equal(a[column], b[column], err_msg=f"all: {column}")


def test_rejected_runs_round_trip_through_the_columns():
    from bftune.workloads.model import JobRecord

    jobs = [JobRecord(1, 0, 2, 10, 20), JobRecord(2, 0, 9, 10, 20), JobRecord(3, 5, 1, 30, 30)]
    result = simulate(jobs, 4, SchedulerConfig().build(4))
    runs = _objects(result.runs)
    assert [(r.id, r.state, r.start, r.end, r.alloc) for r in runs] == [
        ("0000002", "REJECTED", -1.0, -1.0, None),
        ("0000001", "COMPLETED_SUCCESSFULLY", 0.0, 10.0, [(0, 1)]),
        ("0000003", "COMPLETED_WALLTIME_REACHED", 5.0, 35.0, [(2, 2)]),
    ]
    assert format_out_jobs(result.runs) == format_out_jobs(runs)
