"""Real Batsim (4.x on PATH): both backends agree job by job; pybatsim entry; kills; speed.

Skipped, with the reason, when ``batsim`` is not on PATH or the shared
traces are missing.
"""

from __future__ import annotations

import csv
import json
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bftune.experiments.runs.batsim import (
    BatsimRunError,
    batsim_version,
    compare_backends,
    run_batsim,
)
from bftune.schedulers.config import SchedulerConfig
from locations import CTC, KTH, REPO, SHARED

GOLDEN = SHARED / "batsim"

BATSIM = shutil.which("batsim")
_reason = None
if BATSIM is None:
    _reason = ("batsim is not on PATH: install Batsim 4.x (https://batsim.readthedocs.io) "
               "to run the real-Batsim integration tests")
else:
    try:
        batsim_version(BATSIM)
    except Exception as exc:  # noqa: BLE001 - any problem means: skip with its reason
        _reason = f"batsim on PATH is not usable: {exc}"
pytestmark = [pytest.mark.batsim, pytest.mark.skipif(_reason is not None, reason=_reason or "")]


@pytest.fixture(scope="module")
def kth():
    if not KTH.exists():
        pytest.skip(f"{KTH} is not available (the ../shared checkout is missing)")
    from bftune.workloads.swf import read_swf

    return read_swf(KTH)


def head(trace, n):
    return trace.with_jobs(trace.jobs[:n])


@pytest.mark.parametrize("options", [
    {},  # EASY-FCFS
    {"policy": "SAF", "threshold": "40h"},
    {"policy": "SPF", "backfill_policy": "LAF", "threshold": "1h"},
], ids=["EASY-FCFS", "EASY-SAF-40h", "EASY-SPF-LAF-1h"])
def test_compare_clean(kth, tmp_path, options):
    report = compare_backends(head(kth, 400), SchedulerConfig.from_options(options), tmp_path, timeout=60)
    assert report["mismatches"] == 0, report["first"]
    assert report["compared"] == 400
    assert report["summaries"]["avg_wait"]["local"] == report["summaries"]["avg_wait"]["batsim"]
    assert json.loads((tmp_path / "compare.json").read_text())["mismatches"] == 0
    assert (tmp_path / "batsim" / "out_schedule.csv").exists()  # Batsim's own outputs are kept


@pytest.mark.parametrize("options", [{"kill_after": "1h"}, {"kill_after": "30m", "policy": "WFP3"}],
                         ids=["FCFS-kill-1h", "WFP3-kill-30m"])
def test_kill_and_requeue(kth, tmp_path, options):
    report = compare_backends(head(kth, 400), SchedulerConfig.from_options(options), tmp_path, timeout=60)
    assert report["mismatches"] == 0, report["first"]
    kills = report["kills"]["batsim"]
    assert kills > 0 and kills == report["kills"]["local"]
    assert report["rows"]["batsim"] == 400 + kills  # one rerun per killed job
    s = report["summaries"]
    assert s["killed_runs"]["batsim"] == s["killed_runs"]["local"] == kills
    assert s["wasted_work"]["batsim"] == s["wasted_work"]["local"] > 0
    with open(tmp_path / "batsim" / "out_jobs.csv") as fh:
        rows = {r["job_id"]: r for r in csv.DictReader(fh)}
    rerun = next(r for k, r in rows.items() if k.endswith("#1"))
    parent = rerun["job_id"].split("#")[0]
    assert rows[parent]["final_state"] == "COMPLETED_KILLED"
    assert rerun["metadata"] == str({"parent_job": f"w0!{parent}", "nb_resubmit": 1})


def test_classifier_safeguard_and_runtime_oracle(kth, tmp_path):
    """Small-first with the learned classifier (kills and requeues) and the runtime-clairvoyant
    baseline (true runtimes from Batsim's delay profiles) agree with the local simulator."""
    for name, options in (("rf", {"classifier": "rf"}), ("runtime", {"classifier": "runtime-clairvoyant"}),
                          # study 004's periodic check: kills at wake-ups requested by the hook, not at run ends
                          ("periodic", {"classifier": "rf", "safeguard_period": "10m"}),
                          # the kill against the divider in force: at passes and at wake-ups the hook asks for;
                          # and the forest's other readings (factors, predicted aggregates, relabelling, calendar)
                          ("current divider", {"classifier": "rf", "safeguard_divider": "current",
                                               "categorical_features": "request", "aggregate_classes": "predicted",
                                               "relabel": "last-week-median", "calendar": "relative"}),
                          # the error analyses: the forest's classes corrected from Batsim's delay profiles
                          ("no-false-large", {"classifier": "rf-no-false-large"})):
        report = compare_backends(head(kth, 1000), SchedulerConfig.from_options(options), tmp_path / name,
                                  timeout=60)
        assert report["mismatches"] == 0, (options, report["first"])
        if options["classifier"] in ("rf", "rf-no-false-large"):
            assert report["kills"]["batsim"] > 0, options


