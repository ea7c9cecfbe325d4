"""Batsim messages written by hand, and whole workloads played by the stand-in Batsim
(on pytest's pythonpath: ``from batsim_messages import msg, ev, schedules_agree``)."""

from __future__ import annotations

import os
import random
import tempfile

import fake_batsim
from bftune.schedulers.config import SchedulerConfig
from bftune.schedulers.core import machines as ms
from bftune.schedulers.drivers.batsim.driver import BatsimDriver
from bftune.schedulers.drivers.local.simulator import simulate
from bftune.workloads.batsim_json import write_batsim_workload
from bftune.workloads.model import JobRecord, Trace


def begins(m=4, dynamic=True):
    return {"now": 0.0, "events": [fake_batsim.begins(m, dynamic)]}


def submitted(now, name, res=2, walltime=100, subtime=None, profile="d50", user=3):
    job = {"id": f"w0!{name}", "subtime": now if subtime is None else subtime, "res": res, "walltime": walltime,
           "profile": profile, "user": user}
    return {"timestamp": now, "type": "JOB_SUBMITTED", "data": {"job_id": f"w0!{name}", "job": job}}


def completed(now, name, state="COMPLETED_SUCCESSFULLY", alloc="0-1"):
    return {"timestamp": now, "type": "JOB_COMPLETED",
            "data": {"job_id": f"w0!{name}", "job_state": state, "return_code": 0 if state.endswith("FULLY") else -1,
                     "alloc": alloc}}


def msg(now, *events):
    return {"now": now, "events": list(events)}


def ev(now, kind, **data):
    return {"timestamp": now, "type": kind, "data": data}


def random_jobs(seed: int, n: int, m: int) -> list[JobRecord]:
    rng = random.Random(seed)
    jobs, t = [], 0
    for i in range(1, n + 1):
        t += rng.choice([0, 0, 1, 5, 30, 200])
        runtime = rng.choice([1, 5, 20, 60, 300, 1000])
        walltime = rng.choice([runtime, runtime, 2 * runtime, 10 * runtime, 5000])
        jobs.append(JobRecord(id=i, submit=t, procs=rng.randint(1, m), runtime=runtime, walltime=max(walltime, runtime),
                              user=rng.randint(1, 5)))
    return jobs


def schedules_agree(jobs, m, options, workload_file=True, **fake_options):
    """Our driver played by the stand-in Batsim vs the local simulator: {run: (start, end, state, alloc)} each."""
    cfg = SchedulerConfig.from_options(options)
    driver = BatsimDriver(cfg.build)
    with tempfile.TemporaryDirectory() as tmp:
        path = None
        if workload_file:
            path = os.path.join(tmp, "workload.json")
            write_batsim_workload(Trace(jobs=list(jobs), max_procs=m), path)
        batsim = fake_batsim.FakeBatsim(jobs, m, dynamic=cfg.needs_dynamic_jobs, workload_file=path, **fake_options)
        rows = batsim.run(driver.handle)
    local = simulate(jobs, m, cfg.build(m))
    a = {r["job_id"]: (r["start"], r["end"], r["state"], r["alloc"]) for r in rows}
    b = {r.id: (r.start, r.end, r.state, ms.to_string(r.alloc)) for r in local.runs}
    return a, b, driver
