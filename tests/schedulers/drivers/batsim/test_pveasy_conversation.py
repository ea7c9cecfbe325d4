"""PV-EASY through the Batsim driver: the preemption conversation event by event, and whole
workloads played by the stand-in Batsim (split instants included) equal to the local simulator."""

from __future__ import annotations

import pytest
from batsim_messages import (
    begins,
    completed,
    ev,
    msg,
    random_jobs,
    schedules_agree,
    submitted,
)
from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.drivers.batsim.driver import BatsimDriver


def test_preemption_conversation():
    """m=4, FCFS.  Job 1 (2 procs) runs; job 2 (4 procs) is blocked; job 3 (2 procs, long) is ventured
    on the idle half.  When job 1 ends, the pass only kills job 3 (job 2 needs its machines); the
    kill's acknowledgement, at the same instant, registers the rerun and starts job 2 on all four
    machines in the same reply; the rerun waits (lower priority) and starts when job 2 ends."""
    d = BatsimDriver(SchedulerConfig.from_options({"scheduler": "pv-easy"}).build)
    assert d.handle(begins()) == msg(0.0)
    assert d.handle(msg(0.0, submitted(0.0, "0000001", res=2, walltime=100, profile="d100"))) == msg(
        0.0, ev(0.0, "EXECUTE_JOB", job_id="w0!0000001", alloc="0-1"))
    assert d.handle(msg(1.0, submitted(1.0, "0000002", res=4, walltime=50, profile="d50"))) == msg(1.0)
    assert d.handle(msg(2.0, submitted(2.0, "0000003", res=2, walltime=1000, profile="d900"))) == msg(
        2.0, ev(2.0, "EXECUTE_JOB", job_id="w0!0000003", alloc="2-3"))
    assert d.handle(msg(2.0, ev(2.0, "NOTIFY", type="no_more_static_job_to_submit"))) == msg(2.0)
    # Job 1 ends at its walltime: 2 free, job 2 needs 4, the shadow load (job 3) holds 2: kill it.
    assert d.handle(msg(100.0, completed(100.0, "0000001", "COMPLETED_WALLTIME_REACHED", alloc="0-1"))) == msg(
        100.0, ev(100.0, "KILL_JOB", job_ids=["w0!0000003"]))
    reply = d.handle(msg(100.0, completed(100.0, "0000003", "COMPLETED_KILLED", alloc="2-3"),
                         ev(100.0, "JOB_KILLED", job_ids=["w0!0000003"],
                            job_progress={"w0!0000003": {"profile_name": "d900", "progress": 0.109}})))
    assert reply == msg(100.0,
                        ev(100.0, "REGISTER_JOB", job_id="w0!0000003#1", job={
                            "profile": "d900", "id": "w0!0000003#1", "res": 2, "walltime": 1000, "subtime": 100.0}),
                        ev(100.0, "SET_JOB_METADATA", job_id="w0!0000003#1",
                           metadata="{'parent_job': 'w0!0000003', 'nb_resubmit': 1}"),
                        ev(100.0, "EXECUTE_JOB", job_id="w0!0000002", alloc="0-3"))
    rerun = d.core.queue.jobs["0000003#1"]
    assert (rerun.submit, rerun.attempt) == (2.0, 1)  # original r_j: its priority is job 3's
    assert d.handle(msg(100.0, submitted(100.0, "0000003#1", res=2, walltime=1000, profile="d900"))) == msg(100.0)
    assert d.handle(msg(150.0, completed(150.0, "0000002", alloc="0-3"))) == msg(
        150.0, ev(150.0, "EXECUTE_JOB", job_id="w0!0000003#1", alloc="0-1"))
    assert d.handle(msg(1050.0, completed(1050.0, "0000003#1", alloc="0-1"))) == msg(
        1050.0, ev(1050.0, "NOTIFY", type="registration_finished"))
    assert d.stats.killed == 1 and d.stats.reruns == 1 and not d.warnings


def test_an_acknowledgement_split_over_two_messages_changes_nothing():
    """Two kills acknowledged in two messages: the pass after the first one decides nothing (a kill
    is still in flight); the head starts after the second."""
    d = BatsimDriver(SchedulerConfig.from_options({"scheduler": "pv-easy"}).build)
    d.handle(begins())
    d.handle(msg(0.0, submitted(0.0, "0000001", res=2, walltime=100, profile="d100")))
    d.handle(msg(1.0, submitted(1.0, "0000002", res=4, walltime=50, profile="d50")))
    d.handle(msg(2.0, submitted(2.0, "0000003", res=1, walltime=1000, profile="d900"),
                 submitted(2.0, "0000004", res=1, walltime=1000, profile="d900")))
    assert d.handle(msg(100.0, completed(100.0, "0000001", "COMPLETED_WALLTIME_REACHED", alloc="0-1"))) == msg(
        100.0, ev(100.0, "KILL_JOB", job_ids=["w0!0000004", "w0!0000003"]))
    reply = d.handle(msg(100.0, completed(100.0, "0000004", "COMPLETED_KILLED", alloc="3")))
    assert [e["type"] for e in reply["events"]] == ["REGISTER_JOB", "SET_JOB_METADATA"]  # no start yet
    reply = d.handle(msg(100.0, completed(100.0, "0000003", "COMPLETED_KILLED", alloc="2"),
                         ev(100.0, "JOB_KILLED", job_ids=["w0!0000004", "w0!0000003"], job_progress={})))
    assert [e["type"] for e in reply["events"]] == ["REGISTER_JOB", "SET_JOB_METADATA", "EXECUTE_JOB"]
    assert reply["events"][-1]["data"] == {"job_id": "w0!0000002", "alloc": "0-3"}


OPTIONS = [
    {"scheduler": "pv-easy"},
    {"scheduler": "pv-easy", "predictor": "last"},
    {"scheduler": "pv-easy", "predictor": "virtual:0.4", "seed": 3},
    {"scheduler": "pv-easy", "policy": "SAF", "threshold": "300s"},
    {"scheduler": "pv-easy", "policy": "WFP3", "predictor": "exact"},
    {"scheduler": "pv-easy", "kill_after": 50},
    {"predictor": "last"},
    {"backfill_policy": "SPF", "predictor": "virtual:0.2"},
]


@pytest.mark.parametrize("split", [False, True], ids=["whole-instants", "split-instants"])
@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_stand_in_batsim_schedule_equals_local_simulator(options, split):
    for seed in (1, 2, 3):
        a, b, driver = schedules_agree(random_jobs(seed, 300, 16), 16, options, split=split)
        assert a == b, (seed, options)
        if options.get("scheduler") == "pv-easy":
            assert driver.stats.killed > 10 and driver.stats.killed == driver.stats.reruns