def test_requeue_without_dynamic_jobs_fails_fast(kth, tmp_path):
    out = tmp_path / "o"
    with pytest.raises(BatsimRunError, match="--enable-dynamic-jobs --acknowledge-dynamic-jobs --enable-profile-reuse"):
        run_batsim(head(kth, 50), SchedulerConfig.from_options({"kill_after": "1h"}), out, timeout=30,
                   dynamic_jobs=False)
    left = subprocess.run(["pgrep", "-f", str(out)], capture_output=True, text=True)
    assert left.stdout.strip() == "", "a batsim process was left behind"


def _golden_rows(name):
    path = GOLDEN / "transcripts" / name
    if not path.exists():
        pytest.skip(f"{path} is not available")
    with open(path) as fh:
        return {r["job_id"]: (r["starting_time"], r["allocated_resources"]) for r in csv.DictReader(fh)}


def test_machines_model_reproduces_batsched_in_batsim(tmp_path):
    golden = _golden_rows("easy_bf_small_out_jobs.csv")
    from bftune.workloads.batsim_json import read_batsim_workload

    trace = read_batsim_workload(GOLDEN / "workloads" / "small_50.json")
    run_batsim(trace, SchedulerConfig.from_options({"reservation": "machines"}), tmp_path, timeout=60)
    with open(tmp_path / "out_jobs.csv") as fh:
        ours = {r["job_id"]: (r["starting_time"], r["allocated_resources"]) for r in csv.DictReader(fh)}
    assert ours == golden


def test_pybatsim_entry_with_real_batsim(tmp_path):
    golden = _golden_rows("easy_bf_small_out_jobs.csv")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    pybatsim = Path(sys.executable).parent / "pybatsim"
    sched = subprocess.Popen([str(pybatsim), "schedulers/bftuneEasy.py", "-s", f"tcp://127.0.0.1:{port}",
                              "-o", '{"reservation": "machines"}'], cwd=REPO, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        sim = subprocess.run([BATSIM, "-p", str(GOLDEN / "platforms" / "zero_lat_16.xml"),
                              "-w", str(GOLDEN / "workloads" / "small_50.json"), "-s", f"tcp://127.0.0.1:{port}",
                              "-e", str(tmp_path / "out"), "--disable-schedule-tracing",
                              "--disable-machine-state-tracing", "-q"],
                             capture_output=True, text=True, timeout=60)
        out, err = sched.communicate(timeout=30)
    finally:
        if sched.poll() is None:
            sched.kill()
    assert sim.returncode == 0, sim.stdout + sim.stderr
    assert sched.returncode == 0, err
    with open(tmp_path / "out_jobs.csv") as fh:
        ours = {r["job_id"]: (r["starting_time"], r["allocated_resources"]) for r in csv.DictReader(fh)}
    assert ours == golden


def test_cli_compare(kth, tmp_path):
    from bftune.workloads.swf_write import write_swf

    swf = tmp_path / "kth300.swf"
    write_swf(head(kth, 300), swf)
    bftune = Path(sys.executable).parent / "bftune"
    proc = subprocess.run([str(bftune), "compare", "--trace", str(swf), "--policy", "SAF", "--threshold", "40h",
                           "--out", str(tmp_path / "cmp")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "all runs agree" in proc.stdout
    proc = subprocess.run([str(bftune), "batsim", "--trace", str(swf), "--out", str(tmp_path / "b"),
                           "--batsim", str(tmp_path / "missing")], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "batsim.readthedocs.io" in proc.stderr and "Traceback" not in proc.stderr


def test_scheduler_share_on_5000_jobs(kth, tmp_path):
    """The driver must not be the bottleneck: report our share of the wall time."""
    t0 = time.perf_counter()
    summary = run_batsim(head(kth, 5000), SchedulerConfig.from_options({"policy": "SAF", "threshold": "40h"}),
                         tmp_path, timeout=120)
    wall = time.perf_counter() - t0
    share = summary["scheduler_share"]
    driver = summary["batsim"]["driver"]
    print(f"\n5000 KTH jobs in Batsim: {summary['simulation_seconds']:.2f} s wall ({wall:.2f} s with conversion), "
          f"{summary['batsim']['messages']} messages, scheduler {summary['scheduler_seconds']:.2f} s "
          f"({share:.1%}), of which decision driver {driver['busy_seconds']:.2f} s")
    assert summary["jobs"] == 5000
    assert 0 < share < 0.6


@pytest.mark.parametrize("selector", ["full", "bandit"])
def test_selector_period_choices_match_the_local_run(kth, tmp_path, selector):
    """A selector inside real Batsim wakes itself at period boundaries (CALL_ME_LATER) and,
    for full feedback, re-simulates the last period in-process: its per-period choices and
    costs must be those of the local run, and so must every start time."""
    options = {"selector": selector, "period": "1d", "threshold": "40h", "seed": 3,
               "candidates": "FCFS,LCFS,SPF,SAF"}
    report = compare_backends(head(kth, 1500), SchedulerConfig.from_options(options), tmp_path, timeout=120)
    assert report["mismatches"] == 0, report["first"]
    local = json.loads((tmp_path / "local" / "summary.json").read_text())["periods"]
    batsim = json.loads((tmp_path / "batsim" / "summary.json").read_text())["periods"]
    assert len(local) > 10
    assert [p["policy"] for p in batsim] == [p["policy"] for p in local]
    assert [p.get("costs") for p in batsim] == [p.get("costs") for p in local]
    assert len({p["policy"] for p in local}) > 1  # the selector really switched


def test_a_job_that_can_never_run_is_rejected_the_same_way_by_both_backends(tmp_path):
    from bftune.workloads.model import JobRecord, Trace

    jobs = [JobRecord(1, 0.0, 2, 10.0, 20.0, user=1), JobRecord(2, 0.0, 9, 10.0, 20.0, user=1),
            JobRecord(3, 5.0, 4, 10.0, 20.0, user=1)]
    report = compare_backends(Trace(jobs, max_procs=4, name="rej"), SchedulerConfig(), tmp_path, timeout=30)
    assert report["mismatches"] == 0, report["first"]
    rows = {line.split(",")[0]: line for line in (tmp_path / "batsim" / "out_jobs.csv").read_text().splitlines()}
    local = {line.split(",")[0]: line for line in (tmp_path / "local" / "out_jobs.csv").read_text().splitlines()}
    assert rows["0000002"] == local["0000002"] == '0000002,w0,d10,0.000000,9,20.000000,0,REJECTED,,,,,,,,,""'
    assert report["summaries"]["rejected"] == {"local": 1, "batsim": 1}


@pytest.fixture(scope="module")
def ctc430():
    """The first 3,000 kept jobs of CTC-SP2 on the PV-EASY study's 430 processors."""
    if not CTC.exists():
        pytest.skip(f"{CTC} is not available (the ../shared checkout is missing)")
    from bftune.workloads.swf import read_swf

    return head(read_swf(CTC, max_procs=430), 3000)


@pytest.mark.parametrize("options", [
    {"scheduler": "pv-easy", "predictor": "last"},
    {"scheduler": "pv-easy", "predictor": "virtual:0.4", "seed": 7},
    {"scheduler": "pv-easy", "policy": "SAF", "threshold": "20h", "predictor": "exact"},
    {"predictor": "last"},
    {"predictor": "avg2", "backfill_policy": "SPF"},
], ids=["PV-EASY-last", "PV-EASY-virtual40", "PV-EASY-SAF-20h-exact", "EASY-last", "EASY++"])
def test_pv_easy_compare_clean_on_ctc(ctc430, tmp_path, options):
    """Preemption inside real Batsim: every kill is acknowledged in a later message of the same
    instant, the head starts then, and both backends take the same decisions, kills and reruns
    included, on 3,000 CTC-SP2 jobs."""
    config = SchedulerConfig.from_options({**options, "fairness": True})
    report = compare_backends(ctc430, config, tmp_path, timeout=120)
    assert report["mismatches"] == 0, report["first"]
    assert report["kill_differences"] == 0
    kills = report["kills"]["batsim"]
    if options.get("scheduler") == "pv-easy":
        assert kills > 50 and report["rows"]["batsim"] == 3000 + kills
    local = json.loads((tmp_path / "local" / "summary.json").read_text())
    batsim = json.loads((tmp_path / "batsim" / "summary.json").read_text())
    assert local["fairness"] == batsim["fairness"]  # the monitor sees the same passes on both sides
    assert local["predictor"] == batsim["predictor"]
    if options.get("scheduler") == "pv-easy":
        assert batsim["fairness"]["strict_fairness_violations"] == 0
        assert batsim["fairness"]["reservation_violations"] == 0
